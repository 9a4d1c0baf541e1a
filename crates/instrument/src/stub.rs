//! Every byte of PHP the instrumenter adds comes from here.
//!
//! Both styles record the same sequence of block ids; see
//! `docs/instrumentation.md` for the semantics. Stubs use fully qualified
//! names (the code may be in any namespace), never contain a newline, and
//! never create a variable in the user's scope.

use crate::StubStyle;

/// What one insertion adds; `Plan::render` resolves the block id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A counter statement at a statement boundary.
    Counter,
    /// `{` and a counter, opening a brace-less body.
    BraceCounter,
    /// A counter that also keeps the trace bounded: in trace style, once
    /// the trace passes `TRACE_CHUNK_BYTES` the runtime sends it to the
    /// engine and starts anew (`FuzzingContext::drain()`).
    BoundingCounter,
    /// `{` and a bounding counter, opening a brace-less body.
    BoundingBraceCounter,
    /// The length check of a bounding counter whose block is left out as
    /// implied by others (`Coverage::Pruned`): it records nothing.
    TraceBound,
    /// `}` closing a brace-less body.
    BraceClose,
    /// `;` before a `?>` that ended the statement on its own.
    Terminator,
    /// `\PhpFuzz\traceBlock(ID, ` (trace) or `\PhpFuzz\countEdge(ID, `
    /// (edge map) before an expression.
    Open,
    /// The same and a `(`, before a `yield` expression.
    OpenYield,
    /// `\PhpFuzz\traceTruthy(ID, ` or `\PhpFuzz\countEdgeIfTruthy(ID, `
    /// before the condition of `a ?: b`.
    OpenTruthy,
    /// `((` before the right operand of `&&`, `||`, `and`, `or`.
    OpenCondition,
    /// `) ? RECORD-TRUE : RECORD-FALSE)` after it (see `condition_record`):
    /// records the block once the operand has its value, and gives that
    /// value's truth, which is all the operator keeps. In trace style no
    /// function call, the cost of the others.
    CloseCondition,
    /// `)` after an `Open` or `OpenTruthy` expression.
    Close,
    /// `))` after an `OpenYield` expression.
    CloseYield,
}

impl Piece {
    /// Upper bound of the bytes `write` appends, for sizing the output.
    pub(crate) fn max_len(self, style: StubStyle) -> usize {
        match (self, style) {
            (Piece::Counter | Piece::BraceCounter, StubStyle::Trace) => 64,
            (Piece::Counter | Piece::BraceCounter, StubStyle::EdgeMap) => 256,
            (Piece::BoundingCounter | Piece::BoundingBraceCounter, StubStyle::Trace) => 192,
            (Piece::BoundingCounter | Piece::BoundingBraceCounter, StubStyle::EdgeMap) => 256,
            (Piece::TraceBound, _) => 128,
            (Piece::Open | Piece::OpenYield | Piece::OpenTruthy, _) => 48,
            (Piece::CloseCondition, _) => 160,
            (
                Piece::BraceClose
                | Piece::Terminator
                | Piece::Close
                | Piece::CloseYield
                | Piece::OpenCondition,
                _,
            ) => 2,
        }
    }

    /// Whether the text starts with a name (`\PhpFuzz\…`), which would run
    /// into a name or keyword right before it.
    pub(crate) fn starts_with_name(self) -> bool {
        matches!(
            self,
            Piece::Counter
                | Piece::BoundingCounter
                | Piece::TraceBound
                | Piece::Open
                | Piece::OpenYield
                | Piece::OpenTruthy
        )
    }

    pub(crate) fn write(self, out: &mut Vec<u8>, style: StubStyle, id: u32) {
        match self {
            Piece::Counter => counter(out, style, id),
            Piece::BraceCounter => {
                out.push(b'{');
                counter(out, style, id);
                out.push(b' ');
            }
            Piece::BoundingCounter => bounding_counter(out, style, id),
            Piece::BoundingBraceCounter => {
                out.push(b'{');
                bounding_counter(out, style, id);
                out.push(b' ');
            }
            Piece::TraceBound => trace_bound(out, style),
            Piece::BraceClose => out.push(b'}'),
            Piece::Terminator => out.push(b';'),
            Piece::Open => call_open(out, record_function(style), style, id),
            Piece::OpenYield => {
                call_open(out, record_function(style), style, id);
                out.push(b'(');
            }
            Piece::OpenTruthy => call_open(out, record_if_truthy_function(style), style, id),
            Piece::OpenCondition => out.extend_from_slice(b"(("),
            Piece::CloseCondition => {
                out.extend_from_slice(b") ? ");
                condition_record(out, style, id, true);
                out.extend_from_slice(b" : ");
                condition_record(out, style, id, false);
                out.push(b')');
            }
            Piece::Close => out.push(b')'),
            Piece::CloseYield => out.extend_from_slice(b"))"),
        }
    }
}

/// Trace style appends the id to `FuzzingContext::$trace`; edge-map style
/// counts the edge `(prev << 28) | id` and makes the id the new prev.
fn counter(out: &mut Vec<u8>, style: StubStyle, id: u32) {
    match style {
        StubStyle::Trace => {
            out.extend_from_slice(b"\\PhpFuzz\\FuzzingContext::$trace .= ");
            packed(out, id);
            out.push(b';');
        }
        StubStyle::EdgeMap => {
            const EDGE: &[u8] =
                b"\\PhpFuzz\\FuzzingContext::$edges[(\\PhpFuzz\\FuzzingContext::$prev << 28) | ";
            out.extend_from_slice(EDGE);
            decimal(out, id);
            out.extend_from_slice(b"] = (");
            out.extend_from_slice(EDGE);
            decimal(out, id);
            out.extend_from_slice(b"] ?? 0) + 1; \\PhpFuzz\\FuzzingContext::$prev = ");
            decimal(out, id);
            out.push(b';');
        }
    }
}

/// The trace's length past which a bounding counter sends it to the engine
/// (1 MiB: 262,144 blocks). `FuzzingContext::TRACE_CHUNK_BYTES` is the same.
pub const TRACE_CHUNK_BYTES: usize = 1 << 20;

/// A counter, then in trace style `isset(…$trace[N]) && …::drain();`: one
/// test of the trace's length, the cost of a loop iteration or a call.
fn bounding_counter(out: &mut Vec<u8>, style: StubStyle, id: u32) {
    counter(out, style, id);
    out.push(b' ');
    trace_bound(out, style);
}

/// `isset(…$trace[N]) && …::drain();` in trace style; nothing in edge-map
/// style, whose record is bounded by the number of edges.
fn trace_bound(out: &mut Vec<u8>, style: StubStyle) {
    if style == StubStyle::Trace {
        out.extend_from_slice(b"isset(\\PhpFuzz\\FuzzingContext::$trace[");
        decimal(out, TRACE_CHUNK_BYTES as u32);
        out.extend_from_slice(b"]) && \\PhpFuzz\\FuzzingContext::drain();");
    }
}

/// The runtime function that records a block and returns its second argument.
fn record_function(style: StubStyle) -> &'static [u8] {
    match style {
        StubStyle::Trace => b"\\PhpFuzz\\traceBlock(",
        StubStyle::EdgeMap => b"\\PhpFuzz\\countEdge(",
    }
}

/// Like `record_function`, recording only when the value is truthy.
fn record_if_truthy_function(style: StubStyle) -> &'static [u8] {
    match style {
        StubStyle::Trace => b"\\PhpFuzz\\traceTruthy(",
        StubStyle::EdgeMap => b"\\PhpFuzz\\countEdgeIfTruthy(",
    }
}

/// An expression that records block `id` and evaluates to `value`: in trace
/// style `(\PhpFuzz\FuzzingContext::$trace .= "\x07…") !== ''` (or `=== ''`
/// for false; the trace is never empty after an append), in edge-map style
/// `\PhpFuzz\countEdge(ID, true)`.
fn condition_record(out: &mut Vec<u8>, style: StubStyle, id: u32, value: bool) {
    match style {
        StubStyle::Trace => {
            out.extend_from_slice(b"(\\PhpFuzz\\FuzzingContext::$trace .= ");
            packed(out, id);
            out.extend_from_slice(if value { b") !== ''" } else { b") === ''" });
        }
        StubStyle::EdgeMap => {
            call_open(out, b"\\PhpFuzz\\countEdge(", style, id);
            out.extend_from_slice(if value { b"true)" } else { b"false)" });
        }
    }
}

fn call_open(out: &mut Vec<u8>, function: &[u8], style: StubStyle, id: u32) {
    out.extend_from_slice(function);
    match style {
        StubStyle::Trace => packed(out, id),
        StubStyle::EdgeMap => decimal(out, id),
    }
    out.extend_from_slice(b", ");
}

/// The id as the trace holds it: a string literal of its 4 little-endian
/// bytes, `"\x07\x00\x00\x00"`.
fn packed(out: &mut Vec<u8>, id: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for byte in id.to_le_bytes() {
        out.extend_from_slice(&[
            b'\\',
            b'x',
            HEX[(byte >> 4) as usize],
            HEX[(byte & 15) as usize],
        ]);
    }
    out.push(b'"');
}

fn decimal(out: &mut Vec<u8>, mut id: u32) {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (id % 10) as u8;
        id /= 10;
        if id == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// What a comparison is, as the CmpLog runtime records it
/// (`php-runtime/CmpLog.php`, docs/protocol.md): the kinds the engine
/// reads back, and a flag for the runtime alone.
pub(crate) mod cmp_kind {
    pub use php_fuzz_mutate::cmp::kind::*;
    /// Flag, for the runtime only: the literal is the first operand.
    pub const SWAPPED: u8 = 16;
}

/// The runtime's recording functions, `\PhpFuzz\CmpLog::NAME(SITE, …)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpCall {
    /// Holds the first operand of a comparison for `Right`.
    Left,
    /// Records the held first operand against this one.
    Right,
    /// Records the operand against a literal repeated after it.
    Literal,
    /// A switch or match subject, recorded against the literal cases.
    Against,
    /// A case or match condition that is not a literal.
    Arm,
    /// `in_array` / `array_search`'s haystack: the held needle against its elements.
    Elements,
    /// `array_key_exists`'s array: the held key against its keys.
    Keys,
    /// The key of a lookup in a class constant (`self::MAP[$key]`),
    /// against the constant's keys, repeated after it.
    Key,
}

impl CmpCall {
    fn name(self) -> &'static [u8] {
        match self {
            CmpCall::Left => b"left",
            CmpCall::Right => b"right",
            CmpCall::Literal => b"literal",
            CmpCall::Against => b"against",
            CmpCall::Arm => b"arm",
            CmpCall::Elements => b"elements",
            CmpCall::Keys => b"keys",
            CmpCall::Key => b"key",
        }
    }
}

/// What one comparison-logging insertion adds (the `cmplog` rendering only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpPiece {
    /// `\PhpFuzz\CmpLog::NAME(SITE, ` before an operand.
    Open(CmpCall),
    /// `)` after it.
    Close,
    /// `, KIND)` after a `Right` operand.
    CloseKind(u8),
    /// `, LITERAL, KIND)` after a `Literal` operand: the literal's source
    /// bytes `start..end`, which hold no line break.
    CloseLiteral { start: usize, end: usize, kind: u8 },
    /// `, [LITERAL, …])` after an `Against` subject: `first..first + count`
    /// of the file's literal list.
    CloseList { first: u32, count: u32 },
}

impl CmpPiece {
    pub(crate) fn starts_with_name(self) -> bool {
        matches!(self, CmpPiece::Open(_))
    }

    /// Appends the text; `lists` holds the source ranges of `CloseList` literals.
    pub(crate) fn write(
        self,
        out: &mut Vec<u8>,
        site: u32,
        source: &[u8],
        lists: &[(usize, usize)],
    ) {
        match self {
            CmpPiece::Open(call) => {
                out.extend_from_slice(b"\\PhpFuzz\\CmpLog::");
                out.extend_from_slice(call.name());
                out.push(b'(');
                decimal(out, site);
                out.extend_from_slice(b", ");
            }
            CmpPiece::Close => out.push(b')'),
            CmpPiece::CloseKind(kind) => {
                out.extend_from_slice(b", ");
                decimal(out, u32::from(kind));
                out.push(b')');
            }
            CmpPiece::CloseLiteral { start, end, kind } => {
                out.extend_from_slice(b", ");
                out.extend_from_slice(&source[start..end]);
                out.extend_from_slice(b", ");
                decimal(out, u32::from(kind));
                out.push(b')');
            }
            CmpPiece::CloseList { first, count } => {
                out.extend_from_slice(b", [");
                let list = &lists[first as usize..(first + count) as usize];
                for (i, &(start, end)) in list.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    out.extend_from_slice(&source[start..end]);
                }
                out.extend_from_slice(b"])");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(piece: Piece, style: StubStyle, id: u32) -> String {
        let mut out = Vec::new();
        piece.write(&mut out, style, id);
        // render() may put a space before a stub that starts with a name.
        let space = usize::from(piece.starts_with_name());
        assert!(
            out.len() + space <= piece.max_len(style),
            "{piece:?} wrote {} bytes",
            out.len()
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn edge_map_counter_counts_the_edge_and_moves_prev() {
        assert_eq!(
            text(Piece::Counter, StubStyle::EdgeMap, 268435455),
            "\\PhpFuzz\\FuzzingContext::$edges[(\\PhpFuzz\\FuzzingContext::$prev << 28) | 268435455] = \
             (\\PhpFuzz\\FuzzingContext::$edges[(\\PhpFuzz\\FuzzingContext::$prev << 28) | 268435455] ?? 0) + 1; \
             \\PhpFuzz\\FuzzingContext::$prev = 268435455;"
        );
    }

    /// Counters and wrappers in both styles, for block 0x010203ff: the
    /// trace appends its id's bytes, little-endian; the edge map counts the
    /// edge from `$prev`; wrappers call the runtime function of the style.
    #[test]
    fn each_piece_in_each_style() {
        let pieces = [
            Piece::Counter,
            Piece::BraceCounter,
            Piece::Open,
            Piece::OpenYield,
            Piece::OpenTruthy,
            Piece::CloseYield,
            Piece::CloseCondition,
        ];
        let mut got = String::new();
        for piece in pieces {
            for style in [StubStyle::Trace, StubStyle::EdgeMap] {
                let stub = text(piece, style, 0x0102_03ff);
                got.push_str(&format!("{piece:?} {style:?}: |{stub}|\n"));
            }
        }
        assert_eq!(got, EACH_PIECE_IN_EACH_STYLE, "{got}");
    }

    /// Between `|`s, so that a trailing space shows.
    const EACH_PIECE_IN_EACH_STYLE: &str = r#"Counter Trace: |\PhpFuzz\FuzzingContext::$trace .= "\xff\x03\x02\x01";|
Counter EdgeMap: |\PhpFuzz\FuzzingContext::$edges[(\PhpFuzz\FuzzingContext::$prev << 28) | 16909311] = (\PhpFuzz\FuzzingContext::$edges[(\PhpFuzz\FuzzingContext::$prev << 28) | 16909311] ?? 0) + 1; \PhpFuzz\FuzzingContext::$prev = 16909311;|
BraceCounter Trace: |{\PhpFuzz\FuzzingContext::$trace .= "\xff\x03\x02\x01"; |
BraceCounter EdgeMap: |{\PhpFuzz\FuzzingContext::$edges[(\PhpFuzz\FuzzingContext::$prev << 28) | 16909311] = (\PhpFuzz\FuzzingContext::$edges[(\PhpFuzz\FuzzingContext::$prev << 28) | 16909311] ?? 0) + 1; \PhpFuzz\FuzzingContext::$prev = 16909311; |
Open Trace: |\PhpFuzz\traceBlock("\xff\x03\x02\x01", |
Open EdgeMap: |\PhpFuzz\countEdge(16909311, |
OpenYield Trace: |\PhpFuzz\traceBlock("\xff\x03\x02\x01", (|
OpenYield EdgeMap: |\PhpFuzz\countEdge(16909311, (|
OpenTruthy Trace: |\PhpFuzz\traceTruthy("\xff\x03\x02\x01", |
OpenTruthy EdgeMap: |\PhpFuzz\countEdgeIfTruthy(16909311, |
CloseYield Trace: |))|
CloseYield EdgeMap: |))|
CloseCondition Trace: |) ? (\PhpFuzz\FuzzingContext::$trace .= "\xff\x03\x02\x01") !== '' : (\PhpFuzz\FuzzingContext::$trace .= "\xff\x03\x02\x01") === '')|
CloseCondition EdgeMap: |) ? \PhpFuzz\countEdge(16909311, true) : \PhpFuzz\countEdge(16909311, false))|
"#;

    #[test]
    fn comparison_pieces_call_the_cmplog_runtime() {
        let source = br"$a === 'x\'y' || in_array($b, [1, 'z'])";
        let lists = [(31, 32), (34, 37)];
        let text = |piece: CmpPiece| {
            let mut out = Vec::new();
            piece.write(&mut out, 12, source, &lists);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            text(CmpPiece::Open(CmpCall::Literal)),
            r"\PhpFuzz\CmpLog::literal(12, "
        );
        assert_eq!(
            text(CmpPiece::CloseLiteral {
                start: 7,
                end: 13,
                kind: cmp_kind::EQUAL
            }),
            r", 'x\'y', 0)"
        );
        assert_eq!(
            text(CmpPiece::CloseKind(cmp_kind::ORDER | cmp_kind::CASE)),
            ", 9)"
        );
        assert_eq!(
            text(CmpPiece::CloseList { first: 0, count: 2 }),
            ", [1, 'z'])"
        );
        assert_eq!(text(CmpPiece::CloseList { first: 0, count: 0 }), ", [])");
        assert_eq!(
            text(CmpPiece::Open(CmpCall::Against)),
            r"\PhpFuzz\CmpLog::against(12, "
        );
    }

    #[test]
    fn no_stub_contains_a_line_break() {
        let pieces = [
            Piece::Counter,
            Piece::BraceCounter,
            Piece::BraceClose,
            Piece::Terminator,
            Piece::Open,
            Piece::OpenYield,
            Piece::OpenTruthy,
            Piece::OpenCondition,
            Piece::CloseCondition,
            Piece::Close,
            Piece::CloseYield,
        ];
        for style in [StubStyle::Trace, StubStyle::EdgeMap] {
            for piece in pieces {
                for id in [1, 10, 0x0a0d, crate::MAX_BLOCK_ID] {
                    let t = text(piece, style, id);
                    assert!(!t.contains(['\n', '\r']), "{piece:?} {style:?} {id}: {t:?}");
                }
            }
        }
    }
}

/// The hook a sink wrapper calls (`php-runtime/internal/Sinks.php`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SinkCall {
    /// The code of `eval`.
    EvalCode,
    /// The path of `include` and its kin.
    IncludePath,
    /// The class of `new $x` and `$x::m()`.
    ClassName,
    /// The callee of `$f(…)`, `call_user_func($f, …)`.
    Callee,
    /// An XML document a parser is about to read (a guide, cmplog only).
    XmlDocument,
    /// The data of `unserialize($data)`.
    Serialized,
    /// The data of `unserialize($data, $options)`, checked with…
    SerializedData,
    /// …its options.
    SerializedOptions,
    /// A callable a function will call (`array_map`, `usort`…).
    Callback,
}

impl SinkCall {
    fn name(self) -> &'static [u8] {
        match self {
            SinkCall::EvalCode => b"evalCode",
            SinkCall::IncludePath => b"includePath",
            SinkCall::ClassName => b"className",
            SinkCall::Callee => b"callee",
            SinkCall::XmlDocument => b"xmlDocument",
            SinkCall::Serialized => b"serialized",
            SinkCall::SerializedData => b"serializedData",
            SinkCall::SerializedOptions => b"serializedOptions",
            SinkCall::Callback => b"callback",
        }
    }
}

/// What one sink insertion adds (every rendering; guides in `cmplog` only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SinkPiece {
    /// `\PhpFuzz\Sink\` (or `\PhpFuzz\Sink\Strict\`) before the name of a
    /// hooked function; before `\exec`, without its last backslash.
    Namespace { strict: bool, qualified: bool },
    /// `\PhpFuzz\Sink\HOOK(` before a value.
    Open(SinkCall),
    /// `(\PhpFuzz\Sink\HOOK(` before a class or callee.
    OpenParenthesized(SinkCall),
    /// `)` after an `Open` value.
    Close,
    /// Before a `preg_*` call: `((\PhpFuzz\Sink\Regex::$result = ` for one
    /// that fails with `false`, `(` for one that fails with `null`.
    OpenRegex { nulls: bool },
    /// After it: `) === false ? \PhpFuzz\Sink\regexFailed('NAME') :
    /// \PhpFuzz\Sink\Regex::$result)`, or ` ?? \PhpFuzz\Sink\regexFailed('NAME'))`.
    CloseRegex { name: &'static str, nulls: bool },
    /// `))` after an `OpenParenthesized` one.
    CloseParenthesized,
    /// `text` in place of the next `skip` source bytes (backticks).
    Replace { skip: u8, text: &'static [u8] },
}

impl SinkPiece {
    /// Whether the text starts with a name, which must not run into a
    /// name before it (`include\PhpFuzz\…` would be one qualified name).
    pub(crate) fn starts_with_name(self) -> bool {
        match self {
            SinkPiece::Namespace { .. } | SinkPiece::Open(_) => true,
            SinkPiece::Replace { text, .. } => text.starts_with(b"\\PhpFuzz"),
            _ => false,
        }
    }

    /// How many source bytes the piece stands in for.
    pub(crate) fn skip(self) -> usize {
        match self {
            SinkPiece::Replace { skip, .. } => usize::from(skip),
            _ => 0,
        }
    }

    pub(crate) fn write(self, out: &mut Vec<u8>) {
        match self {
            SinkPiece::Namespace { strict, qualified } => {
                out.extend_from_slice(if strict {
                    b"\\PhpFuzz\\Sink\\Strict"
                } else {
                    b"\\PhpFuzz\\Sink"
                });
                if !qualified {
                    out.push(b'\\');
                }
            }
            SinkPiece::Open(call) => {
                out.extend_from_slice(b"\\PhpFuzz\\Sink\\");
                out.extend_from_slice(call.name());
                out.push(b'(');
            }
            SinkPiece::OpenRegex { nulls: true } => out.push(b'('),
            SinkPiece::OpenRegex { nulls: false } => {
                out.extend_from_slice(b"((\\PhpFuzz\\Sink\\Regex::$result = ");
            }
            SinkPiece::CloseRegex { name, nulls } => {
                out.extend_from_slice(if nulls {
                    b" ?? \\PhpFuzz\\Sink\\regexFailed('"
                } else {
                    b") === false ? \\PhpFuzz\\Sink\\regexFailed('"
                });
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(if nulls {
                    b"'))"
                } else {
                    b"') : \\PhpFuzz\\Sink\\Regex::$result)"
                });
            }
            SinkPiece::OpenParenthesized(call) => {
                out.extend_from_slice(b"(\\PhpFuzz\\Sink\\");
                out.extend_from_slice(call.name());
                out.push(b'(');
            }
            SinkPiece::Close => out.push(b')'),
            SinkPiece::CloseParenthesized => out.extend_from_slice(b"))"),
            SinkPiece::Replace { text, .. } => out.extend_from_slice(text),
        }
    }
}
