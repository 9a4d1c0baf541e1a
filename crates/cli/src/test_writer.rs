//! `autofuzz --write-test DIR`: the fuzz test equivalent to a callee's
//! campaign, for the user to commit. PHP writes it (`arguments-probe.php
//! write-test`), since only PHP can read the callee's types.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use crate::harness_args::HarnessArgs;

#[derive(Debug, Deserialize)]
struct Written {
    path: PathBuf,
}

/// Writes the fuzz test of `callee` into `dir`; returns the file written.
pub fn write(callee: &Path, dir: &Path, harness: &HarnessArgs) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--write-test: cannot create {}", dir.display()))?;
    let autoload = crate::callee_target::autoload_file(harness.autoload.as_deref())?;
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "write-test".as_ref(),
        callee.as_os_str(),
        autoload.as_os_str(),
        dir.as_os_str(),
    ];
    args.extend(
        harness
            .allowed_exceptions
            .iter()
            .map(|c| std::ffi::OsStr::new(c.as_str())),
    );
    let written: Written = crate::arguments_probe::run(harness, &args, &[dir], "--write-test")?;
    Ok(written.path)
}
