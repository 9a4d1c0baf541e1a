//! The persistent auto-dictionary: words taken from the target's
//! comparisons (source literals, comparison operands, input-to-state
//! replacements) that led to new coverage. Saved beside the corpus, in
//! `CORPUS/.php-fuzz/autodict` (AFL/libFuzzer dictionary format, so it also
//! works as a `--dict`), and read back when a campaign resumes.

use php_fuzz_mutate::Dictionary;
use php_fuzz_storage::{CorpusDir, STATE_DIR};

use crate::EngineError;

/// The state file's name under the corpus's state directory.
pub const AUTO_DICTIONARY_FILE: &str = "autodict";
/// Words kept, at most.
const MAX_WORDS: usize = 4096;
/// Longest word kept.
const MAX_WORD_LEN: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct AutoDictionary {
    words: Dictionary,
    /// Bumped whenever a word is added.
    generation: u64,
    saved_generation: u64,
}

impl AutoDictionary {
    /// The dictionary a campaign in `corpus` saved earlier, or an empty one.
    pub fn load(corpus: &CorpusDir) -> Result<AutoDictionary, EngineError> {
        let words = match corpus.read_state(AUTO_DICTIONARY_FILE)? {
            Some(text) => {
                let path = corpus.root().join(STATE_DIR).join(AUTO_DICTIONARY_FILE);
                Dictionary::parse(&text, &path)?
            }
            None => Dictionary::new(),
        };
        Ok(AutoDictionary {
            words,
            generation: 0,
            saved_generation: 0,
        })
    }

    /// Adds a word that found new coverage; false if it was there already
    /// (or is empty, too long, or the dictionary is full).
    pub fn learn(&mut self, word: &[u8]) -> bool {
        if word.len() < 2 || word.len() > MAX_WORD_LEN || self.words.len() >= MAX_WORDS {
            return false;
        }
        let before = self.words.len();
        self.words.push(word.to_vec());
        let added = self.words.len() > before;
        if added {
            self.generation += 1;
        }
        added
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn dictionary(&self) -> &Dictionary {
        &self.words
    }

    /// Writes the dictionary if it changed since the last write.
    pub fn save_if_changed(&mut self, corpus: &CorpusDir) -> Result<(), EngineError> {
        if self.generation == self.saved_generation {
            return Ok(());
        }
        corpus.write_state(AUTO_DICTIONARY_FILE, &self.words.to_text())?;
        self.saved_generation = self.generation;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learned_words_are_saved_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = CorpusDir::open(dir.path()).unwrap();
        let mut dict = AutoDictionary::load(&corpus).unwrap();
        assert_eq!(dict.len(), 0);
        assert!(dict.learn(b"IHDR"));
        assert!(!dict.learn(b"IHDR"), "once");
        assert!(!dict.learn(b"x"), "too short");
        assert!(dict.learn(b"\x00\xff\"q"));
        assert_eq!(dict.generation(), 2);
        dict.save_if_changed(&corpus).unwrap();
        let saved = dir.path().join(STATE_DIR).join(AUTO_DICTIONARY_FILE);
        let modified = std::fs::metadata(&saved).unwrap().modified().unwrap();
        dict.save_if_changed(&corpus).unwrap();
        assert_eq!(
            std::fs::metadata(&saved).unwrap().modified().unwrap(),
            modified
        );
        let again = AutoDictionary::load(&corpus).unwrap();
        assert_eq!(again.dictionary(), dict.dictionary());
    }
}
