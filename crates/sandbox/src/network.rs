//! The network-namespace layer: the child leaves the machine's network for
//! a namespace of its own, whose only interface is a loopback that is down.
//! No packet of any kind, UDP and DNS included, leaves it.
//!
//! With `CAP_SYS_ADMIN` (root outside a container) the namespace is made
//! alone; without, inside a new user namespace that maps the child's own
//! user and group to themselves, so files it creates keep their owner.

use std::ffi::CString;

use rustix::fd::AsFd;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::thread::UnshareFlags;

/// What the child writes to its `/proc/self` files when it needs a user
/// namespace; made in the parent, as the child must not allocate.
pub struct UserMapping {
    uid_map: CString,
    gid_map: CString,
}

impl UserMapping {
    pub fn of_this_process() -> UserMapping {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        UserMapping {
            uid_map: CString::new(format!("{uid} {uid} 1")).expect("no NUL in digits"),
            gid_map: CString::new(format!("{gid} {gid} 1")).expect("no NUL in digits"),
        }
    }
}

/// In the child: enters a new network namespace. Makes no allocation.
pub fn enter_new_namespace(mapping: &UserMapping) -> Result<(), Errno> {
    // SAFETY: the child is single-threaded between fork and exec, and
    // NEWNET/NEWUSER do not touch the file descriptor table.
    let alone = unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNET) };
    match alone {
        Ok(()) => return Ok(()),
        Err(Errno::PERM) => {}
        Err(errno) => return Err(errno),
    }
    // SAFETY: as above.
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNET) }?;
    write_proc(c"/proc/self/setgroups", c"deny")?;
    write_proc(c"/proc/self/uid_map", &mapping.uid_map)?;
    write_proc(c"/proc/self/gid_map", &mapping.gid_map)
}

fn write_proc(path: &std::ffi::CStr, text: &std::ffi::CStr) -> Result<(), Errno> {
    let file = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(file.as_fd(), text.to_bytes())?;
    Ok(())
}
