//! The `php-fuzz` binary: parses the command line and wires the libraries together.

mod instrument_command;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "php-fuzz", version, about = "Coverage-guided fuzzer for PHP libraries")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a PHP file instrumented, or mirror whole trees instrumented into --out.
    Instrument(instrument_command::InstrumentArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Instrument(args) => instrument_command::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("php-fuzz: error: {err:#}");
            ExitCode::from(1)
        }
    }
}
