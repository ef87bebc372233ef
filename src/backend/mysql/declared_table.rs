//! A workload's own queue table on MySQL/MariaDB (`crate::declared_table`): built after
//! each reset from the file's ddl and seed steps on the workload account's connection
//! (the only account a MySQL run's reset uses); its lifecycle statements prepared on
//! every session and bound in the order their `?` stand; its counts read into the
//! reconciliation. MySQL has no `UPDATE … RETURNING`, so the steps that give jobs back
//! are a locking read of the ids and an UPDATE of them in one transaction, as a declared
//! claim is. The effects table stays claimbench's, written without reading the team's
//! table, on the worker's clock.

use super::session::{DeclaredPrepared as Prepared, MysqlSession, TableStatements};
use super::*;
use crate::backend::lifecycle::{Reply, Step};
use crate::backend::{DbReconciliation, Sample, TableStats};
use crate::declared_table::{Bind, CLAIMBENCH_TABLES, Statement as Declared, TableForm};

pub(super) const TABLE_SQL: &str = migration!("mysql", "declared_table.sql");
/// claimbench's tables on MySQL beyond every engine's: the seed's weighted draws.
const SEED_TABLES: [&str; 2] = ["seed_queues", "seed_priorities"];

/// `names` as a list of quoted strings for an `IN (…)` (each a checked identifier).
fn quoted_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("'{}'", n.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn refused(t: &TableForm, step: &str, e: mysql_async::Error) -> BackendError {
    BackendError::other(
        "build the declared table",
        format!(
            "{}: table.mysql step {step}: the server refused it: {e}",
            t.file
        ),
    )
}

impl MysqlBackend {
    /// The table the last reset's workload declares, checked.
    pub(super) fn declared_table(&self) -> Option<Arc<TableForm>> {
        self.table.read().expect("not poisoned").clone()
    }

    /// Runs the ddl and seed steps on `c` (the workload's account, in the run's
    /// database), checks that they kept to the declared tables, and empties claimbench's
    /// seeded `jobs_hot` (the seed step copied it). Returns the rows the table holds.
    pub(super) async fn build_declared_table(
        &self,
        c: &mut Conn,
        t: &TableForm,
    ) -> Result<u64, BackendError> {
        c.query_drop(&t.ddl)
            .await
            .map_err(|e| refused(t, "ddl", e))?;
        let present: Option<i64> = c
            .exec_first(step(TABLE_SQL, "present"), (&t.name,))
            .await
            .map_err(|e| refused(t, "ddl", e))?;
        if present.unwrap_or(0) == 0 {
            return Err(BackendError::other(
                "build the declared table",
                format!(
                    "{}: table.mysql step ddl created no table `{}` in the run's database; create it there, unqualified (CREATE TABLE {} …)",
                    t.file, t.name, t.name
                ),
            ));
        }
        c.query_drop(&t.seed)
            .await
            .map_err(|e| refused(t, "seed", e))?;
        let ours = CLAIMBENCH_TABLES.iter().chain(&SEED_TABLES).copied();
        let allowed = ours
            .clone()
            .chain([t.name.as_str()])
            .chain(t.also.iter().map(String::as_str));
        let foreign = fill(
            step(TABLE_SQL, "foreign"),
            &[
                ("allowed", &quoted_list(allowed)),
                ("claimbench", &quoted_list(ours)),
            ],
        );
        let foreign: Vec<String> = c.query(foreign).await.map_err(|e| refused(t, "ddl", e))?;
        if !foreign.is_empty() {
            return Err(BackendError::other(
                "build the declared table",
                format!(
                    "{}: table.mysql: its steps made {} beyond the declared table `{}`; a declared table's file creates that table (and the tables `table.also` names) and their indexes, and touches nothing of claimbench's",
                    t.file,
                    foreign.join(", "),
                    t.name
                ),
            ));
        }
        let on_table = |name| fill(step(TABLE_SQL, name), &[("table", &quote_ident(&t.name))]);
        let rows: Option<i64> = c
            .query_first(on_table("rows"))
            .await
            .map_err(|e| refused(t, "seed", e))?;
        c.query_drop(step(TABLE_SQL, "empty-hot"))
            .await
            .map_err(|e| query_error("empty claimbench's seeded table", e))?;
        c.query_drop(on_table("analyze"))
            .await
            .map_err(|e| query_error("analyze the declared table", e))?;
        Ok(rows.unwrap_or(0) as u64)
    }

    /// prove's model check: the state just loaded into `jobs_hot` copied into the
    /// declared table by its seed step, in place of what it held.
    pub(super) async fn reseed_declared_table(&self, t: &TableForm) -> Result<(), BackendError> {
        let clear = fill(
            step(TABLE_SQL, "clear"),
            &[("table", &quote_ident(&t.name))],
        );
        self.on_control(async |c| {
            let e = |e| refused(t, "seed", e);
            c.query_drop(&clear).await.map_err(e)?;
            c.query_drop(&t.seed).await.map_err(e)
        })
        .await
    }

    /// The declared table's rows and bytes after a trial.
    pub(super) async fn declared_table_stats(
        &self,
        t: &TableForm,
    ) -> Result<TableStats, BackendError> {
        self.on_control(async |c| {
            let r: Option<Row> = c
                .exec_first(step(TABLE_SQL, "table-stats"), (&t.name,))
                .await
                .map_err(|e| query_error("read table statistics", e))?;
            let n = |i| r.as_ref().and_then(|r| int(r, i)).unwrap_or(0);
            Ok(TableStats {
                live_tuples: n(0),
                dead_tuples: n(1),
                table_bytes: n(2),
                index_bytes: n(3),
            })
        })
        .await
    }

    /// Where every job is, by the counts step (pending, running, completed, dead), and
    /// the effects table's own columns of the reconciliation.
    pub(super) async fn reconcile_declared(
        &self,
        t: &TableForm,
    ) -> Result<DbReconciliation, BackendError> {
        let mut r = recipe::reconcile(self).await?;
        let row: Row = self
            .on_control(async |c| {
                c.query_first(&t.counts)
                    .await
                    .map_err(|e| counts_refused(t, e.to_string()))?
                    .ok_or_else(|| counts_refused(t, "it returned no row".into()))
            })
            .await?;
        let n = |name: &str| -> Result<i64, BackendError> {
            match row.get_opt::<Option<i64>, _>(name) {
                Some(Ok(v)) => Ok(v.unwrap_or(0)),
                _ => Err(counts_refused(
                    t,
                    format!(
                        "it returns no whole-number column `{name}`; it returns pending, running, completed and dead (SUM(state = 'available') AS pending, …)"
                    ),
                )),
            }
        };
        r.pending = n("pending")?;
        r.fetched = 0;
        r.processing = n("running")?;
        r.completed = n("completed")?;
        r.dead_lettered = n("dead")?;
        Ok(r)
    }
}

/// The job a declared step's row names, from its column `i`: an integer, which is
/// how claimbench counts jobs on MySQL. Anything else (a uuid, a name) stops the trial
/// naming the file, the step and the value, rather than being read as some other job.
pub(super) fn job_id(r: &Row, i: usize, (file, step): (&str, &str)) -> Result<i64, BackendError> {
    int(r, i).ok_or_else(|| {
        let v = match r.as_ref(i) {
            Some(Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
            Some(v) => format!("{v:?}"),
            None => "no value".into(),
        };
        BackendError::other(
            "read the ids a step returned",
            format!(
                "{file}: step {step} returned the id `{}`, which is not an integer; on MySQL and MariaDB claimbench counts jobs by an integer id (uuid and text ids are PostgreSQL's for now)",
                v.escape_debug()
            ),
        )
    })
}

/// The ids a locking read returned, in its first column.
fn ids_of(rows: &[Row], at: (&str, &str)) -> Result<Vec<i64>, BackendError> {
    rows.iter().map(|r| job_id(r, 0, at)).collect()
}

fn counts_refused(t: &TableForm, why: String) -> BackendError {
    BackendError::other(
        "reconcile jobs",
        format!("{}: table.mysql step counts: {why}", t.file),
    )
}

/// One call's values.
#[derive(Default)]
struct Values<'a> {
    id: i64,
    ids: &'a [i64],
    worker: &'a str,
    delay_s: f64,
    max_attempts: i64,
    lease_s: f64,
    /// A producer's batch as JSON arrays (ages, queues, priorities) and its payload size.
    batch: Option<&'a (String, String, String, i64)>,
}

impl Values<'_> {
    /// Each bind in order; `:ids` as one value per id (at least one, as
    /// [`expand_ids`] writes at least one `?`; id 0 is no job's).
    fn params(&self, binds: &[Bind]) -> Params {
        let mut v = Vec::with_capacity(binds.len() + self.ids.len());
        let batch = || self.batch.expect("the enqueue step is run with its batch");
        for b in binds {
            match b {
                Bind::Id => v.push(Value::from(self.id)),
                Bind::Ids if self.ids.is_empty() => v.push(Value::Int(0)),
                Bind::Ids => v.extend(self.ids.iter().map(|&id| Value::from(id))),
                Bind::WorkerId => v.push(Value::from(self.worker)),
                Bind::RetryDelayS => v.push(Value::from(self.delay_s)),
                Bind::MaxAttempts => v.push(Value::from(self.max_attempts)),
                Bind::LeaseS => v.push(Value::from(self.lease_s)),
                Bind::AgesUs => v.push(Value::from(batch().0.as_str())),
                Bind::Queues => v.push(Value::from(batch().1.as_str())),
                Bind::Priorities => v.push(Value::from(batch().2.as_str())),
                Bind::PayloadBytes => v.push(Value::from(batch().3)),
            }
        }
        Params::Positional(v)
    }
}

impl TableStatements {
    /// Prepares every step a session runs but those that bind `:ids` (prepared per
    /// call, with one `?` per id). A step the server refuses names the file and step.
    pub(super) async fn prepare(
        c: &mut Conn,
        form: Arc<TableForm>,
    ) -> Result<TableStatements, BackendError> {
        let t = &*form;
        let named: [(&str, Option<&Declared>); 5] = [
            ("start", t.start.as_ref()),
            ("heartbeat", t.heartbeat.as_ref()),
            ("complete", Some(&t.complete)),
            ("fail", t.fail.as_ref()),
            ("enqueue", t.enqueue.as_ref()),
        ];
        let refused = |name: &str, e: mysql_async::Error| {
            BackendError::other(
                "prepare the declared table's statements",
                format!(
                    "{}: table.mysql step {name}: the server refused it: {e}",
                    t.file
                ),
            )
        };
        let mut out = Vec::with_capacity(named.len());
        for (name, s) in named {
            out.push(match s {
                Some(s) => Some(Prepared {
                    stmt: c.prep(&s.sql).await.map_err(|e| refused(name, e))?,
                    binds: s.binds.clone(),
                }),
                None => None,
            });
        }
        // The steps that give jobs back run rarely, and bind `:ids` as one `?` per id:
        // sent as text then, but checked now, with one.
        let giving_back = [
            ("requeue-lock", t.requeue_lock.as_ref()),
            ("requeue", Some(&t.requeue)),
            ("rescue-lock", t.rescue_lock.as_ref()),
            ("rescue", t.rescue.as_ref()),
        ];
        for (name, s) in giving_back {
            if let Some(s) = s {
                let st = c
                    .prep(expand_ids(&s.sql, 1))
                    .await
                    .map_err(|e| refused(name, e))?;
                c.close(st).await.map_err(|e| refused(name, e))?;
            }
        }
        let oldest = c.prep(&t.oldest).await.map_err(|e| refused("oldest", e))?;
        if !oldest
            .columns()
            .iter()
            .any(|col| col.name_str() == "oldest_pending_ms")
        {
            return Err(BackendError::other(
                "prepare the declared table's statements",
                format!(
                    "{}: table.mysql step oldest returns no column `oldest_pending_ms`; return the age in ms of the oldest job a claim could take (… AS oldest_pending_ms, NULL when none is)",
                    t.file
                ),
            ));
        }
        let effect = c
            .prep(step(TABLE_SQL, "effect"))
            .await
            .map_err(|e| query_error("prepare", e))?;
        let mut out = out.into_iter();
        let mut next = || out.next().expect("one per step");
        Ok(TableStatements {
            start: next(),
            heartbeat: next(),
            complete: next().expect("required"),
            fail: next(),
            enqueue: next(),
            oldest,
            effect,
            form,
        })
    }

    /// The model check's default hold on the declared table: its rows by `id`.
    pub(super) fn hold_sql(&self) -> String {
        fill(
            step(TABLE_SQL, "hold"),
            &[("table", &quote_ident(&self.form.name))],
        )
    }
}

impl MysqlSession {
    /// A lifecycle step on the declared table: its own statement where the file has
    /// one. Without a start step a job starts when it is claimed; without a heartbeat
    /// step none is sent.
    pub(super) async fn run_declared(&mut self, step: Step) -> Result<Reply, BackendError> {
        let t = self.table.as_ref().expect("a declared table");
        let (cluster, me) = (self.cluster, self.worker_id.as_str());
        let e = |e| session_error(cluster, step.what(), e);
        let v = Values {
            worker: me,
            ..Values::default()
        };
        let now = crate::backend::broker::now_us;
        let conn = &mut self.conn;
        match step {
            Step::Start { job, .. } => match &t.start {
                Some(p) => {
                    let v = Values { id: job, ..v };
                    conn.exec_drop(&p.stmt, v.params(&p.binds))
                        .await
                        .map_err(e)?;
                    match conn.affected_rows() {
                        1 => Ok(Reply::row(Some(now()), None)),
                        _ => Ok(Reply::default()),
                    }
                }
                None => Ok(Reply::row(Some(now()), None)),
            },
            Step::Heartbeat { job, .. } => match &t.heartbeat {
                Some(p) => {
                    let v = Values { id: job, ..v };
                    conn.exec_drop(&p.stmt, v.params(&p.binds))
                        .await
                        .map_err(e)?;
                    Ok(Reply::changed(conn.affected_rows()))
                }
                None => Ok(Reply::changed(1)),
            },
            Step::Effect(f) => {
                let finished = now();
                let queue = self.claims_by_queue.then_some(self.queue.as_str());
                let args = Params::Positional(vec![
                    Value::from(f.job),
                    Value::from(f.attempt),
                    Value::from(me),
                    Value::from(f.failed as i16),
                    Value::from(f.started_us),
                    Value::from(finished),
                    Value::from(f.token),
                    Value::from(queue),
                ]);
                conn.exec_drop(&t.effect, args).await.map_err(e)?;
                Ok(Reply::row(Some(finished), Some(1)))
            }
            Step::Complete { job } => {
                let (p, v) = (&t.complete, Values { id: job, ..v });
                conn.exec_drop(&p.stmt, v.params(&p.binds))
                    .await
                    .map_err(e)?;
                Ok(Reply::changed(conn.affected_rows()))
            }
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => {
                let Some(p) = &t.fail else {
                    return Err(BackendError::other(
                        "fail a job",
                        format!("{} has no fail step", t.form.file),
                    ));
                };
                let v = Values {
                    id: job,
                    delay_s: retry_delay.as_secs_f64(),
                    max_attempts: i64::from(max_attempts),
                    ..v
                };
                conn.exec_drop(&p.stmt, v.params(&p.binds))
                    .await
                    .map_err(e)?;
                let failed = conn.affected_rows() == 1;
                Ok(Reply::row(Some(i64::from(failed)), Some(0)))
            }
        }
    }

    /// The requeue steps: `jobs` back to the queue; the ids the lock step said it gave
    /// back.
    pub(super) async fn requeue_declared(
        &mut self,
        jobs: &[i64],
    ) -> Result<Vec<i64>, BackendError> {
        let form = self.table.as_ref().expect("a declared table").form.clone();
        let lock = form.requeue_lock.as_ref().expect("MySQL's form has one");
        let at = (form.file.as_str(), "requeue-lock");
        self.lock_then_give_back(("release", at), (lock, jobs, 0.0), &form.requeue)
            .await
    }

    /// The rescue steps, if the file has them: the ids they gave back.
    pub(super) async fn rescue_declared(
        &mut self,
        lease: Duration,
    ) -> Result<Vec<i64>, BackendError> {
        let form = self.table.as_ref().expect("a declared table").form.clone();
        let (Some(lock), Some(rescue)) = (&form.rescue_lock, &form.rescue) else {
            return Ok(Vec::new());
        };
        let at = (form.file.as_str(), "rescue-lock");
        self.lock_then_give_back(("rescue", at), (lock, &[], lease.as_secs_f64()), rescue)
            .await
    }

    /// A locking read of ids (bound with `ids` and `lease_s`) and the UPDATE of what
    /// it returned, in one transaction.
    async fn lock_then_give_back(
        &mut self,
        (what, at): (&'static str, (&str, &str)),
        (lock, ids, lease_s): (&Declared, &[i64], f64),
        update: &Declared,
    ) -> Result<Vec<i64>, BackendError> {
        let worker = self.worker_id.clone();
        self.in_transaction(what, async |s| {
            let e = |e| session_error(s.cluster, what, e);
            let v = Values {
                ids,
                worker: &worker,
                lease_s,
                ..Values::default()
            };
            let sql = expand_ids(&lock.sql, ids.len());
            let rows: Vec<Row> = s.conn.exec(sql, v.params(&lock.binds)).await.map_err(e)?;
            let back = ids_of(&rows, at)?;
            if !back.is_empty() {
                let v = Values { ids: &back, ..v };
                let sql = expand_ids(&update.sql, back.len());
                s.conn
                    .exec_drop(sql, v.params(&update.binds))
                    .await
                    .map_err(e)?;
            }
            Ok((back, true))
        })
        .await
    }

    /// The enqueue step: one job per element of `ages_us`, each in a queue and at a
    /// priority drawn as `w`'s population says; the rows it wrote.
    pub(super) async fn enqueue_declared(
        &mut self,
        w: &crate::workload::Workload,
        ages_us: &[i64],
    ) -> Result<u64, BackendError> {
        let t = self.table.as_ref().expect("a declared table");
        let Some(p) = &t.enqueue else {
            return Err(BackendError::other(
                "produce",
                format!("{} has no enqueue step", t.form.file),
            ));
        };
        let (queues, levels) = crate::backend::shared::drawn(w, ages_us.len());
        let batch = (
            serde_json::json!(ages_us).to_string(),
            serde_json::json!(queues).to_string(),
            serde_json::json!(levels).to_string(),
            i64::from(w.population.payload_bytes),
        );
        let v = Values {
            batch: Some(&batch),
            ..Values::default()
        };
        let e = |e| session_error(self.cluster, "produce", e);
        self.conn
            .exec_drop(&p.stmt, v.params(&p.binds))
            .await
            .map_err(e)?;
        Ok(self.conn.affected_rows())
    }

    /// The oldest step's reading in place of claimbench's (which reads `jobs_hot`, that
    /// a declared table leaves empty); work is left while it finds a job.
    pub(super) async fn sample_declared(&mut self, mut s: Sample) -> Result<Sample, BackendError> {
        let t = self.table.as_ref().expect("a declared table");
        let row: Option<Row> = self
            .conn
            .exec_first(&t.oldest, ())
            .await
            .map_err(|e| session_error(self.cluster, "sample", e))?;
        let oldest = row
            .and_then(|r| r.get_opt::<Option<f64>, _>("oldest_pending_ms"))
            .and_then(Result::ok)
            .flatten();
        s.oldest_pending_ms = oldest;
        s.work_left = oldest.is_some();
        s.queue_oldest_ms = Vec::new();
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each bind in the order its `?` stand, a repeated name bound again, `:ids` one
    /// value per id (one id 0, no job's, for an empty list: the text has one `?`), and
    /// a producer's arrays as the JSON text its step reads with JSON_TABLE.
    #[test]
    fn values_go_in_the_order_their_placeholders_stand() {
        let batch = (
            "[5,7]".to_string(),
            "[\"a\",\"b\"]".to_string(),
            "[1,2]".to_string(),
            64,
        );
        let v = Values {
            id: 9,
            ids: &[3, 4],
            worker: "w1",
            lease_s: 1.5,
            batch: Some(&batch),
            ..Values::default()
        };
        let binds = [
            Bind::WorkerId,
            Bind::Ids,
            Bind::Id,
            Bind::WorkerId,
            Bind::LeaseS,
        ];
        let Params::Positional(got) = v.params(&binds) else {
            panic!("positional")
        };
        let want: Vec<Value> = vec![
            "w1".into(),
            3i64.into(),
            4i64.into(),
            9i64.into(),
            "w1".into(),
            1.5f64.into(),
        ];
        assert_eq!(got, want);
        let none = Values { ids: &[], ..v };
        let Params::Positional(got) = none.params(&[Bind::Ids]) else {
            panic!("positional")
        };
        assert_eq!(got, vec![Value::Int(0)]);
        let Params::Positional(got) = v.params(&[Bind::AgesUs, Bind::Queues, Bind::PayloadBytes])
        else {
            panic!("positional")
        };
        assert_eq!(
            got,
            vec!["[5,7]".into(), "[\"a\",\"b\"]".into(), 64i64.into()]
        );
    }
}
