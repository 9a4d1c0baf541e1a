//! `run-single --junit FILE`: one JUnit test case per input, so CI systems
//! show fuzz regressions next to the unit tests.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use php_fuzz_harness::Crash;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

/// The test cases of one `run-single`.
pub struct JunitReport {
    suite: TestSuite,
}

impl JunitReport {
    /// A suite named after the target.
    pub fn new(target: &Path) -> JunitReport {
        JunitReport {
            suite: TestSuite::new(format!("php-fuzz {}", target.display())),
        }
    }

    /// One input's result; `report` is the crash report run-single printed.
    pub fn add(&mut self, input: &Path, crash: Option<&Crash>, report: &str, time: Duration) {
        let status = match crash {
            None => TestCaseStatus::success(),
            Some(crash) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status
                    .set_message(crash.headline())
                    .set_type(crash.kind.name())
                    .set_description(report);
                status
            }
        };
        let mut case = TestCase::new(input.display().to_string(), status);
        case.set_classname("php-fuzz.regression").set_time(time);
        self.suite.add_test_case(case);
    }

    /// Writes the report to `path`.
    pub fn write(self, path: &Path) -> anyhow::Result<()> {
        let mut report = Report::new("php-fuzz run-single");
        report.add_test_suite(self.suite);
        let file = std::fs::File::create(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        report
            .serialize(std::io::BufWriter::new(file))
            .with_context(|| format!("cannot write {}", path.display()))
    }
}
