//! Minimizing a typed entry (docs/autofuzz.md) argument by argument: the
//! candidates of `php_fuzz_arguments::shrink_candidates` each make one
//! argument smaller (a shorter string, an integer nearer 0, an array with
//! an item fewer, an optional argument left out), always fitting the
//! types; the first that crashes the same way is kept, until none does.

use php_fuzz_arguments::{Schema, Value, parse_entry, shrink_candidates, write_entry};

use super::Search;
use crate::EngineError;

impl Search<'_> {
    /// Shrinks `current`, a typed entry that fits `schema`, in place.
    /// True when no candidate keeps the crash (no limit stopped it).
    pub(super) fn shrink_entry(
        &mut self,
        schema: &Schema,
        current: &mut Vec<u8>,
        progress: &mut impl FnMut(usize, u64),
    ) -> Result<bool, EngineError> {
        let mut values: Vec<Value> =
            parse_entry(current).map_err(|e| EngineError::Entry(format!("the input:{e}")))?;
        loop {
            let candidates = shrink_candidates(schema, &values);
            match self.first_smaller(&candidates)? {
                Step::Kept(index, text) => {
                    values = candidates.into_iter().nth(index).expect("a candidate");
                    *current = text;
                    progress(current.len(), self.runs);
                }
                Step::NoneKept => return Ok(true),
                Step::OutOfBudget => return Ok(false),
            }
        }
    }

    /// Runs the candidates in speculative batches until one crashes the
    /// same way.
    fn first_smaller(&mut self, candidates: &[Vec<Value>]) -> Result<Step, EngineError> {
        let mut start = 0;
        while start < candidates.len() {
            if self.out_of_budget() {
                return Ok(Step::OutOfBudget);
            }
            let end = (start + self.budget_left().max(1)).min(candidates.len());
            self.batch.clear();
            let mut texts = Vec::with_capacity(end - start);
            for candidate in &candidates[start..end] {
                let mut text = Vec::new();
                write_entry(candidate, &mut text);
                self.batch.push(&text);
                texts.push(text);
            }
            if let Some((index, crash)) = self.first_same_crash()? {
                self.crash = Some(crash);
                let text = texts.swap_remove(index);
                return Ok(Step::Kept(start + index, text));
            }
            start = end;
        }
        Ok(Step::NoneKept)
    }
}

enum Step {
    /// The candidate at this index crashed the same way; its text.
    Kept(usize, Vec<u8>),
    NoneKept,
    OutOfBudget,
}
