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
                let queues = state.queues.iter().map(|q| {
                    let (paused, active) = (Value::from(q.is_paused), Value::from(q.is_active));
                    [
                        Value::from(&q.name),
                        paused,
                        active,
                        Value::from(q.max_workers),
                    ]
                });
                insert_rows(c, "queues", "queue-row", queues).await?;
                let jobs = state.jobs.iter().map(|j| {
                    let id = Value::from(j.id);
                    let (status, created) = (Value::from(j.status), Value::from(j.created_s));
                    let row = [id, Value::from(&j.queue), Value::from(j.priority)];
                    let rest = [status.clone(), status, created, Value::from(j.scheduled_s)];
                    row.into_iter().chain(rest).collect::<Vec<_>>()
                });
                insert_rows(c, "jobs", "job-row", jobs).await?;
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

/// Sends the `table` step of the model file with one `row` step's placeholders per row,
/// and every row's values in order: one round trip for a table's rows (none for none).
async fn insert_rows<R: IntoIterator<Item = Value>>(
    c: &mut Conn,
    table: &str,
    row: &str,
    rows: impl Iterator<Item = R>,
) -> Result<(), mysql_async::Error> {
    let (mut values, mut n) = (Vec::new(), 0);
    for r in rows {
        values.extend(r);
        n += 1;
    }
    if n == 0 {
        return Ok(());
    }
    let one = step(MODEL_SQL, row);
    let sql = step(MODEL_SQL, table).replace(":rows", &vec![one; n].join(", "));
    c.exec_drop(sql, Params::Positional(values)).await
}
