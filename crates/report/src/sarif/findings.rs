//! The finding reports in an artifact directory: every
//! `<prefix>-<sha1>.json` (or `<prefix>-<sha1>-<target hash>.json`, see
//! `ArtifactDir::input_path`) beside its input `<prefix>-<sha1>.txt`, one
//! distinct finding each. Other files are not looked at, so the directory
//! can be a project's own folder (`fuzz`'s default is `.`).

use std::path::{Path, PathBuf};

use php_fuzz_storage::CrashRecord;

use super::{SarifError, SkippedReport};

/// One report and where it is.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    /// The `.json` report.
    pub report: PathBuf,
    /// The input beside it (the `.txt`), whether or not it is still there.
    pub input: PathBuf,
    pub record: CrashRecord,
}

/// The reports in `dir` in file name order, and those that could not be
/// read (named as under `dir`). The findings' paths are absolute, so that
/// they can be made relative to a source root other than the current
/// directory.
pub(crate) fn read_findings(dir: &Path) -> Result<(Vec<Finding>, Vec<SkippedReport>), SarifError> {
    let read_error = |source| SarifError::ReadDir {
        path: dir.to_path_buf(),
        source,
    };
    let absolute = std::path::absolute(dir).map_err(read_error)?;
    let entries = match std::fs::read_dir(&absolute) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(SarifError::NoArtifactDir {
                path: dir.to_path_buf(),
            });
        }
        Err(source) => return Err(read_error(source)),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| is_report_name(name))
        .collect();
    names.sort();
    let mut findings = Vec::new();
    let mut skipped = Vec::new();
    for name in names {
        let report = absolute.join(&name);
        let parsed = std::fs::read(&report)
            .map_err(|err| format!("cannot read it: {err}"))
            .and_then(|bytes| {
                serde_json::from_slice::<CrashRecord>(&bytes)
                    .map_err(|err| format!("not a php-fuzz crash report: {err}"))
            });
        match parsed {
            Ok(record) => findings.push(Finding {
                input: report.with_extension("txt"),
                report,
                record,
            }),
            Err(reason) => skipped.push(SkippedReport {
                path: dir.join(&name),
                reason,
            }),
        }
    }
    Ok((findings, skipped))
}

/// `crash-<40 hex>.json`, `side-effect-<40 hex>-<8 hex>.json`: a prefix of
/// lower-case words, the input's SHA-1, perhaps the target's short hash.
fn is_report_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".json") else {
        return false;
    };
    let hex = |part: &str, len: usize| {
        part.len() == len
            && part
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let parts: Vec<&str> = stem.split('-').collect();
    let prefix_len = match parts.as_slice() {
        [.., sha1] if hex(sha1, 40) => parts.len() - 1,
        [.., sha1, target] if hex(sha1, 40) && hex(target, 8) => parts.len() - 2,
        _ => return false,
    };
    prefix_len > 0
        && parts[..prefix_len].iter().all(|word| {
            !word.is_empty()
                && word
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "1d02965522afb49228f4581d5b2438716cebbe78";

    #[test]
    fn report_names_are_a_prefix_and_the_inputs_hash() {
        for good in [
            format!("crash-{SHA}.json"),
            format!("timeout-{SHA}.json"),
            format!("oom-{SHA}.json"),
            format!("side-effect-{SHA}.json"),
            format!("crash-{SHA}-0a1b2c3d.json"),
        ] {
            assert!(is_report_name(&good), "{good}");
        }
        for bad in [
            format!("crash-{SHA}.txt"),
            format!("{SHA}.json"),
            format!("-{SHA}.json"),
            format!("crash-{}.json", &SHA[1..]),
            format!("crash-{}.json", SHA.to_uppercase()),
            format!("Crash-{SHA}.json"),
            format!("crash-{SHA}-0a1b2c3.json"),
            format!(".php-fuzz-tmp-1-crash-{SHA}.json"),
            "composer.json".to_string(),
            "coverage.json".to_string(),
        ] {
            assert!(!is_report_name(&bad), "{bad}");
        }
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir");
        let err = read_findings(&missing).unwrap_err();
        assert!(matches!(err, SarifError::NoArtifactDir { .. }), "{err}");
        assert!(err.to_string().contains("no-such-dir"), "{err}");
    }

    #[test]
    fn reports_are_read_in_name_order_and_broken_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let record = CrashRecord {
            kind: "exception".into(),
            ..Default::default()
        };
        let json = serde_json::to_string(&record).unwrap();
        let b = dir.path().join(format!("timeout-{SHA}.json"));
        let a = dir.path().join(format!("crash-{SHA}.json"));
        let broken = dir.path().join(format!("oom-{SHA}.json"));
        std::fs::write(&b, &json).unwrap();
        std::fs::write(&a, &json).unwrap();
        std::fs::write(&broken, "{\"kind\": ").unwrap();
        std::fs::write(dir.path().join("composer.json"), "{}").unwrap();
        let (findings, skipped) = read_findings(dir.path()).unwrap();
        let reports: Vec<_> = findings.iter().map(|f| f.report.clone()).collect();
        assert_eq!(reports, [a.clone(), b]);
        assert_eq!(findings[0].input, a.with_extension("txt"));
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].path, broken);
        assert!(
            skipped[0].reason.contains("not a php-fuzz crash report"),
            "{}",
            skipped[0].reason
        );
    }
}
