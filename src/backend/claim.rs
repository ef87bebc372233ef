//! Claim by shape, written once: which statements a strategy's [`Shape`] runs and what
//! a claim call owes its caller (the jobs it took, the races it lost, and on an error
//! exactly the jobs it had already committed). An engine's session supplies the
//! statements as [`ClaimSteps`]; the conditional claim's per-candidate loop, where the
//! lost races are counted, lives here and nowhere else.
//!
//! On the claim loop's hot path: candidates are read straight into the caller's `out`
//! and compacted in place, so the recipe allocates nothing.

use super::{BackendError, ClaimOutcome, ClaimedJob};
use crate::strategy::{Shape, Strategy};
use std::future::Future;

/// What a claim asks for: up to `batch` jobs with `strategy`.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    pub strategy: &'a Strategy,
    pub batch: u32,
}

/// What a claim step returns: the jobs are in the caller's `out`.
pub type Done = Result<(), BackendError>;

/// One candidate's claim: the job as claimed, or `None` for a lost race.
pub type Won = Result<Option<ClaimedJob>, BackendError>;

/// An engine's claim statements, one method per step a shape runs.
pub trait ClaimSteps {
    /// [`Shape::Claim`]: one locking claim of up to `batch` jobs, appended to `out`. On
    /// an error it appends nothing (its transaction rolled back).
    fn locking_claim(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> impl Future<Output = Done> + Send;

    /// [`Shape::ReadThenWrite`]: an unlocked read of up to `batch` ids, then one
    /// unconditional update of them; appends the jobs the update reached.
    fn read_then_write(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> impl Future<Output = Done> + Send;

    /// [`Shape::ReadThenConditional`]'s read: up to `batch` candidates, unlocked,
    /// appended to `out`.
    fn candidates(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> impl Future<Output = Done> + Send;

    /// [`Shape::VersionCas`]: an unlocked read of up to `batch` candidates with their
    /// versions, then the compare-and-set; appends the jobs it won to `out` and returns
    /// how many candidates it lost. On an error `out` holds exactly the jobs already
    /// committed (none, where the compare-and-set is one statement).
    fn version_cas(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> impl Future<Output = Result<u32, BackendError>> + Send;

    /// [`Shape::ReadLockWrite`]: an unlocked read of up to `batch` ids, a lease on each
    /// from the lock service, then one unconditional update of the ids it won; appends
    /// the jobs the update reached and returns how many leases another worker held. An
    /// engine without a lock service refuses (the strategy has no form there, so a run
    /// never gets here).
    fn read_lock_write(
        &mut self,
        ask: Ask<'_>,
        _out: &mut Vec<ClaimedJob>,
    ) -> impl Future<Output = Result<u32, BackendError>> + Send {
        let strategy = ask.strategy.to_string();
        async move {
            Err(BackendError::other(
                "claim",
                format!("{strategy} needs a lock service, and this engine has none"),
            ))
        }
    }

    /// One candidate's update, conditional on the row still being pending at the
    /// attempt read: the job as claimed, or `None` when another worker got there first.
    fn claim_one(
        &mut self,
        ask: Ask<'_>,
        candidate: ClaimedJob,
    ) -> impl Future<Output = Won> + Send;
}

/// Claims up to `batch` jobs with `strategy` by its shape, appending them to `out`.
pub async fn by_shape<S: ClaimSteps + ?Sized>(
    s: &mut S,
    strategy: &Strategy,
    batch: u32,
    out: &mut Vec<ClaimedJob>,
) -> Result<ClaimOutcome, BackendError> {
    let ask = Ask { strategy, batch };
    // Every shape but the one-statement claim is boxed: an async call's future is
    // moved whole into its caller's as it starts, and this one's would otherwise be the
    // largest of them all on every claim (2.9 KB against the claim's 1.7, on each of
    // the worker's calls down to the statement). They make two or more round trips a
    // claim; an allocation is nothing beside them.
    match strategy.shape() {
        Shape::Claim => {
            s.locking_claim(ask, out).await?;
            Ok(ClaimOutcome::default())
        }
        _ => Box::pin(other_shape(s, ask, out)).await,
    }
}

/// The claims of more than one statement: [`by_shape`]'s, boxed.
async fn other_shape<S: ClaimSteps + ?Sized>(
    s: &mut S,
    ask: Ask<'_>,
    out: &mut Vec<ClaimedJob>,
) -> Result<ClaimOutcome, BackendError> {
    let mut outcome = ClaimOutcome::default();
    match ask.strategy.shape() {
        Shape::Claim => s.locking_claim(ask, out).await?,
        Shape::ReadThenWrite => s.read_then_write(ask, out).await?,
        Shape::ReadThenConditional => {
            let before = out.len();
            s.candidates(ask, out).await?;
            // Each candidate is claimed (and committed) on its own, so `kept` is what
            // this call owns at every step: on an error, out ends there.
            let mut kept = before;
            for i in before..out.len() {
                match s.claim_one(ask, out[i]).await {
                    Ok(Some(job)) => {
                        out[kept] = job;
                        kept += 1;
                    }
                    Ok(None) => outcome.lost_races += 1,
                    Err(e) => {
                        out.truncate(kept);
                        return Err(e);
                    }
                }
            }
            out.truncate(kept);
        }
        Shape::VersionCas => outcome.lost_races = s.version_cas(ask, out).await?,
        Shape::ReadLockWrite => outcome.lost_races = s.read_lock_write(ask, out).await?,
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    //! The recipe's own bookkeeping over scripted answers; what the statements do under
    //! contention is the behaviour suite's, on real servers.
    use super::*;
    use crate::backend::ErrorKind;

    /// Candidates 1..=n; claim_one wins on even ids and fails at `fail_at`.
    struct Script {
        n: i64,
        fail_at: Option<i64>,
    }

    fn job(id: i64) -> ClaimedJob {
        ClaimedJob {
            id,
            attempt: 0,
            queue_wait_us: 0,
        }
    }

    impl ClaimSteps for Script {
        async fn locking_claim(&mut self, _: Ask<'_>, _: &mut Vec<ClaimedJob>) -> Done {
            unreachable!("conditional only")
        }
        async fn read_then_write(&mut self, _: Ask<'_>, _: &mut Vec<ClaimedJob>) -> Done {
            unreachable!("conditional only")
        }
        async fn version_cas(
            &mut self,
            _: Ask<'_>,
            _: &mut Vec<ClaimedJob>,
        ) -> Result<u32, BackendError> {
            unreachable!("conditional only")
        }
        async fn candidates(&mut self, _: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
            out.extend((1..=self.n).map(job));
            Ok(())
        }
        async fn claim_one(&mut self, _: Ask<'_>, c: ClaimedJob) -> Won {
            if Some(c.id) == self.fail_at {
                return Err(BackendError::Query {
                    what: "claim",
                    kind: ErrorKind::ConnectionLost,
                    code: None,
                    message: "scripted".into(),
                });
            }
            Ok((c.id % 2 == 0).then_some(ClaimedJob {
                queue_wait_us: 9,
                ..c
            }))
        }
    }

    #[tokio::test]
    async fn a_conditional_claim_keeps_its_wins_counts_its_losses_and_leaves_earlier_jobs() {
        let mut out = vec![job(100)];
        let mut s = Script {
            n: 5,
            fail_at: None,
        };
        let o = by_shape(&mut s, &Strategy::CONDITIONAL, 5, &mut out)
            .await
            .unwrap();
        let ids: Vec<i64> = out.iter().map(|j| j.id).collect();
        assert_eq!(ids, vec![100, 2, 4]);
        assert_eq!(o.lost_races, 3);
        // The job as the claim returned it, not as the read saw it.
        assert_eq!(out[1].queue_wait_us, 9);
    }

    #[tokio::test]
    async fn on_an_error_out_holds_exactly_what_was_claimed_before_it() {
        let mut out = Vec::new();
        let mut s = Script {
            n: 6,
            fail_at: Some(5),
        };
        assert!(
            by_shape(&mut s, &Strategy::CONDITIONAL, 6, &mut out)
                .await
                .is_err()
        );
        let ids: Vec<i64> = out.iter().map(|j| j.id).collect();
        assert_eq!(ids, vec![2, 4]);
    }
}
