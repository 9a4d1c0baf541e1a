//! Runs `arguments-probe.php` (docs/autofuzz.md): the PHP side that reads a
//! callee's or a package's types, for `autofuzz --write-test` and `scan`.
//! It prints one line, `PHP-FUZZ-PROBE ` and JSON: `{"ok": …}` or
//! `{"error": {class, message}}`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use php_fuzz_harness::{Runtime, output_walled};

use crate::harness_args::HarnessArgs;
use serde::Deserialize;
use serde::de::DeserializeOwned;

#[derive(Debug, Deserialize)]
struct Probe<T> {
    ok: Option<T>,
    error: Option<ProbeError>,
}

#[derive(Debug, Deserialize)]
struct ProbeError {
    class: String,
    message: String,
}

/// `php arguments-probe.php ARGS…`'s answer, run inside the wall with
/// writes only in `writable` (and a scratch folder); `what` names the step
/// in errors.
pub fn run<T: DeserializeOwned>(
    harness: &HarnessArgs,
    args: &[&std::ffi::OsStr],
    writable: &[&Path],
    what: &str,
) -> anyhow::Result<T> {
    let runtime = Runtime::unpack().context("cannot unpack the PHP runtime")?;
    let mut command = Command::new(&harness.php);
    command
        .arg(runtime.arguments_probe())
        .args(args)
        .env("TMPDIR", runtime.scratch());
    let mut folders = vec![runtime.scratch().to_path_buf()];
    folders.extend(writable.iter().map(|p| p.to_path_buf()));
    let output = output_walled(&mut command, &harness.php, folders, harness.sandbox_mode())
        .with_context(|| format!("cannot run {}", harness.php.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(json) = stdout
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("PHP-FUZZ-PROBE "))
    else {
        bail!(
            "{what}: php exited with {} before answering\n{}{}",
            output.status,
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    };
    let probe: Probe<T> = serde_json::from_str(json)
        .with_context(|| format!("{what}: php-fuzz's arguments probe"))?;
    match (probe.ok, probe.error) {
        (Some(answer), _) => Ok(answer),
        (None, Some(e)) => bail!("{what}: {}: {}", e.class, e.message),
        (None, None) => bail!("{what}: php-fuzz's arguments probe said nothing"),
    }
}
