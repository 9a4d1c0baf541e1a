//! The grammar mutations. Each picks subtrees of a parsed input, records
//! what replaces them as edits (byte range → new text), and splices the
//! edits into the caller's buffer in one pass: the input is never
//! re-parsed, and every byte outside the edits is kept as it was.

use std::fmt;

use rand::{Rng, RngExt};

use crate::fusion::Fuser;
use crate::{Fragment, FragmentPool, Grammar, Node, ParsedInput};

/// Sites tried before a mutation gives up on an input.
const ATTEMPTS: usize = 8;

/// The grammar mutations, named as they appear in `MS:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrammarMutation {
    /// A subtree becomes a pool fragment of the same kind.
    Replace,
    /// A pool fragment is added next to a sibling of its kind, with the
    /// separator the list uses.
    Insert,
    /// A subtree is repeated next to itself.
    Duplicate,
    /// A subtree that has a sibling of its kind is removed with one separator.
    Delete,
    /// Two subtrees of the same kind change places.
    Swap,
    /// A subtree becomes a subtree of the same kind from another corpus entry.
    CrossOver,
    /// For code grammars, after LangFuzz: a pool fragment replaces a subtree
    /// or joins its list (as Replace or Insert), its identifiers renamed to
    /// identifiers in scope where it lands.
    Adapt,
    /// PHP only, when enabled ([`GrammarMutator::enable_fusion`]), after
    /// FlowFusion: statements (or a method) of another corpus entry, its
    /// locals renamed apart, spliced in after a variable is defined, with
    /// that variable in place of one of their uses (docs/grammar.md).
    Fusion,
}

impl GrammarMutation {
    /// Every mutation; Fusion last, so that without it the others are
    /// `ALL[..ALL.len() - 1]`.
    pub const ALL: [GrammarMutation; 8] = [
        GrammarMutation::Replace,
        GrammarMutation::Insert,
        GrammarMutation::Duplicate,
        GrammarMutation::Delete,
        GrammarMutation::Swap,
        GrammarMutation::CrossOver,
        GrammarMutation::Adapt,
        GrammarMutation::Fusion,
    ];

    /// The name printed in `MS:`.
    pub fn name(self) -> &'static str {
        match self {
            GrammarMutation::Replace => "GrammarReplace",
            GrammarMutation::Insert => "GrammarInsert",
            GrammarMutation::Duplicate => "GrammarDuplicate",
            GrammarMutation::Delete => "GrammarDelete",
            GrammarMutation::Swap => "GrammarSwap",
            GrammarMutation::CrossOver => "GrammarCrossOver",
            GrammarMutation::Adapt => "GrammarAdapt",
            GrammarMutation::Fusion => "GrammarFusion",
        }
    }
}

impl fmt::Display for GrammarMutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a mutation reads: the input to mutate, a second corpus entry for
/// CrossOver and Fusion, and the fragment pool.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    pub input: &'a ParsedInput,
    pub partner: Option<&'a ParsedInput>,
    pub pool: &'a FragmentPool,
}

/// Replace bytes `start..end` of the input by `text[text_start..text_end]`
/// of the mutator's scratch text.
#[derive(Debug, Clone, Copy)]
struct Edit {
    start: u32,
    end: u32,
    text_start: u32,
    text_end: u32,
}

/// Applies grammar mutations. Holds only scratch space, reused between
/// calls, so steady-state mutation does not allocate. One per worker.
#[derive(Debug, Clone)]
pub struct GrammarMutator {
    code: bool,
    edits: Vec<Edit>,
    text: Vec<u8>,
    /// Identifier nodes of the input an adapted fragment may be renamed to.
    candidates: Vec<u32>,
    /// For Adapt: (span in the fragment, the input identifier it becomes).
    renames: Vec<(u32, u32, u32)>,
    /// Set when Fusion is on.
    fusion: Option<Box<Fuser>>,
    /// Fusions tried and made since the last [`GrammarMutator::take_fusion_counts`].
    fusion_counts: (u64, u64),
}

impl GrammarMutator {
    /// `code`: whether the grammar is a code grammar
    /// ([`crate::GrammarInfo::code`]), which enables Adapt.
    pub fn new(code: bool) -> GrammarMutator {
        GrammarMutator {
            code,
            edits: Vec::new(),
            text: Vec::new(),
            candidates: Vec::new(),
            renames: Vec::new(),
            fusion: None,
            fusion_counts: (0, 0),
        }
    }

    /// Adds Fusion to the mutations drawn, if `grammar` is one it knows
    /// (php, [`crate::fusion_supported`]); returns whether it did.
    pub fn enable_fusion(&mut self, grammar: &Grammar) -> bool {
        self.fusion = Fuser::new(grammar).map(Box::new);
        self.fusion.is_some()
    }

    /// Fusions tried and made since the last call.
    pub fn take_fusion_counts(&mut self) -> (u64, u64) {
        std::mem::take(&mut self.fusion_counts)
    }

    /// Applies one grammar mutation, picked at random among those that can
    /// apply, writing the mutant to `out` (at most `max_len` bytes).
    /// Returns which one, or None if none could (no valid subtree, nothing
    /// in the pool, too long): then `out` is untouched and the caller falls
    /// back to byte mutation.
    pub fn mutate<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        sources: Sources<'_>,
        max_len: usize,
        out: &mut Vec<u8>,
    ) -> Option<GrammarMutation> {
        if sources.input.sites().is_empty() {
            return None;
        }
        let all = &GrammarMutation::ALL;
        let drawn = if self.fusion.is_some() {
            &all[..]
        } else {
            &all[..all.len() - 1]
        };
        for _ in 0..ATTEMPTS {
            let kind = drawn[rng.random_range(0..drawn.len())];
            if self.apply(kind, rng, sources, max_len, out) {
                return Some(kind);
            }
        }
        None
    }

    /// Applies the mutation `kind`; false (and `out` untouched) if it cannot
    /// apply to this input.
    pub fn apply<R: Rng + ?Sized>(
        &mut self,
        kind: GrammarMutation,
        rng: &mut R,
        sources: Sources<'_>,
        max_len: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        self.edits.clear();
        self.text.clear();
        if sources.input.sites().is_empty() {
            return false;
        }
        if kind == GrammarMutation::Fusion {
            return self.fuse(rng, sources, max_len, out);
        }
        let planned = match kind {
            GrammarMutation::Replace => self.replace(rng, sources, max_len),
            GrammarMutation::Insert => self.insert(rng, sources, max_len, false),
            GrammarMutation::Duplicate => self.insert(rng, sources, max_len, true),
            GrammarMutation::Delete => self.delete(rng, sources.input),
            GrammarMutation::Swap => self.swap(rng, sources.input),
            GrammarMutation::CrossOver => self.cross_over(rng, sources, max_len),
            GrammarMutation::Adapt => self.code && self.adapt(rng, sources, max_len),
            GrammarMutation::Fusion => false,
        };
        planned && self.splice(sources.input.data(), max_len, out)
    }

    /// Fusion writes the fused program itself: it re-parses it to check it.
    fn fuse<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        sources: Sources<'_>,
        max_len: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        let (Some(fuser), Some(partner)) = (&mut self.fusion, sources.partner) else {
            return false;
        };
        let made = fuser.fuse(rng, sources.input, partner, max_len, out);
        self.fusion_counts.0 += 1;
        self.fusion_counts.1 += u64::from(made);
        made
    }

    fn random_site<R: Rng + ?Sized>(rng: &mut R, input: &ParsedInput) -> u32 {
        let sites = input.sites();
        sites[rng.random_range(0..sites.len())]
    }

    /// A random site and its node.
    fn random_node<R: Rng + ?Sized>(rng: &mut R, input: &ParsedInput) -> (u32, Node) {
        let site = Self::random_site(rng, input);
        (site, *input.node(site))
    }

    fn push_edit(&mut self, start: u32, end: u32, text: &[u8]) {
        self.write_edit(start, end, |out| out.extend_from_slice(text));
    }

    /// Replaces `start..end` by what `write` writes.
    fn write_edit(&mut self, start: u32, end: u32, write: impl FnOnce(&mut Vec<u8>)) {
        let text_start = self.text.len() as u32;
        write(&mut self.text);
        self.edits.push(Edit {
            start,
            end,
            text_start,
            text_end: self.text.len() as u32,
        });
    }

    fn replace<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        sources: Sources<'_>,
        max_len: usize,
    ) -> bool {
        let pool = sources.pool;
        self.replace_site(rng, sources.input, max_len, |rng, kind| {
            random_fragment(rng, pool, kind).map(Fragment::text)
        })
    }

    fn cross_over<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        sources: Sources<'_>,
        max_len: usize,
    ) -> bool {
        let Some(partner) = sources.partner else {
            return false;
        };
        self.replace_site(rng, sources.input, max_len, |rng, kind| {
            let theirs = partner.sites_of_kind(kind);
            (!theirs.is_empty()).then(|| partner.text(theirs[rng.random_range(0..theirs.len())]))
        })
    }

    /// Replaces a random site by the text `pick` offers for its kind, if
    /// that differs from the site's and fits within `max_len`.
    fn replace_site<'a, R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        input: &ParsedInput,
        max_len: usize,
        mut pick: impl FnMut(&mut R, u16) -> Option<&'a [u8]>,
    ) -> bool {
        for _ in 0..ATTEMPTS {
            let (site, node) = Self::random_node(rng, input);
            let Some(text) = pick(rng, node.kind) else {
                continue;
            };
            if text == input.text(site) || !fits(input, node.len(), text.len(), max_len) {
                continue;
            }
            self.push_edit(node.start, node.end, text);
            return true;
        }
        false
    }

    fn swap<R: Rng + ?Sized>(&mut self, rng: &mut R, input: &ParsedInput) -> bool {
        for _ in 0..ATTEMPTS {
            let a = Self::random_site(rng, input);
            let same = input.sites_of_kind(input.node(a).kind);
            if same.len() < 2 {
                continue;
            }
            let b = same[rng.random_range(0..same.len())];
            if input.contains(a, b) || input.contains(b, a) || input.text(a) == input.text(b) {
                continue;
            }
            let (na, nb) = (*input.node(a), *input.node(b));
            self.push_edit(na.start, na.end, input.text(b));
            self.push_edit(nb.start, nb.end, input.text(a));
            return true;
        }
        false
    }

    /// Insert (a pool fragment) or Duplicate (the site itself) next to a
    /// site, in a list where its kind repeats.
    fn insert<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        sources: Sources<'_>,
        max_len: usize,
        duplicate: bool,
    ) -> bool {
        let input = sources.input;
        for _ in 0..ATTEMPTS {
            let (site, node) = Self::random_node(rng, input);
            let Some(separator) = list_separator(rng, sources, site) else {
                continue;
            };
            let new = if duplicate {
                if node.is_contextual() {
                    continue;
                }
                input.text(site)
            } else {
                let Some(fragment) = random_fragment(rng, sources.pool, node.kind) else {
                    continue;
                };
                fragment.text()
            };
            if !fits(input, 0, new.len() + separator.len(), max_len) {
                continue;
            }
            self.insert_beside(rng, &node, separator, |text| text.extend_from_slice(new));
            return true;
        }
        false
    }

    fn delete<R: Rng + ?Sized>(&mut self, rng: &mut R, input: &ParsedInput) -> bool {
        for _ in 0..ATTEMPTS {
            let (site, node) = Self::random_node(rng, input);
            let Some(gap) = list_gap(rng, input, site) else {
                continue;
            };
            let (start, end) = if gap.after {
                (node.start, gap.end)
            } else {
                (gap.start, node.end)
            };
            self.push_edit(start, end, b"");
            return true;
        }
        false
    }

    /// A pool fragment with identifiers, renamed to identifiers in scope,
    /// replaces a site or, half the time when the site is in a list, joins
    /// the list next to it.
    fn adapt<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        sources: Sources<'_>,
        max_len: usize,
    ) -> bool {
        let input = sources.input;
        if input.identifiers().is_empty() {
            return false;
        }
        for _ in 0..ATTEMPTS {
            let (site, node) = Self::random_node(rng, input);
            let Some(fragment) = random_fragment(rng, sources.pool, node.kind) else {
                continue;
            };
            if fragment.identifiers().is_empty() {
                continue;
            }
            let separator = if rng.random::<bool>() {
                list_separator(rng, sources, site)
            } else {
                None
            };
            self.collect_candidates(input, site, separator.is_none());
            if self.candidates.is_empty() {
                continue;
            }
            self.choose_renames(rng, input, fragment);
            let (text_len, edits_len) = (self.text.len(), self.edits.len());
            let renames = std::mem::take(&mut self.renames);
            let write = |text: &mut Vec<u8>| write_renamed(text, input, fragment, &renames);
            let added = match separator {
                Some(separator) => {
                    self.insert_beside(rng, &node, separator, write);
                    0
                }
                None => {
                    self.write_edit(node.start, node.end, write);
                    node.len()
                }
            };
            self.renames = renames;
            if !fits(input, added, self.text.len() - text_len, max_len) {
                self.text.truncate(text_len);
                self.edits.truncate(edits_len);
                continue;
            }
            return true;
        }
        false
    }

    /// Maps each distinct name in `fragment` to one of the candidates of
    /// the same kind.
    fn choose_renames<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        input: &ParsedInput,
        fragment: &Fragment,
    ) {
        self.renames.clear();
        let text = fragment.text();
        for span in fragment.identifiers() {
            let name = &text[span.start as usize..span.end as usize];
            if find_rename(&self.renames, text, name).is_some() {
                continue;
            }
            let from = rng.random_range(0..self.candidates.len());
            let chosen = self.candidates[from..]
                .iter()
                .chain(&self.candidates[..from])
                .find(|&&c| input.node(c).kind == span.kind);
            if let Some(&chosen) = chosen {
                self.renames.push((span.start, span.end, chosen));
            }
        }
    }

    /// Identifiers visible where `site` is: those in its scope (the nearest
    /// enclosing function, or the whole input), outside `site` itself if it
    /// is being replaced. If the scope has none, any such identifier.
    fn collect_candidates(&mut self, input: &ParsedInput, site: u32, replaced: bool) {
        let identifiers = input.identifiers();
        let outside = |&&i: &&u32| !replaced || !input.contains(site, i);
        let scope = input.scope_of(site);
        let end = input.node(scope).subtree_end;
        let from = identifiers.partition_point(|&i| i < scope);
        let to = identifiers.partition_point(|&i| i < end);
        self.candidates.clear();
        self.candidates
            .extend(identifiers[from..to].iter().filter(outside));
        if self.candidates.is_empty() {
            self.candidates.extend(identifiers.iter().filter(outside));
        }
    }

    /// Adds one insertion edit next to `node`, on a random side: `separator`
    /// then the new element after it, or the element then `separator`
    /// before it. Text after a contextual node would lose what closes it,
    /// so it goes before.
    fn insert_beside<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        node: &Node,
        separator: &[u8],
        write: impl FnOnce(&mut Vec<u8>),
    ) {
        let after = rng.random::<bool>() && !node.is_contextual();
        let text_start = self.text.len() as u32;
        if after {
            self.text.extend_from_slice(separator);
            write(&mut self.text);
        } else {
            write(&mut self.text);
            self.text.extend_from_slice(separator);
        }
        let at = if after { node.end } else { node.start };
        self.edits.push(Edit {
            start: at,
            end: at,
            text_start,
            text_end: self.text.len() as u32,
        });
    }

    /// Sorts the edits, rejects overlaps, and writes the mutant to `out`.
    fn splice(&mut self, data: &[u8], max_len: usize, out: &mut Vec<u8>) -> bool {
        self.edits.sort_unstable_by_key(|e| (e.start, e.end));
        let mut len = data.len();
        for (i, edit) in self.edits.iter().enumerate() {
            if i > 0 && self.edits[i - 1].end > edit.start {
                return false;
            }
            len =
                len - (edit.end - edit.start) as usize + (edit.text_end - edit.text_start) as usize;
        }
        if len > max_len {
            return false;
        }
        out.clear();
        let mut copied = 0;
        for edit in &self.edits {
            out.extend_from_slice(&data[copied..edit.start as usize]);
            out.extend_from_slice(&self.text[edit.text_start as usize..edit.text_end as usize]);
            copied = edit.end as usize;
        }
        out.extend_from_slice(&data[copied..]);
        true
    }
}

/// The rename chosen for `name`, if any: (span in the fragment, input node).
fn find_rename(renames: &[(u32, u32, u32)], text: &[u8], name: &[u8]) -> Option<u32> {
    renames
        .iter()
        .find(|&&(s, e, _)| &text[s as usize..e as usize] == name)
        .map(|&(_, _, to)| to)
}

/// Appends `fragment`'s text with its identifiers renamed.
fn write_renamed(
    out: &mut Vec<u8>,
    input: &ParsedInput,
    fragment: &Fragment,
    renames: &[(u32, u32, u32)],
) {
    let text = fragment.text();
    let mut copied = 0;
    for span in fragment.identifiers() {
        let name = &text[span.start as usize..span.end as usize];
        let Some(to) = find_rename(renames, text, name) else {
            continue;
        };
        out.extend_from_slice(&text[copied..span.start as usize]);
        out.extend_from_slice(input.text(to));
        copied = span.end as usize;
    }
    out.extend_from_slice(&text[copied..]);
}

/// Would replacing `removed` bytes by `added` keep the input within `max_len`?
fn fits(input: &ParsedInput, removed: usize, added: usize, max_len: usize) -> bool {
    input.data().len() - removed + added <= max_len
}

/// The bytes between a list element and one of its neighbours.
struct Gap {
    start: u32,
    end: u32,
    /// The neighbour comes after the element.
    after: bool,
}

/// The gap between `site` and a neighbour in its list, picked at random if
/// it has two; None if it has none.
fn list_gap<R: Rng + ?Sized>(rng: &mut R, input: &ParsedInput, site: u32) -> Option<Gap> {
    let node = input.node(site);
    let next = input.next_in_list(site);
    let previous = input.previous_in_list(site);
    match (previous, next) {
        (_, Some(next)) if previous.is_none() || rng.random::<bool>() => Some(Gap {
            start: node.end,
            end: input.node(next).start,
            after: true,
        }),
        (Some(previous), _) => Some(Gap {
            start: input.node(previous).end,
            end: node.start,
            after: false,
        }),
        _ => None,
    }
}

/// The bytes between `site` and a neighbour of its kind, or else a
/// separator the pool saw between two of its kind under the same parent
/// kind and field: None if the kind is not known to repeat there.
fn list_separator<'a, R: Rng + ?Sized>(
    rng: &mut R,
    sources: Sources<'a>,
    site: u32,
) -> Option<&'a [u8]> {
    let input = sources.input;
    if let Some(gap) = list_gap(rng, input, site) {
        return Some(&input.data()[gap.start as usize..gap.end as usize]);
    }
    let node = input.node(site);
    sources
        .pool
        .separator(input.node(node.parent).kind, node.field, node.kind)
}

/// A random fragment of `kind` from the pool, if it has any.
fn random_fragment<'p, R: Rng + ?Sized>(
    rng: &mut R,
    pool: &'p FragmentPool,
    kind: u16,
) -> Option<&'p Fragment> {
    let fragments = pool.fragments(kind);
    (!fragments.is_empty()).then(|| &fragments[rng.random_range(0..fragments.len())])
}
