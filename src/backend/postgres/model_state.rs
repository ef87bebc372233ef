//! A generated table state in place of the seed, for the model check of a declared
//! claim (`prove`), and the rows claims in flight hold beside it.

use super::*;
use crate::model::TableState;

pub(super) const MODEL_SQL: &str = migration!("postgres", "model.sql");

impl PostgresBackend {
    /// Replaces the schema's jobs and queues with `state`, in one transaction on the
    /// control connection.
    pub(super) async fn load_state(&self, state: &TableState) -> Result<(), BackendError> {
        let q = &state.queues;
        let names: Vec<&str> = q.iter().map(|q| q.name.as_str()).collect();
        let paused: Vec<bool> = q.iter().map(|q| q.is_paused).collect();
        let active: Vec<bool> = q.iter().map(|q| q.is_active).collect();
        let max: Vec<Option<i32>> = q.iter().map(|q| q.max_workers).collect();
        let j = &state.jobs;
        let ids: Vec<i64> = j.iter().map(|j| j.id).collect();
        let queues: Vec<&str> = j.iter().map(|j| j.queue.as_str()).collect();
        let prios: Vec<i32> = j.iter().map(|j| j.priority).collect();
        let status: Vec<i16> = j.iter().map(|j| j.status).collect();
        let created: Vec<f64> = j.iter().map(|j| j.created_s as f64).collect();
        let sched: Vec<Option<f64>> = j.iter().map(|j| j.scheduled_s.map(|s| s as f64)).collect();
        let guard = self.control().await?;
        let c: &Client = &guard;
        let e = |e| query_error("load a model state", e);
        c.batch_execute("BEGIN").await.map_err(e)?;
        let loaded = async {
            c.batch_execute(step(MODEL_SQL, "clear")).await?;
            c.execute(step(MODEL_SQL, "queues"), &[&names, &paused, &active, &max])
                .await?;
            c.execute(
                step(MODEL_SQL, "jobs"),
                &[&ids, &queues, &prios, &status, &created, &sched],
            )
            .await?;
            c.batch_execute("COMMIT").await
        };
        if let Err(err) = loaded.await {
            let _ = c.batch_execute("ROLLBACK").await;
            return Err(e(err));
        }
        Ok(())
    }
}
