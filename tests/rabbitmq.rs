//! RabbitMQ, on a real server: the `rabbitmq` backend against the machine's RabbitMQ
//! (`CLAIMBENCH_AMQP_URL`, else `amqp://guest:guest@127.0.0.1:5672/%2f`; claimbench
//! starts no node of its own). Each test works under a schema of its own.
//!
//! What a delivery promises is checked step by step on the server (two consumers never
//! hold one message; a consumer is handed no more than its prefetch; only the holder
//! finishes it; a lost connection hands it back at once, a hung handler never; the last
//! attempt is dead-lettered), the lifecycle against a model on generated sequences, and
//! a whole run checks the ledger against the effects queue through hangs, crashes and
//! killed connections.

mod common;

use claimbench::backend::any::AnyBackend;
use claimbench::backend::{Backend, ClaimedJob, DbTarget, FailOutcome, Session};
use claimbench::strategy::Strategy;
use claimbench::workload::Workload;
use std::path::Path;
use std::time::Duration;

fn url() -> String {
    std::env::var("CLAIMBENCH_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

fn rabbitmq() -> Strategy {
    Strategy::builtin_named("rabbitmq").expect("shipped")
}

/// A workload of `backlog` jobs in two queues, each run at most `max_attempts` times.
fn workload(backlog: u64, max_attempts: u32) -> Workload {
    let text = format!(
        "name = \"t\"\nseed = 3\n[population]\nbacklog = {backlog}\npayload_bytes = 16\nqueues = [{{ name = \"a\", weight = 3 }}, {{ name = \"b\", weight = 1 }}]\n[handler]\nretry_delay_ms = 0\nmax_attempts = {max_attempts}\n[faults]\nlease_s = 0.3\n[matrix]\nbackends = [\"rabbitmq\"]\nstrategies = [\"rabbitmq\"]\nindex_layouts = [\"classic-queue\"]\nworkers = [2]\nbatch_sizes = [4]\n[trial]\nduration_s = 1\n"
    );
    Workload::parse(Path::new("inline.toml"), &text).unwrap_or_else(|e| panic!("{e}"))
}

fn backend(schema: &str) -> AnyBackend {
    let target = DbTarget::parse(&url()).unwrap();
    AnyBackend::new(&target, target.to_string(), schema)
}

async fn claim<S: Session>(s: &mut S, batch: u32) -> Vec<ClaimedJob> {
    let mut out = Vec::new();
    s.claim(&rabbitmq(), batch, &mut out).await.unwrap();
    out
}

/// Claims until `n` are in hand or a claim comes back empty: the server pushes a
/// consumer's prefetch as it likes, and a claim takes only what has arrived.
async fn claim_up_to<S: Session>(s: &mut S, batch: u32, n: usize) -> Vec<ClaimedJob> {
    let mut all = Vec::new();
    while all.len() < n {
        let got = claim(s, batch).await;
        if got.is_empty() {
            break;
        }
        all.extend(got);
    }
    all
}

fn ids(jobs: &[ClaimedJob]) -> Vec<i64> {
    let mut ids: Vec<i64> = jobs.iter().map(|j| j.id).collect();
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn a_delivery_is_one_consumers_until_it_is_acknowledged_or_its_connection_closes() {
    let b = backend("cbrmq_steps");
    let w = workload(20, 2);
    assert_eq!(b.reset(&w, "classic-queue", 1).await.unwrap(), 20);
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let mut c = b.connect("t-worker", "C").await.unwrap();

    // A consumer is handed its prefetch (the batch) and no more until it acknowledges;
    // two consumers hold disjoint messages, the first in arrival order.
    let got_a = claim_up_to(&mut a, 5, 20).await;
    assert_eq!(ids(&got_a), vec![1, 2, 3, 4, 5], "the prefetch bounds A");
    let got_c = claim_up_to(&mut c, 5, 20).await;
    assert_eq!(got_c.len(), 5, "{got_c:?}");
    assert!(ids(&got_c).iter().all(|id| *id > 5));
    assert!(got_a.iter().all(|j| j.attempt == 0 && j.queue_wait_us >= 0));

    // Only the holder starts, writes an owned effect and finishes; a heartbeat has
    // nothing to extend.
    let c1 = ids(&got_c)[0];
    assert_eq!(c.start(1, false, 77).await.unwrap(), None);
    assert!(!c.complete(1).await.unwrap());
    let started = a.start(1, false, 77).await.unwrap().expect("A holds job 1");
    assert_eq!(a.start(1, false, 78).await.unwrap(), None, "started once");
    assert!(a.heartbeat(1, 77).await.unwrap());
    assert!(!a.heartbeat(1, 12).await.unwrap(), "another execution's");
    let fx = a.effect(1, 0, false, started, 77).await.unwrap();
    assert!(fx.owned && fx.finished_us >= started);
    assert!(!c.effect(2, 0, false, started, 5).await.unwrap().owned);
    assert!(a.complete(1).await.unwrap());
    assert!(!a.complete(1).await.unwrap(), "finished once");
    let by_queue = b.completed_by_queue(0, i64::MAX).await.unwrap();
    assert!(
        matches!(&by_queue[..], [(q, 1)] if q == "a" || q == "b"),
        "{by_queue:?}"
    );

    // A failure comes back as the next attempt; at max_attempts it is dead. A release
    // comes back as the same attempt; another consumer's delivery is not released.
    assert_eq!(
        a.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::Retried
    );
    assert_eq!(a.release(&[3, c1]).await.unwrap(), vec![3], "{c1} is C's");

    // No visibility timeout: C's deliveries, idle for longer than the lease, stay C's.
    // A's consumer keeps its prefetch of 5 while it holds jobs, and is handed again as
    // many as it finished or gave back (3); a new consumer D takes the rest.
    let mut d = b.connect("t-worker", "D").await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let to_a = claim_up_to(&mut a, 20, 40).await;
    assert_eq!(to_a.len(), 3, "{to_a:?}");
    let to_d = claim_up_to(&mut d, 20, 40).await;
    let rest: Vec<ClaimedJob> = to_a.iter().chain(&to_d).copied().collect();
    assert_eq!(rest.len(), 12, "3, 11 to 20 and the retry of 2: {rest:?}");
    assert!(
        !ids(&rest).iter().any(|id| ids(&got_c).contains(id)),
        "{rest:?}"
    );
    assert!(
        rest.iter().any(|j| j.id == 2 && j.attempt == 1),
        "the retry, as attempt 1: {rest:?}"
    );
    assert!(rest.iter().any(|j| j.id == 3 && j.attempt == 0), "{rest:?}");
    let holder = match to_a.iter().any(|j| j.id == 2) {
        true => &mut a,
        false => &mut d,
    };
    assert_eq!(
        holder.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::DeadLettered
    );

    // A lost connection hands its deliveries back at once, as they were: D, which has
    // room, is handed them.
    drop(c);
    let mut back = Vec::new();
    for _ in 0..40 {
        back.extend(claim(&mut d, 20).await);
        if ids(&got_c)
            .iter()
            .all(|id| back.iter().any(|j| j.id == *id))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    for id in ids(&got_c) {
        assert!(
            back.iter().any(|j| j.id == id && j.attempt == 0),
            "{id}: {back:?}"
        );
    }

    // Every job is somewhere, once: 1 completed, 2 dead, the rest in the queue once A's
    // connections have closed.
    drop((a, d));
    let r = b.reconcile().await.unwrap();
    assert_eq!((r.completed, r.dead_lettered), (1, 1), "{r:?}");
    assert_eq!(r.pending + r.fetched + r.processing, 18, "{r:?}");
    assert_eq!((r.effect_rows, r.unowned_executions), (2, 1), "{r:?}");
}

/// With priorities, the queue is a priority queue (`x-max-priority`, one level per
/// priority, in order): a consumer is handed the higher priority's jobs first, and a
/// retry keeps its job's level.
#[tokio::test]
async fn a_priority_queue_hands_out_the_higher_priority_first() {
    let b = backend("cbrmq_priority");
    let text = "name = \"t\"\nseed = 5\n[population]\nbacklog = 30\npayload_bytes = 8\nqueues = [{ name = \"low\", priority = -3 }, { name = \"high\", priority = 7 }]\n[handler]\nretry_delay_ms = 0\nmax_attempts = 3\n[matrix]\nbackends = [\"rabbitmq\"]\nstrategies = [\"rabbitmq\"]\nindex_layouts = [\"classic-queue\"]\nworkers = [1]\nbatch_sizes = [30]\n[trial]\nduration_s = 1\n";
    let w = Workload::parse(Path::new("inline.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    b.reset(&w, "classic-queue", 1).await.unwrap();
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let got = claim_up_to(&mut a, 30, 30).await;
    assert_eq!(got.len(), 30);
    // The order the completions record the queues in is the order of the claim.
    let mut queues = Vec::new();
    let mut seen: std::collections::BTreeMap<String, i64> = Default::default();
    for j in &got {
        assert!(a.complete(j.id).await.unwrap());
        for (q, n) in b.completed_by_queue(0, i64::MAX).await.unwrap() {
            if seen.get(&q) != Some(&n) {
                queues.push(q.clone());
                seen.insert(q, n);
            }
        }
    }
    let first_low = queues.iter().position(|q| q == "low").expect("some low");
    assert!(first_low > 0, "{queues:?}");
    assert!(
        queues[first_low..].iter().all(|q| q == "low"),
        "every high before any low: {queues:?}"
    );
}

/// The sampler reads the head message's age and puts it back where it was.
#[tokio::test]
async fn the_sampler_reads_the_oldest_message_and_leaves_it_in_place() {
    let b = backend("cbrmq_sample");
    let w = workload(3, 2);
    b.reset(&w, "classic-queue", 1).await.unwrap();
    let mut s = b.connect("t-sampler", "S").await.unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let sample = s.sample(&w).await.unwrap();
    assert!(sample.work_left);
    assert!(
        sample.oldest_pending_ms.is_some_and(|ms| ms >= 30.0),
        "{sample:?}"
    );
    let mut a = b.connect("t-worker", "A").await.unwrap();
    assert_eq!(ids(&claim_up_to(&mut a, 3, 3).await), vec![1, 2, 3]);
    let empty = s.sample(&w).await.unwrap();
    assert!(
        !empty.work_left && empty.oldest_pending_ms.is_none(),
        "{empty:?}"
    );
}

#[tokio::test]
async fn queues_claimbench_did_not_make_are_refused_and_survive() {
    let b = backend("cbrmq_theirs");
    // Someone else's queue under the name claimbench would use, without its marker.
    let conn = lapin::Connection::connect(
        &url(),
        lapin::ConnectionProperties::default()
            .with_executor(tokio_executor_trait::Tokio::current())
            .with_reactor(tokio_reactor_trait::Tokio),
    )
    .await
    .unwrap();
    let ch = conn.create_channel().await.unwrap();
    let durable = lapin::options::QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    let (_, _) = (
        ch.queue_delete("cbrmq_theirs_claimbench", Default::default())
            .await,
        ch.queue_delete("cbrmq_theirs_jobs", Default::default())
            .await,
    );
    ch.queue_declare("cbrmq_theirs_jobs", durable, Default::default())
        .await
        .unwrap();
    ch.basic_publish(
        "",
        "cbrmq_theirs_jobs",
        Default::default(),
        b"keep me",
        Default::default(),
    )
    .await
    .unwrap();
    let e = b
        .reset(&workload(5, 2), "classic-queue", 1)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("refusing to drop and recreate"), "{e}");
    let q = ch
        .queue_declare(
            "cbrmq_theirs_jobs",
            lapin::options::QueueDeclareOptions {
                passive: true,
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(q.message_count(), 1);
    ch.queue_delete("cbrmq_theirs_jobs", Default::default())
        .await
        .unwrap();
}

/// A run of the binary on `text`: its output and run.json.
fn run(text: &str, extra: &[&str]) -> (std::process::Output, Option<serde_json::Value>) {
    let (out, run, _) = common::run_text(text, extra, "claimbench-");
    (out, run)
}

const FAULTS: &str = r#"name = "rmq-faults"
seed = 3
[population]
backlog = 3000
payload_bytes = 64
queues = [{ name = "default" }]
[handler]
mode = "full"
duration = { dist = "exponential", mean_ms = 1.0 }
failure_rate = 0.05
max_attempts = 3
retry_delay_ms = 0
heartbeat_ms = 200
[faults]
lease_s = 0.5
hang_rate = 0.004
hang_s = 0.8
crash_after_start_rate = 0.005
kill_connections_at_s = [1.2]
[matrix]
backends = ["rabbitmq"]
strategies = ["rabbitmq"]
index_layouts = ["classic-queue"]
workers = [4]
batch_sizes = [10]
[trial]
warmup_s = 0.3
duration_s = 2.0
"#;

/// Hangs past the lease run once (no visibility timeout: the job stays its worker's);
/// a crashed worker's connection closes with it, and its deliveries and the killed
/// connections' come back at once and run again,
/// which the ledger counts as the technique's own duplicate claims, the effects queue
/// agrees on the executions, and no job is lost.
#[test]
fn killed_connections_hand_deliveries_back_and_nothing_is_lost() {
    let schema = "cbrmq_run";
    let (out, run) = run(FAULTS, &["--db", &url(), "--schema", schema, "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let run = run.unwrap();
    assert_eq!(run["environment"]["embedded"], false);
    let t = &run["cells"][0]["trials"][0];
    assert!(
        t["counts"]["hangs"].as_u64().unwrap() > 0,
        "{}",
        t["counts"]
    );
    assert_eq!(t["connection_kills"][0]["connections"], 4, "{t}");
    assert_eq!(t["reconciliation"]["lost"], 0, "{}", t["reconciliation"]);
    // A crashed worker's connection ends with it: the worker reconnects as its
    // replacement, beside the four the kill ended.
    let n = |v: &serde_json::Value| v.as_i64().unwrap();
    let c = &t["counts"];
    assert!(n(&c["crashed_after_start"]) > 0, "{c}");
    assert!(n(&c["reconnects"]) > 4, "{c}");
    common::assert_effects_within_the_ledgers_bounds(&t["duplicates"]);
    let warnings = t["warnings"].to_string();
    assert!(!warnings.contains("duplicate"), "{warnings}");
    assert!(!stderr.contains("guest:guest"), "{stderr}");
}

#[test]
fn a_sql_claim_a_retry_delay_and_an_unreachable_server_are_refused_clearly() {
    let text = FAULTS.replace(
        "strategies = [\"rabbitmq\"]",
        "strategies = [\"production\"]",
    );
    let (out, _) = run(&text, &["--db", &url()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("production") && stderr.contains("rabbitmq"),
        "{stderr}"
    );

    let text = FAULTS.replace("retry_delay_ms = 0", "retry_delay_ms = 100");
    let (out, _) = run(&text, &["--db", &url()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("handler.retry_delay_ms") && stderr.contains("rabbitmq"),
        "{stderr}"
    );

    let (out, _) = run(FAULTS, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--db amqp://"), "{stderr}");

    let secret = "S3cr3tRabbitPw";
    let (out, _) = run(
        FAULTS,
        &[
            "--db",
            &format!("amqp://app:{secret}@127.0.0.1:1/%2f"),
            "--quiet",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("amqp://app@127.0.0.1:1"), "{stderr}");
    assert!(stderr.contains("RabbitMQ server"), "{stderr}");
    for shown in [&stderr, &String::from_utf8_lossy(&out.stdout)] {
        assert!(!shown.contains(secret), "{shown}");
    }
}

/// The RabbitMQ lifecycle against a model of it, on generated sequences of operations
/// by three workers on the real server. The server pushes a consumer's prefetch when it
/// likes, so the model checks what each claim returns rather than predicting it: only
/// jobs no other worker holds, at the attempt the model counts (failures, not
/// deliveries: a release or a lost connection hands a job back as it was), never more
/// in one worker's hands than its prefetch (its first claim's batch, until it holds
/// nothing and claims another); who may start, finish, fail or release a job, when a
/// failure is the last attempt, and where every job ends, each left once in the queue.
mod model {
    use super::*;
    use proptest::prelude::{prop_assert, prop_assert_eq, prop_oneof};
    use proptest::strategy::Strategy as Generate;
    use proptest::test_runner::TestCaseError;
    use std::collections::BTreeMap;

    const JOBS: i64 = 8;
    const MAX_ATTEMPTS: u32 = 2;
    const WORKERS: usize = 3;

    /// A step's job: mostly one the worker holds (`pick` chooses among them), now and
    /// then any job by id, held by another worker or finished.
    #[derive(Debug, Clone)]
    enum Op {
        Claim(usize, u32),
        Start(usize, i64),
        Complete(usize, i64),
        Fail(usize, i64),
        Release(usize),
        /// The worker's connection is lost; it connects again.
        Reconnect(usize),
    }

    fn op() -> impl Generate<Value = Op> {
        let c = 0..WORKERS;
        let job = 1..=JOBS * 4;
        prop_oneof![
            4 => (c.clone(), 1..5u32).prop_map(|(c, n)| Op::Claim(c, n)),
            2 => (c.clone(), job.clone()).prop_map(|(c, j)| Op::Start(c, j)),
            2 => (c.clone(), job.clone()).prop_map(|(c, j)| Op::Complete(c, j)),
            2 => (c.clone(), job).prop_map(|(c, j)| Op::Fail(c, j)),
            1 => c.clone().prop_map(Op::Release),
            1 => c.prop_map(Op::Reconnect),
        ]
    }

    #[derive(Debug, Default)]
    struct Job {
        attempts: i32,
        holder: Option<usize>,
        started: bool,
    }

    #[derive(Debug, Default)]
    struct Model {
        /// Jobs not yet finished.
        jobs: BTreeMap<i64, Job>,
        done: usize,
        dead: usize,
        prefetch: [Option<u32>; WORKERS],
    }

    impl Model {
        fn new() -> Model {
            Model {
                jobs: (1..=JOBS).map(|id| (id, Job::default())).collect(),
                ..Model::default()
            }
        }

        fn held(&mut self, c: usize, job: i64) -> Option<&mut Job> {
            self.jobs.get_mut(&job).filter(|j| j.holder == Some(c))
        }

        /// The job `pick` names for worker `c`: one of those it holds unless `pick` is a
        /// multiple of 4 or it holds none, then job `pick / 4` (a job id).
        fn pick(&self, c: usize, pick: i64) -> i64 {
            let mine: Vec<i64> = self
                .jobs
                .iter()
                .filter(|(_, j)| j.holder == Some(c))
                .map(|(id, _)| *id)
                .collect();
            match mine.is_empty() || pick % 4 == 0 {
                true => (pick / 4).max(1),
                false => mine[pick as usize % mine.len()],
            }
        }

        fn in_hand(&self, c: usize) -> usize {
            self.jobs.values().filter(|j| j.holder == Some(c)).count()
        }

        fn hand_back(&mut self, job: i64) {
            let j = self.jobs.get_mut(&job).expect("held");
            (j.holder, j.started) = (None, false);
        }
    }

    fn token(c: usize) -> i64 {
        100 + c as i64
    }

    async fn apply(
        op: &Op,
        m: &mut Model,
        b: &AnyBackend,
        sessions: &mut [<AnyBackend as Backend>::Session],
    ) -> Result<(), TestCaseError> {
        match *op {
            Op::Claim(c, n) => {
                let prefetch = match m.prefetch[c] {
                    Some(p) if p == n || m.in_hand(c) > 0 => p,
                    _ => n,
                };
                m.prefetch[c] = Some(prefetch);
                let got = claim(&mut sessions[c], n).await;
                prop_assert!(got.len() <= n as usize, "{:?}: {:?}", op, got);
                for j in &got {
                    let job = m.jobs.get_mut(&j.id);
                    prop_assert!(job.is_some(), "{:?}: {} was finished", op, j.id);
                    let job = job.expect("checked");
                    prop_assert_eq!(job.holder, None, "{:?}: {} is held", op, j.id);
                    prop_assert_eq!(j.attempt, job.attempts, "{:?}: {}", op, j.id);
                    (job.holder, job.started) = (Some(c), false);
                }
                prop_assert!(m.in_hand(c) <= prefetch as usize, "{:?}", op);
            }
            Op::Start(c, pick) => {
                let job = m.pick(c, pick);
                let started = sessions[c].start(job, false, token(c)).await.unwrap();
                let expect = match m.held(c, job) {
                    Some(j) if !j.started => {
                        j.started = true;
                        true
                    }
                    _ => false,
                };
                prop_assert_eq!(started.is_some(), expect, "{:?}", op);
            }
            Op::Complete(c, pick) => {
                let job = m.pick(c, pick);
                let done = sessions[c].complete(job).await.unwrap();
                let expect = m.held(c, job).is_some();
                if expect {
                    m.jobs.remove(&job);
                    m.done += 1;
                }
                prop_assert_eq!(done, expect, "{:?}", op);
            }
            Op::Fail(c, pick) => {
                let job = m.pick(c, pick);
                let got = sessions[c]
                    .fail(job, Duration::ZERO, MAX_ATTEMPTS)
                    .await
                    .unwrap();
                let expect = match m.held(c, job).map(|j| j.attempts) {
                    None => FailOutcome::NotOwned,
                    Some(a) if a + 1 >= MAX_ATTEMPTS as i32 => {
                        m.jobs.remove(&job);
                        m.dead += 1;
                        FailOutcome::DeadLettered
                    }
                    Some(_) => {
                        m.jobs.get_mut(&job).expect("held").attempts += 1;
                        m.hand_back(job);
                        FailOutcome::Retried
                    }
                };
                prop_assert_eq!(got, expect, "{:?}", op);
            }
            Op::Release(c) => {
                let mine: Vec<i64> = m
                    .jobs
                    .iter()
                    .filter(|(_, j)| j.holder == Some(c))
                    .map(|(id, _)| *id)
                    .collect();
                let got = sessions[c].release(&mine).await.unwrap();
                let mut expect = Vec::new();
                for job in mine {
                    if !m.jobs[&job].started {
                        m.hand_back(job);
                        expect.push(job);
                    }
                }
                prop_assert_eq!(got, expect, "{:?}", op);
            }
            Op::Reconnect(c) => {
                sessions[c] = b.connect("t-worker", &format!("c{c}")).await.unwrap();
                let mine: Vec<i64> = m
                    .jobs
                    .iter()
                    .filter(|(_, j)| j.holder == Some(c))
                    .map(|(id, _)| *id)
                    .collect();
                for job in mine {
                    m.hand_back(job);
                }
                m.prefetch[c] = None;
            }
        }
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_rabbitmq_lifecycle_matches_its_model_on_generated_sequences() {
        let b = backend("cbrmq_model");
        let w = workload(JOBS as u64, MAX_ATTEMPTS);
        // 32 cases by default (each empty claim waits 50 ms for a push): the mutations
        // of the last-attempt rule and of a retry's attempt count fail within them.
        let mut runner = common::sequence_runner_of(32);
        let rt = tokio::runtime::Handle::current();
        let result = tokio::task::block_in_place(|| {
            runner.run(&proptest::collection::vec(op(), 1..40), |ops| {
                rt.block_on(async {
                    b.reset(&w, "classic-queue", 1).await.unwrap();
                    let mut sessions = Vec::new();
                    for c in 0..WORKERS {
                        sessions.push(b.connect("t-worker", &format!("c{c}")).await.unwrap());
                    }
                    let mut m = Model::new();
                    for op in &ops {
                        apply(op, &mut m, &b, &mut sessions).await?;
                    }
                    drop(sessions);
                    let r = b.reconcile().await.unwrap();
                    prop_assert_eq!(r.completed, m.done as i64);
                    prop_assert_eq!(r.dead_lettered, m.dead as i64);
                    let left = m.jobs.len() as i64;
                    prop_assert_eq!(r.pending + r.fetched + r.processing, left);
                    // Every job left is in the queue once, at the model's attempt.
                    let mut last = b.connect("t-worker", "last").await.unwrap();
                    let all = claim_up_to(&mut last, 100, JOBS as usize * 2).await;
                    let got: Vec<(i64, i32)> = {
                        let mut v: Vec<_> = all.iter().map(|j| (j.id, j.attempt)).collect();
                        v.sort_unstable();
                        v
                    };
                    let want: Vec<(i64, i32)> =
                        m.jobs.iter().map(|(id, j)| (*id, j.attempts)).collect();
                    prop_assert_eq!(got, want);
                    Ok(())
                })
            })
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
