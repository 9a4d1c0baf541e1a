//! The fork server from the command line (issue #26 §3): on a target that
//! exits on one input in sixteen, every harness is forked and the summary
//! says so; `--no-fork-server` starts `php` each time; no php process of
//! the campaign outlives php-fuzz either way.

mod common;

use std::fs;
use std::path::Path;

use common::{fixture, php_fuzz};

/// (harness starts, forked) from the summary line.
fn starts_and_forks(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("harness started"))
        .unwrap_or_else(|| panic!("no summary line:\n{stderr}"));
    let number_after = |label: &str| -> u64 {
        let rest = line.split(label).nth(1).unwrap();
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    (
        number_after("harness started "),
        number_after("restarts for memory growth, "),
    )
}

/// php processes (not zombies) whose working directory is `dir`: harnesses
/// run in the target's directory.
fn php_processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let path = entry.path();
        let comm = fs::read_to_string(path.join("comm")).unwrap_or_default();
        let stat = fs::read_to_string(path.join("stat")).unwrap_or_default();
        if comm.trim() == "php"
            && !stat.contains(") Z ")
            && fs::read_link(path.join("cwd")).is_ok_and(|cwd| cwd == dir)
        {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

/// (harness starts, forked, php-fuzz's stderr).
fn campaign(flags: &[&str]) -> (u64, u64, String) {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    fs::copy(fixture("hostile-bench/crashy.php"), dir.join("target.php")).unwrap();
    fs::create_dir(dir.join("corpus")).unwrap();
    for seed in fs::read_dir(fixture("hostile-bench/crashy-seeds")).unwrap() {
        let seed = seed.unwrap().path();
        fs::copy(&seed, dir.join("corpus").join(seed.file_name().unwrap())).unwrap();
    }
    let mut args = vec![
        "fuzz",
        "target.php",
        "corpus",
        "--max-runs",
        "20000",
        "--seed",
        "1",
        "--timeout",
        "2",
        "-q",
    ];
    args.extend_from_slice(flags);
    let run = php_fuzz(&args, &dir);
    assert!(
        run.stderr().contains("==== Done (reached --max-runs)"),
        "{}",
        run.all()
    );
    // Without the fork server, a spare harness still loading when php-fuzz
    // exits outlives it until its load ends (it then reads end of file).
    let mut left = php_processes_in(&dir);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = php_processes_in(&dir);
    }
    assert_eq!(left, Vec::<String>::new(), "orphans");
    let (starts, forks) = starts_and_forks(&run.stderr());
    (starts, forks, run.stderr())
}

#[test]
fn a_target_that_exits_is_fuzzed_on_forked_harnesses_and_leaves_no_process_behind() {
    let (starts, forks, stderr) = campaign(&[]);
    assert!(starts > 5, "the target exits often: {starts} starts");
    assert_eq!(forks, starts, "every harness was forked");
    assert!(!stderr.contains("INFO: the fork server"), "{stderr}");
}

#[test]
fn without_the_fork_server_every_harness_is_a_new_php() {
    let (starts, forks, stderr) = campaign(&["--no-fork-server"]);
    assert!(starts > 5, "the target exits often: {starts} starts");
    assert_eq!(forks, 0);
    assert!(!stderr.contains("INFO: the fork server"), "{stderr}");
}

#[test]
fn without_pcntl_fork_harnesses_start_plainly_and_it_says_so_once() {
    let (starts, forks, stderr) = campaign(&["--ini", "disable_functions=pcntl_fork"]);
    assert!(starts > 5, "the target exits often: {starts} starts");
    assert_eq!(forks, 0);
    let said = "INFO: the fork server is unavailable (pcntl_fork() is not available); each harness starts a new php process";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
}
