//! Crossover: combining the input with another corpus entry.

use rand::RngExt;

use super::Mutator;

impl Mutator {
    /// Combines the input with another corpus entry, one of three ways:
    /// interleaving chunks of both (libFuzzer's CrossOver), overwriting a
    /// part of the input with a part of the other, or inserting a part of
    /// the other.
    pub(super) fn cross_over(&mut self, data: &mut Vec<u8>, max_len: usize, other: &[u8]) -> bool {
        if other.is_empty() || max_len == 0 {
            return false;
        }
        match self.below(3) {
            0 => self.interleave(data, max_len, other),
            1 => {
                if data.is_empty() {
                    return false;
                }
                let n = self.rng.random_range(1..=data.len().min(other.len()));
                let from = self.below(other.len() - n + 1);
                let to = self.below(data.len() - n + 1);
                data[to..to + n].copy_from_slice(&other[from..from + n]);
                true
            }
            _ => {
                if data.len() >= max_len {
                    return false;
                }
                let n = self
                    .rng
                    .random_range(1..=other.len().min(max_len - data.len()));
                let from = self.below(other.len() - n + 1);
                let to = self.below(data.len() + 1);
                data.splice(to..to, other[from..from + n].iter().copied());
                true
            }
        }
    }

    fn interleave(&mut self, data: &mut Vec<u8>, max_len: usize, other: &[u8]) -> bool {
        let target_len = self.rng.random_range(1..=max_len);
        self.scratch.clear();
        let (mut a, mut b) = (0usize, 0usize);
        let mut from_data = true;
        while self.scratch.len() < target_len && (a < data.len() || b < other.len()) {
            let (source, pos) = if from_data {
                (&data[..], &mut a)
            } else {
                (other, &mut b)
            };
            if *pos < source.len() {
                let left = source.len() - *pos;
                let room = target_len - self.scratch.len();
                let n = self.rng.random_range(1..=left.min(room));
                self.scratch.extend_from_slice(&source[*pos..*pos + n]);
                *pos += n;
            }
            from_data = !from_data;
        }
        if self.scratch == *data {
            return false;
        }
        std::mem::swap(data, &mut self.scratch);
        true
    }
}
