//! What fusion needs to know about PHP's node kinds, looked up once per
//! grammar: a role per kind id (aliases included, as the registry's flags
//! are), and the field ids it reads.

use tree_sitter::Language;

use crate::tree::NONE;
use crate::{Node, ParsedInput};

/// The part a node kind plays in fusion; most kinds play none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Other,
    /// `$name`.
    Variable,
    /// `=`, `=&` and `op=` assignments.
    Assign,
    ExpressionStatement,
    Program,
    /// `{ … }`: a function's body, a namespace's, a block.
    Compound,
    /// Other statement lists: `: … endif;`, `case 1: …`, `default: …`.
    List,
    /// A parameter that is a local: plain or variadic.
    Parameter,
    /// A constructor parameter that is also a property: never renamed.
    Promoted,
    Function,
    Method,
    Closure,
    Foreach,
    /// `$k => $v` and `&$v`, as a foreach binds them.
    Binding,
    /// Statements of a partner never spliced: namespaces, `use`, `const`,
    /// `declare`, the open tag and inline HTML.
    Skip,
    Namespace,
    /// `class` and `trait`: they may take a partner's method.
    Class,
    /// `interface` and `enum`: hoisted, never given a method.
    TypeDeclaration,
    DeclarationList,
    /// Whose `name` field holds a property, not a local.
    PropertyName,
    /// Whose `name` field a variable is defined in: `static $x`, `catch (E $x)`.
    Declares,
    StaticModifier,
    Argument,
    VariadicUnpacking,
}

const ROLES: &[(&str, Role)] = &[
    ("variable_name", Role::Variable),
    ("assignment_expression", Role::Assign),
    ("reference_assignment_expression", Role::Assign),
    ("augmented_assignment_expression", Role::Assign),
    ("expression_statement", Role::ExpressionStatement),
    ("program", Role::Program),
    ("compound_statement", Role::Compound),
    ("colon_block", Role::List),
    ("case_statement", Role::List),
    ("default_statement", Role::List),
    ("simple_parameter", Role::Parameter),
    ("variadic_parameter", Role::Parameter),
    ("property_promotion_parameter", Role::Promoted),
    ("function_definition", Role::Function),
    ("method_declaration", Role::Method),
    ("anonymous_function", Role::Closure),
    ("foreach_statement", Role::Foreach),
    ("pair", Role::Binding),
    ("by_ref", Role::Binding),
    ("namespace_use_declaration", Role::Skip),
    ("const_declaration", Role::Skip),
    ("declare_statement", Role::Skip),
    ("php_tag", Role::Skip),
    ("text_interpolation", Role::Skip),
    ("text", Role::Skip),
    ("namespace_definition", Role::Namespace),
    ("class_declaration", Role::Class),
    ("trait_declaration", Role::Class),
    ("interface_declaration", Role::TypeDeclaration),
    ("enum_declaration", Role::TypeDeclaration),
    ("declaration_list", Role::DeclarationList),
    ("scoped_property_access_expression", Role::PropertyName),
    ("property_element", Role::PropertyName),
    ("static_variable_declaration", Role::Declares),
    ("catch_clause", Role::Declares),
    ("static_modifier", Role::StaticModifier),
    ("argument", Role::Argument),
    ("variadic_unpacking", Role::VariadicUnpacking),
];

/// Roles by kind id, and the fields fusion reads.
#[derive(Debug, Clone)]
pub(super) struct Roles {
    by_kind: Box<[Role]>,
    pub left: u16,
    pub name: u16,
    pub body: u16,
    /// The kind id of `argument`.
    pub argument: u16,
}

impl Roles {
    pub fn new(language: &Language) -> Roles {
        let mut by_kind = vec![Role::Other; language.node_kind_count()];
        for (id, role) in by_kind.iter_mut().enumerate() {
            let id = id as u16;
            if !language.node_kind_is_named(id) {
                continue;
            }
            let name = language.node_kind_for_id(id).unwrap_or("");
            if let Some(&(_, found)) = ROLES.iter().find(|(kind, _)| *kind == name) {
                *role = found;
            }
        }
        let field = |name: &str| language.field_id_for_name(name).map_or(0, |id| id.get());
        Roles {
            by_kind: by_kind.into_boxed_slice(),
            left: field("left"),
            name: field("name"),
            body: field("body"),
            argument: language.id_for_node_kind("argument", true),
        }
    }

    pub fn of(&self, node: &Node) -> Role {
        self.by_kind
            .get(node.kind as usize)
            .copied()
            .unwrap_or(Role::Other)
    }

    /// The role of `index`'s parent; Other for the root.
    pub fn of_parent(&self, input: &ParsedInput, index: u32) -> Role {
        match input.node(index).parent {
            NONE => Role::Other,
            parent => self.of(input.node(parent)),
        }
    }

    pub fn is_function_like(&self, node: &Node) -> bool {
        matches!(self.of(node), Role::Function | Role::Method | Role::Closure)
    }

    /// A declaration a partner's statement list hands to the top level.
    pub fn is_hoisted(&self, node: &Node) -> bool {
        matches!(
            self.of(node),
            Role::Function | Role::Class | Role::TypeDeclaration
        )
    }

    /// A list of statements: the program, a block, a case, a colon block.
    pub fn is_statement_list(&self, node: &Node) -> bool {
        matches!(self.of(node), Role::Program | Role::Compound | Role::List)
    }
}

/// The children of `index`, in order (stored nodes only).
pub(super) fn children(input: &ParsedInput, index: u32) -> impl Iterator<Item = u32> + '_ {
    let node = input.node(index);
    let first = if node.subtree_end > index + 1 {
        index + 1
    } else {
        NONE
    };
    std::iter::successors((first != NONE).then_some(first), |&at| {
        let next = input.node(at).next_sibling;
        (next != NONE).then_some(next)
    })
}

/// The child of `index` in field `field`, if any.
pub(super) fn child_in_field(input: &ParsedInput, index: u32, field: u16) -> Option<u32> {
    if field == 0 {
        return None;
    }
    children(input, index).find(|&c| input.node(c).field == field)
}

/// Names a fused program shares with the program it came from: never
/// renamed apart (`$this`, the superglobals, and the variables PHP defines
/// in the global scope).
pub(super) fn is_global_name(name: &[u8]) -> bool {
    const GLOBALS: &[&[u8]] = &[
        b"$this",
        b"$GLOBALS",
        b"$_SERVER",
        b"$_GET",
        b"$_POST",
        b"$_FILES",
        b"$_COOKIE",
        b"$_SESSION",
        b"$_REQUEST",
        b"$_ENV",
        b"$argc",
        b"$argv",
        b"$http_response_header",
    ];
    GLOBALS.contains(&name)
}
