//! The Landlock layer: made in the parent, enforced by the child.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};

use crate::{Policy, SandboxError};

/// The newest ABI this crate knows, down to the first: the kernel's is the
/// first a ruleset can be made with as a hard requirement.
const ABIS: [(ABI, u8); 7] = [
    (ABI::V7, 7),
    (ABI::V6, 6),
    (ABI::V5, 5),
    (ABI::V4, 4),
    (ABI::V3, 3),
    (ABI::V2, 2),
    (ABI::V1, 1),
];

/// The Landlock ABI of the running kernel (capped at 7, all php-fuzz uses),
/// or `None` where Landlock is missing or off. Asked once.
pub fn kernel_abi() -> Option<u8> {
    static ABI_FOUND: OnceLock<Option<u8>> = OnceLock::new();
    *ABI_FOUND.get_or_init(|| {
        ABIS.iter().find_map(|&(abi, number)| {
            Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_all(abi))
                .ok()?
                .create()
                .ok()
                .map(|_| number)
        })
    })
}

/// The ruleset for `policy` at the kernel's ABI, with its rules added; the
/// child only has to call `restrict_self`. `None` without Landlock. With
/// no `executables` (PHP is a script), execution is not restricted.
pub fn ruleset(
    policy: &Policy,
    executables: Option<&[PathBuf]>,
) -> Result<Option<RulesetCreated>, SandboxError> {
    let Some(number) = kernel_abi() else {
        return Ok(None);
    };
    let abi = ABIS
        .iter()
        .find(|(_, n)| *n == number)
        .map(|(a, _)| *a)
        .unwrap_or(ABI::V1);
    let error = |path: &Path, reason: String| SandboxError::Landlock {
        path: path.to_path_buf(),
        reason,
    };
    let mut all = AccessFs::from_all(abi);
    if executables.is_none() {
        all &= !AccessFs::Execute;
    }
    let read: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::ReadDir;
    let mut created = Ruleset::default()
        .handle_access(all)
        .and_then(|r| r.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
        .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
        .and_then(|r| r.create())
        .map_err(|err| error(Path::new("/"), err.to_string()))?;
    let mut rules: Vec<(&Path, BitFlags<AccessFs>)> = vec![(Path::new("/"), read)];
    rules.extend(
        executables
            .unwrap_or_default()
            .iter()
            .map(|p| (p.as_path(), AccessFs::Execute | AccessFs::ReadFile)),
    );
    rules.extend(
        policy
            .writable
            .iter()
            .map(|p| (p.as_path(), all & !AccessFs::Execute)),
    );
    rules.extend(policy.read_write.iter().map(|p| {
        (
            p.as_path(),
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate,
        )
    }));
    for (path, access) in rules {
        let fd = PathFd::new(path).map_err(|err| error(path, err.to_string()))?;
        created = created
            .add_rule(PathBeneath::new(fd, access & all))
            .map_err(|err| error(path, err.to_string()))?;
    }
    Ok(Some(created))
}
