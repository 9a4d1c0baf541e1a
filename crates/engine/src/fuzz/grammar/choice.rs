//! Which grammar a campaign mutates with: `--grammar NAME`, `none` or
//! `auto`, and the target's `setGrammar()` (docs/grammar.md).

use php_fuzz_grammar::{Grammar, fusion_supported};
use php_fuzz_harness::TargetInfo;
use php_fuzz_storage::CorpusFile;

use crate::{EngineError, FuzzOptions, GrammarChoice};

/// The grammars no `--grammar` turns on, when the target calls no
/// `setGrammar()` and `--grammar auto` would pick them. php since
/// docs/evaluations/bugs-lexicon and coverage-lexicon (issue #41): with its
/// lexicon it finds PHP-Parser bugs bytes do not, and covers 1.5 times as
/// much of it. The others stay opt-in (grammar-auto-yaml-html5,
/// bugs-grammar: no difference).
const DEFAULT_GRAMMARS: &[&str] = &["php"];

/// The campaign's grammar, and the INFO line that says how it was chosen
/// when that is not plain (`auto`, `none`).
pub(in crate::fuzz) struct Chosen {
    pub grammar: Option<Grammar>,
    pub note: Option<String>,
}

/// `--grammar NAME` and `--grammar none` win over the target's
/// `setGrammar()`, which wins over `--grammar auto`; auto looks at `seeds`.
pub(in crate::fuzz) fn choose_grammar(
    options: &FuzzOptions,
    info: &TargetInfo,
    seeds: &[CorpusFile],
) -> Result<Chosen, EngineError> {
    let declared = info.grammar.as_deref();
    let chosen = match (options.grammar.as_ref(), declared) {
        (Some(GrammarChoice::Named(name)), _) => named(name, "--grammar")?,
        (Some(GrammarChoice::Off), _) => off(declared),
        (_, Some(name)) => named(name, "$config->setGrammar() in the target")?,
        (Some(GrammarChoice::Auto), None) => auto(seeds)?,
        (None, None) => by_default(seeds)?,
    };
    if chosen.grammar.is_none() && !options.fragments.is_empty() {
        return Err(EngineError::FragmentsWithoutGrammar);
    }
    if options.fusion && !chosen.grammar.as_ref().is_some_and(fusion_supported) {
        let found = chosen.grammar.as_ref().map_or("none", Grammar::name);
        return Err(EngineError::FusionWithoutPhp {
            found: found.to_string(),
        });
    }
    Ok(chosen)
}

fn named(name: &str, origin: &'static str) -> Result<Chosen, EngineError> {
    let grammar = Grammar::load(name).map_err(|source| EngineError::Grammar { origin, source })?;
    Ok(Chosen {
        grammar: Some(grammar),
        note: None,
    })
}

fn off(declared: Option<&str>) -> Chosen {
    let why = match declared {
        Some(name) => format!("--grammar none; the target's setGrammar('{name}') is not used"),
        None => "--grammar none".to_string(),
    };
    Chosen {
        grammar: None,
        note: Some(format!("INFO: grammar: none ({why})")),
    }
}

/// No `--grammar`, no `setGrammar()`: auto's choice if it is one of
/// [`DEFAULT_GRAMMARS`], else no grammar (and no INFO line).
fn by_default(seeds: &[CorpusFile]) -> Result<Chosen, EngineError> {
    let (grammar, why) = choose_by_seeds(seeds, "the default grammar")?;
    Ok(match grammar {
        Some(grammar) if DEFAULT_GRAMMARS.contains(&grammar.name()) => Chosen {
            note: Some(format!(
                "INFO: grammar: {} (the default for seeds in it, {why}; --grammar none turns it off)",
                grammar.name()
            )),
            grammar: Some(grammar),
        },
        _ => Chosen {
            grammar: None,
            note: None,
        },
    })
}

/// The grammar most of the seed bytes parse in, if one does.
fn auto(seeds: &[CorpusFile]) -> Result<Chosen, EngineError> {
    let (grammar, why) = choose_by_seeds(seeds, "--grammar auto")?;
    let name = grammar.as_ref().map_or("none", Grammar::name);
    Ok(Chosen {
        note: Some(format!("INFO: grammar: {name} ({why})")),
        grammar,
    })
}

/// auto's grammar for `seeds`, loaded, and why (`auto: 100 % of …`).
fn choose_by_seeds(
    seeds: &[CorpusFile],
    origin: &'static str,
) -> Result<(Option<Grammar>, String), EngineError> {
    let choice = php_fuzz_grammar::choose(seeds.iter().map(|seed| seed.data.as_slice()));
    let grammar = choice
        .chosen()
        .map(Grammar::from_info)
        .transpose()
        .map_err(|source| EngineError::Grammar { origin, source })?;
    Ok((grammar, choice.describe()))
}
