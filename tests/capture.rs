//! `claimbench capture` against a real server: a queue table claimbench did not create,
//! in a schema of the test's own, read into a workload that validates and runs on the
//! embedded server with the same indexes, and left exactly as it was.

mod common;

use std::path::Path;
use std::process::Command;

fn claimbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_claimbench"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("DATABASE_URL");
    c
}

async fn client() -> tokio_postgres::Client {
    let url = common::test_servers::pg_url();
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

/// A Que-like table (an enum state, partial indexes, a check that ties the finished
/// state to its time), 15,000 pending and 5,000 finished rows, and a view on it.
fn table_sql(schema: &str) -> String {
    format!(
        r#"CREATE SCHEMA {schema};
CREATE TYPE {schema}.job_state AS ENUM ('ready', 'working', 'done', 'failed');
CREATE TABLE {schema}.jobs (
  id bigserial PRIMARY KEY,
  state {schema}.job_state NOT NULL DEFAULT 'ready',
  queue text NOT NULL DEFAULT 'default',
  priority smallint NOT NULL DEFAULT 100,
  run_at timestamptz NOT NULL DEFAULT now(),
  locked_by text,
  locked_at timestamptz,
  finished_at timestamptz,
  args jsonb NOT NULL DEFAULT '[]',
  error_count integer NOT NULL DEFAULT 0,
  CONSTRAINT finished_has_time CHECK ((state = 'done') = (finished_at IS NOT NULL))
);
CREATE INDEX jobs_poll ON {schema}.jobs (queue, priority, run_at, id) WHERE state = 'ready';
CREATE INDEX jobs_locked ON {schema}.jobs (locked_at) WHERE state = 'working';
INSERT INTO {schema}.jobs (state, queue, run_at, args, finished_at)
SELECT CASE WHEN g % 4 = 0 THEN 'done' ELSE 'ready' END::{schema}.job_state,
       CASE WHEN g % 3 = 0 THEN 'mail' ELSE 'default' END, now() - interval '1 minute',
       jsonb_build_object('n', g, 'pad', repeat('y', 200)),
       CASE WHEN g % 4 = 0 THEN now() END
FROM generate_series(1, 20000) g;
ANALYZE {schema}.jobs;
CREATE VIEW {schema}.ready_jobs AS SELECT * FROM {schema}.jobs WHERE state = 'ready';"#
    )
}

/// What the server counts of writes to the table so far, and its rows by state.
async fn writes_and_rows(c: &tokio_postgres::Client, schema: &str) -> (i64, Vec<(String, i64)>) {
    c.batch_execute("SELECT pg_stat_clear_snapshot()")
        .await
        .unwrap();
    let w: i64 = c
        .query_one(
            &format!(
                "SELECT n_tup_ins + n_tup_upd + n_tup_del + n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = '{schema}.jobs'::regclass"
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let rows = c
        .query(
            &format!("SELECT state::text, count(*) FROM {schema}.jobs GROUP BY 1 ORDER BY 1"),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    (w, rows)
}

/// The URL with a password the trust-authenticated test server ignores, which must
/// appear nowhere capture writes or prints.
fn url_with_password() -> String {
    let url = common::test_servers::pg_url();
    url.replacen("://postgres@", "://postgres:hunter2-secret@", 1)
}

/// `capture --db URL --table TABLE`, which must be refused: exit 2, nothing written, no
/// password shown. Its stderr.
fn refused_capture(url: &str, table: &str) -> String {
    let nowhere = tempfile::tempdir().unwrap();
    let r = claimbench()
        .args([
            "capture",
            "--sample-s",
            "0",
            "--db",
            url,
            "--table",
            table,
            "--out",
        ])
        .arg(nowhere.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr).to_string();
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert_eq!(
        std::fs::read_dir(nowhere.path()).unwrap().count(),
        0,
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    err
}

fn read_dir_text(dir: &Path) -> String {
    let mut all = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        all.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap_or_default());
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn a_captured_table_runs_on_the_embedded_server_with_its_indexes_and_stays_untouched() {
    let schema = common::schema_for("capture");
    let c = client().await;
    c.batch_execute(&table_sql(&schema)).await.unwrap();
    // Statistics reach the views about once a second.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let before = writes_and_rows(&c, &schema).await;
    let out = tempfile::tempdir().unwrap();
    let url = url_with_password();
    let ran = claimbench()
        .args(["capture", "--db", &url, "--table"])
        .arg(format!("{schema}.jobs"))
        .args(["--sample-s", "0.5", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(ran.status.success(), "{said}");
    assert!(said.contains("ready 15000, done 5000"), "{said}");
    // Its connection has closed: whatever it wrote would be counted by now.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let after = writes_and_rows(&c, &schema).await;
    assert_eq!(before, after, "capture changed the table");
    let written = read_dir_text(out.path());
    assert!(
        !said.contains("hunter2") && !written.contains("hunter2"),
        "{said}"
    );
    // The indexes as the server writes them, but on the table in the run's schema.
    let table = std::fs::read_to_string(out.path().join("table.sql")).unwrap();
    // Read with the table's schema on the path, as capture reads it: types unqualified.
    c.batch_execute(&format!("SET search_path = {schema}, pg_catalog"))
        .await
        .unwrap();
    let originals = c
        .query(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'jobs' ORDER BY indexname",
            &[&schema],
        )
        .await
        .unwrap();
    assert_eq!(originals.len(), 3, "two indexes and the primary key");
    for r in originals {
        let def: String = r.get(0);
        let def = def.replace(&format!(" ON {schema}.jobs "), " ON jobs ");
        if !def.contains("jobs_pkey") {
            assert!(table.contains(&format!("{def};")), "{def}\n{table}");
        }
    }
    assert!(
        table.contains("CONSTRAINT jobs_pkey PRIMARY KEY (id)"),
        "{table}"
    );
    c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
    let workload = out.path().join("workload.toml");
    // Nothing was inserted while capture watched; arrivals through the enqueue step it
    // wrote for the table's shape, to run that step too.
    let text = std::fs::read_to_string(&workload).unwrap();
    assert!(!text.contains("[producers]"), "{text}");
    let r = run_with_producers(&workload);
    every_job_counted(&r, 5_000);
}

/// The captured run of the Que-like table: jobs done, none twice, none lost, the 5,000
/// finished rows seeded as retained history beside the backlog (20,000 in all), the
/// enqueue step run, and the table's completed count the history's plus the run's.
fn every_job_counted(r: &claimbench::results::RunResult, history: i64) {
    let t = &r.cells[0].trials[0];
    assert!(
        t.counts.jobs_completed > 0 && t.produced_jobs > 0,
        "{:?}",
        t.counts
    );
    assert_eq!(t.duplicates.ledger.duplicate_claims, 0);
    assert_eq!(t.reconciliation.db.duplicate_executions, 0);
    assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
    if history > 0 {
        assert_eq!(t.seeded_jobs, 20_000);
    }
    assert_eq!(
        t.reconciliation.db.completed,
        history + t.counts.jobs_completed as i64
    );
}

/// A Que-like table on MariaDB (an ENUM state, a poll index led by it, JSON arguments),
/// 15,000 ready and 5,000 done rows.
fn mariadb_table_sql(db: &str) -> String {
    format!(
        r#"CREATE DATABASE {db};
CREATE TABLE {db}.jobs (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  state ENUM('ready', 'working', 'done', 'failed') NOT NULL DEFAULT 'ready',
  queue VARCHAR(100) NOT NULL DEFAULT 'default',
  priority SMALLINT NOT NULL DEFAULT 100,
  run_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  locked_by VARCHAR(200),
  locked_at DATETIME(6),
  finished_at DATETIME(6),
  args JSON NOT NULL,
  error_count INT NOT NULL DEFAULT 0,
  KEY jobs_poll (state, queue, priority, run_at, id),
  KEY jobs_locked (locked_at)
) ENGINE = InnoDB;
INSERT INTO {db}.jobs (state, queue, run_at, args, finished_at)
SELECT IF(seq % 4 = 0, 'done', 'ready'), IF(seq % 3 = 0, 'mail', 'default'),
       NOW(6) - INTERVAL 1 MINUTE, JSON_OBJECT('n', seq, 'pad', REPEAT('y', 200)),
       IF(seq % 4 = 0, NOW(6), NULL)
FROM {db}.seq_1_to_20000;
ANALYZE TABLE {db}.jobs;
CREATE VIEW {db}.ready_jobs AS SELECT * FROM {db}.jobs WHERE state = 'ready';
CREATE TABLE {db}.keyed (id CHAR(36) PRIMARY KEY, state ENUM('ready', 'working', 'done'))"#
    )
}

/// The table's content and shape, to compare before and after a capture.
async fn checksum_and_ddl(c: &mut mysql_async::Conn, db: &str) -> (Option<i64>, String) {
    use mysql_async::prelude::Queryable;
    let sum: Option<(String, Option<i64>)> = c
        .query_first(format!("CHECKSUM TABLE {db}.jobs"))
        .await
        .unwrap();
    let ddl: Option<(String, String)> = c
        .query_first(format!("SHOW CREATE TABLE {db}.jobs"))
        .await
        .unwrap();
    (sum.unwrap().1, ddl.unwrap().1)
}

/// The same on MariaDB, read by an account that may only read (its password never
/// shown): the captured workload runs on the embedded MariaDB with the table's own DDL
/// and indexes, counts every job, and the table is as it was.
#[tokio::test(flavor = "multi_thread")]
async fn a_captured_mariadb_table_runs_on_the_embedded_mariadb_and_stays_untouched() {
    use mysql_async::prelude::Queryable;
    let db = common::schema_for("capture_mariadb");
    let admin = common::test_servers::mysql_url();
    let mut c = mysql_async::Conn::from_url(admin.as_str()).await.unwrap();
    c.query_drop(mariadb_table_sql(&db)).await.unwrap();
    let reader = format!("r{}", std::process::id());
    c.query_drop(format!(
        "CREATE USER '{reader}'@'127.0.0.1' IDENTIFIED BY 'hunter2-secret'; GRANT SELECT ON {db}.* TO '{reader}'@'127.0.0.1'"
    ))
    .await
    .unwrap();
    let before = checksum_and_ddl(&mut c, &db).await;
    let address = admin.split('@').nth(1).unwrap().split('/').next().unwrap();
    let url = format!("mysql://{reader}:hunter2-secret@{address}/{db}");
    let out = tempfile::tempdir().unwrap();
    let ran = claimbench()
        .args([
            "capture",
            "--db",
            &url,
            "--table",
            "jobs",
            "--sample-s",
            "0.5",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    let after = checksum_and_ddl(&mut c, &db).await;
    // Arrivals: the ids the table's AUTO_INCREMENT hands out while capture watches
    // (inserts from another session until it is done), as the producers' rate.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let inserting = tokio::spawn({
        let (admin, db, done) = (admin.clone(), db.clone(), done.clone());
        async move {
            let mut c = mysql_async::Conn::from_url(admin.as_str()).await.unwrap();
            let mut n = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let sql = format!("INSERT INTO {db}.jobs (args) VALUES ('{{}}')");
                c.query_drop(sql).await.unwrap();
                n += 1;
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            n
        }
    });
    let busy = tempfile::tempdir().unwrap();
    let watched = {
        let (url, dir) = (url.clone(), busy.path().to_path_buf());
        tokio::task::spawn_blocking(move || {
            claimbench()
                .args([
                    "capture",
                    "--db",
                    &url,
                    "--table",
                    "jobs",
                    "--sample-s",
                    "1",
                    "--out",
                ])
                .arg(dir)
                .output()
                .unwrap()
        })
        .await
        .unwrap()
    };
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let inserted = inserting.await.unwrap();
    assert!(
        watched.status.success(),
        "{}",
        String::from_utf8_lossy(&watched.stderr)
    );
    let busy_toml = std::fs::read_to_string(busy.path().join("workload.toml")).unwrap();
    let rate: f64 = busy_toml
        .lines()
        .find_map(|l| l.strip_prefix("rate_per_s = "))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no producers after {inserted} inserts: {busy_toml}"));
    assert!(rate >= 1.0, "{rate} from {inserted} inserts");
    // What capture refuses, naming it, and writing nothing.
    let views = refused_capture(&url, "ready_jobs");
    let missing = refused_capture(&url, "nothing");
    let keyed = refused_capture(&url, "keyed");
    let unreachable = refused_capture("mysql://someone:hunter2-secret@127.0.0.1:1/x", "jobs");
    c.query_drop(format!(
        "DROP USER '{reader}'@'127.0.0.1'; DROP DATABASE {db}"
    ))
    .await
    .unwrap();
    assert!(views.contains("is a view, not a table"), "{views}");
    assert!(
        missing.contains(&format!("no table `{db}.nothing`")),
        "{missing}"
    );
    assert!(keyed.contains("counts jobs by an integer id"), "{keyed}");
    assert!(
        unreachable.contains("cannot connect") && unreachable.contains("someone:***@127.0.0.1:1"),
        "{unreachable}"
    );
    assert!(ran.status.success(), "{said}");
    assert!(said.contains("ready 15000, done 5000"), "{said}");
    assert_eq!(before, after, "capture changed the table");
    let written = read_dir_text(out.path());
    assert!(
        !said.contains("hunter2") && !written.contains("hunter2"),
        "{said}"
    );
    // The server's own DDL, every index as it wrote them, rebuilt on the run's server.
    let table = std::fs::read_to_string(out.path().join("table.mysql.sql")).unwrap();
    for key in before
        .1
        .lines()
        .filter(|l| l.trim_start().starts_with("KEY "))
    {
        assert!(table.contains(key), "{key}\n{table}");
    }
    let claim = std::fs::read_to_string(out.path().join("claim.mysql.sql")).unwrap();
    assert!(
        claim.contains("`state` = 'ready' AND queue = :queue AND run_at <= NOW(6)")
            || claim.contains("state = 'ready' AND queue = :queue AND run_at <= NOW(6)"),
        "the poll index's queue is the claim's: {claim}"
    );
    let r = run_with_producers(&out.path().join("workload.toml"));
    assert_eq!(r.cells[0].backend.to_string(), "mysql");
    every_job_counted(&r, 5_000);
}

/// A table whose ids are random uuids (pg-boss's and GoodJob's are): captured, its seed
/// and enqueue steps write claimbench's numbers as uuids, and its workload runs on the
/// embedded server with producers, counting every job exactly.
#[tokio::test(flavor = "multi_thread")]
async fn a_captured_table_with_uuid_ids_runs_and_counts_every_job() {
    let schema = common::schema_for("capture_uuid");
    let c = client().await;
    c.batch_execute(&format!(
        r#"CREATE SCHEMA {schema};
CREATE TYPE {schema}.job_state AS ENUM ('created', 'active', 'completed', 'failed');
CREATE TABLE {schema}.jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  state {schema}.job_state NOT NULL DEFAULT 'created',
  priority integer NOT NULL DEFAULT 0,
  start_after timestamptz NOT NULL DEFAULT now(),
  data jsonb
);
CREATE INDEX jobs_fetch ON {schema}.jobs (name, start_after) WHERE state < 'active';
INSERT INTO {schema}.jobs (name, start_after, data)
SELECT 'default', now() - interval '1 minute', jsonb_build_object('n', g)
FROM generate_series(1, 5000) g;
ANALYZE {schema}.jobs;"#
    ))
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let ran = claimbench()
        .args([
            "capture",
            "--db",
            &common::test_servers::pg_url(),
            "--table",
        ])
        .arg(format!("{schema}.jobs"))
        .args([
            "--pending",
            "created",
            "--running",
            "active",
            "--done",
            "completed",
        ])
        .args(["--sample-s", "0", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let table = std::fs::read_to_string(out.path().join("table.sql")).unwrap();
    assert!(table.contains("lpad(to_hex(id), 32, '0')::uuid"), "{table}");
    let r = run_with_producers(&out.path().join("workload.toml"));
    every_job_counted(&r, 0);
}

/// A captured workload, with arrivals through the enqueue step it wrote (to run that
/// step too) and a short trial: validated, run on the embedded server, its run.json.
fn run_with_producers(workload: &Path) -> claimbench::results::RunResult {
    let text = std::fs::read_to_string(workload)
        .unwrap()
        .replace("[handler]", "[producers]\nrate_per_s = 300\n\n[handler]")
        .replace("duration_s = 5.0", "duration_s = 1.5");
    assert!(text.contains("duration_s = 1.5"), "{text}");
    std::fs::write(workload, text).unwrap();
    let valid = claimbench().arg("validate").arg(workload).output().unwrap();
    let err = String::from_utf8_lossy(&valid.stderr);
    assert!(valid.status.success(), "{err}");
    let results = tempfile::tempdir().unwrap();
    let run = claimbench()
        .arg("run")
        .arg(workload)
        .args(["--quiet", "--no-rerun", "--results"])
        .arg(results.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    let json = std::fs::read_to_string(walk_run_json(results.path())).unwrap();
    serde_json::from_str(&json).unwrap()
}

fn walk_run_json(dir: &Path) -> std::path::PathBuf {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path().join("run.json");
        if p.exists() {
            return p;
        }
    }
    panic!("no run.json under {}", dir.display());
}

/// A view, a missing table and an unreachable server are refused with exit 2, naming
/// what is wrong, and the password never shows.
#[tokio::test(flavor = "multi_thread")]
async fn capture_refuses_a_view_a_missing_table_and_a_server_it_cannot_reach() {
    let schema = common::schema_for("capture_refusals");
    let c = client().await;
    c.batch_execute(&table_sql(&schema)).await.unwrap();
    let url = url_with_password();
    let err = refused_capture(&url, &format!("{schema}.ready_jobs"));
    assert!(err.contains("is a view, not a table"), "{err}");
    let err = refused_capture(&url, &format!("{schema}.nothing"));
    assert!(
        err.contains(&format!("no table `{schema}.nothing`")),
        "{err}"
    );
    let err = refused_capture(
        "postgres://postgres:hunter2-secret@127.0.0.1:1/test",
        &format!("{schema}.jobs"),
    );
    assert!(
        err.contains("cannot connect") && err.contains("postgres:***@127.0.0.1:1"),
        "{err}"
    );
    c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
}
