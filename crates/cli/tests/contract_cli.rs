//! The ClusterFuzzLite contract (docs/ci.md, design/clusterfuzz-contract.md):
//! a composer project set up with `php-fuzz init`, bundled by the example
//! .clusterfuzzlite/ files (docs/ci/clusterfuzzlite/) into an $OUT that is
//! then moved, and run with the exact command lines ClusterFuzzLite and
//! OSS-Fuzz use. The output is checked with ClusterFuzz's own regular
//! expressions, copied below from its sources with the file they are in.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{composer_project, php_fuzz, repo};
use regex::Regex;

// From google/clusterfuzz, src/clusterfuzz/_internal/bot/fuzzers/libfuzzer.py:
const CRASH_TESTCASE_REGEX: &str = r".*Test unit written to\s*(.*(crash|oom|timeout|leak)-.*)";
const STATS_REGEX: &str = r"stat::([A-Za-z_]+):\s*([^\s]+)";

// From google/clusterfuzz, src/clusterfuzz/_internal/bot/fuzzers/libFuzzer/stats.py:
const LIBFUZZER_CRASH_TESTCASE_REGEX: &str = r".*Test unit written to.*crash";
const LIBFUZZER_LOG_END_REGEX: &str = r"Done\s+\d+\s+runs.*";
const LIBFUZZER_LOG_LINE_REGEX: &str =
    r"^#\d+[\s]*(READ|INITED|NEW|pulse|REDUCE|RELOAD|DONE|:)\s.*";
const LIBFUZZER_LOG_SEED_CORPUS_INFO_REGEX: &str =
    r"INFO:\s+seed corpus:\s+files:\s+(\d+).*rss:\s+(\d+)Mb.*";
const LIBFUZZER_LOG_START_INITED_REGEX: &str =
    r"(#\d+\s+INITED\s+|INFO:\s+-fork=\d+:\s+fuzzing in separate process).*";
const LIBFUZZER_MERGE_LOG_STATS_REGEX: &str = r"MERGE-OUTER:\s+\d+\s+new files with\s+(\d+)\s+new features added;\s+(\d+)\s+new coverage edges.*";
const LIBFUZZER_LOG_MAX_LEN_REGEX: &str =
    r".*-max_len is not provided; libFuzzer will not generate inputs larger than (\d+) bytes.*";

// From google/clusterfuzz, src/clusterfuzz/stacktraces/constants.py:
const LIBFUZZER_DEADLY_SIGNAL_REGEX: &str = r".*ERROR:\s*libFuzzer:\s*deadly signal";
const SAN_STACK_FRAME_REGEX: &str = concat!(
    r"\s*#(?P<frame_id>\d+)\s+",
    r"([xX0-9a-fA-F]+)\s+",
    r"((in\s*(((.*)\+([xX0-9a-fA-F]+))|(.*)) ",
    r"(",
    r"(([^ ]+):(\d+):(\d+))|(([^ ]+):(\d+))",
    r"|",
    r"(\(([^+]+)(\+([xX0-9a-fA-F]+))?\)))",
    r")",
    r"|",
    r"(in\s*(((.*)\+([xX0-9a-fA-F]+))|(.*)))",
    r"|",
    r"(\((((.*)\+([xX0-9a-fA-F]+))|(.*))\))",
    r")"
);
/// SAN_STACK_FRAME_SPEC in the same file: the groups holding the function
/// name, the file name and the line, first match wins.
const FUNCTION_GROUPS: [usize; 3] = [7, 5, 23];
const FILE_GROUPS: [usize; 2] = [12, 16];
const LINE_GROUPS: [usize; 2] = [13, 17];
/// MAX_CRASH_STATE_FRAMES in the same file.
const MAX_CRASH_STATE_FRAMES: usize = 3;

// From google/clusterfuzz, src/clusterfuzz/_internal/bot/fuzzers/libFuzzer/constants.py:
const NONCRASH_RETURN_CODES: [i32; 2] = [0, 72];

// From google/oss-fuzz, infra/base-images/base-runner/bad_build_check:
const BAD_BUILD_NO_INPUTS: &str =
    "ERROR: no interesting inputs were found. Is the code instrumented";

/// Python's `re.match`: anchored at the start of the line.
fn re_match(pattern: &str) -> Regex {
    Regex::new(&format!("^(?:{pattern})")).unwrap()
}

fn lines(output: &Output) -> Vec<String> {
    // ClusterFuzz reads stdout and stderr merged.
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text.lines().map(str::to_string).collect()
}

fn show(output: &Output) -> String {
    format!("--- exit {:?}\n{}", output.status, lines(output).join("\n"))
}

/// What ClusterFuzz's stack analyzer makes of the first stack: the frames'
/// (function, file, line), in order.
fn stack_frames(lines: &[String]) -> Vec<(String, String, String)> {
    let frame = re_match(SAN_STACK_FRAME_REGEX);
    let group = |c: &regex::Captures<'_>, groups: &[usize]| {
        groups
            .iter()
            .find_map(|&g| c.get(g).map(|m| m.as_str().to_string()))
            .unwrap_or_default()
    };
    lines
        .iter()
        .filter_map(|line| frame.captures(line))
        .map(|c| {
            (
                group(&c, &FUNCTION_GROUPS),
                group(&c, &FILE_GROUPS),
                group(&c, &LINE_GROUPS),
            )
        })
        .collect()
}

/// A ClusterFuzzLite build of the fixture project, moved after building.
struct Build {
    _dir: tempfile::TempDir,
    out: PathBuf,
    work: PathBuf,
}

fn build() -> Build {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("src/project");
    composer_project(&project);
    for (name, call) in [
        ("json_lite", "Acme\\JsonLite\\Decoder->decode"),
        ("validate", "Acme\\JsonLite\\Decoder::isValid"),
    ] {
        let run = php_fuzz(&["init", "--name", name, "--call", call], &project);
        assert_eq!(run.code(), 0, "{}", run.all());
    }
    std::fs::write(project.join("fuzz/json_lite/corpus/seed"), "12").unwrap();

    let examples = repo().join("docs/ci/clusterfuzzlite");
    let runtime = dir.path().join("php-fuzz-runtime");
    let bundled = Command::new("bash")
        .arg(examples.join("bundle-runtime.sh"))
        .arg(&runtime)
        .env("PHP_FUZZ_BIN", env!("CARGO_BIN_EXE_php-fuzz"))
        .output()
        .unwrap();
    assert!(bundled.status.success(), "{}", show(&bundled));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let built = Command::new("bash")
        .arg(examples.join("build.sh"))
        .current_dir(&project)
        .env("OUT", &out)
        .env("SRC", dir.path().join("src"))
        .env("PHP_FUZZ_RUNTIME", &runtime)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", show(&built));
    // The runner may put $OUT anywhere: everything must follow.
    let moved = dir.path().join("moved-out");
    std::fs::rename(&out, &moved).unwrap();
    std::fs::remove_dir_all(&runtime).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    Build {
        _dir: dir,
        out: moved,
        work,
    }
}

impl Build {
    /// Runs `$OUT/name` with `args` as the runner does: from $OUT, stdin /dev/null.
    fn run(&self, name: &str, args: &[String]) -> Output {
        Command::new(self.out.join(name))
            .args(args)
            .current_dir(&self.out)
            .stdin(std::process::Stdio::null())
            .env_remove("CI")
            .output()
            .unwrap()
    }

    fn dir(&self, name: &str) -> String {
        let path = self.work.join(name);
        std::fs::create_dir_all(&path).unwrap();
        path.display().to_string()
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    files
}

/// Every file under `dir` that holds `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in walk(dir) {
        let data = std::fs::read(&entry).unwrap();
        if memchr::memmem::find(&data, needle).is_some() {
            found.push(entry);
        }
    }
    found
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            files.extend(walk(&entry.path()));
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
    files
}

#[test]
fn clusterfuzzlite_drives_the_wrapper_like_a_libfuzzer_binary() {
    let b = build();
    let marker = ["LLVMFuzzer", "TestOneInput"].concat();

    // Packaging: one executable per target holding the marker, nothing else does.
    let mut targets = files_containing(&b.out, marker.as_bytes());
    targets.sort();
    assert_eq!(
        targets,
        vec![
            b.out.join("json_lite_fuzzer"),
            b.out.join("validate_fuzzer")
        ],
        "only the wrappers may look like fuzz targets"
    );
    assert!(b.out.join("json_lite_fuzzer.dict").is_file());
    assert!(b.out.join("json_lite_fuzzer_seed_corpus.zip").is_file());

    // Fuzzing, as ClusterFuzzLite runs it (clusterfuzz's LibFuzzerCommon.fuzz
    // after engine.prepare): the crash is found and reported.
    let corpus = b.dir("corpus/json_lite");
    let artifacts = b.dir("artifacts");
    let unzip = Command::new("unzip")
        .args([
            "-q",
            "-o",
            "json_lite_fuzzer_seed_corpus.zip",
            "-d",
            &corpus,
        ])
        .current_dir(&b.out)
        .output()
        .unwrap();
    assert!(unzip.status.success(), "{}", show(&unzip));
    let dict = b.out.join("json_lite_fuzzer.dict").display().to_string();
    let fuzz = b.run(
        "json_lite_fuzzer",
        &[
            "-timeout=25".into(),
            "-rss_limit_mb=2560".into(),
            format!("-dict={dict}"),
            "-len_control=0".into(),
            "-seed=1337".into(),
            format!("-artifact_prefix={artifacts}/"),
            "-max_total_time=120".into(),
            "-print_final_stats=1".into(),
            corpus.clone(),
        ],
    );
    let log = lines(&fuzz);
    let code = fuzz.status.code().unwrap();
    assert!(!NONCRASH_RETURN_CODES.contains(&code), "{}", show(&fuzz));
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_LOG_START_INITED_REGEX).is_match(l)),
        "no INITED line: a startup crash to ClusterFuzz\n{}",
        show(&fuzz)
    );
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_LOG_LINE_REGEX).is_match(l))
    );
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_LOG_SEED_CORPUS_INFO_REGEX).is_match(l)),
        "{}",
        show(&fuzz)
    );
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_LOG_MAX_LEN_REGEX).is_match(l))
    );
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_CRASH_TESTCASE_REGEX).is_match(l))
    );
    let testcase = log
        .iter()
        .find_map(|l| {
            re_match(CRASH_TESTCASE_REGEX)
                .captures(l)
                .map(|c| PathBuf::from(&c[1]))
        })
        .unwrap_or_else(|| panic!("no testcase path\n{}", show(&fuzz)));
    assert!(testcase.starts_with(&artifacts), "{}", testcase.display());
    assert!(
        testcase
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("crash-")
    );
    assert_eq!(std::fs::read(&testcase).unwrap()[..2], *b"{}");
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_DEADLY_SIGNAL_REGEX).is_match(l))
    );
    let frames = stack_frames(&log);
    let state: Vec<&str> = frames
        .iter()
        .take(MAX_CRASH_STATE_FRAMES)
        .map(|f| f.0.as_str())
        .collect();
    assert_eq!(
        state,
        [
            "Acme\\JsonLite\\Decoder::object",
            "Acme\\JsonLite\\Decoder::decode",
            "{closure}",
        ],
        "the crash state ClusterFuzz would file\n{}",
        show(&fuzz)
    );
    let top = &frames[0];
    assert!(
        top.1.ends_with("/project/src/Decoder.php") && top.1.starts_with(&*b.out.to_string_lossy()),
        "an absolute path inside the moved $OUT: {top:?}"
    );
    assert!(top.2.parse::<u32>().unwrap() > 0);
    check_stats(&log, &fuzz);
    let new_entries = files_in(Path::new(&corpus));
    assert!(
        new_entries.iter().any(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit())
        }),
        "new inputs go to the corpus as <sha1>"
    );

    // Reproducing, as clusterfuzz's engine.reproduce runs it.
    let repro = b.run(
        "json_lite_fuzzer",
        &strings(&[
            "-timeout=20",
            "-rss_limit_mb=2560",
            "-runs=100",
            testcase.to_str().unwrap(),
        ]),
    );
    let log = lines(&repro);
    assert!(
        !NONCRASH_RETURN_CODES.contains(&repro.status.code().unwrap()),
        "{}",
        show(&repro)
    );
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_DEADLY_SIGNAL_REGEX).is_match(l))
    );
    assert_eq!(stack_frames(&log)[..3], frames[..3], "the same crash state");
    assert!(!log.iter().any(|l| l.contains("Test unit written")));

    // Minimizing, as clusterfuzz's LibFuzzerCommon.minimize_crash runs it.
    let minimized = b.work.join("minimized");
    let min = b.run(
        "json_lite_fuzzer",
        &[
            "-timeout=25".into(),
            "-rss_limit_mb=2560".into(),
            "-max_total_time=30".into(),
            format!("-exact_artifact_path={}", minimized.display()),
            "-minimize_crash=1".into(),
            testcase.display().to_string(),
        ],
    );
    assert!(min.status.success(), "{}", show(&min));
    assert_eq!(std::fs::read(&minimized).unwrap(), b"{}");

    // Pruning, as ClusterFuzzLite's prune runs clusterfuzz's minimize_corpus:
    // the stored corpus merged into an empty directory.
    let pruned = b.dir("pruned");
    let mcf = b.work.join("mcf_tmp_dir/MCF");
    std::fs::create_dir_all(mcf.parent().unwrap()).unwrap();
    std::fs::copy(&testcase, Path::new(&corpus).join("crashing-input")).unwrap();
    let merge = b.run(
        "json_lite_fuzzer",
        &[
            "-timeout=25".into(),
            "-rss_limit_mb=2560".into(),
            "-merge=1".into(),
            format!("-artifact_prefix={artifacts}/"),
            format!("-merge_control_file={}", mcf.display()),
            pruned.clone(),
            corpus.clone(),
        ],
    );
    assert_eq!(merge.status.code(), Some(0), "{}", show(&merge));
    let stats = lines(&merge)
        .iter()
        .rev()
        .find_map(|l| {
            re_match(LIBFUZZER_MERGE_LOG_STATS_REGEX)
                .captures(l)
                .map(|c| (c[1].parse::<u64>().unwrap(), c[2].parse::<u64>().unwrap()))
        })
        .unwrap_or_else(|| panic!("no MERGE-OUTER stats\n{}", show(&merge)));
    assert!(stats.0 > 0 && stats.1 > 0, "{stats:?}");
    let kept = files_in(Path::new(&pruned));
    assert!(!kept.is_empty() && kept.len() < new_entries.len() + 2);
}

#[test]
fn a_campaign_without_crashes_ends_with_done_and_stats() {
    let b = build();
    let corpus = b.dir("corpus/validate");
    let fuzz = b.run(
        "validate_fuzzer",
        &[
            "-timeout=25".into(),
            "-rss_limit_mb=2560".into(),
            "-len_control=0".into(),
            "-seed=1337".into(),
            format!("-artifact_prefix={}/", b.dir("artifacts")),
            "-max_total_time=3".into(),
            "-print_final_stats=1".into(),
            corpus,
        ],
    );
    assert_eq!(fuzz.status.code(), Some(0), "{}", show(&fuzz));
    let log = lines(&fuzz);
    assert!(
        log.iter()
            .any(|l| re_match(LIBFUZZER_LOG_END_REGEX).is_match(l))
    );
    check_stats(&log, &fuzz);
    assert!(
        !log.iter()
            .any(|l| re_match(CRASH_TESTCASE_REGEX).is_match(l))
    );

    // OSS-Fuzz's bad-build and startup checks (bad_build_check), also with
    // the runner's `--` and seed corpus check's -runs=0.
    for args in [
        strings(&["-seed=1337", "-runs=4"]),
        strings(&["--", "-seed=1337", "-runs=4"]),
        strings(&["-rss_limit_mb=2560", "-timeout=25", "-seed=1337", "-runs=4"]),
    ] {
        let run = b.run("json_lite_fuzzer", &args);
        assert_eq!(run.status.code(), Some(0), "{}", show(&run));
        let text = lines(&run).join("\n");
        assert!(text.contains("Done 4 runs"), "{text}");
        assert!(!text.contains(BAD_BUILD_NO_INPUTS));
    }
    let seeds = b.dir("seed_corpus");
    std::fs::write(Path::new(&seeds).join("s"), "12").unwrap();
    let run = b.run(
        "json_lite_fuzzer",
        &strings(&["-rss_limit_mb=2560", "-timeout=25", "-runs=0", &seeds]),
    );
    assert_eq!(run.status.code(), Some(0), "{}", show(&run));
}

#[test]
fn clusterfuzz_s_own_engine_reads_edge_coverage_and_the_total_of_edges() {
    let Some(python) = common::python_with("clusterfuzz") else {
        return;
    };
    let b = build();
    let corpus = b.dir("corpus/validate");
    std::fs::write(Path::new(&corpus).join("seed"), "12").unwrap();
    let driver = repo().join("crates/cli/tests/contract/clusterfuzz_fuzz.py");
    let task = Command::new(python)
        .arg(driver)
        .arg(b.out.join("validate_fuzzer"))
        .args([corpus, b.dir("artifacts"), "10".into()])
        .current_dir(&b.work)
        .stdin(std::process::Stdio::null())
        .env_remove("CI")
        .output()
        .unwrap();
    assert!(task.status.success(), "{}", show(&task));
    let stdout = String::from_utf8_lossy(&task.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let stats: serde_json::Value =
        serde_json::from_str(last).unwrap_or_else(|err| panic!("{err}: no stats\n{}", show(&task)));
    let stat = |name: &str| {
        stats[name]
            .as_u64()
            .unwrap_or_else(|| panic!("no {name} in {stats}"))
    };
    eprintln!(
        "ClusterFuzz's stats: edge_coverage {}, edges_total {}",
        stat("edge_coverage"),
        stat("edges_total")
    );
    assert!(stat("edge_coverage") > 0, "{stats}");
    assert!(stat("edges_total") >= stat("edge_coverage"), "{stats}");
    assert_eq!(stat("startup_crash_count"), 0, "{stats}");
}

/// `-print_final_stats=1`: the five stats, integers as ClusterFuzz wants.
fn check_stats(log: &[String], output: &Output) {
    let stats = re_match(STATS_REGEX);
    let found: Vec<(String, String)> = log
        .iter()
        .filter_map(|l| {
            stats
                .captures(l)
                .map(|c| (c[1].to_string(), c[2].to_string()))
        })
        .collect();
    for name in [
        "number_of_executed_units",
        "average_exec_per_sec",
        "new_units_added",
        "slowest_unit_time_sec",
        "peak_rss_mb",
    ] {
        let value = found
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no stat::{name}\n{}", show(output)));
        assert!(value.bytes().all(|b| b.is_ascii_digit()), "{name}: {value}");
    }
}

#[test]
fn the_php_fuzz_binary_is_not_taken_for_a_fuzz_target() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_php-fuzz")).unwrap();
    let marker = ["LLVMFuzzer", "TestOneInput"].concat();
    assert!(memchr::memmem::find(&binary, marker.as_bytes()).is_none());
}

#[test]
fn the_example_files_parse_and_build_sh_uses_the_wrapper_command() {
    let docs = repo().join("docs/ci");
    let build = std::fs::read_to_string(docs.join("clusterfuzzlite/build.sh")).unwrap();
    assert!(build.contains("libfuzzer-wrapper \"$target\" --out \"$OUT/${name}_fuzzer\""));
    let project = std::fs::read_to_string(docs.join("clusterfuzzlite/project.yaml")).unwrap();
    assert!(project.lines().any(|l| l.trim() == "language: c++"));
    for workflow in ["cflite_pr.yml", "cflite_batch.yml", "cflite_cron.yml"] {
        let text = std::fs::read_to_string(docs.join("github").join(workflow)).unwrap();
        assert!(text.contains("bad-build-check: false"), "{workflow}");
        assert!(text.contains("language: c++"), "{workflow}");
    }
    common::assert_yaml_parses(&[
        &docs.join("clusterfuzzlite/project.yaml"),
        &docs.join("github/cflite_pr.yml"),
        &docs.join("github/cflite_batch.yml"),
        &docs.join("github/cflite_cron.yml"),
        &docs.join("github/php-fuzz.yml"),
    ]);
}
