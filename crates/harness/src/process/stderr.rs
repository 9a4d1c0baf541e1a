//! The tail of a harness's stderr, kept for crash reports. A forked harness
//! writes to its fork server's stderr: it shares the server's tail, which is
//! cleared when the child starts.

use std::collections::VecDeque;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::process::ChildStderr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of the harness's stderr is kept for crash reports.
const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// How long a dead harness's last words may take to be drained.
const LAST_WORDS: Duration = Duration::from_millis(500);

pub(crate) struct StderrTail {
    tail: Arc<Mutex<VecDeque<u8>>>,
    /// The drain thread of the process that owns the pipe.
    thread: Option<JoinHandle<()>>,
    /// A duplicate of the pipe's read end: whether bytes wait in it.
    pipe: Option<Arc<OwnedFd>>,
}

impl StderrTail {
    /// Drains `pipe` on a thread of its own.
    pub(crate) fn drain(pipe: Option<ChildStderr>) -> StderrTail {
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let dup = pipe
            .as_ref()
            .and_then(|p| p.as_fd().try_clone_to_owned().ok())
            .map(Arc::new);
        let thread = pipe.map(|pipe| {
            let tail = Arc::clone(&tail);
            std::thread::Builder::new()
                .name("php-fuzz-harness-stderr".into())
                .spawn(move || drain_stderr(pipe, &tail))
                .expect("spawning a thread")
        });
        StderrTail {
            tail,
            thread,
            pipe: dup,
        }
    }

    /// The same tail, for a harness the fork server forked; emptied now, so
    /// that a report shows this child's words, not an earlier one's.
    pub(crate) fn share_cleared(&self) -> StderrTail {
        self.lock().clear();
        StderrTail {
            tail: Arc::clone(&self.tail),
            thread: None,
            pipe: self.pipe.clone(),
        }
    }

    /// The last lines written. `dead`: the writer is gone, so wait briefly
    /// until its last words are drained.
    pub(crate) fn text(&mut self, dead: bool) -> String {
        if dead {
            self.wait_drained();
        }
        let tail = self.lock();
        let (a, b) = tail.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn wait_drained(&mut self) {
        let until = Instant::now() + LAST_WORDS;
        if let Some(thread) = self.thread.take() {
            while !thread.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
            return;
        }
        // A shared pipe never ends: wait until it is empty, and a moment for
        // the thread to file what it read.
        if let Some(pipe) = &self.pipe {
            while rustix::io::ioctl_fionread(pipe.as_fd()).is_ok_and(|n| n > 0)
                && Instant::now() < until
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<u8>> {
        self.tail.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn drain_stderr(mut pipe: impl Read, tail: &Mutex<VecDeque<u8>>) {
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                tail.extend(&chunk[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                tail.drain(..excess);
            }
        }
    }
}
