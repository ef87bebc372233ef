//! NATS JetStream: a queue that is not a table, in the broker's own operational model.
//! A job is a message of a work-queue stream (gone once acknowledged), a claim is a
//! durable pull consumer's fetch of up to a batch, the visibility timeout is the
//! consumer's AckWait (the workload's lease), a failed run is a negative
//! acknowledgement with the retry delay, and the heartbeat is an in-progress
//! acknowledgement. What the ledger needs beyond the queue — completions, dead letters
//! and the handler's effects — goes to three streams of their own, written by the worker
//! as a SQL worker writes its rows; reconciliation reads them back.
//!
//! What the stream cannot express of the production claim (per-queue limits, pauses,
//! priority order, scheduled jobs, strict ownership) is refused before a run starts
//! (`workload::coherence::broker_misfit`); the calls are listed in
//! `migrations/nats/strategies/jetstream.txt` (`claimbench sql --backend nats`).

mod errors;
mod session;
mod streams;

pub use session::NatsSession;

use super::connections::Connections;
use super::recipe::{self, Instance, Query, Rows};
use super::{
    Backend, BackendError, DbReconciliation, Endpoint, Reset, ServerCounters, ServerInfo,
    TableStats, ownership,
};
use crate::backend_kind::BackendKind;
use async_nats::jetstream::{self, consumer, stream};
use errors::{error, no_such_stream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use streams::{CONSUMER, MARKER, Names};

/// The visibility timeout without a lease: JetStream's own default AckWait.
const DEFAULT_ACK_WAIT: Duration = Duration::from_secs(30);

/// A NATS server named by a `nats://[user:password@]host:port` URL. The password stays
/// inside; only [`NatsTarget::display`] is ever shown.
#[derive(Clone)]
pub struct NatsTarget {
    host: String,
    port: u16,
    user: Option<(String, String)>,
    display: String,
}

/// Debug shows the redacted form only, so a `{:?}` cannot leak a password.
impl std::fmt::Debug for NatsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NatsTarget({})", self.display)
    }
}

impl NatsTarget {
    /// Reads a `nats://[user:password@]host[:port]` URL; the error never holds it.
    pub fn parse(raw: &str) -> Result<NatsTarget, String> {
        let url = url::Url::parse(raw).map_err(|e| e.to_string().replace(raw, "<url>"))?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or("the URL names no host")?
            .to_string();
        let port = url.port().unwrap_or(4222);
        if !matches!(url.path(), "" | "/") || url.query().is_some() {
            return Err("a nats:// URL is host and port only (no path, no options)".into());
        }
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let user = (!url.username().is_empty())
            .then(|| (decode(url.username()), decode(url.password().unwrap_or(""))));
        let at = user
            .as_ref()
            .map(|(u, _)| format!("{u}@"))
            .unwrap_or_default();
        let display = format!("nats://{at}{host}:{port}");
        Ok(NatsTarget {
            host,
            port,
            user,
            display,
        })
    }

    /// The URL without its password.
    pub fn display(&self) -> &str {
        &self.display
    }
}

/// One client connection to `target`, named `role` on the server (its CONNECT name),
/// through `via` when given.
pub(crate) async fn open(
    target: &NatsTarget,
    role: &str,
    via: Option<std::net::SocketAddr>,
) -> Result<async_nats::Client, BackendError> {
    let mut options = async_nats::ConnectOptions::new()
        .name(role)
        .connection_timeout(Duration::from_secs(5))
        .request_timeout(Some(Duration::from_secs(5)));
    if let Some((u, p)) = &target.user {
        options = options.user_and_password(u.clone(), p.clone());
    }
    let addr = match via {
        Some(v) => v.to_string(),
        None => format!("{}:{}", target.host, target.port),
    };
    options
        .connect(addr)
        .await
        .map_err(|e| BackendError::Connect {
            target: target.display.clone(),
            reason: e.to_string(),
            hint: "is a NATS server with JetStream listening there (nats-server -js), and are the user and password right? check --db",
        })
}

/// A NATS server with JetStream, with claimbench's streams named after `schema`.
pub struct NatsBackend {
    target: NatsTarget,
    id: Instance,
    names: Arc<Names>,
    /// The consumer's AckWait in ms, set at each reset; each session reads it to tell
    /// whether its delivery is still its own.
    ack_wait_ms: Arc<AtomicU64>,
    /// Every session's connection, for the faults' connection kill.
    clients: Arc<Connections<async_nats::Client>>,
}

impl NatsBackend {
    pub fn new(target: NatsTarget, schema: &str) -> NatsBackend {
        let display = target.display.clone();
        NatsBackend {
            target,
            id: Instance::new(BackendKind::Nats, schema, display, None),
            names: Arc::new(Names::new(schema)),
            ack_wait_ms: Arc::new(AtomicU64::new(DEFAULT_ACK_WAIT.as_millis() as u64)),
            clients: Arc::default(),
        }
    }

    async fn control(&self) -> Result<jetstream::Context, BackendError> {
        let client = open(&self.target, "claimbench-control", None).await?;
        Ok(jetstream::new(client))
    }

    /// Whether any of claimbench's streams exist, and whether all that do carry the
    /// marker.
    async fn facts(&self, js: &jetstream::Context) -> Result<(bool, bool), BackendError> {
        let (mut any, mut marked) = (false, true);
        for name in self.names.all() {
            match js.get_stream(name).await {
                Ok(s) => {
                    any = true;
                    marked &= s.cached_info().config.description.as_deref() == Some(MARKER);
                }
                Err(e) if no_such_stream(&e) => {}
                Err(e) => return Err(error("look up the run's streams", e)),
            }
        }
        Ok((any, any && marked))
    }

    async fn stream(
        &self,
        js: &jetstream::Context,
        name: &str,
    ) -> Result<stream::Stream, BackendError> {
        js.get_stream(name)
            .await
            .map_err(|e| error("open a stream", e))
    }
}

impl recipe::Dialect for NatsBackend {
    fn instance(&self) -> &Instance {
        &self.id
    }

    /// Never reached: every control question is answered by this backend's own methods.
    fn control_rows(&self, q: Query<'_>) -> impl Future<Output = Rows> + Send {
        let what = q.what;
        async move { Err(BackendError::other(what, "nats runs no SQL")) }
    }
}

impl Backend for NatsBackend {
    type Session = NatsSession;

    async fn connect(&self, role: &str, worker_id: &str) -> Result<NatsSession, BackendError> {
        self.connect_to(role, worker_id, Endpoint::default()).await
    }

    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        use std::net::ToSocketAddrs;
        (self.target.host.as_str(), self.target.port)
            .to_socket_addrs()
            .ok()?
            .next()
    }

    async fn connect_to(
        &self,
        role: &str,
        _worker_id: &str,
        to: Endpoint,
    ) -> Result<NatsSession, BackendError> {
        let client = open(&self.target, role, to.via).await?;
        let registered = self.clients.add(role, client.clone());
        NatsSession::open(
            client,
            self.names.clone(),
            self.ack_wait_ms.clone(),
            registered,
        )
        .await
    }

    /// The server's version, and whether JetStream is on (without it no stream can be
    /// made, which the reset then says).
    async fn server_info(&self) -> Result<ServerInfo, BackendError> {
        let client = open(&self.target, "claimbench-control", None).await?;
        let info = client.server_info();
        Ok(ServerInfo {
            version: format!("NATS {}", info.version),
            // What decides how much an acknowledged job survives a crash: the streams
            // claimbench makes are file-backed.
            // The server's own interval (two minutes unless its configuration says
            // otherwise; 2.9 has no setting for it, 2.10 has sync_interval).
            settings: vec![
                ("jetstream".into(), info.jetstream.to_string()),
                ("storage".into(), "file".into()),
                ("sync".into(), "interval".into()),
            ],
        })
    }

    async fn check_schema(&self) -> Result<(), BackendError> {
        let js = self.control().await?;
        let (exists, marked) = self.facts(&js).await?;
        let facts = ownership::SchemaFacts {
            exists,
            marked,
            empty: false,
        };
        ownership::may_recreate(BackendKind::Nats, &self.id.schema, facts).map_err(|refusal| {
            BackendError::ForeignSchema {
                target: self.target.display.clone(),
                refusal,
            }
        })
    }

    /// Deletes claimbench's streams (only those: [`Names::all`], and only marked), makes
    /// them again with the consumer, its AckWait the workload's lease, and publishes the
    /// backlog.
    async fn rebuild(&self, r: Reset<'_>) -> Result<u64, BackendError> {
        if r.layout != crate::names::WORK_QUEUE {
            return Err(BackendError::other(
                "reset the run's streams",
                format!("no nats layout named `{}`", r.layout),
            ));
        }
        self.check_schema().await?;
        let js = self.control().await?;
        let what = "reset the run's streams";
        for name in self.names.all() {
            match js.delete_stream(name).await {
                Ok(_) => {}
                Err(e) if no_such_stream(&e) => {}
                Err(e) => return Err(error(what, e)),
            }
        }
        for (name, retention) in [
            (&self.names.jobs, stream::RetentionPolicy::WorkQueue),
            (&self.names.done, stream::RetentionPolicy::Limits),
            (&self.names.dead, stream::RetentionPolicy::Limits),
            (&self.names.effects, stream::RetentionPolicy::Limits),
        ] {
            let mut subjects = vec![name.clone()];
            if *name == self.names.dead {
                subjects.push(self.names.max_deliveries());
            }
            js.create_stream(stream::Config {
                name: name.clone(),
                subjects,
                retention,
                storage: stream::StorageType::File,
                allow_direct: true,
                description: Some(MARKER.into()),
                ..Default::default()
            })
            .await
            .map_err(|e| error(what, e))?;
        }
        let ack_wait = r.workload.faults.lease.unwrap_or(DEFAULT_ACK_WAIT);
        self.ack_wait_ms
            .store(ack_wait.as_millis() as u64, Ordering::Relaxed);
        self.stream(&js, &self.names.jobs)
            .await?
            .create_consumer(consumer::pull::Config {
                durable_name: Some(CONSUMER.into()),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait,
                // The last attempt: a message delivered this often is not delivered
                // again, and the server's advisory goes to the dead stream.
                max_deliver: i64::from(r.workload.handler.max_attempts.max(1)),
                max_ack_pending: -1,
                ..Default::default()
            })
            .await
            .map_err(|e| error(what, e))?;
        let mut session = self.connect("claimbench-seed", "claimbench-seed").await?;
        session.seed_rng(r.seed);
        let backlog = r.workload.population.backlog;
        for ages in super::broker::seed_chunks(backlog) {
            session.add(r.workload, ages, "seed the backlog").await?;
        }
        Ok(backlog)
    }

    /// NATS counts no transactions, deadlocks or lock waits: every counter is absent.
    async fn counters(&self) -> Result<ServerCounters, BackendError> {
        Ok(ServerCounters::default())
    }

    /// The client protocol does not tell the server's pid: on this host, it is the
    /// process listening on the server's port (nats-server is one process).
    async fn server_pid(&self) -> Option<super::ServerProcess> {
        super::broker::listening_server(self.worker_address()).await
    }

    /// The jobs not yet acknowledged and the bytes the stream keeps; no index, no dead
    /// rows.
    async fn table_stats(&self) -> Result<TableStats, BackendError> {
        let js = self.control().await?;
        let s = self.stream(&js, &self.names.jobs).await?;
        let state = &s.cached_info().state;
        Ok(TableStats {
            live_tuples: state.messages as i64,
            dead_tuples: 0,
            table_bytes: state.bytes as i64,
            index_bytes: 0,
        })
    }

    /// Where every job ended: still in the stream (pending: a delivered message that
    /// was never acknowledged stays there and is delivered again once AckWait has
    /// passed, and the consumer's count of those in flight also holds the ones waiting
    /// out a retry's delay, so no job is read as stranded in a worker's hands),
    /// completed (each job once, however often it was acknowledged) and dead-lettered
    /// (their streams: a last attempt that failed, or the server's word that a message
    /// ran out of deliveries, which stays in the stream undelivered), and the effects'
    /// own count of duplicate executions.
    ///
    /// A completed job can be in the stream too: the server acknowledged its removal and
    /// then crashed before its files had it, so the restart brought the message back (to
    /// be delivered, and run, again); or a worker recorded the completion and lost its
    /// connection before the acknowledgement. It is counted completed, not pending.
    async fn reconcile(&self) -> Result<DbReconciliation, BackendError> {
        let js = self.control().await?;
        let what = "reconcile the queue";
        let jobs = self.stream(&js, &self.names.jobs).await?;
        let state = jobs
            .info_builder()
            .with_deleted(true)
            .fetch()
            .await
            .map_err(|e| error(what, e))?
            .info
            .state;
        let done = self.stream(&js, &self.names.done).await?;
        let completed = session::recorded_jobs(&done).await?;
        let dead = self.stream(&js, &self.names.dead).await?;
        let mut dead = session::recorded_jobs(&dead).await?;
        dead.retain(|j| completed.binary_search(j).is_err());
        // Out of deliveries, a message stays in the stream, never delivered again.
        let finished_but_in = [&completed, &dead];
        let mut back_again = 0;
        for ids in finished_but_in {
            back_again += session::still_in(&jobs, &state, ids).await? as i64;
        }
        let effects = self.stream(&js, &self.names.effects).await?;
        let runs = session::effects(&effects).await?;
        Ok(crate::backend::broker::reconciliation(
            (state.messages as i64 - back_again, 0, 0),
            completed.len() as i64,
            dead.len() as i64,
            &runs,
        ))
    }

    async fn change_shards(
        &self,
        _change: recipe::ShardChange,
        _queues: &[String],
        _workers: &[String],
    ) -> Result<(), BackendError> {
        Err(super::broker::no_shard_map(BackendKind::Nats))
    }

    /// The client's clock: every time claimbench writes to the streams (a job's due
    /// time, a completion's) is this host's, so completions per queue are read on it.
    async fn server_clock_us(&self) -> Result<i64, BackendError> {
        Ok(super::broker::now_us())
    }

    async fn completed_by_queue(
        &self,
        from_us: i64,
        to_us: i64,
    ) -> Result<Vec<(String, i64)>, BackendError> {
        let js = self.control().await?;
        let done = self.stream(&js, &self.names.done).await?;
        session::completed_between(&done, from_us, to_us).await
    }

    /// Only capped queues ask, and a stream has no per-queue cap (refused before a run).
    async fn job_queues(&self, _queues: &[String]) -> Result<Vec<(i64, String)>, BackendError> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_shows_its_host_and_user_but_never_its_password() {
        let t = NatsTarget::parse("nats://app:s3cret@127.0.0.1:4333").unwrap();
        assert_eq!(t.display(), "nats://app@127.0.0.1:4333");
        assert_eq!(t.user, Some(("app".into(), "s3cret".into())));
        let t = NatsTarget::parse("nats://db.example").unwrap();
        assert_eq!(t.display(), "nats://db.example:4222");
        let e = NatsTarget::parse("nats://app:s3cret@db.example:notaport").unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
        let e = NatsTarget::parse("nats://db.example:4222/sub?x=1").unwrap_err();
        assert!(e.contains("host and port only"), "{e}");
    }
}
