//! The grammars php-fuzz knows, by name. `php` is always built in; the
//! others are cargo features of this crate (all on by default), so a
//! packager can leave out the large ones.

use tree_sitter::{Language, Parser};

use crate::GrammarError;

/// What php-fuzz knows about one grammar, before it is loaded.
#[derive(Debug)]
pub struct GrammarInfo {
    /// The name `--grammar` and `$config->setGrammar()` take.
    pub name: &'static str,
    /// One line for `php-fuzz grammars`.
    pub description: &'static str,
    /// A program grammar: inserted fragments get their identifiers renamed
    /// to ones in scope where they land (GrammarAdapt).
    pub code: bool,
    /// Node kinds that name things and may be renamed (variables).
    pub identifier_kinds: &'static [&'static str],
    /// Node kinds that open a scope for identifiers (functions).
    pub scope_kinds: &'static [&'static str],
    /// Node kinds never mutated on their own, because their text must
    /// match another node's (an HTML start tag's name and its end tag's).
    /// They still move inside larger subtrees.
    pub frozen_kinds: &'static [&'static str],
    /// Nodes any text parses as, for `--grammar auto`: their bytes do not
    /// count as parsing in this grammar. A kind, or a path of kinds from a
    /// parent down (`document>text`: text directly in the document).
    pub loose_kinds: &'static [&'static str],
    /// Takes most text without an ERROR node (HTML, YAML, Markdown):
    /// `--grammar auto` prefers a strict grammar that parses as much.
    pub lenient: bool,
    /// A small valid input, for tests and `php-fuzz grammars`.
    pub sample: &'static str,
    /// The grammar's lexicon: one small example of each lexical form
    /// (escapes, number bases, rare tokens) that seeds seldom hold, learned
    /// as pinned fragments before any seed (`--no-lexicon` leaves it out).
    /// Empty where the grammar has none.
    pub lexicon: &'static str,
    language: fn() -> Language,
}

const GRAMMARS: &[GrammarInfo] = &[
    GrammarInfo {
        name: "php",
        description: "PHP source, inline HTML allowed (tree-sitter-php)",
        code: true,
        identifier_kinds: &["variable_name"],
        scope_kinds: &[
            "function_definition",
            "method_declaration",
            "anonymous_function",
            "arrow_function",
        ],
        frozen_kinds: &[],
        loose_kinds: &["text"],
        lenient: false,
        sample: "<?php\nfunction add(int $a, int $b): int {\n    $sum = $a + $b;\n    return $sum;\n}\n$items = [1, 2, 'three' => 3];\nforeach ($items as $key => $value) {\n    if ($value > 1) {\n        echo add($value, 2), \"\\n\";\n    } else {\n        $items[] = $key;\n    }\n}\n",
        lexicon: include_str!("../lexicon/php.php"),
        language: || tree_sitter_php::LANGUAGE_PHP.into(),
    },
    #[cfg(feature = "json")]
    GrammarInfo {
        name: "json",
        description: "JSON (tree-sitter-json)",
        code: false,
        identifier_kinds: &[],
        scope_kinds: &[],
        frozen_kinds: &[],
        loose_kinds: &[],
        lenient: false,
        sample: "{\"name\": \"php-fuzz\", \"tags\": [\"fuzz\", 1, 2.5e3, true, null], \"nested\": {\"a\": [], \"b\": {}}}\n",
        lexicon: "",
        language: || tree_sitter_json::LANGUAGE.into(),
    },
    #[cfg(feature = "css")]
    GrammarInfo {
        name: "css",
        description: "CSS stylesheets (tree-sitter-css)",
        code: false,
        identifier_kinds: &[],
        scope_kinds: &[],
        frozen_kinds: &[],
        loose_kinds: &[],
        lenient: false,
        sample: "@media screen and (max-width: 600px) {\n  .menu > li:hover, #top a[href^=\"http\"] { color: #f00; margin: 0 auto !important; }\n}\nbody { font: 12px/1.5 sans-serif; width: calc(100% - 2em); }\n",
        lexicon: "",
        language: || tree_sitter_css::LANGUAGE.into(),
    },
    #[cfg(feature = "html")]
    GrammarInfo {
        name: "html",
        description: "HTML documents (tree-sitter-html)",
        code: false,
        identifier_kinds: &[],
        scope_kinds: &[],
        frozen_kinds: &["start_tag", "end_tag", "tag_name"],
        loose_kinds: &["document>text", "document>entity"],
        lenient: true,
        sample: "<!DOCTYPE html>\n<html><head><title>t</title></head>\n<body><ul class=\"list\"><li>one</li><li><a href=\"/x\">two</a></li></ul><br/><p>text &amp; more</p></body></html>\n",
        lexicon: "",
        language: || tree_sitter_html::LANGUAGE.into(),
    },
    #[cfg(feature = "yaml")]
    GrammarInfo {
        name: "yaml",
        description: "YAML documents (tree-sitter-yaml)",
        code: false,
        identifier_kinds: &[],
        scope_kinds: &[],
        frozen_kinds: &[],
        loose_kinds: &["document>flow_node>plain_scalar"],
        lenient: true,
        sample: "name: php-fuzz\nlist:\n  - one\n  - two: 2\n    three: [3, 4]\nanchor: &a {x: 1}\nalias: *a\ntext: |\n  line\n",
        lexicon: "",
        language: || tree_sitter_yaml::LANGUAGE.into(),
    },
    #[cfg(feature = "markdown")]
    GrammarInfo {
        name: "markdown",
        description: "Markdown block structure; inline text stays opaque (tree-sitter-md)",
        code: false,
        identifier_kinds: &[],
        scope_kinds: &[],
        frozen_kinds: &[],
        loose_kinds: &[
            "section>paragraph",
            "document>paragraph",
            "section>indented_code_block",
            "document>indented_code_block",
            "section>html_block",
            "document>html_block",
        ],
        lenient: true,
        sample: "# Title\n\nA paragraph with *emphasis*.\n\n- item one\n- item two\n  1. nested\n\n> quote\n\n```php\necho 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        lexicon: "",
        language: || tree_sitter_md::LANGUAGE.into(),
    },
    #[cfg(feature = "sql")]
    GrammarInfo {
        name: "sql",
        description: "SQL statements, several dialects (tree-sitter-sequel)",
        code: false,
        identifier_kinds: &[],
        scope_kinds: &[],
        frozen_kinds: &[],
        loose_kinds: &[],
        lenient: false,
        sample: "SELECT a.id, COUNT(*) AS n FROM users a JOIN orders o ON o.user_id = a.id WHERE a.age > 18 AND o.total IN (1, 2, 3) GROUP BY a.id ORDER BY n DESC LIMIT 10;\nINSERT INTO t (x, y) VALUES (1, 'two');\n",
        lexicon: "",
        language: || tree_sitter_sequel::LANGUAGE.into(),
    },
    #[cfg(feature = "javascript")]
    GrammarInfo {
        name: "javascript",
        description: "JavaScript (tree-sitter-javascript)",
        code: true,
        identifier_kinds: &["identifier"],
        scope_kinds: &[
            "function_declaration",
            "function_expression",
            "generator_function_declaration",
            "arrow_function",
            "method_definition",
        ],
        frozen_kinds: &[],
        loose_kinds: &[],
        lenient: false,
        sample: "function add(a, b) {\n  const sum = a + b;\n  return sum;\n}\nlet items = [1, 2, 3];\nfor (const item of items) {\n  if (item > 1) {\n    console.log(add(item, 2));\n  } else {\n    items.push({ key: item });\n  }\n}\n",
        lexicon: "",
        language: || tree_sitter_javascript::LANGUAGE.into(),
    },
];

impl GrammarInfo {
    /// The tree-sitter language, unchecked: [`Grammar::from_info`] checks
    /// that this tree-sitter accepts it.
    pub fn language(&self) -> Language {
        (self.language)()
    }
}

/// Every grammar built into this binary, `php` first.
pub fn grammars() -> &'static [GrammarInfo] {
    GRAMMARS
}

/// The grammar called `name`, if it is built in.
pub fn find(name: &str) -> Option<&'static GrammarInfo> {
    GRAMMARS.iter().find(|info| info.name == name)
}

/// A loaded grammar: its tree-sitter language and the node kinds that
/// matter to the mutators, looked up once. Cheap to share between threads.
#[derive(Debug, Clone)]
pub struct Grammar {
    info: &'static GrammarInfo,
    language: Language,
    /// Indexed by node kind id.
    identifier: Box<[bool]>,
    scope: Box<[bool]>,
    frozen: Box<[bool]>,
}

impl Grammar {
    /// Loads the grammar called `name`; the error lists the known ones.
    pub fn load(name: &str) -> Result<Grammar, GrammarError> {
        let info = find(name).ok_or_else(|| GrammarError::Unknown {
            name: name.to_string(),
            known: GRAMMARS
                .iter()
                .map(|info| info.name)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        Grammar::from_info(info)
    }

    /// Loads a grammar, checking that this tree-sitter accepts its ABI.
    pub fn from_info(info: &'static GrammarInfo) -> Result<Grammar, GrammarError> {
        let language = info.language();
        Parser::new()
            .set_language(&language)
            .map_err(|err| GrammarError::Incompatible {
                name: info.name,
                reason: err.to_string(),
            })?;
        let kinds = language.node_kind_count();
        let flags_for = |names: &[&str]| -> Box<[bool]> {
            let mut flags = vec![false; kinds];
            for id in 0..kinds {
                let id = id as u16;
                if language.node_kind_is_named(id)
                    && language
                        .node_kind_for_id(id)
                        .is_some_and(|kind| names.contains(&kind))
                {
                    flags[id as usize] = true;
                }
            }
            flags.into_boxed_slice()
        };
        Ok(Grammar {
            info,
            identifier: flags_for(info.identifier_kinds),
            scope: flags_for(info.scope_kinds),
            frozen: flags_for(info.frozen_kinds),
            language,
        })
    }

    pub fn info(&self) -> &'static GrammarInfo {
        self.info
    }

    pub fn name(&self) -> &'static str {
        self.info.name
    }

    pub fn language(&self) -> &Language {
        &self.language
    }

    /// The name of node kind `kind` (as tree-sitter spells it).
    pub fn kind_name(&self, kind: u16) -> &'static str {
        self.language.node_kind_for_id(kind).unwrap_or("ERROR")
    }

    pub(crate) fn is_identifier(&self, kind: u16) -> bool {
        self.identifier.get(kind as usize).copied().unwrap_or(false)
    }

    pub(crate) fn is_scope(&self, kind: u16) -> bool {
        self.scope.get(kind as usize).copied().unwrap_or(false)
    }

    pub(crate) fn is_frozen(&self, kind: u16) -> bool {
        self.frozen.get(kind as usize).copied().unwrap_or(false)
    }
}
