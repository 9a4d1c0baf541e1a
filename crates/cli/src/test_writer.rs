//! `autofuzz --write-test DIR`: the fuzz test equivalent to a callee's
//! campaign, for the user to commit. PHP writes it (`arguments-probe.php
//! write-test`), since only PHP can read the callee's types; this runs the
//! probe and reports what it wrote or why it could not.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use php_fuzz_harness::Runtime;
use serde::Deserialize;

use crate::harness_args::HarnessArgs;

#[derive(Debug, Deserialize)]
struct Probe {
    ok: Option<Written>,
    error: Option<ProbeError>,
}

#[derive(Debug, Deserialize)]
struct Written {
    path: PathBuf,
}

#[derive(Debug, Deserialize)]
struct ProbeError {
    class: String,
    message: String,
}

/// Writes the fuzz test of `callee` into `dir`; returns the file written.
pub fn write(callee: &Path, dir: &Path, harness: &HarnessArgs) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--write-test: cannot create {}", dir.display()))?;
    let autoload = crate::callee_target::autoload_file(harness.autoload.as_deref())?;
    let runtime = Runtime::unpack().context("cannot unpack the PHP runtime")?;
    let output = Command::new(&harness.php)
        .arg(runtime.arguments_probe())
        .arg("write-test")
        .arg(callee)
        .arg(&autoload)
        .arg(dir)
        .args(&harness.allowed_exceptions)
        .output()
        .with_context(|| format!("cannot run {}", harness.php.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(json) = stdout
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("PHP-FUZZ-PROBE "))
    else {
        bail!(
            "--write-test: php exited with {} before writing the test\n{}{}",
            output.status,
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    };
    let probe: Probe = serde_json::from_str(json).context("php-fuzz's arguments probe")?;
    match (probe.ok, probe.error) {
        (Some(written), _) => Ok(written.path),
        (None, Some(e)) => bail!("--write-test: {}: {}", e.class, e.message),
        (None, None) => bail!("php-fuzz's arguments probe said nothing"),
    }
}
