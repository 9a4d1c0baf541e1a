//! `php-fuzz autofuzz 'App\Parser::parse'`: fuzz a function or method with
//! typed arguments and no target file written (docs/autofuzz.md). The
//! campaign is `fuzz`'s; `--write-test` also writes a fuzz test to commit.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;

use crate::fuzz_command::{self, FuzzArgs};

/// Arguments of `php-fuzz autofuzz`.
#[derive(clap::Args, Debug)]
pub struct AutofuzzArgs {
    #[command(flatten)]
    pub fuzz: FuzzArgs,
    /// Also write the equivalent fuzz test into DIR, to commit: a typed PHPUnit fuzz test where
    /// PHPUnit is installed, else a php-fuzzer target file.
    #[arg(long, value_name = "DIR")]
    pub write_test: Option<PathBuf>,
}

pub fn run(args: &AutofuzzArgs) -> anyhow::Result<ExitCode> {
    let target = &args.fuzz.target;
    if !crate::callee_target::is_callee(target) {
        bail!(
            "autofuzz takes a function or method, such as 'App\\Parser::parse' or 'App\\parse', not {}: \
             a target file runs with `php-fuzz fuzz`",
            shown(target)
        );
    }
    if let Some(dir) = &args.write_test {
        let written = crate::test_writer::write(target, dir, &args.fuzz.harness)?;
        eprintln!("INFO: wrote {}", written.display());
    }
    fuzz_command::run(&args.fuzz)
}

fn shown(target: &Path) -> String {
    format!("`{}`", target.display())
}
