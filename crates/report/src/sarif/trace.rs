//! The stack frames of a crash report's `trace`, as the harness writes it
//! (`problem()` in php-runtime/internal/Harness.php), one frame a line,
//! innermost first:
//!
//! ```text
//! #0 Parser->value() at /abs/src/Parser.php:80
//! #1 strlen() at [internal]
//! #2 {main} at /abs/target.php:12
//! ```
//!
//! The engine reads the same lines back for deduplication
//! (`crates/engine/src/signature/record.rs`); a line of another shape is
//! skipped here as there.

/// One frame: the function, and where in it the call below was made (or,
/// for the innermost frame, where the finding happened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// As PHP names it: `Parser->value()`, `strlen()`, `{closure}()`,
    /// `{main}`, `require`.
    pub function: String,
    /// `None` for a frame of a PHP function (`[internal]`).
    pub place: Option<Place>,
}

/// A file and a line of it (0: the line is unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub file: String,
    pub line: u32,
}

impl Place {
    /// Where PHP code that `eval()` compiled really is: PHP names it
    /// `FILE(LINE) : eval()'d code`, so the place is FILE at LINE, the
    /// `eval()` call (nested evals down to the outermost file). Other
    /// places are returned as they are.
    pub fn outside_eval(file: &str, line: u32) -> Place {
        let mut place = Place {
            file: file.to_string(),
            line,
        };
        while let Some(rest) = place.file.strip_suffix(" : eval()'d code") {
            let Some((outer, eval_line)) = rest
                .strip_suffix(')')
                .and_then(|rest| rest.rsplit_once('('))
            else {
                break;
            };
            let Ok(eval_line) = eval_line.parse() else {
                break;
            };
            place = Place {
                file: outer.to_string(),
                line: eval_line,
            };
        }
        place
    }
}

/// The frames of `trace`, innermost first; unknown lines are skipped.
pub(crate) fn frames(trace: &str) -> Vec<Frame> {
    trace.lines().filter_map(frame_of_line).collect()
}

fn frame_of_line(line: &str) -> Option<Frame> {
    let rest = line.trim_end_matches('\r').strip_prefix('#')?;
    let (number, rest) = rest.split_once(' ')?;
    number.parse::<u32>().ok()?;
    let (function, place) = rest.split_once(" at ")?;
    if function.is_empty() {
        return None;
    }
    let place = if place == "[internal]" {
        None
    } else {
        let (file, line) = place.rsplit_once(':')?;
        if file.is_empty() {
            return None;
        }
        Some(Place::outside_eval(file, line.parse().ok()?))
    };
    Some(Frame {
        function: function.to_string(),
        place,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: u32) -> Option<Place> {
        Some(Place {
            file: file.into(),
            line,
        })
    }

    #[test]
    fn reads_every_shape_the_harness_writes_and_skips_the_rest() {
        let trace = "#0 Parser::value() at /abs/src/Parser.php:80\n\
                     #1 strlen() at [internal]\n\
                     not a frame\n\
                     #x f() at /a.php:1\n\
                     #2 broken() at /no/line/number.php\n\
                     #3 {closure}() at /a b/with at in it.php:7\r\n\
                     #4 {main} at /abs/target.php:12\n\
                     \n\
                     #5 require at /abs/bootstrap.php:3";
        let frames = frames(trace);
        let got: Vec<_> = frames
            .iter()
            .map(|f| (f.function.as_str(), f.place.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("Parser::value()", at("/abs/src/Parser.php", 80)),
                ("strlen()", None),
                ("{closure}()", at("/a b/with at in it.php", 7)),
                ("{main}", at("/abs/target.php", 12)),
                ("require", at("/abs/bootstrap.php", 3)),
            ]
        );
    }

    #[test]
    fn an_empty_trace_has_no_frames() {
        assert!(frames("").is_empty());
        assert!(frames("\n\n").is_empty());
    }

    #[test]
    fn code_compiled_by_eval_is_placed_at_the_eval_call() {
        let frames = frames(
            "#0 render() at /app/Template.php(41) : eval()'d code:3\n\
             #1 nested() at /app/T.php(9) : eval()'d code(2) : eval()'d code:5\n",
        );
        assert_eq!(frames[0].place, at("/app/Template.php", 41));
        assert_eq!(frames[1].place, at("/app/T.php", 9));
        assert_eq!(
            Place::outside_eval("/odd(x) : eval()'d code", 4),
            Place {
                file: "/odd(x) : eval()'d code".into(),
                line: 4
            },
            "not PHP's shape: kept as it is"
        );
    }
}
