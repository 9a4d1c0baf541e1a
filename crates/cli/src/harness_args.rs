//! Options shared by every command that runs the target.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use php_fuzz_harness::{
    DetectorSet, HarnessConfig, PhpBinary, Runtime, SandboxMode, SourceServer, UnknownDetector,
    WallSettings,
};
use php_fuzz_instrument::{Coverage, Hooks, StubStyle};

use crate::callee_target::{CalleeOptions, CalleeTarget};
use crate::fuzz_test_target::FuzzTest;

#[derive(clap::Args, Debug, Clone)]
pub struct HarnessArgs {
    /// PHP binary to run the target with.
    #[arg(long, value_name = "PATH", default_value = "php")]
    pub php: PathBuf,
    /// Extra php.ini setting for the harness (repeatable; a later one wins). Assertions are on
    /// (zend.assertions=1) unless --ini zend.assertions=-1 (or 0) turns them off.
    #[arg(long = "ini", value_name = "KEY=VALUE", value_parser = parse_ini)]
    pub ini: Vec<(String, String)>,
    /// Seconds one input may run before it counts as a timeout [default for fuzz: 20 times the
    /// slowest seed, within 1–10 s, printed at start; elsewhere 3; a fuzz test's
    /// #[FuzzTest(timeout: …)] wins].
    #[arg(long, value_name = "SECONDS",
          allow_negative_numbers = true, value_parser = positive_seconds)]
    pub timeout: Option<f64>,
    /// Memory limit of the harness, in MB: PHP's memory_limit and the process's RSS.
    #[arg(
        long,
        value_name = "MB",
        default_value_t = 2048,
        allow_negative_numbers = true
    )]
    pub rss_limit_mb: u64,
    /// One allocation larger than this, in MB, is an out-of-memory finding of its own, as
    /// libFuzzer's -malloc_limit_mb [default: the --rss-limit-mb]. PHP's memory_limit is the
    /// smaller of the two (see docs/hardening.md, "One large allocation").
    #[arg(long, value_name = "MB", allow_negative_numbers = true)]
    pub malloc_limit_mb: Option<u64>,
    /// How instrumented code records coverage (see docs/instrumentation.md).
    #[arg(long, value_enum, default_value_t = StyleArg::Trace)]
    pub stub: StyleArg,
    /// Show what the target prints (discarded by default).
    #[arg(long)]
    pub show_output: bool,
    /// Start a new php process for every harness instead of forking each one from a warm php
    /// that loaded the target once (see docs/architecture.md, "The fork server").
    #[arg(long)]
    pub no_fork_server: bool,
    /// The bug detectors to run: comma-separated names, `all` or `none` [default: the target's
    /// $config->setDetectors(), else all]. `php-fuzz detectors` lists them (docs/detectors.md).
    #[arg(long, value_name = "LIST", value_parser = parse_detectors)]
    pub detectors: Option<DetectorSet>,
    /// Let runs start processes, open network connections and write files anywhere, as they
    /// would outside php-fuzz (refused by default; see docs/detectors.md, "Side effects").
    #[arg(long)]
    pub allow_side_effects: bool,
    /// The wall the operating system holds around the harness (Landlock, a network namespace,
    /// seccomp): `auto` builds every layer this machine allows and names any it lacks; `strict`
    /// refuses to start without all of them (docs/sandbox.md). --allow-side-effects turns it off.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = SandboxArg::Auto)]
    pub sandbox: SandboxArg,
    /// For a target named as a function or method (`'App\Parser::parse'`): the autoloader to
    /// load [default: the nearest vendor/autoload.php above the working folder].
    #[arg(long, value_name = "FILE")]
    pub autoload: Option<PathBuf>,
    /// For a target named as a function or method: an exception class (or interface) whose
    /// instances are normal results, besides \Exception and the callee's @throws (repeatable).
    #[arg(long = "allowed-exception", value_name = "CLASS")]
    pub allowed_exceptions: Vec<String>,
}

/// clap's check of `--detectors`: an unknown name is an error listing the known ones.
fn parse_detectors(list: &str) -> Result<DetectorSet, UnknownDetector> {
    DetectorSet::parse_list(list)
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxArg {
    Auto,
    Strict,
}

/// Turns the wall off, leaving the hooks alone: for php-fuzz's own tests,
/// which measure what the hooks stop without it (docs/sandbox.md).
pub const NO_WALL_ENV: &str = "PHP_FUZZ_NO_WALL";
/// Lets the hooks allow every side effect, leaving the wall alone: for the
/// tests that measure what the wall stops by itself (docs/sandbox.md).
pub const NO_HOOKS_ENV: &str = "PHP_FUZZ_NO_HOOKS";

fn env_switch(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

impl HarnessArgs {
    /// The wall's mode: off with --allow-side-effects or `PHP_FUZZ_NO_WALL=1`.
    pub fn sandbox_mode(&self) -> SandboxMode {
        let off = self.allow_side_effects && !env_switch(NO_HOOKS_ENV);
        match self.sandbox {
            _ if off || env_switch(NO_WALL_ENV) => SandboxMode::Off,
            SandboxArg::Auto => SandboxMode::Auto,
            SandboxArg::Strict => SandboxMode::Strict,
        }
    }
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StyleArg {
    Trace,
    EdgeMap,
}

/// `--coverage`, for the commands whose decisions follow coverage: fuzz,
/// merge, libfuzzer. Replays that report coverage (report-coverage,
/// run-single) always record every block.
#[derive(clap::Args, Debug, Clone)]
pub struct CoverageArgs {
    /// Which blocks the target records: every block (full), or without the blocks other blocks
    /// imply, such as the join after an if with an else (pruned: fewer records per run; see
    /// docs/instrumentation.md).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = DEFAULT_COVERAGE)]
    pub coverage: CoverageArg,
}

/// The campaigns' default: the mode that found the benchmark's bugs sooner
/// (docs/benchmarks.md, "Coverage modes": as many runs or fewer to each
/// planted bug; on the libraries as many crashes, coverage within two
/// blocks).
pub const DEFAULT_COVERAGE: CoverageArg = CoverageArg::Pruned;

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoverageArg {
    Full,
    Pruned,
}

impl CoverageArg {
    pub fn mode(self) -> Coverage {
        match self {
            CoverageArg::Full => Coverage::Full,
            CoverageArg::Pruned => Coverage::Pruned,
        }
    }
}

/// A number of seconds for an option: finite and above zero. Negative
/// numbers reach this parser (`allow_negative_numbers`), so `--timeout -1`
/// and `--timeout=-1` get the same message.
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(seconds),
        _ => Err(format!("must be a positive number of seconds, got `{s}`")),
    }
}

fn parse_ini(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("expected KEY=VALUE, got `{s}`")),
    }
}

/// A ready-to-run target: harness configuration plus the session's block map.
pub struct Session {
    pub config: Arc<HarnessConfig>,
    pub sources: Arc<SourceServer>,
    /// The PHPUnit fuzz test the target named, if it named one.
    pub fuzz_test: Option<FuzzTest>,
    /// The function or method the target named, if it named one.
    pub callee: Option<CalleeTarget>,
}

impl Session {
    /// No timeout was given: the seeds run with the adaptive timeout's
    /// upper bound, and the campaign sets its own once they ran.
    pub fn time_seeds_for_adaptive_timeout(&mut self) {
        Arc::make_mut(&mut self.config).timeout = php_fuzz_engine::ADAPTIVE_TIMEOUT_MAX;
    }

    /// Serve the `cmplog` rendering (same style, same coverage mode).
    pub fn log_comparisons(&mut self) {
        let sources = SourceServer::with_cmplog(self.sources.style())
            .with_coverage(self.sources.coverage())
            .with_hooks(self.sources.hooks());
        self.sources = Arc::new(sources);
    }
}

/// `--timeout` when neither the command line nor a fuzz test sets it.
pub const DEFAULT_TIMEOUT_SECS: f64 = 3.0;

impl HarnessArgs {
    /// `--autoload` and `--allowed-exception` as a reproduce command repeats them.
    fn callee_flags(&self) -> String {
        let mut flags = String::new();
        if let Some(autoload) = &self.autoload {
            let path = std::fs::canonicalize(autoload).unwrap_or_else(|_| autoload.clone());
            flags.push_str(" --autoload ");
            flags.push_str(&php_fuzz_engine::shell_quote(&path.display().to_string()));
        }
        for class in &self.allowed_exceptions {
            flags.push_str(" --allowed-exception ");
            flags.push_str(&php_fuzz_engine::shell_quote(class));
        }
        flags
    }

    pub fn timeout_secs(&self) -> f64 {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS)
    }

    /// A session that records every block.
    pub fn session(&self, target: &Path) -> anyhow::Result<Session> {
        self.session_with(target, Coverage::Full)
    }

    /// A session whose served files record the blocks `coverage` keeps.
    pub fn session_with(&self, target: &Path, coverage: Coverage) -> anyhow::Result<Session> {
        let callee = if crate::callee_target::is_callee(target) {
            let options = CalleeOptions {
                autoload: self.autoload.clone(),
                allowed_exceptions: self.allowed_exceptions.clone(),
            };
            Some(crate::callee_target::resolve(
                &target.to_string_lossy(),
                &options,
            )?)
        } else {
            if !self.allowed_exceptions.is_empty() {
                bail!(
                    "--allowed-exception is for a target named as a function or method; a target file calls $config->setAllowedExceptions()"
                );
            }
            None
        };
        let fuzz_test = match callee {
            Some(_) => None,
            None => crate::fuzz_test_target::resolve(target, &self.php, self.sandbox_mode())?,
        };
        let target = match (&fuzz_test, &callee) {
            (Some(test), _) => test.target_file.clone(),
            (None, Some(callee)) => callee.target_file.clone(),
            (None, None) => check_target(target)?,
        };
        if self.rss_limit_mb < 32 {
            bail!(
                "--rss-limit-mb must be at least 32, got {}",
                self.rss_limit_mb
            );
        }
        if let Some(mb) = self.malloc_limit_mb.filter(|&mb| mb < 32) {
            bail!("--malloc-limit-mb must be at least 32, got {mb}");
        }
        let php = PhpBinary::probe(&self.php)?;
        let runtime = Runtime::unpack()
            .context("cannot unpack the PHP runtime into a temporary directory")?;
        let mut config = HarnessConfig::new(php, Arc::new(runtime), target);
        config.ini = with_default_ini(&self.ini);
        let timeout = self
            .timeout
            .or(fuzz_test.as_ref().and_then(|t| t.timeout))
            .unwrap_or(DEFAULT_TIMEOUT_SECS);
        config.timeout = Duration::from_secs_f64(timeout);
        config.display_name = fuzz_test
            .as_ref()
            .map(|t| t.name.clone())
            .or_else(|| callee.as_ref().map(|c| c.name.clone()));
        if callee.is_some() {
            config.name_flags = self.callee_flags();
        }
        config.rss_limit_mb = self.rss_limit_mb;
        config.malloc_limit_mb = self.malloc_limit_mb.unwrap_or(0);
        config.forward_output = self.show_output;
        config.fork_server = !self.no_fork_server;
        config.detectors = self.detectors;
        config.allow_side_effects = self.allow_side_effects || env_switch(NO_HOOKS_ENV);
        config.wall = WallSettings::new(self.sandbox_mode());
        let style = match self.stub {
            StyleArg::Trace => StubStyle::Trace,
            StyleArg::EdgeMap => StubStyle::EdgeMap,
        };
        // Nothing to check and nothing to refuse: sinks stay as they are.
        let hooks = if config.allow_side_effects && config.detectors == Some(DetectorSet::NONE) {
            Hooks::LeaveOut
        } else {
            Hooks::Rewrite
        };
        Ok(Session {
            config: Arc::new(config),
            sources: Arc::new(
                SourceServer::new(style)
                    .with_coverage(coverage)
                    .with_hooks(hooks),
            ),
            fuzz_test,
            callee,
        })
    }
}

/// php.ini settings every harness starts with, before the user's `--ini`
/// (PHP takes the last `-d` of a key). Debian's php.ini compiles `assert()`
/// out (`zend.assertions=-1`), which only a startup setting can undo.
const DEFAULT_INI: [(&str, &str); 1] = [("zend.assertions", "1")];

/// The defaults, then `user`'s settings, which override them.
pub fn with_default_ini(user: &[(String, String)]) -> Vec<(String, String)> {
    DEFAULT_INI
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain(user.iter().cloned())
        .collect()
}

fn check_target(target: &Path) -> anyhow::Result<PathBuf> {
    let meta = std::fs::metadata(target).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => {
            anyhow::anyhow!("target file not found: {}", target.display())
        }
        _ => anyhow::anyhow!("cannot read target file {}: {err}", target.display()),
    })?;
    if !meta.is_file() {
        bail!(
            "target must be a PHP file, but {} is a directory",
            target.display()
        );
    }
    std::fs::File::open(target)
        .with_context(|| format!("cannot read target file {}", target.display()))?;
    std::fs::canonicalize(target).with_context(|| format!("cannot resolve {}", target.display()))
}
