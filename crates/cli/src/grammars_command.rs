//! `php-fuzz grammars`: the grammars `--grammar` and `setGrammar()` take.
//! See docs/grammar.md.

use std::process::ExitCode;

use php_fuzz_grammar::{Grammar, GrammarError, grammars};

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
    Ok(ExitCode::SUCCESS)
}

/// clap's check of `--grammar NAME`: an unknown name is an error listing
/// the known ones, before any PHP starts.
pub fn parse_grammar_name(name: &str) -> Result<String, GrammarError> {
    Grammar::load(name).map(|grammar| grammar.name().to_string())
}
