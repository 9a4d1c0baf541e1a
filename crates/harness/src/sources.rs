//! Serves instrumented source to harness processes, and keeps the session's
//! block map. One per fuzzing session, shared by every harness process, so a
//! file gets the same block ids in all of them.
//!
//! It also gathers the dictionary taken from the source: the literal
//! comparison operands of every file it serves, once each, with a
//! generation counter that tells a reader cheaply whether there is more.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use php_fuzz_instrument::{
    Block, BlockId, BlockIdAllocator, Coverage, Hooks, Outcome, SkipReason, StubStyle,
};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::HarnessError;
use php_fuzz_detectors::DetectorSet;

/// A file some harness included, as it was when first included.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub original: Arc<[u8]>,
    /// `None` when the file is included as is (skipped, or nothing to instrument).
    pub instrumented: Option<Arc<[u8]>>,
    pub blocks: Vec<Block>,
    pub skipped: Option<SkipReason>,
    /// Lines of the `preg_*` calls whose results the hooks check, sorted.
    pub regex_lines: Vec<u32>,
}

/// Where a block is, for messages and reports.
#[derive(Debug, Clone)]
pub struct BlockLocation {
    pub path: PathBuf,
    pub block: Block,
}

/// The session's dictionary taken from the source holds at most this many
/// entries (libFuzzer bounds its automatic dictionary the same way).
pub const MAX_SOURCE_LITERALS: usize = 1 << 14;

#[derive(Debug)]
pub struct SourceServer {
    style: StubStyle,
    /// Which blocks the served files record.
    coverage: Coverage,
    /// Serve the `cmplog` rendering, which logs comparison operands.
    cmplog: bool,
    /// Whether sinks go through the detectors' hooks.
    hooks: Hooks,
    state: Mutex<State>,
    /// Bumped whenever `State::literals` grows.
    literal_generation: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    ids: BlockIdAllocator,
    /// The next comparison site id (cmplog rendering).
    next_site: u32,
    files: Vec<SourceFile>,
    by_path: FxHashMap<PathBuf, usize>,
    /// (first id, one past the last id, index into `files`), sorted by first id.
    ranges: Vec<(u32, u32, usize)>,
    warnings: Vec<String>,
    /// Comparison literals of every file served, in the order first seen.
    literals: Vec<Vec<u8>>,
    known_literals: FxHashSet<Vec<u8>>,
    /// The detectors whose sinks the served files call.
    detectors_seen: DetectorSet,
    /// The detectors on, once the target said (`enable_detector_words`).
    detectors_on: Option<DetectorSet>,
}

impl State {
    /// Adds a dictionary word once; whether it is new.
    fn add_literal(&mut self, literal: Vec<u8>) -> bool {
        if self.literals.len() < MAX_SOURCE_LITERALS && self.known_literals.insert(literal.clone())
        {
            self.literals.push(literal);
            return true;
        }
        false
    }

    /// The words of the detectors seen and on that are not in yet.
    fn add_detector_words(&mut self, seen: DetectorSet) -> bool {
        let on = self.detectors_on.unwrap_or(DetectorSet::NONE);
        let mut added = false;
        for detector in seen.iter().filter(|d| on.contains(*d)) {
            for word in detector.info().words {
                added |= self.add_literal(word.to_vec());
            }
        }
        added
    }
}

impl SourceServer {
    /// Serves the coverage rendering, in full coverage.
    pub fn new(style: StubStyle) -> SourceServer {
        SourceServer {
            style,
            coverage: Coverage::Full,
            cmplog: false,
            hooks: Hooks::Rewrite,
            state: Mutex::new(State::default()),
            literal_generation: AtomicU64::new(0),
        }
    }

    /// Serves the `cmplog` rendering: the same blocks, and comparison
    /// operands logged (`RunResult::cmp_log`).
    pub fn with_cmplog(style: StubStyle) -> SourceServer {
        SourceServer {
            cmplog: true,
            ..SourceServer::new(style)
        }
    }

    /// The same server recording the blocks `coverage` keeps. Call it
    /// before the first file is served.
    pub fn with_coverage(self, coverage: Coverage) -> SourceServer {
        SourceServer { coverage, ..self }
    }

    /// The same server with the detectors' sink hooks, or without them
    /// (`--detectors none --allow-side-effects`: nothing to check or refuse).
    pub fn with_hooks(self, hooks: Hooks) -> SourceServer {
        SourceServer { hooks, ..self }
    }

    pub fn hooks(&self) -> Hooks {
        self.hooks
    }

    pub fn style(&self) -> StubStyle {
        self.style
    }

    pub fn coverage(&self) -> Coverage {
        self.coverage
    }

    pub fn logs_comparisons(&self) -> bool {
        self.cmplog
    }

    /// Changes whenever [`SourceServer::comparison_literals`] gains entries.
    pub fn literal_generation(&self) -> u64 {
        self.literal_generation.load(Ordering::Acquire)
    }

    /// The dictionary taken from the source so far, in the order first
    /// seen, and its generation.
    pub fn comparison_literals(&self) -> (u64, Vec<Vec<u8>>) {
        let state = self.lock();
        (self.literal_generation(), state.literals.clone())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The instrumented source for an include of `path`, or `None` to let
    /// PHP include the file as it is on disk.
    pub fn serve(&self, path: &Path) -> Result<Option<Arc<[u8]>>, HarnessError> {
        let current = match fs::read(path) {
            Ok(bytes) => bytes,
            // PHP reports the failed include itself, with the include's location.
            Err(_) => return Ok(None),
        };
        let mut state = self.lock();
        if let Some(&index) = state.by_path.get(path) {
            let file = &state.files[index];
            if *file.original == current[..] {
                return Ok(file.instrumented.clone());
            }
        }
        let state = &mut *state;
        let outcome = if self.cmplog {
            php_fuzz_instrument::instrument_cmplog(
                &current,
                &mut state.ids,
                &mut state.next_site,
                self.style,
                self.coverage,
                self.hooks,
            )
        } else {
            php_fuzz_instrument::instrument(
                &current,
                &mut state.ids,
                self.style,
                self.coverage,
                self.hooks,
            )
        }
        .map_err(|source| HarnessError::Instrument {
            path: path.to_path_buf(),
            source,
        })?;
        let file = match outcome {
            Outcome::Instrumented(result) => {
                let before = state.literals.len();
                for literal in result.comparison_literals {
                    state.add_literal(literal);
                }
                let mut new_detectors = DetectorSet::NONE;
                for detector in result.detectors.iter() {
                    if !state.detectors_seen.contains(detector) {
                        new_detectors.insert(detector);
                        state.detectors_seen.insert(detector);
                    }
                }
                state.add_detector_words(new_detectors);
                if state.literals.len() > before {
                    self.literal_generation.fetch_add(1, Ordering::Release);
                }
                SourceFile {
                    path: path.to_path_buf(),
                    original: current.into(),
                    // A file with comparison sites but no block still logs.
                    instrumented: (!result.blocks.is_empty() || result.comparison_sites > 0)
                        .then(|| result.source.into()),
                    blocks: result.blocks,
                    skipped: None,
                    regex_lines: result.regex_lines,
                }
            }
            Outcome::Skipped(reason) => {
                let SkipReason::ParseError { line } = &reason;
                state.warnings.push(format!(
                    "{}:{line}: not instrumented: tree-sitter-php cannot parse this file (first error on line {line}); it runs without coverage",
                    path.display()
                ));
                SourceFile {
                    path: path.to_path_buf(),
                    original: current.into(),
                    instrumented: None,
                    blocks: Vec::new(),
                    skipped: Some(reason),
                    regex_lines: Vec::new(),
                }
            }
        };
        let served = file.instrumented.clone();
        let index = state.files.len();
        if let (Some(first), Some(last)) = (file.blocks.first(), file.blocks.last()) {
            let (first, end) = (first.id.0.min(last.id.0), first.id.0.max(last.id.0) + 1);
            let at = state.ranges.partition_point(|r| r.0 < first);
            state.ranges.insert(at, (first, end, index));
        }
        state.by_path.insert(path.to_path_buf(), index);
        state.files.push(file);
        Ok(served)
    }

    /// The detectors on, as the target's first harness said: the words of
    /// those whose sinks the source calls join the dictionary taken from
    /// the source (docs/detectors.md, "Steering").
    pub fn enable_detector_words(&self, on: DetectorSet) {
        let mut state = self.lock();
        state.detectors_on = Some(on);
        let seen = state.detectors_seen;
        if state.add_detector_words(seen) {
            self.literal_generation.fetch_add(1, Ordering::Release);
        }
    }

    /// Whether the target said `detector` is on.
    pub fn detector_on(&self, detector: php_fuzz_detectors::Detector) -> bool {
        self.lock()
            .detectors_on
            .is_some_and(|on| on.contains(detector))
    }

    /// Whether line `line` of `path` holds a hooked `preg_*` call.
    pub fn is_regex_call(&self, path: &Path, line: u32) -> bool {
        let state = self.lock();
        state
            .by_path
            .get(path)
            .is_some_and(|&index| state.files[index].regex_lines.binary_search(&line).is_ok())
    }

    pub fn locate(&self, id: BlockId) -> Option<BlockLocation> {
        let state = self.lock();
        let at = state.ranges.partition_point(|r| r.0 <= id.0);
        let &(first, end, index) = state.ranges.get(at.checked_sub(1)?)?;
        if id.0 < first || id.0 >= end {
            return None;
        }
        let file = &state.files[index];
        let block = file.blocks.iter().find(|b| b.id == id)?.clone();
        Some(BlockLocation {
            path: file.path.clone(),
            block,
        })
    }

    /// The function a line of a served file belongs to, as the block map
    /// knows it: that of the last block at or before the line.
    pub fn function_at(&self, path: &Path, line: u32) -> Option<String> {
        let state = self.lock();
        let file = &state.files[*state.by_path.get(path)?];
        let at = file.blocks.partition_point(|b| b.line <= line);
        file.blocks[..at]
            .last()
            .map(|b| b.function.clone().unwrap_or_else(|| "{main}".into()))
    }

    /// Every file served so far; a file that changed on disk appears once per version.
    pub fn files(&self) -> Vec<SourceFile> {
        self.lock().files.clone()
    }

    pub fn blocks_allocated(&self) -> u32 {
        self.lock().ids.allocated()
    }

    /// Warnings not yet shown to the user.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().warnings)
    }
}
