//! One Redis connection of a worker (a consumer of the group, or a record's owner, named
//! by its worker id), the sampler, the producer or the rescuer; and the control reads
//! that walk the run's keys (reconciliation, completions per queue).

use super::errors::error;
use super::scripts::{self, CurrentModel, Keys, Model};
use crate::backend::broker::{self, Run};
use crate::backend::claim::{Ask, ClaimSteps, Done, Won};
use crate::backend::lifecycle::{Lifecycle, Reply, Step};
use crate::backend::{BackendError, ClaimedJob, DbReconciliation, Sample, Session};
use crate::backend_kind::BackendKind;
use crate::strategy::Strategy;
use crate::workload::Workload;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use redis::aio::MultiplexedConnection;
use redis::{Script, Value};
use std::sync::Arc;
use std::time::Duration;

pub struct RedisSession {
    conn: MultiplexedConnection,
    keys: Arc<Keys>,
    /// The model the last reset built, read at each call: a session opened before a
    /// reset follows it.
    model: CurrentModel,
    /// This connection's consumer name in the group: the worker's id.
    consumer: String,
    /// The claim script of the strategy last claimed with, on its model, built once.
    claim: Option<(Strategy, Model, Script)>,
    /// Draws each produced job's queue by the workload's weights.
    rng: SmallRng,
}

/// An integer of a script's reply (Lua numbers come as integers, stream fields as
/// strings); `None` for nil or anything else.
fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        Value::SimpleString(s) => s.parse().ok(),
        _ => None,
    }
}

fn ints(v: &[Value]) -> Vec<i64> {
    v.iter().filter_map(int).collect()
}

/// A reply that is not the array its script returns.
fn not_an_array(what: &'static str, v: &Value) -> BackendError {
    BackendError::other(what, format!("the script answered {v:?}, not an array"))
}

fn array(what: &'static str, v: Value) -> Result<Vec<Value>, BackendError> {
    match v {
        Value::Array(items) => Ok(items),
        other => Err(not_an_array(what, &other)),
    }
}

impl RedisSession {
    pub(super) fn new(
        conn: MultiplexedConnection,
        keys: Arc<Keys>,
        model: CurrentModel,
        consumer: &str,
    ) -> Self {
        RedisSession {
            conn,
            keys,
            model,
            consumer: consumer.to_string(),
            claim: None,
            rng: SmallRng::from_entropy(),
        }
    }

    /// Draws queues from `seed` from now on, so a reset seeds the same backlog.
    pub(super) fn seed_rng(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }

    /// Builds the claim script of `ask`'s strategy on the current model, once per
    /// strategy and model; a strategy made for the other model is refused.
    fn prepare_claim(&mut self, ask: Ask<'_>, what: &'static str) -> Result<(), BackendError> {
        let model = self.model.get();
        let cached = self
            .claim
            .as_ref()
            .is_some_and(|(s, m, _)| s == ask.strategy && *m == model);
        if !cached {
            let body = ask.strategy.sql(BackendKind::Redis).ok_or_else(|| {
                BackendError::other(what, format!("{} has no redis form", ask.strategy))
            })?;
            if let Some(wants) = scripts::model_of(ask.strategy).filter(|m| *m != model) {
                return Err(BackendError::other(
                    what,
                    format!(
                        "{} runs on the layout `{}`, and the keys were built as `{}`",
                        ask.strategy,
                        wants.layout(),
                        model.layout()
                    ),
                ));
            }
            self.claim = Some((ask.strategy.clone(), model, scripts::script(model, body)));
        }
        Ok(())
    }

    /// Runs the lifecycle script `pick` chooses on the current model.
    async fn call(
        &mut self,
        pick: fn(&scripts::Lifecycle) -> &Script,
        what: &'static str,
        args: impl FnOnce(&mut redis::ScriptInvocation<'_>, &str),
    ) -> Result<Value, BackendError> {
        let model = self.model.get();
        self.run(model, pick(scripts::lifecycle(model)), what, args)
            .await
    }

    async fn run(
        &mut self,
        model: Model,
        script: &Script,
        what: &'static str,
        args: impl FnOnce(&mut redis::ScriptInvocation<'_>, &str),
    ) -> Result<Value, BackendError> {
        let mut call = self.keys.invoke(model, script);
        args(&mut call, &self.consumer);
        call.invoke_async(&mut self.conn)
            .await
            .map_err(|e| error(what, e))
    }

    /// The seed's ages (µs before now each job became due): 0, or for the workload's
    /// `scheduled_share` of jobs a due time up to `scheduled_within_s` ahead (a negative
    /// age), drawn from the seeded generator. Only the records' model holds a job back
    /// until then; scheduled jobs on a stream are refused before a run.
    pub(super) fn scheduled_ages(&mut self, workload: &Workload, ages_us: &mut [i64]) {
        let p = &workload.population;
        for age in ages_us.iter_mut() {
            *age = 0;
            if p.scheduled_share > 0.0 && self.rng.r#gen::<f64>() < p.scheduled_share {
                let ahead: f64 = self.rng.r#gen::<f64>() * p.scheduled_within_s * 1e6;
                *age = -(ahead as i64);
            }
        }
    }

    /// Adds one job per entry of `ages_us` (µs before now it arrived), each of a queue
    /// drawn by the workload's weights, with the workload's payload size.
    pub(super) async fn add(
        &mut self,
        workload: &Workload,
        ages_us: &[i64],
        what: &'static str,
    ) -> Result<u64, BackendError> {
        let p = &workload.population;
        let payload = "x".repeat(p.payload_bytes as usize);
        let draw = p.job_draw();
        let jobs: Vec<(&str, i32)> = ages_us
            .iter()
            .map(|_| draw.draw(self.rng.r#gen(), self.rng.r#gen()))
            .collect();
        let added = self
            .call(
                |l| &l.produce,
                what,
                |c, _| {
                    c.arg(&payload);
                    for ((q, priority), age) in jobs.iter().zip(ages_us) {
                        c.arg(*q).arg(*age).arg(*priority);
                    }
                },
            )
            .await?;
        Ok(int(&added).unwrap_or(0) as u64)
    }
}

/// A claimed job from its id, attempts before this claim and due time (µs), read at
/// `now` on the server's clock.
fn delivered(
    what: &'static str,
    now: i64,
    id: &Value,
    attempt: &Value,
    due: &Value,
) -> Result<ClaimedJob, BackendError> {
    let (Some(id), Some(attempt), Some(due)) = (int(id), int(attempt), int(due)) else {
        return Err(BackendError::other(
            what,
            "a claimed job lacks its id, attempts or due time",
        ));
    };
    Ok(ClaimedJob {
        id,
        attempt: attempt as i32,
        queue_wait_us: (now - due).max(0),
    })
}

/// A SQL claim step redis-streams' and redis-cas's forms refuse before a run.
fn no_such_step(what: &'static str) -> BackendError {
    crate::backend::broker::not_a_delivery(what, "redis")
}

impl ClaimSteps for RedisSession {
    /// One `XREADGROUP` of up to the batch through the strategy's script.
    async fn locking_claim(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        let what = "claim";
        self.prepare_claim(ask, what)?;
        let (_, model, script) = self.claim.as_ref().expect("prepared");
        let mut call = self.keys.invoke(*model, script);
        call.arg(&self.consumer).arg(ask.batch);
        let reply: Value = call
            .invoke_async(&mut self.conn)
            .await
            .map_err(|e| error(what, e))?;
        let items = array(what, reply)?;
        let now = items.first().and_then(int).unwrap_or(0);
        for job in items.get(1..).unwrap_or_default().chunks_exact(4) {
            // id, attempts before this one, due (µs), payload (read, then dropped)
            out.push(delivered(what, now, &job[0], &job[1], &job[2])?);
        }
        Ok(())
    }
    async fn read_then_write(&mut self, _: Ask<'_>, _: &mut Vec<ClaimedJob>) -> Done {
        Err(no_such_step("claim (read, then write)"))
    }

    async fn candidates(&mut self, _: Ask<'_>, _: &mut Vec<ClaimedJob>) -> Done {
        Err(no_such_step("claim (candidates)"))
    }

    /// The read of up to the batch with their versions, then one compare-and-set of
    /// them (strategies/cas.lua): two calls, between which other workers may take any of
    /// them. The write is one script, so on an error nothing was taken.
    async fn version_cas(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<u32, BackendError> {
        let what = "claim (compare-and-set)";
        self.prepare_claim(ask, what)?;
        let (_, model, script) = self.claim.as_ref().expect("prepared");
        let mut read = self.keys.invoke(*model, script);
        read.arg("read").arg(ask.batch);
        let items = array(
            what,
            read.invoke_async(&mut self.conn)
                .await
                .map_err(|e| error(what, e))?,
        )?;
        let now = items.first().and_then(int).unwrap_or(0);
        let candidates = items.get(1..).unwrap_or_default();
        if candidates.len() < 4 {
            return Ok(0);
        }
        let mut cas = self.keys.invoke(*model, script);
        cas.arg("cas").arg(&self.consumer);
        for c in candidates.chunks_exact(4) {
            // id, version
            cas.arg(int(&c[0])).arg(int(&c[1]));
        }
        let won = ints(&array(
            what,
            cas.invoke_async(&mut self.conn)
                .await
                .map_err(|e| error(what, e))?,
        )?);
        let mut lost = 0;
        for c in candidates.chunks_exact(4) {
            // id, version, attempts before this one, due (µs)
            match int(&c[0]) {
                Some(id) if won.contains(&id) => {
                    out.push(delivered(what, now, &c[0], &c[2], &c[3])?)
                }
                _ => lost += 1,
            }
        }
        Ok(lost)
    }

    async fn claim_one(&mut self, _: Ask<'_>, _: ClaimedJob) -> Won {
        Err(no_such_step("claim (one candidate)"))
    }
}

impl Lifecycle for RedisSession {
    async fn run(&mut self, step: Step) -> Result<Reply, BackendError> {
        let what = step.what();
        let reply = match step {
            // No per-queue limit on a stream, so nothing for a gated start to re-check
            // (a workload that asks for one is refused on redis).
            Step::Start { job, token, .. } => {
                self.call(
                    |l| &l.start,
                    what,
                    |c, me| {
                        c.arg(job).arg(me).arg(token);
                    },
                )
                .await?
            }
            Step::Heartbeat { job, token } => {
                self.call(
                    |l| &l.heartbeat,
                    what,
                    |c, me| {
                        c.arg(job).arg(me).arg(token);
                    },
                )
                .await?
            }
            Step::Effect(e) => {
                self.call(
                    |l| &l.effect,
                    what,
                    |c, me| {
                        c.arg(e.job)
                            .arg(e.attempt)
                            .arg(i32::from(e.failed))
                            .arg(e.started_us)
                            .arg(e.token)
                            .arg(me);
                    },
                )
                .await?
            }
            Step::Complete { job } => {
                self.call(
                    |l| &l.complete,
                    what,
                    |c, me| {
                        c.arg(job).arg(me);
                    },
                )
                .await?
            }
            // The retry is due after its delay (held back on the records' model; a
            // workload with a delay is refused on a stream, which delivers at once).
            Step::Fail {
                job,
                retry_delay,
                max_attempts,
            } => {
                // At most a year: the server adds it to its clock as a double.
                let delay_us = retry_delay.as_micros().min(365 * 86_400 * 1_000_000) as u64;
                self.call(
                    |l| &l.fail,
                    what,
                    |c, me| {
                        c.arg(job).arg(me).arg(max_attempts).arg(delay_us);
                    },
                )
                .await?
            }
        };
        let items = array(what, reply)?;
        let at = |i: usize| items.get(i).and_then(int);
        Ok(Reply::row(at(0), at(1)))
    }
}

impl Session for RedisSession {
    async fn begin(&mut self) -> Result<(), BackendError> {
        Err(broker::no_transaction(BackendKind::Redis))
    }

    async fn end(&mut self, _commit: bool) -> Result<(), BackendError> {
        Err(broker::no_transaction(BackendKind::Redis))
    }

    async fn apply(&mut self, settings: &[(String, String)]) -> Result<(), BackendError> {
        broker::no_settings(BackendKind::Redis, settings)
    }

    async fn release(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        let reply = self
            .call(
                |l| &l.release,
                "release",
                |c, me| {
                    c.arg(me);
                    for j in jobs {
                        c.arg(*j);
                    }
                },
            )
            .await?;
        Ok(ints(&array("release", reply)?))
    }

    async fn rescue(&mut self, lease: Duration) -> Result<Vec<i64>, BackendError> {
        let lease_ms = lease.as_millis().max(1) as u64;
        let reply = self
            .call(
                |l| &l.rescue,
                "rescue",
                |c, me| {
                    c.arg(lease_ms).arg(me);
                },
            )
            .await?;
        Ok(ints(&array("rescue", reply)?))
    }

    async fn produce(&mut self, workload: &Workload, ages_us: &[i64]) -> Result<u64, BackendError> {
        self.add(workload, ages_us, "produce").await
    }

    /// The oldest unclaimed job's age and whether work is left; Redis has no lock waits,
    /// no statements running and no per-queue limits to report.
    async fn sample(&mut self, workload: &Workload) -> Result<Sample, BackendError> {
        let what = "sample the queue";
        let items = array(what, self.call(|l| &l.sample, what, |_, _| {}).await?)?;
        let at = |i: usize| items.get(i).and_then(int);
        let now = at(0).unwrap_or(0);
        Ok(Sample {
            oldest_pending_ms: at(1).map(|due| (now - due).max(0) as f64 / 1000.0),
            work_left: at(2).unwrap_or(0) > 0,
            queue_active: vec![None; workload.population.queues.len()],
            ..Sample::default()
        })
    }

    /// CLIENT KILL of every connection named `role` (each worker names its own).
    async fn kill_workers(&mut self, role: &str) -> Result<u64, BackendError> {
        let what = "kill worker connections";
        let list: String = redis::cmd("CLIENT")
            .arg("LIST")
            .query_async(&mut self.conn)
            .await
            .map_err(|e| error(what, e))?;
        let ids: Vec<&str> = list
            .lines()
            .filter(|l| l.split(' ').any(|f| f == format!("name={role}")))
            .filter_map(|l| l.split(' ').find_map(|f| f.strip_prefix("id=")))
            .collect();
        let mut killed = 0;
        for id in ids {
            let n: i64 = redis::cmd("CLIENT")
                .arg("KILL")
                .arg("ID")
                .arg(id)
                .query_async(&mut self.conn)
                .await
                .map_err(|e| error(what, e))?;
            killed += n as u64;
        }
        Ok(killed)
    }
}

/// Where every job ended on `model`, and the effects' own count of duplicate executions
/// by the rule `reconcile.sql` applies on the SQL engines: a run that overlaps an earlier
/// run of its job, or follows one that succeeded.
pub(super) async fn reconcile(
    mut c: MultiplexedConnection,
    keys: &Keys,
    model: Model,
) -> Result<DbReconciliation, BackendError> {
    let what = "reconcile the queue";
    let e = |err| error(what, err);
    let mut pipe = redis::pipe();
    // Jobs not finished, and of those the ones claimed.
    match model {
        Model::Stream => pipe
            .cmd("XLEN")
            .arg(&keys.jobs)
            .cmd("XPENDING")
            .arg(&keys.jobs)
            .arg(scripts::GROUP),
        Model::HashByDue => pipe
            .cmd("HLEN")
            .arg(&keys.jobs)
            .cmd("ZCARD")
            .arg(&keys.leases),
    };
    let (len, claimed, started, done, dead): (i64, Value, i64, i64, i64) = pipe
        .cmd("HLEN")
        .arg(&keys.exec)
        .cmd("XLEN")
        .arg(&keys.done)
        .cmd("HLEN")
        .arg(&keys.dead)
        .query_async(&mut c)
        .await
        .map_err(e)?;
    // XPENDING's summary begins with the count; ZCARD is the count.
    let delivered = match &claimed {
        Value::Array(a) => a.first().and_then(int).unwrap_or(0),
        v => int(v).unwrap_or(0),
    };
    let runs = effects(&mut c, keys).await?;
    let pending = len - delivered;
    Ok(broker::reconciliation(
        (pending, delivered - started, started),
        done,
        dead,
        &runs,
    ))
}

/// Every EFFECTS entry, read in pages.
async fn effects(c: &mut MultiplexedConnection, keys: &Keys) -> Result<Vec<Run>, BackendError> {
    let mut out = Vec::new();
    let mut from = "-".to_string();
    loop {
        let page: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
            .arg(&keys.effects)
            .arg(&from)
            .arg("+")
            .arg("COUNT")
            .arg(10_000)
            .query_async(c)
            .await
            .map_err(|e| error("read the effects", e))?;
        let Some(last) = page.ids.last() else {
            return Ok(out);
        };
        from = format!("({}", last.id);
        for entry in &page.ids {
            let get = |f: &str| entry.get::<i64>(f).unwrap_or(0);
            out.push(Run {
                job: get("j"),
                ok: get("f") == 0,
                started_us: get("s"),
                finished_us: get("e"),
                owned: get("o") == 1,
            });
        }
    }
}

/// Completions per queue in the DONE stream between two ms instants.
pub(super) async fn completed_between(
    c: &mut MultiplexedConnection,
    keys: &Keys,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<(String, i64)>, BackendError> {
    let page: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg(&keys.done)
        .arg(from_ms)
        .arg(to_ms)
        .query_async(c)
        .await
        .map_err(|e| error("count completions per queue", e))?;
    let mut by_queue: std::collections::BTreeMap<String, i64> = Default::default();
    for entry in &page.ids {
        let q: String = entry.get("q").unwrap_or_default();
        *by_queue.entry(q).or_default() += 1;
    }
    Ok(by_queue.into_iter().collect())
}
