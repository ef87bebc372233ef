//! A PostgreSQL worker connection: its prepared statements, the claim shapes it runs
//! (one statement, read then write, read then conditional, version compare-and-set),
//! and the job lifecycle it drives. The backend (`mod.rs`) opens it and owns the
//! control connection.

use super::claim::Call;
use super::job_key::JobKey;
use super::prepared::{Prepared, Stepped, custom_lock, explained_statement, prepare_strategy};
use super::statement::{Keep, Stmt, describe_all};
use super::*;
use crate::backend::lock_service::for_claim;
/// A session's statements, kept as [`Keep`] says: prepared once per connection so that
/// the hot path sends only Bind/Execute, or described once and sent unnamed through a
/// transaction pooler.
struct Statements {
    unlock: Stmt,
    announce: Stmt,
    complete_batch: Stmt,
    start: Stmt,
    start_ungated: Stmt,
    heartbeat: Stmt,
    effect: Stmt,
    complete: Stmt,
    fail: Stmt,
    release: Stmt,
    rescue: Stmt,
    produce: Stmt,
    sample: Stmt,
}

impl Statements {
    async fn prepare(c: &Client, keep: Keep, storage: Storage) -> Result<Statements, BackendError> {
        // What finishing a job writes is the storage model's; the rest is the same.
        let [complete, complete_batch, fail] = super::storage::finishing(storage);
        let sqls = [
            step(SQL.session, "unlock"),
            complete_batch,
            step(SQL.session, "announce"),
            SQL.start,
            START_UNGATED_SQL,
            SQL.heartbeat,
            SQL.effect,
            complete,
            fail,
            SQL.release,
            SQL.rescue,
            SQL.produce,
            SQL.sample,
        ];
        let described = describe_all(c, keep, &sqls, false)
            .await
            .map_err(|e| query_error("prepare", e))?;
        let mut d = described.into_iter().map(|d| d.stmt);
        let mut next = || d.next().expect("one statement per SQL");
        Ok(Statements {
            unlock: next(),
            complete_batch: next(),
            announce: next(),
            start: next(),
            start_ungated: next(),
            heartbeat: next(),
            effect: next(),
            complete: next(),
            fail: next(),
            release: next(),
            rescue: next(),
            produce: next(),
            sample: next(),
        })
    }
}

pub struct PostgresSession {
    client: Client,
    /// How its statements are kept: unnamed through a transaction pooler.
    keep: Keep,
    statements: Statements,
    /// Each strategy's statements, prepared on its first claim on this connection.
    prepared: Vec<(Strategy, Prepared)>,
    /// The last claim took advisory locks (`advisory`): finishing or releasing a job
    /// unlocks it.
    advisory: bool,
    /// Woken by each `NOTIFY` this connection receives.
    wakeups: Arc<Notify>,
    /// `LISTEN` was sent (on the first claim of a listening strategy).
    listening: bool,
    /// Declared claims' `release` steps, prepared with their claims, and which one the
    /// last claim's strategy has.
    releases: Vec<(Strategy, Stmt, Vec<Param>)>,
    release_after: Option<usize>,
    /// Jobs claimed inside the open transaction by a claim with a release step: a
    /// rollback gives their rows back but not what the claim took beyond them (a
    /// session-level lock outlives it), so the release step runs for them then.
    claimed_in_transaction: Vec<i64>,
    /// Between [`Session::begin`] and [`Session::end`]: a statement prepared then must
    /// not end the caller's transaction.
    in_transaction: bool,
    /// A logical slot `hold-slot` made is held: [`Session::end`] drops it.
    slot_held: bool,
    worker_id: String,
    /// The queue this worker serves (a declared claim's `:queue`).
    queue: String,
    /// The strategy prepared last binds `:queue`: on a declared table, each effect
    /// records `queue` as its job's (nothing else says which queue a job was in).
    claims_by_queue: bool,
    worker_role: String,
    /// Reused buffers for the ids a two-step strategy reads before it writes, and
    /// (`version-cas`) the version of each.
    ids: Vec<i64>,
    versions: Vec<i64>,
    /// Reused: what a declared lock step returned, and its ids as its claim step binds
    /// them (in the table's id type).
    locked: Vec<ClaimedJob>,
    keys: Vec<JobKey>,
    /// The cleanup job's statements (the storage model's), on the cleaner's session.
    cleanup: super::cleanup::Cleaner,
    /// A worker's leases in the lock service, when the run has one (`lock-service`).
    leases: Option<Box<crate::backend::lock_service::Leases>>,
    /// The workload's own table's lifecycle statements, when it declares one: they take
    /// the place of claimbench's.
    table: Option<Box<super::declared_table::TableStatements>>,
}

impl PostgresSession {
    /// A worker's session on `client`, its lifecycle statements prepared.
    pub(super) async fn open(
        client: Client,
        wakeups: Arc<Notify>,
        worker_id: &str,
        worker_role: String,
        (keep, storage): (Keep, Storage),
        table: Option<&crate::declared_table::TableForm>,
    ) -> Result<PostgresSession, BackendError> {
        let statements = Statements::prepare(&client, keep, storage).await?;
        let table = match table {
            Some(t) => Some(Box::new(
                super::declared_table::TableStatements::prepare(&client, keep, t).await?,
            )),
            None => None,
        };
        Ok(PostgresSession {
            client,
            keep,
            statements,
            prepared: Vec::new(),
            advisory: false,
            wakeups,
            listening: false,
            releases: Vec::new(),
            release_after: None,
            claimed_in_transaction: Vec::new(),
            in_transaction: false,
            slot_held: false,
            worker_id: worker_id.to_string(),
            queue: String::new(),
            claims_by_queue: false,
            worker_role,
            ids: Vec::new(),
            versions: Vec::new(),
            locked: Vec::new(),
            keys: Vec::new(),
            cleanup: super::cleanup::Cleaner::new(storage),
            leases: None,
            table,
        })
    }

    /// Takes its leases in `leases` from now on (`lock-service`).
    pub(super) fn with_leases(mut self, leases: crate::backend::lock_service::Leases) -> Self {
        self.leases = Some(Box::new(leases));
        self
    }
}

/// See [`PostgresSession::conditional`].
type Conditional<'a> = (&'a Client, &'a Stmt, &'a Stmt, &'a String);

impl PostgresSession {
    /// `form` (a step of session.sql: `explain-plan`, `explain-analyze`) of `strategy`'s
    /// explained statement for `batch`, its rows.
    async fn explain_rows(
        &self,
        strategy: &Strategy,
        batch: u32,
        form: &str,
    ) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
        let c = &self.client;
        let sql = explained_statement(strategy).1;
        let explain = fill(step(SQL.session, form), &[("statement", sql)]);
        // Always inside the caller's transaction, so that the named statement is made
        // and closed on one server connection even through a transaction pooler.
        let stmt = c.prepare(&explain).await?;
        let types = stmt.params().to_vec();
        let binds = match custom_lock(strategy) {
            Some((src, lock)) => claim::Binds::listed(&lock.params, (1, &src.consts), &types),
            None => claim::Binds::of(strategy, &types),
        };
        Ok(match binds {
            Ok(binds) => {
                let stmt = Stmt::Prepared(stmt);
                binds
                    .query(c, &stmt, Call::new(batch, &self.worker_id, &self.queue))
                    .await?
            }
            Err(_) => Vec::new(),
        })
    }

    /// Where `strategy`'s statements are in `prepared`, preparing them on first use.
    /// The preparing is boxed: it happens once per strategy and connection, and its
    /// round trips' state would otherwise be in every claim's future, copied at each
    /// call (the claim path's futures are moved, whole, into their callers' as they
    /// start: docs/harness-overhead.md).
    async fn prepared_index(&mut self, strategy: &Strategy) -> Result<usize, BackendError> {
        match self.prepared.iter().position(|(s, _)| *s == *strategy) {
            Some(i) => Ok(i),
            None => Box::pin(self.prepare_new(strategy)).await,
        }
    }

    async fn prepare_new(&mut self, strategy: &Strategy) -> Result<usize, BackendError> {
        let keep = (self.keep, self.in_transaction);
        self.claims_by_queue = strategy.reads_queue();
        let p = prepare_strategy(&self.client, strategy, keep).await?;
        if let Some((src, r)) = strategy
            .def()
            .custom
            .as_ref()
            .and_then(|c| Some((c, c.release.as_ref()?)))
        {
            let described = describe_all(&self.client, keep.0, &[&r.sql], keep.1)
                .await
                .map_err(|e| {
                    BackendError::other(
                        "prepare the claim",
                        format!(
                            "{}: strategies.{strategy}.postgres step release: the server refused it: {}",
                            src.file,
                            super::root_cause(&e)
                        ),
                    )
                })?;
            let stmt = described.into_iter().next().expect("one statement").stmt;
            self.releases
                .push((strategy.clone(), stmt, r.params.clone()));
        }
        if strategy.def().listens && !self.listening {
            self.client
                .batch_execute(step(SQL.session, "listen"))
                .await
                .map_err(|e| query_error("listen", e))?;
            self.listening = true;
        }
        self.prepared.push((strategy.clone(), p));
        Ok(self.prepared.len() - 1)
    }

    /// A read-then-conditional strategy's statements, borrowed beside what sends them:
    /// the client, the select and claim-one steps, and this worker's id.
    async fn conditional(&mut self, strategy: &Strategy) -> Result<Conditional<'_>, BackendError> {
        let i = self.prepared_index(strategy).await?;
        match &self.prepared[i].1 {
            Prepared::ReadThenConditional { select, claim_one } => {
                Ok((&self.client, select, claim_one, &self.worker_id))
            }
            _ => unreachable!("a conditional strategy is prepared as one"),
        }
    }

    /// The underlying client, for tests that need to hold a transaction open.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// Each step binds what its statement under `migrations/postgres/` takes, in order.
impl Lifecycle for PostgresSession {
    async fn run(&mut self, step: Step) -> Result<Reply, BackendError> {
        let (c, st, me) = (&self.client, &self.statements, &self.worker_id);
        if let Some(t) = &self.table {
            let queue = self.claims_by_queue.then_some(&self.queue);
            // Boxed: claimbench's own lifecycle's future stays its own size.
            return Box::pin(t.run(c, (me, queue), step)).await;
        }
        let e = |e| query_error(step.what(), e);
        let row = async |stmt, args: &[&(dyn ToSql + Sync)]| {
            let r = Stmt::query_opt(stmt, c, args).await.map_err(e)?;
            // start answers one column, effect two (the second a boolean): asking a
            // one-column row for a second would build an error on every start.
            Ok::<_, BackendError>(match r {
                Some(r) if r.len() > 1 => {
                    Reply::row(r.get(0), Some(i64::from(r.get::<_, bool>(1))))
                }
                Some(r) => Reply::row(r.get(0), None),
                None => Reply::default(),
            })
        };
        match step {
            Step::Start { job, gated, token } => {
                let stmt = if gated { &st.start } else { &st.start_ungated };
                row(stmt, &[&job, me, &token]).await
            }
            Step::Heartbeat { job, token } => {
                let n = st.heartbeat.execute(c, &[&job, me, &token]).await;
                Ok(Reply::changed(n.map_err(e)?))
            }
            Step::Effect(f) => {
                let failed = f.failed as i16;
                let args: [&(dyn ToSql + Sync); 6] =
                    [&f.job, &f.attempt, me, &failed, &f.started_us, &f.token];
                row(&st.effect, &args).await
            }
            Step::Complete { job } => {
                let n = st.complete.execute(c, &[&job, me]).await;
                Ok(Reply::changed(n.map_err(e)?))
            }
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => {
                let (delay_s, max) = (retry_delay.as_secs_f64(), max_attempts as i32);
                let r = st.fail.query_opt(c, &[&job, me, &delay_s, &max]).await;
                let r = r.map_err(e)?.ok_or_else(|| {
                    BackendError::other("fail a job", "the fail statement returned no row")
                })?;
                Ok(Reply::row(Some(r.get(0)), Some(r.get(1))))
            }
        }
    }

    /// Gives up the advisory locks of `jobs` after an `advisory` claim, gives back
    /// their leases in the lock service, and runs a declared claim's `release` step for
    /// them; nothing otherwise.
    async fn finished(&mut self, jobs: &[i64]) -> Result<(), BackendError> {
        if let Some(l) = self.leases.as_mut().filter(|l| l.held() > 0) {
            // A lock service out of reach leaves the leases to expire: the job's own
            // step succeeded and stays so; the next claim's lease finds the lost
            // connection and the worker reconnects then.
            let _ = l.give_back(jobs).await;
        }
        if self.advisory {
            self.statements
                .unlock
                .execute(&self.client, &[&jobs])
                .await
                .map_err(|e| query_error("advisory unlock", e))?;
        }
        if let Some(i) = self.release_after {
            // Per job: its one or two parameters bound without allocating.
            type Arg<'a> = &'a (dyn tokio_postgres::types::ToSql + Sync);
            let (_, stmt, params) = &self.releases[i];
            let mut args: [Arg<'_>; 2] = [&jobs, &jobs];
            for (slot, p) in args.iter_mut().zip(params) {
                if *p == Param::WorkerId {
                    *slot = &self.worker_id;
                }
            }
            stmt.execute(&self.client, &args[..params.len().min(2)])
                .await
                .map_err(|e| query_error("run the declared release step", e))?;
        }
        Ok(())
    }
}

/// A declared claim with a lock step: the lock step's ids, then the claim step with
/// them, in the caller's transaction or (`own`) one of its own. Returns the claim
/// step's rows as the claimed jobs; a lock step that returns more than the batch is
/// refused, as one claim would be.
async fn stepped_claim(
    c: &Client,
    own: bool,
    (lock, claim, locked, ids): (
        &ClaimStatement,
        &ClaimStatement,
        &mut Vec<ClaimedJob>,
        &mut Vec<JobKey>,
    ),
    call: Call<'_>,
    out: &mut Vec<ClaimedJob>,
) -> Result<(), BackendError> {
    let e = |e| query_error("claim", e);
    if own {
        c.batch_execute("BEGIN").await.map_err(e)?;
    }
    locked.clear();
    lock.claim(c, call, locked).await.map_err(e)?;
    if locked.len() > call.batch as usize {
        return Err(BackendError::other(
            "claim",
            format!(
                "the lock step returned {} rows for a batch of {}; it must take at most :batch (LIMIT :batch)",
                locked.len(),
                call.batch
            ),
        ));
    }
    if !locked.is_empty() {
        ids.clear();
        ids.extend(locked.iter().map(|j| JobKey(j.id)));
        claim.claim(c, Call { ids, ..call }, out).await.map_err(e)?;
    }
    if own {
        c.batch_execute("COMMIT").await.map_err(e)?;
    }
    Ok(())
}

/// A two-step strategy's select binds what its entry lists ([`Strategy::binds`]): the
/// batch, and for a sharded one the worker id after it (its shard map's key). The
/// values, and how many of them to send (an array, not a Vec: this is every claim).
fn select_args<'a>(
    strategy: &Strategy,
    batch: &'a i64,
    worker_id: &'a String,
) -> ([&'a (dyn ToSql + Sync); 2], usize) {
    let binds = strategy.binds();
    debug_assert!(
        binds
            .iter()
            .zip([Param::Batch, Param::WorkerId])
            .all(|(a, b)| *a == b)
    );
    ([batch, worker_id], binds.len())
}

fn claimed_row(r: &tokio_postgres::Row) -> ClaimedJob {
    ClaimedJob {
        id: r.get(COL_ID),
        attempt: r.get(COL_ATTEMPT),
        queue_wait_us: r.get(COL_QUEUE_WAIT_US),
    }
}

fn push_claimed(rows: &[tokio_postgres::Row], out: &mut Vec<ClaimedJob>) {
    out.extend(rows.iter().map(claimed_row));
}

impl PostgresSession {
    /// naive's read and update, with (`leased`) a lease per id between them: the update
    /// then reaches only the ids whose lease this worker won, and a lease whose row the
    /// update did not reach (another worker finished the job after the read) is given
    /// back. Returns how many leases another worker held.
    async fn read_write(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
        leased: bool,
    ) -> Result<u32, BackendError> {
        let Ask { strategy, batch } = ask;
        let i = self.prepared_index(strategy).await?;
        let Prepared::ReadThenWrite { select, update } = &self.prepared[i].1 else {
            unreachable!("a read-then-write strategy (leased or not) is prepared as one");
        };
        let mut leases = for_claim(self.leases.as_deref_mut(), leased, strategy)?;
        let (c, ids, e) = (&self.client, &mut self.ids, |e| query_error("claim", e));
        ids.clear();
        let b = batch as i64;
        let (args, n) = select_args(strategy, &b, &self.worker_id);
        let rows = select.query(c, &args[..n]).await.map_err(e)?;
        ids.extend(rows.iter().map(|r| r.get::<_, i64>(0)));
        let lost = match leases.as_mut() {
            Some(l) => l.take(ids).await?,
            None => 0,
        };
        if ids.is_empty() {
            return Ok(lost);
        }
        let before = out.len();
        let rows = match update.query(c, &[&*ids, &self.worker_id]).await {
            Ok(rows) => rows,
            Err(err) => {
                // Unknown whether the update reached the rows: the leases only expire.
                if let Some(l) = leases {
                    l.forget(ids);
                }
                return Err(e(err));
            }
        };
        push_claimed(&rows, out);
        if let Some(l) = leases
            && out.len() - before < ids.len()
        {
            let reached = &out[before..];
            ids.retain(|id| !reached.iter().any(|j| j.id == *id));
            // As in `finished`: the claim stands, the leases expire if this fails.
            let _ = l.give_back(ids).await;
        }
        Ok(lost)
    }
}

/// Each strategy's statements are prepared on its first claim on this connection.
impl ClaimSteps for PostgresSession {
    async fn locking_claim(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let Ask { strategy, batch } = ask;
        let i = self.prepared_index(strategy).await?;
        let c = &self.client;
        let before = out.len();
        match &self.prepared[i].1 {
            Prepared::Claim(claim) => {
                let claimed = claim
                    .claim(c, Call::new(batch, &self.worker_id, &self.queue), out)
                    .await;
                claimed.map_err(|e| query_error("claim", e))?;
            }
            // Boxed, so that a one-statement claim's future is not the size of this
            // two-statement one's.
            Prepared::Stepped(steps) => {
                Box::pin(async {
                    let Stepped { lock, claim } = &**steps;
                    let own = !self.in_transaction;
                    let steps = (lock, claim, &mut self.locked, &mut self.keys);
                    let r = stepped_claim(
                        c,
                        own,
                        steps,
                        Call::new(batch, &self.worker_id, &self.queue),
                        out,
                    );
                    if let Err(e) = r.await {
                        out.truncate(before);
                        if own {
                            let _ = c.batch_execute("ROLLBACK").await;
                        }
                        return Err(e);
                    }
                    Ok(())
                })
                .await?
            }
            _ => unreachable!("a claim-shaped strategy is prepared as one"),
        }
        self.advisory = strategy.def().advisory;
        self.release_after = match self.releases.is_empty() {
            true => None,
            false => self.releases.iter().position(|(s, ..)| s == strategy),
        };
        if self.in_transaction && self.release_after.is_some() {
            self.claimed_in_transaction
                .extend(out[before..].iter().map(|j| j.id));
        }
        Ok(())
    }

    async fn read_then_write(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        self.read_write(ask, out, false).await.map(drop)
    }

    async fn read_lock_write(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<u32, BackendError> {
        self.read_write(ask, out, true).await
    }

    /// One UPDATE over the candidates' (id, version) pairs: what it returns was won.
    async fn version_cas(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<u32, BackendError> {
        let Ask { strategy, batch } = ask;
        let i = self.prepared_index(strategy).await?;
        let Prepared::VersionCas {
            select,
            claim_batch,
        } = &self.prepared[i].1
        else {
            unreachable!("a version-cas strategy is prepared as one");
        };
        let (c, e) = (&self.client, |e| query_error("claim", e));
        let (ids, versions) = (&mut self.ids, &mut self.versions);
        ids.clear();
        versions.clear();
        for r in select.query(c, &[&(batch as i64)]).await.map_err(e)? {
            ids.push(r.get(0));
            versions.push(r.get(1));
        }
        if ids.is_empty() {
            return Ok(0);
        }
        let args: [&(dyn ToSql + Sync); 3] = [&*ids, &*versions, &self.worker_id];
        let rows = claim_batch.query(c, &args).await.map_err(e)?;
        push_claimed(&rows, out);
        Ok((ids.len() - rows.len()) as u32)
    }

    async fn candidates(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let Ask { strategy, batch } = ask;
        let (c, select, _, me) = self.conditional(strategy).await?;
        let b = batch as i64;
        let (args, n) = select_args(strategy, &b, me);
        let rows = select.query(c, &args[..n]).await;
        let rows = rows.map_err(|e| query_error("claim", e))?;
        out.extend(rows.iter().map(|r| ClaimedJob {
            id: r.get(0),
            attempt: r.get(1),
            queue_wait_us: 0,
        }));
        Ok(())
    }

    /// The job as its RETURNING gives it: the queue wait is the claim's.
    async fn claim_one(&mut self, ask: Ask<'_>, job: ClaimedJob) -> Won {
        let (c, _, claim_one, me) = self.conditional(ask.strategy).await?;
        let args: [&(dyn ToSql + Sync); 3] = [&job.id, me, &job.attempt];
        let rows = claim_one.query(c, &args).await;
        let rows = rows.map_err(|e| query_error("claim", e))?;
        Ok(rows.first().map(claimed_row))
    }
}

impl Session for PostgresSession {
    async fn wait_for_work(&mut self, max: Duration) -> bool {
        if !self.listening {
            tokio::time::sleep(max).await;
            return false;
        }
        tokio::time::timeout(max, self.wakeups.notified())
            .await
            .is_ok()
    }

    async fn announce(&mut self) -> Result<(), BackendError> {
        self.statements
            .announce
            .execute(&self.client, &[])
            .await
            .map(|_| ())
            .map_err(|e| query_error("announce", e))
    }

    async fn prepare(&mut self, strategy: &Strategy) -> Result<(), BackendError> {
        self.prepared_index(strategy).await.map(|_| ())
    }

    fn serve_queue(&mut self, queue: &str) {
        self.queue = queue.to_string();
    }

    async fn hold_in_flight(
        &mut self,
        strategy: &Strategy,
        ids: &[i64],
    ) -> Result<(), BackendError> {
        self.begin().await?;
        let declared = strategy.def().custom.as_ref().and_then(|c| c.hold.as_ref());
        // On a declared table the claims in flight hold its rows, not jobs_hot's.
        let table = self.table.as_ref().map(|t| t.hold_sql());
        let default = table
            .as_deref()
            .unwrap_or(step(super::model_state::MODEL_SQL, "hold"));
        // A hold step binds :ids alone, as its only parameter, in the table's id type;
        // the declared table's default hold also takes the numbers, for its advisory
        // locks.
        let keys: Vec<JobKey> = ids.iter().copied().map(JobKey).collect();
        let (sql, args): (&str, &[&(dyn ToSql + Sync)]) = match (declared, &table) {
            (Some(h), _) => (&h.sql, &[&keys]),
            (None, Some(_)) => (default, &[&keys, &ids]),
            (None, None) => (default, &[&keys]),
        };
        self.client
            .execute(sql, args)
            .await
            .map_err(|e| query_error("hold rows", e))?;
        Ok(())
    }

    async fn begin(&mut self) -> Result<(), BackendError> {
        self.client
            .batch_execute("BEGIN")
            .await
            .map_err(|e| query_error("begin", e))?;
        self.in_transaction = true;
        Ok(())
    }

    /// A rolled-back claim gives its jobs back, so an `advisory` claimer gives up their
    /// locks too, as its worker would on abandoning them.
    async fn end(&mut self, commit: bool) -> Result<(), BackendError> {
        let mut sql = match (commit, self.advisory) {
            (true, _) => "COMMIT".to_string(),
            (false, false) => "ROLLBACK".to_string(),
            (false, true) => format!("ROLLBACK; {}", step(SQL.session, "unlock-all")),
        };
        // A held slot is no transaction: ending the hold drops it.
        if std::mem::take(&mut self.slot_held) {
            sql = format!("{sql}; {}", step(SQL.session, "drop-slot"));
        }
        self.in_transaction = false;
        self.client
            .batch_execute(&sql)
            .await
            .map_err(|e| query_error("end", e))?;
        let rolled_back = std::mem::take(&mut self.claimed_in_transaction);
        if !commit && !rolled_back.is_empty() {
            self.finished(&rolled_back).await?;
        }
        Ok(())
    }

    async fn apply(&mut self, settings: &[(String, String)]) -> Result<(), BackendError> {
        for (name, value) in settings {
            self.client
                .execute(step(SQL.session, "apply"), &[name, value])
                .await
                .map_err(|e| query_error("apply a session setting", e))?;
        }
        Ok(())
    }

    async fn complete_many(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        let rows = self
            .statements
            .complete_batch
            .query(&self.client, &[&jobs, &self.worker_id])
            .await
            .map_err(|e| query_error("complete a batch", e))?;
        self.finished(jobs).await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn release(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(t) = &self.table {
            let back = t.requeue(&self.client, &self.worker_id, jobs).await?;
            self.finished(jobs).await?;
            return Ok(back);
        }
        let rows = self
            .statements
            .release
            .query(&self.client, &[&jobs, &self.worker_id])
            .await
            .map_err(|e| query_error("release", e))?;
        self.finished(jobs).await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn rescue(&mut self, lease: Duration) -> Result<Vec<i64>, BackendError> {
        if let Some(t) = &self.table {
            return t.rescue(&self.client, &self.worker_id, lease).await;
        }
        let rows = self
            .statements
            .rescue
            .query(&self.client, &[&lease.as_secs_f64()])
            .await
            .map_err(|e| query_error("rescue", e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn clean(&mut self, retain: Duration, batch: u32) -> Result<u64, BackendError> {
        self.cleanup
            .clean(&self.client, self.keep, (retain, batch))
            .await
    }

    async fn cleanup_state(
        &mut self,
        retain: Duration,
        cap: u64,
    ) -> Result<crate::results::CleanupState, BackendError> {
        self.cleanup
            .state(&self.client, self.keep, (retain, cap))
            .await
    }

    async fn produce(&mut self, workload: &Workload, ages_us: &[i64]) -> Result<u64, BackendError> {
        if let Some(t) = &self.table {
            return t
                .enqueue(&self.client, &self.worker_id, workload, ages_us)
                .await;
        }
        let p = &workload.population;
        let (qnames, qbounds) = p.queue_bounds();
        let (prios, pbounds) = p.priority_bounds();
        self.statements
            .produce
            .execute(
                &self.client,
                &[
                    &ages_us,
                    &qnames,
                    &qbounds,
                    &prios,
                    &pbounds,
                    &(p.payload_bytes as i32),
                    &p.queue_priorities(),
                ],
            )
            .await
            .map_err(|e| query_error("produce", e))
    }

    async fn sample(&mut self, workload: &Workload) -> Result<Sample, BackendError> {
        // The horizon, autovacuum runs and WAL only where the trial is read over time.
        fn reads_over_time(w: &Workload) -> bool {
            w.faults.hold_snapshot.is_some()
                || w.trial
                    .duration
                    .is_some_and(|d| d.as_secs_f64() >= crate::workload::READ_OVER_TIME_S)
        }
        let limited: Vec<&str> = workload
            .population
            .queues
            .iter()
            .filter(|q| q.max_workers.is_some())
            .map(|q| q.name.as_str())
            .collect();
        let priorities = workload.population.all_priorities();
        let queues: Vec<&str> = match workload.population.queues.len() {
            0 | 1 => Vec::new(),
            _ => workload
                .population
                .queues
                .iter()
                .map(|q| q.name.as_str())
                .collect(),
        };
        let r = self
            .statements
            .sample
            .query_opt(
                &self.client,
                &[
                    &self.worker_role,
                    &limited,
                    &priorities,
                    &queues,
                    &reads_over_time(workload),
                    &workload
                        .table
                        .as_ref()
                        .map_or("jobs_hot", |t| t.name.as_str()),
                ],
            )
            .await
            .map_err(|e| query_error("sample", e))?
            .ok_or_else(|| BackendError::other("sample", "the sample statement returned no row"))?;
        // A declared table's oldest job is its own step's reading; claimbench's
        // per-queue probes read jobs_hot, which that table leaves empty.
        let (oldest_pending_ms, work_left, queue_oldest_ms) = match &self.table {
            Some(t) => {
                let oldest = t.oldest_ms(&self.client).await?;
                (oldest, oldest.is_some(), Vec::new())
            }
            None => (r.get(0), r.get(3), r.get(5)),
        };
        let counts: Vec<i64> = r.get(4);
        let mut counts = counts.into_iter();
        let queue_active = workload
            .population
            .queues
            .iter()
            .map(|q| q.max_workers.and_then(|_| counts.next()))
            .collect();
        Ok(Sample {
            oldest_pending_ms,
            lock_waiting: r.get::<_, i32>(1) as u32,
            active: r.get::<_, i32>(2) as u32,
            work_left,
            queue_active,
            queue_oldest_ms,
            table: Some(crate::results::TableSample {
                at_s: 0.0,
                dead_tuples: r.get(6),
                table_bytes: r.get(7),
                index_bytes: r.get(8),
                updates: r.get(9),
                hot_updates: r.get(10),
                replay_lag_ms: r.get(11),
                replay_behind_bytes: r.get(12),
                advisory_locks: Some(r.get(13)),
                horizon_age: r.get(14),
                autovacuums: r.get(15),
                autoanalyzes: r.get(16),
                horizon_holder: r.get(17),
                waits: r
                    .get::<_, Option<Vec<String>>>(18)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|w| {
                        let (event, n) = w.rsplit_once('=')?;
                        Some((event.to_string(), n.parse().ok()?))
                    })
                    .collect(),
                wal_bytes: r.get(19),
                slot_wal_bytes: r.get(20),
            }),
            history_length: None,
        })
    }

    /// `EXPLAIN (FORMAT JSON)` of the claim, or of a two-step strategy's select step:
    /// the plan alone, nothing runs.
    async fn explain_claim_plan_only(
        &mut self,
        strategy: &Strategy,
        batch: u32,
    ) -> Result<Option<crate::backend::plan::PlanSample>, BackendError> {
        let rows = self
            .explain_rows(strategy, batch, "explain-plan")
            .await
            .map_err(|e| query_error("explain the claim", e))?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        Ok(crate::backend::plan::from_postgres(
            explained_statement(strategy).0,
            row.get(0),
            0.0,
        ))
    }

    /// `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` of the claim, or of a two-step
    /// strategy's select step, between BEGIN and ROLLBACK: the claim runs for real (it
    /// locks its batch for a moment), and leaves nothing behind.
    async fn explain_claim(
        &mut self,
        strategy: &Strategy,
        batch: u32,
    ) -> Result<Option<crate::backend::plan::PlanSample>, BackendError> {
        let statement = explained_statement(strategy).0;
        let e = |e| query_error("explain the claim", e);
        self.client.batch_execute("BEGIN").await.map_err(e)?;
        let explained = self.explain_rows(strategy, batch, "explain-analyze").await;
        let c = &self.client;
        // Session-level advisory locks outlive the rollback: give them up too, whatever
        // the claim (a declared one may take them, as Que's does). This connection is
        // the plan sample's own and holds no job, so it has none to keep; kept, they
        // would hide the rows it locked from every worker until it closed.
        let end = format!("ROLLBACK; {}", step(SQL.session, "unlock-all"));
        c.batch_execute(&end).await.map_err(e)?;
        let Some(row) = explained.map_err(e)?.into_iter().next() else {
            return Ok(None);
        };
        let plan: serde_json::Value = row.get(0);
        // The caller stamps the time: it knows the trial's clock.
        Ok(crate::backend::plan::from_postgres(statement, plan, 0.0))
    }

    /// A repeatable-read transaction keeps the snapshot of its first statement.
    async fn hold_snapshot(&mut self, kind: crate::workload::HoldKind) -> Result<(), BackendError> {
        use crate::workload::HoldKind;
        let name = match kind {
            HoldKind::Snapshot | HoldKind::RepeatableReadScans => "hold-snapshot",
            HoldKind::IdleInTransaction => "hold-xid",
            HoldKind::LogicalSlot => "hold-slot",
        };
        let held = self.client.batch_execute(step(SQL.session, name)).await;
        match held {
            Err(e) if kind == HoldKind::LogicalSlot => Err(BackendError::other(
                "hold a logical replication slot (faults.hold_kind = \"logical-slot\")",
                format!(
                    "{}; it needs wal_level = logical and a role with REPLICATION, and claimbench changes no setting of a server it did not start: set them there, or run on the embedded server (started with wal_level = logical for such a workload)",
                    super::root_cause(&e)
                ),
            )),
            Err(e) => Err(query_error("hold a snapshot", e)),
            Ok(()) => {
                self.slot_held = kind == HoldKind::LogicalSlot;
                Ok(())
            }
        }
    }

    async fn scan_held(&mut self) -> Result<(), BackendError> {
        self.client
            .batch_execute(step(SQL.session, "scan-held"))
            .await
            .map_err(|e| query_error("scan the hot table", e))
    }

    async fn kill_workers(&mut self, role: &str) -> Result<u64, BackendError> {
        let row = self
            .client
            .query_one(step(SQL.session, "kill-workers"), &[&role])
            .await
            .map_err(|e| query_error("kill worker connections", e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }
}
