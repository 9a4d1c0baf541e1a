//! Block ids and positions across many files instrumented with one
//! allocator, as a fuzzing session does: each file gets one contiguous
//! range, ranges never overlap, ids follow source order, and no two blocks
//! of a file share a byte offset.

mod common;

use std::path::PathBuf;

use php_fuzz_instrument::{
    BlockId, BlockIdAllocator, Coverage, Hooks, InstrumentError, MAX_BLOCK_ID, Outcome, StubStyle,
    instrument,
};

/// Every PHP file the repository's tests use, plus Debian's libraries when
/// they are installed.
fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![
        common::repo_root().join("fixtures"),
        PathBuf::from("/usr/share/php"),
    ];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "php") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn one_allocator_gives_every_file_its_own_contiguous_range_in_source_order() {
    let files = corpus();
    assert!(
        files.len() >= 30,
        "expected the fixtures at least, found {} files",
        files.len()
    );
    let mut ids = BlockIdAllocator::new();
    let mut ranges: Vec<(u32, u32, PathBuf)> = Vec::new();
    let mut total = 0u32;
    for (i, file) in files.iter().enumerate() {
        let source = std::fs::read(file).expect("read");
        let style = if i % 2 == 0 {
            StubStyle::Trace
        } else {
            StubStyle::EdgeMap
        };
        let before = ids.allocated();
        let Outcome::Instrumented(result) =
            instrument(&source, &mut ids, style, Coverage::Full, Hooks::Rewrite)
                .expect("ids suffice")
        else {
            assert_eq!(
                ids.allocated(),
                before,
                "{}: a skipped file took ids",
                file.display()
            );
            continue;
        };
        let blocks = &result.blocks;
        assert_eq!(
            ids.allocated() - before,
            blocks.len() as u32,
            "{}: took ids it does not use",
            file.display()
        );
        total += blocks.len() as u32;
        let Some(first) = blocks.first() else {
            continue;
        };
        assert_eq!(
            first.id,
            BlockId(before + 1),
            "{}: range does not start at the next free id",
            file.display()
        );
        for (offset, block) in blocks.iter().enumerate() {
            assert_eq!(
                block.id,
                BlockId(first.id.0 + offset as u32),
                "{}: ids not contiguous",
                file.display()
            );
            assert!(block.id.0 >= 1 && block.id.0 <= MAX_BLOCK_ID);
        }
        for pair in blocks.windows(2) {
            assert!(
                pair[0].byte_offset < pair[1].byte_offset,
                "{}: blocks {:?} and {:?} share or disorder a position",
                file.display(),
                pair[0],
                pair[1]
            );
        }
        ranges.push((first.id.0, first.id.0 + blocks.len() as u32, file.clone()));
    }
    ranges.sort();
    for pair in ranges.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "{} and {} share ids",
            pair[0].2.display(),
            pair[1].2.display()
        );
    }
    assert_eq!(ids.allocated(), total);
    assert!(
        total > 500,
        "too few blocks ({total}) for this test to mean much"
    );
}

#[test]
fn running_out_of_ids_is_an_error_and_takes_nothing() {
    let source = b"<?php\nif ($a) { b(); }\n";
    let mut ids = BlockIdAllocator::starting_at(MAX_BLOCK_ID - 1);
    let err = instrument(
        source,
        &mut ids,
        StubStyle::Trace,
        Coverage::Full,
        Hooks::Rewrite,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            InstrumentError::OutOfBlockIds {
                requested: 3,
                available: 2
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        ids.allocated(),
        MAX_BLOCK_ID - 2,
        "a failed allocation took ids"
    );
    // A file that fits still gets the last ids.
    let Outcome::Instrumented(result) = instrument(
        b"<?php\n$a ?? $b;\n",
        &mut ids,
        StubStyle::Trace,
        Coverage::Full,
        Hooks::Rewrite,
    )
    .unwrap() else {
        panic!("skipped");
    };
    let last: Vec<u32> = result.blocks.iter().map(|b| b.id.0).collect();
    assert_eq!(last, vec![MAX_BLOCK_ID - 1, MAX_BLOCK_ID]);
}

#[test]
fn the_same_source_gets_the_same_blocks_in_both_styles_and_every_run() {
    let source =
        std::fs::read(common::repo_root().join("fixtures/instrument/behaviour/generators.php"))
            .unwrap();
    let a = common::expect_instrumented(&source, StubStyle::Trace);
    let b = common::expect_instrumented(&source, StubStyle::EdgeMap);
    let c = common::expect_instrumented(&source, StubStyle::Trace);
    assert_eq!(a.blocks, b.blocks);
    assert_eq!(a, c, "instrumenting is not deterministic");
}
