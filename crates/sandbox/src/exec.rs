//! The child's one `execve`, made by the wall itself: its arguments are
//! built in the parent, so their addresses are known to the seccomp filter,
//! which lets only this exec through.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::SandboxError;

/// `execve`'s three arguments, owned.
pub struct ExecImage {
    program: CString,
    _args: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    _env: Vec<CString>,
    envp: Vec<*const libc::c_char>,
}

// SAFETY: the pointers point into the CStrings the image owns, which never
// move (their heap buffers stay where they are when the image moves).
unsafe impl Send for ExecImage {}
// SAFETY: as above; nothing is mutated through the pointers.
unsafe impl Sync for ExecImage {}

impl ExecImage {
    /// What `command` would execute: the program at `program` (its path
    /// resolved), its arguments, and the environment with its changes.
    pub fn of(command: &Command, program: &Path) -> Result<ExecImage, SandboxError> {
        let c = |bytes: &[u8]| {
            CString::new(bytes)
                .map_err(|_| SandboxError::Command("a NUL byte in an argument".into()))
        };
        let program = c(program.as_os_str().as_bytes())?;
        let mut args = vec![c(command.get_program().as_bytes())?];
        for arg in command.get_args() {
            args.push(c(arg.as_bytes())?);
        }
        let mut env = Vec::new();
        for (key, value) in environment(command) {
            let mut pair = key.into_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            env.push(c(&pair)?);
        }
        let argv = null_terminated(&args);
        let envp = null_terminated(&env);
        Ok(ExecImage {
            program,
            _args: args,
            argv,
            _env: env,
            envp,
        })
    }

    /// The addresses the seccomp filter lets through.
    pub fn addresses(&self) -> [u64; 3] {
        [
            self.program.as_ptr() as u64,
            self.argv.as_ptr() as u64,
            self.envp.as_ptr() as u64,
        ]
    }

    /// In the child: replaces it with the program; returns only on failure.
    pub fn exec(&self) -> std::io::Error {
        // SAFETY: three NUL-terminated arrays of NUL-terminated strings, all
        // owned by `self`, which outlives the call.
        unsafe {
            libc::execve(
                self.program.as_ptr(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            )
        };
        std::io::Error::last_os_error()
    }
}

fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// The environment `command` gives its child: this process's, with the
/// command's changes (`env`, `env_remove`; `env_clear` is not used here).
fn environment(command: &Command) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for (key, value) in command.get_envs() {
        env.retain(|(k, _)| k.as_os_str() != key);
        if let Some(value) = value {
            env.push((key.to_os_string(), value.to_os_string()));
        }
    }
    env
}

/// `program` as `execvp` finds it: a path with a slash as it is, a bare
/// name on `PATH`; made absolute and canonical.
pub fn resolve(program: &OsStr) -> Result<PathBuf, SandboxError> {
    let found = which::which(program).map_err(|err| SandboxError::PhpNotFound {
        php: PathBuf::from(program),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, err.to_string()),
    })?;
    std::fs::canonicalize(&found).map_err(|source| SandboxError::PhpNotFound { php: found, source })
}

/// The programs the kernel opens to execute `binary`: itself and, for a
/// dynamic ELF file, its interpreter (`ld-linux…`). `None` for anything
/// else (a script: what it runs cannot be known here).
pub fn executables(binary: &Path) -> Option<Vec<PathBuf>> {
    use object::read::elf::{ElfFile64, ProgramHeader};
    let data = std::fs::read(binary).ok()?;
    let elf = ElfFile64::<object::Endianness>::parse(&*data).ok()?;
    let endian = elf.endian();
    let mut programs = vec![binary.to_path_buf()];
    for header in elf.elf_program_headers() {
        if let Ok(Some(interpreter)) = header.interpreter(endian, &*data) {
            let path = Path::new(OsStr::from_bytes(interpreter));
            programs.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
        }
    }
    Some(programs)
}
