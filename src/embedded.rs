//! The embedded default: a throw-away PostgreSQL cluster in a temporary directory, on a
//! free loopback port, started with `initdb` and `pg_ctl` and removed on drop, which
//! also runs on error and after Ctrl-C (the runner returns normally when interrupted).
//!
//! PostgreSQL refuses to run as root. When claimbench runs as root, the cluster's
//! directory is handed to the `postgres` system user and the server runs as that user.
//! The server runs in its own process group so that a terminal's Ctrl-C reaches only
//! claimbench, which then stops the server after writing its results.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    #[error(
        "cannot find PostgreSQL's initdb and pg_ctl on PATH or under /usr/lib/postgresql/*/bin; install the server (Debian/Ubuntu: apt-get install postgresql) or pass --db URL for an existing server"
    )]
    NotInstalled,
    #[error(
        "claimbench runs as root and PostgreSQL refuses to; create the `postgres` user (it comes with the postgresql package) or run claimbench as an ordinary user"
    )]
    NoUnprivilegedUser,
    #[error("{step} failed: {detail}")]
    Step { step: &'static str, detail: String },
}

/// Where the server binaries are.
fn find_bindir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    });
    if on_path.is_some() {
        return on_path;
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Settings the embedded cluster starts with unless the workload overrides them. The
/// cluster is throw-away, so durability is off: claims then measure locking and CPU, not
/// this machine's fsync latency. Every setting in force is recorded in run.json.
pub fn default_settings() -> BTreeMap<String, String> {
    [
        ("fsync", "off"),
        ("synchronous_commit", "off"),
        ("full_page_writes", "off"),
        ("wal_level", "minimal"),
        ("max_wal_senders", "0"),
        ("shared_buffers", "256MB"),
        ("max_connections", "600"),
        ("max_wal_size", "4GB"),
        ("checkpoint_timeout", "30min"),
        ("autovacuum_naptime", "10s"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A running throw-away cluster. Dropping it stops the server and deletes the directory.
pub struct EmbeddedPostgres {
    bindir: PathBuf,
    dir: Option<tempfile::TempDir>,
    port: u16,
    run_as: Option<(u32, u32)>,
}

impl EmbeddedPostgres {
    /// initdb + start. `settings` are passed as `-c name=value` on top of the defaults.
    pub fn start(settings: &BTreeMap<String, String>) -> Result<EmbeddedPostgres, EmbeddedError> {
        let bindir = find_bindir().ok_or(EmbeddedError::NotInstalled)?;
        let run_as = if nix::unistd::geteuid().is_root() {
            let user = nix::unistd::User::from_name("postgres")
                .ok()
                .flatten()
                .ok_or(EmbeddedError::NoUnprivilegedUser)?;
            Some((user.uid.as_raw(), user.gid.as_raw()))
        } else {
            None
        };
        let dir = tempfile::Builder::new()
            .prefix("claimbench-pg-")
            .tempdir()
            .map_err(|e| step("create temporary directory", e))?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| step("hand the cluster directory to postgres", e))?;
        }
        let port = free_port().map_err(|e| step("find a free port", e))?;
        let pg = EmbeddedPostgres {
            bindir,
            dir: Some(dir),
            port,
            run_as,
        };
        let data = pg.data_dir();
        pg.command("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .output_checked("initdb")?;
        let mut opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1",
            pg.root().display()
        );
        let mut all = default_settings();
        all.extend(settings.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (k, v) in &all {
            opts.push_str(&format!(" -c {k}={v}"));
        }
        pg.command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(pg.root().join("server.log"))
            .args(["-w", "-t", "60", "-o", &opts, "start"])
            .output_checked("pg_ctl start")
            .map_err(|e| pg.with_log(e))?;
        Ok(pg)
    }

    /// Stops the server in immediate mode (as a crash would: no checkpoint, every
    /// connection cut) and starts it again with the same options; returns once it
    /// accepts connections, after crash recovery. The `faults.restart_db_at_s` fault.
    pub fn restart(&self) -> Result<(), EmbeddedError> {
        self.command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .arg("-l")
            .arg(self.root().join("server.log"))
            .args(["-m", "immediate", "-w", "-t", "60", "restart"])
            .output_checked("pg_ctl restart")
            .map_err(|e| self.with_log(e))?;
        Ok(())
    }

    fn root(&self) -> &Path {
        self.dir.as_ref().expect("present until drop").path()
    }

    fn data_dir(&self) -> PathBuf {
        self.root().join("data")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The connection URL (trust auth, loopback only; no password to hide).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub fn path(&self) -> &Path {
        self.root()
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bindir.join(program));
        cmd.stdin(Stdio::null()).process_group(0);
        if let Some((uid, gid)) = self.run_as {
            cmd.uid(uid).gid(gid).current_dir(self.root());
        }
        cmd
    }

    fn with_log(&self, e: EmbeddedError) -> EmbeddedError {
        let log = std::fs::read_to_string(self.root().join("server.log")).unwrap_or_default();
        match e {
            EmbeddedError::Step { step, detail } => EmbeddedError::Step {
                step,
                detail: format!("{detail}; server log: {}", last_lines(&log, 3)),
            },
            other => other,
        }
    }
}

impl Drop for EmbeddedPostgres {
    fn drop(&mut self) {
        if self.dir.is_none() {
            return;
        }
        let data = self.data_dir();
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["-m", "immediate", "-w", "-t", "30", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

fn step(step: &'static str, e: std::io::Error) -> EmbeddedError {
    EmbeddedError::Step {
        step,
        detail: e.to_string(),
    }
}

fn last_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

trait OutputChecked {
    fn output_checked(&mut self, step: &'static str) -> Result<(), EmbeddedError>;
}

impl OutputChecked for Command {
    fn output_checked(&mut self, name: &'static str) -> Result<(), EmbeddedError> {
        let out = self.output().map_err(|e| step(name, e))?;
        if out.status.success() {
            Ok(())
        } else {
            let text = String::from_utf8_lossy(&out.stderr);
            Err(EmbeddedError::Step {
                step: name,
                detail: format!("{}: {}", out.status, last_lines(text.trim(), 3)),
            })
        }
    }
}

/// Asks the kernel for a free loopback port. Another process could take it before the
/// server binds; pg_ctl then fails with a clear message and the run can simply be retried.
fn free_port() -> std::io::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}
