//! NATS JetStream, on a real server: the `nats` backend against a `nats-server -js`
//! each test starts (claimbench's embedded one, on its own port and store).
//!
//! What a delivery promises is checked step by step on the server (two workers never
//! hold one message; only the holder finishes it; AckWait hands it back; a negative
//! acknowledgement returns it at once or after its delay; the last attempt is dead),
//! and whole runs check the ledger against the effects stream through a handler that
//! outlives AckWait and a server restart.

mod common;

use claimbench::backend::any::AnyBackend;
use claimbench::backend::{Backend, ClaimedJob, DbTarget, FailOutcome, Session};
use claimbench::embedded::nats::EmbeddedNats;
use claimbench::strategy::Strategy;
use claimbench::workload::Workload;
use std::path::Path;
use std::time::Duration;

fn jetstream() -> Strategy {
    Strategy::builtin_named("jetstream").expect("shipped")
}

/// A workload of `backlog` jobs in two queues, its AckWait (the lease) `lease_s`, its
/// jobs delivered at most twice.
fn workload(backlog: u64, lease_s: f64) -> Workload {
    workload_with(backlog, lease_s, 2)
}

fn workload_with(backlog: u64, lease_s: f64, max_attempts: u32) -> Workload {
    let text = format!(
        "name = \"t\"\nseed = 3\n[population]\nbacklog = {backlog}\npayload_bytes = 16\nqueues = [{{ name = \"a\", weight = 3 }}, {{ name = \"b\", weight = 1 }}]\n[handler]\nretry_delay_ms = 0\nmax_attempts = {max_attempts}\n[faults]\nlease_s = {lease_s}\n[matrix]\nbackends = [\"nats\"]\nstrategies = [\"jetstream\"]\nindex_layouts = [\"work-queue\"]\nworkers = [2]\nbatch_sizes = [4]\n[trial]\nduration_s = 1\n"
    );
    Workload::parse(Path::new("inline.toml"), &text).unwrap_or_else(|e| panic!("{e}"))
}

fn backend(server: &EmbeddedNats, schema: &str) -> AnyBackend {
    let target = DbTarget::parse(&server.url()).unwrap();
    AnyBackend::new(&target, target.to_string(), schema)
}

async fn claim<S: Session>(s: &mut S, batch: u32) -> Vec<ClaimedJob> {
    let mut out = Vec::new();
    s.claim(&jetstream(), batch, &mut out).await.unwrap();
    out
}

fn ids(jobs: &[ClaimedJob]) -> Vec<i64> {
    let mut ids: Vec<i64> = jobs.iter().map(|j| j.id).collect();
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn a_delivery_is_one_workers_until_it_is_acknowledged_or_its_ack_wait_passes() {
    let server = EmbeddedNats::start().unwrap();
    let b = backend(&server, "cbtest");
    // Deliveries run out only after 5: the last attempt here is a failure's (2).
    let w = workload_with(20, 0.6, 5);
    assert_eq!(b.reset(&w, "work-queue", 1).await.unwrap(), 20);
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let mut c = b.connect("t-worker", "C").await.unwrap();
    // The server's process, for its CPU: the one listening on its port.
    assert!(b.server_pid().await.is_some());

    // Two workers fetch disjoint batches, in arrival order (the stream's sequence is
    // the job's id).
    let got_a = claim(&mut a, 5).await;
    let got_c = claim(&mut c, 5).await;
    assert_eq!(ids(&got_a), vec![1, 2, 3, 4, 5]);
    assert_eq!(ids(&got_c), vec![6, 7, 8, 9, 10]);
    assert!(got_a.iter().all(|j| j.attempt == 0 && j.queue_wait_us >= 0));

    // Only the holder starts, heartbeats, writes an owned effect and finishes.
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
    // The completion carries the queue its message was published to.
    let by_queue = b.completed_by_queue(0, i64::MAX).await.unwrap();
    assert!(
        matches!(&by_queue[..], [(q, 1)] if q == "a" || q == "b"),
        "{by_queue:?}"
    );

    // A failure is delivered again as the next attempt; at max_attempts it is dead. A
    // release is delivered again too; another worker's delivery is not released.
    assert_eq!(
        a.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::Retried
    );
    assert_eq!(a.release(&[3, 6]).await.unwrap(), vec![3], "6 is C's");
    let rest = claim(&mut c, 20).await;
    assert_eq!(
        ids(&rest),
        vec![2, 3, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
    );
    assert_eq!(rest.iter().find(|j| j.id == 2).unwrap().attempt, 1);
    assert_eq!(
        c.fail(2, Duration::ZERO, 2).await.unwrap(),
        FailOutcome::DeadLettered
    );

    // AckWait: A's idle deliveries (4, 5) are delivered again, to C, as their next
    // attempt, with no rescuer; C's, acknowledged as in progress meanwhile, stay C's.
    c.start(6, false, 66).await.unwrap().expect("C holds 6");
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(c.heartbeat(6, 66).await.unwrap());
    }
    let again = claim(&mut c, 20).await;
    assert!(
        ids(&again).contains(&4) && ids(&again).contains(&5),
        "{again:?}"
    );
    assert!(!ids(&again).contains(&6), "{again:?}");
    assert!(again.iter().filter(|j| j.id == 4).all(|j| j.attempt == 1));
    let late = a
        .start(4, false, 44)
        .await
        .unwrap()
        .expect("A still holds its copy");
    assert!(
        !a.effect(4, 0, false, late, 44).await.unwrap().owned,
        "past AckWait the delivery is no longer A's"
    );

    // Every job is somewhere, once: 1 completed, 2 dead, the rest in the stream.
    let r = b.reconcile().await.unwrap();
    assert_eq!((r.completed, r.dead_lettered), (1, 1), "{r:?}");
    assert_eq!(r.pending + r.fetched + r.processing, 18, "{r:?}");
    assert_eq!((r.effect_rows, r.unowned_executions), (3, 2), "{r:?}");
}

#[tokio::test]
async fn a_retry_is_delivered_again_only_after_its_delay() {
    let server = EmbeddedNats::start().unwrap();
    let b = backend(&server, "cbdelay");
    b.reset(&workload(1, 30.0), "work-queue", 1).await.unwrap();
    let mut a = b.connect("t-worker", "A").await.unwrap();
    assert_eq!(ids(&claim(&mut a, 1).await), vec![1]);
    let delay = Duration::from_millis(600);
    assert_eq!(a.fail(1, delay, 5).await.unwrap(), FailOutcome::Retried);
    let failed_at = std::time::Instant::now();
    assert!(claim(&mut a, 1).await.is_empty(), "not before its delay");
    let mut back = Vec::new();
    while back.is_empty() && failed_at.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        back = claim(&mut a, 1).await;
    }
    assert!(failed_at.elapsed() >= delay, "{:?}", failed_at.elapsed());
    assert_eq!((back[0].id, back[0].attempt), (1, 1));
}

/// A message whose AckWait runs out on its last delivery (the consumer's `max_deliver`,
/// the workload's `max_attempts`) is not delivered again: the server's advisory is the
/// dead letter, and the message, still in the stream, is not counted pending.
#[tokio::test]
async fn a_message_out_of_deliveries_is_dead_lettered_by_the_server() {
    let server = EmbeddedNats::start().unwrap();
    let b = backend(&server, "cbmax");
    b.reset(&workload(1, 0.3), "work-queue", 1).await.unwrap();
    let mut a = b.connect("t-worker", "A").await.unwrap();
    let first = claim(&mut a, 1).await;
    assert_eq!((first[0].id, first[0].attempt), (1, 0));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let second = claim(&mut a, 1).await;
    assert_eq!(
        (second[0].id, second[0].attempt),
        (1, 1),
        "AckWait ran out once"
    );
    let mut r = b.reconcile().await.unwrap();
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(claim(&mut a, 1).await.is_empty(), "a third delivery");
        r = b.reconcile().await.unwrap();
        if r.dead_lettered == 1 {
            break;
        }
    }
    assert_eq!(
        (r.dead_lettered, r.pending, r.completed),
        (1, 0, 0),
        "{r:?}"
    );
}

#[tokio::test]
async fn streams_claimbench_did_not_make_are_refused_and_survive() {
    let server = EmbeddedNats::start().unwrap();
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    js.create_stream(async_nats::jetstream::stream::Config {
        name: "theirs_jobs".into(),
        subjects: vec!["theirs_jobs".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    js.publish("theirs_jobs", "keep me".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let b = backend(&server, "theirs");
    let e = b
        .reset(&workload(5, 1.0), "work-queue", 1)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("refusing to drop and recreate"), "{e}");
    let mut kept = js.get_stream("theirs_jobs").await.unwrap();
    assert_eq!(kept.info().await.unwrap().state.messages, 1);
}

/// A run of the binary on `text`: its output and run.json; the embedded server's store
/// must be gone.
fn run(text: &str, extra: &[&str]) -> (std::process::Output, Option<serde_json::Value>) {
    let (out, run, left) = common::run_text(text, extra, "claimbench-nats-");
    assert!(
        left.is_empty(),
        "the embedded server's store was left behind: {left:?}"
    );
    (out, run)
}

const FAULTS: &str = r#"name = "js-faults"
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
retry_delay_ms = 50
heartbeat_ms = 200
[faults]
lease_s = 0.5
hang_rate = 0.004
hang_s = 0.8
restart_db_at_s = [1.0]
kill_connections_at_s = [1.5]
[matrix]
backends = ["nats"]
strategies = ["jetstream"]
index_layouts = ["work-queue"]
workers = [4]
batch_sizes = [10]
[trial]
warmup_s = 0.3
duration_s = 2.0
"#;

/// A handler that outlives AckWait is delivered again while its first worker still runs
/// it: the ledger counts the duplicate claim and both executions, the effects stream
/// agrees, and through the server's restart and the workers' connections cut no job is
/// lost.
#[test]
fn a_handler_past_ack_wait_runs_twice_and_a_restart_loses_nothing() {
    let (out, run) = run(FAULTS, &["--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Which check failed is in the trial's warnings (--quiet prints none of them): a
    // clean-clone CI run once failed here with only "a correctness check failed".
    let warnings = run
        .as_ref()
        .map(|r| r["cells"][0]["trials"][0]["warnings"].to_string());
    assert!(out.status.success(), "{stderr}\nwarnings: {warnings:?}");
    let run = run.unwrap();
    assert_eq!(run["environment"]["embedded"], true);
    assert!(
        run["environment"]["targets"][0]["server"]["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("NATS ")),
        "{}",
        run["environment"]["targets"][0]
    );
    let t = &run["cells"][0]["trials"][0];
    assert!(
        t["counts"]["hangs"].as_u64().unwrap() > 0,
        "{}",
        t["counts"]
    );
    assert_eq!(
        t["server_restarts"].as_array().map(Vec::len),
        Some(1),
        "{t}"
    );
    assert_eq!(t["connection_kills"][0]["connections"], 4, "{t}");
    assert_eq!(t["reconciliation"]["lost"], 0, "{}", t["reconciliation"]);
    let d = &t["duplicates"];
    assert!(d["ledger"]["duplicate_claims"].as_u64().unwrap() > 0, "{d}");
    assert!(
        d["ledger"]["duplicate_executions"].as_u64().unwrap() > 0,
        "{d}"
    );
    common::assert_effects_within_the_ledgers_bounds(d);
    let warnings = t["warnings"].to_string();
    assert!(!warnings.contains("duplicate"), "{warnings}");
}

#[test]
fn a_sql_claim_on_nats_and_an_unreachable_server_are_refused_clearly() {
    let text = FAULTS.replace(
        "strategies = [\"jetstream\"]",
        "strategies = [\"production\"]",
    );
    let (out, _) = run(&text, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("production") && stderr.contains("nats"),
        "{stderr}"
    );

    let secret = "S3cr3tNatsPw";
    let (out, _) = run(
        &FAULTS
            .replace("restart_db_at_s = [1.0]\n", "")
            .replace("kill_connections_at_s = [1.5]\n", ""),
        &[
            "--db",
            &format!("nats://app:{secret}@127.0.0.1:1"),
            "--quiet",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("nats://app@127.0.0.1:1"), "{stderr}");
    assert!(stderr.contains("nats-server -js"), "{stderr}");
    for shown in [&stderr, &String::from_utf8_lossy(&out.stdout)] {
        assert!(!shown.contains(secret), "{shown}");
    }
}

/// The JetStream lifecycle against a model of it, on generated sequences of operations by
/// three workers on the real server: which messages a fetch takes and in what order (a
/// message put back by a negative acknowledgement before any never delivered, in the
/// order they were put back), with which attempt (JetStream counts deliveries: a release
/// is one too), who may start, finish, fail or release a job, when a failure is the
/// last attempt, and where every job ends.
mod model {
    use super::*;
    use proptest::prelude::{prop_assert_eq, prop_oneof};
    use proptest::strategy::Strategy as Generate;
    use proptest::test_runner::TestCaseError;
    use std::collections::{BTreeMap, VecDeque};

    const JOBS: i64 = 12;
    const MAX_ATTEMPTS: u32 = 3;

    #[derive(Debug, Clone)]
    enum Op {
        Claim(usize, u32),
        Start(usize, i64),
        Complete(usize, i64),
        Fail(usize, i64),
        Release(usize),
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
        ]
    }

    /// A message delivered at least once and not yet finished.
    #[derive(Debug, Default)]
    struct Job {
        delivered: i32,
        holder: Option<usize>,
        started: bool,
    }

    #[derive(Debug)]
    struct Model {
        jobs: BTreeMap<i64, Job>,
        /// The next message never delivered (the stream's sequence).
        next_new: i64,
        /// Messages put back, delivered before any new one, first put back first.
        again: VecDeque<i64>,
        done: Vec<i64>,
        dead: Vec<i64>,
    }

    impl Model {
        fn new() -> Model {
            Model {
                jobs: BTreeMap::new(),
                next_new: 1,
                again: VecDeque::new(),
                done: Vec::new(),
                dead: Vec::new(),
            }
        }

        fn claim(&mut self, c: usize, n: u32) -> Vec<(i64, i32)> {
            let mut out = Vec::new();
            while out.len() < n as usize {
                let id = match self.again.pop_front() {
                    Some(id) => id,
                    None if self.next_new <= JOBS => {
                        self.next_new += 1;
                        self.next_new - 1
                    }
                    None => break,
                };
                let j = self.jobs.entry(id).or_default();
                j.delivered += 1;
                (j.holder, j.started) = (Some(c), false);
                out.push((id, j.delivered - 1));
            }
            out
        }

        fn held(&mut self, c: usize, job: i64) -> Option<&mut Job> {
            self.jobs.get_mut(&job).filter(|j| j.holder == Some(c))
        }

        fn put_back(&mut self, job: i64) {
            self.jobs.get_mut(&job).expect("held").holder = None;
            self.again.push_back(job);
        }
    }

    fn token(c: usize) -> i64 {
        100 + c as i64
    }

    async fn apply<S: Session>(
        op: &Op,
        m: &mut Model,
        sessions: &mut [S],
    ) -> Result<(), TestCaseError> {
        match *op {
            Op::Claim(c, n) => {
                let mut out = Vec::new();
                sessions[c].claim(&jetstream(), n, &mut out).await.unwrap();
                let got: Vec<(i64, i32)> = out.iter().map(|j| (j.id, j.attempt)).collect();
                prop_assert_eq!(got, m.claim(c, n), "{:?}", op);
            }
            Op::Start(c, job) => {
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
            Op::Complete(c, job) => {
                let done = sessions[c].complete(job).await.unwrap();
                let expect = m.held(c, job).is_some();
                if expect {
                    m.jobs.remove(&job);
                    m.done.push(job);
                }
                prop_assert_eq!(done, expect, "{:?}", op);
            }
            Op::Fail(c, job) => {
                let got = sessions[c]
                    .fail(job, Duration::ZERO, MAX_ATTEMPTS)
                    .await
                    .unwrap();
                let expect = match m.held(c, job).map(|j| j.delivered) {
                    None => FailOutcome::NotOwned,
                    Some(d) if d >= MAX_ATTEMPTS as i32 => {
                        m.jobs.remove(&job);
                        m.dead.push(job);
                        FailOutcome::DeadLettered
                    }
                    Some(_) => {
                        m.put_back(job);
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
                        m.put_back(job);
                        expect.push(job);
                    }
                }
                prop_assert_eq!(got, expect, "{:?}", op);
            }
        }
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_jetstream_lifecycle_matches_its_model_on_generated_sequences() {
        let server = EmbeddedNats::start().unwrap();
        let b = backend(&server, "cbmodel");
        // Deliveries never run out here: the last attempt is a failure's (MAX_ATTEMPTS).
        let w = workload_with(JOBS as u64, 30.0, 100);
        let mut runner = common::sequence_runner();
        let rt = tokio::runtime::Handle::current();
        let result = tokio::task::block_in_place(|| {
            runner.run(&proptest::collection::vec(op(), 1..40), |ops| {
                rt.block_on(async {
                    b.reset(&w, "work-queue", 1).await.unwrap();
                    let mut sessions = Vec::new();
                    for c in 0..3 {
                        sessions.push(b.connect("t-worker", &format!("c{c}")).await.unwrap());
                    }
                    let mut m = Model::new();
                    for op in &ops {
                        apply(op, &mut m, &mut sessions).await?;
                    }
                    let r = b.reconcile().await.unwrap();
                    prop_assert_eq!(r.completed, m.done.len() as i64);
                    prop_assert_eq!(r.dead_lettered, m.dead.len() as i64);
                    prop_assert_eq!(
                        r.pending + r.fetched + r.processing,
                        JOBS - m.done.len() as i64 - m.dead.len() as i64
                    );
                    Ok(())
                })
            })
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
