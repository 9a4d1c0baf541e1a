//! `php-fuzz init`: sets a composer project up for fuzzing: a commented
//! target, a seed corpus directory, a dictionary stub, `composer fuzz` and a
//! GitHub Actions workflow. It never overwrites a file: what exists is
//! skipped, and said so.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use crate::stdout::Stdout;

const TARGET_TEMPLATE: &str = include_str!("../templates/target.php");
const DICTIONARY_TEMPLATE: &str = include_str!("../templates/target.dict");
const WORKFLOW_TEMPLATE: &str = include_str!("../templates/php-fuzz.yml");

/// Arguments of `php-fuzz init`.
#[derive(clap::Args, Debug)]
pub struct InitArgs {
    /// The composer project (the directory of composer.json).
    #[arg(default_value = ".")]
    pub project: PathBuf,
    /// Name of the fuzz target: fuzz/NAME/ [default: the package name from composer.json].
    #[arg(long)]
    pub name: Option<String>,
    /// What the target calls with each input: Class::method (static) or Class->method
    /// (on a new instance). Without it the target has a TODO to fill in.
    #[arg(long, value_name = "CALL")]
    pub call: Option<String>,
}

pub fn run(args: &InitArgs) -> anyhow::Result<ExitCode> {
    let composer_path = args.project.join("composer.json");
    let composer_text = std::fs::read_to_string(&composer_path).with_context(|| {
        format!(
            "cannot read {}: php-fuzz init sets up a composer project",
            composer_path.display()
        )
    })?;
    let mut composer: Value = serde_json::from_str(&composer_text)
        .with_context(|| format!("{} is not valid JSON", composer_path.display()))?;
    let package = composer
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("this project")
        .to_string();
    let name = match &args.name {
        Some(name) => name.clone(),
        None => target_name(&package),
    };
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        bail!("--name {name:?}: use letters, digits, _ and -");
    }
    let namespaces = namespaces(&composer);
    let call = match &args.call {
        Some(call) => call_code(call)?,
        None => todo_code(&namespaces),
    };
    let render = |template: &str| {
        template
            .replace("{{name}}", &name)
            .replace("{{package}}", &package)
            .replace(
                "{{namespaces}}",
                &if namespaces.is_empty() {
                    "none declared under autoload".to_string()
                } else {
                    namespaces.join(", ")
                },
            )
            .replace("{{call}}", &call)
    };

    let mut out = Stdout::lock();
    if !args.project.join("vendor/autoload.php").is_file() {
        out.line("note: vendor/autoload.php is missing: run `composer install` before fuzzing")?;
    }
    let fuzz_test = crate::init_fuzz_test::uses_phpunit(&args.project).then(|| {
        crate::init_fuzz_test::files(
            &name,
            &package,
            &render("{{namespaces}}"),
            &call,
            &crate::init_fuzz_test::method_name(args.call.as_deref()),
        )
    });
    let dir = PathBuf::from("fuzz").join(&name);
    let target_files = [
        (dir.join("target.php"), render(TARGET_TEMPLATE)),
        (
            dir.join(format!("{name}.dict")),
            render(DICTIONARY_TEMPLATE),
        ),
        (dir.join("corpus/.gitkeep"), String::new()),
        (
            PathBuf::from(".github/workflows/php-fuzz.yml"),
            render_workflow(&name),
        ),
    ];
    let files = match &fuzz_test {
        Some(test) => test.files.clone(),
        None => target_files.to_vec(),
    };
    for (relative, text) in &files {
        let path = args.project.join(relative);
        if path.exists() {
            out.line(format_args!("skipped {} (exists)", relative.display()))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_new(&path, text)?;
        out.line(format_args!("created {}", relative.display()))?;
    }

    let command = match &fuzz_test {
        Some(test) => test.command.clone(),
        None => fuzz_command(&name),
    };
    let scripts = composer
        .as_object_mut()
        .context("composer.json is not a JSON object")?
        .entry("scripts")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(scripts) = scripts.as_object_mut() else {
        bail!("composer.json's \"scripts\" is not an object");
    };
    if scripts.contains_key("fuzz") {
        out.line("skipped the composer script `fuzz` (composer.json has one)")?;
    } else {
        scripts.insert("fuzz".into(), Value::String(command.clone()));
        let text = to_composer_json(&composer, indent_of(&composer_text))?;
        std::fs::write(&composer_path, text)
            .with_context(|| format!("cannot write {}", composer_path.display()))?;
        out.line(format_args!(
            "added the composer script `fuzz` to composer.json: {command}"
        ))?;
    }
    out.line(format_args!(
        "next: {}run `composer fuzz` (or: {command})",
        if args.call.is_none() {
            let edit = match &fuzz_test {
                Some(test) => test.files[0].0.display().to_string(),
                None => format!("fuzz/{name}/target.php"),
            };
            format!("edit {edit} to call your code, then ")
        } else {
            String::new()
        }
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// What `composer fuzz` runs.
fn fuzz_command(name: &str) -> String {
    format!(
        "php-fuzz fuzz fuzz/{name}/target.php fuzz/{name}/corpus --artifact-dir fuzz/{name}/crashes"
    )
}

/// The workflow for target `name`.
pub fn render_workflow(name: &str) -> String {
    WORKFLOW_TEMPLATE.replace("{{name}}", name)
}

/// `vendor/package-name` → `package_name`.
fn target_name(package: &str) -> String {
    let base = package.rsplit('/').next().unwrap_or(package);
    let name: String = base
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() { "main".into() } else { name }
}

/// The namespaces composer.json autoloads (PSR-4 and PSR-0), in its order.
fn namespaces(composer: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for kind in ["psr-4", "psr-0"] {
        if let Some(map) = composer
            .pointer(&format!("/autoload/{kind}"))
            .and_then(Value::as_object)
        {
            for key in map.keys() {
                if !key.is_empty() && !found.contains(key) {
                    found.push(key.clone());
                }
            }
        }
    }
    found
}

/// The closure's body for `--call`: `A\B::m` or `A\B->m`.
fn call_code(call: &str) -> anyhow::Result<String> {
    let valid = |s: &str| {
        !s.is_empty()
            && s.trim_start_matches('\\').split('\\').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
            })
    };
    let (class, method, instance) = if let Some((class, method)) = call.split_once("->") {
        (class, method, true)
    } else if let Some((class, method)) = call.split_once("::") {
        (class, method, false)
    } else {
        bail!("--call {call:?}: expected Class::method or Class->method");
    };
    if !valid(class) || !valid(method) || method.contains('\\') {
        bail!("--call {call:?}: expected Class::method or Class->method");
    }
    let class = format!("\\{}", class.trim_start_matches('\\'));
    Ok(if instance {
        format!("    (new {class}())->{method}($input);")
    } else {
        format!("    {class}::{method}($input);")
    })
}

/// The closure's body without `--call`.
fn todo_code(namespaces: &[String]) -> String {
    let example = namespaces
        .first()
        .map(|ns| format!("{}Parser", ns))
        .unwrap_or_else(|| "Parser".into());
    format!(
        "    // TODO: call your code with $input, for example:\n    // (new \\{example}())->parse($input);"
    )
}

/// The indentation composer.json uses (composer's own is four spaces).
fn indent_of(text: &str) -> Vec<u8> {
    text.lines()
        .skip(1)
        .find_map(|line| {
            let indent: String = line
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            (!indent.is_empty()).then_some(indent)
        })
        .unwrap_or_else(|| "    ".into())
        .into_bytes()
}

/// composer.json as composer writes it: keys in their order, unescaped
/// slashes and unicode, a newline at the end.
fn to_composer_json(value: &Value, indent: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    use serde::Serialize;
    let mut text = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(&indent);
    let mut serializer = serde_json::Serializer::with_formatter(&mut text, formatter);
    value.serialize(&mut serializer)?;
    text.push(b'\n');
    Ok(text)
}

/// Writes `path`, which must not exist.
fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_calls_and_namespaces() {
        assert_eq!(target_name("acme/json-parser"), "json_parser");
        assert_eq!(
            call_code("Acme\\Json\\Parser->parse").unwrap(),
            "    (new \\Acme\\Json\\Parser())->parse($input);"
        );
        assert_eq!(
            call_code("\\Acme\\Util::decode").unwrap(),
            "    \\Acme\\Util::decode($input);"
        );
        assert!(call_code("parse").is_err());
        assert!(call_code("A::b; system('x')").is_err());
        let composer: Value = serde_json::from_str(
            r#"{"autoload": {"psr-4": {"Acme\\Json\\": "src/", "Acme\\Util\\": "util/"}, "psr-0": {"Legacy_": "lib/"}}}"#,
        )
        .unwrap();
        assert_eq!(
            namespaces(&composer),
            vec!["Acme\\Json\\", "Acme\\Util\\", "Legacy_"]
        );
    }

    #[test]
    fn composer_json_keeps_its_order_and_style() {
        let text = "{\n    \"name\": \"acme/x\",\n    \"require\": {\"php\": \">=8.1\"},\n    \"autoload\": {\"psr-4\": {\"Acme\\\\\": \"src/\"}},\n    \"extra\": {\"url\": \"https://e.org/é\"}\n}\n";
        let mut value: Value = serde_json::from_str(text).unwrap();
        value.as_object_mut().unwrap().insert(
            "scripts".into(),
            serde_json::json!({"fuzz": "php-fuzz fuzz a/b"}),
        );
        let written =
            String::from_utf8(to_composer_json(&value, indent_of(text)).unwrap()).unwrap();
        let keys: Vec<_> = written
            .lines()
            .filter(|l| l.starts_with("    \"") && !l.starts_with("        "))
            .map(|l| l.trim().split('"').nth(1).unwrap().to_string())
            .collect();
        assert_eq!(keys, ["name", "require", "autoload", "extra", "scripts"]);
        assert!(
            written.contains("\"url\": \"https://e.org/é\""),
            "{written}"
        );
        assert!(written.contains("\"fuzz\": \"php-fuzz fuzz a/b\""));
        assert!(written.ends_with("}\n"));
    }
}
