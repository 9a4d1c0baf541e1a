//! Grammar-aware mutation in the campaign (docs/grammar.md). With
//! `--grammar` or `setGrammar()`, each corpus entry is parsed once, when it
//! joins the corpus (seeds, NEW, REDUCE, `--reload`), outside the shared
//! lock; its tree and the fragment pool live in the shared state, and
//! `build_batch` makes a share of its mutants with a grammar mutation,
//! falling back to bytes when none applies.

mod budget;
mod choice;

use std::path::PathBuf;

use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutator, InputParser, ParsedInput, Sources};
use php_fuzz_mutate::{Mutator, Source};
use rand::RngExt;

use super::Shared;
use super::scratch::{Origin, Scratch};
use crate::EngineError;
use crate::corpus::{Corpus, EntryId};
use crate::output::Mutations;
use crate::replay::collect_inputs;

use budget::GrammarBudget;
pub use budget::GrammarShare;
pub(super) use choice::choose_grammar;

/// An entry whose grammar mutation failed this many times in a row is left
/// to the byte mutator until the pool grows: a failed try costs as much as
/// a cheap execution (on a no-op target, a quarter of the loop's time).
const MISSES_BEFORE_PAUSE: u8 = 8;

/// The shared half: each entry's tree and the fragment pool.
pub(super) struct GrammarCorpus {
    /// Indexed by `EntryId`; None until the entry is parsed.
    trees: Vec<Option<ParsedInput>>,
    /// Indexed by `EntryId`: grammar mutations that failed in a row.
    misses: Vec<u8>,
    tree_bytes: usize,
    pool: FragmentPool,
    fragment_files: usize,
    /// Fragments the grammar's lexicon pinned (0 with `--no-lexicon`).
    lexicon_fragments: usize,
    /// Mutants a grammar mutation was tried for, and made.
    tried: u64,
    made: u64,
    /// `--fusion`, and the fusions tried and made (several may be tried
    /// for one mutant).
    fusion: bool,
    fusion_tried: u64,
    fusion_made: u64,
    /// The mutants' runs, grammar mutants first, then the others: how
    /// many, their time in the target and their length (what the grammar
    /// costs in exec/s, docs/grammar.md).
    runs: [MutantRuns; 2],
}

/// What one kind of mutant cost: runs, microseconds and bytes, summed.
#[derive(Debug, Default, Clone, Copy)]
struct MutantRuns {
    runs: u64,
    micros: u64,
    bytes: u64,
}

impl MutantRuns {
    fn describe(&self, what: &str) -> String {
        let runs = self.runs.max(1);
        format!(
            "{what} {} µs, {} bytes",
            self.micros / runs,
            self.bytes / runs
        )
    }
}

impl GrammarCorpus {
    /// An empty corpus whose pool holds the fragments of `paths` (files, or
    /// directories read recursively) and, with `lexicon`, of the grammar's
    /// lexicon, pinned so they are never evicted. `fusion`: whether the
    /// workers' mutators fuse (for the summary).
    pub fn new(
        grammar: &Grammar,
        paths: &[PathBuf],
        lexicon: bool,
        fusion: bool,
    ) -> Result<GrammarCorpus, EngineError> {
        let mut pool = FragmentPool::default();
        let mut parser = InputParser::new(grammar);
        let lexicon_text = grammar.info().lexicon;
        let lexicon_fragments = if lexicon && !lexicon_text.is_empty() {
            pool.add_pinned(&parser.parse(lexicon_text.as_bytes()))
        } else {
            0
        };
        let files = collect_inputs(paths)?;
        for file in &files {
            let data = std::fs::read(file).map_err(|source| EngineError::Input {
                path: file.clone(),
                what: "cannot read fragment file",
                source,
            })?;
            pool.add_pinned(&parser.parse(&data));
        }
        Ok(GrammarCorpus {
            trees: Vec::new(),
            misses: Vec::new(),
            tree_bytes: 0,
            pool,
            fragment_files: files.len(),
            lexicon_fragments,
            tried: 0,
            made: 0,
            fusion,
            fusion_tried: 0,
            fusion_made: 0,
            runs: [MutantRuns::default(); 2],
        })
    }

    fn tree(&self, id: EntryId) -> Option<&ParsedInput> {
        self.trees.get(id.0 as usize)?.as_ref()
    }

    fn insert(&mut self, id: EntryId, tree: ParsedInput) {
        let index = id.0 as usize;
        if self.trees.len() <= index {
            self.trees.resize_with(index + 1, || None);
            self.misses.resize(index + 1, 0);
        }
        // New fragments may give the paused entries something to apply.
        self.misses.fill(0);
        self.pool.add(&tree);
        self.tree_bytes += tree.heap_bytes();
        if let Some(old) = self.trees[index].replace(tree) {
            self.tree_bytes -= old.heap_bytes();
        }
    }

    /// One line for the campaign's INFO output.
    pub fn describe(&self) -> String {
        let stats = self.pool.stats();
        format!(
            "pool: {} fragments of {} kinds, {} KB ({} pinned: {} from the lexicon, the rest from {} fragment files); trees: {} KB",
            stats.fragments,
            stats.kinds,
            stats.bytes / 1024,
            stats.pinned,
            self.lexicon_fragments,
            self.fragment_files,
            self.tree_bytes / 1024
        )
    }

    /// Counts a mutant's run that did not crash: `grammar` says whether a
    /// grammar mutation made it.
    pub fn count_run(&mut self, grammar: bool, micros: u32, len: usize) {
        let runs = &mut self.runs[usize::from(!grammar)];
        runs.runs += 1;
        runs.micros += u64::from(micros);
        runs.bytes += len as u64;
    }

    /// How long the mutants ran on average, for the campaign's last lines.
    pub fn describe_runs(&self) -> String {
        let [grammar, others] = &self.runs;
        let share = 100.0 * grammar.runs as f64 / (grammar.runs + others.runs).max(1) as f64;
        format!(
            "{}; {}; grammar mutants were {share:.0} % of the mutants run",
            grammar.describe("grammar mutants ran"),
            others.describe("other mutants")
        )
    }

    /// How often grammar mutation applied, for the campaign's last lines.
    pub fn describe_use(&self) -> String {
        let fusion = if self.fusion {
            format!(
                "fusion: tried {}, made {}",
                self.fusion_tried, self.fusion_made
            )
        } else {
            "fusion: off".to_string()
        };
        format!(
            "tried for {} mutants, made {} ({:.0} %), the rest fell back to bytes; {fusion}",
            self.tried,
            self.made,
            100.0 * self.made as f64 / self.tried.max(1) as f64
        )
    }
}

/// A worker's half: its parser and grammar mutator, if a grammar is on.
pub(super) struct GrammarWorker {
    tools: Option<(InputParser, GrammarMutator)>,
    parsed: Vec<(EntryId, ParsedInput)>,
    /// The uniform schedule's odds of a grammar mutant.
    budget: GrammarBudget,
}

impl GrammarWorker {
    /// `fusion`: add dataflow fusion to the mutations (`--fusion`; the
    /// grammar is php, `choose_grammar` checked).
    pub fn new(grammar: Option<&Grammar>, fusion: bool, share: GrammarShare) -> GrammarWorker {
        let tools = grammar.map(|g| {
            let mut mutator = GrammarMutator::new(g.info().code);
            if fusion {
                mutator.enable_fusion(g);
            }
            (InputParser::new(g), mutator)
        });
        GrammarWorker {
            tools,
            parsed: Vec::new(),
            budget: GrammarBudget::new(share),
        }
    }

    /// Parses the entries `scratch`'s batch added to the corpus or
    /// shortened, without the lock, then files their trees under it. A tree
    /// whose entry changed meanwhile (another worker's REDUCE) is dropped:
    /// that worker files its own.
    pub fn learn(&mut self, shared: &Shared, scratch: &mut Scratch) {
        let Some((parser, _)) = &mut self.tools else {
            scratch.joined.clear();
            return;
        };
        if scratch.joined.is_empty() {
            return;
        }
        for (id, index) in scratch.joined.drain(..) {
            self.parsed
                .push((id, parser.parse(scratch.batch.get(index))));
        }
        let mut state = shared.lock();
        let state = &mut *state;
        let Some(grammar) = &mut state.grammar else {
            return;
        };
        for (id, tree) in self.parsed.drain(..) {
            if state.corpus.get(id).data == tree.data() {
                grammar.insert(id, tree);
            }
        }
    }

    /// Counts what the batch's grammar and byte mutants cost the target,
    /// for the uniform schedule's odds ([`budget`]). Input-to-state
    /// candidates and custom mutants are neither.
    pub fn learn_costs(&mut self, scratch: &Scratch) {
        let (Some(_), Origin::Mutants(mutants)) = (&self.tools, &scratch.origin) else {
            return;
        };
        for (mutant, &blocks) in mutants.iter().zip(&scratch.run_blocks) {
            match mutant.source() {
                Some(Source::Grammar) => self.budget.record(true, blocks),
                None => self.budget.record(false, blocks),
                Some(Source::InputToState | Source::Custom) => {}
            }
        }
    }

    /// With the schedule's odds (under the uniform one, those that give
    /// grammar mutants a quarter of the target's work), queues a grammar
    /// mutant of `parent` (`partner` for CrossOver) in `scratch`. False if
    /// it did not: the caller makes a byte mutant instead. Draws from
    /// `mutator`'s generator only when a grammar is on, so byte-only
    /// campaigns replay as before.
    #[allow(clippy::too_many_arguments)]
    pub fn push_mutant(
        &mut self,
        grammar: &mut GrammarCorpus,
        corpus: &Corpus,
        mutator: &mut Mutator,
        scratch: &mut Scratch,
        parent: EntryId,
        partner: EntryId,
        max_len: usize,
    ) -> bool {
        let Some((_, grammar_mutator)) = &mut self.tools else {
            return false;
        };
        let odds = if mutator.schedule().is_learned() {
            mutator.schedule().odds(Source::Grammar)
        } else {
            self.budget.odds()
        };
        let grammar_turn = mutator.rng_mut().random_bool(odds.clamp(0.0, 1.0));
        if !grammar_turn {
            return false;
        }
        let index = parent.0 as usize;
        if grammar.tree(parent).is_none() || grammar.misses[index] >= MISSES_BEFORE_PAUSE {
            return false;
        }
        grammar.tried += 1;
        let Some(tree) = grammar.tree(parent) else {
            return false;
        };
        let sources = Sources {
            input: tree,
            partner: grammar.tree(partner),
            pool: &grammar.pool,
        };
        let buffer = scratch.mutant_buffer();
        let applied = grammar_mutator.mutate(mutator.rng_mut(), sources, max_len, buffer);
        let (fusion_tried, fusion_made) = grammar_mutator.take_fusion_counts();
        grammar.fusion_tried += fusion_tried;
        grammar.fusion_made += fusion_made;
        let Some(applied) = applied else {
            grammar.misses[index] += 1;
            return false;
        };
        grammar.misses[index] = 0;
        grammar.made += 1;
        let parent_len = corpus.get(parent).data.len();
        scratch.push_built_mutant(
            parent,
            parent_len,
            Mutations {
                grammar: Some(applied),
                bytes: None,
                typed: None,
            },
        );
        true
    }
}
