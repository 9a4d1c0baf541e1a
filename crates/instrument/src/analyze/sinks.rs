//! Sinks of the bug detectors (docs/detectors.md): the calls whose
//! arguments the detectors check, rewritten so that the check runs first.
//!
//! Every rewrite keeps the call exactly equivalent for a value that is no
//! attack, and keeps every line where it was:
//! - **renames**: a call to a global sink function that must be stopped
//!   before it runs (`exec`, `fsockopen`, …) goes to the hook of the same
//!   name and signature in `\PhpFuzz\Sink\` (or `\PhpFuzz\Sink\Strict\`
//!   from a file that declares `strict_types=1`), which checks, then calls
//!   the real function. By-reference and named arguments, the return value
//!   and exceptions pass through. A name the file imports with `use
//!   function` or declares in a namespace is not the global function, and
//!   is left alone;
//! - **checked results**: a `preg_*` call stays where it is, and only its
//!   failure value (`false`, or `null` for the replacing ones) reaches a
//!   hook, which asks `preg_last_error()`: no function call while the call
//!   succeeds;
//! - **checked arguments**: `unserialize()` stays where it is, and its data
//!   (and options) go through hooks that look before it runs;
//! - **wrappers**: a value that reaches a sink which cannot be renamed (the
//!   code of `eval`, the path of `include`, the class of `new $x`, the
//!   callee of `$f(…)` and `call_user_func`) goes through a hook that
//!   checks it and returns it unchanged;
//! - **backticks** become a call to the `shell_exec` hook, with the
//!   command's text as a double-quoted string (same interpolation);
//! - **guides** (the `cmplog` rendering only): an XML document passed to
//!   `->loadXML()` or `->XML()` goes through a hook that logs comparisons
//!   steering the input toward the XXE canary.
//!
//! File operations, XML entity loading and network streams are hooked at
//! run time (stream wrappers, libxml's entity loader); the calls that reach
//! them only add their detectors' words to the dictionary here.

use php_fuzz_detectors::{Detector, DetectorSet};
use tree_sitter::Node;

use super::{Analyzer, Rank};
use crate::grammar::NodeKind;
use crate::stub::{SinkCall, SinkPiece};

/// What the sink pass found in a file.
#[derive(Debug, Default)]
pub(crate) struct Sinks {
    /// The detectors whose sinks the file calls (for the dictionary).
    pub seen: DetectorSet,
    /// Insertions rendered in every rendering (renames until `finish`).
    pub insertions: Vec<SinkInsertion>,
    /// Rewrites of calls of global functions, by the lower-case name:
    /// dropped where the name is not the global function.
    pub(super) pending: Vec<(&'static str, SinkInsertion)>,
    /// Lower-case names that are not the global function here.
    shadowed: Vec<Vec<u8>>,
    /// The file declares `strict_types=1`.
    pub(super) strict: bool,
    /// Classes a `use` imports under their own name, lower case.
    pub(super) imported: Vec<Vec<u8>>,
    /// Names this file gives the global classes that are sinks
    /// (`use ReflectionClass as R;`): (name used here, class), lower case.
    class_aliases: Vec<(Vec<u8>, &'static [u8])>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct SinkInsertion {
    pub offset: usize,
    pub rank: u32,
    pub piece: SinkPiece,
    /// Rendered only in the `cmplog` rendering.
    pub guide: bool,
}

impl Sinks {
    /// Keeps the renames of names that are the global function, and orders
    /// the insertions for rendering.
    pub(crate) fn finish(&mut self) {
        let shadowed = std::mem::take(&mut self.shadowed);
        for (name, insertion) in self.pending.drain(..) {
            if !shadowed.iter().any(|s| s == name.as_bytes()) {
                self.insertions.push(insertion);
            }
        }
        self.insertions
            .sort_by_key(|insertion| (insertion.offset, insertion.rank));
    }
}

/// How a global function is a sink.
enum SinkFunction {
    /// Renamed to the hook of the same name.
    Hooked(Detector, &'static str),
    /// Its first argument is wrapped.
    FirstArgument(Detector, SinkCall),
    /// Its result is checked (`preg_*`).
    Result(Detector, &'static str),
    /// `unserialize()`: its arguments are checked.
    Unserialize,
    /// Not rewritten (a run-time hook sees it): its detectors' words only.
    Seen(&'static [Detector]),
}

/// Global classes whose objects are sinks, lower case.
const SINK_CLASSES: [&[u8]; 2] = [b"reflectionclass", b"soapclient"];

const FILE: &[Detector] = &[Detector::PathTraversal];
const FILE_OR_URL: &[Detector] = &[Detector::PathTraversal, Detector::Ssrf];
const XML: &[Detector] = &[Detector::Xxe];
const XML_FILE: &[Detector] = &[Detector::Xxe, Detector::PathTraversal, Detector::Ssrf];

fn sink_function(lower: &[u8]) -> Option<SinkFunction> {
    use Detector::*;
    use SinkFunction::*;
    Some(match lower {
        b"exec" => Hooked(CommandInjection, "exec"),
        b"system" => Hooked(CommandInjection, "system"),
        b"passthru" => Hooked(CommandInjection, "passthru"),
        b"shell_exec" => Hooked(CommandInjection, "shell_exec"),
        b"popen" => Hooked(CommandInjection, "popen"),
        b"proc_open" => Hooked(CommandInjection, "proc_open"),
        b"pcntl_exec" => Hooked(CommandInjection, "pcntl_exec"),
        b"mail" => Hooked(CommandInjection, "mail"),
        b"unserialize" => Unserialize,
        b"fsockopen" => Hooked(Ssrf, "fsockopen"),
        b"pfsockopen" => Hooked(Ssrf, "pfsockopen"),
        b"stream_socket_client" => Hooked(Ssrf, "stream_socket_client"),
        b"socket_connect" => Hooked(Ssrf, "socket_connect"),
        b"curl_exec" => Hooked(Ssrf, "curl_exec"),
        b"curl_multi_add_handle" => Hooked(Ssrf, "curl_multi_add_handle"),
        b"socket_sendto" => Hooked(Ssrf, "socket_sendto"),
        b"ftp_connect" => Hooked(Ssrf, "ftp_connect"),
        b"ftp_ssl_connect" => Hooked(Ssrf, "ftp_ssl_connect"),
        b"error_log" => Hooked(CommandInjection, "error_log"),
        b"posix_mkfifo" => Hooked(PathTraversal, "posix_mkfifo"),
        b"posix_mknod" => Hooked(PathTraversal, "posix_mknod"),
        b"ini_set" => Hooked(PathTraversal, "ini_set"),
        b"ini_alter" => Hooked(PathTraversal, "ini_alter"),
        b"posix_kill" => Hooked(CommandInjection, "posix_kill"),
        b"preg_match" => Result(RegexDos, "preg_match"),
        b"preg_match_all" => Result(RegexDos, "preg_match_all"),
        b"preg_replace" => Result(RegexDos, "preg_replace"),
        b"preg_replace_callback" => Result(RegexDos, "preg_replace_callback"),
        b"preg_replace_callback_array" => Result(RegexDos, "preg_replace_callback_array"),
        b"preg_split" => Result(RegexDos, "preg_split"),
        b"preg_grep" => Result(RegexDos, "preg_grep"),
        b"preg_filter" => Result(RegexDos, "preg_filter"),
        b"symlink" => Hooked(PathTraversal, "symlink"),
        b"link" => Hooked(PathTraversal, "link"),
        b"tempnam" => Hooked(PathTraversal, "tempnam"),
        b"eval" => FirstArgument(CodeInjection, SinkCall::EvalCode),
        b"call_user_func" | b"call_user_func_array" => {
            FirstArgument(ClassInjection, SinkCall::Callee)
        }
        b"simplexml_load_string" => FirstArgument(Xxe, SinkCall::XmlDocument),
        b"simplexml_load_file" => Seen(XML_FILE),
        b"xml_parse" | b"xml_parse_into_struct" => Seen(XML),
        b"fopen" | b"file_get_contents" | b"file" | b"readfile" | b"copy" | b"get_headers" => {
            Seen(FILE_OR_URL)
        }
        b"file_put_contents" | b"is_file" | b"file_exists" | b"is_dir" | b"is_readable"
        | b"unlink" | b"rename" | b"mkdir" | b"rmdir" | b"scandir" | b"opendir" | b"touch"
        | b"parse_ini_file" | b"filesize" | b"highlight_file" | b"show_source" => Seen(FILE),
        _ => return None,
    })
}

impl Analyzer<'_> {
    /// Plans the rewrites `node` needs as a sink of a detector.
    #[inline]
    pub(super) fn plan_sinks(&mut self, node: Node<'_>, kind: NodeKind, depth: u32) {
        match kind {
            NodeKind::DeclareDirective => self.strict_types(node),
            NodeKind::FunctionDefinition if self.scope.in_namespace() => {
                if let Some(name) = node.child_by_field_id(self.grammar.fields.name.get()) {
                    let lower = self.source[name.byte_range()].to_ascii_lowercase();
                    self.sinks.shadowed.push(lower);
                }
            }
            _ if !self.may_call() => {}
            NodeKind::FunctionCallExpression => self.sink_call(node, depth),
            NodeKind::IncludeExpression => self.include_path(node, depth),
            NodeKind::ShellCommandExpression => self.backticks(node, depth),
            NodeKind::ObjectCreationExpression => {
                self.object_creation(node, depth);
                self.side_effect_class(node, depth);
            }
            NodeKind::ScopedCallExpression => {
                self.dynamic_scope(node, depth);
                self.static_side_effect(node, depth);
            }
            NodeKind::MemberCallExpression => self.xml_method(node, depth),
            _ => {}
        }
    }

    /// `use function A\exec;` and `use ReflectionClass as R;`, seen on the
    /// way past the (unwalked) declaration.
    pub(super) fn note_use_declaration(&mut self, node: Node<'_>) {
        let text = &self.source[node.byte_range()];
        let words: Vec<Vec<u8>> = text
            .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'\\' || *b >= 0x80))
            .filter(|w| !w.is_empty())
            .map(|w| w.to_ascii_lowercase())
            .collect();
        let imports = words.get(1).map(Vec::as_slice);
        if imports == Some(b"const") {
            return;
        }
        let last_segment = |w: &[u8]| w.rsplit(|b| *b == b'\\').next().unwrap_or(w).to_vec();
        for (i, word) in words.iter().enumerate().skip(1) {
            if matches!(word.as_slice(), b"function" | b"as") || words[i - 1] == b"as" {
                continue;
            }
            // `X as Y`: Y is the name this file uses.
            let alias = match (words.get(i + 1), words.get(i + 2)) {
                (Some(as_), Some(alias)) if as_ == b"as" => alias.clone(),
                _ => last_segment(word),
            };
            if imports != Some(b"function") && alias == last_segment(word) {
                self.sinks.imported.push(alias.clone());
            }
            if imports == Some(b"function") {
                self.sinks.shadowed.push(alias);
            } else if let Some(class) = SINK_CLASSES.iter().find(|class| {
                word.as_slice() == **class || word.strip_prefix(b"\\") == Some(**class)
            }) {
                self.sinks.class_aliases.push((alias, class));
            }
        }
    }

    /// Calls may be added here: not in a constant expression or `assert()`.
    fn may_call(&self) -> bool {
        !self.scope.in_const_expression() && !self.scope.in_assert()
    }

    fn strict_types(&mut self, directive: Node<'_>) {
        let compact: Vec<u8> = self.source[directive.byte_range()]
            .iter()
            .filter(|b| !b.is_ascii_whitespace())
            .map(u8::to_ascii_lowercase)
            .collect();
        if compact == b"strict_types=1" {
            self.sinks.strict = true;
        }
    }

    fn sink_call(&mut self, call: Node<'_>, depth: u32) {
        let Some(function) = call.child_by_field_id(self.grammar.fields.function.get()) else {
            return;
        };
        match self.grammar.kind(function) {
            NodeKind::Name | NodeKind::QualifiedName => {}
            // `$f(…)`, `$this->handlers[$x](…)`, `get()(…)`: a dynamic call.
            _ => return self.wrap_in_parentheses(function, depth + 1, SinkCall::Callee),
        }
        let Some(name) = self.global_function_name(function) else {
            return;
        };
        let lower = name.to_ascii_lowercase();
        let Some(sink) = sink_function(&lower) else {
            if let Some((name, at)) = super::side_effects::callback_argument(&lower) {
                self.callback_call(call, depth, name, at);
            }
            return;
        };
        match sink {
            SinkFunction::Hooked(detector, hook) => {
                self.sinks.seen.insert(detector);
                let qualified = self.source[function.start_byte()] == b'\\';
                let piece = SinkPiece::Namespace {
                    strict: self.sinks.strict,
                    qualified,
                };
                let insertion = self.sink_insertion(function.start_byte(), depth + 1, piece);
                self.sinks.pending.push((hook, insertion));
            }
            SinkFunction::Result(detector, name) => {
                self.sinks.seen.insert(detector);
                self.checked_result(call, depth, name);
            }
            SinkFunction::Unserialize => {
                self.sinks.seen.insert(Detector::ObjectInjection);
                self.unserialize(call, function, depth);
            }
            SinkFunction::FirstArgument(detector, hook) => {
                self.sinks.seen.insert(detector);
                if let Some(first) = self.plain_arguments(call).and_then(|a| a.first().copied()) {
                    let guide = hook == SinkCall::XmlDocument;
                    self.wrap_sink(first, depth + 3, hook, guide);
                }
            }
            SinkFunction::Seen(detectors) => {
                for &detector in detectors {
                    self.sinks.seen.insert(detector);
                }
            }
        }
    }

    /// `preg_match(…)` → `((\PhpFuzz\Sink\Regex::$result = preg_match(…))
    /// === false ? \PhpFuzz\Sink\regexFailed('preg_match') :
    /// \PhpFuzz\Sink\Regex::$result)`, `preg_replace(…)` → `(preg_replace(…)
    /// ?? \PhpFuzz\Sink\regexFailed('preg_replace'))`: the real call made
    /// where it was, its failure value checked afterwards.
    fn checked_result(&mut self, call: Node<'_>, depth: u32, name: &'static str) {
        if self.is_first_class_callable(call) {
            return;
        }
        let (start, end) = (call.start_byte(), call.end_byte());
        let nulls = matches!(
            name,
            "preg_replace"
                | "preg_replace_callback"
                | "preg_replace_callback_array"
                | "preg_filter"
        );
        let open = self.sink_insertion(start, depth, SinkPiece::OpenRegex { nulls });
        let mut close = self.sink_insertion(end, depth, SinkPiece::CloseRegex { name, nulls });
        close.rank = Rank::close(2 * depth + 1);
        self.sinks.pending.push((name, open));
        self.sinks.pending.push((name, close));
    }

    /// `unserialize($data[, $options])`: the data (and the options) go
    /// through hooks that look before the real call runs, where it was.
    /// Named or unpacked arguments go to the renamed hook instead.
    fn unserialize(&mut self, call: Node<'_>, function: Node<'_>, depth: u32) {
        let (data, options) = match self.plain_arguments(call).as_deref() {
            Some([data]) => (*data, None),
            Some([data, options]) => (*data, Some(*options)),
            _ => {
                let piece = SinkPiece::Namespace {
                    strict: self.sinks.strict,
                    qualified: self.source[function.start_byte()] == b'\\',
                };
                let insertion = self.sink_insertion(function.start_byte(), depth + 1, piece);
                self.sinks.pending.push(("unserialize", insertion));
                return;
            }
        };
        let hook = match options {
            None => SinkCall::Serialized,
            Some(_) => SinkCall::SerializedData,
        };
        for (node, hook) in [(Some(data), hook), (options, SinkCall::SerializedOptions)] {
            let Some(node) = node else { continue };
            let (start, end) = (node.start_byte(), node.end_byte());
            let open = self.sink_insertion(start, depth + 3, SinkPiece::Open(hook));
            let mut close = self.sink_insertion(end, depth + 3, SinkPiece::Close);
            close.rank = Rank::close(2 * (depth + 3) + 1);
            self.sinks.pending.push(("unserialize", open));
            self.sinks.pending.push(("unserialize", close));
        }
    }

    /// `f(...)`: a closure of the function, not a call.
    fn is_first_class_callable(&self, call: Node<'_>) -> bool {
        let Some(arguments) = call.child_by_field_id(self.grammar.fields.arguments.get()) else {
            return false;
        };
        let mut cursor = arguments.walk();
        arguments
            .named_children(&mut cursor)
            .any(|c| self.grammar.kind(c) == NodeKind::VariadicPlaceholder)
    }

    /// `include EXPR` and its kin: the path goes through the hook.
    fn include_path(&mut self, node: Node<'_>, depth: u32) {
        self.sinks.seen.insert(Detector::CodeInjection);
        self.sinks.seen.insert(Detector::PathTraversal);
        let mut cursor = node.walk();
        let path = node.named_children(&mut cursor).find(|c| !c.is_extra());
        if let Some(path) = path {
            self.wrap_sink(path, depth + 1, SinkCall::IncludePath, false);
        }
    }

    /// `` `cmd $x` `` → `\PhpFuzz\Sink\shell_exec("cmd $x")`: the same text
    /// as a double-quoted string, which interpolates the same way.
    fn backticks(&mut self, node: Node<'_>, depth: u32) {
        self.sinks.seen.insert(Detector::CommandInjection);
        let (start, end) = (node.start_byte(), node.end_byte());
        if end < start + 2 || self.source[end - 1] != b'`' {
            return;
        }
        let open = SinkPiece::Replace {
            skip: 1,
            text: if self.sinks.strict {
                b"\\PhpFuzz\\Sink\\Strict\\shell_exec(\""
            } else {
                b"\\PhpFuzz\\Sink\\shell_exec(\""
            },
        };
        self.push_sink(start, Rank::open(2 * depth), open, false);
        let mut cursor = node.walk();
        for part in node.children(&mut cursor) {
            match self.grammar.kind(part) {
                NodeKind::StringContent => {
                    for (i, &byte) in self.source[part.byte_range()].iter().enumerate() {
                        if byte == b'"' {
                            let escape = SinkPiece::Replace {
                                skip: 1,
                                text: b"\\\"",
                            };
                            self.push_sink(part.start_byte() + i, Rank::open(0), escape, false);
                        }
                    }
                }
                NodeKind::EscapeSequence => {
                    let text = match &self.source[part.byte_range()] {
                        b"\\`" => b"`".as_slice(),
                        b"\\\"" => b"\\\\\\\"".as_slice(),
                        _ => continue,
                    };
                    let piece = SinkPiece::Replace { skip: 2, text };
                    self.push_sink(part.start_byte(), Rank::open(0), piece, false);
                }
                _ => {}
            }
        }
        let close = SinkPiece::Replace {
            skip: 1,
            text: b"\")",
        };
        self.push_sink(end - 1, Rank::close(2 * depth), close, false);
    }

    /// `new $class(…)` and `new ReflectionClass($name)`.
    fn object_creation(&mut self, node: Node<'_>, depth: u32) {
        let mut cursor = node.walk();
        let Some(class) = node
            .named_children(&mut cursor)
            .find(|c| !c.is_extra() && self.grammar.kind(*c) != NodeKind::Arguments)
        else {
            return;
        };
        match self.grammar.kind(class) {
            NodeKind::Name | NodeKind::QualifiedName => {
                // `new SoapClient(…)` → `new \PhpFuzz\Sink\SoapClient(…)`, whose
                // requests pass the detector and the side-effect rules;
                // `new ReflectionClass(…)` likewise, whose instances made
                // (`newInstance*()`) are class-injection's uses.
                let detector = match self.sink_class(class) {
                    Some(b"reflectionclass") => Detector::ClassInjection,
                    Some(_) => Detector::Ssrf,
                    None => return,
                };
                self.sinks.seen.insert(detector);
                let qualified = self.source[class.start_byte()] == b'\\';
                let piece = SinkPiece::Namespace {
                    strict: self.sinks.strict,
                    qualified,
                };
                let insertion = self.sink_insertion(class.start_byte(), depth + 1, piece);
                self.sinks.insertions.push(insertion);
            }
            _ if !self.is_dynamic_class(class) => {}
            _ => {
                self.sinks.seen.insert(Detector::ClassInjection);
                self.wrap_in_parentheses(class, depth + 1, SinkCall::ClassName);
            }
        }
    }

    /// `$class::method()`: the class goes through the hook.
    fn dynamic_scope(&mut self, node: Node<'_>, depth: u32) {
        let Some(scope) = node.named_child(0).filter(|c| !c.is_extra()) else {
            return;
        };
        if self.is_dynamic_class(scope) {
            self.sinks.seen.insert(Detector::ClassInjection);
            self.wrap_in_parentheses(scope, depth + 1, SinkCall::ClassName);
        }
    }

    /// `$doc->loadXML($xml)`, `$reader->XML($xml)`: a guide (cmplog only).
    fn xml_method(&mut self, node: Node<'_>, depth: u32) {
        let Some(name) = node.child_by_field_id(self.grammar.fields.name.get()) else {
            return;
        };
        let method = &self.source[name.byte_range()];
        if !method.eq_ignore_ascii_case(b"loadxml") && !method.eq_ignore_ascii_case(b"xml") {
            return;
        }
        self.sinks.seen.insert(Detector::Xxe);
        if let Some(first) = self.plain_arguments(node).and_then(|a| a.first().copied()) {
            self.wrap_sink(first, depth + 3, SinkCall::XmlDocument, true);
        }
    }

    /// A class expression that is computed at run time: a variable, a
    /// property, an array element, a call, a parenthesized expression.
    fn is_dynamic_class(&self, class: Node<'_>) -> bool {
        match self.grammar.kind(class) {
            NodeKind::Name
            | NodeKind::QualifiedName
            | NodeKind::RelativeScope
            | NodeKind::AnonymousClass => false,
            NodeKind::FunctionCallExpression
            | NodeKind::ParenthesizedExpression
            | NodeKind::MemberCallExpression
            | NodeKind::ScopedCallExpression => true,
            _ => self.source.get(class.start_byte()) == Some(&b'$'),
        }
    }

    /// The global class (one of [`SINK_CLASSES`]) `class` names here.
    fn sink_class(&self, class: Node<'_>) -> Option<&'static [u8]> {
        let lower = self.source[class.byte_range()].to_ascii_lowercase();
        if let Some(global) = lower.strip_prefix(b"\\") {
            return SINK_CLASSES.iter().copied().find(|c| *c == global);
        }
        if let Some((_, class)) = self.sinks.class_aliases.iter().find(|(a, _)| *a == lower) {
            return Some(class);
        }
        if self.scope.in_namespace() {
            return None;
        }
        SINK_CLASSES
            .iter()
            .copied()
            .find(|c| *c == lower.as_slice())
    }

    /// `\PhpFuzz\Sink\HOOK(` … `)` around `node` (at `depth`).
    fn wrap_sink(&mut self, node: Node<'_>, depth: u32, hook: SinkCall, guide: bool) {
        let (start, end) = (node.start_byte(), node.end_byte());
        self.push_sink(
            start,
            Rank::open(2 * depth + 1),
            SinkPiece::Open(hook),
            guide,
        );
        self.push_sink(end, Rank::close(2 * depth + 1), SinkPiece::Close, guide);
    }

    /// `(\PhpFuzz\Sink\HOOK(` … `))` around `node`: a class or callee
    /// position, where a call must be parenthesized.
    fn wrap_in_parentheses(&mut self, node: Node<'_>, depth: u32, hook: SinkCall) {
        let (start, end) = (node.start_byte(), node.end_byte());
        let open = SinkPiece::OpenParenthesized(hook);
        self.push_sink(start, Rank::open(2 * depth + 1), open, false);
        let close = SinkPiece::CloseParenthesized;
        self.push_sink(end, Rank::close(2 * depth + 1), close, false);
    }

    /// An insertion that opens something at `offset`, inside whatever else
    /// opens there for the node at `depth`.
    fn sink_insertion(&self, offset: usize, depth: u32, piece: SinkPiece) -> SinkInsertion {
        SinkInsertion {
            offset,
            rank: Rank::open(2 * depth + 1),
            piece,
            guide: false,
        }
    }

    fn push_sink(&mut self, offset: usize, rank: u32, piece: SinkPiece, guide: bool) {
        self.sinks.insertions.push(SinkInsertion {
            offset,
            rank,
            piece,
            guide,
        });
    }
}
