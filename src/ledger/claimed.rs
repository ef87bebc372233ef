//! The job ids claimed so far, and how many of them lie below an id: the tally asks that
//! twice for every first claim (to count the older jobs it passed over). A roaring
//! bitmap answers membership in little memory, but its rank counts a dense container's
//! bits word by word (up to 1,024 of them): callgrind found it was half of the client's
//! instructions per claim at batch 10 (benches/claim_instructions.sh). While the ids are
//! dense, a plain bitset over their span takes the bitmap's place, with a Fenwick tree
//! over its words: a rank in O(log n), membership in one bit. Ids spread wider than
//! [`DENSE_SPAN`] (not claimbench's sequence, which is dense) move to the bitmap.

use roaring::RoaringTreemap;

/// The widest span of ids the bitset covers (32 MB of bits and 16 MB of counts at most;
/// claimbench's ids run from 1 up, and a backlog is at most 100 million).
const DENSE_SPAN: i64 = 1 << 28;
/// Room left below the first id claimed, for a slower worker's lower ids.
const MARGIN: i64 = 1 << 16;

/// Job ids as bitmap values, in the same order.
fn bit(job: i64) -> u64 {
    (job as u64) ^ (1 << 63)
}

#[derive(Debug, Default)]
pub struct ClaimedIds {
    /// Every id while they span at most [`DENSE_SPAN`]: membership is one bit, and no
    /// bitmap is kept beside it (its inserts and lookups were a tenth of the tally's
    /// instructions per row).
    dense: Option<Dense>,
    /// Every id once the span outgrew [`DENSE_SPAN`] (filled from the bitset then).
    set: RoaringTreemap,
    sparse: bool,
    len: u64,
    min: Option<i64>,
}

impl ClaimedIds {
    pub fn contains(&self, job: i64) -> bool {
        match &self.dense {
            Some(d) => d.contains(job),
            None => self.sparse && self.set.contains(bit(job)),
        }
    }

    pub fn insert(&mut self, job: i64) {
        let new = if self.sparse {
            self.set.insert(bit(job))
        } else {
            let dense = self.dense.get_or_insert_with(|| Dense::new(job));
            match dense.insert(job) {
                Some(new) => new,
                None => {
                    // Too wide for the bitset: every id so far into the bitmap.
                    self.set = dense.ids().map(bit).collect();
                    self.dense = None;
                    self.sparse = true;
                    self.set.insert(bit(job))
                }
            }
        };
        if new {
            self.len += 1;
            self.min = Some(self.min.map_or(job, |m| m.min(job)));
        }
    }

    pub fn min(&self) -> Option<i64> {
        self.min
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many claimed ids are below `job`.
    pub fn below(&self, job: i64) -> u64 {
        match &self.dense {
            Some(d) => d.below(job),
            None => bit(job).checked_sub(1).map_or(0, |b| self.set.rank(b)),
        }
    }
}

/// A bitset over `[base, base + 64·words.len())` and a Fenwick tree over its words'
/// counts.
#[derive(Debug)]
struct Dense {
    base: i64,
    words: Vec<u64>,
    /// 1-based: `tree[i]` sums the counts of words `(i − lowbit(i), i]`.
    tree: Vec<u32>,
}

impl Dense {
    fn new(first: i64) -> Dense {
        Dense {
            base: aligned(first.saturating_sub(MARGIN)),
            words: Vec::new(),
            tree: vec![0],
        }
    }

    /// Sets `job`'s bit: whether it was clear, or `None` when the span would pass
    /// [`DENSE_SPAN`].
    fn insert(&mut self, job: i64) -> Option<bool> {
        if job < self.base {
            let base = aligned(job.saturating_sub(MARGIN));
            let top = self.base + 64 * self.words.len() as i64;
            if top.saturating_sub(base) > DENSE_SPAN {
                return None;
            }
            let shift = ((self.base - base) / 64) as usize;
            self.words.splice(0..0, std::iter::repeat_n(0, shift));
            self.base = base;
            self.rebuild();
        }
        let offset = job.saturating_sub(self.base);
        if offset >= DENSE_SPAN {
            return None;
        }
        let w = (offset / 64) as usize;
        if w >= self.words.len() {
            self.words.resize((w + 1).max(2 * self.words.len()), 0);
            self.rebuild();
        }
        let mask = 1 << (offset % 64);
        if self.words[w] & mask != 0 {
            return Some(false);
        }
        self.words[w] |= mask;
        let mut i = w + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
        Some(true)
    }

    fn contains(&self, job: i64) -> bool {
        let Some(offset) = job.checked_sub(self.base).filter(|o| *o >= 0) else {
            return false;
        };
        let w = usize::try_from(offset / 64).unwrap_or(usize::MAX);
        self.words
            .get(w)
            .is_some_and(|word| word & (1 << (offset % 64)) != 0)
    }

    /// Every id set, rising.
    fn ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.words.iter().enumerate().flat_map(move |(w, &word)| {
            (0..64)
                .filter(move |b| word & (1 << b) != 0)
                .map(move |b| self.base + 64 * w as i64 + b)
        })
    }

    fn below(&self, job: i64) -> u64 {
        if job <= self.base {
            return 0;
        }
        let offset = job.saturating_sub(self.base);
        let w = usize::try_from(offset / 64).unwrap_or(usize::MAX);
        if w >= self.words.len() {
            return self.prefix(self.words.len());
        }
        let within = (self.words[w] & ((1u64 << (offset % 64)) - 1)).count_ones();
        self.prefix(w) + u64::from(within)
    }

    /// The count of words `[0, n)`.
    fn prefix(&self, n: usize) -> u64 {
        let (mut i, mut sum) = (n, 0u64);
        while i > 0 {
            sum += u64::from(self.tree[i]);
            i -= i & i.wrapping_neg();
        }
        sum
    }

    /// The tree from the words, in O(n).
    fn rebuild(&mut self) {
        let n = self.words.len();
        self.tree = vec![0; n + 1];
        for i in 1..=n {
            self.tree[i] += self.words[i - 1].count_ones();
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                self.tree[parent] += self.tree[i];
            }
        }
    }
}

fn aligned(id: i64) -> i64 {
    id.div_euclid(64) * 64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// The Fenwick ranks equal the bitmap's on random claims: ids mostly rising with
    /// stragglers below the first, far above it, negative, and past the dense span.
    #[test]
    fn ranks_match_the_bitmaps_wherever_the_ids_fall() {
        for seed in 0..20 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut ids = ClaimedIds::default();
            let mut reference = RoaringTreemap::new();
            let mut next = rng.gen_range(-1_000..1_000_000i64);
            for step in 0..5_000 {
                let id = match rng.gen_range(0..100) {
                    0 => next - rng.gen_range(0..200_000),
                    1 if seed % 5 == 0 && step > 4_000 => next + DENSE_SPAN,
                    _ => {
                        next += rng.gen_range(1..40);
                        next
                    }
                };
                ids.insert(id);
                reference.insert(bit(id));
                let probe = id + rng.gen_range(-300..300);
                let want = bit(probe).checked_sub(1).map_or(0, |b| reference.rank(b));
                assert_eq!(
                    ids.below(probe),
                    want,
                    "seed {seed} step {step} probe {probe}"
                );
                assert!(ids.contains(id));
                assert_eq!(ids.contains(probe), reference.contains(bit(probe)));
                assert_eq!(ids.min(), reference.min().map(|b| (b ^ (1 << 63)) as i64));
            }
            assert_eq!(ids.len(), reference.len());
            assert_eq!(
                ids.below(i64::MAX),
                reference.len() - u64::from(ids.contains(i64::MAX))
            );
        }
    }
}
