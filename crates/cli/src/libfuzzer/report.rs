//! libFuzzer's words for what the front end says itself, after the engine
//! is done: the loaded modules and the final stats. Pure text: the callers
//! write it to stderr, like libFuzzer. (A campaign's own messages are worded
//! by the engine's libFuzzer voice.)

use php_fuzz_harness::SourceFile;

/// The numbers `-print_final_stats=1` prints.
#[derive(Debug, Clone, Copy, Default)]
pub struct FinalStats {
    pub runs: u64,
    pub exec_per_sec: u64,
    pub new_units: u64,
    pub slowest_unit_secs: u64,
    pub peak_rss_mb: u64,
}

/// libFuzzer's `INFO: Loaded N modules (M inline 8-bit counters): …`, from
/// which ClusterFuzz takes `edges_total`: here the instrumented blocks (the
/// unit of `-merge`'s "coverage edges") of the PHP files the target loaded
/// so far, each file a module. Blocks of code never loaded are not counted.
pub fn loaded_line(files: &[SourceFile]) -> String {
    let instrumented = files.iter().filter(|f| !f.blocks.is_empty());
    let blocks: usize = instrumented.clone().map(|f| f.blocks.len()).sum();
    format!(
        "INFO: Loaded {} modules   ({blocks} blocks): {blocks} instrumented blocks in the PHP files the target loaded",
        instrumented.count()
    )
}

/// The `stat::` lines, no newline at the end.
pub fn final_stats(s: &FinalStats) -> String {
    format!(
        "stat::number_of_executed_units: {}\n\
         stat::average_exec_per_sec:     {}\n\
         stat::new_units_added:          {}\n\
         stat::slowest_unit_time_sec:    {}\n\
         stat::peak_rss_mb:              {}",
        s.runs, s.exec_per_sec, s.new_units, s.slowest_unit_secs, s.peak_rss_mb
    )
}
