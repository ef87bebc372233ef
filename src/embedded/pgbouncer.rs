//! A throw-away PgBouncer in front of the embedded PostgreSQL (`[topology] pooler`):
//! its own loopback port and temporary directory, a configuration claimbench writes
//! (no shell, no value of the workload's but the mode and the pool size, both checked),
//! run as the server's unprivileged user when claimbench runs as root (PgBouncer
//! refuses root), and stopped and removed when dropped — on exit, on error and on
//! Ctrl-C, as the server is.

use crate::pooler::{PoolMode, Pooler};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum PgBouncerError {
    #[error(
        "cannot find pgbouncer on PATH or in /usr/sbin; install it (Debian/Ubuntu: apt-get install pgbouncer) or drop `pooler` from [topology]"
    )]
    NotInstalled,
    #[error("{step} failed: {detail}")]
    Step { step: &'static str, detail: String },
}

fn step(step: &'static str, e: impl std::fmt::Display) -> PgBouncerError {
    PgBouncerError::Step {
        step,
        detail: e.to_string(),
    }
}

fn find_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("pgbouncer"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let p = PathBuf::from("/usr/sbin/pgbouncer");
        p.is_file().then_some(p)
    })
}

pub struct EmbeddedPgBouncer {
    child: Option<Child>,
    dir: Option<tempfile::TempDir>,
    port: u16,
    pooler: Pooler,
}

/// Users the pooler lets in, all trusted as the server behind it trusts them on
/// loopback: the server's superuser (the admin console's user) and the workload role.
const USERS: [&str; 2] = ["postgres", crate::names::WORKLOAD_ROLE];

/// The configuration: every database of the server on `server_port` through one pool per
/// database and user, `pool` sized as the workload asks, and the admin console open to
/// the superuser (claimbench reads `SHOW STATS` and `SHOW POOLS` there).
fn config(dir: &Path, port: u16, server_port: u16, pooler: Pooler) -> String {
    let d = dir.display();
    let users = USERS.join(", ");
    format!(
        "[databases]\n\
         * = host=127.0.0.1 port={server_port}\n\
         \n\
         [pgbouncer]\n\
         listen_addr = 127.0.0.1\n\
         listen_port = {port}\n\
         unix_socket_dir =\n\
         auth_type = trust\n\
         auth_file = {d}/userlist.txt\n\
         admin_users = postgres\n\
         stats_users = {users}\n\
         pool_mode = {mode}\n\
         default_pool_size = {size}\n\
         min_pool_size = 0\n\
         reserve_pool_size = 0\n\
         max_client_conn = 2000\n\
         ignore_startup_parameters = extra_float_digits\n\
         logfile = {d}/pgbouncer.log\n\
         pidfile = {d}/pgbouncer.pid\n\
         log_connections = 0\n\
         log_disconnections = 0\n",
        mode = pooler.mode,
        size = pooler.pool_size,
    )
}

impl EmbeddedPgBouncer {
    /// Starts PgBouncer in front of the server on `server_port`, as `owner` (uid, gid)
    /// when given, and returns once it accepts connections.
    pub fn start(
        server_port: u16,
        owner: Option<(u32, u32)>,
        pooler: Pooler,
    ) -> Result<EmbeddedPgBouncer, PgBouncerError> {
        let binary = find_binary().ok_or(PgBouncerError::NotInstalled)?;
        let dir = tempfile::Builder::new()
            .prefix("claimbench-pgbouncer-")
            .tempdir()
            .map_err(|e| step("create the pooler's directory", e))?;
        let port = super::free_port().map_err(|e| step("find a free port", e))?;
        let users: String = USERS.iter().map(|u| format!("\"{u}\" \"\"\n")).collect();
        let write = |name: &str, text: &str| {
            std::fs::write(dir.path().join(name), text).map_err(|e| step("write its files", e))
        };
        write("userlist.txt", &users)?;
        write(
            "pgbouncer.ini",
            &config(dir.path(), port, server_port, pooler),
        )?;
        if let Some((uid, gid)) = owner {
            for f in ["", "userlist.txt", "pgbouncer.ini"] {
                std::os::unix::fs::chown(dir.path().join(f), Some(uid), Some(gid))
                    .map_err(|e| step("hand its files to the server's user", e))?;
            }
        }
        let mut cmd = Command::new(binary);
        cmd.arg(dir.path().join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir(dir.path())
            .process_group(0);
        if let Some((uid, gid)) = owner {
            cmd.uid(uid).gid(gid);
        }
        let child = cmd.spawn().map_err(|e| step("start pgbouncer", e))?;
        let mut me = EmbeddedPgBouncer {
            child: Some(child),
            dir: Some(dir),
            port,
            pooler,
        };
        me.wait_until_listening()?;
        Ok(me)
    }

    fn wait_until_listening(&mut self) -> Result<(), PgBouncerError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        loop {
            if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                return Err(PgBouncerError::Step {
                    step: "start pgbouncer",
                    detail: format!(
                        "it did not listen on port {} ({}); its log: {}",
                        self.port,
                        exited.map_or("timed out after 10 s".into(), |s| s.to_string()),
                        self.log_tail()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_tail(&self) -> String {
        let Some(dir) = &self.dir else {
            return String::new();
        };
        let log = std::fs::read_to_string(dir.path().join("pgbouncer.log")).unwrap_or_default();
        super::last_lines(&log, 3)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn address(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn mode(&self) -> PoolMode {
        self.pooler.mode
    }

    pub fn pooler(&self) -> Pooler {
        self.pooler
    }

    pub fn path(&self) -> Option<&Path> {
        self.dir.as_ref().map(|d| d.path())
    }

    /// The admin console's URL (database `pgbouncer`, the server's superuser).
    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/pgbouncer", self.port)
    }
}

impl Drop for EmbeddedPgBouncer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes them
            // at once, which is what a run that is over wants.
            super::terminate(&mut child, Duration::from_secs(5));
        }
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_holds_the_mode_the_pool_and_nothing_else_of_the_workload() {
        let pooler = Pooler {
            mode: PoolMode::Transaction,
            pool_size: 3,
        };
        let c = config(Path::new("/tmp/x"), 6000, 5000, pooler);
        assert!(c.contains("* = host=127.0.0.1 port=5000\n"), "{c}");
        assert!(c.contains("listen_port = 6000\n"), "{c}");
        assert!(c.contains("pool_mode = transaction\n"), "{c}");
        assert!(c.contains("default_pool_size = 3\n"), "{c}");
        assert!(c.contains("listen_addr = 127.0.0.1\n"), "{c}");
    }
}
