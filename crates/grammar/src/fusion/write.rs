//! Writing a fusion: the partner's code, renamed apart, as insertions into
//! the first program, and the fused program itself.

use std::io::Write;

use rand::{Rng, RngExt};

use super::roles::{Role, child_in_field, children};
use super::{Definition, Fuser, Insert, Link, Rename, ends_closed};
use crate::ParsedInput;
use crate::tree::NONE;

/// Suffixes tried (`_f1`, `_f2`, …) before giving up on renaming apart.
const SUFFIXES: usize = 100;

impl Fuser {
    /// Statement fusion: the partner's inline statements after the
    /// definition, its declarations after the top-level statement that
    /// holds the definition.
    pub(super) fn write_statements(
        &mut self,
        a: &ParsedInput,
        b: &ParsedInput,
        definition: Definition,
        link: Link,
        elements: &[u32],
    ) -> bool {
        if !self.choose_suffix(a, b) {
            return false;
        }
        let variable = a.text(definition.variable);
        let start = self.text.len();
        let mut hoisted = false;
        for &element in elements {
            let node = b.node(element);
            if node.has_error()
                || !ends_closed(b, element)
                || matches!(self.roles.of(node), Role::Skip | Role::Namespace)
            {
                continue;
            }
            if self.roles.is_hoisted(node) {
                hoisted = true;
                continue;
            }
            self.text.push(b'\n');
            let linked = (element == link.statement).then_some((link.node, variable));
            self.write_node(b, element, linked, None);
        }
        self.marks.statements = start..self.text.len();
        if !hoisted {
            self.inserts
                .push(Insert::new(definition.at, start..self.text.len()));
            return true;
        }
        let Some(anchor) = self.top_level_anchor(a, definition.variable) else {
            return false;
        };
        let hoist_start = self.text.len();
        for &element in elements {
            let node = b.node(element);
            if self.roles.is_hoisted(node) && !node.has_error() && ends_closed(b, element) {
                self.text.push(b'\n');
                let clash = self.clashing_declaration(a, b, element);
                self.write_node(b, element, None, clash);
            }
        }
        self.marks.hoisted = Some(hoist_start..self.text.len());
        if anchor == definition.at {
            self.inserts
                .push(Insert::new(anchor, start..self.text.len()));
        } else {
            self.inserts
                .push(Insert::new(definition.at, start..hoist_start));
            self.inserts
                .push(Insert::new(anchor, hoist_start..self.text.len()));
        }
        true
    }

    /// Member fusion: the partner's method joins the class whose method
    /// `method` defines the variable, and a call after the definition
    /// passes the variable to it.
    pub(super) fn plan_method<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        a: &ParsedInput,
        b: &ParsedInput,
        definition: Definition,
        method: u32,
        list: u32,
    ) -> bool {
        self.collect_promoted(b);
        self.elements.clear();
        for index in 0..b.nodes().len() as u32 {
            if self.is_portable_method(b, index) {
                self.elements.push(index);
            }
        }
        if self.elements.is_empty() || !self.choose_suffix(a, b) {
            return false;
        }
        let theirs = self.elements[rng.random_range(0..self.elements.len())];
        let Some(name) = child_in_field(b, theirs, self.roles.name) else {
            return false;
        };
        let clash = children(a, list).any(|m| {
            self.roles.of(a.node(m)) == Role::Method
                && child_in_field(a, m, self.roles.name)
                    .is_some_and(|n| a.text(n).eq_ignore_ascii_case(b.text(name)))
        });
        let start = self.text.len();
        let is_static = self.is_static(a, method) || self.is_static(b, theirs);
        self.text.extend_from_slice(if is_static {
            b"\nstatic::"
        } else {
            b"\n$this->"
        });
        self.text.extend_from_slice(b.text(name));
        if clash {
            self.text.extend_from_slice(&self.suffix);
        }
        self.text.push(b'(');
        let link = self.text.len();
        self.text.extend_from_slice(a.text(definition.variable));
        self.marks.link = link..self.text.len();
        self.text.extend_from_slice(b");");
        self.marks.statements = start..self.text.len();
        self.inserts
            .push(Insert::new(definition.at, start..self.text.len()));
        let method_start = self.text.len();
        self.text.push(b'\n');
        self.write_node(b, theirs, None, clash.then_some(name));
        self.marks.method = Some(method_start..self.text.len());
        let end = a.node(method).end;
        self.inserts
            .push(Insert::new(end, method_start..self.text.len()));
        true
    }

    /// The method of a class or trait `variable` is in (not in a closure
    /// inside it), and the class's member list.
    pub(super) fn method_of(&self, a: &ParsedInput, variable: u32) -> Option<(u32, u32)> {
        let mut at = a.node(variable).parent;
        while at != NONE && !self.roles.is_function_like(a.node(at)) {
            at = a.node(at).parent;
        }
        if at == NONE || self.roles.of(a.node(at)) != Role::Method || !ends_closed(a, at) {
            return None;
        }
        let list = a.node(at).parent;
        let class = a.node(list).parent;
        let fits = self.roles.of(a.node(list)) == Role::DeclarationList
            && class != NONE
            && self.roles.of(a.node(class)) == Role::Class;
        fits.then_some((at, list))
    }

    /// A method of the partner that can join another class: in a member
    /// list, with a body and a parameter, not magic (`__construct`), short
    /// enough.
    fn is_portable_method(&self, b: &ParsedInput, index: u32) -> bool {
        let node = b.node(index);
        if self.roles.of(node) != Role::Method
            || node.has_error()
            || node.len() > self.budget
            || !ends_closed(b, index)
            || self.roles.of_parent(b, index) != Role::DeclarationList
            || child_in_field(b, index, self.roles.body).is_none()
        {
            return false;
        }
        let named = child_in_field(b, index, self.roles.name);
        named.is_some_and(|n| !b.text(n).starts_with(b"__"))
            && children(b, index)
                .any(|c| children(b, c).any(|p| self.roles.of(b.node(p)) == Role::Parameter))
    }

    fn is_static(&self, input: &ParsedInput, method: u32) -> bool {
        children(input, method).any(|c| self.roles.of(input.node(c)) == Role::StaticModifier)
    }

    /// The name of the partner's declaration `declaration`, if the first
    /// program declares one of the same kind of name (case-insensitively,
    /// as PHP compares them): it is renamed apart too.
    fn clashing_declaration(
        &self,
        a: &ParsedInput,
        b: &ParsedInput,
        declaration: u32,
    ) -> Option<u32> {
        let name = child_in_field(b, declaration, self.roles.name)?;
        let text = b.text(name);
        let declared = (0..a.nodes().len() as u32).any(|i| {
            self.roles.is_hoisted(a.node(i))
                && child_in_field(a, i, self.roles.name)
                    .is_some_and(|n| a.text(n).eq_ignore_ascii_case(text))
        });
        declared.then_some(name)
    }

    /// The end of the top-level statement (of the program, or of a braced
    /// namespace) that holds `variable`, if code may follow it.
    fn top_level_anchor(&self, a: &ParsedInput, variable: u32) -> Option<u32> {
        let mut at = variable;
        loop {
            let parent = a.node(at).parent;
            if parent == NONE {
                return None;
            }
            let p = a.node(parent);
            let top = match self.roles.of(p) {
                Role::Program => true,
                Role::Compound => {
                    p.parent != NONE && self.roles.of(a.node(p.parent)) == Role::Namespace
                }
                _ => false,
            };
            if top {
                return ends_closed(a, at).then(|| a.node(at).end);
            }
            at = parent;
        }
    }

    /// A suffix `_fN` that neither program holds anywhere, so that no
    /// renamed name can equal a name of either.
    fn choose_suffix(&mut self, a: &ParsedInput, b: &ParsedInput) -> bool {
        for n in 1..=SUFFIXES {
            self.suffix.clear();
            write!(self.suffix, "_f{n}").expect("writing to a Vec");
            let found = |data: &[u8]| data.windows(self.suffix.len()).any(|w| w == self.suffix);
            if !found(a.data()) && !found(b.data()) {
                return true;
            }
        }
        false
    }

    /// Appends the partner's node `index` with its locals renamed apart,
    /// `name` (a declaration's name) suffixed too, and the link (a node
    /// inside it) replaced by the first program's variable.
    fn write_node(
        &mut self,
        b: &ParsedInput,
        index: u32,
        link: Option<(u32, &[u8])>,
        name: Option<u32>,
    ) {
        self.renames.clear();
        let node = *b.node(index);
        let identifiers = b.identifiers();
        let from = identifiers.partition_point(|&i| i < index);
        let to = identifiers.partition_point(|&i| i < node.subtree_end);
        for &variable in &identifiers[from..to] {
            if link.is_some_and(|(l, _)| b.contains(l, variable)) || !self.is_local(b, variable) {
                continue;
            }
            self.renames.push(Rename::of(b, variable, false));
        }
        if let Some((l, _)) = link {
            self.renames.push(Rename::of(b, l, true));
        }
        if let Some(name) = name {
            self.renames.push(Rename::of(b, name, false));
        }
        self.renames.sort_unstable_by_key(|r| r.start);
        let data = b.data();
        let mut copied = node.start as usize;
        for rename in &self.renames {
            let (start, end) = (rename.start as usize, rename.end as usize);
            self.text.extend_from_slice(&data[copied..start]);
            match link {
                Some((_, variable)) if rename.link => {
                    let at = self.text.len();
                    self.text.extend_from_slice(variable);
                    self.marks.link = at..self.text.len();
                }
                _ => {
                    self.text.extend_from_slice(&data[start..end]);
                    self.text.extend_from_slice(&self.suffix);
                }
            }
            copied = end;
        }
        self.text
            .extend_from_slice(&data[copied..node.end as usize]);
    }

    /// Writes the fused program to the fuser's buffer, and where its parts
    /// are to [`super::Fused`]. False if it would exceed `max_len`.
    pub(super) fn write(&mut self, a: &ParsedInput, max_len: usize) -> bool {
        self.inserts.sort_by_key(|insert| insert.at);
        let added: usize = self.inserts.iter().map(|i| i.text.len()).sum();
        if a.data().len() + added > max_len {
            return false;
        }
        let data = a.data();
        self.out.clear();
        let mut copied = 0;
        for insert in &mut self.inserts {
            self.out
                .extend_from_slice(&data[copied..insert.at as usize]);
            insert.placed = self.out.len();
            self.out.extend_from_slice(&self.text[insert.text.clone()]);
            copied = insert.at as usize;
        }
        self.out.extend_from_slice(&data[copied..]);
        let variable = *a.node(self.marks.variable);
        let shift: usize = self
            .inserts
            .iter()
            .filter(|i| i.at <= variable.start)
            .map(|i| i.text.len())
            .sum();
        self.fused.variable = variable.start as usize + shift..variable.end as usize + shift;
        self.fused.statements = self.place(self.marks.statements.clone());
        self.fused.link = self.place(self.marks.link.clone());
        self.fused.hoisted = self.marks.hoisted.clone().map(|r| self.place(r));
        self.fused.method = self.marks.method.clone().map(|r| self.place(r));
        self.fused.suffix.clone_from(&self.suffix);
        true
    }
}
