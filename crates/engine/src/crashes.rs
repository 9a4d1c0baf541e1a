//! Distinct crashes of a session: each saved once, before anything else
//! happens; duplicates are counted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use php_fuzz_harness::{Crash, CrashKind, HarnessConfig};
use php_fuzz_instrument::StubStyle;
use php_fuzz_storage::{ArtifactDir, ArtifactNaming, CrashRecord, StorageError};

use crate::EngineError;
use crate::signature::signature;

#[derive(Debug, Clone)]
pub struct KnownCrash {
    /// `record.kind`, parsed.
    pub kind: CrashKind,
    pub record: CrashRecord,
    pub artifact: PathBuf,
    /// Times hit in this session.
    pub hits: u64,
    /// Found by this session, as opposed to loaded from an earlier one.
    pub new: bool,
}

/// What `CrashStore::record` did with a crash.
#[derive(Debug)]
pub enum Recorded<'a> {
    /// First of its kind: saved to disk.
    New(&'a KnownCrash),
    /// Same bug as one already saved (this session or an earlier one).
    Duplicate(&'a KnownCrash),
}

#[derive(Debug)]
pub struct CrashStore {
    artifacts: ArtifactDir,
    target: String,
    /// The campaign's options that decide how the target runs, for the
    /// reproduce command (see [`replay_flags`]).
    replay_flags: String,
    known: HashMap<String, KnownCrash>,
    /// Signatures in order of discovery.
    order: Vec<String>,
    /// Where each new finding's input is also saved alone.
    findings_dir: Option<PathBuf>,
}

impl CrashStore {
    /// Opens the artifact directory and learns the crashes saved there before.
    /// A saved report of this target with a kind php-fuzz does not know is an
    /// error.
    pub fn open(dir: &Path, target: &str, replay_flags: &str) -> Result<CrashStore, EngineError> {
        CrashStore::open_named(dir, ArtifactNaming::WithReport, target, replay_flags)
    }

    /// As [`CrashStore::open`], with artifacts named `naming`'s way.
    pub fn open_named(
        dir: &Path,
        naming: ArtifactNaming,
        target: &str,
        replay_flags: &str,
    ) -> Result<CrashStore, EngineError> {
        let artifacts = ArtifactDir::open_named(dir, naming)?;
        let mut known = HashMap::new();
        for (sidecar, record) in artifacts.existing() {
            let artifact = sidecar.with_extension("txt");
            if record.target == target && artifact.exists() {
                let kind = record.kind.parse::<CrashKind>().map_err(|_| {
                    EngineError::UnknownCrashKind {
                        sidecar: sidecar.clone(),
                        kind: record.kind.clone(),
                    }
                })?;
                known.entry(record.signature.clone()).or_insert(KnownCrash {
                    kind,
                    record,
                    artifact,
                    hits: 0,
                    new: false,
                });
            }
        }
        Ok(CrashStore {
            artifacts,
            target: target.to_string(),
            replay_flags: replay_flags.to_string(),
            known,
            order: Vec::new(),
            findings_dir: None,
        })
    }

    /// Also saves each new finding's input into `dir`, alone, after its artifact.
    pub fn with_findings_dir(mut self, dir: Option<PathBuf>) -> CrashStore {
        self.findings_dir = dir;
        self
    }

    pub fn artifact_dir(&self) -> &Path {
        self.artifacts.dir()
    }

    /// True if `crash` is a bug already saved (by this session or an earlier one).
    pub fn knows(&self, crash: &Crash) -> bool {
        self.known.contains_key(&signature(crash))
    }

    /// Saves the crash if it is a new bug, or counts it. The input is on disk
    /// before this returns `New`.
    pub fn record(&mut self, input: &[u8], crash: &Crash) -> Result<Recorded<'_>, StorageError> {
        let signature = signature(crash);
        if self.known.contains_key(&signature) {
            let known = self.known.get_mut(&signature).expect("checked");
            known.hits += 1;
            if known.hits == 1 {
                self.order.push(signature.clone());
            }
            return Ok(Recorded::Duplicate(known));
        }
        let prefix = crash.kind.artifact_prefix();
        let artifact_path = self.artifacts.input_path(prefix, input, &self.target);
        let p = &crash.problem;
        let mut record = CrashRecord {
            kind: crash.kind.name().to_string(),
            class: p.class.clone(),
            message: p.message.clone(),
            file: p.file.clone(),
            line: p.line,
            trace: p.trace.clone(),
            signature: signature.clone(),
            input_file: String::new(),
            input_size: input.len(),
            sha1: String::new(),
            found_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            target: self.target.clone(),
            reproduce: format!(
                "php-fuzz run-single {} {}{}",
                shell_quote(&self.target),
                shell_quote(&artifact_path.display().to_string()),
                self.replay_flags
            ),
            stderr: crash.stderr.clone(),
            note: crash.note.clone(),
        };
        let saved = self.artifacts.save(prefix, input, &mut record)?;
        if let Some(dir) = &self.findings_dir {
            php_fuzz_storage::save_finding_input(dir, prefix, input)?;
        }
        self.order.push(signature.clone());
        let known = self.known.entry(signature).or_insert(KnownCrash {
            kind: crash.kind,
            record,
            artifact: saved.input,
            hits: 1,
            new: true,
        });
        Ok(Recorded::New(known))
    }

    /// Distinct crashes found by this session.
    pub fn new_count(&self) -> usize {
        self.known.values().filter(|k| k.new).count()
    }

    /// Distinct crashes saved for the target, by this session or earlier ones.
    pub fn known_count(&self) -> usize {
        self.known.len()
    }

    /// Distinct crashes hit by this session (new ones and ones saved before), in order.
    pub fn hit_this_session(&self) -> impl Iterator<Item = &KnownCrash> {
        self.order.iter().filter_map(|s| self.known.get(s))
    }
}

/// Every crash kind, to find one by its name.
/// The options of a reproduce command that make the target run as it ran in
/// the campaign: its timeout, memory limit, `php` and ini settings, and the
/// coverage stub when it is not the default. Each starts with a space.
pub fn replay_flags(config: &HarnessConfig, style: StubStyle) -> String {
    let mut flags = format!(
        " --timeout {} --rss-limit-mb {}",
        config.timeout.as_secs_f64(),
        config.rss_limit_mb
    );
    if config.php.path != Path::new("php") {
        flags.push_str(" --php ");
        flags.push_str(&shell_quote(&config.php.path.display().to_string()));
    }
    for (key, value) in &config.ini {
        flags.push_str(" --ini ");
        flags.push_str(&shell_quote(&format!("{key}={value}")));
    }
    if style == StubStyle::EdgeMap {
        flags.push_str(" --stub edge-map");
    }
    flags
}

/// Quotes a path for a shell command line when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use php_fuzz_harness::{CrashKind, Problem};

    fn crash(line: u32) -> Crash {
        Crash {
            kind: CrashKind::Exception,
            problem: Problem {
                class: "TypeError".into(),
                message: "m".into(),
                file: "/t.php".into(),
                line,
                ..Problem::default()
            },
            stderr: None,
            note: None,
        }
    }

    #[test]
    fn saves_each_bug_once_and_counts_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = CrashStore::open(dir.path(), "/t.php", "").unwrap();
        assert!(matches!(
            store.record(b"a", &crash(1)).unwrap(),
            Recorded::New(_)
        ));
        assert!(
            matches!(store.record(b"b", &crash(1)).unwrap(), Recorded::Duplicate(k) if k.hits == 2)
        );
        assert!(matches!(
            store.record(b"c", &crash(2)).unwrap(),
            Recorded::New(_)
        ));
        assert_eq!(store.new_count(), 2);
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, 4, "two inputs, two sidecars");
    }

    #[test]
    fn a_second_session_knows_the_first_ones_crashes() {
        let dir = tempfile::tempdir().unwrap();
        CrashStore::open(dir.path(), "/t.php", "")
            .unwrap()
            .record(b"a", &crash(1))
            .unwrap();
        let mut again = CrashStore::open(dir.path(), "/t.php", "").unwrap();
        assert!(
            matches!(again.record(b"zz", &crash(1)).unwrap(), Recorded::Duplicate(k) if !k.new)
        );
        assert_eq!(again.new_count(), 0);
        assert_eq!(again.hit_this_session().count(), 1);
        let mut other_target = CrashStore::open(dir.path(), "/other.php", "").unwrap();
        assert!(matches!(
            other_target.record(b"zz", &crash(1)).unwrap(),
            Recorded::New(_)
        ));
    }

    #[test]
    fn a_saved_crash_of_an_unknown_kind_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        CrashStore::open(dir.path(), "/t.php", "")
            .unwrap()
            .record(b"a", &crash(1))
            .unwrap();
        let sidecar = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "json"))
            .unwrap();
        let text = std::fs::read_to_string(&sidecar).unwrap();
        std::fs::write(
            &sidecar,
            text.replace(r#""kind": "exception""#, r#""kind": "segfault""#),
        )
        .unwrap();
        let err = CrashStore::open(dir.path(), "/t.php", "").unwrap_err();
        assert!(
            matches!(&err, EngineError::UnknownCrashKind { kind, .. } if kind == "segfault"),
            "{err}"
        );
        assert!(
            CrashStore::open(dir.path(), "/other.php", "").is_ok(),
            "another target's crashes are not read"
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/a/b.php"), "/a/b.php");
        assert_eq!(shell_quote("my dir/it's"), r"'my dir/it'\''s'");
    }
}
