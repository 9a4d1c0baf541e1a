//! The in-memory corpus: inputs worth mutating, each with the features it
//! was first to reach, and a weighted scheduler over them.

mod entropic;

use std::path::PathBuf;

use php_fuzz_coverage::Feature;
use rand::RngExt;

pub use entropic::EntropicOptions;
use entropic::{Entropic, InputEnergy};

/// With Entropic, the weights are recomputed at random once in this many
/// picks even when no entry or rare feature changed (libFuzzer's
/// kSparseEnergyUpdates): entries' local counts change with every run.
const SPARSE_ENERGY_UPDATES: u32 = 100;

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
    /// Cumulative weights, rebuilt lazily after a change: integers for the
    /// plain schedule, energies under Entropic.
    cumulative: Vec<u64>,
    cumulative_energy: Vec<f64>,
    dirty: bool,
    /// The Entropic power schedule, when on, and each entry's energy.
    entropic: Option<Entropic>,
    energies: Vec<InputEnergy>,
    weights: Vec<f64>,
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

    /// Schedules with Entropic from now on (before any entry is added).
    pub fn enable_entropic(&mut self, options: EntropicOptions) {
        self.entropic = Some(Entropic::new(options));
        self.dirty = true;
    }

    pub fn add(&mut self, entry: Entry) -> EntryId {
        if let Some(entropic) = &mut self.entropic {
            for &feature in &entry.unique {
                entropic.add_rare_feature(feature, &mut self.energies);
            }
            self.energies.push(entropic.new_input(entry.unique.len()));
        }
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

    /// Counts a run's features for Entropic: `parent` is the entry it was
    /// mutated from (`None` for a seed). Nothing without Entropic.
    pub fn count_run(&mut self, parent: Option<EntryId>, features: &[Feature]) {
        if let Some(entropic) = &mut self.entropic {
            let parent = parent.map(|id| &mut self.energies[id.0 as usize]);
            entropic.count_run(features, parent);
        }
    }

    /// Picks an entry: by Entropic's energy when it is on and some entry has
    /// energy, else favouring those that were first to reach more features.
    pub fn pick(&mut self, rng: &mut impl rand::Rng) -> Option<EntryId> {
        if self.entries.is_empty() {
            return None;
        }
        let sparse_update =
            self.entropic.is_some() && rng.random_range(0..SPARSE_ENERGY_UPDATES) == 0;
        if self.dirty || sparse_update {
            self.rebuild_distribution();
        }
        let index = if self.cumulative_energy.is_empty() {
            let total = *self.cumulative.last().expect("not empty");
            let point = rng.random_range(0..total);
            self.cumulative.partition_point(|&c| c <= point)
        } else {
            let total = *self.cumulative_energy.last().expect("not empty");
            let point = rng.random_range(0.0..total);
            self.cumulative_energy.partition_point(|&c| c <= point)
        };
        Some(EntryId(index.min(self.entries.len() - 1) as u32))
    }

    fn rebuild_distribution(&mut self) {
        self.cumulative.clear();
        self.cumulative_energy.clear();
        let energetic = match &self.entropic {
            Some(entropic) => entropic.weights(&mut self.energies, &mut self.weights),
            None => false,
        };
        if energetic {
            let mut sum = 0.0;
            for &weight in &self.weights {
                sum += weight;
                self.cumulative_energy.push(sum);
            }
        } else {
            let mut sum = 0u64;
            for entry in &self.entries {
                sum += 1 + entry.unique.len().min(64) as u64;
                self.cumulative.push(sum);
            }
        }
        self.dirty = false;
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
