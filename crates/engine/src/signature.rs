//! What makes two crashes the same bug: what went wrong and where it
//! happened, as libFuzzer's DEDUP_TOKEN and ClusterFuzz's crash state have
//! it; never how PHP worded it, never feature novelty. The rule in full is
//! in docs/dedup.md.
//!
//! - **What went wrong:** the kind (exception, warning, fatal error,
//!   timeout, …) and the class (`TypeError`, `Warning`, `Deprecated`…).
//!   For PHP's errors, whose class says little, the message breaks ties,
//!   normalized first ([`normalize_message`]): "Undefined array key …"
//!   and "Trying to access array offset on value of type …" at one place
//!   are two bugs, `"abc"` and `7` as the key are one.
//! - **Where:** the file and line, and the functions of the top three
//!   frames of the PHP stack, with recursion collapsed so that neither its
//!   depth nor its path counts. php-fuzz's own frames are gone already
//!   (the harness hides its runtime).
//! - **Security findings** are the same bug when the same detector fires at
//!   the same sink, called the same way (the top frames); **side effects**
//!   when the same kind is refused at the same place.
//! - **Hangs, memory exhaustion, runaway recursion and silent deaths** are
//!   caught wherever the process happened to be: their place is the
//!   function they were caught in, with no lines and no callers.

mod message;
mod record;

use std::fmt::Write as _;

use php_fuzz_harness::{
    Crash, CrashKind, Frame, INTERNAL_CALL_TIMEOUT, LARGE_ALLOCATION, MALLOC_LIMIT,
};

pub use message::normalize_message;
pub use record::crash_from_record;

/// How many frames, each function once, make up a crash's place.
pub const TOP_FRAMES: usize = 3;

/// A stable, readable key: equal keys are the same bug.
pub fn signature(crash: &Crash) -> String {
    let p = &crash.problem;
    match crash.kind {
        // Stuck inside one internal call: always caught at that call.
        CrashKind::Timeout if p.class == INTERNAL_CALL_TIMEOUT => {
            at_site(crash, "timeout in an internal call".to_string())
        }
        // Always made by the same call: its place is that call's.
        CrashKind::OutOfMemory if one_allocation(crash) => {
            at_site(crash, "out-of-memory in one allocation".to_string())
        }
        CrashKind::Timeout | CrashKind::OutOfMemory | CrashKind::StackOverflow => {
            caught_somewhere(crash, crash.kind.name().to_string())
        }
        CrashKind::HarnessDied if named_function(crash).is_some() => {
            caught_somewhere(crash, kind_class_message(crash))
        }
        CrashKind::Exception => at_site(crash, format!("exception {}", p.class)),
        CrashKind::Warning | CrashKind::Fatal | CrashKind::HarnessDied => {
            at_site(crash, kind_class_message(crash))
        }
        CrashKind::Exit => at_site(crash, "exit".to_string()),
        // A detector's finding: the detector, the sink's place and callers.
        CrashKind::Security => at_site(crash, format!("security {}", p.class)),
        // Reported once per place (docs/detectors.md): the callers do not count.
        CrashKind::SideEffect => format!("side-effect {} at {}:{}", p.class, p.file, p.line),
    }
}

/// `warning Warning "Undefined array key <n>"`: the kind, the class and the
/// message with its variable parts normalized.
fn kind_class_message(crash: &Crash) -> String {
    let p = &crash.problem;
    format!(
        "{} {} \"{}\"",
        crash.kind.name(),
        p.class,
        normalize_message(&p.message)
    )
}

/// The frames a crash's signature names, innermost first: the top
/// [`TOP_FRAMES`] with recursion collapsed (after a frame comes the caller
/// of that function's outermost call, so a call cycle such as
/// `mapping < sequence < mapping` counts once); only the first for the
/// kinds caught wherever the process happened to be. libFuzzer's
/// `DEDUP_TOKEN` is made of their functions.
pub fn signature_frames(crash: &Crash) -> Vec<&Frame> {
    let frames = &crash.problem.frames;
    if caught_anywhere(crash) {
        return frames.first().into_iter().collect();
    }
    let mut top = Vec::with_capacity(TOP_FRAMES);
    let mut index = 0;
    while index < frames.len() && top.len() < TOP_FRAMES {
        let frame = &frames[index];
        top.push(frame);
        let outermost = frames
            .iter()
            .rposition(|other| same_function(frame, other))
            .unwrap_or(index);
        index = outermost + 1;
    }
    top
}

/// Whether two frames are in the same function of the same file, however
/// it was named (`A->f()`, `A::f`). Allocates nothing: it runs for every
/// crash, and a campaign may crash on most of its inputs.
fn same_function(a: &Frame, b: &Frame) -> bool {
    let (x, y) = (bare_name(&a.function), bare_name(&b.function));
    // `->` and `::` are both two bytes: position by position, a `-` or `>`
    // may stand where the other has `:`.
    let same_byte =
        |(p, q): (&u8, &u8)| p == q || matches!((p, q), (b'-' | b'>', b':') | (b':', b'-' | b'>'));
    x.len() == y.len() && a.file == b.file && x.iter().zip(y).all(same_byte)
}

/// A function's name without PHP's `()`.
fn bare_name(function: &str) -> &[u8] {
    function.trim_end_matches("()").as_bytes()
}

/// The calls below the crash's function that its signature names, for a
/// summary: `Parser::value():80 < Parser::parse():31`; `None` without any.
pub fn callers_in_signature(crash: &Crash) -> Option<String> {
    if caught_anywhere(crash) {
        return None;
    }
    let frames = signature_frames(crash);
    let callers: Vec<String> = frames
        .iter()
        .skip(1)
        .map(|f| format!("{}():{}", function_name(&f.function), f.line))
        .collect();
    (!callers.is_empty()).then(|| callers.join(" < "))
}

/// Kinds whose place moves from run to run: where a loop was interrupted,
/// where memory finally ran out, where a process died without a word.
/// One large allocation is not: it is always made by the same call.
fn caught_anywhere(crash: &Crash) -> bool {
    !one_allocation(crash)
        && matches!(
            crash.kind,
            CrashKind::Timeout
                | CrashKind::OutOfMemory
                | CrashKind::StackOverflow
                | CrashKind::HarnessDied
        )
}

/// An out-of-memory in one large allocation (docs/hardening.md).
fn one_allocation(crash: &Crash) -> bool {
    crash.kind == CrashKind::OutOfMemory
        && matches!(
            crash.problem.class.as_str(),
            MALLOC_LIMIT | LARGE_ALLOCATION
        )
}

/// `WHAT at FILE:LINE in f < g (FILE) < h (FILE)`: the callers by
/// function, as ClusterFuzz's crash state has them; one calling the
/// crash's function from two lines is one finding.
fn at_site(crash: &Crash, what: String) -> String {
    let p = &crash.problem;
    let mut key = what;
    if p.file.is_empty() {
        key.push_str(" at unknown location");
    } else if generated_at_run_time(&p.file) {
        let _ = write!(key, " at {}", p.file);
    } else {
        let _ = write!(key, " at {}:{}", p.file, p.line);
    }
    let frames = signature_frames(crash);
    if let Some(first) = frames.first() {
        key.push_str(" in ");
        push_function_name(&mut key, &first.function);
    }
    for frame in frames.iter().skip(1) {
        key.push_str(" < ");
        push_function_name(&mut key, &frame.function);
        let _ = write!(key, " ({})", frame.file);
    }
    key
}

/// Code that `eval()` compiled (PHP names its file `FILE(LINE) : eval()'d
/// code`): a template engine's compiled templates, say. A line there is a
/// line of one generated template, which another template puts elsewhere,
/// so it names no place in the library: its function does.
fn generated_at_run_time(file: &str) -> bool {
    file.ends_with(" : eval()'d code")
}

/// `WHAT in FUNCTION (FILE)`, or where it was when no function is known.
fn caught_somewhere(crash: &Crash, what: String) -> String {
    let p = &crash.problem;
    match named_function(crash) {
        Some(frame) => format!(
            "{what} in {} ({})",
            function_name(&frame.function),
            frame.file
        ),
        None if !p.file.is_empty() => format!("{what} at {}:{}", p.file, p.line),
        None => what,
    }
}

/// The first frame, if it names a function.
fn named_function(crash: &Crash) -> Option<&Frame> {
    crash
        .problem
        .frames
        .first()
        .filter(|f| !f.function.is_empty())
}

/// A function's name whether PHP's stack named it (`A->f()`) or the block
/// map did (`A::f`): a hang found by either is the same bug.
fn function_name(function: &str) -> String {
    let mut name = String::with_capacity(function.len());
    push_function_name(&mut name, function);
    name
}

/// [`function_name`], onto the end of `out`. A run of 16 or more hex
/// digits reads `*`: code generated at run time names its classes by a
/// hash of their source (Twig's `__TwigTemplate_921a…`), and one bug in
/// it is one finding however many templates reach it.
fn push_function_name(out: &mut String, function: &str) {
    let bare = function.trim_end_matches("()");
    for (n, part) in bare.split("->").enumerate() {
        if n > 0 {
            out.push_str("::");
        }
        push_without_hashes(out, part);
    }
}

fn push_without_hashes(out: &mut String, name: &str) {
    let mut rest = name;
    while let Some(start) = rest.find(|c: char| c.is_ascii_hexdigit()) {
        let digits = rest[start..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        out.push_str(&rest[..start]);
        match digits {
            16.. => out.push('*'),
            _ => out.push_str(&rest[start..start + digits]),
        }
        rest = &rest[start + digits..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use php_fuzz_harness::Problem;

    fn crash(kind: CrashKind, message: &str, line: u32, frames: Vec<Frame>) -> Crash {
        Crash {
            kind,
            problem: Problem {
                class: "Warning".into(),
                message: message.into(),
                file: "/lib/P.php".into(),
                line,
                trace: String::new(),
                frames,
            },
            stderr: None,
            note: None,
        }
    }

    #[test]
    fn classes_named_by_a_hash_of_generated_code_are_one_function() {
        let hang = |class: &str| Crash {
            kind: CrashKind::Timeout,
            ..crash(
                CrashKind::Timeout,
                "",
                41,
                vec![frame(&format!("{class}->doDisplay()"), 41)],
            )
        };
        let a = hang("__TwigTemplate_921a0505ba810a2088b7004420148f09");
        let b = hang("__TwigTemplate_5955bf869eacf1697eb4271ad6f6c92d");
        assert_eq!(signature(&a), signature(&b));
        assert!(
            signature(&a).contains("__TwigTemplate_*::doDisplay"),
            "{}",
            signature(&a)
        );
        // Short hex-looking words are names.
        assert_eq!(function_name("Decoder->feed()"), "Decoder::feed");
        assert_eq!(
            function_name("abc_0123456789abcde()"),
            "abc_0123456789abcde"
        );
    }

    #[test]
    fn lines_of_code_compiled_by_eval_do_not_count() {
        const EVALD: &str = "/usr/share/php/Twig/Environment.php(361) : eval()'d code";
        let division = |line: u32, hash: &str| {
            let mut c = crash(
                CrashKind::Exception,
                "Modulo by zero",
                line,
                vec![Frame {
                    file: EVALD.into(),
                    line,
                    function: format!("__TwigTemplate_{hash}->doDisplay()"),
                }],
            );
            c.problem.class = "DivisionByZeroError".into();
            c.problem.file = EVALD.into();
            c
        };
        let a = division(37, "921a0505ba810a2088b7004420148f09");
        let b = division(41, "5955bf869eacf1697eb4271ad6f6c92d");
        assert_eq!(signature(&a), signature(&b));
        assert!(!signature(&a).contains(":37"), "{}", signature(&a));
        // In a file of its own, a line is a place.
        let mut c = a.clone();
        c.problem.file = "/lib/Template.php".into();
        let mut d = b.clone();
        d.problem.file = "/lib/Template.php".into();
        assert_ne!(signature(&c), signature(&d));
    }

    /// A TypeError at line 5 with these (function, line) frames.
    fn stack(frames: &[(&str, u32)]) -> Crash {
        let frames = frames.iter().map(|&(f, line)| frame(f, line)).collect();
        let mut c = crash(CrashKind::Exception, "m", 5, frames);
        c.problem.class = "TypeError".into();
        c
    }

    fn frame(function: &str, line: u32) -> Frame {
        Frame {
            file: "/lib/P.php".into(),
            line,
            function: function.into(),
        }
    }

    /// A warning inside `pack()`, called at line 26 from `hexByte()`.
    fn pack_warning(character: char) -> Crash {
        crash(
            CrashKind::Warning,
            &format!("pack(): Type H: illegal hex digit {character}"),
            26,
            vec![
                frame("pack()", 26),
                frame("RtfText::hexByte()", 15),
                frame("RtfText::decode()", 31),
                frame("{closure}()", 3),
            ],
        )
    }

    #[test]
    fn a_warning_quoting_the_input_is_one_bug() {
        assert_eq!(signature(&pack_warning('x')), signature(&pack_warning('"')));
        assert_eq!(signature(&pack_warning('x')), signature(&pack_warning(' ')));
        let key = |k: &str| {
            signature(&crash(
                CrashKind::Warning,
                &format!("Undefined array key {k}"),
                10,
                vec![frame("f()", 10)],
            ))
        };
        assert_eq!(key(r#""abc""#), key("7"));
        assert_eq!(key(r#""a"b""#), key(r#""""#));
    }

    #[test]
    fn the_message_is_not_the_identity_of_an_exception() {
        let mut a = crash(CrashKind::Exception, "bad 1", 5, vec![frame("P->f()", 5)]);
        a.problem.class = "TypeError".into();
        let mut b = a.clone();
        b.problem.message = "something else entirely".into();
        assert_eq!(signature(&a), signature(&b));
        let mut c = a.clone();
        c.problem.class = "ValueError".into();
        assert_ne!(signature(&a), signature(&c));
    }

    #[test]
    fn two_warnings_at_one_place_are_told_apart_by_their_wording() {
        let a = crash(CrashKind::Warning, "Undefined array key 1", 10, vec![]);
        let b = crash(
            CrashKind::Warning,
            "Trying to access array offset on value of type null",
            10,
            vec![],
        );
        assert_ne!(signature(&a), signature(&b));
    }

    #[test]
    fn the_same_message_elsewhere_is_another_bug() {
        let a = crash(CrashKind::Warning, "Undefined array key 1", 10, vec![]);
        let b = crash(CrashKind::Warning, "Undefined array key 1", 11, vec![]);
        assert_ne!(signature(&a), signature(&b));
    }

    #[test]
    fn the_top_three_frames_decide_and_deeper_ones_do_not() {
        let a = stack(&[
            ("P->f()", 5),
            ("P->g()", 20),
            ("P->h()", 30),
            ("Entry::one()", 40),
        ]);
        let other_path_below = stack(&[
            ("P->f()", 5),
            ("P->g()", 20),
            ("P->h()", 30),
            ("Entry::two()", 50),
            ("{closure}()", 3),
        ]);
        assert_eq!(signature(&a), signature(&other_path_below));
        let other_caller = stack(&[("P->f()", 5), ("P->k()", 25), ("P->h()", 30)]);
        assert_ne!(signature(&a), signature(&other_caller));
        let third_frame_differs = stack(&[("P->f()", 5), ("P->g()", 20), ("P->other()", 60)]);
        assert_ne!(signature(&a), signature(&third_frame_differs));
        let called_from_another_line = stack(&[("P->f()", 5), ("P->g()", 21), ("P->h()", 31)]);
        assert_eq!(
            signature(&a),
            signature(&called_from_another_line),
            "callers count by function, not by line"
        );
        let mut other_site = a.clone();
        other_site.problem.line = 6;
        assert_ne!(signature(&a), signature(&other_site));
        assert_eq!(
            callers_in_signature(&a).as_deref(),
            Some("P::g():20 < P::h():30")
        );
    }

    #[test]
    fn recursion_depth_does_not_count() {
        let shallow = stack(&[("P->f()", 5), ("P->g()", 20), ("{closure}()", 3)]);
        let deep = stack(&[
            ("P->f()", 5),
            ("P->f()", 9),
            ("P->f()", 9),
            ("P->g()", 20),
            ("P->g()", 22),
            ("{closure}()", 3),
        ]);
        assert_eq!(signature(&shallow), signature(&deep));
        let names: Vec<&str> = signature_frames(&deep)
            .iter()
            .map(|f| f.function.as_str())
            .collect();
        assert_eq!(names, ["P->f()", "P->g()", "{closure}()"]);
        // A parser's mapping inside a sequence inside a mapping: the cycle
        // counts once, and the bug reads as when no sequence is around it.
        let nested = stack(&[
            ("Inline::parseMapping()", 5),
            ("Inline::parseSequence()", 399),
            ("Inline::parseMapping()", 507),
            ("Inline::parse()", 91),
            ("Parser->parseValue()", 797),
        ]);
        let plain = stack(&[
            ("Inline::parseMapping()", 5),
            ("Inline::parse()", 91),
            ("Parser->parseValue()", 797),
            ("Parser->doParse()", 381),
        ]);
        assert_eq!(signature(&nested), signature(&plain));
    }

    #[test]
    fn timeouts_in_one_function_are_one_bug_whoever_called_it() {
        let a = crash(
            CrashKind::Timeout,
            "",
            5,
            vec![frame("P->loop()", 5), frame("a()", 1)],
        );
        let b = crash(
            CrashKind::Timeout,
            "",
            7,
            vec![frame("P->loop()", 7), frame("b()", 2)],
        );
        assert_eq!(signature(&a), signature(&b));
        assert_eq!(signature_frames(&a).len(), 1);
        assert_eq!(callers_in_signature(&a), None);
    }

    #[test]
    fn a_hang_named_by_the_stack_or_by_the_block_map_is_one_bug() {
        let stack = crash(CrashKind::Timeout, "", 5, vec![frame("P->spin()", 5)]);
        let blocks = crash(CrashKind::Timeout, "", 6, vec![frame("P::spin", 6)]);
        assert_eq!(signature(&stack), signature(&blocks));
    }

    #[test]
    fn silent_deaths_in_one_function_are_one_bug_and_differ_by_signal() {
        let died = |message: &str, line| {
            let mut crash = crash(
                CrashKind::HarnessDied,
                message,
                line,
                vec![frame("f", line)],
            );
            crash.problem.class = "HarnessDied".into();
            crash
        };
        let segv = "the harness died (killed by signal 11 (SIGSEGV))";
        assert_eq!(signature(&died(segv, 12)), signature(&died(segv, 13)));
        let kill = "the harness died (killed by signal 9 (SIGKILL))";
        assert_ne!(signature(&died(segv, 12)), signature(&died(kill, 12)));
    }

    #[test]
    fn signatures_read_as_what_where_and_how_it_got_there() {
        assert_eq!(
            signature(&pack_warning('x')),
            "warning Warning \"pack(): Type …: illegal hex digit …\" at /lib/P.php:26 \
             in pack < RtfText::hexByte (/lib/P.php) < RtfText::decode (/lib/P.php)"
        );
        let hang = crash(CrashKind::Timeout, "", 5, vec![frame("P->spin()", 5)]);
        assert_eq!(signature(&hang), "timeout in P::spin (/lib/P.php)");
    }
}
