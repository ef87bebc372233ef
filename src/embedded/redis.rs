//! The embedded Redis: a throw-away `redis-server` on a free loopback port with its
//! files in a temporary directory, run as the `redis` user when claimbench runs as
//! root, in its own process group (a terminal's Ctrl-C reaches only claimbench), and
//! stopped and removed when dropped — on exit, on error and after Ctrl-C, as the other
//! embedded servers are. Every setting is an argument claimbench writes; none comes
//! from a workload, and no shell is involved.
//!
//! Durability: every write goes to the append-only file, which Redis never fsyncs
//! (`appendfsync no`, the kernel flushes it), as the embedded PostgreSQL runs with
//! `fsync` off and the embedded MariaDB flushes its log once a second: claims measure
//! the server's work rather than this machine's disk. `run.json` records the settings
//! beside the server's version; production queues on Redis usually run `everysec`.

use super::{EmbeddedError, step};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

pub struct EmbeddedRedis {
    /// Behind a lock so that a restart (`faults.restart_db_at_s`) can replace it while
    /// the run holds the server.
    child: Mutex<Option<Child>>,
    dir: Option<tempfile::TempDir>,
    port: u16,
    binary: PathBuf,
    owner: Option<(u32, u32)>,
    /// Keeps nothing on disk (a lock service's Redis): a restart comes back empty.
    volatile: bool,
}

fn find_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("redis-server"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let p = PathBuf::from("/usr/bin/redis-server");
        p.is_file().then_some(p)
    })
}

/// The `redis` user's ids when claimbench runs as root and the user exists.
fn server_user() -> Option<(u32, u32)> {
    if !nix::unistd::geteuid().is_root() {
        return None;
    }
    let u = nix::unistd::User::from_name("redis").ok().flatten()?;
    Some((u.uid.as_raw(), u.gid.as_raw()))
}

impl EmbeddedRedis {
    /// Starts the server and returns once it answers.
    pub fn start() -> Result<EmbeddedRedis, EmbeddedError> {
        Self::start_keeping(true)
    }

    /// A server that keeps nothing on disk (no append-only file, no snapshots), as a
    /// lock service often runs: a restart forgets every key
    /// (`faults.restart_lock_service_at_s`).
    pub fn start_volatile() -> Result<EmbeddedRedis, EmbeddedError> {
        Self::start_keeping(false)
    }

    fn start_keeping(appendonly: bool) -> Result<EmbeddedRedis, EmbeddedError> {
        let binary = find_binary().ok_or_else(|| EmbeddedError::Step {
            step: "find redis-server",
            detail: "redis-server is not installed; install it (Debian/Ubuntu: apt-get install redis-server) or pass --db redis://host:6379 for an existing server".into(),
        })?;
        let dir = tempfile::Builder::new()
            .prefix("claimbench-redis-")
            .tempdir()
            .map_err(|e| step("create the server's directory", e))?;
        let owner = server_user();
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| step("hand its directory to the redis user", e))?;
        }
        let port = super::free_port().map_err(|e| step("find a free port", e))?;
        let me = EmbeddedRedis {
            child: Mutex::new(None),
            dir: Some(dir),
            port,
            binary,
            owner,
            volatile: !appendonly,
        };
        me.spawn("start redis-server")?;
        Ok(me)
    }

    /// Starts the server on this port and directory and waits until it answers (after
    /// loading its append-only file, on a restart).
    fn spawn(&self, what: &'static str) -> Result<(), EmbeddedError> {
        let dir = self.path().ok_or_else(|| EmbeddedError::Step {
            step: what,
            detail: "its directory is gone".into(),
        })?;
        let mut cmd = Command::new(&self.binary);
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--protected-mode", "yes", "--daemonize", "no"])
            .arg("--dir")
            .arg(dir)
            .args(["--logfile", "redis.log", "--save", ""])
            .args(match self.volatile {
                false => ["--appendonly", "yes", "--appendfsync", "no"],
                true => ["--appendonly", "no", "--appendfsync", "no"],
            })
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir(dir)
            .process_group(0);
        if let Some((uid, gid)) = self.owner {
            cmd.uid(uid).gid(gid);
        }
        let child = cmd.spawn().map_err(|e| step(what, e))?;
        *self.child.lock().unwrap_or_else(|p| p.into_inner()) = Some(child);
        self.wait_ready(what)
    }

    /// Kills the server as a crash would (SIGKILL: nothing flushed, every connection
    /// cut) and starts it again on the same port and files; returns once it answers,
    /// with what its append-only file kept (nothing, when volatile). The
    /// `faults.restart_db_at_s` and `faults.restart_lock_service_at_s` faults.
    pub fn restart(&self) -> Result<(), EmbeddedError> {
        if let Some(mut child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.spawn("restart redis-server")
    }

    /// Until a PING over the port gets its PONG (the server listens before it has
    /// loaded its files, and answers LOADING until then).
    fn wait_ready(&self, what: &'static str) -> Result<(), EmbeddedError> {
        use std::io::{Read, Write};
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        let log = self.path().map(|p| p.join("redis.log"));
        super::process::wait_until_ready(&self.child, (what, self.port), log.as_deref(), || {
            let pong = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200))
                .and_then(|mut s| {
                    s.set_read_timeout(Some(Duration::from_millis(500)))?;
                    s.write_all(b"PING\r\n")?;
                    let mut buf = [0u8; 7];
                    s.read_exact(&mut buf)?;
                    Ok(&buf == b"+PONG\r\n")
                });
            pong.unwrap_or(false)
        })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    pub fn path(&self) -> Option<&Path> {
        self.dir.as_ref().map(|d| d.path())
    }
}

impl Drop for EmbeddedRedis {
    fn drop(&mut self) {
        super::process::stop_and_remove(&mut self.child, &mut self.dir);
    }
}
