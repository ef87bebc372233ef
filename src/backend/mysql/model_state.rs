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
                insert_rows(c, "queues", "queue-row", queue_rows(state)).await?;
                insert_rows(c, "jobs", "job-row", job_rows(state)).await?;
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

/// The most rows one INSERT carries: MySQL takes at most 65,535 placeholders a
/// statement, and a job row has 7 (a 20,000-job state was refused whole).
const ROWS_PER_INSERT: usize = 1_000;

/// Sends the `table` step of the model file with one `row` step's placeholders per row,
/// and `values`, every row's in order (as many a row as the row step has placeholders):
/// a round trip per [`ROWS_PER_INSERT`] rows (none for none).
async fn insert_rows(
    c: &mut Conn,
    table: &str,
    row: &str,
    values: Vec<Value>,
) -> Result<(), mysql_async::Error> {
    let one = step(MODEL_SQL, row);
    let width = one.matches('?').count();
    for chunk in values.chunks(ROWS_PER_INSERT * width) {
        let rows = vec![one; chunk.len() / width].join(", ");
        let sql = step(MODEL_SQL, table).replace(":rows", &rows);
        c.exec_drop(sql, Params::Positional(chunk.to_vec())).await?;
    }
    Ok(())
}

/// The state's queues, as the `queue-row` step's values one row after another.
fn queue_rows(state: &TableState) -> Vec<Value> {
    let row = |q: &crate::model::QueueRow| {
        let (paused, active) = (Value::from(q.is_paused), Value::from(q.is_active));
        [
            Value::from(&q.name),
            paused,
            active,
            Value::from(q.max_workers),
        ]
    };
    state.queues.iter().flat_map(row).collect()
}

/// The state's jobs, as the `job-row` step's values one row after another (its status
/// twice: the row's, and the one that says whether another worker holds it).
fn job_rows(state: &TableState) -> Vec<Value> {
    let row = |j: &crate::model::JobRow| {
        let status = Value::from(j.status);
        [
            Value::from(j.id),
            Value::from(&j.queue),
            Value::from(j.priority),
            status.clone(),
            status,
            Value::from(j.created_s),
            Value::from(j.scheduled_s),
        ]
    };
    state.jobs.iter().flat_map(row).collect()
}
