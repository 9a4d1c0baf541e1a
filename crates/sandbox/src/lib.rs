//! The wall around the harness (docs/sandbox.md): what a fuzzed library
//! does stays inside its process tree. Three layers, each set up in the
//! forked child before `php` starts, each inherited by everything PHP forks:
//!
//! - **Landlock**: files are read anywhere but written, created, removed or
//!   renamed only in the allowed folders; only PHP may be executed; no TCP
//!   bind or connect (ABI 4); no abstract unix socket or signal outside the
//!   tree (ABI 6).
//! - **A network namespace**: only a loopback of its own, which is down.
//! - **seccomp**: no socket but IPv4/IPv6 in the namespace (none without
//!   it), no `execve` but the one that starts PHP, no io_uring, ptrace,
//!   mounts, namespaces, BPF or kernel modules.
//! - **Read-only mounts**: in a mount namespace of its own, every mount is
//!   read-only but the writable folders: no `chmod`, `chown`, times or
//!   extended attributes outside, which Landlock does not cover.
//!
//! Each layer the kernel refuses is left out in [`Mode::Auto`] and named in
//! [`Layers::describe`]; [`Mode::Strict`] refuses to start without all.
//!
//! Everything that allocates (the Landlock ruleset, the BPF program, the
//! C strings of `execve`) is made in the parent: after `fork` the child
//! makes system calls only.

// The child's side is `pre_exec` and `execve`: unsafe by nature. Each block
// says why it holds.
#![allow(unsafe_code)]

#[cfg(target_os = "linux")]
mod exec;
#[cfg(target_os = "linux")]
mod filesystem;
mod layers;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod network;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod wall;

pub use layers::{Layer, Layers, Mode, Refusal};
#[cfg(target_os = "linux")]
pub use wall::{Receipt, Wall, kernel_landlock_abi};

use std::path::PathBuf;

/// What the wall lets through.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Folders where runs may write, create, remove and rename.
    pub writable: Vec<PathBuf>,
    /// Files and folders opened for reading and writing but never created
    /// in: the fork server's named pipes, `/dev/null`.
    pub read_write: Vec<PathBuf>,
    /// The PHP binary: the one program the harness may execute.
    pub php: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot find the PHP binary {php} to wall it in: {source}")]
    PhpNotFound {
        php: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot prepare the Landlock rules for {path}: {reason}")]
    Landlock { path: PathBuf, reason: String },
    #[error("cannot prepare the seccomp filter: {0}")]
    Seccomp(String),
    #[error("cannot prepare the harness's command: {0}")]
    Command(String),
    #[error(
        "--sandbox strict: the full wall cannot be built here: {0} (run without --sandbox strict to fuzz with the layers this machine has; docs/sandbox.md)"
    )]
    Incomplete(String),
}
