//! The nodes of an argument's value (itself, and every item, constructor
//! argument and returned value inside it), each with the type it must
//! keep, so that a mutation can pick one at random and change it in place.

use crate::conform::{fits, parameter_at};
use crate::schema::{Schema, Type};
use crate::value::{KeyRef, Value, keyed};

pub(crate) static MIXED: Type = Type::Mixed;

/// One node: its value, its declared type, and the object depth left there.
pub(super) struct Node<'v, 't> {
    pub value: &'v mut Value,
    pub ty: &'t Type,
    pub budget: usize,
}

/// The branch of a union the value is in (the first that fits; unions in
/// unions too), or `ty` itself.
pub(crate) fn resolve<'t>(schema: &'t Schema, ty: &'t Type, value: &Value) -> &'t Type {
    match ty {
        Type::Union { of } => match of.iter().find(|t| fits(schema, t, value)) {
            Some(branch) => resolve(schema, branch, value),
            None => ty,
        },
        ty => ty,
    }
}

/// How many nodes `value` has, itself included.
pub(super) fn count(schema: &Schema, value: &Value, ty: &Type) -> usize {
    let ty = resolve(schema, ty, value);
    let mut n = 1;
    for i in 0..children(value) {
        if let Some(child_ty) = child_type(schema, ty, value, i) {
            n += count(schema, child(value, i), child_ty);
        }
    }
    n
}

/// The `k`th node in pre-order (0: the value itself).
pub(super) fn locate<'v, 't>(
    schema: &'t Schema,
    value: &'v mut Value,
    ty: &'t Type,
    budget: usize,
    k: usize,
) -> Node<'v, 't> {
    if k == 0 {
        return Node { value, ty, budget };
    }
    let mut k = k - 1;
    let resolved = resolve(schema, ty, value);
    let child_budget = match value {
        Value::Object { .. } => budget.saturating_sub(1),
        _ => budget,
    };
    for i in 0..children(value) {
        let Some(child_ty) = child_type(schema, resolved, value, i) else {
            continue;
        };
        let n = count(schema, child(value, i), child_ty);
        if k < n {
            return locate(schema, child_mut(value, i), child_ty, child_budget, k);
        }
        k -= n;
    }
    Node { value, ty, budget }
}

fn children(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.len(),
        Value::Object { args: values, .. } | Value::Closure(values) => values.len(),
        _ => 0,
    }
}

fn child(value: &Value, i: usize) -> &Value {
    match value {
        Value::Array(items) => &items[i].1,
        Value::Object { args: values, .. } | Value::Closure(values) => &values[i],
        _ => unreachable!("a value without children"),
    }
}

fn child_mut(value: &mut Value, i: usize) -> &mut Value {
    match value {
        Value::Array(items) => &mut items[i].1,
        Value::Object { args: values, .. } | Value::Closure(values) => &mut values[i],
        _ => unreachable!("a value without children"),
    }
}

/// The type the `i`th child of `value` (of type `ty`, resolved) must keep.
pub(crate) fn child_type<'t>(
    schema: &'t Schema,
    ty: &'t Type,
    value: &Value,
    i: usize,
) -> Option<&'t Type> {
    match (ty, value) {
        (Type::List { of, .. }, Value::Array(_)) => Some(of),
        (Type::Array { value: of, .. }, Value::Array(_)) => Some(of),
        (Type::Mixed, Value::Array(_)) => Some(&MIXED),
        (Type::Shape { items: shape }, Value::Array(items)) => {
            let (key, _) = keyed(items).nth(i)?;
            let key: KeyRef<'_> = key?;
            shape
                .iter()
                .find(|s| s.key.effective() == key)
                .map(|s| &s.ty)
        }
        (Type::Object { .. }, Value::Object { class, .. }) => {
            let (_, found) = schema.class(class)?;
            parameter_at(&found.parameters, i).map(|p| &p.ty)
        }
        (Type::Closure { returns }, Value::Closure(_)) => Some(returns),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::rich;
    use crate::text::parse_value;

    #[test]
    fn nodes_carry_their_types_and_depth() {
        let schema = rich();
        let ty = &schema.parameters[4].ty;
        let mut value = parse_value(b"new App\\Circle(new App\\Point(1, 2, \"l\"), 0.5)").unwrap();
        assert_eq!(count(&schema, &value, ty), 6);
        let node = locate(&schema, &mut value, ty, 3, 3);
        assert_eq!(*node.value, Value::Int(2));
        assert_eq!(
            *node.ty,
            Type::Int {
                min: None,
                max: None
            }
        );
        assert_eq!(node.budget, 1);
        let node = locate(&schema, &mut value, ty, 3, 4);
        assert_eq!(node.ty.to_string(), "string|null");
        assert_eq!(resolve(&schema, node.ty, node.value).to_string(), "string");
        let node = locate(&schema, &mut value, ty, 3, 5);
        assert_eq!(*node.ty, Type::Float);
        assert_eq!(node.budget, 2);
    }
}
