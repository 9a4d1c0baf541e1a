//! The campaign's statistics file: JSON lines, appended to by every session
//! of a campaign (AFL's `plot_data`), read back by `report-coverage`.
//!
//! One JSON object per line, each with the format version `v`, the `event`,
//! the wall-clock `time` (Unix seconds), the campaign's `elapsed` seconds
//! (which a resumed campaign continues) and the `session` (1, 2, … one per
//! `fuzz` run on the file):
//!
//! - `start`: a session began (`pid`, `seed`, `jobs`, `target`);
//! - `sample`: every few seconds, and once after the seeds ran: `runs` (of
//!   the campaign), `execs_per_sec` (since the previous sample), `cov`, `ft`,
//!   `corpus_entries`, `corpus_bytes`, `crashes` (distinct, saved), `rss_mb`
//!   (php-fuzz) and `harness_rss_mb`;
//! - `crash`: a new distinct crash was saved (`kind`, `summary`, `artifact`);
//! - `end`: the session ended: a sample's fields and the `reason`.
//!
//! Every line is one `write` to a file opened for appending, so a php-fuzz
//! killed at any moment leaves at most one partial line, at the end; the
//! next session starts on a fresh line, and [`read_stats`] skips any line it
//! cannot read.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{STATE_DIR, StorageError, io_error, is_not_found};

/// The default statistics file of a corpus directory, under [`STATE_DIR`].
pub const STATS_FILE: &str = "stats.jsonl";

/// The version written in every line's `v`.
pub const STATS_VERSION: u32 = 1;

/// Where a corpus directory keeps its statistics: `CORPUS/.php-fuzz/stats.jsonl`.
pub fn default_stats_path(corpus: &Path) -> PathBuf {
    corpus.join(STATE_DIR).join(STATS_FILE)
}

/// One line of the statistics file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsLine {
    pub v: u32,
    /// Unix time, seconds.
    pub time: f64,
    /// Seconds of fuzzing since the campaign began, summed over its sessions.
    pub elapsed: f64,
    /// 1 for the first `fuzz` run that wrote to the file, then 2, …
    pub session: u32,
    #[serde(flatten)]
    pub event: StatsEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StatsEvent {
    Start {
        pid: u32,
        seed: u64,
        jobs: usize,
        target: String,
    },
    Sample(Sample),
    Crash {
        /// `exception`, `warning`, `timeout`…
        kind: String,
        /// One line, e.g. `Error: bang in Classifier.php:14`.
        summary: String,
        /// The saved input, as php-fuzz wrote its path.
        artifact: String,
    },
    End {
        #[serde(flatten)]
        sample: Sample,
        /// Why the session ended, e.g. `reached --max-runs`.
        reason: String,
    },
}

/// The numbers of the status line at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Inputs run since the campaign began (all sessions).
    pub runs: u64,
    /// Runs per second since the previous sample of the session.
    pub execs_per_sec: f64,
    /// Edges covered.
    pub cov: usize,
    /// Features.
    pub ft: usize,
    pub corpus_entries: usize,
    pub corpus_bytes: usize,
    /// Distinct crashes saved for the target (this session and earlier ones).
    pub crashes: usize,
    /// Resident memory of php-fuzz, MB.
    pub rss_mb: u64,
    /// Resident memory of the (last measured) harness process, MB.
    pub harness_rss_mb: u64,
    /// The learned mutation schedule's draw by group (`bytes`, `dict`,
    /// `i2s`, `grammar`, `custom`: shares summing to 1); absent under the
    /// uniform schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<std::collections::BTreeMap<String, f64>>,
}

/// Where the previous sessions of a campaign left off.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Resume {
    /// The number of the last session in the file; 0 for a new file.
    pub last_session: u32,
    /// The largest `elapsed` in the file.
    pub elapsed: f64,
    /// The largest `runs` in the file.
    pub runs: u64,
}

impl Resume {
    fn from_lines(lines: &[StatsLine]) -> Resume {
        lines.iter().fold(Resume::default(), |r, line| Resume {
            last_session: r.last_session.max(line.session),
            elapsed: r.elapsed.max(line.elapsed),
            runs: match &line.event {
                StatsEvent::Sample(s) | StatsEvent::End { sample: s, .. } => r.runs.max(s.runs),
                _ => r.runs,
            },
        })
    }
}

/// The statistics file, open for appending.
#[derive(Debug)]
pub struct StatsFile {
    path: PathBuf,
    file: File,
}

impl StatsFile {
    /// Opens `path` for appending (creating it and its directory if
    /// missing) and says where the earlier sessions left off. A partial
    /// last line, left by a killed php-fuzz, is ended with a newline so the
    /// next line starts clean.
    pub fn open(path: &Path) -> Result<(StatsFile, Resume), StorageError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(io_error(dir, "cannot create"))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io_error(path, "cannot open the statistics file"))?;
        let mut text = Vec::new();
        file.read_to_end(&mut text)
            .map_err(io_error(path, "cannot read the statistics file"))?;
        let resume = Resume::from_lines(&parse(&text));
        let mut stats = StatsFile {
            path: path.to_path_buf(),
            file,
        };
        if text.last().is_some_and(|&b| b != b'\n') {
            stats.write_bytes(b"\n")?;
        }
        // Appends go to the end whatever the position; keep it tidy anyway.
        let _ = stats.file.seek(SeekFrom::End(0));
        Ok((stats, resume))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` as one JSON line, in one write.
    pub fn append(&mut self, line: &StatsLine) -> Result<(), StorageError> {
        // Plain numbers and strings: encoding cannot fail.
        let mut bytes = serde_json::to_vec(line).expect("a statistics line encodes");
        bytes.push(b'\n');
        self.write_bytes(&bytes)
    }

    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), StorageError> {
        self.file
            .write_all(bytes)
            .and_then(|()| self.file.flush())
            .map_err(io_error(&self.path, "cannot append to the statistics file"))
    }
}

/// Every line of the statistics file at `path` that reads as a
/// [`StatsLine`], in file order; `None` if there is no such file. Lines that
/// do not (a partial last line, a future event) are skipped.
pub fn read_stats(path: &Path) -> Result<Option<Vec<StatsLine>>, StorageError> {
    match fs::read(path) {
        Ok(text) => Ok(Some(parse(&text))),
        Err(err) if is_not_found(&err) => Ok(None),
        Err(err) => Err(io_error(path, "cannot read the statistics file")(err)),
    }
}

fn parse(text: &[u8]) -> Vec<StatsLine> {
    text.split(|&b| b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(session: u32, elapsed: f64, runs: u64) -> StatsLine {
        StatsLine {
            v: STATS_VERSION,
            time: 1_700_000_000.5,
            elapsed,
            session,
            event: StatsEvent::Sample(Sample {
                runs,
                execs_per_sec: 1234.5,
                cov: 10,
                ft: 20,
                corpus_entries: 3,
                corpus_bytes: 40,
                crashes: 1,
                rss_mb: 12,
                harness_rss_mb: 30,
                mix: None,
            }),
        }
    }

    #[test]
    fn lines_round_trip_with_their_event_tag() {
        let line = sample(1, 5.0, 100);
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.starts_with(r#"{"v":1,"time":1700000000.5,"elapsed":5.0,"session":1,"event":"sample","runs":100,"#), "{text}");
        assert_eq!(serde_json::from_str::<StatsLine>(&text).unwrap(), line);
        let end = StatsLine {
            event: StatsEvent::End {
                sample: Sample::default(),
                reason: "reached --max-runs".into(),
            },
            ..line
        };
        let text = serde_json::to_string(&end).unwrap();
        assert!(text.contains(r#""event":"end""#), "{text}");
        assert!(text.contains(r#""reason":"reached --max-runs""#), "{text}");
        assert_eq!(serde_json::from_str::<StatsLine>(&text).unwrap(), end);
    }

    #[test]
    fn a_new_file_is_created_with_its_directory_and_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".php-fuzz/stats.jsonl");
        let (mut stats, resume) = StatsFile::open(&path).unwrap();
        assert_eq!(resume, Resume::default());
        stats.append(&sample(1, 0.0, 0)).unwrap();
        stats.append(&sample(1, 5.0, 50)).unwrap();
        drop(stats);
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with('\n'));
        assert_eq!(read_stats(&path).unwrap().unwrap().len(), 2);
    }

    #[test]
    fn a_resumed_campaign_appends_and_learns_where_the_last_one_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stats.jsonl");
        let (mut stats, _) = StatsFile::open(&path).unwrap();
        stats.append(&sample(1, 0.0, 0)).unwrap();
        stats.append(&sample(1, 7.5, 700)).unwrap();
        drop(stats);
        let (mut stats, resume) = StatsFile::open(&path).unwrap();
        assert_eq!(
            resume,
            Resume {
                last_session: 1,
                elapsed: 7.5,
                runs: 700
            }
        );
        stats.append(&sample(2, 8.0, 710)).unwrap();
        let lines = read_stats(&path).unwrap().unwrap();
        let sessions: Vec<u32> = lines.iter().map(|l| l.session).collect();
        assert_eq!(sessions, [1, 1, 2], "the first session's lines are kept");
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_the_next_session_starts_a_fresh_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stats.jsonl");
        let whole = serde_json::to_string(&sample(1, 5.0, 500)).unwrap();
        // What a php-fuzz killed in the middle of a write leaves.
        fs::write(&path, format!("{whole}\n{}", &whole[..whole.len() / 2])).unwrap();
        let lines = read_stats(&path).unwrap().unwrap();
        assert_eq!(lines, [sample(1, 5.0, 500)]);

        let (mut stats, resume) = StatsFile::open(&path).unwrap();
        assert_eq!(resume.runs, 500);
        stats.append(&sample(2, 6.0, 510)).unwrap();
        let lines = read_stats(&path).unwrap().unwrap();
        assert_eq!(lines, [sample(1, 5.0, 500), sample(2, 6.0, 510)]);
    }

    #[test]
    fn unknown_events_and_garbage_are_skipped_and_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stats.jsonl");
        assert_eq!(read_stats(&path).unwrap(), None);
        let whole = serde_json::to_string(&sample(1, 1.0, 1)).unwrap();
        fs::write(
            &path,
            format!(
                "{{\"v\":2,\"time\":1,\"elapsed\":1,\"session\":1,\"event\":\"later\"}}\n\nnot json\n{whole}\n"
            ),
        )
        .unwrap();
        assert_eq!(read_stats(&path).unwrap().unwrap(), [sample(1, 1.0, 1)]);
    }
}
