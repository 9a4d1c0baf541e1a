//! Shrinking a crashing input while it keeps crashing the same way (same
//! signature: kind, class and site), never just "some crash".
//!
//! Strategy: delta-debugging-style chunk removal, halving the chunk size down
//! to single bytes; then cutting prefixes and suffixes of any length (a
//! parser usually fails at one spot, and what leads up to it can often go
//! as a whole though no single chunk of it can); then simplifying each
//! remaining byte toward a plain character. Repeated until nothing changes
//! (the result is then 1-minimal) or a limit is hit. Candidates are tried in speculative batches:
//! most fail, and a batch costs one round trip to the harness.

use std::sync::Arc;
use std::time::{Duration, Instant};

use php_fuzz_harness::{Batch, Crash, CrashKind, Executor};

use crate::signature::signature;
use crate::{EngineError, EntryChecker};

mod typed;

const SPECULATIVE_BATCH: usize = 32;

#[derive(Debug, Clone, Default)]
pub struct MinimizeOptions {
    pub max_runs: Option<u64>,
    pub max_time: Option<Duration>,
}

#[derive(Debug)]
pub struct MinimizeOutcome {
    pub input: Vec<u8>,
    pub original_len: usize,
    pub crash: Crash,
    pub signature: String,
    pub runs: u64,
    pub elapsed: Duration,
    /// Neither a single-byte removal nor a simplification keeps the crash.
    pub one_minimal: bool,
    /// A limit stopped the search before it was done.
    pub stopped_early: bool,
    /// For a timeout: the harness timeout every kept input hung past
    /// ([`TIMEOUT_MARGIN`] × `--timeout`).
    pub timeout_at: Option<Duration>,
    /// A typed entry, minimized argument by argument: `one_minimal` then
    /// means no single argument can be made smaller.
    pub typed: bool,
}

/// A timeout is minimized with the harness's timeout this many times
/// `--timeout`: every input it keeps hangs by a clear margin, not just past
/// the limit under instrumentation's cost.
pub const TIMEOUT_MARGIN: u32 = 2;

/// Progress after each accepted step: (current size, runs so far).
pub fn minimize(
    executor: &mut Executor,
    input: &[u8],
    options: &MinimizeOptions,
    mut progress: impl FnMut(usize, u64),
) -> Result<MinimizeOutcome, EngineError> {
    let started = Instant::now();
    let checker = EntryChecker::from_ready(
        executor
            .target_info()
            .and_then(|info| info.arguments.as_deref()),
    )?;
    if let Some(checker) = &checker {
        checker.check(std::path::Path::new("the input"), input)?;
    }
    let mut batch = Batch::new();
    let Some(mut crash) = run_alone(executor, &mut batch, input)? else {
        return Err(EngineError::NotACrash(
            "the input does not crash the target: nothing to minimize (check it with `php-fuzz run-single`)".into(),
        ));
    };
    let mut runs = 1;
    let mut timeout_at = None;
    let mut with_margin;
    let executor = if crash.kind == CrashKind::Timeout {
        let mut config = executor.config().clone();
        config.timeout *= TIMEOUT_MARGIN;
        let timeout = config.timeout;
        with_margin = Executor::new(Arc::new(config), Arc::clone(executor.sources()));
        let again = run_alone(&mut with_margin, &mut batch, input)?;
        runs += 1;
        match again {
            Some(again) if signature(&again) == signature(&crash) => crash = again,
            _ => {
                return Err(EngineError::NotACrash(format!(
                    "the input times out at --timeout {} s but not at {} s: it does not hang by a clear margin, \
                     and a minimized input would only just pass the limit (try a smaller --timeout)",
                    executor.config().timeout.as_secs_f64(),
                    timeout.as_secs_f64()
                )));
            }
        }
        timeout_at = Some(timeout);
        &mut with_margin
    } else {
        executor
    };
    let mut search = Search {
        executor,
        options,
        started,
        runs,
        batch,
        signature: signature(&crash),
        crash: Some(crash),
        stopped: false,
    };

    let mut current = input.to_vec();
    let one_minimal = match &checker {
        Some(checker) => search.shrink_entry(checker.schema(), &mut current, &mut progress)?,
        None => {
            loop {
                let before = current.clone();
                search.remove_chunks(&mut current, &mut progress)?;
                search.cut_ends(&mut current, &mut progress)?;
                search.simplify_bytes(&mut current, &mut progress)?;
                if search.stopped || current == before {
                    break;
                }
            }
            !search.stopped
        }
    };
    Ok(MinimizeOutcome {
        original_len: input.len(),
        crash: search.crash.take().expect("set above"),
        signature: search.signature,
        runs: search.runs,
        elapsed: started.elapsed(),
        one_minimal,
        stopped_early: search.stopped,
        timeout_at,
        typed: checker.is_some(),
        input: current,
    })
}

/// Runs `input` on its own; its crash, if it crashes.
fn run_alone(
    executor: &mut Executor,
    batch: &mut Batch,
    input: &[u8],
) -> Result<Option<Crash>, EngineError> {
    batch.clear();
    batch.push(input);
    let mut result = None;
    executor.run_batch(batch, |r| result = r.crash)?;
    Ok(result)
}

struct Search<'a> {
    executor: &'a mut Executor,
    options: &'a MinimizeOptions,
    started: Instant,
    runs: u64,
    batch: Batch,
    signature: String,
    /// The crash of the smallest input so far.
    crash: Option<Crash>,
    stopped: bool,
}

impl Search<'_> {
    fn out_of_budget(&mut self) -> bool {
        if self.options.max_runs.is_some_and(|max| self.runs >= max)
            || self
                .options
                .max_time
                .is_some_and(|max| self.started.elapsed() >= max)
        {
            self.stopped = true;
        }
        self.stopped
    }

    /// Runs the candidates in the batch; returns the first that crashes the
    /// same way, with its crash. Counts only the runs up to it as used.
    fn first_same_crash(&mut self) -> Result<Option<(usize, Crash)>, EngineError> {
        let signature = &self.signature;
        let mut found: Option<(usize, Crash)> = None;
        self.executor.run_batch(&self.batch, |r| {
            if found.is_none()
                && let Some(crash) = r.crash
                && crate::signature::signature(&crash) == *signature
            {
                found = Some((r.index, crash));
            }
        })?;
        self.runs += match &found {
            Some((index, _)) => *index as u64 + 1,
            None => self.batch.len() as u64,
        };
        Ok(found)
    }

    fn budget_left(&self) -> usize {
        match self.options.max_runs {
            Some(max) => (max.saturating_sub(self.runs) as usize).min(SPECULATIVE_BATCH),
            None => SPECULATIVE_BATCH,
        }
    }

    fn remove_chunks(
        &mut self,
        current: &mut Vec<u8>,
        progress: &mut impl FnMut(usize, u64),
    ) -> Result<(), EngineError> {
        let mut chunk = (current.len() / 2).max(1);
        loop {
            let mut offset = 0;
            while offset < current.len() {
                if self.out_of_budget() {
                    return Ok(());
                }
                // Candidates: remove [o, o + chunk) for successive offsets o.
                self.batch.clear();
                let mut offsets = Vec::new();
                let mut o = offset;
                while o < current.len() && offsets.len() < self.budget_left() {
                    let end = (o + chunk).min(current.len());
                    self.batch.push_with(|buf| {
                        buf.extend_from_slice(&current[..o]);
                        buf.extend_from_slice(&current[end..]);
                    });
                    offsets.push(o);
                    o += chunk;
                }
                match self.first_same_crash()? {
                    Some((index, crash)) => {
                        let o = offsets[index];
                        let end = (o + chunk).min(current.len());
                        current.drain(o..end);
                        self.crash = Some(crash);
                        progress(current.len(), self.runs);
                        // The bytes at `o` are new: try removing from there again.
                        offset = o;
                    }
                    None => offset = o,
                }
            }
            if chunk == 1 {
                return Ok(());
            }
            chunk = (chunk / 2).max(1);
        }
    }

    /// Tries cutting the longest prefix, then the longest suffix, that keeps the crash.
    fn cut_ends(
        &mut self,
        current: &mut Vec<u8>,
        progress: &mut impl FnMut(usize, u64),
    ) -> Result<(), EngineError> {
        for from_start in [true, false] {
            let mut cut = current.len().saturating_sub(1);
            while cut > 0 {
                if self.out_of_budget() {
                    return Ok(());
                }
                self.batch.clear();
                let mut cuts = Vec::new();
                while cut > 0 && cuts.len() < self.budget_left() {
                    let kept = if from_start {
                        &current[cut..]
                    } else {
                        &current[..current.len() - cut]
                    };
                    self.batch.push(kept);
                    cuts.push(cut);
                    cut -= 1;
                }
                if let Some((index, crash)) = self.first_same_crash()? {
                    let cut = cuts[index];
                    if from_start {
                        current.drain(..cut);
                    } else {
                        current.truncate(current.len() - cut);
                    }
                    self.crash = Some(crash);
                    progress(current.len(), self.runs);
                    break;
                }
            }
        }
        Ok(())
    }

    fn simplify_bytes(
        &mut self,
        current: &mut [u8],
        progress: &mut impl FnMut(usize, u64),
    ) -> Result<(), EngineError> {
        let mut position = 0;
        while position < current.len() {
            if self.out_of_budget() {
                return Ok(());
            }
            self.batch.clear();
            let mut changes = Vec::new();
            let mut p = position;
            while p < current.len() && changes.len() < self.budget_left() {
                for &simple in simpler_than(current[p]) {
                    if changes.len() >= self.budget_left() {
                        break;
                    }
                    self.batch.push_with(|buf| {
                        buf.extend_from_slice(current);
                        let at = buf.len() - current.len() + p;
                        buf[at] = simple;
                    });
                    changes.push((p, simple));
                }
                p += 1;
            }
            if changes.is_empty() {
                position = p;
                continue;
            }
            match self.first_same_crash()? {
                Some((index, crash)) => {
                    let (at, simple) = changes[index];
                    current[at] = simple;
                    self.crash = Some(crash);
                    progress(current.len(), self.runs);
                    position = at + 1;
                }
                None => position = p,
            }
        }
        Ok(())
    }
}

/// Simpler replacements for a byte, simplest first; none for the simplest.
fn simpler_than(byte: u8) -> &'static [u8] {
    match byte {
        b'a' | b'0' | b' ' => &[],
        b'b'..=b'z' | b'A'..=b'Z' => b"a",
        b'1'..=b'9' => b"0",
        _ => b"a0 ",
    }
}

#[cfg(test)]
mod tests {
    use super::simpler_than;

    #[test]
    fn simplest_bytes_stay() {
        assert!(simpler_than(b'a').is_empty());
        assert_eq!(simpler_than(b'Q'), b"a");
        assert_eq!(simpler_than(b'7'), b"0");
        assert_eq!(simpler_than(0xff), b"a0 ");
    }
}
