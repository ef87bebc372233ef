//! What the brokers' backends share. The effects rule: a broker has no SQL to run
//! `reconcile.sql`, so its backend reads the effects record it keeps (a Redis stream, a
//! JetStream stream) into [`Run`]s and counts duplicate executions here, by the same
//! rule. And what a broker's session has none of: a transaction, session settings.

use super::{BackendError, DbReconciliation};
use crate::backend_kind::BackendKind;

/// `begin` and `end` on a broker: there is no transaction to hold a claim open in.
pub(crate) fn no_transaction(kind: BackendKind) -> BackendError {
    BackendError::other(
        "open a transaction",
        format!(
            "{kind} has no transaction a claim could be held open in; prove runs on the SQL engines"
        ),
    )
}

/// `apply` on a broker: nothing to apply, and any setting is refused.
pub(crate) fn no_settings(
    kind: BackendKind,
    settings: &[(String, String)],
) -> Result<(), BackendError> {
    match settings.is_empty() {
        true => Ok(()),
        false => Err(BackendError::other(
            "apply session settings",
            format!("{kind} has no session settings"),
        )),
    }
}

/// Microseconds since the epoch on this host's clock: a broker has no clock of its own
/// to ask, so every time claimbench writes to one (a job's due time, a completion's)
/// is this host's.
pub(crate) fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// The backlog as a broker seeds it: chunks of jobs that arrived now (ages 0 µs), each
/// published before the first confirm is awaited.
pub(crate) fn seed_chunks(backlog: u64) -> impl Iterator<Item = &'static [i64]> {
    const CHUNK: usize = 1000;
    static ARRIVED_NOW: [i64; CHUNK] = [0; CHUNK];
    let (full, rest) = (
        (backlog / CHUNK as u64) as usize,
        (backlog % CHUNK as u64) as usize,
    );
    std::iter::repeat_n(&ARRIVED_NOW[..], full).chain((rest > 0).then_some(&ARRIVED_NOW[..rest]))
}

/// The server's process where its protocol does not tell its pid: on this host, the
/// process listening on `addr` (the kernel's socket tables, through procfs).
pub(crate) async fn listening_server(
    addr: Option<std::net::SocketAddr>,
) -> Option<super::ServerProcess> {
    let addr = addr?;
    tokio::task::spawn_blocking(move || crate::resources::listening_pid(addr))
        .await
        .ok()?
        .map(super::ServerProcess::Root)
}

/// The claim steps of the SQL engines' shapes other than a single locking claim, in
/// the `ClaimSteps` impl of a broker whose technique is one delivery (`$kind`): each
/// refused. A strategy's forms refuse them before a run (`Form::Absent`), so only a
/// harness bug reaches one.
macro_rules! sql_claim_steps_refused {
    ($kind:literal) => {
        async fn read_then_write(
            &mut self,
            _: $crate::backend::claim::Ask<'_>,
            _: &mut Vec<$crate::backend::ClaimedJob>,
        ) -> $crate::backend::claim::Done {
            Err($crate::backend::broker::not_a_delivery(
                "claim (read, then write)",
                $kind,
            ))
        }

        async fn candidates(
            &mut self,
            _: $crate::backend::claim::Ask<'_>,
            _: &mut Vec<$crate::backend::ClaimedJob>,
        ) -> $crate::backend::claim::Done {
            Err($crate::backend::broker::not_a_delivery(
                "claim (candidates)",
                $kind,
            ))
        }

        async fn version_cas(
            &mut self,
            _: $crate::backend::claim::Ask<'_>,
            _: &mut Vec<$crate::backend::ClaimedJob>,
        ) -> Result<u32, $crate::backend::BackendError> {
            Err($crate::backend::broker::not_a_delivery(
                "claim (compare-and-set)",
                $kind,
            ))
        }

        async fn claim_one(
            &mut self,
            _: $crate::backend::claim::Ask<'_>,
            _: $crate::backend::ClaimedJob,
        ) -> $crate::backend::claim::Won {
            Err($crate::backend::broker::not_a_delivery(
                "claim (one candidate)",
                $kind,
            ))
        }
    };
}
pub(crate) use sql_claim_steps_refused;

/// A SQL claim step asked of a broker whose claim is a delivery.
pub(crate) fn not_a_delivery(what: &'static str, kind: &str) -> BackendError {
    BackendError::other(what, format!("a SQL claim step; {kind} claims by delivery"))
}

/// `change_shards` on a broker: it keeps no shard map.
pub(crate) fn no_shard_map(kind: BackendKind) -> BackendError {
    BackendError::other(
        "move shards",
        format!("{kind} keeps no shard map; the sharded strategies are SQL techniques"),
    )
}

/// One handler run as the broker's effects record holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Run {
    pub job: i64,
    pub ok: bool,
    pub started_us: i64,
    pub finished_us: i64,
    pub owned: bool,
}

/// Runs that overlap an earlier run of their job in time, or follow an earlier one
/// that succeeded, ordered per job by (start, finish) as `reconcile.sql` orders them.
pub(crate) fn duplicate_runs(mut runs: Vec<Run>) -> i64 {
    runs.sort_by_key(|r| (r.job, r.started_us, r.finished_us));
    let mut dup = 0;
    let mut prev: Option<(i64, i64, bool)> = None; // job, latest finish, any success
    for r in runs {
        match prev {
            Some((job, end, ok)) if job == r.job => {
                if end > r.started_us || ok {
                    dup += 1;
                }
                prev = Some((job, end.max(r.finished_us), ok || r.ok));
            }
            _ => prev = Some((r.job, r.finished_us, r.ok)),
        }
    }
    dup
}

/// Where every job ended, as a broker's counts say, with the effects' own count of
/// duplicate executions.
pub(crate) fn reconciliation(
    (pending, fetched, processing): (i64, i64, i64),
    completed: i64,
    dead_lettered: i64,
    runs: &[Run],
) -> DbReconciliation {
    let mut jobs: Vec<i64> = runs.iter().map(|r| r.job).collect();
    jobs.sort_unstable();
    jobs.dedup();
    DbReconciliation {
        pending,
        fetched,
        processing,
        completed,
        dead_lettered,
        effect_rows: runs.len() as i64,
        duplicate_executions: duplicate_runs(runs.to_vec()),
        distinct_executed: jobs.len() as i64,
        unowned_executions: runs.iter().filter(|r| !r.owned).count() as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(job: i64, ok: bool, s: i64, e: i64) -> Run {
        Run {
            job,
            ok,
            started_us: s,
            finished_us: e,
            owned: true,
        }
    }

    /// The reconcile.sql rule: overlap with an earlier run, or after a success.
    #[test]
    fn a_duplicate_overlaps_an_earlier_run_or_follows_a_success() {
        // a failed run, then a retry after it: not a duplicate
        assert_eq!(
            duplicate_runs(vec![run(1, false, 0, 10), run(1, true, 20, 30)]),
            0
        );
        // two runs at once: the later-starting one is
        assert_eq!(
            duplicate_runs(vec![run(1, true, 0, 10), run(1, true, 5, 15)]),
            1
        );
        // after a success, any run is
        assert_eq!(
            duplicate_runs(vec![run(2, true, 0, 10), run(2, false, 50, 60)]),
            1
        );
        // other jobs do not count against each other, whatever the input order
        assert_eq!(
            duplicate_runs(vec![
                run(4, true, 5, 15),
                run(3, true, 0, 10),
                run(3, false, 1, 2)
            ]),
            1
        );
    }

    #[test]
    fn the_backlog_is_seeded_in_chunks_that_add_up_to_it() {
        for backlog in [0, 1, 999, 1000, 1001, 60_000] {
            let sizes: Vec<usize> = seed_chunks(backlog).map(<[i64]>::len).collect();
            assert_eq!(sizes.iter().sum::<usize>() as u64, backlog);
            assert!(sizes.iter().all(|&n| (1..=1000).contains(&n)), "{sizes:?}");
        }
    }
}
