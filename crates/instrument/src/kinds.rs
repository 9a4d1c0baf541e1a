//! tree-sitter-php node kinds and fields, resolved once to small integers so
//! the walk compares numbers instead of strings.

use std::num::NonZeroU16;
use std::sync::OnceLock;

use tree_sitter::{Language, Node};

/// The node kinds the instrumenter looks at; everything else is `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum K {
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
    VariableName,
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
    Else,
    Do,
}

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
}

pub(crate) struct Table {
    pub language: Language,
    kinds: Vec<K>,
    /// Kinds that may sit on the last-child chain between a statement and the
    /// token that terminates it (see `Analyser::terminated`).
    statement_chain: Vec<bool>,
    /// Kinds whose subtrees hold nothing to instrument: the walk does not
    /// enter them.
    opaque: Vec<bool>,
    pub fields: Fields,
}

impl Table {
    pub fn get() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(Table::build)
    }

    #[inline]
    pub fn kind(&self, node: Node<'_>) -> K {
        self.kinds
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(K::Other)
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

    fn build() -> Table {
        let language: Language = tree_sitter_php::LANGUAGE_PHP.into();
        let count = language.node_kind_count();
        let mut kinds = vec![K::Other; count];
        let mut statement_chain = vec![false; count];
        let mut opaque = vec![false; count];
        for id in 0..count {
            let Ok(id16) = u16::try_from(id) else { break };
            let Some(name) = language.node_kind_for_id(id16) else {
                continue;
            };
            let named = language.node_kind_is_named(id16);
            kinds[id] = if named {
                named_kind(name)
            } else {
                token_kind(name)
            };
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
        };
        Table {
            language,
            kinds,
            statement_chain,
            opaque,
            fields,
        }
    }
}

fn named_kind(name: &str) -> K {
    match name {
        "program" => K::Program,
        "php_tag" => K::PhpTag,
        "php_end_tag" => K::PhpEndTag,
        "text_interpolation" => K::TextInterpolation,
        "text" => K::Text,
        "compound_statement" => K::CompoundStatement,
        "colon_block" => K::ColonBlock,
        "if_statement" => K::IfStatement,
        "else_if_clause" => K::ElseIfClause,
        "else_clause" => K::ElseClause,
        "while_statement" => K::WhileStatement,
        "do_statement" => K::DoStatement,
        "for_statement" => K::ForStatement,
        "foreach_statement" => K::ForeachStatement,
        "switch_statement" => K::SwitchStatement,
        "switch_block" => K::SwitchBlock,
        "case_statement" => K::CaseStatement,
        "default_statement" => K::DefaultStatement,
        "try_statement" => K::TryStatement,
        "catch_clause" => K::CatchClause,
        "finally_clause" => K::FinallyClause,
        "named_label_statement" => K::NamedLabelStatement,
        "namespace_definition" => K::NamespaceDefinition,
        "declare_statement" => K::DeclareStatement,
        "declare_directive" => K::DeclareDirective,
        "expression_statement" => K::ExpressionStatement,
        "empty_statement" => K::EmptyStatement,
        "function_definition" => K::FunctionDefinition,
        "method_declaration" => K::MethodDeclaration,
        "anonymous_function" => K::AnonymousFunction,
        "arrow_function" => K::ArrowFunction,
        "property_declaration" => K::PropertyDeclaration,
        "property_element" => K::PropertyElement,
        "property_hook" => K::PropertyHook,
        "property_promotion_parameter" => K::PropertyPromotionParameter,
        "simple_parameter" => K::SimpleParameter,
        "variadic_parameter" => K::VariadicParameter,
        "class_declaration" => K::ClassDeclaration,
        "interface_declaration" => K::InterfaceDeclaration,
        "trait_declaration" => K::TraitDeclaration,
        "enum_declaration" => K::EnumDeclaration,
        "anonymous_class" => K::AnonymousClass,
        "const_element" => K::ConstElement,
        "static_variable_declaration" => K::StaticVariableDeclaration,
        "enum_case" => K::EnumCase,
        "attribute_list" => K::AttributeList,
        "binary_expression" => K::BinaryExpression,
        "augmented_assignment_expression" => K::AugmentedAssignmentExpression,
        "conditional_expression" => K::ConditionalExpression,
        "match_conditional_expression" => K::MatchConditionalExpression,
        "match_default_expression" => K::MatchDefaultExpression,
        "yield_expression" => K::YieldExpression,
        "throw_expression" => K::ThrowExpression,
        "function_call_expression" => K::FunctionCallExpression,
        "argument" => K::Argument,
        "name" => K::Name,
        "variable_name" => K::VariableName,
        _ => K::Other,
    }
}

fn token_kind(name: &str) -> K {
    match name {
        "{" => K::LBrace,
        "}" => K::RBrace,
        ":" => K::Colon,
        ";" => K::Semicolon,
        ")" => K::RParen,
        "=>" => K::FatArrow,
        "?" => K::Question,
        "&&" => K::AndAnd,
        "||" => K::OrOr,
        "and" => K::And,
        "or" => K::Or,
        "??" => K::Coalesce,
        "??=" => K::CoalesceAssign,
        "else" => K::Else,
        "do" => K::Do,
        _ => K::Other,
    }
}

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

/// Whitespace as PHP's lexer has it (no form feed, no vertical tab).
pub(crate) fn is_php_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_the_instrumenter_names_exists_in_the_grammar() {
        let table = Table::get();
        let language = &table.language;
        let count = language.node_kind_count();
        let names: Vec<&str> = (0..count)
            .filter_map(|id| u16::try_from(id).ok())
            .filter_map(|id| language.node_kind_for_id(id))
            .collect();
        for name in STATEMENT_CHAIN {
            assert!(names.contains(name), "grammar has no node kind `{name}`");
        }
        let mapped: Vec<K> = table.kinds.clone();
        for expected in [
            K::Program,
            K::TextInterpolation,
            K::IfStatement,
            K::ColonBlock,
            K::PropertyHook,
            K::YieldExpression,
            K::LBrace,
            K::Coalesce,
            K::CoalesceAssign,
            K::And,
            K::Else,
            K::Do,
        ] {
            assert!(
                mapped.contains(&expected),
                "no node kind maps to {expected:?}"
            );
        }
    }
}
