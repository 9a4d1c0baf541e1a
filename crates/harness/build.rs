//! Finds the PHP half of the harness for `include_str!`: `php-runtime/` beside
//! this manifest (a symlink in the repository, real files in a packaged crate),
//! else the repository's `php-runtime/` two levels up (the composer package,
//! whose archive keeps no symlinks).

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let candidates = [
        manifest.join("php-runtime"),
        manifest.join("../../php-runtime"),
    ];
    let Some(runtime) = candidates
        .iter()
        .find(|dir| dir.join("internal/main.php").is_file())
    else {
        panic!("php-fuzz-harness: no PHP runtime (internal/main.php) in {candidates:?}");
    };
    let runtime = runtime
        .canonicalize()
        .expect("the PHP runtime folder resolves");
    println!("cargo:rerun-if-changed={}", runtime.display());
    println!("cargo:rustc-env=PHP_FUZZ_RUNTIME_DIR={}", runtime.display());
}
