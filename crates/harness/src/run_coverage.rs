//! The coverage one run reports, as the executor hands it on and triage
//! reads it (where a run was last seen).

use php_fuzz_coverage::EdgeCounter;
use php_fuzz_instrument::{BlockId, StubStyle};

/// The coverage of one run. A long run sends its coverage in pieces; the
/// earlier pieces arrive already folded into edge counts (see docs/protocol.md).
#[derive(Debug, Clone, Copy)]
pub struct Coverage<'a> {
    pub style: StubStyle,
    /// Edges of the pieces sent while the run was still going.
    pub earlier: Option<&'a EdgeCounter>,
    /// The rest: block ids (trace style) or edge/count pairs (edge-map style).
    pub last: &'a [u8],
}

impl Coverage<'_> {
    /// The last block that ran, in trace style.
    pub fn last_block(&self) -> Option<BlockId> {
        if self.style != StubStyle::Trace {
            return None;
        }
        if self.last.len() >= 4 {
            let tail = &self.last[self.last.len() - 4..];
            return Some(BlockId(u32::from_le_bytes(
                tail.try_into().expect("4 bytes"),
            )));
        }
        self.earlier.and_then(EdgeCounter::last_block).map(BlockId)
    }

    /// Adds this run's edges to `counter` (which the caller cleared).
    pub fn add_to(&self, counter: &mut EdgeCounter) {
        if let Some(earlier) = self.earlier {
            counter.merge(earlier);
        }
        match self.style {
            StubStyle::Trace => counter.add_trace(self.last),
            StubStyle::EdgeMap => counter.add_edge_counts(self.last),
        }
    }
}
