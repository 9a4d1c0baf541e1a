//! The seccomp layer: a deny list, made in the parent, installed by the
//! child just before its `execve`.
//!
//! It answers `EPERM` to:
//! - `socket` of any family, or, inside a network namespace, of any family
//!   but IPv4 and IPv6 (whose packets cannot leave the namespace): no unix,
//!   netlink, packet or vsock socket, and no network at all without the
//!   namespace (pipes, and `socketpair`, stay);
//! - `execve` with other arguments than the child's own, and `execveat`: the
//!   exec that starts PHP is the only one (its argument addresses are matched;
//!   PHP, a new program, cannot place its strings there);
//! - io_uring (its operations would skip this filter), `ptrace` and
//!   `process_vm_*`, mounts, namespaces, BPF, perf, kernel modules and
//!   keyrings, `kexec`, `reboot`, clock and host name changes, file handles.

// seccompiler numbers system calls as i64, libc as c_long (i32 on 32-bit
// targets): the casts are needed there.
#![allow(clippy::unnecessary_cast)]

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::SandboxError;

/// System calls denied whatever their arguments.
const DENIED: &[libc::c_long] = &[
    libc::SYS_execveat,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_fanotify_init,
    libc::SYS_acct,
    libc::SYS_quotactl,
];

/// The filter for a child whose one allowed `execve` passes these addresses
/// (program, argv, envp); with `None`, execve is left alone. `in_namespace`:
/// the child is in a network namespace of its own.
pub fn filter(
    exec_arguments: Option<[u64; 3]>,
    in_namespace: bool,
) -> Result<BpfProgram, SandboxError> {
    let error = |err: seccompiler::BackendError| SandboxError::Seccomp(err.to_string());
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED
        .iter()
        .map(|&call| (call as i64, Vec::new()))
        .collect();
    rules.insert(
        libc::SYS_socket as i64,
        socket_rules(in_namespace).map_err(error)?,
    );
    let Some(exec_arguments) = exec_arguments else {
        return compile(rules);
    };
    // execve is denied when any of its three arguments differs.
    let other_exec = (0..3u8)
        .map(|index| {
            let condition = SeccompCondition::new(
                index,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::Ne,
                exec_arguments[usize::from(index)],
            )?;
            SeccompRule::new(vec![condition])
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(error)?;
    rules.insert(libc::SYS_execve as i64, other_exec);
    compile(rules)
}

/// `socket` is denied for every family, or in a namespace of its own for
/// every family but IPv4 and IPv6.
fn socket_rules(in_namespace: bool) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    if !in_namespace {
        return Ok(Vec::new());
    }
    let other = |family: i32| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family as u64)
    };
    Ok(vec![SeccompRule::new(vec![
        other(libc::AF_INET)?,
        other(libc::AF_INET6)?,
    ])?])
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>) -> Result<BpfProgram, SandboxError> {
    let error = |err: seccompiler::BackendError| SandboxError::Seccomp(err.to_string());
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        target_arch()?,
    )
    .map_err(error)?;
    filter
        .try_into()
        .map_err(|err: seccompiler::BackendError| error(err))
}

fn target_arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        SandboxError::Seccomp(format!("no seccomp support for {}", std::env::consts::ARCH))
    })
}
