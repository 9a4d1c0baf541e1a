//! `\PhpFuzz\FuzzedDataProvider` against vectors derived by hand from LLVM's
//! FuzzedDataProvider.h rules, run by real `php`.

use std::path::Path;
use std::process::Command;

use php_fuzz_harness::Runtime;

#[test]
fn fuzzed_data_provider_follows_llvm_consumption_rules() {
    let runtime = Runtime::unpack().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/php/fuzzed_data_provider.php");
    let output = Command::new("php")
        .arg(&script)
        .arg(runtime.root().join("FuzzedDataProvider.php"))
        .output()
        .expect("php must be installed (scripts/setup)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.starts_with("ok "),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
