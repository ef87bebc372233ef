//! `TestDb` for PostgreSQL (CLAIMBENCH_PG_URL, default
//! postgres://postgres@127.0.0.1:5432/test).

use super::{Inspect, TestDb};
use claimbench::backend::postgres::{PostgresBackend, PostgresSession, strategy_sql};
use claimbench::backend::{Backend, DbTarget};
use claimbench::strategy::Strategy;
use std::collections::HashSet;
use std::time::Duration;

pub fn url() -> String {
    std::env::var("CLAIMBENCH_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

impl TestDb for PostgresBackend {
    const NAME: &'static str = "postgres";

    async fn open(test: &str) -> Option<Self> {
        let url = url();
        let target = DbTarget::parse(&url).expect("CLAIMBENCH_PG_URL parses");
        let DbTarget::Postgres(config) = &target else {
            panic!("CLAIMBENCH_PG_URL is not a postgres:// URL");
        };
        // Named by the target's Display, which never shows a password.
        let backend =
            PostgresBackend::new(config.clone(), target.to_string(), &super::schema_for(test));
        let reachable = backend.server_info().await.map(|_| ());
        super::reachable_or_skip(backend, reachable, test, "PostgreSQL", "CLAIMBENCH_PG_URL")
    }

    async fn drop_schema(&self) {
        let mut s = self.connect("cbtest-cleanup", "cleanup").await.unwrap();
        s.client()
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
                strategy_sql(Strategy::Production),
                &[&i64::from(n), &"A".to_string(), &16i64],
            )
            .await
            .unwrap();
        rows.iter().map(|r| r.get(0)).collect()
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
