//! Runs inputs against a PHP target in child `php` processes.
//!
//! The engine hands an [`Executor`] a [`Batch`] of inputs; the executor sends
//! it to a harness process over a pipe, and reports each input's coverage and
//! verdict (ok, or a [`Crash`]). It restarts harnesses that die, time out or
//! grow too large, and finds out which input was to blame.

mod allocation;
mod batch;
mod executor;
mod fork_server;
mod groups;
mod memory;
mod mutation;
mod php;
mod process;
pub mod protocol;
mod run_coverage;
mod runtime;
mod sources;
mod spare;
mod triage;
mod watch;

use std::path::PathBuf;

pub use php_fuzz_detectors::{Detector, DetectorSet, UnknownDetector};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use allocation::{LARGE_ALLOCATION, MALLOC_LIMIT, requested_bytes};
pub use batch::Batch;
pub use executor::{Executor, ExecutorStats, KnownHang, RunResult};
pub use groups::kill_all_harnesses;
pub use memory::{own_peak_rss_mb, own_rss_mb};
pub use mutation::{BuiltinMutation, MutatorFailure, MutatorProcess};
pub use php::{MIN_PHP_VERSION_ID, PhpBinary};
pub use php_fuzz_sandbox::{Layers as SandboxLayers, Mode as SandboxMode, SandboxError};

pub use process::{CustomHooks, TargetInfo, output_walled};
pub use protocol::MutationItem;
pub use run_coverage::Coverage;
pub use runtime::Runtime;
pub use sources::{BlockLocation, SourceFile, SourceServer};
pub use triage::INTERNAL_CALL_TIMEOUT;

/// Everything needed to start harness processes for one target.
#[derive(Debug, Clone)]
pub struct HarnessConfig {
    pub php: PhpBinary,
    pub runtime: Arc<Runtime>,
    /// Absolute path of target.php.
    pub target: PathBuf,
    /// How users name the target, when not by `target`'s path: a PHPUnit
    /// fuzz test's `tests/ParserFuzzTest.php::fuzzParse`.
    pub display_name: Option<String>,
    /// Extra `-d key=value` settings.
    pub ini: Vec<(String, String)>,
    pub timeout: Duration,
    /// Enforced through PHP's memory_limit and by watching the process's RSS.
    pub rss_limit_mb: u64,
    /// One allocation larger than this is an out-of-memory finding of its
    /// own (libFuzzer's `-malloc_limit_mb`); 0 means `rss_limit_mb`. PHP has
    /// no hook per allocation, so PHP's memory_limit is the smaller of the
    /// two limits (docs/hardening.md, "One large allocation").
    pub malloc_limit_mb: u64,
    /// How long loading the target may take.
    pub load_timeout: Duration,
    /// How often a long batch reports the outcomes it has so far.
    pub flush_interval: Duration,
    /// Show what the target prints instead of discarding it.
    pub forward_output: bool,
    /// Send a run whose trace repeats an earlier one as the trace's hash
    /// alone (`RunResult::repeat`). For fuzzing; replay wants every trace.
    pub dedup_traces: bool,
    /// A call stack deeper than this is a runaway recursion (a stack
    /// overflow finding). No sane library recurses this deep; a runaway
    /// recursion passes it within a fraction of a second.
    pub max_stack_depth: u32,
    /// The harness has every block note the PHP stack, so that the report
    /// of a fatal error (one huge allocation) carries it. Slow: for
    /// re-running one input, never for fuzzing (the executor sets it).
    pub catch_fatal_stack: bool,
    /// Fork each harness from a warm `php` that loaded the target once
    /// (`--no-fork-server` turns it off); falls back to starting `php`
    /// where PHP cannot fork (docs/architecture.md, "The fork server").
    pub fork_server: bool,
    /// The bug detectors to run; `None` leaves it to the target
    /// (`$config->setDetectors()`), which defaults to all (docs/detectors.md).
    pub detectors: Option<DetectorSet>,
    /// `--allow-side-effects`: runs may start processes, connect and write
    /// anywhere, as they would outside php-fuzz.
    pub allow_side_effects: bool,
    /// The wall around the harness's process tree (docs/sandbox.md).
    pub wall: WallSettings,
    /// Options a reproduce command needs to resolve `display_name` as this
    /// session did (a callee's `--autoload`, `--allowed-exception`); each
    /// starts with a space.
    pub name_flags: String,
}

impl HarnessConfig {
    /// The target as users name it: `display_name`, else the file's path.
    pub fn target_name(&self) -> String {
        self.display_name
            .clone()
            .unwrap_or_else(|| self.target.display().to_string())
    }

    pub fn new(php: PhpBinary, runtime: Arc<Runtime>, target: PathBuf) -> HarnessConfig {
        HarnessConfig {
            php,
            runtime,
            target,
            display_name: None,
            ini: Vec::new(),
            timeout: Duration::from_secs(3),
            rss_limit_mb: 2048,
            malloc_limit_mb: 0,
            load_timeout: Duration::from_secs(60),
            flush_interval: Duration::from_millis(50),
            forward_output: false,
            dedup_traces: false,
            max_stack_depth: 50_000,
            catch_fatal_stack: false,
            fork_server: true,
            detectors: None,
            allow_side_effects: false,
            wall: WallSettings::default(),
            name_flags: String::new(),
        }
    }

    /// The malloc limit in effect: `malloc_limit_mb`, or the RSS limit.
    pub fn effective_malloc_limit_mb(&self) -> u64 {
        match self.malloc_limit_mb {
            0 => self.rss_limit_mb,
            mb => mb,
        }
    }

    /// PHP's memory_limit: the smaller of the RSS and malloc limits.
    pub fn php_memory_limit_mb(&self) -> u64 {
        self.rss_limit_mb.min(self.effective_malloc_limit_mb())
    }
}

/// When an executor stops waiting for a batch: a flag someone sets (Ctrl-C),
/// or a point in time (`--max-time`). A stopped batch reports only the
/// inputs that finished; the harness running the rest is killed.
#[derive(Debug, Clone, Default)]
pub struct StopWhen {
    pub flag: Option<Arc<AtomicBool>>,
    pub deadline: Option<Instant>,
}

impl StopWhen {
    pub fn reached(&self) -> bool {
        self.flag
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("cannot run `{}`: {reason}; {hint}", php.display())]
    PhpNotFound {
        php: PathBuf,
        reason: String,
        hint: &'static str,
    },
    #[error("`{}` is PHP {version}, but php-fuzz needs PHP 8.1 or newer; {hint}", php.display())]
    PhpTooOld {
        php: PathBuf,
        version: String,
        hint: &'static str,
    },
    #[error("cannot start the harness process: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("{}", .0)]
    Load(Box<LoadFailure>),
    #[error("cannot instrument {}: {source}", path.display())]
    Instrument {
        path: PathBuf,
        #[source]
        source: php_fuzz_instrument::InstrumentError,
    },
    #[error("lost the pipe to the harness: {0}")]
    Pipe(#[source] std::io::Error),
    #[error("harness protocol error: {0}")]
    Protocol(String),
    #[error("the harness died {count} times in a row while starting; last: {last}")]
    KeepsDying { count: u32, last: String },
    #[error("{}", .0)]
    Mutator(Box<MutatorFailure>),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// The wall's settings for one target's harnesses (docs/sandbox.md).
#[derive(Debug, Clone, Default)]
pub struct WallSettings {
    pub mode: SandboxMode,
    /// Folders the target allowed writes in (`$config->allowWrites()`),
    /// learned from a harness's Ready: the harnesses after it get them.
    learned: Arc<std::sync::Mutex<Vec<PathBuf>>>,
}

impl WallSettings {
    pub fn new(mode: SandboxMode) -> WallSettings {
        WallSettings {
            mode,
            learned: Arc::default(),
        }
    }

    pub(crate) fn learned_writable(&self) -> Vec<PathBuf> {
        // A poisoned lock still holds what was learned: forgetting it would
        // make every harness re-learn, and respawn, for ever.
        self.learned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn learn(&self, folders: Vec<PathBuf>) {
        self.learned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(folders);
    }
}

/// The target file could not be loaded: it must be fixed before fuzzing.
#[derive(Debug, Clone)]
pub struct LoadFailure {
    pub target: PathBuf,
    pub summary: String,
    pub problem: Option<Problem>,
    pub stderr: String,
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot load target {}: {}",
            self.target.display(),
            self.summary
        )
    }
}

/// An error, exception or diagnostic as PHP reported it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Problem {
    /// Exception class, or the kind of PHP error (`Warning`, `Deprecated`, `Fatal error`…).
    pub class: String,
    pub message: String,
    pub file: String,
    pub line: u32,
    /// Human-readable stack trace, innermost frame first.
    pub trace: String,
    pub frames: Vec<Frame>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: u32,
    pub function: String,
}

impl Problem {
    pub(crate) fn from_wire(p: &protocol::Problem<'_>) -> Problem {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        Problem {
            class: text(p.class),
            message: text(p.message),
            file: text(p.file),
            line: p.line,
            trace: text(p.trace),
            frames: p
                .frames
                .iter()
                .map(|f| Frame {
                    file: text(f.file),
                    line: f.line,
                    function: text(f.function),
                })
                .collect(),
        }
    }

    /// `Class: message at file:line`, on one line.
    pub fn headline(&self) -> String {
        let message = self.message.lines().next().unwrap_or("");
        let mut out = if self.class.is_empty() {
            message.to_string()
        } else {
            format!("{}: {message}", self.class)
        };
        match (self.file.is_empty(), self.line) {
            (true, _) => {}
            (false, 0) => out.push_str(&format!(" in {}", self.file)),
            (false, line) => out.push_str(&format!(" at {}:{line}", self.file)),
        }
        out
    }
}

/// What went wrong in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CrashKind {
    /// A Throwable that is not one of the allowed exceptions.
    Exception,
    /// A warning, notice or deprecation raised while the target ran.
    Warning,
    Timeout,
    /// A PHP fatal error (other than memory exhaustion).
    Fatal,
    /// Unbounded recursion: PHP ran out of memory deep in repeated calls.
    StackOverflow,
    /// `exit()` or `die()` inside the target.
    Exit,
    OutOfMemory,
    /// The process died without a word: a segfault, or killed from outside.
    HarnessDied,
    /// A bug detector's finding: `problem.class` names the detector
    /// (docs/detectors.md).
    Security,
    /// A side effect php-fuzz refused (a process, a connection, a write
    /// outside the allowed folders): `problem.class` says which.
    SideEffect,
}

impl CrashKind {
    pub const ALL: [CrashKind; 10] = [
        CrashKind::Exception,
        CrashKind::Warning,
        CrashKind::Timeout,
        CrashKind::Fatal,
        CrashKind::StackOverflow,
        CrashKind::Exit,
        CrashKind::OutOfMemory,
        CrashKind::HarnessDied,
        CrashKind::Security,
        CrashKind::SideEffect,
    ];

    /// Name used in status lines and sidecars.
    pub fn name(self) -> &'static str {
        match self {
            CrashKind::Exception => "exception",
            CrashKind::Warning => "warning",
            CrashKind::Timeout => "timeout",
            CrashKind::Fatal => "fatal-error",
            CrashKind::StackOverflow => "stack-overflow",
            CrashKind::Exit => "exit",
            CrashKind::OutOfMemory => "out-of-memory",
            CrashKind::HarnessDied => "harness-died",
            CrashKind::Security => "security",
            CrashKind::SideEffect => "side-effect",
        }
    }

    /// Artifact file prefix, as libFuzzer names them.
    pub fn artifact_prefix(self) -> &'static str {
        match self {
            CrashKind::Timeout => "timeout",
            CrashKind::OutOfMemory => "oom",
            _ => "crash",
        }
    }
}

/// A crash kind's name is not one of [`CrashKind::name`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown crash kind `{0}`")]
pub struct UnknownCrashKind(pub String);

impl std::str::FromStr for CrashKind {
    type Err = UnknownCrashKind;

    /// The inverse of [`CrashKind::name`], as crash reports save it.
    fn from_str(name: &str) -> Result<CrashKind, UnknownCrashKind> {
        CrashKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| UnknownCrashKind(name.to_string()))
    }
}

#[derive(Debug, Clone)]
pub struct Crash {
    pub kind: CrashKind,
    pub problem: Problem,
    /// The harness's last stderr output, when the process died.
    pub stderr: Option<String>,
    /// Anything else worth knowing, e.g. that it did not reproduce alone.
    pub note: Option<String>,
}

impl Crash {
    pub fn headline(&self) -> String {
        format!("{}: {}", self.kind.name(), self.problem.headline())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_crash_kind_is_parsed_from_its_name_and_nothing_else_is() {
        // Fails to compile when a kind is added: add it to CrashKind::ALL too.
        let _listed = |kind: CrashKind| match kind {
            CrashKind::Exception
            | CrashKind::Warning
            | CrashKind::Timeout
            | CrashKind::Fatal
            | CrashKind::StackOverflow
            | CrashKind::Exit
            | CrashKind::OutOfMemory
            | CrashKind::HarnessDied
            | CrashKind::Security
            | CrashKind::SideEffect => (),
        };
        for kind in CrashKind::ALL {
            assert_eq!(kind.name().parse(), Ok(kind));
        }
        assert_eq!(
            "segfault".parse::<CrashKind>(),
            Err(UnknownCrashKind("segfault".into()))
        );
        assert!("Timeout".parse::<CrashKind>().is_err());
    }
}
