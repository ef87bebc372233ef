//! Through a real PgBouncer (Debian's `pgbouncer`, which `.ci/run` installs): every
//! built-in strategy through transaction pooling, the pool's wait when it is smaller
//! than the workers, the pooler removed after the run, and a user's pooler in front of a
//! server claimbench did not start, in both modes.

use claimbench::embedded::EmbeddedPostgres;
use claimbench::embedded::pgbouncer::EmbeddedPgBouncer;
use claimbench::pooler::{PoolMode, Pooler};
use claimbench::strategy::Strategy;
use std::path::{Path, PathBuf};

/// A temporary directory every user may enter: the server and the pooler run as the
/// postgres user when the tests run as root, and make their directories inside it.
fn world_readable_tmp() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// `claimbench run WORKLOAD [extra] --results <tmp>/out` with TMPDIR in `tmp`: its exit
/// status, stderr, and the run.json when it wrote one.
fn run_cli(
    tmp: &Path,
    workload: &str,
    extra: &[&str],
) -> (bool, String, Option<serde_json::Value>) {
    let file = tmp.join("w.toml");
    std::fs::write(&file, workload).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_claimbench"))
        .env("TMPDIR", tmp)
        .arg("run")
        .arg(&file)
        .args(extra)
        .arg("--results")
        .arg(tmp.join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let run = std::fs::read_dir(tmp.join("out"))
        .ok()
        .and_then(|mut d| d.next())
        .map(|d| d.unwrap().path().join("run.json"))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap());
    (out.status.success(), stderr, run)
}

/// Everything claimbench made under `tmp` but its results.
fn left_under(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n != "out" && n != "w.toml"))
        .collect()
}

fn cell<'a>(run: &'a serde_json::Value, strategy: &str, workers: u64) -> &'a serde_json::Value {
    run["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["strategy"] == strategy && c["workers"] == workers)
        .unwrap_or_else(|| panic!("no {strategy} cell at {workers} workers"))
}

/// Every built-in strategy with a PostgreSQL form runs through a transaction-mode
/// PgBouncer of 2 server connections serving 4 workers: its workers' transactions went
/// through the pooler (its own counters say so), none of them lost a job, and none that
/// promises no duplicates duplicated (the named prepared statements that fail there on
/// PgBouncer 1.18 are sent unnamed). Afterwards neither the pooler's directory nor its
/// port is left.
#[test]
fn every_builtin_strategy_runs_through_a_transaction_pooler() {
    let tmp = world_readable_tmp();
    let strategies: Vec<String> = Strategy::builtin()
        .filter(|s| s.sql(claimbench::backend::BackendKind::Postgres).is_some())
        .map(|s| format!("\"{s}\""))
        .collect();
    let workload = format!(
        r#"name = "through-a-pooler"
seed = 3
[population]
backlog = 2000
queues = [{{ name = "default" }}]
[matrix]
strategies = [{}]
index_layouts = ["fetch-order"]
workers = [4]
batch_sizes = [5]
[trial]
warmup_s = 0.1
duration_s = 0.6
[topology]
pooler = "transaction"
pool_size = 2
"#,
        strategies.join(", ")
    );
    let (ok, stderr, run) = run_cli(tmp.path(), &workload, &[]);
    assert!(ok, "{stderr}");
    let run = run.unwrap();
    assert_eq!(
        run["environment"]["targets"][0]["pooler"],
        serde_json::json!({"mode": "transaction", "pool_size": 2})
    );
    assert!(strategies.len() >= 10, "{strategies:?}");
    for s in
        Strategy::builtin().filter(|s| s.sql(claimbench::backend::BackendKind::Postgres).is_some())
    {
        let c = cell(&run, s.as_str(), 4);
        for t in c["trials"].as_array().unwrap() {
            assert!(
                t["counts"]["jobs_claimed"].as_u64().unwrap() > 0,
                "{s}: {t}"
            );
            assert!(
                t["locks"]["pool_transactions"].as_i64().unwrap() > 0,
                "{s}: {t}"
            );
            assert_eq!(t["reconciliation"]["lost"], 0, "{s}: {t}");
            if s.prevents_duplicate_claims() {
                assert_eq!(t["duplicates"]["ledger"]["duplicate_claims"], 0, "{s}: {t}");
            }
        }
    }
    // The line the run printed names the pooler's port and folder: both gone.
    let line = stderr
        .lines()
        .find(|l| l.starts_with("PgBouncer (transaction mode, 2 server connections) on port"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let port: u16 = line
        .split("on port ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "{line}"
    );
    assert!(
        left_under(tmp.path()).is_empty(),
        "{:?}",
        left_under(tmp.path())
    );
}

/// One server connection for six workers: they wait in the pooler for it, and the
/// pooler's counters say so; one worker on the same pool hardly waits. A block's
/// `pool_sizes` resizes claimbench's pooler between blocks: the pooler never had more
/// server connections serving clients than the block's pool, six workers on one left
/// clients waiting, and the verdict names the pool each worker count needed.
#[test]
fn a_pool_smaller_than_the_workers_makes_them_wait_and_says_how_long() {
    let tmp = world_readable_tmp();
    let workload = r#"name = "a-small-pool"
seed = 3
[population]
backlog = 3000
queues = [{ name = "default" }]
[[matrix]]
name = "workers"
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [1, 6]
batch_sizes = [1]
[[matrix]]
name = "pools"
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [6]
batch_sizes = [1]
pool_sizes = [1, 3]
[trial]
warmup_s = 0.1
duration_s = 1.0
[topology]
pooler = "transaction"
pool_size = 1
"#;
    let (ok, stderr, run) = run_cli(tmp.path(), workload, &["--quiet"]);
    assert!(ok, "{stderr}");
    let run = run.unwrap();
    let on = |phase: &str, w: u64, pool: u64| {
        let c = run["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["phase"] == phase && c["workers"] == w)
            .unwrap_or_else(|| panic!("no cell at {w} workers in {phase}"));
        assert_eq!(c["pool_size"], pool, "{phase}");
        &c["trials"][0]["locks"]
    };
    let on_pool = |w: u64, pool: u64| on("workers", w, pool);
    for (phase, w, pool) in [
        ("workers", 1, 1),
        ("workers", 6, 1),
        ("pools pool 1", 6, 1),
        ("pools pool 3", 6, 3),
    ] {
        let t = on(phase, w, pool);
        let peak = t["pool_peak_server"].as_i64().unwrap();
        assert!(
            (1..=pool as i64).contains(&peak),
            "{w} workers, pool {pool}: {t}"
        );
    }
    assert!(on_pool(6, 1)["pool_peak_waiting"].as_i64().unwrap() >= 1);
    // The block's own pool took: six workers on it used more than the workload's one.
    let resized = on("pools pool 3", 6, 3)["pool_peak_server"]
        .as_i64()
        .unwrap();
    assert!(resized >= 2, "pool 3 in use at most {resized}");
    let per_xact = |w: u64| {
        let t = on_pool(w, 1);
        let (x, us) = (
            t["pool_transactions"].as_i64().unwrap(),
            t["pool_wait_us"].as_i64().unwrap(),
        );
        assert!(x > 0, "{t}");
        us as f64 / x as f64
    };
    let (one, six) = (per_xact(1), per_xact(6));
    assert!(
        six > 0.0 && six > 4.0 * one,
        "wait per transaction: 1 worker {one} µs, 6 workers {six} µs"
    );
    let summary = std::fs::read_to_string(
        std::fs::read_dir(tmp.path().join("out"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("summary.md"),
    )
    .unwrap();
    assert!(summary.contains("## Pooler"), "{summary}");
    // The verdict reads the worker sweep on one pool, and the pool sweep at a worker
    // count (not also as a worker sweep of each pool).
    assert!(
        summary.contains("through PgBouncer (transaction mode, 1 server connection), production in workers waited per transaction"),
        "{summary}"
    );
    assert!(
        summary
            .contains("server pool for production fetch-order [pools] at batch 1: 6 workers need"),
        "{summary}"
    );
    assert!(
        !summary.contains("production in pools pool 1 waited"),
        "{summary}"
    );
    assert!(summary.contains("**Pooler**: the workers reached the postgres server through a PgBouncer claimbench started in transaction mode"), "{summary}");
}

/// A pooler of the person's own in front of a server claimbench did not start: session
/// mode runs as a direct connection would; transaction mode refuses a role whose default
/// schema is not the run's (saying which ALTER ROLE to run, and running none), and runs
/// once the role has it, given as --pooler beside the server or as --db itself.
#[tokio::test]
async fn a_users_pooler_runs_in_session_mode_and_in_transaction_mode_once_the_role_has_the_schema()
{
    let tmp = world_readable_tmp();
    let pg = EmbeddedPostgres::start(&Default::default()).unwrap();
    let workload = r#"name = "users-pooler"
seed = 3
[population]
backlog = 1000
queues = [{ name = "default" }]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [3]
batch_sizes = [5]
[trial]
warmup_s = 0.1
duration_s = 0.5
"#;
    for mode in [PoolMode::Session, PoolMode::Transaction] {
        let bouncer =
            // Session mode keeps a server connection per client: with --db as the
            // pooler, the workers' three and claimbench's own.
            EmbeddedPgBouncer::start(pg.port(), pg.owner(), Pooler { mode, pool_size: 8 }).unwrap();
        let at = format!("127.0.0.1:{}", bouncer.port());
        let flags = [
            "--quiet",
            "--db",
            &pg.url(),
            "--pooler",
            &at,
            "--pool-mode",
            mode.as_str(),
            "--pooler-admin",
            &bouncer.admin_url(),
        ];
        let out = tmp.path().join(format!("{mode}"));
        std::fs::create_dir_all(&out).unwrap();
        let (ok, stderr, run) = run_cli(&out, workload, &flags);
        if mode == PoolMode::Transaction {
            assert!(!ok, "{stderr}");
            assert!(
                stderr.contains("ALTER ROLE <user> SET search_path TO \"claimbench\""),
                "{stderr}"
            );
            let (c, conn) = tokio_postgres::connect(&pg.url(), tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            // The test's own server, changed by the test, as its owner would.
            c.batch_execute("ALTER ROLE postgres SET search_path TO claimbench")
                .await
                .unwrap();
            // A role's default reaches new server connections only: the owner has the
            // pooler reopen its own, as the message says.
            let (admin, conn) =
                tokio_postgres::connect(&bouncer.admin_url(), tokio_postgres::NoTls)
                    .await
                    .unwrap();
            tokio::spawn(conn);
            admin.simple_query("RECONNECT").await.unwrap();
            // Until the pool serves again: under a loaded host its new server
            // connections have come after the run's 10 s startup limit.
            let through = format!("postgres://postgres@{at}/postgres");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            loop {
                let probe = tokio::time::timeout(std::time::Duration::from_secs(5), async {
                    let (c, conn) =
                        tokio_postgres::connect(&through, tokio_postgres::NoTls).await?;
                    tokio::spawn(conn);
                    c.simple_query("SELECT 1").await
                })
                .await;
                if matches!(probe, Ok(Ok(_))) {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the pooler never served again: {probe:?}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            std::fs::remove_dir_all(&out).unwrap();
            std::fs::create_dir_all(&out).unwrap();
            let (ok, stderr, run) = run_cli(&out, workload, &flags);
            assert!(ok, "{stderr}");
            let run = run.unwrap();
            // Read on its console, never changed: its mode and its pool.
            assert_eq!(
                run["environment"]["targets"][0]["their_pooler"],
                serde_json::json!({"address": at, "mode": "transaction", "pool_size": 8})
            );
            assert_eq!(run["cells"][0]["pool_size"], 8);
            let t = &run["cells"][0]["trials"][0];
            assert!(t["locks"]["pool_transactions"].as_i64().unwrap() > 0, "{t}");
            assert_eq!(t["duplicates"]["ledger"]["duplicate_claims"], 0, "{t}");
            // --db as the pooler: its console names the server behind it, where
            // claimbench's own connections go; the workers go through --db.
            let through_db = format!("postgres://postgres@{at}/postgres");
            std::fs::remove_dir_all(&out).unwrap();
            std::fs::create_dir_all(&out).unwrap();
            let (ok, stderr, run) = run_cli(
                &out,
                workload,
                &[
                    "--quiet",
                    "--db",
                    &through_db,
                    "--pool-mode",
                    "transaction",
                    "--pooler-admin",
                    &bouncer.admin_url(),
                ],
            );
            assert!(ok, "{stderr}");
            let run = run.unwrap();
            let target = &run["environment"]["targets"][0];
            assert_eq!(target["their_pooler"]["address"], at.as_str(), "{target}");
            let server = format!("127.0.0.1:{}", pg.port());
            assert!(
                target["target"].as_str().unwrap().contains(&server),
                "{target}"
            );
            let t = &run["cells"][0]["trials"][0];
            assert!(t["locks"]["pool_transactions"].as_i64().unwrap() > 0, "{t}");
            assert_eq!(t["duplicates"]["ledger"]["duplicate_claims"], 0, "{t}");
            assert_eq!(t["reconciliation"]["lost"], 0, "{t}");
            continue;
        }
        // A mode its console contradicts is refused before any trial.
        let wrong = flags.map(|f| if f == "session" { "transaction" } else { f });
        let (refused, why, _) = run_cli(&out, workload, &wrong);
        assert!(
            !refused && why.contains("pools in session mode; give --pool-mode session"),
            "{why}"
        );
        std::fs::remove_dir_all(out.join("out")).ok();
        let log = || {
            std::fs::read_to_string(bouncer.path().unwrap().join("pgbouncer.log"))
                .unwrap_or_default()
        };
        assert!(ok, "{stderr}\npooler's log:\n{}", log());
        let t = &run.unwrap()["cells"][0]["trials"][0];
        assert!(t["counts"]["jobs_claimed"].as_u64().unwrap() > 0, "{t}");
        assert!(t["locks"]["pool_transactions"].as_i64().unwrap() > 0, "{t}");
        // --db as a session pooler: every connection through it, as to a server.
        let through_db = format!("postgres://postgres@{at}/postgres");
        let flags = ["--quiet", "--db", &through_db, "--pool-mode", "session"];
        let (ok, stderr, run) = run_cli(&out, workload, &flags);
        assert!(ok, "{stderr}\npooler's log:\n{}", log());
        let run = run.unwrap();
        let t = &run["cells"][0]["trials"][0];
        assert!(t["counts"]["jobs_claimed"].as_u64().unwrap() > 0, "{t}");
        assert_eq!(
            run["environment"]["targets"][0]["their_pooler"]["mode"],
            "session"
        );
    }
}

/// `prove` through a pooler claimbench starts: through transaction pooling a
/// session-level advisory lock outlives the session that took it on the pooler's server
/// connection and holds its job against the next claimer, so `advisory` fails a step
/// (with that cause named) while production and `advisory-xact` pass every step; in
/// session mode `advisory` passes too.
#[test]
fn prove_through_a_pooler_tells_the_session_advisory_lock_from_the_transaction_one() {
    let tmp = world_readable_tmp();
    let prove = |mode: &str, strategies: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_claimbench"));
        cmd.env("TMPDIR", tmp.path())
            .args(["prove", "--pool-mode", mode]);
        for s in strategies {
            cmd.args(["--strategy", s]);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    let (code, text) = prove("transaction", &["production", "advisory-xact", "advisory"]);
    assert_eq!(code, Some(1), "{text}");
    let rows = |name: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(&format!("| {name} |")))
            .map(str::to_string)
            .collect()
    };
    for ok in ["production", "advisory-xact"] {
        assert_eq!(rows(ok).len(), 3, "{text}");
        assert!(rows(ok).iter().all(|r| r.ends_with("| ok |")), "{text}");
    }
    assert!(
        rows("advisory").iter().any(|r| r.ends_with("| FAIL |")),
        "{text}"
    );
    assert!(
        text.contains(
            "its session-level advisory locks stay on whichever server connection took them"
        ),
        "{text}"
    );
    let (code, text) = prove("session", &["advisory"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        left_under(tmp.path()).is_empty(),
        "{:?}",
        left_under(tmp.path())
    );
}

/// Another client holding every server connection of the workers' pool for a while
/// (`faults.hold_pool_s`): the workers stall for as long as it does, every one of them
/// waiting in the pooler, and resume when it lets go. Without a pooler the fault is
/// refused before anything starts.
#[test]
fn a_pool_held_by_another_client_stalls_the_workers_while_it_is_held() {
    let tmp = world_readable_tmp();
    let workload = r#"name = "pool-held"
seed = 3
[population]
backlog = 20000
queues = [{ name = "default" }]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [4]
batch_sizes = [5]
[trial]
warmup_s = 0.1
duration_s = 2.9
[faults]
hold_pool_s = [1.0, 2.0]
hold_pool_connections = 2
"#;
    let (ok, stderr, _) = run_cli(tmp.path(), workload, &["--quiet"]);
    assert!(!ok && stderr.contains("faults.hold_pool_s holds server connections of the workers' pooler, and this run has none"), "{stderr}");
    let pooled = format!("{workload}[topology]\npooler = \"transaction\"\npool_size = 2\n");
    let (ok, stderr, run) = run_cli(tmp.path(), &pooled, &["--quiet"]);
    assert!(ok, "{stderr}");
    let t = &run.unwrap()["cells"][0]["trials"][0];
    assert_eq!(t["pool_held"]["connections"], 2, "{t}");
    let series: Vec<u64> = t["claimed_series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    // Second 1 is the hold's; seconds 0 and 2 are before and after it.
    assert!(series.len() >= 3, "{series:?}");
    assert!(series[1] * 10 < series[0], "{series:?}");
    assert!(series[1] * 10 < series[2], "{series:?}");
    assert!(
        t["locks"]["pool_peak_waiting"].as_i64().unwrap() >= 4,
        "{t}"
    );
}

/// PgBouncer in front of the primary of the primary-standby topology: the workers'
/// transactions go through it to the primary, which streams them to its synchronous
/// standby; a failover with a pooler in the path is refused (the pooler would keep
/// pointing at the old primary: tests/bad-workloads/pooler-with-failover.toml).
#[test]
fn a_pooler_sits_in_front_of_the_primary_of_a_primary_and_its_standby() {
    let tmp = world_readable_tmp();
    let workload = r#"name = "pooled-primary"
seed = 3
[population]
backlog = 2000
queues = [{ name = "default" }]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [4]
batch_sizes = [5]
[trial]
warmup_s = 0.1
duration_s = 0.6
[topology]
kind = "primary-standby"
synchronous = true
pooler = "transaction"
pool_size = 2
"#;
    let (ok, stderr, run) = run_cli(tmp.path(), workload, &["--quiet"]);
    assert!(ok, "{stderr}");
    let run = run.unwrap();
    let target = &run["environment"]["targets"][0];
    assert_eq!(target["standbys"].as_array().unwrap().len(), 1, "{target}");
    assert_eq!(target["pooler"]["pool_size"], 2, "{target}");
    let t = &run["cells"][0]["trials"][0];
    assert!(t["locks"]["pool_transactions"].as_i64().unwrap() > 0, "{t}");
    assert!(t["locks"]["pool_peak_server"].as_i64().unwrap() <= 2, "{t}");
    assert_eq!(t["reconciliation"]["lost"], 0, "{t}");
    assert!(
        left_under(tmp.path()).is_empty(),
        "{:?}",
        left_under(tmp.path())
    );
}
