//! Shared set-up for the behavioural tests: one suite, run against every backend.
//!
//! `TestDb` is what a test needs from a backend beyond the `Backend` trait: a schema of
//! the test's own, a transaction held open on purpose, and a few inspections of the
//! hot table. Each backend answers them with its own SQL (`postgres.rs`, `mysql.rs`).
//!
//! A server that is not reachable fails the test, with the address and the variable to
//! set: a database test never passes without its database.

#![allow(dead_code)]

pub mod mssql;
pub mod mysql;
pub mod postgres;
pub mod test_servers;

use claimbench::backend::Backend;
use claimbench::model::TableState;
use claimbench::workload::Workload;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// A run of the binary on workload `text` with `extra` arguments, in a temporary folder
/// that is also its TMPDIR (where an embedded server keeps its store); its output, its
/// run.json, and the names left in that folder that start with `left_prefix` (an
/// embedded server's store that was not removed).
pub fn run_text(
    text: &str,
    extra: &[&str],
    left_prefix: &str,
) -> (std::process::Output, Option<serde_json::Value>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(&w, text).unwrap();
    let results = dir.path().join("results");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_claimbench"))
        .arg("run")
        .arg(&w)
        .args(extra)
        .arg("--results")
        .arg(&results)
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    let run = std::fs::read_dir(&results)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| std::fs::read(e.unwrap().path().join("run.json")).ok())
        .map(|b| serde_json::from_slice(&b).unwrap());
    let left = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(left_prefix))
        .collect();
    (out, run, left)
}

/// The runner of a lifecycle-against-its-model test on generated sequences (a broker's):
/// `CLAIMBENCH_MODEL_CASES` sequences (64 by default), none persisted, shrunk at most 200
/// times.
/// A trial's `duplicates` (run.json) under connection faults: the effects may count
/// more duplicate executions than the ledger where an effect was in doubt (its write
/// landed, its reply died with the connection, and the job ran again: a real duplicate
/// the worker could not see, and each later run of the job another), up to the bound
/// the ledger gives, never fewer.
pub fn assert_effects_within_the_ledgers_bounds(d: &serde_json::Value) {
    let n = |v: &serde_json::Value| v.as_i64().unwrap();
    let effects = n(&d["effects_duplicate_executions"]);
    let (ledger, most) = (
        n(&d["ledger"]["duplicate_executions"]),
        n(&d["ledger"]["duplicate_executions_at_most"]),
    );
    assert!(
        (ledger..=most).contains(&effects),
        "effects {effects} duplicate executions, ledger {ledger} to {most}: {d}"
    );
}

pub fn sequence_runner() -> proptest::test_runner::TestRunner {
    sequence_runner_of(64)
}

/// [`sequence_runner`] with another default: where each case waits on the server's own
/// timing (a RabbitMQ claim that finds nothing waits 50 ms), fewer cases by default.
pub fn sequence_runner_of(default_cases: u32) -> proptest::test_runner::TestRunner {
    let cases: u32 = std::env::var("CLAIMBENCH_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 200,
        ..proptest::test_runner::Config::default()
    })
}

/// What a test asks the hot table, answered as a row of integers.
#[derive(Debug, Clone)]
pub enum Inspect {
    /// [claimed jobs that were not eligible (paused or inactive queue, future schedule),
    ///  eligible jobs still pending, pending jobs of paused or inactive queues,
    ///  pending jobs scheduled in the future]
    Eligibility,
    /// [lowest priority, highest priority] of these jobs.
    PriorityRange(Vec<i64>),
    /// [fetched or processing jobs of this queue]
    ActiveIn(&'static str),
    /// [id of one fetched job of this queue]
    OneFetchedIn(&'static str),
}

pub trait TestDb: Backend + Sized {
    /// The backend's name in test output and schema names.
    const NAME: &'static str;

    /// Whether the backend's production claim breaks ties in (priority, due time) by id,
    /// as the model does; when not, the model test generates states without ties.
    const TIES_BY_ID: bool = true;

    /// A backend on the test server in a schema named for the test; an unreachable
    /// server fails the test ([`reachable_or_fail`]).
    async fn open(test: &str) -> Self;

    /// Drops the test's schema (a failed test leaves it for inspection).
    async fn drop_schema(&self);

    /// Begins a transaction on `s` and claims `n` jobs with the production statement
    /// inside it, leaving the transaction open (its locks held). Returns the ids.
    async fn hold_claim(&self, s: &mut Self::Session, n: u32) -> HashSet<i64>;

    /// Makes `s` give up on a row lock after about 100 ms (MySQL: 1 s, its minimum), with
    /// the backend's lock-timeout error.
    async fn short_lock_timeout(&self, s: &mut Self::Session);

    /// Rolls back the transaction `hold_claim` left open.
    async fn roll_back(&self, s: &mut Self::Session);

    /// How `s` is known on the server, for `lock_waiting`.
    async fn identity(&self, s: &mut Self::Session, role: &str) -> String;

    /// Whether `probe` can lock `queue`'s row in `queues` at once (tried without waiting,
    /// then rolled back).
    async fn queue_row_is_free(&self, probe: &mut Self::Session, queue: &str) -> bool;

    /// Whether the connection with `identity` is waiting on a row lock now.
    async fn lock_waiting(&self, probe: &mut Self::Session, identity: &str) -> bool;

    async fn inspect(&self, s: &mut Self::Session, what: Inspect) -> Vec<i64>;

    /// The first column of the first row of `sql` (a query of the test schema's tables,
    /// written for both PostgreSQL and MySQL), as an integer.
    async fn count(&self, s: &mut Self::Session, sql: &str) -> i64;

    /// Runs `sql` (a statement on the test schema's tables) on `s`, committed.
    async fn exec(&self, s: &mut Self::Session, sql: &str);

    /// Whether an idle session of this test's schema holds a transaction with a snapshot
    /// open: what `faults.hold_snapshot_s` leaves while it holds.
    async fn snapshot_held(&self, probe: &mut Self::Session) -> bool;

    /// Makes three pending jobs older than the rest: a paused queue's 2 h ago, one of
    /// `open` at priority 0 3 h ago but scheduled an hour ahead, one of `open` at
    /// priority 5 1 h ago (the oldest eligible one).
    async fn age_jobs(&self, s: &mut Self::Session);

    /// Replaces the contents of `queues` and `jobs_hot` with `state` (times relative to
    /// the server's now), in one committed transaction. The schema must exist (`reset`).
    async fn load_state(&self, s: &mut Self::Session, state: &TableState);

    /// Begins a transaction on `s` that locks the hot rows `ids` (as a claim would) and
    /// leaves it open; `roll_back` ends it.
    async fn lock_rows(&self, s: &mut Self::Session, ids: &[i64]);

    /// As a user would: creates the test's schema (a MySQL database) if missing, with a
    /// table `user_data` of 3 rows, and no claimbench marker.
    async fn create_user_table(&self);

    /// Rows in the test schema's `user_data`, or `None` when the table is gone.
    async fn user_rows(&self) -> Option<i64>;

    /// After `after`, ends every worker connection of this backend from `killer`;
    /// resolves to how many it ended.
    fn kill_workers_after(
        &self,
        killer: Self::Session,
        after: Duration,
    ) -> tokio::task::JoinHandle<u64>;
}

/// The schema (PostgreSQL) or database (MySQL) a test works in: unique per test and
/// process, and within MySQL's 64 and PostgreSQL's 63 characters.
pub fn schema_for(test: &str) -> String {
    let hash = test.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    let short: String = test.chars().take(32).collect();
    format!(
        "cbtest_{short}_{:06x}_{}",
        hash & 0xff_ffff,
        std::process::id()
    )
}

/// `backend`, or a failed test when `reachable` is an error: the message names what
/// was unreachable and the variable that points the suite at another server.
pub fn reachable_or_fail<B, E: std::fmt::Display>(
    backend: B,
    reachable: Result<(), E>,
    what: &str,
    url_var: &str,
) -> B {
    match reachable {
        Ok(()) => backend,
        Err(e) => panic!(
            "{what} is not usable ({e}): start it, or point {url_var} at one (`bash .ci/run` starts PostgreSQL and MariaDB)"
        ),
    }
}

/// A workload from inline TOML; the fields a test does not care about get small defaults.
pub fn workload(population: &str, rest: &str) -> Workload {
    let text = format!(
        "name = \"test\"\nseed = 5\n[population]\n{population}\n{rest}\n{}",
        if rest.contains("[matrix]") {
            ""
        } else {
            "[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [10]\n[trial]\nduration_s = 1\n"
        }
    );
    Workload::parse(Path::new("inline.toml"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Held by every test that takes PostgreSQL advisory locks. `advisory` locks job ids,
/// and advisory locks belong to the database, not the schema: two such tests at once,
/// each in its own schema with ids from 1, would each see the other's locks as claims
/// in flight. A lock on a file, not a mutex: cargo-nextest runs each test in its own
/// process, where a mutex kept nothing apart (prove's `advisory` contention step once
/// saw another test's lock and failed in CI).
pub async fn advisory_keys() -> std::fs::File {
    let path = std::env::temp_dir().join("claimbench-tests-advisory-keys.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    tokio::task::spawn_blocking(move || {
        // Released when the file is closed, with the guard.
        file.lock()
            .unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
        file
    })
    .await
    .expect("the lock's thread")
}
