//! `TestDb` for SQL Server (CLAIMBENCH_MSSQL_URL, an mssql:// URL or an ADO.NET
//! connection string). These tests are compiled as ignored unless the variable is set
//! when they are built (see build.rs); a set URL that does not answer fails them.

use super::{Inspect, TestDb};
use claimbench::backend::mssql::{self, MssqlBackend, MssqlSession};
use claimbench::backend::{Backend, DbTarget};
use claimbench::model::TableState;
use claimbench::strategy::Strategy;
use std::collections::HashSet;
use std::time::Duration;

type Client = tiberius::Client<tokio_util::compat::Compat<tokio::net::TcpStream>>;

async fn rows(c: &mut Client, sql: &str, params: &[&dyn tiberius::ToSql]) -> Vec<tiberius::Row> {
    c.query(sql, params)
        .await
        .unwrap()
        .into_first_result()
        .await
        .unwrap()
}

/// Column `i` as i64 whatever integer type the server sent.
fn int(r: &tiberius::Row, i: usize) -> i64 {
    r.try_get::<i64, _>(i)
        .ok()
        .flatten()
        .or_else(|| r.try_get::<i32, _>(i).ok().flatten().map(i64::from))
        .unwrap_or(0)
}

impl TestDb for MssqlBackend {
    const NAME: &'static str = "mssql";
    /// The seed's statement, sent word for word, leaves ties to the server.
    const TIES_BY_ID: bool = false;

    async fn open(test: &str) -> Self {
        let url = std::env::var("CLAIMBENCH_MSSQL_URL").unwrap_or_default();
        assert!(
            !url.is_empty(),
            "CLAIMBENCH_MSSQL_URL is not set: the SQL Server tests run only against a server it names"
        );
        let Ok(DbTarget::Mssql(target)) = DbTarget::parse(&url) else {
            panic!("CLAIMBENCH_MSSQL_URL is not an mssql:// URL or ADO.NET connection string");
        };
        let backend = MssqlBackend::new(target, &super::schema_for(test));
        if let Err(e) = backend.server_info().await {
            panic!("CLAIMBENCH_MSSQL_URL is set but SQL Server is not usable: {e}");
        }
        backend
    }

    async fn drop_schema(&self) {
        let mut s = self.connect("cbtest-cleanup", "cleanup").await.unwrap();
        let drop = mssql::with_schema(
            "DROP TABLE IF EXISTS [{SCHEMA}].[JobsHot], [{SCHEMA}].[Queues], [{SCHEMA}].[JobsArchive], [{SCHEMA}].[JobsDLQ], [{SCHEMA}].[Effects], [{SCHEMA}].[SeedQueues], [{SCHEMA}].[SeedPriorities], [{SCHEMA}].[claimbench_schema], [{SCHEMA}].[user_data]; DROP SCHEMA IF EXISTS [{SCHEMA}];",
            self.schema(),
        );
        s.client().execute(drop, &[]).await.unwrap();
    }

    async fn hold_claim(&self, s: &mut MssqlSession, n: u32) -> HashSet<i64> {
        let c = s.client();
        let rcsi = int(
            &rows(
                c,
                "SELECT CAST(is_read_committed_snapshot_on AS int) FROM sys.databases WHERE database_id = DB_ID()",
                &[],
            )
            .await[0],
            0,
        ) == 1;
        c.simple_query("BEGIN TRANSACTION")
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
        let sql = mssql::locking_claim_sql(&Strategy::PRODUCTION, self.schema(), rcsi);
        rows(c, &sql, &[&(n as i32), &"A"])
            .await
            .iter()
            .map(|r| int(r, 0))
            .collect()
    }

    async fn short_lock_timeout(&self, s: &mut MssqlSession) {
        s.client()
            .simple_query("SET LOCK_TIMEOUT 100")
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
    }

    async fn roll_back(&self, s: &mut MssqlSession) {
        s.client()
            .simple_query("ROLLBACK TRANSACTION")
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
    }

    async fn queue_row_is_free(&self, probe: &mut MssqlSession, queue: &str) -> bool {
        let sql = mssql::with_schema(
            "BEGIN TRANSACTION; SELECT [Name] FROM [{SCHEMA}].[Queues] WITH (UPDLOCK, ROWLOCK, NOWAIT) WHERE [Name] = @P1; ROLLBACK TRANSACTION;",
            self.schema(),
        );
        let locked = probe.client().execute(sql, &[&queue]).await;
        if locked.is_err() {
            let _ = probe
                .client()
                .simple_query("IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION")
                .await;
        }
        locked.is_ok()
    }

    async fn identity(&self, _s: &mut MssqlSession, role: &str) -> String {
        role.to_string()
    }

    async fn lock_waiting(&self, probe: &mut MssqlSession, identity: &str) -> bool {
        let got = rows(
            probe.client(),
            "SELECT COUNT_BIG(*) FROM sys.dm_exec_requests r JOIN sys.dm_exec_sessions s ON s.session_id = r.session_id WHERE s.program_name = @P1 AND r.wait_type LIKE 'LCK[_]M[_]%'",
            &[&identity],
        )
        .await;
        int(&got[0], 0) == 1
    }

    /// Not asked: a snapshot is not held on SQL Server (the test returns first).
    async fn snapshot_held(&self, _probe: &mut MssqlSession) -> bool {
        false
    }

    async fn inspect(&self, s: &mut MssqlSession, what: Inspect) -> Vec<i64> {
        let q = |sql: &str| mssql::with_schema(sql, self.schema());
        let c = s.client();
        let got = match what {
            Inspect::Eligibility => rows(c, &q(
                "SELECT SUM(CASE WHEN [Status] = 1 AND ([Queue] <> 'open' OR [ScheduledAtUtc] > SYSUTCDATETIME()) THEN 1 ELSE 0 END),
                        SUM(CASE WHEN [Status] = 0 AND [Queue] = 'open' AND ([ScheduledAtUtc] IS NULL OR [ScheduledAtUtc] <= SYSUTCDATETIME()) THEN 1 ELSE 0 END),
                        SUM(CASE WHEN [Status] = 0 AND [Queue] IN ('paused', 'off') THEN 1 ELSE 0 END),
                        SUM(CASE WHEN [Status] = 0 AND [ScheduledAtUtc] > SYSUTCDATETIME() THEN 1 ELSE 0 END)
                 FROM [{SCHEMA}].[JobsHot]"), &[]).await,
            Inspect::PriorityRange(ids) => {
                let json = format!("[{}]", ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(","));
                rows(c, &q("SELECT MIN([Priority]), MAX([Priority]) FROM [{SCHEMA}].[JobsHot] WHERE [Id] IN (SELECT CAST([value] AS bigint) FROM OPENJSON(@P1))"), &[&json.as_str()]).await
            }
            Inspect::ActiveIn(queue) => rows(c, &q("SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsHot] WHERE [Queue] = @P1 AND [Status] IN (1, 2)"), &[&queue]).await,
            Inspect::OneFetchedIn(queue) => rows(c, &q("SELECT TOP (1) [Id] FROM [{SCHEMA}].[JobsHot] WHERE [Queue] = @P1 AND [Status] = 1"), &[&queue]).await,
        };
        let r = &got[0];
        (0..r.len()).map(|i| int(r, i)).collect()
    }

    async fn age_jobs(&self, s: &mut MssqlSession) {
        let sql = mssql::with_schema(
            "UPDATE [{SCHEMA}].[JobsHot] SET [CreatedAtUtc] = DATEADD(HOUR, -2, SYSUTCDATETIME())
              WHERE [Id] = (SELECT MIN([Id]) FROM [{SCHEMA}].[JobsHot] WHERE [Queue] = 'paused');
             UPDATE [{SCHEMA}].[JobsHot] SET [CreatedAtUtc] = DATEADD(HOUR, -3, SYSUTCDATETIME()), [ScheduledAtUtc] = DATEADD(HOUR, 1, SYSUTCDATETIME())
              WHERE [Id] = (SELECT MIN([Id]) FROM [{SCHEMA}].[JobsHot] WHERE [Queue] = 'open' AND [Priority] = 0);
             UPDATE [{SCHEMA}].[JobsHot] SET [CreatedAtUtc] = DATEADD(HOUR, -1, SYSUTCDATETIME())
              WHERE [Id] = (SELECT MAX([Id]) FROM [{SCHEMA}].[JobsHot] WHERE [Queue] = 'open' AND [Priority] = 5);",
            self.schema(),
        );
        s.client().execute(sql, &[]).await.unwrap();
    }

    async fn load_state(&self, s: &mut MssqlSession, state: &TableState) {
        let schema = self.schema().to_string();
        let c = s.client();
        let mut sql = String::from(
            "SET XACT_ABORT ON; BEGIN TRANSACTION; DELETE FROM [{SCHEMA}].[JobsHot]; DELETE FROM [{SCHEMA}].[Queues];",
        );
        for q in &state.queues {
            sql.push_str(&format!(
                " INSERT INTO [{{SCHEMA}}].[Queues] ([Name], [IsPaused], [IsActive], [MaxWorkers]) VALUES ('{}', {}, {}, {});",
                q.name,
                q.is_paused as i32,
                q.is_active as i32,
                q.max_workers.map_or("NULL".to_string(), |m| m.to_string())
            ));
        }
        sql.push_str(" SET IDENTITY_INSERT [{SCHEMA}].[JobsHot] ON;");
        for j in &state.jobs {
            sql.push_str(&format!(
                " INSERT INTO [{{SCHEMA}}].[JobsHot] ([Id], [Queue], [Type], [Payload], [Priority], [Status], [WorkerId], [CreatedAtUtc], [ScheduledAtUtc]) \
                  VALUES ({}, '{}', 'bench', N'', {}, {}, {}, DATEADD(second, {}, SYSUTCDATETIME()), {});",
                j.id,
                j.queue,
                j.priority,
                j.status,
                if j.status > 0 { "'other'" } else { "NULL" },
                j.created_s,
                j.scheduled_s
                    .map_or("NULL".to_string(), |s| format!("DATEADD(second, {s}, SYSUTCDATETIME())"))
            ));
        }
        sql.push_str(" SET IDENTITY_INSERT [{SCHEMA}].[JobsHot] OFF; COMMIT;");
        c.simple_query(mssql::with_schema(&sql, &schema))
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
    }

    async fn create_user_table(&self) {
        let mut s = self.connect("cbtest-user", "user").await.unwrap();
        let sql = mssql::with_schema(
            "IF SCHEMA_ID(N'{SCHEMA}') IS NULL EXEC(N'CREATE SCHEMA [{SCHEMA}]'); \
             CREATE TABLE [{SCHEMA}].[user_data] ([id] int); \
             INSERT INTO [{SCHEMA}].[user_data] VALUES (1), (2), (3);",
            self.schema(),
        );
        s.client()
            .simple_query(sql)
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
    }

    async fn count(&self, s: &mut MssqlSession, sql: &str) -> i64 {
        let sql = mssql::with_schema(sql, self.schema());
        int(&rows(s.client(), &sql, &[]).await[0], 0)
    }

    async fn exec(&self, s: &mut MssqlSession, sql: &str) {
        let sql = mssql::with_schema(sql, self.schema());
        s.client().execute(sql, &[]).await.unwrap();
    }

    async fn user_rows(&self) -> Option<i64> {
        let mut s = self.connect("cbtest-user", "user").await.unwrap();
        let sql = mssql::with_schema(
            "SELECT COUNT_BIG(*) FROM [{SCHEMA}].[user_data]",
            self.schema(),
        );
        let r = s
            .client()
            .query(sql, &[])
            .await
            .ok()?
            .into_row()
            .await
            .ok()??;
        Some(int(&r, 0))
    }

    async fn lock_rows(&self, s: &mut MssqlSession, ids: &[i64]) {
        let schema = self.schema().to_string();
        let list = if ids.is_empty() {
            "0".to_string()
        } else {
            ids.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let sql = format!(
            "BEGIN TRANSACTION; SELECT [Id] FROM [{{SCHEMA}}].[JobsHot] WITH (UPDLOCK, ROWLOCK) WHERE [Id] IN ({list});"
        );
        s.client()
            .simple_query(mssql::with_schema(&sql, &schema))
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
    }

    fn kill_workers_after(
        &self,
        mut killer: MssqlSession,
        after: Duration,
    ) -> tokio::task::JoinHandle<u64> {
        let role = self.worker_role();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let c = killer.client();
            let mut ids = Vec::new();
            for _ in 0..300 {
                ids = rows(
                    c,
                    "SELECT CAST(session_id AS int) FROM sys.dm_exec_sessions WHERE program_name = @P1",
                    &[&role.as_str()],
                )
                .await
                .iter()
                .map(|r| int(r, 0))
                .collect();
                if !ids.is_empty() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let mut killed = 0;
            for id in ids {
                if c.execute(format!("KILL {id}"), &[]).await.is_ok() {
                    killed += 1;
                }
            }
            killed
        })
    }
}
