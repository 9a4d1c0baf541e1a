//! The engine's campaign messages in libFuzzer's words, and what the front
//! end needs to know afterwards: units added, the first crash.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use php_fuzz_engine::{CampaignVoice, Event, KnownCrash, Opening, Output, StatusLine};
use php_fuzz_harness::{Crash, CrashKind};

use super::report::{ReportContext, crash_report, status_line};

#[derive(Debug)]
pub struct LibFuzzerVoice {
    pub artifact_prefix: String,
    /// As reports say it; set again once an adaptive timeout is known.
    pub timeout_secs: AtomicU64,
    pub rss_limit_mb: u64,
    /// `-max_len` was given (else libFuzzer says what it picked).
    pub max_len_given: bool,
    /// `-verbosity=0`: no status lines.
    pub quiet: bool,
    heard: Arc<Mutex<Heard>>,
}

/// What the voice was told.
#[derive(Debug, Default, Clone)]
pub struct Heard {
    pub new_units: u64,
    /// The first crash: the only one reported, as libFuzzer stops there.
    pub first_crash: Option<CrashKind>,
}

impl LibFuzzerVoice {
    pub fn new(
        artifact_prefix: String,
        timeout_secs: u64,
        rss_limit_mb: u64,
        max_len_given: bool,
        quiet: bool,
    ) -> LibFuzzerVoice {
        LibFuzzerVoice {
            artifact_prefix,
            timeout_secs: AtomicU64::new(timeout_secs),
            rss_limit_mb,
            max_len_given,
            quiet,
            heard: Arc::new(Mutex::new(Heard::default())),
        }
    }

    /// What the voice hears, to read once the campaign is over.
    pub fn heard_handle(&self) -> Arc<Mutex<Heard>> {
        Arc::clone(&self.heard)
    }
}

impl CampaignVoice for LibFuzzerVoice {
    fn opening(&self, out: &Output, o: &Opening<'_>) {
        out.line(&format!("INFO: Seed: {}", o.seed));
        if !self.max_len_given {
            out.line(&format!(
                "INFO: -max_len is not provided; libFuzzer will not generate inputs larger than {} bytes",
                o.max_len
            ));
        }
        if o.seed_files == 0 {
            out.line("INFO: A corpus is not provided, starting from an empty corpus");
        } else {
            out.line(&format!(
                "INFO: seed corpus: files: {} min: {}b max: {}b total: {}b rss: {}Mb",
                o.seed_files,
                o.smallest_seed,
                o.largest_seed,
                o.seed_bytes,
                php_fuzz_harness::own_rss_mb()
            ));
        }
    }

    fn status(&self, out: &Output, status: &StatusLine<'_>) {
        if status.event == Event::New {
            self.heard
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .new_units += 1;
        }
        if !self.quiet {
            out.line(&status_line(status));
        }
    }

    fn new_crash(&self, out: &Output, crash: &Crash, _input: &[u8], saved: &KnownCrash) {
        {
            let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
            if heard.first_crash.is_some() {
                return;
            }
            heard.first_crash = Some(crash.kind);
        }
        let context = ReportContext {
            pid: std::process::id(),
            artifact: Some((&self.artifact_prefix, &saved.artifact)),
            timeout_secs: self.timeout_secs.load(Ordering::Relaxed),
            rss_limit_mb: self.rss_limit_mb,
        };
        out.line(&crash_report(crash, &context));
    }

    fn timeout_adapted(&self, out: &Output, line: &str, timeout_secs: f64) {
        self.timeout_secs
            .store(timeout_secs.ceil() as u64, Ordering::Relaxed);
        if !self.quiet {
            out.line(line);
        }
    }
}
