//! RabbitMQ: a queue that is not a table, in the broker's own operational model. A job
//! is a persistent message of a durable classic queue, a claim is what a consumer with a
//! prefetch of the batch has been handed, a completion is a manual acknowledgement, a
//! retry is the message published again with its attempt counted and the original
//! acknowledged, and the last attempt is rejected to the dead-letter queue (the queue's
//! dead-letter exchange). There is no visibility timeout: a delivery stays the
//! consumer's until it is acknowledged or its channel closes (a lost connection puts it
//! back at once), whatever the workload's lease; a hung handler holds its job.
//!
//! What the ledger needs beyond the queue — completions and the handler's effects —
//! goes to queues of its own, published with confirms as a SQL worker writes its rows;
//! reconciliation reads them back. What the queue cannot express of the production
//! claim is refused before a run (`workload::coherence::broker_misfit`); the calls are
//! listed in `migrations/rabbitmq/strategies/rabbitmq.txt`.

mod errors;
mod queues;
mod session;

pub use session::RabbitSession;

use super::connections::Connections;
use super::recipe::{self, Instance, Query, Rows};
use super::{
    Backend, BackendError, DbReconciliation, Endpoint, Reset, ServerCounters, ServerInfo,
    TableStats, ownership,
};
use crate::backend_kind::BackendKind;
use errors::error;
use lapin::options::{QueueDeclareOptions, QueueDeleteOptions};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::uri::AMQPUri;
use lapin::{Connection, ConnectionProperties};
use queues::Names;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// How long opening a connection may take.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);

/// A RabbitMQ server named by an `amqp://[user:password@]host[:port][/vhost]` URL. The
/// password stays inside; only [`RabbitTarget::display`] is ever shown.
#[derive(Clone)]
pub struct RabbitTarget {
    uri: AMQPUri,
    display: String,
}

/// Debug shows the redacted form only, so a `{:?}` cannot leak a password.
impl std::fmt::Debug for RabbitTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RabbitTarget({})", self.display)
    }
}

impl RabbitTarget {
    /// Reads an `amqp://` URL; the error never holds it.
    pub fn parse(raw: &str) -> Result<RabbitTarget, String> {
        let uri: AMQPUri = raw.parse().map_err(|e: String| e.replace(raw, "<url>"))?;
        if uri.authority.host.is_empty() {
            return Err("the URL names no host".into());
        }
        let user = &uri.authority.userinfo.username;
        let vhost = match uri.vhost.as_str() {
            "/" => "%2f".to_string(),
            v => percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC)
                .to_string(),
        };
        let display = format!(
            "amqp://{user}@{}:{}/{vhost}",
            uri.authority.host, uri.authority.port
        );
        Ok(RabbitTarget { uri, display })
    }

    /// The URL without its password.
    pub fn display(&self) -> &str {
        &self.display
    }
}

/// One connection to `target`, named `role` on the server, through `via` when given.
pub(crate) async fn open(
    target: &RabbitTarget,
    role: &str,
    via: Option<std::net::SocketAddr>,
) -> Result<Connection, BackendError> {
    let mut uri = target.uri.clone();
    if let Some(v) = via {
        uri.authority.host = v.ip().to_string();
        uri.authority.port = v.port();
    }
    let options = ConnectionProperties::default()
        .with_connection_name(LongString::from(role.to_string()))
        .with_executor(tokio_executor_trait::Tokio::current())
        .with_reactor(tokio_reactor_trait::Tokio);
    let refused = |reason: String| BackendError::Connect {
        target: target.display.clone(),
        reason,
        hint: "is a RabbitMQ server listening there, and are the user, password and vhost right? check --db",
    };
    match tokio::time::timeout(CONNECT_WITHIN, Connection::connect_uri(uri, options)).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(refused(e.to_string())),
        Err(_) => Err(refused(format!(
            "no answer within {} s",
            CONNECT_WITHIN.as_secs()
        ))),
    }
}

/// A RabbitMQ server, with claimbench's queues named after `schema`.
pub struct RabbitBackend {
    target: RabbitTarget,
    id: Instance,
    names: Arc<Names>,
    /// The next job id: RabbitMQ numbers no message, so every producer of this run
    /// (the seed, the workload's producers) draws ids here; a reset starts again at 1.
    next_id: Arc<AtomicI64>,
    /// Every session's connection, for the faults' connection kill.
    connections: Arc<Connections<Arc<Connection>>>,
}

impl RabbitBackend {
    pub fn new(target: RabbitTarget, schema: &str) -> RabbitBackend {
        let display = target.display.clone();
        RabbitBackend {
            target,
            id: Instance::new(BackendKind::Rabbitmq, schema, display, None),
            names: Arc::new(Names::new(schema)),
            next_id: Arc::new(AtomicI64::new(1)),
            connections: Arc::default(),
        }
    }

    async fn control(&self) -> Result<Connection, BackendError> {
        open(&self.target, "claimbench-control", None).await
    }

    /// Whether any of claimbench's queues exist, and whether the marker does.
    async fn facts(&self, conn: &Connection) -> Result<(bool, bool), BackendError> {
        let mut any = false;
        for name in self.names.data() {
            any |= queues::look(conn, name).await?.is_some();
        }
        let marked = queues::look(conn, &self.names.marker).await?.is_some();
        Ok((any || marked, marked))
    }

    /// Waits until no consumer is left on the jobs queue (a worker's channel closes as
    /// its session is dropped, and its unacknowledged deliveries return to the queue
    /// only then), at most a few seconds; returns the queue's ready messages.
    async fn settled(&self, conn: &Connection) -> Result<u32, BackendError> {
        let what = "reconcile the queue";
        let until = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let Some((ready, consumers)) = queues::look(conn, &self.names.jobs).await? else {
                return Err(BackendError::other(what, "the jobs queue is gone"));
            };
            if consumers == 0 || tokio::time::Instant::now() >= until {
                return Ok(ready);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl recipe::Dialect for RabbitBackend {
    fn instance(&self) -> &Instance {
        &self.id
    }

    /// Never reached: every control question is answered by this backend's own methods.
    fn control_rows(&self, q: Query<'_>) -> impl Future<Output = Rows> + Send {
        let what = q.what;
        async move { Err(BackendError::other(what, "rabbitmq runs no SQL")) }
    }
}

impl Backend for RabbitBackend {
    type Session = RabbitSession;

    async fn connect(&self, role: &str, worker_id: &str) -> Result<RabbitSession, BackendError> {
        self.connect_to(role, worker_id, Endpoint::default()).await
    }

    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        use std::net::ToSocketAddrs;
        let a = &self.target.uri.authority;
        (a.host.as_str(), a.port).to_socket_addrs().ok()?.next()
    }

    async fn connect_to(
        &self,
        role: &str,
        _worker_id: &str,
        to: Endpoint,
    ) -> Result<RabbitSession, BackendError> {
        let conn = Arc::new(open(&self.target, role, to.via).await?);
        let registered = self.connections.add(role, conn.clone());
        RabbitSession::open(conn, self.names.clone(), self.next_id.clone(), registered).await
    }

    /// RabbitMQ's version is in the connection's handshake, which the client library
    /// does not keep; what decides durability is claimbench's own choice of queue and
    /// delivery mode.
    async fn server_info(&self) -> Result<ServerInfo, BackendError> {
        self.control().await?;
        Ok(ServerInfo {
            version: "RabbitMQ".into(),
            settings: vec![
                ("queue".into(), "classic, durable".into()),
                ("messages".into(), "persistent, publisher confirms".into()),
            ],
        })
    }

    async fn check_schema(&self) -> Result<(), BackendError> {
        let conn = self.control().await?;
        let (exists, marked) = self.facts(&conn).await?;
        let facts = ownership::SchemaFacts {
            exists,
            marked,
            empty: false,
        };
        ownership::may_recreate(BackendKind::Rabbitmq, &self.id.schema, facts).map_err(|refusal| {
            BackendError::ForeignSchema {
                target: self.target.display.clone(),
                refusal,
            }
        })
    }

    /// Deletes claimbench's queues (only those, and only with the marker beside them),
    /// declares them again and publishes the backlog.
    async fn rebuild(&self, r: Reset<'_>) -> Result<u64, BackendError> {
        let what = "reset the run's queues";
        if r.layout != crate::names::CLASSIC_QUEUE {
            return Err(BackendError::other(
                what,
                format!("no rabbitmq layout named `{}`", r.layout),
            ));
        }
        self.check_schema().await?;
        let conn = self.control().await?;
        let ch = conn.create_channel().await.map_err(|e| error(what, e))?;
        for name in self.names.data() {
            ch.queue_delete(name, QueueDeleteOptions::default())
                .await
                .map_err(|e| error(what, e))?;
        }
        let durable = QueueDeclareOptions {
            durable: true,
            ..Default::default()
        };
        ch.queue_declare(&self.names.marker, durable, FieldTable::default())
            .await
            .map_err(|e| error(what, e))?;
        for name in self.names.data() {
            let mut args = FieldTable::default();
            if name == self.names.jobs {
                // A message rejected without requeue (the last attempt) goes to the
                // dead queue through the default exchange.
                let s = |v: &str| AMQPValue::LongString(LongString::from(v.to_string()));
                queues::put(&mut args, "x-dead-letter-exchange", s(""));
                queues::put(&mut args, "x-dead-letter-routing-key", s(&self.names.dead));
                // Each of the workload's priorities a level, in order (the validation
                // refuses more than 256).
                let levels = r.workload.population.all_priorities().len();
                if levels > 1 {
                    let top = AMQPValue::LongInt((levels - 1) as i32);
                    queues::put(&mut args, "x-max-priority", top);
                }
            }
            ch.queue_declare(name, durable, args)
                .await
                .map_err(|e| error(what, e))?;
        }
        self.next_id.store(1, Ordering::Relaxed);
        let mut session = self.connect("claimbench-seed", "claimbench-seed").await?;
        session.seed_rng(r.seed);
        let backlog = r.workload.population.backlog;
        for ages in super::broker::seed_chunks(backlog) {
            session.add(r.workload, ages, "seed the backlog").await?;
        }
        Ok(backlog)
    }

    /// RabbitMQ counts no transactions, deadlocks or lock waits: every counter is
    /// absent.
    async fn counters(&self) -> Result<ServerCounters, BackendError> {
        Ok(ServerCounters::default())
    }

    /// AMQP does not tell the server's pid: on this host, it is the process listening
    /// on the server's port (the Erlang VM, `beam.smp`).
    async fn server_pid(&self) -> Option<super::ServerProcess> {
        super::broker::listening_server(self.worker_address()).await
    }

    /// The messages ready in the jobs queue (AMQP reports neither the ones a consumer
    /// holds nor sizes).
    async fn table_stats(&self) -> Result<TableStats, BackendError> {
        let conn = self.control().await?;
        let (ready, _) = queues::look(&conn, &self.names.jobs)
            .await?
            .unwrap_or_default();
        Ok(TableStats {
            live_tuples: i64::from(ready),
            dead_tuples: 0,
            table_bytes: 0,
            index_bytes: 0,
        })
    }

    /// Where every job ended: still in the jobs queue (pending; a delivery no worker
    /// acknowledged is back there once its channel closed, which this waits for),
    /// completed (each job once, however often it was recorded) and dead-lettered (the
    /// dead queue's messages, rejected at their last attempt), and the effects' own count
    /// of duplicate executions. A completed job can be in the queue too — its worker
    /// recorded the completion and lost its connection before the acknowledgement — and
    /// a retry published again before its original was acknowledged is there twice:
    /// pending counts each job once, and none that is completed or dead.
    async fn reconcile(&self) -> Result<DbReconciliation, BackendError> {
        let conn = self.control().await?;
        self.settled(&conn).await?;
        let ids = |queue: &str, what: &'static str| {
            let conn = &conn;
            let queue = queue.to_string();
            async move {
                let mut ids = Vec::new();
                queues::read_all(conn, &queue, what, |h| {
                    ids.extend(queues::int(h, queues::ID));
                })
                .await?;
                ids.sort_unstable();
                ids.dedup();
                Ok::<_, BackendError>(ids)
            }
        };
        let completed = ids(&self.names.done, "read the completions").await?;
        let mut dead = ids(&self.names.dead, "read the dead letters").await?;
        dead.retain(|j| completed.binary_search(j).is_err());
        let mut pending = ids(&self.names.jobs, "reconcile the queue").await?;
        pending.retain(|j| completed.binary_search(j).is_err() && dead.binary_search(j).is_err());
        let runs = session::effects(&conn, &self.names.effects).await?;
        Ok(crate::backend::broker::reconciliation(
            (pending.len() as i64, 0, 0),
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
        Err(super::broker::no_shard_map(BackendKind::Rabbitmq))
    }

    /// The client's clock: every time claimbench writes to the queues (a job's due
    /// time, a completion's) is this host's.
    async fn server_clock_us(&self) -> Result<i64, BackendError> {
        Ok(super::broker::now_us())
    }

    async fn completed_by_queue(
        &self,
        from_us: i64,
        to_us: i64,
    ) -> Result<Vec<(String, i64)>, BackendError> {
        let conn = self.control().await?;
        session::completed_between(&conn, &self.names.done, from_us, to_us).await
    }

    /// Only capped queues ask, and a queue has no per-queue cap (refused before a run).
    async fn job_queues(&self, _queues: &[String]) -> Result<Vec<(i64, String)>, BackendError> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_shows_its_host_user_and_vhost_but_never_its_password() {
        let t = RabbitTarget::parse("amqp://app:s3cret@127.0.0.1:5673/%2f").unwrap();
        assert_eq!(t.display(), "amqp://app@127.0.0.1:5673/%2f");
        assert!(!format!("{t:?}").contains("s3cret"));
        let t = RabbitTarget::parse("amqp://127.0.0.1").unwrap();
        assert_eq!(t.display(), "amqp://guest@127.0.0.1:5672/%2f");
        let t = RabbitTarget::parse("amqp://u:p@h/jobs").unwrap();
        assert_eq!(t.display(), "amqp://u@h:5672/jobs");
        let e = RabbitTarget::parse("amqp://app:s3cret@db.example:notaport").unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
