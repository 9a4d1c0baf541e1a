//! A harness process started ahead of need. Once a target has killed its
//! harness, it is likely to again (a crash-heavy or hang-heavy library), and
//! a restart then waits for PHP to start and compile the target and its
//! includes again: hundreds of milliseconds for a large library. The
//! executor starts the next harness on a thread of its own while the current
//! one runs, so a death is followed by a harness that is already loaded.

use std::sync::Arc;
use std::thread::JoinHandle;

use crate::process::HarnessProcess;
use crate::{HarnessConfig, HarnessError, SourceServer};

/// A harness loading on its own thread.
pub(crate) struct Spare {
    loading: Option<JoinHandle<Result<HarnessProcess, HarnessError>>>,
}

impl Spare {
    /// Starts a harness for `config` on a new thread. Its source requests
    /// are answered there, from the same `sources`.
    pub(crate) fn start(config: Arc<HarnessConfig>, sources: Arc<SourceServer>) -> Spare {
        let loading = std::thread::Builder::new()
            .name("php-fuzz-spare-harness".into())
            .spawn(move || HarnessProcess::spawn(&config, &sources))
            .ok();
        Spare { loading }
    }

    /// The harness, once loaded (waits for the load if need be); `None` if
    /// the thread could not start or panicked: start one the usual way.
    pub(crate) fn take(mut self) -> Option<Result<HarnessProcess, HarnessError>> {
        self.loading.take()?.join().ok()
    }
}

impl Drop for Spare {
    /// An unused spare is not waited for: its thread ends with the load,
    /// and dropping the process there kills it.
    fn drop(&mut self) {
        self.loading.take();
    }
}
