//! One large allocation: an out-of-memory that PHP reports as "Allowed
//! memory size of N bytes exhausted (tried to allocate M bytes)" where M
//! alone is a good part of the limit. It is not a memory growth and never a
//! runaway recursion (whose last request is a small one: a 256 KiB VM stack
//! page or a frame's locals); over the malloc limit, it is libFuzzer's
//! `malloc(M)` out-of-memory. docs/hardening.md, "One large allocation".

use crate::{Crash, CrashKind, HarnessConfig};

/// The problem class of one allocation larger than the malloc limit.
pub const MALLOC_LIMIT: &str = "MallocLimit";
/// The problem class of one allocation under the malloc limit but of a
/// 16th of PHP's memory limit or more.
pub const LARGE_ALLOCATION: &str = "LargeAllocation";

/// A single request for at least this share of PHP's memory limit is one
/// large allocation, not the last step of a growth or of a recursion.
const LARGE_SHARE: u64 = 16;

/// The bytes an out-of-memory message says PHP tried to allocate.
pub fn requested_bytes(message: &str) -> Option<u64> {
    let rest = &message[message.find("(tried to allocate ")? + "(tried to allocate ".len()..];
    rest[..rest.find(" bytes)")?].parse().ok()
}

/// What a request for `bytes` is under `config`'s limits: the problem class
/// it gets, or `None` for a small one.
pub(crate) fn class_of(bytes: u64, config: &HarnessConfig) -> Option<&'static str> {
    if bytes > config.effective_malloc_limit_mb() << 20 {
        Some(MALLOC_LIMIT)
    } else if bytes >= (config.php_memory_limit_mb() << 20) / LARGE_SHARE {
        Some(LARGE_ALLOCATION)
    } else {
        None
    }
}

/// Names an out-of-memory that was one large allocation (its class), and
/// says whether it was. A large allocation is never a recursion.
pub(crate) fn name(crash: &mut Crash, config: &HarnessConfig) -> bool {
    if !matches!(
        crash.kind,
        CrashKind::OutOfMemory | CrashKind::StackOverflow
    ) {
        return false;
    }
    let Some(class) = requested_bytes(&crash.problem.message).and_then(|b| class_of(b, config))
    else {
        return false;
    };
    crash.kind = CrashKind::OutOfMemory;
    crash.problem.class = class.into();
    crash.note = None;
    true
}

/// Whether a crash is one large allocation whose report lacks its stack:
/// the input is then re-run alone on a harness that catches it.
pub(crate) fn wants_stack(crash: &Crash) -> bool {
    crash.kind == CrashKind::OutOfMemory
        && matches!(
            crash.problem.class.as_str(),
            MALLOC_LIMIT | LARGE_ALLOCATION
        )
        && crash.problem.frames.len() <= 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn config(rss: u64, malloc: u64) -> HarnessConfig {
        let php = crate::PhpBinary {
            path: PathBuf::from("php"),
            version: "8.2.0".into(),
            version_id: 80200,
            signals: true,
        };
        let runtime = Arc::new(crate::Runtime::unpack().unwrap());
        let mut config = HarnessConfig::new(php, runtime, PathBuf::from("/t.php"));
        config.rss_limit_mb = rss;
        config.malloc_limit_mb = malloc;
        config
    }

    #[test]
    fn the_request_is_read_from_phps_message() {
        let message = "Allowed memory size of 2147483648 bytes exhausted (tried to allocate 2900000768 bytes)";
        assert_eq!(requested_bytes(message), Some(2_900_000_768));
        assert_eq!(
            requested_bytes("Allowed memory size of 1 bytes exhausted"),
            None
        );
    }

    #[test]
    fn requests_are_classed_by_the_malloc_and_memory_limits() {
        let default = config(2048, 0);
        assert_eq!(class_of(2_900_000_768, &default), Some(MALLOC_LIMIT));
        assert_eq!(class_of(1 << 30, &default), Some(LARGE_ALLOCATION));
        assert_eq!(class_of(262_144, &default), None, "a VM stack page");
        let low = config(2048, 64);
        assert_eq!(low.php_memory_limit_mb(), 64);
        assert_eq!(class_of(65 << 20, &low), Some(MALLOC_LIMIT));
        assert_eq!(class_of(8 << 20, &low), Some(LARGE_ALLOCATION));
        assert_eq!(class_of(1 << 20, &low), None);
    }
}
