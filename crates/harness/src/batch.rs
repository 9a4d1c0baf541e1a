/// Inputs for one round trip, stored back to back in one buffer, so building
/// a batch allocates nothing once the buffers have grown.
#[derive(Debug, Default, Clone)]
pub struct Batch {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    pub fn push(&mut self, input: &[u8]) {
        self.data.extend_from_slice(input);
        self.ends.push(self.data.len());
    }

    /// Appends an input built in place by `fill`, which writes into the buffer.
    pub fn push_with(&mut self, fill: impl FnOnce(&mut Vec<u8>)) {
        fill(&mut self.data);
        self.ends.push(self.data.len());
    }

    /// Keeps the first `len` inputs.
    pub fn truncate(&mut self, len: usize) {
        if len < self.ends.len() {
            self.ends.truncate(len);
            self.data.truncate(self.ends.last().copied().unwrap_or(0));
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, index: usize) -> &[u8] {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.data[start..self.ends[index]]
    }

    /// The inputs `range` as the protocol's list, without copying.
    /// `ends` receives the inputs' end offsets relative to the returned data.
    pub(crate) fn slice(&self, start: usize, end: usize, ends: &mut Vec<usize>) -> &[u8] {
        let base = if start == 0 { 0 } else { self.ends[start - 1] };
        let top = if end == 0 { 0 } else { self.ends[end - 1] };
        ends.clear();
        ends.extend(self.ends[start..end].iter().map(|e| e - base));
        &self.data[base..top]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_come_back_as_pushed() {
        let mut batch = Batch::new();
        batch.push(b"ab");
        batch.push(b"");
        batch.push_with(|buf| buf.extend_from_slice(b"xyz"));
        assert_eq!(batch.len(), 3);
        assert_eq!(batch.get(0), b"ab");
        assert_eq!(batch.get(1), b"");
        assert_eq!(batch.get(2), b"xyz");
        let mut ends = Vec::new();
        assert_eq!(batch.slice(1, 3, &mut ends), b"xyz");
        assert_eq!(ends, vec![0, 3]);
        batch.truncate(1);
        assert_eq!(batch.len(), 1);
        batch.push(b"c");
        assert_eq!(batch.get(1), b"c");
    }
}
