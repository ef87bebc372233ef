//! The cleanup job's statements (`migrations/postgres/cleanup.sql`) on the cleaner's
//! session, prepared on its first run: no worker connection prepares them.

use super::query_error;
use super::statement::{Keep, Stmt, describe_all};
use crate::backend::BackendError;
use crate::results::CleanupState;
use crate::workload::Storage;
use std::time::Duration;
use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

pub(super) struct Cleaner {
    /// Whose finished rows it removes: the archive's, or the hot table's.
    storage: Storage,
    /// `batch` and `state` (or their `-in-place` steps; a partition's rotation).
    prepared: Option<[Stmt; 2]>,
}

impl Cleaner {
    pub(super) fn new(storage: Storage) -> Cleaner {
        Cleaner {
            storage,
            prepared: None,
        }
    }

    async fn statements(&mut self, c: &Client, keep: Keep) -> Result<&[Stmt; 2], BackendError> {
        if self.prepared.is_none() {
            let sqls = super::storage::cleaning(self.storage);
            let described = describe_all(c, keep, &sqls, false)
                .await
                .map_err(|e| query_error("prepare the cleanup job", e))?;
            let mut d = described.into_iter().map(|d| d.stmt);
            let mut next = || d.next().expect("one statement per SQL");
            self.prepared = Some([next(), next()]);
        }
        Ok(self.prepared.as_ref().expect("prepared above"))
    }

    /// One statement: at most `batch` of the oldest archive rows past `retain` removed.
    pub(super) async fn clean(
        &mut self,
        c: &Client,
        keep: Keep,
        (retain, batch): (Duration, u32),
    ) -> Result<u64, BackendError> {
        let [clean, _] = self.statements(c, keep).await?;
        let args: [&(dyn ToSql + Sync); 2] = [&retain.as_secs_f64(), &i64::from(batch)];
        let rows = clean.query(c, &args).await;
        let removed: i64 = rows.map_err(|e| query_error("clean up", e))?[0].get(0);
        Ok(removed as u64)
    }

    /// The rows past `retain` (up to `cap`) and the archive's bytes.
    pub(super) async fn state(
        &mut self,
        c: &Client,
        keep: Keep,
        (retain, cap): (Duration, u64),
    ) -> Result<CleanupState, BackendError> {
        let [_, state] = self.statements(c, keep).await?;
        let args: [&(dyn ToSql + Sync); 2] = [&retain.as_secs_f64(), &(cap as i64)];
        let rows = state.query(c, &args).await;
        let r = &rows.map_err(|e| query_error("read what the cleanup left", e))?[0];
        Ok(CleanupState {
            past_retention: r.get::<_, i64>(0) as u64,
            table_bytes: r.get(1),
        })
    }
}
