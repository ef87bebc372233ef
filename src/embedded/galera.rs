//! A throw-away MariaDB Galera cluster: `nodes` servers on loopback ports, each in its
//! own temporary directory, the first bootstrapping the cluster and the others joining
//! it (a state transfer by rsync), all stopped and removed on drop — on exit, on error
//! and after Ctrl-C, as the embedded PostgreSQL is.
//!
//! As with PostgreSQL, no shell: `mariadbd` is started directly with `--no-defaults`
//! (no option file of the machine's applies) and every option its own argument. When
//! claimbench runs as root the servers run as the `mysql` user. Readiness is read from
//! each node's error log ("ready for connections" after its state transfer); that every
//! node is `wsrep_ready` and the cluster has all of them is for a caller with a client
//! to check.

use super::{EmbeddedError, OutputChecked, free_port, last_lines, step};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the Galera provider is (Debian's `galera-4`).
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";
/// The `wsrep_cluster_name` of every cluster claimbench starts.
pub const CLUSTER_NAME: &str = "claimbench";
/// How long a node may take to join (its state transfer included).
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// One node: its directory, client port, group-communication port, and process.
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

/// A running cluster. Dropping it stops every node and deletes their directories.
pub struct EmbeddedGalera {
    /// The cluster's nodes, then the standalone server when one was asked for.
    nodes: Vec<Node>,
    /// How many of `nodes` are the cluster's.
    cluster: usize,
}

/// The binaries a cluster needs, or which package to install.
fn binaries() -> Result<(PathBuf, PathBuf), EmbeddedError> {
    let find = |name: &str, dirs: &[&str]| {
        dirs.iter()
            .map(|d| Path::new(d).join(name))
            .find(|p| p.is_file())
    };
    let missing = |what: &str| EmbeddedError::Step {
        step: "find MariaDB Galera",
        detail: format!(
            "{what} is not installed; install the server and the provider (Debian/Ubuntu: apt-get install mariadb-server galera-4 rsync) or pass --db with your cluster's nodes"
        ),
    };
    let server = find("mariadbd", &["/usr/sbin", "/usr/bin", "/usr/local/sbin"])
        .ok_or_else(|| missing("mariadbd"))?;
    let install = find("mariadb-install-db", &["/usr/bin", "/usr/local/bin"])
        .ok_or_else(|| missing("mariadb-install-db"))?;
    if !Path::new(PROVIDER).is_file() {
        return Err(missing(PROVIDER));
    }
    if find("rsync", &["/usr/bin", "/bin"]).is_none() {
        return Err(missing("rsync (the state transfer)"));
    }
    Ok((server, install))
}

impl EmbeddedGalera {
    /// Starts a cluster of `nodes` servers and returns once each has joined and said it
    /// is ready for connections.
    /// With `standalone`, also a plain MariaDB server beside it (no Galera, the same
    /// settings otherwise): the single server a cluster's figures are set against.
    pub fn start(nodes: usize, standalone: bool) -> Result<EmbeddedGalera, EmbeddedError> {
        EmbeddedGalera::start_with(nodes, standalone, &[], &std::env::temp_dir())
    }

    /// [`EmbeddedGalera::start`] with the nodes' directories under `parent` and extra
    /// `mariadbd` options for some nodes (node index, option): how a test makes one
    /// node fail to start and sees what is left. What was started is stopped and
    /// removed when one fails.
    pub fn start_with(
        nodes: usize,
        standalone: bool,
        extra: &[(usize, &str)],
        parent: &Path,
    ) -> Result<EmbeddedGalera, EmbeddedError> {
        let (server, install) = binaries()?;
        let run_as_mysql = nix::unistd::geteuid().is_root();
        let mysql = if run_as_mysql {
            let u = nix::unistd::User::from_name("mysql")
                .ok()
                .flatten()
                .ok_or_else(|| EmbeddedError::Step {
                    step: "find the mysql user",
                    detail: "claimbench runs as root and MariaDB should not; create the `mysql` user (it comes with mariadb-server)".into(),
                })?;
            Some((u.uid.as_raw(), u.gid.as_raw()))
        } else {
            None
        };
        let mut cluster = EmbeddedGalera {
            nodes: Vec::new(),
            cluster: nodes,
        };
        for _ in 0..nodes + usize::from(standalone) {
            let dir = tempfile::Builder::new()
                .prefix("claimbench-galera-")
                .tempdir_in(parent)
                .map_err(|e| step("create temporary directory", e))?;
            if let Some((uid, gid)) = mysql {
                std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                    .map_err(|e| step("hand the node's directory to mysql", e))?;
            }
            let port = free_port().map_err(|e| step("find a free port", e))?;
            let gcomm = free_port().map_err(|e| step("find a free port", e))?;
            cluster.nodes.push(Node {
                dir: Some(dir),
                port,
                gcomm,
                child: None,
            });
        }
        // The first node's data directory is initialised (and the standalone server's);
        // the others get theirs by state transfer from it.
        let own_data = [0].into_iter().chain(standalone.then_some(nodes));
        for i in own_data {
            let root = cluster.nodes[i].root().to_path_buf();
            let mut cmd = Command::new(&install);
            // Its bootstrap server's temporary files in the node's own directory, which
            // the mysql user owns (a TMPDIR of root's may not let it write).
            cmd.env("TMPDIR", &root);
            cmd.args(["--no-defaults", "--auth-root-authentication-method=normal"])
                .arg("--skip-test-db")
                .arg(format!("--datadir={}", root.join("data").display()));
            if run_as_mysql {
                cmd.arg("--user=mysql");
            }
            cmd.stdin(Stdio::null())
                .output_checked("mariadb-install-db")?;
        }
        let gcomm0 = cluster.nodes[0].gcomm;
        for i in 0..nodes + usize::from(standalone) {
            let address = match i {
                0 => Some("gcomm://".to_string()),
                i if i < nodes => Some(format!("gcomm://127.0.0.1:{gcomm0}")),
                _ => None,
            };
            let options: Vec<&str> = extra
                .iter()
                .filter(|(n, _)| *n == i)
                .map(|(_, o)| *o)
                .collect();
            cluster.spawn(i, &server, (address.as_deref(), &options), run_as_mysql)?;
            cluster.wait_ready(i)?;
        }
        Ok(cluster)
    }

    /// Starts node `i`, joining `address` (`gcomm://` bootstraps a new cluster; `None`:
    /// the standalone server, without Galera).
    fn spawn(
        &mut self,
        i: usize,
        server: &Path,
        (address, options): (Option<&str>, &[&str]),
        run_as_mysql: bool,
    ) -> Result<(), EmbeddedError> {
        let what = "start a Galera node";
        let ist = free_port().map_err(|e| step("find a free port", e))?;
        let sst = free_port().map_err(|e| step("find a free port", e))?;
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
            .args([
                "--binlog-format=ROW",
                "--default-storage-engine=InnoDB",
                "--innodb-autoinc-lock-mode=2",
                "--innodb-buffer-pool-size=128M",
                "--innodb-flush-log-at-trx-commit=2",
                "--max-connections=600",
            ]);
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
        }
        if i == 0 {
            cmd.arg("--wsrep-new-cluster");
        }
        cmd.args(options);
        if run_as_mysql {
            cmd.arg("--user=mysql");
        }
        // Its own process group: a terminal's Ctrl-C reaches claimbench only, which
        // then stops the nodes itself.
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

    /// Waits until node `i`'s log says it is ready for connections (after its state
    /// transfer); fails at once if it exits.
    fn wait_ready(&mut self, i: usize) -> Result<(), EmbeddedError> {
        let deadline = Instant::now() + READY_TIMEOUT;
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
                    step: "start a Galera node",
                    detail: format!("node {i} exited ({status}): {}", last_lines(&log, 3)),
                });
            }
            if Instant::now() > deadline {
                return Err(EmbeddedError::Step {
                    step: "start a Galera node",
                    detail: format!(
                        "node {i} not ready after {} s: {}",
                        READY_TIMEOUT.as_secs(),
                        last_lines(&log, 3)
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One MySQL URL with every node (root over TCP, no database: claimbench creates
    /// its own), the form a user gives for their cluster.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self.nodes[..self.cluster]
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("mysql://root@{}/", hosts.join(","))
    }

    /// The standalone server's URL, when one was started.
    pub fn standalone_url(&self) -> Option<String> {
        let n = self.nodes.get(self.cluster)?;
        Some(format!("mysql://root@127.0.0.1:{}/", n.port))
    }

    /// Each server's client port, first node first (the standalone server last).
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    /// Each node's directory (removed on drop).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.nodes.iter().map(|n| n.root().to_path_buf()).collect()
    }
}

impl Drop for EmbeddedGalera {
    fn drop(&mut self) {
        // The joiners first, the node that bootstrapped last: each leaves the cluster
        // cleanly while the others still run.
        for node in self.nodes.iter_mut().rev() {
            if let Some(mut child) = node.child.take() {
                let pid = nix::unistd::Pid::from_raw(child.id() as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
                let deadline = Instant::now() + Duration::from_secs(30);
                while child.try_wait().ok().flatten().is_none() {
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            if let Some(dir) = node.dir.take() {
                let _ = dir.close();
            }
        }
    }
}
