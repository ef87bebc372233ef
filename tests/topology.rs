//! Production topology on real servers: a primary and a streaming standby started by
//! claimbench, the standby synchronous or not, removed when the primary is dropped (as at
//! the end of a run, on an error and after Ctrl-C), a failover under load, and the
//! network between the workers and the database.

use claimbench::embedded::EmbeddedPostgres;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, NoTls};

async fn connect(url: &str) -> Client {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// (state, sync_state) of the one standby once it streams as `sync_state`; fails
/// after 60 s. A reload that names the synchronous standby reaches the walsender a
/// moment after the signal, so the state is waited for, not read once.
async fn streaming(primary: &Client, sync_state: &str) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = primary
            .query("SELECT state, sync_state FROM pg_stat_replication", &[])
            .await
            .unwrap();
        if let Some(r) = rows.first()
            && r.get::<_, String>(0) == "streaming"
            && r.get::<_, String>(1) == sync_state
        {
            return (r.get(0), r.get(1));
        }
        assert!(Instant::now() < deadline, "no standby streaming: {rows:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A primary and its standby, once the primary streams to it as asked (`sync` or
/// `async`): the pair, the standby's port, and a session on the primary.
async fn pair(synchronous: bool) -> (EmbeddedPostgres, u16, Client) {
    let mut pg = EmbeddedPostgres::start_primary(&BTreeMap::new()).unwrap();
    let port = pg.attach_standby(synchronous, None).unwrap();
    let primary = connect(&pg.url()).await;
    let want = if synchronous { "sync" } else { "async" };
    assert_eq!(
        streaming(&primary, want).await,
        ("streaming".into(), want.into())
    );
    (pg, port, primary)
}

fn gone(pg: EmbeddedPostgres) {
    let dirs = vec![
        pg.path().to_path_buf(),
        pg.standby_path().unwrap().to_path_buf(),
    ];
    let ports = vec![pg.port(), pg.standby_port().unwrap()];
    drop(pg);
    nothing_left(dirs, ports);
}

/// `claimbench run WORKLOAD --quiet [extra] --results <under>/out`, which must succeed:
/// the run's folder and its run.json.
fn run_cli(
    workload: &std::path::Path,
    extra: &[&str],
    under: &std::path::Path,
) -> (std::path::PathBuf, serde_json::Value) {
    run_cli_with(workload, extra, under, &[])
}

/// The Warnings section of the summary a run under `results` wrote, if any: a failed
/// correctness check names itself there, and the results folder is gone with the test.
fn warnings_of(results: &std::path::Path) -> String {
    let summary = std::fs::read_dir(results)
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|d| std::fs::read_to_string(d.path().join("summary.md")).ok());
    summary
        .and_then(|s| s.find("## Warnings").map(|i| format!("\n{}", &s[i..])))
        .unwrap_or_default()
}

#[test]
fn a_failed_runs_warnings_reach_the_test_output() {
    let results = tempfile::tempdir().unwrap();
    assert_eq!(warnings_of(results.path()), "", "no run, nothing to say");
    let run = results.path().join("20261206-galera");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("summary.md"),
        "# run\n\n## Verdict\n\n- x\n\n## Warnings\n\n- production duplicated 2 claims\n",
    )
    .unwrap();
    assert_eq!(
        warnings_of(results.path()),
        "\n## Warnings\n\n- production duplicated 2 claims\n"
    );
}

/// [`run_cli`] with environment variables for the process.
fn run_cli_with(
    workload: &std::path::Path,
    extra: &[&str],
    under: &std::path::Path,
    env: &[(&str, &std::path::Path)],
) -> (std::path::PathBuf, serde_json::Value) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_claimbench"))
        .envs(env.iter().copied())
        .arg("run")
        .arg(workload)
        .arg("--quiet")
        .args(extra)
        .arg("--results")
        .arg(under.join("out"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        warnings_of(&under.join("out"))
    );
    let dir = std::fs::read_dir(under.join("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let run =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    (dir, run)
}

/// Held by the test that times the workers' network and by the tests that load both
/// cores (the Galera tests, the failover and durability runs), so that none of them runs
/// beside the timing (CI once measured the 3 ms proxy at 5.04 ms beside four MariaDB
/// servers, and a full local run at 6.06 ms beside the failover run). A failed holder's
/// poison is ignored: the next test still needs the host quiet, not the lock clean.
/// Under cargo-nextest each test is a process and this lock is one process's: there the
/// topologies run one at a time and the timing test alone on the host
/// (.config/nextest.toml).
fn quiet_host() -> std::sync::MutexGuard<'static, ()> {
    static QUIET: std::sync::Mutex<()> = std::sync::Mutex::new(());
    QUIET.lock().unwrap_or_else(|p| p.into_inner())
}

/// After a drop: no directory left, no port answering.
fn nothing_left(dirs: Vec<std::path::PathBuf>, ports: Vec<u16>) {
    for d in dirs {
        assert!(!d.exists(), "{} left behind", d.display());
    }
    for p in ports {
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", p)).is_err(),
            "port {p} still answers"
        );
    }
}

#[tokio::test]
async fn a_synchronous_standby_has_each_remote_apply_commit_before_it_returns() {
    let (pg, port, primary) = pair(true).await;
    let standby = connect(&format!("postgres://postgres@127.0.0.1:{port}/postgres")).await;
    let in_recovery: bool = standby
        .query_one("SELECT pg_is_in_recovery()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(in_recovery, "the standby accepts writes");
    primary
        .batch_execute(
            "CREATE TABLE t (id int); SET synchronous_commit = remote_apply; INSERT INTO t SELECT generate_series(1, 100)",
        )
        .await
        .unwrap();
    // remote_apply returned only once the standby replayed the commit: no waiting here.
    let n: i64 = standby
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 100);
    gone(pg);
}

#[tokio::test]
async fn an_asynchronous_standby_streams_without_holding_commits() {
    let (pg, _, primary) = pair(false).await;
    let names: String = primary
        .query_one("SHOW synchronous_standby_names", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(names, "");
    gone(pg);
}

/// A user's primary and standby as one multi-host target: the standby is listed first,
/// `target_session_attrs=read-write` makes every connection find the primary, and the
/// run records the standby it found streaming and names both hosts.
#[tokio::test]
async fn a_multi_host_target_runs_on_the_writable_host_and_records_its_standby() {
    let (pg, standby, _primary) = pair(false).await;
    let url = format!(
        "postgres://postgres@127.0.0.1:{standby},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        pg.port()
    );
    // smoke.toml, its workers committing as an asynchronous standby's users would.
    let results = tempfile::tempdir().unwrap();
    let smoke = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/smoke.toml");
    let workload = results.path().join("smoke-local.toml");
    let text = std::fs::read_to_string(smoke).unwrap();
    std::fs::write(
        &workload,
        text + "\n[session.postgres]\nsynchronous_commit = \"local\"\n",
    )
    .unwrap();
    let (dir, run) = run_cli(&workload, &["--db", &url], results.path());
    let target = &run["environment"]["targets"][0];
    assert_eq!(target["standbys"][0]["name"], "claimbench_standby");
    assert_eq!(target["standbys"][0]["sync_state"], "async");
    let shown = target["target"].as_str().unwrap();
    assert!(
        shown.contains(&format!("127.0.0.1:{standby},127.0.0.1:{}", pg.port())),
        "{shown}"
    );
    // Per cell, the settings its workers committed with; per trial, the standby at its
    // end; and the sampler read the standby's replay backlog over each trial.
    let cell = &run["cells"][0];
    assert_eq!(
        cell["session_settings"],
        serde_json::json!([["synchronous_commit", "local"]])
    );
    assert_eq!(cell["trials"][0]["standbys"][0]["state"], "streaming");
    let sampled = run["cells"][0]["trials"][0]["table_series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["replay_behind_bytes"].is_i64())
        .count();
    assert!(sampled > 0, "no sample read the standby's replay");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("**Topology**: the postgres server was a primary streaming to claimbench_standby (async, streaming)."),
        "{summary}"
    );
    gone(pg);
}

/// A failover on the embedded topology: the primary stops in immediate mode, the
/// synchronous standby is promoted, the old sessions are cut, and a new connection to
/// the same read-write target lands on the promoted node, which has every commit that
/// waited for it and takes writes.
#[tokio::test]
async fn after_a_failover_the_writable_target_lands_on_the_promoted_standby() {
    let (pg, standby, _primary) = pair(true).await;
    let before = connect(&pg.writable_url()).await;
    before
        .batch_execute(
            "SET synchronous_commit = on; CREATE TABLE t (id int); INSERT INTO t SELECT generate_series(1, 500)",
        )
        .await
        .unwrap();
    pg.failover().unwrap();
    assert!(
        before.query("SELECT 1", &[]).await.is_err(),
        "a cut session answered"
    );
    // The promoted node takes writes a moment after its recovery ends, as a worker's
    // reconnect finds: try for a few seconds.
    let deadline = Instant::now() + Duration::from_secs(10);
    let after = loop {
        match tokio_postgres::connect(&pg.writable_url(), NoTls).await {
            Ok((client, conn)) => {
                tokio::spawn(conn);
                break client;
            }
            Err(e) => assert!(Instant::now() < deadline, "no writable node: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let port: i32 = after
        .query_one("SELECT current_setting('port')::int", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(port, i32::from(standby), "landed on the old primary");
    let in_recovery: bool = after
        .query_one("SELECT pg_is_in_recovery()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(!in_recovery, "the standby was not promoted");
    after
        .batch_execute("INSERT INTO t VALUES (501)")
        .await
        .unwrap();
    let n: i64 = after
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 501, "a synchronous commit was lost at failover");
    gone(pg);
}

/// workloads/failover.toml as shipped, on a slower link (20 ms) so the window an
/// asynchronous standby can lose is never empty on a busy host: a run through the CLI,
/// one trial per block, the primary failed over 3 s into each. With the workers'
/// commits returning before the standby has them (`local`) the new primary lacks
/// acknowledged work, every job of which the accounting names; with `on` it lacks
/// none. Either way no job is lost outside the failover's accounting, the ledger and
/// the effects table agree once the lost effects are counted, and the pair is made
/// again between the trials (the second trial would fail on a primary with no
/// standby to promote).
#[test]
fn a_failover_under_load_loses_acknowledged_work_async_and_none_sync() {
    let _quiet = quiet_host();
    let results = tempfile::tempdir().unwrap();
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/failover.toml");
    let text = std::fs::read_to_string(shipped).unwrap();
    assert!(text.contains("standby_network = \"10ms\""));
    let workload = results.path().join("failover.toml");
    std::fs::write(
        &workload,
        text.replace("standby_network = \"10ms\"", "standby_network = \"20ms\""),
    )
    .unwrap();
    let (dir, run) = run_cli(&workload, &[], results.path());
    let trial = |phase: &str| {
        let cell = run["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["phase"] == phase)
            .unwrap();
        cell["trials"][0].clone()
    };
    let lost_total = |t: &serde_json::Value| {
        let l = &t["failovers"][0]["lost"];
        ["completions", "effects", "claims", "inserts"]
            .iter()
            .map(|k| l[k].as_u64().unwrap())
            .sum::<u64>()
    };
    for phase in ["async", "sync"] {
        let t = trial(phase);
        assert_eq!(t["failovers"].as_array().unwrap().len(), 1, "{phase}");
        assert_eq!(
            t["reconciliation"]["lost"], 0,
            "{phase}: {}",
            t["reconciliation"]
        );
        let kinds: Vec<&str> = t["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w["kind"].as_str())
            .collect();
        for bad in [
            "lost-jobs",
            "ledger-effects-mismatch",
            "unexpected-duplicate-claims",
        ] {
            assert!(!kinds.contains(&bad), "{phase}: {kinds:?}");
        }
        let f = &t["failovers"][0];
        assert!(f["promote_s"].as_f64().unwrap() > 0.0, "{phase}: {f}");
        assert_eq!(f["standby_before"]["sync_state"], "sync", "{phase}: {f}");
    }
    let lost = trial("async");
    assert!(
        lost_total(&lost) > 0,
        "async lost nothing: {}",
        lost["failovers"]
    );
    // Each lost completion that ran again is a duplicate execution in the ledger.
    let l = &lost["failovers"][0]["lost"];
    assert!(
        lost["duplicates"]["ledger"]["duplicate_executions"]
            .as_u64()
            .unwrap()
            >= l["rerun"].as_u64().unwrap()
    );
    assert_eq!(
        lost_total(&trial("sync")),
        0,
        "{}",
        trial("sync")["failovers"]
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("failover under production at 4 workers in async"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "the new primary had every acknowledged claim, effect, completion and insert"
        ),
        "{summary}"
    );
}

/// The network between workers and database (`network`): a run whose block goes through
/// a 3 ms round trip records, per trial, what the proxy added, measured with a trivial
/// statement through it and directly; it lands within the tolerance measured on this
/// host (+0.65 to +0.85 ms over 5 ms on an idle 2-core host: the OS's wake-up and two
/// more loopback hops; 2 ms allowed for a busy one), never below what was asked. The
/// local block records none, and the workers' claims pay the round trip.
#[test]
fn the_workers_network_adds_its_round_trip_within_tolerance() {
    let _quiet = quiet_host();
    let results = tempfile::tempdir().unwrap();
    let smoke = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/smoke.toml");
    let text = std::fs::read_to_string(smoke).unwrap().replace(
        "strategies = [\"production\", \"waiting\", \"conditional\", \"naive\"]",
        "strategies = [\"production\"]\nnetwork = [\"local\", \"3ms\"]",
    );
    assert!(text.contains("network = "));
    let workload = results.path().join("smoke-network.toml");
    std::fs::write(&workload, text).unwrap();
    let (dir, run) = run_cli(&workload, &[], results.path());
    let cell = |phase: &str| {
        run["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["phase"] == phase)
            .unwrap_or_else(|| panic!("no {phase} block"))
            .clone()
    };
    assert!(cell("local")["trials"][0].get("network").is_none());
    let far = cell("3ms");
    let n = &far["trials"][0]["network"];
    assert_eq!(n["configured"], "3ms");
    let added = n["added_ms"].as_f64().unwrap();
    assert!(
        (2.9..=5.0).contains(&added),
        "added {added} ms for 3 ms: {n}"
    );
    // A claim is one round trip: its median cannot beat the network.
    let p50_ms = far["trials"][0]["claim_latency"]["p50_us"]
        .as_f64()
        .unwrap()
        / 1e3;
    assert!(
        p50_ms >= 3.0,
        "claim p50 {p50_ms} ms through a 3 ms round trip"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains(
            "**Network**: the workers reached the server through claimbench's delaying proxy"
        ),
        "{summary}"
    );
}

/// `durability = "production"` on the embedded server: the block's cells run with
/// fsync, synchronous_commit and full_page_writes on, as the server reports them, the
/// block before it with the default's shortcuts (set back after a production block too:
/// the order here puts production first), and the verdict costs the difference.
#[test]
fn a_production_durability_block_runs_with_the_shortcuts_off_and_is_costed() {
    let _quiet = quiet_host();
    let results = tempfile::tempdir().unwrap();
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/durability.toml");
    let text = std::fs::read_to_string(shipped).unwrap();
    let (head, blocks) = text.split_once("[[matrix]]").unwrap();
    let (_, trial) = blocks.split_once("[trial]").unwrap();
    assert!(text.contains("durability = \"production\""));
    // Production first, then the shortcuts: the second block must be set back.
    let workload = results.path().join("durability.toml");
    let block = |name: &str, durability: &str| {
        format!(
            "[[matrix]]\nname = \"{name}\"\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n{durability}\n\n"
        )
    };
    std::fs::write(
        &workload,
        format!(
            "{head}{}{}[trial]{}",
            block("production", "durability = \"production\""),
            block("shortcuts", ""),
            trial
                .replace("duration_s = 6", "duration_s = 1.5")
                .replace("repetitions = 2", "repetitions = 1")
        ),
    )
    .unwrap();
    let (dir, run) = run_cli(&workload, &[], results.path());
    let settings = |phase: &str| {
        run["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["phase"] == phase)
            .unwrap()["server_settings"]
            .clone()
    };
    assert_eq!(
        settings("production"),
        serde_json::json!([
            ["fsync", "on"],
            ["synchronous_commit", "on"],
            ["full_page_writes", "on"]
        ])
    );
    assert_eq!(
        settings("shortcuts"),
        serde_json::json!([
            ["fsync", "off"],
            ["synchronous_commit", "off"],
            ["full_page_writes", "off"]
        ])
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("- production durability (fsync, synchronous_commit, full_page_writes on; production) against the embedded default's shortcuts (shortcuts), production at 1 worker, batch 1:"),
        "{summary}"
    );
}

/// A three-node MariaDB Galera cluster started by claimbench: every node joins (one
/// cluster, every node ready), and SKIP LOCKED stops at a node's edge — a session on
/// node 2 does not skip the row a session on node 1 holds locked, both update it, and
/// certification aborts one of them at commit (MySQL error 1213). The nodes and their
/// directories are gone after the drop.
#[test]
fn a_galera_cluster_joins_and_skip_locked_stops_at_the_node() {
    let _quiet = quiet_host();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(joins_and_skip_locked_stops_at_the_node());
}

async fn joins_and_skip_locked_stops_at_the_node() {
    use mysql_async::prelude::Queryable;
    let cluster =
        claimbench::embedded::mariadb::EmbeddedMariadb::start(3, false, "claimbench_galera_prove")
            .unwrap();
    let ports = cluster.ports();
    let mut conns = Vec::new();
    for p in &ports {
        let url = format!("mysql://root@127.0.0.1:{p}/mysql");
        conns.push(mysql_async::Conn::from_url(url).await.unwrap());
    }
    let status = async |c: &mut mysql_async::Conn, name: &str| -> String {
        let row: Option<String> = c
            .exec_first(
                "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = UPPER(?)",
                (name,),
            )
            .await
            .unwrap();
        row.unwrap()
    };
    let mut uuid = Vec::new();
    for c in conns.iter_mut() {
        assert_eq!(status(c, "wsrep_cluster_size").await, "3");
        assert_eq!(status(c, "wsrep_ready").await, "ON");
        uuid.push(status(c, "wsrep_cluster_state_uuid").await);
    }
    assert!(uuid.iter().all(|u| *u == uuid[0]), "{uuid:?}");

    let (a, rest) = conns.split_first_mut().unwrap();
    let b = &mut rest[0];
    a.query_drop("CREATE DATABASE q; CREATE TABLE q.jobs (id INT PRIMARY KEY, status INT NOT NULL, owner CHAR(1)); INSERT INTO q.jobs VALUES (1, 0, NULL), (2, 0, NULL)")
        .await
        .unwrap();
    // The table reaches node 2 before B reads it (wsrep_sync_wait: read after every
    // write the cluster has certified).
    b.query_drop("SET SESSION wsrep_sync_wait = 1")
        .await
        .unwrap();
    let claim = "SELECT id FROM q.jobs WHERE status = 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";
    a.query_drop("START TRANSACTION").await.unwrap();
    let held: Option<i32> = a.query_first(claim).await.unwrap();
    a.query_drop("UPDATE q.jobs SET status = 1, owner = 'A' WHERE id = 1")
        .await
        .unwrap();
    b.query_drop("START TRANSACTION").await.unwrap();
    let seen: Option<i32> = b.query_first(claim).await.unwrap();
    assert_eq!(
        (held, seen),
        (Some(1), Some(1)),
        "node 2 skipped the row node 1 holds"
    );
    b.query_drop("UPDATE q.jobs SET status = 1, owner = 'B' WHERE id = 1")
        .await
        .unwrap();
    b.query_drop("COMMIT").await.unwrap();
    // A was aborted by B's certified write: its commit (or the statement it is in)
    // fails with 1213, and the row is B's on every node.
    let err = a.query_drop("COMMIT").await.unwrap_err();
    match &err {
        mysql_async::Error::Server(e) => assert_eq!(e.code, 1213, "{e:?}"),
        other => panic!("A's commit failed otherwise: {other:?}"),
    }
    // Read causally: node 3 may not have applied B's certified write yet (CI once read
    // the row there before it had).
    rest[1]
        .query_drop("SET SESSION wsrep_sync_wait = 1")
        .await
        .unwrap();
    let owner: Option<String> = rest[1]
        .query_first("SELECT owner FROM q.jobs WHERE id = 1")
        .await
        .unwrap();
    assert_eq!(owner.as_deref(), Some("B"));
    for c in conns {
        let _ = c.disconnect().await;
    }

    // The same cluster as a target: checked to be one cluster, and `prove` with B on
    // node 2 gets each core strategy's cross-node verdict (B takes A's rows at once and
    // A's commit is aborted), the steps after A ends as on one server.
    use claimbench::backend::{Backend, DbTarget};
    let target = DbTarget::parse(&cluster.url()).unwrap();
    let DbTarget::MysqlCluster(nodes) = &target else {
        panic!("{target}")
    };
    let backend = claimbench::backend::mysql::MysqlBackend::cluster(
        nodes.clone(),
        target.to_string(),
        "claimbench_galera_prove",
    );
    assert_eq!(backend.nodes(), 3);
    let record =
        claimbench::backend::cluster::record(&backend.cluster_readings(true).await.unwrap())
            .unwrap();
    assert_eq!((record.size, record.nodes.len()), (3, 3));
    assert!(
        record
            .settings
            .iter()
            .any(|(k, v)| k == "binlog_format" && v == "ROW"),
        "{record:?}"
    );
    for s in claimbench::strategy::Strategy::CORE {
        let verdicts = claimbench::prove::prove(&backend, &s, &s, &[], &Default::default())
            .await
            .unwrap();
        for v in &verdicts {
            assert!(
                v.ok,
                "{s} {:?}: expected {}, saw {}",
                v.step, v.expected, v.observed
            );
        }
        assert!(
            verdicts[0].observed.contains("A's commit failed"),
            "{verdicts:?}"
        );
    }
    let dirs = cluster.paths();
    drop(cluster);
    nothing_left(dirs, ports);
}

/// A node that cannot start (an option mariadbd refuses) fails the start with a message
/// naming it, and what was already running is stopped and removed.
#[test]
fn a_galera_node_that_fails_to_start_leaves_nothing_behind() {
    let _quiet = quiet_host();
    let tmp = world_readable_tmp();
    let before: Vec<_> = galera_dirs(tmp.path());
    let e = claimbench::embedded::mariadb::EmbeddedMariadb::start_with(
        2,
        false,
        "claimbench",
        &[(1, "--no-such-option")],
        tmp.path(),
    )
    .err()
    .expect("a node with an unknown option cannot start");
    let e = e.to_string();
    assert!(e.contains("node 1 exited"), "{e}");
    assert_eq!(
        galera_dirs(tmp.path()),
        before,
        "node directories left behind"
    );
}

/// A run on the Galera cluster claimbench starts, workers spread over three nodes, all
/// on one, and on a plain server beside the cluster: production never duplicates though the cluster aborts its claims across
/// nodes (counted by the workers and by the nodes, and retried); naive duplicates; the
/// cluster, its settings and each node's share are recorded and reported; and the
/// cluster is gone afterwards.
#[test]
fn a_run_on_galera_counts_aborts_across_nodes_and_production_never_duplicates() {
    let _quiet = quiet_host();
    let tmp = world_readable_tmp();
    let workload = tmp.path().join("galera.toml");
    std::fs::write(
        &workload,
        r#"name = "galera-test"
seed = 5
[topology]
kind = "galera"
nodes = 3
[population]
backlog = 4000
queues = [{ name = "default" }]
[handler]
mode = "full"
[matrix]
backends = ["mysql"]
strategies = ["production", "naive"]
index_layouts = ["fetch-order"]
workers = [6]
batch_sizes = [1]
placement = ["spread", "single-writer", "standalone"]
[trial]
warmup_s = 0.5
duration_s = 2.5
"#,
    )
    .unwrap();
    let (dir, run) = run_cli_with(&workload, &[], tmp.path(), &[("TMPDIR", tmp.path())]);
    assert!(
        galera_dirs(tmp.path()).is_empty(),
        "node directories left behind"
    );
    let target = &run["environment"]["targets"][0];
    assert_eq!(target["cluster"]["size"], 3, "{target}");
    let label = target["target"].as_str().unwrap();
    let ports: Vec<u16> = label
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse().ok())
        .filter(|p| *p > 1024)
        .collect();
    assert_eq!(ports.len(), 4, "{label}");
    nothing_left(Vec::new(), ports);

    let cell = |phase: &str, strategy: &str| {
        run["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["phase"] == phase && c["strategy"] == strategy)
            .unwrap_or_else(|| panic!("no {phase} {strategy} cell"))
            .clone()
    };
    let node_sum = |c: &serde_json::Value, field: &str| -> i64 {
        c["trials"][0]["cluster"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n[field].as_i64().unwrap())
            .sum()
    };
    let spread = cell("spread", "production");
    let t = &spread["trials"][0];
    assert_eq!(t["duplicates"]["ledger"]["duplicate_claims"], 0, "{t}");
    assert_eq!(t["reconciliation"]["lost"], 0);
    assert!(
        t["counts"]["claim_retries"].as_u64().unwrap() > 0,
        "{}",
        t["counts"]
    );
    assert!(
        node_sum(&spread, "cert_failures") + node_sum(&spread, "bf_aborts") > 0,
        "{}",
        t["cluster"]
    );
    let workers: Vec<i64> = t["cluster"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["workers"].as_i64().unwrap())
        .collect();
    assert_eq!(workers, [2, 2, 2]);
    // One writer: the cluster aborts nothing (a rare InnoDB deadlock of the node's own
    // may still cost a retry), nor does one server without Galera.
    let retries =
        |c: &serde_json::Value| c["trials"][0]["counts"]["claim_retries"].as_u64().unwrap();
    let one = cell("single-writer", "production");
    assert!(
        retries(&one) * 10 < retries(&spread),
        "{}",
        one["trials"][0]["counts"]
    );
    assert_eq!(
        node_sum(&one, "cert_failures") + node_sum(&one, "bf_aborts"),
        0
    );
    let alone = cell("standalone", "production");
    assert!(
        retries(&alone) * 10 < retries(&spread),
        "{}",
        alone["trials"][0]["counts"]
    );
    let naive = cell("spread", "naive");
    assert!(
        naive["trials"][0]["duplicates"]["ledger"]["duplicate_claims"]
            .as_u64()
            .unwrap()
            > 0
    );

    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("**Cluster**: the mysql target was a Galera cluster of 3 nodes"),
        "{summary}"
    );
    assert!(summary.contains("## Cluster"), "{summary}");
    assert!(
        summary.contains("- production: with 6 workers spread over 3 Galera nodes at batch 1,")
            && summary.contains("and 0 duplicate claims: certification let one claim of each row commit; all workers on one node:")
            && summary.contains("; one MariaDB server without Galera (same settings): "),
        "{summary}"
    );
}

/// A temporary directory every user may enter: the nodes run as the mysql user when
/// the tests run as root, and their directories are made inside it.
fn world_readable_tmp() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn galera_dirs(under: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(under)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("claimbench-galera-"))
        })
        .collect();
    v.sort();
    v
}

/// Both engines from one command: with no `--db`, a workload on postgres and mysql runs
/// every cell on an embedded PostgreSQL and an embedded MariaDB, a team's declared claim
/// included without `--allow-privileged-sql` (the workload's accounts on both reach
/// neither the host nor the server's settings), and afterwards no server, directory or
/// port is left.
#[test]
fn both_embedded_servers_run_every_cell_and_leave_nothing_behind() {
    let _quiet = quiet_host();
    let tmp = world_readable_tmp();
    std::fs::write(
        tmp.path().join("team-claim.sql"),
        "UPDATE jobs_hot h SET status = 1, worker_id = :worker_id, last_updated_at = now()\n\
         WHERE h.id IN (SELECT j.id FROM jobs_hot j WHERE j.status = 0\n\
           AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())\n\
           ORDER BY j.priority DESC, j.id LIMIT :batch FOR UPDATE SKIP LOCKED)\n\
         RETURNING h.id\n",
    )
    .unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/workloads/examples/mysql-two-step.sql"
        ),
        tmp.path().join("team-claim.mysql.sql"),
    )
    .unwrap();
    let workload = tmp.path().join("both.toml");
    std::fs::write(
        &workload,
        r#"name = "both-engines"
seed = 5
[population]
backlog = 3000
queues = [{ name = "default" }]
[strategies.team-claim]
postgres = "team-claim.sql"
mysql = "team-claim.mysql.sql"
promises = ["prevents-duplicates"]
[matrix]
backends = ["postgres", "mysql"]
strategies = ["production", "team-claim"]
index_layouts = ["fetch-order"]
workers = [2]
batch_sizes = [5]
[trial]
warmup_s = 0.2
duration_s = 1.0
"#,
    )
    .unwrap();
    let (dir, run) = run_cli_with(&workload, &[], tmp.path(), &[("TMPDIR", tmp.path())]);

    let cells = run["cells"].as_array().unwrap();
    for backend in ["postgres", "mysql"] {
        for strategy in ["production", "team-claim"] {
            let c = cells
                .iter()
                .find(|c| c["backend"] == backend && c["strategy"] == strategy)
                .unwrap_or_else(|| panic!("no {backend} {strategy} cell"));
            let t = &c["trials"][0];
            assert!(t["counts"]["jobs_claimed"].as_u64().unwrap() > 0, "{t}");
            assert_eq!(t["duplicates"]["ledger"]["duplicate_claims"], 0, "{t}");
        }
    }
    let labels: Vec<String> = run["environment"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap().to_string())
        .collect();
    assert!(
        labels.iter().any(|l| l.starts_with("embedded PostgreSQL"))
            && labels.iter().any(|l| l.starts_with("embedded MariaDB")),
        "{labels:?}"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("innodb_flush_log_at_trx_commit = 2"),
        "the MariaDB shortcut is stated: {summary}"
    );

    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("claimbench-"))
        })
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let ports: Vec<u16> = labels
        .iter()
        .flat_map(|l| l.split(|c: char| !c.is_ascii_digit()))
        .filter_map(|p| p.parse().ok())
        .filter(|p| *p > 1024)
        .collect();
    assert_eq!(ports.len(), 2, "{labels:?}");
    nothing_left(Vec::new(), ports);
}

/// The embedded MariaDB's workload account holds what a run needs and nothing more:
/// everything in the run's database, and no right that reaches the host, the server's
/// settings, another database or the grant tables (through which it could raise its
/// own rights).
#[tokio::test]
async fn the_embedded_mariadb_workload_account_is_confined_to_the_runs_database() {
    use mysql_async::prelude::Queryable;
    let server = claimbench::embedded::mariadb::EmbeddedMariadb::start_single("cb_run").unwrap();
    let mut c = mysql_async::Conn::from_url(server.url()).await.unwrap();
    for ok in [
        "CREATE DATABASE cb_run",
        "CREATE TABLE cb_run.t (id INT PRIMARY KEY)",
        "CREATE TRIGGER cb_run.tr BEFORE INSERT ON cb_run.t FOR EACH ROW SET NEW.id = NEW.id",
        "INSERT INTO cb_run.t VALUES (1)",
        "SELECT COUNT(*) FROM information_schema.INNODB_TRX",
        "DROP DATABASE cb_run",
    ] {
        c.query_drop(ok)
            .await
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for refused in [
        "CREATE DATABASE other",
        "SELECT COUNT(*) FROM mysql.global_priv",
        "UPDATE mysql.global_priv SET Priv = '{}' WHERE User = 'claimbench'",
        "CREATE USER 'x'@'%'",
        "SELECT 1 INTO OUTFILE '/tmp/claimbench-outfile'",
        "SET GLOBAL innodb_flush_log_at_trx_commit = 1",
        "SHUTDOWN",
    ] {
        let r = c.query_drop(refused).await;
        assert!(r.is_err(), "the workload account may: {refused}");
    }
    assert!(!std::path::Path::new("/tmp/claimbench-outfile").exists());
    // Without FILE, LOAD_FILE reads nothing (NULL rather than an error).
    let read: Option<Option<String>> = c
        .query_first("SELECT LOAD_FILE('/etc/hostname')")
        .await
        .unwrap();
    assert_eq!(read, Some(None));
    let _ = c.disconnect().await;
}
