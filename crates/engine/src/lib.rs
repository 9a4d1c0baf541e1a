//! The php-fuzz engine: the fuzzing loop over a harness [`Executor`], and the
//! commands built on the same execution path: replay and crash minimization.
//!
//! Data flow: mutated input → harness (PHP) → block trace → edges → features
//! (php-fuzz-coverage) → NEW / REDUCE into the corpus, or a crash into the
//! crash store.
//!
//! [`Executor`]: php_fuzz_harness::Executor

mod auto_dictionary;
mod corpus;
mod crashes;
mod entries;
mod fuzz;
mod in_flight;
mod merge;
mod minimize;
mod output;
mod replay;
mod signature;

use std::path::PathBuf;
use std::time::Duration;

pub use auto_dictionary::AUTO_DICTIONARY_FILE;
pub use corpus::{Corpus, EntropicOptions, Entry, EntryId};
pub use crashes::{CrashStore, KnownCrash, Recorded, replay_flags, shell_quote};
pub use entries::EntryChecker;
pub use fuzz::{CmpSummary, FuzzSummary, GrammarShare, StopReason, fuzz};
pub use in_flight::save_in_flight;
pub use merge::{MergeEvent, MergeOutcome, MergeProgress, merge};
pub use minimize::{MinimizeOptions, MinimizeOutcome, TIMEOUT_MARGIN, minimize};
pub use output::{
    AdaptedTimeout, CampaignEvent, CrashContext, Event, LibFuzzerVoice, Mutations, NewCrash,
    Opening, Output, ReportContext, StatusLine, Voice, crash_report, libfuzzer_crash_report,
    preview, summary_line,
};
pub use php_fuzz_mutate::DictionaryError;
pub use replay::{HitsByBlock, ReplayResult, collect_inputs, replay};
pub use signature::{
    TOP_FRAMES, callers_in_signature, crash_from_record, normalize_message, signature,
    signature_frames,
};

/// Default input length limit when neither `--max-len` nor `setMaxLen()` set one.
pub const DEFAULT_MAX_LEN: usize = 1024;

#[derive(Debug, Clone)]
pub struct FuzzOptions {
    pub max_len: Option<usize>,
    pub len_control_factor: u32,
    pub seed: u64,
    pub max_runs: Option<u64>,
    pub max_time: Option<Duration>,
    /// Stop after this many distinct new crashes.
    pub max_crashes: Option<usize>,
    pub jobs: usize,
    pub dictionaries: Vec<PathBuf>,
    pub artifact_dir: PathBuf,
    pub reload: Option<Duration>,
    /// `--grammar`; None when not given: the target's `setGrammar()`, else
    /// no grammar (docs/grammar.md).
    pub grammar: Option<GrammarChoice>,
    /// `--fragments`: files or directories whose subtrees seed the pool.
    pub fragments: Vec<PathBuf>,
    /// `--fusion`: dataflow fusion among the grammar mutations (php only;
    /// docs/grammar.md#dataflow-fusion). Off by default until evaluated.
    pub fusion: bool,
    /// Whether the grammar's built-in lexicon seeds the fragment pool
    /// (`--no-lexicon` turns it off; docs/grammar.md#lexicon).
    pub lexicon: bool,
    /// `--grammar-share`: how many mutants are grammar mutants under the
    /// uniform schedule (default: a quarter of the target's work).
    pub grammar_share: GrammarShare,
    /// Comparison feedback: the dictionary taken from the source, the
    /// tracer (CMP, I2S) and the persistent auto-dictionary. On by default.
    pub cmp: bool,
    /// Make the closeness of compared operands a feature (libFuzzer's
    /// `-use_value_profile=1`). The session's `SourceServer` must serve
    /// the `cmplog` rendering.
    pub use_value_profile: bool,
    /// How crash artifacts are named (in `artifact_dir`, or libFuzzer's way).
    pub artifact_naming: php_fuzz_storage::ArtifactNaming,
    /// More directories whose files run as seeds; nothing is written there
    /// but what `findings_dir` says.
    pub seed_dirs: Vec<PathBuf>,
    /// Also save each new finding's input here, alone (a PHPUnit fuzz
    /// test's folder, which phpunit replays).
    pub findings_dir: Option<PathBuf>,
    /// Pick corpus entries by the Entropic power schedule (`--entropic`);
    /// `None` keeps the plain schedule.
    pub entropic: Option<corpus::EntropicOptions>,
    /// The plain schedule weighs entries by AFL's performance score of
    /// their run time (`--scale-per-exec-time`).
    pub scale_per_exec_time: bool,
    /// The statistics file to append to (JSON lines, see
    /// `php_fuzz_storage::StatsLine`); `None` writes none.
    pub stats: Option<PathBuf>,
    /// No timeout was given: the seeds run with the harness's timeout (the
    /// upper bound, `ADAPTIVE_TIMEOUT_MAX`), and the campaign then uses a
    /// multiple of the slowest one (see `adaptive_timeout`).
    pub adaptive_timeout: bool,
    /// `--mutation-schedule`: which mutations are drawn (docs/scheduling.md).
    pub mutation_schedule: MutationSchedule,
}

/// How mutations are drawn: libFuzzer's uniform draw, or the schedule that
/// learns which mutations pay on this target (docs/scheduling.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MutationSchedule {
    #[default]
    Uniform,
    Learned,
}

/// The adaptive timeout is this many times the slowest seed's run...
pub const ADAPTIVE_TIMEOUT_FACTOR: u32 = 20;
/// ...and at least this...
pub const ADAPTIVE_TIMEOUT_MIN: Duration = Duration::from_secs(1);
/// ...and at most this, the timeout the seeds run with.
pub const ADAPTIVE_TIMEOUT_MAX: Duration = Duration::from_secs(10);

/// The timeout a campaign without `--timeout` uses once its seeds ran, the
/// slowest (without a crash) taking `slowest`: `ADAPTIVE_TIMEOUT_FACTOR`
/// times it, rounded up to a tenth of a second, within
/// `ADAPTIVE_TIMEOUT_MIN..=ADAPTIVE_TIMEOUT_MAX` (as AFL's `-t` default).
pub fn adaptive_timeout(slowest: Duration) -> Duration {
    let scaled = slowest.saturating_mul(ADAPTIVE_TIMEOUT_FACTOR);
    let tenths = scaled.as_millis().div_ceil(100) as u64;
    Duration::from_millis(tenths * 100).clamp(ADAPTIVE_TIMEOUT_MIN, ADAPTIVE_TIMEOUT_MAX)
}

impl Default for FuzzOptions {
    fn default() -> Self {
        FuzzOptions {
            max_len: None,
            len_control_factor: 100,
            seed: 0,
            max_runs: None,
            max_time: None,
            max_crashes: None,
            jobs: 1,
            dictionaries: Vec::new(),
            artifact_dir: PathBuf::from("."),
            reload: None,
            grammar: None,
            fragments: Vec::new(),
            fusion: false,
            lexicon: true,
            grammar_share: GrammarShare::default(),
            cmp: true,
            use_value_profile: false,
            artifact_naming: php_fuzz_storage::ArtifactNaming::WithReport,
            seed_dirs: Vec::new(),
            findings_dir: None,
            entropic: None,
            scale_per_exec_time: false,
            stats: None,
            adaptive_timeout: false,
            mutation_schedule: MutationSchedule::Uniform,
        }
    }
}

/// What `--grammar` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrammarChoice {
    /// `--grammar NAME`: this grammar, whatever the target's `setGrammar()` says.
    Named(String),
    /// `--grammar auto`: the target's `setGrammar()`, else the grammar that
    /// parses at least 80 % of the seed bytes, if one does.
    Auto,
    /// `--grammar none`: no grammar, even when the target calls `setGrammar()`.
    Off,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Harness(#[from] php_fuzz_harness::HarnessError),
    #[error(transparent)]
    Storage(#[from] php_fuzz_storage::StorageError),
    #[error(transparent)]
    Dictionary(#[from] php_fuzz_mutate::DictionaryError),
    #[error("{}: {what}: {source}", path.display())]
    Input {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: unknown crash kind {kind:?}", sidecar.display())]
    UnknownCrashKind { sidecar: PathBuf, kind: String },
    #[error("{0}")]
    NotACrash(String),
    #[error("{origin}: {source}")]
    Grammar {
        origin: &'static str,
        #[source]
        source: php_fuzz_grammar::GrammarError,
    },
    #[error(
        "--fragments needs a grammar: give --grammar NAME or call $config->setGrammar() in the target"
    )]
    FragmentsWithoutGrammar,
    #[error(
        "--fusion fuses PHP programs and needs the php grammar, but the campaign's grammar is {found}: give --grammar php or call $config->setGrammar('php') in the target"
    )]
    FusionWithoutPhp { found: String },
    #[error("a worker thread panicked")]
    WorkerPanicked,
    /// The harness described a typed target's parameters in a way the
    /// engine cannot read (docs/autofuzz.md): php-fuzz's own bug.
    #[error("the typed target's parameters: {0}")]
    Arguments(String),
    /// A typed corpus entry that does not parse or fit its parameters:
    /// `FILE:LINE:COLUMN: …` or `FILE: argument N ($name): …`.
    #[error("{0}")]
    Entry(String),
}
