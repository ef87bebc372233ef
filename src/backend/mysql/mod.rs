//! MySQL 8 / MariaDB 10.6+ backend over mysql_async: schema reset and seeding, the four
//! claim strategies, the job lifecycle, and InnoDB's own evidence (`INNODB_TRX`,
//! `PROCESSLIST`, `Innodb_row_lock_*`, deadlock counts).
//!
//! Every statement is in `migrations/mysql/`; this file only binds parameters and reads
//! rows. Sessions run at READ COMMITTED: under InnoDB's default REPEATABLE READ a locking
//! read also takes gap locks on the index ranges it scanned, and those block producers'
//! inserts into the pending range for as long as a claim's transaction lasts.

use super::recipe;
use super::shared::Control;
use super::{Backend, BackendError, BackendKind, Endpoint, ServerCounters};
use crate::backend::Reset;
use crate::backend::sql::{fill, migration, sql_steps, step};
use crate::strategy::named_params::Param;
use crate::strategy::{Shape, Strategy};
mod custom;
mod declared_table;
mod errors;
mod lifecycle;
mod model_state;
mod offset;
mod session;
mod statements;
use errors::{
    ER_ACCESS_DENIED, ER_BAD_DB_ERROR, ER_DBACCESS_DENIED, ER_UNKNOWN_SYSTEM_VARIABLE, query_error,
    session_error,
};
pub use statements::{declared, expand_ids, statements_as_sent, strategy_params};

pub use session::MysqlSession;
use session::Statements;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Params, Row, Value};
use std::sync::Arc;
use std::time::Duration;

const SQL: crate::backend::files::EngineFiles =
    crate::backend::files::engine_files!("mysql", refresh_stats: "analyze-hot");
const PRODUCTION_SQL: &str = migration!("mysql", "strategies/production.sql");
const GALERA_SQL: &str = migration!("mysql", "evidence/galera.sql");
pub(super) const CLEANUP_SQL: &str = migration!("mysql", "cleanup.sql");
const DELETE_SQL: &str = migration!("mysql", "storage/delete.sql");
const IN_PLACE_SQL: &str = migration!("mysql", "storage/update-in-place.sql");

/// The steps this backend reads by name, per file (names apart by spaces): a test
/// checks each is there.
#[cfg(test)]
pub(crate) const STEPS: &[(&str, &str)] = &[
    (
        SQL.reset,
        "drop-database create-database use-database storage queues seed-queues seed-priorities recursion-mariadb recursion-mysql analyze",
    ),
    (
        SQL.control,
        "version schema-facts deadlocks-metric pid-file current-user grants analyze-hot causal-reads give-shards take-shards durability-production durability-embedded durability-now",
    ),
    (
        SQL.session,
        "isolation catch-up time-zone existing analyze-json apply kill scan-held storage",
    ),
    (GALERA_SQL, "status settings"),
    (DELETE_SQL, "create"),
    (IN_PLACE_SQL, "complete fail"),
    (
        CLEANUP_SQL,
        "index lock keep delete state index-in-place lock-in-place keep-in-place delete-in-place state-in-place",
    ),
    (
        crate::statements::migration!("mysql", "strategies/ready-table.sql"),
        "setup lock claim",
    ),
    (offset::OFFSET_SQL, "start after before"),
    (
        crate::statements::migration!("mysql", "strategies/sharded.sql"),
        "select claim-one",
    ),
    (
        crate::statements::migration!("mysql", "strategies/sharded-read-write.sql"),
        "select update",
    ),
    (
        model_state::MODEL_SQL,
        "clear now queues queue-row jobs job-row hold",
    ),
    (
        declared_table::TABLE_SQL,
        "present foreign rows empty-hot analyze table-stats clear hold effect",
    ),
];

/// Column positions in the claim SELECTs (the seed's OUTPUT order, then the queue wait).
const COL_ID: usize = 0;
const COL_PRIORITY: usize = 6;
const COL_ATTEMPT: usize = 8;
const COL_QUEUE_WAIT_US: usize = 17;
/// `version-cas`'s select adds the version after the queue wait.
const COL_VERSION: usize = 18;

pub struct MysqlBackend {
    /// Every node of a multi-primary cluster target, the first included; one entry
    /// on a single server. The control connection, the sampler, the producer and the
    /// rescuer use the first.
    nodes: Vec<Opts>,
    /// A plain server beside the cluster (`placement = "standalone"`), and whether
    /// every connection goes there for the current block.
    standalone: Option<Opts>,
    on_standalone: std::sync::atomic::AtomicBool,
    /// `root` on the server claimbench started: only a block's durability goes through
    /// it (the workload's account may not change the server's settings).
    admin: Option<Opts>,
    /// Its worker role is a label only: MySQL has no application_name, so worker
    /// connections are told apart by their connection ids (`workers`).
    id: recipe::Instance,
    /// Connection ids of this backend's worker sessions, for the sampler's lock-wait and
    /// active counts. Cleared at every reset.
    workers: Arc<std::sync::Mutex<Vec<u32>>>,
    control: Control<Conn>,
    /// The run's lock service (`lock-service`), where each worker takes its leases.
    lock_service: Option<crate::backend::lock_service::LockService>,
    /// The workload's own queue table (`[table]`), checked at each reset.
    table: std::sync::RwLock<Option<Arc<crate::declared_table::TableForm>>>,
}

impl MysqlBackend {
    /// `schema` is the database claimbench creates and drops on the server: a run never
    /// touches other databases.
    pub fn new(opts: Opts, display: String, schema: &str) -> MysqlBackend {
        MysqlBackend::cluster(vec![opts], display, schema)
    }

    /// A backend on every node of a multi-primary cluster (Galera): workers connect to
    /// the node [`crate::backend::Endpoint`] names, everything else to the first.
    /// `nodes` must not be empty.
    pub fn cluster(nodes: Vec<Opts>, display: String, schema: &str) -> MysqlBackend {
        MysqlBackend {
            nodes,
            standalone: None,
            on_standalone: Default::default(),
            admin: None,
            id: recipe::Instance::new(BackendKind::Mysql, schema, display, Some(&SQL)),
            workers: Arc::default(),
            control: Control::default(),
            lock_service: None,
            table: Default::default(),
        }
    }

    /// Workers take leases in `service` for a `lock-service` claim.
    pub fn with_lock_service(
        mut self,
        service: crate::backend::lock_service::LockService,
    ) -> MysqlBackend {
        self.lock_service = Some(service);
        self
    }

    /// The plain server a `standalone` placement runs on.
    pub fn with_standalone(mut self, opts: Opts) -> MysqlBackend {
        self.standalone = Some(opts);
        self
    }

    /// See [`MysqlBackend::admin`].
    pub fn with_admin(mut self, opts: Opts) -> MysqlBackend {
        self.admin = Some(opts);
        self
    }

    pub fn schema(&self) -> &str {
        &self.id.schema
    }

    /// The connection ids of this backend's worker sessions (live and ended) since the
    /// last reset; tests use it to end them mid-run.
    pub fn worker_connections(&self) -> Arc<std::sync::Mutex<Vec<u32>>> {
        self.workers.clone()
    }

    /// Opens one connection at READ COMMITTED with UTC session time, in the run's
    /// database when `in_schema` (which must exist by then).
    async fn open(&self, in_schema: bool) -> Result<Conn, BackendError> {
        self.open_to(in_schema, Endpoint::default()).await
    }

    /// [`MysqlBackend::open`] on node `to.node`, through `to.via` (a delaying proxy)
    /// when given.
    async fn open_to(&self, in_schema: bool, to: Endpoint) -> Result<Conn, BackendError> {
        let opts = match (&self.standalone, self.standalone_now()) {
            (Some(s), true) => s,
            _ => self.nodes.get(to.node).unwrap_or(self.first()),
        };
        self.open_on(opts, in_schema, to.via).await
    }

    fn first(&self) -> &Opts {
        &self.nodes[0]
    }

    fn standalone_now(&self) -> bool {
        self.on_standalone
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// One connection to the server `opts` names.
    async fn open_on(
        &self,
        opts: &Opts,
        in_schema: bool,
        via: Option<std::net::SocketAddr>,
    ) -> Result<Conn, BackendError> {
        let mut builder = OptsBuilder::from_opts(opts.clone())
            .init(vec![
                step(SQL.session, "isolation"),
                step(SQL.session, "time-zone"),
            ])
            .stmt_cache_size(64);
        // A declared table's steps are judged by the rows they matched, as PostgreSQL
        // counts them: MySQL's default counts only rows whose values changed, so a
        // start step that sets a state the claim already set would read as refused.
        if self.declared_table().is_some() {
            builder = builder.client_found_rows(true);
        }
        if in_schema {
            builder = builder.db_name(Some(self.id.schema.clone()));
        }
        if let Some(addr) = via {
            builder = builder
                .ip_or_hostname(addr.ip().to_string())
                .tcp_port(addr.port())
                .prefer_socket(false);
        }
        let connect = Conn::new(builder);
        let conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(self.connect_error(&e)),
            Err(_) => {
                return Err(BackendError::Connect {
                    target: self.id.display.clone(),
                    reason: "no answer within 5 s".into(),
                    hint: "is the server running and reachable? check --db",
                });
            }
        };
        Ok(conn)
    }

    fn connect_error(&self, e: &mysql_async::Error) -> BackendError {
        let (reason, hint) = match e {
            mysql_async::Error::Server(s) => (
                s.message.clone(),
                match s.code {
                    ER_ACCESS_DENIED => {
                        "the server refused the login: check the user and password in --db"
                    }
                    ER_DBACCESS_DENIED => {
                        "the user may not use that database: grant it, or name another in --db"
                    }
                    ER_BAD_DB_ERROR => {
                        "the database does not exist: create it, or name another in --db"
                    }
                    _ => "the server answered but refused: check the URL given to --db",
                },
            ),
            other => (
                other.to_string(),
                "is the server running and accepting TCP connections? check host and port in --db",
            ),
        };
        BackendError::Connect {
            target: self.id.display.clone(),
            reason,
            hint,
        }
    }

    /// Opens the control connection, in the run's database when it exists.
    /// On a cluster, its reads wait until the node has applied every write set
    /// committed anywhere before them (`wsrep_sync_wait`): the reconciliation after a
    /// trial counts what workers on the other nodes committed.
    async fn open_control(&self) -> Result<Conn, BackendError> {
        let mut c = self.open(false).await?;
        if self.nodes.len() > 1 && !self.standalone_now() {
            c.query_drop(step(SQL.control, "causal-reads"))
                .await
                .map_err(|e| query_error("wait for causal reads", e))?;
        }
        let db = quote_ident(&self.id.schema);
        match c
            .query_drop(fill(step(SQL.reset, "use-database"), &[("db", &db)]))
            .await
        {
            Ok(()) => {}
            Err(mysql_async::Error::Server(s)) if s.code == ER_BAD_DB_ERROR => {}
            Err(e) => return Err(query_error("use database", e)),
        }
        Ok(c)
    }

    /// Runs `f` on the control connection (reset, counters, reconciliation).
    async fn on_control<T>(
        &self,
        f: impl AsyncFnOnce(&mut Conn) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.control
            .run(
                async || self.open_control().await,
                async |c: &mut Conn| c.ping().await.is_ok(),
                f,
            )
            .await
    }

    /// The body of `reset`, on the control connection.
    async fn recreate(&self, c: &mut Conn, r: Reset<'_>) -> Result<u64, BackendError> {
        let (workload, layout_sql, seed) = (r.workload, r.layout_sql, r.seed);
        let e = |what| move |e| query_error(what, e);
        let db = quote_ident(&self.id.schema);
        let on_db = |name| fill(step(SQL.reset, name), &[("db", &db)]);
        c.query_drop(on_db("drop-database"))
            .await
            .map_err(e("drop database"))?;
        c.query_drop(on_db("create-database"))
            .await
            .map_err(e("create database"))?;
        c.query_drop(on_db("use-database"))
            .await
            .map_err(e("use database"))?;
        c.query_drop(SQL.schema).await.map_err(e("create tables"))?;
        c.exec_drop(step(SQL.reset, "storage"), (workload.storage.name(),))
            .await
            .map_err(e("record the storage model"))?;
        create_lifecycle(c, workload.storage).await?;
        let p = &workload.population;
        c.exec_batch(
            step(SQL.reset, "queues"),
            p.queues
                .iter()
                .map(|q| (&q.name, q.paused, q.active, q.max_workers)),
        )
        .await
        .map_err(e("insert queues"))?;
        let (qnames, qbounds) = p.queue_bounds();
        let own = p.queue_priorities();
        c.exec_batch(
            step(SQL.reset, "seed-queues"),
            qnames
                .iter()
                .zip(&qbounds)
                .zip(&own)
                .enumerate()
                .map(|(i, ((n, lo), prio))| (i, n, lo, prio)),
        )
        .await
        .map_err(e("insert seed queues"))?;
        let (prios, pbounds) = p.priority_bounds();
        c.exec_batch(
            step(SQL.reset, "seed-priorities"),
            prios
                .iter()
                .zip(&pbounds)
                .enumerate()
                .map(|(i, (v, lo))| (i, v, lo)),
        )
        .await
        .map_err(e("insert seed priorities"))?;
        allow_recursion(c, p.backlog).await?;
        c.exec_drop(
            SQL.seed,
            (
                p.backlog,
                seed,
                p.payload_bytes,
                p.scheduled_share,
                (p.scheduled_within_s * 1e6) as i64,
            ),
        )
        .await
        .map_err(e("seed backlog"))?;
        let seeded = match self.declared_table() {
            // The team's table, built and filled from the seeded rows before a
            // declared layout, which may index it.
            Some(t) => self.build_declared_table(c, &t).await?,
            None => c.affected_rows(),
        };
        if workload.cleanup.is_some() {
            let index = match workload.storage.finishes_in_place() {
                false => "index",
                true => "index-in-place",
            };
            c.query_drop(step(CLEANUP_SQL, index))
                .await
                .map_err(e("build the cleanup job's index"))?;
        }
        // A declared layout runs on this connection too: the workload's account on the
        // server claimbench started, and on --db a role the run checked first.
        let declared = crate::custom_layout::find(&workload.custom_layouts, r.layout)
            .and_then(|d| Some((d.mysql.as_ref()?.file.as_str(), d.name.as_str())));
        c.query_drop(layout_sql)
            .await
            .map_err(|err| match declared {
                Some((file, name)) => super::layouts::declared_refused(
                    query_error("build the declared index layout", err),
                    file,
                    name,
                ),
                None => query_error("build index layout", err),
            })?;
        // A layout that dropped or renamed a table fails here: named, not the analyze.
        c.query_drop(step(SQL.reset, "analyze"))
            .await
            .map_err(|err| {
                let err = query_error("analyze tables after the layout", err);
                match declared {
                    Some((file, name)) => super::layouts::declared_refused(err, file, name),
                    None => err,
                }
            })?;
        Ok(seeded)
    }

    /// Whether the server runs on this host, so that its pid file can be read.
    fn is_local(&self) -> bool {
        matches!(
            self.first().ip_or_hostname(),
            "127.0.0.1" | "localhost" | "::1"
        )
    }
}

/// The lifecycle's procedures; what finishing a job writes is the storage model's,
/// behind the same procedures.
async fn create_lifecycle(
    c: &mut Conn,
    storage: crate::workload::Storage,
) -> Result<(), BackendError> {
    use crate::workload::Storage;
    let [complete, fail] = match storage {
        Storage::Delete => [step(DELETE_SQL, "create"), step(SQL.fail, "create")],
        Storage::UpdateInPlace => [step(IN_PLACE_SQL, "complete"), step(IN_PLACE_SQL, "fail")],
        _ => [step(SQL.complete, "create"), step(SQL.fail, "create")],
    };
    for sql in [
        step(SQL.start, "create"),
        step(SQL.effect, "create"),
        complete,
        fail,
    ] {
        c.query_drop(sql)
            .await
            .map_err(|e| query_error("create lifecycle procedures", e))?;
    }
    Ok(())
}

/// Lifts the server's limit on recursive CTE rows (MariaDB: max_recursive_iterations,
/// MySQL: cte_max_recursion_depth, both 1000 by default) for this session, so that one
/// INSERT can generate `rows` rows.
async fn allow_recursion(c: &mut Conn, rows: u64) -> Result<(), BackendError> {
    let limit = (rows.max(1000) + 1).to_string();
    for form in ["recursion-mariadb", "recursion-mysql"] {
        match c
            .query_drop(fill(step(SQL.reset, form), &[("limit", &limit)]))
            .await
        {
            Ok(()) => return Ok(()),
            Err(mysql_async::Error::Server(s)) if s.code == ER_UNKNOWN_SYSTEM_VARIABLE => {}
            Err(e) => return Err(query_error("lift recursion limit", e)),
        }
    }
    Err(BackendError::other(
        "lift recursion limit",
        "the server has neither max_recursive_iterations nor cte_max_recursion_depth; MySQL 8 or MariaDB 10.6+ is needed",
    ))
}

fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// One row's value as i64 (NULL and non-numbers as `None`).
fn int(row: &Row, i: usize) -> Option<i64> {
    row.get_opt::<Option<i64>, _>(i)?.ok().flatten()
}

impl recipe::Dialect for MysqlBackend {
    fn instance(&self) -> &recipe::Instance {
        &self.id
    }

    /// Without arguments as text (a statement such as SHOW or ANALYZE need not be
    /// preparable), with them prepared.
    async fn control_rows(&self, q: recipe::Query<'_>) -> recipe::Rows {
        let recipe::Query { sql, args, what } = q;
        let params: Vec<Value> = args
            .iter()
            .map(|a| match a {
                recipe::Arg::Int(i) => Value::from(*i),
                recipe::Arg::Text(t) => Value::from(*t),
                recipe::Arg::TextList(_) => unreachable!("{}", recipe::NO_ARRAYS),
            })
            .collect();
        let rows: Vec<Row> = self
            .on_control(async |c| {
                let r = match params.is_empty() {
                    true => c.query(sql).await,
                    false => c.exec(sql, Params::Positional(params)).await,
                };
                r.map_err(|e| query_error(what, e))
            })
            .await?;
        Ok(rows.into_iter().map(cells).collect())
    }

    fn own_settings(&self) -> Vec<(String, String)> {
        vec![(
            "claimbench session isolation".into(),
            "READ-COMMITTED".into(),
        )]
    }
}

/// A row's values; the text protocol sends every number as text, which
/// [`recipe::Cell::int`] reads back.
fn cells(row: Row) -> Vec<recipe::Cell> {
    use recipe::Cell;
    row.unwrap()
        .into_iter()
        .map(|v| match v {
            Value::NULL => Cell::Null,
            Value::Int(i) => Cell::Int(i),
            Value::UInt(u) => Cell::Int(u as i64),
            Value::Float(f) => Cell::Float(f.into()),
            Value::Double(d) => Cell::Float(d),
            Value::Bytes(b) => Cell::Text(String::from_utf8_lossy(&b).into_owned()),
            other => Cell::Text(other.as_sql(true)),
        })
        .collect()
}

impl Backend for MysqlBackend {
    type Session = MysqlSession;

    async fn connect(&self, role: &str, worker_id: &str) -> Result<MysqlSession, BackendError> {
        self.connect_to(role, worker_id, Endpoint::default()).await
    }

    fn nodes(&self) -> usize {
        self.nodes.len()
    }

    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        use std::net::ToSocketAddrs;
        (self.first().ip_or_hostname(), self.first().tcp_port())
            .to_socket_addrs()
            .ok()?
            .next()
    }

    async fn connect_to(
        &self,
        role: &str,
        worker_id: &str,
        to: Endpoint,
    ) -> Result<MysqlSession, BackendError> {
        let mut conn = self.open_to(true, to).await?;
        let cluster = self.nodes.len() > 1 && !self.standalone_now();
        if cluster {
            conn.query_drop(step(SQL.session, "catch-up"))
                .await
                .map_err(|e| query_error("catch up with the cluster", e))?;
        }
        let statements = Statements::prepare(&mut conn).await?;
        let table = match self.declared_table() {
            Some(t) => Some(Box::new(
                session::TableStatements::prepare(&mut conn, t).await?,
            )),
            None => None,
        };
        let leases = match self
            .lock_service
            .as_ref()
            .filter(|_| role == self.id.worker_role)
        {
            Some(s) => Some(Box::new(
                s.leases(&format!("{role}-leases"), worker_id).await?,
            )),
            None => None,
        };
        if role == self.id.worker_role {
            self.workers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(conn.id());
        }
        Ok(MysqlSession {
            conn,
            statements,
            worker_id: worker_id.to_string(),
            queue: String::new(),
            workers: self.workers.clone(),
            batch_update: None,
            lock_statements: Vec::new(),
            sharded_selects: Vec::new(),
            custom: Vec::new(),
            offset: None,
            candidates: Vec::new(),
            held: false,
            cluster,
            cleanup_steps: None,
            leases,
            ids: Vec::new(),
            table,
            claims_by_queue: false,
        })
    }

    async fn rebuild(&self, r: Reset<'_>) -> Result<u64, BackendError> {
        self.check_schema().await?;
        let table = match &r.workload.table {
            Some(t) => Some(Arc::new(
                crate::declared_table::form_for(t, BackendKind::Mysql)
                    .map_err(|m| BackendError::other("read the declared table", m.to_string()))?,
            )),
            None => None,
        };
        *self.table.write().expect("not poisoned") = table;
        if let Some(service) = &self.lock_service {
            service.reset(r.workload.faults.lease).await?;
        }
        self.workers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.on_control(async |c| self.recreate(c, r).await).await
    }

    async fn counters(&self) -> Result<ServerCounters, BackendError> {
        self.on_control(async |c| {
            let rows: Vec<(String, String)> = c
                .query(SQL.counters)
                .await
                .map_err(|e| query_error("read global status", e))?;
            let get = |name: &str| {
                rows.iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .and_then(|(_, v)| v.parse::<i64>().ok())
            };
            let deadlocks = match get("Innodb_deadlocks") {
                Some(n) => n,
                None => c
                    .query_first::<i64, _>(step(SQL.control, "deadlocks-metric"))
                    .await
                    .map_err(|e| query_error("read deadlock count", e))?
                    .unwrap_or(0),
            };
            Ok(ServerCounters {
                deadlocks,
                conflicts: 0,
                rollbacks: get("Handler_rollback").unwrap_or(0),
                commits: get("Handler_commit").unwrap_or(0),
                row_lock_waits: get("Innodb_row_lock_waits"),
                row_lock_time_ms: get("Innodb_row_lock_time"),
                ..ServerCounters::default()
            })
        })
        .await
    }

    /// Over `root` on the server claimbench started; refused elsewhere, as the run
    /// refuses a durability block before it starts.
    async fn set_durability(
        &self,
        d: crate::workload::Durability,
    ) -> Result<Vec<(String, String)>, BackendError> {
        let what = "set the block's durability (SET GLOBAL)";
        let Some(admin) = &self.admin else {
            return Err(BackendError::other(
                what,
                "only the MariaDB claimbench starts changes its durability".to_string(),
            ));
        };
        let name = match d {
            crate::workload::Durability::Production => "durability-production",
            crate::workload::Durability::Embedded => "durability-embedded",
        };
        let mut c = self.open_on(admin, false, None).await?;
        c.query_drop(step(SQL.control, name))
            .await
            .map_err(|e| query_error(what, e))?;
        let now: Option<String> = c
            .query_first(step(SQL.control, "durability-now"))
            .await
            .map_err(|e| query_error(what, e))?;
        let _ = c.disconnect().await;
        Ok(vec![(
            "innodb_flush_log_at_trx_commit".to_string(),
            now.unwrap_or_default(),
        )])
    }

    /// One short connection per node, so that a node's counters are its own.
    async fn cluster_readings(
        &self,
        settings: bool,
    ) -> Result<Vec<crate::backend::cluster::NodeReading>, BackendError> {
        if self.nodes.len() < 2 {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(self.nodes.len());
        for opts in &self.nodes {
            // The cluster's nodes, also while a block runs on the standalone server.
            let mut c = self.open_on(opts, false, None).await?;
            let read = async |c: &mut Conn, name| {
                let rows: Vec<(String, String)> = c
                    .query(step(GALERA_SQL, name))
                    .await
                    .map_err(|e| query_error("read a Galera node's status", e))?;
                Ok::<_, BackendError>(rows.into_iter().collect())
            };
            let status = read(&mut c, "status").await?;
            let settings = match settings {
                true => read(&mut c, "settings").await?,
                false => Default::default(),
            };
            let _ = c.disconnect().await;
            out.push(crate::backend::cluster::NodeReading {
                address: format!("{}:{}", opts.ip_or_hostname(), opts.tcp_port()),
                status,
                settings,
            });
        }
        Ok(out)
    }

    /// `standalone` moves every connection to the plain server beside the cluster (the
    /// control connection is opened again there); the other placements back.
    async fn set_placement(&self, p: crate::workload::Placement) -> Result<(), BackendError> {
        use std::sync::atomic::Ordering;
        let standalone = p == crate::workload::Placement::Standalone;
        if standalone && self.standalone.is_none() {
            return Err(BackendError::other(
                "place the workers",
                "placement = \"standalone\" needs the plain server claimbench starts beside its Galera cluster ([topology] kind = \"galera\")",
            ));
        }
        if self.on_standalone.swap(standalone, Ordering::Relaxed) != standalone {
            self.control.close().await;
        }
        Ok(())
    }

    async fn load_model_state(&self, state: &crate::model::TableState) -> Result<(), BackendError> {
        self.load_state(state).await?;
        match self.declared_table() {
            Some(t) => self.reseed_declared_table(&t).await,
            None => Ok(()),
        }
    }

    async fn table_stats(&self) -> Result<crate::backend::TableStats, BackendError> {
        match self.declared_table() {
            Some(t) => self.declared_table_stats(&t).await,
            None => recipe::table_stats(self).await,
        }
    }

    async fn reconcile(&self) -> Result<crate::backend::DbReconciliation, BackendError> {
        match self.declared_table() {
            Some(t) => self.reconcile_declared(&t).await,
            None => recipe::reconcile(self).await,
        }
    }

    /// A built-in strategy's `setup` step (`ready-table`'s table and triggers), sent as
    /// one multi-statement text on the control connection, which is in the trial's
    /// database.
    async fn setup_strategy(&self, strategy: &Strategy) -> Result<(), BackendError> {
        let Some(setup) = strategy.setup_step(BackendKind::Mysql) else {
            return Ok(());
        };
        self.on_control(async |c| {
            c.query_drop(setup).await.map_err(|e| {
                crate::backend::layouts::setup_refused(
                    query_error("set up the strategy", e),
                    strategy,
                    BackendKind::Mysql,
                )
            })
        })
        .await
    }

    async fn workload_role(&self) -> Result<Option<crate::backend::WorkloadRole>, BackendError> {
        self.on_control(async |c| {
            let e = |what| move |e| query_error(what, e);
            let name: Option<String> = c
                .query_first(step(SQL.control, "current-user"))
                .await
                .map_err(e("read the current user"))?;
            let grants: Vec<String> = c
                .query(step(SQL.control, "grants"))
                .await
                .map_err(e("read the current user's grants"))?;
            Ok(Some(crate::backend::WorkloadRole {
                name: name.unwrap_or_default(),
                reaches_host: host_rights(&grants),
            }))
        })
        .await
    }

    /// mariadbd is one process: its pid (from its pid file) is the root.
    async fn server_pid(&self) -> Option<crate::backend::ServerProcess> {
        if !self.is_local() {
            return None;
        }
        let path: String = self
            .on_control(async |c| {
                c.query_first::<String, _>(step(SQL.control, "pid-file"))
                    .await
                    .map_err(|e| query_error("read pid file name", e))
            })
            .await
            .ok()
            .flatten()?;
        // The server names the path: read it as any file handed to claimbench.
        crate::input_file::read_text(std::path::Path::new(&path), 64, "a pid file")
            .ok()?
            .trim()
            .parse()
            .ok()
            .map(crate::backend::ServerProcess::Root)
    }
}

/// The rights among `grants` (SHOW GRANTS's rows) that reach the server's host: FILE
/// (`SELECT … INTO OUTFILE`, `LOAD DATA INFILE`, `LOAD_FILE`), SUPER and SHUTDOWN, or
/// all privileges, granted on `*.*`.
fn host_rights(grants: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in grants {
        let upper = g.to_ascii_uppercase();
        let Some((privs, _)) = upper
            .strip_prefix("GRANT ")
            .and_then(|rest| rest.split_once(" ON *.* "))
        else {
            continue;
        };
        for p in privs.split(',').map(str::trim) {
            if ["ALL PRIVILEGES", "ALL", "FILE", "SUPER", "SHUTDOWN"].contains(&p)
                && !out.iter().any(|o| o == p)
            {
                out.push(p.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
