//! `--entropic` (and libFuzzer's `-entropic=1`): a campaign under the
//! Entropic schedule finds the planted bugs, and `--seed` still replays it.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{artifacts, fixture, php_fuzz};

fn corpus_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_same_seed_replays_an_entropic_campaign() {
    let target = fixture("json-parser/target.php");
    let mut corpora = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let run = php_fuzz(
            &[
                "fuzz",
                target.to_str().unwrap(),
                "corpus",
                "--entropic",
                "--seed",
                "5",
                "--max-runs",
                "20000",
            ],
            dir.path(),
        );
        assert!(matches!(run.code(), 0 | 77), "{}", run.all());
        corpora.push(corpus_names(&dir.path().join("corpus")));
    }
    assert!(corpora[0].len() > 10, "{:?}", corpora[0]);
    assert_eq!(corpora[0], corpora[1]);
}

#[test]
fn an_entropic_campaign_finds_both_planted_bugs() {
    // Also with energy scaled by execution time.
    for scaled in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let target = fixture("json-parser/target.php");
        let mut args = vec![
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--entropic",
            "--seed",
            "1",
            "--max-time",
            "60",
            "--max-crashes",
            "2",
        ];
        if scaled {
            args.push("--entropic-scale-per-exec-time");
        }
        let run = php_fuzz(&args, dir.path());
        assert_eq!(run.code(), 77, "scaled {scaled}: {}", run.all());
        assert_eq!(artifacts(dir.path(), "crash-").len(), 2, "{}", run.all());
    }
}

#[test]
fn libfuzzer_takes_its_entropic_flags() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &[
            "libfuzzer",
            target.to_str().unwrap(),
            "-entropic=1",
            "-entropic_feature_frequency_threshold=100",
            "-entropic_number_of_rarest_features=50",
            "-entropic_scale_per_exec_time=1",
            "-runs=5000",
            "-seed=3",
        ],
        dir.path(),
    );
    assert!(matches!(run.code(), 0 | 77), "{}", run.all());
    assert!(
        run.stderr().contains("Done 5000 runs") || run.code() == 77,
        "{}",
        run.all()
    );
}

/// The plain schedule scaled by run time (`--scale-per-exec-time`) still
/// finds both planted bugs.
#[test]
fn a_campaign_scaled_by_run_time_finds_both_planted_bugs() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--scale-per-exec-time",
            "--seed",
            "1",
            "--max-time",
            "60",
            "--max-crashes",
            "2",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert_eq!(artifacts(dir.path(), "crash-").len(), 2, "{}", run.all());
}
