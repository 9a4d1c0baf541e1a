//! The wall as a whole: prepared in the parent, raised in the child.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

use landlock::{RulesetCreated, RulesetStatus};
use rustix::io::Errno;
use rustix::pipe::PipeFlags;
use seccompiler::BpfProgram;

use crate::exec::{self, ExecImage};
use crate::layers::{Layer, Layers, Mode, Refusal};
use crate::mounts::ReadOnlyView;
use crate::network::{self, UserMapping};
use crate::{Policy, SandboxError, filesystem, seccomp};

pub use crate::filesystem::kernel_abi as kernel_landlock_abi;

/// A wall ready to be raised around one child.
pub struct Wall {
    mode: Mode,
    landlock: Option<RulesetCreated>,
    landlock_abi: Option<u8>,
    mapping: UserMapping,
    view: ReadOnlyView,
    /// The filter for a child in its own network namespace, and for one
    /// that could not make it.
    seccomp: [BpfProgram; 2],
    image: ExecImage,
}

/// The child's report of what it raised: read after the spawn.
pub struct Receipt {
    mode: Mode,
    landlock_abi: Option<u8>,
    status: OwnedFd,
}

/// The child's report: one byte of layers held, then an errno per layer.
const REPORT_BYTES: usize = 1 + 4 * Layer::ALL.len();

impl Wall {
    /// Prepares the wall for `command`, which is to run `policy.php`.
    pub fn prepare(policy: &Policy, mode: Mode, command: &Command) -> Result<Wall, SandboxError> {
        let php = exec::resolve(policy.php.as_os_str())?;
        let executables = exec::executables(&php);
        let landlock = filesystem::ruleset(policy, executables.as_deref())?;
        let image = ExecImage::of(command, &php)?;
        // A script as PHP execs its interpreter, and that PHP: the filter
        // cannot tell those execs from others, so it leaves execve alone.
        let exec_addresses = executables.as_ref().map(|_| image.addresses());
        let seccomp = [
            seccomp::filter(exec_addresses, true)?,
            seccomp::filter(exec_addresses, false)?,
        ];
        Ok(Wall {
            mode,
            landlock_abi: landlock.as_ref().and(filesystem::kernel_abi()),
            landlock,
            mapping: UserMapping::of_this_process(),
            view: ReadOnlyView::of(&policy.writable),
            seccomp,
            image,
        })
    }

    /// Raises the wall in `command`'s child, after its other `pre_exec`
    /// steps (descriptor mappings), and execs it there.
    pub fn install(self, command: &mut Command) -> Result<Receipt, SandboxError> {
        let (status, report) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)
            .map_err(|err| SandboxError::Command(format!("cannot make a pipe: {err}")))?;
        let receipt = Receipt {
            mode: self.mode,
            landlock_abi: self.landlock_abi,
            status,
        };
        let mut wall = Some(self);
        // SAFETY: the closure makes system calls only: it allocates nothing
        // (everything was made above) and takes no lock.
        unsafe {
            command.pre_exec(move || match wall.take() {
                Some(wall) => Err(wall.raise(&report)),
                None => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
            });
        }
        Ok(receipt)
    }

    /// In the child: each layer, the report, then the exec. Returns only
    /// on failure.
    fn raise(self, report: &OwnedFd) -> std::io::Error {
        let mut held = 0u8;
        let mut errnos = [0i32; Layer::ALL.len()];
        let namespace = network::enter_new_namespace(&self.mapping);
        let filter = &self.seccomp[usize::from(namespace.is_err())];
        let results = [
            (Layer::NetworkNamespace, namespace),
            (Layer::ReadOnlyMounts, self.view.enter()),
            (Layer::Landlock, restrict(self.landlock)),
            (Layer::Seccomp, install_filter(filter)),
        ];
        for (layer, result) in results {
            match result {
                Ok(()) => held |= 1 << layer.index(),
                Err(errno) => errnos[layer.index()] = errno.raw_os_error(),
            }
        }
        write_report(report, held, errnos);
        let refused = errnos.iter().find(|errno| **errno != 0);
        if let (Mode::Strict, Some(&errno)) = (self.mode, refused) {
            return std::io::Error::from_raw_os_error(errno);
        }
        self.image.exec()
    }
}

/// Landlock's `restrict_self`; `ENOSYS` where the kernel has none.
fn restrict(ruleset: Option<RulesetCreated>) -> Result<(), Errno> {
    let Some(ruleset) = ruleset else {
        return Err(Errno::NOSYS);
    };
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
        Ok(_) => Err(Errno::NOSYS),
        Err(landlock::RulesetError::RestrictSelf(
            landlock::RestrictSelfError::RestrictSelfCall { source, .. },
        )) => Err(Errno::from_io_error(&source).unwrap_or(Errno::PERM)),
        Err(_) => Err(Errno::PERM),
    }
}

fn install_filter(program: &BpfProgram) -> Result<(), Errno> {
    seccompiler::apply_filter(program).map_err(|err| match err {
        seccompiler::Error::Prctl(io) | seccompiler::Error::Seccomp(io) => {
            Errno::from_io_error(&io).unwrap_or(Errno::PERM)
        }
        _ => Errno::INVAL,
    })
}

fn write_report(report: &OwnedFd, held: u8, errnos: [i32; Layer::ALL.len()]) {
    let mut bytes = [0u8; REPORT_BYTES];
    bytes[0] = held;
    for (slot, errno) in bytes[1..].chunks_exact_mut(4).zip(errnos) {
        slot.copy_from_slice(&errno.to_le_bytes());
    }
    // Nothing to do if it fails: the parent then reads no layer as held.
    let _ = rustix::io::write(report, &bytes);
}

impl Receipt {
    /// The layers the child raised. Call after the spawn returned (the
    /// child wrote its report before its exec); `None` if it wrote none.
    pub fn layers(self) -> Option<Layers> {
        let mut bytes = [0u8; REPORT_BYTES];
        let mut file = std::fs::File::from(self.status);
        file.read_exact(&mut bytes).ok()?;
        let held = bytes[0];
        let errno = |layer: Layer| {
            let at = 1 + 4 * layer.index();
            i32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
        };
        let refusals = Layer::ALL
            .into_iter()
            .filter(|layer| held & (1 << layer.index()) == 0)
            .map(|layer| Refusal {
                layer,
                errno: errno(layer),
            })
            .collect();
        Some(Layers {
            mode: self.mode,
            landlock_abi: self
                .landlock_abi
                .filter(|_| held & 1 << Layer::Landlock.index() != 0),
            network_namespace: held & (1 << Layer::NetworkNamespace.index()) != 0,
            seccomp: held & (1 << Layer::Seccomp.index()) != 0,
            read_only_mounts: held & (1 << Layer::ReadOnlyMounts.index()) != 0,
            refusals,
        })
    }
}
