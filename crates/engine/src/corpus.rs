//! The in-memory corpus: inputs worth mutating, each with the features it
//! was first to reach, and a weighted scheduler over them.

use std::path::PathBuf;

use php_fuzz_coverage::Feature;
use rand::RngExt;

/// Index of a corpus entry. Entries are replaced in place, never removed,
/// so an id stays valid for the whole session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId(pub u32);

#[derive(Debug, Clone)]
pub struct Entry {
    pub data: Vec<u8>,
    /// Where it is on disk, if anywhere.
    pub path: Option<PathBuf>,
    /// Features this entry was the first to reach, sorted. A shorter input
    /// that keeps all of them may replace it (REDUCE).
    pub unique: Vec<Feature>,
    /// Hash of the trace it runs (0 if unknown): a mutant with the same
    /// hash ran exactly like it.
    pub trace_hash: u64,
}

#[derive(Debug, Default)]
pub struct Corpus {
    entries: Vec<Entry>,
    total_bytes: usize,
    /// Cumulative weights, rebuilt lazily after a change.
    cumulative: Vec<u64>,
    dirty: bool,
}

impl Corpus {
    pub fn new() -> Corpus {
        Corpus::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn total_bytes(&self) -> usize {
        self.total_bytes
    }

    pub fn get(&self, id: EntryId) -> &Entry {
        &self.entries[id.0 as usize]
    }

    pub fn entries(&self) -> impl Iterator<Item = (EntryId, &Entry)> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| (EntryId(i as u32), e))
    }

    pub fn max_len(&self) -> usize {
        self.entries.iter().map(|e| e.data.len()).max().unwrap_or(0)
    }

    pub fn add(&mut self, entry: Entry) -> EntryId {
        self.total_bytes += entry.data.len();
        self.entries.push(entry);
        self.dirty = true;
        EntryId(self.entries.len() as u32 - 1)
    }

    /// Replaces an entry's input by a shorter one that keeps its features.
    /// Returns the replaced entry's path.
    pub fn replace(
        &mut self,
        id: EntryId,
        data: Vec<u8>,
        path: Option<PathBuf>,
        trace_hash: u64,
    ) -> Option<PathBuf> {
        let entry = &mut self.entries[id.0 as usize];
        self.total_bytes = self.total_bytes - entry.data.len() + data.len();
        entry.data = data;
        entry.trace_hash = trace_hash;
        std::mem::replace(&mut entry.path, path)
    }

    /// Picks an entry, favouring those that were first to reach more features.
    pub fn pick(&mut self, rng: &mut impl rand::Rng) -> Option<EntryId> {
        if self.entries.is_empty() {
            return None;
        }
        if self.dirty {
            self.cumulative.clear();
            let mut sum = 0u64;
            for entry in &self.entries {
                sum += 1 + entry.unique.len().min(64) as u64;
                self.cumulative.push(sum);
            }
            self.dirty = false;
        }
        let total = *self.cumulative.last().expect("not empty");
        let point = rng.random_range(0..total);
        let index = self.cumulative.partition_point(|&c| c <= point);
        Some(EntryId(index as u32))
    }
}

/// True if every feature of `required` (sorted, each once) is in
/// `features` (any order, each once). `required` is an entry's unique
/// features, usually a handful, so this looks each run feature up in it
/// rather than sorting the run's.
pub fn keeps_all(features: &[Feature], required: &[Feature]) -> bool {
    if required.is_empty() {
        return true;
    }
    let found = features
        .iter()
        .filter(|f| required.binary_search(f).is_ok())
        .count();
    found == required.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn entry(data: &[u8], unique: &[Feature]) -> Entry {
        Entry {
            data: data.to_vec(),
            path: None,
            unique: unique.to_vec(),
            trace_hash: 0,
        }
    }

    #[test]
    fn pick_reaches_every_entry_and_favours_rich_ones() {
        let mut corpus = Corpus::new();
        corpus.add(entry(b"a", &[]));
        corpus.add(entry(b"b", &(0..40).collect::<Vec<_>>()));
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut counts = [0; 2];
        for _ in 0..2000 {
            counts[corpus.pick(&mut rng).unwrap().0 as usize] += 1;
        }
        assert!(counts[0] > 0);
        assert!(counts[1] > counts[0] * 10, "{counts:?}");
    }

    #[test]
    fn empty_corpus_picks_nothing() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        assert!(Corpus::new().pick(&mut rng).is_none());
    }

    #[test]
    fn replace_keeps_byte_totals_right() {
        let mut corpus = Corpus::new();
        let id = corpus.add(entry(b"abcdef", &[1]));
        corpus.add(entry(b"xy", &[2]));
        assert_eq!(corpus.total_bytes(), 8);
        corpus.replace(id, b"ab".to_vec(), None, 7);
        assert_eq!(corpus.total_bytes(), 4);
        assert_eq!(corpus.get(id).data, b"ab");
    }

    #[test]
    fn subset_check() {
        assert!(keeps_all(&[1, 2, 3, 5], &[2, 5]));
        assert!(keeps_all(&[1], &[]));
        assert!(!keeps_all(&[1, 2, 3], &[2, 4]));
        assert!(!keeps_all(&[], &[1]));
        assert!(keeps_all(&[5, 3, 2, 1], &[2, 5]));
        assert!(!keeps_all(&[5, 3, 1], &[2, 5]));
    }
}
