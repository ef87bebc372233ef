//! A generated table state in place of the seed, for the model check of a declared
//! claim (`prove`), and the rows claims in flight hold beside it.

use super::*;
use crate::model::TableState;

pub(super) const MODEL_SQL: &str = migration!("mysql", "model.sql");

impl MysqlBackend {
    /// Replaces the database's jobs and queues with `state`, in one transaction on the
    /// control connection.
    pub(super) async fn load_state(&self, state: &TableState) -> Result<(), BackendError> {
        self.on_control(async |c| {
            let e = |e| query_error("load a model state", e);
            c.query_drop("START TRANSACTION").await.map_err(e)?;
            let loaded = async {
                c.query_drop(step(MODEL_SQL, "clear")).await?;
                c.query_drop(step(MODEL_SQL, "now")).await?;
                for q in &state.queues {
                    let row = (&q.name, q.is_paused, q.is_active, q.max_workers);
                    c.exec_drop(step(MODEL_SQL, "queue"), row).await?;
                }
                for j in &state.jobs {
                    let row = (
                        j.id,
                        &j.queue,
                        j.priority,
                        j.status,
                        j.status,
                        j.created_s,
                        j.scheduled_s,
                    );
                    c.exec_drop(step(MODEL_SQL, "job"), row).await?;
                }
                c.query_drop("COMMIT").await
            };
            if let Err(err) = loaded.await {
                let _ = c.query_drop("ROLLBACK").await;
                return Err(e(err));
            }
            Ok(())
        })
        .await
    }
}
