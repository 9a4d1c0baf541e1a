//! A saved report read back as the crash it describes, so that its
//! signature is computed by today's rule, whatever rule wrote the report's
//! `signature` field.

use php_fuzz_harness::{Crash, CrashKind, Frame, Problem};
use php_fuzz_storage::CrashRecord;

/// The crash a report describes, its frames read back from its trace;
/// `None` if its kind is not one php-fuzz knows.
pub fn crash_from_record(record: &CrashRecord) -> Option<Crash> {
    let kind = record.kind.parse::<CrashKind>().ok()?;
    Some(Crash {
        kind,
        problem: Problem {
            class: record.class.clone(),
            message: record.message.clone(),
            file: record.file.clone(),
            line: record.line,
            trace: record.trace.clone(),
            frames: frames_of_trace(&record.trace),
        },
        stderr: record.stderr.clone(),
        note: record.note.clone(),
    })
}

/// The frames of a trace as the harness writes it, one a line:
/// `#0 Parser->value() at /lib/Parser.php:80`, `#1 f() at [internal]`.
/// Lines of another shape are skipped.
fn frames_of_trace(trace: &str) -> Vec<Frame> {
    trace.lines().filter_map(frame_of_line).collect()
}

fn frame_of_line(line: &str) -> Option<Frame> {
    let rest = line.strip_prefix('#')?;
    let (number, rest) = rest.split_once(' ')?;
    number.parse::<u32>().ok()?;
    let (function, place) = rest.split_once(" at ")?;
    let (file, line) = if place == "[internal]" {
        (String::new(), 0)
    } else {
        let (file, line) = place.rsplit_once(':')?;
        (file.to_string(), line.parse().ok()?)
    };
    Some(Frame {
        file,
        line,
        function: function.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_from_the_trace() {
        let trace = "#0 pack() at /a b/P.php:26\n\
                     #1 RtfText::hexByte() at /a b/P.php:15\n\
                     #2 array_map() at [internal]\n\
                     not a frame\n\
                     #3 {closure}() at /t.php:3\n";
        let frames = frames_of_trace(trace);
        assert_eq!(frames.len(), 4);
        assert_eq!(
            frames[0],
            Frame {
                file: "/a b/P.php".into(),
                line: 26,
                function: "pack()".into()
            }
        );
        assert_eq!(frames[2].file, "");
        assert_eq!(frames[3].function, "{closure}()");
    }
}
