//! One RabbitMQ connection of a worker (a consumer of the jobs queue), the sampler, the
//! producer or the rescuer; and the control reads of the ledger's queues
//! (reconciliation, completions per queue).
//!
//! A delivery is held in the session until the worker acknowledges it: the map from a
//! job's id to the message's acknowledger is the worker's own claim, as a row's
//! `worker_id` is on a table.

use super::errors::{error, within};
use super::queues::{self, ATTEMPT, DUE, ID, Names, QUEUE, int, put};
use crate::backend::broker::{self, Run, now_us};
use crate::backend::claim::{Ask, ClaimSteps, Done};
use crate::backend::connections::Registered;
use crate::backend::lifecycle::{Lifecycle, Reply, Step};
use crate::backend::{BackendError, ClaimedJob, Sample, Session};
use crate::backend_kind::BackendKind;
use crate::workload::Workload;
use futures_util::{FutureExt, StreamExt};
use lapin::acker::Acker;
use lapin::message::Delivery;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicGetOptions, BasicNackOptions, BasicPublishOptions,
    BasicQosOptions, BasicRejectOptions, ConfirmSelectOptions,
};
use lapin::publisher_confirm::{Confirmation, PublisherConfirm};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{BasicProperties, Channel, Connection, Consumer};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// How long a claim waits for the first delivery when the consumer has none in hand:
/// with a prefetch, the server pushes the next messages as soon as acknowledgements
/// free room, so a claim that finds none waited for an empty queue (or a pushed batch
/// a round trip away).
const WAIT_FOR_FIRST: Duration = Duration::from_millis(50);

/// How long a publish may wait for the server's confirm.
const CONFIRM_WITHIN: Duration = Duration::from_secs(5);

/// A delivery in a worker's hands.
struct Held {
    acker: Acker,
    /// The message's properties (its headers, its priority) and payload, moved out of
    /// it, not copied: a retry publishes them again.
    properties: BasicProperties,
    payload: Vec<u8>,
    /// Attempts before this one (the message's `a` header).
    attempt: i32,
    /// The execution that started it: a second start, or another execution's effect, is
    /// not this delivery's.
    token: Option<i64>,
}

/// The consumer of a worker: its own channel, whose prefetch is the batch.
struct Consuming {
    prefetch: u16,
    _channel: Channel,
    deliveries: Consumer,
}

pub struct RabbitSession {
    /// This connection in the backend's list, which the faults' kill walks.
    registered: Registered<Arc<Connection>>,
    conn: Arc<Connection>,
    /// Publishes (jobs, retries, records) with confirms.
    publisher: Channel,
    names: Arc<Names>,
    next_id: Arc<AtomicI64>,
    consuming: Option<Consuming>,
    /// The sampler's channel for its look at the head of the queue.
    sampling: Option<Channel>,
    held: HashMap<i64, Held>,
    /// Draws each produced job's queue by the workload's weights.
    rng: SmallRng,
}

/// A persistent message (delivery mode 2) with `headers`, at `priority` (the queue's
/// level) when the workload has several.
fn persistent(headers: FieldTable, priority: Option<u8>) -> BasicProperties {
    let p = BasicProperties::default()
        .with_delivery_mode(2)
        .with_headers(headers);
    match priority {
        Some(level) => p.with_priority(level),
        None => p,
    }
}

/// Publishes go through the default exchange straight to a queue, marked mandatory:
/// a message no queue takes comes back instead of vanishing.
const MANDATORY: BasicPublishOptions = BasicPublishOptions {
    mandatory: true,
    immediate: false,
};

/// Waits for a publish's confirm: the server stored the message, or says why not.
async fn confirmed(what: &'static str, c: PublisherConfirm) -> Result<(), BackendError> {
    let c = within(what, CONFIRM_WITHIN, async {
        c.await.map_err(|e| error(what, e))
    })
    .await?;
    match c {
        Confirmation::Ack(None) | Confirmation::NotRequested => Ok(()),
        Confirmation::Ack(Some(_)) => Err(BackendError::other(
            what,
            "no queue took the message (claimbench's queues are gone: was the schema reset by another run?)",
        )),
        Confirmation::Nack(_) => Err(BackendError::other(
            what,
            "the server refused to store the message (a negative confirm)",
        )),
    }
}

impl RabbitSession {
    pub(super) async fn open(
        conn: Arc<Connection>,
        names: Arc<Names>,
        next_id: Arc<AtomicI64>,
        registered: Registered<Arc<Connection>>,
    ) -> Result<RabbitSession, BackendError> {
        let what = "open a channel";
        let publisher = conn.create_channel().await.map_err(|e| error(what, e))?;
        publisher
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| error(what, e))?;
        Ok(RabbitSession {
            registered,
            conn,
            publisher,
            names,
            next_id,
            consuming: None,
            sampling: None,
            held: HashMap::new(),
            rng: SmallRng::from_entropy(),
        })
    }

    /// Draws queues from `seed` from now on, so a reset seeds the same backlog.
    pub(super) fn seed_rng(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }

    /// Publishes one record (no payload) to `queue` and waits for its confirm.
    async fn record(
        &self,
        what: &'static str,
        queue: &str,
        headers: FieldTable,
    ) -> Result<(), BackendError> {
        let c = self
            .publisher
            .basic_publish("", queue, MANDATORY, &[], persistent(headers, None))
            .await
            .map_err(|e| error(what, e))?;
        confirmed(what, c).await
    }

    /// Publishes one job per entry of `ages_us` (µs before now it arrived), each of a
    /// queue and priority drawn by the workload's weights (a priority is its level among
    /// the workload's, in order), with the workload's payload size; all are sent before
    /// the first confirm is awaited.
    pub(super) async fn add(
        &mut self,
        workload: &Workload,
        ages_us: &[i64],
        what: &'static str,
    ) -> Result<u64, BackendError> {
        let p = &workload.population;
        let draw = p.job_draw();
        let levels = p.all_priorities();
        let payload = vec![b'x'; p.payload_bytes as usize];
        let now = now_us();
        let mut confirms = Vec::with_capacity(ages_us.len());
        for age in ages_us {
            let (queue, priority) = draw.draw(self.rng.r#gen(), self.rng.r#gen());
            let level = match levels.len() {
                0 | 1 => None,
                _ => levels.binary_search(&priority).ok().map(|l| l as u8),
            };
            let mut h = FieldTable::default();
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            put(&mut h, ID, AMQPValue::LongLongInt(id));
            put(
                &mut h,
                QUEUE,
                AMQPValue::LongString(LongString::from(queue)),
            );
            put(&mut h, DUE, AMQPValue::LongLongInt(now - age));
            put(&mut h, ATTEMPT, AMQPValue::LongInt(0));
            let c = self
                .publisher
                .basic_publish(
                    "",
                    &self.names.jobs,
                    MANDATORY,
                    &payload,
                    persistent(h, level),
                )
                .await
                .map_err(|e| error(what, e))?;
            confirms.push(c);
        }
        for c in confirms {
            confirmed(what, c).await?;
        }
        Ok(ages_us.len() as u64)
    }

    /// The worker's consumer with a prefetch of `batch`, made at its first claim. A
    /// claim of another batch size makes it again, once this worker holds nothing (the
    /// server gives back what the old one had been handed when its channel closes).
    async fn consume(&mut self, batch: u32) -> Result<(), BackendError> {
        let what = "consume the jobs queue";
        let prefetch = batch.clamp(1, u32::from(u16::MAX)) as u16;
        match &self.consuming {
            Some(c) if c.prefetch == prefetch || !self.held.is_empty() => return Ok(()),
            _ => self.consuming = None,
        }
        let channel = self
            .conn
            .create_channel()
            .await
            .map_err(|e| error(what, e))?;
        channel
            .basic_qos(prefetch, BasicQosOptions::default())
            .await
            .map_err(|e| error(what, e))?;
        let deliveries = channel
            .basic_consume(
                &self.names.jobs,
                "claimbench-worker",
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|e| error(what, e))?;
        self.consuming = Some(Consuming {
            prefetch,
            _channel: channel,
            deliveries,
        });
        Ok(())
    }

    /// A delivery, now in this worker's hands.
    async fn take(&mut self, d: Delivery, now: i64, out: &mut Vec<ClaimedJob>) -> Done {
        let headers = d.properties.headers().as_ref();
        let Some(id) = int(headers, ID) else {
            return Err(BackendError::other(
                "claim",
                "a message without claimbench's headers in the jobs queue",
            ));
        };
        let attempt = int(headers, ATTEMPT).unwrap_or(0) as i32;
        let due = int(headers, DUE).unwrap_or(now);
        let held = Held {
            acker: d.acker,
            properties: d.properties,
            payload: d.data,
            attempt,
            token: None,
        };
        // Two copies of one job in hand (a retry published again while its original
        // came back from a lost connection): the worker runs the job once; the older
        // copy is settled, and the ledger sees both claims.
        if let Some(older) = self.held.insert(id, held) {
            older
                .acker
                .ack(BasicAckOptions::default())
                .await
                .map_err(|e| error("claim", e))?;
        }
        out.push(ClaimedJob {
            id,
            attempt,
            queue_wait_us: (now - due).max(0),
        });
        Ok(())
    }

    /// Removes `job` from the worker's hands and settles its delivery with `how`.
    async fn settle(
        &mut self,
        what: &'static str,
        job: i64,
        how: Settle,
    ) -> Result<Option<Held>, BackendError> {
        let Some(held) = self.held.remove(&job) else {
            return Ok(None);
        };
        let a = &held.acker;
        let done = match how {
            Settle::Ack => a.ack(BasicAckOptions::default()).await,
            Settle::Requeue => {
                a.nack(BasicNackOptions {
                    requeue: true,
                    multiple: false,
                })
                .await
            }
            Settle::DeadLetter => a.reject(BasicRejectOptions { requeue: false }).await,
        };
        done.map_err(|e| error(what, e))?;
        Ok(Some(held))
    }

    /// The headers of a job's completion: its queue, as its message carried it, its id
    /// and when.
    fn completion(held: &Held, job: i64) -> FieldTable {
        let mut h = FieldTable::default();
        let queue = held
            .properties
            .headers()
            .as_ref()
            .and_then(|h| h.inner().get(QUEUE));
        if let Some(q) = queue {
            put(&mut h, QUEUE, q.clone());
        }
        put(&mut h, ID, AMQPValue::LongLongInt(job));
        put(&mut h, "t", AMQPValue::LongLongInt(now_us()));
        h
    }
}

/// How a worker gives a delivery back.
enum Settle {
    Ack,
    /// Back to the queue at once, for any consumer.
    Requeue,
    /// To the dead-letter queue, through the queue's dead-letter exchange.
    DeadLetter,
}

impl ClaimSteps for RabbitSession {
    /// What the consumer has been handed, up to the batch: the first delivery waited
    /// for ([`WAIT_FOR_FIRST`] at most), the rest only if already here. The prefetch
    /// bounds what the server hands one consumer before it acknowledges.
    async fn locking_claim(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let what = "claim";
        self.consume(ask.batch).await?;
        let Some(c) = self.consuming.as_mut() else {
            return Err(BackendError::other(what, "no consumer"));
        };
        let mut next = match tokio::time::timeout(WAIT_FOR_FIRST, c.deliveries.next()).await {
            Ok(first) => first,
            Err(_) => return Ok(()),
        };
        let now = now_us();
        let before = out.len();
        let mut taken = 0;
        loop {
            // On an error the claim returns nothing, as a SQL claim rolled back would:
            // what it had taken stays unacknowledged on a channel that is going away,
            // and the server hands it back when it has.
            let failed = match next {
                Some(Ok(d)) => self.take(d, now, out).await.err(),
                Some(Err(e)) => Some(error(what, e)),
                None => {
                    self.consuming = None;
                    let closed = lapin::ChannelState::Closed;
                    Some(error(what, lapin::Error::InvalidChannelState(closed)))
                }
            };
            if let Some(e) = failed {
                out.truncate(before);
                return Err(e);
            }
            taken += 1;
            if taken >= ask.batch {
                return Ok(());
            }
            let Some(c) = self.consuming.as_mut() else {
                return Ok(());
            };
            match c.deliveries.next().now_or_never() {
                Some(n) => next = n,
                None => return Ok(()),
            }
        }
    }

    broker::sql_claim_steps_refused!("rabbitmq");
}

impl Lifecycle for RabbitSession {
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
            // Nothing to extend: a delivery has no timeout, it is this worker's until
            // acknowledged or its channel closes.
            Step::Heartbeat { job, token } => {
                let mine = self.held.get(&job).is_some_and(|h| h.token == Some(token));
                Reply::row(Some(i64::from(mine)), None)
            }
            Step::Effect(e) => {
                let owned = self
                    .held
                    .get(&e.job)
                    .is_some_and(|h| h.token == Some(e.token));
                let finished = now_us();
                let mut h = FieldTable::default();
                let n = AMQPValue::LongLongInt;
                put(&mut h, ID, n(e.job));
                put(&mut h, "a", n(i64::from(e.attempt)));
                put(&mut h, "f", n(i64::from(e.failed)));
                put(&mut h, "s", n(e.started_us));
                put(&mut h, "e", n(finished));
                put(&mut h, "o", n(i64::from(owned)));
                self.record(what, &self.names.effects, h).await?;
                Reply::row(Some(finished), Some(i64::from(owned)))
            }
            // The completion is recorded before the acknowledgement: a lost connection
            // between the two leaves the job in the queue (delivered again, a duplicate
            // run) rather than gone with no record of its outcome.
            Step::Complete { job } => {
                let Some(held) = self.held.get(&job) else {
                    return Ok(Reply::row(Some(0), None));
                };
                let h = Self::completion(held, job);
                self.record(what, &self.names.done, h).await?;
                self.settle(what, job, Settle::Ack).await?;
                Reply::row(Some(1), None)
            }
            // The last attempt is rejected to the dead-letter queue; an earlier one is
            // published again with its attempt counted (a classic queue counts no
            // deliveries), then the original acknowledged: a lost connection between
            // the two runs the job once more.
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => {
                let Some(held) = self.held.get(&job) else {
                    return Ok(Reply::row(Some(0), Some(0)));
                };
                if held.attempt + 1 >= max_attempts as i32 {
                    self.settle(what, job, Settle::DeadLetter).await?;
                    return Ok(Reply::row(Some(0), Some(1)));
                }
                if !retry_delay.is_zero() {
                    return Err(BackendError::other(
                        what,
                        "rabbitmq delays no retry (handler.retry_delay_ms is refused before a run)",
                    ));
                }
                let mut h = held.properties.headers().clone().unwrap_or_default();
                put(&mut h, ATTEMPT, AMQPValue::LongInt(held.attempt + 1));
                let c = self
                    .publisher
                    .basic_publish(
                        "",
                        &self.names.jobs,
                        MANDATORY,
                        &held.payload,
                        persistent(h, *held.properties.priority()),
                    )
                    .await
                    .map_err(|e| error(what, e))?;
                confirmed(what, c).await?;
                self.settle(what, job, Settle::Ack).await?;
                Reply::row(Some(1), Some(0))
            }
        })
    }
}

impl Session for RabbitSession {
    async fn begin(&mut self) -> Result<(), BackendError> {
        Err(broker::no_transaction(BackendKind::Rabbitmq))
    }

    async fn end(&mut self, _commit: bool) -> Result<(), BackendError> {
        Err(broker::no_transaction(BackendKind::Rabbitmq))
    }

    async fn apply(&mut self, settings: &[(String, String)]) -> Result<(), BackendError> {
        broker::no_settings(BackendKind::Rabbitmq, settings)
    }

    /// A negative acknowledgement with requeue of each this worker holds and has not
    /// started: back in the queue at once, for any consumer.
    async fn release(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        let mut released = Vec::with_capacity(jobs.len());
        for &job in jobs {
            let unstarted = self.held.get(&job).is_some_and(|h| h.token.is_none());
            if unstarted
                && self
                    .settle("release", job, Settle::Requeue)
                    .await?
                    .is_some()
            {
                released.push(job);
            }
        }
        Ok(released)
    }

    /// Nothing to take back: a delivery returns to the queue only when its consumer's
    /// channel closes, never by a timeout (the server's `consumer_timeout`, 30 minutes
    /// by default, closes a channel that holds one that long).
    async fn rescue(&mut self, _lease: Duration) -> Result<Vec<i64>, BackendError> {
        Ok(Vec::new())
    }

    async fn produce(&mut self, workload: &Workload, ages_us: &[i64]) -> Result<u64, BackendError> {
        self.add(workload, ages_us, "produce").await
    }

    /// The age of the message at the head of the queue (the oldest not yet handed to a
    /// consumer) and whether work is left. AMQP has no peek: the sampler takes the head
    /// message and gives it back at once (a negative acknowledgement with requeue puts
    /// it back in its place), which holds it from the workers for that round trip.
    async fn sample(&mut self, workload: &Workload) -> Result<Sample, BackendError> {
        let what = "sample the queue";
        if self.sampling.is_none() {
            let ch = self
                .conn
                .create_channel()
                .await
                .map_err(|e| error(what, e))?;
            self.sampling = Some(ch);
        }
        let ch = self.sampling.as_ref().expect("made above");
        let head = ch
            .basic_get(&self.names.jobs, BasicGetOptions { no_ack: false })
            .await
            .map_err(|e| error(what, e))?;
        let (oldest, more) = match head {
            None => (None, false),
            Some(m) => {
                let due = int(m.delivery.properties.headers().as_ref(), DUE);
                m.delivery
                    .acker
                    .nack(BasicNackOptions {
                        requeue: true,
                        multiple: false,
                    })
                    .await
                    .map_err(|e| error(what, e))?;
                (due, true)
            }
        };
        let now = now_us();
        Ok(Sample {
            oldest_pending_ms: oldest.map(|due| (now - due).max(0) as f64 / 1000.0),
            work_left: more,
            queue_active: vec![None; workload.population.queues.len()],
            ..Sample::default()
        })
    }

    /// A crashed worker's connection ends with its process: the server hands every
    /// delivery it held back at once (this one, the rest of its batch, what it had been
    /// pushed), and the worker's next call finds the connection closed and reconnects,
    /// as its replacement would.
    async fn crashed(&mut self, _job: i64) -> Result<(), BackendError> {
        // A connection already closing is as good as closed.
        let _ = self.conn.close(200, "claimbench: the faults' crash").await;
        Ok(())
    }

    /// Closes every connection the backend opened as `role`, from claimbench's side
    /// (the server closes another client's connection only through its management
    /// interface): the server puts each one's unacknowledged deliveries back in the
    /// queue at once, and the workers reconnect.
    async fn kill_workers(&mut self, role: &str) -> Result<u64, BackendError> {
        // Only those still open: a crashed worker's closed connection can stay listed
        // until its replacement has connected.
        let open: Vec<_> = self
            .registered
            .connections
            .of_role(role)
            .into_iter()
            .filter(|c| c.status().connected())
            .collect();
        for c in &open {
            // A connection closing meanwhile is as good as killed.
            let _ = c
                .close(200, "claimbench: the faults' connection kill")
                .await;
        }
        Ok(open.len() as u64)
    }
}

/// Every handler run the effects queue recorded.
pub(super) async fn effects(conn: &Connection, queue: &str) -> Result<Vec<Run>, BackendError> {
    let mut out = Vec::new();
    queues::read_all(conn, queue, "read the effects", |h| {
        let get = |f: &str| int(h, f).unwrap_or(0);
        out.push(Run {
            job: get(ID),
            ok: get("f") == 0,
            started_us: get("s"),
            finished_us: get("e"),
            owned: get("o") == 1,
        });
    })
    .await?;
    Ok(out)
}

/// Completions per queue between two instants (µs, this host's clock).
pub(super) async fn completed_between(
    conn: &Connection,
    done: &str,
    from_us: i64,
    to_us: i64,
) -> Result<Vec<(String, i64)>, BackendError> {
    let mut by_queue: std::collections::BTreeMap<String, i64> = Default::default();
    queues::read_all(conn, done, "count completions per queue", |h| {
        let t = int(h, "t").unwrap_or(0);
        if (from_us..=to_us).contains(&t) {
            let q = queues::text(h, QUEUE).map(|b| String::from_utf8_lossy(b).into_owned());
            *by_queue.entry(q.unwrap_or_default()).or_default() += 1;
        }
    })
    .await?;
    Ok(by_queue.into_iter().collect())
}
