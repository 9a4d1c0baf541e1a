//! Running given inputs once each: `run-single`, regression mode over a
//! crash folder, and the replay behind `report-coverage`.

use std::fs;
use std::path::{Path, PathBuf};

use php_fuzz_coverage::{EdgeCounter, edge_blocks};
use php_fuzz_harness::{Batch, Coverage, Crash, Executor};
use php_fuzz_instrument::BlockId;
use rustc_hash::FxHashMap;

use crate::EngineError;

/// Inputs per round trip while replaying; replay favours simple progress
/// reporting over the fuzzing loop's adaptive sizing.
const REPLAY_BATCH: usize = 64;
const REPLAY_BATCH_BYTES: usize = 8 << 20;

/// Hit counts per block id, summed over runs.
#[derive(Debug, Default, Clone)]
pub struct HitsByBlock {
    hits: FxHashMap<u32, u64>,
}

impl HitsByBlock {
    pub fn new() -> HitsByBlock {
        HitsByBlock::default()
    }

    pub fn add(&mut self, coverage: Coverage<'_>) {
        let mut edges = EdgeCounter::new();
        coverage.add_to(&mut edges);
        for (edge, count) in edges.edges() {
            let (_, block) = edge_blocks(edge);
            *self.hits.entry(block).or_default() += count as u64;
        }
    }

    pub fn merge(&mut self, other: &HitsByBlock) {
        for (&id, &n) in &other.hits {
            *self.hits.entry(id).or_default() += n;
        }
    }

    pub fn get(&self, id: BlockId) -> u64 {
        self.hits.get(&id.0).copied().unwrap_or(0)
    }

    pub fn len(&self) -> usize {
        self.hits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hits.is_empty()
    }

    /// Blocks that ran, sorted by id.
    pub fn sorted(&self) -> Vec<(BlockId, u64)> {
        let mut all: Vec<_> = self.hits.iter().map(|(&id, &n)| (BlockId(id), n)).collect();
        all.sort_unstable();
        all
    }
}

/// One replayed input.
#[derive(Debug)]
pub struct ReplayResult<'a> {
    pub path: &'a Path,
    pub input: &'a [u8],
    pub crash: Option<Crash>,
    /// The blocks this input ran, when asked for.
    pub blocks: Option<HitsByBlock>,
}

/// Files named on the command line; directories are read recursively
/// (hidden entries skipped), in a stable order.
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, EngineError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = fs::metadata(path).map_err(|source| EngineError::Input {
            path: path.clone(),
            what: "cannot read input",
            source,
        })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            collect_dir(path, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn collect_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), EngineError> {
    let entries = fs::read_dir(dir).map_err(|source| EngineError::Input {
        path: dir.to_path_buf(),
        what: "cannot read directory",
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| EngineError::Input {
            path: dir.to_path_buf(),
            what: "cannot read directory",
            source,
        })?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            collect_dir(&path, out)?;
        } else if !is_sidecar(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// Crash report sidecars sit beside the inputs in a crash folder.
fn is_sidecar(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".json")
        && ["crash-", "timeout-", "oom-", "minimized-"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// Runs each file once, calling `on_result` in order. With `trace`, each
/// result carries the blocks its input ran.
pub fn replay(
    executor: &mut Executor,
    files: &[PathBuf],
    trace: bool,
    mut on_result: impl FnMut(ReplayResult<'_>),
) -> Result<(), EngineError> {
    let mut batch = Batch::new();
    let mut start = 0;
    while start < files.len() {
        batch.clear();
        let mut end = start;
        let mut bytes = 0;
        while end < files.len()
            && end - start < REPLAY_BATCH
            && (bytes < REPLAY_BATCH_BYTES || end == start)
        {
            let data = fs::read(&files[end]).map_err(|source| EngineError::Input {
                path: files[end].clone(),
                what: "cannot read input",
                source,
            })?;
            bytes += data.len();
            batch.push(&data);
            end += 1;
        }
        let mut results: Vec<(Option<Crash>, Option<HitsByBlock>)> =
            Vec::with_capacity(end - start);
        executor.run_batch(&batch, |r| {
            let blocks = trace.then(|| {
                let mut hits = HitsByBlock::new();
                hits.add(r.coverage);
                hits
            });
            results.push((r.crash, blocks));
        })?;
        for (offset, (crash, blocks)) in results.into_iter().enumerate() {
            on_result(ReplayResult {
                path: &files[start + offset],
                input: batch.get(offset),
                crash,
                blocks,
            });
        }
        start = end;
    }
    Ok(())
}
