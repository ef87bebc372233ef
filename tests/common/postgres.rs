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
            Inspect::ActiveIn(q) => c.query_one(
                "SELECT count(*) FROM jobs_hot WHERE queue = $1 AND status IN (1, 2)",
                &[&q],
            ).await,
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

    async fn load_state(&self, s: &mut PostgresSession, state: &TableState) {
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
        let c = s.client();
        let tx = c.transaction().await.unwrap();
        tx.batch_execute("TRUNCATE jobs_hot, queues").await.unwrap();
        tx.execute(
            "INSERT INTO queues (name, is_paused, is_active, max_workers) \
             SELECT * FROM unnest($1::text[], $2::bool[], $3::bool[], $4::int[])",
            &[&names, &paused, &active, &max],
        )
        .await
        .unwrap();
        tx.execute(
            "INSERT INTO jobs_hot (id, queue, type, payload, priority, status, worker_id, created_at, scheduled_at) \
             SELECT id, queue, 'model', '', priority, status, CASE WHEN status > 0 THEN 'other' END, \
                    now() + make_interval(secs => created), now() + make_interval(secs => scheduled) \
             FROM unnest($1::bigint[], $2::text[], $3::int[], $4::int2[], $5::float8[], $6::float8[]) \
                  AS u(id, queue, priority, status, created, scheduled)",
            &[&ids, &queues, &prios, &status, &created, &sched],
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
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
