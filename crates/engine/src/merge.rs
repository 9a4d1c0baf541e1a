//! Corpus merge (libFuzzer's `-merge=1`): keep the inputs of the new
//! directories that reach features the output directory does not, smallest
//! first, copying them into it as `<sha1>`.
//!
//! Inputs run in a fixed order, the output directory's first, then the rest
//! by size, so whether an input adds a feature is decided once, when it
//! runs: a kept input is final. A crash or a hang is a result like any other
//! (the harness survives it): the input is reported and skipped. With a
//! control file the merge resumes where a killed one stopped: the file list
//! is written once (to a temporary file, then renamed), and each batch's
//! results are appended in one write; a torn last line is ignored.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use php_fuzz_coverage::{EdgeCounter, Feature, FeatureSet};
use php_fuzz_harness::{Batch, Crash, Executor};
use php_fuzz_instrument::Coverage;
use php_fuzz_storage::CorpusDir;

use crate::EngineError;
use crate::replay::collect_inputs;

const BATCH_INPUTS: usize = 64;
const BATCH_BYTES: usize = 8 << 20;
const CONTROL_MAGIC: &str = "php-fuzz merge control file, version 1";

/// One event of a merge, in order.
#[derive(Debug)]
pub enum MergeEvent<'a> {
    /// A control file's results were taken over: `done` of `total` inputs.
    Resumed { done: usize, total: usize },
    /// An input of the new directories added features and was copied.
    Kept {
        input: &'a Path,
        saved: &'a Path,
        new_features: usize,
    },
    /// An input crashed or hung; it is skipped.
    Crashed { input: &'a Path, crash: &'a Crash },
    /// An input could not be read; it is skipped.
    Unreadable { input: &'a Path, error: String },
    /// An input has the same content as one before it; it is skipped.
    Duplicate { input: &'a Path },
    /// After each batch.
    Progress(MergeProgress),
}

/// How far a merge is: `done` of `total` inputs, the features so far.
#[derive(Debug, Clone, Copy)]
pub struct MergeProgress {
    pub done: usize,
    pub total: usize,
    pub features: usize,
    pub elapsed: Duration,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeOutcome {
    /// Inputs already in the output directory.
    pub initial: usize,
    /// Inputs of the new directories.
    pub candidates: usize,
    pub kept: usize,
    /// Inputs skipped because an earlier input had the same content.
    pub duplicates: usize,
    /// Features and edges the kept inputs add to the output directory's.
    pub new_features: usize,
    pub new_edges: usize,
    /// Blocks the kept inputs reach that the output directory's did not.
    pub new_blocks: usize,
    /// Features and edges of the merged corpus.
    pub features: usize,
    pub edges: usize,
    pub crashed: usize,
    /// Inputs whose results came from the control file.
    pub resumed: usize,
    /// Stopped before every input ran; the control file has the progress.
    pub interrupted: bool,
}

/// Merges the inputs of `in_dirs` into `out_dir` (created if missing).
/// `interrupted` stops it between batches.
pub fn merge(
    executor: &mut Executor,
    out_dir: &Path,
    in_dirs: &[PathBuf],
    control_file: Option<&Path>,
    interrupted: &AtomicBool,
    mut on_event: impl FnMut(MergeEvent<'_>),
) -> Result<MergeOutcome, EngineError> {
    let started = Instant::now();
    let mut out = CorpusDir::open(out_dir)?;
    let header = header(out_dir, in_dirs, executor.sources().coverage());
    let resumed = match control_file {
        Some(path) => Control::read(path, &header),
        None => None,
    };
    let (files, initial, results) = match resumed {
        Some(control) => {
            on_event(MergeEvent::Resumed {
                done: control.results.len(),
                total: control.files.len(),
            });
            (control.files, control.initial, control.results)
        }
        None => {
            let (files, initial) = list_inputs(out_dir, in_dirs)?;
            if let Some(path) = control_file {
                Control::create(path, &header, &files, initial)?;
            }
            (files, initial, Vec::new())
        }
    };

    let mut state = MergeState {
        features: FeatureSet::new(),
        edges_of_initial: 0,
        blocks_of_initial: 0,
        initial,
        outcome: MergeOutcome {
            initial,
            candidates: files.len() - initial,
            resumed: results.len(),
            ..MergeOutcome::default()
        },
        new: Vec::new(),
    };
    for (index, result) in results.iter().enumerate() {
        state.take(index, result);
    }

    let mut control = match control_file {
        Some(path) => Some(
            OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|source| EngineError::Input {
                    path: path.to_path_buf(),
                    what: "cannot append to the merge control file",
                    source,
                })?,
        ),
        None => None,
    };
    let mut batch = Batch::new();
    let mut counter = EdgeCounter::new();
    let mut run_features = Vec::new();
    let mut lines = String::new();
    let mut next = results.len();
    // Within one harness, a second run of the same bytes can reach other
    // hit counts (state the target keeps); it must not be kept twice.
    let mut contents = HashSet::new();
    while next < files.len() {
        if interrupted.load(Ordering::Relaxed) {
            state.outcome.interrupted = true;
            break;
        }
        batch.clear();
        lines.clear();
        let mut indices = Vec::new();
        let mut bytes = 0;
        while next < files.len() && indices.len() < BATCH_INPUTS && bytes < BATCH_BYTES {
            let (path, _) = &files[next];
            match fs::read(path) {
                Ok(data) if !contents.insert(php_fuzz_storage::content_hash(&data)) => {
                    on_event(MergeEvent::Duplicate { input: path });
                    let _ = writeln!(lines, "SKIP {next}");
                    state.take(next, &Outcome::Skipped);
                    if next >= initial {
                        state.outcome.duplicates += 1;
                    }
                }
                Ok(data) => {
                    bytes += data.len();
                    batch.push(&data);
                    indices.push(next);
                }
                Err(err) => {
                    on_event(MergeEvent::Unreadable {
                        input: path,
                        error: err.to_string(),
                    });
                    let _ = writeln!(lines, "SKIP {next}");
                    state.take(next, &Outcome::Skipped);
                }
            }
            next += 1;
        }
        let mut outcomes = Vec::with_capacity(indices.len());
        executor.run_batch(&batch, |r| match r.crash {
            Some(crash) => outcomes.push((Outcome::Crashed, Some(crash))),
            None => {
                counter.clear();
                r.coverage.add_to(&mut counter);
                counter.features_into(&mut run_features);
                outcomes.push((Outcome::Ran(run_features.clone()), None));
            }
        })?;
        for (slot, (index, (outcome, crash))) in indices.iter().zip(outcomes).enumerate() {
            let (path, _) = &files[*index];
            if let Some(crash) = &crash {
                on_event(MergeEvent::Crashed { input: path, crash });
            }
            let new = state.take(*index, &outcome);
            match &outcome {
                Outcome::Crashed => {
                    let _ = writeln!(lines, "CRASH {index}");
                }
                _ => {
                    let _ = write!(lines, "FT {index}");
                    for feature in &state.new {
                        let _ = write!(lines, " {feature}");
                    }
                    lines.push('\n');
                }
            }
            if new > 0 && *index >= initial {
                // Copied before its result is recorded: a merge killed in
                // between runs it again and finds the copy already there.
                let saved = out.save(batch.get(slot))?;
                on_event(MergeEvent::Kept {
                    input: path,
                    saved: &saved,
                    new_features: new,
                });
            }
        }
        if let (Some(file), Some(path)) = (&mut control, control_file) {
            file.write_all(lines.as_bytes())
                .and_then(|()| file.sync_data())
                .map_err(|source| EngineError::Input {
                    path: path.to_path_buf(),
                    what: "cannot append to the merge control file",
                    source,
                })?;
        }
        on_event(MergeEvent::Progress(MergeProgress {
            done: next,
            total: files.len(),
            features: state.features.features(),
            elapsed: started.elapsed(),
        }));
    }
    let mut outcome = state.outcome;
    outcome.features = state.features.features();
    outcome.edges = state.features.edges();
    outcome.new_edges = outcome.edges.saturating_sub(state.edges_of_initial);
    outcome.new_blocks = state
        .features
        .blocks()
        .saturating_sub(state.blocks_of_initial);
    Ok(outcome)
}

/// What happened to one input.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// It ran: its features, all of them (or, read back from a control
    /// file, those that were new).
    Ran(Vec<Feature>),
    Crashed,
    Skipped,
}

struct MergeState {
    features: FeatureSet,
    /// Edges reached by the output directory's own inputs.
    edges_of_initial: usize,
    /// Blocks reached by the output directory's own inputs.
    blocks_of_initial: usize,
    initial: usize,
    outcome: MergeOutcome,
    /// The new features of the input taken last.
    new: Vec<Feature>,
}

impl MergeState {
    /// Counts input `index`'s outcome; returns how many features it added.
    fn take(&mut self, index: usize, outcome: &Outcome) -> usize {
        self.new.clear();
        match outcome {
            Outcome::Ran(features) => self.features.insert_all(features, &mut self.new),
            Outcome::Crashed => self.outcome.crashed += 1,
            Outcome::Skipped => {}
        }
        if index + 1 == self.initial {
            self.edges_of_initial = self.features.edges();
            self.blocks_of_initial = self.features.blocks();
        }
        let added = self.new.len();
        if index >= self.initial && added > 0 {
            self.outcome.kept += 1;
            self.outcome.new_features += added;
        }
        added
    }
}

/// The output directory's inputs, then the new directories' smallest first;
/// and how many of them are the output directory's.
fn list_inputs(
    out_dir: &Path,
    in_dirs: &[PathBuf],
) -> Result<(Vec<(PathBuf, u64)>, usize), EngineError> {
    let sized = |paths: Vec<PathBuf>| -> Result<Vec<(PathBuf, u64)>, EngineError> {
        paths
            .into_iter()
            .map(|path| {
                let size = fs::metadata(&path)
                    .map_err(|source| EngineError::Input {
                        path: path.clone(),
                        what: "cannot read input",
                        source,
                    })?
                    .len();
                Ok((path, size))
            })
            .collect()
    };
    let mut files = sized(collect_inputs(&[out_dir.to_path_buf()])?)?;
    let initial = files.len();
    let mut candidates = sized(collect_inputs(in_dirs)?)?;
    candidates.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    files.extend(candidates);
    // A path that cannot stand on one line of the control file.
    files.retain(|(path, _)| !path.as_os_str().as_encoded_bytes().contains(&b'\n'));
    Ok((files, initial))
}

/// The control file's first lines: which merge it belongs to. The recorded
/// features depend on the coverage mode, so a merge in the other mode does
/// not take them over.
fn header(out_dir: &Path, in_dirs: &[PathBuf], coverage: Coverage) -> String {
    let mut text = format!(
        "{CONTROL_MAGIC}\nout {}\ncoverage {coverage}\n",
        out_dir.display()
    );
    for dir in in_dirs {
        let _ = writeln!(text, "in {}", dir.display());
    }
    text
}

/// A control file read back.
struct Control {
    files: Vec<(PathBuf, u64)>,
    initial: usize,
    results: Vec<Outcome>,
}

impl Control {
    /// Writes the header and the file list, atomically.
    fn create(
        path: &Path,
        header: &str,
        files: &[(PathBuf, u64)],
        initial: usize,
    ) -> Result<(), EngineError> {
        let mut text = format!("{header}files {} {initial}\n", files.len());
        for (file, size) in files {
            let _ = writeln!(text, "{size} {}", file.display());
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let error = |source| EngineError::Input {
            path: path.to_path_buf(),
            what: "cannot write the merge control file",
            source,
        };
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(error)?;
        temp.write_all(text.as_bytes()).map_err(error)?;
        temp.persist(path).map_err(|e| error(e.error))?;
        Ok(())
    }

    /// The control file at `path`, if it belongs to the merge `header`
    /// describes; `None` if it is missing, empty, another merge's, or
    /// unreadable (a fresh one is written then).
    fn read(path: &Path, header: &str) -> Option<Control> {
        let text = fs::read_to_string(path).ok()?;
        let rest = text.strip_prefix(header)?;
        let mut lines = rest.split_inclusive('\n');
        let counts = lines.next()?.strip_prefix("files ")?.trim_end();
        let (total, initial) = counts.split_once(' ')?;
        let (total, initial): (usize, usize) = (total.parse().ok()?, initial.parse().ok()?);
        if initial > total {
            return None;
        }
        let mut files = Vec::with_capacity(total);
        for _ in 0..total {
            let line = lines.next()?.strip_suffix('\n')?;
            let (size, file) = line.split_once(' ')?;
            files.push((PathBuf::from(file), size.parse().ok()?));
        }
        let mut results = Vec::new();
        for line in lines {
            // A line cut short by a killed merge ends the results.
            let Some(line) = line.strip_suffix('\n') else {
                break;
            };
            let mut words = line.split(' ');
            let (Some(kind), Some(index)) = (words.next(), words.next()) else {
                break;
            };
            if index.parse::<usize>().ok() != Some(results.len()) {
                break;
            }
            let outcome = match kind {
                "FT" => match words.map(str::parse).collect::<Result<Vec<Feature>, _>>() {
                    Ok(features) => Outcome::Ran(features),
                    Err(_) => break,
                },
                "CRASH" => Outcome::Crashed,
                "SKIP" => Outcome::Skipped,
                _ => break,
            };
            results.push(outcome);
        }
        results.truncate(total);
        Some(Control {
            files,
            initial,
            results,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_file_reads_back_up_to_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcf");
        let header = header(Path::new("out"), &[PathBuf::from("in")], Coverage::Full);
        let files = vec![
            (PathBuf::from("out/a"), 1),
            (PathBuf::from("in/b c"), 2),
            (PathBuf::from("in/d"), 3),
        ];
        Control::create(&path, &header, &files, 1).unwrap();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"FT 0 5 6\nCRASH 1\nFT 2 7").unwrap();
        let control = Control::read(&path, &header).unwrap();
        assert_eq!(control.files, files);
        assert_eq!(control.initial, 1);
        assert_eq!(
            control.results,
            vec![Outcome::Ran(vec![5, 6]), Outcome::Crashed],
            "the last line has no newline: that input runs again"
        );
        let other = header_of_other_merge();
        assert!(Control::read(&path, &other).is_none());
        let other_mode = super::header(Path::new("out"), &[PathBuf::from("in")], Coverage::Pruned);
        assert!(
            Control::read(&path, &other_mode).is_none(),
            "features recorded in full coverage are not taken over in pruned"
        );
        fs::write(&path, "").unwrap();
        assert!(Control::read(&path, &header).is_none());
    }

    fn header_of_other_merge() -> String {
        header(
            Path::new("out"),
            &[PathBuf::from("elsewhere")],
            Coverage::Full,
        )
    }

    #[test]
    fn kept_inputs_are_counted_after_the_initial_ones() {
        let mut state = MergeState {
            features: FeatureSet::new(),
            edges_of_initial: 0,
            blocks_of_initial: 0,
            initial: 1,
            outcome: MergeOutcome::default(),
            new: Vec::new(),
        };
        assert_eq!(state.take(0, &Outcome::Ran(vec![1, 2])), 2);
        assert_eq!(state.take(1, &Outcome::Ran(vec![2])), 0);
        assert_eq!(state.take(2, &Outcome::Crashed), 0);
        assert_eq!(state.take(3, &Outcome::Ran(vec![2, 3])), 1);
        assert_eq!(state.outcome.kept, 1);
        assert_eq!(state.outcome.new_features, 1);
        assert_eq!(state.outcome.crashed, 1);
    }
}
