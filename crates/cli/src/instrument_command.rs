use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `php-fuzz instrument`.
#[derive(clap::Args)]
pub struct InstrumentArgs {
    /// Files or directories to instrument.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Mirror PATHs into this directory instead of printing to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(_args: &InstrumentArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
