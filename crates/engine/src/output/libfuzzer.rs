//! libFuzzer's words (`php-fuzz libfuzzer`): the opening lines, status
//! lines, crash reports with PHP frames in the sanitizer frame form
//! ClusterFuzz parses. Pure text: [`Output`](super::Output) writes a
//! campaign's, and the front end its own (a file run again).

use std::fmt::Write as _;
use std::path::Path;

use php_fuzz_harness::{Crash, CrashKind, Frame, MALLOC_LIMIT, requested_bytes};

use super::{CampaignEvent, NewCrash, Opening, StatusLine};
use crate::signature::signature_frames;

/// How the front end set libFuzzer's voice up.
#[derive(Debug, Clone)]
pub struct LibFuzzerVoice {
    pub artifact_prefix: String,
    pub rss_limit_mb: u64,
    /// `-max_len` was given (else libFuzzer says what it picked).
    pub max_len_given: bool,
    /// `-verbosity=0`: no status lines.
    pub quiet: bool,
}

impl LibFuzzerVoice {
    /// What `event` says in libFuzzer's words.
    pub(super) fn campaign(&self, event: CampaignEvent<'_>) -> Option<String> {
        match event {
            CampaignEvent::Opening(opening) => Some(self.opening(opening)),
            CampaignEvent::NewCrash(new) => self.new_crash(new),
            _ if self.quiet => None,
            CampaignEvent::Status(status) => Some(status_line(status)),
            // libFuzzer has no adaptive timeout: php-fuzz's words.
            CampaignEvent::TimeoutAdapted(adapted) => Some(super::words::timeout_line(adapted)),
        }
    }

    fn opening(&self, o: &Opening<'_>) -> String {
        let mut lines = vec![format!("INFO: Seed: {}", o.seed)];
        if !self.max_len_given {
            lines.push(format!(
                "INFO: -max_len is not provided; libFuzzer will not generate inputs larger than {} bytes",
                o.max_len
            ));
        }
        lines.push(if o.seed_files == 0 {
            "INFO: A corpus is not provided, starting from an empty corpus".to_string()
        } else {
            format!(
                "INFO: seed corpus: files: {} min: {}b max: {}b total: {}b rss: {}Mb",
                o.seed_files, o.smallest_seed, o.largest_seed, o.seed_bytes, o.engine_rss_mb
            )
        });
        lines.join("\n")
    }

    /// The first crash's report; libFuzzer stops there, so there is no other.
    fn new_crash(&self, new: &NewCrash<'_>) -> Option<String> {
        if new.number != 1 {
            return None;
        }
        let context = ReportContext {
            pid: std::process::id(),
            artifact: Some((&self.artifact_prefix, &new.saved.artifact)),
            timeout_secs: new.timeout.as_secs_f64().ceil() as u64,
            rss_limit_mb: self.rss_limit_mb,
        };
        Some(crash_report(new.crash, &context))
    }
}

/// `#N\tNEW    cov: X ft: Y corp: A/Bb lim: L exec/s: E rss: RMb L: l/m MS: ...`
fn status_line(status: &StatusLine) -> String {
    let event = status.event.name();
    let mut line = format!(
        "#{}\t{event:<6} cov: {} ft: {} corp: {}/{} lim: {} exec/s: {:.0} rss: {}Mb",
        status.runs,
        status.edges,
        status.features,
        status.corpus_entries,
        size(status.corpus_bytes),
        status.len_limit,
        status.exec_per_sec,
        status.engine_rss_mb.max(status.harness_rss_mb),
    );
    if let Some((len, sequence)) = status.input {
        let _ = write!(line, " L: {len}/{} MS: {sequence}", status.len_limit);
    }
    line
}

/// libFuzzer's corpus size: bytes, then Kb, then Mb.
fn size(bytes: usize) -> String {
    match bytes {
        0..16384 => format!("{bytes}b"),
        16384..16777216 => format!("{}Kb", bytes >> 10),
        _ => format!("{}Mb", bytes >> 20),
    }
}

/// What a crash report needs besides the crash.
#[derive(Debug, Clone, Copy)]
pub struct ReportContext<'a> {
    pub pid: u32,
    /// `-artifact_prefix` and where the input was written; none when
    /// running given files (libFuzzer saves nothing then).
    pub artifact: Option<(&'a str, &'a Path)>,
    pub timeout_secs: u64,
    pub rss_limit_mb: u64,
}

/// The full report of one crash, as libFuzzer and the sanitizers print
/// theirs, with no newline at the end.
pub fn crash_report(crash: &Crash, context: &ReportContext<'_>) -> String {
    let pid = context.pid;
    let mut out = String::new();
    let frames = sanitizer_frames(crash);
    let artifact_line = context.artifact.map(|(prefix, path)| {
        format!(
            "artifact_prefix='{prefix}'; Test unit written to {}",
            path.display()
        )
    });
    let mut push = |line: &str| {
        out.push_str(line);
        out.push('\n');
    };
    match crash.kind {
        CrashKind::Timeout => {
            let secs = context.timeout_secs.max(1);
            push(&format!(
                "ALARM: working on the last Unit for {secs} seconds"
            ));
            push(&format!(
                "       and the timeout value is {secs} (use -timeout=N to change)"
            ));
            if let Some(line) = &artifact_line {
                push(line);
            }
            push(&format!(
                "=={pid}== ERROR: libFuzzer: timeout after {secs} seconds"
            ));
            push(&frames);
            push("SUMMARY: libFuzzer: timeout");
        }
        CrashKind::OutOfMemory if crash.problem.class == MALLOC_LIMIT => {
            // libFuzzer's MallocHook path: the size, the stack, the unit, the summary.
            let size = requested_bytes(&crash.problem.message).unwrap_or(0);
            push(&format!(
                "=={pid}== ERROR: libFuzzer: out-of-memory (malloc({size}))"
            ));
            push("   To change the out-of-memory limit use -rss_limit_mb=<N>\n");
            push(&format!("php-fuzz: {}", crash.headline()));
            push(&frames);
            if let Some(line) = &artifact_line {
                push(line);
            }
            push("SUMMARY: libFuzzer: out-of-memory");
        }
        CrashKind::OutOfMemory => {
            let limit = context.rss_limit_mb;
            push(&format!(
                "=={pid}== ERROR: libFuzzer: out-of-memory (used: {limit}Mb; limit: {limit}Mb)"
            ));
            push("   To change the out-of-memory limit use -rss_limit_mb=<N>");
            push(&format!("php-fuzz: {}", crash.headline()));
            push(&frames);
            push("SUMMARY: libFuzzer: out-of-memory");
            if let Some(line) = &artifact_line {
                push(line);
            }
        }
        CrashKind::Security => {
            // ClusterFuzz: a crash, typed by the extra sanitizers' line where
            // one fits, and a security issue by its FuzzerSecurityIssue label.
            push(&format!("=={pid}== ERROR: libFuzzer: deadly signal"));
            if let Some(bug) = extra_sanitizer_line(&crash.problem.class) {
                push(bug);
            }
            push(&format!(
                "=={pid}== ERROR: php-fuzz: security issue ({}): {}",
                security_label(&crash.problem.class),
                crash.problem.headline()
            ));
            push(&frames);
            push("SUMMARY: libFuzzer: deadly signal");
            if let Some(line) = &artifact_line {
                push(line);
            }
        }
        kind => {
            let what = if kind == CrashKind::Exit {
                "fuzz target exited"
            } else {
                "deadly signal"
            };
            push(&format!("=={pid}== ERROR: libFuzzer: {what}"));
            push(&format!("php-fuzz: {}", crash.headline()));
            for line in crash.problem.message.lines().skip(1) {
                push(&format!("    {line}"));
            }
            push(&frames);
            push(&format!("SUMMARY: libFuzzer: {what}"));
            if let Some(line) = &artifact_line {
                push(line);
            }
        }
    }
    out.pop();
    out
}

/// The line of OSS-Fuzz's extra sanitizers (SystemSan) that ClusterFuzz
/// types a finding by, for the detectors that have one.
fn extra_sanitizer_line(detector: &str) -> Option<&'static str> {
    match detector {
        "command-injection" => Some("===BUG DETECTED: Shell injection==="),
        "path-traversal" => Some("===BUG DETECTED: Arbitrary file open==="),
        "ssrf" => Some("===BUG DETECTED: Arbitrary domain name resolution==="),
        _ => None,
    }
}

/// Jazzer's severity labels, which ClusterFuzz reads as "a security issue"
/// in any stack trace.
fn security_label(detector: &str) -> &'static str {
    match detector {
        "command-injection" | "code-injection" => "FuzzerSecurityIssueCritical",
        "regex-dos" => "FuzzerSecurityIssueLow",
        _ => "FuzzerSecurityIssueHigh",
    }
}

/// The crash's PHP frames as sanitizer frames, innermost first, then a
/// `DEDUP_TOKEN:` line of the functions its signature names; no newline at
/// the end:
/// `    #0 0x7f3a9c1e2b40 in Acme\Parser::number /src/lib/Parser.php:262`.
fn sanitizer_frames(crash: &Crash) -> String {
    let problem = &crash.problem;
    let fallback;
    let frames: &[Frame] = if problem.frames.is_empty() {
        fallback = [Frame {
            file: if problem.file.is_empty() {
                "(unknown)".into()
            } else {
                problem.file.clone()
            },
            line: problem.line,
            function: "{main}".into(),
        }];
        &fallback
    } else {
        &problem.frames
    };
    let mut out = String::new();
    for (i, frame) in frames.iter().enumerate() {
        let function = sanitizer_function(&frame.function);
        // A space would end the file name in ClusterFuzz's frame regex.
        let file = frame.file.replace(' ', "%20");
        let _ = writeln!(
            out,
            "    #{i} 0x{:012x} in {function} {file}:{}",
            pseudo_address(&frame.file, frame.line, &frame.function),
            frame.line
        );
    }
    let _ = write!(out, "DEDUP_TOKEN: {}", dedup_token(crash, frames));
    out
}

/// The functions of the frames php-fuzz's signature names (docs/dedup.md):
/// the top three, each once (recursion collapsed); one for a hang, an
/// out-of-memory or a runaway recursion. `f1--f2--f3`, as libFuzzer prints it.
fn dedup_token(crash: &Crash, frames: &[Frame]) -> String {
    let named = signature_frames(crash);
    let named: Vec<&Frame> = if named.is_empty() {
        frames.iter().take(1).collect()
    } else {
        named
    };
    named
        .iter()
        .map(|f| sanitizer_function(&f.function))
        .collect::<Vec<_>>()
        .join("--")
}

/// PHP's `Class->method()` as `Class::method`; no spaces.
fn sanitizer_function(function: &str) -> String {
    let function = function.strip_suffix("()").unwrap_or(function);
    let name = function.replace("->", "::").replace(' ', "_");
    if name.is_empty() {
        "{main}".into()
    } else {
        name
    }
}

/// A stable stand-in for a code address (PHP frames have none; the frame
/// regex wants one): a hash of where the frame is.
fn pseudo_address(file: &str, line: u32, function: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in file
        .bytes()
        .chain(line.to_le_bytes())
        .chain(function.bytes())
    {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    (hash & 0x0000_7fff_ffff_fff0) | 0x5500_0000_0000
}

#[cfg(test)]
mod tests {
    use super::*;
    use php_fuzz_harness::Problem;

    fn crash(kind: CrashKind) -> Crash {
        Crash {
            kind,
            problem: Problem {
                class: "TypeError".into(),
                message: "bad\nsecond line".into(),
                file: "/src/a b/Parser.php".into(),
                line: 12,
                trace: String::new(),
                frames: vec![
                    Frame {
                        file: "/src/a b/Parser.php".into(),
                        line: 12,
                        function: "Acme\\Parser->number()".into(),
                    },
                    Frame {
                        file: "/src/fuzz/target.php".into(),
                        line: 6,
                        function: "{closure}".into(),
                    },
                ],
            },
            stderr: None,
            note: None,
        }
    }

    #[test]
    fn frames_are_sanitizer_frames() {
        let text = sanitizer_frames(&crash(CrashKind::Exception));
        let lines: Vec<_> = text.lines().collect();
        assert!(lines[0].starts_with("    #0 0x"), "{text}");
        assert!(
            lines[0].ends_with(" in Acme\\Parser::number /src/a%20b/Parser.php:12"),
            "{text}"
        );
        assert!(lines[1].ends_with(" in {closure} /src/fuzz/target.php:6"));
        assert_eq!(lines[2], "DEDUP_TOKEN: Acme\\Parser::number--{closure}");
        assert_eq!(
            text,
            sanitizer_frames(&crash(CrashKind::Exception)),
            "stable"
        );
    }

    #[test]
    fn the_dedup_token_names_the_signatures_frames() {
        let frame = |function: &str, line| Frame {
            file: "/src/P.php".into(),
            line,
            function: function.into(),
        };
        let mut recursion = crash(CrashKind::Exception);
        recursion.problem.frames = vec![
            frame("P->f()", 5),
            frame("P->f()", 9),
            frame("P->f()", 9),
            frame("P->g()", 20),
            frame("P->h()", 30),
            frame("{closure}()", 3),
        ];
        let text = sanitizer_frames(&recursion);
        assert_eq!(text.lines().count(), 7, "every frame is printed: {text}");
        assert!(text.ends_with("\nDEDUP_TOKEN: P::f--P::g--P::h"), "{text}");
        let mut hang = recursion.clone();
        hang.kind = CrashKind::Timeout;
        assert!(sanitizer_frames(&hang).ends_with("\nDEDUP_TOKEN: P::f"));
        let mut nowhere = crash(CrashKind::Exception);
        nowhere.problem.frames.clear();
        assert!(sanitizer_frames(&nowhere).ends_with("\nDEDUP_TOKEN: {main}"));
    }

    #[test]
    fn each_kind_has_libfuzzers_header_and_summary() {
        let context = ReportContext {
            pid: 42,
            artifact: Some(("out/", Path::new("out/crash-ab"))),
            timeout_secs: 25,
            rss_limit_mb: 2560,
        };
        let report = crash_report(&crash(CrashKind::Exception), &context);
        assert!(report.starts_with("==42== ERROR: libFuzzer: deadly signal\n"));
        assert!(report.contains("\n    second line\n"));
        assert!(report.ends_with(
            "SUMMARY: libFuzzer: deadly signal\nartifact_prefix='out/'; Test unit written to out/crash-ab"
        ));
        let report = crash_report(&crash(CrashKind::Exit), &context);
        assert!(report.starts_with("==42== ERROR: libFuzzer: fuzz target exited\n"));
        let report = crash_report(&crash(CrashKind::Timeout), &context);
        assert!(report.starts_with("ALARM: working on the last Unit for 25 seconds\n"));
        assert!(report.contains("==42== ERROR: libFuzzer: timeout after 25 seconds\n"));
        assert!(report.ends_with("SUMMARY: libFuzzer: timeout"));
        let report = crash_report(&crash(CrashKind::OutOfMemory), &context);
        assert!(
            report.starts_with(
                "==42== ERROR: libFuzzer: out-of-memory (used: 2560Mb; limit: 2560Mb)\n"
            )
        );
        let mut malloc = crash(CrashKind::OutOfMemory);
        malloc.problem.class = MALLOC_LIMIT.into();
        malloc.problem.message =
            "Allowed memory size of 67108864 bytes exhausted (tried to allocate 2900000768 bytes)"
                .into();
        let report = crash_report(&malloc, &context);
        assert!(
            report.starts_with("==42== ERROR: libFuzzer: out-of-memory (malloc(2900000768))\n"),
            "{report}"
        );
        assert!(report.contains(" in Acme\\Parser::number /src/a%20b/Parser.php:12\n"));
        assert!(
            report
                .ends_with("Test unit written to out/crash-ab\nSUMMARY: libFuzzer: out-of-memory")
        );
        let replay = ReportContext {
            artifact: None,
            ..context
        };
        assert!(!crash_report(&crash(CrashKind::Exception), &replay).contains("Test unit"));
    }

    #[test]
    fn sizes_as_libfuzzer_prints_them() {
        assert_eq!(size(900), "900b");
        assert_eq!(size(20000), "19Kb");
        assert_eq!(size(20 << 20), "20Mb");
    }
}
