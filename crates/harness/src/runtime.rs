//! The PHP side of the harness, embedded in the binary and unpacked into a
//! temporary directory, so `php-fuzz` works from anywhere after `cargo install`.
//!
//! These are the same files the composer package autoloads (`php-runtime/src/`,
//! `php-runtime/php-fuzzer/`) or keeps internal (`php-runtime/internal/`); they
//! are unpacked side by side, as `main.php` expects. build.rs says where they are.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One file of the runtime, wherever build.rs found it.
macro_rules! runtime_file {
    ($path:literal) => {
        include_str!(concat!(env!("PHP_FUZZ_RUNTIME_DIR"), "/", $path))
    };
}

const FILES: &[(&str, &str)] = &[
    (
        "Arguments/Autofuzz.php",
        runtime_file!("src/Arguments/Autofuzz.php"),
    ),
    (
        "Arguments/CallGraph.php",
        runtime_file!("src/Arguments/CallGraph.php"),
    ),
    (
        "Arguments/CallRejected.php",
        runtime_file!("src/Arguments/CallRejected.php"),
    ),
    (
        "Arguments/ClassFinder.php",
        runtime_file!("src/Arguments/ClassFinder.php"),
    ),
    (
        "Arguments/ClassTable.php",
        runtime_file!("src/Arguments/ClassTable.php"),
    ),
    (
        "Arguments/ClassTypes.php",
        runtime_file!("src/Arguments/ClassTypes.php"),
    ),
    (
        "Arguments/DeclaredTypes.php",
        runtime_file!("src/Arguments/DeclaredTypes.php"),
    ),
    (
        "Arguments/DocPrinter.php",
        runtime_file!("src/Arguments/DocPrinter.php"),
    ),
    (
        "Arguments/DocTypeMapper.php",
        runtime_file!("src/Arguments/DocTypeMapper.php"),
    ),
    (
        "Arguments/DocTypes.php",
        runtime_file!("src/Arguments/DocTypes.php"),
    ),
    (
        "Arguments/Entry.php",
        runtime_file!("src/Arguments/Entry.php"),
    ),
    (
        "Arguments/EntryError.php",
        runtime_file!("src/Arguments/EntryError.php"),
    ),
    (
        "Arguments/EntryPointScan.php",
        runtime_file!("src/Arguments/EntryPointScan.php"),
    ),
    (
        "Arguments/EntryPoints.php",
        runtime_file!("src/Arguments/EntryPoints.php"),
    ),
    (
        "Arguments/EntryWriter.php",
        runtime_file!("src/Arguments/EntryWriter.php"),
    ),
    (
        "Arguments/Invoker.php",
        runtime_file!("src/Arguments/Invoker.php"),
    ),
    (
        "Arguments/Literal.php",
        runtime_file!("src/Arguments/Literal.php"),
    ),
    (
        "Arguments/NameContext.php",
        runtime_file!("src/Arguments/NameContext.php"),
    ),
    (
        "Arguments/NotFuzzable.php",
        runtime_file!("src/Arguments/NotFuzzable.php"),
    ),
    (
        "Arguments/ParameterReader.php",
        runtime_file!("src/Arguments/ParameterReader.php"),
    ),
    (
        "Arguments/Seeds.php",
        runtime_file!("src/Arguments/Seeds.php"),
    ),
    (
        "Arguments/Signature.php",
        runtime_file!("src/Arguments/Signature.php"),
    ),
    (
        "Arguments/SourceFile.php",
        runtime_file!("src/Arguments/SourceFile.php"),
    ),
    (
        "Arguments/TestWriter.php",
        runtime_file!("src/Arguments/TestWriter.php"),
    ),
    (
        "Arguments/Text.php",
        runtime_file!("src/Arguments/Text.php"),
    ),
    (
        "Arguments/Types.php",
        runtime_file!("src/Arguments/Types.php"),
    ),
    ("main.php", runtime_file!("internal/main.php")),
    ("Harness.php", runtime_file!("internal/Harness.php")),
    ("ProblemText.php", runtime_file!("internal/ProblemText.php")),
    ("FatalStack.php", runtime_file!("internal/FatalStack.php")),
    ("ForkServer.php", runtime_file!("internal/ForkServer.php")),
    ("Config.php", runtime_file!("php-fuzzer/Config.php")),
    ("Wire.php", runtime_file!("internal/Wire.php")),
    (
        "IncludeInterceptor.php",
        runtime_file!("internal/IncludeInterceptor.php"),
    ),
    (
        "FuzzingContext.php",
        runtime_file!("internal/FuzzingContext.php"),
    ),
    ("CmpLog.php", runtime_file!("internal/CmpLog.php")),
    (
        "CustomMutation.php",
        runtime_file!("src/CustomMutation.php"),
    ),
    (
        "arguments-probe.php",
        runtime_file!("internal/arguments-probe.php"),
    ),
    (
        "arguments-autoload.php",
        runtime_file!("internal/arguments-autoload.php"),
    ),
    (
        "phpunit-probe.php",
        runtime_file!("internal/phpunit-probe.php"),
    ),
    (
        "PHPUnit/FuzzTest.php",
        runtime_file!("src/PHPUnit/FuzzTest.php"),
    ),
    (
        "PHPUnit/Fuzzing.php",
        runtime_file!("src/PHPUnit/Fuzzing.php"),
    ),
    (
        "PHPUnit/FuzzMethod.php",
        runtime_file!("src/PHPUnit/FuzzMethod.php"),
    ),
    (
        "PHPUnit/Replay.php",
        runtime_file!("src/PHPUnit/Replay.php"),
    ),
    (
        "PHPUnit/Bootstrap.php",
        runtime_file!("src/PHPUnit/Bootstrap.php"),
    ),
    (
        "PHPUnit/HookMethods.php",
        runtime_file!("src/PHPUnit/HookMethods.php"),
    ),
    (
        "PHPUnit/FuzzTarget.php",
        runtime_file!("src/PHPUnit/FuzzTarget.php"),
    ),
    (
        "FuzzedDataProvider.php",
        runtime_file!("src/FuzzedDataProvider.php"),
    ),
    (
        "NetworkInterceptor.php",
        runtime_file!("internal/NetworkInterceptor.php"),
    ),
    ("Detectors.php", runtime_file!("internal/Detectors.php")),
    ("SideEffects.php", runtime_file!("internal/SideEffects.php")),
    (
        "DetectorSetup.php",
        runtime_file!("internal/DetectorSetup.php"),
    ),
    ("Sinks.php", SINKS),
    (
        "Detectors/CommandInjection.php",
        runtime_file!("internal/Detectors/CommandInjection.php"),
    ),
    (
        "Detectors/CodeInjection.php",
        runtime_file!("internal/Detectors/CodeInjection.php"),
    ),
    (
        "Detectors/ObjectInjection.php",
        runtime_file!("internal/Detectors/ObjectInjection.php"),
    ),
    (
        "Detectors/ClassInjection.php",
        runtime_file!("internal/Detectors/ClassInjection.php"),
    ),
    (
        "Detectors/PathTraversal.php",
        runtime_file!("internal/Detectors/PathTraversal.php"),
    ),
    (
        "Detectors/Xxe.php",
        runtime_file!("internal/Detectors/Xxe.php"),
    ),
    (
        "Detectors/Ssrf.php",
        runtime_file!("internal/Detectors/Ssrf.php"),
    ),
    (
        "Detectors/RegexDos.php",
        runtime_file!("internal/Detectors/RegexDos.php"),
    ),
    (
        "PhpFuzzClass.php",
        runtime_file!("internal/PhpFuzzClass.php"),
    ),
];

/// The detectors' hooks (`PhpFuzz\Sink\…`), which files without
/// `strict_types` call; `SinksStrict.php` is made from it for the others.
const SINKS: &str = runtime_file!("internal/Sinks.php");

/// `Sinks.php` as a file that declares `strict_types=1`, in the namespace
/// `PhpFuzz\Sink\Strict`: it then calls the real functions as a strict
/// file would.
fn strict_sinks() -> String {
    SINKS
        .replacen("<?php\n", "<?php declare(strict_types=1);\n", 1)
        .replacen(
            "namespace PhpFuzz\\Sink;",
            "namespace PhpFuzz\\Sink\\Strict;",
            1,
        )
}

const FIFO_DIR: &str = "fifos";

/// The unpacked runtime; removed when dropped.
#[derive(Debug)]
pub struct Runtime {
    dir: tempfile::TempDir,
    /// Canonical path, as PHP reports it in stack traces.
    root: PathBuf,
    _scratch: tempfile::TempDir,
    scratch_root: PathBuf,
}

impl Runtime {
    pub fn unpack() -> io::Result<Runtime> {
        let dir = tempfile::Builder::new()
            .prefix("php-fuzz-runtime-")
            .tempdir()?;
        fs::create_dir(dir.path().join("PHPUnit"))?;
        fs::create_dir(dir.path().join("Detectors"))?;
        fs::create_dir(dir.path().join("Arguments"))?;
        fs::create_dir(dir.path().join(FIFO_DIR))?;
        for (name, contents) in FILES {
            fs::write(dir.path().join(name), contents)?;
        }
        fs::write(dir.path().join("SinksStrict.php"), strict_sinks())?;
        let root = fs::canonicalize(dir.path())?;
        // A folder of its own: runs must not write into the runtime.
        let scratch = tempfile::Builder::new()
            .prefix("php-fuzz-scratch-")
            .tempdir()?;
        let scratch_root = fs::canonicalize(scratch.path())?;
        Ok(Runtime {
            dir,
            root,
            _scratch: scratch,
            scratch_root,
        })
    }

    /// The campaign's scratch folder: runs may write here (and PHP's
    /// `sys_get_temp_dir()` is here), nowhere else unless allowed.
    pub fn scratch(&self) -> &Path {
        &self.scratch_root
    }

    /// Where the fork server's named pipes are made: the only folder of
    /// the runtime a walled harness may open for writing (docs/sandbox.md).
    pub fn fifo_dir(&self) -> PathBuf {
        self.root.join(FIFO_DIR)
    }

    pub fn entry_script(&self) -> PathBuf {
        self.root.join("main.php")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Path of the file that defines `PhpFuzz\FuzzingContext` and `traceBlock()`,
    /// for running instrumented code outside the harness.
    /// The script that describes a PHPUnit fuzz test (`php phpunit-probe.php TEST_FILE`).
    pub fn phpunit_probe(&self) -> PathBuf {
        self.root.join("phpunit-probe.php")
    }

    /// The script that reads a callee's or a package's typed entry points
    /// (`php arguments-probe.php MODE …`, docs/autofuzz.md).
    pub fn arguments_probe(&self) -> PathBuf {
        self.root.join("arguments-probe.php")
    }

    pub fn fuzzing_context(&self) -> PathBuf {
        self.dir.path().join("FuzzingContext.php")
    }
}

#[cfg(test)]
mod tests {
    use super::FILES;

    /// Classes of `src/Arguments/` load by their file name (main.php's
    /// autoloader): a file left out of `FILES` is a class missing at run time.
    #[test]
    fn every_typed_arguments_class_is_embedded() {
        let dir = std::path::Path::new(env!("PHP_FUZZ_RUNTIME_DIR")).join("src/Arguments");
        for entry in std::fs::read_dir(&dir).expect("src/Arguments") {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".php") {
                let embedded = format!("Arguments/{name}");
                assert!(
                    FILES.iter().any(|(path, _)| *path == embedded),
                    "{name} is not in runtime.rs's FILES"
                );
            }
        }
    }
}
