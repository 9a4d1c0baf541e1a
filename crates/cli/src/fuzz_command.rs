use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use php_fuzz_engine::{
    EntropicOptions, FuzzOptions, FuzzSummary, GrammarChoice, MutationSchedule, Output, fuzz,
    summary_line,
};
use php_fuzz_storage::default_stats_path;

use crate::exit_codes;
use crate::harness_args::{CoverageArgs, HarnessArgs, positive_seconds};

/// Arguments of `php-fuzz fuzz`.
#[derive(clap::Args, Debug)]
pub struct FuzzArgs {
    /// The target: a target file (php-fuzzer format: calls $config->setTarget()), a PHPUnit fuzz
    /// test (FILE.php[::method]), or a function or method to call with typed arguments
    /// ('App\Parser::parse', docs/autofuzz.md).
    pub target: PathBuf,
    /// Corpus directory: read recursively, created if missing, new entries written here.
    /// A temporary directory is used (and printed) when omitted.
    pub corpus: Option<PathBuf>,
    #[command(flatten)]
    pub harness: HarnessArgs,
    #[command(flatten)]
    pub coverage: CoverageArgs,
    /// Longest input to try [default: setMaxLen(), else the larger of 1024 and the largest seed].
    #[arg(long, value_name = "BYTES")]
    pub max_len: Option<usize>,
    /// Grow the length limit after this many runs × log(limit) without new coverage; 0 disables.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub len_control_factor: u32,
    /// Random seed; the same seed replays the same campaign on a deterministic target with one job [default: from the clock, printed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stop after this many runs.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_runs: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = positive_seconds)]
    pub max_time: Option<f64>,
    /// Stop after this many distinct new crashes.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_crashes: Option<usize>,
    /// Harness processes fuzzing in parallel, sharing one corpus.
    #[arg(
        short = 'j',
        long,
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub jobs: usize,
    /// Dictionary file in AFL/libFuzzer format (repeatable).
    #[arg(long = "dict", value_name = "FILE")]
    pub dictionaries: Vec<PathBuf>,
    /// Where crash-, timeout- and oom- files are written [default: ., or php-fuzz's cache for a
    /// fuzz test, whose findings' inputs also go to its fuzz/<Class>/<method>/ folder].
    #[arg(long, value_name = "DIR")]
    pub artifact_dir: Option<PathBuf>,
    /// Every SECONDS, import entries other php-fuzz processes wrote to the corpus directory.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = positive_seconds)]
    pub reload: Option<f64>,
    /// Also mutate inputs as trees of this grammar (`php-fuzz grammars` lists them);
    /// overrides the target's $config->setGrammar(). `auto`: setGrammar(), else the
    /// grammar at least 80 % of the seed bytes parse in; `none`: no grammar, even over
    /// setGrammar() [default: setGrammar(), else none].
    #[arg(long, value_name = "NAME|auto|none", value_parser = crate::grammars_command::parse_grammar_name)]
    pub grammar: Option<GrammarChoice>,
    /// Files, or directories read recursively, whose subtrees grammar mutation may
    /// insert (e.g. a project's test fixtures); not run themselves (repeatable).
    #[arg(long, value_name = "DIR")]
    pub fragments: Vec<PathBuf>,
    /// With the php grammar: add dataflow fusion to the grammar mutations (after FlowFusion:
    /// another corpus program's statements, renamed apart, read a variable this one defines).
    /// Off by default until the evaluation shows it pays (docs/grammar.md).
    #[arg(long, overrides_with = "no_fusion")]
    pub fusion: bool,
    /// Keep dataflow fusion off (the default).
    #[arg(long, overrides_with = "fusion")]
    pub no_fusion: bool,
    /// Leave the grammar's built-in lexicon (one example of each escape, number form and
    /// rare token, `php-fuzz grammars --lexicon NAME`) out of the fragment pool.
    #[arg(long)]
    pub no_lexicon: bool,
    /// With a grammar and the uniform schedule: how many mutants are grammar mutants.
    /// `work:F`: as many as make the share F of the target's work, counted in executed
    /// blocks; `mutants:F`: the share F of the mutants (docs/grammar.md).
    #[arg(long, value_name = "work:F|mutants:F", default_value = "work:0.25")]
    pub grammar_share: php_fuzz_engine::GrammarShare,
    /// Turn comparison feedback off: the dictionary taken from the target's
    /// source, the comparison tracer (CMP and I2S mutations) and the
    /// persistent auto-dictionary.
    #[arg(long)]
    pub no_cmp: bool,
    /// Make the closeness of compared operands a feature, as libFuzzer's
    /// -use_value_profile=1: finds more, costs throughput (the harness runs
    /// the comparison-logging code).
    #[arg(long, conflicts_with = "no_cmp")]
    pub use_value_profile: bool,
    /// Pick corpus entries by the Entropic power schedule (libFuzzer's, FSE 2020): favour entries
    /// whose mutants find rare features. Off by default: in the evaluation it was significantly
    /// better on one real target of four, and the default needs two (docs/evaluate.md).
    #[arg(long, overrides_with = "no_entropic")]
    pub entropic: bool,
    /// Keep the plain schedule (the default).
    #[arg(long, overrides_with = "entropic")]
    pub no_entropic: bool,
    /// With --entropic: keep at least this many rarest features.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub entropic_number_of_rarest_features: usize,
    /// With --entropic: features hit fewer times than this are always rare.
    #[arg(long, value_name = "N", default_value_t = 255)]
    pub entropic_feature_frequency_threshold: u16,
    /// With --entropic: an entry slower than the average run gets less energy, a faster one
    /// more (AFL's performance score). The weights then depend on timing, so --seed no longer
    /// replays a campaign exactly.
    #[arg(long)]
    pub entropic_scale_per_exec_time: bool,
    /// Weigh corpus entries by their run time under the plain schedule too (AFL's performance
    /// score: a tenth of the weight for an entry ten times slower than the average, three times
    /// for one four times faster). Off until an evaluation shows it pays (docs/scheduling.md).
    /// The weights then depend on timing, so --seed no longer replays a campaign exactly.
    #[arg(long)]
    pub scale_per_exec_time: bool,
    /// Append the campaign's statistics (JSON lines every 5 s: runs, exec/s, cov, ft,
    /// corpus, crashes, rss) to FILE [default: CORPUS/.php-fuzz/stats.jsonl, none without
    /// a corpus directory]; report-coverage plots them.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Print only crashes and the final summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// How mutations are drawn: uniformly, as libFuzzer does, or by a schedule that learns which
    /// mutations pay on this target, new features per unit of execution cost (see
    /// docs/scheduling.md).
    #[arg(long, value_enum, value_name = "SCHEDULE", default_value_t = ScheduleArg::Uniform)]
    pub mutation_schedule: ScheduleArg,
    /// At the end, write the artifact directory's findings as SARIF 2.1.0 for GitHub code
    /// scanning (as `php-fuzz report-sarif` does; see docs/sarif.md).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

/// `--mutation-schedule`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleArg {
    Uniform,
    Learned,
}

pub fn run(args: &FuzzArgs) -> anyhow::Result<ExitCode> {
    // First, so that SIGXFSZ (a write past `ulimit -f`) is an error anywhere.
    let interrupted = crate::interrupt::install()?;
    let mut session = args
        .harness
        .session_with(&args.target, args.coverage.coverage.mode())?;
    if args.use_value_profile {
        session.log_comparisons();
    }
    if args.jobs == 0 {
        anyhow::bail!("--jobs must be at least 1");
    }
    for dict in &args.dictionaries {
        std::fs::metadata(dict)
            .with_context(|| format!("cannot read dictionary {}", dict.display()))?;
    }
    let out = Arc::new(Output::new(args.quiet));
    let fuzz_test = session.fuzz_test.take();
    let callee = session.callee.take();
    let corpus = args
        .corpus
        .clone()
        .or_else(|| fuzz_test.as_ref().map(|t| t.corpus()))
        .or_else(|| callee.as_ref().map(|c| c.corpus()));
    if let Some(callee) = &callee {
        out.line(&format!(
            "INFO: fuzzing {} with typed arguments (docs/autofuzz.md): target file {}, corpus in {}",
            callee.name,
            callee.target_file.display(),
            corpus.as_deref().unwrap_or(&callee.corpus()).display()
        ));
    }
    if let Some(test) = &fuzz_test {
        out.line(&format!(
            "INFO: fuzzing {}: seeds and findings in {}, corpus in {}",
            test.name,
            test.folder.display(),
            test.corpus().display()
        ));
    }
    let seed = args.seed.unwrap_or_else(|| rand::random::<u32>() as u64);
    let options = FuzzOptions {
        max_len: args.max_len,
        len_control_factor: args.len_control_factor,
        seed,
        max_runs: args.max_runs,
        max_time: args.max_time.map(Duration::from_secs_f64),
        max_crashes: args.max_crashes,
        jobs: args.jobs,
        dictionaries: args.dictionaries.clone(),
        artifact_dir: args
            .artifact_dir
            .clone()
            .or_else(|| fuzz_test.as_ref().map(|t| t.artifacts()))
            .unwrap_or_else(|| PathBuf::from(".")),
        seed_dirs: fuzz_test
            .as_ref()
            .map(|t| t.folder.clone())
            .into_iter()
            .chain(fuzz_test.as_ref().and_then(|t| t.provided_seeds.clone()))
            .filter(|folder| folder.is_dir())
            .collect(),
        findings_dir: fuzz_test.as_ref().map(|t| t.folder.clone()),
        reload: args.reload.map(Duration::from_secs_f64),
        grammar: args.grammar.clone(),
        fragments: args.fragments.clone(),
        fusion: args.fusion,
        lexicon: !args.no_lexicon,
        grammar_share: args.grammar_share,
        cmp: !args.no_cmp,
        use_value_profile: args.use_value_profile,
        entropic: args.entropic.then_some(EntropicOptions {
            number_of_rarest_features: args.entropic_number_of_rarest_features,
            feature_frequency_threshold: args.entropic_feature_frequency_threshold,
            scale_per_exec_time: args.entropic_scale_per_exec_time || args.scale_per_exec_time,
        }),
        scale_per_exec_time: args.scale_per_exec_time,
        stats: args
            .stats
            .clone()
            .or_else(|| corpus.as_deref().map(default_stats_path)),
        adaptive_timeout: args.harness.timeout.is_none()
            && fuzz_test.as_ref().is_none_or(|t| t.timeout.is_none()),
        mutation_schedule: match args.mutation_schedule {
            ScheduleArg::Uniform => MutationSchedule::Uniform,
            ScheduleArg::Learned => MutationSchedule::Learned,
        },
        ..FuzzOptions::default()
    };
    if options.adaptive_timeout {
        session.time_seeds_for_adaptive_timeout();
    }
    let artifact_dir = options.artifact_dir.clone();
    let summary = fuzz(
        session.config,
        session.sources,
        corpus.as_deref(),
        options,
        interrupted,
        Arc::clone(&out),
    )?;
    print_summary(&out, &summary);
    if let Some(sarif) = &args.sarif {
        write_sarif_log(&out, &artifact_dir, sarif)?;
    }
    Ok(exit_codes::for_findings(
        summary.crashes.iter().map(|c| c.kind),
    ))
}

/// `--sarif FILE`: the findings of the artifact directory, this campaign's
/// and earlier ones', as a SARIF log with paths relative to the working
/// directory.
fn write_sarif_log(out: &Output, artifact_dir: &Path, sarif: &Path) -> anyhow::Result<()> {
    let root = std::env::current_dir().context("cannot read the working directory")?;
    let summary = php_fuzz_report::write_sarif(artifact_dir, sarif, &root)?;
    for skipped in &summary.skipped {
        out.line(&format!("WARNING: {skipped}"));
    }
    out.status(&format!(
        "INFO: SARIF log of {} findings written to {}",
        summary.results,
        sarif.display()
    ));
    Ok(())
}

fn print_summary(out: &Output, s: &FuzzSummary) {
    let secs = s.elapsed.as_secs_f64();
    out.line(&format!(
        "==== Done ({}): {} runs in {:.1} s ({:.0} exec/s); cov: {} ft: {}; corpus: {} entries, {} bytes in {}",
        s.stop_reason.describe(),
        s.runs,
        secs,
        s.runs as f64 / secs.max(1e-3),
        s.edges,
        s.features,
        s.corpus_entries,
        s.corpus_bytes,
        s.corpus_dir.display()
    ));
    out.line(&format!(
        "     harness started {} times ({} restarts for memory growth, {} forked by the fork server); peak RSS: engine {} MB, harness {} MB; seed {}",
        s.harness_starts, s.memory_restarts, s.harness_forks, s.engine_peak_rss_mb, s.harness_peak_rss_mb, s.seed
    ));
    if s.known_hang_stops > 0 {
        out.line(&format!(
            "     {} runs stopped early, stuck where a known hang was (docs/hardening.md, \"Known hangs\")",
            s.known_hang_stops
        ));
    }
    if let Some(cmp) = &s.cmp {
        out.line(&format!(
            "     comparison feedback: {} inputs traced, {} I2S candidates; dictionaries: {} words from the source, {} in the auto-dictionary",
            cmp.traced, cmp.candidates, cmp.source_words, cmp.auto_words
        ));
    }
    if let Some(rejected) = s.rejected_calls {
        out.line(&format!(
            "     typed arguments: {} calls, {rejected} rejected by the callee's types{}",
            s.runs,
            if rejected > 0 {
                " (php-fuzz built arguments PHP refused at the call: please report it)"
            } else {
                ""
            }
        ));
    }
    if s.crashes.is_empty() {
        out.line("==== No crashes found.");
        return;
    }
    out.line(&format!(
        "==== {} distinct crashes ({} new this run):",
        s.crashes.len(),
        s.new_crashes
    ));
    for crash in &s.crashes {
        out.line(&summary_line(crash));
    }
}
