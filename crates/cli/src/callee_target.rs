//! A PHP function or method as a target, with no target file written:
//! `App\Parser::parse` or `App\parse` (docs/autofuzz.md).
//!
//! php-fuzz writes a php-fuzzer target file into its cache that loads the
//! autoloader and calls `\PhpFuzz\Arguments\Autofuzz::configure()`, which
//! reads the callee's parameter types and decodes each input (a `php-fuzz
//! arguments v1` entry) into the call's arguments. Every command that runs a
//! target takes such a name, so a finding of `autofuzz` replays with
//! `php-fuzz run-single 'App\Parser::parse' crash-…`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// A callee resolved to a target file php-fuzz can run.
#[derive(Debug)]
pub struct CalleeTarget {
    /// The generated target file (php-fuzzer format).
    pub target_file: PathBuf,
    /// How users name it: `App\Parser::parse`.
    pub name: String,
    /// php-fuzz's own folder for the callee in the cache: `corpus/`.
    pub work: PathBuf,
}

impl CalleeTarget {
    pub fn corpus(&self) -> PathBuf {
        self.work.join("corpus")
    }
}

/// What a callee target is loaded with.
#[derive(Debug, Default, Clone)]
pub struct CalleeOptions {
    /// `--autoload`: the autoloader to require [default: the nearest
    /// `vendor/autoload.php` above the working folder].
    pub autoload: Option<PathBuf>,
    /// `--allowed-exception`: more exception classes that are normal results.
    pub allowed_exceptions: Vec<String>,
}

/// Whether `target` names a PHP function or method rather than a file: no
/// `/`, no `.php`, not an existing path, and PHP name syntax
/// (`Ns\Name`, `Ns\Class::method`, `function`).
pub fn is_callee(target: &Path) -> bool {
    let Some(text) = target.to_str() else {
        return false;
    };
    if text.contains('/') || text.ends_with(".php") || target.exists() {
        return false;
    }
    let (path, method) = match text.split_once("::") {
        Some((class, method)) => (class, Some(method)),
        None => (text, None),
    };
    let path = path.strip_prefix('\\').unwrap_or(path);
    !path.is_empty() && path.split('\\').all(is_identifier) && method.is_none_or(is_identifier)
}

fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic() || b >= 0x80)
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80)
}

/// Writes the target file of `callee` into the cache and says where it is.
pub fn resolve(callee: &str, options: &CalleeOptions) -> anyhow::Result<CalleeTarget> {
    let name = callee.strip_prefix('\\').unwrap_or(callee).to_string();
    let autoload = autoload_file(options.autoload.as_deref()).with_context(|| {
        format!("{name} is not a file; as the name of a PHP function or method to fuzz, it needs an autoloader")
    })?;
    let work = work_folder(&name, &autoload)?;
    std::fs::create_dir_all(&work)
        .with_context(|| format!("cannot create php-fuzz's folder {}", work.display()))?;
    let target_file = work.join("target.php");
    let source = target_source(&name, &autoload, &options.allowed_exceptions);
    std::fs::write(&target_file, source)
        .with_context(|| format!("cannot write {}", target_file.display()))?;
    Ok(CalleeTarget {
        target_file,
        name,
        work,
    })
}

/// `--autoload`'s file, else the nearest `vendor/autoload.php`.
pub fn autoload_file(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    match given {
        Some(path) => std::fs::canonicalize(path)
            .with_context(|| format!("--autoload {}: no such file", path.display())),
        None => nearest_autoload(),
    }
}

/// The nearest `vendor/autoload.php` in the working folder or above it.
fn nearest_autoload() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the working folder")?;
    for dir in cwd.ancestors() {
        let candidate = dir.join("vendor/autoload.php");
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "no vendor/autoload.php in {} or above it: name the autoloader with --autoload FILE",
        cwd.display()
    )
}

/// `$XDG_CACHE_HOME/php-fuzz/autofuzz/<callee>-<hash of the autoloader>/`.
fn work_folder(name: &str, autoload: &Path) -> anyhow::Result<PathBuf> {
    let key = format!("{}\n{name}", autoload.display());
    let hash = &php_fuzz_storage::content_hash(key.as_bytes())[..12];
    let readable: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Ok(crate::fuzz_test_target::cache_folder()?
        .join("autofuzz")
        .join(format!("{readable}-{hash}")))
}

/// The php-fuzzer target file that fuzzes `name`.
pub fn target_source(name: &str, autoload: &Path, allowed: &[String]) -> String {
    target_source_with(name, autoload, &[], allowed)
}

/// The php-fuzzer target file that fuzzes `name`, with `includes` loaded
/// after the autoloader: the files of functions no autoloader loads.
pub fn target_source_with(
    name: &str,
    autoload: &Path,
    includes: &[&Path],
    allowed: &[String],
) -> String {
    let includes: String = includes
        .iter()
        .map(|file| {
            format!(
                "require_once {};\n",
                php_string(&file.display().to_string())
            )
        })
        .collect();
    let allowed = allowed
        .iter()
        .map(|class| php_string(class.strip_prefix('\\').unwrap_or(class)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "<?php declare(strict_types=1);\n\
         // Written by php-fuzz to fuzz {name} (docs/autofuzz.md).\n\
         /** @var PhpFuzzer\\Config $config */\n\
         \\PhpFuzz\\Arguments\\Autofuzz::preload();\n\
         require_once {autoload};\n\
         {includes}\
         \\PhpFuzz\\Arguments\\Autofuzz::configure($config, {callee}, [{allowed}]);\n",
        autoload = php_string(&autoload.display().to_string()),
        callee = php_string(name),
    )
}

/// A single-quoted PHP string literal.
fn php_string(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_functions_and_methods_are_callees_and_files_are_not() {
        for callee in [
            r"App\Parser::parse",
            r"\App\Parser::parse",
            r"App\parse",
            "strlen",
            "Parser::parse",
        ] {
            assert!(is_callee(Path::new(callee)), "{callee}");
        }
        for file in [
            "target.php",
            "fuzz/target.php",
            r"App\Parser::",
            r"App\\Parser",
            "tests/A.php::fuzz",
            "1abc",
            r"App\Parser::pa-rse",
        ] {
            assert!(!is_callee(Path::new(file)), "{file}");
        }
    }

    #[test]
    fn the_target_file_loads_the_autoloader_and_names_the_callee() {
        let source = target_source(
            r"App\Parser::parse",
            Path::new("/p/vendor/autoload.php"),
            &[r"\App\ParseError".into()],
        );
        assert!(source.contains("require_once '/p/vendor/autoload.php';"));
        assert!(
            source.contains(
                r"Autofuzz::configure($config, 'App\\Parser::parse', ['App\\ParseError']);"
            )
        );
    }
}
