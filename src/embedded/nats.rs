//! The embedded NATS server: a throw-away `nats-server -js` on a free loopback port with
//! its JetStream store in a temporary directory, in its own process group (a terminal's
//! Ctrl-C reaches only claimbench), stopped and removed when dropped — on exit, on error
//! and after Ctrl-C, as the other embedded servers are. Every setting is an argument
//! claimbench writes; none comes from a workload, and no shell is involved.
//!
//! Durability: the streams are file-backed; the server writes each message to its files
//! before it acknowledges the publish and leaves syncing them to disk to its own
//! interval (two minutes by default), as the embedded PostgreSQL runs with `fsync` off:
//! claims measure the server's work rather than this machine's disk. A restart
//! (`faults.restart_db_at_s`) keeps what the files hold.

use super::{EmbeddedError, step};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

pub struct EmbeddedNats {
    /// Behind a lock so that a restart can replace it while the run holds the server.
    child: Mutex<Option<Child>>,
    dir: Option<tempfile::TempDir>,
    port: u16,
    binary: PathBuf,
}

const LOG: &str = "nats.log";

fn find_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("nats-server"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
    })
}

impl EmbeddedNats {
    /// Starts the server and returns once JetStream is ready.
    pub fn start() -> Result<EmbeddedNats, EmbeddedError> {
        let binary = find_binary().ok_or_else(|| EmbeddedError::Step {
            step: "find nats-server",
            detail: "nats-server is not installed; install it (Debian/Ubuntu: apt-get install nats-server) or pass --db nats://host:4222 for an existing server with JetStream".into(),
        })?;
        let dir = tempfile::Builder::new()
            .prefix("claimbench-nats-")
            .tempdir()
            .map_err(|e| step("create the server's directory", e))?;
        let port = super::free_port().map_err(|e| step("find a free port", e))?;
        let me = EmbeddedNats {
            child: Mutex::new(None),
            dir: Some(dir),
            port,
            binary,
        };
        me.spawn("start nats-server")?;
        Ok(me)
    }

    fn spawn(&self, what: &'static str) -> Result<(), EmbeddedError> {
        let dir = self.path().ok_or_else(|| EmbeddedError::Step {
            step: what,
            detail: "its directory is gone".into(),
        })?;
        // A restart appends to the same log: only what it writes counts as ready.
        let log_from = std::fs::metadata(dir.join(LOG)).map_or(0, |m| m.len());
        let mut cmd = Command::new(&self.binary);
        cmd.args(["--addr", "127.0.0.1", "--port", &self.port.to_string()])
            .arg("--jetstream")
            .arg("--store_dir")
            .arg(dir.join("jetstream"))
            .arg("--log")
            .arg(dir.join(LOG))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir(dir)
            .process_group(0);
        let child = cmd.spawn().map_err(|e| step(what, e))?;
        *self.child.lock().unwrap_or_else(|p| p.into_inner()) = Some(child);
        self.wait_ready(what, log_from)
    }

    /// Kills the server as a crash would (SIGKILL) and starts it again on the same port
    /// and store; returns once JetStream is ready again. `faults.restart_db_at_s`.
    pub fn restart(&self) -> Result<(), EmbeddedError> {
        if let Some(mut child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.spawn("restart nats-server")
    }

    /// Until the log written since `from` says the server is ready (after JetStream
    /// has loaded its streams).
    fn wait_ready(&self, what: &'static str, from: u64) -> Result<(), EmbeddedError> {
        let log = self.path().map(|p| p.join(LOG));
        super::process::wait_until_ready(&self.child, (what, self.port), log.as_deref(), || {
            let text = self.log();
            text.get(from as usize..)
                .is_some_and(|l| l.contains("Server is ready"))
        })
    }

    fn log(&self) -> String {
        self.path()
            .and_then(|p| std::fs::read_to_string(p.join(LOG)).ok())
            .unwrap_or_default()
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn path(&self) -> Option<&Path> {
        self.dir.as_ref().map(|d| d.path())
    }
}

impl Drop for EmbeddedNats {
    fn drop(&mut self) {
        super::process::stop_and_remove(&mut self.child, &mut self.dir);
    }
}
