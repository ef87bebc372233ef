//! A SQL Server session: one connection, its statements with the schema filled in once,
//! the claim strategies and the job lifecycle, one round trip per statement.

use super::{
    Bind, COL_ATTEMPT, COL_ID, COL_QUEUE_WAIT_US, Conn, SQL, START_UNGATED_SQL, claim_binds,
    claim_one_binds, int, locking_claim_sql, naive_update_binds, query_error, select_binds,
    sharded_select_binds, statement_body, version_cas_binds, with_schema,
};
use crate::backend::BackendKind;
use crate::backend::claim::{Ask, ClaimSteps, Done, Won};
use crate::backend::lifecycle::{Lifecycle, Reply, Step};
use crate::backend::shared::{
    capped_queues_json, json_numbers, queue_active, queue_oldest, queues_json,
};
use crate::backend::sql::{fill, step};
use crate::backend::{BackendError, ClaimedJob, Sample, Session};
use crate::strategy::custom::MssqlClaim;
use crate::strategy::{Shape, Strategy};
use crate::workload::Workload;
use std::time::Duration;
use tiberius::{Row, ToSql};

/// Every statement a session sends, with its schema filled in.
struct Statements {
    /// Every claim-shaped strategy's statement as sent (lock hints for RCSI added).
    claims: Vec<(Strategy, String)>,
    /// Each sharded two-step strategy's select (its own: it reads the shard map).
    sharded_selects: Vec<(Strategy, String)>,
    naive_select: String,
    naive_update: String,
    conditional_select: String,
    conditional_claim: String,
    version_select: String,
    version_claim: String,
    start: String,
    start_ungated: String,
    heartbeat: String,
    effect: String,
    complete: String,
    fail: String,
    release: String,
    rescue: String,
    produce: String,
    sample: String,
}

impl Statements {
    fn new(schema: &str, rcsi: bool) -> Statements {
        let s = |sql: &str| with_schema(sql, schema);
        let body = |file: &str| s(&statement_body(file));
        Statements {
            claims: Strategy::builtin()
                .filter(|s| s.shape() == Shape::Claim && s.sql(BackendKind::Mssql).is_some())
                .map(|s| (s.clone(), locking_claim_sql(&s, schema, rcsi)))
                .collect(),
            sharded_selects: Strategy::builtin()
                .filter(|s| s.def().sharded && s.shape() != Shape::Claim)
                .filter_map(|st| {
                    let file = st.sql(BackendKind::Mssql)?;
                    Some((st.clone(), s(step(file, "select"))))
                })
                .collect(),
            naive_select: s(step(SQL.naive, "select")),
            naive_update: s(step(SQL.naive, "update")),
            conditional_select: s(step(SQL.conditional, "select")),
            conditional_claim: s(step(SQL.conditional, "claim-one")),
            version_select: s(step(SQL.version_cas, "select")),
            version_claim: s(step(SQL.version_cas, "claim-batch")),
            start: body(SQL.start),
            start_ungated: body(START_UNGATED_SQL),
            heartbeat: body(SQL.heartbeat),
            effect: body(SQL.effect),
            complete: body(SQL.complete),
            fail: body(SQL.fail),
            release: body(SQL.release),
            rescue: body(SQL.rescue),
            produce: body(SQL.produce),
            sample: body(SQL.sample),
        }
    }
}

pub struct MssqlSession {
    client: Conn,
    statements: Statements,
    worker_id: String,
    worker_role: String,
    /// The queue this worker serves (a declared claim's `:queue`).
    queue: String,
    /// Each declared claim's statement as sent (schema filled in, lock hints for RCSI
    /// added, as the built-ins get them), made on its first claim.
    declared: Vec<(Strategy, String)>,
    schema: String,
    rcsi: bool,
}

impl MssqlSession {
    /// A two-step strategy's unlocked read: the shape's statement, or a sharded
    /// strategy's own (batch, then worker id).
    async fn select(
        &mut self,
        ask: Ask<'_>,
        shape: fn(&Statements) -> &String,
    ) -> Result<Vec<Row>, BackendError> {
        let s = &self.statements;
        match s.sharded_selects.iter().find(|(st, _)| st == ask.strategy) {
            Some((_, sql)) => {
                let binds = sharded_select_binds(ask.batch, &self.worker_id);
                rows(&mut self.client, "claim", sql, &binds).await
            }
            None => {
                rows(
                    &mut self.client,
                    "claim",
                    shape(s),
                    &select_binds(ask.batch),
                )
                .await
            }
        }
    }

    pub(super) fn new(
        client: Conn,
        schema: &str,
        rcsi: bool,
        worker_id: &str,
        worker_role: &str,
    ) -> MssqlSession {
        MssqlSession {
            client,
            statements: Statements::new(schema, rcsi),
            worker_id: worker_id.to_string(),
            worker_role: worker_role.to_string(),
            queue: String::new(),
            declared: Vec::new(),
            schema: schema.to_string(),
            rcsi,
        }
    }

    /// A declared claim: its statement as sent, its binds in order, and its rows read
    /// by column name (`Id`, and `AttemptCount` and `QueueWaitUs` when it returns them).
    async fn declared_claim(
        &mut self,
        strategy: &Strategy,
        m: &MssqlClaim,
        batch: u32,
        out: &mut Vec<ClaimedJob>,
    ) -> Done {
        let i = match self.declared.iter().position(|(s, _)| s == strategy) {
            Some(i) => i,
            None => {
                let sql = super::declared_claim_sql(m, &self.schema, self.rcsi);
                self.declared.push((strategy.clone(), sql));
                self.declared.len() - 1
            }
        };
        let consts = strategy
            .def()
            .custom
            .as_ref()
            .map_or(&[][..], |c| &c.consts);
        let binds = super::declared_binds(m, consts, batch, (&self.worker_id, &self.queue));
        let sql = &self.declared[i].1;
        let got = rows(&mut self.client, "claim", sql, &binds)
            .await
            .map_err(|e| e.in_file(&format!("{} (strategy `{strategy}`)", m.file)))?;
        let Some(first) = got.first() else {
            return Ok(());
        };
        let col = |name: &str| {
            first
                .columns()
                .iter()
                .position(|c| c.name().eq_ignore_ascii_case(name))
        };
        let id = col("Id").ok_or_else(|| {
            BackendError::other(
                "claim",
                format!(
                    "{}: the claim returns no `Id` column; OUTPUT INSERTED.[Id]",
                    m.file
                ),
            )
        })?;
        let (attempt, wait) = (col("AttemptCount"), col("QueueWaitUs"));
        out.extend(got.iter().map(|r| ClaimedJob {
            id: int(r, id),
            attempt: attempt.map_or(0, |a| int(r, a) as i32),
            queue_wait_us: wait.map_or(-1, |w| int(r, w)),
        }));
        Ok(())
    }

    /// The underlying client, for tests that need to hold a transaction open.
    pub fn client(&mut self) -> &mut Conn {
        &mut self.client
    }
}

impl Bind<'_> {
    fn as_sql(&self) -> &dyn ToSql {
        match self {
            Bind::Int(v) => v,
            Bind::BigInt(v) => v,
            Bind::Text(v) => v,
        }
    }
}

/// Runs `sql` with `binds` and returns its first result set.
async fn rows(
    c: &mut Conn,
    what: &'static str,
    sql: &str,
    binds: &[Bind<'_>],
) -> Result<Vec<Row>, BackendError> {
    let params: Vec<&dyn ToSql> = binds.iter().map(Bind::as_sql).collect();
    c.query(sql, &params)
        .await
        .map_err(|e| query_error(what, e))?
        .into_first_result()
        .await
        .map_err(|e| query_error(what, e))
}

/// Sends `sql` as a plain batch: a transaction begun inside `sp_executesql` (how
/// parameterized statements travel) must end there too (error 266), so `BEGIN` and its
/// end go without parameters.
async fn batch(c: &mut Conn, what: &'static str, sql: &str) -> Result<(), BackendError> {
    c.simple_query(sql)
        .await
        .map_err(|e| query_error(what, e))?
        .into_results()
        .await
        .map_err(|e| query_error(what, e))?;
    Ok(())
}

/// Runs `sql` with `binds` and returns the rows it changed.
async fn affected(
    c: &mut Conn,
    what: &'static str,
    sql: &str,
    binds: &[Bind<'_>],
) -> Result<u64, BackendError> {
    let params: Vec<&dyn ToSql> = binds.iter().map(Bind::as_sql).collect();
    let r = c
        .execute(sql, &params)
        .await
        .map_err(|e| query_error(what, e))?;
    Ok(r.rows_affected().iter().sum())
}

fn claimed(r: &Row, id: usize, attempt: usize, wait: usize) -> ClaimedJob {
    ClaimedJob {
        id: int(r, id),
        attempt: int(r, attempt) as i32,
        queue_wait_us: int(r, wait),
    }
}

/// Each step binds what its statement under `migrations/mssql/` takes, in order.
impl Lifecycle for MssqlSession {
    async fn run(&mut self, step: Step) -> Result<Reply, BackendError> {
        let (st, me) = (&self.statements, Bind::Text(&self.worker_id));
        let c = &mut self.client;
        let first = |got: Vec<Row>| match got.first() {
            Some(r) => Reply::row(Some(int(r, 0)), (r.len() > 1).then(|| int(r, 1))),
            None => Reply::default(),
        };
        let ms = |d: Duration| Bind::Int(d.as_millis().min(i32::MAX as u128) as i32);
        let what = step.what();
        Ok(match step {
            Step::Start { job, gated, token } => {
                let sql = if gated { &st.start } else { &st.start_ungated };
                let binds = [Bind::BigInt(job), me, Bind::BigInt(token)];
                first(rows(c, what, sql, &binds).await?)
            }
            Step::Heartbeat { job, token } => {
                let binds = [Bind::BigInt(job), me, Bind::BigInt(token)];
                Reply::changed(affected(c, what, &st.heartbeat, &binds).await?)
            }
            Step::Effect(f) => {
                let binds = [
                    Bind::BigInt(f.job),
                    Bind::Int(f.attempt),
                    me,
                    Bind::Int(f.failed as i32),
                    Bind::BigInt(f.started_us),
                    Bind::BigInt(f.token),
                ];
                first(rows(c, what, &st.effect, &binds).await?)
            }
            Step::Complete { job } => {
                let binds = [Bind::BigInt(job), me];
                Reply::changed(affected(c, what, &st.complete, &binds).await?)
            }
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => {
                let binds = [
                    Bind::BigInt(job),
                    me,
                    ms(retry_delay),
                    Bind::Int(max_attempts as i32),
                ];
                first(rows(c, what, &st.fail, &binds).await?)
            }
        })
    }
}

/// The jobs of a two-step claim's read (`got`: id, attempt, queue wait) that its
/// UPDATE's `OUTPUT INSERTED.[Id]` (`updated`) says it changed, appended to `out`.
fn keep_updated(got: &[Row], updated: &[Row], out: &mut Vec<ClaimedJob>) {
    let updated: Vec<i64> = updated.iter().map(|r| int(r, 0)).collect();
    out.extend(
        got.iter()
            .map(|r| claimed(r, 0, 1, 2))
            .filter(|j| updated.contains(&j.id)),
    );
}

impl ClaimSteps for MssqlSession {
    async fn locking_claim(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let Ask { strategy, batch } = ask;
        if let Some(m) = strategy
            .def()
            .custom
            .as_ref()
            .and_then(|c| c.mssql.as_ref())
        {
            return self.declared_claim(strategy, m, batch, out).await;
        }
        let claims = &self.statements.claims;
        // `offset-start-<K>` is offset-start's statement with its own window.
        let same = |c: &Strategy| {
            c == strategy
                || (c.def().offset_window.is_some() && strategy.def().offset_window.is_some())
        };
        let Some((_, sql)) = claims.iter().find(|(c, _)| same(c)) else {
            return Err(BackendError::other(
                "claim",
                format!("strategy `{strategy}` has no SQL Server form"),
            ));
        };
        let (binds, n) = claim_binds(strategy, batch, &self.worker_id);
        let got = rows(&mut self.client, "claim", sql, &binds[..n]).await?;
        out.extend(
            got.iter()
                .map(|r| claimed(r, COL_ID, COL_ATTEMPT, COL_QUEUE_WAIT_US)),
        );
        Ok(())
    }

    /// OUTPUT INSERTED.[Id]: the worker owns only the rows that still existed.
    async fn read_then_write(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let got = self.select(ask, |s| &s.naive_select).await?;
        let (c, s) = (&mut self.client, &self.statements);
        if got.is_empty() {
            return Ok(());
        }
        let ids = json_numbers(got.iter().map(|r| int(r, 0)));
        let binds = naive_update_binds(&self.worker_id, &ids);
        let updated = rows(c, "claim", &s.naive_update, &binds).await?;
        keep_updated(&got, &updated, out);
        Ok(())
    }

    /// OUTPUT INSERTED.[Id]: the candidates whose version still matched were won.
    async fn version_cas(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<u32, BackendError> {
        let (c, s) = (&mut self.client, &self.statements);
        let got = rows(c, "claim", &s.version_select, &select_binds(ask.batch)).await?;
        if got.is_empty() {
            return Ok(0);
        }
        let pairs = json_numbers(got.iter().map(|r| format!("[{},{}]", int(r, 0), int(r, 3))));
        let binds = version_cas_binds(&self.worker_id, &pairs);
        let won = rows(c, "claim", &s.version_claim, &binds).await?;
        keep_updated(&got, &won, out);
        Ok((got.len() - won.len()) as u32)
    }

    async fn candidates(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let got = self.select(ask, |s| &s.conditional_select).await?;
        out.extend(got.iter().map(|r| claimed(r, 0, 1, 2)));
        Ok(())
    }

    async fn claim_one(&mut self, _: Ask<'_>, job: ClaimedJob) -> Won {
        let binds = claim_one_binds(&self.worker_id, job.id, job.attempt);
        let sql = &self.statements.conditional_claim;
        let n = affected(&mut self.client, "claim", sql, &binds).await?;
        Ok((n == 1).then_some(job))
    }
}

impl Session for MssqlSession {
    fn serve_queue(&mut self, queue: &str) {
        self.queue = queue.to_string();
    }

    async fn begin(&mut self) -> Result<(), BackendError> {
        batch(&mut self.client, "begin", "BEGIN TRANSACTION").await
    }

    async fn end(&mut self, commit: bool) -> Result<(), BackendError> {
        let sql = if commit { "COMMIT" } else { "ROLLBACK" };
        batch(&mut self.client, "end", sql).await
    }

    /// `SET <name> <value>`, both checked (SET binds nothing), as a plain batch: a SET
    /// inside `sp_executesql` would end with it.
    async fn apply(&mut self, settings: &[(String, String)]) -> Result<(), BackendError> {
        for (name, value) in settings {
            batch(
                &mut self.client,
                "apply a session setting",
                &fill(
                    step(super::SQL.session, "apply"),
                    &[("name", name), ("value", value)],
                ),
            )
            .await?;
        }
        Ok(())
    }

    async fn release(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ids = json_numbers(jobs.iter().copied());
        let binds = [Bind::Text(&ids), Bind::Text(&self.worker_id)];
        let got = rows(
            &mut self.client,
            "release",
            &self.statements.release,
            &binds,
        )
        .await?;
        Ok(got.iter().map(|r| int(r, 0)).collect())
    }

    async fn rescue(&mut self, lease: Duration) -> Result<Vec<i64>, BackendError> {
        let binds = [Bind::Int(lease.as_millis().min(i32::MAX as u128) as i32)];
        let got = rows(&mut self.client, "rescue", &self.statements.rescue, &binds).await?;
        Ok(got.iter().map(|r| int(r, 0)).collect())
    }

    async fn produce(&mut self, workload: &Workload, ages_us: &[i64]) -> Result<u64, BackendError> {
        let (oldest, step) = crate::backend::shared::arrival_spread(ages_us);
        let binds = [
            Bind::BigInt(ages_us.len() as i64),
            Bind::Int(workload.population.payload_bytes as i32),
            Bind::BigInt(oldest),
            Bind::BigInt(step),
        ];
        let got = rows(
            &mut self.client,
            "produce",
            &self.statements.produce,
            &binds,
        )
        .await?;
        Ok(got.first().map_or(0, |r| int(r, 0).max(0) as u64))
    }

    async fn sample(&mut self, workload: &Workload) -> Result<Sample, BackendError> {
        let limited = capped_queues_json(workload);
        let priorities = workload.population.all_priorities();
        let priorities = json_numbers(priorities.into_iter().map(i64::from));
        let queues = queues_json(workload);
        let binds = [
            Bind::Text(&priorities),
            Bind::Text(&self.worker_role),
            Bind::Text(&limited),
            Bind::Text(&queues),
        ];
        let got = rows(&mut self.client, "sample", &self.statements.sample, &binds).await?;
        let r = got
            .first()
            .ok_or_else(|| BackendError::other("sample", "the sample query returned no row"))?;
        let queue_active = queue_active(workload, r.get::<&str, _>(4).unwrap_or_default());
        Ok(Sample {
            oldest_pending_ms: r.get::<f64, _>(0),
            lock_waiting: int(r, 1) as u32,
            active: int(r, 2) as u32,
            work_left: int(r, 3) != 0,
            queue_active,
            queue_oldest_ms: queue_oldest(r.get::<&str, _>(5).unwrap_or_default()),
            table: None,
            history_length: None,
        })
    }

    async fn kill_workers(&mut self, role: &str) -> Result<u64, BackendError> {
        let ids: Vec<i64> = rows(
            &mut self.client,
            "kill worker connections",
            step(super::SQL.session, "workers"),
            &[Bind::Text(role)],
        )
        .await?
        .iter()
        .map(|r| int(r, 0))
        .collect();
        for id in &ids {
            // KILL takes no parameters; the id is a number the server gave.
            batch(
                &mut self.client,
                "kill worker connections",
                &fill(step(super::SQL.session, "kill"), &[("id", &id.to_string())]),
            )
            .await?;
        }
        Ok(ids.len() as u64)
    }
}
