//! Running the seeds: the corpus as found on disk (and entries --reload
//! finds later) in batches, shortest first, and what the campaign says once
//! they ran.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use php_fuzz_harness::Executor;
use php_fuzz_storage::CorpusFile;

use super::collect::run_and_collect;
use super::confirm::confirm_saved_crashes;
use super::feedback::absorb;
use super::grammar::GrammarWorker;
use super::scratch::Scratch;
use super::stats::Numbers;
use super::{Shared, State, StopReason};
use crate::EngineError;
use crate::corpus::Entry;
use crate::output::Event;

/// Inputs bigger than this in total are split over several batches.
const MAX_BATCH_BYTES: usize = 8 << 20;

/// How many corpus files ran, and how many of them crashed.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct SeedsRun {
    ran: usize,
    crashed: usize,
}

/// Runs the corpus as found on disk; keeps what reaches new features.
pub(super) fn run_seeds(
    shared: &Shared,
    executor: &mut Executor,
    scratch: &mut Scratch,
    grammar: &mut GrammarWorker,
    seeds: Vec<CorpusFile>,
) -> Result<SeedsRun, EngineError> {
    let mut counts = SeedsRun::default();
    let mut seeds = seeds;
    // Shortest first, as libFuzzer and php-fuzzer do: where two seeds reach
    // the same code, the short one joins the corpus and the long one adds
    // nothing, so mutants stay short and cheap to run (stable: equal
    // lengths keep their file-name order).
    seeds.sort_by_key(|seed| seed.data.len());
    if seeds.is_empty() {
        // An empty directory: the empty input, or a typed target's first
        // entries made from its types.
        let first = match &shared.typed {
            Some(typed) => typed.first_entries(shared.options.seed),
            None => vec![Vec::new()],
        };
        seeds.extend(first.into_iter().map(|data| CorpusFile {
            path: PathBuf::new(),
            data,
            owned: false,
        }));
    }
    let max_len = shared.lock().max_len;
    let mut pending = seeds.into_iter().peekable();
    while pending.peek().is_some() {
        if shared.interrupted.load(Ordering::Relaxed) {
            break;
        }
        if shared.max_time_reached() {
            shared.lock().stop.get_or_insert(StopReason::MaxTime);
            break;
        }
        scratch.clear();
        let mut bytes = 0;
        while let Some(seed) = pending.next_if(|s| {
            scratch.batch.len() < scratch.batch_size && bytes + s.data.len() <= MAX_BATCH_BYTES
                || scratch.batch.is_empty()
        }) {
            let data = &seed.data[..seed.data.len().min(max_len)];
            bytes += data.len();
            let path = (!seed.path.as_os_str().is_empty()).then_some(seed.path);
            scratch.push_file(data, path);
        }
        run_and_collect(shared, executor, scratch)?;
        counts.ran += scratch.batch.len();
        counts.crashed += scratch.crashed.iter().filter(|&&c| c).count();
        absorb(shared, &mut shared.lock(), scratch)?;
        confirm_saved_crashes(shared, scratch)?;
        grammar.learn(shared, scratch);
    }
    Ok(counts)
}

/// Once the seeds ran: the length limit reaches the longest entry, an empty
/// corpus gets an empty input, and the INITED status line and the first
/// statistics sample are written.
pub(super) fn after_seeds(shared: &Shared, seeds_run: SeedsRun) {
    {
        let mut state = shared.lock();
        let longest = state.corpus.max_len();
        state.length.at_least(longest);
        if state.corpus.is_empty() {
            start_from_empty(shared, &mut state, seeds_run);
        }
        if let (Some(grammar), Some(corpus)) = (&shared.grammar, &state.grammar) {
            shared.out.status(&format!(
                "INFO: grammar: {}  {}",
                grammar.name(),
                corpus.describe()
            ));
        }
    }
    shared.print_status(&mut shared.lock(), Event::Inited, None);
    if shared.stats.is_some() {
        let numbers = Numbers::of(&shared.lock());
        if let Some(mut stats) = shared.stats() {
            stats.sample(shared, numbers);
        }
    }
}

/// No seed joined the corpus: says why, and adds an empty input to fuzz from.
fn start_from_empty(shared: &Shared, state: &mut State, seeds_run: SeedsRun) {
    if seeds_run.ran > 0 && seeds_run.crashed == seeds_run.ran {
        shared.out.line(&format!(
            "INFO: every seed input crashes ({} of {}), so none joins the corpus; \
             fuzzing from an empty input.",
            seeds_run.crashed, seeds_run.ran
        ));
    } else {
        shared.out.line(
            "WARNING: no input reached any instrumented code: is the target's code instrumented? \
             (files tree-sitter cannot parse run without coverage). Fuzzing blindly from an empty input.",
        );
    }
    state.corpus.add(Entry {
        data: Vec::new(),
        path: None,
        unique: Vec::new(),
        trace_hash: 0,
        micros: 0,
    });
}
