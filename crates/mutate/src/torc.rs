//! The table of recent compares (libFuzzer's TORC): operand pairs of
//! comparisons the target made, in a small fixed table indexed by a hash of
//! the comparison, so a comparison repeated in a loop takes one slot.

use crate::cmp::{Record, Value};

const SLOTS: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct Torc {
    slots: Vec<Option<(Value, Value)>>,
    /// Indices of the slots in use, in the order first filled.
    filled: Vec<usize>,
}

impl Torc {
    pub fn new() -> Torc {
        Torc {
            slots: vec![None; SLOTS],
            filled: Vec::new(),
        }
    }

    /// Remembers the operands of a comparison that did not hold.
    pub fn insert(&mut self, record: &Record<'_>) {
        if record.is_equal() {
            return;
        }
        if self.slots.is_empty() {
            self.slots = vec![None; SLOTS];
        }
        let slot = (hash(record) % SLOTS as u64) as usize;
        if self.slots[slot].is_none() {
            self.filled.push(slot);
        }
        self.slots[slot] = Some((record.a.to_value(), record.b.to_value()));
    }

    pub fn len(&self) -> usize {
        self.filled.len()
    }

    pub fn is_empty(&self) -> bool {
        self.filled.is_empty()
    }

    /// The operands in the table, both of each pair, pairs in the order
    /// their slots were first filled: for mutators that pick an operand of
    /// one kind (an integer, a string) without encoding it as bytes.
    pub fn operands(&self) -> impl Iterator<Item = &Value> + '_ {
        self.filled.iter().flat_map(move |&slot| {
            let (a, b) = self.slots[slot].as_ref().expect("filled slot");
            [a, b]
        })
    }

    /// The `n`th pair in use (`n < len()`).
    pub(crate) fn get(&self, n: usize) -> &(Value, Value) {
        self.slots[self.filled[n]].as_ref().expect("filled slot")
    }
}

/// FNV-1a over the site and the operands: the same on every platform and
/// in every release, so a seed replays.
fn hash(record: &Record<'_>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut add = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    add(&record.site.to_le_bytes());
    for operand in [record.a, record.b] {
        match operand {
            crate::cmp::Operand::Int(v) => add(&v.to_le_bytes()),
            crate::cmp::Operand::Float(v) => add(&v.to_le_bytes()),
            crate::cmp::Operand::Bytes(bytes, _) => add(bytes),
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmp::tests::{bytes, encode};
    use crate::cmp::{kind, records};

    #[test]
    fn keeps_unequal_pairs_and_a_repeated_comparison_once() {
        let log = encode(&[
            (1, kind::EQUAL, bytes("a"), bytes("b")),
            (1, kind::EQUAL, bytes("a"), bytes("b")),
            (2, kind::EQUAL, bytes("same"), bytes("same")),
            (3, kind::ORDER, Value::Int(1), Value::Int(2)),
        ]);
        let mut torc = Torc::new();
        for record in records(&log) {
            torc.insert(&record);
        }
        assert_eq!(torc.len(), 2);
        assert_eq!(*torc.get(0), (bytes("a"), bytes("b")));
        assert_eq!(*torc.get(1), (Value::Int(1), Value::Int(2)));
        let operands: Vec<&Value> = torc.operands().collect();
        assert_eq!(
            operands,
            [&bytes("a"), &bytes("b"), &Value::Int(1), &Value::Int(2)]
        );
        assert_eq!(Torc::new().operands().count(), 0);
    }
}
