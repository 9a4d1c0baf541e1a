//! One SARIF rule per kind of finding: its id, level, texts and tags.
//!
//! - a security finding's rule is its detector (`command-injection`), tagged
//!   `security` with a CWE and GitHub's `security-severity`;
//! - a refused side effect's rule is `side-effect/<what>` (`process`,
//!   `network`, `file-write`), at level `note`;
//! - any other finding's rule is its kind (`exception`, `timeout`…).
//!
//! A kind, detector or side effect this table does not know still gets a
//! rule, with generic texts, so a newer php-fuzz's reports never go missing.

use serde_sarif::sarif::{
    MultiformatMessageString, PropertyBag, ReportingConfiguration, ReportingDescriptor, ResultLevel,
};

use php_fuzz_storage::CrashRecord;

/// Where every rule's help links to.
const HELP_URI: &str = "https://github.com/php-fuzz/php-fuzz/blob/main/docs/sarif.md";

/// The `security-severity` of a detector this table does not know (GitHub
/// reads 7.0–8.9 as "high").
const UNKNOWN_DETECTOR_SEVERITY: &str = "7.0";

/// A rule, as the log's `tool.driver.rules` lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    /// The result's `ruleId`.
    pub id: String,
    /// PascalCase, as SARIF's `name` (`CommandInjection`).
    pub name: String,
    pub level: ResultLevel,
    pub short: String,
    pub full: String,
    pub tags: Vec<String>,
    /// GitHub's `security-severity` (0.0–10.0), security rules only.
    pub security_severity: Option<&'static str>,
}

/// The rule `record` is a result of.
pub(crate) fn rule_of(record: &CrashRecord) -> Rule {
    match record.kind.as_str() {
        "security" => security_rule(&record.class),
        "side-effect" => side_effect_rule(&record.class),
        kind => crash_rule(kind),
    }
}

/// A security detector's rule: `(id, name, CWE, severity, short, full)`.
type Detector = (
    &'static str,
    &'static str,
    u32,
    &'static str,
    &'static str,
    &'static str,
);

const DETECTORS: &[Detector] = &[
    (
        "command-injection",
        "CommandInjection",
        78,
        "9.8",
        "The input chooses a command the target runs",
        "Bytes of the input reached a call that runs a command (such as exec(), \
         system(), shell_exec(), proc_open() or popen()) as a command of their \
         own: whoever controls the input runs programs on the host.",
    ),
    (
        "code-injection",
        "CodeInjection",
        94,
        "9.8",
        "The input becomes PHP code the target runs",
        "Bytes of the input reached a place where PHP compiles code (such as eval() \
         or an include of a path the input chose): whoever controls the input \
         runs PHP code in the target.",
    ),
    (
        "object-injection",
        "ObjectInjection",
        502,
        "8.8",
        "The input is unserialized into objects",
        "The input reached unserialize() with classes allowed: it can build objects \
         of any loaded class, whose __wakeup(), __destruct() and other magic methods \
         then run (PHP object injection, often a path to code execution).",
    ),
    (
        "class-injection",
        "ClassInjection",
        470,
        "8.1",
        "The input chooses which class the target instantiates or calls",
        "A class or callable name taken from the input decided what the target \
         instantiates or calls (such as `new $class`, a static call or \
         call_user_func()): the input picks code to run from every class the \
         autoloader can reach.",
    ),
    (
        "path-traversal",
        "PathTraversal",
        22,
        "8.1",
        "The input steers a file path outside its folder",
        "A path built from the input reached a file function and pointed outside \
         the folder the target meant (`../`, an absolute path, a stream wrapper): \
         the input reads or writes files it should not.",
    ),
    (
        "xxe",
        "XmlExternalEntity",
        611,
        "8.2",
        "An XML parser resolves external entities from the input",
        "XML from the input was parsed with external entities or DTD loading on: \
         the input can read local files or make the host fetch URLs (XXE).",
    ),
    (
        "ssrf",
        "ServerSideRequestForgery",
        918,
        "8.6",
        "The input chooses a host the target connects to",
        "A URL or host name taken from the input reached a network call (such as \
         file_get_contents() on a URL, curl or fsockopen()): the input makes the \
         host send requests where it chooses, internal services included (SSRF).",
    ),
    (
        "regex-dos",
        "RegexDenialOfService",
        1333,
        "7.5",
        "The input makes a regular expression backtrack catastrophically",
        "A regular expression, given this input (or built from it), backtracks \
         catastrophically: a small input costs the host time that grows \
         exponentially with its length (ReDoS).",
    ),
];

fn security_rule(detector: &str) -> Rule {
    let id = if detector.is_empty() {
        "security"
    } else {
        detector
    };
    let mut tags = vec!["security".to_string(), "fuzzing".to_string()];
    let known = DETECTORS.iter().find(|d| d.0 == id);
    let (name, severity, short, full) = match known {
        Some(&(_, name, cwe, severity, short, full)) => {
            tags.push(format!("external/cwe/cwe-{cwe}"));
            (
                name.to_string(),
                severity,
                short.to_string(),
                full.to_string(),
            )
        }
        None => (
            pascal_case(id),
            UNKNOWN_DETECTOR_SEVERITY,
            format!("Security finding: {id}"),
            format!(
                "php-fuzz's `{id}` detector saw input reach a dangerous sink. \
                 This php-fuzz knows no more about this detector than its name."
            ),
        ),
    };
    Rule {
        id: id.to_string(),
        name,
        level: ResultLevel::Error,
        short,
        full,
        tags,
        security_severity: Some(severity),
    }
}

fn side_effect_rule(what: &str) -> Rule {
    let what = if what.is_empty() { "unknown" } else { what };
    let (name, short, full) = match what {
        "process" => (
            "SideEffectProcess".to_string(),
            "The target tried to start a process".to_string(),
            "While fuzzing, the target tried to run a program (exec(), system(), \
             proc_open(), popen()…) and php-fuzz refused. A library that starts \
             processes on its input deserves a look even when the command is fixed."
                .to_string(),
        ),
        "network" => (
            "SideEffectNetwork".to_string(),
            "The target tried to open a network connection".to_string(),
            "While fuzzing, the target tried to connect to a host (sockets, HTTP \
             streams, curl…) and php-fuzz refused. Parsing input should not reach \
             the network."
                .to_string(),
        ),
        "file-write" => (
            "SideEffectFileWrite".to_string(),
            "The target tried to write a file outside the allowed folders".to_string(),
            "While fuzzing, the target tried to create, change or delete a file \
             outside the folders it may write to, and php-fuzz refused."
                .to_string(),
        ),
        other => (
            format!("SideEffect{}", pascal_case(other)),
            format!("The target tried a side effect php-fuzz refused: {other}"),
            format!(
                "While fuzzing, the target tried a side effect of the kind `{other}` \
                 and php-fuzz refused it."
            ),
        ),
    };
    Rule {
        id: format!("side-effect/{what}"),
        name,
        level: ResultLevel::Note,
        short,
        full,
        tags: vec!["side-effect".to_string(), "fuzzing".to_string()],
        security_severity: None,
    }
}

fn crash_rule(kind: &str) -> Rule {
    let kind = if kind.is_empty() { "finding" } else { kind };
    let (name, level, short, full) = match kind {
        "exception" => (
            "UncaughtException",
            ResultLevel::Error,
            "The target let an exception escape that it does not allow",
            "A Throwable escaped the target on this input and is not one of the \
             exceptions the target allows (setAllowedExceptions()): TypeError, \
             ValueError, DivisionByZeroError, an assertion or a library exception \
             its callers do not expect.",
        ),
        "warning" => (
            "PhpWarning",
            ResultLevel::Warning,
            "PHP raised a warning, notice or deprecation",
            "The target made PHP raise a warning, notice or deprecation on this input \
             (an undefined array key, a string offset out of range, a function given \
             the wrong kind of value). PHP goes on, usually with a wrong value.",
        ),
        "timeout" => (
            "Timeout",
            ResultLevel::Warning,
            "The target ran longer than the timeout",
            "On this input the target did not return within the timeout: an endless \
             loop, or work that grows too fast with the input (a denial of service).",
        ),
        "fatal-error" => (
            "FatalError",
            ResultLevel::Error,
            "PHP stopped the target with a fatal error",
            "PHP ended the target with a fatal error on this input (other than \
             running out of memory): nothing the caller can catch.",
        ),
        "stack-overflow" => (
            "StackOverflow",
            ResultLevel::Error,
            "The target recursed without bound",
            "On this input the target recursed until PHP ran out of memory or stack: \
             a recursion that nesting in the input controls.",
        ),
        "exit" => (
            "Exit",
            ResultLevel::Warning,
            "The target called exit() or die()",
            "The target ended the whole PHP process with exit() or die() on this \
             input, which no caller of a library expects.",
        ),
        "out-of-memory" => (
            "OutOfMemory",
            ResultLevel::Error,
            "The target ran out of memory",
            "On this input the target used more memory than the limit allows: a \
             large allocation sized by the input, or growth without bound.",
        ),
        "harness-died" => (
            "ProcessDied",
            ResultLevel::Error,
            "The PHP process died without a report",
            "The PHP process running the target died on this input without saying \
             why: a crash of PHP or of an extension (a segmentation fault), or a \
             kill from outside.",
        ),
        _ => {
            return Rule {
                id: kind.to_string(),
                name: pascal_case(kind),
                level: ResultLevel::Warning,
                short: format!("php-fuzz finding: {kind}"),
                full: format!(
                    "php-fuzz saved a finding of the kind `{kind}`, which this \
                     php-fuzz does not describe."
                ),
                tags: vec!["fuzzing".to_string()],
                security_severity: None,
            };
        }
    };
    Rule {
        id: kind.to_string(),
        name: name.to_string(),
        level,
        short: short.to_string(),
        full: full.to_string(),
        tags: vec!["reliability".to_string(), "fuzzing".to_string()],
        security_severity: None,
    }
}

impl Rule {
    /// The rule as SARIF's `reportingDescriptor`.
    pub fn descriptor(&self) -> ReportingDescriptor {
        let mut additional = std::collections::BTreeMap::new();
        if let Some(severity) = self.security_severity {
            additional.insert(
                "security-severity".to_string(),
                serde_json::Value::from(severity),
            );
        }
        ReportingDescriptor::builder()
            .id(self.id.clone())
            .name(self.name.clone())
            .short_description(text(&self.short))
            .full_description(text(&self.full))
            .help(
                MultiformatMessageString::builder()
                    .text(format!("{}\n\n{HELP_TEXT}", self.full))
                    .markdown(format!("{}\n\n{HELP_MARKDOWN}", self.full))
                    .build(),
            )
            .help_uri(format!("{HELP_URI}#rules"))
            .default_configuration(ReportingConfiguration {
                level: Some(serde_json::Value::from(self.level.to_string())),
                ..Default::default()
            })
            .properties(PropertyBag {
                tags: Some(self.tags.clone()),
                additional_properties: additional,
            })
            .build()
    }
}

const HELP_TEXT: &str = "Each result names the saved input that triggers it and the \
    command that reproduces it (its properties `input` and `reproduce`). Run that \
    command, fix the code at the result's location, and keep the input as a \
    regression test: php-fuzz run-single replays it.";

const HELP_MARKDOWN: &str = "Each result names the saved input that triggers it and the \
    command that reproduces it (its properties `input` and `reproduce`). Run that \
    command, fix the code at the result's location, and keep the input as a \
    regression test: `php-fuzz run-single` replays it.";

fn text(text: &str) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(text).build()
}

/// `side-effect` → `SideEffect`, `xxe` → `Xxe`.
fn pascal_case(id: &str) -> String {
    id.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            first.into_iter().chain(chars).collect::<String>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: &str, class: &str) -> CrashRecord {
        CrashRecord {
            kind: kind.into(),
            class: class.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_security_finding_is_its_detector_rule_at_error_with_a_severity() {
        let rule = rule_of(&record("security", "command-injection"));
        assert_eq!(rule.id, "command-injection");
        assert_eq!(rule.name, "CommandInjection");
        assert_eq!(rule.level, ResultLevel::Error);
        assert_eq!(rule.security_severity, Some("9.8"));
        assert!(rule.tags.contains(&"security".to_string()));
        assert!(rule.tags.contains(&"external/cwe/cwe-78".to_string()));
        let descriptor = serde_json::to_value(rule.descriptor()).unwrap();
        assert_eq!(descriptor["properties"]["security-severity"], "9.8");
        assert_eq!(descriptor["defaultConfiguration"]["level"], "error");
    }

    #[test]
    fn every_detector_has_a_severity_github_reads_as_high_or_critical() {
        for detector in DETECTORS {
            let rule = rule_of(&record("security", detector.0));
            let severity: f64 = rule.security_severity.unwrap().parse().unwrap();
            assert!((7.0..=10.0).contains(&severity), "{}", detector.0);
            assert_eq!(rule.id, detector.0);
        }
        let sev = |d: &str| rule_of(&record("security", d)).security_severity.unwrap();
        assert_eq!(sev("command-injection"), "9.8");
        assert_eq!(sev("code-injection"), "9.8");
        assert_eq!(sev("regex-dos"), "7.5");
        for high in [
            "object-injection",
            "class-injection",
            "path-traversal",
            "xxe",
            "ssrf",
        ] {
            assert!(sev(high).starts_with('8'), "{high}");
        }
    }

    #[test]
    fn an_unknown_detector_is_still_a_security_rule() {
        let rule = rule_of(&record("security", "ldap-injection"));
        assert_eq!(rule.id, "ldap-injection");
        assert_eq!(rule.name, "LdapInjection");
        assert_eq!(rule.level, ResultLevel::Error);
        assert_eq!(rule.security_severity, Some(UNKNOWN_DETECTOR_SEVERITY));
        assert!(rule.tags.contains(&"security".to_string()));
        assert_eq!(rule_of(&record("security", "")).id, "security");
    }

    #[test]
    fn a_side_effect_is_a_note_named_after_what_was_refused() {
        for what in ["process", "network", "file-write", "mail"] {
            let rule = rule_of(&record("side-effect", what));
            assert_eq!(rule.id, format!("side-effect/{what}"));
            assert_eq!(rule.level, ResultLevel::Note);
            assert_eq!(rule.security_severity, None);
            assert!(!rule.tags.contains(&"security".to_string()));
        }
        assert_eq!(
            rule_of(&record("side-effect", "file-write")).name,
            "SideEffectFileWrite"
        );
    }

    #[test]
    fn other_findings_are_their_kind_with_the_documented_level() {
        let expected = [
            ("exception", ResultLevel::Error),
            ("warning", ResultLevel::Warning),
            ("timeout", ResultLevel::Warning),
            ("fatal-error", ResultLevel::Error),
            ("stack-overflow", ResultLevel::Error),
            ("exit", ResultLevel::Warning),
            ("out-of-memory", ResultLevel::Error),
            ("harness-died", ResultLevel::Error),
            ("some-future-kind", ResultLevel::Warning),
        ];
        for (kind, level) in expected {
            let rule = rule_of(&record(kind, "Whatever"));
            assert_eq!(rule.id, kind);
            assert_eq!(rule.level, level, "{kind}");
            assert_eq!(rule.security_severity, None);
            assert!(!rule.tags.contains(&"security".to_string()));
        }
        assert_eq!(rule_of(&record("", "")).id, "finding");
        assert_eq!(
            rule_of(&record("some-future-kind", "")).name,
            "SomeFutureKind"
        );
    }
}
