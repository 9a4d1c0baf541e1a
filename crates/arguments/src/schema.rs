//! The schema the harness sends in its `Ready` event (docs/autofuzz.md): the
//! callee's parameters, their types, and the constructors of the classes
//! those types name.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use crate::value::{Key, Value};

/// How deep objects may nest (docs/autofuzz.md's `MAX_OBJECT_DEPTH`).
pub const MAX_OBJECT_DEPTH: usize = 3;

/// What [`Schema::depth_needed`] says of a type that cannot be built.
const UNBUILDABLE: usize = usize::MAX;

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// Not JSON, or not the schema's shape (an unknown `kind` is named here).
    #[error("invalid schema: {0}")]
    Json(#[from] serde_json::Error),
    #[error("unsupported schema version {0} (this php-fuzz reads version 1)")]
    Version(u64),
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
    #[error(
        "parameter ${0} cannot be built: every class its type allows needs an object it cannot build"
    )]
    Unbuildable(String),
}

/// What the engine knows of a typed target. Build it with `from_json` or
/// `new`, which also work out how deep each class's objects nest; changing
/// `classes` afterwards leaves that table stale.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub callee: String,
    pub parameters: Vec<Parameter>,
    pub classes: BTreeMap<String, Class>,
    /// Per class, the object depth its cheapest value needs (see `depth_needed`).
    depths: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Parameter {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Type,
    #[serde(default)]
    pub optional: bool,
    #[serde(default)]
    pub variadic: bool,
}

/// A class an `object` type may build: its public constructor's parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Class {
    #[serde(default)]
    pub parameters: Vec<Parameter>,
}

/// A parameter type, tagged by `kind` as in docs/autofuzz.md.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Type {
    Null,
    Bool,
    Float,
    /// Any of null, bool, int, float, string, and arrays of them.
    Mixed,
    Int {
        #[serde(default)]
        min: Option<i64>,
        #[serde(default)]
        max: Option<i64>,
    },
    String {
        #[serde(default)]
        non_empty: bool,
        #[serde(default)]
        numeric: bool,
    },
    /// The JSON field is the literal in the corpus syntax (`"\"asc\""`, `"42"`).
    Literal {
        #[serde(deserialize_with = "literal")]
        value: Value,
    },
    Union {
        of: Vec<Type>,
    },
    List {
        of: Box<Type>,
        #[serde(default)]
        non_empty: bool,
    },
    Array {
        #[serde(default = "array_key")]
        key: Box<Type>,
        #[serde(default = "mixed")]
        value: Box<Type>,
        #[serde(default)]
        non_empty: bool,
    },
    Shape {
        items: Vec<ShapeItem>,
    },
    Enum {
        class: String,
        cases: Vec<String>,
    },
    Object {
        classes: Vec<String>,
    },
    /// `DateTimeImmutable`, `DateTime`, or `DateTimeInterface` (either).
    Date {
        class: String,
    },
    Stringable,
    Closure {
        #[serde(default = "mixed")]
        returns: Box<Type>,
    },
}

/// One item of an array shape.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ShapeItem {
    /// As PHP stores it (a decimal-integer string key is an integer).
    #[serde(deserialize_with = "shape_key")]
    pub key: Key,
    #[serde(default)]
    pub optional: bool,
    #[serde(rename = "type")]
    pub ty: Type,
}

#[derive(Deserialize)]
struct RawSchema {
    #[serde(default = "version_one")]
    version: u64,
    #[serde(default)]
    callee: String,
    parameters: Vec<Parameter>,
    #[serde(default)]
    classes: BTreeMap<String, Class>,
}

fn version_one() -> u64 {
    1
}

fn mixed() -> Box<Type> {
    Box::new(Type::Mixed)
}

fn array_key() -> Box<Type> {
    Box::new(Type::Union {
        of: vec![
            Type::Int {
                min: None,
                max: None,
            },
            Type::String {
                non_empty: false,
                numeric: false,
            },
        ],
    })
}

fn literal<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    let text = String::deserialize(d)?;
    crate::text::parse_value(text.as_bytes())
        .map_err(|e| serde::de::Error::custom(format!("literal {text:?}: {e}")))
}

/// A shape key: a JSON integer, or a string holding a corpus literal
/// (`"\"a\""`, `"0"`) or, failing that, the key itself (`"a"`).
fn shape_key<'de, D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(i64),
        Str(String),
    }
    let key = match Raw::deserialize(d)? {
        Raw::Int(i) => Key::Int(i),
        Raw::Str(text) => match crate::text::parse_value(text.as_bytes()) {
            Ok(Value::Int(i)) => Key::Int(i),
            Ok(Value::Str(s)) => Key::Str(s),
            _ => Key::Str(text.into_bytes()),
        },
    };
    Ok(key.effective().to_key())
}

impl Schema {
    /// Reads and checks the JSON schema.
    pub fn from_json(json: &[u8]) -> Result<Schema, SchemaError> {
        let raw: RawSchema = serde_json::from_slice(json)?;
        if raw.version != 1 {
            return Err(SchemaError::Version(raw.version));
        }
        Schema::new(raw.callee, raw.parameters, raw.classes)
    }

    /// A schema from its parts, checked as `from_json` checks it.
    pub fn new(
        callee: String,
        parameters: Vec<Parameter>,
        classes: BTreeMap<String, Class>,
    ) -> Result<Schema, SchemaError> {
        let mut schema = Schema {
            callee,
            parameters,
            classes,
            depths: BTreeMap::new(),
        };
        schema.validate()?;
        schema.depths = class_depths(&schema.classes);
        if let Some(name) = schema.unbuildable(&schema.parameters) {
            return Err(SchemaError::Unbuildable(name.to_string()));
        }
        Ok(schema)
    }

    /// The class named `name` (exactly, else ignoring ASCII case as PHP does).
    pub fn class(&self, name: &str) -> Option<(&str, &Class)> {
        if let Some((name, class)) = self.classes.get_key_value(name) {
            return Some((name, class));
        }
        self.classes
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(key, class)| (key.as_str(), class))
    }

    /// How many constructors deep the cheapest value of `ty` nests (0 for a
    /// type without objects); `None` if no value can be built at all.
    pub fn depth_needed(&self, ty: &Type) -> Option<usize> {
        Some(self.depth(ty)).filter(|&d| d != UNBUILDABLE)
    }

    /// `usize::MAX` for a type that cannot be built.
    pub(crate) fn depth(&self, ty: &Type) -> usize {
        type_depth(ty, &self.depths)
    }

    /// The object depth a class's cheapest object needs (itself included).
    pub(crate) fn class_depth(&self, name: &str) -> usize {
        self.class(name)
            .and_then(|(name, _)| self.depths.get(name).copied())
            .unwrap_or(UNBUILDABLE)
    }

    /// The first parameter that must be passed but cannot be built.
    fn unbuildable<'p>(&self, parameters: &'p [Parameter]) -> Option<&'p str> {
        parameters[..required_len(parameters)]
            .iter()
            .find(|p| self.depth(&p.ty) == UNBUILDABLE)
            .map(|p| p.name.as_str())
    }

    fn validate(&self) -> Result<(), SchemaError> {
        self.check_parameters(&self.parameters, "")?;
        for (name, class) in &self.classes {
            self.check_parameters(&class.parameters, &format!("class {name}: "))?;
        }
        Ok(())
    }

    fn check_parameters(&self, parameters: &[Parameter], at: &str) -> Result<(), SchemaError> {
        for (i, p) in parameters.iter().enumerate() {
            let at = format!("{at}parameter ${}", p.name);
            if p.variadic && i + 1 != parameters.len() {
                return Err(invalid(&at, "only the last parameter can be variadic"));
            }
            self.check_type(&p.ty, &at)?;
        }
        Ok(())
    }

    fn check_type(&self, ty: &Type, at: &str) -> Result<(), SchemaError> {
        match ty {
            Type::Int {
                min: Some(min),
                max: Some(max),
            } if min > max => Err(invalid(at, &format!("int<{min}, {max}> is empty"))),
            Type::Union { of } if of.is_empty() => Err(invalid(at, "a union of no type")),
            Type::Union { of } => of.iter().try_for_each(|t| self.check_type(t, at)),
            Type::List { of, .. } => self.check_type(of, at),
            Type::Array { key, value, .. } => {
                self.check_type(key, at)?;
                self.check_type(value, at)
            }
            Type::Shape { items } => {
                for (i, item) in items.iter().enumerate() {
                    if items[..i].iter().any(|other| other.key == item.key) {
                        return Err(invalid(at, "a shape with a repeated key"));
                    }
                    self.check_type(&item.ty, at)?;
                }
                Ok(())
            }
            Type::Enum { cases, .. } if cases.is_empty() => {
                Err(invalid(at, "an enum without cases"))
            }
            Type::Object { classes } if classes.is_empty() => {
                Err(invalid(at, "an object type without classes"))
            }
            Type::Object { classes } => match classes.iter().find(|c| self.class(c).is_none()) {
                Some(c) => Err(invalid(at, &format!("class {c} is not in `classes`"))),
                None => Ok(()),
            },
            Type::Date { class } if date_class(class).is_none() => {
                Err(invalid(at, &format!("{class} is not a date class")))
            }
            Type::Closure { returns } => self.check_type(returns, at),
            _ => Ok(()),
        }
    }
}

fn invalid(at: &str, message: &str) -> SchemaError {
    SchemaError::Invalid {
        at: at.to_string(),
        message: message.to_string(),
    }
}

/// The date classes and how to spell them.
pub(crate) fn date_class(name: &str) -> Option<&'static str> {
    let name = name.strip_prefix('\\').unwrap_or(name);
    ["DateTimeImmutable", "DateTime", "DateTimeInterface"]
        .into_iter()
        .find(|c| c.eq_ignore_ascii_case(name))
}

/// How many leading parameters must be passed: up to the last one that is
/// neither optional nor variadic (arguments are positional).
pub(crate) fn required_len(parameters: &[Parameter]) -> usize {
    parameters
        .iter()
        .rposition(|p| !p.optional && !p.variadic)
        .map_or(0, |i| i + 1)
}

/// The depth each class needs, found by relaxing from "unbuildable" until
/// nothing changes (a class that needs itself stays unbuildable).
fn class_depths(classes: &BTreeMap<String, Class>) -> BTreeMap<String, usize> {
    let mut depths: BTreeMap<String, usize> =
        classes.keys().map(|k| (k.clone(), UNBUILDABLE)).collect();
    for _ in 0..=classes.len() {
        let mut changed = false;
        for (name, class) in classes {
            let depth = parameters_depth(&class.parameters, &depths).saturating_add(1);
            if depth < depths[name] {
                depths.insert(name.clone(), depth);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    depths
}

fn parameters_depth(parameters: &[Parameter], depths: &BTreeMap<String, usize>) -> usize {
    parameters[..required_len(parameters)]
        .iter()
        .map(|p| type_depth(&p.ty, depths))
        .max()
        .unwrap_or(0)
}

fn type_depth(ty: &Type, depths: &BTreeMap<String, usize>) -> usize {
    let class_depth = |name: &String| {
        depths.get(name).copied().or_else(|| {
            depths
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, &d)| d)
        })
    };
    match ty {
        Type::Union { of } => of
            .iter()
            .map(|t| type_depth(t, depths))
            .min()
            .unwrap_or(UNBUILDABLE),
        Type::List {
            of,
            non_empty: true,
        } => type_depth(of, depths),
        Type::Array {
            key,
            value,
            non_empty: true,
        } => type_depth(key, depths).max(type_depth(value, depths)),
        Type::Shape { items } => items
            .iter()
            .filter(|item| !item.optional)
            .map(|item| type_depth(&item.ty, depths))
            .max()
            .unwrap_or(0),
        Type::Object { classes } => classes
            .iter()
            .filter_map(class_depth)
            .min()
            .unwrap_or(UNBUILDABLE),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
