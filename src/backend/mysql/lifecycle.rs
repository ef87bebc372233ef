//! The job's lifecycle on claimbench's own table: each step a stored procedure of
//! `migrations/mysql/lifecycle/` (one round trip), or the declared table's own step.

use super::session::MysqlSession;
use super::{int, session_error};
use crate::backend::BackendError;
use crate::backend::lifecycle::{Lifecycle, Reply, Step};
use mysql_async::prelude::Queryable;
use mysql_async::{Params, Statement};

/// Each step binds what its statement under `migrations/mysql/` takes, in order; all
/// but the heartbeat are procedure calls that answer with one row.
impl Lifecycle for MysqlSession {
    async fn run(&mut self, step: Step) -> Result<Reply, BackendError> {
        if self.table.is_some() {
            return Box::pin(self.run_declared(step)).await;
        }
        let me = self.worker_id.as_str();
        let (statement, params): (fn(&Self) -> &Statement, Params) = match step {
            Step::Heartbeat { job, token } => {
                let hb = &self.statements.heartbeat;
                let done = self.conn.exec_drop(hb, (job, me, token)).await;
                done.map_err(|e| session_error(self.cluster, step.what(), e))?;
                return Ok(Reply::changed(self.conn.affected_rows()));
            }
            Step::Start { job, gated, token } => (
                |s| &s.statements.start,
                Params::from((job, me, token, gated)),
            ),
            Step::Effect(f) => (
                |s| &s.statements.effect,
                Params::from((f.job, f.attempt, me, f.failed as i16, f.started_us, f.token)),
            ),
            Step::Complete { job } => (|s| &s.statements.complete, Params::from((job, me))),
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => (
                |s| &s.statements.fail,
                Params::from((job, me, retry_delay.as_micros() as i64, max_attempts)),
            ),
        };
        let r = self.call(step.what(), statement, params).await?;
        Ok(Reply::row(int(&r, 0), int(&r, 1)))
    }

    /// Gives back the leases of `jobs` in the lock service, when the run has one.
    async fn finished(&mut self, jobs: &[i64]) -> Result<(), BackendError> {
        if let Some(l) = self.leases.as_mut().filter(|l| l.held() > 0) {
            // A lock service out of reach leaves the leases to expire; the job's own
            // step succeeded and stays so.
            let _ = l.give_back(jobs).await;
        }
        Ok(())
    }
}
