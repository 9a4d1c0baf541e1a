//! `lcov.info`, the LCOV tracefile format (`geninfo(1)`), for CI services,
//! editors and `genhtml`.
//!
//! Blocks are mapped onto LCOV's records like this:
//! - `DA:<line>,<count>` for every line that holds a block; the count is the
//!   highest hit count of the line's blocks, so a line counts as executed
//!   when any of its blocks ran (a line `if ($a) { … }` with a covered
//!   condition and an uncovered body shows as run: `BRDA` tells them apart);
//! - `FN`/`FNDA` for every function, method and closure, named as on the
//!   page (`{closure:12}`), with the hit count of its entry block; top-level
//!   code is not a function and has no `FN` record;
//! - `BRDA:<line>,0,<n>,<hits>` for every block on a line with more than
//!   one block, `n` counting the line's blocks in column order: the places
//!   where line coverage alone would hide an uncovered block.

use std::fmt::Write;

use crate::analysis::Report;

pub(crate) fn tracefile(report: &Report<'_>) -> String {
    let mut out = String::new();
    for file in &report.files {
        // Record fields are separated by newlines: a path with one cannot be
        // written faithfully, so it is flattened.
        let path = file
            .file
            .path
            .display()
            .to_string()
            .replace(['\n', '\r'], " ");
        let _ = writeln!(out, "TN:");
        let _ = writeln!(out, "SF:{path}");
        let functions: Vec<_> = file.functions.iter().filter(|f| !f.top_level).collect();
        for f in &functions {
            let _ = writeln!(out, "FN:{},{}", f.first_line, f.name);
        }
        for f in &functions {
            let _ = writeln!(out, "FNDA:{},{}", f.entries, f.name);
        }
        let _ = writeln!(out, "FNF:{}", functions.len());
        let _ = writeln!(
            out,
            "FNH:{}",
            functions.iter().filter(|f| f.entries > 0).count()
        );
        let (mut found, mut hit) = (0, 0);
        for line in file
            .placed
            .chunk_by(|a, b| a.line == b.line)
            .filter(|blocks| blocks.len() > 1)
        {
            for (n, p) in line.iter().enumerate() {
                let _ = writeln!(out, "BRDA:{},0,{n},{}", p.line + 1, p.hits.hits);
                found += 1;
                hit += usize::from(p.covered());
            }
        }
        if found > 0 {
            let _ = writeln!(out, "BRF:{found}");
            let _ = writeln!(out, "BRH:{hit}");
        }
        for line in &file.line_hits {
            let _ = writeln!(out, "DA:{},{}", line.line, line.hits);
        }
        let _ = writeln!(out, "LF:{}", file.counts.lines);
        let _ = writeln!(out, "LH:{}", file.counts.covered_lines);
        let _ = writeln!(out, "end_of_record");
    }
    out
}
