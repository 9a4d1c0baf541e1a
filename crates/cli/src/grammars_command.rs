//! `php-fuzz grammars`: the grammars `--grammar` and `setGrammar()` take.
//! See docs/grammar.md.

use std::process::ExitCode;

use php_fuzz_engine::GrammarChoice;
use php_fuzz_grammar::{AUTO_THRESHOLD_PERCENT, Grammar, GrammarError, grammars};

use crate::stdout::Stdout;

/// Arguments of `php-fuzz grammars`.
#[derive(clap::Args, Debug)]
pub struct GrammarsArgs {
    /// Print this grammar's built-in lexicon, the fragments every campaign with it starts
    /// from (unless `fuzz --no-lexicon`), instead of the list.
    #[arg(long, value_name = "NAME")]
    pub lexicon: Option<String>,
}

pub fn run(args: &GrammarsArgs) -> anyhow::Result<ExitCode> {
    let mut out = Stdout::lock();
    if let Some(name) = &args.lexicon {
        let grammar = Grammar::load(name)?;
        let lexicon = grammar.info().lexicon;
        if lexicon.is_empty() {
            let with: Vec<_> = grammars()
                .iter()
                .filter(|g| !g.lexicon.is_empty())
                .map(|g| g.name)
                .collect();
            anyhow::bail!(
                "the {name} grammar has no lexicon (grammars with one: {})",
                with.join(", ")
            );
        }
        out.write(lexicon.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = grammars().iter().map(|g| g.name.len()).max().unwrap_or(4);
    out.line(format!("{:width$}  code  lexicon  description", "name"))?;
    for info in grammars() {
        let code = if info.code { "yes" } else { "no" };
        let lexicon = if info.lexicon.is_empty() { "no" } else { "yes" };
        out.line(format!(
            "{:width$}  {code:4}  {lexicon:7}  {}",
            info.name, info.description
        ))?;
    }
    out.line(String::new())?;
    out.line(format!(
        "fuzz --grammar also takes auto (the grammar at least {AUTO_THRESHOLD_PERCENT} % of the seed bytes parse in, unless the target calls setGrammar()) and none (no grammar, even over setGrammar()). Without --grammar: setGrammar(), else php when auto would pick it, else none."
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// clap's check of `--grammar NAME|auto|none`: an unknown name is an error
/// listing the known ones, before any PHP starts.
pub fn parse_grammar_name(name: &str) -> Result<GrammarChoice, GrammarError> {
    match name {
        "auto" => Ok(GrammarChoice::Auto),
        "none" => Ok(GrammarChoice::Off),
        _ => Grammar::load(name).map(|grammar| GrammarChoice::Named(grammar.name().to_string())),
    }
}
