//! `TestDb` for MySQL and MariaDB: the server CLAIMBENCH_MYSQL_URL names, or a
//! throw-away MariaDB of the test process's own (`test_servers.rs`).

use super::{Inspect, TestDb};
use claimbench::backend::mysql::{self, MysqlBackend, MysqlSession};
use claimbench::backend::{Backend, BackendKind, DbTarget, sql_steps};
use claimbench::model::TableState;
use claimbench::strategy::Strategy;
use mysql_async::prelude::Queryable;
use std::collections::HashSet;
use std::time::Duration;

pub fn url() -> String {
    super::test_servers::mysql_url()
}

fn production_step(name: &str) -> String {
    sql_steps(Strategy::PRODUCTION.text(BackendKind::Mysql))
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1
        .to_string()
}

impl TestDb for MysqlBackend {
    const NAME: &'static str = "mysql";

    async fn open(test: &str) -> Self {
        let url = url();
        let target = DbTarget::parse(&url).expect("CLAIMBENCH_MYSQL_URL parses");
        let DbTarget::Mysql(opts) = &target else {
            panic!("CLAIMBENCH_MYSQL_URL is not a mysql:// URL");
        };
        // Named by the target's Display, which never shows a password.
        let backend = MysqlBackend::new(opts.clone(), target.to_string(), &super::schema_for(test));
        let reachable = backend.server_info().await.map(|_| ());
        super::reachable_or_fail(backend, reachable, "MySQL/MariaDB", "CLAIMBENCH_MYSQL_URL")
    }

    async fn drop_schema(&self) {
        let mut c = mysql_async::Conn::from_url(url()).await.unwrap();
        c.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.schema()))
            .await
            .unwrap();
        c.disconnect().await.unwrap();
    }

    async fn hold_claim(&self, s: &mut MysqlSession, n: u32) -> HashSet<i64> {
        let c = s.conn();
        c.query_drop("START TRANSACTION").await.unwrap();
        let ids: Vec<i64> = c
            .exec::<mysql_async::Row, _, _>(production_step("lock").as_str(), (n,))
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0).unwrap())
            .collect();
        let mut params: Vec<mysql_async::Value> = vec!["A".into()];
        params.extend(ids.iter().map(|&id| id.into()));
        c.exec_drop(
            mysql::expand_ids(&production_step("claim"), ids.len()),
            params,
        )
        .await
        .unwrap();
        ids.into_iter().collect()
    }

    async fn short_lock_timeout(&self, s: &mut MysqlSession) {
        s.conn()
            .query_drop("SET SESSION innodb_lock_wait_timeout = 1")
            .await
            .unwrap();
    }

    async fn roll_back(&self, s: &mut MysqlSession) {
        s.conn().query_drop("ROLLBACK").await.unwrap();
    }

    async fn queue_row_is_free(&self, probe: &mut MysqlSession, queue: &str) -> bool {
        let c = probe.conn();
        c.query_drop("START TRANSACTION").await.unwrap();
        let locked = c
            .exec_drop(
                "SELECT name FROM queues WHERE name = ? FOR UPDATE NOWAIT",
                (queue,),
            )
            .await;
        c.query_drop("ROLLBACK").await.unwrap();
        locked.is_ok()
    }

    async fn identity(&self, s: &mut MysqlSession, _role: &str) -> String {
        s.conn().id().to_string()
    }

    async fn lock_waiting(&self, probe: &mut MysqlSession, identity: &str) -> bool {
        let n: i64 = probe
            .conn()
            .exec_first(
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'",
                (identity.parse::<u64>().unwrap(),),
            )
            .await
            .unwrap()
            .unwrap();
        n == 1
    }

    /// MySQL names no connection: one of this schema inside a transaction, idle for a
    /// second or more. A worker is idle inside a claim's transaction only between two of
    /// its statements, never for a second.
    async fn snapshot_held(&self, probe: &mut MysqlSession) -> bool {
        let n: i64 = probe
            .conn()
            .exec_first(
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX t \
                   JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id \
                  WHERE p.DB = ? AND p.COMMAND = 'Sleep' AND p.TIME >= 1",
                (self.schema(),),
            )
            .await
            .unwrap()
            .unwrap();
        n >= 1
    }

    async fn inspect(&self, s: &mut MysqlSession, what: Inspect) -> Vec<i64> {
        let c = s.conn();
        let row: mysql_async::Row = match what {
            Inspect::Eligibility => c.query_first(
                "SELECT CAST(SUM(status = 1 AND (queue <> 'open' OR scheduled_at > NOW(6))) AS SIGNED),
                        CAST(SUM(status = 0 AND queue = 'open' AND (scheduled_at IS NULL OR scheduled_at <= NOW(6))) AS SIGNED),
                        CAST(SUM(status = 0 AND queue IN ('paused', 'off')) AS SIGNED),
                        CAST(SUM(status = 0 AND scheduled_at > NOW(6)) AS SIGNED)
                 FROM jobs_hot",
            ).await,
            Inspect::PriorityRange(ids) => c.exec_first(
                mysql::expand_ids("SELECT MIN(priority), MAX(priority) FROM jobs_hot WHERE id IN (:ids)", ids.len()),
                ids,
            ).await,
            // Polled while a trial's reset may be rebuilding the tables (as on
            // PostgreSQL): a database without jobs_hot yet has nothing active. CI once
            // met it there (error 1146).
            Inspect::ActiveIn(q) => match c.exec_first(
                "SELECT COUNT(*) FROM jobs_hot WHERE queue = ? AND status IN (1, 2)",
                (q,),
            ).await {
                Err(mysql_async::Error::Server(e)) if e.code == 1146 => return vec![0],
                other => other,
            },
            Inspect::OneFetchedIn(q) => c.exec_first(
                "SELECT id FROM jobs_hot WHERE queue = ? AND status = 1 LIMIT 1",
                (q,),
            ).await,
        }
        .unwrap()
        .unwrap();
        (0..row.len())
            .map(|i| row.get::<i64, _>(i).unwrap())
            .collect()
    }

    async fn age_jobs(&self, s: &mut MysqlSession) {
        // MySQL may not update a table it reads in a subquery: pick the ids first.
        let c = s.conn();
        let pick = async |c: &mut mysql_async::Conn, sql: &str| -> i64 {
            c.query_first(sql).await.unwrap().unwrap()
        };
        let paused = pick(c, "SELECT MIN(id) FROM jobs_hot WHERE queue = 'paused'").await;
        let future = pick(
            c,
            "SELECT MIN(id) FROM jobs_hot WHERE queue = 'open' AND priority = 0",
        )
        .await;
        let oldest = pick(
            c,
            "SELECT MAX(id) FROM jobs_hot WHERE queue = 'open' AND priority = 5",
        )
        .await;
        for (sql, id) in [
            (
                "UPDATE jobs_hot SET created_at = NOW(6) - INTERVAL 2 HOUR WHERE id = ?",
                paused,
            ),
            (
                "UPDATE jobs_hot SET created_at = NOW(6) - INTERVAL 3 HOUR, scheduled_at = NOW(6) + INTERVAL 1 HOUR WHERE id = ?",
                future,
            ),
            (
                "UPDATE jobs_hot SET created_at = NOW(6) - INTERVAL 1 HOUR WHERE id = ?",
                oldest,
            ),
        ] {
            c.exec_drop(sql, (id,)).await.unwrap();
        }
    }

    /// The library's loader, on the control connection (as `prove`'s model check).
    async fn load_state(&self, _s: &mut MysqlSession, state: &TableState) {
        self.load_model_state(state).await.unwrap();
    }

    async fn create_user_table(&self) {
        let mut c = mysql_async::Conn::from_url(url()).await.unwrap();
        let q = format!("`{}`", self.schema());
        c.query_drop(format!(
            "CREATE DATABASE IF NOT EXISTS {q}; CREATE TABLE {q}.user_data (id INT); \
             INSERT INTO {q}.user_data VALUES (1), (2), (3);"
        ))
        .await
        .unwrap();
        c.disconnect().await.unwrap();
    }

    async fn count(&self, s: &mut MysqlSession, sql: &str) -> i64 {
        s.conn().query_first::<i64, _>(sql).await.unwrap().unwrap()
    }

    async fn exec(&self, s: &mut MysqlSession, sql: &str) {
        s.conn().query_drop(sql).await.unwrap();
    }

    async fn user_rows(&self) -> Option<i64> {
        let mut c = mysql_async::Conn::from_url(url()).await.unwrap();
        let n = c
            .query_first::<i64, _>(format!(
                "SELECT COUNT(*) FROM `{}`.user_data",
                self.schema()
            ))
            .await
            .ok()
            .flatten();
        c.disconnect().await.unwrap();
        n
    }

    async fn lock_rows(&self, s: &mut MysqlSession, ids: &[i64]) {
        let c = s.conn();
        c.query_drop("START TRANSACTION").await.unwrap();
        // By primary key: a locking read that scanned a secondary index would keep every
        // row it read locked, not only these (InnoDB, also at READ COMMITTED).
        let list = if ids.is_empty() {
            "0".to_string()
        } else {
            ids.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        c.query_drop(format!(
            "SELECT id FROM jobs_hot FORCE INDEX (PRIMARY) WHERE id IN ({list}) FOR UPDATE"
        ))
        .await
        .unwrap();
    }

    fn kill_workers_after(
        &self,
        mut killer: MysqlSession,
        after: Duration,
    ) -> tokio::task::JoinHandle<u64> {
        let workers = self.worker_connections();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            // Seeding can outlast `after` on MySQL: wait for the trial's workers.
            let mut ids = Vec::new();
            for _ in 0..300 {
                ids = workers.lock().unwrap().clone();
                if !ids.is_empty() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let mut killed = 0;
            for id in ids {
                if killer
                    .conn()
                    .query_drop(format!("KILL CONNECTION {id}"))
                    .await
                    .is_ok()
                {
                    killed += 1;
                }
            }
            killed
        })
    }
}
