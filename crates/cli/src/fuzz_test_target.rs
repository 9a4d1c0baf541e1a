//! PHPUnit fuzz tests as targets: `tests/ParserFuzzTest.php[::fuzzParse]`
//! (docs/phpunit.md).
//!
//! php-fuzz asks PHP to describe the test (`phpunit-probe.php`: bootstrap,
//! class, #[FuzzTest] methods), picks the method, and writes a php-fuzzer
//! target file into its cache that calls `FuzzTarget::configure()`. Every
//! command then runs that file like any target. The method's folder
//! `fuzz/<Class>/<method>/` beside the test holds the seeds and receives the
//! findings; the working corpus and full artifacts stay in the cache.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use php_fuzz_harness::{Runtime, SandboxMode, output_walled};
use serde::Deserialize;

/// A fuzz test method, resolved to a target file php-fuzz can run.
#[derive(Debug)]
pub struct FuzzTest {
    /// The generated target file (php-fuzzer format) that runs the method.
    pub target_file: PathBuf,
    /// How users name it: `tests/ParserFuzzTest.php::fuzzParse`.
    pub name: String,
    /// `fuzz/<ShortClassName>/<method>/` beside the test: seeds and findings.
    pub folder: PathBuf,
    /// php-fuzz's own folder for the method in the cache: `corpus/`, `artifacts/`.
    pub work: PathBuf,
    /// The attribute's timeout, in seconds.
    pub timeout: Option<f64>,
    /// A typed method's seeds from its #[TestWith] rows and data provider
    /// sets, written as entries; `None` when it has none.
    pub provided_seeds: Option<PathBuf>,
}

impl FuzzTest {
    pub fn corpus(&self) -> PathBuf {
        self.work.join("corpus")
    }

    pub fn artifacts(&self) -> PathBuf {
        self.work.join("artifacts")
    }
}

/// Several fuzz methods and none named: the user must choose (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error(
    "{file} has {} fuzz methods; name one: {}",
    methods.len(),
    methods.iter().map(|m| format!("{file}::{m}")).collect::<Vec<_>>().join(", ")
)]
pub struct ChooseMethod {
    pub file: String,
    pub methods: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Probe {
    ok: Option<Description>,
    error: Option<ProbeError>,
}

#[derive(Debug, Deserialize)]
struct ProbeError {
    class: String,
    message: String,
    file: String,
    line: u32,
}

#[derive(Debug, Deserialize)]
struct Description {
    class: String,
    short_name: String,
    file: String,
    bootstrap: Option<String>,
    /// What phpunit runs the test with; the harness does the same.
    error_reporting: i64,
    framework_folders: Vec<String>,
    methods: Vec<Method>,
}

#[derive(Debug, Deserialize)]
struct Method {
    name: String,
    error: Option<String>,
    timeout: Option<f64>,
    folder: String,
    /// A typed method's #[TestWith] rows and data provider sets, as entries.
    #[serde(default)]
    seeds: Vec<String>,
}

/// `FILE.php::method` → (`FILE.php`, `method`).
pub fn split_target(target: &Path) -> (PathBuf, Option<String>) {
    let text = target.to_string_lossy();
    if let Some((file, method)) = text.rsplit_once("::")
        && !method.is_empty()
        && method
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return (PathBuf::from(file), Some(method.to_string()));
    }
    (target.to_path_buf(), None)
}

/// The fuzz test `target` names, or `None` for a plain target file. A file is
/// a fuzz test when a method is named (`::method`), or when it mentions
/// `PhpFuzz\PHPUnit` and never calls `setTarget(`.
pub fn resolve(
    target: &Path,
    php: &Path,
    sandbox: SandboxMode,
) -> anyhow::Result<Option<FuzzTest>> {
    let (file, method) = split_target(target);
    if method.is_none() && !looks_like_fuzz_test(&file) {
        return Ok(None);
    }
    if !file.is_file() {
        bail!("fuzz test file not found: {}", file.display());
    }
    let description = describe(&file, php, sandbox)?;
    let chosen = choose(&description, &file, method.as_deref())?;
    if let Some(error) = &chosen.error {
        bail!("{error}");
    }
    let work = work_folder(&description, &chosen.name)?;
    std::fs::create_dir_all(&work)
        .with_context(|| format!("cannot create php-fuzz's folder {}", work.display()))?;
    let target_file = work.join("target.php");
    std::fs::write(&target_file, target_source(&description, &chosen.name))
        .with_context(|| format!("cannot write {}", target_file.display()))?;
    let provided_seeds = write_provided_seeds(&work, &chosen.seeds)?;
    Ok(Some(FuzzTest {
        target_file,
        name: format!("{}::{}", file.display(), chosen.name),
        folder: PathBuf::from(&chosen.folder),
        work,
        timeout: chosen.timeout,
        provided_seeds,
    }))
}

/// Writes a typed method's provided seeds into `work/provided/`, one file
/// per entry named by its hash, replacing what an earlier run wrote there.
fn write_provided_seeds(work: &Path, seeds: &[String]) -> anyhow::Result<Option<PathBuf>> {
    let folder = work.join("provided");
    if folder.is_dir() {
        std::fs::remove_dir_all(&folder)
            .with_context(|| format!("cannot clear {}", folder.display()))?;
    }
    if seeds.is_empty() {
        return Ok(None);
    }
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    for seed in seeds {
        let path = folder.join(format!(
            "provided-{}",
            php_fuzz_storage::content_hash(seed.as_bytes())
        ));
        std::fs::write(&path, seed).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Some(folder))
}

fn looks_like_fuzz_test(file: &Path) -> bool {
    std::fs::read_to_string(file)
        .is_ok_and(|text| text.contains("PhpFuzz\\PHPUnit") && !text.contains("setTarget("))
}

/// Runs the PHPUnit probe on `file`, inside the wall: it loads the test's
/// code, and so the library's.
fn describe(file: &Path, php: &Path, sandbox: SandboxMode) -> anyhow::Result<Description> {
    let runtime = Runtime::unpack().context("cannot unpack the PHP runtime")?;
    let mut command = Command::new(php);
    command
        .arg(runtime.phpunit_probe())
        .arg(file)
        .env("TMPDIR", runtime.scratch());
    let scratch = vec![runtime.scratch().to_path_buf()];
    let output = output_walled(&mut command, php, scratch, sandbox)
        .with_context(|| format!("cannot run {}", php.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(json) = stdout
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("PHP-FUZZ-PROBE "))
    else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!(
            "cannot load the fuzz test {}: php exited with {} before describing it\n{}{}",
            file.display(),
            output.status,
            stdout.trim(),
            stderr.trim()
        );
    };
    let probe: Probe = serde_json::from_str(json).context("php-fuzz's PHPUnit probe")?;
    match (probe.ok, probe.error) {
        (Some(description), _) => Ok(description),
        (None, Some(e)) => bail!(
            "cannot load the fuzz test {}: {}: {} ({}:{})",
            file.display(),
            e.class,
            e.message,
            e.file,
            e.line
        ),
        (None, None) => bail!("php-fuzz's PHPUnit probe said nothing"),
    }
}

fn choose<'a>(
    description: &'a Description,
    file: &Path,
    method: Option<&str>,
) -> anyhow::Result<&'a Method> {
    let names = || {
        description
            .methods
            .iter()
            .map(|m| m.name.clone())
            .collect::<Vec<_>>()
    };
    match method {
        Some(name) => description
            .methods
            .iter()
            .find(|m| m.name == name)
            .with_context(|| {
                format!(
                    "{} has no #[FuzzTest] method {name}; its fuzz methods: {}",
                    description.class,
                    names().join(", ")
                )
            }),
        None => match description.methods.as_slice() {
            [] => bail!("{} has no #[FuzzTest] method", description.class),
            [only] => Ok(only),
            _ => Err(ChooseMethod {
                file: file.display().to_string(),
                methods: names(),
            }
            .into()),
        },
    }
}

/// `$XDG_CACHE_HOME/php-fuzz/fuzz-tests/<Class>-<method>-<hash of the test's path>/`.
fn work_folder(description: &Description, method: &str) -> anyhow::Result<PathBuf> {
    let key = format!("{}\n{}", description.file, description.class);
    let hash = &php_fuzz_storage::content_hash(key.as_bytes())[..12];
    Ok(cache_folder()?
        .join("fuzz-tests")
        .join(format!("{}-{method}-{hash}", description.short_name)))
}

/// `$XDG_CACHE_HOME/php-fuzz/` (else `~/.cache/php-fuzz/`): generated
/// target files and the working corpora of fuzz tests and callees.
pub fn cache_folder() -> anyhow::Result<PathBuf> {
    let cache = match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(".cache"))
            .context("neither XDG_CACHE_HOME nor HOME is set: php-fuzz has no cache folder for its working corpus")?,
    };
    Ok(cache.join("php-fuzz"))
}

fn target_source(description: &Description, method: &str) -> String {
    let folders = description
        .framework_folders
        .iter()
        .map(|f| php_string(f))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "<?php declare(strict_types=1);\n\
         // Written by php-fuzz to fuzz {file}::{method} (docs/phpunit.md); rewritten on every run.\n\
         /** @var PhpFuzzer\\Config $config */\n\
         \\PhpFuzz\\PHPUnit\\FuzzTarget::configure($config, {file_lit}, {class}, {method_lit}, {bootstrap}, [{folders}], {level});\n",
        file = description.file,
        file_lit = php_string(&description.file),
        class = php_string(&description.class),
        method_lit = php_string(method),
        level = description.error_reporting,
        bootstrap = description
            .bootstrap
            .as_deref()
            .map_or_else(|| "null".to_string(), php_string),
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
    fn a_method_is_split_off_the_file() {
        assert_eq!(
            split_target(Path::new("tests/A.php::fuzzParse")),
            (PathBuf::from("tests/A.php"), Some("fuzzParse".into()))
        );
        assert_eq!(
            split_target(Path::new("tests/A.php")),
            (PathBuf::from("tests/A.php"), None)
        );
        assert_eq!(
            split_target(Path::new("odd::dir/A.php")),
            (PathBuf::from("odd::dir/A.php"), None)
        );
    }

    #[test]
    fn php_strings_escape_quotes_and_backslashes() {
        assert_eq!(php_string(r"Acme\It's"), r"'Acme\\It\'s'");
    }
}
