//! The privilege boundary, the other way round: claimbench's own connections never run
//! code a workload created with more than the workload's rights.
//!
//! On the servers claimbench starts, workload SQL logs in as an unprivileged role (an
//! account on MariaDB). That role can still make objects whose code runs as whoever
//! touches them: a PostgreSQL view calling a function, a trigger, a MariaDB
//! `SQL SECURITY INVOKER` view or function. Each test plants such spies in the run's
//! schema as the workload's role, then drives every path on which claimbench reads or
//! writes that schema outside the workers (the next reset, reconciliation, table
//! statistics, shard moves, model states for `prove`, completions per queue, the jobs'
//! queues, the server's information and counters) and requires that every spy that ran
//! ran as the workload's role, that the paths did run them (the test would pass
//! vacuously otherwise), and that the one that tries to reach the host as a superuser
//! never got the chance.

use claimbench::backend::mysql::MysqlBackend;
use claimbench::backend::postgres::PostgresBackend;
use claimbench::backend::recipe::ShardChange;
use claimbench::backend::{Backend, DbTarget};
use claimbench::embedded::EmbeddedPostgres;
use claimbench::embedded::mariadb::EmbeddedMariadb;
use claimbench::model::{JobRow, QueueRow, TableState};
use claimbench::workload::Workload;
use std::path::Path;

fn workload() -> Workload {
    let text = "name = \"privilege\"\nseed = 3\n[population]\nbacklog = 20\nqueues = [{ name = \"q\" }]\n\
                [matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n\
                [trial]\nduration_s = 1\n";
    Workload::parse(Path::new("privilege.toml"), text).unwrap()
}

fn state() -> TableState {
    TableState {
        queues: vec![QueueRow {
            name: "q".into(),
            is_paused: false,
            is_active: true,
            max_workers: None,
        }],
        jobs: (1..=3)
            .map(|id| JobRow {
                id,
                queue: "q".into(),
                priority: 0,
                status: 0,
                created_s: -10 - id,
                scheduled_s: None,
            })
            .collect(),
    }
}

/// Every control path the runner and `prove` take outside the workers' sessions.
async fn drive_every_control_path<B: Backend>(backend: &B) {
    let queues = vec!["q".to_string()];
    backend.server_info().await.unwrap();
    backend.check_schema().await.unwrap();
    backend.counters().await.unwrap();
    backend.server_clock_us().await.unwrap();
    backend.table_stats().await.unwrap();
    backend.reconcile().await.unwrap();
    backend.completed_by_queue(0, i64::MAX / 2).await.unwrap();
    backend.job_queues(&queues).await.unwrap();
    let workers = vec!["w1".to_string()];
    backend
        .change_shards(ShardChange::Give, &queues, &workers)
        .await
        .unwrap();
    backend
        .change_shards(ShardChange::Take, &queues, &workers)
        .await
        .unwrap();
    backend.load_model_state(&state()).await.unwrap();
}

/// What the PostgreSQL spies plant: a log, a function that records who ran it (and, if
/// that was a superuser, tries to run a program on the host), `effects` as a view that
/// calls it, and statement triggers that call it on every table claimbench writes.
fn postgres_spies(marker: &Path) -> String {
    let mut sql = format!(
        "CREATE TABLE spy_log (who text NOT NULL, superuser boolean NOT NULL, what text NOT NULL);
         CREATE FUNCTION spy(what text) RETURNS boolean LANGUAGE plpgsql AS $f$
         DECLARE su boolean;
         BEGIN
           SELECT rolsuper INTO su FROM pg_catalog.pg_roles WHERE rolname = current_user;
           INSERT INTO spy_log VALUES (current_user, su, what);
           IF su THEN
             EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch {}''';
           END IF;
           RETURN true;
         END $f$;
         CREATE FUNCTION spy_trigger() RETURNS trigger LANGUAGE plpgsql AS $f$
         BEGIN PERFORM spy(TG_TABLE_NAME || ' ' || TG_OP); RETURN NULL; END $f$;
         ALTER TABLE effects RENAME TO effects_real;
         INSERT INTO effects_real (job_id, attempt, worker_id, outcome, started_at, finished_at, owned)
              VALUES (1, 1, 'w1', 0, now(), now(), true);
         CREATE VIEW effects AS SELECT * FROM effects_real WHERE spy('effects view');",
        marker.display()
    );
    for table in ["jobs_hot", "queues", "shard_owners"] {
        sql.push_str(&format!(
            "CREATE TRIGGER spy_{table} AFTER INSERT OR UPDATE OR DELETE ON {table}
               FOR EACH STATEMENT EXECUTE FUNCTION spy_trigger();"
        ));
    }
    sql
}

/// The same paths on the PostgreSQL claimbench starts for `run` and `prove`: trials
/// reset from pristine copies, workload SQL as `claimbench_workload`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_postgres_control_path_runs_a_workload_object_as_the_superuser() {
    let server = EmbeddedPostgres::start(&Default::default()).expect("the embedded PostgreSQL");
    let target = DbTarget::parse(&server.url()).unwrap();
    let DbTarget::Postgres(config) = &target else {
        unreachable!()
    };
    let backend = PostgresBackend::new(config.clone(), target.to_string(), "claimbench")
        .with_pristine_copies()
        .with_workload_role();
    let w = workload();
    backend.reset(&w, "fetch-order", 1).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran-as-superuser");
    // As a setup step would: logged in as the workload's role, in the trial database.
    let mut as_workload = config.clone();
    as_workload
        .user(claimbench::names::WORKLOAD_ROLE)
        .dbname("claimbench_trial");
    let (c, conn) = as_workload.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    c.batch_execute("SET search_path TO claimbench")
        .await
        .unwrap();
    c.batch_execute(&postgres_spies(&marker)).await.unwrap();

    drive_every_control_path(&backend).await;
    let log: Vec<(String, bool, String)> = c
        .query("SELECT who, superuser, what FROM spy_log", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert!(!marker.exists(), "a program ran on the host: {log:?}");
    for (who, superuser, what) in &log {
        assert!(
            !superuser && who == claimbench::names::WORKLOAD_ROLE,
            "{what} ran as {who}: {log:?}"
        );
    }
    // Each kind of spy was reached, so the paths above did touch what was planted.
    for what in [
        "effects view",
        "shard_owners INSERT",
        "shard_owners DELETE",
        "jobs_hot DELETE",
        "queues INSERT",
    ] {
        assert!(
            log.iter().any(|(_, _, w)| w == what),
            "no path reached the spy `{what}`: {log:?}"
        );
    }
    drop(c);
    // The next reset drops what was planted without running it.
    backend.reset(&w, "fetch-order", 2).await.unwrap();
    assert!(!marker.exists());
}

/// The MariaDB claimbench starts: its control connection is the workload's account,
/// `root` only changes settings. An `SQL SECURITY INVOKER` view or function runs with
/// the rights of whoever reads it, so none may ever be read over `root`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_mariadb_control_path_runs_a_workload_object_as_root() {
    use mysql_async::prelude::Queryable;
    let schema = "claimbench";
    let server = EmbeddedMariadb::start_single(schema).expect("the embedded MariaDB");
    let target = DbTarget::parse(&server.url()).unwrap();
    let admin = DbTarget::parse(&server.admin_url()).unwrap();
    let (DbTarget::Mysql(opts), DbTarget::Mysql(root)) = (&target, &admin) else {
        unreachable!()
    };
    let backend =
        MysqlBackend::new(opts.clone(), target.to_string(), schema).with_admin(root.clone());
    let w = workload();
    backend.reset(&w, "fetch-order", 1).await.unwrap();

    let as_workload = mysql_async::OptsBuilder::from_opts(opts.clone()).db_name(Some(schema));
    let mut c = mysql_async::Conn::new(as_workload).await.unwrap();
    for statement in [
        "CREATE TABLE spy_log (who VARCHAR(300) NOT NULL, what VARCHAR(100) NOT NULL)",
        "CREATE FUNCTION spy(what VARCHAR(100)) RETURNS INT SQL SECURITY INVOKER MODIFIES SQL DATA
         BEGIN INSERT INTO spy_log VALUES (USER(), what); RETURN 1; END",
        "RENAME TABLE effects TO effects_real",
        "INSERT INTO effects_real (job_id, attempt, worker_id, outcome, started_at, finished_at, owned)
              VALUES (1, 1, 'w1', 0, NOW(6), NOW(6), TRUE)",
        "CREATE SQL SECURITY INVOKER VIEW effects AS SELECT * FROM effects_real WHERE spy('effects view') = 1",
        "CREATE TRIGGER spy_shards AFTER INSERT ON shard_owners FOR EACH ROW SET @spied = spy('shard_owners INSERT')",
        "CREATE TRIGGER spy_jobs AFTER DELETE ON jobs_hot FOR EACH ROW SET @spied = spy('jobs_hot DELETE')",
    ] {
        c.query_drop(statement).await.unwrap();
    }

    drive_every_control_path(&backend).await;
    let log: Vec<(String, String)> = c.query("SELECT who, what FROM spy_log").await.unwrap();
    for (who, what) in &log {
        assert!(
            who.starts_with(&format!(
                "{}@",
                claimbench::embedded::mariadb::WORKLOAD_USER
            )),
            "{what} ran for {who}: {log:?}"
        );
    }
    for what in ["effects view", "shard_owners INSERT", "jobs_hot DELETE"] {
        assert!(
            log.iter().any(|(_, w)| w == what),
            "no path reached the spy `{what}`: {log:?}"
        );
    }
}
