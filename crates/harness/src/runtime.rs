//! The PHP side of the harness, embedded in the binary and unpacked into a
//! temporary directory, so `php-fuzz` works from anywhere after `cargo install`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

const FILES: &[(&str, &str)] = &[
    ("main.php", include_str!("../php-runtime/main.php")),
    ("Harness.php", include_str!("../php-runtime/Harness.php")),
    ("Config.php", include_str!("../php-runtime/Config.php")),
    ("Wire.php", include_str!("../php-runtime/Wire.php")),
    (
        "IncludeInterceptor.php",
        include_str!("../php-runtime/IncludeInterceptor.php"),
    ),
    (
        "FuzzingContext.php",
        include_str!("../php-runtime/FuzzingContext.php"),
    ),
    ("CmpLog.php", include_str!("../php-runtime/CmpLog.php")),
    (
        "CustomMutation.php",
        include_str!("../php-runtime/CustomMutation.php"),
    ),
    (
        "FuzzedDataProvider.php",
        include_str!("../php-runtime/FuzzedDataProvider.php"),
    ),
];

/// The unpacked runtime; removed when dropped.
#[derive(Debug)]
pub struct Runtime {
    dir: tempfile::TempDir,
    /// Canonical path, as PHP reports it in stack traces.
    root: PathBuf,
}

impl Runtime {
    pub fn unpack() -> io::Result<Runtime> {
        let dir = tempfile::Builder::new()
            .prefix("php-fuzz-runtime-")
            .tempdir()?;
        for (name, contents) in FILES {
            fs::write(dir.path().join(name), contents)?;
        }
        let root = fs::canonicalize(dir.path())?;
        Ok(Runtime { dir, root })
    }

    pub fn entry_script(&self) -> PathBuf {
        self.root.join("main.php")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Path of the file that defines `PhpFuzz\FuzzingContext` and `traceBlock()`,
    /// for running instrumented code outside the harness.
    pub fn fuzzing_context(&self) -> PathBuf {
        self.dir.path().join("FuzzingContext.php")
    }
}
