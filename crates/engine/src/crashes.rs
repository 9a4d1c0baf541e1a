//! Distinct crashes of a session: each saved once, before anything else
//! happens; duplicates are counted.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use php_fuzz_harness::{Crash, CrashKind, HarnessConfig};
use php_fuzz_instrument::StubStyle;
use php_fuzz_storage::{ArtifactDir, ArtifactNaming, CrashRecord, StorageError};

use crate::EngineError;
use crate::in_flight::PendingFinding;
use crate::signature::{callers_in_signature, crash_from_record, signature};

#[derive(Debug, Clone)]
pub struct KnownCrash {
    /// `record.kind`, parsed.
    pub kind: CrashKind,
    /// The report of the artifact that stands for the finding: the one
    /// saved first.
    pub record: CrashRecord,
    pub artifact: PathBuf,
    /// Times hit in this session.
    pub hits: u64,
    /// Times hit before this session, over every artifact saved for it (a
    /// report older than the count counts once).
    pub earlier_hits: u64,
    /// Artifacts on disk that are this finding: more than one where an
    /// older php-fuzz, deduplicating another way, saved copies.
    pub artifacts_on_disk: usize,
    /// The calls below the crash's function that its signature names
    /// (`Parser::value():80 < Parser::parse():31`), for the summary.
    pub callers: Option<String>,
    /// Found by this session, as opposed to loaded from an earlier one.
    pub new: bool,
    /// This session's hits already added to the report on disk.
    flushed: u64,
}

impl KnownCrash {
    /// Times hit, in this session and the earlier ones.
    pub fn total_hits(&self) -> u64 {
        self.earlier_hits + self.hits
    }

    /// A finding loaded from the report of an earlier session.
    fn loaded(crash: &Crash, record: CrashRecord, artifact: PathBuf) -> KnownCrash {
        KnownCrash {
            kind: crash.kind,
            earlier_hits: record.hits.max(1),
            record,
            artifact,
            hits: 0,
            artifacts_on_disk: 1,
            callers: callers_in_signature(crash),
            new: false,
            flushed: 0,
        }
    }

    /// Another artifact of the same finding, saved by an earlier session:
    /// its hits count, and the one saved first stands for the finding.
    fn absorb(&mut self, other: KnownCrash) {
        self.earlier_hits += other.earlier_hits;
        self.artifacts_on_disk += other.artifacts_on_disk;
        if other.record.found_at < self.record.found_at {
            self.record = other.record;
            self.artifact = other.artifact;
            self.callers = other.callers;
        }
    }
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
    /// Reports of this target found in the directory when it was opened.
    loaded_reports: usize,
}

impl CrashStore {
    /// Opens the artifact directory and learns the crashes saved there before.
    /// A saved report of this target with a kind php-fuzz does not know is an
    /// error.
    pub fn open(dir: &Path, target: &str, replay_flags: &str) -> Result<CrashStore, EngineError> {
        CrashStore::open_named(dir, ArtifactNaming::WithReport, target, replay_flags)
    }

    /// As [`CrashStore::open`], with artifacts named `naming`'s way. Each
    /// saved report is keyed by today's signature, computed from what it
    /// says happened, whatever its `signature` field holds: reports an older
    /// php-fuzz saved as distinct may be one finding now. Nothing is deleted.
    pub fn open_named(
        dir: &Path,
        naming: ArtifactNaming,
        target: &str,
        replay_flags: &str,
    ) -> Result<CrashStore, EngineError> {
        let artifacts = ArtifactDir::open_named(dir, naming)?;
        let mut known: HashMap<String, KnownCrash> = HashMap::new();
        let mut loaded_reports = 0;
        for (sidecar, record) in artifacts.existing() {
            let artifact = sidecar.with_extension("txt");
            if record.target != target || !artifact.exists() {
                continue;
            }
            let Some(crash) = crash_from_record(&record) else {
                return Err(EngineError::UnknownCrashKind {
                    sidecar,
                    kind: record.kind,
                });
            };
            loaded_reports += 1;
            let finding = KnownCrash::loaded(&crash, record, artifact);
            match known.entry(signature(&crash)) {
                Entry::Occupied(mut same) => same.get_mut().absorb(finding),
                Entry::Vacant(slot) => {
                    slot.insert(finding);
                }
            }
        }
        Ok(CrashStore {
            artifacts,
            target: target.to_string(),
            replay_flags: replay_flags.to_string(),
            known,
            order: Vec::new(),
            findings_dir: None,
            loaded_reports,
        })
    }

    /// Also saves each new finding's input into `dir`, alone, after its artifact.
    /// The harness options that reproduce commands of findings saved from
    /// now on carry (see [`replay_flags`]).
    pub fn set_replay_flags(&mut self, replay_flags: String) {
        self.replay_flags = replay_flags;
    }

    pub fn with_findings_dir(mut self, dir: Option<PathBuf>) -> CrashStore {
        self.findings_dir = dir;
        self
    }

    pub fn artifact_dir(&self) -> &Path {
        self.artifacts.dir()
    }

    /// True if `crash` is a bug already saved (by this session or an earlier one).
    pub fn knows(&self, crash: &Crash) -> bool {
        self.knows_signature(&signature(crash))
    }

    /// True if a bug with this signature is already saved.
    pub fn knows_signature(&self, signature: &str) -> bool {
        self.known.contains_key(signature)
    }

    /// Saves the crash if it is a new bug, or counts it. The input is on disk
    /// before this returns `New`.
    pub fn record(&mut self, input: &[u8], crash: &Crash) -> Result<Recorded<'_>, StorageError> {
        self.record_signed(input, crash, signature(crash))
    }

    /// As [`CrashStore::record`], for a crash whose signature the caller
    /// computed already.
    pub fn record_signed(
        &mut self,
        input: &[u8],
        crash: &Crash,
        signature: String,
    ) -> Result<Recorded<'_>, StorageError> {
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
        let mut record = self.new_record(crash, signature.clone(), &artifact_path);
        let saved = self.artifacts.save(prefix, input, &mut record)?;
        match (&self.findings_dir, crash.kind) {
            // A refused side effect is no bug of the test: nothing to replay.
            (Some(_), CrashKind::SideEffect) | (None, _) => {}
            // A security finding replays through php-fuzz's detectors, which
            // its name asks for (docs/phpunit.md).
            (Some(dir), CrashKind::Security) => {
                let named = format!("security-{}", crash.problem.class);
                php_fuzz_storage::save_finding_input(dir, &named, input)?;
            }
            (Some(dir), _) => {
                php_fuzz_storage::save_finding_input(dir, prefix, input)?;
            }
        }
        self.order.push(signature.clone());
        let known = self.known.entry(signature).or_insert(KnownCrash {
            kind: crash.kind,
            record,
            artifact: saved.input,
            hits: 1,
            earlier_hits: 0,
            artifacts_on_disk: 1,
            callers: callers_in_signature(crash),
            new: true,
            flushed: 1,
        });
        Ok(Recorded::New(known))
    }

    /// All it takes to save `crash` later without this store, as
    /// [`CrashStore::record`] would save it now.
    pub(crate) fn pending(&self, input: &[u8], crash: &Crash, signature: &str) -> PendingFinding {
        let prefix = crash.kind.artifact_prefix();
        let artifact_path = self.artifacts.input_path(prefix, input, &self.target);
        PendingFinding {
            artifacts: self.artifacts.clone(),
            prefix,
            input: input.to_vec(),
            record: self.new_record(crash, signature.to_string(), &artifact_path),
            findings_dir: self.findings_dir.clone(),
        }
    }

    /// The report of a new finding, hit once, to be saved at `artifact_path`.
    fn new_record(&self, crash: &Crash, signature: String, artifact_path: &Path) -> CrashRecord {
        let p = &crash.problem;
        CrashRecord {
            kind: crash.kind.name().to_string(),
            class: p.class.clone(),
            message: p.message.clone(),
            file: p.file.clone(),
            line: p.line,
            trace: p.trace.clone(),
            signature,
            hits: 1,
            input_file: String::new(),
            input_size: 0,
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
        }
    }

    /// Adds this session's hits to the reports on disk (each finding's
    /// first artifact), with the finding's signature as of now. Reads each
    /// report again first: another campaign sharing the directory may have
    /// counted too.
    pub fn flush_hits(&mut self) -> Result<(), StorageError> {
        if !self.artifacts.writes_reports() {
            return Ok(());
        }
        for (signature, known) in &mut self.known {
            let unflushed = known.hits - known.flushed;
            if unflushed == 0 {
                continue;
            }
            let sidecar = known.artifact.with_extension("json");
            let mut record =
                ArtifactDir::read_record(&sidecar).unwrap_or_else(|| known.record.clone());
            record.hits = record.hits.max(1) + unflushed;
            record.signature.clone_from(signature);
            ArtifactDir::rewrite_record(&sidecar, &record)?;
            known.record.hits = record.hits;
            known.flushed = known.hits;
        }
        Ok(())
    }

    /// Adds `note` to the report of the finding with `signature`, on disk
    /// too. Returns the finding's input file.
    pub fn add_note(
        &mut self,
        signature: &str,
        note: &str,
    ) -> Result<Option<PathBuf>, StorageError> {
        let Some(known) = self.known.get_mut(signature) else {
            return Ok(None);
        };
        let note = match known.record.note.take() {
            Some(earlier) => format!("{earlier}; {note}"),
            None => note.to_string(),
        };
        known.record.note = Some(note.clone());
        if self.artifacts.writes_reports() {
            let sidecar = known.artifact.with_extension("json");
            let mut record =
                ArtifactDir::read_record(&sidecar).unwrap_or_else(|| known.record.clone());
            record.note = Some(note);
            ArtifactDir::rewrite_record(&sidecar, &record)?;
        }
        Ok(Some(known.artifact.clone()))
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

    /// What loading the directory found, when reports an older php-fuzz
    /// saved apart are one finding by today's signature.
    pub fn copies_note(&self) -> Option<String> {
        let loaded_findings = self.known.values().filter(|k| !k.new).count();
        (self.loaded_reports > loaded_findings).then(|| {
            format!(
                "INFO: the {} crash reports of this target in {} are {} distinct findings by \
                 php-fuzz's signature (docs/dedup.md); the copies stay on disk and their hits \
                 count toward their finding's",
                self.loaded_reports,
                self.artifacts.dir().display(),
                loaded_findings
            )
        })
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
    if config.effective_malloc_limit_mb() != config.rss_limit_mb {
        flags.push_str(&format!(
            " --malloc-limit-mb {}",
            config.effective_malloc_limit_mb()
        ));
    }
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
    if let Some(detectors) = config.detectors {
        flags.push_str(&format!(" --detectors {detectors}"));
    }
    if config.allow_side_effects {
        flags.push_str(" --allow-side-effects");
    }
    flags.push_str(&config.name_flags);
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

    /// A report as php-fuzz wrote them before issue 27: no `hits`, and the
    /// signature with the warning's character in it.
    fn old_report(dir: &Path, name: &str, message: &str, line: u32, found_at: u64) {
        let input = dir.join(format!("{name}.txt"));
        let report = format!(
            r##"{{
  "kind": "warning",
  "class": "Warning",
  "message": "{message}",
  "file": "/t.php",
  "line": {line},
  "trace": "#0 pack() at /t.php:{line}\n#1 hexByte() at /t.php:{line}\n",
  "signature": "warning Warning: {message} at /t.php:{line}",
  "input_file": "{}",
  "input_size": 1,
  "sha1": "{name}",
  "found_at": {found_at},
  "target": "/t.php",
  "reproduce": "php-fuzz run-single /t.php x"
}}
"##,
            input.display()
        );
        std::fs::write(&input, name).unwrap();
        std::fs::write(input.with_extension("json"), report).unwrap();
    }

    fn pack_warning(character: char, line: u32) -> Crash {
        let record = CrashRecord {
            kind: "warning".into(),
            class: "Warning".into(),
            message: format!("pack(): Type H: illegal hex digit {character}"),
            file: "/t.php".into(),
            line,
            trace: format!("#0 pack() at /t.php:{line}\n#1 hexByte() at /t.php:{line}\n"),
            ..CrashRecord::default()
        };
        crash_from_record(&record).unwrap()
    }

    #[test]
    fn old_reports_are_rekeyed_and_their_copies_are_one_finding() {
        let dir = tempfile::tempdir().unwrap();
        old_report(
            dir.path(),
            "crash-b",
            "pack(): Type H: illegal hex digit x",
            26,
            20,
        );
        old_report(
            dir.path(),
            "crash-a",
            "pack(): Type H: illegal hex digit y",
            26,
            10,
        );
        old_report(
            dir.path(),
            "crash-c",
            "pack(): Type H: illegal hex digit z",
            26,
            30,
        );
        old_report(
            dir.path(),
            "crash-d",
            "pack(): Type H: illegal hex digit x",
            40,
            40,
        );
        let files_before = std::fs::read_dir(dir.path()).unwrap().count();
        let mut store = CrashStore::open(dir.path(), "/t.php", "").unwrap();
        assert_eq!(
            store.known_count(),
            2,
            "three copies of one bug, and another"
        );
        let note = store.copies_note().expect("a note on the copies");
        assert!(note.contains("the 4 crash reports"), "{note}");
        assert!(note.contains("are 2 distinct findings"), "{note}");
        let Recorded::Duplicate(known) = store.record(b"w", &pack_warning('w', 26)).unwrap() else {
            panic!("a fourth character is the same finding");
        };
        assert!(!known.new);
        assert_eq!(known.artifacts_on_disk, 3);
        assert_eq!(known.total_hits(), 4, "each old report counts once");
        assert!(
            known.artifact.ends_with("crash-a.txt"),
            "the one saved first stands for the finding: {}",
            known.artifact.display()
        );
        store.flush_hits().unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), files_before);
        let first = ArtifactDir::read_record(&dir.path().join("crash-a.json")).unwrap();
        assert_eq!(first.hits, 2, "its own hit, and this session's");
        assert_eq!(first.signature, signature(&pack_warning('w', 26)));
        let copy = ArtifactDir::read_record(&dir.path().join("crash-b.json")).unwrap();
        assert_eq!(copy.hits, 0, "copies are left as they are");
    }

    #[test]
    fn hits_reach_the_report_and_the_next_session() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = CrashStore::open(dir.path(), "/t.php", "").unwrap();
        for input in [b"a", b"b", b"c"] {
            store.record(input, &crash(1)).unwrap();
        }
        let sidecar = store
            .hit_this_session()
            .next()
            .unwrap()
            .artifact
            .with_extension("json");
        assert_eq!(ArtifactDir::read_record(&sidecar).unwrap().hits, 1);
        store.flush_hits().unwrap();
        store.flush_hits().unwrap();
        assert_eq!(ArtifactDir::read_record(&sidecar).unwrap().hits, 3);
        let mut again = CrashStore::open(dir.path(), "/t.php", "").unwrap();
        assert!(again.copies_note().is_none());
        again.record(b"d", &crash(1)).unwrap();
        assert_eq!(again.hit_this_session().next().unwrap().total_hits(), 4);
        again.flush_hits().unwrap();
        assert_eq!(ArtifactDir::read_record(&sidecar).unwrap().hits, 4);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/a/b.php"), "/a/b.php");
        assert_eq!(shell_quote("my dir/it's"), r"'my dir/it'\''s'");
    }
}
