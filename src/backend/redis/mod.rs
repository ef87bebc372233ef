//! Redis: queues that are not tables, in two data models chosen by the layout. On
//! `stream` a job is an entry of one stream and a claim is a delivery to one consumer of
//! a consumer group (Redis Streams); on `hash-by-due` a job is a record with a version
//! and a claim is a compare-and-set on it (a key-value store without transactions).
//! The lifecycle (start, heartbeat, effect, complete, fail, release, rescue) is one Lua
//! script each under `migrations/redis/`, written once over the model's helpers and
//! atomic on the server as a SQL statement is.
//!
//! It answers the runner's questions through the same [`Backend`] and [`Session`] as
//! the SQL engines: its claims are [`crate::strategy::Shape::Claim`] (one call returns
//! the batch) and [`crate::strategy::Shape::VersionCas`] (a read, then a conditional
//! write), and its lifecycle answers as [`super::lifecycle`] reads them, so the ledger,
//! faults, figures and report need nothing of their own. Every control question the SQL
//! engines answer from statement files ([`super::recipe`]) is answered here from the
//! model's keys; what neither model expresses (per-queue limits, pauses, index layouts,
//! transactions; priorities, scheduled jobs and retry delays on a stream) is refused
//! before a run starts (`workload::coherence::broker_misfit`).

pub(crate) mod errors;
mod scripts;
mod session;

pub use session::RedisSession;

use super::recipe::{self, Instance, Query, Rows};
use super::{
    Backend, BackendError, DbReconciliation, Endpoint, Reset, ServerCounters, ServerInfo,
    TableStats, ownership,
};
use crate::backend_kind::BackendKind;
use errors::error;
use redis::aio::MultiplexedConnection;
use redis::{AsyncCommands, ConnectionAddr, ConnectionInfo, IntoConnectionInfo};
pub use scripts::model_of;
use scripts::{CurrentModel, GROUP, Keys, Model};
use std::sync::Arc;

/// Debug shows the redacted form only, so a `{:?}` cannot leak a password.
impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedisTarget({})", self.display)
    }
}

/// What `strategy`'s claim script is handed, for `claimbench sql`.
pub fn script_params(strategy: &crate::strategy::Strategy, batch: u32) -> String {
    match model_of(strategy) {
        Some(Model::HashByDue) => format!(
            "KEYS: the run's ten keys (prelude.lua); two calls: ARGV[1] 'read', ARGV[2] {batch} (batch); then ARGV[1] 'cas', ARGV[2] consumer (the worker id), then each (id, version) read"
        ),
        _ => format!(
            "KEYS: the run's eight keys (prelude.lua); ARGV[1] consumer (the worker id), ARGV[2] {batch} (batch)"
        ),
    }
}

/// `strategy`'s claim script as the server runs it (`claimbench sql --backend redis`).
pub fn script_text(strategy: &crate::strategy::Strategy) -> String {
    let model = model_of(strategy).unwrap_or(Model::Stream);
    scripts::text(model, strategy.text(BackendKind::Redis))
}

/// A Redis server named by a `redis://` URL. The URL (with its password) stays inside;
/// only [`RedisTarget::display`] is ever shown.
#[derive(Clone)]
pub struct RedisTarget {
    info: ConnectionInfo,
    display: String,
}

impl RedisTarget {
    /// Reads a `redis://[user:password@]host:port[/db]` URL; the error never holds it.
    pub fn parse(url: &str) -> Result<RedisTarget, String> {
        let info = url
            .into_connection_info()
            .map_err(|e| e.to_string().replace(url, "<url>"))?;
        let host = match &info.addr {
            ConnectionAddr::Tcp(h, p) => format!("{h}:{p}"),
            _ => return Err("only plain TCP redis:// URLs are supported".into()),
        };
        let user = info.redis.username.as_deref().unwrap_or("");
        let at = if user.is_empty() && info.redis.password.is_none() {
            String::new()
        } else {
            format!("{user}@")
        };
        let display = format!("redis://{at}{host}/{}", info.redis.db);
        Ok(RedisTarget { info, display })
    }

    /// The URL without its password.
    pub fn display(&self) -> &str {
        &self.display
    }

    fn host_port(&self) -> (&str, u16) {
        match &self.info.addr {
            ConnectionAddr::Tcp(h, p) => (h, *p),
            _ => ("", 0),
        }
    }
}

/// One connection to `target`, named `role` on the server (CLIENT SETNAME), through
/// `via` when given: a worker's, the control's, or a lock service's.
pub(crate) async fn open(
    target: &RedisTarget,
    role: &str,
    via: Option<std::net::SocketAddr>,
) -> Result<MultiplexedConnection, BackendError> {
    let mut info = target.info.clone();
    if let Some(via) = via {
        info.addr = ConnectionAddr::Tcp(via.ip().to_string(), via.port());
    }
    let refused = |e: redis::RedisError| BackendError::Connect {
        target: target.display.clone(),
        reason: e.to_string(),
        hint: "is a Redis server listening there (redis-server), and is the password right? check --db",
    };
    let client = redis::Client::open(info).map_err(refused)?;
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .map_err(refused)?;
    // A restarted server accepts connections before it has loaded its data: not
    // connected yet, so a reconnecting worker tries again.
    redis::cmd("PING")
        .query_async::<()>(&mut conn)
        .await
        .map_err(refused)?;
    redis::cmd("CLIENT")
        .arg("SETNAME")
        .arg(role)
        .query_async::<()>(&mut conn)
        .await
        .map_err(|e| error("name the connection", e))?;
    Ok(conn)
}

/// A Redis server, with claimbench's keys under the prefix `schema`.
pub struct RedisBackend {
    target: RedisTarget,
    id: Instance,
    keys: Arc<Keys>,
    model: CurrentModel,
}

impl RedisBackend {
    pub fn new(target: RedisTarget, schema: &str) -> RedisBackend {
        let display = target.display.clone();
        RedisBackend {
            target,
            id: Instance::new(BackendKind::Redis, schema, display, None),
            keys: Arc::new(Keys::new(schema)),
            model: CurrentModel::default(),
        }
    }

    /// One connection of its own, named `role` on the server (CLIENT SETNAME) so that
    /// [`super::Session::kill_workers`] finds the workers', through `via` when given.
    async fn open(
        &self,
        role: &str,
        via: Option<std::net::SocketAddr>,
    ) -> Result<MultiplexedConnection, BackendError> {
        open(&self.target, role, via).await
    }

    async fn control(&self) -> Result<MultiplexedConnection, BackendError> {
        self.open("claimbench-control", None).await
    }

    /// A field of `INFO section`.
    async fn info_field(
        conn: &mut MultiplexedConnection,
        section: &str,
        field: &str,
    ) -> Result<Option<String>, BackendError> {
        let text: String = redis::cmd("INFO")
            .arg(section)
            .query_async(conn)
            .await
            .map_err(|e| error("read INFO", e))?;
        Ok(text.lines().find_map(|l| {
            l.strip_prefix(field)
                .and_then(|v| v.strip_prefix(':'))
                .map(|v| v.trim().to_string())
        }))
    }

    /// Whether any of claimbench's keys exist, and whether the marker does.
    async fn facts(&self, c: &mut MultiplexedConnection) -> Result<(bool, bool), BackendError> {
        let what = "look up the run's keys";
        let any: i64 = c
            .exists(&self.keys.all()[..])
            .await
            .map_err(|e| error(what, e))?;
        let marked: bool = c
            .exists(&self.keys.marker)
            .await
            .map_err(|e| error(what, e))?;
        Ok((any > 0, marked))
    }
}

impl recipe::Dialect for RedisBackend {
    fn instance(&self) -> &Instance {
        &self.id
    }

    /// Never reached: every control question is answered by this backend's own methods.
    fn control_rows(&self, q: Query<'_>) -> impl Future<Output = Rows> + Send {
        let what = q.what;
        async move { Err(BackendError::other(what, "redis runs no SQL")) }
    }
}

impl Backend for RedisBackend {
    type Session = RedisSession;

    async fn connect(&self, role: &str, worker_id: &str) -> Result<RedisSession, BackendError> {
        self.connect_to(role, worker_id, Endpoint::default()).await
    }

    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        use std::net::ToSocketAddrs;
        let (host, port) = self.target.host_port();
        (host, port).to_socket_addrs().ok()?.next()
    }

    async fn connect_to(
        &self,
        role: &str,
        worker_id: &str,
        to: Endpoint,
    ) -> Result<RedisSession, BackendError> {
        let conn = self.open(role, to.via).await?;
        Ok(RedisSession::new(
            conn,
            self.keys.clone(),
            self.model.clone(),
            worker_id,
        ))
    }

    async fn server_info(&self) -> Result<ServerInfo, BackendError> {
        let mut c = self.control().await?;
        let version = Self::info_field(&mut c, "server", "redis_version")
            .await?
            .unwrap_or_default();
        let mut settings = Vec::new();
        // What decides how much an acknowledged job survives a crash, and what happens
        // when memory runs out; CONFIG may be disabled on a managed server.
        for name in ["appendonly", "appendfsync", "save", "maxmemory-policy"] {
            let got: Result<Vec<String>, _> = redis::cmd("CONFIG")
                .arg("GET")
                .arg(name)
                .query_async(&mut c)
                .await;
            if let Ok(pair) = got
                && let [n, v] = &pair[..]
            {
                settings.push((n.clone(), v.clone()));
            }
        }
        Ok(ServerInfo {
            version: format!("Redis {version}"),
            settings,
        })
    }

    async fn check_schema(&self) -> Result<(), BackendError> {
        let mut c = self.control().await?;
        let (exists, marked) = self.facts(&mut c).await?;
        let facts = ownership::SchemaFacts {
            exists,
            marked,
            empty: false,
        };
        ownership::may_recreate(BackendKind::Redis, &self.id.schema, facts).map_err(|refusal| {
            BackendError::ForeignSchema {
                target: self.target.display.clone(),
                refusal,
            }
        })
    }

    /// Deletes claimbench's keys (only those: [`Keys::all`]), creates the stream and
    /// its group on the stream model, and seeds the backlog through `produce.lua`, in
    /// chunks.
    async fn rebuild(&self, r: Reset<'_>) -> Result<u64, BackendError> {
        let model = Model::of_layout(r.layout).ok_or_else(|| {
            BackendError::other(
                "reset the run's keys",
                format!("no redis layout named `{}`", r.layout),
            )
        })?;
        self.check_schema().await?;
        let mut c = self.control().await?;
        let what = "reset the run's keys";
        let _: i64 = c
            .del(&self.keys.all()[..])
            .await
            .map_err(|e| error(what, e))?;
        let _: () = c
            .set(&self.keys.marker, "claimbench")
            .await
            .map_err(|e| error(what, e))?;
        if model == Model::Stream {
            let _: () = redis::cmd("XGROUP")
                .arg("CREATE")
                .arg(&self.keys.jobs)
                .arg(GROUP)
                .arg("0")
                .arg("MKSTREAM")
                .query_async(&mut c)
                .await
                .map_err(|e| error(what, e))?;
        }
        self.model.set(model);
        let mut session =
            RedisSession::new(c, self.keys.clone(), self.model.clone(), "claimbench-seed");
        session.seed_rng(r.seed);
        let backlog = r.workload.population.backlog;
        let mut left = backlog;
        let mut ages = [0i64; 1000];
        while left > 0 {
            let n = left.min(ages.len() as u64) as usize;
            session.scheduled_ages(r.workload, &mut ages[..n]);
            session
                .add(r.workload, &ages[..n], "seed the backlog")
                .await?;
            left -= n as u64;
        }
        Ok(backlog)
    }

    /// Redis counts no transactions, deadlocks or lock waits: every counter is absent.
    async fn counters(&self) -> Result<ServerCounters, BackendError> {
        Ok(ServerCounters::default())
    }

    /// redis-server is one process: its pid is the root (when it runs on this host, a
    /// loopback address).
    async fn server_pid(&self) -> Option<super::ServerProcess> {
        let local = self.worker_address().is_some_and(|a| a.ip().is_loopback());
        if !local {
            return None;
        }
        let mut c = self.control().await.ok()?;
        Self::info_field(&mut c, "server", "process_id")
            .await
            .ok()??
            .parse()
            .ok()
            .map(super::ServerProcess::Root)
    }

    /// The jobs not yet finished (the stream's entries, or the records) and the memory
    /// they take; the records' model's sorted sets of pending and claimed jobs are its
    /// index. Neither has dead rows.
    async fn table_stats(&self) -> Result<TableStats, BackendError> {
        let mut c = self.control().await?;
        let what = "read the queue's size";
        let model = self.model.get();
        let len = match model {
            Model::Stream => "XLEN",
            Model::HashByDue => "HLEN",
        };
        let usage = |key: &str| redis::cmd("MEMORY").arg("USAGE").arg(key).to_owned();
        let (live, bytes, pending, leases): (i64, Option<i64>, Option<i64>, Option<i64>) =
            redis::pipe()
                .cmd(len)
                .arg(&self.keys.jobs)
                .add_command(usage(&self.keys.jobs))
                .add_command(usage(&self.keys.pending))
                .add_command(usage(&self.keys.leases))
                .query_async(&mut c)
                .await
                .map_err(|e| error(what, e))?;
        Ok(TableStats {
            live_tuples: live,
            dead_tuples: 0,
            table_bytes: bytes.unwrap_or(0),
            index_bytes: pending.unwrap_or(0) + leases.unwrap_or(0),
        })
    }

    async fn reconcile(&self) -> Result<DbReconciliation, BackendError> {
        let c = self.control().await?;
        session::reconcile(c, &self.keys, self.model.get()).await
    }

    async fn change_shards(
        &self,
        _change: recipe::ShardChange,
        _queues: &[String],
        _workers: &[String],
    ) -> Result<(), BackendError> {
        Err(super::broker::no_shard_map(BackendKind::Redis))
    }

    async fn server_clock_us(&self) -> Result<i64, BackendError> {
        let mut c = self.control().await?;
        let (s, us): (i64, i64) = redis::cmd("TIME")
            .query_async(&mut c)
            .await
            .map_err(|e| error("read the server clock", e))?;
        Ok(s * 1_000_000 + us)
    }

    /// Completions per queue between two server clock readings: the DONE stream's ids
    /// are the server's clock in ms when each completion was written.
    async fn completed_by_queue(
        &self,
        from_us: i64,
        to_us: i64,
    ) -> Result<Vec<(String, i64)>, BackendError> {
        let mut c = self.control().await?;
        session::completed_between(&mut c, &self.keys, from_us / 1000, to_us / 1000).await
    }

    async fn job_queues(&self, queues: &[String]) -> Result<Vec<(i64, String)>, BackendError> {
        let mut c = self.control().await?;
        let all: Vec<(i64, String)> = c
            .hgetall(&self.keys.queue)
            .await
            .map_err(|e| error("read each job's queue", e))?;
        Ok(all
            .into_iter()
            .filter(|(_, q)| queues.contains(q))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_shows_its_host_and_user_but_never_its_password() {
        let t = RedisTarget::parse("redis://app:s3cret@127.0.0.1:6390/2").unwrap();
        assert_eq!(t.display(), "redis://app@127.0.0.1:6390/2");
        let t = RedisTarget::parse("redis://:s3cret@db.example:6379").unwrap();
        assert_eq!(t.display(), "redis://@db.example:6379/0");
        let e = RedisTarget::parse("redis://:s3cret@db.example:notaport").unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
