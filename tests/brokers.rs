//! Queues that are not tables, on a real server: the Redis Streams backend against a
//! `redis-server` each test starts (claimbench's embedded one, on its own port).
//!
//! What a delivery promises is checked step by step on the server (two consumers never
//! hold one entry; only the holder finishes it; the lease hands it back; a release and
//! a failure put it at the tail), and a whole run with faults checks the ledger against
//! the effects stream. A lock service beside a read-then-write is checked the same way:
//! its leases on their own, and a PostgreSQL claim that takes them.

mod common;

use claimbench::backend::any::AnyBackend;
use claimbench::backend::lock_service::LockService;
use claimbench::backend::{Backend, BackendError, ClaimedJob, DbTarget, FailOutcome, Session};
use claimbench::embedded::redis::EmbeddedRedis;
use claimbench::strategy::Strategy;
use claimbench::workload::Workload;
use std::path::Path;
use std::time::Duration;

fn streams() -> Strategy {
    Strategy::builtin_named("redis-streams").expect("shipped")
}

fn cas() -> Strategy {
    Strategy::builtin_named("redis-cas").expect("shipped")
}

fn workload(backlog: u64) -> Workload {
    workload_on(backlog, "redis-streams", "stream")
}

fn workload_on(backlog: u64, strategy: &str, layout: &str) -> Workload {
    let text = workload_text(backlog, strategy, layout);
    Workload::parse(Path::new("inline.toml"), &text).unwrap_or_else(|e| panic!("{e}"))
}

fn workload_text(backlog: u64, strategy: &str, layout: &str) -> String {
    format!(
        "name = \"t\"\nseed = 3\n[population]\nbacklog = {backlog}\npayload_bytes = 16\nqueues = [{{ name = \"a\", weight = 3 }}, {{ name = \"b\", weight = 1 }}]\n[handler]\nretry_delay_ms = 0\nmax_attempts = 2\n[matrix]\nbackends = [\"redis\"]\nstrategies = [\"{strategy}\"]\nindex_layouts = [\"{layout}\"]\nworkers = [2]\nbatch_sizes = [4]\n[trial]\nduration_s = 1\n"
    )
}

async fn backend(server: &EmbeddedRedis, prefix: &str) -> AnyBackend {
    let target = DbTarget::parse(&server.url()).unwrap();
    AnyBackend::new(&target, target.to_string(), prefix)
}

async fn claim<S: Session>(s: &mut S, batch: u32) -> Vec<ClaimedJob> {
    claim_with(s, &streams(), batch).await
}

async fn claim_with<S: Session>(s: &mut S, strategy: &Strategy, batch: u32) -> Vec<ClaimedJob> {
    let mut out = Vec::new();
    s.claim(strategy, batch, &mut out).await.unwrap();
    out
}

/// After 300 ms, `c` (which holds job 6) starts and heartbeats job 6; then a rescue with
/// a 200 ms lease: the ids it took back, sorted.
async fn rescue_all_idle_but_6<S: Session>(b: &AnyBackend, c: &mut S) -> Vec<i64> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.start(6, false, 9).await.unwrap().expect("C holds 6");
    assert!(c.heartbeat(6, 9).await.unwrap());
    let mut rescuer = b.connect("t-rescuer", "rescuer").await.unwrap();
    let mut rescued = rescuer.rescue(Duration::from_millis(200)).await.unwrap();
    rescued.sort_unstable();
    rescued
}

/// The priority each of jobs 1..=`jobs` drew, from its record on the records' model
/// under `prefix` (the sixth field of `version state owner attempts due priority …`).
async fn priorities(
    server: &EmbeddedRedis,
    prefix: &str,
    jobs: i64,
) -> std::collections::HashMap<i64, i32> {
    let client = redis::Client::open(server.url().as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let mut out = std::collections::HashMap::new();
    for job in 1..=jobs {
        let record: String = redis::cmd("HGET")
            .arg(format!("{prefix}:jobs"))
            .arg(job)
            .query_async(&mut c)
            .await
            .unwrap();
        out.insert(job, record.split('\t').nth(5).unwrap().parse().unwrap());
    }
    out
}

/// Only the holder of job 1 (`a`; `c` holds none of 1, 2) starts it, writes an owned
/// effect for it, heartbeats it with its own token and completes it, once.
async fn only_the_holder_finishes<S: Session>(a: &mut S, c: &mut S) {
    assert_eq!(c.start(1, false, 77).await.unwrap(), None);
    assert!(!c.complete(1).await.unwrap());
    let started = a.start(1, false, 77).await.unwrap().expect("A holds job 1");
    assert_eq!(a.start(1, false, 78).await.unwrap(), None, "started once");
    assert!(a.heartbeat(1, 77).await.unwrap());
    assert!(
        !a.heartbeat(1, 12).await.unwrap(),
        "another execution's token"
    );
    let fx = a.effect(1, 0, false, started, 77).await.unwrap();
    assert!(fx.owned && fx.finished_us >= started);
    assert!(!c.effect(2, 0, false, started, 5).await.unwrap().owned);
    assert!(a.complete(1).await.unwrap());
    assert!(!a.complete(1).await.unwrap(), "finished once");
}

fn ids(jobs: &[ClaimedJob]) -> Vec<i64> {
    jobs.iter().map(|j| j.id).collect()
}

/// A finished run of the binary: its folder (kept while this lives), stdout, run.json.
struct Ran {
    _dir: tempfile::TempDir,
    run_dir: std::path::PathBuf,
    stdout: String,
    run: serde_json::Value,
}

/// Runs the binary on the workload `text` (a shipped one, shortened), which must succeed.
fn run_shortened(name: &str, text: &str) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join(name);
    std::fs::write(&w, text).unwrap();
    let results = dir.path().join("results");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_claimbench"))
        .arg("run")
        .arg(&w)
        .arg("--results")
        .arg(&results)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let run = serde_json::from_slice(&std::fs::read(run_dir.join("run.json")).unwrap()).unwrap();
    Ran {
        _dir: dir,
        run_dir,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        run,
    }
}

/// The lock service of `server`, with the run's leases under `schema`.
fn lock_service(server: &EmbeddedRedis, schema: &str) -> LockService {
    let DbTarget::Redis(t) = DbTarget::parse(&server.url()).unwrap() else {
        panic!("a redis:// URL");
    };
    LockService::new(t, schema)
}

/// A lease is one worker's: another's take loses it; only its holder gives it back,
/// and not once it expired and another took it; clearing removes the run's leases and
/// no other key.
#[tokio::test]
async fn a_lease_is_one_workers_until_it_expires_and_only_its_holder_gives_it_back() {
    let server = EmbeddedRedis::start().unwrap();
    let service = lock_service(&server, "cbtest");
    service
        .reset(Some(Duration::from_millis(300)))
        .await
        .unwrap();
    let mut a = service.leases("t-a", "A").await.unwrap();
    let mut b = service.leases("t-b", "B").await.unwrap();
    let mut ids = vec![1, 2, 3];
    assert_eq!(a.take(&mut ids).await.unwrap(), 0);
    assert_eq!(ids, [1, 2, 3]);
    let mut ids = vec![3, 4];
    assert_eq!(b.take(&mut ids).await.unwrap(), 1, "3 is A's");
    assert_eq!(ids, [4]);
    assert_eq!(a.give_back(&[1, 4]).await.unwrap(), 1, "4 is B's");
    let mut ids = vec![1, 4];
    assert_eq!(
        b.take(&mut ids).await.unwrap(),
        1,
        "1 was given back; 4 is B's own"
    );
    assert_eq!(ids, [1]);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut ids = vec![2];
    assert_eq!(b.take(&mut ids).await.unwrap(), 0, "A's lease on 2 expired");
    assert_eq!(a.give_back(&[2, 3]).await.unwrap(), 0, "2 is B's now");
    let mut c = service.leases("t-c", "C").await.unwrap();
    let mut ids = vec![2, 3];
    assert_eq!(
        c.take(&mut ids).await.unwrap(),
        1,
        "B's lease on 2 survived A"
    );
    assert_eq!(ids, [3]);
    let client = redis::Client::open(server.url().as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("SET")
        .arg("theirs:lock:1")
        .arg("x")
        .query_async::<()>(&mut conn)
        .await
        .unwrap();
    assert_eq!(service.clear().await.unwrap(), 2, "B's 2 and C's 3");
    let kept: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(kept, ["theirs:lock:1"]);
}

/// The lock service's own Redis keeps nothing on disk: its restart (the
/// `faults.restart_lock_service_at_s` fault) forgets every lease, where the embedded
/// Redis of a redis backend reloads what it had.
#[tokio::test]
async fn a_restarted_lock_service_has_forgotten_every_lease() {
    for (server, kept) in [
        (EmbeddedRedis::start_volatile().unwrap(), false),
        (EmbeddedRedis::start().unwrap(), true),
    ] {
        let service = lock_service(&server, "cbtest");
        let mut a = service.leases("t-a", "A").await.unwrap();
        let mut ids = vec![1, 2];
        assert_eq!(a.take(&mut ids).await.unwrap(), 0);
        server.restart().unwrap();
        let mut b = service.leases("t-b", "B").await.unwrap();
        let mut ids = vec![1, 2];
        let refused = b.take(&mut ids).await.unwrap();
        assert_eq!(refused, if kept { 2 } else { 0 }, "kept: {kept}");
    }
}

/// On PostgreSQL and on MariaDB: two workers' lock-service claims are disjoint; a
/// worker that hangs past the lease loses its rows to the rescuer and its leases to the
/// next claim, which runs the job again (the duplicate the technique allows), and the
/// first worker's give-back leaves the new holder's lease in place.
#[tokio::test]
async fn a_lock_service_claim_runs_a_job_twice_once_a_lease_expires_under_its_worker() {
    use common::TestDb;
    let server = EmbeddedRedis::start().unwrap();
    let test = "lock_service_claim";
    let schema = common::schema_for(test);
    let b = claimbench::backend::postgres::PostgresBackend::open(test).await;
    let b = b.with_lock_service(lock_service(&server, &schema));
    lease_expiry_reruns(b, &server, &schema).await;
}

#[tokio::test]
async fn a_lock_service_claim_on_mariadb_runs_a_job_twice_once_a_lease_expires() {
    use common::TestDb;
    let server = EmbeddedRedis::start().unwrap();
    let test = "lock_service_claim_mysql";
    let schema = common::schema_for(test);
    let b = claimbench::backend::mysql::MysqlBackend::open(test).await;
    let b = b.with_lock_service(lock_service(&server, &schema));
    lease_expiry_reruns(b, &server, &schema).await;
}

/// See [`a_lock_service_claim_runs_a_job_twice_once_a_lease_expires_under_its_worker`].
async fn lease_expiry_reruns<B: common::TestDb>(b: B, server: &EmbeddedRedis, schema: &str) {
    let w = common::workload(
        "backlog = 6\nqueues = [{ name = \"q\" }]",
        "[faults]\nlease_s = 0.3\n",
    );
    assert_eq!(b.reset(&w, "fetch-order", 1).await.unwrap(), 6);
    let strategy = Strategy::builtin_named("lock-service").unwrap();
    let role = b.worker_role();
    let mut a = b.connect(&role, "A").await.unwrap();
    let mut c = b.connect(&role, "C").await.unwrap();
    let got_a = ids(&claim_with(&mut a, &strategy, 2).await);
    let got_c = ids(&claim_with(&mut c, &strategy, 2).await);
    assert_eq!(got_a.len(), 2);
    assert_eq!(got_c.len(), 2);
    assert!(
        got_a.iter().all(|j| !got_c.contains(j)),
        "{got_a:?} {got_c:?}"
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    let mut rescuer = b.connect("t-rescuer", "rescuer").await.unwrap();
    let mut rescued = rescuer.rescue(Duration::from_millis(300)).await.unwrap();
    rescued.sort_unstable();
    let mut all = [got_a.clone(), got_c.clone()].concat();
    all.sort_unstable();
    assert_eq!(rescued, all, "both workers' rows outlived the lease");
    let mut d = b.connect(&role, "D").await.unwrap();
    let got_d = ids(&claim_with(&mut d, &strategy, 6).await);
    assert!(
        got_a.iter().all(|j| got_d.contains(j)),
        "A's jobs claimed again: {got_d:?}"
    );
    assert!(!a.complete(got_a[0]).await.unwrap(), "the row is D's now");
    a.release(&got_a).await.unwrap();
    let client = redis::Client::open(server.url().as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let holder: Option<String> = redis::cmd("GET")
        .arg(format!("{schema}:lock:{}", got_a[0]))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(
        holder.as_deref().is_some_and(|h| h.starts_with("D:")),
        "A's give-back left D's lease: {holder:?}"
    );
    b.drop_schema().await;
}

#[tokio::test]
async fn a_delivery_is_one_consumers_until_it_is_finished_or_its_lease_runs_out() {
    let server = EmbeddedRedis::start().unwrap();
    let b = backend(&server, "cbtest").await;
    let w = workload(20);
    assert_eq!(b.reset(&w, "stream", 1).await.unwrap(), 20);
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let mut c = b.connect("t-worker", "C").await.unwrap();

    // Two consumers take disjoint batches, in arrival order.
    let got_a = claim(&mut a, 5).await;
    let got_c = claim(&mut c, 5).await;
    assert_eq!(ids(&got_a), vec![1, 2, 3, 4, 5]);
    assert_eq!(ids(&got_c), vec![6, 7, 8, 9, 10]);
    assert!(got_a.iter().all(|j| j.attempt == 0 && j.queue_wait_us >= 0));

    only_the_holder_finishes(&mut a, &mut c).await;

    // A failure goes to the tail as the next attempt; past max_attempts, to the dead.
    assert_eq!(
        a.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::Retried
    );
    // An unstarted release goes to the tail too, its attempt count unchanged.
    assert_eq!(a.release(&[3, 6]).await.unwrap(), vec![3], "6 is C's");
    let rest = claim(&mut c, 20).await;
    assert_eq!(
        ids(&rest),
        vec![11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 2, 3]
    );
    let retried = rest.iter().find(|j| j.id == 2).unwrap();
    assert_eq!(retried.attempt, 1);
    assert_eq!(
        c.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::DeadLettered
    );

    // The lease: A's idle deliveries (4, 5) go back to the tail as their next attempt;
    // C's, heartbeaten just before, stay C's.
    let rescued = rescue_all_idle_but_6(&b, &mut c).await;
    assert!(rescued.contains(&4) && rescued.contains(&5), "{rescued:?}");
    assert!(
        !rescued.contains(&6),
        "a heartbeat keeps the delivery: {rescued:?}"
    );
    assert!(!a.complete(4).await.unwrap(), "the lease took it from A");
    let again = claim(&mut a, 20).await;
    assert!(ids(&again).contains(&4));
    assert!(again.iter().filter(|j| j.id == 4).all(|j| j.attempt == 1));

    // Every job is somewhere, once.
    let r = b.reconcile().await.unwrap();
    assert_eq!(r.completed, 1);
    assert_eq!(r.dead_lettered, 1);
    assert_eq!(
        r.pending + r.fetched + r.processing + r.completed + r.dead_lettered,
        20,
        "{r:?}"
    );
    assert_eq!(r.effect_rows, 2);
    assert_eq!(r.unowned_executions, 1);
}

/// The key-value store's queue (layout hash-by-due, technique redis-cas): claims in due
/// order, the same ownership as a delivery, and a job put back goes to its place by due
/// time, not to a tail: a release and a rescue keep its due time, a retry is due now.
#[tokio::test]
async fn a_record_is_one_consumers_and_goes_back_to_its_place_by_due_time() {
    let server = EmbeddedRedis::start().unwrap();
    let b = backend(&server, "cbkv").await;
    let w = workload_on(20, "redis-cas", "hash-by-due");
    assert_eq!(b.reset(&w, "hash-by-due", 1).await.unwrap(), 20);
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let mut c = b.connect("t-worker", "C").await.unwrap();
    let got_a = claim_with(&mut a, &cas(), 5).await;
    let got_c = claim_with(&mut c, &cas(), 5).await;
    assert_eq!(ids(&got_a), vec![1, 2, 3, 4, 5]);
    assert_eq!(ids(&got_c), vec![6, 7, 8, 9, 10]);
    assert!(got_a.iter().all(|j| j.attempt == 0 && j.queue_wait_us >= 0));
    // A stream technique on these keys is refused, not run on the wrong model.
    let mut out = Vec::new();
    let e = c.claim(&streams(), 5, &mut out).await.unwrap_err();
    assert!(e.to_string().contains("runs on the layout `stream`"), "{e}");

    only_the_holder_finishes(&mut a, &mut c).await;

    // A retry is due now (behind every seeded job); a release keeps its place.
    assert_eq!(
        a.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::Retried
    );
    assert_eq!(a.release(&[3, 6]).await.unwrap(), vec![3], "6 is C's");
    let rest = claim_with(&mut c, &cas(), 20).await;
    assert_eq!(
        ids(&rest),
        vec![3, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 2]
    );
    assert_eq!(rest.iter().find(|j| j.id == 2).unwrap().attempt, 1);
    assert_eq!(
        c.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::DeadLettered
    );

    // The lease: every idle claim (A's 4 and 5, C's others) comes back as its next
    // attempt, in its place by due time again; C's 6, heartbeaten just before, stays.
    let rescued = rescue_all_idle_but_6(&b, &mut c).await;
    let idle: Vec<i64> = [3, 4, 5].into_iter().chain(7..=20).collect();
    assert_eq!(rescued, idle);
    assert!(!a.complete(4).await.unwrap(), "the lease took it from A");
    let again = claim_with(&mut a, &cas(), 3).await;
    assert_eq!(ids(&again), vec![3, 4, 5]);
    assert!(again.iter().all(|j| j.attempt == 1));

    let r = b.reconcile().await.unwrap();
    assert_eq!((r.completed, r.dead_lettered), (1, 1));
    assert_eq!(
        r.pending + r.fetched + r.processing + r.completed + r.dead_lettered,
        20,
        "{r:?}"
    );
    assert_eq!(r.effect_rows, 2);
}

/// A retry on the records' model waits for its delay (a stream would deliver it at
/// once, which is why a retry delay is refused there and accepted here): not claimed
/// before it is due, claimed as its next attempt after; the sampler sees no eligible job
/// meanwhile, yet work left.
#[tokio::test]
async fn a_retry_on_the_records_waits_for_its_delay() {
    let text = workload_text(2, "redis-cas", "hash-by-due").replace(
        "retry_delay_ms = 0\n",
        "retry_delay_ms = 400\nfailure_rate = 0.5\n",
    );
    let w = Workload::parse(Path::new("delay.toml"), &text)
        .expect("a retry delay is accepted on hash-by-due");
    let server = EmbeddedRedis::start().unwrap();
    let b = backend(&server, "cbdelay").await;
    assert_eq!(b.reset(&w, "hash-by-due", 1).await.unwrap(), 2);
    let mut a = b.connect("t-worker", "A").await.unwrap();
    assert_eq!(ids(&claim_with(&mut a, &cas(), 2).await), vec![1, 2]);
    assert!(a.complete(2).await.unwrap());
    assert_eq!(
        a.fail(1, Duration::from_millis(400), 3).await.unwrap(),
        FailOutcome::Retried
    );
    assert!(claim_with(&mut a, &cas(), 2).await.is_empty(), "held back");
    let held = a.sample(&w).await.unwrap();
    assert_eq!(held.oldest_pending_ms, None, "nothing is due yet");
    assert!(held.work_left);
    tokio::time::sleep(Duration::from_millis(450)).await;
    let again = claim_with(&mut a, &cas(), 2).await;
    assert_eq!(ids(&again), vec![1]);
    assert_eq!(again[0].attempt, 1);
    // On a stream the same workload is refused, naming the field.
    let streamed = workload_text(2, "redis-streams", "stream").replace(
        "retry_delay_ms = 0\n",
        "retry_delay_ms = 400\nfailure_rate = 0.5\n",
    );
    let e = Workload::parse(Path::new("delay.toml"), &streamed).unwrap_err();
    assert!(e.to_string().contains("handler.retry_delay_ms"), "{e}");
}

/// Scheduled jobs on the records' model: a share of the seeded backlog is due up to
/// `scheduled_within_s` ahead and is not claimed before it is due (a stream cannot hold
/// one back, so the same population is refused there).
#[tokio::test]
async fn scheduled_jobs_on_the_records_wait_until_they_are_due() {
    let scheduled = |strategy: &str, layout: &str| {
        workload_text(20, strategy, layout).replace(
            "payload_bytes = 16\n",
            "payload_bytes = 16\nscheduled_share = 0.5\nscheduled_within_s = 0.4\n",
        )
    };
    let text = scheduled("redis-cas", "hash-by-due");
    let w = Workload::parse(Path::new("s.toml"), &text).expect("accepted on hash-by-due");
    let server = EmbeddedRedis::start().unwrap();
    let b = backend(&server, "cbsched").await;
    assert_eq!(b.reset(&w, "hash-by-due", 1).await.unwrap(), 20);
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let now: Vec<i64> = ids(&claim_with(&mut a, &cas(), 20).await);
    assert!(
        !now.is_empty() && now.len() < 20,
        "only the unscheduled and the already due: {now:?}"
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    let mut all = now.clone();
    all.extend(ids(&claim_with(&mut a, &cas(), 20).await));
    all.sort_unstable();
    assert_eq!(all, (1..=20).collect::<Vec<i64>>(), "each once, when due");
    let e =
        Workload::parse(Path::new("s.toml"), &scheduled("redis-streams", "stream")).unwrap_err();
    assert!(e.to_string().contains("population.scheduled_share"), "{e}");
}

/// Priorities on the records' model: a claim takes the highest priority first, in due
/// order within it, as the production claim does (a stream has one order, arrival, so
/// the same population is refused there).
#[tokio::test]
async fn the_records_claim_the_highest_priority_first() {
    let prioritised = |strategy: &str, layout: &str| {
        workload_text(30, strategy, layout).replace(
            "payload_bytes = 16\n",
            "payload_bytes = 16\npriorities = [{ value = 0, weight = 2 }, { value = 5, weight = 1 }]\n",
        )
    };
    let w = Workload::parse(
        Path::new("p.toml"),
        &prioritised("redis-cas", "hash-by-due"),
    )
    .expect("accepted on hash-by-due");
    let server = EmbeddedRedis::start().unwrap();
    let b = backend(&server, "cbprio").await;
    assert_eq!(b.reset(&w, "hash-by-due", 1).await.unwrap(), 30);
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let mut order = Vec::new();
    loop {
        let got = ids(&claim_with(&mut a, &cas(), 4).await);
        if got.is_empty() {
            break;
        }
        order.extend(got);
    }
    assert_eq!(order.len(), 30, "every job once");
    // Each record (claimed, still there) says which priority its job drew.
    let priority_of = priorities(&server, "cbprio", 30).await;
    let high = order.iter().take_while(|j| priority_of[*j] == 5).count();
    let highs = priority_of.values().filter(|p| **p == 5).count();
    assert!(
        highs > 0 && highs < 30,
        "both priorities drawn: {priority_of:?}"
    );
    assert_eq!(
        high, highs,
        "every priority-5 job before any priority-0 one: {order:?}"
    );
    let within = |p: i32| -> Vec<i64> {
        order
            .iter()
            .copied()
            .filter(|j| priority_of[j] == p)
            .collect()
    };
    for p in [5, 0] {
        let mut sorted = within(p);
        sorted.sort_unstable();
        assert_eq!(
            within(p),
            sorted,
            "due order (one seed instant: by id) within {p}"
        );
    }
    let e =
        Workload::parse(Path::new("p.toml"), &prioritised("redis-streams", "stream")).unwrap_err();
    assert!(e.to_string().contains("population.priorities"), "{e}");
}

/// Workers that read the same head of the queue collide: each job is taken by one
/// compare-and-set, the others' writes rejected and counted as lost races.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_compare_and_sets_take_each_job_once_and_lose_races() {
    let server = EmbeddedRedis::start().unwrap();
    let b = std::sync::Arc::new(backend(&server, "cbrace").await);
    let w = workload_on(2000, "redis-cas", "hash-by-due");
    assert_eq!(b.reset(&w, "hash-by-due", 1).await.unwrap(), 2000);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let b = b.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = b.connect("t-worker", &format!("w{i}")).await.unwrap();
            let (mut taken, mut lost) = (Vec::new(), 0);
            loop {
                let mut out = Vec::new();
                let outcome = s.claim(&cas(), 10, &mut out).await.unwrap();
                lost += outcome.lost_races;
                if out.is_empty() && outcome.lost_races == 0 {
                    return (taken, lost);
                }
                taken.extend(ids(&out));
            }
        }));
    }
    let (mut all, mut lost) = (Vec::new(), 0);
    for t in tasks {
        let (taken, l) = t.await.unwrap();
        all.extend(taken);
        lost += l;
    }
    all.sort_unstable();
    assert_eq!(all, (1..=2000).collect::<Vec<i64>>(), "each job once");
    assert!(lost > 0, "eight workers at one head never collided");
    let r = b.reconcile().await.unwrap();
    assert_eq!((r.pending, r.fetched), (0, 2000), "{r:?}");
}

#[tokio::test]
async fn keys_claimbench_did_not_make_are_refused_and_survive() {
    let server = EmbeddedRedis::start().unwrap();
    let url = server.url();
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("SET")
        .arg("theirs:jobs")
        .arg("payroll")
        .query_async(&mut c)
        .await
        .unwrap();
    let b = backend(&server, "theirs").await;
    let e = b.reset(&workload(5), "stream", 1).await.unwrap_err();
    assert!(matches!(e, BackendError::ForeignSchema { .. }), "{e}");
    let kept: String = redis::cmd("GET")
        .arg("theirs:jobs")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(kept, "payroll");
    // Beside it, a prefix of claimbench's own is made, and made again.
    let ours = backend(&server, "ours").await;
    assert_eq!(ours.reset(&workload(5), "stream", 1).await.unwrap(), 5);
    assert_eq!(ours.reset(&workload(7), "stream", 1).await.unwrap(), 7);
    assert_eq!(ours.reconcile().await.unwrap().pending, 7);
}

/// A run of the binary with every fault a worker can meet (workloads/redis-streams-
/// faults.toml, its trial shortened from 9 s to 5 s, each fault twice as likely): the
/// ledger and the effects stream agree, nothing is lost, and the lease is what brings
/// stranded jobs back.
#[test]
fn a_run_with_faults_loses_nothing_and_its_ledger_agrees_with_the_effects() {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/redis-streams-faults.toml"),
    )
    .unwrap();
    let short = shipped
        .replace("duration_s = 9.0", "duration_s = 5.0")
        .replace(
            "kill_connections_at_s = [3.0, 6.0]",
            "kill_connections_at_s = [2.0, 4.0]",
        )
        .replace("abandon_rate = 0.002", "abandon_rate = 0.004")
        .replace(
            "crash_after_start_rate = 0.002",
            "crash_after_start_rate = 0.004",
        )
        .replace("hang_rate = 0.001", "hang_rate = 0.002");
    assert_eq!(
        short.matches("0.004").count() + short.matches("[2.0, 4.0]").count(),
        3,
        "workloads/redis-streams-faults.toml no longer has the lines this test shortens"
    );
    let Ran { run, .. } = run_shortened("faults.toml", &short);
    assert_eq!(run["environment"]["embedded"], true);
    let trial = &run["cells"][0]["trials"][0];
    let counts = &trial["counts"];
    assert!(
        counts["reconnects"].as_u64().unwrap() > 0,
        "kills reached workers"
    );
    assert!(counts["hangs"].as_u64().unwrap() + counts["abandoned"].as_u64().unwrap() > 0);
    assert!(
        trial["rescued_jobs"].as_u64().unwrap() > 0,
        "the lease rescued"
    );
    assert_eq!(trial["reconciliation"]["lost"], 0);
    let d = &trial["duplicates"];
    assert_eq!(d["ledger"]["duplicate_claims"], 0);
    common::assert_effects_within_the_ledgers_bounds(d);
    assert_eq!(
        d["effects_rows"], trial["reconciliation"]["db"]["effect_rows"],
        "one effects entry per run"
    );
}

/// workloads/alternatives.toml, shortened (table-or-broker.toml is its first two blocks
/// at two pools): each block runs on its own backend and layout, every one keeps every
/// job through the faults, and the verdict sets each Redis technique against the table.
#[test]
fn the_alternatives_scenario_runs_each_block_on_its_own_backend() {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/alternatives.toml"),
    )
    .unwrap();
    let short = shipped
        .replace("workers = [1, 4, 16]", "workers = [4]")
        .replace("batch_sizes = [1, 10]", "batch_sizes = [10]")
        .replace("duration_s = 5.0", "duration_s = 2.0")
        .replace(
            "kill_connections_at_s = [3.0]",
            "kill_connections_at_s = [1.5]",
        )
        .replace("restart_db_at_s = [4.5]", "restart_db_at_s = [2.0]")
        .replace(
            "restart_lock_service_at_s = [2.0]",
            "restart_lock_service_at_s = [1.2]",
        )
        .replace("backlog = 60000", "backlog = 10000");
    assert!(
        short.matches("workers = [4]\nbatch_sizes = [10]\n").count() == 6
            && short.contains("kill_connections_at_s = [1.5]")
            && short.contains("restart_db_at_s = [2.0]")
            && short.contains("restart_lock_service_at_s = [1.2]"),
        "workloads/alternatives.toml no longer has the lines this test shortens"
    );
    let Ran {
        _dir: _kept,
        run_dir,
        stdout,
        run,
    } = run_shortened("alternatives.toml", &short);
    let cells = run["cells"].as_array().unwrap();
    let on: Vec<(&str, &str, &str, &str)> = cells
        .iter()
        .map(|c| {
            (
                c["phase"].as_str().unwrap(),
                c["backend"].as_str().unwrap(),
                c["strategy"].as_str().unwrap(),
                c["index_layout"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        on,
        vec![
            ("table", "postgres", "production", "fetch-order"),
            ("lock", "postgres", "lock-service", "fetch-order"),
            ("stream", "redis", "redis-streams", "stream"),
            ("jetstream", "nats", "jetstream", "work-queue"),
            ("kv", "redis", "redis-cas", "hash-by-due"),
        ],
        "the rabbitmq block waits for its --db (if_db_given) and is left out"
    );
    for c in cells {
        let t = &c["trials"][0];
        assert_eq!(t["reconciliation"]["lost"], 0, "{}", c["strategy"]);
        let restarts = t["server_restarts"].as_array().map_or(0, Vec::len);
        assert_eq!(restarts, 1, "the server restarted once: {}", c["strategy"]);
        // Only the cell that takes leases has a lock service to lose.
        let lock_restarts = t["lock_service_restarts"].as_array().map_or(0, Vec::len);
        let leases = c["strategy"] == "lock-service";
        assert_eq!(lock_restarts, usize::from(leases), "{}", c["strategy"]);
        // JetStream delivers a job held past AckWait again by itself, while its
        // first worker still runs it; everywhere else a rescuer takes it back first.
        let redelivers = c["strategy"] == "jetstream";
        let dup_claims = t["duplicates"]["ledger"]["duplicate_claims"]
            .as_u64()
            .unwrap();
        let n = |k: &str| t["counts"][k].as_u64().unwrap();
        let held_past = n("hangs") + n("crashed_after_start") + n("stranded_by_loss");
        assert!(
            dup_claims == 0 || (redelivers && held_past > 0),
            "{}: {dup_claims} duplicate claims, {held_past} jobs held past the lease",
            c["strategy"]
        );
        assert!(t["completed_per_s"].as_f64().unwrap() > 0.0);
    }
    for (technique, on) in [
        ("redis-streams", "redis"),
        ("jetstream", "nats"),
        ("redis-cas", "redis"),
        ("lock-service", "postgres"),
    ] {
        let said =
            format!("{technique} on {on} against production on postgres, 4 workers at batch 10:");
        assert!(stdout.contains(&said), "{stdout}");
    }
    // Each backend its own plots; none of a figure a stream cannot fill.
    let plots = |b: &str, name: &str| run_dir.join("plots").join(b).join(name).exists();
    for name in ["lock_wait_vs_workers.png", "production_heatmap.png"] {
        assert!(plots("postgres", name) && !plots("redis", name), "{name}");
    }
    assert!(plots("redis", "throughput_vs_workers.png"));
    assert!(
        run_dir.join("plots/throughput_by_backend.png").exists(),
        "every backend on one set of axes"
    );
    assert!(
        stdout.contains("appendfsync no"),
        "the durability note names Redis's: {stdout}"
    );
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("lock service restarted empty at 1.2 s"),
        "{summary}"
    );
}

/// A trial shorter than the sampler's period still ends with two readings, its start
/// and its end: the sampler reads once more as the trial stops (a slow sample on a loaded
/// host stretches the period the same way).
#[test]
fn a_trial_shorter_than_the_sampling_period_has_its_closing_reading() {
    let text = workload_text(2000, "redis-streams", "stream").replace(
        "duration_s = 1\n",
        "duration_s = 1\nsample_interval_ms = 5000\n",
    );
    let Ran { run, .. } = run_shortened("short.toml", &text);
    let t = &run["cells"][0]["trials"][0];
    let series = t["oldest_pending"]["series"].as_array().unwrap();
    let at: Vec<f64> = series.iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert_eq!(at.len(), 2, "{at:?}");
    assert!(at[0] < 0.5 && at[1] >= 1.0, "the start and the end: {at:?}");
}

/// A redis:// password reaches no output: not when the server refuses it, not when
/// nothing listens.
#[test]
fn no_redis_password_reaches_any_output() {
    let server = EmbeddedRedis::start().unwrap();
    let port = server
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/0")
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("tiny.toml");
    std::fs::write(
        &w,
        "name = \"tiny\"\n[population]\nbacklog = 50\nqueues = [{ name = \"q\" }]\n[handler]\nretry_delay_ms = 0\n\
         [matrix]\nbackends = [\"redis\"]\nstrategies = [\"redis-streams\"]\nindex_layouts = [\"stream\"]\n\
         workers = [1]\nbatch_sizes = [5]\n[trial]\nwarmup_s = 0\nduration_s = 0.3\n",
    )
    .unwrap();
    let secret = "S3cr3tRedisPw";
    for at in [port.as_str(), "1"] {
        let url = format!("redis://app:{secret}@127.0.0.1:{at}/0");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_claimbench"))
            .args([
                "run",
                w.to_str().unwrap(),
                "--db",
                &url,
                "--quiet",
                "--results",
            ])
            .arg(dir.path().join("results"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{url}: the server has no such user");
        assert!(stderr.contains("redis://app@127.0.0.1"), "{stderr}");
        for shown in [&stderr, &String::from_utf8_lossy(&out.stdout)] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}

/// Each Redis model's lifecycle against a model of it, on generated sequences of
/// operations by three consumers on the real server: which jobs a claim takes and in what
/// order, who may start, finish, fail or release a job, where a failed, released or
/// rescued job goes (with which attempt: the stream's tail; the records' place by due
/// time, a retry due now), and where every job ends.
mod model {
    use super::*;
    use proptest::prelude::{Just, prop_assert_eq, prop_oneof};
    use proptest::strategy::Strategy as Generate;
    use proptest::test_runner::TestCaseError;

    const JOBS: i64 = 12;
    const MAX_ATTEMPTS: u32 = 3;

    #[derive(Debug, Clone)]
    enum Op {
        Claim(usize, u32),
        Start(usize, i64),
        Complete(usize, i64),
        Fail(usize, i64),
        Release(usize),
        Rescue,
    }

    fn op() -> impl Generate<Value = Op> {
        let c = 0..3usize;
        let job = 1..=JOBS;
        prop_oneof![
            3 => (c.clone(), 1..5u32).prop_map(|(c, n)| Op::Claim(c, n)),
            2 => (c.clone(), job.clone()).prop_map(|(c, j)| Op::Start(c, j)),
            2 => (c.clone(), job.clone()).prop_map(|(c, j)| Op::Complete(c, j)),
            1 => (c.clone(), job).prop_map(|(c, j)| Op::Fail(c, j)),
            1 => c.prop_map(Op::Release),
            1 => Just(Op::Rescue),
        ]
    }

    /// One job waiting or held: its place in the claim order (a stream's entry order; a
    /// record's due time, ties by id, within its job's priority), its job, the attempts
    /// made before it, who holds it and whether that holder started it.
    #[derive(Debug, Clone)]
    struct Entry {
        seq: u64,
        job: i64,
        attempt: i32,
        holder: Option<usize>,
        started: bool,
    }

    #[derive(Debug, Default)]
    struct Model {
        /// A job released or rescued keeps its place (the records' model); else it goes
        /// to the tail (a stream). A retry goes last on both: it is due now.
        keeps_place: bool,
        /// Each job's priority, as its seed drew it (a stream's: all 0); a job keeps it
        /// through every retry, release and rescue.
        priority: std::collections::HashMap<i64, i32>,
        next: u64,
        entries: Vec<Entry>,
        done: Vec<i64>,
        dead: Vec<i64>,
    }

    impl Model {
        fn new(keeps_place: bool, priority: std::collections::HashMap<i64, i32>) -> Model {
            let mut m = Model {
                keeps_place,
                priority,
                ..Model::default()
            };
            for job in 1..=JOBS {
                m.add(job, 0);
            }
            m
        }

        fn add(&mut self, job: i64, attempt: i32) {
            self.next += 1;
            self.entries.push(Entry {
                seq: self.next,
                job,
                attempt,
                holder: None,
                started: false,
            });
        }

        fn held(&self, c: usize, job: i64) -> Option<usize> {
            self.entries
                .iter()
                .position(|e| e.job == job && e.holder == Some(c))
        }

        /// The first `n` jobs nobody holds, in claim order: the highest priority first.
        fn claim(&mut self, c: usize, n: u32) -> Vec<(i64, i32)> {
            let priority = &self.priority;
            self.entries.sort_by_key(|e| {
                let p = priority.get(&e.job).copied().unwrap_or(0);
                (std::cmp::Reverse(p), e.seq, e.job)
            });
            let mut out = Vec::new();
            for e in self
                .entries
                .iter_mut()
                .filter(|e| e.holder.is_none())
                .take(n as usize)
            {
                e.holder = Some(c);
                out.push((e.job, e.attempt));
            }
            out
        }

        /// Puts entry `i` back as `attempt`: in its place where the model keeps it and
        /// `back` (a release, a rescue), else at the tail.
        fn requeue(&mut self, i: usize, attempt: i32, back: bool) {
            if back && self.keeps_place {
                let e = &mut self.entries[i];
                (e.attempt, e.holder, e.started) = (attempt, None, false);
            } else {
                let e = self.entries.remove(i);
                self.add(e.job, attempt);
            }
        }
    }

    fn token(c: usize) -> i64 {
        100 + c as i64
    }

    async fn apply<S: Session>(
        strategy: &Strategy,
        op: &Op,
        m: &mut Model,
        sessions: &mut [S],
        rescuer: &mut S,
    ) -> Result<(), TestCaseError> {
        match *op {
            Op::Claim(c, n) => {
                let got: Vec<(i64, i32)> = claim_with(&mut sessions[c], strategy, n)
                    .await
                    .iter()
                    .map(|j| (j.id, j.attempt))
                    .collect();
                prop_assert_eq!(got, m.claim(c, n), "{:?}", op);
            }
            Op::Start(c, job) => {
                let started = sessions[c].start(job, false, token(c)).await.unwrap();
                let expect = match m.held(c, job) {
                    Some(i) if !m.entries[i].started => {
                        m.entries[i].started = true;
                        true
                    }
                    _ => false,
                };
                prop_assert_eq!(started.is_some(), expect, "{:?}", op);
            }
            Op::Complete(c, job) => {
                let done = sessions[c].complete(job).await.unwrap();
                let expect = m.held(c, job).map(|i| m.entries.remove(i)).is_some();
                if expect {
                    m.done.push(job);
                }
                prop_assert_eq!(done, expect, "{:?}", op);
            }
            Op::Fail(c, job) => {
                let got = sessions[c]
                    .fail(job, Duration::ZERO, MAX_ATTEMPTS)
                    .await
                    .unwrap();
                let expect = match m.held(c, job) {
                    None => FailOutcome::NotOwned,
                    Some(i) if m.entries[i].attempt + 1 >= MAX_ATTEMPTS as i32 => {
                        m.entries.remove(i);
                        m.dead.push(job);
                        FailOutcome::DeadLettered
                    }
                    Some(i) => {
                        let next = m.entries[i].attempt + 1;
                        m.requeue(i, next, false);
                        FailOutcome::Retried
                    }
                };
                prop_assert_eq!(got, expect, "{:?}", op);
            }
            Op::Release(c) => {
                let mine: Vec<i64> = m
                    .entries
                    .iter()
                    .filter(|e| e.holder == Some(c))
                    .map(|e| e.job)
                    .collect();
                let got = sessions[c].release(&mine).await.unwrap();
                let mut expect = Vec::new();
                for job in mine {
                    let i = m.held(c, job).expect("listed as held");
                    if !m.entries[i].started {
                        let attempt = m.entries[i].attempt;
                        m.requeue(i, attempt, true);
                        expect.push(job);
                    }
                }
                prop_assert_eq!(got, expect, "{:?}", op);
            }
            Op::Rescue => {
                // Every delivery is idle past a 1 ms lease after this pause.
                tokio::time::sleep(Duration::from_millis(5)).await;
                let got = rescuer.rescue(Duration::from_millis(1)).await.unwrap();
                let mut expect = Vec::new();
                while let Some(i) = m.entries.iter().position(|e| e.holder.is_some()) {
                    let (job, attempt) = (m.entries[i].job, m.entries[i].attempt);
                    m.requeue(i, attempt + 1, true);
                    expect.push(job);
                }
                // The stream's XAUTOCLAIM scans in entry order, the records' in lease
                // order: the same set either way.
                let (mut got, mut expect) = (got, expect);
                got.sort_unstable();
                expect.sort_unstable();
                prop_assert_eq!(got, expect, "{:?}", op);
            }
        }
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_streams_lifecycle_matches_its_model_on_generated_sequences() {
        matches_its_model(streams(), "stream", false).await;
    }

    /// With two priorities: the claim's order and every way back to pending keep each
    /// job's priority.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_records_lifecycle_matches_its_model_on_generated_sequences() {
        matches_its_model(cas(), "hash-by-due", true).await;
    }

    async fn matches_its_model(strategy: Strategy, layout: &str, keeps_place: bool) {
        let server = EmbeddedRedis::start().unwrap();
        let b = backend(&server, "cbmodel").await;
        let mut text = workload_text(JOBS as u64, strategy.as_str(), layout);
        if keeps_place {
            text = text.replace(
                "payload_bytes = 16\n",
                "payload_bytes = 16\npriorities = [{ value = 0 }, { value = 3 }]\n",
            );
        }
        let w = Workload::parse(Path::new("model.toml"), &text).unwrap();
        // Each job's priority as the seed drew it: the same every reset (seed 1).
        b.reset(&w, layout, 1).await.unwrap();
        let mut priority = std::collections::HashMap::new();
        if keeps_place {
            priority = priorities(&server, "cbmodel", JOBS).await;
            assert!(
                priority.values().any(|p| *p == 3) && priority.values().any(|p| *p == 0),
                "both priorities drawn: {priority:?}"
            );
        }
        let mut runner = common::sequence_runner();
        let rt = tokio::runtime::Handle::current();
        let result = tokio::task::block_in_place(|| {
            runner.run(&proptest::collection::vec(op(), 1..40), |ops| {
                rt.block_on(async {
                    b.reset(&w, layout, 1).await.unwrap();
                    let mut sessions = Vec::new();
                    for c in 0..3 {
                        sessions.push(b.connect("t-worker", &format!("c{c}")).await.unwrap());
                    }
                    let mut rescuer = b.connect("t-rescuer", "rescuer").await.unwrap();
                    let mut m = Model::new(keeps_place, priority.clone());
                    for op in &ops {
                        apply(&strategy, op, &mut m, &mut sessions, &mut rescuer).await?;
                    }
                    let r = b.reconcile().await.unwrap();
                    let held = m.entries.iter().filter(|e| e.holder.is_some());
                    let started = held.clone().filter(|e| e.started).count() as i64;
                    prop_assert_eq!(r.completed, m.done.len() as i64);
                    prop_assert_eq!(r.dead_lettered, m.dead.len() as i64);
                    prop_assert_eq!(r.processing, started);
                    prop_assert_eq!(r.fetched, held.count() as i64 - started);
                    prop_assert_eq!(
                        r.pending,
                        m.entries.iter().filter(|e| e.holder.is_none()).count() as i64
                    );
                    Ok(())
                })
            })
        });
        if let Err(e) = result {
            panic!("the {layout} lifecycle left its model: {e}");
        }
    }
}
