//! Crash triage: what went wrong in a run, from the status the harness sent,
//! the report of a harness that died, or the last words a dying `php` printed;
//! and where, with php-fuzz's own runtime taken out of the picture.

use std::path::Path;
use std::process::ExitStatus;

use php_fuzz_instrument::{BlockId, BlockKind, StubStyle};
use rustc_hash::FxHashMap;

use crate::process::describe_status;
use crate::protocol::{self, status};
use crate::run_coverage::Coverage;
use crate::sources::SourceServer;
use crate::{Crash, CrashKind, Frame, HarnessConfig, Problem, allocation};

/// The crash a run's status reports, or `None` for a run that went fine.
pub(crate) fn crash_from_status(
    code: u8,
    problem: Option<&protocol::Problem<'_>>,
) -> Option<Crash> {
    if code == status::OK {
        return None;
    }
    Some(Crash {
        kind: kind_of(code),
        problem: problem.map(Problem::from_wire).unwrap_or_default(),
        stderr: None,
        note: None,
    })
}

/// The crash a harness reported as it died (its status, its problem and the
/// end of its trace), with what it printed to stderr on the way out. One
/// large allocation is named as such, and is never a recursion.
pub(crate) fn crash_from_death(
    code: u8,
    problem: Problem,
    last: &[u8],
    stderr: String,
    sources: &SourceServer,
    config: &HarnessConfig,
) -> Crash {
    let kind = kind_of(code);
    let keeps_stderr = matches!(
        kind,
        CrashKind::Fatal | CrashKind::OutOfMemory | CrashKind::StackOverflow
    );
    let mut crash = Crash {
        kind,
        problem,
        stderr: (keeps_stderr && !stderr.trim().is_empty()).then_some(stderr),
        note: None,
    };
    if allocation::name(&mut crash, config) {
        return crash;
    }
    if kind == CrashKind::StackOverflow {
        crash.note = Some("the call stack kept growing: unbounded recursion".to_string());
    } else if kind == CrashKind::OutOfMemory
        && (stack_page_allocation(&crash.problem.message) || looks_like_recursion(sources, last))
    {
        crash.kind = CrashKind::StackOverflow;
        crash.note =
            Some("memory ran out deep inside repeated calls: unbounded recursion".to_string());
    }
    crash
}

/// The crash of a harness that died or went silent without saying why: the
/// fatal error it printed if it died, else `kind` with the engine's `message`.
pub(crate) fn unexplained_crash(
    kind: CrashKind,
    message: String,
    stderr: String,
    runtime: &Path,
) -> Crash {
    explained_by_stderr(kind, message, stderr, runtime, |_| {
        kind == CrashKind::HarnessDied
    })
}

/// The crash of a harness stopped from outside after it overran the
/// timeout: where PHP's own time limit found it (it prints the file and
/// line when SIGPROF ends it), else `message` without a location.
pub(crate) fn timeout_death(
    message: String,
    stderr: String,
    runtime: &Path,
    sources: &SourceServer,
) -> Crash {
    // Memory that ran out at a hard limit while the timeout steps went on.
    let crash = explained_by_stderr(CrashKind::Timeout, message, stderr, runtime, |fatal| {
        matches!(fatal.kind, CrashKind::Timeout | CrashKind::OutOfMemory)
    });
    regex_past_the_timeout(crash, sources)
}

/// A run stuck past the timeout inside a `preg_*` call is `regex-dos`
/// (docs/detectors.md) when that detector is on: the regex ran longer
/// than the timeout on one input.
fn regex_past_the_timeout(crash: Crash, sources: &SourceServer) -> Crash {
    let p = &crash.problem;
    if crash.kind != CrashKind::Timeout
        || p.class != INTERNAL_CALL_TIMEOUT
        || !sources.detector_on(php_fuzz_detectors::Detector::RegexDos)
        || !sources.is_regex_call(Path::new(&p.file), p.line)
    {
        return crash;
    }
    Crash {
        kind: CrashKind::Security,
        problem: Problem {
            class: "regex-dos".into(),
            message: format!(
                "a preg_* call ran past the timeout on one input ({})",
                p.message
            ),
            ..p.clone()
        },
        ..crash
    }
}

/// The fatal error `stderr` shows if `explains` accepts it, else `kind`
/// with the engine's `message`; with the stderr either way.
fn explained_by_stderr(
    kind: CrashKind,
    message: String,
    stderr: String,
    runtime: &Path,
    explains: impl FnOnce(&Crash) -> bool,
) -> Crash {
    let runtime = runtime.display().to_string();
    let crash = match fatal_from_stderr(&stderr, &runtime) {
        Some(fatal) if explains(&fatal) => fatal,
        _ => Crash {
            kind,
            problem: Problem {
                class: kind_class(kind).into(),
                message,
                ..Problem::default()
            },
            stderr: None,
            note: None,
        },
    };
    Crash {
        stderr: Some(stderr).filter(|s| !s.trim().is_empty()),
        ..crash
    }
}

/// The crash of a harness whose event pipe carried something that is not
/// its frames: the target wrote into it (or, if the harness itself broke
/// the protocol, a php-fuzz bug; either way the input is kept).
pub(crate) fn protocol_violation(what: String, stderr: String) -> Crash {
    Crash {
        kind: CrashKind::HarnessDied,
        problem: Problem {
            class: "ProtocolViolation".into(),
            message: what,
            ..Problem::default()
        },
        stderr: Some(stderr).filter(|s| !s.trim().is_empty()),
        note: Some(
            "the target wrote into php-fuzz's pipe to the harness (see docs/protocol.md)".into(),
        ),
    }
}

/// How a harness that closed its pipe died: its exit status, and the fatal
/// error it printed, if any.
pub(crate) fn death_message(status: Option<ExitStatus>, stderr: &str) -> String {
    match php_fatal_line(stderr) {
        Some(line) => format!("the harness died ({}): {line}", describe_status(status)),
        None => format!("the harness died ({})", describe_status(status)),
    }
}

/// Points a crash at the target's code: takes the runtime out of its
/// location and stack, and fills in what PHP could not tell from `coverage`.
pub(crate) fn attribute(
    crash: &mut Crash,
    sources: &SourceServer,
    runtime: &Path,
    coverage: Coverage<'_>,
) {
    hide_runtime(&mut crash.problem, runtime);
    locate(sources, crash, coverage);
}

fn kind_of(code: u8) -> CrashKind {
    match code {
        status::EXCEPTION => CrashKind::Exception,
        status::WARNING => CrashKind::Warning,
        status::TIMEOUT => CrashKind::Timeout,
        status::EXIT => CrashKind::Exit,
        status::OUT_OF_MEMORY => CrashKind::OutOfMemory,
        status::STACK_OVERFLOW => CrashKind::StackOverflow,
        status::SECURITY => CrashKind::Security,
        status::SIDE_EFFECT => CrashKind::SideEffect,
        _ => CrashKind::Fatal,
    }
}

fn kind_class(kind: CrashKind) -> &'static str {
    match kind {
        CrashKind::Timeout => "Timeout",
        CrashKind::OutOfMemory => "OutOfMemory",
        _ => "HarnessDied",
    }
}

/// Takes php-fuzz's own runtime out of a problem's location and stack: a
/// crash inside `traceBlock()` (memory running out there, say) belongs to the
/// code that called it.
fn hide_runtime(problem: &mut Problem, runtime: &Path) {
    let ours = |file: &str| !file.is_empty() && Path::new(file).starts_with(runtime);
    let before = problem.frames.len();
    problem.frames.retain(|f| !ours(&f.file));
    if ours(&problem.file) {
        match problem.frames.first() {
            Some(frame) => (problem.file, problem.line) = (frame.file.clone(), frame.line),
            None => (problem.file, problem.line) = (String::new(), 0),
        }
    }
    if problem.frames.len() != before {
        problem.trace = problem
            .frames
            .iter()
            .enumerate()
            .map(|(n, f)| format!("#{n} {} at {}:{}\n", f.function, f.file, f.line))
            .collect();
    }
}

/// Fills in what PHP could not tell: the location of a crash without one
/// (the last block that ran), and a first frame naming the function.
fn locate(sources: &SourceServer, crash: &mut Crash, coverage: Coverage<'_>) {
    if !crash.problem.file.is_empty() && !crash.problem.frames.is_empty() {
        return;
    }
    if crash.problem.file.is_empty() {
        let Some(location) = coverage.last_block().and_then(|id| sources.locate(id)) else {
            return;
        };
        crash.problem.file = location.path.display().to_string();
        crash.problem.line = location.block.line;
    }
    if crash.problem.frames.is_empty() {
        let (file, line) = (crash.problem.file.clone(), crash.problem.line);
        // Named as PHP names frames: `f()`, `{closure}()`, `{main}`.
        let function = match sources.function_at(Path::new(&file), line) {
            Some(name) if name != "{main}" => format!("{name}()"),
            _ => "{main}".into(),
        };
        if crash.problem.trace.is_empty() {
            crash.problem.trace = format!("#0 {function} at {file}:{line}\n");
        }
        crash.problem.frames.push(Frame {
            file,
            line,
            function,
        });
    }
}

/// PHP grows its VM stack in pages of 256 KiB: failing to get one more is
/// a call stack too deep.
fn stack_page_allocation(message: &str) -> bool {
    message.contains("(tried to allocate 262144 bytes)")
}

/// A crash from the `Fatal error: … in FILE on line N` a dying PHP printed,
/// for deaths the harness could not report itself.
fn fatal_from_stderr(stderr: &str, runtime_dir: &str) -> Option<Crash> {
    stderr.lines().find_map(|line| {
        if let Some(at) = line.find(HARD_MEMORY_LIMIT) {
            return hard_memory_limit(&line[at..], runtime_dir);
        }
        let text = &line[line.find("Fatal error:")? + "Fatal error:".len()..];
        let (rest, line_no) = text.rsplit_once(" on line ")?;
        let (message, file) = rest.rsplit_once(" in ")?;
        let file = file.trim();
        if file.starts_with(runtime_dir) {
            return None;
        }
        let message = message.trim().to_string();
        let (kind, note) = if message.starts_with("Allowed memory size")
            || message.starts_with("Out of memory")
        {
            if stack_page_allocation(&message) {
                (
                    CrashKind::StackOverflow,
                    Some("memory ran out growing the call stack: unbounded recursion".to_string()),
                )
            } else {
                (CrashKind::OutOfMemory, None)
            }
        } else if message.starts_with("Maximum execution time") {
            if message.ends_with("(terminated)") {
                return Some(stuck_in_internal_call(file, line_no.trim().parse().ok()?));
            }
            (CrashKind::Timeout, None)
        } else {
            (CrashKind::Fatal, None)
        };
        Some(Crash {
            kind,
            problem: Problem {
                class: "Fatal error".into(),
                message,
                file: file.to_string(),
                line: line_no.trim().parse().ok()?,
                ..Problem::default()
            },
            stderr: None,
            note,
        })
    })
}

/// The class of a hang inside one call to an internal function: unlike a
/// loop, caught wherever it happened to be, it is always caught at the same
/// call, so its place is that line (see the engine's `signature`).
pub const INTERNAL_CALL_TIMEOUT: &str = "InternalCallTimeout";

/// A harness that PHP's time limit could not stop: its first SIGPROF sets a
/// flag the VM reads between opcodes, and none came before the second, which
/// ended the process ("… exceeded (terminated)"). So the run was inside one
/// call to an internal function (a backtracking `preg_match()`, say) at
/// `file:line`, the last line of PHP code that ran.
fn stuck_in_internal_call(file: &str, line: u32) -> Crash {
    let call = source_line(file, line)
        .map(|text| format!(": `{text}`"))
        .unwrap_or_default();
    Crash {
        kind: CrashKind::Timeout,
        problem: Problem {
            class: INTERNAL_CALL_TIMEOUT.into(),
            message: format!(
                "stuck past the timeout inside one call to an internal function, which PHP's time limit cannot interrupt, on line {line}{call}"
            ),
            file: file.to_string(),
            line,
            ..Problem::default()
        },
        stderr: None,
        note: None,
    }
}

/// Line `line` of `file`, trimmed, if it can be read and is short enough to quote.
fn source_line(file: &str, line: u32) -> Option<String> {
    let text = std::fs::read(file).ok()?;
    let text = String::from_utf8_lossy(&text);
    let found = text.lines().nth(line.checked_sub(1)? as usize)?.trim();
    (!found.is_empty() && found.len() <= 160).then(|| found.to_string())
}

/// Some PHP builds end a process at once, without shutdown functions, when
/// one allocation would take it past a hard limit above `memory_limit`
/// (`memory_hard_limit_percent`, 150 % by default there): an array that
/// doubles its storage from 1 GB to 2 GB, say. That is an out-of-memory.
const HARD_MEMORY_LIMIT: &str = "Hard memory limit of ";

/// `Hard memory limit of N bytes exhausted (tried to allocate M bytes) in FILE on line L`.
fn hard_memory_limit(text: &str, runtime_dir: &str) -> Option<Crash> {
    let (rest, line_no) = text.rsplit_once(" on line ")?;
    let (message, file) = rest.rsplit_once(" in ")?;
    let file = file.trim();
    if file.starts_with(runtime_dir) {
        return None;
    }
    Some(Crash {
        kind: CrashKind::OutOfMemory,
        problem: Problem {
            class: "Fatal error".into(),
            message: message.trim().to_string(),
            file: file.to_string(),
            line: line_no.trim().parse().ok()?,
            ..Problem::default()
        },
        stderr: None,
        note: None,
    })
}

/// Memory ran out while the same function kept being entered: recursion.
/// `trace` is the end of the run's block trace.
fn looks_like_recursion(sources: &SourceServer, trace: &[u8]) -> bool {
    if sources.style() != StubStyle::Trace {
        return false;
    }
    let mut entries: FxHashMap<u32, u32> = FxHashMap::default();
    let mut total = 0u32;
    let mut kinds: FxHashMap<u32, bool> = FxHashMap::default();
    for id in trace.chunks_exact(4) {
        let id = u32::from_le_bytes(id.try_into().expect("4 bytes"));
        total += 1;
        let is_entry = *kinds.entry(id).or_insert_with(|| {
            sources.locate(BlockId(id)).is_some_and(|l| {
                matches!(
                    l.block.kind,
                    BlockKind::FunctionEntry | BlockKind::MethodEntry | BlockKind::ClosureEntry
                )
            })
        });
        if is_entry {
            *entries.entry(id).or_default() += 1;
        }
    }
    let most = entries.values().copied().max().unwrap_or(0);
    let all_entries: u32 = entries.values().sum();
    most >= 64 && all_entries * 4 >= total
}

/// The `PHP Fatal error: …` line a dying PHP printed, if any.
fn php_fatal_line(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .rev()
        .find(|l| {
            l.contains("Fatal error")
                || l.contains("Segmentation fault")
                || l.starts_with("php-fuzz harness:")
        })
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame;

    #[test]
    fn a_fatal_error_printed_by_a_dying_php_becomes_a_located_crash() {
        let stderr = "PHP Notice: something\nPHP Fatal error:  Allowed memory size of 268435456 bytes exhausted (tried to allocate 262144 bytes) in /lib/Parser.php on line 42\nFatal error: Allowed memory size of 1 bytes exhausted in /tmp/rt/Harness.php on line 9\n";
        let crash = fatal_from_stderr(stderr, "/tmp/rt").unwrap();
        assert_eq!(
            crash.kind,
            CrashKind::StackOverflow,
            "a VM stack page could not be had"
        );
        assert_eq!(
            (crash.problem.file.as_str(), crash.problem.line),
            ("/lib/Parser.php", 42)
        );
        let plain = fatal_from_stderr(
            "Fatal error: Cannot redeclare f() in /a b/in x.php on line 3",
            "/tmp/rt",
        )
        .unwrap();
        assert_eq!(plain.kind, CrashKind::Fatal);
        assert_eq!(plain.problem.message, "Cannot redeclare f()");
        assert_eq!(plain.problem.file, "/a b/in x.php");
        assert!(fatal_from_stderr("Segmentation fault", "/tmp/rt").is_none());
        assert!(
            fatal_from_stderr("Fatal error: x in /tmp/rt/Wire.php on line 1", "/tmp/rt").is_none()
        );
    }

    #[test]
    fn the_runtime_is_hidden_from_locations_and_traces() {
        let frame = |file: &str, line, function: &str| Frame {
            file: file.into(),
            line,
            function: function.into(),
        };
        let mut problem = Problem {
            class: "Fatal error".into(),
            message: "Allowed memory size".into(),
            file: "/tmp/rt/FuzzingContext.php".into(),
            line: 65,
            trace: String::new(),
            frames: vec![
                frame("/tmp/rt/FuzzingContext.php", 65, "PhpFuzz\\traceBlock()"),
                frame("/lib/P.php", 7, "P->f()"),
            ],
        };
        hide_runtime(&mut problem, Path::new("/tmp/rt"));
        assert_eq!((problem.file.as_str(), problem.line), ("/lib/P.php", 7));
        assert_eq!(problem.frames.len(), 1);
        assert_eq!(problem.trace, "#0 P->f() at /lib/P.php:7\n");
    }
}
