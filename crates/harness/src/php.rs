//! Finding and checking the `php` binary the harness runs on.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::HarnessError;

/// Oldest PHP the runtime supports.
pub const MIN_PHP_VERSION_ID: u32 = 80100;

const INSTALL_HINT: &str = "install the PHP CLI (Debian/Ubuntu: `sudo apt-get install php-cli`) or pass --php /path/to/php";

#[derive(Debug, Clone)]
pub struct PhpBinary {
    pub path: PathBuf,
    pub version: String,
    pub version_id: u32,
    /// pcntl and posix are loaded: in-harness timeouts with a stack trace.
    pub signals: bool,
}

impl PhpBinary {
    /// Probes `php` (a path, or a name looked up on PATH) and checks its version.
    pub fn probe(php: &Path) -> Result<PhpBinary, HarnessError> {
        let output = Command::new(php)
            .args(["-d", "display_errors=stderr", "-r"])
            .arg(r#"echo PHP_VERSION_ID, "\n", PHP_VERSION, "\n", (int) (function_exists('pcntl_async_signals') && function_exists('posix_kill')), "\n";"#)
            .output()
            .map_err(|err| HarnessError::PhpNotFound {
                php: php.to_path_buf(),
                reason: err.to_string(),
                hint: INSTALL_HINT,
            })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut lines = stdout.lines();
        let version_id = lines.next().and_then(|l| l.trim().parse::<u32>().ok());
        let version = lines.next().unwrap_or("").trim().to_string();
        let signals = lines.next().map(str::trim) == Some("1");
        let Some(version_id) = version_id.filter(|_| output.status.success()) else {
            return Err(HarnessError::PhpNotFound {
                php: php.to_path_buf(),
                reason: format!(
                    "it did not run as the PHP CLI ({}{})",
                    output.status,
                    first_line(&output.stderr)
                        .map(|l| format!(": {l}"))
                        .unwrap_or_default()
                ),
                hint: INSTALL_HINT,
            });
        };
        if version_id < MIN_PHP_VERSION_ID {
            return Err(HarnessError::PhpTooOld {
                php: php.to_path_buf(),
                version,
                hint: INSTALL_HINT,
            });
        }
        Ok(PhpBinary {
            path: php.to_path_buf(),
            version,
            version_id,
            signals,
        })
    }
}

fn first_line(bytes: &[u8]) -> Option<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
}
