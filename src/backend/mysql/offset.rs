//! `offset-start` on MySQL: an unlocked read of a start drawn among the first K eligible
//! rows, then locking reads bounded by the start's fetch-order key (from it on, and
//! ahead of it only when those run short), then production's UPDATE by id, in one short
//! transaction. The statements and why they are shaped so are in
//! `migrations/mysql/strategies/offset-start.sql`.

use super::session::{MysqlSession, OffsetPrepared as Prepared, claimed};
use super::{expand_ids, session_error};
use crate::backend::sql::{fill, migration, step};
use crate::backend::{BackendError, ClaimedJob};
use crate::strategy::Strategy;
use mysql_async::prelude::Queryable;
use mysql_async::{Row, Value};
use rand::Rng;

pub(super) const OFFSET_SQL: &str = migration!("mysql", "strategies/offset-start.sql");

/// What the locking reads' `{force_index}` becomes where the layout has the index.
const FORCE_INDEX: &str = "FORCE INDEX (ix_jobs_hot_fetch_order)";
/// A hint that names an index the table lacks.
const ER_KEY_DOES_NOT_EXIST: u16 = 1176;

/// The statements `claimbench sql` shows: the file's steps, then production's claim.
pub(super) fn as_sent(batch: u32) -> String {
    let claim = step(super::PRODUCTION_SQL, "claim");
    let file = fill(OFFSET_SQL.trim(), &[("force_index", FORCE_INDEX)]);
    format!(
        "{file}\n-- step: claim\n{}",
        expand_ids(claim, batch as usize)
    )
}

impl MysqlSession {
    /// The reads, prepared on first use: with the fetch-order index forced, or without
    /// the hint on a layout that lacks the index. A statement the server refuses
    /// otherwise fails naming the step.
    pub(super) async fn offset_statements(&mut self) -> Result<&Prepared, BackendError> {
        if self.offset.is_none() {
            let prepared = match self.prepare_offset(FORCE_INDEX).await {
                Err((_, mysql_async::Error::Server(e))) if e.code == ER_KEY_DOES_NOT_EXIST => {
                    self.prepare_offset("").await
                }
                other => other,
            };
            let prepared = prepared.map_err(|(name, e)| {
                BackendError::other(
                    "prepare the claim",
                    format!("offset-start step {name}: the server refused it: {e}"),
                )
            })?;
            self.offset = Some(prepared);
        }
        Ok(self.offset.as_ref().expect("prepared above"))
    }

    async fn prepare_offset(
        &mut self,
        force_index: &str,
    ) -> Result<Prepared, (&'static str, mysql_async::Error)> {
        let mut prep = async |name: &'static str| {
            let sql = fill(step(OFFSET_SQL, name), &[("force_index", force_index)]);
            self.conn.prep(sql).await.map_err(|e| (name, e))
        };
        Ok(Prepared {
            start: prep("start").await?,
            after: prep("after").await?,
            before: prep("before").await?,
            hinted: !force_index.is_empty(),
        })
    }

    /// The `after` read as a claim from the head's key sends it, its parameters inlined
    /// for ANALYZE (sent as text): the plan every claim's locking read gets, wherever its
    /// start (the ranges differ, the access path does not). `None` with nothing pending.
    pub(super) async fn offset_sample(
        &mut self,
        batch: u32,
    ) -> Result<Option<String>, BackendError> {
        let hinted = self.offset_statements().await?.hinted;
        let start = self.offset.as_ref().expect("prepared above").start.clone();
        let key: Option<(Value, Value, Value)> = self
            .conn
            .exec_first(&start, (0u32,))
            .await
            .map_err(|e| session_error(self.cluster, "explain the claim", e))?;
        let Some((priority, due, id)) = key else {
            return Ok(None);
        };
        let hint = if hinted { FORCE_INDEX } else { "" };
        let sql = fill(step(OFFSET_SQL, "after"), &[("force_index", hint)]);
        let [p, d, id] = [&priority, &due, &id].map(|v| v.as_sql(false));
        let literals = [p.clone(), d.clone(), id, p.clone(), d, p, batch.to_string()];
        Ok(super::session::inlined(&sql, literals))
    }

    /// One claim of `batch` from a start drawn below `strategy`'s window; the jobs go to
    /// `out` once committed.
    pub(super) async fn claim_offset(
        &mut self,
        strategy: &Strategy,
        batch: u32,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<(), BackendError> {
        let window = strategy.def().offset_window.unwrap_or(1).max(1);
        let offset = rand::thread_rng().gen_range(0..window);
        self.offset_statements().await?;
        let update = self.batch_update(batch).await?;
        let before = out.len();
        let result = self
            .in_transaction("claim", async |s| {
                let cluster = s.cluster;
                let e = |e| session_error(cluster, "claim", e);
                let p = s.offset.as_ref().expect("prepared above");
                let mut key: Option<(Value, Value, Value)> =
                    s.conn.exec_first(&p.start, (offset,)).await.map_err(e)?;
                if key.is_none() && offset > 0 {
                    // Fewer eligible rows than the offset: start at the head.
                    key = s.conn.exec_first(&p.start, (0u32,)).await.map_err(e)?;
                }
                let Some((priority, due, id)) = key else {
                    return Ok(((), true));
                };
                let (pr, du) = (&priority, &due);
                let params = (pr, du, &id, pr, du, pr, batch);
                let rows: Vec<Row> = s.conn.exec(&p.after, params).await.map_err(e)?;
                out.extend(rows.iter().map(claimed));
                let short = batch as usize - (out.len() - before);
                if short > 0 {
                    let params = (pr, pr, du, pr, du, &id, short as u32);
                    let rows: Vec<Row> = s.conn.exec(&p.before, params).await.map_err(e)?;
                    out.extend(rows.iter().map(claimed));
                }
                if out.len() > before {
                    let params = s.update_params(out[before..].iter().map(|j| j.id), batch);
                    s.conn.exec_drop(&update, params).await.map_err(e)?;
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
