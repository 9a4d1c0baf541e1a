//! Findings → one SARIF log: the driver and its rules, then one result per
//! finding with its location, stack (`stacks`, innermost first), path
//! (`codeFlows`, outermost first), fingerprint, input and reproduce command.

use std::collections::BTreeMap;

use serde_json::Value;
use serde_sarif::sarif::{
    ArtifactLocation, CodeFlow, Location, LogicalLocation, Message, PhysicalLocation, PropertyBag,
    Region, Result as SarifResult, Run, Sarif, Stack, StackFrame, ThreadFlow, ThreadFlowLocation,
    Tool, ToolComponent,
};

use php_fuzz_storage::{CrashRecord, content_hash};

use super::findings::Finding;
use super::rules::{Rule, rule_of};
use super::trace::{Frame, Place, frames};
use super::uri::{SRCROOT, SourceRoot};

/// The schema the log declares: OASIS's SARIF 2.1.0 (errata 01).
pub(crate) const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The `partialFingerprints` key: a hash of the finding's signature.
pub(crate) const FINGERPRINT_KEY: &str = "phpFuzzSignature/v1";

const INFORMATION_URI: &str = "https://github.com/php-fuzz/php-fuzz";

/// The log of `findings`, in their order, paths relative to `root`.
pub(crate) fn sarif_log(findings: &[Finding], root: &SourceRoot) -> Sarif {
    let rules: BTreeMap<String, Rule> = findings
        .iter()
        .map(|finding| {
            let rule = rule_of(&finding.record);
            (rule.id.clone(), rule)
        })
        .collect();
    let index: BTreeMap<&str, usize> = rules
        .keys()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let results: Vec<SarifResult> = findings
        .iter()
        .map(|finding| {
            let rule = rule_of(&finding.record);
            result_of(finding, &rule, index[rule.id.as_str()], root)
        })
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    let driver = ToolComponent::builder()
        .name("php-fuzz")
        .full_name(format!("php-fuzz {version}"))
        .version(version)
        .semantic_version(version)
        .information_uri(INFORMATION_URI)
        .rules(rules.values().map(Rule::descriptor).collect::<Vec<_>>())
        .build();
    let base = ArtifactLocation {
        uri: Some(root.base_uri()),
        ..Default::default()
    };
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .original_uri_base_ids(BTreeMap::from([(SRCROOT.to_string(), base)]))
        .results(results)
        .build();
    Sarif::builder()
        .schema(SCHEMA_URI)
        .version(Value::from("2.1.0"))
        .runs(vec![run])
        .build()
}

fn result_of(finding: &Finding, rule: &Rule, rule_index: usize, root: &SourceRoot) -> SarifResult {
    let record = &finding.record;
    let headline = headline(record);
    let frames = frames(&record.trace);
    let place = primary_place(record, &frames);
    let primary = match &place {
        Some(place) => Some(located(root, place, None)),
        None if !record.target.is_empty() => Some(Location {
            physical_location: Some(PhysicalLocation {
                artifact_location: Some(root.location(&record.target)),
                ..Default::default()
            }),
            message: Some(text(
                "the fuzz target (the finding has no place of its own)",
            )),
            ..Default::default()
        }),
        None => None,
    };
    let signature = if record.signature.is_empty() {
        format!(
            "{} {} {}:{}",
            record.kind, record.class, record.file, record.line
        )
    } else {
        record.signature.clone()
    };
    let fingerprint = content_hash(root.without_root(&signature).as_bytes());
    let mut result = SarifResult::builder().message(text(&headline)).build();
    result.rule_id = Some(rule.id.clone());
    result.rule_index = Some(rule_index as i64);
    result.level = Some(rule.level);
    result.locations = primary.map(|location| vec![location]);
    result.partial_fingerprints =
        Some(BTreeMap::from([(FINGERPRINT_KEY.to_string(), fingerprint)]));
    result.code_flows = code_flow(&frames, &headline, root).map(|flow| vec![flow]);
    result.stacks = stack(&frames, root).map(|stack| vec![stack]);
    result.related_locations = Some(related_locations(finding, root));
    result.properties = Some(properties(finding, root));
    result
}

/// `TypeError: message` (the message's first line), as php-fuzz's summary
/// words it.
fn headline(record: &CrashRecord) -> String {
    let message = record.message.lines().next().unwrap_or("");
    match (record.class.is_empty(), message.is_empty()) {
        (false, false) => format!("{}: {message}", record.class),
        (false, true) => record.class.clone(),
        (true, false) => message.to_string(),
        (true, true) => format!("a finding of the kind {}", record.kind),
    }
}

/// Where the finding happened: its file and line, else the innermost frame
/// with a place (a hang caught somewhere), else nowhere.
fn primary_place(record: &CrashRecord, frames: &[Frame]) -> Option<Place> {
    if !record.file.is_empty() {
        return Some(Place::outside_eval(&record.file, record.line));
    }
    frames.iter().find_map(|frame| frame.place.clone())
}

/// A location at `place`, with a region when the line is known.
fn located(root: &SourceRoot, place: &Place, message: Option<String>) -> Location {
    Location {
        physical_location: Some(PhysicalLocation {
            artifact_location: Some(root.location(&place.file)),
            region: (place.line > 0).then(|| Region {
                start_line: Some(i64::from(place.line)),
                ..Default::default()
            }),
            ..Default::default()
        }),
        message: message.map(|m| text(&m)),
        ..Default::default()
    }
}

/// A frame's function as a logical location: `Parser->value()` is the
/// member `Parser->value`; `{main}` and `require` are none.
fn logical(function: &str) -> Option<Vec<LogicalLocation>> {
    let name = function.strip_suffix("()")?;
    let (kind, short) = match name.rsplit_once("::").or_else(|| name.rsplit_once("->")) {
        Some((_, method)) => ("member", method),
        None => ("function", name.rsplit('\\').next().unwrap_or(name)),
    };
    Some(vec![LogicalLocation {
        name: Some(short.to_string()),
        fully_qualified_name: Some(name.to_string()),
        kind: Some(kind.to_string()),
        ..Default::default()
    }])
}

/// The frames with a place, outermost first: the path from the target's
/// entry down to the finding. PHP's own functions (`[internal]`) have no
/// source to show and are left out. `None` without such frames.
fn code_flow(frames: &[Frame], headline: &str, root: &SourceRoot) -> Option<CodeFlow> {
    let innermost = frames.iter().position(|f| f.place.is_some())?;
    let locations: Vec<ThreadFlowLocation> = frames
        .iter()
        .enumerate()
        .rev()
        .filter_map(|(i, frame)| {
            let place = frame.place.as_ref()?;
            let message = if i == innermost {
                format!("{}: {headline}", frame.function)
            } else {
                format!("{} calls the next step", frame.function)
            };
            Some(ThreadFlowLocation {
                location: Some(Location {
                    logical_locations: logical(&frame.function),
                    ..located(root, place, Some(message))
                }),
                ..Default::default()
            })
        })
        .enumerate()
        .map(|(depth, location)| ThreadFlowLocation {
            nesting_level: Some(depth as i64),
            ..location
        })
        .collect();
    Some(
        CodeFlow::builder()
            .message(text("PHP's stack, from the target's entry to the finding"))
            .thread_flows(vec![ThreadFlow::builder().locations(locations).build()])
            .build(),
    )
}

/// Every frame, innermost first, as SARIF's `stack` has them.
fn stack(frames: &[Frame], root: &SourceRoot) -> Option<Stack> {
    if frames.is_empty() {
        return None;
    }
    let frames: Vec<StackFrame> = frames
        .iter()
        .map(|frame| {
            let location = match &frame.place {
                Some(place) => located(root, place, Some(frame.function.clone())),
                None => Location {
                    message: Some(text(&format!("{} (a PHP function)", frame.function))),
                    ..Default::default()
                },
            };
            StackFrame {
                location: Some(Location {
                    logical_locations: logical(&frame.function),
                    ..location
                }),
                ..Default::default()
            }
        })
        .collect();
    Some(
        Stack::builder()
            .message(text(
                "PHP's stack when the finding happened, innermost first",
            ))
            .frames(frames)
            .build(),
    )
}

/// The saved input (id 1) and the fuzz target (id 2).
fn related_locations(finding: &Finding, root: &SourceRoot) -> Vec<Location> {
    let record = &finding.record;
    let mut related = vec![Location {
        id: Some(1),
        physical_location: Some(PhysicalLocation {
            artifact_location: Some(root.location(&finding.input.to_string_lossy())),
            ..Default::default()
        }),
        message: Some(text(&format!(
            "the input that triggers it ({} bytes); reproduce: {}",
            record.input_size, record.reproduce
        ))),
        ..Default::default()
    }];
    if !record.target.is_empty() {
        related.push(Location {
            id: Some(2),
            physical_location: Some(PhysicalLocation {
                artifact_location: Some(root.location(&record.target)),
                ..Default::default()
            }),
            message: Some(text("the fuzz target that found it")),
            ..Default::default()
        });
    }
    related
}

/// What php-fuzz's report says beyond the place: kind, class, the input and
/// the report, the reproduce command, hits, when, and its note.
fn properties(finding: &Finding, root: &SourceRoot) -> PropertyBag {
    let record = &finding.record;
    let input = finding.input.to_string_lossy();
    let report = finding.report.to_string_lossy();
    let mut bag: BTreeMap<String, Value> = BTreeMap::from([
        ("kind".to_string(), Value::from(record.kind.clone())),
        ("class".to_string(), Value::from(record.class.clone())),
        ("input".to_string(), Value::from(root.without_root(&input))),
        ("inputSize".to_string(), Value::from(record.input_size)),
        (
            "report".to_string(),
            Value::from(root.without_root(&report)),
        ),
        ("inputSha1".to_string(), Value::from(record.sha1.clone())),
        (
            "reproduce".to_string(),
            Value::from(record.reproduce.clone()),
        ),
        ("hits".to_string(), Value::from(record.hits)),
        ("foundAt".to_string(), Value::from(record.found_at)),
        (
            "target".to_string(),
            Value::from(root.without_root(&record.target)),
        ),
        (
            "signature".to_string(),
            Value::from(root.without_root(&record.signature)),
        ),
    ]);
    if let Some(note) = &record.note {
        bag.insert("note".to_string(), Value::from(note.clone()));
    }
    PropertyBag {
        tags: None,
        additional_properties: bag,
    }
}

fn text(text: &str) -> Message {
    Message {
        text: Some(text.to_string()),
        ..Default::default()
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
