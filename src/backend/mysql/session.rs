//! A MySQL session: one connection with its prepared statements, the claim strategies
//! (with the seed's per-queue capacity check applied to the locked rows) and the job
//! lifecycle, each multi-statement step in its own short transaction.

use super::{
    CLEANUP_SQL, COL_ATTEMPT, COL_ID, COL_PRIORITY, COL_QUEUE_WAIT_US, COL_VERSION, PRODUCTION_SQL,
    SQL, allow_recursion, expand_ids, int, query_error, session_error,
};
use crate::backend::claim::{Ask, ClaimSteps, Done, Won};
use crate::backend::lifecycle::Lifecycle;
use crate::backend::lock_service::for_claim;
use crate::backend::shared::{
    capped_queues_json, json_numbers, queue_active, queue_oldest, queues_json,
};
use crate::backend::sql::{fill, step};
use crate::backend::{BackendError, ClaimedJob, Sample, Session};
use crate::backend_kind::BackendKind;
use crate::strategy::{Shape, Strategy};
use crate::workload::Workload;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Row, Statement, Value};
use std::sync::Arc;
use std::time::Duration;

/// A session's prepared statements, prepared once per connection.
pub(super) struct Statements {
    capacity: Statement,
    naive_select: Statement,
    conditional_select: Statement,
    conditional_claim: Statement,
    version_select: Statement,
    version_claim: Statement,
    pub(super) start: Statement,
    pub(super) heartbeat: Statement,
    pub(super) effect: Statement,
    pub(super) complete: Statement,
    pub(super) fail: Statement,
    rescue_lock: Statement,
    produce: Statement,
}

impl Statements {
    pub(super) async fn prepare(c: &mut Conn) -> Result<Statements, BackendError> {
        let mut s = Vec::new();
        for sql in [
            step(PRODUCTION_SQL, "capacity"),
            step(SQL.naive, "select"),
            step(SQL.conditional, "select"),
            step(SQL.conditional, "claim-one"),
            step(SQL.version_cas, "select"),
            step(SQL.version_cas, "claim-one"),
            step(SQL.start, "call"),
            SQL.heartbeat,
            step(SQL.effect, "call"),
            step(SQL.complete, "call"),
            step(SQL.fail, "call"),
            step(SQL.rescue, "lock"),
            SQL.produce,
        ] {
            s.push(c.prep(sql).await.map_err(|e| query_error("prepare", e))?);
        }
        let mut s = s.into_iter();
        let mut next = || s.next().expect("one statement per field");
        Ok(Statements {
            capacity: next(),
            naive_select: next(),
            conditional_select: next(),
            conditional_claim: next(),
            version_select: next(),
            version_claim: next(),
            start: next(),
            heartbeat: next(),
            effect: next(),
            complete: next(),
            fail: next(),
            rescue_lock: next(),
            produce: next(),
        })
    }
}

/// One declared claim's statements on this connection (`custom.rs` prepares and runs
/// them; defined here, with the session that holds them, so the session imports none of
/// its claim executors).
pub(super) struct CustomPrepared {
    pub(super) strategy: Strategy,
    pub(super) lock: Statement,
    /// Where the lock step returns `id`, `attempt_count` and `queue_wait_us`.
    pub(super) id: usize,
    pub(super) attempt: Option<usize>,
    pub(super) queue_wait: Option<usize>,
    /// The claim step for one batch size.
    pub(super) claim: Option<(u32, Statement)>,
}

/// A declared table's statements on this connection (`declared_table.rs` prepares
/// and runs them; defined here, as the declared claims' are).
pub(super) struct TableStatements {
    pub(super) form: Arc<crate::declared_table::TableForm>,
    pub(super) start: Option<DeclaredPrepared>,
    pub(super) heartbeat: Option<DeclaredPrepared>,
    pub(super) complete: DeclaredPrepared,
    pub(super) fail: Option<DeclaredPrepared>,
    pub(super) enqueue: Option<DeclaredPrepared>,
    pub(super) oldest: Statement,
    pub(super) effect: Statement,
}

/// One step of a declared table, with what each of its `?` binds, in order.
pub(super) struct DeclaredPrepared {
    pub(super) stmt: Statement,
    pub(super) binds: Vec<crate::declared_table::Bind>,
}

/// `offset-start`'s three reads, prepared once per connection (`offset.rs`).
pub(super) struct OffsetPrepared {
    pub(super) start: Statement,
    pub(super) after: Statement,
    pub(super) before: Statement,
    /// Whether the locking reads force the fetch-order index (the layout has it).
    pub(super) hinted: bool,
}

pub struct MysqlSession {
    pub(super) conn: Conn,
    pub(super) statements: Statements,
    pub(super) worker_id: String,
    /// The queue this worker serves (a declared claim's `:queue`).
    pub(super) queue: String,
    pub(super) workers: Arc<std::sync::Mutex<Vec<u32>>>,
    /// The claim UPDATE by id for this session's batch size, prepared on first use (the
    /// same text serves production, waiting and naive).
    pub(super) batch_update: Option<(u32, Statement)>,
    /// The lock step of production and waiting, prepared per number of capped-queue
    /// branches on first use (a workload has a handful of capped queues at most).
    pub(super) lock_statements: Vec<(Strategy, usize, Statement)>,
    /// Each sharded two-step strategy's own select, prepared on first use.
    pub(super) sharded_selects: Vec<(Strategy, Statement)>,
    /// Each declared claim's statements (`custom`), prepared on first use.
    pub(super) custom: Vec<CustomPrepared>,
    /// `offset-start`'s reads, prepared on first use.
    pub(super) offset: Option<OffsetPrepared>,
    /// Reused buffer: the rows a lock step returned, with their priority, for `pick`.
    pub(super) candidates: Vec<(i64, ClaimedJob)>,
    /// Inside a transaction `begin` opened: statements that bring their own transaction
    /// join it instead (a `START TRANSACTION` would commit it), and leave its end to `end`.
    pub(super) held: bool,
    /// On a node of a multi-primary cluster, where the cluster's own aborts reach the
    /// session as errors a single server gives for other reasons ([`session_error`]).
    pub(super) cluster: bool,
    /// Whose finished rows the cleanup job removes: `-in-place` for the hot table's
    /// (storage = "update-in-place"), empty for the archive's; read from the schema's
    /// marker on the job's first statement.
    pub(super) cleanup_steps: Option<&'static str>,
    /// A worker's leases in the lock service, when the run has one (`lock-service`).
    pub(super) leases: Option<Box<crate::backend::lock_service::Leases>>,
    /// The ids a read-then-write claim read, kept between claims so that a claim
    /// allocates no list of its own.
    pub(super) ids: Vec<i64>,
    /// The workload's own table's lifecycle statements, when it declares one: they take
    /// the place of claimbench's (`declared_table.rs`).
    pub(super) table: Option<Box<TableStatements>>,
    /// The declared claim prepared last binds `:queue`: on a declared table, each effect
    /// records the served queue as its job's (nothing else says which queue it was in).
    pub(super) claims_by_queue: bool,
}

impl MysqlSession {
    /// The underlying connection, for tests that need to hold a transaction open.
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// The prepared `UPDATE ... WHERE id IN (:ids)` for `batch` ids.
    pub(super) async fn batch_update(&mut self, batch: u32) -> Result<Statement, BackendError> {
        if let Some((b, s)) = &self.batch_update
            && *b == batch
        {
            return Ok(s.clone());
        }
        let sql = expand_ids(step(PRODUCTION_SQL, "claim"), batch as usize);
        let s = self
            .conn
            .prep(sql)
            .await
            .map_err(|e| session_error(self.cluster, "prepare", e))?;
        self.batch_update = Some((batch, s.clone()));
        Ok(s)
    }

    /// A two-step strategy's unlocked read: the shape's prepared statement, or a
    /// sharded strategy's own select (worker id, then batch), prepared on its first use
    /// on this connection.
    async fn select(
        &mut self,
        ask: Ask<'_>,
        prepared: fn(&Statements) -> &Statement,
    ) -> Result<Vec<Row>, mysql_async::Error> {
        if !ask.strategy.def().sharded {
            return self
                .conn
                .exec(prepared(&self.statements), (ask.batch,))
                .await;
        }
        let known = self
            .sharded_selects
            .iter()
            .position(|(s, _)| s == ask.strategy);
        let i = match known {
            Some(i) => i,
            None => {
                let sql = step(ask.strategy.text(BackendKind::Mysql), "select");
                let st = self.conn.prep(sql).await?;
                self.sharded_selects.push((ask.strategy.clone(), st));
                self.sharded_selects.len() - 1
            }
        };
        let me = self.worker_id.as_str();
        self.conn
            .exec(&self.sharded_selects[i].1, (me, ask.batch))
            .await
    }

    /// Worker id and `ids` padded with 0 to `batch` placeholders.
    pub(super) fn update_params(&self, ids: impl Iterator<Item = i64>, batch: u32) -> Params {
        let mut v = Vec::with_capacity(batch as usize + 1);
        v.push(Value::from(self.worker_id.as_str()));
        v.extend(ids.map(Value::from));
        v.resize(batch as usize + 1, Value::Int(0));
        Params::Positional(v)
    }

    /// Runs `body` inside START TRANSACTION ... COMMIT; any error rolls back first, so
    /// a retried claim starts clean (a lock wait timeout ends only the statement and
    /// would leave the transaction and its locks open).
    pub(super) async fn in_transaction<T>(
        &mut self,
        what: &'static str,
        body: impl AsyncFnOnce(&mut Self) -> Result<(T, bool), BackendError>,
    ) -> Result<T, BackendError> {
        if self.held {
            return body(self).await.map(|(v, _)| v);
        }
        self.conn
            .query_drop("START TRANSACTION")
            .await
            .map_err(|e| session_error(self.cluster, what, e))?;
        match body(self).await {
            Ok((v, commit)) => {
                let end = if commit { "COMMIT" } else { "ROLLBACK" };
                self.conn
                    .query_drop(end)
                    .await
                    .map_err(|e| session_error(self.cluster, what, e))?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn.query_drop("ROLLBACK").await;
                Err(e)
            }
        }
    }

    /// The lock step of `strategy` with one `lock-capped` branch per capped queue.
    async fn lock_statement(
        &mut self,
        strategy: &Strategy,
        capped: usize,
    ) -> Result<Statement, BackendError> {
        if let Some((_, _, st)) = self
            .lock_statements
            .iter()
            .find(|(s, n, _)| *s == *strategy && *n == capped)
        {
            return Ok(st.clone());
        }
        let file = strategy
            .sql(crate::backend::BackendKind::Mysql)
            .ok_or_else(|| {
                BackendError::other(
                    "prepare the claim",
                    format!("strategy `{strategy}` has no MySQL form"),
                )
            })?;
        let sql = lock_sql(file, capped);
        let st = self
            .conn
            .prep(sql)
            .await
            .map_err(|e| session_error(self.cluster, "prepare", e))?;
        self.lock_statements
            .push((strategy.clone(), capped, st.clone()));
        Ok(st)
    }

    async fn claim_locked(
        &mut self,
        strategy: &Strategy,
        batch: u32,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<(), BackendError> {
        let update = self.batch_update(batch).await?;
        let before = out.len();
        let mut candidates = std::mem::take(&mut self.candidates);
        let result = self
            .in_transaction("claim", async |s| {
                let cluster = s.cluster;
                let e = |e| session_error(cluster, "claim", e);
                let rooms: Vec<(Value, i64)> = s
                    .conn
                    .exec(&s.statements.capacity, (batch,))
                    .await
                    .map_err(e)?;
                let lock = s.lock_statement(strategy, rooms.len()).await?;
                let mut params = Vec::with_capacity(1 + 2 * rooms.len());
                params.push(Value::from(batch));
                for (queue, room) in rooms {
                    params.push(queue);
                    params.push(Value::from(room));
                }
                let rows: Vec<Row> = s
                    .conn
                    .exec(&lock, Params::Positional(params))
                    .await
                    .map_err(e)?;
                candidates.clear();
                candidates.extend(
                    rows.iter()
                        .map(|r| (int(r, COL_PRIORITY).unwrap_or(0), claimed(r))),
                );
                pick(&mut candidates, batch, out);
                if out.len() > before {
                    let params = s.update_params(out[before..].iter().map(|j| j.id), batch);
                    s.conn.exec_drop(&update, params).await.map_err(e)?;
                }
                Ok(((), true))
            })
            .await;
        self.candidates = candidates;
        if result.is_err() {
            // Rolled back: none of the picked rows is claimed.
            out.truncate(before);
        }
        result
    }

    /// Calls a lifecycle procedure and returns the row it selects. An error rolls back
    /// first: a lock wait timeout inside the procedure ends only its statement and would
    /// leave the procedure's transaction open.
    pub(super) async fn call(
        &mut self,
        what: &'static str,
        statement: fn(&Self) -> &Statement,
        params: Params,
    ) -> Result<Row, BackendError> {
        let stmt = statement(self).clone();
        match self.conn.exec_first::<Row, _, _>(&stmt, params).await {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(BackendError::other(what, "the procedure returned no row")),
            Err(e) => {
                let _ = self.conn.query_drop("ROLLBACK").await;
                Err(session_error(self.cluster, what, e))
            }
        }
    }

    /// Locks the rows a `lock` step selects, then runs its `update` step on them.
    async fn lock_then_update(
        &mut self,
        what: &'static str,
        lock: (&Statement, Params),
        update_sql: &str,
    ) -> Result<Vec<i64>, BackendError> {
        self.in_transaction(what, async |s| {
            let ids: Vec<i64> = s
                .conn
                .exec(lock.0, lock.1)
                .await
                .map_err(|e| session_error(s.cluster, what, e))?;
            if !ids.is_empty() {
                let sql = expand_ids(update_sql, ids.len());
                s.conn
                    .exec_drop(sql, ids.clone())
                    .await
                    .map_err(|e| session_error(s.cluster, what, e))?;
            }
            Ok((ids, true))
        })
        .await
    }
}

/// The lock step's text: `lock`, then `capped` copies of `lock-capped`.
pub(super) fn lock_sql(file: &str, capped: usize) -> String {
    let mut sql = step(file, "lock").to_string();
    for _ in 0..capped {
        sql.push('\n');
        sql.push_str(step(file, "lock-capped"));
    }
    sql
}

/// The `pick` step: the locked rows, as (priority, job), in fetch order (priority desc,
/// queue wait desc, which is due time asc within one statement, id asc); the first
/// `batch` go to `out`. Every row is already within its queue's room, as the lock step
/// took at most `room` rows of each capped queue.
pub(super) fn pick(candidates: &mut [(i64, ClaimedJob)], batch: u32, out: &mut Vec<ClaimedJob>) {
    use std::cmp::Reverse;
    candidates
        .sort_unstable_by_key(|(priority, j)| (Reverse(*priority), Reverse(j.queue_wait_us), j.id));
    out.extend(candidates.iter().take(batch as usize).map(|(_, j)| *j));
}

/// The jobs a naive UPDATE really claimed: the selected rows that still existed.
pub(super) fn naive_claimed<'a>(
    selected: impl Iterator<Item = ClaimedJob> + 'a,
    existing: &'a [i64],
) -> impl Iterator<Item = ClaimedJob> + 'a {
    selected.filter(move |j| existing.contains(&j.id))
}

pub(super) fn claimed(r: &Row) -> ClaimedJob {
    ClaimedJob {
        id: int(r, COL_ID).unwrap_or(0),
        attempt: int(r, COL_ATTEMPT).unwrap_or(0) as i32,
        queue_wait_us: int(r, COL_QUEUE_WAIT_US).unwrap_or(0),
    }
}

impl MysqlSession {
    /// naive's read and update, with (`leased`) a lease per id between them. The
    /// update reaches only rows that still exist: when it changed fewer than it named,
    /// the worker owns those still there (deleted ids never come back), and gives back
    /// the leases of the others. Returns how many leases another worker held.
    async fn read_write(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
        leased: bool,
    ) -> Result<u32, BackendError> {
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        let result = self.read_write_ids(ask, out, leased, &mut ids).await;
        self.ids = ids;
        result
    }

    /// [`MysqlSession::read_write`] with the session's id list lent as `ids`.
    async fn read_write_ids(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
        leased: bool,
        ids: &mut Vec<i64>,
    ) -> Result<u32, BackendError> {
        let batch = ask.batch;
        let cluster = self.cluster;
        let e = |e| session_error(cluster, "claim", e);
        for_claim(self.leases.as_deref_mut(), leased, ask.strategy)?;
        let rows = self.select(ask, |s| &s.naive_select).await.map_err(e)?;
        ids.extend(rows.iter().map(|r| claimed(r).id));
        let lost = match self.leases.as_deref_mut().filter(|_| leased) {
            Some(l) => l.take(ids).await?,
            None => 0,
        };
        if ids.is_empty() {
            return Ok(lost);
        }
        let selected = rows.iter().map(claimed).filter(|j| ids.contains(&j.id));
        let update = self.batch_update(batch).await?;
        let params = self.update_params(ids.iter().copied(), batch);
        if let Err(err) = self.conn.exec_drop(&update, params).await {
            // Unknown whether the update reached the rows: the leases only expire.
            if let Some(l) = self.leases.as_deref_mut().filter(|_| leased) {
                l.forget(ids);
            }
            return Err(e(err));
        }
        if self.conn.affected_rows() == ids.len() as u64 {
            out.extend(selected);
            return Ok(lost);
        }
        let sql = expand_ids(step(SQL.session, "existing"), ids.len());
        let existing: Vec<i64> = self.conn.exec(sql, ids.clone()).await.map_err(e)?;
        out.extend(naive_claimed(selected, &existing));
        if let Some(l) = self.leases.as_deref_mut().filter(|_| leased) {
            ids.retain(|id| !existing.contains(id));
            // The claim stands; the leases expire if this fails.
            let _ = l.give_back(ids).await;
        }
        Ok(lost)
    }
}

impl ClaimSteps for MysqlSession {
    async fn locking_claim(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let Ask { strategy, batch } = ask;
        match super::declared(strategy) {
            Some(m) => self.claim_declared(strategy, m, batch, out).await,
            None if strategy.def().offset_window.is_some() => {
                self.claim_offset(strategy, batch, out).await
            }
            None => self.claim_locked(strategy, batch, out).await,
        }
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

    async fn candidates(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let rows = self.select(ask, |s| &s.conditional_select).await;
        out.extend(
            rows.map_err(|e| session_error(self.cluster, "claim", e))?
                .iter()
                .map(claimed),
        );
        Ok(())
    }

    /// One compare-and-set per candidate, each its own autocommitted statement: on an
    /// error, `out` holds the ones already won.
    async fn version_cas(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<u32, BackendError> {
        let cluster = self.cluster;
        let e = |e| session_error(cluster, "claim", e);
        let select = &self.statements.version_select;
        let rows: Vec<Row> = self.conn.exec(select, (ask.batch,)).await.map_err(e)?;
        let mut lost = 0;
        for r in &rows {
            let (job, version) = (claimed(r), int(r, COL_VERSION).unwrap_or(-1));
            let params = (self.worker_id.as_str(), job.id, version);
            let claim = &self.statements.version_claim;
            self.conn.exec_drop(claim, params).await.map_err(e)?;
            match self.conn.affected_rows() {
                1 => out.push(job),
                _ => lost += 1,
            }
        }
        Ok(lost)
    }

    async fn claim_one(&mut self, _: Ask<'_>, job: ClaimedJob) -> Won {
        let claim = &self.statements.conditional_claim;
        let params = (self.worker_id.as_str(), job.id, job.attempt);
        let done = self.conn.exec_drop(claim, params).await;
        done.map_err(|e| session_error(self.cluster, "claim", e))?;
        Ok((self.conn.affected_rows() == 1).then_some(job))
    }
}

impl MysqlSession {
    /// The cleanup job's step suffix for the trial's storage model (claimbench_schema).
    async fn cleanup_steps(&mut self) -> Result<&'static str, BackendError> {
        if let Some(s) = self.cleanup_steps {
            return Ok(s);
        }
        let model: Option<String> = self
            .conn
            .query_first(step(SQL.session, "storage"))
            .await
            .map_err(|e| session_error(self.cluster, "read the storage model", e))?;
        let suffix = match model.as_deref() {
            Some("update-in-place") => "-in-place",
            _ => "",
        };
        self.cleanup_steps = Some(suffix);
        Ok(suffix)
    }
}

impl Session for MysqlSession {
    /// A declared claim's steps now, so that a statement the server refuses fails
    /// before a trial (the claim step for one id; a claim prepares it per batch size).
    async fn prepare(&mut self, strategy: &Strategy) -> Result<(), BackendError> {
        match super::declared(strategy) {
            Some(m) => self.check_declared(strategy, m).await,
            None if strategy.def().offset_window.is_some() => {
                self.offset_statements().await.map(|_| ())
            }
            None => Ok(()),
        }
    }

    fn serve_queue(&mut self, queue: &str) {
        self.queue = queue.to_string();
    }

    /// A declared `hold` step is PostgreSQL's: a MySQL form is held by its rows.
    async fn hold_in_flight(&mut self, _: &Strategy, ids: &[i64]) -> Result<(), BackendError> {
        self.begin().await?;
        let hold = match &self.table {
            Some(t) => t.hold_sql(),
            None => step(super::model_state::MODEL_SQL, "hold").to_string(),
        };
        let sql = super::statements::expand_ids(&hold, ids.len());
        let mut values: Vec<mysql_async::Value> = ids.iter().map(|&id| id.into()).collect();
        if values.is_empty() {
            values.push(mysql_async::Value::Int(0));
        }
        self.conn
            .exec_drop(sql, values)
            .await
            .map_err(|e| session_error(self.cluster, "hold rows", e))
    }

    /// The locking read's plan on MariaDB ([`MysqlSession::analyze`]): production's
    /// `lock` step (uncapped branch), a two-step strategy's select step, offset-start's
    /// `after` read from the head's key, a declared claim's `lock` step.
    async fn explain_claim(
        &mut self,
        strategy: &Strategy,
        batch: u32,
    ) -> Result<Option<crate::backend::plan::PlanSample>, BackendError> {
        if let Some(declared) = strategy.def().custom.as_ref() {
            let Some(m) = &declared.mysql else {
                return Ok(None);
            };
            // Its parameters as the claim binds them: the batch, this worker's id.
            use crate::strategy::custom::Constant;
            use crate::strategy::named_params::Param;
            let literals: Option<Vec<String>> = m
                .lock_params
                .iter()
                .map(|p| match p {
                    Param::Batch => Some(batch.to_string()),
                    Param::WorkerId => Some(quoted(&self.worker_id)),
                    Param::Queue => Some(quoted(&self.queue)),
                    Param::Const(k) => match &declared.consts.get(usize::from(*k))?.1 {
                        Constant::Int(n) => Some(n.to_string()),
                        Constant::Bool(b) => Some(b.to_string()),
                        Constant::Text(t) => Some(quoted(t)),
                    },
                    // A lock step binds neither (validation refuses them there).
                    Param::Window | Param::Ids => None,
                })
                .collect();
            return match literals.and_then(|l| inlined(&m.lock, l)) {
                Some(text) => self.analyze("declared lock step", &text).await,
                None => Ok(None),
            };
        }
        let Some(file) = strategy.sql(crate::backend::BackendKind::Mysql) else {
            return Ok(None);
        };
        if strategy.def().offset_window.is_some() {
            let Some(text) = self.offset_sample(batch).await? else {
                return Ok(None);
            };
            return self
                .analyze("after step (from the head's key)", &text)
                .await;
        }
        let (statement, name) = match strategy.shape() {
            Shape::Claim => ("lock step (uncapped queues)", "lock"),
            _ => ("select step", "select"),
        };
        let steps = crate::backend::sql::sql_steps(file);
        let Some(&(_, sql)) = steps.iter().find(|(n, _)| *n == name) else {
            return Ok(None);
        };
        // Its one parameter is the batch (ANALYZE is sent as text).
        match inlined(sql, [batch.to_string()]) {
            Some(text) => self.analyze(statement, &text).await,
            None => Ok(None),
        }
    }

    async fn begin(&mut self) -> Result<(), BackendError> {
        self.conn
            .query_drop("START TRANSACTION")
            .await
            .map_err(|e| session_error(self.cluster, "begin", e))?;
        self.held = true;
        Ok(())
    }

    async fn end(&mut self, commit: bool) -> Result<(), BackendError> {
        self.held = false;
        let sql = if commit { "COMMIT" } else { "ROLLBACK" };
        self.conn
            .query_drop(sql)
            .await
            .map_err(|e| session_error(self.cluster, "end", e))
    }

    /// The name is checked (it cannot be bound); the value is bound, as a number when it
    /// reads as one (an integer variable refuses a string).
    async fn apply(&mut self, settings: &[(String, String)]) -> Result<(), BackendError> {
        for (name, value) in settings {
            let bound = match (value.parse::<i64>(), value.parse::<f64>()) {
                (Ok(i), _) => Value::from(i),
                (_, Ok(f)) => Value::from(f),
                _ => Value::from(value.as_str()),
            };
            self.conn
                .exec_drop(
                    fill(step(SQL.session, "apply"), &[("name", name)]),
                    (bound,),
                )
                .await
                .map_err(|e| session_error(self.cluster, "apply a session setting", e))?;
        }
        Ok(())
    }

    async fn release(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        if self.table.is_some() {
            let back = self.requeue_declared(jobs).await?;
            self.finished(jobs).await?;
            return Ok(back);
        }
        let lock_sql = expand_ids(step(SQL.release, "lock"), jobs.len());
        let lock = self
            .conn
            .prep(lock_sql)
            .await
            .map_err(|e| session_error(self.cluster, "release", e))?;
        let mut params: Vec<Value> = jobs.iter().map(|&id| Value::from(id)).collect();
        params.push(Value::from(self.worker_id.as_str()));
        let released = self
            .lock_then_update(
                "release",
                (&lock, Params::Positional(params)),
                step(SQL.release, "update"),
            )
            .await;
        let _ = self.conn.close(lock).await;
        self.finished(jobs).await?;
        released
    }

    async fn rescue(&mut self, lease: Duration) -> Result<Vec<i64>, BackendError> {
        if self.table.is_some() {
            return self.rescue_declared(lease).await;
        }
        let us = lease.as_micros() as i64;
        let lock = self.statements.rescue_lock.clone();
        self.lock_then_update(
            "rescue",
            (&lock, Params::from((us, us))),
            step(SQL.rescue, "update"),
        )
        .await
    }

    async fn clean(&mut self, retain: Duration, batch: u32) -> Result<u64, BackendError> {
        let what = "clean up";
        let suffix = self.cleanup_steps().await?;
        let lock = (
            step(CLEANUP_SQL, &format!("lock{suffix}")),
            (retain.as_micros() as i64, batch),
        );
        self.in_transaction(what, async |s| {
            let err = |e| session_error(s.cluster, what, e);
            let ids: Vec<i64> = s.conn.exec(lock.0, lock.1).await.map_err(err)?;
            if !ids.is_empty() {
                for name in ["keep", "delete"] {
                    let name = format!("{name}{suffix}");
                    let sql = expand_ids(step(CLEANUP_SQL, &name), ids.len());
                    let err = |e| session_error(s.cluster, what, e);
                    s.conn.exec_drop(sql, ids.clone()).await.map_err(err)?;
                }
            }
            Ok((ids.len() as u64, true))
        })
        .await
    }

    async fn cleanup_state(
        &mut self,
        retain: Duration,
        cap: u64,
    ) -> Result<crate::results::CleanupState, BackendError> {
        let args = (retain.as_micros() as i64, cap);
        let state = format!("state{}", self.cleanup_steps().await?);
        let row: Option<(i64, Option<i64>)> = self
            .conn
            .exec_first(step(CLEANUP_SQL, &state), args)
            .await
            .map_err(|e| session_error(self.cluster, "read what the cleanup left", e))?;
        let (past, bytes) = row.unwrap_or_default();
        Ok(crate::results::CleanupState {
            past_retention: past as u64,
            table_bytes: bytes.unwrap_or(0),
        })
    }

    async fn produce(&mut self, workload: &Workload, ages_us: &[i64]) -> Result<u64, BackendError> {
        if self.table.is_some() {
            return self.enqueue_declared(workload, ages_us).await;
        }
        let count = ages_us.len() as u64;
        if count >= 1000 {
            allow_recursion(&mut self.conn, count).await?;
        }
        let (oldest, step) = crate::backend::shared::arrival_spread(ages_us);
        self.conn
            .exec_drop(
                &self.statements.produce,
                (count, workload.population.payload_bytes, oldest, step),
            )
            .await
            .map_err(|e| session_error(self.cluster, "produce", e))?;
        Ok(self.conn.affected_rows())
    }

    async fn sample(&mut self, workload: &Workload) -> Result<Sample, BackendError> {
        let limited = capped_queues_json(workload);
        let priorities = workload.population.all_priorities();
        let workers = {
            let ids = self.workers.lock().unwrap_or_else(|p| p.into_inner());
            json_numbers(ids.iter())
        };
        let r: Row = self
            .conn
            .exec_first(
                SQL.sample,
                (
                    json_numbers(priorities),
                    workers.as_str(),
                    workers.as_str(),
                    limited,
                    json_numbers(workload.population.all_priorities()),
                    queues_json(workload),
                ),
            )
            .await
            .map_err(|e| session_error(self.cluster, "sample", e))?
            .expect("a SELECT without FROM returns one row");
        let counts: Option<String> = r.get_opt(4).and_then(Result::ok).flatten();
        let queue_active = queue_active(workload, counts.as_deref().unwrap_or(""));
        let sample = Sample {
            oldest_pending_ms: r
                .get_opt::<Option<f64>, _>(0)
                .and_then(Result::ok)
                .flatten(),
            lock_waiting: int(&r, 1).unwrap_or(0) as u32,
            active: int(&r, 2).unwrap_or(0) as u32,
            work_left: int(&r, 3).unwrap_or(0) != 0,
            queue_active,
            queue_oldest_ms: queue_oldest(
                &r.get_opt::<Option<String>, _>(5)
                    .and_then(Result::ok)
                    .flatten()
                    .unwrap_or_default(),
            ),
            table: None,
            history_length: int(&r, 6),
        };
        match self.table.is_some() {
            true => self.sample_declared(sample).await,
            false => Ok(sample),
        }
    }

    /// InnoDB's read view, taken at once: purge cannot remove what it could see.
    /// A read view is what stops purge, so both kinds hold one: a transaction that
    /// only wrote would not pin the history list.
    async fn hold_snapshot(&mut self, kind: crate::workload::HoldKind) -> Result<(), BackendError> {
        if kind == crate::workload::HoldKind::LogicalSlot {
            return Err(BackendError::other(
                "hold a logical replication slot (faults.hold_kind = \"logical-slot\")",
                "a logical slot is PostgreSQL's; on MySQL and MariaDB a read view is what holds purge back: use \"snapshot\"",
            ));
        }
        self.conn
            .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .await
            .map_err(|e| session_error(self.cluster, "hold a snapshot", e))?;
        self.held = true;
        Ok(())
    }

    async fn scan_held(&mut self) -> Result<(), BackendError> {
        self.conn
            .query_drop(step(SQL.session, "scan-held"))
            .await
            .map_err(|e| session_error(self.cluster, "scan the hot table", e))
    }

    /// By connection id: MySQL has no application name, and the backend records the id
    /// of every worker connection it opens (reconnections included) since the reset.
    async fn kill_workers(&mut self, _role: &str) -> Result<u64, BackendError> {
        let ids: Vec<u32> = self
            .workers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut killed = 0;
        for id in ids {
            let kill = fill(step(SQL.session, "kill"), &[("id", &id.to_string())]);
            match self.conn.query_drop(kill).await {
                Ok(()) => killed += 1,
                // Already gone: an earlier kill's, or a connection that closed.
                Err(mysql_async::Error::Server(e))
                    if e.code == super::errors::ER_NO_SUCH_THREAD => {}
                Err(e) => return Err(session_error(self.cluster, "kill worker connections", e)),
            }
        }
        Ok(killed)
    }
}

/// `text` as a MySQL string literal that stays one under either backslash rule
/// (`NO_BACKSLASH_ESCAPES` or not): a workload's value must not end the quote.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// `sql` without its comment lines and with each `?` replaced, in order, by one of
/// `literals` (values already written as SQL): what ANALYZE, sent as text, runs. `None`
/// when the statement has another number of parameters.
pub(super) fn inlined(sql: &str, literals: impl IntoIterator<Item = String>) -> Option<String> {
    let body: Vec<&str> = sql
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect();
    let body = body.join("\n");
    let mut pieces = body.split('?');
    let mut text = pieces.next().unwrap_or_default().to_string();
    let mut given = literals.into_iter();
    for piece in pieces {
        text.push_str(&given.next()?);
        text.push_str(piece);
    }
    given.next().is_none().then_some(text)
}

impl MysqlSession {
    /// MariaDB's `ANALYZE FORMAT=JSON` of `statement` (parameters inlined: ANALYZE is
    /// sent as text) between START TRANSACTION and ROLLBACK: it runs for real, locks
    /// its rows for a moment, and leaves nothing. MySQL's `EXPLAIN ANALYZE` has no JSON
    /// form, so MySQL takes no sample yet.
    async fn analyze(
        &mut self,
        label: &str,
        statement: &str,
    ) -> Result<Option<crate::backend::plan::PlanSample>, BackendError> {
        let e = |e| session_error(self.cluster, "explain the claim", e);
        let version: Option<String> = self
            .conn
            .query_first(step(super::SQL.control, "version"))
            .await
            .map_err(e)?;
        if !version.unwrap_or_default().contains("MariaDB") {
            return Ok(None);
        }
        self.conn.query_drop("START TRANSACTION").await.map_err(e)?;
        let analyzed: Result<Option<String>, _> = self
            .conn
            .query_first(fill(
                step(SQL.session, "analyze-json"),
                &[("statement", statement)],
            ))
            .await;
        self.conn.query_drop("ROLLBACK").await.map_err(e)?;
        let Some(json) = analyzed.map_err(e)? else {
            return Ok(None);
        };
        let value: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
        Ok(crate::backend::plan::from_mariadb(label, value, 0.0))
    }
}
