//! Fragment pools: the subtrees seen so far, kept per node kind, as
//! LangFuzz's learning phase keeps code fragments per grammar symbol. The
//! pool also learns which kinds repeat under which parents, and the
//! separator between repeats, so lists can grow where the input has only
//! one element.

use std::hash::Hasher;

use rustc_hash::{FxHashMap, FxHashSet, FxHasher};

use crate::ParsedInput;

/// Bounds on what a [`FragmentPool`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLimits {
    /// Longer subtrees are not kept (they are still mutation sites).
    pub max_fragment_len: usize,
    /// Fragments kept per node kind.
    pub per_kind: usize,
    /// Bytes kept in all, fragments and their bookkeeping.
    pub total_bytes: usize,
}

impl Default for PoolLimits {
    fn default() -> PoolLimits {
        PoolLimits {
            max_fragment_len: 1024,
            per_kind: 512,
            total_bytes: 32 << 20,
        }
    }
}

/// A byte range inside a fragment, and the node kind it has there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
    pub kind: u16,
}

/// One kept subtree: its text and the identifiers in it.
#[derive(Debug, Clone)]
pub struct Fragment {
    text: Box<[u8]>,
    identifiers: Box<[Span]>,
    hash: u64,
}

impl Fragment {
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// The identifiers inside the fragment, in order.
    pub fn identifiers(&self) -> &[Span] {
        &self.identifiers
    }

    /// What it costs the pool, allocation overhead included.
    fn cost(&self) -> usize {
        self.text.len() + self.identifiers.len() * size_of::<Span>() + size_of::<Fragment>() + 32
    }
}

#[derive(Debug, Default, Clone)]
struct KindPool {
    /// The pinned ones first: `fragments[..pinned]` are never evicted.
    fragments: Vec<Fragment>,
    pinned: usize,
    bytes: usize,
}

impl KindPool {
    fn unpinned(&self) -> usize {
        self.fragments.len() - self.pinned
    }

    /// Moves the fragment at `index` into the pinned prefix.
    fn pin(&mut self, index: usize) {
        self.fragments.swap(index, self.pinned);
        self.pinned += 1;
    }
}

/// The longest separator remembered between two repeated siblings.
const MAX_SEPARATOR: usize = 16;

/// Counts of what a pool holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    pub fragments: usize,
    pub kinds: usize,
    pub bytes: usize,
    /// Fragments that are never evicted ([`FragmentPool::add_pinned`]).
    pub pinned: usize,
    /// Fragments dropped to stay within the limits.
    pub evicted: u64,
}

/// Fragments per node kind, deduplicated by content and bounded by
/// [`PoolLimits`]. Fill it with [`FragmentPool::add`] from every corpus
/// entry as it arrives and from extra files; a full kind replaces one of
/// its fragments (chosen by the newcomer's hash, so it is reproducible) and
/// a full pool evicts from its largest kind, so late fragments still get in.
#[derive(Debug, Clone)]
pub struct FragmentPool {
    limits: PoolLimits,
    kinds: Vec<KindPool>,
    seen: FxHashSet<u64>,
    /// (parent kind, field, child kind) → a separator seen between two
    /// consecutive children of that kind in that field: they form a list.
    separators: FxHashMap<(u16, u16, u16), ([u8; MAX_SEPARATOR], u8)>,
    bytes: usize,
    pinned_bytes: usize,
    evicted: u64,
    evictions: u64,
    scratch: Vec<Span>,
}

impl Default for FragmentPool {
    fn default() -> FragmentPool {
        FragmentPool::new(PoolLimits::default())
    }
}

impl FragmentPool {
    pub fn new(limits: PoolLimits) -> FragmentPool {
        FragmentPool {
            limits,
            kinds: Vec::new(),
            seen: FxHashSet::default(),
            separators: FxHashMap::default(),
            bytes: 0,
            pinned_bytes: 0,
            evicted: 0,
            evictions: 0,
            scratch: Vec::new(),
        }
    }

    pub fn limits(&self) -> PoolLimits {
        self.limits
    }

    /// The fragments of node kind `kind`.
    pub fn fragments(&self, kind: u16) -> &[Fragment] {
        self.kinds
            .get(kind as usize)
            .map_or(&[], |pool| &pool.fragments)
    }

    pub fn stats(&self) -> PoolStats {
        PoolStats {
            fragments: self.kinds.iter().map(|k| k.fragments.len()).sum(),
            kinds: self
                .kinds
                .iter()
                .filter(|k| !k.fragments.is_empty())
                .count(),
            bytes: self.bytes,
            pinned: self.kinds.iter().map(|k| k.pinned).sum(),
            evicted: self.evicted,
        }
    }

    /// A separator seen between two `child` siblings in `field` (0: none)
    /// of a `parent`, if that kind was ever seen repeated there.
    pub fn separator(&self, parent: u16, field: u16, child: u16) -> Option<&[u8]> {
        self.separators
            .get(&(parent, field, child))
            .map(|(bytes, len)| &bytes[..*len as usize])
    }

    /// Learns from one parsed input: its error-free subtrees (up to
    /// `max_fragment_len` bytes) and its repeated siblings. Returns how
    /// many new fragments it kept.
    pub fn add(&mut self, input: &ParsedInput) -> usize {
        self.add_fragments(input, false)
    }

    /// As [`FragmentPool::add`], for material given by the user
    /// (`--fragments`): what it keeps is never evicted, up to half of each
    /// kind's slots and half the byte budget; beyond that it is kept like
    /// any other fragment.
    pub fn add_pinned(&mut self, input: &ParsedInput) -> usize {
        self.add_fragments(input, true)
    }

    fn add_fragments(&mut self, input: &ParsedInput, pin: bool) -> usize {
        let mut added = 0;
        for &site in input.sites() {
            let node = input.node(site);
            self.learn_separator(input, site);
            if node.len() > self.limits.max_fragment_len || node.is_contextual() {
                continue;
            }
            if self.insert(input, site, pin) {
                added += 1;
            }
        }
        added
    }

    fn learn_separator(&mut self, input: &ParsedInput, site: u32) {
        let Some(next) = input.next_in_list(site) else {
            return;
        };
        let node = input.node(site);
        let parent = input.node(node.parent).kind;
        let gap = &input.data()[node.end as usize..input.node(next).start as usize];
        if gap.len() <= MAX_SEPARATOR {
            self.separators
                .entry((parent, node.field, node.kind))
                .or_insert_with(|| {
                    let mut bytes = [0; MAX_SEPARATOR];
                    bytes[..gap.len()].copy_from_slice(gap);
                    (bytes, gap.len() as u8)
                });
        }
    }

    fn insert(&mut self, input: &ParsedInput, site: u32, pin: bool) -> bool {
        let node = *input.node(site);
        let text = input.text(site);
        let mut hasher = FxHasher::default();
        hasher.write_u16(node.kind);
        hasher.write(text);
        let hash = hasher.finish();
        if self.seen.contains(&hash) {
            return false;
        }
        self.scratch.clear();
        let identifiers = input.identifiers();
        let first = identifiers.partition_point(|&i| i < site);
        for &ident in &identifiers[first..] {
            if !input.contains(site, ident) {
                break;
            }
            let inner = input.node(ident);
            self.scratch.push(Span {
                start: inner.start - node.start,
                end: inner.end - node.start,
                kind: inner.kind,
            });
        }
        let fragment = Fragment {
            text: text.into(),
            identifiers: self.scratch.as_slice().into(),
            hash,
        };
        let cost = fragment.cost();
        if cost > self.limits.total_bytes || self.limits.per_kind == 0 {
            return false;
        }
        let kind = node.kind as usize;
        if self.kinds.len() <= kind {
            self.kinds.resize_with(kind + 1, KindPool::default);
        }
        self.seen.insert(hash);
        let pool = &mut self.kinds[kind];
        let pin = pin
            && pool.pinned < self.limits.per_kind / 2
            && self.pinned_bytes + cost <= self.limits.total_bytes / 2;
        // Less than half the slots are pinned, so a full kind has unpinned ones.
        let at = if pool.fragments.len() >= self.limits.per_kind {
            let victim = pool.pinned + (hash % pool.unpinned() as u64) as usize;
            let old = std::mem::replace(&mut pool.fragments[victim], fragment);
            pool.bytes = pool.bytes + cost - old.cost();
            self.bytes = self.bytes + cost - old.cost();
            self.seen.remove(&old.hash);
            self.evicted += 1;
            victim
        } else {
            pool.fragments.push(fragment);
            pool.bytes += cost;
            self.bytes += cost;
            pool.fragments.len() - 1
        };
        if pin {
            pool.pin(at);
            self.pinned_bytes += cost;
        }
        while self.bytes > self.limits.total_bytes {
            if !self.evict_from_largest(node.kind) {
                break;
            }
        }
        true
    }

    /// Drops one unpinned fragment of the kind holding the most bytes,
    /// never the newcomer of `protected` if another kind can give. False if
    /// nothing can go.
    fn evict_from_largest(&mut self, protected: u16) -> bool {
        let Some(largest) = self
            .kinds
            .iter()
            .enumerate()
            .filter(|(kind, pool)| {
                pool.unpinned() > 0 && (*kind != protected as usize || pool.unpinned() > 1)
            })
            .max_by_key(|(kind, pool)| (pool.bytes, usize::MAX - kind))
            .map(|(kind, _)| kind)
        else {
            return false;
        };
        self.evictions = self.evictions.wrapping_add(1);
        let pool = &mut self.kinds[largest];
        let mut victim = pool.pinned + (splitmix(self.evictions) % pool.unpinned() as u64) as usize;
        if largest == protected as usize && victim == pool.fragments.len() - 1 {
            victim = pool.pinned;
        }
        let old = pool.fragments.swap_remove(victim);
        pool.bytes -= old.cost();
        self.bytes -= old.cost();
        self.seen.remove(&old.hash);
        self.evicted += 1;
        true
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}
