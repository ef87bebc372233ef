//! claimbench's own logins to a PostgreSQL server: the server connection (the target's
//! login, on the catalogs only), the control connection (the schema owner's), the
//! workload's role they make, and the task that drives each connection. The privilege
//! boundary between the first two is `Login`'s, in `mod.rs`.

use super::{
    Login, PRIVILEGE_SQL, PostgresBackend, SQL, WORKLOAD_ROLE, query_error, quote_ident, root_cause,
};
use crate::backend::BackendError;
use crate::backend::sql::{fill, step};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_postgres::{AsyncMessage, Client, NoTls};

impl PostgresBackend {
    /// A connection of the target's login, its names resolving in the catalogs only
    /// ([`Login::Server`]).
    pub(super) async fn open_server(&self, application_name: &str) -> Result<Client, BackendError> {
        Ok(self.open_as(application_name, None, Login::Server).await?.0)
    }

    /// A connection as the role workload SQL runs as: [`WORKLOAD_ROLE`] on a server
    /// claimbench started, else the user of `--db`.
    pub(super) async fn open_for_workload(
        &self,
        application_name: &str,
    ) -> Result<Client, BackendError> {
        self.make_workload_role().await?;
        Ok(self.open_as(application_name, None, Login::Schema).await?.0)
    }

    pub(super) async fn open_listening(
        &self,
        application_name: &str,
        via: Option<std::net::SocketAddr>,
    ) -> Result<(Client, Arc<Notify>), BackendError> {
        self.make_workload_role().await?;
        self.open_as(application_name, via, Login::Schema).await
    }

    /// A connection, and what its notifications wake: the connection task drives it and
    /// turns each `NOTIFY` it receives into one wake-up (kept if nobody waits yet).
    /// Through `via` (a delaying proxy in front of the server) when given; as `login`
    /// says.
    pub(super) async fn open_as(
        &self,
        application_name: &str,
        via: Option<std::net::SocketAddr>,
        login: Login,
    ) -> Result<(Client, Arc<Notify>), BackendError> {
        let mut config = self.config.clone();
        config.application_name(application_name);
        if login == Login::Schema && self.workload_role {
            config.user(WORKLOAD_ROLE);
        }
        let db = self
            .database
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(db) = db {
            config.dbname(&db);
        }
        // Through the pooler, under the pooler's name for the database.
        if let Some(alias) = self.pooler.as_ref().and_then(|p| p.database.as_ref())
            && via.is_some()
            && application_name == self.id.worker_role
        {
            config.dbname(alias);
        }
        let limit = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(Duration::from_secs(5));
        config.connect_timeout(limit);
        let refused = |e: &tokio_postgres::Error| BackendError::Connect {
            target: self.id.display.clone(),
            reason: root_cause(e),
            hint: if e.as_db_error().is_some() {
                "the server answered but refused: check the user, password and database name in --db / DATABASE_URL"
            } else {
                "is the server running and accepting TCP connections? check --db / DATABASE_URL, or leave both unset for the embedded PostgreSQL"
            },
        };
        // connect_timeout bounds the TCP connect only: a port that accepts and never
        // answers (a proxy without its server) would hold the startup forever.
        let connecting = async {
            match via {
                None => config
                    .connect(NoTls)
                    .await
                    .map(|(client, c)| (client, drive(c)))
                    .map_err(|e| refused(&e)),
                Some(addr) => {
                    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| {
                        BackendError::Connect {
                            target: format!("{} through the delaying proxy at {addr}", self.id.display),
                            reason: e.to_string(),
                            hint: "the proxy claimbench started in front of the server did not accept: a bug, please report it",
                        }
                    })?;
                    let _ = tcp.set_nodelay(true);
                    config
                        .connect_raw(tcp, NoTls)
                        .await
                        .map(|(client, c)| (client, drive(c)))
                        .map_err(|e| refused(&e))
                }
            }
        };
        let (client, wakeups) = match tokio::time::timeout(limit * 2, connecting).await {
            Ok(r) => r?,
            Err(_) => {
                // Through a pooler or a proxy, the port that did not answer is theirs.
                let target = match via {
                    Some(addr) => format!("{} through {addr}", self.id.display),
                    None => self.id.display.clone(),
                };
                return Err(BackendError::Connect {
                    target,
                    reason: format!(
                        "the port accepted the connection but no PostgreSQL answered within {} s",
                        (limit * 2).as_secs()
                    ),
                    hint: "is that port a PostgreSQL server (not a proxy or another service)? check --db / DATABASE_URL",
                });
            }
        };
        if login == Login::Server {
            client
                .batch_execute(step(PRIVILEGE_SQL, "server-search-path"))
                .await
                .map_err(|e| query_error("set the server connection's search_path", e))?;
        } else if self.transaction_pooled(application_name) {
            // A SET would stay on whichever server connection ran it: the schema has to
            // be the role's default there.
            self.check_pooled_schema(&client).await?;
        } else {
            client
                .batch_execute(&fill(
                    step(SQL.session, "search-path"),
                    &[("schema", &quote_ident(&self.id.schema))],
                ))
                .await
                .map_err(|e| query_error("set search_path", e))?;
        }
        Ok((client, wakeups))
    }

    /// The shared control connection (the reset's tables and seed, the reconciliation,
    /// shard moves, model states: everything in the run's schema), opened on first use
    /// and reopened if the server dropped it.
    pub(super) async fn control(&self) -> Result<ControlGuard<'_>, BackendError> {
        let mut guard = self.control.lock().await;
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            *guard = Some(self.open_for_workload("claimbench-control").await?);
        }
        Ok(ControlGuard(guard))
    }

    /// The shared server connection (the role, the schema's creation, settings,
    /// catalogs and statistics), opened on first use and reopened if dropped.
    pub(super) async fn server(&self) -> Result<ControlGuard<'_>, BackendError> {
        let mut guard = self.server.lock().await;
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            *guard = Some(self.open_server("claimbench-server").await?);
        }
        Ok(ControlGuard(guard))
    }

    /// Closes both of claimbench's connections (before a database they sit in is
    /// dropped or copied); the next use reopens them where [`Self::database`] says.
    pub(super) async fn close_connections(&self) {
        *self.control.lock().await = None;
        *self.server.lock().await = None;
    }

    /// Creates [`WORKLOAD_ROLE`] where this backend uses one and the server lacks it,
    /// once per backend, on the server connection; through a pooler, also gives it the
    /// run's schema as its default.
    pub(super) async fn make_workload_role(&self) -> Result<(), BackendError> {
        use std::sync::atomic::Ordering;
        if !self.workload_role || self.role_made.load(Ordering::Acquire) {
            return Ok(());
        }
        let c = self.open_server("claimbench-server").await?;
        c.batch_execute(step(PRIVILEGE_SQL, "ensure-role"))
            .await
            .map_err(|e| query_error("create the workload's role", e))?;
        if self.pooler.is_some() {
            let schema = quote_ident(&self.id.schema);
            c.batch_execute(&fill(
                step(PRIVILEGE_SQL, "pooled-search-path"),
                &[("schema", &schema)],
            ))
            .await
            .map_err(|e| query_error("give the workload's role its schema", e))?;
        }
        self.role_made.store(true, Ordering::Release);
        Ok(())
    }
}

pub(super) struct ControlGuard<'a>(tokio::sync::MutexGuard<'a, Option<Client>>);

impl std::ops::Deref for ControlGuard<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.0
            .as_ref()
            .expect("control() and server() open the client before handing out the guard")
    }
}

/// Drives a connection on its own task, which ends when the client is dropped or the
/// server goes away (the next query on the client reports the error); each `NOTIFY`
/// it receives is one wake-up of the returned [`Notify`].
pub(super) fn drive<S, T>(connection: tokio_postgres::Connection<S, T>) -> Arc<Notify>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let wakeups = Arc::new(Notify::new());
    let wake = wakeups.clone();
    tokio::spawn(async move {
        let mut connection = connection;
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(_))) => wake.notify_one(),
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            }
        }
    });
    wakeups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port that accepts and never answers, reached through a pooler or proxy: the
    /// timeout names that address beside the server's URL (it named the URL alone, and
    /// sent the reader to a server that was fine).
    #[tokio::test]
    async fn a_silent_port_through_a_pooler_is_named_in_the_timeout() {
        // Accepted by the kernel's backlog, never answered.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = silent.local_addr().unwrap();
        let config: tokio_postgres::Config = "postgres://u@127.0.0.1:9/db?connect_timeout=1"
            .parse()
            .unwrap();
        let b = PostgresBackend::new(config, "postgres://u@127.0.0.1:9/db".into(), "s");
        let Err(e) = b.open_as("t", Some(addr), Login::Schema).await else {
            panic!("nothing answers there");
        };
        let e = e.to_string();
        assert!(
            e.contains(&format!("postgres://u@127.0.0.1:9/db through {addr}"))
                && e.contains("no PostgreSQL answered within 2 s"),
            "{e}"
        );
    }
}
