//! Which grammar a campaign mutates with: `--grammar NAME`, `none` or
//! `auto`, and the target's `setGrammar()` (docs/grammar.md).

use php_fuzz_grammar::{Grammar, fusion_supported};
use php_fuzz_harness::TargetInfo;
use php_fuzz_storage::CorpusFile;

use crate::{EngineError, FuzzOptions, GrammarChoice};

/// What no `--grammar` means when the target calls no `setGrammar()`.
/// No grammar until docs/evaluations show that `auto` pays (issue #33 §4);
/// making `auto` the default is this line.
const WITHOUT_GRAMMAR_FLAG: GrammarChoice = GrammarChoice::Off;

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
        (None, None) => match WITHOUT_GRAMMAR_FLAG {
            GrammarChoice::Auto => auto(seeds)?,
            _ => Chosen {
                grammar: None,
                note: None,
            },
        },
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

/// The grammar most of the seed bytes parse in, if one does.
fn auto(seeds: &[CorpusFile]) -> Result<Chosen, EngineError> {
    let choice = php_fuzz_grammar::choose(seeds.iter().map(|seed| seed.data.as_slice()));
    let grammar = choice
        .chosen()
        .map(Grammar::from_info)
        .transpose()
        .map_err(|source| EngineError::Grammar {
            origin: "--grammar auto",
            source,
        })?;
    let name = grammar.as_ref().map_or("none", Grammar::name);
    Ok(Chosen {
        note: Some(format!("INFO: grammar: {name} ({})", choice.describe())),
        grammar,
    })
}
