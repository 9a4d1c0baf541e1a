//! Where the walk is: in which statement list, function, class and
//! namespace, and whether calls are allowed there.
//!
//! Every frame is opened by a node at some depth of the walk and closed when
//! the walk leaves that node.

use std::num::NonZeroU16;

use tree_sitter::Node;

use crate::grammar::{Grammar, NodeKind};

/// The node the walk is inside of, as the code planning its children needs it.
#[derive(Clone, Copy)]
struct Parent {
    kind: NodeKind,
    /// Its statement children form a list where a statement may be added.
    is_list: bool,
}

pub(super) struct Scope<'s> {
    source: &'s [u8],
    grammar: &'static Grammar,
    parents: Vec<Parent>,
    /// (depth of the node that opened it, calls allowed?) — constant
    /// expressions (defaults, constants, attributes…) allow no calls.
    const_frames: Vec<(u32, bool)>,
    /// (depth, index into `names`).
    function_frames: Vec<(u32, u32)>,
    /// Every function the walk entered, named as PHP names it.
    names: Vec<String>,
    class_frames: Vec<(u32, String)>,
    /// (depth of a braced namespace, namespace outside it).
    namespace_frames: Vec<(u32, String)>,
    namespace: String,
    /// The property whose declaration the walk is in, for naming hooks.
    property: String,
    /// Depths of the `assert(…)` calls the walk is in. PHP builds an
    /// assertion's message from the source of its arguments, so nothing
    /// inside them may change.
    assert_frames: Vec<u32>,
}

impl<'s> Scope<'s> {
    pub fn new(source: &'s [u8], grammar: &'static Grammar) -> Self {
        Scope {
            source,
            grammar,
            parents: Vec::new(),
            const_frames: Vec::new(),
            function_frames: Vec::new(),
            names: Vec::new(),
            class_frames: Vec::new(),
            namespace_frames: Vec::new(),
            namespace: String::new(),
            property: String::new(),
            assert_frames: Vec::new(),
        }
    }

    /// The names of the functions entered, indexed by [`Scope::function`].
    pub fn into_names(self) -> Vec<String> {
        self.names
    }

    /// Opens the frames `node` opens. Called before its blocks are planned,
    /// so that a function's own blocks belong to it.
    #[inline]
    pub fn enter(&mut self, node: Node<'_>, kind: NodeKind, depth: u32) {
        let fields = &self.grammar.fields;
        match kind {
            NodeKind::NamespaceDefinition => self.namespace_definition(node, depth),
            NodeKind::ClassDeclaration
            | NodeKind::InterfaceDeclaration
            | NodeKind::TraitDeclaration
            | NodeKind::EnumDeclaration => {
                let name = self.field_text(node, fields.name);
                let qualified = self.qualify(&name);
                self.class_frames.push((depth, qualified));
            }
            NodeKind::AnonymousClass => self
                .class_frames
                .push((depth, "class@anonymous".to_string())),
            NodeKind::FunctionDefinition => {
                let name = self.field_text(node, fields.name);
                let qualified = self.qualify(&name);
                self.enter_function(depth, qualified);
            }
            NodeKind::MethodDeclaration => {
                let method = self.field_text(node, fields.name);
                let name = match self.class_frames.last() {
                    Some((_, class)) => format!("{class}::{method}"),
                    None => method,
                };
                self.enter_function(depth, name);
            }
            NodeKind::AnonymousFunction | NodeKind::ArrowFunction => {
                self.enter_function(depth, "{closure}".to_string());
            }
            NodeKind::PropertyHook => {
                let class = self.class_frames.last().map(|c| c.1.as_str()).unwrap_or("");
                let hook = self.text(self.grammar.child_of_kind(node, NodeKind::Name));
                let name = format!("{class}::{}::{hook}", self.property);
                self.enter_function(depth, name);
            }
            NodeKind::PropertyDeclaration => {
                let element = self.grammar.child_of_kind(node, NodeKind::PropertyElement);
                self.property = element
                    .map(|e| self.field_text(e, fields.name))
                    .unwrap_or_default();
            }
            NodeKind::PropertyPromotionParameter => {
                self.property = self.field_text(node, fields.name);
                // Its default is a constant expression; its hooks (PHP 8.4)
                // are functions, which allow calls again.
                self.const_frames.push((depth, false));
            }
            // Parameter and property defaults are constant expressions.
            NodeKind::SimpleParameter | NodeKind::VariadicParameter | NodeKind::PropertyElement => {
                self.const_frames.push((depth, false))
            }
            NodeKind::ConstElement
            | NodeKind::StaticVariableDeclaration
            | NodeKind::EnumCase
            | NodeKind::AttributeList
            | NodeKind::DeclareDirective => {
                self.const_frames.push((depth, false));
            }
            NodeKind::FunctionCallExpression if self.is_assert_call(node) => {
                self.assert_frames.push(depth)
            }
            _ => {}
        }
    }

    /// Makes the node just entered the parent of the nodes under it.
    #[inline]
    pub fn push_parent(&mut self, kind: NodeKind, is_list: bool) {
        self.parents.push(Parent { kind, is_list });
    }

    /// Closes what the node at `depth` opened, once the walk leaves it.
    #[inline]
    pub fn leave(&mut self, depth: u32) {
        self.parents.pop();
        // One node may open several frames of a kind (a parameter that is
        // promoted and hooked opens two const frames), so pop all of this depth.
        while self.const_frames.last().is_some_and(|f| f.0 == depth) {
            self.const_frames.pop();
        }
        while self.function_frames.last().is_some_and(|f| f.0 == depth) {
            self.function_frames.pop();
        }
        while self.class_frames.last().is_some_and(|f| f.0 == depth) {
            self.class_frames.pop();
        }
        if self.assert_frames.last() == Some(&depth) {
            self.assert_frames.pop();
        }
        while let Some((frame_depth, _)) = self.namespace_frames.last()
            && *frame_depth == depth
            && let Some((_, outer)) = self.namespace_frames.pop()
        {
            self.namespace = outer;
        }
    }

    /// The kind of the node the walk is inside of.
    pub fn parent_kind(&self) -> Option<NodeKind> {
        self.parents.last().map(|p| p.kind)
    }

    /// Whether the node being entered sits in a statement list.
    pub fn in_statement_list(&self) -> bool {
        self.parents.last().is_some_and(|p| p.is_list)
    }

    /// Whether calls are not allowed here: the walk is in a constant
    /// expression, and not in a closure inside one.
    pub fn in_const_expression(&self) -> bool {
        self.const_frames.last().is_some_and(|f| !f.1)
    }

    /// The function the walk is in, as an index into the names.
    pub fn function(&self) -> Option<u32> {
        self.function_frames.last().map(|f| f.1)
    }

    /// Whether the walk is inside a namespace.
    pub fn in_namespace(&self) -> bool {
        !self.namespace.is_empty()
    }

    /// Whether the walk is in the arguments of an `assert(…)`.
    pub fn in_assert(&self) -> bool {
        !self.assert_frames.is_empty()
    }

    fn enter_function(&mut self, depth: u32, name: String) {
        let index = self.names.len() as u32;
        self.names.push(name);
        self.function_frames.push((depth, index));
        // A closure's body may call functions even where its declaration
        // sits in a constant expression (PHP 8.5 allows static closures there).
        self.const_frames.push((depth, true));
    }

    fn namespace_definition(&mut self, node: Node<'_>, depth: u32) {
        let name = self.field_text(node, self.grammar.fields.name);
        if node
            .child_by_field_id(self.grammar.fields.body.get())
            .is_some()
        {
            let outer = std::mem::replace(&mut self.namespace, name);
            self.namespace_frames.push((depth, outer));
        } else {
            self.namespace = name;
        }
    }

    fn qualify(&self, name: &str) -> String {
        if self.namespace.is_empty() {
            name.to_string()
        } else {
            format!("{}\\{name}", self.namespace)
        }
    }

    /// `assert(…)`, `\assert(…)`, `namespace\assert(…)`: PHP compiles
    /// these specially (and a user function named `Foo\assert` loses only
    /// its coverage).
    fn is_assert_call(&self, call: Node<'_>) -> bool {
        call.child_by_field_id(self.grammar.fields.function.get())
            .and_then(|f| self.source.get(f.byte_range()))
            .is_some_and(|name| {
                let last = name.rsplit(|&b| b == b'\\').next().unwrap_or(name);
                last.eq_ignore_ascii_case(b"assert")
            })
    }

    fn field_text(&self, node: Node<'_>, field: NonZeroU16) -> String {
        self.text(node.child_by_field_id(field.get()))
    }

    /// The source of `node` as a string, empty when there is no node.
    fn text(&self, node: Option<Node<'_>>) -> String {
        node.and_then(|n| self.source.get(n.byte_range()))
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .unwrap_or_default()
    }
}
