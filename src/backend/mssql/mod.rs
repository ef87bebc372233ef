//! SQL Server backend over tiberius (TDS, TLS through rustls): the seed's own
//! `UPDLOCK, READPAST` fetch statement, the other strategies, the job lifecycle, and SQL
//! Server's lock evidence (`LCK_M_*` waits, row lock waits, lock promotions, deadlocks).
//!
//! Every statement is in `migrations/mssql/`, written against `[{SCHEMA}]`, which is
//! replaced by the run's schema (default `claimbench`) once per connection. tiberius sends
//! statements through sp_executesql with positional parameters `@P1`, `@P2`, ...; the
//! binds each statement takes are spelled out by the `*_binds` functions here, which the
//! sessions use and the golden tests pin.
//!
//! No SQL Server runs on the machines this project is built on: this backend is unit
//! tested on the T-SQL it sends and integration tested only where CLAIMBENCH_MSSQL_URL
//! points at a server.

mod session;

pub use session::MssqlSession;

use super::mssql_target::MssqlTarget;
use super::recipe;
use super::shared::Control;
use super::{Backend, BackendError, BackendKind, ErrorKind, ServerCounters};
use crate::backend::Reset;
use crate::backend::sql::{fill, migration, step};
use crate::strategy::custom::{Constant, MssqlClaim};
use crate::strategy::named_params::Param;
use crate::strategy::{Shape, Strategy};
use crate::warnings::Warning;
use crate::workload::Workload;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tiberius::{Client, Row};
use tokio::net::TcpStream;
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};

pub(crate) type Conn = Client<Compat<TcpStream>>;

const SQL: crate::backend::files::EngineFiles = crate::backend::files::engine_files!("mssql");
const DROP_SQL: &str = migration!("mssql", "drop.sql");
const MARKER_SQL: &str = migration!("mssql", "marker.sql");
const START_UNGATED_SQL: &str = migration!("mssql", "lifecycle/start_ungated.sql");

/// The steps this backend reads by name, per file (names apart by spaces): a test
/// checks each is there.
#[cfg(test)]
pub(crate) const STEPS: &[(&str, &str)] = &[
    (
        SQL.reset,
        "create-schema queues seed-queues seed-priorities lock-escalation statistics",
    ),
    (
        SQL.control,
        "alive version schema-facts rcsi give-shards take-shards",
    ),
    (SQL.session, "setup apply workers kill"),
];

/// SQL Server error numbers the runner acts on or explains.
const ER_DEADLOCK_VICTIM: u32 = 1205;
const ER_LOCK_TIMEOUT: u32 = 1222;
const ER_SNAPSHOT_CONFLICT: u32 = 3960;
const ER_LOGIN_FAILED: u32 = 18456;
const ER_CANNOT_OPEN_DATABASE: u32 = 4060;
const ER_PERMISSION_DENIED: [u32; 4] = [229, 262, 297, 300];
const ER_SCHEMA_PERMISSION: u32 = 2760;

/// Approximate lock count at which SQL Server escalates one statement's row locks.
pub const ESCALATION_THRESHOLD: u32 = 5_000;

/// Column positions in the production and waiting OUTPUT list (the seed's order, then
/// the queue wait).
const COL_ID: usize = 0;
const COL_ATTEMPT: usize = 8;
const COL_QUEUE_WAIT_US: usize = 17;

/// A statement file with `[{SCHEMA}]` filled in (`]` doubled, as inside brackets).
pub fn with_schema(sql: &str, schema: &str) -> String {
    sql.replace("{SCHEMA}", &schema.replace(']', "]]"))
}

/// The production or waiting statement as sent: with READCOMMITTEDLOCK added to its
/// lock hints when the database reads row versions by default (READ_COMMITTED_SNAPSHOT
/// ON), so that READPAST has locks to skip and UPDLOCK readers see each other.
pub fn locking_claim_sql(strategy: &Strategy, schema: &str, rcsi: bool) -> String {
    let body = claim_body(strategy);
    let body = if rcsi {
        read_committed_lock(&body)
    } else {
        body
    };
    with_schema(&body, schema)
}

/// A claim file's statement. A lock-hint variant's file holds its header and one
/// `-- hints: ...` line: its statement is production's with that list in place of
/// `UPDLOCK, READPAST`, so the variants cannot drift from the statement they vary.
fn claim_body(strategy: &Strategy) -> String {
    let file = strategy.text(BackendKind::Mssql);
    match file.lines().find_map(|l| l.strip_prefix("-- hints: ")) {
        Some(hints) => statement_body(Strategy::PRODUCTION.text(BackendKind::Mssql)).replace(
            "WITH (UPDLOCK, READPAST)",
            &format!("WITH ({})", hints.trim()),
        ),
        None => statement_body(file),
    }
}

/// A declared claim as sent: `[{SCHEMA}]` filled in, and READCOMMITTEDLOCK added to its
/// UPDLOCK hint lists under RCSI, as the built-ins get it.
pub fn declared_claim_sql(m: &MssqlClaim, schema: &str, rcsi: bool) -> String {
    let body = if rcsi {
        read_committed_lock(&m.sql)
    } else {
        m.sql.clone()
    };
    with_schema(&body, schema)
}

/// A declared claim's binds, in the order of its `@P1`, `@P2`, …: the batch, the worker,
/// its queue, and the workload's constants (an integer as bigint, a boolean as 0 or 1).
pub fn declared_binds<'a>(
    m: &MssqlClaim,
    consts: &'a [(String, Constant)],
    batch: u32,
    (worker_id, queue): (&'a str, &'a str),
) -> Vec<Bind<'a>> {
    m.params
        .iter()
        .map(|p| match p {
            Param::Batch => Bind::Int(batch as i32),
            Param::WorkerId => Bind::Text(worker_id),
            Param::Queue => Bind::Text(queue),
            Param::Const(k) => match consts.get(usize::from(*k)).map(|c| &c.1) {
                Some(Constant::Int(n)) => Bind::BigInt(*n),
                Some(Constant::Bool(b)) => Bind::Int(i32::from(*b)),
                Some(Constant::Text(t)) => Bind::Text(t),
                None => Bind::Text(""),
            },
            // Refused in a T-SQL claim by validation.
            Param::Window | Param::Ids => Bind::Int(0),
        })
        .collect()
}

/// Adds READCOMMITTEDLOCK to every hint list that takes UPDLOCK, whatever else it
/// holds (READPAST, ROWLOCK, PAGLOCK), as the list's last hint.
fn read_committed_lock(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut rest = sql;
    while let Some(at) = rest.find("WITH (UPDLOCK") {
        let close = rest[at..].find(')').map_or(rest.len(), |c| at + c);
        out.push_str(&rest[..close]);
        out.push_str(", READCOMMITTEDLOCK");
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// A one-statement file without its header comment (the lines before the first line
/// that is not a comment); multi-step files go through `step`.
fn statement_body(file: &str) -> String {
    let start = file
        .lines()
        .take_while(|l| l.starts_with("--"))
        .map(|l| l.len() + 1)
        .sum::<usize>();
    file[start..].trim().to_string()
}

/// A value bound to a positional parameter, as the golden tests pin it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bind<'a> {
    Int(i32),
    BigInt(i64),
    Text(&'a str),
}

/// Binds of a claim statement: @P1 = @Limit, @P2 = @WorkerId, and for `offset-start`
/// @P3 = @Window; how many of the three it takes ([`Strategy::binds`]).
pub fn claim_binds<'a>(
    strategy: &Strategy,
    batch: u32,
    worker_id: &'a str,
) -> ([Bind<'a>; 3], usize) {
    let window = strategy.def().offset_window;
    let k = window.map_or(0, |k| k.min(crate::strategy::MAX_OFFSET_WINDOW) as i32);
    (
        [Bind::Int(batch as i32), Bind::Text(worker_id), Bind::Int(k)],
        strategy.binds().len(),
    )
}

/// Binds of the naive and conditional candidate SELECT: @P1 = batch limit.
pub fn select_binds(batch: u32) -> [Bind<'static>; 1] {
    [Bind::Int(batch as i32)]
}

/// Binds of a sharded strategy's candidate SELECT: @P1 batch limit, @P2 worker id (its
/// shard map's key).
pub fn sharded_select_binds(batch: u32, worker_id: &str) -> [Bind<'_>; 2] {
    [Bind::Int(batch as i32), Bind::Text(worker_id)]
}

/// Binds of naive's UPDATE: @P1 worker id, @P2 the ids as a JSON array.
pub fn naive_update_binds<'a>(worker_id: &'a str, ids_json: &'a str) -> [Bind<'a>; 2] {
    [Bind::Text(worker_id), Bind::Text(ids_json)]
}

/// Binds of conditional's per-candidate UPDATE: @P1 worker id, @P2 id, @P3 attempt.
pub fn claim_one_binds(worker_id: &str, id: i64, attempt: i32) -> [Bind<'_>; 3] {
    [Bind::Text(worker_id), Bind::BigInt(id), Bind::Int(attempt)]
}

/// Binds of version-cas's batch UPDATE: @P1 worker id, @P2 the candidates as a JSON
/// array of `[id, version]` pairs.
pub fn version_cas_binds<'a>(worker_id: &'a str, pairs_json: &'a str) -> [Bind<'a>; 2] {
    [Bind::Text(worker_id), Bind::Text(pairs_json)]
}

/// What `claimbench sql --backend mssql` shows of a strategy's parameters.
pub fn strategy_params(strategy: &Strategy, batch: u32) -> String {
    if let Some(m) = strategy
        .def()
        .custom
        .as_ref()
        .and_then(|c| c.mssql.as_ref())
    {
        return m
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                Param::Batch => format!("@P{} = {batch} (batch)", i + 1),
                Param::WorkerId => format!("@P{} = worker id", i + 1),
                p => format!("@P{} = {}", i + 1, strategy.param_note(*p)),
            })
            .collect::<Vec<_>>()
            .join(", ");
    }
    let show = |b: &[Bind]| {
        b.iter()
            .enumerate()
            .map(|(i, b)| format!("@P{} = {b:?}", i + 1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let select = match strategy.binds().len() {
        2 => show(&sharded_select_binds(batch, "<worker id>")),
        _ => show(&select_binds(batch)),
    };
    match strategy.shape() {
        Shape::Claim => {
            let (binds, n) = claim_binds(strategy, batch, "<worker id>");
            show(&binds[..n])
        }
        Shape::ReadThenWrite | Shape::ReadLockWrite => format!(
            "select: {select}; update: {}",
            show(&naive_update_binds("<worker id>", "[<ids read>]"))
        ),
        Shape::ReadThenConditional => format!(
            "select: {select}; claim-one, per id: {}",
            show(&claim_one_binds("<worker id>", 0, 0))
        ),
        Shape::VersionCas => format!(
            "select: {}; claim-batch: {}",
            show(&select_binds(batch)),
            show(&version_cas_binds(
                "<worker id>",
                "[[<id>, <version>], ...]"
            ))
        ),
    }
}

/// Indexes on the hot table with `layout`: the clustered primary key and the layout's.
pub fn index_count(layout: &str) -> u32 {
    if layout == "pk-only" { 1 } else { 2 }
}

pub struct MssqlBackend {
    target: MssqlTarget,
    id: recipe::Instance,
    /// READ_COMMITTED_SNAPSHOT of the database, read at every reset; decides the form of
    /// the production and waiting statements.
    rcsi: AtomicBool,
    control: Control<Conn>,
}

impl MssqlBackend {
    pub fn new(target: MssqlTarget, schema: &str) -> MssqlBackend {
        MssqlBackend {
            id: recipe::Instance::new(
                BackendKind::Mssql,
                schema,
                target.display.clone(),
                Some(&SQL),
            ),
            target,
            rcsi: AtomicBool::new(false),
            control: Control::default(),
        }
    }

    pub fn schema(&self) -> &str {
        &self.id.schema
    }

    /// `[schema].[JobsHot]`, for OBJECT_ID().
    fn hot_table(&self) -> String {
        with_schema("[{SCHEMA}].[JobsHot]", &self.id.schema)
    }

    /// Opens one connection named `program_name` on the server.
    async fn open(&self, program_name: &str) -> Result<Conn, BackendError> {
        self.open_via(program_name, None).await
    }

    /// [`MssqlBackend::open`] through `via` (a delaying proxy) when given.
    async fn open_via(
        &self,
        program_name: &str,
        via: Option<std::net::SocketAddr>,
    ) -> Result<Conn, BackendError> {
        let mut config = self.target.config.clone();
        config.application_name(program_name);
        let addr = match via {
            Some(a) => a.to_string(),
            None => config.get_addr().to_string(),
        };
        let connect = async {
            let tcp = TcpStream::connect(&addr)
                .await
                .map_err(|e| self.connect_error(&tiberius::error::Error::from(e)))?;
            let _ = tcp.set_nodelay(true);
            Client::connect(config, tcp.compat_write())
                .await
                .map_err(|e| self.connect_error(&e))
        };
        let mut client = match tokio::time::timeout(Duration::from_secs(10), connect).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(BackendError::Connect {
                    target: self.id.display.clone(),
                    reason: "no answer within 10 s".into(),
                    hint: "is the server running and reachable? check host and port (a named instance needs its port: host,port or host:port)",
                });
            }
        };
        client
            .simple_query(step(SQL.session, "setup"))
            .await
            .map_err(|e| query_error("set session options", e))?
            .into_results()
            .await
            .map_err(|e| query_error("set session options", e))?;
        Ok(client)
    }

    fn connect_error(&self, e: &tiberius::error::Error) -> BackendError {
        use tiberius::error::Error as E;
        let (reason, hint) = match e {
            E::Server(t) => (t.message().to_string(), connect_hint(t.code())),
            E::Tls(m) => (
                format!("TLS: {m}"),
                "TLS handshake failed: for a self-signed certificate add trust_server_certificate=true (URL) or TrustServerCertificate=true (connection string), or encrypt=false",
            ),
            E::Routing { host, port } => (
                format!("the server redirects to {host}:{port}"),
                "connect to the host and port the server names",
            ),
            other => (
                other.to_string(),
                "is the server running and accepting TCP connections? check host and port",
            ),
        };
        BackendError::Connect {
            target: self.id.display.clone(),
            reason,
            hint,
        }
    }

    /// Runs `f` on the control connection (reset, counters, reconciliation).
    async fn on_control<T>(
        &self,
        f: impl AsyncFnOnce(&mut Conn) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.control
            .run(
                async || self.open("claimbench-control").await,
                async |c: &mut Conn| match c.simple_query(step(SQL.control, "alive")).await {
                    Ok(stream) => stream.into_results().await.is_ok(),
                    Err(_) => false,
                },
                f,
            )
            .await
    }

    /// The rows of one statement file (schema filled in) on the control connection.
    async fn control_query(
        &self,
        file: &str,
        params: &[&dyn tiberius::ToSql],
        what: &'static str,
    ) -> Result<Vec<Row>, BackendError> {
        let sql = with_schema(file, &self.id.schema);
        self.on_control(async |c| {
            let e = |e| query_error(what, e);
            c.query(sql, params)
                .await
                .map_err(e)?
                .into_first_result()
                .await
                .map_err(e)
        })
        .await
    }

    async fn recreate(&self, c: &mut Conn, r: Reset<'_>) -> Result<u64, BackendError> {
        let (workload, layout_sql, seed) = (r.workload, r.layout_sql, r.seed);
        let s = |sql: &str| with_schema(sql, &self.id.schema);
        let e = |what| move |e| query_error(what, e);
        c.execute(
            step(SQL.reset, "create-schema"),
            &[&self.id.schema.as_str()],
        )
        .await
        .map_err(e("create schema"))?;
        c.execute(s(MARKER_SQL), &[])
            .await
            .map_err(e("create schema marker"))?;
        c.execute(s(DROP_SQL), &[])
            .await
            .map_err(e("drop tables"))?;
        c.execute(s(SQL.schema), &[])
            .await
            .map_err(e("create tables"))?;
        let p = &workload.population;
        let insert_queue = s(step(SQL.reset, "queues"));
        for q in &p.queues {
            c.execute(
                &*insert_queue,
                &[&q.name.as_str(), &q.paused, &q.active, &q.max_workers],
            )
            .await
            .map_err(e("insert queues"))?;
        }
        let (qnames, qbounds) = p.queue_bounds();
        let insert_sq = s(step(SQL.reset, "seed-queues"));
        let own = p.queue_priorities();
        for (i, ((name, lo), prio)) in qnames.iter().zip(&qbounds).zip(&own).enumerate() {
            c.execute(&*insert_sq, &[&(i as i32), &name.as_str(), lo, prio])
                .await
                .map_err(e("insert seed queues"))?;
        }
        let (prios, pbounds) = p.priority_bounds();
        let insert_sp = s(step(SQL.reset, "seed-priorities"));
        for (i, (value, lo)) in prios.iter().zip(&pbounds).enumerate() {
            c.execute(&*insert_sp, &[&(i as i32), value, lo])
                .await
                .map_err(e("insert seed priorities"))?;
        }
        let seed_text = seed.to_string();
        let row = c
            .query(
                s(SQL.seed),
                &[
                    &(p.backlog as i64),
                    &seed_text.as_str(),
                    &(p.payload_bytes as i32),
                    &p.scheduled_share,
                    &(p.scheduled_within_s * 1e3),
                ],
            )
            .await
            .map_err(e("seed backlog"))?
            .into_row()
            .await
            .map_err(e("seed backlog"))?;
        let seeded = row
            .and_then(|r| r.get::<i64, _>(0))
            .unwrap_or_default()
            .max(0) as u64;
        c.execute(s(layout_sql), &[])
            .await
            .map_err(e("build index layout"))?;
        c.execute(
            s(&fill(
                step(SQL.reset, "lock-escalation"),
                &[("escalation", workload.lock_escalation.as_sql())],
            )),
            &[],
        )
        .await
        .map_err(e("set lock escalation"))?;
        c.execute(s(step(SQL.reset, "statistics")), &[])
            .await
            .map_err(e("update statistics"))?;
        let rcsi = c
            .query(step(SQL.control, "rcsi"), &[])
            .await
            .map_err(e("read READ_COMMITTED_SNAPSHOT"))?
            .into_row()
            .await
            .map_err(e("read READ_COMMITTED_SNAPSHOT"))?
            .and_then(|r| r.get::<i32, _>(0))
            == Some(1);
        self.rcsi.store(rcsi, Ordering::Relaxed);
        Ok(seeded)
    }
}

/// What a server error number means to the runner: retry (deadlock victim, lock
/// timeout, snapshot conflict) or give up.
fn server_error_kind(code: u32) -> ErrorKind {
    match code {
        ER_DEADLOCK_VICTIM => ErrorKind::Deadlock,
        ER_LOCK_TIMEOUT => ErrorKind::LockTimeout,
        ER_SNAPSHOT_CONFLICT => ErrorKind::Serialization,
        _ => ErrorKind::Other,
    }
}

/// What to grant when a statement was refused for want of a permission.
fn permission_hint(code: u32) -> &'static str {
    if ER_PERMISSION_DENIED.contains(&code) {
        "; grant the login VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE on SQL Server 2022) for the lock evidence, and CREATE TABLE with ALTER on the schema"
    } else if code == ER_SCHEMA_PERMISSION {
        "; the login needs CREATE SCHEMA, or create the schema for it and grant ALTER on it"
    } else {
        ""
    }
}

/// What to check when the server refused a connection with error `code`.
fn connect_hint(code: u32) -> &'static str {
    match code {
        ER_LOGIN_FAILED => {
            "the server refused the login: check the user and password (SQL authentication must be enabled on the server)"
        }
        ER_CANNOT_OPEN_DATABASE => {
            "the database does not exist or the login may not use it: create it, or name another"
        }
        _ => "the server answered but refused: check the connection string",
    }
}

pub(crate) fn query_error(what: &'static str, e: tiberius::error::Error) -> BackendError {
    use tiberius::error::Error as E;
    let (kind, code, message) = match &e {
        E::Server(t) => (
            server_error_kind(t.code()),
            Some(format!("SQL Server {}", t.code())),
            format!("{}{}", t.message(), permission_hint(t.code())),
        ),
        E::Io { .. } => (ErrorKind::ConnectionLost, None, e.to_string()),
        other => (ErrorKind::Other, None, other.to_string()),
    };
    BackendError::query(what, kind, code, message)
}

/// One row's column `i` as i64, whatever integer type the server sent.
pub(crate) fn int(row: &Row, i: usize) -> i64 {
    row.try_get::<i64, _>(i)
        .ok()
        .flatten()
        .or_else(|| row.try_get::<i32, _>(i).ok().flatten().map(i64::from))
        .or_else(|| row.try_get::<u8, _>(i).ok().flatten().map(i64::from))
        .unwrap_or(0)
}

impl recipe::Dialect for MssqlBackend {
    fn instance(&self) -> &recipe::Instance {
        &self.id
    }

    /// `[{SCHEMA}]` filled in; numbers bind as bigint, names (and the JSON arrays the
    /// statements read with OPENJSON) as nvarchar.
    async fn control_rows(&self, q: recipe::Query<'_>) -> recipe::Rows {
        let recipe::Query { sql, args, what } = q;
        let params: Vec<&dyn tiberius::ToSql> = args
            .iter()
            .map(|a| match a {
                recipe::Arg::Int(i) => i as &dyn tiberius::ToSql,
                recipe::Arg::Text(t) => t,
                recipe::Arg::TextList(_) => unreachable!("{}", recipe::NO_ARRAYS),
            })
            .collect();
        let rows = self.control_query(sql, &params, what).await?;
        Ok(rows.into_iter().map(cells).collect())
    }
}

/// A row's values by their column data.
fn cells(row: Row) -> Vec<recipe::Cell> {
    use recipe::Cell;
    use tiberius::ColumnData as D;
    row.into_iter()
        .map(|v| match v {
            D::U8(Some(n)) => Cell::Int(n.into()),
            D::I16(Some(n)) => Cell::Int(n.into()),
            D::I32(Some(n)) => Cell::Int(n.into()),
            D::I64(Some(n)) => Cell::Int(n),
            D::F32(Some(f)) => Cell::Float(f.into()),
            D::F64(Some(f)) => Cell::Float(f),
            D::Bit(Some(b)) => Cell::Int(b.into()),
            D::String(Some(s)) => Cell::Text(s.into_owned()),
            _ => Cell::Null,
        })
        .collect()
}

impl Backend for MssqlBackend {
    type Session = MssqlSession;

    async fn connect(&self, role: &str, worker_id: &str) -> Result<MssqlSession, BackendError> {
        self.connect_to(role, worker_id, crate::backend::Endpoint::default())
            .await
    }

    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        use std::net::ToSocketAddrs;
        self.target.config.get_addr().to_socket_addrs().ok()?.next()
    }

    async fn connect_to(
        &self,
        role: &str,
        worker_id: &str,
        to: crate::backend::Endpoint,
    ) -> Result<MssqlSession, BackendError> {
        let client = self.open_via(role, to.via).await?;
        Ok(MssqlSession::new(
            client,
            &self.id.schema,
            self.rcsi.load(Ordering::Relaxed),
            worker_id,
            &self.id.worker_role,
        ))
    }

    async fn rebuild(&self, r: Reset<'_>) -> Result<u64, BackendError> {
        self.check_schema().await?;
        self.on_control(async |c| self.recreate(c, r).await).await
    }

    async fn counters(&self) -> Result<ServerCounters, BackendError> {
        let table = self.hot_table();
        self.on_control(async |c| {
            let e = |e| query_error("read lock counters", e);
            let r = c
                .query(SQL.counters, &[&table.as_str()])
                .await
                .map_err(e)?
                .into_row()
                .await
                .map_err(e)?;
            let Some(r) = r else {
                return Ok(ServerCounters::default());
            };
            Ok(ServerCounters {
                deadlocks: int(&r, 0),
                lock_waits: Some(int(&r, 1)),
                lock_wait_ms: Some(int(&r, 2)),
                row_lock_waits: Some(int(&r, 3)),
                row_lock_time_ms: Some(int(&r, 4)),
                lock_escalations: Some(int(&r, 5)),
                ..ServerCounters::default()
            })
        })
        .await
    }

    /// The login the run connects as, and its rights over the server's host: declared
    /// T-SQL runs as it, so a sysadmin login is refused unless the person allows it.
    async fn workload_role(&self) -> Result<Option<super::WorkloadRole>, BackendError> {
        let rows = self
            .control_query(
                step(SQL.control, "role-rights"),
                &[],
                "read the login's rights",
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        let name: Option<&str> = r.try_get(0).ok().flatten();
        let rights = [
            (1, "sysadmin"),
            (2, "CONTROL SERVER"),
            (3, "ADMINISTER BULK OPERATIONS"),
        ];
        Ok(Some(super::WorkloadRole {
            name: name.unwrap_or_default().to_string(),
            reaches_host: rights
                .iter()
                .filter(|(i, _)| int(r, *i) == 1)
                .map(|(_, n)| n.to_string())
                .collect(),
        }))
    }

    async fn server_pid(&self) -> Option<crate::backend::ServerProcess> {
        // SQL Server does not tell its OS pid; it rarely runs on the client's host.
        None
    }

    /// The seed's `Candidates` CTE reads every eligible row `WITH (UPDLOCK, READPAST)`
    /// and holds each U lock to the end of the statement, so one production or waiting
    /// claim takes about one lock per eligible row and index read, whatever the batch:
    /// estimated from the backlog eligible at the trial's start.
    fn trial_warnings(
        &self,
        workload: &Workload,
        layout: &str,
        strategy: &Strategy,
    ) -> Vec<Warning> {
        let indexes = u64::from(index_count(layout));
        let eligible = workload.population.eligible_at_start();
        let locks = eligible.saturating_mul(indexes);
        if strategy.applies_max_workers()
            && workload.lock_escalation != crate::workload::LockEscalation::Disable
            && locks >= u64::from(ESCALATION_THRESHOLD) * 4 / 5
        {
            vec![Warning::LockEscalationRisk {
                eligible,
                indexes: indexes as u32,
                locks,
            }]
        } else {
            Vec::new()
        }
    }

    fn run_notes(&self) -> Vec<(String, String)> {
        vec![(
            "claimbench production form".into(),
            if self.rcsi.load(Ordering::Relaxed) {
                "UPDLOCK, READPAST, READCOMMITTEDLOCK (READ_COMMITTED_SNAPSHOT is ON)".into()
            } else {
                "UPDLOCK, READPAST (READ_COMMITTED_SNAPSHOT is OFF)".into()
            },
        )]
    }
}

#[cfg(test)]
mod tests;
