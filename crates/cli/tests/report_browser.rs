//! The coverage report in a real browser (issue #16): a short campaign with
//! `--stats`, resumed once, then `report-coverage`, then headless Chromium
//! (Debian's `chromium` and `chromium-driver`, driven through Selenium by
//! `tests/browser/check_report.py`) checks that the index sorts and filters,
//! every link resolves, the plots are drawn and the console shows no error.
//!
//! Needs what `scripts/setup --test-libs` installs: `chromium`,
//! `chromedriver` and a Python with `selenium` ($PHP_FUZZ_TEST_PYTHON, else
//! `python3`). Missing, the test fails; `PHP_FUZZ_SKIP_BROWSER_TEST=1` skips
//! it instead, for machines that cannot install a browser.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fixture, php_fuzz};

/// `name` on $PATH, or the first of `also` that exists.
fn program(env: &str, names: &[&str], also: &[&str]) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(env) {
        return Ok(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    names
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .chain(also.iter().map(PathBuf::from))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{} not found (nor ${env})", names.join(" or ")))
}

fn python_with_selenium() -> Result<PathBuf, String> {
    let python = std::env::var_os("PHP_FUZZ_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let ok = Command::new(&python)
        .args(["-c", "import selenium"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Ok(python)
    } else {
        Err(format!(
            "{} cannot import selenium (set PHP_FUZZ_TEST_PYTHON=target/test-venv/bin/python)",
            python.display()
        ))
    }
}

/// The browser, its driver and the Python that drives them; a panic naming
/// what is missing, or `None` when the test is explicitly skipped.
fn browser_tools() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let found = (|| {
        Ok::<_, String>((
            program(
                "PHP_FUZZ_CHROMIUM",
                &["chromium", "chromium-browser"],
                &["/usr/lib/chromium/chromium"],
            )?,
            program(
                "PHP_FUZZ_CHROMEDRIVER",
                &["chromedriver"],
                &["/usr/lib/chromium/chromedriver"],
            )?,
            python_with_selenium()?,
        ))
    })();
    match found {
        Ok(tools) => Some(tools),
        Err(missing) if std::env::var_os("PHP_FUZZ_SKIP_BROWSER_TEST").is_some() => {
            eprintln!("SKIPPED (PHP_FUZZ_SKIP_BROWSER_TEST is set): {missing}");
            None
        }
        Err(missing) => panic!(
            "{missing}: run `scripts/setup --test-libs` (it installs chromium, chromium-driver \
             and selenium into target/test-venv), or set PHP_FUZZ_SKIP_BROWSER_TEST=1 to skip"
        ),
    }
}

fn campaign(dir: &Path, seed: &str) {
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            seed,
            "--max-runs",
            "20000",
            "--artifact-dir",
            "artifacts",
            "--stats",
            "stats.jsonl",
            "--quiet",
        ],
        dir,
    );
    assert!(run.stderr().contains("reached --max-runs"), "{}", run.all());
}

#[test]
fn the_report_sorts_filters_links_and_plots_in_a_real_browser() {
    let Some((chromium, chromedriver, python)) = browser_tools() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir(&corpus).unwrap();
    for seed in ["array.json", "object.json"] {
        fs::copy(fixture("json-parser/seeds").join(seed), corpus.join(seed)).unwrap();
    }
    campaign(dir.path(), "1");
    campaign(dir.path(), "2");
    let target = fixture("json-parser/target.php");
    let report = php_fuzz(
        &[
            "report-coverage",
            target.to_str().unwrap(),
            "corpus",
            "out",
            "--stats",
            "stats.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(report.code(), 0, "{}", report.all());

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check_report.py");
    let output = Command::new(&python)
        .arg(&script)
        .arg(dir.path().join("out"))
        .arg(&chromium)
        .arg(&chromedriver)
        .env("HOME", dir.path())
        .output()
        .expect("running the browser check");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the browser check failed:\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value = serde_json::from_str(&stdout).expect("the check's JSON");
    assert_eq!(result["failures"], serde_json::json!([]));
    assert!(result["checked"].as_u64().unwrap() > 20, "{stdout}");
    let plots = result["plots"].as_array().unwrap();
    assert_eq!(plots.len(), 3, "{stdout}");
    for plot in plots {
        assert_eq!(plot["restarts"], 1, "the resumed session is marked: {plot}");
    }
}
