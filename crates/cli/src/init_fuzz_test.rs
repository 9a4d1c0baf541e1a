//! `php-fuzz init` in a project with a phpunit.xml(.dist): a PHPUnit fuzz
//! test (docs/phpunit.md) instead of a target file.

use std::path::{Path, PathBuf};

const TEST_TEMPLATE: &str = include_str!("../templates/FuzzTest.php");
const WORKFLOW_TEMPLATE: &str = include_str!("../templates/php-fuzz-phpunit.yml");

/// True when `project` has PHPUnit's configuration file.
pub fn uses_phpunit(project: &Path) -> bool {
    ["phpunit.xml", "phpunit.xml.dist"]
        .iter()
        .any(|name| project.join(name).is_file())
}

/// What init writes for a fuzz test: the files, and the `composer fuzz` command.
pub struct FuzzTestFiles {
    pub files: Vec<(PathBuf, String)>,
    pub command: String,
}

/// `name` is the target name (`json_lite`); `call` the method body, indented
/// for a closure (four spaces), or a TODO.
pub fn files(
    name: &str,
    package: &str,
    namespaces: &str,
    call: &str,
    method: &str,
) -> FuzzTestFiles {
    let class = format!("{}FuzzTest", studly(name));
    let file = format!("tests/{class}.php");
    let folder = format!("tests/fuzz/{class}/{method}");
    let render = |template: &str| {
        template
            .replace("{{package}}", package)
            .replace("{{namespaces}}", namespaces)
            .replace("{{class}}", &class)
            .replace("{{method}}", method)
            .replace("{{file}}", &file)
            .replace("{{folder}}", &folder)
            .replace("{{call}}", &indent(call))
    };
    FuzzTestFiles {
        files: vec![
            (PathBuf::from(&file), render(TEST_TEMPLATE)),
            (
                PathBuf::from(".github/workflows/php-fuzz.yml"),
                render(WORKFLOW_TEMPLATE),
            ),
        ],
        command: format!("php-fuzz fuzz {file}"),
    }
}

/// `fuzz` + the called method's name (`fuzzDecode`), or `fuzzInput`.
pub fn method_name(call: Option<&str>) -> String {
    let called = call
        .and_then(|c| c.rsplit(['>', ':']).next())
        .filter(|m| !m.is_empty());
    match called {
        Some(m) => format!("fuzz{}{}", m[..1].to_ascii_uppercase(), &m[1..]),
        None => "fuzzInput".into(),
    }
}

/// `json_lite-x` → `JsonLiteX`.
fn studly(name: &str) -> String {
    name.split(['_', '-'])
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// A closure body (four spaces) indented as a method body (eight).
fn indent(body: &str) -> String {
    body.lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_target_and_the_call() {
        assert_eq!(studly("json_lite-x"), "JsonLiteX");
        assert_eq!(method_name(Some("Acme\\Json->decode")), "fuzzDecode");
        assert_eq!(method_name(Some("Acme\\Json::parse")), "fuzzParse");
        assert_eq!(method_name(None), "fuzzInput");
    }
}
