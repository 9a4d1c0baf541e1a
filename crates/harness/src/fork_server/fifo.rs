//! The named pipes of one forked harness. PHP cannot open a descriptor of
//! another process (it resolves `/proc/PID/fd/N` as a symlink to the name
//! `pipe:[inode]`), but it opens a FIFO by its path like any file.
//!
//! The engine opens both FIFOs read-write first, which never blocks and
//! keeps each one open at both ends while the child opens its own ends (so
//! neither side waits for the other, and the engine never sees an end of
//! file before the child is there). Once the child has said `Started`, the
//! engine reopens its ends one-way and drops the read-write ones: then the
//! child holds the only writer of the events and the only reader of the
//! requests, and its death is an end of file. The paths are removed when
//! the pair is dropped; open descriptors outlive them.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{Mode, OFlags};

/// Pipe capacity asked for, as for the pipes of a plain harness.
const PIPE_BYTES: usize = 1 << 20;

static NEXT: AtomicU64 = AtomicU64::new(0);

pub(crate) struct FifoPair {
    requests: PathBuf,
    events: PathBuf,
}

impl FifoPair {
    /// Makes two FIFOs in `dir` (the runtime's private directory).
    pub(crate) fn make(dir: &Path) -> io::Result<FifoPair> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let stem = format!("fork-{}-{n}", std::process::id());
        let pair = FifoPair {
            requests: dir.join(format!("{stem}.requests")),
            events: dir.join(format!("{stem}.events")),
        };
        for path in [&pair.requests, &pair.events] {
            rustix::fs::mkfifoat(rustix::fs::CWD, path, Mode::RUSR | Mode::WUSR)?;
        }
        Ok(pair)
    }

    pub(crate) fn requests_path(&self) -> &[u8] {
        self.requests.as_os_str().as_bytes()
    }

    pub(crate) fn events_path(&self) -> &[u8] {
        self.events.as_os_str().as_bytes()
    }

    /// The engine's ends while the child opens its own: read-write.
    pub(crate) fn open_before_child(&self) -> io::Result<(OwnedFd, OwnedFd)> {
        let requests = open(&self.requests, true, true)?;
        let events = open(&self.events, true, true)?;
        let _ = rustix::pipe::fcntl_setpipe_size(requests.as_fd(), PIPE_BYTES);
        let _ = rustix::pipe::fcntl_setpipe_size(events.as_fd(), PIPE_BYTES);
        set_nonblocking(&requests, true)?;
        set_nonblocking(&events, false)?;
        Ok((requests.into(), events.into()))
    }

    /// The engine's ends once the child has its own: requests write-only
    /// (non-blocking, as for a plain harness), events read-only.
    pub(crate) fn open_after_child(&self) -> io::Result<(OwnedFd, OwnedFd)> {
        let requests = open(&self.requests, false, true)?;
        let events = open(&self.events, true, false)?;
        set_nonblocking(&events, false)?;
        Ok((requests.into(), events.into()))
    }
}

impl Drop for FifoPair {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.requests);
        let _ = std::fs::remove_file(&self.events);
    }
}

/// Opens without blocking: a FIFO opened for one direction alone waits for
/// the other end, or fails (write-only) when it is not there.
fn open(path: &Path, read: bool, write: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(read)
        .write(write)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

fn set_nonblocking(file: &File, on: bool) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(file)?;
    let flags = match on {
        true => flags | OFlags::NONBLOCK,
        false => flags - OFlags::NONBLOCK,
    };
    rustix::fs::fcntl_setfl(file, flags)?;
    Ok(())
}
