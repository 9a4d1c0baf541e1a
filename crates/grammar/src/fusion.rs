//! Dataflow fusion of two PHP programs, after FlowFusion (Jiang et al.,
//! docs/grammar.md#dataflow-fusion): a variable the first program defines
//! flows into statements of the second.
//!
//! - **Statement fusion.** After the first program defines `$a` (an
//!   assignment statement, a parameter, a foreach binding), in the same
//!   statement list, go a few statements of the second program around one
//!   that reads its `$b` (or passes an argument to a call): that read (or
//!   argument) becomes `$a`. The second program's locals are renamed apart
//!   with a fresh suffix; its function, class, interface, trait and enum
//!   declarations among those statements go to the first program's top
//!   level instead, after the top-level statement the splice is in.
//! - **Member fusion.** When `$a` is defined in a method of a class (or
//!   trait), a method of the second program, renamed apart, joins that
//!   class, and after the definition `$this->m($a);` (`static::m($a);` when
//!   either method is static) feeds `$a` to its first parameter.
//!
//! The fused program is re-parsed; one with an ERROR or MISSING node is
//! dropped. Work is bounded: inputs over [`MAX_INPUT`] bytes and partners
//! over [`MAX_PARTNER`] are left alone, at most [`MAX_SPLICE`] bytes of the
//! partner's statements are spliced, and at most [`PARSES`] fused programs
//! are parsed per call.

mod roles;
#[cfg(test)]
mod tests;
mod write;

use std::fmt;
use std::ops::Range;

use rand::{Rng, RngExt};
use tree_sitter::Parser;

use crate::tree::NONE;
use crate::{Grammar, ParsedInput};
use roles::{Role, Roles, child_in_field, children, is_global_name};

/// The longest program fusion splices into: the fused program is parsed
/// again, at ~0.4 ms a KB.
pub const MAX_INPUT: usize = 4096;
/// The longest program fusion takes statements from (only read).
pub const MAX_PARTNER: usize = 16 * 1024;
/// The most bytes of the partner's statements (or method) spliced in.
pub const MAX_SPLICE: usize = 1024;
/// Less room than this for the partner's code is too little to try.
const MIN_SPLICE: usize = 8;
/// Fused programs parsed per call, at most.
pub const PARSES: usize = 2;
/// Random picks of a definition or a use before a plan gives up.
const PICKS: usize = 8;
/// Statements taken before and after the one that holds the use, at most.
const MAX_BEFORE: usize = 4;
const MAX_AFTER: usize = 2;

/// Whether fusion knows this grammar (php only).
pub fn supports(grammar: &Grammar) -> bool {
    grammar.name() == "php"
}

/// Where a fused program's parts are, in its bytes (for tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fused {
    /// The first program's variable at its definition.
    pub variable: Range<usize>,
    /// The partner's statements (statement fusion), or the call of its
    /// method (member fusion).
    pub statements: Range<usize>,
    /// The first program's variable where the partner's use, argument or
    /// parameter was.
    pub link: Range<usize>,
    /// Declarations moved to the top level.
    pub hoisted: Option<Range<usize>>,
    /// The partner's method, in a class of the first program.
    pub method: Option<Range<usize>>,
    /// What the partner's locals were given, such as `_f1`.
    pub suffix: Vec<u8>,
}

/// Text positions of [`Fused`]'s parts, before they are placed.
#[derive(Debug, Clone, Default)]
struct Marks {
    /// The first program's variable node.
    variable: u32,
    statements: Range<usize>,
    link: Range<usize>,
    hoisted: Option<Range<usize>>,
    method: Option<Range<usize>>,
}

/// Text to insert at byte `at` of the first program.
#[derive(Debug, Clone)]
struct Insert {
    at: u32,
    text: Range<usize>,
    /// Where the text starts in the fused program, once written.
    placed: usize,
}

impl Insert {
    fn new(at: u32, text: Range<usize>) -> Insert {
        Insert {
            at,
            text,
            placed: 0,
        }
    }
}

/// How a variable node is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Definition,
    Read,
    /// A property's name (`Foo::$p`, `public $p;`): not a local.
    Property,
}

/// A variable the first program defines, and the byte code may go after.
#[derive(Debug, Clone, Copy)]
struct Definition {
    variable: u32,
    at: u32,
}

/// The partner's use (a variable read, or a call's argument), and the
/// statement of its scope's list that holds it.
#[derive(Debug, Clone, Copy)]
struct Link {
    node: u32,
    statement: u32,
    list: u32,
}

/// What a renamed copy of one node replaces.
#[derive(Debug, Clone, Copy)]
struct Rename {
    start: u32,
    end: u32,
    /// The link (becomes the first program's variable), else a suffixed name.
    link: bool,
}

impl Rename {
    fn of(input: &ParsedInput, index: u32, link: bool) -> Rename {
        let node = input.node(index);
        Rename {
            start: node.start,
            end: node.end,
            link,
        }
    }
}

/// Fuses PHP programs. Holds a parser (to check the fused program) and
/// scratch space; one per worker.
pub struct Fuser {
    roles: Roles,
    parser: Parser,
    grammar: Grammar,
    text: Vec<u8>,
    inserts: Vec<Insert>,
    definitions: Vec<Definition>,
    marks: Marks,
    elements: Vec<u32>,
    renames: Vec<Rename>,
    /// The partner's promoted constructor parameters: never renamed.
    promoted: Vec<u32>,
    suffix: Vec<u8>,
    out: Vec<u8>,
    fused: Fused,
    /// Bytes of the partner's code this call may splice: [`MAX_SPLICE`],
    /// or less when `max_len` leaves less room (the renamed names and the
    /// line breaks need the rest).
    budget: usize,
}

impl fmt::Debug for Fuser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fuser")
            .field("grammar", &self.grammar.name())
            .finish()
    }
}

impl Clone for Fuser {
    fn clone(&self) -> Fuser {
        Fuser::new(&self.grammar).expect("it was built from this grammar")
    }
}

impl Fuser {
    /// A fuser for `grammar`, if fusion supports it ([`supports`]).
    pub fn new(grammar: &Grammar) -> Option<Fuser> {
        if !supports(grammar) {
            return None;
        }
        let mut parser = Parser::new();
        parser.set_language(grammar.language()).ok()?;
        Some(Fuser {
            roles: Roles::new(grammar.language()),
            parser,
            grammar: grammar.clone(),
            text: Vec::new(),
            inserts: Vec::new(),
            definitions: Vec::new(),
            marks: Marks::default(),
            elements: Vec::new(),
            renames: Vec::new(),
            promoted: Vec::new(),
            suffix: Vec::new(),
            out: Vec::new(),
            fused: Fused::default(),
            budget: 0,
        })
    }

    /// What the last successful [`Fuser::fuse`] did.
    #[cfg(test)]
    pub(crate) fn last(&self) -> &Fused {
        &self.fused
    }

    /// Fuses `partner` into `input`, writing the program to `out` (at most
    /// `max_len` bytes). False, and `out` untouched, when it cannot: an
    /// input too long or with a syntax error, nothing to link, or fused
    /// programs that did not parse.
    pub fn fuse<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        input: &ParsedInput,
        partner: &ParsedInput,
        max_len: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        if input.data().len() > MAX_INPUT
            || partner.data().len() > MAX_PARTNER
            || input.has_error()
            || input.identifiers().is_empty()
            || partner.identifiers().is_empty()
        {
            return false;
        }
        let room = max_len.saturating_sub(input.data().len());
        self.budget = MAX_SPLICE.min(room * 4 / 5);
        if self.budget < MIN_SPLICE {
            return false;
        }
        for _ in 0..PARSES {
            if !self.plan(rng, input, partner) || !self.write(input, max_len) {
                continue;
            }
            self.parser.reset();
            let parsed = self.parser.parse(&self.out, None);
            if parsed.is_some_and(|tree| !tree.root_node().has_error()) {
                out.clear();
                out.extend_from_slice(&self.out);
                return true;
            }
        }
        false
    }

    /// Chooses the definition, the partner's code and the link, and
    /// records the text to insert.
    fn plan<R: Rng + ?Sized>(&mut self, rng: &mut R, a: &ParsedInput, b: &ParsedInput) -> bool {
        self.text.clear();
        self.inserts.clear();
        self.marks = Marks::default();
        let Some(definition) = self.pick_definition(rng, a) else {
            return false;
        };
        self.marks.variable = definition.variable;
        if rng.random::<bool>()
            && let Some((method, list)) = self.method_of(a, definition.variable)
            && self.plan_method(rng, a, b, definition, method, list)
        {
            return true;
        }
        self.plan_statements(rng, a, b, definition)
    }

    /// A random definition of the first program's, among all of them.
    fn pick_definition<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        a: &ParsedInput,
    ) -> Option<Definition> {
        self.definitions.clear();
        for &variable in a.identifiers() {
            if let Some(at) = self.insertion_after(a, variable) {
                self.definitions.push(Definition { variable, at });
            }
        }
        (!self.definitions.is_empty())
            .then(|| self.definitions[rng.random_range(0..self.definitions.len())])
    }

    /// If `variable` is defined there, where statements may follow the
    /// definition in its scope: after an assignment statement in a
    /// statement list, or at the start of the body of a function whose
    /// parameter, or a foreach whose binding, it is.
    fn insertion_after(&self, a: &ParsedInput, variable: u32) -> Option<u32> {
        let roles = &self.roles;
        let node = a.node(variable);
        let parent = node.parent;
        match roles.of(a.node(parent)) {
            Role::Assign if node.field == roles.left => {
                let statement = a.node(parent).parent;
                let s = a.node(statement);
                let fits = roles.of(s) == Role::ExpressionStatement
                    && s.parent != NONE
                    && roles.is_statement_list(a.node(s.parent))
                    && ends_closed(a, statement);
                fits.then_some(s.end)
            }
            Role::Parameter if node.field == roles.name => {
                let function = a.node(a.node(parent).parent).parent;
                if function == NONE || !roles.is_function_like(a.node(function)) {
                    return None;
                }
                self.body_start(a, function)
            }
            Role::Foreach if children(a, parent).next() != Some(variable) => {
                self.body_start(a, parent)
            }
            Role::Binding if roles.of_parent(a, parent) == Role::Foreach => {
                self.body_start(a, a.node(parent).parent)
            }
            _ => None,
        }
    }

    /// Just inside the `{` of `owner`'s body, if it is a block.
    fn body_start(&self, a: &ParsedInput, owner: u32) -> Option<u32> {
        let body = child_in_field(a, owner, self.roles.body)?;
        (self.roles.of(a.node(body)) == Role::Compound).then(|| a.node(body).start + 1)
    }

    fn classify(&self, input: &ParsedInput, variable: u32) -> Use {
        let roles = &self.roles;
        let node = input.node(variable);
        let parent = node.parent;
        let named = node.field == roles.name;
        match roles.of(input.node(parent)) {
            Role::Assign if node.field == roles.left => Use::Definition,
            Role::Parameter | Role::Declares if named => Use::Definition,
            Role::Promoted | Role::PropertyName if named => Use::Property,
            Role::Foreach if children(input, parent).next() != Some(variable) => Use::Definition,
            Role::Binding if roles.of_parent(input, parent) == Role::Foreach => Use::Definition,
            _ => Use::Read,
        }
    }

    /// A local of the partner: renamed apart.
    fn is_local(&self, b: &ParsedInput, variable: u32) -> bool {
        let name = b.text(variable);
        self.classify(b, variable) != Use::Property
            && !is_global_name(name)
            && !self.promoted.iter().any(|&p| b.text(p) == name)
    }

    /// Collects the partner's promoted constructor parameters: their names
    /// are properties too, so never renamed.
    fn collect_promoted(&mut self, b: &ParsedInput) {
        self.promoted.clear();
        for &variable in b.identifiers() {
            if self.roles.of_parent(b, variable) == Role::Promoted {
                self.promoted.push(variable);
            }
        }
    }

    fn plan_statements<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        a: &ParsedInput,
        b: &ParsedInput,
        definition: Definition,
    ) -> bool {
        self.collect_promoted(b);
        let Some(link) = self.pick_link(rng, b) else {
            return false;
        };
        if !self.select_statements(rng, b, link) {
            return false;
        }
        let elements = std::mem::take(&mut self.elements);
        let planned = self.write_statements(a, b, definition, link, &elements);
        self.elements = elements;
        planned
    }

    /// A read of a local the partner also defines, or an argument of one
    /// of its calls, in a statement that can be spliced.
    fn pick_link<R: Rng + ?Sized>(&self, rng: &mut R, b: &ParsedInput) -> Option<Link> {
        let arguments = b.sites_of_kind(self.roles.argument);
        let identifiers = b.identifiers();
        (0..PICKS).find_map(|_| {
            let node = if !arguments.is_empty() && rng.random_ratio(1, 3) {
                let argument = arguments[rng.random_range(0..arguments.len())];
                self.is_plain_argument(b, argument).then_some(argument)?
            } else {
                let variable = identifiers[rng.random_range(0..identifiers.len())];
                self.is_linkable_read(b, variable).then_some(variable)?
            };
            let (statement, list) = self.scope_statement(b, node)?;
            let s = b.node(statement);
            let inline = !s.has_error()
                && ends_closed(b, statement)
                && !self.roles.is_hoisted(s)
                && !matches!(self.roles.of(s), Role::Skip | Role::Namespace);
            inline.then_some(Link {
                node,
                statement,
                list,
            })
        })
    }

    /// An argument without a name or `...`: `$a` can take its place.
    fn is_plain_argument(&self, b: &ParsedInput, argument: u32) -> bool {
        children(b, argument).all(|c| {
            let child = b.node(c);
            child.field != self.roles.name && self.roles.of(child) != Role::VariadicUnpacking
        })
    }

    /// A read of a local that the partner defines somewhere.
    fn is_linkable_read(&self, b: &ParsedInput, variable: u32) -> bool {
        if self.classify(b, variable) != Use::Read || !self.is_local(b, variable) {
            return false;
        }
        let name = b.text(variable);
        b.identifiers()
            .iter()
            .any(|&d| b.text(d) == name && self.classify(b, d) == Use::Definition)
    }

    /// The statement holding `node` in the list of its scope (the program,
    /// a namespace's block, or a function's body), and that list; None in
    /// a class body outside a method.
    fn scope_statement(&self, b: &ParsedInput, node: u32) -> Option<(u32, u32)> {
        let mut at = node;
        loop {
            let parent = b.node(at).parent;
            if parent == NONE {
                return None;
            }
            let p = b.node(parent);
            match self.roles.of(p) {
                Role::Program => return Some((at, parent)),
                Role::Compound
                    if p.parent != NONE
                        && (self.roles.is_function_like(b.node(p.parent))
                            || self.roles.of(b.node(p.parent)) == Role::Namespace) =>
                {
                    return Some((at, parent));
                }
                Role::DeclarationList => return None,
                _ => at = parent,
            }
        }
    }

    /// Fills `elements` with the link's statement and up to a few of its
    /// neighbours before and after, within the budget.
    fn select_statements<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        b: &ParsedInput,
        link: Link,
    ) -> bool {
        self.elements.clear();
        self.elements.extend(children(b, link.list).filter(|&c| {
            let node = b.node(c);
            node.is_named() && !node.is_extra()
        }));
        let Some(at) = self.elements.iter().position(|&e| e == link.statement) else {
            return false;
        };
        let mut total = b.node(link.statement).len();
        if total > self.budget {
            return false;
        }
        let (mut lo, mut hi) = (at, at);
        let len = |i: usize| b.node(self.elements[i]).len();
        for _ in 0..rng.random_range(0..=MAX_BEFORE) {
            if lo == 0 || total + len(lo - 1) > self.budget {
                break;
            }
            lo -= 1;
            total += len(lo);
        }
        for _ in 0..rng.random_range(0..=MAX_AFTER) {
            if hi + 1 == self.elements.len() || total + len(hi + 1) > self.budget {
                break;
            }
            hi += 1;
            total += len(hi);
        }
        self.elements.truncate(hi + 1);
        self.elements.drain(..lo);
        true
    }
}

impl Fuser {
    /// Where the text range `range` of the inserts is in the fused program.
    fn place(&self, range: Range<usize>) -> Range<usize> {
        self.inserts
            .iter()
            .find(|i| i.text.start <= range.start && range.end <= i.text.end)
            .map_or(0..0, |i| {
                let start = i.placed + range.start - i.text.start;
                start..start + range.len()
            })
    }
}

/// Does `index` end with its own `;` or `}`, so that code may follow it
/// (not a statement closed by `?>`)?
fn ends_closed(input: &ParsedInput, index: u32) -> bool {
    let node = input.node(index);
    !node.is_contextual()
        && !node.is_empty()
        && matches!(input.data()[node.end as usize - 1], b';' | b'}')
}
