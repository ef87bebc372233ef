//! Jobs held by one worker with nothing else known of them yet: every claimed job from
//! its claim to its next event, and in claim-only mode to the trial's end. The tally's
//! map of live jobs kept them at 64 bytes each in hashed places, which grew with every
//! job claim-only mode claims; a window of slots over consecutive ids keeps them at 4
//! bytes each in id order, so a batch of consecutive ids is a cache line or two. Side by
//! side with the map (benches/compare_builds.sh, claim-only, 4 workers, batch 10) the
//! tally had cost about 5 µs of client CPU per claim, most of claimbench's own.
//!
//! The window starts at the lowest id it holds and ends past the highest; a job below
//! it, or one the window would have to grow past [`HeldWindow::cap`] slots to reach
//! while an older job pins its front, is the caller's to keep elsewhere (the window
//! gives up its oldest jobs to make room, so its memory stays bounded).

use std::collections::VecDeque;

/// The most slots a window spans by default (16 MB). Its front stays at the oldest job
/// held, so a job held for minutes while others come and go spans every id claimed
/// since: 4 bytes each, until the window gives the oldest up to the map. A claim-only
/// trial past 4 million jobs holds its older ones in the map, as before the window.
pub const CAP: usize = 1 << 22;

#[derive(Debug)]
pub struct HeldWindow {
    /// The id of the first slot.
    base: i64,
    /// `worker + 1` of the job's holder, 0 for none.
    slots: VecDeque<u32>,
    held: u64,
    cap: usize,
}

impl Default for HeldWindow {
    fn default() -> Self {
        HeldWindow::with_cap(CAP)
    }
}

impl HeldWindow {
    pub fn with_cap(cap: usize) -> HeldWindow {
        HeldWindow {
            base: 0,
            slots: VecDeque::new(),
            held: 0,
            cap: cap.max(1),
        }
    }

    fn index(&self, job: i64) -> Option<usize> {
        let i = usize::try_from(job.checked_sub(self.base)?).ok()?;
        (i < self.slots.len()).then_some(i)
    }

    /// The worker holding `job` here, if any.
    pub fn holder(&self, job: i64) -> Option<u32> {
        let slot = *self.slots.get(self.index(job)?)?;
        (slot != 0).then(|| slot - 1)
    }

    /// Jobs held here.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Makes room for `job` at the window's end: the oldest jobs held that stand in the
    /// way, with their holders, for the caller to keep elsewhere.
    pub fn make_room(&mut self, job: i64) -> Vec<(i64, u32)> {
        let mut out = Vec::new();
        while !self.slots.is_empty()
            && job >= self.base
            && job.abs_diff(self.base) >= self.cap as u64
        {
            if let Some(slot) = self.slots.pop_front() {
                if slot != 0 {
                    out.push((self.base, slot - 1));
                    self.held -= 1;
                }
                self.base += 1;
            }
        }
        self.trim();
        out
    }

    /// Holds `job` for `worker` (not u32::MAX) when it fits; false when it lies below
    /// the window or past its cap (see [`HeldWindow::make_room`]), or is held here.
    pub fn hold(&mut self, job: i64, worker: u32) -> bool {
        let Some(slot) = worker.checked_add(1) else {
            return false;
        };
        if self.slots.is_empty() {
            self.base = job;
        }
        let Some(i) = job
            .checked_sub(self.base)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < self.cap)
        else {
            return false;
        };
        if i >= self.slots.len() {
            self.slots.resize(i + 1, 0);
        }
        if self.slots[i] != 0 {
            return false;
        }
        self.slots[i] = slot;
        self.held += 1;
        true
    }

    /// Takes `job` out: its holder, if it was held here.
    pub fn take(&mut self, job: i64) -> Option<u32> {
        let i = self.index(job)?;
        let slot = std::mem::take(&mut self.slots[i]);
        if slot == 0 {
            return None;
        }
        self.held -= 1;
        self.trim();
        Some(slot - 1)
    }

    /// Drops the empty slots at the front, so the window starts at its oldest job.
    fn trim(&mut self) {
        while self.slots.front() == Some(&0) {
            self.slots.pop_front();
            self.base += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    /// Against a map, on random holds and takes over ids that are mostly rising with
    /// stragglers below, far above and negative, with a small cap: every job is held
    /// either in the window or in what it gave up, never both, never lost.
    #[test]
    fn the_window_and_what_it_gives_up_hold_what_a_map_holds() {
        for seed in 0..50 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut w = HeldWindow::with_cap(64);
            let mut given_up: HashMap<i64, u32> = HashMap::new();
            let mut model: HashMap<i64, u32> = HashMap::new();
            let mut next = 1i64;
            for _ in 0..3_000 {
                let job = match rng.gen_range(0..10) {
                    0..=5 => {
                        next += rng.gen_range(1..4);
                        next
                    }
                    6 => next - rng.gen_range(0..200),
                    7 => next + rng.gen_range(0..500),
                    8 => -rng.gen_range(0..100),
                    _ => rng.gen_range(1..=next),
                };
                let worker = rng.gen_range(0..4);
                if rng.gen_bool(0.6) {
                    if model.contains_key(&job) {
                        continue;
                    }
                    for (j, h) in w.make_room(job) {
                        assert!(given_up.insert(j, h).is_none());
                    }
                    if !w.hold(job, worker) {
                        given_up.insert(job, worker);
                    }
                    model.insert(job, worker);
                } else {
                    let got = w.take(job).or_else(|| given_up.remove(&job));
                    assert_eq!(got, model.remove(&job), "seed {seed}, job {job}");
                }
                assert_eq!(w.held() as usize + given_up.len(), model.len());
                assert!(w.slots.len() <= 64 && w.slots.front() != Some(&0));
            }
            for (job, h) in &model {
                assert_eq!(w.holder(*job).or(given_up.get(job).copied()), Some(*h));
            }
        }
    }

    #[test]
    fn the_rescuer_is_never_held_here() {
        let mut w = HeldWindow::default();
        assert!(!w.hold(5, u32::MAX));
        assert!(w.hold(5, 0));
        assert!(!w.hold(5, 1), "held already");
        assert_eq!(w.holder(5), Some(0));
    }
}
