//! `php-fuzz detectors`: each bug detector, its sinks, its canary and
//! its rules, each with a safe pattern.
//! See docs/detectors.md.

use std::process::ExitCode;

use php_fuzz_harness::Detector;

use crate::stdout::Stdout;

/// Arguments of `php-fuzz detectors`.
#[derive(clap::Args, Debug)]
pub struct DetectorsArgs {}

pub fn run(_args: &DetectorsArgs) -> anyhow::Result<ExitCode> {
    let mut out = Stdout::lock();
    for (n, detector) in Detector::ALL.into_iter().enumerate() {
        let info = detector.info();
        if n > 0 {
            out.line(String::new())?;
        }
        let canary = if info.canary.is_empty() {
            "none (the regex engine's own limits)".to_string()
        } else {
            info.canary.to_string()
        };
        out.line(info.name.to_string())?;
        out.line(format!("  sinks:   {}", info.sinks))?;
        out.line(format!("  reports: {}", info.reports))?;
        out.line(format!("  canary:  {canary}"))?;
        out.line("  rules:".to_string())?;
        for rule in info.rules {
            out.line(format!("  - {}", rule.reports))?;
            out.line(format!("    safe: {}", rule.safe))?;
        }
    }
    out.line(String::new())?;
    out.line(
        "All are on by default; --detectors LIST (or $config->setDetectors([...])) chooses. \
         Side effects (processes, connections, writes outside the scratch folder) are refused \
         unless --allow-side-effects."
            .to_string(),
    )?;
    Ok(ExitCode::SUCCESS)
}
