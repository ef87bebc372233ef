//! The reference model: the seed's pick for one claim, as a pure function of a table
//! state (docs/architecture.md, "The reference model").
//!
//! Every claim statement that promises the seed's semantics (`production`, and `waiting`
//! once its locks are granted) is held against [`seed_pick`]: the behavioural suite loads
//! generated states into a real server, runs the statement alone, and requires the same
//! ids. The techniques that skip locked rows without the seed's caps are held the same
//! way against what they promise instead: [`uncapped_pick`] (`in-subquery`,
//! `ready-table`), [`advisory_pick`], whose window is a documented shortcut, and
//! [`offset_pick`] (`offset-start`, for one of the starts it may draw). The model is deliberately the seed's SQL read literally (rank every eligible row
//! per queue, then filter, then order and limit), not the shape of any port, so a port
//! that takes a shortcut shows up as a difference.
//!
//! The seed orders by `(Priority DESC, due ASC)` and leaves ties to the server. The model
//! and every port break them by id, ascending, so that a pick is one set of ids rather
//! than any of several; each port's header says so.

use std::collections::{HashMap, HashSet};

/// A `queues` row. A job whose queue has no row is eligible and unlimited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRow {
    pub name: String,
    pub is_paused: bool,
    pub is_active: bool,
    pub max_workers: Option<i32>,
}

/// A hot-table row. Times are whole seconds relative to the claim's `now` (negative: in
/// the past), which keeps generated states clear of clock skew between client and server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRow {
    pub id: i64,
    pub queue: String,
    pub priority: i32,
    /// 0 pending, 1 fetched, 2 processing.
    pub status: i16,
    pub created_s: i64,
    pub scheduled_s: Option<i64>,
}

impl JobRow {
    /// The seed's `ISNULL(ScheduledAtUtc, CreatedAtUtc)`.
    pub fn due_s(&self) -> i64 {
        self.scheduled_s.unwrap_or(self.created_s)
    }
}

/// Everything the seed's statement reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableState {
    pub queues: Vec<QueueRow>,
    pub jobs: Vec<JobRow>,
}

/// A claim's pick as a function of the state, the rows other transactions hold, and the
/// batch: [`seed_pick`], [`uncapped_pick`], [`advisory_pick`].
pub type Pick = fn(&TableState, &HashSet<i64>, u32) -> Vec<i64>;

/// The reference model a declared claim says its pick follows (`[strategies.<name>]
/// model`), which `prove` then holds it to on generated states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelRef {
    /// [`seed_pick`]: the seed's eligibility, order and per-queue caps.
    Seed,
    /// [`uncapped_pick`]: the seed's eligibility and order, no caps.
    Uncapped,
    /// [`advisory_pick`]: the uncapped pick within a window read before locking.
    Advisory,
}

impl ModelRef {
    pub const NAMES: [&str; 3] = ["seed", "uncapped", "advisory"];

    pub fn parse(name: &str) -> Option<ModelRef> {
        match name {
            "seed" => Some(ModelRef::Seed),
            "uncapped" => Some(ModelRef::Uncapped),
            "advisory" => Some(ModelRef::Advisory),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn pick(self) -> Pick {
        match self {
            ModelRef::Seed => seed_pick,
            ModelRef::Uncapped => uncapped_pick,
            ModelRef::Advisory => advisory_pick,
        }
    }
}

/// The ids the seed's FetchNextBatch claims from `state` with limit `batch`, when the
/// rows in `locked_by_others` are held by another transaction (READPAST / SKIP LOCKED
/// drop them before ranking). Returned in fetch order.
pub fn seed_pick(state: &TableState, locked_by_others: &HashSet<i64>, batch: u32) -> Vec<i64> {
    let queues: HashMap<&str, &QueueRow> =
        state.queues.iter().map(|q| (q.name.as_str(), q)).collect();
    // ActiveCounts: committed rows with status 1 or 2, locked or not.
    let mut active: HashMap<&str, i64> = HashMap::new();
    for j in state.jobs.iter().filter(|j| j.status == 1 || j.status == 2) {
        *active.entry(j.queue.as_str()).or_default() += 1;
    }
    // Candidates: pending, not locked by others, queue not paused or inactive, due.
    let mut candidates = eligible_in_fetch_order(state);
    candidates.retain(|j| !locked_by_others.contains(&j.id));
    // ROW_NUMBER() per queue in fetch order, then the capacity check.
    let mut rank: HashMap<&str, i64> = HashMap::new();
    let allowed = candidates.into_iter().filter(|j| {
        let r = rank.entry(j.queue.as_str()).or_default();
        *r += 1;
        match queues.get(j.queue.as_str()).and_then(|q| q.max_workers) {
            None => true,
            Some(max) => active.get(j.queue.as_str()).copied().unwrap_or(0) + *r <= max as i64,
        }
    });
    // Picked: TOP (@Limit) in fetch order (the candidates are already in it).
    allowed.take(batch as usize).map(|j| j.id).collect()
}

/// The ids a claim without per-queue caps takes (`in-subquery`, `ready-table`): the
/// seed's eligibility and fetch order, the first `batch` rows not locked by others, and
/// no bulkhead. Short only when others hold rows or fewer are eligible; empty only when
/// every eligible row is held.
pub fn uncapped_pick(state: &TableState, locked_by_others: &HashSet<i64>, batch: u32) -> Vec<i64> {
    let mut eligible = eligible_in_fetch_order(state);
    eligible.retain(|j| !locked_by_others.contains(&j.id));
    eligible
        .into_iter()
        .take(batch as usize)
        .map(|j| j.id)
        .collect()
}

/// A column a declared order sorts eligible jobs by (`[strategies.<name>] order`), as
/// the model's state holds it: claimbench's priority, highest first (a table's seed step
/// maps it to the table's own encoding), and the rest ascending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrderKey {
    Priority,
    /// The seed's due time: `scheduled_at`, else `created_at`.
    Due,
    Created,
    Id,
}

impl OrderKey {
    pub const NAMES: [&str; 4] = ["priority", "due", "created", "id"];

    pub fn parse(name: &str) -> Option<OrderKey> {
        match name {
            "priority" => Some(OrderKey::Priority),
            "due" => Some(OrderKey::Due),
            "created" => Some(OrderKey::Created),
            "id" => Some(OrderKey::Id),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn compare(self, a: &JobRow, b: &JobRow) -> std::cmp::Ordering {
        match self {
            OrderKey::Priority => b.priority.cmp(&a.priority),
            OrderKey::Due => a.due_s().cmp(&b.due_s()),
            OrderKey::Created => a.created_s.cmp(&b.created_s),
            OrderKey::Id => a.id.cmp(&b.id),
        }
    }
}

/// [`uncapped_pick`] in a declared order instead of the seed's: a library's claim that
/// orders by, say, priority and then id (ignoring due times) is held to that order.
/// Ties after the declared columns are broken by id.
pub fn uncapped_pick_in(
    order: &[OrderKey],
    state: &TableState,
    locked_by_others: &HashSet<i64>,
    batch: u32,
) -> Vec<i64> {
    let mut eligible = eligible_in_fetch_order(state);
    eligible.retain(|j| !locked_by_others.contains(&j.id));
    eligible.sort_by(|a, b| {
        order
            .iter()
            .map(|k| k.compare(a, b))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| a.id.cmp(&b.id))
    });
    eligible
        .into_iter()
        .take(batch as usize)
        .map(|j| j.id)
        .collect()
}

/// How many rows in fetch order `advisory` reads before it try-locks any: `4 x batch +
/// 64` (its statement's `LIMIT $1 * 4 + 64`).
pub fn advisory_window(batch: u32) -> usize {
    batch as usize * 4 + 64
}

/// The ids `advisory` takes: it reads a window of the first [`advisory_window`] eligible
/// rows in fetch order *before* locking (rows other claims hold included, as its snapshot
/// shows them pending), then takes the first `batch` of those it can lock. The shortcut's
/// worst case: when others hold every row of the window, the claim comes back empty
/// however many eligible rows lie beyond it.
pub fn advisory_pick(state: &TableState, locked_by_others: &HashSet<i64>, batch: u32) -> Vec<i64> {
    eligible_in_fetch_order(state)
        .into_iter()
        .take(advisory_window(batch))
        .filter(|j| !locked_by_others.contains(&j.id))
        .take(batch as usize)
        .map(|j| j.id)
        .collect()
}

/// The ids `offset-start` takes when its start is the `offset`-th eligible row in fetch
/// order (counted over rows others hold too: the start is read without locks): the
/// first `batch` rows not held by others from the start on, then, if those run short,
/// from the head up to the start. An offset past the eligible rows starts at the head.
/// The statement draws the offset below its window K, so it must return this pick for
/// one offset in `0..K`; with K = 1 it is [`uncapped_pick`].
pub fn offset_pick(
    state: &TableState,
    locked_by_others: &HashSet<i64>,
    batch: u32,
    offset: usize,
) -> Vec<i64> {
    let eligible = eligible_in_fetch_order(state);
    let start = if offset < eligible.len() { offset } else { 0 };
    eligible[start..]
        .iter()
        .chain(&eligible[..start])
        .filter(|j| !locked_by_others.contains(&j.id))
        .take(batch as usize)
        .map(|j| j.id)
        .collect()
}

/// Pending rows whose queue is neither paused nor inactive and that are due, in fetch
/// order; locks are the caller's to apply.
fn eligible_in_fetch_order(state: &TableState) -> Vec<&JobRow> {
    let open: HashMap<&str, bool> = state
        .queues
        .iter()
        .map(|q| (q.name.as_str(), !q.is_paused && q.is_active))
        .collect();
    let mut rows: Vec<&JobRow> = state
        .jobs
        .iter()
        .filter(|j| j.status == 0)
        .filter(|j| open.get(j.queue.as_str()).copied().unwrap_or(true))
        .filter(|j| j.scheduled_s.is_none_or(|s| s <= 0))
        .collect();
    rows.sort_by_key(|j| fetch_order(j));
    rows
}

/// `(Priority DESC, due ASC)`, ties by id.
fn fetch_order(j: &JobRow) -> (std::cmp::Reverse<i32>, i64, i64) {
    (std::cmp::Reverse(j.priority), j.due_s(), j.id)
}

/// The state that starved the windowed port of issue 9: queue `capped` (max 2, two
/// active, 100 pending at priority 10) ahead in fetch order of queue `free` (no limit, 100
/// pending at priority 0). The seed picks from `free`; a port that locks a window of the
/// first rows in fetch order and ranks after finds only `capped` rows and returns nothing.
pub fn capped_queue_ahead() -> TableState {
    let mut all = jobs(1, 2, "capped", 10, 1);
    all.extend(jobs(3, 100, "capped", 10, 0));
    all.extend(jobs(103, 100, "free", 0, 0));
    TableState {
        queues: vec![queue("capped", Some(2)), queue("free", None)],
        jobs: all,
    }
}

fn queue(name: &str, max_workers: Option<i32>) -> QueueRow {
    QueueRow {
        name: name.into(),
        is_paused: false,
        is_active: true,
        max_workers,
    }
}

/// `n` rows from `first_id` on, created 100 s ago, not scheduled.
fn jobs(first_id: i64, n: i64, queue: &str, priority: i32, status: i16) -> Vec<JobRow> {
    (first_id..first_id + n)
        .map(|id| JobRow {
            id,
            queue: queue.into(),
            priority,
            status,
            created_s: -100,
            scheduled_s: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_ahead_in_fetch_order_does_not_starve_the_others() {
        let pick = seed_pick(&capped_queue_ahead(), &HashSet::new(), 10);
        assert_eq!(pick, (103..113).collect::<Vec<_>>());
    }

    #[test]
    fn a_capped_queue_gets_its_room_and_no_more_in_one_batch() {
        let mut s = capped_queue_ahead();
        s.jobs[0].status = 0; // one active left: room for one
        s.jobs.sort_by_key(|j| j.id);
        let pick = seed_pick(&s, &HashSet::new(), 5);
        // Row 1 is pending again and first in order; rank 1 + 1 active = 2 <= max.
        assert_eq!(pick, vec![1, 103, 104, 105, 106]);
    }

    #[test]
    fn an_offset_start_takes_from_its_start_then_wraps_to_the_head() {
        let s = TableState {
            queues: vec![],
            jobs: jobs(1, 10, "q", 0, 0),
        };
        let none = HashSet::new();
        assert_eq!(offset_pick(&s, &none, 3, 0), uncapped_pick(&s, &none, 3));
        assert_eq!(offset_pick(&s, &none, 3, 4), vec![5, 6, 7]);
        // Rows after the start held by others: the rest comes from the head.
        let held = HashSet::from([9, 10]);
        assert_eq!(offset_pick(&s, &held, 3, 7), vec![8, 1, 2]);
        // The start is read without locks: a held start row is skipped, not moved past.
        assert_eq!(offset_pick(&s, &HashSet::from([5]), 2, 4), vec![6, 7]);
        // An offset past the backlog starts at the head.
        assert_eq!(offset_pick(&s, &none, 2, 10), vec![1, 2]);
    }

    /// A declared order of priority and id takes an older job of equal priority after a
    /// newer one with a lower id (the seed's order takes the older first); the seed's
    /// own columns in a declared order are the uncapped pick.
    #[test]
    fn a_declared_order_sorts_by_its_columns_then_id() {
        let mut s = TableState {
            queues: vec![],
            jobs: jobs(1, 4, "q", 5, 0),
        };
        s.jobs[0].created_s = -10; // job 1: newer
        s.jobs[3].created_s = -500; // job 4: oldest
        s.jobs[2].priority = 9; // job 3: first by priority
        let none = HashSet::new();
        use OrderKey::*;
        assert_eq!(
            uncapped_pick_in(&[Priority, Id], &s, &none, 3),
            vec![3, 1, 2]
        );
        assert_eq!(uncapped_pick(&s, &none, 3), vec![3, 4, 2]);
        assert_eq!(
            uncapped_pick_in(&[Priority, Due, Id], &s, &none, 3),
            uncapped_pick(&s, &none, 3)
        );
        assert_eq!(uncapped_pick_in(&[Created], &s, &none, 2), vec![4, 2]);
        assert_eq!(
            uncapped_pick_in(&[Priority, Id], &s, &HashSet::from([3]), 2),
            vec![1, 2]
        );
    }

    #[test]
    fn locked_rows_are_dropped_before_ranking() {
        let mut s = capped_queue_ahead();
        s.jobs[0].status = 0;
        s.jobs[1].status = 0; // no active rows: room 2
        let locked = HashSet::from([1]);
        let pick = seed_pick(&s, &locked, 3);
        // Row 1 is locked by another session, so rows 2 and 3 rank 1 and 2 in `capped`.
        assert_eq!(pick, vec![2, 3, 103]);
    }

    #[test]
    fn paused_inactive_future_and_non_pending_rows_are_never_picked() {
        let mut s = TableState {
            queues: vec![
                QueueRow {
                    is_paused: true,
                    ..queue("p", None)
                },
                QueueRow {
                    is_active: false,
                    ..queue("i", None)
                },
            ],
            jobs: jobs(1, 3, "p", 9, 0),
        };
        s.jobs.extend(jobs(4, 3, "i", 9, 0));
        s.jobs.extend(jobs(7, 1, "orphan", 0, 2));
        let mut future = jobs(8, 1, "orphan", 9, 0);
        future[0].scheduled_s = Some(60);
        s.jobs.extend(future);
        s.jobs.extend(jobs(9, 1, "orphan", 0, 0));
        assert_eq!(seed_pick(&s, &HashSet::new(), 10), vec![9]);
    }

    #[test]
    fn order_is_priority_then_due_then_id() {
        let mut s = TableState {
            queues: vec![],
            jobs: jobs(1, 4, "q", 0, 0),
        };
        s.jobs[3].priority = 5;
        s.jobs[2].scheduled_s = Some(-500); // due earlier than the others' -100
        assert_eq!(seed_pick(&s, &HashSet::new(), 4), vec![4, 3, 1, 2]);
    }

    #[test]
    fn uncapped_claims_ignore_max_workers_but_not_pause_or_locks() {
        let s = capped_queue_ahead();
        // `capped` is full (2 active of 2), but a claim without caps takes its rows first.
        assert_eq!(uncapped_pick(&s, &HashSet::new(), 3), vec![3, 4, 5]);
        let locked = HashSet::from([3, 5]);
        assert_eq!(uncapped_pick(&s, &locked, 3), vec![4, 6, 7]);
    }

    /// The documented worst case of `advisory`'s window: with its first 4 x batch + 64
    /// eligible rows held by others, it takes nothing, while a claim that locks as it
    /// reads takes a full batch.
    #[test]
    fn advisory_comes_back_empty_only_when_others_hold_its_whole_window() {
        let s = TableState {
            queues: vec![],
            jobs: jobs(1, 300, "q", 0, 0),
        };
        let batch = 10;
        let window = advisory_window(batch) as i64;
        assert_eq!(window, 104);
        let held: HashSet<i64> = (1..=window).collect();
        assert_eq!(advisory_pick(&s, &held, batch), Vec::<i64>::new());
        assert_eq!(
            uncapped_pick(&s, &held, batch),
            (105..115).collect::<Vec<_>>()
        );
        // One row of the window free: a batch of one, however many lie beyond.
        let held: HashSet<i64> = (1..window).collect();
        assert_eq!(advisory_pick(&s, &held, batch), vec![window]);
        // Fewer held than the window's spare rows: a full batch.
        let held: HashSet<i64> = (1..=window - batch as i64).collect();
        assert_eq!(advisory_pick(&s, &held, batch).len(), batch as usize);
    }

    #[test]
    fn an_overshot_queue_gets_nothing() {
        let mut s = capped_queue_ahead();
        s.jobs[2].status = 2; // 3 active against a max of 2
        assert_eq!(seed_pick(&s, &HashSet::new(), 2), vec![103, 104]);
    }
}
