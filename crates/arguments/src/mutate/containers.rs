//! Mutations of container nodes: lists, arrays, shapes, objects, closures,
//! and the argument list itself (add or drop a trailing optional argument).
//! A change inside an item is a mutation of that item's own node.

use rand::RngExt;

use super::MutationKind::{self, *};
use super::{Context, leaves, nodes::MIXED};
use crate::conform::{key_fits, parameter_at, same_class};
use crate::schema::{Parameter, ShapeItem, Type, required_len};
use crate::value::{Key, Value, canonicalize_items, materialize};

type Items = Vec<(Option<Key>, Value)>;

/// One of the operations whose condition holds, at random.
fn pick(context: &mut Context<'_>, ops: &[(bool, MutationKind)]) -> Option<MutationKind> {
    let n = ops.iter().filter(|(ok, _)| *ok).count();
    if n == 0 {
        return None;
    }
    let k = context.rng().random_range(0..n);
    ops.iter()
        .filter(|(ok, _)| *ok)
        .nth(k)
        .map(|(_, kind)| *kind)
}

/// Adds or drops a trailing optional argument or a variadic value; the
/// index of the argument added or dropped.
pub(super) fn arguments(
    context: &mut Context<'_>,
    parameters: &[Parameter],
    args: &mut Vec<Value>,
    budget: usize,
) -> Option<(usize, MutationKind)> {
    let len = args.len();
    let max_items = context.generator.limits.max_items;
    let schema = context.schema();
    let next = parameter_at(parameters, len).filter(|p| {
        (p.optional || p.variadic)
            && schema.depth(&p.ty) <= budget
            && (!p.variadic || len + 1 - parameters.len() < max_items)
    });
    let op = pick(
        context,
        &[
            (next.is_some(), AddArgument),
            (len > required_len(parameters), RemoveArgument),
        ],
    )?;
    if op == AddArgument {
        let value = context.fresh(&next?.ty, budget);
        args.push(value);
        Some((len, op))
    } else {
        args.pop();
        Some((len - 1, op))
    }
}

/// A list, an array (`mixed` ones too) or a shape.
pub(super) fn array(
    context: &mut Context<'_>,
    ty: &Type,
    value: &mut Value,
    budget: usize,
) -> Option<MutationKind> {
    let Value::Array(items) = value else {
        return None;
    };
    match ty {
        Type::List { of, non_empty } => list(context, items, of, *non_empty, budget),
        Type::Array {
            key,
            value,
            non_empty,
        } => map(context, items, key, value, *non_empty, budget),
        Type::Mixed => map(context, items, &MIXED, &MIXED, false, budget),
        Type::Shape { items: shape } => shape_toggle(context, items, shape, budget),
        _ => None,
    }
}

fn list(
    context: &mut Context<'_>,
    items: &mut Items,
    of: &Type,
    non_empty: bool,
    budget: usize,
) -> Option<MutationKind> {
    let len = items.len();
    let grow = len < context.generator.limits.max_items && context.schema().depth(of) <= budget;
    let ops = [
        (grow, ItemInsert),
        (len > usize::from(non_empty), ItemRemove),
        (grow && len > 0, ItemDuplicate),
        (len >= 2, ItemSwap),
    ];
    let op = pick(context, &ops)?;
    let rng = context.rng();
    match op {
        ItemInsert => {
            let at = rng.random_range(0..=len);
            let value = context.fresh(of, budget);
            items.insert(at, (None, value));
        }
        ItemRemove => {
            items.remove(rng.random_range(0..len));
        }
        ItemDuplicate => {
            let (from, at) = (rng.random_range(0..len), rng.random_range(0..=len));
            let copy = items[from].1.clone();
            items.insert(at, (None, copy));
        }
        _ => return swap(context, items).then_some(ItemSwap),
    }
    Some(op)
}

/// Swaps the values of two items (their keys stay); false if they are equal.
fn swap(context: &mut Context<'_>, items: &mut Items) -> bool {
    let rng = context.rng();
    let i = rng.random_range(0..items.len());
    let j = (i + rng.random_range(1..items.len())) % items.len();
    let (lo, hi) = (i.min(j), i.max(j));
    let (left, right) = items.split_at_mut(hi);
    if left[lo].1 == right[0].1 {
        return false;
    }
    std::mem::swap(&mut left[lo].1, &mut right[0].1);
    true
}

fn map(
    context: &mut Context<'_>,
    items: &mut Items,
    key: &Type,
    value: &Type,
    non_empty: bool,
    budget: usize,
) -> Option<MutationKind> {
    let len = items.len();
    let grow = len < context.generator.limits.max_items && context.schema().depth(value) <= budget;
    let ops = [
        (grow, ItemInsert),
        (len > usize::from(non_empty), ItemRemove),
        (grow && len > 0, ItemDuplicate),
        (len >= 2, ItemSwap),
        (len > 0, KeyChange),
    ];
    let op = pick(context, &ops)?;
    if op == ItemSwap {
        return swap(context, items).then_some(ItemSwap);
    }
    materialize(items);
    let done = map_edit(context, items, op, key, value, budget);
    canonicalize_items(items);
    done.then_some(op)
}

/// Insert, remove, duplicate or re-key an item of an array whose keys are
/// explicit; false if no new key turned up.
fn map_edit(
    context: &mut Context<'_>,
    items: &mut Items,
    op: MutationKind,
    key: &Type,
    value: &Type,
    budget: usize,
) -> bool {
    let len = items.len();
    if op == ItemRemove {
        let at = context.rng().random_range(0..len);
        items.remove(at);
        return true;
    }
    let Some(new_key) = fresh_key(context, key, items) else {
        return false;
    };
    let rng = context.rng();
    match op {
        ItemInsert => {
            let at = rng.random_range(0..=len);
            let fresh = context.fresh(value, budget);
            items.insert(at, (Some(new_key), fresh));
        }
        ItemDuplicate => {
            let (from, at) = (rng.random_range(0..len), rng.random_range(0..=len));
            let copy = items[from].1.clone();
            items.insert(at, (Some(new_key), copy));
        }
        _ => {
            let at = rng.random_range(0..len);
            items[at].0 = Some(new_key);
        }
    }
    true
}

/// A key of type `ty` that no item has (the items' keys are explicit),
/// as PHP stores it: generated, or now and then an operand of a recent
/// comparison.
fn fresh_key(context: &mut Context<'_>, ty: &Type, items: &Items) -> Option<Key> {
    for _ in 0..8 {
        let key = if context.rng().random_ratio(1, 4) {
            leaves::torc_key(context)
        } else {
            let generator = context.generator;
            generator.key(ty, context.rng())
        };
        let Some(key) = key else { continue };
        if key_fits(ty, key.effective()) && items.iter().all(|(k, _)| k.as_ref() != Some(&key)) {
            return Some(key);
        }
    }
    None
}

/// Adds or removes one optional key of a shape.
fn shape_toggle(
    context: &mut Context<'_>,
    items: &mut Items,
    shape: &[ShapeItem],
    budget: usize,
) -> Option<MutationKind> {
    materialize(items);
    let present = |s: &ShapeItem| items.iter().any(|(k, _)| k.as_ref() == Some(&s.key));
    let schema = context.schema();
    let togglable = |s: &&ShapeItem| s.optional && (present(s) || schema.depth(&s.ty) <= budget);
    let n = shape.iter().filter(togglable).count();
    if n == 0 {
        canonicalize_items(items);
        return None;
    }
    let k = context.rng().random_range(0..n);
    let item = shape.iter().filter(togglable).nth(k)?;
    match items
        .iter()
        .position(|(key, _)| key.as_ref() == Some(&item.key))
    {
        Some(at) => {
            items.remove(at);
        }
        None => {
            let order = |key: &Option<Key>| shape.iter().position(|s| Some(&s.key) == key.as_ref());
            let index = order(&Some(item.key.clone()));
            let at = items
                .iter()
                .position(|(key, _)| order(key) > index)
                .unwrap_or(items.len());
            let fresh = context.fresh(&item.ty, budget);
            items.insert(at, (Some(item.key.clone()), fresh));
        }
    }
    canonicalize_items(items);
    Some(ShapeToggle)
}

/// Another class of the object's type, or a trailing optional constructor
/// argument added or dropped.
pub(super) fn object(
    context: &mut Context<'_>,
    classes: &[String],
    value: &mut Value,
    budget: usize,
) -> Option<MutationKind> {
    let Value::Object { class, args } = value else {
        return None;
    };
    let schema = context.schema();
    let other = |c: &&String| !same_class(c, class) && schema.class_depth(c) <= budget;
    let others = classes.iter().filter(other).count();
    if others > 0 && context.rng().random() {
        let k = context.rng().random_range(0..others);
        let chosen = classes.iter().filter(other).nth(k)?;
        let generator = context.generator;
        *value = generator.object(std::slice::from_ref(chosen), budget, context.rng());
        return Some(ObjectClass);
    }
    let (_, found) = schema.class(class)?;
    arguments(context, &found.parameters, args, budget.saturating_sub(1)).map(|(_, kind)| kind)
}

pub(super) fn closure(
    context: &mut Context<'_>,
    returns: &Type,
    value: &mut Value,
    budget: usize,
) -> Option<MutationKind> {
    let Value::Closure(values) = value else {
        return None;
    };
    let len = values.len();
    let grow =
        len < context.generator.limits.max_items && context.schema().depth(returns) <= budget;
    let op = pick(context, &[(grow, ClosureAdd), (len > 0, ClosureRemove)])?;
    if op == ClosureAdd {
        let at = context.rng().random_range(0..=len);
        let fresh = context.fresh(returns, budget);
        values.insert(at, fresh);
    } else {
        let at = context.rng().random_range(0..len);
        values.remove(at);
    }
    Some(op)
}
