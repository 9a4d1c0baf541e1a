use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::{
    StorageError, check_writable, content_hash, io_error, is_not_found, remove_stale_temp_files,
    replace_atomically, write_atomically,
};

/// Names (relative to the corpus root) of the files php-fuzz itself wrote,
/// one per line. Only these are ever deleted; everything else is a seed.
pub const OWNERSHIP_JOURNAL: &str = ".php-fuzz-owned";

/// The directory (relative to the corpus root) where php-fuzz keeps a
/// campaign's own state, such as the persistent auto-dictionary. Hidden,
/// so never read as an entry.
pub const STATE_DIR: &str = ".php-fuzz";

#[derive(Debug, Clone)]
pub struct CorpusFile {
    pub path: PathBuf,
    pub data: Vec<u8>,
    /// Written by php-fuzz (and so removable), as opposed to a user's seed.
    pub owned: bool,
}

/// A corpus directory, read recursively. Hidden files and directories are
/// ignored; that is where php-fuzz keeps its bookkeeping.
#[derive(Debug)]
pub struct CorpusDir {
    root: PathBuf,
    owned: HashSet<PathBuf>,
    known: HashSet<PathBuf>,
    read_limit: usize,
}

/// What a load of the corpus directory found.
#[derive(Debug, Default)]
pub struct Loaded {
    pub files: Vec<CorpusFile>,
    /// Entries that are not regular files, loop, or cannot be read: each
    /// with why, skipped.
    pub skipped: Vec<String>,
    /// Entries longer than the read limit, of which only the start was read.
    pub cut: usize,
}

impl CorpusDir {
    /// Opens `root`, creating it if missing.
    pub fn open(root: &Path) -> Result<CorpusDir, StorageError> {
        if root.is_file() {
            return Err(StorageError::NotADirectory {
                path: root.to_path_buf(),
            });
        }
        fs::create_dir_all(root).map_err(io_error(root, "cannot create the corpus directory"))?;
        check_writable(root, "cannot write to the corpus directory")?;
        remove_stale_temp_files(root);
        remove_stale_temp_files(&root.join(STATE_DIR));
        let mut dir = CorpusDir {
            root: root.to_path_buf(),
            owned: HashSet::new(),
            known: HashSet::new(),
            read_limit: usize::MAX,
        };
        dir.read_journal()?;
        dir.end_journal_line()?;
        Ok(dir)
    }

    /// Reads at most `bytes` of each entry: a longer entry is cut, and a
    /// huge file in the corpus costs no more memory than that.
    pub fn set_read_limit(&mut self, bytes: usize) {
        self.read_limit = bytes;
    }

    /// A php-fuzz killed while appending to the journal may have left half
    /// a line: end it, so the next name starts a line of its own.
    fn end_journal_line(&self) -> Result<(), StorageError> {
        let journal = self.journal_path();
        let text = match fs::read(&journal) {
            Ok(text) => text,
            Err(err) if is_not_found(&err) => return Ok(()),
            Err(err) => return Err(io_error(&journal, "cannot read")(err)),
        };
        if text.is_empty() || text.ends_with(b"\n") {
            return Ok(());
        }
        OpenOptions::new()
            .append(true)
            .open(&journal)
            .and_then(|mut file| file.write_all(b"\n"))
            .map_err(io_error(&journal, "cannot write"))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn journal_path(&self) -> PathBuf {
        self.root.join(OWNERSHIP_JOURNAL)
    }

    fn read_journal(&mut self) -> Result<(), StorageError> {
        let path = self.journal_path();
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => {
                return Err(StorageError::Io {
                    path,
                    what: "cannot read",
                    source: err,
                });
            }
        };
        for name in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains('/'))
        {
            self.owned.insert(self.root.join(name));
        }
        Ok(())
    }

    /// Every entry, in a stable order. Entries that cannot be read are
    /// skipped and listed; only a corpus directory that cannot be read at
    /// all is an error.
    pub fn load_all(&mut self) -> Result<Loaded, StorageError> {
        self.known.clear();
        self.load_new()
    }

    /// Entries not seen before by this `CorpusDir`, e.g. written by another
    /// php-fuzz process sharing the directory.
    pub fn load_new(&mut self) -> Result<Loaded, StorageError> {
        self.read_journal()?;
        let mut loaded = Loaded::default();
        let walker = walkdir::WalkDir::new(&self.root)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) if err.depth() == 0 => {
                    let path = err.path().unwrap_or(&self.root).to_path_buf();
                    return Err(StorageError::Io {
                        path,
                        what: "cannot read the corpus",
                        source: err.into(),
                    });
                }
                Err(err) if err.path().is_some_and(vanished) => continue,
                Err(err) => {
                    if let Some(path) = err.path() {
                        self.known.insert(path.to_path_buf());
                    }
                    let path = err.path().unwrap_or(&self.root).display().to_string();
                    let reason = match err.loop_ancestor() {
                        Some(_) => "a symbolic link loop".to_string(),
                        None => std::io::Error::from(err).to_string(),
                    };
                    loaded.skipped.push(format!("{path}: {reason}"));
                    continue;
                }
            };
            if self.known.contains(entry.path()) || entry.file_type().is_dir() {
                continue;
            }
            let path = entry.path().to_path_buf();
            if !entry.file_type().is_file() {
                // Reading a FIFO would wait for a writer; a socket cannot be read.
                self.known.insert(path.clone());
                loaded
                    .skipped
                    .push(format!("{}: not a regular file", path.display()));
                continue;
            }
            let data = match read_at_most(&path, self.read_limit) {
                Ok(data) => data,
                Err(err) if is_not_found(&err) && vanished(&path) => continue,
                Err(err) => {
                    self.known.insert(path.clone());
                    loaded.skipped.push(format!("{}: {err}", path.display()));
                    continue;
                }
            };
            if data.len() == self.read_limit
                && entry.metadata().is_ok_and(|m| m.len() > data.len() as u64)
            {
                loaded.cut += 1;
            }
            self.known.insert(path.clone());
            loaded.files.push(CorpusFile {
                owned: self.owned.contains(&path),
                path,
                data,
            });
        }
        Ok(loaded)
    }

    /// The state file `name` of the campaign (under [`STATE_DIR`]), if any.
    pub fn read_state(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let path = self.root.join(STATE_DIR).join(name);
        match fs::read(&path) {
            Ok(data) => Ok(Some(data)),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(err) => Err(io_error(&path, "cannot read")(err)),
        }
    }

    /// Replaces the state file `name` atomically: a reader, or a campaign
    /// resumed after a crash, sees the old file or the new one.
    pub fn write_state(&self, name: &str, data: &[u8]) -> Result<PathBuf, StorageError> {
        let dir = self.root.join(STATE_DIR);
        fs::create_dir_all(&dir).map_err(io_error(&dir, "cannot create"))?;
        let path = dir.join(name);
        replace_atomically(&path, data)?;
        Ok(path)
    }

    /// Saves `data` as `<sha1>` in the corpus root. Returns its path.
    pub fn save(&mut self, data: &[u8]) -> Result<PathBuf, StorageError> {
        let name = content_hash(data);
        let path = self.root.join(&name);
        self.known.insert(path.clone());
        if path.exists() {
            return Ok(path);
        }
        // Journal first: a crash between the two leaves a journal line for a
        // missing file, never an unlisted file php-fuzz would treat as a seed.
        let journal = self.journal_path();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&journal)
            .map_err(io_error(&journal, "cannot write"))?;
        file.write_all(format!("{name}\n").as_bytes())
            .map_err(io_error(&journal, "cannot write"))?;
        self.owned.insert(path.clone());
        write_atomically(&path, data)?;
        Ok(path)
    }

    pub fn is_owned(&self, path: &Path) -> bool {
        self.owned.contains(path)
    }

    /// Deletes `path` if php-fuzz wrote it. Seeds are never deleted: returns false.
    pub fn remove_owned(&mut self, path: &Path) -> Result<bool, StorageError> {
        if !self.owned.contains(path) {
            return Ok(false);
        }
        match fs::remove_file(path) {
            Ok(()) => Ok(true),
            Err(err) if is_not_found(&err) => Ok(true),
            Err(err) => Err(StorageError::Io {
                path: path.to_path_buf(),
                what: "cannot delete",
                source: err,
            }),
        }
    }
}

/// The first `limit` bytes of a file, or all of it.
fn read_at_most(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let file = fs::File::open(path)?;
    let mut data = Vec::new();
    file.take(limit as u64).read_to_end(&mut data)?;
    Ok(data)
}

/// True if `path` is gone, not even a dangling link: another php-fuzz
/// process sharing the directory replaced it between listing and reading.
fn vanished(path: &Path) -> bool {
    fs::symlink_metadata(path).is_err_and(|err| is_not_found(&err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_read_recursively_and_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("seed1"), b"a").unwrap();
        fs::write(dir.path().join("sub/seed2"), b"b").unwrap();
        fs::write(dir.path().join(".hidden"), b"c").unwrap();
        let state = CorpusDir::open(dir.path())
            .unwrap()
            .write_state("autodict", b"\"w\"\n")
            .unwrap();
        assert!(state.starts_with(dir.path().join(STATE_DIR)));
        let mut corpus = CorpusDir::open(dir.path()).unwrap();
        let files = corpus.load_all().unwrap().files;
        let names: Vec<_> = files
            .iter()
            .map(|f| f.path.strip_prefix(dir.path()).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            names,
            vec![PathBuf::from("seed1"), PathBuf::from("sub/seed2")]
        );
        assert!(files.iter().all(|f| !f.owned));
        assert_eq!(
            corpus.read_state("autodict").unwrap(),
            Some(b"\"w\"\n".to_vec())
        );
        assert_eq!(corpus.read_state("missing").unwrap(), None);
        assert!(!corpus.remove_owned(&dir.path().join("seed1")).unwrap());
        assert!(dir.path().join("seed1").exists());
    }

    #[test]
    fn saved_entries_are_owned_named_by_hash_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let mut corpus = CorpusDir::open(dir.path()).unwrap();
        let path = corpus.save(b"hello").unwrap();
        assert_eq!(path.file_name().unwrap(), content_hash(b"hello").as_str());
        assert_eq!(fs::read(&path).unwrap(), b"hello");
        let mut again = CorpusDir::open(dir.path()).unwrap();
        let files = again.load_all().unwrap().files;
        assert_eq!(files.len(), 1);
        assert!(files[0].owned);
        assert!(again.remove_owned(&path).unwrap());
        assert!(!path.exists());
    }

    #[test]
    fn a_seed_with_a_hash_name_is_still_a_seed() {
        let dir = tempfile::tempdir().unwrap();
        let name = content_hash(b"x");
        fs::write(dir.path().join(&name), b"x").unwrap();
        let mut corpus = CorpusDir::open(dir.path()).unwrap();
        // Saving the same content finds the user's file and leaves it a seed.
        let path = corpus.save(b"x").unwrap();
        assert!(!corpus.is_owned(&path));
        assert!(!corpus.remove_owned(&path).unwrap());
        assert!(path.exists());
    }

    #[test]
    fn load_new_sees_only_files_written_by_others() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = CorpusDir::open(dir.path()).unwrap();
        let mut b = CorpusDir::open(dir.path()).unwrap();
        assert!(a.load_all().unwrap().files.is_empty());
        b.save(b"from b").unwrap();
        a.save(b"from a").unwrap();
        let new = a.load_new().unwrap().files;
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].data, b"from b");
        assert!(new[0].owned, "written by a php-fuzz process");
        assert!(a.load_new().unwrap().files.is_empty());
    }

    #[test]
    fn a_file_is_not_a_corpus_dir() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, b"").unwrap();
        let err = CorpusDir::open(&file).unwrap_err();
        assert!(err.to_string().contains("must be a directory"), "{err}");
    }

    #[test]
    fn entries_that_cannot_be_read_are_skipped_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("good"), b"ok").unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink(root.join("self"), root.join("self")).unwrap();
        fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(root, root.join("sub/up")).unwrap();
        let fifo = root.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let _socket = std::os::unix::net::UnixListener::bind(root.join("socket")).unwrap();
        let loaded = CorpusDir::open(root).unwrap().load_all().unwrap();
        let names: Vec<_> = loaded.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(names, vec![root.join("good")]);
        for name in ["dangling", "self", "sub/up", "fifo", "socket"] {
            assert!(
                loaded.skipped.iter().any(|s| s.contains(name)),
                "{name}: {:?}",
                loaded.skipped
            );
        }
        assert!(
            loaded.skipped.iter().any(|s| s.contains("loop")),
            "{:?}",
            loaded.skipped
        );
    }

    #[test]
    fn entries_are_read_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("big"), vec![b'x'; 10_000]).unwrap();
        fs::write(dir.path().join("small"), b"abc").unwrap();
        let mut corpus = CorpusDir::open(dir.path()).unwrap();
        corpus.set_read_limit(100);
        let loaded = corpus.load_all().unwrap();
        let sizes: Vec<_> = loaded.files.iter().map(|f| f.data.len()).collect();
        assert_eq!(sizes, vec![100, 3]);
        assert_eq!(loaded.cut, 1);
    }

    #[test]
    fn temporary_files_of_dead_processes_and_half_journal_lines_are_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(".php-fuzz-tmp-4000000000-abc");
        let alive = dir
            .path()
            .join(format!(".php-fuzz-tmp-{}-abc", std::process::id()));
        fs::write(&dead, b"half").unwrap();
        fs::write(&alive, b"being written").unwrap();
        fs::write(dir.path().join(OWNERSHIP_JOURNAL), b"0123").unwrap();
        let mut corpus = CorpusDir::open(dir.path()).unwrap();
        assert!(!dead.exists());
        assert!(alive.exists(), "a running process's file stays");
        let path = corpus.save(b"x").unwrap();
        let journal = fs::read_to_string(dir.path().join(OWNERSHIP_JOURNAL)).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(journal.lines().any(|l| l == name), "{journal:?}");
    }

    #[test]
    fn a_removed_file_has_vanished_but_a_dangling_link_has_not() {
        let dir = tempfile::tempdir().unwrap();
        assert!(vanished(&dir.path().join("removed")));
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("dangling"))
            .unwrap();
        assert!(!vanished(&dir.path().join("dangling")));
    }
}
