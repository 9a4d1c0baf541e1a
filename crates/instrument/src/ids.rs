use serde::{Deserialize, Serialize};

use crate::InstrumentError;

/// Block ids fit in 28 bits so that `(prev << 28) | id` fits in 56.
pub const MAX_BLOCK_ID: u32 = (1 << 28) - 1;

/// A block id. 0 is never allocated: it stands for "no previous block".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BlockId(pub u32);

/// Hands out contiguous ranges of block ids; one per fuzzing session.
#[derive(Debug)]
pub struct BlockIdAllocator {
    next: u32,
}

impl Default for BlockIdAllocator {
    fn default() -> Self {
        Self { next: 1 }
    }
}

impl BlockIdAllocator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts after ids already in use, e.g. when resuming from a saved block map.
    pub fn starting_at(next: u32) -> Self {
        Self { next: next.max(1) }
    }

    /// Reserves `count` consecutive ids and returns the first.
    pub fn allocate(&mut self, count: u32) -> Result<BlockId, InstrumentError> {
        let available = MAX_BLOCK_ID + 1 - self.next;
        if count > available {
            return Err(InstrumentError::OutOfBlockIds {
                requested: count,
                available,
            });
        }
        let first = self.next;
        self.next += count;
        Ok(BlockId(first))
    }

    /// How many ids have been handed out.
    pub fn allocated(&self) -> u32 {
        self.next - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_contiguous_and_start_at_one() {
        let mut ids = BlockIdAllocator::new();
        assert_eq!(ids.allocate(3).unwrap(), BlockId(1));
        assert_eq!(ids.allocate(2).unwrap(), BlockId(4));
        assert_eq!(ids.allocated(), 5);
    }

    #[test]
    fn running_out_is_an_error_not_a_wrap() {
        let mut ids = BlockIdAllocator::starting_at(MAX_BLOCK_ID - 1);
        assert_eq!(ids.allocate(2).unwrap(), BlockId(MAX_BLOCK_ID - 1));
        let err = ids.allocate(1).unwrap_err();
        assert!(matches!(
            err,
            InstrumentError::OutOfBlockIds {
                requested: 1,
                available: 0
            }
        ));
        assert!(err.to_string().contains("out of block ids"));
    }
}
