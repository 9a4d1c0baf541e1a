//! Typed mutation: one argument of an entry changes, the others stay.
//!
//! Within the chosen argument a node is picked (the value itself, or an
//! item, constructor argument or returned value inside it) and changed by
//! a mutation of its type: strings by the byte mutators (so dictionaries,
//! the table of recent compares and source words apply), integers by
//! deltas, boundaries and the integer operands the target compared,
//! containers by inserting, removing, duplicating and swapping items,
//! unions by switching branch, objects by switching class. Every mutant
//! fits the schema, so it never fails with a TypeError.

mod containers;
mod leaves;
mod nodes;

use std::fmt;
use std::sync::Arc;

use php_fuzz_mutate::{FuzzRng, Mutator, Sequence};
use rand::RngExt;

use crate::conform::{check, fits, parameter_at};
use crate::generate::{Generator, Limits, generate_entry};
use crate::schema::{Schema, Type};
use crate::text::{parse_entry, write_entry};
use crate::value::Value;

pub(crate) use nodes::{child_type, resolve};

/// Tries at one mutation before giving up (every try picks anew).
const ATTEMPTS: usize = 8;

/// What a typed mutation did; `name()` is what status lines print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MutationKind {
    /// A fresh entry (the parent did not parse or fit, or there was none).
    Generate,
    /// The same argument taken from the partner entry.
    CrossOver,
    /// A trailing optional argument or a variadic value added (at the top
    /// level or to a constructor).
    AddArgument,
    /// A trailing optional argument or a variadic value removed.
    RemoveArgument,
    /// The byte mutators on a string (the sequence says which).
    Bytes,
    /// A string replaced by a string operand of a recent comparison.
    StrTorc,
    /// A string replaced by a dictionary word.
    StrWord,
    /// A numeric string replaced by another numeric string.
    StrNumeric,
    IntDelta,
    IntNegate,
    IntBoundary,
    IntRangeEnd,
    /// An integer operand of a recent comparison (or one off it).
    IntTorc,
    IntBitFlip,
    IntRandom,
    FloatSpecial,
    FloatDelta,
    FloatNegate,
    FloatTorc,
    BoolFlip,
    EnumCase,
    /// A union's value regenerated in another branch.
    Branch,
    /// A `mixed` value regenerated, maybe of another kind.
    Regenerate,
    ItemInsert,
    ItemRemove,
    ItemDuplicate,
    ItemSwap,
    KeyChange,
    /// An optional shape key added or removed.
    ShapeToggle,
    /// An object regenerated as another of its type's classes.
    ObjectClass,
    ClosureAdd,
    ClosureRemove,
    DateShift,
    DateOffset,
    DateRegenerate,
}

impl MutationKind {
    pub fn name(self) -> &'static str {
        use MutationKind::*;
        match self {
            Generate => "Generate",
            CrossOver => "CrossOver",
            AddArgument => "AddArgument",
            RemoveArgument => "RemoveArgument",
            Bytes => "Bytes",
            StrTorc => "StrTorc",
            StrWord => "StrWord",
            StrNumeric => "StrNumeric",
            IntDelta => "IntDelta",
            IntNegate => "IntNegate",
            IntBoundary => "IntBoundary",
            IntRangeEnd => "IntRangeEnd",
            IntTorc => "IntTorc",
            IntBitFlip => "IntBitFlip",
            IntRandom => "IntRandom",
            FloatSpecial => "FloatSpecial",
            FloatDelta => "FloatDelta",
            FloatNegate => "FloatNegate",
            FloatTorc => "FloatTorc",
            BoolFlip => "BoolFlip",
            EnumCase => "EnumCase",
            Branch => "Branch",
            Regenerate => "Regenerate",
            ItemInsert => "ItemInsert",
            ItemRemove => "ItemRemove",
            ItemDuplicate => "ItemDuplicate",
            ItemSwap => "ItemSwap",
            KeyChange => "KeyChange",
            ShapeToggle => "ShapeToggle",
            ObjectClass => "ObjectClass",
            ClosureAdd => "ClosureAdd",
            ClosureRemove => "ClosureRemove",
            DateShift => "DateShift",
            DateOffset => "DateOffset",
            DateRegenerate => "DateRegenerate",
        }
    }
}

/// One typed mutation. Its name (and `Display`) is `Arg2:IntBoundary`
/// (arguments count from 1, as in messages) or `Generate`; a string's byte
/// mutations are apart, in `bytes()`, for the `MS:` line to list after it.
#[derive(Debug, Clone, Copy)]
pub struct TypedMutation {
    /// The index (0-based) of the argument that changed; `None` for a
    /// fresh entry.
    pub argument: Option<usize>,
    pub kind: MutationKind,
    /// For `Bytes`: the byte mutations applied to the string.
    pub sequence: Option<Sequence>,
}

impl TypedMutation {
    /// `Arg2:IntBoundary`, `Generate`.
    pub fn name(&self) -> impl fmt::Display + '_ {
        self
    }

    /// The byte mutations of a `Bytes` mutation.
    pub fn bytes(&self) -> Option<Sequence> {
        self.sequence
    }
}

impl fmt::Display for TypedMutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(argument) = self.argument {
            write!(f, "Arg{}:", argument + 1)?;
        }
        f.write_str(self.kind.name())
    }
}

/// Mutates typed corpus entries of one schema.
pub struct ArgumentMutator {
    schema: Arc<Schema>,
    limits: Limits,
    /// A string's bytes before a byte mutation, to retry from.
    scratch: Vec<u8>,
}

/// What the mutations of one call share.
pub(super) struct Context<'a> {
    pub generator: Generator<'a>,
    pub bytes: &'a mut Mutator,
    pub scratch: &'a mut Vec<u8>,
    /// Set by a byte mutation.
    pub sequence: Option<Sequence>,
}

impl<'a> Context<'a> {
    pub fn rng(&mut self) -> &mut FuzzRng {
        self.bytes.rng_mut()
    }

    pub fn schema(&self) -> &'a Schema {
        self.generator.schema
    }

    /// A fresh value of `ty` in `budget`.
    pub fn fresh(&mut self, ty: &Type, budget: usize) -> Value {
        let generator = self.generator;
        generator.value(ty, budget, self.bytes.rng_mut())
    }
}

impl ArgumentMutator {
    pub fn new(schema: Arc<Schema>, limits: Limits) -> ArgumentMutator {
        ArgumentMutator {
            schema,
            limits,
            scratch: Vec::new(),
        }
    }

    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// A fresh entry, written into `out` (for an empty corpus).
    pub fn generate(&self, rng: &mut FuzzRng, out: &mut Vec<u8>) -> TypedMutation {
        out.clear();
        write_entry(&generate_entry(&self.schema, &self.limits, rng), out);
        TypedMutation {
            argument: None,
            kind: MutationKind::Generate,
            sequence: None,
        }
    }

    /// Writes into `out` a mutant of `parent` that differs in one argument.
    /// A parent that does not parse or fit gets a fresh entry instead.
    /// `None` (and `out` empty) when nothing in the entry can change: no
    /// parameters, or only literals.
    pub fn mutate(
        &mut self,
        bytes: &mut Mutator,
        parent: &[u8],
        partner: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> Option<TypedMutation> {
        out.clear();
        let parsed = parse_entry(parent)
            .ok()
            .filter(|values| check(&self.schema, values).is_ok());
        let Some(mut values) = parsed else {
            return Some(self.generate(bytes.rng_mut(), out));
        };
        let mut context = Context {
            generator: Generator {
                schema: &self.schema,
                limits: &self.limits,
            },
            bytes,
            scratch: &mut self.scratch,
            sequence: None,
        };
        let mutation = mutate_entry(&mut context, &mut values, partner)?;
        if let Err(mismatch) = check(&self.schema, &values) {
            debug_assert!(
                false,
                "{mutation} made a mutant that does not fit: {mismatch}"
            );
            return Some(self.generate(bytes.rng_mut(), out));
        }
        write_entry(&values, out);
        Some(mutation)
    }
}

/// Changes one argument of `values`.
fn mutate_entry(
    context: &mut Context<'_>,
    values: &mut Vec<Value>,
    partner: Option<&[u8]>,
) -> Option<TypedMutation> {
    let schema = context.generator.schema;
    let budget = context.generator.limits.max_depth;
    for _ in 0..ATTEMPTS {
        context.sequence = None;
        let roll = context.rng().random_range(0..16);
        let done = match (roll, partner) {
            (0, Some(partner)) => crossover(context, values, partner),
            (0 | 1, _) => containers::arguments(context, &schema.parameters, values, budget),
            _ => mutate_argument(context, values, budget),
        };
        if let Some((argument, kind)) = done {
            return Some(TypedMutation {
                argument: Some(argument),
                kind,
                sequence: context.sequence,
            });
        }
    }
    None
}

/// A typed mutation of one node of a random argument.
fn mutate_argument(
    context: &mut Context<'_>,
    values: &mut [Value],
    budget: usize,
) -> Option<(usize, MutationKind)> {
    if values.is_empty() {
        return None;
    }
    let schema = context.generator.schema;
    let argument = context.rng().random_range(0..values.len());
    let ty = &parameter_at(&schema.parameters, argument)?.ty;
    let value = &mut values[argument];
    let nodes = nodes::count(schema, value, ty);
    for _ in 0..4 {
        let k = if context.rng().random_ratio(1, 5) {
            0
        } else {
            context.rng().random_range(0..nodes)
        };
        let node = nodes::locate(schema, value, ty, budget, k);
        if let Some(kind) = mutate_node(context, node) {
            return Some((argument, kind));
        }
    }
    None
}

/// A mutation of the node's type; `None` if none applies (a literal, a
/// range of one integer…).
fn mutate_node(context: &mut Context<'_>, node: nodes::Node<'_, '_>) -> Option<MutationKind> {
    let schema = context.generator.schema;
    let resolved = resolve(schema, node.ty, node.value);
    let switch_first = matches!(node.ty, Type::Union { .. }) && context.rng().random_ratio(1, 4);
    if switch_first && let Some(kind) = switch_branch(context, node.ty, node.value, node.budget) {
        return Some(kind);
    }
    let kind = match resolved {
        Type::Mixed => leaves::mixed(context, node.value, node.budget),
        Type::List { .. } | Type::Array { .. } | Type::Shape { .. } => {
            containers::array(context, resolved, node.value, node.budget)
        }
        Type::Object { classes } => containers::object(context, classes, node.value, node.budget),
        Type::Closure { returns } => containers::closure(context, returns, node.value, node.budget),
        leaf => leaves::mutate(context, leaf, node.value),
    };
    kind.or_else(|| switch_branch(context, node.ty, node.value, node.budget))
}

/// Regenerates a union's value in another branch (one it does not fit).
fn switch_branch(
    context: &mut Context<'_>,
    ty: &Type,
    value: &mut Value,
    budget: usize,
) -> Option<MutationKind> {
    let Type::Union { of } = ty else { return None };
    let schema = context.generator.schema;
    let others = |t: &&Type| !fits(schema, t, value) && schema.depth(t) <= budget;
    let n = of.iter().filter(others).count();
    if n == 0 {
        return None;
    }
    let k = context.rng().random_range(0..n);
    let branch = of.iter().filter(others).nth(k)?;
    *value = context.fresh(branch, budget);
    Some(MutationKind::Branch)
}

/// Takes one argument from the partner entry, where it differs and fits.
fn crossover(
    context: &mut Context<'_>,
    values: &mut [Value],
    partner: &[u8],
) -> Option<(usize, MutationKind)> {
    let mut theirs = parse_entry(partner).ok()?;
    let n = values.len().min(theirs.len());
    if n == 0 {
        return None;
    }
    let schema = context.generator.schema;
    let start = context.rng().random_range(0..n);
    for i in (start..n).chain(0..start) {
        let ty = &parameter_at(&schema.parameters, i)?.ty;
        if theirs[i] != values[i] && fits(schema, ty, &theirs[i]) {
            values[i] = std::mem::replace(&mut theirs[i], Value::Null);
            return Some((i, MutationKind::CrossOver));
        }
    }
    None
}

#[cfg(test)]
mod tests;
