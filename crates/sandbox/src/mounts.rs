//! The read-only layer: in a mount namespace of its own, the child sees
//! every mount read-only but the writable folders, which are bound onto
//! themselves first and stay writable. It covers what Landlock does not:
//! `chmod`, `chown`, file times and extended attributes (a read-only mount
//! refuses them all with `EROFS`). Named pipes and devices on a read-only
//! mount still open for writing, so the fork server's pipes and `/dev/null`
//! keep working.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::io::Errno;
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::UnshareFlags;

/// What the child does, made in the parent.
pub struct ReadOnlyView {
    /// Folders bound onto themselves, to stay writable.
    writable: Vec<CString>,
    /// Each mount point, with the flags it must keep (a user namespace
    /// cannot drop `nosuid`, `nodev`, `noexec` or the atime flags).
    mounts: Vec<(CString, MountFlags)>,
}

impl ReadOnlyView {
    /// The view that leaves `writable` writable; mount points from
    /// `/proc/self/mountinfo`.
    pub fn of(writable: &[PathBuf]) -> ReadOnlyView {
        let c = |path: &Path| CString::new(path.as_os_str().as_bytes()).ok();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap_or_default()
            .lines()
            .filter_map(mount_point)
            .filter_map(|point| Some((c(&point)?, kept_flags(&point)?)))
            .collect();
        ReadOnlyView {
            writable: writable.iter().filter_map(|p| c(p)).collect(),
            mounts,
        }
    }

    /// In the child: a new mount namespace, then the view. Makes no
    /// allocation. A mount that cannot be made read-only (one hidden under
    /// another) is left as it is: Landlock still guards its files.
    pub fn enter(&self) -> Result<(), Errno> {
        // SAFETY: the child is single-threaded between fork and exec, and
        // NEWNS does not touch the file descriptor table.
        unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNS) }?;
        // Nothing done here may reach the machine's own mounts.
        rustix::mount::mount_change(
            c"/",
            MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
        )?;
        for folder in &self.writable {
            rustix::mount::mount_bind(folder.as_c_str(), folder.as_c_str())?;
        }
        let mut any = false;
        for (point, flags) in &self.mounts {
            let flags = *flags | MountFlags::BIND | MountFlags::RDONLY;
            any |= rustix::mount::mount_remount(point.as_c_str(), flags, c"").is_ok();
        }
        if any { Ok(()) } else { Err(Errno::PERM) }
    }
}

/// The mount point of one line of `/proc/self/mountinfo` (its fifth field,
/// with `\\040`-style escapes undone).
fn mount_point(line: &str) -> Option<PathBuf> {
    let field = line.split(' ').nth(4)?;
    let mut bytes = Vec::with_capacity(field.len());
    let mut rest = field.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'\\' && tail.len() >= 3 {
            let octal = std::str::from_utf8(&tail[..3]).ok()?;
            bytes.push(u8::from_str_radix(octal, 8).ok()?);
            rest = &tail[3..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)))
}

/// The flags a remount of `point` must keep.
fn kept_flags(point: &Path) -> Option<MountFlags> {
    use rustix::fs::StatVfsMountFlags as St;
    let have = rustix::fs::statvfs(point).ok()?.f_flag;
    let pairs = [
        (St::NOSUID, MountFlags::NOSUID),
        (St::NODEV, MountFlags::NODEV),
        (St::NOEXEC, MountFlags::NOEXEC),
        (St::NOATIME, MountFlags::NOATIME),
        (St::NODIRATIME, MountFlags::NODIRATIME),
        (St::RELATIME, MountFlags::RELATIME),
    ];
    Some(
        pairs
            .into_iter()
            .filter(|(st, _)| have.contains(*st))
            .fold(MountFlags::empty(), |all, (_, flag)| all | flag),
    )
}

#[cfg(test)]
mod tests {
    use super::mount_point;

    #[test]
    fn mount_points_are_read_with_their_escapes_undone() {
        let line = r"36 35 98:0 /mnt1 /mnt/my\040disk rw,noatime master:1 - ext3 /dev/root rw";
        assert_eq!(mount_point(line).unwrap().to_str(), Some("/mnt/my disk"));
        assert_eq!(mount_point("short line"), None);
    }
}
