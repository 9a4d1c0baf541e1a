//! `php-fuzz libfuzzer-wrapper TARGET --out $OUT/name_fuzzer`: the shell
//! script ClusterFuzzLite and OSS-Fuzz run as a fuzz target. It finds the
//! bundled php-fuzz, php and target from its own directory, so the bundle
//! can move, and hands every argument to `php-fuzz libfuzzer`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use php_fuzz_engine::shell_quote;

use crate::stdout::Stdout;

/// Arguments of `php-fuzz libfuzzer-wrapper`.
#[derive(clap::Args, Debug)]
pub struct WrapperArgs {
    /// The target file, inside the directory of --out.
    pub target: PathBuf,
    /// The wrapper to write, e.g. $OUT/json_fuzzer (name: letters, digits, _ and -).
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
    /// Where bin/php-fuzz and bin/php are, relative to the directory of --out.
    #[arg(long, value_name = "DIR", default_value = "php-fuzz-runtime")]
    pub runtime: PathBuf,
    /// php.ini setting the target runs with (repeatable), as php-fuzz's --ini.
    #[arg(long = "ini", value_name = "KEY=VALUE")]
    pub ini: Vec<String>,
}

/// The marker the infrastructure looks for in a fuzz target. Spelled
/// apart here: a php-fuzz binary holding it would count as a target too.
fn target_marker() -> String {
    "LLVMFuzzer_TestOneInput".replace('_', "")
}

pub fn run(args: &WrapperArgs) -> anyhow::Result<ExitCode> {
    let name = args
        .out
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
        .with_context(|| {
            format!(
                "--out {}: a fuzz target's name has only letters, digits, _ and - (e.g. json_fuzzer)",
                args.out.display()
            )
        })?;
    let out_dir = match args.out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let out_dir = out_dir
        .canonicalize()
        .with_context(|| format!("cannot find the directory of {}", args.out.display()))?;
    let target = args
        .target
        .canonicalize()
        .with_context(|| format!("cannot find target {}", args.target.display()))?;
    let Ok(relative) = target.strip_prefix(&out_dir) else {
        bail!(
            "the target {} is not inside {}: bundle it there, so the wrapper finds it wherever the directory moves",
            target.display(),
            out_dir.display()
        );
    };
    if args.runtime.is_absolute()
        || args
            .runtime
            .components()
            .any(|c| matches!(c, Component::ParentDir))
    {
        bail!("--runtime must be a path inside the directory of --out");
    }
    for program in ["bin/php-fuzz", "bin/php"] {
        let path = out_dir.join(&args.runtime).join(program);
        if !path.exists() {
            eprintln!(
                "WARNING: {} does not exist (yet): the wrapper runs it",
                path.display()
            );
        }
    }
    let in_dir = |path: &Path| shell_quote(&path.display().to_string());
    let mut ini = String::new();
    for setting in &args.ini {
        ini.push_str(&format!(" --ini {}", shell_quote(setting)));
    }
    let script = format!(
        r#"#!/bin/sh
# {name}: a php-fuzz fuzz target for ClusterFuzzLite and OSS-Fuzz, written by
# `php-fuzz libfuzzer-wrapper`. It runs {target} as a libFuzzer binary would;
# the infrastructure finds fuzz targets by this marker: {marker}.
# Everything is found from this file's directory, so the directory may move.
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd) || exit 1
runtime="$here"/{runtime}
exec "$runtime/bin/php-fuzz" libfuzzer --php "$runtime/bin/php"{ini} "$here"/{relative} "$@"
"#,
        target = relative.display(),
        marker = target_marker(),
        runtime = in_dir(&args.runtime),
        relative = in_dir(relative),
    );
    std::fs::write(&args.out, script)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    std::fs::set_permissions(&args.out, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", args.out.display()))?;
    Stdout::lock().line(format_args!(
        "wrote {} (runs {})",
        args.out.display(),
        relative.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}
