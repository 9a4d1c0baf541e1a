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
    /// How long the run that added it took, in microseconds (0: unknown).
    pub micros: u32,
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
    /// Per entry: how many of its mutants hung (capped). Each halves its
    /// weight, so a corpus with one slow entry whose mutants time out (a
    /// template looping 10,000 times, one digit from 100,000) does not
    /// spend the campaign's time on timeouts.
    hangs: Vec<u8>,
    /// The plain schedule scales each entry's weight by AFL's performance
    /// score of its run time (`--scale-per-exec-time`).
    scale_per_exec_time: bool,
}

/// Halvings of an entry's weight for mutants that hung, at most.
const MAX_HANG_HALVINGS: u8 = 8;

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

    /// Scales the plain schedule's weights by run time from now on: AFL's
    /// performance score, from a tenth of the weight for an entry ten times
    /// slower than the average to three times for one four times faster.
    pub fn scale_per_exec_time(&mut self) {
        self.scale_per_exec_time = true;
        self.dirty = true;
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
            self.energies
                .push(entropic.new_input(entry.unique.len(), entry.micros));
        }
        self.total_bytes += entry.data.len();
        self.entries.push(entry);
        self.hangs.push(0);
        self.dirty = true;
        EntryId(self.entries.len() as u32 - 1)
    }

    /// Replaces an entry's input by a shorter one that keeps its features;
    /// `micros` is how long the shorter one ran (0: unknown), which the
    /// weights that count run time take from now on. Returns the replaced
    /// entry's path.
    pub fn replace(
        &mut self,
        id: EntryId,
        data: Vec<u8>,
        path: Option<PathBuf>,
        (trace_hash, micros): (u64, u32),
    ) -> Option<PathBuf> {
        let entry = &mut self.entries[id.0 as usize];
        if micros > 0 {
            entry.micros = micros;
            if let Some(energy) = self.energies.get_mut(id.0 as usize) {
                energy.set_micros(micros);
            }
            self.dirty = true;
        }
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

    /// Whether a mutant of `id` ever hung.
    pub fn has_hung(&self, id: EntryId) -> bool {
        self.hangs[id.0 as usize] > 0
    }

    /// A mutant of `parent` hung: `parent` is picked half as often.
    pub fn count_hang(&mut self, parent: EntryId) {
        let hangs = &mut self.hangs[parent.0 as usize];
        if *hangs < MAX_HANG_HALVINGS {
            *hangs += 1;
            self.dirty = true;
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
            for (&weight, &hangs) in self.weights.iter().zip(&self.hangs) {
                sum += weight / f64::from(1u32 << hangs);
                self.cumulative_energy.push(sum);
            }
        } else {
            // In 256ths once an entry is halved, so that every entry stays
            // reachable; in units otherwise (the draws of `--seed N` stay).
            let scale = match self.hangs.iter().any(|&h| h > 0) {
                true => MAX_HANG_HALVINGS,
                false => 0,
            };
            let average = self.scale_per_exec_time.then(|| self.average_micros());
            let mut sum = 0u64;
            for (entry, &hangs) in self.entries.iter().zip(&self.hangs) {
                let mut weight = (1 + entry.unique.len().min(64) as u64) << scale;
                if let Some(average) = average {
                    weight *= perf_twentieths(entry.micros, average);
                }
                sum += weight >> hangs;
                self.cumulative.push(sum);
            }
        }
        self.dirty = false;
    }

    /// The mean run time of the entries whose run time is known (µs).
    fn average_micros(&self) -> f64 {
        let (sum, count) = self
            .entries
            .iter()
            .filter(|e| e.micros > 0)
            .fold((0u64, 0u64), |(s, c), e| (s + u64::from(e.micros), c + 1));
        if count == 0 {
            0.0
        } else {
            sum as f64 / count as f64
        }
    }
}

/// AFL's performance score in twentieths (an integer weight factor: 2 for
/// 0.1, 20 for 1, 60 for 3); 20 when the run time or the average is unknown.
fn perf_twentieths(micros: u32, average: f64) -> u64 {
    if average <= 0.0 {
        return 20;
    }
    (entropic::perf_score(micros, average) * 20.0).round() as u64
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
            micros: 0,
        }
    }

    #[test]
    fn an_entry_whose_mutants_hang_is_picked_less_but_still_picked() {
        let mut corpus = Corpus::new();
        for _ in 0..2 {
            corpus.add(Entry {
                data: vec![b'a'],
                path: None,
                unique: vec![1],
                trace_hash: 0,
                micros: 0,
            });
        }
        for _ in 0..3 {
            corpus.count_hang(EntryId(0));
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut picks = [0u32; 2];
        for _ in 0..9000 {
            picks[corpus.pick(&mut rng).unwrap().0 as usize] += 1;
        }
        // 1/8 of the weight: about 1,000 of 9,000.
        assert!((700..1300).contains(&picks[0]), "{picks:?}");
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
    fn scaled_by_run_time_a_fast_entry_is_picked_more_than_a_slow_one() {
        let mut corpus = Corpus::new();
        for micros in [4_000, 100, 100, 100] {
            let mut e = entry(b"x", &[1]);
            e.micros = micros;
            corpus.add(e);
        }
        let picks = |corpus: &mut Corpus| {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
            let mut counts = [0u32; 4];
            for _ in 0..8000 {
                counts[corpus.pick(&mut rng).unwrap().0 as usize] += 1;
            }
            counts
        };
        let plain = picks(&mut corpus);
        assert!((1700..2300).contains(&plain[0]), "unscaled: {plain:?}");
        corpus.scale_per_exec_time();
        // Average 1,075 µs: the slow entry is 3.7× it (0.5), the fast ones
        // under a quarter of it (3): weights 10 : 60 : 60 : 60.
        let scaled = picks(&mut corpus);
        assert!((250..650).contains(&scaled[0]), "scaled: {scaled:?}");
        assert!(scaled[1] > scaled[0] * 4, "scaled: {scaled:?}");
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
        corpus.replace(id, b"ab".to_vec(), None, (7, 0));
        assert_eq!(corpus.total_bytes(), 4);
        assert_eq!(corpus.get(id).data, b"ab");
    }

    #[test]
    fn a_replaced_entry_takes_the_run_time_of_its_shorter_input() {
        let mut corpus = Corpus::new();
        let mut slow = entry(b"abcdef", &[1]);
        slow.micros = 9_000;
        let id = corpus.add(slow);
        corpus.replace(id, b"abc".to_vec(), None, (7, 40));
        assert_eq!(corpus.get(id).micros, 40);
        corpus.replace(id, b"ab".to_vec(), None, (8, 0));
        assert_eq!(corpus.get(id).micros, 40, "0 is unknown: kept");
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
