//! `TestDb` for PostgreSQL: the server CLAIMBENCH_PG_URL names, or else a throw-away
//! cluster the test process starts (`test_servers.rs`).

use super::{Inspect, TestDb};
use claimbench::backend::BackendKind;
use claimbench::backend::postgres::{PostgresBackend, PostgresSession};
use claimbench::backend::{Backend, DbTarget};
use claimbench::model::TableState;
use claimbench::strategy::Strategy;
use std::collections::HashSet;
use std::time::Duration;

pub fn url() -> String {
    super::test_servers::pg_url()
}

/// A plain connection to the test server, outside any schema claimbench manages.
async fn raw_client() -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

impl TestDb for PostgresBackend {
    const NAME: &'static str = "postgres";

    async fn open(test: &str) -> Self {
        let url = url();
        let target = DbTarget::parse(&url).expect("CLAIMBENCH_PG_URL parses");
        let DbTarget::Postgres(config) = &target else {
            panic!("CLAIMBENCH_PG_URL is not a postgres:// URL");
        };
        // Named by the target's Display, which never shows a password.
        let backend =
            PostgresBackend::new(config.clone(), target.to_string(), &super::schema_for(test));
        let reachable = backend.server_info().await.map(|_| ());
        super::reachable_or_fail(backend, reachable, "PostgreSQL", "CLAIMBENCH_PG_URL")
    }

    async fn drop_schema(&self) {
        raw_client()
            .await
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
                self.schema()
            ))
            .await
            .unwrap();
    }

    async fn hold_claim(&self, s: &mut PostgresSession, n: u32) -> HashSet<i64> {
        let c = s.client();
        c.batch_execute("BEGIN").await.unwrap();
        let rows = c
            .query(
                Strategy::PRODUCTION.text(BackendKind::Postgres),
                &[&i64::from(n), &"A".to_string()],
            )
            .await
            .unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    }

    async fn short_lock_timeout(&self, s: &mut PostgresSession) {
        s.client()
            .batch_execute("SET lock_timeout = '100ms'")
            .await
            .unwrap();
    }

    async fn roll_back(&self, s: &mut PostgresSession) {
        s.client().batch_execute("ROLLBACK").await.unwrap();
    }

    async fn queue_row_is_free(&self, probe: &mut PostgresSession, queue: &str) -> bool {
        let c = probe.client();
        c.batch_execute("BEGIN").await.unwrap();
        let locked = c
            .query(
                "SELECT 1 FROM queues WHERE name = $1 FOR UPDATE NOWAIT",
                &[&queue],
            )
            .await;
        c.batch_execute("ROLLBACK").await.unwrap();
        locked.is_ok()
    }

    async fn identity(&self, _s: &mut PostgresSession, role: &str) -> String {
        role.to_string()
    }

    async fn lock_waiting(&self, probe: &mut PostgresSession, identity: &str) -> bool {
        let n: i64 = probe
            .client()
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
                &[&identity],
            )
            .await
            .unwrap()
            .get(0);
        n == 1
    }

    async fn snapshot_held(&self, probe: &mut PostgresSession) -> bool {
        let n: i64 = probe
            .client()
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'claimbench-holder' \
                  AND state = 'idle in transaction' AND backend_xmin IS NOT NULL",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        n == 1
    }

    async fn inspect(&self, s: &mut PostgresSession, what: Inspect) -> Vec<i64> {
        let c = s.client();
        let row = match what {
            Inspect::Eligibility => c.query_one(
                "SELECT count(*) FILTER (WHERE status = 1 AND (queue <> 'open' OR scheduled_at > now())),
                        count(*) FILTER (WHERE status = 0 AND queue = 'open' AND (scheduled_at IS NULL OR scheduled_at <= now())),
                        count(*) FILTER (WHERE status = 0 AND queue IN ('paused', 'off')),
                        count(*) FILTER (WHERE status = 0 AND scheduled_at > now())
                 FROM jobs_hot",
                &[],
            ).await,
            Inspect::PriorityRange(ids) => c.query_one(
                "SELECT min(priority)::bigint, max(priority)::bigint FROM jobs_hot WHERE id = ANY($1)",
                &[&ids],
            ).await,
            // Polled while a trial's reset may be between its two steps (the schema is
            // recreated on the server's connection, then its tables made as the
            // workload role): a schema without jobs_hot yet has nothing active.
            Inspect::ActiveIn(q) => match c.query_one(
                "SELECT count(*) FROM jobs_hot WHERE queue = $1 AND status IN (1, 2)",
                &[&q],
            ).await {
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                    return vec![0];
                }
                other => other,
            },
            Inspect::OneFetchedIn(q) => c.query_one(
                "SELECT id FROM jobs_hot WHERE queue = $1 AND status = 1 LIMIT 1",
                &[&q],
            ).await,
        }
        .unwrap();
        (0..row.len()).map(|i| row.get::<_, i64>(i)).collect()
    }

    async fn age_jobs(&self, s: &mut PostgresSession) {
        s.client()
            .batch_execute(
                "UPDATE jobs_hot SET created_at = now() - interval '2 hours'
                  WHERE id = (SELECT min(id) FROM jobs_hot WHERE queue = 'paused');
                 UPDATE jobs_hot SET created_at = now() - interval '3 hours', scheduled_at = now() + interval '1 hour'
                  WHERE id = (SELECT min(id) FROM jobs_hot WHERE queue = 'open' AND priority = 0);
                 UPDATE jobs_hot SET created_at = now() - interval '1 hour'
                  WHERE id = (SELECT max(id) FROM jobs_hot WHERE queue = 'open' AND priority = 5);",
            )
            .await
            .unwrap();
    }

    /// The library's loader, on the control connection (as `prove`'s model check).
    async fn load_state(&self, _s: &mut PostgresSession, state: &TableState) {
        self.load_model_state(state).await.unwrap();
    }

    async fn create_user_table(&self) {
        let c = raw_client().await;
        let q = format!("\"{}\"", self.schema());
        c.batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS {q}; CREATE TABLE {q}.user_data (id int); \
             INSERT INTO {q}.user_data VALUES (1), (2), (3);"
        ))
        .await
        .unwrap();
    }

    async fn count(&self, s: &mut PostgresSession, sql: &str) -> i64 {
        s.client().query_one(sql, &[]).await.unwrap().get(0)
    }

    async fn exec(&self, s: &mut PostgresSession, sql: &str) {
        s.client().batch_execute(sql).await.unwrap();
    }

    async fn user_rows(&self) -> Option<i64> {
        let c = raw_client().await;
        let q = format!("\"{}\"", self.schema());
        c.query_one(&format!("SELECT count(*) FROM {q}.user_data"), &[])
            .await
            .ok()
            .map(|r| r.get(0))
    }

    async fn lock_rows(&self, s: &mut PostgresSession, ids: &[i64]) {
        let c = s.client();
        c.batch_execute("BEGIN").await.unwrap();
        c.execute(
            "SELECT id FROM jobs_hot WHERE id = ANY($1) FOR UPDATE",
            &[&ids],
        )
        .await
        .unwrap();
    }

    fn kill_workers_after(
        &self,
        mut killer: PostgresSession,
        after: Duration,
    ) -> tokio::task::JoinHandle<u64> {
        let role = self.worker_role();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            killer
                .client()
                .execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
                    &[&role],
                )
                .await
                .unwrap()
        })
    }
}
