//! `claimbench prove`: scripted two-session interleavings that show, on the server at
//! hand, whether each strategy locks the way the benchmark assumes, before its numbers
//! are trusted. A proxy that rewrites statements, an isolation level, RCSI or a lock
//! timeout can each turn a skip-locked claim into a waiting one, or a waiting one into an
//! error; a benchmark run would only show a slower or odder curve.
//!
//! Every step starts from a fresh scratch schema holding [`BACKLOG`] pending jobs.
//! Session A claims [`HELD`] of them inside a transaction it keeps open
//! ([`Session::begin`]); session B claims with the same strategy, through the same code a
//! benchmark worker runs. [`verdict`] judges what B saw.

pub mod states;
pub mod verdict;

use crate::backend::recipe::ShardChange;
use crate::backend::{Backend, BackendError, ClaimedJob, Endpoint, Session};
use crate::strategy::Strategy;
use crate::workload::Workload;
use std::path::Path;
use std::time::{Duration, Instant};
pub use verdict::{Observation, Step, Verdict, judge, likely_causes};

/// Rows A holds open.
pub const HELD: u32 = 2;
/// Pending rows in the scratch schema: B always has rows A does not hold.
pub const BACKLOG: u32 = 8;
/// How long B's claim may take before it counts as waiting on A: far above a claim's
/// round trip over eight rows, far below any lock timeout worth having.
pub const PATIENCE: Duration = Duration::from_secs(1);
/// How long B may still take once A has ended before the step fails as stuck.
const AFTER_END: Duration = Duration::from_secs(10);
/// The scratch schema's one queue without a workload (a sharded strategy's one shard).
const QUEUE: &str = "prove";
/// The layout every backend has; plans do not matter with eight rows.
const LAYOUT: &str = "fetch-order";

/// What the scratch rows look like: [`BACKLOG`] pending, due rows of one queue, with the
/// seed's job type. Under `prove --workload` they sit in the workload's first queue a
/// claim may take from, with its priority and payload size, so a claim that names its
/// queue by value (as most queue libraries' claims do) finds them as it would the
/// workload's own rows.
#[derive(Debug, Clone)]
pub struct Scratch {
    queue: String,
    priority: Option<i32>,
    payload_bytes: u32,
    /// The workload's own table: the scratch rows are copied into it by its seed step.
    table: Option<crate::declared_table::DeclaredTable>,
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            queue: QUEUE.to_string(),
            priority: None,
            payload_bytes: 0,
            table: None,
        }
    }
}

impl Scratch {
    /// The workload's own table, when it declares one.
    pub fn table(&self) -> Option<&crate::declared_table::DeclaredTable> {
        self.table.as_ref()
    }

    /// Rows like `w`'s: its first queue neither paused nor inactive (else the default).
    pub fn like(w: &Workload) -> Scratch {
        let queue = w.population.queues.iter().find(|q| !q.paused && q.active);
        let scratch = match queue {
            Some(q) => Scratch {
                queue: q.name.clone(),
                priority: q.priority,
                payload_bytes: w.population.payload_bytes,
                table: None,
            },
            None => Scratch::default(),
        };
        Scratch {
            table: w.table.clone(),
            ..scratch
        }
    }

    /// The rows as a reader would filter them: what a claim that took none of them is
    /// compared with.
    pub fn describe(&self) -> String {
        format!(
            "{BACKLOG} pending, due rows of queue {:?} (type \"bench\", priority {}, payload {} bytes)",
            self.queue,
            self.priority.unwrap_or(0),
            self.payload_bytes
        )
    }
}

/// The scratch schema's contents: [`Scratch`]'s rows; with `pooler`, the throw-away
/// server behind a PgBouncer in that mode, with a server connection for each session
/// and two to spare.
pub fn workload(
    pooler: Option<crate::pooler::PoolMode>,
    scratch: &Scratch,
) -> Result<Workload, crate::workload::WorkloadError> {
    let topology = match pooler {
        Some(mode) => format!("[topology]\npooler = \"{mode}\"\npool_size = 4\n"),
        None => String::new(),
    };
    // The name as a TOML string: a workload's queue name is data, quoted whatever it holds.
    let name = toml::Value::String(scratch.queue.clone());
    let priority = scratch
        .priority
        .map_or(String::new(), |p| format!(", priority = {p}"));
    let text = format!(
        "name = \"prove\"\nseed = 1\n\
         [population]\nbacklog = {BACKLOG}\npayload_bytes = {}\n\
         queues = [{{ name = {name}{priority} }}]\n\
         [matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"{LAYOUT}\"]\n\
         workers = [2]\nbatch_sizes = [{HELD}]\n[trial]\nduration_s = 1\n{topology}",
        scratch.payload_bytes
    );
    let mut w = Workload::parse(Path::new("prove (built in)"), &text)?;
    w.table = scratch.table.clone();
    Ok(w)
}

/// Every step for `strategy`, judged by its expectations, with sessions that claim with
/// `run_as`: the same strategy, except in the test that proves a broken statement
/// (production's with SKIP LOCKED removed, which is `waiting`) fails. Both sessions get
/// `settings` (`prove --set`), as a workload's `[session]` gives its workers.
pub async fn prove<B: Backend>(
    backend: &B,
    strategy: &Strategy,
    run_as: &Strategy,
    settings: &[(String, String)],
    scratch: &Scratch,
) -> Result<Vec<Verdict>, BackendError> {
    let w = workload(None, scratch).map_err(|e| BackendError::Query {
        what: "build the scratch workload",
        kind: crate::backend::ErrorKind::Other,
        code: None,
        message: e.to_string(),
    })?;
    let mut verdicts = Vec::new();
    for step in Step::of(strategy) {
        backend.reset(&w, LAYOUT, w.seed).await?;
        backend.setup_strategy(run_as).await?;
        // A sharded claim sees only its shards: both sessions own the one queue, except
        // in the ownership move, where B gets it only once A holds its claim.
        let shards = ShardMap {
            backend,
            sharded: run_as.def().sharded,
            queue: &scratch.queue,
        };
        let owners: &[&str] = match step {
            Step::OwnershipMove => &["prove-a"],
            _ => &["prove-a", "prove-b"],
        };
        shards.give(owners).await?;
        // On a multi-primary cluster B claims on the second node: what a worker there
        // sees of A's claim on the first.
        let across = backend.nodes() > 1;
        let b_node = Endpoint {
            node: usize::from(across),
            via: None,
        };
        // In the workers' role: through a pooler, where the workers would go.
        let role = backend.worker_role();
        let mut a = backend.connect(&role, "prove-a").await?;
        let mut b = backend.connect_to(&role, "prove-b", b_node).await?;
        // Both serve the scratch queue, as a worker of one-queue workload would.
        a.serve_queue(&scratch.queue);
        b.serve_queue(&scratch.queue);
        if !settings.is_empty() {
            a.apply(settings).await?;
            b.apply(settings).await?;
        }
        if across && step == Step::Committed {
            // A's commit is certified everywhere when it returns, but B's node may not
            // have applied it yet: B reads causally, so that the step asks what it
            // asks on one server (whether a committed claim is offered again).
            b.apply(&[("wsrep_sync_wait".to_string(), "1".to_string())])
                .await?;
        }
        let mut o = observe(&mut a, &mut b, (step, &shards), strategy, run_as, across).await?;
        o.across_nodes = across;
        o.offered = scratch.describe();
        verdicts.push(judge(backend.kind(), strategy, step, &o));
    }
    Ok(verdicts)
}

/// Holds `strategy` (declared, naming `model`) to its model on `cases` generated states
/// from `seed` (see [`states`]): per state, B holds the state's held rows as claims in
/// flight, A claims once (at most [`PATIENCE`]), and A's ids must be the model's. A
/// claim that reads `:queue` serves queue `a`, and the model sees that queue's jobs only.
/// Stops at the first state that differs and shows it.
pub async fn model_check<B: Backend>(
    backend: &B,
    (strategy, model): (&Strategy, crate::model::ModelRef),
    (cases, seed): (u32, u64),
    settings: &[(String, String)],
    table: Option<&crate::declared_table::DeclaredTable>,
) -> Result<Verdict, BackendError> {
    // On a declared table, each state reaches it through the table's seed step.
    let scratch = Scratch {
        table: table.cloned(),
        ..Scratch::default()
    };
    let w = workload(None, &scratch)
        .map_err(|e| BackendError::other("build the scratch workload", e.to_string()))?;
    backend.reset(&w, LAYOUT, w.seed).await?;
    backend.setup_strategy(strategy).await?;
    let role = backend.worker_role();
    let mut a = backend.connect(&role, "prove-a").await?;
    let mut b = backend.connect(&role, "prove-b").await?;
    let served = states::QUEUES[0];
    a.serve_queue(served);
    b.serve_queue(served);
    if !settings.is_empty() {
        a.apply(settings).await?;
        b.apply(settings).await?;
    }
    let per_queue = strategy.reads_queue();
    let custom = strategy.def().custom.as_ref();
    let pauses_in_worker = custom.is_some_and(|c| c.pauses_in_worker);
    let order = custom.map_or(&[][..], |c| &c.order[..]);
    let in_order = match order {
        [] => String::new(),
        keys => format!(
            " in its declared order ({})",
            keys.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
        ),
    };
    let verdict = |ok: bool, observed: String| Verdict {
        strategy: strategy.clone(),
        step: Step::Model(model),
        expected: format!("the model's ids{in_order} on each of {cases} states"),
        observed,
        ok,
        short: false,
        matched_none: false,
    };
    for (i, case) in states::cases(seed, cases).into_iter().enumerate() {
        backend.load_model_state(&case.state).await?;
        if !case.held.is_empty() {
            b.hold_in_flight(strategy, &case.held).await?;
        }
        let mut out = Vec::new();
        let claimed = tokio::time::timeout(PATIENCE, a.claim(strategy, case.batch, &mut out)).await;
        if !case.held.is_empty() {
            b.end(false).await?;
        }
        let at = format!(
            "state {} of {cases} (seed {seed}; batch {}, {} jobs, held {:?})",
            i + 1,
            case.batch,
            case.state.jobs.len(),
            case.held
        );
        let got = match claimed {
            Err(_) => {
                return Ok(verdict(
                    false,
                    format!(
                        "{at}: the claim waited on rows claims in flight hold; a step that locks rows of its own tables must lock or skip the job rows too (FOR UPDATE OF … SKIP LOCKED), and a technique whose claims in flight hold something else (a lock keyed by a hash of the id, another table's rows, and no job row) says what in a `-- step: hold` binding :ids"
                    ),
                ));
            }
            Ok(Err(e)) => return Ok(verdict(false, format!("{at}: the claim failed: {e}"))),
            Ok(Ok(_)) => ids(&out),
        };
        // Give back what the claim took beyond its rows (a release step's locks); the
        // next state replaces the rows.
        a.release(&got).await?;
        let mut got = got;
        got.sort_unstable();
        let held: std::collections::HashSet<i64> = case.held.iter().copied().collect();
        let mut state = case.state.clone();
        if per_queue {
            state.jobs.retain(|j| j.queue == served);
        }
        // A technique that pauses in its workers' code claims a paused queue's jobs, and
        // is held to a model that takes them too.
        if pauses_in_worker {
            for q in &mut state.queues {
                (q.is_paused, q.is_active) = (false, true);
            }
        }
        let mut want = match order {
            [] => model.pick()(&state, &held, case.batch),
            keys => crate::model::uncapped_pick_in(keys, &state, &held, case.batch),
        };
        want.sort_unstable();
        if got != want {
            return Ok(verdict(
                false,
                format!(
                    "{at}: claimed {got:?}, the model {want:?}; {}",
                    differing(&state, &got, &want)
                ),
            ));
        }
    }
    Ok(verdict(true, format!("all {cases} states agree")))
}

/// The jobs one side took and the other did not, each with what the model reads of it.
fn differing(state: &crate::model::TableState, got: &[i64], want: &[i64]) -> String {
    let row = |id: i64| {
        let j = state.jobs.iter().find(|j| j.id == id)?;
        let q = state.queues.iter().find(|q| q.name == j.queue);
        let queue = match q {
            None => "no queues row".to_string(),
            Some(q) => [
                q.is_paused.then_some("paused".to_string()),
                (!q.is_active).then_some("inactive".to_string()),
                q.max_workers.map(|m| format!("max_workers {m}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", "),
        };
        let queue = if queue.is_empty() {
            "open".to_string()
        } else {
            queue
        };
        Some(format!(
            "job {id}: queue {} ({queue}), priority {}, due {} s",
            j.queue,
            j.priority,
            j.due_s()
        ))
    };
    let only = |a: &[i64], b: &[i64]| -> Vec<String> {
        a.iter()
            .filter(|id| !b.contains(id))
            .filter_map(|&id| row(id))
            .collect()
    };
    let (extra, missed) = (only(got, want), only(want, got));
    [
        (!extra.is_empty()).then(|| format!("taken, not the model's: {}", extra.join("; "))),
        (!missed.is_empty()).then(|| format!("the model's, not taken: {}", missed.join("; "))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("; ")
}

fn ids(jobs: &[ClaimedJob]) -> Vec<i64> {
    jobs.iter().map(|j| j.id).collect()
}

/// The scratch schema's shard map, for a sharded strategy (else nothing to do).
struct ShardMap<'a, B> {
    backend: &'a B,
    sharded: bool,
    queue: &'a str,
}

impl<B: Backend> ShardMap<'_, B> {
    /// Gives the scratch queue to each of `sessions` (by worker id).
    async fn give(&self, sessions: &[&str]) -> Result<(), BackendError> {
        if !self.sharded {
            return Ok(());
        }
        let queues = vec![self.queue.to_string(); sessions.len()];
        let workers: Vec<String> = sessions.iter().map(|s| s.to_string()).collect();
        (self.backend)
            .change_shards(ShardChange::Give, &queues, &workers)
            .await
    }
}

async fn observe<S: Session, B: Backend>(
    a: &mut S,
    b: &mut S,
    (step, shards): (Step, &ShardMap<'_, B>),
    strategy: &Strategy,
    run_as: &Strategy,
    across: bool,
) -> Result<Observation, BackendError> {
    let mut held = Vec::new();
    a.begin().await?;
    a.claim(run_as, HELD, &mut held).await?;
    if step == Step::OwnershipMove {
        shards.give(&["prove-b"]).await?;
    }
    let mut o = Observation {
        held: ids(&held),
        available: BACKLOG as usize,
        ..Observation::default()
    };
    let mut got = Vec::new();
    let started = Instant::now();
    let result = if matches!(step, Step::Contend | Step::OwnershipMove) {
        let claim = b.claim(run_as, HELD, &mut got);
        tokio::pin!(claim);
        match tokio::time::timeout(PATIENCE, &mut claim).await {
            Ok(r) => {
                // Across nodes A then tries to commit: with B's claim committed first,
                // the cluster must abort A's.
                match a.end(across).await {
                    Err(e) if across => o.a_commit_error = Some(e.to_string()),
                    other => other?,
                }
                r.map_err(|e| e.to_string())
            }
            Err(_) => {
                o.blocked = true;
                o.a_committed = verdict::commit_when_blocked(strategy);
                a.end(o.a_committed).await?;
                match tokio::time::timeout(AFTER_END, claim).await {
                    Ok(r) => r.map_err(|e| e.to_string()),
                    Err(_) => Err(format!(
                        "still waiting {} s after A ended",
                        AFTER_END.as_secs()
                    )),
                }
            }
        }
    } else {
        let commit = step == Step::Committed;
        a.end(commit).await?;
        if commit {
            o.available -= o.held.len();
        }
        b.claim(run_as, BACKLOG, &mut got)
            .await
            .map_err(|e| e.to_string())
    };
    o.elapsed = started.elapsed();
    match result {
        Ok(outcome) => o.lost_races = outcome.lost_races,
        Err(e) => o.error = Some(e),
    }
    o.got = ids(&got);
    Ok(o)
}

/// The verdict table, then the likely causes of each failure.
pub fn render(verdicts: &[Verdict], causes: &[(usize, Vec<String>)]) -> String {
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            vec![
                v.strategy.to_string(),
                v.step.describe(HELD),
                v.expected.clone(),
                v.observed.clone(),
                if v.ok { "ok" } else { "FAIL" }.to_string(),
            ]
        })
        .collect();
    let mut s = String::new();
    let header = ["strategy", "step", "expected", "observed", "verdict"];
    crate::markdown::table(&mut s, &header, &rows, header.len());
    for (i, list) in causes {
        let v = &verdicts[*i];
        s.push_str(&format!(
            "\n{} failed `{}`; likely causes:\n",
            v.strategy,
            v.step.describe(HELD)
        ));
        if list.is_empty() {
            s.push_str("  - none of the settings read stands out; compare `claimbench sql` with what the server receives\n");
        }
        for c in list {
            s.push_str(&format!("  - {c}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_workload_parses() {
        let w = workload(None, &Scratch::default()).unwrap();
        assert_eq!(w.population.eligible_at_start(), u64::from(BACKLOG));
    }

    /// Under `prove --workload` the rows sit in the workload's first queue a claim may
    /// take from, with its priority, whatever its name holds.
    #[test]
    fn the_scratch_rows_look_like_the_workloads_first_open_queue() {
        let text = r#"name = "w"
[population]
backlog = 10
payload_bytes = 64
queues = [{ name = "paused", paused = true }, { name = "say \"hi\"", priority = 7 }]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [1]
batch_sizes = [1]
[trial]
duration_s = 1
"#;
        let w = Workload::parse(Path::new("w.toml"), text).unwrap();
        let scratch = Scratch::like(&w);
        let built = workload(None, &scratch).unwrap();
        let q = &built.population.queues[0];
        assert_eq!((q.name.as_str(), q.priority), ("say \"hi\"", Some(7)));
        assert_eq!(built.population.payload_bytes, 64);
        assert_eq!(
            scratch.describe(),
            r#"8 pending, due rows of queue "say \"hi\"" (type "bench", priority 7, payload 64 bytes)"#
        );
    }

    /// The broken strategy the behaviour suite proves is `waiting`: production's
    /// statement, word for word, without SKIP LOCKED.
    #[test]
    fn waiting_is_production_without_skip_locked() {
        let body = |sql: &str| -> String {
            sql.lines()
                .filter(|l| !l.trim_start().starts_with("--"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        use crate::backend_kind::BackendKind;
        for kind in [BackendKind::Postgres, BackendKind::Mysql] {
            let production = body(Strategy::PRODUCTION.text(kind));
            assert!(production.contains(" SKIP LOCKED"));
            assert_eq!(
                production.replace(" SKIP LOCKED", ""),
                body(Strategy::WAITING.text(kind))
            );
        }
    }

    /// `advisory-xact` is `advisory`'s statement, word for word, with the lock
    /// transaction-scoped and without the step that unlocks what it could not claim (a
    /// transaction-scoped lock ends with the claim).
    #[test]
    fn advisory_xact_is_advisory_with_transaction_scoped_locks() {
        let body = |name: &str| -> String {
            let s = Strategy::builtin_named(name).unwrap();
            s.text(crate::backend_kind::BackendKind::Postgres)
                .lines()
                .filter(|l| !l.trim_start().starts_with("--"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let advisory = body("advisory");
        let unlock = advisory
            .find(",\nunlocked AS (")
            .expect("advisory ends by unlocking what it did not claim");
        assert_eq!(
            advisory[..unlock].replace("pg_try_advisory_lock(", "pg_try_advisory_xact_lock(")
                + "\nSELECT * FROM claimed",
            body("advisory-xact")
        );
    }
}
