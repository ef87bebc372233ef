//! Throw-away MariaDB servers: the embedded MariaDB a run on `mysql` gets when no `--db`
//! names one, and the nodes of a Galera cluster (`[topology] kind = "galera"`), which
//! start the same way. Each server is in its own temporary directory on free loopback
//! ports; a cluster's first node bootstraps it and the others join (a state transfer by
//! rsync). All are stopped and removed on drop — on exit, on error and after Ctrl-C, as
//! the embedded PostgreSQL is.
//!
//! As with PostgreSQL, no shell: `mariadbd` is started directly with `--no-defaults`
//! (no option file of the machine's applies) and every option its own argument. When
//! claimbench runs as root the servers run as the `mysql` user. Readiness is read from
//! each server's error log ("ready for connections" after its state transfer); that
//! every node is `wsrep_ready` and the cluster has all of them is for a caller with a
//! client to check.
//!
//! Least privilege: workers, and the workload's declared SQL, connect as
//! [`WORKLOAD_USER`], which may do anything in the run's database and read the server's
//! lock and process tables, but has no right on any other database (the grant tables
//! included) and neither `FILE` nor `SUPER` nor `SHUTDOWN`: a statement from a workload
//! cannot read or write the host's files, raise its own rights or stop the server.
//! The server's own settings (a block's durability) are changed over `root`.

use super::{EmbeddedError, OutputChecked, free_port, last_lines, step};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the Galera provider is (Debian's `galera-4`).
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";
/// The `wsrep_cluster_name` of every cluster claimbench starts.
pub const CLUSTER_NAME: &str = "claimbench";
/// How long a server may take to be ready (a joining node's state transfer included).
const READY_TIMEOUT: Duration = Duration::from_secs(90);
/// How many times a joiner whose state transfer failed is started again, with fresh
/// ports, before the cluster's start fails.
const JOIN_RETRIES: usize = 2;
/// The account workers and declared SQL use (no password; it exists only on
/// loopback, on a server that lives as long as the run).
pub const WORKLOAD_USER: &str = "claimbench";

/// The durability shortcut every server starts with, as the embedded PostgreSQL's
/// `synchronous_commit = off`: the redo log is written at commit and flushed about once
/// a second, so claims measure locking and CPU, not this machine's fsync. The binary log
/// is off (MariaDB's default), so `sync_binlog` decides nothing. A block with
/// `durability = "production"` sets it to 1 for its trials.
pub const FLUSH_AT_COMMIT_SHORTCUT: &str = "2";

/// Run once by each server that initialised its own data directory (the others receive
/// the account by state transfer): the workload's account (migrations/mysql/
/// privilege.sql says what it may do, and why no more).
fn init_sql(schema: &str) -> String {
    use crate::statements::{fill, migration, step};
    let db = schema.replace('`', "``");
    let sql = step(migration!("mysql", "privilege.sql"), "workload-account");
    fill(sql, &[("user", WORKLOAD_USER), ("db", &db)]) + "\n"
}

/// One server: its directory, client port, group-communication port, and process.
struct Node {
    dir: Option<tempfile::TempDir>,
    port: u16,
    gcomm: u16,
    child: Option<Child>,
}

impl Node {
    fn root(&self) -> &Path {
        self.dir.as_ref().expect("present until drop").path()
    }

    fn log(&self) -> PathBuf {
        self.root().join("error.log")
    }
}

/// Running servers: a Galera cluster's nodes, then a plain server when one was asked
/// for (the embedded MariaDB alone, or the standalone server beside a cluster).
/// Dropping it stops every server and deletes their directories.
pub struct EmbeddedMariadb {
    nodes: Vec<Node>,
    /// How many of `nodes` are a Galera cluster's (0: one plain server).
    cluster: usize,
}

/// The binaries the servers need (`galera` adds the provider and rsync), or which
/// packages to install.
fn binaries(galera: bool) -> Result<(PathBuf, PathBuf), EmbeddedError> {
    let find = |name: &str, dirs: &[&str]| {
        dirs.iter()
            .map(|d| Path::new(d).join(name))
            .find(|p| p.is_file())
    };
    let missing = |what: &str| EmbeddedError::Step {
        step: "find MariaDB",
        detail: if galera {
            format!(
                "{what} is not installed; install the server and the provider (Debian/Ubuntu: apt-get install mariadb-server galera-4 rsync) or pass --db with your cluster's nodes"
            )
        } else {
            format!(
                "{what} is not installed; install the server (Debian/Ubuntu: apt-get install mariadb-server) or pass --db mysql://user@host:3306/db for an existing server"
            )
        },
    };
    let server = find("mariadbd", &["/usr/sbin", "/usr/bin", "/usr/local/sbin"])
        .ok_or_else(|| missing("mariadbd"))?;
    let install = find("mariadb-install-db", &["/usr/bin", "/usr/local/bin"])
        .ok_or_else(|| missing("mariadb-install-db"))?;
    if galera {
        if !Path::new(PROVIDER).is_file() {
            return Err(missing(PROVIDER));
        }
        if find("rsync", &["/usr/bin", "/bin"]).is_none() {
            return Err(missing("rsync (the state transfer)"));
        }
    }
    Ok((server, install))
}

/// The `mysql` user's ids when claimbench runs as root (MariaDB should not).
fn server_user() -> Result<Option<(u32, u32)>, EmbeddedError> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    let u = nix::unistd::User::from_name("mysql")
        .ok()
        .flatten()
        .ok_or_else(|| EmbeddedError::Step {
            step: "find the mysql user",
            detail: "claimbench runs as root and MariaDB should not; create the `mysql` user (it comes with mariadb-server)".into(),
        })?;
    Ok(Some((u.uid.as_raw(), u.gid.as_raw())))
}

impl EmbeddedMariadb {
    /// Starts one plain server (the embedded MariaDB) and returns once it is ready for
    /// connections. The workload's account may use the database `schema` and no other.
    pub fn start_single(schema: &str) -> Result<EmbeddedMariadb, EmbeddedError> {
        EmbeddedMariadb::start_with(0, true, schema, &[], &std::env::temp_dir())
    }

    /// Starts a cluster of `nodes` servers and returns once each has joined and said it
    /// is ready for connections.
    /// With `standalone`, also a plain MariaDB server beside it (no Galera, the same
    /// settings otherwise): the single server a cluster's figures are set against.
    pub fn start(
        nodes: usize,
        standalone: bool,
        schema: &str,
    ) -> Result<EmbeddedMariadb, EmbeddedError> {
        EmbeddedMariadb::start_with(nodes, standalone, schema, &[], &std::env::temp_dir())
    }

    /// [`EmbeddedMariadb::start`] with the servers' directories under `parent` and
    /// extra `mariadbd` options for some (server index, option): how a test makes one
    /// node fail to start and sees what is left. What was started is stopped and
    /// removed when one fails.
    pub fn start_with(
        nodes: usize,
        standalone: bool,
        schema: &str,
        extra: &[(usize, &str)],
        parent: &Path,
    ) -> Result<EmbeddedMariadb, EmbeddedError> {
        let (server, install) = binaries(nodes > 0)?;
        let mysql = server_user()?;
        let mut servers = EmbeddedMariadb {
            nodes: Vec::new(),
            cluster: nodes,
        };
        let prefix = if nodes > 0 {
            "claimbench-galera-"
        } else {
            "claimbench-mariadb-"
        };
        for _ in 0..nodes + usize::from(standalone) {
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir_in(parent)
                .map_err(|e| step("create temporary directory", e))?;
            if let Some((uid, gid)) = mysql {
                std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                    .map_err(|e| step("hand the server's directory to mysql", e))?;
            }
            let port = free_port().map_err(|e| step("find a free port", e))?;
            let gcomm = free_port().map_err(|e| step("find a free port", e))?;
            servers.nodes.push(Node {
                dir: Some(dir),
                port,
                gcomm,
                child: None,
            });
        }
        // The first node's data directory is initialised (and the plain server's); the
        // other nodes get theirs by state transfer from it.
        for i in servers.own_data() {
            let root = servers.nodes[i].root().to_path_buf();
            let mut cmd = Command::new(&install);
            // Its bootstrap server's temporary files in the server's own directory,
            // which the mysql user owns (a TMPDIR of root's may not let it write).
            cmd.env("TMPDIR", &root);
            cmd.args(["--no-defaults", "--auth-root-authentication-method=normal"])
                .arg("--skip-test-db")
                .arg(format!("--datadir={}", root.join("data").display()));
            if mysql.is_some() {
                cmd.arg("--user=mysql");
            }
            cmd.stdin(Stdio::null())
                .output_checked("mariadb-install-db")?;
            std::fs::write(root.join("init.sql"), init_sql(schema))
                .map_err(|e| step("write the workload account's grants", e))?;
        }
        let gcomm0 = servers.nodes.first().map_or(0, |n| n.gcomm);
        for i in 0..servers.nodes.len() {
            let address = match i {
                0 if nodes > 0 => Some("gcomm://".to_string()),
                i if i < nodes => Some(format!("gcomm://127.0.0.1:{gcomm0}")),
                _ => None,
            };
            let options: Vec<&str> = extra
                .iter()
                .filter(|(n, _)| *n == i)
                .map(|(_, o)| *o)
                .collect();
            let mut tries = 0;
            loop {
                servers.spawn(i, &server, (address.as_deref(), &options), mysql.is_some())?;
                match servers.wait_ready(i) {
                    Err(_) if i > 0 && tries < JOIN_RETRIES && servers.transfer_failed(i) => {
                        tries += 1;
                        servers.clear_data(i)?;
                    }
                    ready => break ready?,
                }
            }
        }
        Ok(servers)
    }

    /// Whether joiner `i` exited because its state transfer failed, which Galera calls
    /// unrecoverable until the node is restarted ("restart required"): a loaded host's
    /// rsync that missed its timeout, or a receive port another process took between
    /// [`free_port`] and the transfer. Any other exit (a refused option) is final.
    fn transfer_failed(&mut self, i: usize) -> bool {
        let node = &mut self.nodes[i];
        let exited = node
            .child
            .as_mut()
            .is_some_and(|c| c.try_wait().ok().flatten().is_some());
        let log = std::fs::read_to_string(node.log()).unwrap_or_default();
        exited && state_transfer_failed(&log)
    }

    /// Empties joiner `i`'s data directory after a failed state transfer, whose partial
    /// copy the next transfer would otherwise start from.
    fn clear_data(&mut self, i: usize) -> Result<(), EmbeddedError> {
        let node = &mut self.nodes[i];
        node.child = None;
        let data = node.root().join("data");
        std::fs::remove_dir_all(&data).map_err(|e| step("clear a joiner's data", e))
    }

    /// The servers that initialise their own data directory: a cluster's first node and
    /// the plain server.
    fn own_data(&self) -> Vec<usize> {
        let first = (self.cluster > 0).then_some(0);
        let plain = (self.nodes.len() > self.cluster).then_some(self.cluster);
        first.into_iter().chain(plain).collect()
    }

    /// Starts server `i`, joining `address` (`gcomm://` bootstraps a new cluster;
    /// `None`: a plain server, without Galera).
    fn spawn(
        &mut self,
        i: usize,
        server: &Path,
        (address, options): (Option<&str>, &[&str]),
        run_as_mysql: bool,
    ) -> Result<(), EmbeddedError> {
        let what = "start MariaDB";
        let ist = free_port().map_err(|e| step("find a free port", e))?;
        let sst = free_port().map_err(|e| step("find a free port", e))?;
        let init = self.own_data().contains(&i);
        let node = &mut self.nodes[i];
        let root = node.root().to_path_buf();
        let data = root.join("data");
        std::fs::create_dir_all(&data).map_err(|e| step(what, e))?;
        if run_as_mysql && let Some(u) = nix::unistd::User::from_name("mysql").ok().flatten() {
            let _ = std::os::unix::fs::chown(&data, Some(u.uid.as_raw()), Some(u.gid.as_raw()));
        }
        let mut cmd = Command::new(server);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--port={}", node.port))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", root.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", root.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", node.log().display()))
            .arg(format!("--tmpdir={}", root.display()))
            .arg(format!(
                "--innodb-flush-log-at-trx-commit={FLUSH_AT_COMMIT_SHORTCUT}"
            ))
            .args([
                "--binlog-format=ROW",
                "--default-storage-engine=InnoDB",
                "--innodb-autoinc-lock-mode=2",
                "--innodb-buffer-pool-size=128M",
                "--max-connections=600",
            ]);
        if init {
            cmd.arg(format!("--init-file={}", root.join("init.sql").display()));
        }
        if let Some(address) = address {
            cmd.arg("--wsrep-on=ON")
                .arg(format!("--wsrep-provider={PROVIDER}"))
                .arg(format!("--wsrep-cluster-name={CLUSTER_NAME}"))
                .arg(format!("--wsrep-cluster-address={address}"))
                .arg(format!("--wsrep-node-name=node{i}"))
                .arg(format!("--wsrep-node-address=127.0.0.1:{}", node.gcomm))
                .arg(format!(
                    "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{};ist.recv_addr=127.0.0.1:{ist};gcache.size=64M",
                    node.gcomm
                ))
                .arg("--wsrep-sst-method=rsync")
                .arg(format!("--wsrep-sst-receive-address=127.0.0.1:{sst}"));
            if i == 0 {
                cmd.arg("--wsrep-new-cluster");
            }
        }
        cmd.args(options);
        if run_as_mysql {
            cmd.arg("--user=mysql");
        }
        // Its own process group: a terminal's Ctrl-C reaches claimbench only, which
        // then stops the servers itself.
        use std::os::unix::process::CommandExt;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| step(what, e))?;
        node.child = Some(child);
        Ok(())
    }

    /// Waits until server `i`'s log says it is ready for connections (after its state
    /// transfer); fails at once if it exits.
    fn wait_ready(&mut self, i: usize) -> Result<(), EmbeddedError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let what = match i < self.cluster {
            true => format!("node {i}"),
            false => "the server".to_string(),
        };
        let node = &mut self.nodes[i];
        loop {
            let log = std::fs::read_to_string(node.log()).unwrap_or_default();
            if log.contains("ready for connections") {
                return Ok(());
            }
            let exited = node
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                return Err(EmbeddedError::Step {
                    step: "start MariaDB",
                    detail: format!("{what} exited ({status}): {}", last_lines(&log, 3)),
                });
            }
            if Instant::now() > deadline {
                return Err(EmbeddedError::Step {
                    step: "start MariaDB",
                    detail: format!(
                        "{what} not ready after {} s: {}",
                        READY_TIMEOUT.as_secs(),
                        last_lines(&log, 3)
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The servers workers connect to: the cluster's nodes, or the plain server.
    fn main_servers(&self) -> &[Node] {
        match self.cluster {
            0 => &self.nodes,
            n => &self.nodes[..n],
        }
    }

    /// One MySQL URL with every node (the cluster's, or the plain server alone) for the
    /// workload's account, without a database (claimbench creates its own): the form a
    /// user gives for their server.
    pub fn url(&self) -> String {
        self.url_as(WORKLOAD_USER)
    }

    /// [`EmbeddedMariadb::url`] as `root`: for changing the server's own settings, and
    /// for tests that inspect what the workload account cannot.
    pub fn admin_url(&self) -> String {
        self.url_as("root")
    }

    fn url_as(&self, user: &str) -> String {
        let hosts: Vec<String> = self
            .main_servers()
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("mysql://{user}@{}/", hosts.join(","))
    }

    /// The standalone server's URL beside a cluster, when one was started.
    pub fn standalone_url(&self) -> Option<String> {
        let n = self.nodes.get(self.cluster).filter(|_| self.cluster > 0)?;
        Some(format!("mysql://{WORKLOAD_USER}@127.0.0.1:{}/", n.port))
    }

    /// Each server's client port, first node first (the standalone server last).
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    /// Each server's directory (removed on drop).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.nodes.iter().map(|n| n.root().to_path_buf()).collect()
    }
}

/// Whether a node's error log says its state transfer failed before its data arrived
/// (the SST script's failure, or Galera's "Application state transfer failed" after a
/// transfer that delivered nothing). A node that received its data and then stopped
/// (an option it refused, read only after the transfer) failed for a reason a restart
/// does not change.
fn state_transfer_failed(log: &str) -> bool {
    let log = log.to_ascii_lowercase();
    let failed = ["state transfer failed", "sst failed", "sst script aborted"]
        .iter()
        .any(|m| log.contains(m));
    failed && !log.contains("sst completed on joiner")
}

impl Drop for EmbeddedMariadb {
    fn drop(&mut self) {
        // The joiners first, the node that bootstrapped last: each leaves the cluster
        // cleanly while the others still run.
        for node in self.nodes.iter_mut().rev() {
            if let Some(mut child) = node.child.take() {
                super::terminate(&mut child, Duration::from_secs(30));
            }
            if let Some(dir) = node.dir.take() {
                let _ = dir.close();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::state_transfer_failed;

    #[test]
    fn a_failed_state_transfer_is_told_from_another_exit() {
        // A joiner's last lines from a CI run whose rsync transfer failed.
        let sst = "\tReceived: 00000000-0000-0000-0000-000000000000\n\tRequired: c2bd2f46-f1e2-11f1-b0e5-8b0c25128bd9\n2026-12-07  2:06:18 2 [ERROR] WSREP: Application state transfer failed. This is unrecoverable condition, restart required.";
        assert!(state_transfer_failed(sst));
        assert!(state_transfer_failed(
            "[ERROR] WSREP: SST failed: 1 (Operation not permitted)"
        ));
        // A refused option stops the joiner after its transfer, with the same line.
        let option = "WSREP_SST: [INFO] rsync SST completed on joiner\n[ERROR] /usr/sbin/mariadbd: unknown option '--no-such-option'\n[ERROR] Aborting\n[ERROR] WSREP: sst_received failed: State wait was interrupted\n[ERROR] WSREP: Application state transfer failed. This is unrecoverable condition, restart required.";
        assert!(!state_transfer_failed(option));
    }
}
