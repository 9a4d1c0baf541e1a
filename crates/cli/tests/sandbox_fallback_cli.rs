//! Old kernels and locked-down containers (docs/sandbox.md): php-fuzz runs
//! under a seccomp filter of the test's that makes Landlock's system calls
//! fail with ENOSYS (as before Linux 5.13) and `unshare` with EPERM (as in
//! Docker's default profile), and, in one case, seccomp itself. php-fuzz
//! must say in one line which layers it lacks, fuzz with the rest, and
//! refuse to start under `--sandbox strict`.

// The filter is installed in the child before php-fuzz starts: `pre_exec`.
#![allow(unsafe_code)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use common::{Run, bin, fixture};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};

/// A filter that answers `errno` to each of `calls`.
#[allow(clippy::unnecessary_cast)] // c_long is i32 on 32-bit targets
fn hiding(calls: &[(libc::c_long, i32)]) -> Vec<BpfProgram> {
    calls
        .iter()
        .map(|&(call, errno)| {
            let rules = BTreeMap::from([(call as i64, Vec::new())]);
            let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
            SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(errno as u32),
                arch,
            )
            .unwrap()
            .try_into()
            .unwrap()
        })
        .collect()
}

const NO_LANDLOCK_NO_NAMESPACES: &[(libc::c_long, i32)] = &[
    (libc::SYS_landlock_create_ruleset, libc::ENOSYS),
    (libc::SYS_landlock_add_rule, libc::ENOSYS),
    (libc::SYS_landlock_restrict_self, libc::ENOSYS),
    (libc::SYS_unshare, libc::EPERM),
];

/// `php-fuzz fuzz noop.php` for 200 runs, under `filters`, with `extra` flags.
fn fuzz_under(filters: Vec<BpfProgram>, extra: &[&str], dir: &Path) -> Run {
    let mut command = Command::new(bin());
    command
        .args([
            "fuzz",
            fixture("targets/noop.php").to_str().unwrap(),
            "corpus",
        ])
        .args(["--max-runs", "200", "--seed", "1"])
        .args(extra)
        .current_dir(dir)
        .env_remove("CI");
    // SAFETY: applying prepared filters makes system calls only.
    unsafe {
        command.pre_exec(move || {
            for filter in &filters {
                seccompiler::apply_filter(filter).map_err(std::io::Error::other)?;
            }
            Ok(())
        });
    }
    Run {
        output: command.output().expect("running php-fuzz"),
    }
}

fn sandbox_lines(run: &Run) -> Vec<String> {
    run.stderr()
        .lines()
        .filter(|l| l.contains("sandbox:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn this_machine_holds_the_full_wall_and_strict_starts() {
    let dir = tempfile::tempdir().unwrap();
    let run = fuzz_under(Vec::new(), &["--sandbox", "strict"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let lines = sandbox_lines(&run);
    assert_eq!(lines.len(), 1, "{}", run.all());
    assert!(
        lines[0].starts_with("INFO: sandbox: Landlock ABI")
            && lines[0].contains("network namespace, seccomp, read-only mounts + hooks"),
        "{}",
        run.all()
    );
}

#[test]
fn without_landlock_and_namespaces_one_line_names_them_and_seccomp_still_holds() {
    let dir = tempfile::tempdir().unwrap();
    let run = fuzz_under(hiding(NO_LANDLOCK_NO_NAMESPACES), &[], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let lines = sandbox_lines(&run);
    assert_eq!(lines.len(), 1, "one line: {}", run.all());
    let line = &lines[0];
    assert!(
        line.starts_with("WARNING: sandbox: seccomp + hooks; missing: "),
        "{line}"
    );
    assert!(
        line.contains("Landlock is not available (Function not implemented"),
        "{line}"
    );
    assert!(
        line.contains("no network namespace could be made (Operation not permitted"),
        "{line}"
    );
    assert!(run.stderr().contains("==== Done"), "{}", run.all());
}

#[test]
fn without_any_layer_it_falls_back_to_the_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let mut hidden = NO_LANDLOCK_NO_NAMESPACES.to_vec();
    hidden.push((libc::SYS_seccomp, libc::EINVAL));
    let run = fuzz_under(hiding(&hidden), &[], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let lines = sandbox_lines(&run);
    assert_eq!(lines.len(), 1, "{}", run.all());
    assert!(
        lines[0].starts_with("WARNING: sandbox: hooks only; missing: "),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("no seccomp filter could be installed"),
        "{}",
        lines[0]
    );
}

#[test]
fn strict_refuses_to_start_without_the_full_wall() {
    let dir = tempfile::tempdir().unwrap();
    let run = fuzz_under(
        hiding(NO_LANDLOCK_NO_NAMESPACES),
        &["--sandbox", "strict"],
        dir.path(),
    );
    assert_ne!(run.code(), 0, "{}", run.all());
    let stderr = run.stderr();
    assert!(
        stderr.contains("--sandbox strict: the full wall cannot be built here"),
        "{stderr}"
    );
    assert!(stderr.contains("Landlock is not available"), "{stderr}");
    assert!(!stderr.contains("==== Done"), "it must not fuzz: {stderr}");
}
