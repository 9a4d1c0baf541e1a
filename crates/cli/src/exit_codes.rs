//! Exit codes, stable and documented in README.md.

use std::process::ExitCode;

use php_fuzz_harness::CrashKind;

pub const OK: u8 = 0;
/// Bad input or configuration: missing target, target fails to load, no php…
pub const ERROR: u8 = 1;
/// Invalid command line (clap's own code), or a choice the user must make.
pub const USAGE: u8 = 2;
/// A timeout was found (and nothing worse).
pub const TIMEOUT: u8 = 70;
/// An out-of-memory was found (and no crash).
pub const OUT_OF_MEMORY: u8 = 71;
/// A crash was found: exception, warning, fatal error, exit(), stack overflow, dead
/// harness; or a security finding, or a refused side effect.
pub const CRASH: u8 = 77;

/// The code for a set of findings: crash beats out-of-memory beats timeout.
pub fn for_findings(kinds: impl IntoIterator<Item = CrashKind>) -> ExitCode {
    let mut code = OK;
    for kind in kinds {
        let this = match kind {
            CrashKind::Timeout => TIMEOUT,
            CrashKind::OutOfMemory => OUT_OF_MEMORY,
            _ => CRASH,
        };
        code = code.max(this);
    }
    ExitCode::from(code)
}
