//! `--grammar auto`: which registered grammar the seeds are written in, if
//! any (docs/grammar.md). Each grammar parses a sample of the seeds; its
//! share is the seed bytes that parse cleanly over all the sampled bytes,
//! and the grammar with the highest share is picked when that share is at
//! least [`AUTO_THRESHOLD_PERCENT`]. Of equal shares, a strict grammar wins
//! over a lenient one (HTML, YAML and Markdown take most text), then the
//! first in registry order.
//!
//! A byte does not parse cleanly when it lies in an ERROR node, in the
//! parent of a MISSING node (the construct left incomplete), or in a node
//! of the grammar's `loose_kinds`, which take any text (PHP's inline HTML,
//! for one: every text file is a valid PHP file). A seed that is not UTF-8
//! or holds a NUL byte is binary: none of its bytes parse.
//!
//! The cost is bounded: the sample is the shortest seeds, within
//! [`AUTO_MAX_FILES`] and [`AUTO_MAX_BYTES`], and a grammar stops parsing
//! as soon as it can no longer reach the threshold (tree-sitter's error
//! recovery is slow: CSS takes 120 ms for 16 KiB of PHP, 4 s for 128 KiB).

use tree_sitter::{Node, Parser};

use crate::registry::{GrammarInfo, grammars};

/// The share of the seed bytes, in per cent, a grammar must parse to be picked.
pub const AUTO_THRESHOLD_PERCENT: usize = 80;
/// At most this many seed bytes are sampled.
pub const AUTO_MAX_BYTES: usize = 256 << 10;
/// At most this many seeds are sampled (a parse costs a few microseconds
/// even for a tiny seed).
pub const AUTO_MAX_FILES: usize = 2000;
/// A seed longer than this is not sampled (a cut seed would not parse).
pub const AUTO_MAX_SEED_BYTES: usize = 16 << 10;

/// How well one grammar parses the sampled seeds.
#[derive(Debug, Clone, Copy)]
pub struct GrammarShare {
    pub grammar: &'static GrammarInfo,
    /// Sampled seed bytes that parse cleanly; with `complete` false, those
    /// of the seeds parsed before the grammar fell short of the threshold.
    pub clean: usize,
    pub complete: bool,
}

/// What `--grammar auto` found.
#[derive(Debug, Clone)]
pub struct AutoChoice {
    /// Each grammar's share, in registry order.
    pub shares: Vec<GrammarShare>,
    /// Seeds and bytes sampled, binary seeds among them, and seeds not
    /// sampled (over the limits).
    pub files: usize,
    pub bytes: usize,
    pub binary: usize,
    pub left_out: usize,
}

impl AutoChoice {
    /// The grammar picked: of those that parse at least
    /// [`AUTO_THRESHOLD_PERCENT`] of the bytes, the one that parses most;
    /// of equals, a strict one before a lenient one, then the first in
    /// registry order. Never one without seed bytes.
    pub fn best(&self) -> Option<GrammarShare> {
        let key = |share: &GrammarShare| (share.clean, !share.grammar.lenient);
        self.shares
            .iter()
            .filter(|share| self.bytes > 0 && share.complete && self.qualifies(share.clean))
            .fold(None, |best: Option<GrammarShare>, share| match best {
                Some(b) if key(&b) >= key(share) => Some(b),
                _ => Some(*share),
            })
    }

    /// The grammar picked, if any.
    pub fn chosen(&self) -> Option<&'static GrammarInfo> {
        self.best().map(|best| best.grammar)
    }

    fn qualifies(&self, clean: usize) -> bool {
        clean * 100 >= self.bytes * AUTO_THRESHOLD_PERCENT
    }

    /// The reason in the banner: `auto: 97 % of 1234 seed bytes parse as php`.
    pub fn describe(&self) -> String {
        let mut notes = Vec::new();
        if self.binary > 0 {
            notes.push(format!("{} of {} seeds binary", self.binary, self.files));
        }
        if self.left_out > 0 {
            notes.push(format!(
                "{} seeds over the sampling limits left out",
                self.left_out
            ));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("; {}", notes.join(", "))
        };
        match self.best() {
            _ if self.bytes == 0 => format!("auto: no seed bytes to look at{notes}"),
            Some(best) => format!(
                "auto: {} % of {} seed bytes parse as {}{notes}",
                best.clean * 100 / self.bytes,
                self.bytes,
                best.grammar.name
            ),
            None => format!(
                "auto: no grammar parses {AUTO_THRESHOLD_PERCENT} % of the {} seed bytes{notes}",
                self.bytes
            ),
        }
    }
}

/// Parses the seeds (within the sampling limits) with every registered
/// grammar that loads, and says how much of them each parses.
pub fn choose<'a>(seeds: impl IntoIterator<Item = &'a [u8]>) -> AutoChoice {
    let (sample, left_out) = sample(seeds);
    let bytes = sample.iter().map(|s| s.len()).sum();
    let shares = grammars()
        .iter()
        .filter_map(|grammar| share_of(grammar, &sample, bytes))
        .collect();
    AutoChoice {
        shares,
        files: sample.len(),
        bytes,
        binary: sample.iter().filter(|seed| is_binary(seed)).count(),
        left_out,
    }
}

/// How much of `sample` (`bytes` in all) `grammar` parses; it stops once
/// the bytes it failed on leave it under the threshold. None if the
/// grammar does not load.
fn share_of(grammar: &'static GrammarInfo, sample: &[&[u8]], bytes: usize) -> Option<GrammarShare> {
    let mut parser = Parser::new();
    parser.set_language(&grammar.language()).ok()?;
    let (mut clean, mut failed) = (0, 0);
    for seed in sample {
        let parsed = clean_bytes(&mut parser, grammar, seed);
        clean += parsed;
        failed += seed.len() - parsed;
        if (bytes - failed) * 100 < bytes * AUTO_THRESHOLD_PERCENT {
            return Some(GrammarShare {
                grammar,
                clean,
                complete: false,
            });
        }
    }
    Some(GrammarShare {
        grammar,
        clean,
        complete: true,
    })
}

/// The shortest seeds within the limits, and how many were left out.
fn sample<'a>(seeds: impl IntoIterator<Item = &'a [u8]>) -> (Vec<&'a [u8]>, usize) {
    let mut seeds: Vec<&[u8]> = seeds.into_iter().collect();
    seeds.sort_by_key(|seed| seed.len());
    let (mut bytes, mut taken) = (0, 0);
    for seed in &seeds {
        if seed.len() > AUTO_MAX_SEED_BYTES
            || bytes + seed.len() > AUTO_MAX_BYTES
            || taken == AUTO_MAX_FILES
        {
            break;
        }
        bytes += seed.len();
        taken += 1;
    }
    let left_out = seeds.len() - taken;
    seeds.truncate(taken);
    (seeds, left_out)
}

fn is_binary(data: &[u8]) -> bool {
    data.contains(&0) || std::str::from_utf8(data).is_err()
}

/// The bytes of `data` that `parser` (set to `grammar`) parses cleanly.
pub fn clean_bytes(parser: &mut Parser, grammar: &GrammarInfo, data: &[u8]) -> usize {
    if is_binary(data) {
        return 0;
    }
    let Some(tree) = parser.parse(data, None) else {
        return 0;
    };
    if tree.root_node().is_error() {
        return 0;
    }
    let mut spans = Vec::new();
    unclean_spans(tree.root_node(), grammar, &mut spans);
    data.len() - covered(spans)
}

/// The byte ranges under `node` that do not parse cleanly.
fn unclean_spans(node: Node<'_>, grammar: &GrammarInfo, spans: &mut Vec<(usize, usize)>) {
    if node.is_error() || is_loose(node, grammar) {
        spans.push((node.start_byte(), node.end_byte()));
        return;
    }
    if node.is_missing() {
        let parent = node.parent().unwrap_or(node);
        spans.push((parent.start_byte(), parent.end_byte()));
        return;
    }
    let loose = !grammar.loose_kinds.is_empty();
    if !node.has_error() && !loose {
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        unclean_spans(child, grammar, spans);
    }
}

/// Whether `node` matches one of the grammar's `loose_kinds`: its kind,
/// and its ancestors' kinds as far as the path names them.
fn is_loose(node: Node<'_>, grammar: &GrammarInfo) -> bool {
    grammar.loose_kinds.iter().any(|path| {
        let mut at = Some(node);
        path.rsplit('>').all(|kind| {
            let matches = at.is_some_and(|n| n.kind() == kind);
            at = at.and_then(|n| n.parent());
            matches
        })
    })
}

/// How many bytes the ranges cover together (overlaps counted once).
fn covered(mut spans: Vec<(usize, usize)>) -> usize {
    spans.sort_unstable();
    let (mut total, mut reached) = (0, 0);
    for (start, end) in spans {
        let start = start.max(reached);
        if end > start {
            total += end - start;
            reached = end;
        }
    }
    total
}

#[cfg(test)]
mod tests;
