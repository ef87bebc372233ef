//! Workers through a connection pooler: the route, which connections are pooled in
//! transaction mode (their statements then go unnamed, statement.rs), the schema check
//! a transaction pooler needs, and the pooler's own counters read on its admin console.

use super::*;
use tokio_postgres::NoTls;

/// How workers reach the server through a pooler.
#[derive(Debug, Clone)]
pub struct PoolerRoute {
    /// The pooler (claimbench's, or the person's `--pooler`) the workers' connections
    /// go to; every other connection goes straight to the server.
    pub addr: std::net::SocketAddr,
    pub mode: crate::pooler::PoolMode,
    /// claimbench started it, so a block may resize its pool; a person's pooler is
    /// only read.
    pub own: bool,
    /// The pooler's name for the database where it differs from the server's: the
    /// workers connect to it under this name.
    pub database: Option<String>,
}

impl PostgresBackend {
    /// Reads the pooler's `SHOW STATS` on `admin` (its admin console) around each
    /// trial: read-only, nothing in the pooler changes.
    pub fn with_pooler_admin(mut self, admin: Config) -> PostgresBackend {
        self.pooler_admin = Some(admin);
        self
    }

    /// A connection to the pooler's admin console, when one was given. Bounded: a
    /// port that accepts and never answers would otherwise hold the run.
    async fn admin_console(&self, what: &'static str) -> Result<Option<Client>, BackendError> {
        let Some(admin) = &self.pooler_admin else {
            return Ok(None);
        };
        let limit = Duration::from_secs(10);
        let (client, connection) = tokio::time::timeout(limit, admin.connect(NoTls))
            .await
            .map_err(|_| {
                BackendError::other(
                    what,
                    "the pooler's admin console accepted no connection within 10 s; check --pooler-admin",
                )
            })?
            .map_err(|e| query_error(what, e))?;
        tokio::spawn(connection);
        Ok(Some(client))
    }

    /// Whether a row of the console's `SHOW STATS` or `SHOW POOLS` is the workers':
    /// on claimbench's own pooler every database but the console's (a trial may run in
    /// a fresh copy of the database); on a person's, only the database the workers use,
    /// and in `SHOW POOLS` only their user, so another application's clients of the
    /// same pooler are not counted (theirs on the same database and user cannot be told
    /// apart).
    fn workers_row(&self, r: &tokio_postgres::SimpleQueryRow) -> bool {
        let db = r.get("database");
        if db == Some("pgbouncer") {
            return false;
        }
        let Some(route) = self.pooler.as_ref().filter(|p| !p.own) else {
            return true;
        };
        let ours = route
            .database
            .as_deref()
            .or(self.config.get_dbname())
            .unwrap_or_default();
        let user = match self.workload_role {
            true => Some(WORKLOAD_ROLE),
            false => self.config.get_user(),
        };
        db == Some(ours)
            && r.try_get("user")
                .ok()
                .flatten()
                .is_none_or(|u| Some(u) == user)
    }

    /// The pooler's transactions and client wait (µs) for the workers' database, from
    /// `SHOW STATS` on its admin console.
    pub(super) async fn pooler_stats(&self) -> Result<Option<(i64, i64)>, BackendError> {
        let what = "read the pooler's SHOW STATS";
        let Some(client) = self.admin_console(what).await? else {
            return Ok(None);
        };
        let (mut xacts, mut wait) = (0, 0);
        for r in console_rows(&client, step(POOLER_SQL, "stats"), what).await? {
            if !self.workers_row(&r) {
                continue;
            }
            let n = |name| r.get(name).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
            xacts += n("total_xact_count");
            wait += n("total_wait_time");
        }
        Ok(Some((xacts, wait)))
    }

    /// See [`crate::backend::Backend::pool_now`]: `SHOW POOLS` on a console
    /// connection kept open for the trial's readings.
    pub(super) async fn pool_in_use(&self) -> Result<Option<(i64, i64)>, BackendError> {
        let what = "read the pooler's SHOW POOLS";
        let mut console = self.pooler_console.lock().await;
        if console.as_ref().is_none_or(|c| c.is_closed()) {
            match self.admin_console(what).await? {
                Some(c) => *console = Some(c),
                None => return Ok(None),
            }
        }
        let client = console.as_ref().expect("opened above");
        let (mut active, mut waiting) = (0, 0);
        for r in console_rows(client, step(POOLER_SQL, "pools"), what).await? {
            if !self.workers_row(&r) {
                continue;
            }
            let n = |name| r.get(name).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
            active += n("sv_active");
            waiting += n("cl_waiting");
        }
        Ok(Some((active, waiting)))
    }

    /// See [`crate::backend::Backend::size_pool`]. claimbench's own pooler takes the
    /// new size at once (`SET default_pool_size`) and closes its server connections as
    /// they are released (`RECONNECT`), so the block starts on a pool of the size it
    /// names; a person's pooler is read, and a mode other than the one given refused.
    pub(super) async fn pool_size(&self, n: Option<u32>) -> Result<Option<u32>, BackendError> {
        let Some(route) = &self.pooler else {
            return Ok(None);
        };
        let what = "size the pooler's pool";
        let Some(client) = self.admin_console(what).await? else {
            return Ok(None);
        };
        if let Some(n) = n {
            if !route.own {
                return Err(BackendError::other(
                    what,
                    "claimbench never changes a pooler it did not start; drop pool_sizes",
                ));
            }
            let resize = fill(step(POOLER_SQL, "resize"), &[("size", &n.to_string())]);
            console_rows(&client, &resize, what).await?;
            console_rows(&client, step(POOLER_SQL, "reconnect"), what).await?;
            return Ok(Some(n));
        }
        let what = "read the pooler's pool size and mode";
        let db = match &route.database {
            Some(alias) => alias.clone(),
            None => self.config.get_dbname().unwrap_or_default().to_string(),
        };
        let databases = console_rows(&client, step(POOLER_SQL, "databases"), what).await?;
        let config = console_rows(&client, step(POOLER_SQL, "config"), what).await?;
        let setting = |key: &str| {
            config
                .iter()
                .find(|r| r.get("key") == Some(key))
                .and_then(|r| r.get("value").map(str::to_string))
        };
        // The database's own entry where it has one (a wildcard's appears once a
        // client used it), else the pooler's defaults.
        let row = databases
            .iter()
            .find(|r| r.get("name") == Some(db.as_str()));
        let field = |name: &str| row.and_then(|r| r.get(name)).filter(|v| !v.is_empty());
        let mode = field("pool_mode")
            .map(str::to_string)
            .or_else(|| setting("pool_mode"));
        if let Some(mode) = mode.filter(|m| m.as_str() != route.mode.as_str()) {
            return Err(BackendError::other(
                what,
                format!(
                    "--pool-mode {} but the pooler's admin console says database `{db}` pools in {mode} mode; give --pool-mode {mode}",
                    route.mode
                ),
            ));
        }
        let size = field("pool_size")
            .map(str::to_string)
            .or_else(|| setting("default_pool_size"));
        Ok(size.and_then(|v| v.parse().ok()))
    }

    /// Sends the workers through a pooler (see [`PoolerRoute`]). In transaction mode
    /// their statements are sent unnamed and their schema comes from the role's
    /// default `search_path`, which a session's `SET` cannot give them there.
    pub fn with_pooler(mut self, route: PoolerRoute) -> PostgresBackend {
        self.pooler = Some(route);
        self
    }

    /// Whether a connection of `application_name` goes through a transaction pooler:
    /// the workers' only.
    pub(super) fn transaction_pooled(&self, application_name: &str) -> bool {
        self.pooler
            .as_ref()
            .is_some_and(|p| p.mode == crate::pooler::PoolMode::Transaction)
            && application_name == self.id.worker_role
    }

    /// Through a transaction pooler, refuses a connection whose role does not find the
    /// run's schema by default, saying what to change (claimbench changes no one's
    /// roles or pooler; on the server it started it sets its own role's default).
    pub(super) async fn check_pooled_schema(&self, client: &Client) -> Result<(), BackendError> {
        let rows = client
            .simple_query(step(SQL.session, "current-schema"))
            .await
            .map_err(|e| query_error("read the pooled connection's schema", e))?;
        let current = rows.iter().find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        });
        if current.as_deref() == Some(self.id.schema.as_str()) {
            return Ok(());
        }
        Err(BackendError::other(
            "connect through the pooler",
            format!(
                "through a transaction-mode pooler each statement may run on another server connection, so claimbench cannot set search_path per session, and this role's default schema is {} rather than `{}`; give the role that default (ALTER ROLE <user> SET search_path TO {}) or set it in the pooler's connect_query, have the pooler open new server connections (a role's default applies to new ones; PgBouncer: RECONNECT on its admin console), then run again",
                current.map_or("none".to_string(), |s| format!("`{s}`")),
                self.id.schema,
                quote_ident(&self.id.schema),
            ),
        ))
    }
}

/// Every row a command on the pooler's admin console returns. The console speaks the
/// simple protocol only and parses no SQL comments: the step's comment lines stay here.
async fn console_rows(
    client: &Client,
    step_text: &str,
    what: &'static str,
) -> Result<Vec<tokio_postgres::SimpleQueryRow>, BackendError> {
    let rows = client
        .simple_query(&crate::pooler::console_text(step_text))
        .await
        .map_err(|e| query_error(what, e))?;
    Ok(rows
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(r),
            _ => None,
        })
        .collect())
}
