//! PostgreSQL backend over tokio-postgres: schema reset and seeding, the four claim
//! strategies, the job lifecycle, and PostgreSQL's own evidence (`pg_stat_activity`,
//! `pg_stat_database`, `pg_stat_user_tables`).
//!
//! Every statement is in `migrations/postgres/`; this folder only binds parameters and
//! reads rows. Each session (`session.rs`) prepares its statements once at connect.

use super::claim::{Ask, ClaimSteps, Done, Won};
use super::lifecycle::{Lifecycle, Reply, Step};
use super::recipe;
use super::sql::{fill, migration, step};
use super::{
    Backend, BackendError, BackendKind, ClaimedJob, ErrorKind, Sample, ServerCounters, Session,
};
use crate::backend::Reset;
use crate::results::{DbReconciliation, TableStats};
use crate::strategy::named_params::Param;
use crate::strategy::{Shape, Strategy};
use crate::workload::{Storage, Workload};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, Notify};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config};

mod claim;
mod cleanup;
mod declared_table;
mod job_key;
mod login;
mod model_state;
mod pooled;
mod prepared;
pub use prepared::strategy_params;
mod pristine;
mod session;
mod statement;
mod storage;
use claim::ClaimStatement;
pub use pooled::PoolerRoute;
use pristine::Pristine;
pub use session::PostgresSession;

const SQL: super::files::EngineFiles = super::files::engine_files!("postgres");
const REPLICATION_SQL: &str = migration!("postgres", "evidence/replication.sql");
const FAILOVER_SQL: &str = migration!("postgres", "evidence/failover.sql");
const HISTORY_SQL: &str = migration!("postgres", "history.sql");
pub(super) const CLEANUP_SQL: &str = migration!("postgres", "cleanup.sql");
const KEYS_SQL: &str = migration!("postgres", "keys.sql");
pub(super) const COMPLETE_BATCH_SQL: &str = migration!("postgres", "lifecycle/complete_batch.sql");
pub(super) const IN_PLACE_SQL: &str = migration!("postgres", "storage/update-in-place.sql");
pub(super) const DELETE_SQL: &str = migration!("postgres", "storage/delete.sql");
pub(super) const PARTITIONED_SQL: &str = migration!("postgres", "storage/partitioned.sql");
/// How many time slots (partitions) `storage = "partitioned"` rotates through.
const PARTITION_SLOTS: u32 = 8;

const START_UNGATED_SQL: &str = migration!("postgres", "lifecycle/start_ungated.sql");
const PRIVILEGE_SQL: &str = migration!("postgres", "privilege.sql");
const POOLER_SQL: &str = crate::pooler::CONSOLE_SQL;

pub use crate::names::WORKLOAD_ROLE;

/// The steps this backend reads by name, per file (names apart by spaces): a test
/// checks each is there.
#[cfg(test)]
pub(crate) const STEPS: &[(&str, &str)] = &[
    (
        SQL.reset,
        "recreate-schema enter-schema storage queues setseed vacuum analyze",
    ),
    (
        SQL.control,
        "version version-num schema-facts backend-pid clear-stats-snapshot durability-production-fsync durability-production-synchronous-commit durability-production-full-page-writes durability-embedded-fsync durability-embedded-synchronous-commit durability-embedded-full-page-writes reload durability-now give-shards take-shards",
    ),
    (
        SQL.session,
        "search-path current-schema listen announce unlock unlock-all apply hold-snapshot hold-xid hold-slot drop-slot scan-held kill-workers explain-plan explain-analyze",
    ),
    (HISTORY_SQL, "rows paused-queue"),
    (IN_PLACE_SQL, "complete complete-batch fail"),
    (DELETE_SQL, "complete complete-batch"),
    (PARTITIONED_SQL, "table keys clean"),
    (
        PRIVILEGE_SQL,
        "ensure-role allow-slots server-search-path check-role pooled-search-path",
    ),
    (POOLER_SQL, "stats pools databases config resize reconnect"),
];

/// Column positions in the claim statements' RETURNING list (the seed's OUTPUT order,
/// plus the server-computed queue wait).
const COL_ID: usize = 0;
const COL_ATTEMPT: usize = 8;
const COL_QUEUE_WAIT_US: usize = 17;

/// Which of claimbench's own connections a statement needs.
///
/// The privilege boundary, by construction: the server connection is the target's login
/// (the embedded server's superuser) and runs only statements about the server and its
/// catalogs, with a `search_path` that cannot resolve to anything in the run's schema;
/// every statement that reads or writes a table of the run's schema runs on the control
/// connection, logged in as the schema's owner ([`WORKLOAD_ROLE`] on a server
/// claimbench started), so a trigger, view or function a workload put there never runs
/// with more than that role's rights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Login {
    /// The target's login, `search_path` on the catalogs only.
    Server,
    /// The schema owner's login, `search_path` on the run's schema.
    Schema,
}

pub struct PostgresBackend {
    config: Config,
    id: recipe::Instance,
    /// The control connection: the schema owner's, for everything in the run's schema.
    control: Mutex<Option<Client>>,
    /// The server connection: the target's login, for the server and its catalogs.
    server: Mutex<Option<Client>>,
    /// [`WORKLOAD_ROLE`] exists on the server (made on first use of the control
    /// connection, before it can log in as it).
    role_made: std::sync::atomic::AtomicBool,
    /// `Some` when trials reset by copying a pristine database (the embedded cluster).
    pristine: Option<Mutex<Pristine>>,
    /// The database connections open in: the trial database once a copy was made, else
    /// the one of `config`.
    database: std::sync::RwLock<Option<String>>,
    /// On a server claimbench started: sessions, the control connection, declared
    /// layouts and strategy setups log in as [`WORKLOAD_ROLE`], which owns the schema
    /// and nothing else; only the server connection stays the server's superuser
    /// (settings, catalogs, databases, the role itself).
    workload_role: bool,
    /// Workers reach the server through a connection pooler.
    pooler: Option<PoolerRoute>,
    /// The pooler's admin console, read for its counters around each trial.
    pooler_admin: Option<Config>,
    /// The console connection the trial's pool watcher keeps open between readings.
    pooler_console: Mutex<Option<Client>>,
    /// Where finished jobs go in the trial the last reset made (`storage`): sessions
    /// opened after it prepare that model's statements.
    storage: std::sync::RwLock<Storage>,
    /// The queue table the last reset's workload declares (`[table]`): sessions opened
    /// after it prepare its lifecycle steps, and the reconciliation reads its counts.
    table: std::sync::RwLock<Option<Arc<crate::declared_table::TableForm>>>,
    /// The run's lock service (`lock-service`): each worker session takes its leases
    /// there, for the lease the last reset read from the workload.
    lock_service: Option<crate::backend::lock_service::LockService>,
}

impl PostgresBackend {
    /// `schema` is created and dropped by claimbench: a run never touches other schemas.
    pub fn new(config: Config, display: String, schema: &str) -> PostgresBackend {
        PostgresBackend {
            config,
            id: recipe::Instance::new(BackendKind::Postgres, schema, display, Some(&SQL)),
            control: Mutex::new(None),
            server: Mutex::new(None),
            role_made: Default::default(),
            pristine: None,
            database: std::sync::RwLock::new(None),
            workload_role: false,
            pooler: None,
            pooler_admin: None,
            pooler_console: Mutex::new(None),
            storage: Default::default(),
            table: Default::default(),
            lock_service: None,
        }
    }

    /// Runs the SQL a workload brings as [`WORKLOAD_ROLE`], created on the first reset:
    /// only on a server claimbench started, whose superuser it is. A workload's layout
    /// file ran `COPY … TO PROGRAM` on the host as the superuser before this.
    pub fn with_workload_role(mut self) -> PostgresBackend {
        self.workload_role = true;
        self
    }

    /// Workers take leases in `service` for a `lock-service` claim.
    pub fn with_lock_service(
        mut self,
        service: crate::backend::lock_service::LockService,
    ) -> PostgresBackend {
        self.lock_service = Some(service);
        self
    }

    /// Resets trials by copying a pristine database seeded once per population and
    /// layout (see [`super::pristine`]): only on a cluster claimbench started, since it
    /// creates and drops databases.
    pub fn with_pristine_copies(mut self) -> PostgresBackend {
        self.pristine = Some(Mutex::new(Pristine::default()));
        self
    }

    fn use_database(&self, db: Option<String>) {
        *self.database.write().unwrap_or_else(|p| p.into_inner()) = db;
    }

    pub fn schema(&self) -> &str {
        &self.id.schema
    }
}

impl PostgresBackend {
    /// Drops and recreates the schema, seeds it and builds the layout's indexes.
    async fn reset_in_place(&self, r: Reset<'_>) -> Result<u64, BackendError> {
        self.check_schema().await?;
        let schema = quote_ident(&self.id.schema);
        let e = |what| move |e| query_error(what, e);
        self.make_workload_role().await?;
        {
            let guard = self.server().await?;
            let c: &Client = &guard;
            if self.workload_role && r.workload.holds_logical_slot() {
                c.batch_execute(step(PRIVILEGE_SQL, "allow-slots"))
                    .await
                    .map_err(e("let the workload's role hold a replication slot"))?;
            }
            let owner = match self.workload_role {
                true => WORKLOAD_ROLE,
                false => "CURRENT_USER",
            };
            c.batch_execute(&fill(
                step(SQL.reset, "recreate-schema"),
                &[("schema", &schema), ("owner", owner)],
            ))
            .await
            .map_err(e("recreate schema"))?;
        }
        let guard = self.control().await?;
        let c: &Client = &guard;
        // One transaction from the tables to the indexes: with wal_level = minimal (the
        // embedded default) a table created and filled in the same transaction skips
        // the WAL.
        c.batch_execute("BEGIN").await.map_err(e("begin reset"))?;
        let seeded = match self.recreate(c, r, &schema).await {
            Ok(n) => n,
            Err(err) => {
                let _ = c.batch_execute("ROLLBACK").await;
                return Err(err);
            }
        };
        c.batch_execute("COMMIT").await.map_err(e("commit reset"))?;
        drop(guard);
        // The team's table, built and filled from the seeded rows before a declared
        // layout, which may index it.
        let seeded = match self.declared_table() {
            Some(t) => self.build_declared_table(&t).await?,
            None => seeded,
        };
        let declared = crate::custom_layout::find(&r.workload.custom_layouts, r.layout);
        if let Some(d) = declared {
            self.build_declared_layout(d).await?;
        }
        // A declared layout that dropped or renamed a table fails here: named, not the
        // vacuum.
        let named = |what| {
            move |err| match declared {
                Some(d) => {
                    super::layouts::declared_refused(query_error(what, err), &d.file, &d.name)
                }
                None => query_error(what, err),
            }
        };
        let guard = self.control().await?;
        let c: &Client = &guard;
        // One statement per call: VACUUM refuses to run inside a transaction block.
        c.batch_execute(step(SQL.reset, "vacuum"))
            .await
            .map_err(named("vacuum analyze after the layout"))?;
        c.batch_execute(step(SQL.reset, "analyze"))
            .await
            .map_err(named("analyze queues after the layout"))?;
        Ok(seeded)
    }

    /// Builds a declared layout on a connection of its own, logged in as the workload's
    /// role: `RESET ROLE` cannot undo a login, so nothing in the file runs with more
    /// than that role's rights. A failure names the file beside the server's reason.
    async fn build_declared_layout(
        &self,
        d: &crate::custom_layout::DeclaredLayout,
    ) -> Result<(), BackendError> {
        let c = self.open_for_workload("claimbench-layout").await?;
        let named = |err| {
            let err = query_error("build the declared index layout", err);
            super::layouts::declared_refused(err, &d.file, &d.name)
        };
        c.batch_execute("BEGIN").await.map_err(named)?;
        c.batch_execute(&d.sql).await.map_err(named)?;
        c.batch_execute("COMMIT").await.map_err(named)
    }

    /// Copies the pristine database of (population, layout, seed) into the trial
    /// database, seeding that pristine database first if this run has none yet.
    async fn reset_by_copy(
        &self,
        pristine: &Mutex<Pristine>,
        r: Reset<'_>,
    ) -> Result<u64, BackendError> {
        let key = pristine::key(r.workload, r.layout, r.seed);
        let mut made = pristine.lock().await;
        // claimbench's connections may sit in the trial database about to be dropped.
        self.close_connections().await;
        self.use_database(None);
        let maintenance = self.open_server("claimbench-server").await?;
        let e = |what| move |e| query_error(what, e);
        let version: i32 = maintenance
            .query_one(step(SQL.control, "version-num"), &[])
            .await
            .map_err(e("read the server version"))?
            .get(0);
        let (template, seeded) = match made.find(&key) {
            Some(found) => found,
            None => {
                let name = made.next_name();
                maintenance
                    .batch_execute(&pristine::database_sql("drop", &name))
                    .await
                    .map_err(e("drop a stale pristine database"))?;
                maintenance
                    .batch_execute(&pristine::database_sql("create", &name))
                    .await
                    .map_err(e("create a pristine database"))?;
                self.use_database(Some(name.clone()));
                let seeded = self.reset_in_place(r).await?;
                // A template must have no connections while it is copied.
                self.close_connections().await;
                self.use_database(None);
                made.record(key, name.clone(), seeded);
                (name, seeded)
            }
        };
        maintenance
            .batch_execute(&pristine::drop_sql(version))
            .await
            .map_err(e("drop the last trial's database"))?;
        maintenance
            .batch_execute(&pristine::copy_sql(&template, version))
            .await
            .map_err(e("copy the pristine database"))?;
        self.use_database(Some(pristine::TRIAL_DB.to_string()));
        Ok(seeded)
    }

    /// The body of `reset`, inside the caller's transaction on the control connection
    /// (the schema's owner).
    async fn recreate(&self, c: &Client, r: Reset<'_>, schema: &str) -> Result<u64, BackendError> {
        let (workload, layout, layout_sql) = (r.workload, r.layout, r.layout_sql);
        let e = |what| move |e| query_error(what, e);
        c.batch_execute(&fill(
            step(SQL.reset, "enter-schema"),
            &[("schema", schema)],
        ))
        .await
        .map_err(e("enter the schema"))?;
        c.batch_execute(SQL.schema)
            .await
            .map_err(e("create tables"))?;
        storage_before_seed(c, workload).await?;
        let p = &workload.population;
        let names: Vec<&str> = p.queues.iter().map(|q| q.name.as_str()).collect();
        let paused: Vec<bool> = p.queues.iter().map(|q| q.paused).collect();
        let active: Vec<bool> = p.queues.iter().map(|q| q.active).collect();
        let max: Vec<Option<i32>> = p.queues.iter().map(|q| q.max_workers).collect();
        c.execute(step(SQL.reset, "queues"), &[&names, &paused, &active, &max])
            .await
            .map_err(e("insert queues"))?;
        c.execute(step(SQL.reset, "setseed"), &[&setseed_value(r.seed)])
            .await
            .map_err(e("set random seed"))?;
        let (qnames, qbounds) = p.queue_bounds();
        let (prios, pbounds) = p.priority_bounds();
        let seeded = c
            .execute(
                SQL.seed,
                &[
                    &(p.backlog as i64),
                    &qnames,
                    &qbounds,
                    &prios,
                    &pbounds,
                    &p.scheduled_share,
                    &p.scheduled_within_s,
                    &(p.payload_bytes as i32),
                    &p.queue_priorities(),
                ],
            )
            .await
            .map_err(e("seed backlog"))?;
        let h = p.history;
        if h.rows() > 0 {
            let counts = [h.finished, h.failed, h.future, h.paused].map(|n| n as i64);
            let bytes = p.payload_bytes as i32;
            let args: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
                &(p.backlog as i64),
                &counts[0],
                &counts[1],
                &counts[2],
                &counts[3],
                &qnames,
                &qbounds,
                &bytes,
            ];
            c.execute(step(HISTORY_SQL, "rows"), &args)
                .await
                .map_err(e("seed history"))?;
            if h.paused > 0 {
                c.batch_execute(step(HISTORY_SQL, "paused-queue"))
                    .await
                    .map_err(e("add the paused history queue"))?;
            }
        }
        if h.archived > 0 {
            let args: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [
                &(h.archived as i64),
                &qnames,
                &qbounds,
                &(p.payload_bytes as i32),
            ];
            c.execute(step(HISTORY_SQL, "archived"), &args)
                .await
                .map_err(e("seed the archive's history"))?;
        }
        storage_after_seed(c, workload).await?;
        // A declared layout is workload SQL: built after the commit, on a connection of
        // its own (reset_in_place), so that nothing of this transaction's is its.
        if crate::custom_layout::find(&workload.custom_layouts, layout).is_none() {
            c.batch_execute(layout_sql)
                .await
                .map_err(e("build index layout"))?;
        }
        // Pending history rows stay pending through the trial: they count as seeded.
        Ok(seeded + p.history.pending())
    }
}

/// Right after schema.sql, in the reset's transaction: records the model for the counts
/// after the trial and, partitioned, rebuilds the hot table as partitions of one slot
/// per run of the cleanup job (so a partition is whole by the next run).
async fn storage_before_seed(c: &Client, workload: &Workload) -> Result<(), BackendError> {
    let e = |what| move |e| query_error(what, e);
    c.execute(step(SQL.reset, "storage"), &[&workload.storage.name()])
        .await
        .map_err(e("record the storage model"))?;
    if workload.storage == Storage::Partitioned {
        let width = workload
            .cleanup
            .as_ref()
            .map_or(10.0, |c| c.every.as_secs_f64());
        let table = fill(
            step(PARTITIONED_SQL, "table"),
            &[
                ("width", &width.to_string()),
                ("slots", &PARTITION_SLOTS.to_string()),
            ],
        );
        c.batch_execute(&table)
            .await
            .map_err(e("partition the hot table"))?;
    }
    Ok(())
}

/// After the seed: the cleanup job's index on finish times (a partition goes whole and
/// needs none), then the hot table's primary key (a partitioned table's holds its slot).
async fn storage_after_seed(c: &Client, workload: &Workload) -> Result<(), BackendError> {
    let e = |what| move |e| query_error(what, e);
    let index = match workload.storage {
        Storage::ArchiveMove | Storage::Delete => Some("index"),
        Storage::UpdateInPlace => Some("index-in-place"),
        Storage::Partitioned => None,
    };
    if let (Some(index), Some(_)) = (index, &workload.cleanup) {
        c.batch_execute(step(CLEANUP_SQL, index))
            .await
            .map_err(e("build the cleanup job's index"))?;
    }
    let keys = match workload.storage {
        Storage::Partitioned => step(PARTITIONED_SQL, "keys"),
        _ => KEYS_SQL,
    };
    c.batch_execute(keys).await.map_err(e("add primary key"))?;
    Ok(())
}

impl PostgresBackend {
    /// Every row of a statement on the connection `on` names.
    async fn rows_on(
        &self,
        on: Login,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        what: &'static str,
    ) -> Result<Vec<tokio_postgres::Row>, BackendError> {
        let guard = match on {
            Login::Server => self.server().await?,
            Login::Schema => self.control().await?,
        };
        guard
            .query(sql, params)
            .await
            .map_err(|e| query_error(what, e))
    }

    /// A recipe query on the connection `on` names, its rows as cells. Binds natively:
    /// numbers as bigint, names as text, lists as text[].
    async fn recipe_rows(&self, on: Login, q: recipe::Query<'_>) -> recipe::Rows {
        let recipe::Query { sql, args, what } = q;
        use tokio_postgres::types::ToSql;
        let params: Vec<&(dyn ToSql + Sync)> = args
            .iter()
            .map(|a| match a {
                recipe::Arg::Int(i) => i as &(dyn ToSql + Sync),
                recipe::Arg::Text(t) => t,
                recipe::Arg::TextList(l) => l,
            })
            .collect();
        let rows = self.rows_on(on, sql, &params, what).await?;
        Ok(rows.iter().map(cells).collect())
    }
}

/// `s` as a PostgreSQL identifier, quoted whatever it holds: where a name (a schema, a
/// declared or captured table) must go into a statement's text, not a parameter.
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// tokio-postgres wraps the OS error; the innermost message is the useful one.
fn root_cause(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg = s.to_string();
        src = s.source();
    }
    msg
}

fn query_error(what: &'static str, e: tokio_postgres::Error) -> BackendError {
    let code = e.code().cloned();
    let kind = if e.is_closed() {
        ErrorKind::ConnectionLost
    } else {
        match &code {
            Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED => ErrorKind::Deadlock,
            Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE => ErrorKind::Serialization,
            Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => ErrorKind::LockTimeout,
            Some(c)
                if *c == SqlState::ADMIN_SHUTDOWN
                    || *c == SqlState::CRASH_SHUTDOWN
                    || *c == SqlState::CONNECTION_FAILURE =>
            {
                ErrorKind::ConnectionLost
            }
            None if e.as_db_error().is_none() => ErrorKind::ConnectionLost,
            _ => ErrorKind::Other,
        }
    };
    BackendError::Query {
        what,
        kind,
        code: code.map(|c| c.code().to_string()),
        message: root_cause(&e),
    }
}

fn setseed_value(seed: u64) -> f64 {
    // setseed() takes [-1, 1]; keep 9 decimal digits of the workload's seed.
    (seed % 1_000_000_000) as f64 / 1_000_000_000.0
}

impl recipe::Dialect for PostgresBackend {
    fn instance(&self) -> &recipe::Instance {
        &self.id
    }

    async fn control_rows(&self, q: recipe::Query<'_>) -> recipe::Rows {
        self.recipe_rows(Login::Schema, q).await
    }

    async fn server_rows(&self, q: recipe::Query<'_>) -> recipe::Rows {
        self.recipe_rows(Login::Server, q).await
    }
}

/// A row's values by their column types; claimbench's control statements return
/// integers, floats, booleans (as 0 and 1) and text.
fn cells(row: &tokio_postgres::Row) -> Vec<recipe::Cell> {
    use recipe::Cell;
    use tokio_postgres::types::Type;
    (0..row.len())
        .map(|i| {
            let value = match *row.columns()[i].type_() {
                Type::INT8 => row.get::<_, Option<i64>>(i).map(Cell::Int),
                Type::INT4 => row.get::<_, Option<i32>>(i).map(|v| Cell::Int(v.into())),
                Type::INT2 => row.get::<_, Option<i16>>(i).map(|v| Cell::Int(v.into())),
                Type::FLOAT8 => row.get::<_, Option<f64>>(i).map(Cell::Float),
                Type::FLOAT4 => row.get::<_, Option<f32>>(i).map(|v| Cell::Float(v.into())),
                Type::BOOL => row.get::<_, Option<bool>>(i).map(|v| Cell::Int(v.into())),
                _ => row
                    .try_get::<_, Option<String>>(i)
                    .ok()
                    .flatten()
                    .map(Cell::Text),
            };
            value.unwrap_or(Cell::Null)
        })
        .collect()
}

impl Backend for PostgresBackend {
    type Session = PostgresSession;

    async fn connect(&self, role: &str, worker_id: &str) -> Result<PostgresSession, BackendError> {
        self.connect_to(role, worker_id, super::Endpoint::default())
            .await
    }

    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        use std::net::ToSocketAddrs;
        let host = match self.config.get_hosts().first()? {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            #[allow(unreachable_patterns)]
            _ => return None,
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        (host.as_str(), port).to_socket_addrs().ok()?.next()
    }

    /// One node: a multi-host target is a primary and its standbys, tried in turn.
    async fn connect_to(
        &self,
        role: &str,
        worker_id: &str,
        to: super::Endpoint,
    ) -> Result<PostgresSession, BackendError> {
        let worker = role == self.id.worker_role;
        let via = match (to.via, self.pooler.as_ref()) {
            (Some(v), _) => Some(v),
            (None, Some(p)) if worker => Some(p.addr),
            _ => None,
        };
        let (client, wakeups) = self.open_listening(role, via).await?;
        let keep = match self.transaction_pooled(role) {
            true => statement::Keep::Unnamed,
            false => statement::Keep::Prepared,
        };
        let storage = *self.storage.read().expect("not poisoned");
        let (role_name, ways) = (self.worker_role(), (keep, storage));
        let table = self.declared_table();
        let session = PostgresSession::open(
            client,
            wakeups,
            worker_id,
            role_name,
            ways,
            table.as_deref(),
        )
        .await?;
        match self.lock_service.as_ref().filter(|_| worker) {
            Some(service) => {
                let name = format!("{role}-leases");
                let leases = service.leases(&name, worker_id).await?;
                Ok(session.with_leases(leases))
            }
            None => Ok(session),
        }
    }

    async fn rebuild(&self, r: Reset<'_>) -> Result<u64, BackendError> {
        *self.storage.write().expect("not poisoned") = r.workload.storage;
        let table = match &r.workload.table {
            Some(t) => Some(Arc::new(crate::declared_table::form(t).map_err(|m| {
                BackendError::other("read the declared table", m.to_string())
            })?)),
            None => None,
        };
        *self.table.write().expect("not poisoned") = table;
        if let Some(service) = &self.lock_service {
            service.reset(r.workload.faults.lease).await?;
        }
        match &self.pristine {
            Some(p) => self.reset_by_copy(p, r).await,
            None => self.reset_in_place(r).await,
        }
    }

    async fn table_stats(&self) -> Result<TableStats, BackendError> {
        match self.declared_table() {
            Some(t) => self.declared_table_stats(&t).await,
            None => recipe::table_stats(self).await,
        }
    }

    async fn reconcile(&self) -> Result<DbReconciliation, BackendError> {
        match self.declared_table() {
            Some(t) => self.reconcile_declared(&t).await,
            None => recipe::reconcile(self).await,
        }
    }

    fn run_notes(&self) -> Vec<(String, String)> {
        match &self.pristine {
            Some(_) => vec![(
                "claimbench.reset".into(),
                "copy of a pristine database seeded once per population and layout (CREATE DATABASE ... TEMPLATE, STRATEGY FILE_COPY)".into(),
            )],
            None => Vec::new(),
        }
    }

    async fn counters(&self) -> Result<ServerCounters, BackendError> {
        // The statistics views and pg_locks: the server's catalogs, nothing of the schema.
        let guard = self.server().await?;
        let c: &Client = &guard;
        c.batch_execute(step(SQL.control, "clear-stats-snapshot"))
            .await
            .map_err(|e| query_error("clear stats snapshot", e))?;
        let r = c
            .query_one(SQL.counters, &[])
            .await
            .map_err(|e| query_error("read pg_stat_database", e))?;
        drop(guard);
        let pool = self.pooler_stats().await?;
        Ok(ServerCounters {
            deadlocks: r.get(0),
            conflicts: r.get(1),
            rollbacks: r.get(2),
            commits: r.get(3),
            pool_transactions: pool.map(|p| p.0),
            pool_wait_us: pool.map(|p| p.1),
            advisory_locks: Some(r.get(4)),
            ..ServerCounters::default()
        })
    }

    async fn standbys(&self) -> Result<Vec<crate::results::StandbyState>, BackendError> {
        recipe::standbys(self, REPLICATION_SQL).await
    }

    async fn size_pool(&self, n: Option<u32>) -> Result<Option<u32>, BackendError> {
        self.pool_size(n).await
    }

    async fn pool_now(&self) -> Result<Option<(i64, i64)>, BackendError> {
        self.pool_in_use().await
    }

    async fn set_durability(
        &self,
        d: crate::workload::Durability,
    ) -> Result<Vec<(String, String)>, BackendError> {
        let level = match d {
            crate::workload::Durability::Production => "production",
            crate::workload::Durability::Embedded => "embedded",
        };
        let what = "set the block's durability (ALTER SYSTEM)";
        {
            let guard = self.server().await?;
            for name in ["fsync", "synchronous-commit", "full-page-writes"] {
                let name = format!("durability-{level}-{name}");
                guard
                    .batch_execute(step(SQL.control, &name))
                    .await
                    .map_err(|e| query_error(what, e))?;
            }
            guard
                .batch_execute(step(SQL.control, "reload"))
                .await
                .map_err(|e| query_error(what, e))?;
        }
        // The reload reaches each backend as it next reads a command: a new session
        // sees it once the postmaster has read the file, so ask new ones until it does.
        let want: Vec<&str> = match d {
            crate::workload::Durability::Production => vec!["on", "on", "on"],
            crate::workload::Durability::Embedded => Vec::new(),
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let c = self.open_server("claimbench-server").await?;
            let row = c
                .query_one(step(SQL.control, "durability-now"), &[])
                .await
                .map_err(|e| query_error(what, e))?;
            let now: Vec<String> = (0..3).map(|i| row.get::<_, String>(i)).collect();
            if want.is_empty() || now.iter().zip(&want).all(|(a, b)| a == b) {
                return Ok(["fsync", "synchronous_commit", "full_page_writes"]
                    .iter()
                    .map(|k| k.to_string())
                    .zip(now)
                    .collect());
            }
            if std::time::Instant::now() > deadline {
                return Err(BackendError::other(
                    what,
                    format!(
                        "the server still runs with fsync, synchronous_commit, full_page_writes = {now:?} 5 s after the reload"
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn acknowledged_missing(
        &self,
        effects: &[(i64, i64)],
        completions: &[(i64, i64)],
    ) -> Result<crate::backend::Missing, BackendError> {
        recipe::acknowledged_missing(self, FAILOVER_SQL, effects, completions).await
    }

    /// The control connection's backend: its parent is the postmaster.
    async fn server_pid(&self) -> Option<crate::backend::ServerProcess> {
        let rows = self
            .rows_on(
                Login::Server,
                step(SQL.control, "backend-pid"),
                &[],
                "read backend pid",
            )
            .await
            .ok()?;
        u32::try_from(rows.first()?.get::<_, i32>(0))
            .ok()
            .map(crate::backend::ServerProcess::BackendOf)
    }

    async fn load_model_state(&self, state: &crate::model::TableState) -> Result<(), BackendError> {
        self.load_state(state).await?;
        match self.declared_table() {
            Some(t) => self.reseed_declared_table(&t).await,
            None => Ok(()),
        }
    }

    async fn setup_strategy(&self, strategy: &Strategy) -> Result<(), BackendError> {
        let Some(setup) = strategy.setup_step(BackendKind::Postgres) else {
            return Ok(());
        };
        // As the role the workers run as, so that what it creates is theirs.
        self.open_for_workload("claimbench-setup")
            .await?
            .batch_execute(setup)
            .await
            .map_err(|e| {
                super::layouts::setup_refused(
                    query_error("set up the strategy", e),
                    strategy,
                    BackendKind::Postgres,
                )
            })
    }

    async fn workload_role(&self) -> Result<Option<super::WorkloadRole>, BackendError> {
        let c = self.open_for_workload("claimbench-check").await?;
        let row = c
            .query_one(step(PRIVILEGE_SQL, "check-role"), &[])
            .await
            .map_err(|e| query_error("read the workload role's rights", e))?;
        let rights = [
            (1, "SUPERUSER"),
            (2, "pg_execute_server_program"),
            (3, "pg_read_server_files"),
            (4, "pg_write_server_files"),
        ];
        Ok(Some(super::WorkloadRole {
            name: row.get(0),
            reaches_host: rights
                .iter()
                .filter(|(i, _)| row.get::<_, bool>(*i))
                .map(|(_, r)| r.to_string())
                .collect(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::prepared::claim_step;
    use super::*;

    const PRODUCTION_SQL: &str = migration!("postgres", "strategies/production.sql");
    const WAITING_SQL: &str = migration!("postgres", "strategies/waiting.sql");

    /// A declared statement whose comment reads like a step marker is sent whole; a
    /// shipped file with steps sends its claim step and runs its setup step.
    #[test]
    fn declared_statements_are_never_split_into_steps() {
        let d = crate::strategy::custom::Declared::postgres(
            "unit-stepped-comment",
            "c.sql",
            "-- step: lock the rows first\nUPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot LIMIT :batch) RETURNING id",
        );
        let s = crate::strategy::custom::declare(&d).unwrap();
        assert!(claim_step(&s, s.text(BackendKind::Postgres)).contains("UPDATE jobs_hot"));
        assert!(s.setup_step(BackendKind::Postgres).is_none());
        let ready = Strategy::builtin_named("ready-table").unwrap();
        assert!(
            claim_step(&ready, ready.text(BackendKind::Postgres))
                .starts_with("WITH locked AS MATERIALIZED")
        );
        assert!(
            ready
                .setup_step(BackendKind::Postgres)
                .unwrap()
                .starts_with("CREATE TABLE jobs_ready")
        );
        assert!(
            Strategy::PRODUCTION
                .setup_step(BackendKind::Postgres)
                .is_none()
        );
        assert!(
            ready
                .setup_step(BackendKind::Mysql)
                .unwrap()
                .starts_with("CREATE TABLE jobs_ready")
        );
    }

    #[test]
    fn the_registry_sends_these_files() {
        assert_eq!(
            Strategy::PRODUCTION.text(BackendKind::Postgres),
            PRODUCTION_SQL
        );
        assert_eq!(Strategy::WAITING.text(BackendKind::Postgres), WAITING_SQL);
        assert_eq!(Strategy::NAIVE.text(BackendKind::Postgres), SQL.naive);
        assert_eq!(
            Strategy::CONDITIONAL.text(BackendKind::Postgres),
            SQL.conditional
        );
    }

    #[test]
    fn production_skips_locked_rows_and_waiting_does_not() {
        assert!(PRODUCTION_SQL.contains("FOR UPDATE OF h SKIP LOCKED"));
        assert!(WAITING_SQL.contains("FOR UPDATE OF h\n"));
        assert!(
            !WAITING_SQL
                .lines()
                .any(|l| !l.starts_with("--") && l.contains("SKIP LOCKED"))
        );
        // Apart from the lock clause and the header comment, the two are one statement.
        let body = |s: &str| {
            s.lines()
                .filter(|l| !l.starts_with("--"))
                .map(|l| l.replace(" SKIP LOCKED", ""))
                .collect::<Vec<_>>()
        };
        assert_eq!(body(PRODUCTION_SQL), body(WAITING_SQL));
    }

    #[test]
    fn two_step_strategies_have_their_steps() {
        assert!(step(SQL.naive, "update").starts_with("-- $1 the ids"));
        assert!(!step(SQL.naive, "update").contains("status = 0"));
        assert!(step(SQL.conditional, "claim-one").contains("AND h.status = 0"));
        // Regression: without the attempt check, a job claimed, failed and put back
        // between the read and the write was claimed under its old attempt.
        assert!(step(SQL.conditional, "claim-one").contains("AND h.attempt_count = $3"));
        assert!(step(SQL.conditional, "select").contains("SELECT h.id, h.attempt_count"));
        assert!(step(SQL.conditional, "select").contains("LIMIT $1"));
    }

    #[test]
    fn returning_columns_match_the_positions_read() {
        for sql in [PRODUCTION_SQL, WAITING_SQL, step(SQL.naive, "update")] {
            let ret = &sql[sql.find("RETURNING").unwrap() + "RETURNING".len()..];
            let cols: Vec<&str> = ret.split(',').map(str::trim).collect();
            assert_eq!(cols[COL_ID], "h.id");
            assert_eq!(cols[COL_ATTEMPT], "h.attempt_count");
            assert!(cols[COL_QUEUE_WAIT_US].starts_with("(extract(epoch"));
            assert!(ret.trim_end().ends_with("AS queue_wait_us"));
        }
    }

    #[test]
    fn two_backends_in_one_process_have_distinct_worker_roles() {
        // Regression: the role was the pid alone, so one test's pg_terminate_backend and
        // one run's lock-wait sampling reached another's workers.
        let config: Config = "postgres://u@localhost/db".parse().unwrap();
        let a = PostgresBackend::new(config.clone(), String::new(), "a");
        let b = PostgresBackend::new(config, String::new(), "b");
        assert_ne!(a.worker_role(), b.worker_role());
        assert!(
            a.worker_role().len() < 64,
            "fits PostgreSQL's application_name"
        );
    }
}
