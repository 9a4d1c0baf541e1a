//! The wall around a harness process (docs/sandbox.md): what it may write,
//! raised in the child before `php` starts.

use std::path::{Path, PathBuf};
use std::process::Command;

use php_fuzz_sandbox::{Layers, Mode, Policy, Receipt, Wall};

use crate::{HarnessConfig, HarnessError};

/// What the harness may write: the scratch folder, the folders the target
/// allowed (learned from an earlier harness's Ready), the fork server's
/// named pipes and `/dev/null`.
fn policy(config: &HarnessConfig) -> Policy {
    let mut writable = vec![config.runtime.scratch().to_path_buf()];
    writable.extend(config.wall.learned_writable());
    Policy {
        writable,
        read_write: vec![config.runtime.fifo_dir(), PathBuf::from("/dev/null")],
        php: config.php.path.clone(),
    }
}

/// Adds the wall to `command`, the harness's, as its last `pre_exec` step.
pub(crate) fn raise(
    config: &HarnessConfig,
    command: &mut Command,
) -> Result<Option<Receipt>, HarnessError> {
    if config.wall.mode == Mode::Off {
        return Ok(None);
    }
    // The harness reports what only the wall stopped (SideEffects.php).
    command.env("PHP_FUZZ_WALL", "1");
    let wall = Wall::prepare(&policy(config), config.wall.mode, command)?;
    Ok(Some(wall.install(command)?))
}

/// The layers the child reports; under `--sandbox strict`, an error unless
/// all hold.
pub(crate) fn layers(
    config: &HarnessConfig,
    receipt: Option<Receipt>,
) -> Result<Layers, HarnessError> {
    let Some(receipt) = receipt else {
        return Ok(Layers::off());
    };
    let layers = receipt.layers().unwrap_or_else(|| Layers {
        mode: config.wall.mode,
        ..Layers::off()
    });
    if config.wall.mode == Mode::Strict && !layers.full() {
        return Err(php_fuzz_sandbox::SandboxError::Incomplete(layers.missing().join("; ")).into());
    }
    Ok(layers)
}

/// Why a spawn failed under `--sandbox strict`, said plainly; other errors
/// as they are.
pub(crate) fn spawn_error(
    config: &HarnessConfig,
    receipt: Option<Receipt>,
    err: std::io::Error,
) -> HarnessError {
    if config.wall.mode == Mode::Strict
        && let Some(layers) = receipt.and_then(Receipt::layers)
        && !layers.full()
    {
        return php_fuzz_sandbox::SandboxError::Incomplete(layers.missing().join("; ")).into();
    }
    HarnessError::Spawn(err)
}

/// Whether the target allowed writes in a folder this harness's wall does
/// not open; if so, the folder is learned, and the next harness gets it.
pub(crate) fn learn_allowed_writes(config: &HarnessConfig, writable: &[PathBuf]) -> bool {
    if config.wall.mode == Mode::Off {
        return false;
    }
    let known = policy(config).writable;
    let new: Vec<PathBuf> = writable
        .iter()
        .filter(|folder| !known.iter().any(|k| Path::new(folder).starts_with(k)))
        .cloned()
        .collect();
    if new.is_empty() {
        return false;
    }
    config.wall.learn(new);
    true
}

/// Runs a one-off `php` command that loads the user's code (the probes of
/// PHPUnit fuzz tests and typed entry points) inside the wall, with writes
/// only in `writable`; under `--sandbox strict`, an error unless all hold.
pub fn output_walled(
    command: &mut Command,
    php: &Path,
    writable: Vec<PathBuf>,
    mode: Mode,
) -> Result<std::process::Output, HarnessError> {
    let receipt = match mode {
        Mode::Off => None,
        mode => {
            command.env("PHP_FUZZ_WALL", "1");
            let policy = Policy {
                writable,
                read_write: vec![PathBuf::from("/dev/null")],
                php: php.to_path_buf(),
            };
            Some(Wall::prepare(&policy, mode, command)?.install(command)?)
        }
    };
    let output = command.output().map_err(HarnessError::Spawn)?;
    if mode == Mode::Strict
        && let Some(layers) = receipt.and_then(Receipt::layers)
        && !layers.full()
    {
        return Err(php_fuzz_sandbox::SandboxError::Incomplete(layers.missing().join("; ")).into());
    }
    Ok(output)
}
