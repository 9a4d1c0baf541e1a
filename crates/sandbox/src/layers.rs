//! Which layers of the wall a harness got, and how that is said.

use std::fmt;

/// How much wall to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every layer the kernel allows; a missing one is named in one line.
    #[default]
    Auto,
    /// All layers or no start.
    Strict,
    /// No wall (`--allow-side-effects`, or `PHP_FUZZ_NO_WALL=1` in tests).
    Off,
}

/// One layer of the wall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Landlock,
    NetworkNamespace,
    Seccomp,
    ReadOnlyMounts,
}

impl Layer {
    pub const ALL: [Layer; 4] = [
        Layer::Landlock,
        Layer::NetworkNamespace,
        Layer::Seccomp,
        Layer::ReadOnlyMounts,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Layer::Landlock => "Landlock",
            Layer::NetworkNamespace => "network namespace",
            Layer::Seccomp => "seccomp",
            Layer::ReadOnlyMounts => "read-only mounts",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Why the kernel refused a layer: the error number of the call that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub layer: Layer,
    pub errno: i32,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let error = std::io::Error::from_raw_os_error(self.errno);
        let what = match self.layer {
            Layer::Landlock => "Landlock is not available",
            Layer::NetworkNamespace => "no network namespace could be made",
            Layer::Seccomp => "no seccomp filter could be installed",
            Layer::ReadOnlyMounts => "no read-only mount namespace could be made",
        };
        write!(f, "{what} ({error})")
    }
}

/// The layers a harness got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layers {
    pub mode: Mode,
    /// The Landlock ABI enforced, or `None`.
    pub landlock_abi: Option<u8>,
    pub network_namespace: bool,
    pub seccomp: bool,
    pub read_only_mounts: bool,
    /// The layers refused, and why.
    pub refusals: Vec<Refusal>,
}

impl Layers {
    pub fn off() -> Layers {
        Layers {
            mode: Mode::Off,
            landlock_abi: None,
            network_namespace: false,
            seccomp: false,
            read_only_mounts: false,
            refusals: Vec::new(),
        }
    }

    /// All four layers hold, with Landlock's signal and socket scopes (ABI 6).
    pub fn full(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= 6)
            && self.network_namespace
            && self.seccomp
            && self.read_only_mounts
    }

    /// `Landlock ABI 7 (files, TCP, signals), network namespace, seccomp`,
    /// or `hooks only (…)`: the start banner's words.
    pub fn describe(&self) -> String {
        if self.mode == Mode::Off {
            return "off".into();
        }
        let mut held = Vec::new();
        if let Some(abi) = self.landlock_abi {
            held.push(format!("Landlock ABI {abi} ({})", landlock_covers(abi)));
        }
        if self.network_namespace {
            held.push("network namespace".into());
        }
        if self.seccomp {
            held.push("seccomp".into());
        }
        if self.read_only_mounts {
            held.push("read-only mounts".into());
        }
        let mut line = if held.is_empty() {
            "hooks only".to_string()
        } else {
            format!("{} + hooks", held.join(", "))
        };
        let missing = self.missing();
        if !missing.is_empty() {
            line.push_str(&format!("; missing: {}", missing.join("; ")));
        }
        line
    }

    /// What is not enforced, in words, for the one-line warning.
    pub fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for layer in Layer::ALL {
            let held = match layer {
                Layer::Landlock => self.landlock_abi.is_some(),
                Layer::NetworkNamespace => self.network_namespace,
                Layer::Seccomp => self.seccomp,
                Layer::ReadOnlyMounts => self.read_only_mounts,
            };
            if held {
                continue;
            }
            match self.refusals.iter().find(|r| r.layer == layer) {
                Some(refusal) => missing.push(refusal.to_string()),
                None => missing.push(format!("{} not set up", layer.name())),
            }
        }
        if let Some(abi) = self.landlock_abi.filter(|abi| *abi < 6) {
            missing.push(format!(
                "Landlock ABI {abi} has no signal scope (ABI 6, Linux 6.12)"
            ));
        }
        missing
    }
}

/// What Landlock enforces at `abi`.
fn landlock_covers(abi: u8) -> &'static str {
    match abi {
        0 => "",
        1..=3 => "files",
        4 | 5 => "files, TCP",
        _ => "files, TCP, signals",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers(abi: Option<u8>, netns: bool, seccomp: bool) -> Layers {
        Layers {
            mode: Mode::Auto,
            landlock_abi: abi,
            network_namespace: netns,
            seccomp,
            read_only_mounts: netns,
            refusals: Vec::new(),
        }
    }

    #[test]
    fn a_full_wall_names_its_three_layers_and_misses_nothing() {
        let full = layers(Some(7), true, true);
        assert!(full.full());
        assert_eq!(
            full.describe(),
            "Landlock ABI 7 (files, TCP, signals), network namespace, seccomp, read-only mounts + hooks"
        );
    }

    #[test]
    fn a_refused_layer_is_named_with_its_error() {
        let mut partial = layers(None, true, true);
        partial.refusals.push(Refusal {
            layer: Layer::Landlock,
            errno: libc_enosys(),
        });
        assert!(!partial.full());
        let line = partial.describe();
        assert!(
            line.starts_with(
                "network namespace, seccomp, read-only mounts + hooks; missing: Landlock is not available"
            ),
            "{line}"
        );
        assert!(line.contains("Function not implemented"), "{line}");
    }

    #[test]
    fn an_old_landlock_is_not_full() {
        let old = layers(Some(3), true, true);
        assert!(!old.full());
        assert!(old.describe().contains("no signal scope"));
        assert_eq!(
            layers(None, false, false).describe().split(';').next(),
            Some("hooks only")
        );
    }

    fn libc_enosys() -> i32 {
        38
    }
}
