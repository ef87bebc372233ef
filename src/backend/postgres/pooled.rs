//! Workers through a connection pooler: the route, which connections are pooled in
//! transaction mode (their statements then go unnamed, statement.rs), the schema check
//! a transaction pooler needs, and the pooler's own counters read on its admin console.

use super::*;

/// How workers reach the server through a pooler.
#[derive(Debug, Clone, Copy)]
pub struct PoolerRoute {
    /// The pooler (claimbench's, or the person's `--pooler`) the workers' connections
    /// go to; every other connection goes straight to the server.
    pub addr: std::net::SocketAddr,
    pub mode: crate::pooler::PoolMode,
}

impl PostgresBackend {
    /// Reads the pooler's `SHOW STATS` on `admin` (its admin console) around each
    /// trial: read-only, nothing in the pooler changes.
    pub fn with_pooler_admin(mut self, admin: Config) -> PostgresBackend {
        self.pooler_admin = Some(admin);
        self
    }

    /// The pooler's transactions and client wait (µs) over every database but its
    /// own, from `SHOW STATS` on its admin console (simple protocol: the console has no
    /// other).
    pub(super) async fn pooler_stats(&self) -> Result<Option<(i64, i64)>, BackendError> {
        let Some(admin) = &self.pooler_admin else {
            return Ok(None);
        };
        let e = |e| query_error("read the pooler's SHOW STATS", e);
        let (client, connection) = admin.connect(NoTls).await.map_err(e)?;
        tokio::spawn(connection);
        let rows = client.simple_query("SHOW STATS").await.map_err(e)?;
        let (mut xacts, mut wait) = (0, 0);
        for m in rows {
            let tokio_postgres::SimpleQueryMessage::Row(r) = m else {
                continue;
            };
            if r.get("database") == Some("pgbouncer") {
                continue;
            }
            let n = |name| r.get(name).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
            xacts += n("total_xact_count");
            wait += n("total_wait_time");
        }
        Ok(Some((xacts, wait)))
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
