/// libFuzzer's `-len_control`: start with short inputs, and allow longer
/// ones only once short ones stop finding new coverage.
///
/// The limit starts at 4 (or the longest seed, see [`LengthControl::at_least`])
/// and grows by log2(limit) whenever `factor × log2(limit)` runs in a row
/// found nothing new, up to the maximum length. Factor 0 disables it.
/// The caller decides what counts as new: the engine passes a NEW or a
/// REDUCE, as libFuzzer does.
#[derive(Debug, Clone)]
pub struct LengthControl {
    max_len: usize,
    factor: u64,
    limit: usize,
    runs_without_new: u64,
}

const START: usize = 4;

impl LengthControl {
    pub fn new(max_len: usize, factor: u32) -> LengthControl {
        let limit = if factor == 0 {
            max_len
        } else {
            START.min(max_len)
        };
        LengthControl {
            max_len,
            factor: factor as u64,
            limit,
            runs_without_new: 0,
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Raises the limit to at least `len` (e.g. the longest seed).
    pub fn at_least(&mut self, len: usize) {
        self.limit = self.limit.max(len.min(self.max_len));
    }

    pub fn record_run(&mut self, new_coverage: bool) {
        if new_coverage {
            self.runs_without_new = 0;
            return;
        }
        if self.limit >= self.max_len {
            return;
        }
        self.runs_without_new += 1;
        let log = log2(self.limit);
        if self.runs_without_new > self.factor * log {
            self.limit = (self.limit + log as usize).min(self.max_len);
            self.runs_without_new = 0;
        }
    }
}

/// Number of significant bits: libFuzzer's `Log()`.
fn log2(n: usize) -> u64 {
    (usize::BITS - n.leading_zeros()).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_only_after_runs_without_new_coverage() {
        let mut lc = LengthControl::new(100, 10);
        assert_eq!(lc.limit(), 4);
        for _ in 0..30 {
            lc.record_run(false);
        }
        assert_eq!(lc.limit(), 4, "needs more than 10 × log2(4) = 30 runs");
        lc.record_run(false);
        assert_eq!(lc.limit(), 7);
        for _ in 0..1000 {
            lc.record_run(true);
        }
        assert_eq!(lc.limit(), 7, "new coverage keeps the limit");
    }

    #[test]
    fn reaches_the_maximum_and_stops() {
        let mut lc = LengthControl::new(50, 1);
        for _ in 0..10_000 {
            lc.record_run(false);
        }
        assert_eq!(lc.limit(), 50);
    }

    #[test]
    fn factor_zero_means_no_length_control() {
        let lc = LengthControl::new(300, 0);
        assert_eq!(lc.limit(), 300);
    }

    #[test]
    fn seeds_raise_the_limit_but_not_past_the_maximum() {
        let mut lc = LengthControl::new(64, 100);
        lc.at_least(20);
        assert_eq!(lc.limit(), 20);
        lc.at_least(1000);
        assert_eq!(lc.limit(), 64);
        assert_eq!(LengthControl::new(2, 100).limit(), 2);
    }
}
