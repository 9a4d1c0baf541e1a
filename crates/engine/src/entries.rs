//! Typed corpus entries given by hand (docs/autofuzz.md): `run-single`,
//! `minimize-crash`, `merge` and `report-coverage` check each one before
//! it runs, so a malformed entry is a clear error at its place instead of
//! an input the harness quietly skips.

use std::path::{Path, PathBuf};

use php_fuzz_arguments::{Schema, check, parse_entry};

use crate::EngineError;

/// A typed target's parameters, for checking entries.
#[derive(Debug)]
pub struct EntryChecker {
    schema: Schema,
}

impl EntryChecker {
    /// From the harness's `Ready.arguments`; `None` for a target of bytes.
    pub fn from_ready(arguments: Option<&[u8]>) -> Result<Option<EntryChecker>, EngineError> {
        arguments
            .map(|json| {
                Schema::from_json(json)
                    .map(|schema| EntryChecker { schema })
                    .map_err(|e| EngineError::Arguments(e.to_string()))
            })
            .transpose()
    }

    /// Whether `data`, read from `path`, is an entry that fits the
    /// parameters: `FILE:LINE:COLUMN: …` for a syntax error, `FILE:
    /// argument N ($name): expected …` for a value that does not fit.
    pub fn check(&self, path: &Path, data: &[u8]) -> Result<(), EngineError> {
        let values =
            parse_entry(data).map_err(|e| EngineError::Entry(format!("{}:{e}", path.display())))?;
        check(&self.schema, &values)
            .map_err(|e| EngineError::Entry(format!("{}: {e}", path.display())))
    }

    /// Checks every file (read once more: entries are small).
    pub fn check_files(&self, files: &[PathBuf]) -> Result<(), EngineError> {
        for path in files {
            let data = std::fs::read(path).map_err(|source| EngineError::Input {
                path: path.clone(),
                what: "cannot read input",
                source,
            })?;
            self.check(path, &data)?;
        }
        Ok(())
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }
}
