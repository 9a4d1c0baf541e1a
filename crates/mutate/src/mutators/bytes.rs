//! The byte-level mutators: erase, insert or change bytes and bits, shuffle,
//! rewrite an ASCII or binary integer, copy a part of the input.

use rand::RngExt;

use super::Mutator;

impl Mutator {
    pub(super) fn erase_bytes(&mut self, data: &mut Vec<u8>) -> bool {
        if data.len() <= 1 {
            return false;
        }
        let n = self.rng.random_range(1..=data.len() / 2);
        let at = self.below(data.len() - n + 1);
        data.drain(at..at + n);
        true
    }

    pub(super) fn insert_byte(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        if data.len() >= max_len {
            return false;
        }
        let at = self.below(data.len() + 1);
        let byte = self.rng.random::<u8>();
        data.insert(at, byte);
        true
    }

    pub(super) fn insert_repeated_bytes(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        const MIN: usize = 3;
        if data.len() + MIN > max_len {
            return false;
        }
        let n = self.rng.random_range(MIN..=(max_len - data.len()).min(128));
        let byte = match self.below(3) {
            0 => 0,
            1 => 0xff,
            _ => self.rng.random::<u8>(),
        };
        let at = self.below(data.len() + 1);
        data.splice(at..at, std::iter::repeat_n(byte, n));
        true
    }

    pub(super) fn change_byte(&mut self, data: &mut [u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        let at = self.below(data.len());
        data[at] = self.rng.random::<u8>();
        true
    }

    pub(super) fn change_bit(&mut self, data: &mut [u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        let at = self.below(data.len());
        data[at] ^= 1 << self.below(8);
        true
    }

    pub(super) fn shuffle_bytes(&mut self, data: &mut [u8]) -> bool {
        if data.len() < 2 {
            return false;
        }
        let n = self.rng.random_range(2..=data.len().min(8));
        let start = self.below(data.len() - n + 1);
        let part = &mut data[start..start + n];
        for i in (1..part.len()).rev() {
            let j = self.rng.random_range(0..=i);
            part.swap(i, j);
        }
        true
    }

    /// Finds a decimal number and replaces it with a nearby or related one.
    pub(super) fn change_ascii_int(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        if data.is_empty() {
            return false;
        }
        let from = self.below(data.len());
        let Some(start) = (from..data.len())
            .chain(0..from)
            .find(|&i| data[i].is_ascii_digit())
        else {
            return false;
        };
        let mut begin = start;
        while begin > 0 && data[begin - 1].is_ascii_digit() {
            begin -= 1;
        }
        let mut end = start;
        while end < data.len() && data[end].is_ascii_digit() && end - begin < 19 {
            end += 1;
        }
        let value = data[begin..end].iter().fold(0u64, |v, d| {
            v.wrapping_mul(10).wrapping_add((d - b'0') as u64)
        });
        let new_value = match self.below(5) {
            0 => value.wrapping_add(1),
            1 => value.wrapping_sub(1),
            2 => value / 2,
            3 => value.wrapping_mul(2),
            _ => self
                .rng
                .random_range(0..=value.saturating_mul(value).max(1)),
        };
        let mut digits = [0u8; 20];
        let mut n = 0;
        let mut v = new_value;
        loop {
            digits[n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        digits[..n].reverse();
        if data.len() - (end - begin) + n > max_len {
            return false;
        }
        data.splice(begin..end, digits[..n].iter().copied());
        true
    }

    /// Treats 1, 2, 4 or 8 bytes as an integer (either endianness) and
    /// nudges it, or sets it to the number of bytes after it (a length field).
    pub(super) fn change_bin_int(&mut self, data: &mut [u8]) -> bool {
        let widths = [1usize, 2, 4, 8];
        let fitting = widths.iter().filter(|&&w| w <= data.len()).count();
        if fitting == 0 {
            return false;
        }
        let width = widths[self.below(fitting)];
        let at = self.below(data.len() - width + 1);
        let big_endian = self.rng.random::<bool>();
        let field = &mut data[at..at + width];
        let mut bytes = [0u8; 8];
        if big_endian {
            bytes[8 - width..].copy_from_slice(field);
        } else {
            bytes[..width].copy_from_slice(field);
        }
        let mut value = if big_endian {
            u64::from_be_bytes(bytes)
        } else {
            u64::from_le_bytes(bytes)
        };
        value = match self.below(4) {
            0 => (data.len() - at - width) as u64,
            1 => value.wrapping_neg(),
            _ => value.wrapping_add_signed(self.rng.random_range(-10i64..=10)),
        };
        let field = &mut data[at..at + width];
        if big_endian {
            field.copy_from_slice(&value.to_be_bytes()[8 - width..]);
        } else {
            field.copy_from_slice(&value.to_le_bytes()[..width]);
        }
        true
    }

    /// Copies a part of the input over another part, or inserts it elsewhere.
    pub(super) fn copy_part(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        if data.is_empty() {
            return false;
        }
        if self.rng.random::<bool>() || data.len() >= max_len {
            if data.len() < 2 {
                return false;
            }
            let n = self.rng.random_range(1..=data.len() - 1);
            let from = self.below(data.len() - n + 1);
            let to = self.below(data.len() - n + 1);
            if from == to {
                return false;
            }
            data.copy_within(from..from + n, to);
        } else {
            let n = self
                .rng
                .random_range(1..=data.len().min(max_len - data.len()));
            let from = self.below(data.len() - n + 1);
            let to = self.below(data.len() + 1);
            self.scratch.clear();
            self.scratch.extend_from_slice(&data[from..from + n]);
            data.splice(to..to, self.scratch.iter().copied());
        }
        true
    }
}
