//! A job's life after its claim, written once: start, heartbeat, effect, complete and
//! fail are one statement each under every engine's `migrations/<engine>/`, and what
//! their answers mean (owned or not, retried or dead-lettered) is decided here, not in
//! three backends. An engine's session supplies only [`Lifecycle::run`]: bind a
//! [`Step`]'s values the way its driver binds them and send its prepared statement.
//!
//! This is the claim loop's hot path (four of these per job), so a step is a `Copy`
//! value on the stack and a [`Reply`] holds two integers: the recipe adds no
//! allocation to what the driver call itself costs.

use super::{BackendError, EffectReceipt, FailOutcome};
use std::future::Future;
use std::time::Duration;

/// One lifecycle statement and the values it binds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Marks the job processing under `token`; `gated` re-checks the queue's max
    /// workers at the start (the seed's gate) rather than only at the claim.
    Start {
        job: i64,
        gated: bool,
        token: i64,
    },
    Heartbeat {
        job: i64,
        token: i64,
    },
    Effect(Effect),
    Complete {
        job: i64,
    },
    Fail {
        job: i64,
        retry_delay: Duration,
        max_attempts: u32,
    },
}

impl Step {
    /// What an error names as the failed call.
    pub fn what(&self) -> &'static str {
        match self {
            Step::Start { .. } => "start",
            Step::Heartbeat { .. } => "heartbeat",
            Step::Effect { .. } => "write effect",
            Step::Complete { .. } => "complete",
            Step::Fail { .. } => "fail",
        }
    }
}

/// The handler's side effect: one effects row for attempt `attempt` of `job`, filled
/// by the database from the row this worker owns under `token`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effect {
    pub job: i64,
    pub attempt: i32,
    pub failed: bool,
    pub started_us: i64,
    pub token: i64,
}

/// What a step's statement answered: its first row's first two values as integers (a
/// boolean as 0 or 1, NULL as `None`), or how many rows it changed when it returns none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reply {
    pub row: Option<[Option<i64>; 2]>,
    pub changed: u64,
}

impl Reply {
    pub fn row(a: Option<i64>, b: Option<i64>) -> Reply {
        Reply {
            row: Some([a, b]),
            changed: 0,
        }
    }

    pub fn changed(n: u64) -> Reply {
        Reply {
            row: None,
            changed: n,
        }
    }

    fn first(&self) -> Option<i64> {
        self.row.and_then(|r| r[0])
    }

    /// Whether the step changed exactly the one row it names: a row count of 1, or a
    /// first value of 1 where the engine's statement reports its count as a row.
    fn one(&self) -> bool {
        match self.row {
            Some(r) => r[0] == Some(1),
            None => self.changed == 1,
        }
    }
}

/// The one thing an engine's session does for the lifecycle: run a step.
pub trait Lifecycle {
    /// Sends `step`'s prepared statement with its values bound; an error is classified
    /// and names [`Step::what`].
    fn run(&mut self, step: Step) -> impl Future<Output = Result<Reply, BackendError>> + Send;

    /// After `jobs` left this worker (completed, failed or released): give up whatever
    /// the claim held beyond the row itself (PostgreSQL's advisory locks).
    fn finished(&mut self, _jobs: &[i64]) -> impl Future<Output = Result<(), BackendError>> + Send {
        async { Ok(()) }
    }
}

/// The start time, or `None` when this worker no longer owns the job.
pub fn started(r: Reply) -> Option<i64> {
    r.first()
}

pub fn heartbeat_held(r: Reply) -> bool {
    r.one()
}

/// The effect row's finish time and whether the worker still owned the job; an
/// engine whose insert returned no row is an error, never a silent "not owned".
pub fn effect_receipt(r: Reply) -> Result<EffectReceipt, BackendError> {
    let [finished, owned] = r
        .row
        .ok_or_else(|| BackendError::other("write effect", "the effect insert returned no row"))?;
    Ok(EffectReceipt {
        finished_us: finished.unwrap_or(0),
        owned: owned == Some(1),
    })
}

pub fn completed(r: Reply) -> bool {
    r.one()
}

/// (retried, dead-lettered) as the fail statement reports them; no row is not owned.
pub fn fail_outcome(r: Reply) -> FailOutcome {
    match r.row.unwrap_or_default() {
        [Some(1), _] => FailOutcome::Retried,
        [_, Some(1)] => FailOutcome::DeadLettered,
        _ => FailOutcome::NotOwned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_read_the_same_whichever_way_an_engine_reports_a_count() {
        assert!(completed(Reply::changed(1)));
        assert!(!completed(Reply::changed(0)));
        assert!(completed(Reply::row(Some(1), None)));
        assert!(!completed(Reply::row(Some(0), None)));
        assert!(!completed(Reply::row(None, None)));
        assert_eq!(started(Reply::row(None, None)), None);
        assert_eq!(started(Reply::default()), None);
        assert_eq!(started(Reply::row(Some(7), None)), Some(7));
    }

    #[test]
    fn fail_and_effect_answers_map_to_outcomes() {
        assert_eq!(
            fail_outcome(Reply::row(Some(1), Some(0))),
            FailOutcome::Retried
        );
        assert_eq!(
            fail_outcome(Reply::row(Some(0), Some(1))),
            FailOutcome::DeadLettered
        );
        assert_eq!(
            fail_outcome(Reply::row(Some(0), Some(0))),
            FailOutcome::NotOwned
        );
        assert_eq!(fail_outcome(Reply::default()), FailOutcome::NotOwned);
        let r = effect_receipt(Reply::row(Some(5), Some(1))).unwrap();
        assert_eq!((r.finished_us, r.owned), (5, true));
        assert!(!effect_receipt(Reply::row(Some(5), Some(0))).unwrap().owned);
        assert!(effect_receipt(Reply::changed(1)).is_err());
    }
}
