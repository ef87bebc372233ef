//! The person's pooler on the command line (`--pooler`, `--pool-mode`,
//! `--pooler-admin`): where it is, which connections go through it, and what claimbench
//! may read there. claimbench never changes a pooler it did not start.

use anyhow::{Context, Result, bail};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::target::DbTarget;
use claimbench::backend_kind::BackendKind;
use claimbench::pooler::PoolMode;
use claimbench::workload::Workload;
use std::net::SocketAddr;

/// The flags as given, checked before anything starts.
#[derive(Clone)]
pub(crate) struct PoolerFlags {
    /// `--pooler host:port`; `None`: `--db` is the pooler.
    at: Option<SocketAddr>,
    mode: PoolMode,
    admin: Option<DbTarget>,
}

impl PoolerFlags {
    /// The mode of a pooler claimbench starts itself (`prove` without `--db`):
    /// `--pooler` and `--pooler-admin` name a person's pooler, in front of a `--db`.
    pub(crate) fn own_mode(&self) -> Result<PoolMode> {
        if self.at.is_some() || self.admin.is_some() {
            bail!(
                "--pooler and --pooler-admin name your pooler in front of a --db server; without --db, --pool-mode alone has claimbench start one in front of its own"
            );
        }
        Ok(self.mode)
    }
}

/// A pooler of the person's, located: the workers go through `addr`.
pub(crate) struct UserPooler {
    pub addr: SocketAddr,
    pub mode: PoolMode,
    pub admin: Option<DbTarget>,
    /// The pooler's name for the database, where it differs from the server's (`--db`
    /// was the pooler and claimbench found the server behind it).
    pub database: Option<String>,
}

/// The flags' pooler: an address that resolves, a mode, an admin console that is a
/// PostgreSQL URL. `--pool-mode` without `--pooler` says `--db` is the pooler.
pub(crate) fn flags(a: crate::cli::PoolerArgs) -> Result<Option<PoolerFlags>> {
    let crate::cli::PoolerArgs {
        pooler,
        pool_mode: mode,
        pooler_admin: admin,
    } = a;
    use std::net::ToSocketAddrs;
    let Some(mode) = mode else {
        if pooler.is_some() {
            bail!("--pooler needs --pool-mode transaction or session");
        }
        return Ok(None);
    };
    let mode = PoolMode::named(&mode)
        .ok_or_else(|| anyhow::anyhow!("--pool-mode: give transaction or session"))?;
    let at = match pooler {
        None => None,
        Some(at) => {
            // A URL pasted here may hold a password: the message shows it masked.
            let shown = claimbench::redact::redact(&at);
            let addr = at
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--pooler {shown}: not an address; give host:port, e.g. 127.0.0.1:6432"
                    )
                })?;
            if addr.port() == 0 {
                bail!(
                    "--pooler {shown}: port 0 is not a pooler's port; give host:port, e.g. 127.0.0.1:6432"
                );
            }
            Some(addr)
        }
    };
    let admin = match admin {
        None => None,
        Some(url) => match DbTarget::parse(&url) {
            Ok(t @ DbTarget::Postgres(_)) => Some(t),
            _ => bail!(
                "--pooler-admin: give the admin console as a postgres:// URL, e.g. postgres://pgbouncer@127.0.0.1:6432/pgbouncer"
            ),
        },
    };
    Ok(Some(PoolerFlags { at, mode, admin }))
}

/// Where the workers meet the person's pooler. With `--pooler`, at its address and
/// `--db` is the server. Without, `--db` is the pooler: in session mode every connection
/// goes through it as it would to the server; in transaction mode claimbench's own
/// connections (control, producer, sampler) need a session a transaction pooler does
/// not keep, so they go to the server behind it, which the pooler's admin console names
/// (`SHOW DATABASES`), and `--db` becomes that server.
pub(crate) async fn locate(
    f: PoolerFlags,
    targets: &mut [(BackendKind, Option<DbTarget>)],
) -> Result<UserPooler> {
    let PoolerFlags { at, mode, admin } = f;
    let db = targets.iter_mut().find_map(|(k, t)| match t {
        Some(DbTarget::Postgres(c)) if *k == BackendKind::Postgres => Some(c),
        _ => None,
    });
    let Some(config) = db else {
        bail!(
            "--pool-mode and --pooler name your pooler in front of a --db PostgreSQL server; give --db postgres://… (the pooler itself, or the server with --pooler host:port); for the embedded server, set [topology] pooler in the workload"
        );
    };
    if let Some(addr) = at {
        return Ok(UserPooler {
            addr,
            mode,
            admin,
            database: None,
        });
    }
    let addr = tcp_address(config).context(
        "--db is your pooler: give it as host:port in the URL (a Unix socket cannot be told apart from the server)",
    )?;
    if mode == PoolMode::Session {
        return Ok(UserPooler {
            addr,
            mode,
            admin,
            database: None,
        });
    }
    let Some(DbTarget::Postgres(console)) = &admin else {
        bail!(
            "--db is a transaction-mode pooler: claimbench's control connection, producer and sampler need a session, which it does not keep; give --pooler-admin postgres://…/pgbouncer (claimbench finds the server behind --db there and connects those directly), or give the server as --db and the pooler as --pooler host:port"
        );
    };
    let alias = config.get_dbname().unwrap_or_default().to_string();
    let (host, port, database) = behind(config, console, &alias).await?;
    let mut direct = tokio_postgres::Config::new();
    direct.host(&host).port(port).dbname(&database);
    if let Some(user) = config.get_user() {
        direct.user(user);
    }
    if let Some(password) = config.get_password() {
        direct.password(password);
    }
    if let Some(t) = config.get_connect_timeout() {
        direct.connect_timeout(*t);
    }
    *config = direct;
    Ok(UserPooler {
        addr,
        mode,
        admin,
        database: (alias != database).then_some(alias),
    })
}

fn tcp_address(c: &tokio_postgres::Config) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    let tokio_postgres::config::Host::Tcp(host) = c.get_hosts().first()? else {
        return None;
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    (host.as_str(), port).to_socket_addrs().ok()?.next()
}

/// The server behind the pooler's database `alias`, from its console: host, port and
/// the server's name for the database. One connection through the pooler first: a
/// wildcard entry (`* = host=…`) is listed only once a client has used it.
async fn behind(
    pooled: &tokio_postgres::Config,
    console: &tokio_postgres::Config,
    alias: &str,
) -> Result<(String, u16, String)> {
    use claimbench::pooler::{CONSOLE_SQL, console_text};
    use claimbench::statements::step;
    use tokio_postgres::{NoTls, SimpleQueryMessage};
    let limit = std::time::Duration::from_secs(10);
    let (c, conn) = tokio::time::timeout(limit, pooled.connect(NoTls))
        .await
        .context("--db (your pooler) accepted no PostgreSQL connection within 10 s")?
        .context("--db (your pooler) did not accept a connection")?;
    let driving = tokio::spawn(conn);
    c.simple_query(&console_text(step(CONSOLE_SQL, "reachable")))
        .await
        .context("--db (your pooler) did not answer SELECT 1")?;
    drop(c);
    let _ = driving.await;
    let (admin, conn) = tokio::time::timeout(limit, console.connect(NoTls))
        .await
        .context("--pooler-admin accepted no connection within 10 s")?
        .context("--pooler-admin did not accept a connection")?;
    tokio::spawn(conn);
    let rows = admin
        .simple_query(&console_text(step(CONSOLE_SQL, "databases")))
        .await
        .context("--pooler-admin: SHOW DATABASES failed (is it PgBouncer's admin console, and the user in its admin_users or stats_users?)")?;
    let row = rows.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) if r.get("name") == Some(alias) => Some(r),
        _ => None,
    });
    let Some(row) = row else {
        bail!("--pooler-admin: the pooler lists no database `{alias}` (SHOW DATABASES)");
    };
    let host = row.get("host").unwrap_or_default().to_string();
    if host.is_empty() || host.starts_with('/') {
        bail!(
            "the pooler reaches database `{alias}` over a Unix socket, which claimbench cannot connect to from here; give the server as --db and the pooler as --pooler host:port"
        );
    }
    let port = row.get("port").and_then(|p| p.parse().ok()).unwrap_or(5432);
    let database = row
        .get("database")
        .filter(|d| !d.is_empty())
        .unwrap_or(alias)
        .to_string();
    Ok((host, port, database))
}

/// The workers through the person's pooler or the one claimbench started, whose admin
/// console it always reads; `backend` unchanged without either.
pub(crate) fn through(
    backend: AnyBackend,
    user: Option<&UserPooler>,
    own: Option<&claimbench::embedded::pgbouncer::EmbeddedPgBouncer>,
) -> Result<AnyBackend> {
    use claimbench::backend::postgres::PoolerRoute;
    let (route, admin) = match (user, own) {
        (Some(p), _) => (
            PoolerRoute {
                addr: p.addr,
                mode: p.mode,
                own: false,
                database: p.database.clone(),
            },
            p.admin.clone(),
        ),
        (None, Some(p)) => (
            PoolerRoute {
                addr: p.address(),
                mode: p.mode(),
                own: true,
                database: None,
            },
            Some(DbTarget::parse(&p.admin_url())?),
        ),
        (None, None) => return Ok(backend),
    };
    let backend = backend.with_pooler(route);
    Ok(match admin {
        Some(a) => backend.with_pooler_admin(&a),
        None => backend,
    })
}

/// A pooler claimbench starts sits in front of its own server; a person's in front of a
/// `--db` PostgreSQL server: each alone.
pub(crate) fn refuse_mix(
    workload: &Workload,
    targets: &[(BackendKind, Option<DbTarget>)],
) -> Result<()> {
    let db_postgres = targets
        .iter()
        .any(|(k, t)| *k == BackendKind::Postgres && t.is_some());
    if workload.topology.pooler.is_some() && db_postgres {
        bail!(
            "{}: topology.pooler puts a PgBouncer claimbench starts in front of the embedded PostgreSQL; with --db, give your pooler with --pool-mode MODE (and --pooler host:port when --db is the server) instead",
            workload.source_path.display()
        );
    }
    Ok(())
}

/// `faults.hold_pool_s` holds server connections of the workers' pooler: refused when
/// the run has none (neither claimbench's nor the person's).
pub(crate) fn refuse_hold_without_one(workload: &Workload, theirs: bool) -> Result<()> {
    if workload.faults.hold_pool.is_some() && workload.topology.pooler.is_none() && !theirs {
        bail!(
            "{}: faults.hold_pool_s holds server connections of the workers' pooler, and this run has none; set [topology] pooler, or give yours with --pool-mode (and --pooler)",
            workload.source_path.display()
        );
    }
    Ok(())
}
