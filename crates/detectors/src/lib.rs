//! The bug detectors: which exist, what each watches and how it steers.
//!
//! A detector reports a security bug that makes no noise in PHP: an
//! injection, a traversal, a parser that loads an external entity, a
//! connection to a host the input chose, a regular expression that gives
//! up. Each one owns a *canary*, a short plain token that no sane input or
//! library produces by itself: it reports only when the canary reaches its
//! sink in a dangerous position, so safe code raises no alarm. The PHP half
//! (`php-runtime/internal/Detectors/`) does the checking; this crate is
//! what the rest of php-fuzz knows about them: the names used on the
//! command line, in reports and docs, the sinks `php-fuzz detectors`
//! lists, and the words the instrumenter puts into the dictionary when it
//! sees a sink (docs/detectors.md).

mod rules;
mod set;

pub use rules::Rule;
pub use set::{DetectorSet, UnknownDetector};

/// One bug detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Detector {
    CommandInjection,
    CodeInjection,
    ObjectInjection,
    ClassInjection,
    PathTraversal,
    Xxe,
    Ssrf,
    RegexDos,
}

impl Detector {
    /// Every detector, in the order `php-fuzz detectors` lists them.
    pub const ALL: [Detector; 8] = [
        Detector::CommandInjection,
        Detector::CodeInjection,
        Detector::ObjectInjection,
        Detector::ClassInjection,
        Detector::PathTraversal,
        Detector::Xxe,
        Detector::Ssrf,
        Detector::RegexDos,
    ];

    /// The kebab-case name used everywhere: flags, config, reports, docs.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Everything `php-fuzz detectors` says about it.
    pub fn info(self) -> &'static DetectorInfo {
        &INFO[self as usize]
    }

    /// Its bit in a [`DetectorSet`].
    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl std::fmt::Display for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Detector {
    type Err = UnknownDetector;

    fn from_str(name: &str) -> Result<Detector, UnknownDetector> {
        Detector::ALL
            .into_iter()
            .find(|detector| detector.name() == name)
            .ok_or_else(|| UnknownDetector(name.to_string()))
    }
}

/// What a detector watches, how it decides, and how it steers.
#[derive(Debug)]
pub struct DetectorInfo {
    pub name: &'static str,
    /// The sinks it hooks, as `php-fuzz detectors` lists them.
    pub sinks: &'static str,
    /// When it reports, in one line.
    pub reports: &'static str,
    /// The token the input must bring to the sink (empty: none).
    pub canary: &'static str,
    /// Every rule it applies, each with a safe pattern.
    pub rules: &'static [Rule],
    /// Dictionary words, added when the instrumenter sees one of its sinks.
    pub words: &'static [&'static [u8]],
}

/// The canaries. `php-runtime/internal/Detectors.php` holds the same
/// strings (a test checks that they agree).
pub mod canary {
    pub const COMMAND: &str = "php-fuzz-cmd";
    pub const CODE: &str = "php_fuzz_code";
    pub const OBJECT: &str = "PhpFuzzObject";
    pub const CLASS: &str = "PhpFuzzClass";
    pub const PATH: &str = "php-fuzz-traversal";
    pub const XXE: &str = "php-fuzz-xxe";
    pub const HOST: &str = "php-fuzz.example";
}

const INFO: [DetectorInfo; 8] = [
    DetectorInfo {
        name: "command-injection",
        sinks: "exec, system, passthru, shell_exec, backticks, popen, proc_open, pcntl_exec, mail (5th argument)",
        reports: "a word of the input's choosing stands as a command of the shell (or as an extra option of mail()'s sendmail)",
        canary: canary::COMMAND,
        rules: rules::COMMAND_INJECTION,
        words: &[
            b"php-fuzz-cmd",
            b";php-fuzz-cmd;",
            b"|php-fuzz-cmd",
            b"&&php-fuzz-cmd",
            b"$(php-fuzz-cmd)",
            b"`php-fuzz-cmd`",
            b"\nphp-fuzz-cmd\n",
            b"';php-fuzz-cmd;'",
            b"\";php-fuzz-cmd;\"",
            b" -php-fuzz-cmd ",
        ],
    },
    DetectorInfo {
        name: "code-injection",
        sinks: "eval, include/require of data: and php:// paths (assert with a string, create_function and preg_replace /e are gone since PHP 8.0)",
        reports: "text compiled as PHP code calls a function the input named",
        canary: canary::CODE,
        rules: rules::CODE_INJECTION,
        words: &[
            b"php_fuzz_code()",
            b"php_fuzz_code();",
            b");php_fuzz_code();//",
            b"'.php_fuzz_code().'",
            b"\".php_fuzz_code().\"",
            b"data:,<?php php_fuzz_code();",
        ],
    },
    DetectorInfo {
        name: "object-injection",
        sinks: "unserialize (unless allowed_classes is false or leaves the class out)",
        reports: "the data would create an object of a class the input named",
        canary: canary::OBJECT,
        rules: rules::OBJECT_INJECTION,
        words: &[
            b"PhpFuzzObject",
            b"O:13:\"PhpFuzzObject\":0:{}",
            b"a:1:{i:0;O:13:\"PhpFuzzObject\":0:{}}",
        ],
    },
    DetectorInfo {
        name: "class-injection",
        sinks: "new $x, $x::m(), $x(...), call_user_func(_array), ReflectionClass::newInstance*, php-fuzz's autoloader",
        reports: "a class or function named by the input is used: instantiated or called (a lookup such as class_exists() is not a use)",
        canary: canary::CLASS,
        rules: rules::CLASS_INJECTION,
        words: &[b"PhpFuzzClass", b"PhpFuzzClass::create"],
    },
    DetectorInfo {
        name: "path-traversal",
        sinks: "every file:// operation (fopen, file_get_contents, file_put_contents, is_file, unlink, rename, copy, mkdir, scandir, readfile, include, require, ...)",
        reports: "a path climbs out of the folder it was built under (.. after normalization), or an absolute path stands in its place",
        canary: canary::PATH,
        rules: rules::PATH_TRAVERSAL,
        words: &[
            b"php-fuzz-traversal",
            b"../php-fuzz-traversal",
            b"../../../../../../php-fuzz-traversal",
            b"....//php-fuzz-traversal",
            b"..%2Fphp-fuzz-traversal",
            b"%2E%2E/php-fuzz-traversal",
            b"/php-fuzz-traversal",
        ],
    },
    DetectorInfo {
        name: "xxe",
        sinks: "libxml's external entity loader (simplexml_load_*, DOMDocument::load*, XMLReader, xml_parse)",
        reports: "the XML parser tries to load an external entity or DTD the input named",
        canary: canary::XXE,
        rules: rules::XXE,
        words: &[
            b"<!DOCTYPE r [<!ENTITY x SYSTEM \"php-fuzz-xxe\">]>",
            b"&x;",
            b"<!DOCTYPE r SYSTEM \"php-fuzz-xxe\">",
            b"<!DOCTYPE r [<!ENTITY % p SYSTEM \"php-fuzz-xxe\">%p;]>",
        ],
    },
    DetectorInfo {
        name: "ssrf",
        sinks: "http, https, ftp and ftps streams (file_get_contents, fopen, ...), fsockopen, pfsockopen, stream_socket_client, socket_connect, curl_exec, new SoapClient",
        reports: "the input chooses the host a connection goes to",
        canary: canary::HOST,
        rules: rules::SSRF,
        words: &[
            b"php-fuzz.example",
            b"http://php-fuzz.example/",
            b"//php-fuzz.example",
            b"@php-fuzz.example",
        ],
    },
    DetectorInfo {
        name: "regex-dos",
        sinks: "preg_match, preg_match_all, preg_replace, preg_replace_callback, preg_replace_callback_array, preg_split, preg_grep, preg_filter",
        reports: "a preg_* call fails with the backtrack, recursion or JIT stack limit, or runs past the timeout on one input",
        canary: "",
        rules: rules::REGEX_DOS,
        words: &[
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
            b"                                                !",
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_detector_is_found_by_its_name_and_its_info_is_its_own() {
        for (index, detector) in Detector::ALL.into_iter().enumerate() {
            assert_eq!(detector as usize, index);
            assert_eq!(detector.name().parse(), Ok(detector));
            assert_eq!(INFO[index].name, detector.name());
        }
        assert!("Xxe".parse::<Detector>().is_err());
    }

    #[test]
    fn every_detector_lists_its_rules_each_with_a_safe_pattern() {
        for detector in Detector::ALL {
            let rules = detector.info().rules;
            assert!(!rules.is_empty(), "{detector}");
            for rule in rules {
                assert!(
                    !rule.reports.is_empty() && !rule.safe.is_empty(),
                    "{detector}"
                );
            }
        }
        let class = Detector::ClassInjection.info().rules;
        assert!(class.iter().any(|r| r.reports.starts_with("autoload")));
    }

    #[test]
    fn every_canary_is_a_plain_token_that_survives_common_filters() {
        for detector in Detector::ALL {
            let canary = detector.info().canary;
            assert!(
                canary
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.'),
                "{detector}: {canary}"
            );
            if !canary.is_empty() {
                let words = detector.info().words;
                assert!(
                    words
                        .iter()
                        .any(|w| w.windows(canary.len()).any(|x| x == canary.as_bytes())),
                    "{detector}: no dictionary word carries the canary"
                );
            }
        }
    }
}
