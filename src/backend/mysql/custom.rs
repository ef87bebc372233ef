//! A workload's own MySQL claim ([`MysqlClaim`]): MySQL has no `UPDATE ... RETURNING`,
//! so a declared claim is a locking read (`lock`) and an UPDATE of what it returned by
//! id (`claim`) in one short transaction, the shape of production's port. The session
//! prepares both once per connection (and the claim step once per batch size: `:ids`
//! becomes one placeholder per row of a full batch, padded with id 0, which no job has),
//! reads the lock step's columns by name, and claims a job only when both steps agree on
//! it: a claim step that changes fewer rows than the lock step returned is an error.

use super::session::{CustomPrepared as Prepared, MysqlSession};
use super::{expand_ids, int, session_error};
use crate::backend::{BackendError, ClaimedJob};
use crate::strategy::Strategy;
use crate::strategy::custom::{Constant, MysqlClaim};
use crate::strategy::named_params::Param;
use mysql_async::prelude::Queryable;
use mysql_async::{Params, Row, Statement, Value};

fn refused(strategy: &Strategy, m: &MysqlClaim, step: &str, message: String) -> BackendError {
    BackendError::other(
        "prepare the claim",
        format!(
            "{}: strategies.{strategy}.mysql step {step}: {message}",
            m.file
        ),
    )
}

/// The values of `params` for one call, the ids of `jobs` (padded to `batch`) where
/// `:ids` stands.
fn values(
    (params, consts): (&[Param], &[(String, Constant)]),
    batch: u32,
    (worker_id, queue): (&str, &str),
    jobs: &[ClaimedJob],
) -> Params {
    let mut v = Vec::with_capacity(params.len() + batch as usize);
    for p in params {
        match p {
            Param::Batch => v.push(Value::from(batch)),
            Param::WorkerId => v.push(Value::from(worker_id)),
            Param::Queue => v.push(Value::from(queue)),
            Param::Const(k) => v.push(match consts.get(usize::from(*k)).map(|c| &c.1) {
                Some(Constant::Int(n)) => Value::from(*n),
                Some(Constant::Bool(b)) => Value::from(*b),
                Some(Constant::Text(t)) => Value::from(t.as_str()),
                None => Value::NULL,
            }),
            Param::Ids => {
                v.extend(jobs.iter().map(|j| Value::from(j.id)));
                v.extend((jobs.len()..batch as usize).map(|_| Value::Int(0)));
            }
            Param::Window => v.push(Value::Int(1)),
        }
    }
    Params::Positional(v)
}

impl MysqlSession {
    /// Where `strategy`'s statements are in `self.custom`, preparing its lock step on
    /// first use; a statement the server refuses, or a lock step without an `id`
    /// column, fails naming the file and step.
    async fn custom_index(
        &mut self,
        strategy: &Strategy,
        m: &MysqlClaim,
    ) -> Result<usize, BackendError> {
        if let Some(i) = self.custom.iter().position(|p| p.strategy == *strategy) {
            return Ok(i);
        }
        self.claims_by_queue = strategy.reads_queue();
        let lock = self
            .conn
            .prep(&m.lock)
            .await
            .map_err(|e| refused(strategy, m, "lock", format!("the server refused it: {e}")))?;
        let column = |name: &str| lock.columns().iter().position(|c| c.name_str() == name);
        let id = column("id").ok_or_else(|| {
            refused(
                strategy,
                m,
                "lock",
                "returns no `id` column; return the locked rows' ids as `id`".into(),
            )
        })?;
        let (attempt, queue_wait) = (column("attempt_count"), column("queue_wait_us"));
        self.custom.push(Prepared {
            strategy: strategy.clone(),
            lock,
            id,
            attempt,
            queue_wait,
            claim: None,
        });
        Ok(self.custom.len() - 1)
    }

    /// Prepares both steps, as a run does before its first trial.
    pub(super) async fn check_declared(
        &mut self,
        strategy: &Strategy,
        m: &MysqlClaim,
    ) -> Result<(), BackendError> {
        let i = self.custom_index(strategy, m).await?;
        self.custom_claim(i, m, 1).await.map(|_| ())
    }

    /// The claim step for `batch` ids, prepared once per batch size.
    async fn custom_claim(
        &mut self,
        i: usize,
        m: &MysqlClaim,
        batch: u32,
    ) -> Result<Statement, BackendError> {
        if let Some((b, st)) = &self.custom[i].claim
            && *b == batch
        {
            return Ok(st.clone());
        }
        let sql = expand_ids(&m.claim, batch as usize);
        let st = self.conn.prep(sql).await.map_err(|e| {
            let s = &self.custom[i].strategy;
            refused(s, m, "claim", format!("the server refused it: {e}"))
        })?;
        self.custom[i].claim = Some((batch, st.clone()));
        Ok(st)
    }

    /// Runs the declared claim for `batch`: lock, claim, commit; the jobs go to `out`
    /// once committed.
    pub(super) async fn claim_declared(
        &mut self,
        strategy: &Strategy,
        m: &MysqlClaim,
        batch: u32,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<(), BackendError> {
        let i = self.custom_index(strategy, m).await?;
        let claim = self.custom_claim(i, m, batch).await?;
        let before = out.len();
        let consts = strategy
            .def()
            .custom
            .as_ref()
            .map_or(&[][..], |c| &c.consts);
        let result = self
            .in_transaction("claim", async |s| {
                let cluster = s.cluster;
                let e = |e| session_error(cluster, "claim", e);
                let p = &s.custom[i];
                let me = (s.worker_id.as_str(), s.queue.as_str());
                let params = values((&m.lock_params, consts), batch, me, &[]);
                let rows: Vec<Row> = s.conn.exec(&p.lock, params).await.map_err(e)?;
                for r in &rows {
                    out.push(ClaimedJob {
                        id: super::declared_table::job_id(r, p.id, (&m.file, "lock"))?,
                        attempt: p.attempt.and_then(|c| int(r, c)).unwrap_or(0) as i32,
                        queue_wait_us: p.queue_wait.and_then(|c| int(r, c)).unwrap_or(-1),
                    });
                }
                let locked = out.len() - before;
                if locked == 0 {
                    return Ok(((), true));
                }
                if locked > batch as usize {
                    return Err(BackendError::other(
                        "claim",
                        format!(
                            "{}: the lock step returned {} rows for a batch of {batch}; it must take at most :batch (LIMIT :batch)",
                            m.file, locked
                        ),
                    ));
                }
                let params = values((&m.claim_params, consts), batch, me, &out[before..]);
                s.conn.exec_drop(&claim, params).await.map_err(e)?;
                let changed = s.conn.affected_rows();
                if changed != locked as u64 {
                    return Err(BackendError::other(
                        "claim",
                        format!(
                            "{}: the claim step changed {changed} of the {} rows its lock step returned; claimbench counts a job claimed only when both steps agree on it",
                            m.file, locked
                        ),
                    ));
                }
                Ok(((), true))
            })
            .await;
        if result.is_err() {
            // Rolled back: none of the locked rows is claimed.
            out.truncate(before);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_fill_a_full_batch_and_the_rest_bind_in_order() {
        let consts = [("attempts".to_string(), Constant::Int(5))];
        let p = values(
            (
                &[
                    Param::WorkerId,
                    Param::Ids,
                    Param::Batch,
                    Param::Queue,
                    Param::Const(0),
                ],
                &consts,
            ),
            3,
            ("w1", "mail"),
            &[7, 9].map(|id| ClaimedJob {
                id,
                attempt: 0,
                queue_wait_us: 0,
            }),
        );
        let Params::Positional(v) = p else {
            panic!("positional")
        };
        assert_eq!(
            v,
            vec![
                Value::from("w1"),
                Value::from(7i64),
                Value::from(9i64),
                Value::Int(0),
                Value::from(3u32),
                Value::from("mail"),
                Value::from(5i64),
            ]
        );
    }
}
