//! `php-fuzz grammars`: the grammars `--grammar` and `setGrammar()` take.
//! See docs/grammar.md.

use std::process::ExitCode;

use php_fuzz_engine::GrammarChoice;
use php_fuzz_grammar::{AUTO_THRESHOLD_PERCENT, Grammar, GrammarError, grammars};

use crate::stdout::Stdout;

/// Arguments of `php-fuzz grammars`.
#[derive(clap::Args, Debug)]
pub struct GrammarsArgs {}

pub fn run(_args: &GrammarsArgs) -> anyhow::Result<ExitCode> {
    let mut out = Stdout::lock();
    let width = grammars().iter().map(|g| g.name.len()).max().unwrap_or(4);
    out.line(format!("{:width$}  code  description", "name"))?;
    for info in grammars() {
        let code = if info.code { "yes" } else { "no" };
        out.line(format!(
            "{:width$}  {code:4}  {}",
            info.name, info.description
        ))?;
    }
    out.line(String::new())?;
    out.line(format!(
        "fuzz --grammar also takes auto (the grammar at least {AUTO_THRESHOLD_PERCENT} % of the seed bytes parse in, unless the target calls setGrammar()) and none (no grammar, even over setGrammar())."
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
