//! How `scan` shares its time among entry points (docs/autofuzz.md):
//! first each entry point, in rank order, gets a slice in proportion to its
//! score; then the time goes to the campaigns that still find new inputs,
//! each slice twice its last, while one that found nothing in its last
//! slice hands its time on, as Entropic hands energy to the seeds that
//! still pay. When every campaign has stalled, the best ranked go on in
//! turn. Nothing here reads the clock: the caller says how much time is
//! left, so the plan is testable and its decisions replayable.

/// The shortest slice worth a campaign: loading the target and running
/// its seeds take a good part of a second.
pub const MIN_SLICE: f64 = 2.0;
/// The longest first slice, however high an entry point ranks.
const MAX_FIRST_SLICE: f64 = 30.0;
/// The longest later slice.
const MAX_SLICE: f64 = 120.0;
/// The share of the budget that first slices may take, all together.
const EXPLORE_SHARE: f64 = 0.5;

/// One slice of fuzzing time for one entry point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    /// The entry point's index, in rank order.
    pub entry: usize,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default)]
struct EntryState {
    first_slice: f64,
    slices: u32,
    seconds: f64,
    last_slice: f64,
    /// New corpus entries per second in its last slice.
    last_rate: f64,
    running: bool,
    /// Its campaign could not run (the target failed to load): no more slices.
    retired: bool,
}

/// The scan's plan, updated as slices end.
#[derive(Debug)]
pub struct Planner {
    entries: Vec<EntryState>,
    /// Stalled campaigns take turns from here, in rank order.
    next_stalled: usize,
}

impl Planner {
    /// `scores` in rank order (best first); `budget` is the fuzzing time.
    pub fn new(scores: &[f64], budget: f64) -> Planner {
        let total: f64 = scores.iter().map(|s| s.max(0.1)).sum();
        let entries = scores
            .iter()
            .map(|score| EntryState {
                first_slice: (budget * EXPLORE_SHARE * score.max(0.1) / total.max(0.1))
                    .clamp(MIN_SLICE, MAX_FIRST_SLICE),
                ..EntryState::default()
            })
            .collect();
        Planner {
            entries,
            next_stalled: 0,
        }
    }

    /// The next slice, given the seconds left; `None` when no slice fits
    /// or every entry point is running.
    pub fn next(&mut self, left: f64) -> Option<Slice> {
        if left < MIN_SLICE {
            return None;
        }
        let slice = self
            .first_slice(left)
            .or_else(|| self.paying_slice(left))
            .or_else(|| self.stalled_slice(left))?;
        let state = &mut self.entries[slice.entry];
        state.running = true;
        Some(slice)
    }

    /// A slice ended: it ran `seconds` and added `new_entries` to the corpus.
    pub fn finish(&mut self, entry: usize, seconds: f64, new_entries: u64) {
        let state = &mut self.entries[entry];
        state.running = false;
        state.slices += 1;
        state.seconds += seconds;
        state.last_slice = seconds;
        state.last_rate = new_entries as f64 / seconds.max(0.1);
    }

    /// An entry point whose campaign cannot run gets no more slices.
    pub fn retire(&mut self, entry: usize) {
        let state = &mut self.entries[entry];
        state.running = false;
        state.retired = true;
    }

    /// Seconds fuzzed and slices run so far, per entry point.
    #[cfg(test)]
    pub fn spent(&self, entry: usize) -> (f64, u32) {
        let state = &self.entries[entry];
        (state.seconds, state.slices)
    }

    /// The best ranked entry point that never ran, if its slice fits.
    fn first_slice(&self, left: f64) -> Option<Slice> {
        let entry = self
            .entries
            .iter()
            .position(|e| e.slices == 0 && !e.running && !e.retired)?;
        let seconds = self.entries[entry].first_slice.min(left);
        Some(Slice { entry, seconds })
    }

    /// The campaign whose last slice found new inputs fastest.
    fn paying_slice(&self, left: f64) -> Option<Slice> {
        let (entry, state) = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.running && !e.retired && e.slices > 0 && e.last_rate > 0.0)
            .max_by(|a, b| a.1.last_rate.total_cmp(&b.1.last_rate))?;
        let seconds = (state.last_slice * 2.0)
            .clamp(MIN_SLICE, MAX_SLICE)
            .min(left);
        Some(Slice { entry, seconds })
    }

    /// Every campaign stalled: the best ranked take turns.
    fn stalled_slice(&mut self, left: f64) -> Option<Slice> {
        let count = self.entries.len();
        for offset in 0..count {
            let entry = (self.next_stalled + offset) % count;
            let state = &self.entries[entry];
            if !state.running && !state.retired && state.slices > 0 {
                self.next_stalled = (entry + 1) % count;
                let seconds = (state.last_slice * 2.0)
                    .clamp(MIN_SLICE, MAX_SLICE)
                    .min(left);
                return Some(Slice { entry, seconds });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_slices_follow_the_rank_and_the_score() {
        let mut plan = Planner::new(&[8.0, 2.0], 100.0);
        let first = plan.next(100.0).unwrap();
        assert_eq!(first.entry, 0);
        assert!((first.seconds - 30.0).abs() < 1e-9, "{first:?}"); // 40 s, capped
        let second = plan.next(70.0).unwrap();
        assert_eq!(second.entry, 1);
        assert!((second.seconds - 10.0).abs() < 1e-9, "{second:?}");
        assert_eq!(plan.next(60.0), None, "both are running");
    }

    #[test]
    fn a_stalled_campaign_hands_its_time_to_one_that_still_finds() {
        let mut plan = Planner::new(&[5.0, 5.0], 40.0);
        let a = plan.next(40.0).unwrap();
        let b = plan.next(30.0).unwrap();
        plan.finish(a.entry, a.seconds, 0);
        plan.finish(b.entry, b.seconds, 12);
        for _ in 0..3 {
            let next = plan.next(20.0).unwrap();
            assert_eq!(next.entry, b.entry, "the paying campaign goes on");
            plan.finish(next.entry, next.seconds, 3);
        }
        assert_eq!(plan.spent(a.entry).1, 1);
    }

    #[test]
    fn when_all_stall_the_best_ranked_take_turns_and_no_slice_outlasts_the_budget() {
        let mut plan = Planner::new(&[3.0, 2.0, 1.0], 30.0);
        for _ in 0..3 {
            let s = plan.next(30.0).unwrap();
            plan.finish(s.entry, s.seconds, 0);
        }
        let turns: Vec<usize> = (0..4)
            .map(|_| {
                let s = plan.next(3.0).unwrap();
                assert!(s.seconds <= 3.0);
                plan.finish(s.entry, s.seconds, 0);
                s.entry
            })
            .collect();
        assert_eq!(turns, [0, 1, 2, 0]);
        assert_eq!(plan.next(1.0), None, "less than a slice left");
    }
}
