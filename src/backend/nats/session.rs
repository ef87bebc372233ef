//! One NATS connection of a worker (a client of the shared durable consumer), the
//! sampler, the producer or the rescuer; and the control reads of the ledger's streams
//! (reconciliation, completions per queue).
//!
//! A delivery is held in the session until the worker acknowledges it: the map from a
//! job's id (its stream sequence) to the message's acknowledger is the worker's own
//! claim, as a row's `worker_id` is on a table.

use super::errors::error;
use super::streams::{CONSUMER, Names};
use crate::backend::broker::{self, Run, now_us};
use crate::backend::claim::{Ask, ClaimSteps, Done};
use crate::backend::connections::Registered;
use crate::backend::lifecycle::{Lifecycle, Reply, Step};
use crate::backend::{BackendError, ClaimedJob, Sample, Session};
use crate::backend_kind::BackendKind;
use crate::workload::{Population, Workload};
use async_nats::jetstream::{self, AckKind, consumer, message::Acker, stream};
use async_nats::{HeaderMap, HeaderValue, Subject};
use futures_util::StreamExt;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a fetch may wait for the server's answer.
const FETCH_WITHIN: Duration = Duration::from_secs(2);

/// How long the server may hold a fetch open when it has messages it cannot deliver yet
/// (a retry waiting out its delay, a message out of deliveries): it answers at once when
/// it has some to deliver or none at all, and otherwise waits for one this long (without
/// a bound, a fetch that finds only such messages is never answered).
const WAIT_FOR_HELD_BACK: Duration = Duration::from_millis(100);

/// A job's queue and its due time (µs on this host's clock) travel as headers.
const QUEUE: &str = "Cb-Queue";
const DUE: &str = "Cb-Due";

/// A delivery in a worker's hands.
struct Held {
    acker: Acker,
    /// The message's headers, moved out of it (its queue is read from them when the job
    /// is finished; nothing is copied per claim).
    headers: HeaderMap,
    /// Deliveries of this message so far, this one included.
    delivered: i64,
    /// The execution that started it: a second start, or another execution's heartbeat
    /// or effect, is not this delivery's.
    token: Option<i64>,
    /// The delivery, or the last in-progress acknowledgement: AckWait runs from here.
    since: Instant,
}

pub struct NatsSession {
    /// This connection in the backend's list, which the faults' kill walks.
    registered: Registered<async_nats::Client>,
    js: jetstream::Context,
    names: Arc<Names>,
    ack_wait_ms: Arc<AtomicU64>,
    /// The shared durable consumer, looked up at the first fetch: a session may open
    /// before the reset that makes it, and a later reset makes it again by the same name.
    consumer: Option<consumer::PullConsumer>,
    held: HashMap<i64, Held>,
    /// The last fetch's messages, kept for its capacity: one buffer per session, not
    /// one per claim.
    fetched: Vec<jetstream::Message>,
    /// Draws each produced job's queue by the workload's weights.
    rng: SmallRng,
}

fn header_i64(h: Option<&HeaderMap>, name: &str) -> Option<i64> {
    h?.get(name)?.as_str().parse().ok()
}

/// The headers of a job's outcome record (a completion, a dead letter): its queue, as
/// its message carried it, and its id.
fn outcome(held: &Held, job: i64) -> HeaderMap {
    let mut h = HeaderMap::new();
    if let Some(queue) = held.headers.get(QUEUE) {
        h.insert(QUEUE, queue.clone());
    }
    h.insert("j", HeaderValue::from(job));
    h
}

impl NatsSession {
    pub(super) async fn open(
        client: async_nats::Client,
        names: Arc<Names>,
        ack_wait_ms: Arc<AtomicU64>,
        registered: Registered<async_nats::Client>,
    ) -> Result<NatsSession, BackendError> {
        Ok(NatsSession {
            registered,
            js: jetstream::new(client),
            names,
            ack_wait_ms,
            consumer: None,
            held: HashMap::new(),
            fetched: Vec::new(),
            rng: SmallRng::from_entropy(),
        })
    }

    /// Draws queues from `seed` from now on, so a reset seeds the same backlog.
    pub(super) fn seed_rng(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }

    async fn consumer(&mut self) -> Result<&consumer::PullConsumer, BackendError> {
        if self.consumer.is_none() {
            let what = "open the consumer";
            let stream = self
                .js
                .get_stream(&self.names.jobs)
                .await
                .map_err(|e| error(what, e))?;
            let c = stream
                .get_consumer(CONSUMER)
                .await
                .map_err(|e| error(what, e))?;
            self.consumer = Some(c);
        }
        Ok(self.consumer.as_ref().expect("looked up"))
    }

    /// Publishes one message to `subject` and waits for the stream to store it.
    async fn record(
        &self,
        what: &'static str,
        subject: &Subject,
        headers: HeaderMap,
    ) -> Result<(), BackendError> {
        self.js
            .publish_with_headers(subject.clone(), headers, Default::default())
            .await
            .map_err(|e| error(what, e))?
            .await
            .map_err(|e| error(what, e))?;
        Ok(())
    }

    /// Publishes one job per entry of `ages_us` (µs before now it arrived), each of a
    /// queue drawn by the workload's weights, with the workload's payload size; all
    /// are sent before the first acknowledgement is awaited.
    pub(super) async fn add(
        &mut self,
        workload: &Workload,
        ages_us: &[i64],
        what: &'static str,
    ) -> Result<u64, BackendError> {
        let p = &workload.population;
        let (names, bounds) = p.queue_bounds();
        let payload = bytes::Bytes::from(vec![b'x'; p.payload_bytes as usize]);
        let now = now_us();
        let mut acks = Vec::with_capacity(ages_us.len());
        for age in ages_us {
            let queue = &names[Population::bucket(&bounds, self.rng.r#gen())];
            let mut h = HeaderMap::new();
            h.insert(QUEUE, queue.as_str());
            h.insert(DUE, HeaderValue::from(now - age));
            let ack = self
                .js
                .publish_with_headers(self.names.to_jobs.clone(), h, payload.clone())
                .await
                .map_err(|e| error(what, e))?;
            acks.push(ack);
        }
        for ack in acks {
            ack.await.map_err(|e| error(what, e))?;
        }
        Ok(ages_us.len() as u64)
    }

    /// Whether the delivery of `job` is still this worker's: held, and acknowledged as
    /// in progress within AckWait (after that the server may have delivered it again).
    fn owns(&self, job: i64, token: i64) -> bool {
        let wait = Duration::from_millis(self.ack_wait_ms.load(Ordering::Relaxed));
        self.held
            .get(&job)
            .is_some_and(|h| h.token == Some(token) && h.since.elapsed() < wait)
    }

    async fn settle(&mut self, job: i64, kind: AckKind) -> Result<Option<Held>, BackendError> {
        let Some(held) = self.held.remove(&job) else {
            return Ok(None);
        };
        held.acker
            .double_ack_with(kind)
            .await
            .map_err(|e| error("acknowledge", e))?;
        Ok(Some(held))
    }
}

impl ClaimSteps for NatsSession {
    /// One fetch of up to the batch from the durable consumer, without waiting for more
    /// than the stream has now ([`WAIT_FOR_HELD_BACK`] at most). A reply that does not come within [`FETCH_WITHIN`] (the
    /// server restarted under the request) is a lost connection, and what had arrived is
    /// left unacknowledged: the server delivers it again after AckWait.
    async fn locking_claim(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let what = "claim";
        let mut batch = self
            .consumer()
            .await?
            .fetch()
            .max_messages(ask.batch as usize)
            .expires(WAIT_FOR_HELD_BACK)
            .messages()
            .await
            .map_err(|e| error(what, e))?;
        let got = &mut self.fetched;
        got.clear();
        let all = async {
            while let Some(m) = batch.next().await {
                got.push(m.map_err(|e| error(what, e))?);
            }
            Ok::<_, BackendError>(())
        };
        tokio::time::timeout(FETCH_WITHIN, all)
            .await
            .map_err(|_| error(what, "the fetch timed out"))??;
        let now = now_us();
        for m in self.fetched.drain(..) {
            let info = m.info().map_err(|e| error(what, e))?;
            let id = info.stream_sequence as i64;
            let delivered = info.delivered;
            let published = (info.published.unix_timestamp_nanos() / 1000) as i64;
            let due = header_i64(m.headers.as_ref(), DUE).unwrap_or(published);
            let (message, acker) = m.split();
            self.held.insert(
                id,
                Held {
                    acker,
                    headers: message.headers.unwrap_or_default(),
                    delivered,
                    token: None,
                    since: Instant::now(),
                },
            );
            out.push(ClaimedJob {
                id,
                attempt: (delivered - 1).max(0) as i32,
                queue_wait_us: (now - due).max(0),
            });
        }
        Ok(())
    }

    broker::sql_claim_steps_refused!("nats");
}

impl Lifecycle for NatsSession {
    async fn run(&mut self, step: Step) -> Result<Reply, BackendError> {
        let what = step.what();
        Ok(match step {
            // Nothing to tell the server: the delivery is the claim and the run.
            Step::Start { job, token, .. } => match self.held.get_mut(&job) {
                Some(h) if h.token.is_none() => {
                    h.token = Some(token);
                    Reply::row(Some(now_us()), None)
                }
                _ => Reply::row(None, None),
            },
            Step::Heartbeat { job, token } => {
                let Some(h) = self.held.get_mut(&job).filter(|h| h.token == Some(token)) else {
                    return Ok(Reply::row(Some(0), None));
                };
                h.acker
                    .ack_with(AckKind::Progress)
                    .await
                    .map_err(|e| error(what, e))?;
                h.since = Instant::now();
                Reply::row(Some(1), None)
            }
            Step::Effect(e) => {
                let owned = self.owns(e.job, e.token);
                let finished = now_us();
                let mut h = HeaderMap::new();
                h.insert("j", HeaderValue::from(e.job));
                h.insert("a", HeaderValue::from(e.attempt));
                h.insert("f", HeaderValue::from(i32::from(e.failed)));
                h.insert("s", HeaderValue::from(e.started_us));
                h.insert("e", HeaderValue::from(finished));
                h.insert("o", HeaderValue::from(i32::from(owned)));
                self.record(what, &self.names.to_effects, h).await?;
                Reply::row(Some(finished), Some(i64::from(owned)))
            }
            // The completion is recorded before the acknowledgement: a crash between
            // the two leaves the job in the stream (delivered again, a duplicate run)
            // rather than gone with no record of its outcome.
            Step::Complete { job } => {
                let Some(held) = self.held.get(&job) else {
                    return Ok(Reply::row(Some(0), None));
                };
                let mut h = outcome(held, job);
                h.insert("t", HeaderValue::from(now_us()));
                self.record(what, &self.names.to_done, h).await?;
                self.settle(job, AckKind::Ack).await?;
                Reply::row(Some(1), None)
            }
            // A retry is delivered again after the delay (a negative acknowledgement
            // with a delay); the last attempt is terminated and recorded as dead.
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => {
                let last = self
                    .held
                    .get(&job)
                    .is_some_and(|h| h.delivered >= i64::from(max_attempts));
                let kind = match (last, retry_delay.is_zero()) {
                    (true, _) => AckKind::Term,
                    (false, true) => AckKind::Nak(None),
                    (false, false) => AckKind::Nak(Some(retry_delay)),
                };
                let Some(held) = self.held.get(&job) else {
                    return Ok(Reply::row(Some(0), Some(0)));
                };
                if last {
                    // Recorded first, as a completion is.
                    self.record(what, &self.names.to_dead, outcome(held, job))
                        .await?;
                }
                self.settle(job, kind).await?;
                match last {
                    true => Reply::row(Some(0), Some(1)),
                    false => Reply::row(Some(1), Some(0)),
                }
            }
        })
    }
}

impl Session for NatsSession {
    async fn begin(&mut self) -> Result<(), BackendError> {
        Err(broker::no_transaction(BackendKind::Nats))
    }

    async fn end(&mut self, _commit: bool) -> Result<(), BackendError> {
        Err(broker::no_transaction(BackendKind::Nats))
    }

    async fn apply(&mut self, settings: &[(String, String)]) -> Result<(), BackendError> {
        broker::no_settings(BackendKind::Nats, settings)
    }

    /// A negative acknowledgement of each this worker holds and has not started:
    /// delivered again at once, to any worker (as its next delivery: JetStream counts
    /// deliveries, not attempts).
    async fn release(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        let mut released = Vec::with_capacity(jobs.len());
        for &job in jobs {
            let unstarted = self.held.get(&job).is_some_and(|h| h.token.is_none());
            if unstarted && self.settle(job, AckKind::Nak(None)).await?.is_some() {
                released.push(job);
            }
        }
        Ok(released)
    }

    /// Nothing to do: the server delivers an unacknowledged message again by itself once
    /// AckWait has passed, so a rescuer finds nothing, and the ledger sees the second
    /// delivery while the first worker may still hold the job (a duplicate claim).
    async fn rescue(&mut self, _lease: Duration) -> Result<Vec<i64>, BackendError> {
        Ok(Vec::new())
    }

    async fn produce(&mut self, workload: &Workload, ages_us: &[i64]) -> Result<u64, BackendError> {
        self.add(workload, ages_us, "produce").await
    }

    /// The oldest message not yet delivered (the next after the consumer's last
    /// delivery; a message waiting to be delivered again is not counted) and whether work
    /// is left. NATS has no lock waits, no statements running and no per-queue limits.
    async fn sample(&mut self, workload: &Workload) -> Result<Sample, BackendError> {
        let what = "sample the queue";
        let info = self
            .consumer()
            .await?
            .get_info()
            .await
            .map_err(|e| error(what, e))?;
        let oldest = match info.num_pending {
            0 => None,
            _ => {
                let stream = self
                    .js
                    .get_stream_no_info(&self.names.jobs)
                    .await
                    .map_err(|e| error(what, e))?;
                let next = stream
                    .direct_get_next_for_subject(
                        self.names.jobs.clone(),
                        Some(info.delivered.stream_sequence + 1),
                    )
                    .await
                    .ok();
                next.and_then(|m| header_i64(Some(&m.headers), DUE))
            }
        };
        let now = now_us();
        Ok(Sample {
            oldest_pending_ms: oldest.map(|due| (now - due).max(0) as f64 / 1000.0),
            work_left: info.num_pending > 0 || info.num_ack_pending > 0,
            queue_active: vec![None; workload.population.queues.len()],
            ..Sample::default()
        })
    }

    /// Drops the socket of every connection the backend opened as `role`: the server
    /// sees each end, the client library reconnects (closing another client's
    /// connection from the server takes its system account, which claimbench does not
    /// ask for). Deliveries in hand stay unacknowledged until AckWait, as after any lost
    /// connection.
    async fn kill_workers(&mut self, role: &str) -> Result<u64, BackendError> {
        let of_role = self.registered.connections.of_role(role);
        for c in &of_role {
            c.force_reconnect()
                .await
                .map_err(|e| error("kill worker connections", e))?;
        }
        Ok(of_role.len() as u64)
    }
}

/// Reads every message of `stream` through a throw-away consumer that acknowledges
/// nothing, handing each one's headers (empty when it has none) and payload to `each`.
async fn read_all(
    stream: &stream::Stream,
    what: &'static str,
    mut each: impl FnMut(&HeaderMap, &[u8]),
) -> Result<(), BackendError> {
    let none = HeaderMap::new();
    let total = stream
        .get_info()
        .await
        .map_err(|e| error(what, e))?
        .state
        .messages;
    if total == 0 {
        return Ok(());
    }
    let reader = stream
        .create_consumer(consumer::pull::Config {
            ack_policy: consumer::AckPolicy::None,
            inactive_threshold: Duration::from_secs(30),
            ..Default::default()
        })
        .await
        .map_err(|e| error(what, e))?;
    let mut seen = 0u64;
    let mut empty = 0;
    while seen < total && empty < 20 {
        let mut batch = reader
            .fetch()
            .max_messages(10_000)
            .messages()
            .await
            .map_err(|e| error(what, e))?;
        let mut got = 0;
        while let Some(m) = batch.next().await {
            let m = m.map_err(|e| error(what, e))?;
            each(m.headers.as_ref().unwrap_or(&none), &m.payload);
            got += 1;
        }
        seen += got;
        empty = if got == 0 { empty + 1 } else { 0 };
        if got == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    if seen < total {
        return Err(BackendError::other(
            what,
            format!("read {seen} of the stream's {total} messages"),
        ));
    }
    Ok(())
}

/// Every handler run the effects stream recorded.
pub(super) async fn effects(stream: &stream::Stream) -> Result<Vec<Run>, BackendError> {
    let mut out = Vec::new();
    read_all(stream, "read the effects", |h, _| {
        let get = |f: &str| header_i64(Some(h), f).unwrap_or(0);
        out.push(Run {
            job: get("j"),
            ok: get("f") == 0,
            started_us: get("s"),
            finished_us: get("e"),
            owned: get("o") == 1,
        });
    })
    .await?;
    Ok(out)
}

/// The jobs a stream of outcomes records (completions, dead letters), each once and in
/// order: a job delivered again after its AckWait and acknowledged by both workers is
/// recorded twice, but completed once. A record is claimbench's (the job in header `j`)
/// or the server's advisory that a message ran out of deliveries (its `stream_seq`).
pub(super) async fn recorded_jobs(records: &stream::Stream) -> Result<Vec<u64>, BackendError> {
    let mut jobs = Vec::new();
    read_all(records, "read the outcomes", |h, payload| {
        let advised = || {
            let v: serde_json::Value = serde_json::from_slice(payload).ok()?;
            v.get("stream_seq")?.as_i64()
        };
        if let Some(j) = header_i64(Some(h), "j").or_else(advised) {
            jobs.push(j as u64);
        }
    })
    .await?;
    jobs.sort_unstable();
    jobs.dedup();
    Ok(jobs)
}

/// How many of `completed` (sorted) are still messages of the jobs stream. The stream's
/// list of deleted sequences is not the whole story after a crash (its count of messages
/// can be lower than its range less that list), so a completed job the list does not
/// rule out is looked up by its sequence.
pub(super) async fn still_in(
    jobs: &stream::Stream,
    state: &stream::State,
    completed: &[u64],
) -> Result<usize, BackendError> {
    use futures_util::stream::{self as fstream, TryStreamExt};
    use std::collections::HashSet;
    if state.messages == 0 {
        return Ok(0);
    }
    let deleted: HashSet<u64> = state.deleted.iter().flatten().copied().collect();
    let maybe = completed.iter().copied().filter(|seq| {
        (state.first_sequence..=state.last_sequence).contains(seq) && !deleted.contains(seq)
    });
    let lookups = fstream::iter(maybe.map(Ok)).map_ok(|seq| async move {
        match jobs.direct_get(seq).await {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == stream::DirectGetErrorKind::NotFound => Ok(false),
            Err(e) => Err(error("reconcile the queue", e)),
        }
    });
    let found: Vec<bool> = lookups.try_buffer_unordered(32).try_collect().await?;
    Ok(found.into_iter().filter(|f| *f).count())
}

/// Completions per queue between two instants (µs, this host's clock).
pub(super) async fn completed_between(
    done: &stream::Stream,
    from_us: i64,
    to_us: i64,
) -> Result<Vec<(String, i64)>, BackendError> {
    let mut by_queue: std::collections::BTreeMap<String, i64> = Default::default();
    read_all(done, "count completions per queue", |h, _| {
        let t = header_i64(Some(h), "t").unwrap_or(0);
        if (from_us..=to_us).contains(&t) {
            let q = h.get(QUEUE).map(|v| v.as_str().to_string());
            *by_queue.entry(q.unwrap_or_default()).or_default() += 1;
        }
    })
    .await?;
    Ok(by_queue.into_iter().collect())
}
