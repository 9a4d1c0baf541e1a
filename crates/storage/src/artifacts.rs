use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{
    StorageError, check_writable, content_hash, io_error, remove_stale_temp_files,
    replace_atomically, write_atomically,
};

/// The readable sidecar saved next to each crash input (`<artifact>.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CrashRecord {
    /// `exception`, `warning`, `timeout`, `fatal-error`, `out-of-memory`…
    pub kind: String,
    /// Exception class or PHP error type.
    pub class: String,
    pub message: String,
    pub file: String,
    pub line: u32,
    pub trace: String,
    /// What deduplication compares (docs/dedup.md), as the php-fuzz that
    /// wrote it had it; recomputed from the fields above when read back.
    pub signature: String,
    /// Times this finding was hit, over the campaigns that used this
    /// directory (updated as each ends); 0 in reports older than the field.
    #[serde(default)]
    pub hits: u64,
    pub input_file: String,
    pub input_size: usize,
    pub sha1: String,
    /// Seconds since the Unix epoch.
    pub found_at: u64,
    pub target: String,
    /// The command that reproduces it.
    pub reproduce: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone)]
pub struct SavedArtifact {
    pub input: PathBuf,
    pub sidecar: PathBuf,
}

/// How artifacts are named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ArtifactNaming {
    /// php-fuzz's own: `DIR/crash-<sha1>.txt`, with the report beside it as
    /// `DIR/crash-<sha1>.json`.
    #[default]
    WithReport,
    /// libFuzzer's: `<prefix>crash-<sha1>`, where the prefix is a plain
    /// string (`dir/` or `dir/name-`), and no report; every artifact goes to
    /// `exact` instead if given (`-exact_artifact_path`).
    LibFuzzer {
        prefix: String,
        exact: Option<PathBuf>,
    },
}

/// Where crash, timeout and out-of-memory inputs are saved.
#[derive(Debug, Clone)]
pub struct ArtifactDir {
    dir: PathBuf,
    naming: ArtifactNaming,
}

impl ArtifactDir {
    pub fn open(dir: &Path) -> Result<ArtifactDir, StorageError> {
        ArtifactDir::open_named(dir, ArtifactNaming::WithReport)
    }

    /// Opens the directory the artifacts go to: `dir`, or with libFuzzer's
    /// naming the directory of the prefix (or of the exact path).
    pub fn open_named(dir: &Path, naming: ArtifactNaming) -> Result<ArtifactDir, StorageError> {
        let dir = match &naming {
            ArtifactNaming::WithReport => dir.to_path_buf(),
            ArtifactNaming::LibFuzzer {
                exact: Some(exact), ..
            } => parent_dir(exact),
            ArtifactNaming::LibFuzzer { prefix, .. } if prefix.ends_with('/') => {
                PathBuf::from(prefix)
            }
            ArtifactNaming::LibFuzzer { prefix, .. } => parent_dir(Path::new(prefix)),
        };
        fs::create_dir_all(&dir).map_err(io_error(&dir, "cannot create the artifact directory"))?;
        check_writable(&dir, "cannot write to the artifact directory")?;
        remove_stale_temp_files(&dir);
        Ok(ArtifactDir { dir, naming })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether each artifact gets a report beside it (php-fuzz's naming).
    pub fn writes_reports(&self) -> bool {
        self.naming == ArtifactNaming::WithReport
    }

    /// The path `target`'s crash input would be saved at. With reports:
    /// `<prefix>-<sha1>.txt`, unless a crash of another target sharing the
    /// directory already has that name; then
    /// `<prefix>-<sha1>-<hash of the target's path>.txt`.
    pub fn input_path(&self, prefix: &str, input: &[u8], target: &str) -> PathBuf {
        let hash = content_hash(input);
        match &self.naming {
            ArtifactNaming::WithReport => {}
            ArtifactNaming::LibFuzzer {
                exact: Some(exact), ..
            } => return exact.clone(),
            ArtifactNaming::LibFuzzer {
                prefix: string_prefix,
                ..
            } => return PathBuf::from(format!("{string_prefix}{prefix}-{hash}")),
        }
        let plain = self.dir.join(format!("{prefix}-{hash}.txt"));
        let taken_by_another = fs::read(plain.with_extension("json"))
            .ok()
            .and_then(|json| serde_json::from_slice::<CrashRecord>(&json).ok())
            .is_some_and(|other| other.target != target);
        if !taken_by_another {
            return plain;
        }
        let target_hash = content_hash(target.as_bytes());
        self.dir
            .join(format!("{prefix}-{hash}-{}.txt", &target_hash[..8]))
    }

    /// Saves the exact input bytes first, then the sidecar, at
    /// [`ArtifactDir::input_path`]. `record`'s `input_file` and `sha1` are
    /// filled in here.
    pub fn save(
        &self,
        prefix: &str,
        input: &[u8],
        record: &mut CrashRecord,
    ) -> Result<SavedArtifact, StorageError> {
        let input_path = self.input_path(prefix, input, &record.target);
        record.sha1 = content_hash(input);
        record.input_file = input_path.display().to_string();
        record.input_size = input.len();
        if self.naming != ArtifactNaming::WithReport {
            // libFuzzer overwrites: -exact_artifact_path names one file for every run.
            replace_atomically(&input_path, input)?;
            return Ok(SavedArtifact {
                sidecar: input_path.clone(),
                input: input_path,
            });
        }
        write_atomically(&input_path, input)?;
        let sidecar = input_path.with_extension("json");
        // The same input found again (perhaps by another process) with a
        // different report: keep the newest.
        ArtifactDir::rewrite_record(&sidecar, record)?;
        Ok(SavedArtifact {
            input: input_path,
            sidecar,
        })
    }

    /// The report at `sidecar` as it is on disk now.
    pub fn read_record(sidecar: &Path) -> Option<CrashRecord> {
        serde_json::from_slice(&fs::read(sidecar).ok()?).ok()
    }

    /// Writes `record` over the report at `sidecar`, atomically.
    pub fn rewrite_record(sidecar: &Path, record: &CrashRecord) -> Result<(), StorageError> {
        let mut json =
            serde_json::to_vec_pretty(record).map_err(|source| StorageError::Sidecar {
                path: sidecar.to_path_buf(),
                source,
            })?;
        json.push(b'\n');
        replace_atomically(sidecar, &json)
    }

    /// Crash reports already in the directory, for deduplicating across runs.
    /// Sidecars that do not parse are skipped.
    pub fn existing(&self) -> Vec<(PathBuf, CrashRecord)> {
        if self.naming != ArtifactNaming::WithReport {
            return Vec::new();
        }
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".json")
                    && ["crash-", "timeout-", "oom-"]
                        .iter()
                        .any(|prefix| name.starts_with(prefix))
            })
            .filter_map(|p| {
                let record: CrashRecord = serde_json::from_slice(&fs::read(&p).ok()?).ok()?;
                Some((p, record))
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }
}

/// The directory `path` is in (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> CrashRecord {
        CrashRecord {
            kind: "exception".into(),
            class: "TypeError".into(),
            message: "boom".into(),
            file: "/t.php".into(),
            line: 3,
            trace: "#0 f() at /t.php:3\n".into(),
            signature: "exception TypeError /t.php:3".into(),
            hits: 1,
            input_file: String::new(),
            input_size: 0,
            sha1: String::new(),
            found_at: 1,
            target: "/t.php".into(),
            reproduce: "php-fuzz run-single /t.php crash-x.txt".into(),
            stderr: None,
            note: None,
        }
    }

    #[test]
    fn saves_exact_bytes_and_a_sidecar_that_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = ArtifactDir::open(&dir.path().join("out")).unwrap();
        let input = b"\x00\xff<?php\n";
        let mut rec = record();
        let saved = artifacts.save("crash", input, &mut rec).unwrap();
        assert_eq!(fs::read(&saved.input).unwrap(), input);
        let name = saved.input.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, format!("crash-{}.txt", content_hash(input)));
        assert_eq!(saved.sidecar.extension().unwrap(), "json");
        let existing = artifacts.existing();
        assert_eq!(existing.len(), 1);
        assert_eq!(existing[0].1, rec);
        assert_eq!(existing[0].1.input_size, input.len());
    }

    #[test]
    fn a_report_older_than_the_hit_count_reads_back_with_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut old = serde_json::to_value(record()).unwrap();
        old.as_object_mut().unwrap().remove("hits");
        let sidecar = dir.path().join("crash-x.json");
        fs::write(&sidecar, old.to_string()).unwrap();
        let read = ArtifactDir::read_record(&sidecar).unwrap();
        assert_eq!(read.hits, 0);
        ArtifactDir::rewrite_record(&sidecar, &CrashRecord { hits: 7, ..read }).unwrap();
        assert_eq!(ArtifactDir::read_record(&sidecar).unwrap().hits, 7);
    }

    #[test]
    fn libfuzzer_naming_is_a_plain_prefix_without_a_report() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = format!("{}/out/run1-", dir.path().display());
        let naming = ArtifactNaming::LibFuzzer {
            prefix: prefix.clone(),
            exact: None,
        };
        let artifacts = ArtifactDir::open_named(Path::new("unused"), naming).unwrap();
        assert_eq!(artifacts.dir(), dir.path().join("out"));
        let saved = artifacts.save("timeout", b"x", &mut record()).unwrap();
        assert_eq!(
            saved.input,
            PathBuf::from(format!("{prefix}timeout-{}", content_hash(b"x")))
        );
        assert_eq!(fs::read(&saved.input).unwrap(), b"x");
        assert_eq!(fs::read_dir(dir.path().join("out")).unwrap().count(), 1);
        assert!(artifacts.existing().is_empty());

        let exact = dir.path().join("exact/min");
        let naming = ArtifactNaming::LibFuzzer {
            prefix: "./".into(),
            exact: Some(exact.clone()),
        };
        let artifacts = ArtifactDir::open_named(Path::new("unused"), naming).unwrap();
        artifacts.save("crash", b"a", &mut record()).unwrap();
        artifacts.save("crash", b"b", &mut record()).unwrap();
        assert_eq!(
            fs::read(&exact).unwrap(),
            b"b",
            "the exact path is overwritten"
        );
    }

    #[test]
    fn two_targets_crashing_on_one_input_keep_a_report_each() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = ArtifactDir::open(dir.path()).unwrap();
        let mut first = record();
        let mut second = CrashRecord {
            target: "/other.php".into(),
            ..record()
        };
        let a = artifacts.save("crash", b"same", &mut first).unwrap();
        let b = artifacts.save("crash", b"same", &mut second).unwrap();
        assert_ne!(a.sidecar, b.sidecar);
        let mut targets: Vec<_> = artifacts
            .existing()
            .into_iter()
            .map(|(_, r)| r.target)
            .collect();
        targets.sort();
        assert_eq!(targets, ["/other.php", "/t.php"]);
        // Found again, each report stays where it is.
        assert_eq!(artifacts.input_path("crash", b"same", "/t.php"), a.input);
        assert_eq!(
            artifacts.input_path("crash", b"same", "/other.php"),
            b.input
        );
    }
}
