//! The detectors' rules case by case (tests/php/detector_rules.php): what
//! each reports, and the safe forms it must not report.

use std::path::Path;
use std::process::Command;

#[test]
fn each_detector_reports_its_bug_and_not_the_safe_forms() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runtime = manifest.join("php-runtime/internal");
    let out = Command::new("php")
        .args(["-d", "error_reporting=-1", "-d", "display_errors=stderr"])
        .arg(manifest.join("tests/php/detector_rules.php"))
        .arg(&runtime)
        .output()
        .expect("running php");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.is_empty(), "{text}");
}
