//! A schema with every kind of type, nested objects, shapes and unions,
//! shared by the tests of every module.

use crate::schema::Schema;

pub(crate) const RICH: &str = r#"{
  "version": 1,
  "callee": "App\\Renderer::render",
  "parameters": [
    {"name": "template", "type": {"kind": "string"}},
    {"name": "mode", "type": {"kind": "enum", "class": "App\\Mode", "cases": ["Html", "Text", "Json"]}},
    {"name": "depth", "type": {"kind": "int", "min": 0, "max": 100}},
    {"name": "vars", "type": {"kind": "array", "key": {"kind": "string"}, "value": {"kind": "mixed"}}},
    {"name": "shape", "type": {"kind": "object", "classes": ["App\\Point", "App\\Circle"]}},
    {"name": "opts", "type": {"kind": "shape", "items": [
      {"key": "a", "type": {"kind": "int"}},
      {"key": "b", "optional": true, "type": {"kind": "string", "non_empty": true}},
      {"key": "c", "optional": true, "type": {"kind": "list", "of": {"kind": "bool"}}}]}},
    {"name": "order", "type": {"kind": "union", "of": [
      {"kind": "literal", "value": "\"asc\""}, {"kind": "literal", "value": "\"desc\""}, {"kind": "null"}]}},
    {"name": "when", "type": {"kind": "date", "class": "DateTimeInterface"}},
    {"name": "label", "type": {"kind": "stringable"}},
    {"name": "pick", "type": {"kind": "closure", "returns": {"kind": "int", "min": 1, "max": 5}}},
    {"name": "num", "type": {"kind": "string", "numeric": true}},
    {"name": "ratio", "type": {"kind": "float"}},
    {"name": "ids", "type": {"kind": "list", "non_empty": true, "of": {"kind": "int", "min": 1}}},
    {"name": "map", "type": {"kind": "array", "non_empty": true, "key": {"kind": "int", "min": 0, "max": 10}, "value": {"kind": "string", "non_empty": true}}},
    {"name": "node", "type": {"kind": "union", "of": [{"kind": "null"}, {"kind": "object", "classes": ["App\\Node"]}]}},
    {"name": "tree", "type": {"kind": "object", "classes": ["App\\Tree"]}},
    {"name": "far", "type": {"kind": "object", "classes": ["App\\D1", "App\\Point"]}},
    {"name": "pair", "type": {"kind": "shape", "items": [
      {"key": 0, "type": {"kind": "int", "min": -3, "max": 3}},
      {"key": 1, "type": {"kind": "union", "of": [{"kind": "int"}, {"kind": "string"}]}}]}},
    {"name": "flag", "type": {"kind": "bool"}, "optional": true},
    {"name": "any", "type": {"kind": "mixed"}, "optional": true},
    {"name": "rest", "type": {"kind": "union", "of": [{"kind": "int", "min": 0}, {"kind": "string", "non_empty": true}]}, "variadic": true}
  ],
  "classes": {
    "App\\Point": {"parameters": [
      {"name": "x", "type": {"kind": "int"}},
      {"name": "y", "type": {"kind": "int"}},
      {"name": "label", "type": {"kind": "union", "of": [{"kind": "string"}, {"kind": "null"}]}, "optional": true}]},
    "App\\Circle": {"parameters": [
      {"name": "center", "type": {"kind": "object", "classes": ["App\\Point"]}},
      {"name": "r", "type": {"kind": "float"}}]},
    "App\\Node": {"parameters": [
      {"name": "value", "type": {"kind": "int"}},
      {"name": "next", "type": {"kind": "union", "of": [{"kind": "null"}, {"kind": "object", "classes": ["App\\Node"]}]}, "optional": true}]},
    "App\\Tree": {"parameters": [
      {"name": "left", "type": {"kind": "object", "classes": ["App\\Tree", "App\\Leaf"]}},
      {"name": "right", "type": {"kind": "object", "classes": ["App\\Tree", "App\\Leaf"]}}]},
    "App\\Leaf": {"parameters": [{"name": "v", "type": {"kind": "int", "min": -5, "max": 5}}]},
    "App\\D1": {"parameters": [{"name": "d", "type": {"kind": "object", "classes": ["App\\D2"]}}]},
    "App\\D2": {"parameters": [{"name": "d", "type": {"kind": "object", "classes": ["App\\D3"]}}]},
    "App\\D3": {"parameters": [{"name": "d", "type": {"kind": "object", "classes": ["App\\D4"]}}]},
    "App\\D4": {"parameters": []}
  }
}"#;

pub(crate) fn rich() -> Schema {
    Schema::from_json(RICH.as_bytes()).expect("the rich schema reads")
}

/// A schema of the given parameters (JSON array text) and no classes.
pub(crate) fn schema_of(parameters: &str) -> Schema {
    let json = format!(r#"{{"callee": "f", "parameters": {parameters}}}"#);
    Schema::from_json(json.as_bytes()).expect("the schema reads")
}
