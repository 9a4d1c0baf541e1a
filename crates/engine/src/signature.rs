//! What makes two crashes the same bug: the crash site, never feature novelty.

use php_fuzz_harness::{Crash, CrashKind};

/// How many calling functions under the throw site take part in an
/// exception's signature: the site and its caller tell one bug from another;
/// deeper frames mostly tell apart the many paths into the same bug.
const EXCEPTION_FRAMES: usize = 1;

/// A stable, readable key: equal keys are the same bug.
pub fn signature(crash: &Crash) -> String {
    let p = &crash.problem;
    let site = if p.file.is_empty() {
        "unknown location".to_string()
    } else {
        format!("{}:{}", p.file, p.line)
    };
    match crash.kind {
        CrashKind::Exception => {
            let mut key = format!("exception {} at {site}", p.class);
            for function in callers(crash).take(EXCEPTION_FRAMES) {
                key.push_str(CALLER_SEPARATOR);
                key.push_str(function);
            }
            key
        }
        // A process that died without a word is placed where its trace was
        // last seen, which moves inside the function: the function is the site.
        CrashKind::HarnessDied if p.frames.first().is_some_and(|f| !f.function.is_empty()) => {
            let frame = &p.frames[0];
            format!(
                "{} {}: {} in {} ({})",
                crash.kind.name(),
                p.class,
                normalize_message(&p.message),
                function_name(&frame.function),
                frame.file
            )
        }
        CrashKind::Warning | CrashKind::Fatal | CrashKind::HarnessDied => {
            format!(
                "{} {}: {} at {site}",
                crash.kind.name(),
                p.class,
                normalize_message(&p.message)
            )
        }
        // Where a loop is interrupted, or where memory finally runs out, moves
        // from run to run inside the same function: the function is the site.
        CrashKind::Timeout | CrashKind::OutOfMemory | CrashKind::StackOverflow => {
            match p.frames.first() {
                Some(frame) if !frame.function.is_empty() => {
                    format!(
                        "{} in {} ({})",
                        crash.kind.name(),
                        function_name(&frame.function),
                        frame.file
                    )
                }
                _ if !p.file.is_empty() => format!("{} at {site}", crash.kind.name()),
                _ => crash.kind.name().to_string(),
            }
        }
        CrashKind::Exit => format!("exit at {site}"),
    }
}

/// The calling function an exception's signature names, if any: two
/// crashes told apart only by it must read differently in a summary.
pub(crate) fn caller_in_signature(signature: &str) -> Option<&str> {
    if !signature.starts_with("exception ") {
        return None;
    }
    signature
        .rsplit_once(CALLER_SEPARATOR)
        .map(|(_, caller)| caller)
}

const CALLER_SEPARATOR: &str = " < ";

/// A function's name whether PHP's stack named it (`A->f()`) or the block
/// map did (`A::f`): a hang found by either is the same bug.
fn function_name(function: &str) -> String {
    function.trim_end_matches("()").replace("->", "::")
}

/// The functions below the crash site, innermost first, each once: a
/// recursive parser reaches one bug through any depth of recursion.
fn callers(crash: &Crash) -> impl Iterator<Item = &str> {
    let frames = &crash.problem.frames;
    let mut seen: Vec<&str> = frames
        .first()
        .map(|f| f.function.as_str())
        .into_iter()
        .collect();
    frames
        .iter()
        .skip(1)
        .map(|f| f.function.as_str())
        .filter(move |&function| {
            if seen.contains(&function) {
                return false;
            }
            seen.push(function);
            true
        })
}

/// Masks the parts of a message that quote the input: quoted strings and numbers.
pub fn normalize_message(message: &str) -> String {
    let first_line = message.lines().next().unwrap_or("");
    let mut out = String::with_capacity(first_line.len());
    let mut chars = first_line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                let mut quoted = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == c {
                        closed = true;
                        break;
                    }
                    quoted.push(d);
                }
                out.push(c);
                out.push('…');
                if closed {
                    out.push(c);
                }
            }
            '0'..='9' => {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '.')
                {
                    chars.next();
                }
                out.push('N');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use php_fuzz_harness::{Frame, Problem};

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

    fn frame(function: &str, line: u32) -> Frame {
        Frame {
            file: "/lib/P.php".into(),
            line,
            function: function.into(),
        }
    }

    #[test]
    fn warnings_quoting_the_input_are_one_bug() {
        let a = crash(
            CrashKind::Warning,
            r#"Undefined array key "abc""#,
            10,
            vec![],
        );
        let b = crash(
            CrashKind::Warning,
            r#"Undefined array key "zz""#,
            10,
            vec![],
        );
        let c = crash(
            CrashKind::Warning,
            "Uninitialized string offset 17",
            10,
            vec![],
        );
        let d = crash(
            CrashKind::Warning,
            "Uninitialized string offset 3",
            10,
            vec![],
        );
        assert_eq!(signature(&a), signature(&b));
        assert_eq!(signature(&c), signature(&d));
        assert_ne!(signature(&a), signature(&c));
    }

    #[test]
    fn the_same_warning_elsewhere_is_another_bug() {
        let a = crash(CrashKind::Warning, "Undefined variable $x", 10, vec![]);
        let b = crash(CrashKind::Warning, "Undefined variable $x", 11, vec![]);
        assert_ne!(signature(&a), signature(&b));
    }

    #[test]
    fn exceptions_differ_by_caller_but_not_by_message_or_recursion_depth() {
        let mut a = crash(
            CrashKind::Exception,
            "bad 1",
            5,
            vec![
                frame("P->f()", 5),
                frame("P->g()", 20),
                frame("{closure}()", 3),
            ],
        );
        a.problem.class = "TypeError".into();
        let mut b = a.clone();
        b.problem.message = "bad 2".into();
        assert_eq!(signature(&a), signature(&b));
        let mut deeper = a.clone();
        deeper.problem.frames = vec![
            frame("P->f()", 5),
            frame("P->g()", 22),
            frame("P->f()", 9),
            frame("P->g()", 20),
            frame("P->g()", 20),
            frame("{closure}()", 3),
        ];
        assert_eq!(
            signature(&a),
            signature(&deeper),
            "the same bug at another recursion depth"
        );
        let mut other_caller = a.clone();
        other_caller.problem.frames[1].function = "P->h()".into();
        assert_ne!(signature(&a), signature(&other_caller));
        assert_eq!(caller_in_signature(&signature(&a)), Some("P->g()"));
        assert_eq!(
            caller_in_signature(&signature(&other_caller)),
            Some("P->h()")
        );
        let mut other_path = a.clone();
        other_path.problem.frames[2].function = "Entry::point()".into();
        assert_eq!(
            signature(&a),
            signature(&other_path),
            "one bug reached along another path further up"
        );
        let mut other_site = a.clone();
        other_site.problem.line = 6;
        assert_ne!(signature(&a), signature(&other_site));
    }

    #[test]
    fn timeouts_in_one_function_are_one_bug() {
        let a = crash(CrashKind::Timeout, "", 5, vec![frame("P->loop()", 5)]);
        let b = crash(CrashKind::Timeout, "", 7, vec![frame("P->loop()", 7)]);
        assert_eq!(signature(&a), signature(&b));
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
    fn normalization_keeps_words() {
        assert_eq!(
            normalize_message("Undefined offset: 12 in 'x'"),
            "Undefined offset: N in '…'"
        );
        assert_eq!(normalize_message("unterminated \"abc"), "unterminated \"…");
        assert_eq!(normalize_message("line one\nline 2"), "line one");
    }
}
