//! Entropic, libFuzzer's power schedule (Böhme, Manès and Cha, "Boosting
//! Fuzzer Efficiency: An Information Theoretic Perspective", FSE 2020; the
//! reasoning is the paper's, the bookkeeping follows libFuzzer's
//! FuzzerCorpus.h).
//!
//! Every run of a mutant counts the features it hit, globally and for the
//! input it was mutated from. The rarest features (at least
//! `number_of_rarest_features`, and every one seen fewer than
//! `feature_frequency_threshold` times) are tracked per input. An input's
//! energy is the entropy of its rare features' counts, with add-one
//! smoothing: an input whose mutants keep finding rare things has high
//! entropy, one whose mutants run the same few paths has low entropy. The
//! corpus is picked from in proportion to energy.
//!
//! Runs whose trace repeated an earlier one (`known`, sent as a hash alone)
//! carry no feature list and are not counted; libFuzzer counts every run.

use php_fuzz_coverage::Feature;

/// Size of the global frequency table, as libFuzzer's kFeatureSetSize.
const FEATURE_SLOTS: usize = 1 << 21;
/// An input mutated this many times more than the average gets no energy.
const MAX_MUTATION_FACTOR: u64 = 20;
/// n·ln(n) is looked up below this: most local counts are small, and the
/// logarithms were most of the schedule's cost.
const N_LN_N_TABLE: usize = 4096;

/// n·ln(n), from a table for small n.
fn n_ln_n(n: f64, table: &[f64]) -> f64 {
    let small = n as usize;
    if small < table.len() && small as f64 == n {
        table[small]
    } else {
        n * n.ln()
    }
}

/// libFuzzer's `-entropic_*` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntropicOptions {
    /// `-entropic_number_of_rarest_features`: at least this many rare features are kept.
    pub number_of_rarest_features: usize,
    /// `-entropic_feature_frequency_threshold`: features seen fewer times are always rare.
    pub feature_frequency_threshold: u16,
    /// `-entropic_scale_per_exec_time`: an entry slower than the average
    /// run gets less energy, a faster one more (see [`perf_score`]). Off by
    /// default, as in libFuzzer: the weights then depend on timing, and
    /// `--seed N` no longer replays a campaign exactly.
    pub scale_per_exec_time: bool,
}

impl Default for EntropicOptions {
    fn default() -> Self {
        EntropicOptions {
            number_of_rarest_features: 100,
            feature_frequency_threshold: 0xFF,
            scale_per_exec_time: false,
        }
    }
}

/// One corpus entry's part of the schedule.
#[derive(Debug, Clone, Default)]
pub(crate) struct InputEnergy {
    needs_update: bool,
    energy: f64,
    sum_incidence: f64,
    /// (rare feature slot, times its mutants hit it), sorted by slot.
    feature_freqs: Vec<(u32, u16)>,
    executed_mutations: u64,
    /// Features the entry was first to reach; none means no energy.
    num_features: usize,
    /// How long the run that added it took, in microseconds (0: unknown).
    micros: u32,
}

impl InputEnergy {
    /// The entry's input was replaced by one that ran for `micros`.
    pub(crate) fn set_micros(&mut self, micros: u32) {
        self.micros = micros;
    }

    fn count(&mut self, slot: u32) {
        self.needs_update = true;
        match self.feature_freqs.binary_search_by_key(&slot, |&(s, _)| s) {
            Ok(i) => self.feature_freqs[i].1 = self.feature_freqs[i].1.saturating_add(1),
            Err(i) => self.feature_freqs.insert(i, (slot, 1)),
        }
    }

    fn forget(&mut self, slot: u32) -> bool {
        match self.feature_freqs.binary_search_by_key(&slot, |&(s, _)| s) {
            Ok(i) => {
                self.feature_freqs.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The entropy of the rare features' local counts, add-one smoothed, with
    /// every rare feature this input's mutants never hit counted once and
    /// one abundant feature standing for all its runs.
    fn update(&mut self, rare_features: usize, table: &[f64]) {
        let mut energy = 0.0;
        let mut sum = 0.0;
        for &(_, freq) in &self.feature_freqs {
            let incidence = f64::from(freq) + 1.0;
            energy -= n_ln_n(incidence, table);
            sum += incidence;
        }
        sum += rare_features.saturating_sub(self.feature_freqs.len()) as f64;
        let abundant = self.executed_mutations as f64 + 1.0;
        energy -= n_ln_n(abundant, table);
        sum += abundant;
        self.energy = if sum > 0.0 {
            energy / sum + sum.ln()
        } else {
            energy
        };
        self.sum_incidence = sum;
        self.needs_update = false;
    }
}

/// The schedule's global state: feature frequencies and the rare features.
#[derive(Debug)]
pub(crate) struct Entropic {
    options: EntropicOptions,
    global_freqs: Vec<u16>,
    rare: Vec<u32>,
    /// `rare` as one flag per slot, for the per-feature check of every run.
    is_rare: Vec<bool>,
    n_ln_n: Vec<f64>,
    freq_of_most_abundant_rare: u16,
    executed_mutations: u64,
}

impl Entropic {
    pub fn new(options: EntropicOptions) -> Entropic {
        Entropic {
            options,
            global_freqs: vec![0; FEATURE_SLOTS],
            rare: Vec::new(),
            is_rare: vec![false; FEATURE_SLOTS],
            n_ln_n: (0..N_LN_N_TABLE)
                .map(|n| {
                    if n == 0 {
                        0.0
                    } else {
                        n as f64 * (n as f64).ln()
                    }
                })
                .collect(),
            freq_of_most_abundant_rare: 0,
            executed_mutations: 0,
        }
    }

    fn slot(feature: Feature) -> u32 {
        // Fibonacci hashing into 21 bits: features are `(bucket << 56) | edge`.
        (feature.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - 21)) as u32
    }

    /// The energy a new entry starts with, before its mutants are counted.
    pub fn new_input(&self, num_features: usize, micros: u32) -> InputEnergy {
        InputEnergy {
            needs_update: false,
            energy: if self.rare.is_empty() {
                1.0
            } else {
                (self.rare.len() as f64).ln()
            },
            sum_incidence: self.rare.len() as f64,
            feature_freqs: Vec::new(),
            executed_mutations: 0,
            num_features,
            micros,
        }
    }

    /// A feature no run reached before: it is rare, and the most abundant
    /// rare features give way while there are more than enough.
    pub fn add_rare_feature(&mut self, feature: Feature, inputs: &mut [InputEnergy]) {
        let slot = Self::slot(feature);
        if self.is_rare[slot as usize] {
            return; // a slot collision: already rare
        }
        while self.rare.len() > self.options.number_of_rarest_features
            && self.freq_of_most_abundant_rare > self.options.feature_frequency_threshold
        {
            self.drop_most_abundant(inputs);
        }
        self.rare.push(slot);
        self.is_rare[slot as usize] = true;
        self.global_freqs[slot as usize] = 0;
        for input in inputs.iter_mut() {
            input.forget(slot);
            if input.energy > 0.0 {
                // Add-one smoothing for this locally undiscovered feature.
                input.sum_incidence += 1.0;
                input.energy += input.sum_incidence.ln() / input.sum_incidence;
            }
        }
    }

    fn drop_most_abundant(&mut self, inputs: &mut [InputEnergy]) {
        let freq = |slot: u32| self.global_freqs[slot as usize];
        let mut most = 0;
        let mut second = self.rare[0];
        for (i, &slot) in self.rare.iter().enumerate() {
            if freq(slot) >= freq(self.rare[most]) {
                second = self.rare[most];
                most = i;
            }
        }
        let dropped = self.rare.swap_remove(most);
        self.is_rare[dropped as usize] = false;
        for input in inputs.iter_mut() {
            if input.forget(dropped) {
                input.needs_update = true;
            }
        }
        self.freq_of_most_abundant_rare = freq(second);
    }

    /// Counts one run's features, globally and for the entry it was mutated
    /// from (`None` for a seed).
    pub fn count_run(&mut self, features: &[Feature], mut parent: Option<&mut InputEnergy>) {
        for &feature in features {
            let slot = Self::slot(feature);
            let freq = self.global_freqs[slot as usize];
            if freq == u16::MAX {
                continue;
            }
            self.global_freqs[slot as usize] = freq + 1;
            if freq > self.freq_of_most_abundant_rare || !self.is_rare[slot as usize] {
                continue;
            }
            if freq == self.freq_of_most_abundant_rare {
                self.freq_of_most_abundant_rare += 1;
            }
            if let Some(parent) = parent.as_deref_mut() {
                parent.count(slot);
            }
        }
        if let Some(parent) = parent {
            parent.executed_mutations += 1;
            self.executed_mutations += 1;
        }
    }

    /// Each entry's weight; false when every weight is zero and the caller
    /// should fall back to its plain schedule.
    pub fn weights(&self, inputs: &mut [InputEnergy], weights: &mut Vec<f64>) -> bool {
        weights.clear();
        let average = self.executed_mutations / inputs.len().max(1) as u64;
        let average_micros = self
            .options
            .scale_per_exec_time
            .then(|| average_micros(inputs))
            .flatten();
        let mut any = false;
        for input in inputs.iter_mut() {
            if input.needs_update && input.energy != 0.0 {
                input.update(self.rare.len(), &self.n_ln_n);
            }
            let weight = if input.num_features == 0
                || input.executed_mutations / MAX_MUTATION_FACTOR > average
            {
                0.0
            } else {
                let scale = average_micros.map_or(1.0, |avg| perf_score(input.micros, avg));
                input.energy.max(0.0) * scale
            };
            any |= weight > 0.0;
            weights.push(weight);
        }
        any
    }
}

/// The mean run time of the entries whose time is known, if any.
fn average_micros(inputs: &[InputEnergy]) -> Option<f64> {
    let (sum, count) = inputs
        .iter()
        .filter(|input| input.micros > 0)
        .fold((0.0, 0u32), |(sum, count), input| {
            (sum + f64::from(input.micros), count + 1)
        });
    (count > 0).then(|| sum / f64::from(count))
}

/// AFL's performance score, as libFuzzer's `-entropic_scale_per_exec_time`
/// uses it: from a tenth of the energy for an entry ten times slower than
/// the average to three times for one four times faster.
pub(super) fn perf_score(micros: u32, average: f64) -> f64 {
    if micros == 0 {
        return 1.0;
    }
    let time = f64::from(micros);
    match time / average {
        r if r > 10.0 => 0.1,
        r if r > 4.0 => 0.25,
        r if r > 2.0 => 0.5,
        r if r > 4.0 / 3.0 => 0.75,
        r if r < 0.25 => 3.0,
        r if r < 1.0 / 3.0 => 2.0,
        r if r < 0.5 => 1.5,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(rarest: usize, threshold: u16) -> EntropicOptions {
        EntropicOptions {
            number_of_rarest_features: rarest,
            feature_frequency_threshold: threshold,
            scale_per_exec_time: false,
        }
    }

    #[test]
    fn with_scale_per_exec_time_a_slow_entry_gets_less_energy() {
        for scale in [false, true] {
            let entropic = Entropic::new(EntropicOptions {
                scale_per_exec_time: scale,
                ..EntropicOptions::default()
            });
            // Same features, same energy; one runs 20 times longer.
            let mut inputs = vec![entropic.new_input(3, 100), entropic.new_input(3, 2000)];
            let mut weights = Vec::new();
            assert!(entropic.weights(&mut inputs, &mut weights));
            // The average is 1,050 µs: 100 is under a quarter (×3), 2,000
            // under twice (×0.75).
            let ratio = weights[0] / weights[1];
            let expected = if scale { 3.0 / 0.75 } else { 1.0 };
            assert!(
                (ratio - expected).abs() < 1e-9,
                "scale {scale}: {weights:?}"
            );
        }
        assert_eq!(perf_score(0, 50.0), 1.0, "unknown time: unscaled");
        assert_eq!(perf_score(600, 50.0), 0.1);
    }

    #[test]
    fn an_input_whose_mutants_find_rare_features_gets_more_energy() {
        let mut entropic = Entropic::new(EntropicOptions::default());
        let mut inputs = vec![entropic.new_input(3, 0), entropic.new_input(3, 0)];
        for feature in 1..=20u64 {
            entropic.add_rare_feature(feature, &mut inputs);
        }
        // Input 0's mutants spread over many rare features; input 1's
        // mutants run the same two over and over.
        for round in 0..40u64 {
            let (first, second) = inputs.split_at_mut(1);
            entropic.count_run(&[1 + round % 20], Some(&mut first[0]));
            entropic.count_run(&[1, 2], Some(&mut second[0]));
        }
        let mut weights = Vec::new();
        assert!(entropic.weights(&mut inputs, &mut weights));
        assert!(weights[0] > weights[1], "{weights:?}");
    }

    #[test]
    fn local_entropy_matches_the_formula() {
        let mut input = InputEnergy {
            feature_freqs: vec![(1, 1), (2, 3)],
            executed_mutations: 4,
            num_features: 1,
            ..InputEnergy::default()
        };
        let table: Vec<f64> = (0..8)
            .map(|n| {
                if n == 0 {
                    0.0
                } else {
                    n as f64 * (n as f64).ln()
                }
            })
            .collect();
        input.update(5, &table);
        // incidences 2, 4, three unseen rare features at 1, abundant 5
        let sum: f64 = 2.0 + 4.0 + 3.0 + 5.0;
        let raw = -(2.0f64 * 2f64.ln() + 4.0 * 4f64.ln() + 5.0 * 5f64.ln());
        assert!((input.energy - (raw / sum + sum.ln())).abs() < 1e-12);
        assert_eq!(input.sum_incidence, sum);
    }

    #[test]
    fn the_rare_set_stays_bounded_and_drops_the_most_abundant() {
        let mut entropic = Entropic::new(options(2, 1));
        let mut inputs = vec![entropic.new_input(1, 0)];
        for feature in 1..=3u64 {
            entropic.add_rare_feature(feature, &mut inputs);
            for _ in 0..(5 * feature) {
                entropic.count_run(&[feature], Some(&mut inputs[0]));
            }
        }
        entropic.add_rare_feature(4, &mut inputs);
        assert!(entropic.rare.len() <= 3, "{:?}", entropic.rare);
        assert!(
            !entropic.rare.contains(&Entropic::slot(3)),
            "the most abundant went first"
        );
        assert!(entropic.rare.contains(&Entropic::slot(4)));
    }

    #[test]
    fn entries_without_features_or_mutated_far_too_often_get_nothing() {
        let mut entropic = Entropic::new(EntropicOptions::default());
        let mut inputs: Vec<_> = (0..30)
            .map(|i| entropic.new_input(usize::from(i > 0), 0))
            .collect();
        entropic.add_rare_feature(7, &mut inputs);
        for _ in 0..300 {
            entropic.count_run(&[7], Some(&mut inputs[1]));
        }
        let mut weights = Vec::new();
        entropic.weights(&mut inputs, &mut weights);
        assert_eq!(weights[0], 0.0, "no features of its own");
        assert_eq!(
            weights[1], 0.0,
            "300 / 20 mutations against an average of 10"
        );
        assert!(weights[2] > 0.0);
    }

    #[test]
    fn no_energy_anywhere_falls_back() {
        let entropic = Entropic::new(EntropicOptions::default());
        let mut inputs = vec![entropic.new_input(0, 0)];
        let mut weights = Vec::new();
        assert!(!entropic.weights(&mut inputs, &mut weights));
    }
}
