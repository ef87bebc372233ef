//! What each strategy must do in each scripted interleaving, judged from what session B
//! saw: pure, so every expectation and every failure message is unit-tested without a
//! server.

use crate::backend::BackendKind;
use crate::strategy::{Contention, Strategy};
use serde::Serialize;
use std::collections::HashSet;
use std::time::Duration;

/// The interleavings. In each, session A claims inside a transaction it keeps open and
/// session B claims with the same strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// B claims while A holds its rows open.
    Contend,
    /// A rolls back, then B claims everything: A's rows must be pending again.
    RolledBack,
    /// A commits, then B claims everything: A's rows must be claimed, not offered again.
    Committed,
    /// Sharded strategies only: A owns the shard and holds its claim open, the shard
    /// moves to B while A still believes it owns it (a move's overlap), and B claims.
    OwnershipMove,
    /// A declared claim that names its reference model: A claims alone on generated
    /// states while B holds some rows as claims in flight; A must take the model's ids.
    Model(crate::model::ModelRef),
}

impl Step {
    pub const ALL: [Step; 3] = [Step::Contend, Step::RolledBack, Step::Committed];

    /// The steps `strategy` is proved with: every strategy's three, and the ownership
    /// move for one that claims inside shards.
    pub fn of(strategy: &Strategy) -> Vec<Step> {
        let mut steps = Step::ALL.to_vec();
        if strategy.def().sharded {
            steps.push(Step::OwnershipMove);
        }
        steps
    }

    pub fn describe(self, held: u32) -> String {
        match self {
            Step::Contend => format!("B claims while A holds {held} rows open"),
            Step::RolledBack => "A rolls back, then B claims all".into(),
            Step::Committed => "A commits, then B claims all".into(),
            Step::OwnershipMove => format!(
                "A holds {held} rows of its shard open; the shard moves to B, A keeps claiming (the overlap); B claims"
            ),
            Step::Model(m) => format!(
                "A claims on generated states beside B's claims in flight ({} model)",
                m.name()
            ),
        }
    }
}

/// How A's transaction ends in the contend step once B has waited past the patience:
/// `waiting` (and a broken `production`) must then get A's rows back, so A rolls back;
/// `naive` and `conditional` show their race only against a committed claim.
pub fn commit_when_blocked(strategy: &Strategy) -> bool {
    matches!(
        strategy.contention(),
        Contention::Ignores | Contention::Rechecks
    )
}

/// What session B saw in one step.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// Rows A's claim returned (and holds, in the contend step).
    pub held: Vec<i64>,
    /// Rows B's claim returned.
    pub got: Vec<i64>,
    /// B's claim had not returned when the patience ran out: it waited on A.
    pub blocked: bool,
    /// Whether A committed (else rolled back) before B returned; only when blocked.
    pub a_committed: bool,
    /// B's claim from sending to returning.
    pub elapsed: Duration,
    /// Conditional claims of B that changed 0 rows.
    pub lost_races: u32,
    /// Pending rows when B claimed (the backlog, less A's rows once committed).
    pub available: usize,
    /// B's claim failed with this message instead of returning.
    pub error: Option<String>,
    /// A and B were on two nodes of a multi-primary cluster (Galera), where row locks
    /// are each node's own.
    pub across_nodes: bool,
    /// Across nodes, in the contend step: A's COMMIT after B's claim returned failed
    /// with this (the cluster's abort); `None` when it committed.
    pub a_commit_error: Option<String>,
    /// The rows A was offered, as a reader would filter them (`8 pending, due rows of
    /// queue "default" (type "bench", …)`): what to compare a claim that took nothing
    /// with.
    pub offered: String,
}

impl Observation {
    fn overlap(&self) -> usize {
        let held: HashSet<i64> = self.held.iter().copied().collect();
        self.got.iter().filter(|id| held.contains(id)).count()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub strategy: Strategy,
    pub step: Step,
    pub expected: String,
    pub observed: String,
    pub ok: bool,
    /// B came back at once with fewer rows than A left free, none of A's: what a claim
    /// that locks something every claim shares (a queue's row, one advisory key) does.
    pub short: bool,
    /// A's claim returned nothing, without an error: its filter matched none of the
    /// rows offered, so the step observed no interleaving at all.
    #[serde(skip)]
    pub matched_none: bool,
}

/// Judges one observation against what `strategy` promises on `kind`.
pub fn judge(kind: BackendKind, strategy: &Strategy, step: Step, o: &Observation) -> Verdict {
    let n = o.held.len();
    let overlap = o.overlap();
    let (expected, ok) = match (step, strategy.contention()) {
        // A's locks are its node's: B, on another node, neither skips nor waits for
        // them and claims A's rows; certification then lets only the first commit
        // stand, so A's fails.
        (Step::Contend | Step::OwnershipMove, _) if o.across_nodes => (
            "A's rows at once (A's locks are another node's), then A's commit aborted by the cluster".to_string(),
            !o.blocked && overlap > 0 && o.a_commit_error.is_some(),
        ),
        (Step::Contend, Contention::Skips) => (
            "other rows at once".to_string(),
            !o.blocked && o.got.len() == n && overlap == 0,
        ),
        (Step::Contend, Contention::Waits) => (
            "waits until A ends, then A's rows".to_string(),
            o.blocked && overlap > 0,
        ),
        // SQL Server's locking read committed makes the plain read wait for A and then
        // skip A's committed rows: the race needs both reads before either write, which
        // this interleaving does not script. Under RCSI it shows as on the others.
        (Step::Contend, Contention::Ignores) if kind == BackendKind::Mssql => (
            "A's rows again (RCSI), or none of A's (locking read committed)".to_string(),
            true,
        ),
        (Step::Contend, Contention::Ignores) => (
            "A's rows again: the read-then-write race".to_string(),
            overlap > 0,
        ),
        (Step::Contend, Contention::Rechecks) => (
            "none of A's rows: its UPDATE finds them taken".to_string(),
            overlap == 0,
        ),
        // The promise a sharded poller needs when ownership moves: one owner per job,
        // whatever the map says. A technique that does not promise it shows the move's
        // duplicate, which is what it is proved to do.
        (Step::OwnershipMove, _) if strategy.prevents_duplicate_claims() => (
            "none of A's rows: the old and the new owner never both take a job".to_string(),
            overlap == 0,
        ),
        // As naive's contend step: under locking read committed the plain read waits for
        // A and then skips A's committed rows, so the duplicate needs RCSI.
        (Step::OwnershipMove, _) if kind == BackendKind::Mssql => (
            "A's rows again (RCSI), or none of A's (locking read committed)".to_string(),
            true,
        ),
        (Step::OwnershipMove, _) => (
            "A's rows again: both owners take them, so this technique fails the move".to_string(),
            overlap > 0,
        ),
        (Step::RolledBack, _) => (format!("all {n} of A's rows, pending again"), overlap == n),
        (Step::Committed, _) => (
            format!("none of A's rows; the {} others", o.available),
            overlap == 0 && o.got.len() == o.available,
        ),
        // Judged by `model_check` itself, state by state; never observed this way.
        (Step::Model(_), _) => ("the model's ids".to_string(), false),
    };
    Verdict {
        strategy: strategy.clone(),
        step,
        expected,
        observed: observed(o, overlap),
        ok: ok && o.error.is_none() && n > 0,
        short: step == Step::Contend
            && !o.blocked
            && o.error.is_none()
            && overlap == 0
            && o.got.len() < n.min(o.available),
        matched_none: n == 0 && o.error.is_none(),
    }
}

fn observed(o: &Observation, overlap: usize) -> String {
    if let Some(e) = &o.error {
        return format!("error after {}: {e}", ms(o.elapsed));
    }
    if o.held.is_empty() {
        return match o.offered.as_str() {
            "" => "A claimed nothing: no interleaving to observe".into(),
            rows => format!("A claimed nothing of the {rows} offered it"),
        };
    }
    let races = match o.lost_races {
        0 => String::new(),
        1 => " (1 UPDATE changed 0 rows)".to_string(),
        r => format!(" ({r} UPDATEs changed 0 rows)"),
    };
    let mut rows = format!("{} rows, {overlap} of them A's{races}", o.got.len());
    if o.across_nodes {
        match &o.a_commit_error {
            Some(e) => rows.push_str(&format!("; A's commit failed: {e}")),
            None if o.blocked => {}
            None => rows.push_str("; A's commit went through"),
        }
    }
    if o.blocked {
        let end = if o.a_committed {
            "committed"
        } else {
            "rolled back"
        };
        format!("waited {} until A {end}, then {rows}", ms(o.elapsed))
    } else {
        format!("{rows}, in {}", ms(o.elapsed))
    }
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// Settings of the server that would explain a failed verdict, each with why: what a
/// reader should look at first. Empty when nothing in `settings` stands out.
pub fn likely_causes(kind: BackendKind, settings: &[(String, String)], v: &Verdict) -> Vec<String> {
    let get = |name: &str| {
        settings
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
    };
    let mut causes = Vec::new();
    match kind {
        BackendKind::Postgres => {
            if let Some(iso) = get("default_transaction_isolation")
                && iso != "read committed"
            {
                causes.push(format!(
                    "default_transaction_isolation = {iso}: a claim that meets a row another \
                     transaction changed fails with a serialization error instead of re-reading it"
                ));
            }
            if let Some(t) = get("lock_timeout")
                && t != "0"
            {
                causes.push(format!(
                    "lock_timeout = {t}: a claim that waits on a row lock gives up with an error"
                ));
            }
        }
        BackendKind::Mysql => {
            let iso = get("transaction_isolation").or_else(|| get("tx_isolation"));
            match iso.as_deref() {
                Some("SERIALIZABLE") => causes.push(
                    "transaction_isolation = SERIALIZABLE: plain reads take shared locks, so \
                     a read step waits on rows another claim holds"
                        .into(),
                ),
                Some("REPEATABLE-READ") => causes.push(
                    "transaction_isolation = REPEATABLE-READ: locking reads also lock the gaps \
                     between rows (next-key locks), which another claim can wait on"
                        .into(),
                ),
                _ => {}
            }
            if let Some(t) = get("innodb_lock_wait_timeout")
                && t.parse::<u64>().is_ok_and(|s| s < 2)
            {
                causes.push(format!(
                    "innodb_lock_wait_timeout = {t} s: a claim that waits gives up with an error"
                ));
            }
        }
        BackendKind::Mssql => {
            if get("is_read_committed_snapshot_on").as_deref() == Some("1") {
                causes.push(
                    "READ_COMMITTED_SNAPSHOT is on: reads return the last committed version \
                     without waiting, so a claim must read with READCOMMITTEDLOCK"
                        .into(),
                );
            }
        }
        // prove runs on the SQL engines only (a stream holds no claim open to contend).
        BackendKind::Redis | BackendKind::Nats | BackendKind::Rabbitmq => {}
    }
    if let (Step::Model(m), false) = (v.step, v.ok) {
        causes.push(format!(
            "the claim's pick differs from the {} model on that state: compare what it takes with the model's eligibility (pending, due, queue not paused or inactive), order (priority descending, due time, id) and limit (docs/strategies.md, Proved: the reference model); a technique that pauses in its workers' code, not its claim, declares `pauses = \"worker\"`; a claim in another order declares it beside the uncapped model (`order = [\"priority\", \"id\"]`); or declare the model it does follow",
            m.name()
        ));
    } else if v.matched_none {
        causes.push(
            "the claim's filter matched none of the rows prove offered (the observation says \
             which): a claim that names a queue, type or priority by value must match the \
             workload's own rows, and prove --workload puts its rows in the workload's first \
             queue a claim may take from; a claim that serves each worker's queue reads \
             :queue instead (docs/strategies.md, Declared strategies)"
                .into(),
        );
    } else if v.short && !v.ok {
        causes.push(
            "B came back at once with fewer of the free rows than it asked for, none of A's: \
             the claim locks something every claim shares besides the job rows (a queue's row, \
             one advisory key, a counter), so while A holds it claims run one at a time; \
             that is the technique, not the server"
                .into(),
        );
    } else if v.step == Step::Contend && v.strategy.contention() == Contention::Skips && !v.ok {
        causes.push(
            "the claim did not skip A's locked rows: check that SKIP LOCKED (READPAST on SQL \
             Server) reaches the server unchanged (a proxy or ORM rewriting the statement, \
             or a server too old for it)"
                .into(),
        );
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(held: &[i64], got: &[i64], blocked: bool) -> Observation {
        Observation {
            held: held.to_vec(),
            got: got.to_vec(),
            blocked,
            a_committed: false,
            elapsed: Duration::from_millis(if blocked { 1003 } else { 2 }),
            lost_races: 0,
            available: 6,
            error: None,
            across_nodes: false,
            a_commit_error: None,
            offered: String::new(),
        }
    }

    /// A claim whose filter matches none of the rows offered fails every step, and is
    /// told which rows it was offered and why nothing was observed; SKIP LOCKED is not
    /// blamed for it.
    #[test]
    fn a_claim_that_matched_none_of_the_rows_is_told_which_rows_it_was_offered() {
        let mut o = obs(&[], &[], false);
        o.offered = r#"8 pending, due rows of queue "default""#.into();
        let v = judge(
            BackendKind::Postgres,
            &Strategy::PRODUCTION,
            Step::Contend,
            &o,
        );
        assert!(!v.ok && v.matched_none);
        assert_eq!(
            v.observed,
            r#"A claimed nothing of the 8 pending, due rows of queue "default" offered it"#
        );
        let causes = likely_causes(BackendKind::Postgres, &[], &v).join("\n");
        assert!(
            causes.contains("matched none of the rows prove offered"),
            "{causes}"
        );
        assert!(!causes.contains("SKIP LOCKED"), "{causes}");
        // A claim that failed took nothing too, but its error is the cause.
        o.error = Some("relation \"jobs\" does not exist".into());
        let v = judge(
            BackendKind::Postgres,
            &Strategy::PRODUCTION,
            Step::Contend,
            &o,
        );
        assert!(!v.matched_none);
    }

    /// Across two Galera nodes every strategy takes A's rows at once, and the check is
    /// that the cluster then aborts A's commit; what a single server must do is unchanged.
    #[test]
    fn across_nodes_b_takes_as_rows_and_as_commit_must_be_aborted() {
        let across = |got: &[i64], blocked: bool, aborted: bool| Observation {
            across_nodes: true,
            a_commit_error: aborted.then(|| "Deadlock found (MySQL error 1213)".into()),
            ..obs(&[1, 2], got, blocked)
        };
        for s in Strategy::CORE {
            let v = judge(
                BackendKind::Mysql,
                &s,
                Step::Contend,
                &across(&[1, 2], false, true),
            );
            assert!(v.ok, "{s}: {v:?}");
            assert!(v.observed.contains("A's commit failed"), "{}", v.observed);
            // A committed too: both claims stood, which is the duplicate the check exists for.
            assert!(!ok_mysql(&s, &across(&[1, 2], false, false)), "{s}");
            // B skipped A's rows: the locks would have been replicated, not what Galera does.
            assert!(!ok_mysql(&s, &across(&[3, 4], false, true)), "{s}");
            assert!(!ok_mysql(&s, &across(&[1, 2], true, true)), "{s}");
        }
        // The other steps ask the same as on one server.
        let after = Observation {
            across_nodes: true,
            ..obs(&[1, 2], &[1, 2, 3, 4, 5, 6], false)
        };
        assert!(
            judge(
                BackendKind::Mysql,
                &Strategy::PRODUCTION,
                Step::RolledBack,
                &after
            )
            .ok
        );
    }

    fn ok_mysql(s: &Strategy, o: &Observation) -> bool {
        judge(BackendKind::Mysql, s, Step::Contend, o).ok
    }

    fn ok(strategy: &Strategy, step: Step, o: &Observation) -> bool {
        judge(BackendKind::Postgres, strategy, step, o).ok
    }

    #[test]
    fn production_must_return_other_rows_without_waiting() {
        let c = Step::Contend;
        assert!(ok(&Strategy::PRODUCTION, c, &obs(&[1, 2], &[3, 4], false)));
        // Waited: skip-locked is not in effect, even though it then got other rows.
        assert!(!ok(&Strategy::PRODUCTION, c, &obs(&[1, 2], &[3, 4], true)));
        // A's rows: a duplicate.
        assert!(!ok(&Strategy::PRODUCTION, c, &obs(&[1, 2], &[2, 3], false)));
        // Short: six rows were free.
        assert!(!ok(&Strategy::PRODUCTION, c, &obs(&[1, 2], &[3], false)));
        assert!(!ok(&Strategy::PRODUCTION, c, &obs(&[1, 2], &[], false)));
    }

    #[test]
    fn waiting_must_wait_and_then_get_the_rolled_back_rows() {
        let c = Step::Contend;
        assert!(ok(&Strategy::WAITING, c, &obs(&[1, 2], &[1, 2], true)));
        assert!(!ok(&Strategy::WAITING, c, &obs(&[1, 2], &[3, 4], false)));
        assert!(!ok(&Strategy::WAITING, c, &obs(&[1, 2], &[3, 4], true)));
    }

    #[test]
    fn naive_must_show_the_race_except_under_locking_read_committed() {
        let c = Step::Contend;
        let dup = obs(&[1, 2], &[1, 2], true);
        let none = obs(&[1, 2], &[3, 4], true);
        assert!(ok(&Strategy::NAIVE, c, &dup));
        assert!(!ok(&Strategy::NAIVE, c, &none));
        assert!(judge(BackendKind::Mssql, &Strategy::NAIVE, c, &none).ok);
        assert!(judge(BackendKind::Mysql, &Strategy::NAIVE, c, &dup).ok);
    }

    #[test]
    fn conditional_must_never_return_rows_a_holds() {
        let c = Step::Contend;
        let mut lost = obs(&[1, 2], &[], true);
        lost.lost_races = 2;
        lost.a_committed = true;
        assert!(ok(&Strategy::CONDITIONAL, c, &lost));
        assert!(!ok(&Strategy::CONDITIONAL, c, &obs(&[1, 2], &[2], true)));
        let v = judge(BackendKind::Postgres, &Strategy::CONDITIONAL, c, &lost);
        assert_eq!(
            v.observed,
            "waited 1003 ms until A committed, then 0 rows, 0 of them A's (2 UPDATEs changed 0 rows)"
        );
    }

    #[test]
    fn rollback_frees_every_row_and_commit_hides_every_row() {
        for s in Strategy::CORE {
            assert!(ok(
                &s,
                Step::RolledBack,
                &obs(&[1, 2], &[1, 2, 3, 4, 5, 6, 7, 8], false)
            ));
            assert!(!ok(
                &s,
                Step::RolledBack,
                &obs(&[1, 2], &[1, 3, 4, 5, 6, 7, 8], false)
            ));
            assert!(ok(
                &s,
                Step::Committed,
                &obs(&[1, 2], &[3, 4, 5, 6, 7, 8], false)
            ));
            assert!(!ok(
                &s,
                Step::Committed,
                &obs(&[1, 2], &[2, 3, 4, 5, 6, 7, 8], false)
            ));
            assert!(!ok(&s, Step::Committed, &obs(&[1, 2], &[3, 4, 5], false)));
        }
    }

    #[test]
    fn an_ownership_move_holds_a_sharded_claim_to_one_owner_per_job() {
        let named = |n: &str| Strategy::builtin_named(n).unwrap();
        let took_a = obs(&[1, 2], &[1, 2], true);
        let took_others = obs(&[1, 2], &[3, 4], false);
        let m = Step::OwnershipMove;
        for s in ["sharded", "sharded-skip-locked"].map(named) {
            assert!(Step::of(&s).contains(&m), "{s}");
            assert!(ok(&s, m, &took_others), "{s}");
            assert!(!ok(&s, m, &took_a), "{s}: both owners took A's rows");
        }
        // The plain read then write is proved to fail the move: A's rows again.
        let rw = named("sharded-read-write");
        assert!(ok(&rw, m, &took_a));
        assert!(!ok(&rw, m, &took_others));
        assert!(
            judge(BackendKind::Postgres, &rw, m, &took_a)
                .expected
                .contains("fails the move")
        );
        // A strategy without shards is never proved with it.
        assert!(!Step::of(&Strategy::NAIVE).contains(&m));
    }

    #[test]
    fn an_error_or_an_empty_hold_is_never_a_pass() {
        let mut e = obs(&[1, 2], &[3, 4], false);
        e.error = Some("lock timeout".into());
        let v = judge(
            BackendKind::Postgres,
            &Strategy::PRODUCTION,
            Step::Contend,
            &e,
        );
        assert!(!v.ok);
        assert_eq!(v.observed, "error after 2 ms: lock timeout");
        assert!(!ok(&Strategy::NAIVE, Step::Contend, &obs(&[], &[], false)));
        assert!(!ok(
            &Strategy::CONDITIONAL,
            Step::Committed,
            &obs(&[], &[1, 2, 3, 4, 5, 6], false)
        ));
    }

    #[test]
    fn causes_name_the_settings_that_stand_out() {
        let s = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let failed = judge(
            BackendKind::Postgres,
            &Strategy::PRODUCTION,
            Step::Contend,
            &obs(&[1, 2], &[3, 4], true),
        );
        let pg = likely_causes(
            BackendKind::Postgres,
            &s(&[
                ("default_transaction_isolation", "serializable"),
                ("lock_timeout", "0"),
            ]),
            &failed,
        );
        assert_eq!(pg.len(), 2, "{pg:?}");
        assert!(pg[0].starts_with("default_transaction_isolation = serializable"));
        assert!(pg[1].contains("SKIP LOCKED"));
        let clean = likely_causes(
            BackendKind::Postgres,
            &s(&[
                ("default_transaction_isolation", "read committed"),
                ("lock_timeout", "0"),
            ]),
            &judge(
                BackendKind::Postgres,
                &Strategy::WAITING,
                Step::Contend,
                &obs(&[1, 2], &[1, 2], true),
            ),
        );
        assert!(clean.is_empty(), "{clean:?}");
        let my = likely_causes(
            BackendKind::Mysql,
            &s(&[
                ("tx_isolation", "REPEATABLE-READ"),
                ("innodb_lock_wait_timeout", "1"),
            ]),
            &failed,
        );
        assert!(my[0].contains("next-key"), "{my:?}");
        assert!(
            my[1].starts_with("innodb_lock_wait_timeout = 1 s"),
            "{my:?}"
        );
        let ms = likely_causes(
            BackendKind::Mssql,
            &s(&[("is_read_committed_snapshot_on", "1")]),
            &failed,
        );
        assert!(ms[0].contains("READCOMMITTEDLOCK"), "{ms:?}");
    }
}
