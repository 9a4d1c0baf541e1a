//! Typed arguments: the values of a PHP function's arguments, generated and
//! mutated from its parameter types (docs/autofuzz.md). No I/O, no PHP.
//!
//! - [`schema`] reads the harness's description of the parameters;
//! - [`text`] reads and writes corpus entries (`php-fuzz arguments v1`);
//! - [`conform`] checks that values fit their types;
//! - [`generate`] makes values that always fit;
//! - [`mutate`] changes one argument of an entry at a time;
//! - [`shrink`] offers smaller entries to `minimize-crash`.

pub mod conform;
pub mod date;
mod display;
pub mod generate;
pub mod mutate;
pub mod schema;
pub mod shrink;
#[cfg(test)]
mod testing;
pub mod text;
pub mod value;

pub use conform::{Mismatch, check};
pub use generate::{Limits, generate, generate_entry};
pub use mutate::{ArgumentMutator, MutationKind, TypedMutation};
pub use schema::{Class, Parameter, Schema, SchemaError, ShapeItem, Type};
pub use shrink::{shrink_candidates, size};
pub use text::{ParseError, is_entry, parse_entry, parse_value, write_entry, write_value};
pub use value::{Key, Value};
