//! Generated table states for the model check of a declared claim: the behavioural
//! suite's generator (tests/behaviour.rs `model_case`) drawn from a seeded generator, so
//! that `prove` runs the same kinds of state on a user's claim without the test crate.
//! Small states with many ties and every kind of row: queues `a`, `b`, `c` each with or
//! without a `queues` row (paused, inactive, capped at 0 to 3), queue `d` never with
//! one, three priorities, three creation times, due times past or future, pending,
//! fetched and processing rows, some pending rows held by claims in flight, and
//! sometimes a burst of one queue's rows at a priority above all others.

use crate::model::{JobRow, QueueRow, TableState};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// One generated case: the state, the pending rows claims in flight hold, the batch.
#[derive(Debug, Clone)]
pub struct Case {
    pub state: TableState,
    pub held: Vec<i64>,
    pub batch: u32,
}

/// The queue names a state draws from; the claimer of a claim that reads `:queue`
/// serves the first.
pub const QUEUES: [&str; 4] = ["a", "b", "c", "d"];

/// `n` cases from `seed`: the same seed gives the same cases.
pub fn cases(seed: u64, n: u32) -> Vec<Case> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| case(&mut rng)).collect()
}

fn pick<T: Copy>(rng: &mut SmallRng, from: &[T]) -> T {
    from[rng.gen_range(0..from.len())]
}

fn case(rng: &mut SmallRng) -> Case {
    let queues = QUEUES[..3]
        .iter()
        .filter_map(|name| {
            let present = rng.gen_bool(0.8);
            let row = QueueRow {
                name: name.to_string(),
                is_paused: rng.gen_bool(0.15),
                is_active: rng.gen_bool(0.85),
                max_workers: rng.gen_bool(0.6).then(|| rng.gen_range(0..4)),
            };
            present.then_some(row)
        })
        .collect();
    let mut rows: Vec<(usize, i32, i16, i64, Option<i64>, bool)> = (0..rng.gen_range(0..40))
        .map(|_| {
            (
                rng.gen_range(0..4),
                pick(rng, &[0, 5, 10]),
                pick(rng, &[0i16, 0, 0, 0, 1, 2]),
                pick(rng, &[-300i64, -200, -100]),
                rng.gen_bool(0.4)
                    .then(|| pick(rng, &[-250i64, -150, -50, 100])),
                rng.gen_bool(0.15),
            )
        })
        .collect();
    // The noisy-neighbour shape: one queue's rows ahead of everything in fetch order.
    if rng.gen_bool(0.4) {
        let (q, n) = (rng.gen_range(0..4), rng.gen_range(15..40));
        rows.extend(std::iter::repeat_n((q, 20, 0i16, -300i64, None, false), n));
    }
    let mut held = Vec::new();
    let jobs = rows
        .into_iter()
        .enumerate()
        .map(|(i, (q, priority, status, created_s, scheduled_s, hold))| {
            let id = i as i64 + 1;
            if hold && status == 0 {
                held.push(id);
            }
            JobRow {
                id,
                queue: QUEUES[q].to_string(),
                priority,
                status,
                created_s,
                scheduled_s,
            }
        })
        .collect();
    Case {
        state: TableState { queues, jobs },
        held,
        batch: rng.gen_range(1..12),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seed repeats its cases, and the cases cover what the model distinguishes: held
    /// rows, capped and paused queues, rows not yet due, and more pending rows than
    /// the batch.
    #[test]
    fn a_seed_repeats_its_cases_and_they_cover_the_models_edges() {
        let a = cases(7, 200);
        let b = cases(7, 200);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let any = |f: &dyn Fn(&Case) -> bool| a.iter().any(f);
        assert!(any(&|c| !c.held.is_empty()));
        assert!(any(&|c| c
            .state
            .queues
            .iter()
            .any(|q| q.max_workers == Some(0))));
        assert!(any(&|c| c.state.queues.iter().any(|q| q.is_paused)));
        assert!(any(&|c| c
            .state
            .jobs
            .iter()
            .any(|j| j.scheduled_s == Some(100))));
        assert!(any(&|c| c
            .state
            .jobs
            .iter()
            .filter(|j| j.status == 0)
            .count()
            > c.batch as usize));
    }
}
