//! tree-sitter-php node kinds and fields, resolved once to small integers so
//! the walk compares numbers instead of strings.

use std::num::NonZeroU16;
use std::sync::OnceLock;

use tree_sitter::{Language, Node};

/// The node kinds the instrumenter looks at; everything else is `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeKind {
    Other,
    // Structure.
    Program,
    PhpTag,
    PhpEndTag,
    TextInterpolation,
    Text,
    // Statements and their parts.
    CompoundStatement,
    ColonBlock,
    IfStatement,
    ElseIfClause,
    ElseClause,
    WhileStatement,
    DoStatement,
    ForStatement,
    ForeachStatement,
    SwitchStatement,
    SwitchBlock,
    CaseStatement,
    DefaultStatement,
    TryStatement,
    CatchClause,
    FinallyClause,
    NamedLabelStatement,
    NamespaceDefinition,
    DeclareStatement,
    DeclareDirective,
    ExpressionStatement,
    EmptyStatement,
    // Functions and classes.
    FunctionDefinition,
    MethodDeclaration,
    AnonymousFunction,
    ArrowFunction,
    PropertyDeclaration,
    PropertyElement,
    PropertyHook,
    PropertyPromotionParameter,
    SimpleParameter,
    VariadicParameter,
    ClassDeclaration,
    InterfaceDeclaration,
    TraitDeclaration,
    EnumDeclaration,
    AnonymousClass,
    // Constant-expression contexts.
    ConstElement,
    StaticVariableDeclaration,
    EnumCase,
    AttributeList,
    // Expressions.
    BinaryExpression,
    AugmentedAssignmentExpression,
    ConditionalExpression,
    MatchConditionalExpression,
    MatchDefaultExpression,
    YieldExpression,
    ThrowExpression,
    FunctionCallExpression,
    Argument,
    Name,
    MatchExpression,
    MatchConditionList,
    ParenthesizedExpression,
    UnaryOpExpression,
    ArrayCreationExpression,
    ArrayElementInitializer,
    Arguments,
    VariadicUnpacking,
    VariadicPlaceholder,
    QualifiedName,
    SubscriptExpression,
    ClassConstantAccessExpression,
    RelativeScope,
    // Sinks of the bug detectors.
    IncludeExpression,
    ShellCommandExpression,
    ObjectCreationExpression,
    ScopedCallExpression,
    MemberCallExpression,
    NamespaceUseDeclaration,
    // Literals.
    String,
    EncapsedString,
    StringContent,
    EscapeSequence,
    Integer,
    Float,
    Boolean,
    Null,
    // Tokens.
    LBrace,
    RBrace,
    Colon,
    Semicolon,
    RParen,
    FatArrow,
    Question,
    AndAnd,
    OrOr,
    And,
    Or,
    Coalesce,
    CoalesceAssign,
    Identical,
    Equal,
    NotIdentical,
    NotEqual,
    NotEqualAlt,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Spaceship,
    Minus,
    Plus,
}

/// Named node kinds, by their grammar name.
const NAMED: &[(&str, NodeKind)] = &[
    ("program", NodeKind::Program),
    ("php_tag", NodeKind::PhpTag),
    ("php_end_tag", NodeKind::PhpEndTag),
    ("text_interpolation", NodeKind::TextInterpolation),
    ("text", NodeKind::Text),
    ("compound_statement", NodeKind::CompoundStatement),
    ("colon_block", NodeKind::ColonBlock),
    ("if_statement", NodeKind::IfStatement),
    ("else_if_clause", NodeKind::ElseIfClause),
    ("else_clause", NodeKind::ElseClause),
    ("while_statement", NodeKind::WhileStatement),
    ("do_statement", NodeKind::DoStatement),
    ("for_statement", NodeKind::ForStatement),
    ("foreach_statement", NodeKind::ForeachStatement),
    ("switch_statement", NodeKind::SwitchStatement),
    ("switch_block", NodeKind::SwitchBlock),
    ("case_statement", NodeKind::CaseStatement),
    ("default_statement", NodeKind::DefaultStatement),
    ("try_statement", NodeKind::TryStatement),
    ("catch_clause", NodeKind::CatchClause),
    ("finally_clause", NodeKind::FinallyClause),
    ("named_label_statement", NodeKind::NamedLabelStatement),
    ("namespace_definition", NodeKind::NamespaceDefinition),
    ("declare_statement", NodeKind::DeclareStatement),
    ("declare_directive", NodeKind::DeclareDirective),
    ("expression_statement", NodeKind::ExpressionStatement),
    ("empty_statement", NodeKind::EmptyStatement),
    ("function_definition", NodeKind::FunctionDefinition),
    ("method_declaration", NodeKind::MethodDeclaration),
    ("anonymous_function", NodeKind::AnonymousFunction),
    ("arrow_function", NodeKind::ArrowFunction),
    ("property_declaration", NodeKind::PropertyDeclaration),
    ("property_element", NodeKind::PropertyElement),
    ("property_hook", NodeKind::PropertyHook),
    (
        "property_promotion_parameter",
        NodeKind::PropertyPromotionParameter,
    ),
    ("simple_parameter", NodeKind::SimpleParameter),
    ("variadic_parameter", NodeKind::VariadicParameter),
    ("class_declaration", NodeKind::ClassDeclaration),
    ("interface_declaration", NodeKind::InterfaceDeclaration),
    ("trait_declaration", NodeKind::TraitDeclaration),
    ("enum_declaration", NodeKind::EnumDeclaration),
    ("anonymous_class", NodeKind::AnonymousClass),
    ("const_element", NodeKind::ConstElement),
    (
        "static_variable_declaration",
        NodeKind::StaticVariableDeclaration,
    ),
    ("enum_case", NodeKind::EnumCase),
    ("attribute_list", NodeKind::AttributeList),
    ("binary_expression", NodeKind::BinaryExpression),
    (
        "augmented_assignment_expression",
        NodeKind::AugmentedAssignmentExpression,
    ),
    ("conditional_expression", NodeKind::ConditionalExpression),
    (
        "match_conditional_expression",
        NodeKind::MatchConditionalExpression,
    ),
    ("match_default_expression", NodeKind::MatchDefaultExpression),
    ("yield_expression", NodeKind::YieldExpression),
    ("throw_expression", NodeKind::ThrowExpression),
    ("function_call_expression", NodeKind::FunctionCallExpression),
    ("argument", NodeKind::Argument),
    ("name", NodeKind::Name),
    ("match_expression", NodeKind::MatchExpression),
    ("match_condition_list", NodeKind::MatchConditionList),
    (
        "parenthesized_expression",
        NodeKind::ParenthesizedExpression,
    ),
    ("unary_op_expression", NodeKind::UnaryOpExpression),
    (
        "array_creation_expression",
        NodeKind::ArrayCreationExpression,
    ),
    (
        "array_element_initializer",
        NodeKind::ArrayElementInitializer,
    ),
    ("arguments", NodeKind::Arguments),
    ("variadic_unpacking", NodeKind::VariadicUnpacking),
    ("variadic_placeholder", NodeKind::VariadicPlaceholder),
    ("qualified_name", NodeKind::QualifiedName),
    ("subscript_expression", NodeKind::SubscriptExpression),
    (
        "class_constant_access_expression",
        NodeKind::ClassConstantAccessExpression,
    ),
    ("relative_scope", NodeKind::RelativeScope),
    ("include_expression", NodeKind::IncludeExpression),
    ("include_once_expression", NodeKind::IncludeExpression),
    ("require_expression", NodeKind::IncludeExpression),
    ("require_once_expression", NodeKind::IncludeExpression),
    ("shell_command_expression", NodeKind::ShellCommandExpression),
    (
        "object_creation_expression",
        NodeKind::ObjectCreationExpression,
    ),
    ("scoped_call_expression", NodeKind::ScopedCallExpression),
    ("member_call_expression", NodeKind::MemberCallExpression),
    (
        "namespace_use_declaration",
        NodeKind::NamespaceUseDeclaration,
    ),
    ("string", NodeKind::String),
    ("encapsed_string", NodeKind::EncapsedString),
    ("string_content", NodeKind::StringContent),
    ("escape_sequence", NodeKind::EscapeSequence),
    ("integer", NodeKind::Integer),
    ("float", NodeKind::Float),
    ("boolean", NodeKind::Boolean),
    ("null", NodeKind::Null),
];

/// Anonymous node kinds (tokens), by their text.
const TOKENS: &[(&str, NodeKind)] = &[
    ("{", NodeKind::LBrace),
    ("}", NodeKind::RBrace),
    (":", NodeKind::Colon),
    (";", NodeKind::Semicolon),
    (")", NodeKind::RParen),
    ("=>", NodeKind::FatArrow),
    ("?", NodeKind::Question),
    ("&&", NodeKind::AndAnd),
    ("||", NodeKind::OrOr),
    ("and", NodeKind::And),
    ("or", NodeKind::Or),
    ("??", NodeKind::Coalesce),
    ("??=", NodeKind::CoalesceAssign),
    ("===", NodeKind::Identical),
    ("==", NodeKind::Equal),
    ("!==", NodeKind::NotIdentical),
    ("!=", NodeKind::NotEqual),
    ("<>", NodeKind::NotEqualAlt),
    ("<", NodeKind::Less),
    ("<=", NodeKind::LessEqual),
    (">", NodeKind::Greater),
    (">=", NodeKind::GreaterEqual),
    ("<=>", NodeKind::Spaceship),
    ("-", NodeKind::Minus),
    ("+", NodeKind::Plus),
];

/// Subtrees of names, types, literals and imports: no statement, no
/// expression to wrap inside. (Not `name`: `$o->{expr}` makes an expression
/// a `name`.)
const OPAQUE: &[&str] = &[
    "variable_name",
    "qualified_name",
    "relative_name",
    "namespace_name",
    "namespace_use_declaration",
    "string",
    "integer",
    "float",
    "boolean",
    "null",
    "nowdoc",
    "named_type",
    "optional_type",
    "primitive_type",
    "union_type",
    "intersection_type",
    "disjunctive_normal_form_type",
    "type_list",
    "cast_type",
    "visibility_modifier",
    "static_modifier",
    "abstract_modifier",
    "final_modifier",
    "readonly_modifier",
    "var_modifier",
    "reference_modifier",
];

/// Statements, and the clauses and blocks that end them. A statement is
/// terminated (by `;`, `}` or a label's `:`) only if the chain of last
/// children from it down to that token runs through these kinds alone: a `}`
/// reached through an expression (a closure, a `match`) ends an expression.
const STATEMENT_CHAIN: &[&str] = &[
    "break_statement",
    "case_statement",
    "catch_clause",
    "class_declaration",
    "colon_block",
    "compound_statement",
    "const_declaration",
    "continue_statement",
    "declaration_list",
    "declare_statement",
    "default_statement",
    "do_statement",
    "echo_statement",
    "else_clause",
    "else_if_clause",
    "empty_statement",
    "enum_declaration",
    "enum_declaration_list",
    "exit_statement",
    "expression_statement",
    "finally_clause",
    "for_statement",
    "foreach_statement",
    "function_definition",
    "function_static_declaration",
    "global_declaration",
    "goto_statement",
    "if_statement",
    "interface_declaration",
    "named_label_statement",
    "namespace_definition",
    "namespace_use_declaration",
    "return_statement",
    "switch_block",
    "switch_statement",
    "trait_declaration",
    "try_statement",
    "unset_statement",
    "while_statement",
];

/// Field ids of the fields the instrumenter reads.
pub(crate) struct Fields {
    pub body: NonZeroU16,
    pub condition: NonZeroU16,
    pub alternative: NonZeroU16,
    pub right: NonZeroU16,
    pub operator: NonZeroU16,
    pub return_expression: NonZeroU16,
    pub name: NonZeroU16,
    pub reference_modifier: NonZeroU16,
    pub function: NonZeroU16,
    pub arguments: NonZeroU16,
    pub left: NonZeroU16,
    pub value: NonZeroU16,
    pub argument: NonZeroU16,
    pub conditional_expressions: NonZeroU16,
}

/// tree-sitter-php as the instrumenter sees it: per node kind id, its
/// [`NodeKind`] and the sets it belongs to.
pub(crate) struct Grammar {
    pub language: Language,
    kinds: Vec<NodeKind>,
    /// Kinds that may sit on the last-child chain between a statement and the
    /// token that terminates it (see `Analyzer::terminated_end`).
    statement_chain: Vec<bool>,
    /// Kinds whose subtrees hold nothing to instrument: the walk does not
    /// enter them.
    opaque: Vec<bool>,
    pub fields: Fields,
}

impl Grammar {
    pub fn get() -> &'static Grammar {
        static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
        GRAMMAR.get_or_init(Grammar::build)
    }

    #[inline]
    pub fn kind(&self, node: Node<'_>) -> NodeKind {
        self.kinds
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(NodeKind::Other)
    }

    #[inline]
    pub fn is_opaque(&self, node: Node<'_>) -> bool {
        self.opaque
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(false)
    }

    #[inline]
    pub fn in_statement_chain(&self, node: Node<'_>) -> bool {
        self.statement_chain
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(false)
    }

    /// `node`'s first child of `kind`.
    pub fn child_of_kind<'t>(&self, node: Node<'t>, kind: NodeKind) -> Option<Node<'t>> {
        let mut cursor = node.walk();
        node.children(&mut cursor).find(|c| self.kind(*c) == kind)
    }

    fn build() -> Grammar {
        let language: Language = tree_sitter_php::LANGUAGE_PHP.into();
        let count = language.node_kind_count();
        let mut kinds = vec![NodeKind::Other; count];
        let mut statement_chain = vec![false; count];
        let mut opaque = vec![false; count];
        for id in 0..count {
            let Ok(id16) = u16::try_from(id) else { break };
            let Some(name) = language.node_kind_for_id(id16) else {
                continue;
            };
            let named = language.node_kind_is_named(id16);
            let table = if named { NAMED } else { TOKENS };
            kinds[id] = lookup(table, name).unwrap_or(NodeKind::Other);
            statement_chain[id] = named && STATEMENT_CHAIN.contains(&name);
            opaque[id] = named && OPAQUE.contains(&name);
        }
        let field = |name: &str| {
            language
                .field_id_for_name(name)
                .unwrap_or_else(|| panic!("tree-sitter-php has no field `{name}`"))
        };
        let fields = Fields {
            body: field("body"),
            condition: field("condition"),
            alternative: field("alternative"),
            right: field("right"),
            operator: field("operator"),
            return_expression: field("return_expression"),
            name: field("name"),
            reference_modifier: field("reference_modifier"),
            function: field("function"),
            arguments: field("arguments"),
            left: field("left"),
            value: field("value"),
            argument: field("argument"),
            conditional_expressions: field("conditional_expressions"),
        };
        Grammar {
            language,
            kinds,
            statement_chain,
            opaque,
            fields,
        }
    }
}

fn lookup(table: &[(&str, NodeKind)], name: &str) -> Option<NodeKind> {
    table
        .iter()
        .find(|(entry, _)| *entry == name)
        .map(|&(_, kind)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_the_instrumenter_names_exists_in_the_grammar() {
        let grammar = Grammar::get();
        let language = &grammar.language;
        let kinds: Vec<(&str, bool)> = (0..language.node_kind_count())
            .filter_map(|id| u16::try_from(id).ok())
            .filter_map(|id| {
                let name = language.node_kind_for_id(id)?;
                Some((name, language.node_kind_is_named(id)))
            })
            .collect();
        let named = |name: &&str| kinds.contains(&(*name, true));
        let token = |name: &&str| kinds.contains(&(*name, false));
        for name in STATEMENT_CHAIN.iter().chain(OPAQUE) {
            assert!(named(name), "grammar has no node kind `{name}`");
        }
        for (name, _) in NAMED {
            assert!(named(name), "grammar has no node kind `{name}`");
        }
        for (name, _) in TOKENS {
            assert!(token(name), "grammar has no token `{name}`");
        }
        for expected in [
            NodeKind::Program,
            NodeKind::TextInterpolation,
            NodeKind::IfStatement,
            NodeKind::ColonBlock,
            NodeKind::PropertyHook,
            NodeKind::YieldExpression,
            NodeKind::LBrace,
            NodeKind::Coalesce,
            NodeKind::CoalesceAssign,
            NodeKind::And,
        ] {
            assert!(
                grammar.kinds.contains(&expected),
                "no node kind maps to {expected:?}"
            );
        }
    }
}
