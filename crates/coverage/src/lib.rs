//! Coverage of one run → edges with hit counts → features.
//!
//! An edge is `(prev << 28) | block`: the previous block that ran and this
//! one (prev is 0 for the first block of a run). A feature is an edge with a
//! bucketed hit count: `(bucket << 56) | edge`, with the eight buckets
//! 1, 2, 3, 4–7, 8–15, 16–31, 32–127 and 128+ (as libFuzzer and php-fuzzer).
//!
//! With `--use-value-profile`, how close the operands of a comparison came
//! is a feature too ([`value_profile_feature`]): top bit set, so it never
//! meets an edge's feature, and not counted as an edge.

use rustc_hash::FxHashSet;

pub type Edge = u64;
pub type Feature = u64;

const BUCKETS: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut count = 1;
    while count < 128 {
        table[count] = match count {
            1 => 0,
            2 => 1,
            3 => 2,
            4..=7 => 3,
            8..=15 => 4,
            16..=31 => 5,
            _ => 6,
        };
        count += 1;
    }
    table
};

/// Bucket of a hit count (count ≥ 1).
#[inline]
pub fn bucket(count: u32) -> u8 {
    if count < 128 {
        BUCKETS[count as usize]
    } else {
        7
    }
}

/// Bits of an edge that hold its block; the previous block sits above them.
const BLOCK_BITS: u32 = 28;

#[inline]
pub fn edge(prev: u32, block: u32) -> Edge {
    ((prev as u64) << BLOCK_BITS) | block as u64
}

/// The inverse of [`edge`]: `(prev, block)`.
#[inline]
pub fn edge_blocks(edge: Edge) -> (u32, u32) {
    (
        (edge >> BLOCK_BITS) as u32,
        (edge & ((1 << BLOCK_BITS) - 1)) as u32,
    )
}

#[inline]
pub fn feature(edge: Edge, count: u32) -> Feature {
    ((bucket(count) as u64) << 56) | edge
}

#[inline]
pub fn edge_of(feature: Feature) -> Edge {
    feature & ((1 << 56) - 1)
}

/// Marks a value-profile feature.
const VALUE_PROFILE: Feature = 1 << 63;

/// The feature of comparison site `site` having seen operands whose
/// closeness measured `value` (libFuzzer's `-use_value_profile`).
#[inline]
pub fn value_profile_feature(site: u32, value: u8) -> Feature {
    VALUE_PROFILE | (u64::from(site) << 8) | u64::from(value)
}

#[inline]
pub fn is_value_profile(feature: Feature) -> bool {
    feature & VALUE_PROFILE != 0
}

/// Counts edge hits for one run. Reused across runs: `clear()` is O(1) in
/// the table size, so a long run early on does not slow every later one.
#[derive(Debug)]
pub struct EdgeCounter {
    /// Open addressing; a slot belongs to this run if its stamp is current.
    slots: Vec<Slot>,
    stamp: u32,
    /// Indices of the slots this run uses, in first-use order.
    used: Vec<u32>,
    prev: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    edge: Edge,
    count: u32,
    stamp: u32,
}

const INITIAL_SLOTS: usize = 1 << 10;

impl Default for EdgeCounter {
    fn default() -> Self {
        EdgeCounter {
            slots: vec![Slot::default(); INITIAL_SLOTS],
            stamp: 1,
            used: Vec::new(),
            prev: 0,
        }
    }
}

impl EdgeCounter {
    pub fn new() -> EdgeCounter {
        EdgeCounter::default()
    }

    /// Starts a new run.
    pub fn clear(&mut self) {
        self.used.clear();
        self.prev = 0;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slots.fill(Slot::default());
            self.stamp = 1;
        }
    }

    #[inline]
    fn slot_for(&mut self, edge: Edge) -> &mut Slot {
        let mask = self.slots.len() - 1;
        let mut index = (edge.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & mask;
        loop {
            let slot = self.slots[index];
            if slot.stamp != self.stamp {
                if (self.used.len() + 1) * 2 > self.slots.len() {
                    self.grow();
                    return self.slot_for(edge);
                }
                self.slots[index] = Slot {
                    edge,
                    count: 0,
                    stamp: self.stamp,
                };
                self.used.push(index as u32);
                return &mut self.slots[index];
            }
            if slot.edge == edge {
                return &mut self.slots[index];
            }
            index = (index + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let live: Vec<(Edge, u32)> = self.edges().collect();
        self.slots = vec![Slot::default(); self.slots.len() * 2];
        self.stamp = 1;
        self.used.clear();
        for (edge, count) in live {
            self.slot_for(edge).count = count;
        }
    }

    /// Adds a piece of block trace: 4-byte little-endian block ids, in the
    /// order they ran. Pieces of one run continue each other.
    pub fn add_trace(&mut self, trace: &[u8]) {
        let mut prev = self.prev;
        for id in trace.chunks_exact(4) {
            let block = u32::from_le_bytes([id[0], id[1], id[2], id[3]]);
            let slot = self.slot_for(edge(prev, block));
            slot.count = slot.count.saturating_add(1);
            prev = block;
        }
        self.prev = prev;
    }

    /// Adds edge counts already computed in PHP: pairs of a u64 edge and a
    /// u32 count, little-endian.
    pub fn add_edge_counts(&mut self, pairs: &[u8]) {
        for pair in pairs.chunks_exact(12) {
            let edge = u64::from_le_bytes(pair[..8].try_into().expect("8 bytes"));
            let count = u32::from_le_bytes(pair[8..].try_into().expect("4 bytes"));
            let slot = self.slot_for(edge);
            slot.count = slot.count.saturating_add(count);
        }
    }

    /// Adds another counter's edges (an earlier piece of the same run) and
    /// continues from its last block.
    pub fn merge(&mut self, earlier: &EdgeCounter) {
        for (edge, count) in earlier.edges() {
            let slot = self.slot_for(edge);
            slot.count = slot.count.saturating_add(count);
        }
        self.prev = earlier.prev;
    }

    /// The last block added, if any.
    pub fn last_block(&self) -> Option<u32> {
        (self.prev != 0).then_some(self.prev)
    }

    /// Hits over all edges: how many blocks ran.
    pub fn total_hits(&self) -> u64 {
        self.edges().map(|(_, c)| c as u64).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.used.is_empty()
    }

    pub fn edges(&self) -> impl Iterator<Item = (Edge, u32)> + '_ {
        self.used.iter().map(|&i| {
            let slot = &self.slots[i as usize];
            (slot.edge, slot.count)
        })
    }

    /// This run's features, in no particular order, into `out` (cleared
    /// first). Each appears once.
    pub fn features_into(&self, out: &mut Vec<Feature>) {
        out.clear();
        out.extend(self.edges().map(|(e, c)| feature(e, c)));
    }
}

/// A 64-bit fingerprint of a set of features, whatever their order, to
/// skip looking up the features of a run that ran exactly like an earlier
/// one. Order-free so that no run's features need sorting.
pub fn fingerprint(features: &[Feature]) -> u64 {
    let sum = features
        .iter()
        .fold(0u64, |sum, &f| sum.wrapping_add(mix(f)));
    mix(sum ^ features.len() as u64)
}

/// SplitMix64's finalizer: every input bit affects every output bit.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Remembers recently seen 64-bit fingerprints in a fixed-size table: a
/// cache (a lookup may miss what was evicted), never a growing set, so a
/// long campaign's memory stays flat.
#[derive(Debug, Clone)]
pub struct FingerprintCache {
    slots: Vec<u64>,
}

impl FingerprintCache {
    /// A cache of `2^bits` slots (8 bytes each).
    pub fn new(bits: u32) -> FingerprintCache {
        FingerprintCache {
            slots: vec![0; 1 << bits],
        }
    }

    #[inline]
    fn slot(&self, fingerprint: u64) -> usize {
        (fingerprint.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (self.slots.len() - 1)
    }

    /// Whether `fingerprint` (never 0) was inserted and not evicted since.
    #[inline]
    pub fn contains(&self, fingerprint: u64) -> bool {
        fingerprint != 0 && self.slots[self.slot(fingerprint)] == fingerprint
    }

    #[inline]
    pub fn insert(&mut self, fingerprint: u64) {
        let slot = self.slot(fingerprint);
        self.slots[slot] = fingerprint;
    }
}

/// Every feature, edge and block seen in a session.
#[derive(Debug, Default, Clone)]
pub struct FeatureSet {
    features: FxHashSet<Feature>,
    edges: FxHashSet<Edge>,
    /// The blocks the edges lead to: every block that ran.
    blocks: FxHashSet<u32>,
}

impl FeatureSet {
    pub fn new() -> FeatureSet {
        FeatureSet::default()
    }

    pub fn contains(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }

    /// True if any of `features` is new (does not insert).
    pub fn has_new(&self, features: &[Feature]) -> bool {
        features.iter().any(|f| !self.features.contains(f))
    }

    /// Inserts `features`; the new ones are appended to `new` (not cleared).
    pub fn insert_all(&mut self, features: &[Feature], new: &mut Vec<Feature>) {
        for &f in features {
            if self.features.insert(f) {
                if !is_value_profile(f) && self.edges.insert(edge_of(f)) {
                    self.blocks.insert(edge_blocks(edge_of(f)).1);
                }
                new.push(f);
            }
        }
    }

    pub fn features(&self) -> usize {
        self.features.len()
    }

    pub fn edges(&self) -> usize {
        self.edges.len()
    }

    /// Blocks reached: libFuzzer's unit of coverage (one counter per
    /// instrumented point), where an edge here is a pair of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_features(counter: &EdgeCounter) -> Vec<Feature> {
        let mut out = Vec::new();
        counter.features_into(&mut out);
        out.sort_unstable();
        out
    }

    fn trace(ids: &[u32]) -> Vec<u8> {
        ids.iter().flat_map(|id| id.to_le_bytes()).collect()
    }

    #[test]
    fn buckets_match_libfuzzer() {
        let expect = [
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 3),
            (7, 3),
            (8, 4),
            (15, 4),
            (16, 5),
            (31, 5),
            (32, 6),
            (127, 6),
            (128, 7),
            (u32::MAX, 7),
        ];
        for (count, b) in expect {
            assert_eq!(bucket(count), b, "count {count}");
        }
    }

    #[test]
    fn trace_gives_edges_from_zero_and_counts_hits() {
        let mut counter = EdgeCounter::new();
        counter.add_trace(&trace(&[1, 2, 3, 2, 3, 4]));
        let mut edges: Vec<_> = counter.edges().collect();
        edges.sort();
        assert_eq!(
            edges,
            vec![
                (edge(0, 1), 1),
                (edge(1, 2), 1),
                (edge(2, 3), 2),
                (edge(3, 2), 1),
                (edge(3, 4), 1)
            ]
        );
    }

    #[test]
    fn trace_pieces_continue_each_other() {
        let whole = trace(&[5, 6, 5, 6, 7]);
        let mut a = EdgeCounter::new();
        a.add_trace(&whole);
        let mut b = EdgeCounter::new();
        b.add_trace(&whole[..8]);
        b.add_trace(&whole[8..]);
        assert_eq!(sorted_features(&a), sorted_features(&b));
    }

    #[test]
    fn merging_an_earlier_piece_equals_one_trace() {
        let whole = trace(&[1, 2, 1, 2, 3]);
        let mut one = EdgeCounter::new();
        one.add_trace(&whole);
        let mut earlier = EdgeCounter::new();
        earlier.add_trace(&whole[..12]);
        let mut joined = EdgeCounter::new();
        joined.merge(&earlier);
        joined.add_trace(&whole[12..]);
        assert_eq!(sorted_features(&one), sorted_features(&joined));
        assert_eq!(joined.last_block(), Some(3));
        assert_eq!(joined.total_hits(), 5);
    }

    #[test]
    fn the_table_grows_and_clears_without_losing_counts() {
        let mut counter = EdgeCounter::new();
        let ids: Vec<u32> = (1..5000).chain(1..5000).collect();
        counter.add_trace(&trace(&ids));
        assert_eq!(counter.total_hits(), ids.len() as u64);
        assert_eq!(
            counter.edges().filter(|&(_, c)| c == 2).count(),
            4998,
            "every edge of the repeated walk twice"
        );
        counter.clear();
        assert!(counter.is_empty());
        counter.add_trace(&trace(&[7, 7, 7]));
        let mut edges: Vec<_> = counter.edges().collect();
        edges.sort();
        assert_eq!(edges, vec![(edge(0, 7), 1), (edge(7, 7), 2)]);
    }

    #[test]
    fn the_fingerprint_cache_remembers_and_evicts_but_never_grows() {
        let mut cache = FingerprintCache::new(4);
        assert!(!cache.contains(42));
        cache.insert(42);
        assert!(cache.contains(42));
        assert!(!cache.contains(0), "0 is never a fingerprint");
        for f in 1..1000u64 {
            cache.insert(f.wrapping_mul(0x1234_5678_9abc_def1) | 1);
        }
        let remembered = (1..1000u64)
            .filter(|f| cache.contains(f.wrapping_mul(0x1234_5678_9abc_def1) | 1))
            .count();
        assert!(
            remembered <= 16,
            "at most one fingerprint per slot: {remembered}"
        );
        assert!(remembered >= 8, "recent ones stay: {remembered}");
    }

    #[test]
    fn fingerprints_tell_feature_sets_apart() {
        assert_eq!(fingerprint(&[1, 2, 3]), fingerprint(&[1, 2, 3]));
        assert_ne!(fingerprint(&[1, 2, 3]), fingerprint(&[1, 2, 4]));
        assert_ne!(fingerprint(&[1, 2]), fingerprint(&[1, 2, 0]));
        assert_eq!(fingerprint(&[3, 1, 2]), fingerprint(&[1, 2, 3]));
        assert_ne!(fingerprint(&[]), fingerprint(&[0]));
    }

    #[test]
    fn clear_resets_prev() {
        let mut counter = EdgeCounter::new();
        counter.add_trace(&trace(&[9]));
        counter.clear();
        counter.add_trace(&trace(&[3]));
        assert_eq!(counter.edges().collect::<Vec<_>>(), vec![(edge(0, 3), 1)]);
    }

    #[test]
    fn edge_map_and_trace_give_the_same_features() {
        let ids = [1, 2, 3, 2, 3, 2, 3, 4, 1];
        let mut from_trace = EdgeCounter::new();
        from_trace.add_trace(&trace(&ids));
        let mut pairs = Vec::new();
        for (e, c) in from_trace.edges() {
            pairs.extend_from_slice(&e.to_le_bytes());
            pairs.extend_from_slice(&c.to_le_bytes());
        }
        let mut from_map = EdgeCounter::new();
        from_map.add_edge_counts(&pairs);
        let a = sorted_features(&from_trace);
        assert_eq!(a, sorted_features(&from_map));
        assert!(a.contains(&feature(edge(2, 3), 3)));
        assert_eq!(edge_of(feature(edge(2, 3), 3)), edge(2, 3));
    }

    #[test]
    fn feature_set_reports_only_new_features() {
        let mut set = FeatureSet::new();
        let mut new = Vec::new();
        set.insert_all(&[1, 2, (1 << 56) | 2], &mut new);
        assert_eq!(new.len(), 3);
        assert_eq!(set.edges(), 2);
        assert!(!set.has_new(&[1, 2]));
        assert!(set.has_new(&[1, 3]));
        new.clear();
        set.insert_all(&[2, 3], &mut new);
        assert_eq!(new, vec![3]);
    }

    #[test]
    fn value_profile_features_are_features_but_not_edges() {
        let mut set = FeatureSet::new();
        let mut new = Vec::new();
        let close = value_profile_feature(5, 3);
        assert!(is_value_profile(close) && !is_value_profile(feature(edge(1, 2), 200)));
        assert_ne!(close, value_profile_feature(5, 4));
        assert_ne!(close, value_profile_feature(6, 3));
        set.insert_all(&[close, feature(edge(0, 1), 1)], &mut new);
        assert_eq!((set.features(), set.edges()), (2, 1));
    }

    proptest::proptest! {
        #[test]
        fn edge_blocks_undoes_edge(prev in 0u32..(1 << 28), block in 0u32..(1 << 28)) {
            proptest::prop_assert_eq!(edge_blocks(edge(prev, block)), (prev, block));
        }

        #[test]
        fn every_feature_keeps_its_edge(ids in proptest::collection::vec(1u32..(1 << 28), 0..200)) {
            let mut counter = EdgeCounter::new();
            counter.add_trace(&trace(&ids));
            let mut features = Vec::new();
            counter.features_into(&mut features);
            let total: u32 = counter.edges().map(|(_, c)| c).sum();
            proptest::prop_assert_eq!(total as usize, ids.len());
            for f in features {
                proptest::prop_assert!(edge_of(f) < (1 << 56));
                proptest::prop_assert!(f >> 56 < 8);
            }
        }
    }
}
