//! A workload's own queue table on PostgreSQL (`crate::declared_table`): built after
//! each reset from the file's ddl and seed steps, as the workload's role; its lifecycle
//! statements prepared on every session and bound as the server typed them; its counts
//! read into the reconciliation. The effects table stays claimbench's, written without
//! reading the team's table (its complete step says whether the worker still owned the
//! job), on the worker's clock as the brokers' effects are.

use super::job_key::JobKey;
use super::statement::{Keep, Stmt, describe_all};
use super::*;
use crate::backend::lifecycle::Reply;
use crate::declared_table::{Bind, CLAIMBENCH_TABLES, MAX_BINDS, Statement, TableForm};
use tokio_postgres::types::Type;

const TABLE_SQL: &str = migration!("postgres", "declared_table.sql");
const EFFECT_SQL: &str = migration!("postgres", "lifecycle/effect_declared.sql");

impl PostgresBackend {
    /// The table the last reset's workload declares, checked.
    pub(super) fn declared_table(&self) -> Option<Arc<TableForm>> {
        self.table.read().expect("not poisoned").clone()
    }

    /// Runs the ddl and seed steps on a connection logged in as the workload's role,
    /// checks that they kept to the declared table, and empties claimbench's seeded
    /// `jobs_hot` (the seed step copied it). Returns the rows the seed step wrote.
    pub(super) async fn build_declared_table(&self, t: &TableForm) -> Result<u64, BackendError> {
        let c = self.open_for_workload("claimbench-table").await?;
        let refused = |step: &'static str| {
            move |e: tokio_postgres::Error| {
                BackendError::other(
                    "build the declared table",
                    format!(
                        "{}: table.postgres step {step}: the server refused it: {}",
                        t.file,
                        super::root_cause(&e)
                    ),
                )
            }
        };
        c.batch_execute("BEGIN").await.map_err(refused("ddl"))?;
        c.batch_execute(&t.ddl).await.map_err(refused("ddl"))?;
        let present: bool = c
            .query_one(step(TABLE_SQL, "present"), &[&t.name])
            .await
            .map_err(refused("ddl"))?
            .get(0);
        if !present {
            return Err(BackendError::other(
                "build the declared table",
                format!(
                    "{}: table.postgres step ddl created no table `{}` in the run's schema; create it there, unqualified (CREATE TABLE {} …)",
                    t.file, t.name, t.name
                ),
            ));
        }
        let seeded = c.execute(&t.seed, &[]).await.map_err(refused("seed"))?;
        let mut allowed: Vec<&str> = CLAIMBENCH_TABLES.to_vec();
        allowed.push(&t.name);
        allowed.extend(t.also.iter().map(String::as_str));
        let foreign: Vec<String> = c
            .query(
                step(TABLE_SQL, "foreign"),
                &[&allowed, &CLAIMBENCH_TABLES.to_vec()],
            )
            .await
            .map_err(refused("ddl"))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        if !foreign.is_empty() {
            return Err(BackendError::other(
                "build the declared table",
                format!(
                    "{}: table.postgres: its steps made {} beyond the declared table `{}`; a declared table's file creates that table (and the tables `table.also` names), their indexes, types and sequences, and touches nothing of claimbench's",
                    t.file,
                    foreign.join(", "),
                    t.name
                ),
            ));
        }
        let serials = c
            .query(step(TABLE_SQL, "serials"), &[&t.name])
            .await
            .map_err(refused("seed"))?;
        for r in serials {
            let (column, sequence): (String, String) = (r.get(0), r.get(1));
            let advance = fill(
                step(TABLE_SQL, "advance"),
                &[
                    ("column", &quote_ident(&column)),
                    ("table", &quote_ident(&t.name)),
                ],
            );
            c.query_one(&advance, &[&sequence])
                .await
                .map_err(refused("seed"))?;
        }
        c.batch_execute(step(TABLE_SQL, "empty-hot"))
            .await
            .map_err(|e| query_error("empty claimbench's seeded table", e))?;
        c.batch_execute("COMMIT").await.map_err(refused("seed"))?;
        // One statement per call: VACUUM refuses to run inside a transaction block.
        c.batch_execute(&format!("VACUUM ANALYZE {}", quote_ident(&t.name)))
            .await
            .map_err(|e| query_error("vacuum analyze the declared table", e))?;
        Ok(seeded)
    }

    /// prove's model check: the state just loaded into `jobs_hot` copied into the declared
    /// table by its seed step, in place of what it held, as the workload's role.
    pub(super) async fn reseed_declared_table(&self, t: &TableForm) -> Result<(), BackendError> {
        let c = self.open_for_workload("claimbench-table").await?;
        let clear = fill(
            step(TABLE_SQL, "clear"),
            &[("table", &quote_ident(&t.name))],
        );
        let e = |e: tokio_postgres::Error| {
            BackendError::other(
                "load a model state",
                format!(
                    "{}: table.postgres step seed, copying a model state in: {}",
                    t.file,
                    super::root_cause(&e)
                ),
            )
        };
        c.batch_execute(&format!("BEGIN; {clear}"))
            .await
            .map_err(e)?;
        c.execute(&t.seed, &[]).await.map_err(e)?;
        c.batch_execute("COMMIT").await.map_err(e)
    }

    /// The declared table's rows and bytes after a trial.
    pub(super) async fn declared_table_stats(
        &self,
        t: &TableForm,
    ) -> Result<TableStats, BackendError> {
        let guard = self.control().await?;
        let r = guard
            .query_one(step(TABLE_SQL, "table-stats"), &[&t.name])
            .await
            .map_err(|e| query_error("read table statistics", e))?;
        Ok(TableStats {
            live_tuples: r.get::<_, Option<i64>>(0).unwrap_or(0),
            dead_tuples: r.get::<_, Option<i64>>(1).unwrap_or(0),
            table_bytes: r.get::<_, Option<i64>>(2).unwrap_or(0),
            index_bytes: r.get::<_, Option<i64>>(3).unwrap_or(0),
        })
    }

    /// Where every job is, by the counts step (pending, running, completed, dead), and
    /// the effects table's own columns of the reconciliation.
    pub(super) async fn reconcile_declared(
        &self,
        t: &TableForm,
    ) -> Result<DbReconciliation, BackendError> {
        let mut r = recipe::reconcile(self).await?;
        let guard = self.control().await?;
        let row = guard.query_one(&t.counts, &[]).await.map_err(|e| {
            BackendError::other(
                "reconcile jobs",
                format!(
                    "{}: table.postgres step counts: {}",
                    t.file,
                    super::root_cause(&e)
                ),
            )
        })?;
        let n = |name: &str| -> Result<i64, BackendError> {
            row.try_get::<_, Option<i64>>(name)
                .map(Option::unwrap_or_default)
                .map_err(|_| {
                    BackendError::other(
                        "reconcile jobs",
                        format!(
                            "{}: table.postgres step counts returns no bigint column `{name}`; it returns pending, running, completed and dead (count(*) … AS pending, …)",
                            t.file
                        ),
                    )
                })
        };
        r.pending = n("pending")?;
        r.fetched = 0;
        r.processing = n("running")?;
        r.completed = n("completed")?;
        r.dead_lettered = n("dead")?;
        Ok(r)
    }
}

/// How a value is sent: as the type the server inferred for its parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum As {
    Int8,
    Int4,
    Int2,
    Float8,
    Float4,
    Text,
    Int8Array,
    Int4Array,
    Int2Array,
    TextArray,
    /// A job's id, or an array of them, in the table's id type ([`JobKey`]).
    Key,
    Keys,
}

/// A lifecycle statement described, with what each `$n` takes and as which type.
struct Prepared {
    stmt: Stmt,
    binds: Vec<(Bind, As)>,
}

/// One call's values, in every type a parameter may take.
struct Values<'a> {
    id: JobKey,
    ids: &'a [JobKey],
    worker: &'a String,
    delay_s: (f64, f32, i32),
    max_attempts: (i64, i32, i16),
    lease_s: (f64, f32, i32),
    batch: Option<&'a Batch>,
}

/// A producer's batch, its priorities in each integer width a statement may ask for,
/// and (where the enqueue step binds `:ids`) the new jobs' ids, claimbench's to hand out.
struct Batch {
    ids: Vec<JobKey>,
    ages_us: Vec<i64>,
    queues: Vec<String>,
    priorities: (Vec<i64>, Vec<i32>, Vec<i16>),
    payload_bytes: (i64, i32),
}

impl<'a> Values<'a> {
    fn new(worker: &'a String) -> Values<'a> {
        Values {
            id: JobKey(0),
            ids: &[],
            worker,
            delay_s: (0.0, 0.0, 0),
            max_attempts: (0, 0, 0),
            lease_s: (0.0, 0.0, 0),
            batch: None,
        }
    }

    fn id(mut self, id: i64) -> Self {
        self.id = JobKey(id);
        self
    }

    fn seconds(s: f64) -> (f64, f32, i32) {
        (s, s as f32, s.round().clamp(0.0, i32::MAX as f64) as i32)
    }

    fn arg(&self, b: Bind, a: As) -> &(dyn ToSql + Sync) {
        match (b, a) {
            (Bind::Id, _) => &self.id,
            (Bind::Ids, As::Keys) if self.batch.is_some() => &self.batch().ids,
            (Bind::Ids, _) => &self.ids,
            (Bind::WorkerId, _) => self.worker,
            (Bind::RetryDelayS, As::Float4) => &self.delay_s.1,
            (Bind::RetryDelayS, As::Int4) => &self.delay_s.2,
            (Bind::RetryDelayS, _) => &self.delay_s.0,
            (Bind::LeaseS, As::Float4) => &self.lease_s.1,
            (Bind::LeaseS, As::Int4) => &self.lease_s.2,
            (Bind::LeaseS, _) => &self.lease_s.0,
            (Bind::MaxAttempts, As::Int4) => &self.max_attempts.1,
            (Bind::MaxAttempts, As::Int2) => &self.max_attempts.2,
            (Bind::MaxAttempts, _) => &self.max_attempts.0,
            (Bind::AgesUs, _) => &self.batch().ages_us,
            (Bind::Queues, _) => &self.batch().queues,
            (Bind::Priorities, As::Int4Array) => &self.batch().priorities.1,
            (Bind::Priorities, As::Int2Array) => &self.batch().priorities.2,
            (Bind::Priorities, _) => &self.batch().priorities.0,
            (Bind::PayloadBytes, As::Int4) => &self.batch().payload_bytes.1,
            (Bind::PayloadBytes, _) => &self.batch().payload_bytes.0,
        }
    }

    /// Only the enqueue step binds a batch's values, and it is given one.
    fn batch(&self) -> &Batch {
        self.batch.expect("the enqueue step is run with its batch")
    }
}

impl Prepared {
    /// What `$1`, `$2`, … take from `v`, on the stack.
    fn args<'a>(&self, v: &'a Values<'_>) -> [&'a (dyn ToSql + Sync); MAX_BINDS] {
        let mut args: [&(dyn ToSql + Sync); MAX_BINDS] = [v.worker; MAX_BINDS];
        for (slot, (b, a)) in args.iter_mut().zip(&self.binds) {
            *slot = v.arg(*b, *a);
        }
        args
    }

    /// Rows changed, with `v` bound.
    async fn execute(&self, c: &Client, v: &Values<'_>) -> Result<u64, tokio_postgres::Error> {
        let args = self.args(v);
        self.stmt.execute(c, &args[..self.binds.len()]).await
    }

    /// The first column of each row, as ids.
    async fn ids(&self, c: &Client, v: &Values<'_>) -> Result<Vec<i64>, tokio_postgres::Error> {
        let args = self.args(v);
        let rows = self.stmt.query(c, &args[..self.binds.len()]).await?;
        rows.iter()
            .map(|r| r.try_get::<_, JobKey>(0).map(|k| k.0))
            .collect()
    }

    /// Whether the statement binds `:ids`.
    fn binds_ids(&self) -> bool {
        self.binds.iter().any(|(b, _)| *b == Bind::Ids)
    }
}

/// A declared table's statements on one session.
pub(super) struct TableStatements {
    file: String,
    /// The table's name, for the model check's hold without a declared hold step.
    pub(super) name: String,
    start: Option<Prepared>,
    heartbeat: Option<Prepared>,
    complete: Prepared,
    fail: Option<Prepared>,
    requeue: Prepared,
    rescue: Option<Prepared>,
    enqueue: Option<Prepared>,
    oldest: Stmt,
    effect: Stmt,
}

/// The type `b` is sent as, for a parameter the server typed `ty`; `None`: not one
/// claimbench can bind it as.
fn bind_as(b: Bind, ty: &Type) -> Option<As> {
    match b {
        Bind::Id => return JobKey::is_id_type(ty).then_some(As::Key),
        Bind::Ids => return JobKey::is_ids_type(ty).then_some(As::Keys),
        _ => {}
    }
    let a = match *ty {
        Type::INT8 => As::Int8,
        Type::INT4 => As::Int4,
        Type::INT2 => As::Int2,
        Type::FLOAT8 => As::Float8,
        Type::FLOAT4 => As::Float4,
        Type::INT8_ARRAY => As::Int8Array,
        Type::INT4_ARRAY => As::Int4Array,
        Type::INT2_ARRAY => As::Int2Array,
        Type::TEXT_ARRAY | Type::VARCHAR_ARRAY => As::TextArray,
        _ if <String as ToSql>::accepts(ty) => As::Text,
        _ => return None,
    };
    let fits = match b {
        Bind::Id | Bind::Ids => false,
        Bind::WorkerId => a == As::Text,
        Bind::RetryDelayS | Bind::LeaseS => matches!(a, As::Float8 | As::Float4 | As::Int4),
        Bind::MaxAttempts => matches!(a, As::Int8 | As::Int4 | As::Int2),
        Bind::AgesUs => a == As::Int8Array,
        Bind::Queues => a == As::TextArray,
        Bind::Priorities => matches!(a, As::Int8Array | As::Int4Array | As::Int2Array),
        Bind::PayloadBytes => matches!(a, As::Int8 | As::Int4),
    };
    fits.then_some(a)
}

fn wants(b: Bind) -> &'static str {
    match b {
        Bind::Id => ":id as the table's id type: bigint, integer, uuid or text",
        Bind::Ids => {
            ":ids as an array of the table's id type (id = ANY(:ids), unnest(:ids::uuid[]))"
        }
        Bind::WorkerId => ":worker_id as text",
        Bind::RetryDelayS => ":retry_delay_s as float8 (make_interval(secs => :retry_delay_s))",
        Bind::LeaseS => ":lease_s as float8 (make_interval(secs => :lease_s))",
        Bind::MaxAttempts => ":max_attempts as an integer",
        Bind::AgesUs => ":ages_us as bigint[] (unnest(:ages_us::bigint[]))",
        Bind::Queues => ":queues as text[] (unnest(:queues::text[]))",
        Bind::Priorities => ":priorities as an integer array (unnest(:priorities::int[]))",
        Bind::PayloadBytes => ":payload_bytes as an integer",
    }
}

impl TableStatements {
    /// Prepares (or describes, as `keep` says) every step a session runs. A step the
    /// server refuses, or whose parameter it types as claimbench cannot bind, names
    /// the file and the step.
    pub(super) async fn prepare(
        c: &Client,
        keep: Keep,
        t: &TableForm,
    ) -> Result<TableStatements, BackendError> {
        let named: [(&str, Option<&Statement>); 7] = [
            ("start", t.start.as_ref()),
            ("heartbeat", t.heartbeat.as_ref()),
            ("complete", Some(&t.complete)),
            ("fail", t.fail.as_ref()),
            ("requeue", Some(&t.requeue)),
            ("rescue", t.rescue.as_ref()),
            ("enqueue", t.enqueue.as_ref()),
        ];
        let refused = |name: &str, why: String| {
            BackendError::other(
                "prepare the declared table's statements",
                format!("{}: table.postgres step {name}: {why}", t.file),
            )
        };
        let mut out: Vec<Option<Prepared>> = Vec::new();
        for (name, s) in named {
            let Some(s) = s else {
                out.push(None);
                continue;
            };
            let d = describe_all(c, keep, &[&s.sql], false)
                .await
                .map_err(|e| {
                    refused(
                        name,
                        format!("the server refused it: {}", super::root_cause(&e)),
                    )
                })?
                .pop()
                .expect("one statement");
            let types = d.stmt.params().to_vec();
            let mut binds = Vec::with_capacity(s.binds.len());
            for (b, ty) in s.binds.iter().zip(&types) {
                let a = bind_as(*b, ty).ok_or_else(|| {
                    refused(
                        name,
                        format!(
                            "the server types a parameter {ty}; claimbench binds {}",
                            wants(*b)
                        ),
                    )
                })?;
                binds.push((*b, a));
            }
            out.push(Some(Prepared {
                stmt: d.stmt,
                binds,
            }));
        }
        let oldest = describe_all(c, keep, &[&t.oldest], false)
            .await
            .map_err(|e| {
                refused(
                    "oldest",
                    format!("the server refused it: {}", super::root_cause(&e)),
                )
            })?;
        let oldest = oldest.into_iter().next().expect("one statement");
        if !oldest
            .columns
            .iter()
            .any(|(n, ty)| n == "oldest_pending_ms" && *ty == Type::FLOAT8)
        {
            return Err(refused(
                "oldest",
                "returns no float8 column `oldest_pending_ms`; return the age in ms of the oldest job a claim could take (…::float8 AS oldest_pending_ms, NULL when none is)".into(),
            ));
        }
        let effect = describe_all(c, keep, &[EFFECT_SQL], false)
            .await
            .map_err(|e| query_error("prepare", e))?;
        let mut out = out.into_iter();
        let mut next = || out.next().expect("one per step");
        Ok(TableStatements {
            file: t.file.clone(),
            name: t.name.clone(),
            start: next(),
            heartbeat: next(),
            complete: next().expect("required"),
            fail: next(),
            requeue: next().expect("required"),
            rescue: next(),
            enqueue: next(),
            oldest: oldest.stmt,
            effect: effect.into_iter().next().expect("one statement").stmt,
        })
    }

    /// A lifecycle step on the declared table: its own statement where the file has
    /// one. Without a start step a job starts when it is claimed (the worker's clock
    /// names the moment); without a heartbeat step none is sent.
    /// `queue`: the queue the worker's claim asks for, where it binds `:queue`.
    pub(super) async fn run(
        &self,
        c: &Client,
        (me, queue): (&String, Option<&String>),
        step: Step,
    ) -> Result<Reply, BackendError> {
        let e = |e| query_error(step.what(), e);
        let v = Values::new(me);
        match step {
            Step::Start { job, .. } => match &self.start {
                Some(p) if p.execute(c, &v.id(job)).await.map_err(e)? != 1 => Ok(Reply::default()),
                _ => Ok(Reply::row(Some(crate::backend::broker::now_us()), None)),
            },
            Step::Heartbeat { job, .. } => match &self.heartbeat {
                Some(p) => Ok(Reply::changed(p.execute(c, &v.id(job)).await.map_err(e)?)),
                None => Ok(Reply::changed(1)),
            },
            Step::Effect(f) => {
                let (failed, finished) = (f.failed as i16, crate::backend::broker::now_us());
                let args: [&(dyn ToSql + Sync); 8] = [
                    &f.job,
                    &f.attempt,
                    me,
                    &failed,
                    &f.started_us,
                    &f.token,
                    &finished,
                    &queue,
                ];
                let r = self.effect.query_opt(c, &args).await.map_err(e)?;
                Ok(r.map_or_else(Reply::default, |r| Reply::row(r.get(0), Some(1))))
            }
            Step::Complete { job } => {
                let n = self.complete.execute(c, &v.id(job)).await.map_err(e)?;
                Ok(Reply::changed(n))
            }
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => {
                let Some(p) = &self.fail else {
                    return Err(BackendError::other(
                        "fail a job",
                        format!("{} has no fail step", self.file),
                    ));
                };
                let mut v = v.id(job);
                v.delay_s = Values::seconds(retry_delay.as_secs_f64());
                let m = i64::from(max_attempts);
                v.max_attempts = (m, m as i32, m.min(i16::MAX as i64) as i16);
                let n = p.execute(c, &v).await.map_err(e)?;
                Ok(Reply::row(Some(i64::from(n == 1)), Some(0)))
            }
        }
    }

    /// The requeue step: `jobs` back to the queue; the ids it gave back.
    pub(super) async fn requeue(
        &self,
        c: &Client,
        me: &String,
        jobs: &[i64],
    ) -> Result<Vec<i64>, BackendError> {
        let keys: Vec<JobKey> = jobs.iter().copied().map(JobKey).collect();
        let mut v = Values::new(me);
        v.ids = &keys;
        self.requeue
            .ids(c, &v)
            .await
            .map_err(|e| query_error("release", e))
    }

    /// The rescue step, if the file has one: the ids it gave back.
    pub(super) async fn rescue(
        &self,
        c: &Client,
        me: &String,
        lease: std::time::Duration,
    ) -> Result<Vec<i64>, BackendError> {
        let Some(p) = &self.rescue else {
            return Ok(Vec::new());
        };
        let mut v = Values::new(me);
        v.lease_s = Values::seconds(lease.as_secs_f64());
        p.ids(c, &v).await.map_err(|e| query_error("rescue", e))
    }

    /// The enqueue step: one job per element of `ages_us`, each in a queue and at a
    /// priority drawn as `w`'s population says; the rows it wrote.
    pub(super) async fn enqueue(
        &self,
        c: &Client,
        me: &String,
        w: &crate::workload::Workload,
        ages_us: &[i64],
    ) -> Result<u64, BackendError> {
        let Some(p) = &self.enqueue else {
            return Err(BackendError::other(
                "produce",
                format!("{} has no enqueue step", self.file),
            ));
        };
        let (queues, levels) = crate::backend::shared::drawn(w, ages_us.len());
        let bytes = i64::from(w.population.payload_bytes);
        let ids = match p.binds_ids() {
            true => self.new_ids(c, ages_us.len()).await?,
            false => Vec::new(),
        };
        let batch = Batch {
            ids,
            ages_us: ages_us.to_vec(),
            queues,
            priorities: (
                levels.iter().map(|&l| i64::from(l)).collect(),
                levels.clone(),
                levels
                    .iter()
                    .map(|&l| l.clamp(-32768, 32767) as i16)
                    .collect(),
            ),
            payload_bytes: (bytes, bytes.min(i32::MAX as i64) as i32),
        };
        let v = Values {
            batch: Some(&batch),
            ..Values::new(me)
        };
        p.execute(c, &v)
            .await
            .map_err(|e| query_error("produce", e))
    }

    /// `n` ids for new jobs, from the run's own sequence (jobs_hot's, past every id the
    /// seed wrote): the enqueue step of a table whose ids are claimbench's to hand out.
    async fn new_ids(&self, c: &Client, n: usize) -> Result<Vec<JobKey>, BackendError> {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        let rows = c
            .query(step(TABLE_SQL, "new-ids"), &[&n])
            .await
            .map_err(|e| query_error("produce", e))?;
        Ok(rows.iter().map(|r| JobKey(r.get(0))).collect())
    }

    /// The model check's default hold on the declared table: its rows by `id`.
    pub(super) fn hold_sql(&self) -> String {
        fill(
            step(TABLE_SQL, "hold"),
            &[("table", &quote_ident(&self.name))],
        )
    }

    /// The oldest step's reading, ms.
    pub(super) async fn oldest_ms(&self, c: &Client) -> Result<Option<f64>, BackendError> {
        let r = self
            .oldest
            .query_opt(c, &[])
            .await
            .map_err(|e| query_error("sample", e))?;
        Ok(r.and_then(|r| r.get::<_, Option<f64>>("oldest_pending_ms")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`step`] panics on a step its file lacks: every one read here is there.
    #[test]
    fn every_step_read_here_is_in_declared_table_sql() {
        let here = "foreign present empty-hot table-stats serials advance new-ids hold clear";
        let wanted: Vec<&str> = here.split_whitespace().collect();
        let missing = crate::backend::sql::missing_steps(TABLE_SQL, &wanted);
        assert!(missing.is_empty(), "{missing:?}");
        let mine = include_str!("declared_table.rs");
        let read = mine.matches("step(TABLE_SQL, \"").count();
        assert_eq!(
            read,
            wanted.len(),
            "a step read here is missing from the list above"
        );
    }

    #[test]
    fn each_value_binds_only_as_a_type_that_holds_it() {
        for ty in [Type::INT8, Type::INT4, Type::UUID, Type::TEXT] {
            assert_eq!(bind_as(Bind::Id, &ty), Some(As::Key), "{ty}");
        }
        assert_eq!(bind_as(Bind::Id, &Type::FLOAT8), None);
        assert_eq!(bind_as(Bind::Ids, &Type::INT8_ARRAY), Some(As::Keys));
        assert_eq!(bind_as(Bind::Ids, &Type::UUID_ARRAY), Some(As::Keys));
        assert_eq!(bind_as(Bind::Ids, &Type::INT8), None);
        assert_eq!(bind_as(Bind::WorkerId, &Type::VARCHAR), Some(As::Text));
        assert_eq!(bind_as(Bind::LeaseS, &Type::FLOAT8), Some(As::Float8));
        assert_eq!(bind_as(Bind::LeaseS, &Type::INT2), None);
        assert_eq!(bind_as(Bind::MaxAttempts, &Type::INT2), Some(As::Int2));
        let me = "w".to_string();
        let v = Values::new(&me).id(7);
        let mut buf = bytes::BytesMut::new();
        let _ = v
            .arg(Bind::Id, As::Key)
            .to_sql_checked(&Type::INT4, &mut buf);
        assert_eq!(&buf[..], &7i32.to_be_bytes());
        buf.clear();
        let _ = v
            .arg(Bind::Id, As::Key)
            .to_sql_checked(&Type::UUID, &mut buf);
        assert_eq!(&buf[..], &7u128.to_be_bytes());
    }
}
