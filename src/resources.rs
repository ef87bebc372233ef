//! Client and server CPU and memory, read with sysinfo before and after a trial (never
//! during it), and the host facts that go into the environment fingerprint.

use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

/// Cumulative CPU readings at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSnapshot {
    pub client_cpu_ms: u64,
    pub client_rss_bytes: u64,
    /// Sum over the server's processes, when the server runs on this host.
    pub server_cpu_ms: Option<u64>,
}

/// A server process on this host whose process tree's CPU the probe reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerProcess {
    /// The root of the server's processes itself: a server of one process (mariadbd,
    /// redis-server), whose parent is whatever started it (init, or claimbench for an
    /// embedded one: counting that parent's tree counted the client and every other
    /// embedded server as the server).
    Root(u32),
    /// One backend of a server that forks one per connection (PostgreSQL): its parent,
    /// the postmaster, is the root.
    BackendOf(u32),
}

/// The process listening on `addr`'s port on this host (a loopback server whose
/// protocol does not tell its pid: NATS's), found through the kernel's socket tables
/// (procfs). `None` for another host, or where `/proc` cannot tell (another user's
/// process without the rights to read its descriptors).
pub fn listening_pid(addr: std::net::SocketAddr) -> Option<u32> {
    use procfs::net::TcpState;
    use procfs::process::FDTarget;
    if !addr.ip().is_loopback() {
        return None;
    }
    let tables = [procfs::net::tcp(), procfs::net::tcp6()];
    let inode = tables
        .into_iter()
        .flatten()
        .flatten()
        .find(|e| e.state == TcpState::Listen && e.local_address.port() == addr.port())?
        .inode;
    procfs::process::all_processes()
        .ok()?
        .flatten()
        .find_map(|p| {
            let holds = p
                .fd()
                .ok()?
                .flatten()
                .any(|fd| matches!(fd.target, FDTarget::Socket(i) if i == inode));
            holds.then_some(p.pid as u32)
        })
}

pub struct ResourceProbe {
    sys: Option<System>,
    own: Option<Pid>,
}

impl ResourceProbe {
    pub fn new() -> ResourceProbe {
        ResourceProbe {
            sys: System::new().ok(),
            own: sysinfo::get_current_pid().ok(),
        }
    }

    /// Reads this process and, given a server process, the root of the server's processes
    /// and all its children (the server process tree). Processes that exited since the
    /// last reading take their CPU time with them, so read before workers disconnect.
    pub fn snapshot(&mut self, server: Option<ServerProcess>) -> CpuSnapshot {
        let Some(sys) = self.sys.as_mut() else {
            return CpuSnapshot::default();
        };
        sys.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing().with_cpu().with_memory(),
        );
        let mut snap = CpuSnapshot::default();
        if let Some(p) = self.own.and_then(|pid| sys.process(pid)) {
            // The delaying proxy runs in this process, but it is the network under
            // test, not the load generator.
            snap.client_cpu_ms = p
                .accumulated_cpu_time()
                .saturating_sub(crate::netdelay::thread_cpu_ms());
            snap.client_rss_bytes = p.memory();
        }
        let root = match server {
            Some(ServerProcess::Root(pid)) => Some(Pid::from_u32(pid)),
            Some(ServerProcess::BackendOf(pid)) => {
                sys.process(Pid::from_u32(pid)).and_then(|p| p.parent())
            }
            None => None,
        }
        .filter(|root| sys.process(*root).is_some());
        if let Some(root) = root {
            let total: u64 = sys
                .processes()
                .values()
                .filter(|p| p.pid() == root || p.parent() == Some(root))
                .map(|p| p.accumulated_cpu_time())
                .sum();
            snap.server_cpu_ms = Some(total);
        }
        snap
    }
}

impl Default for ResourceProbe {
    fn default() -> Self {
        ResourceProbe::new()
    }
}

/// Host facts for the environment fingerprint.
pub struct HostFacts {
    pub host: String,
    pub os: String,
    pub cpu: String,
    pub logical_cores: usize,
    pub physical_cores: Option<usize>,
    pub memory_bytes: u64,
}

pub fn host_facts() -> HostFacts {
    let sys = System::new_with_specifics(
        sysinfo::RefreshKind::nothing()
            .with_cpu(sysinfo::CpuRefreshKind::nothing())
            .with_memory(sysinfo::MemoryRefreshKind::nothing().with_ram()),
    )
    .ok();
    HostFacts {
        host: System::host_name().unwrap_or_default(),
        os: System::long_os_version().unwrap_or_default(),
        cpu: sys
            .as_ref()
            .and_then(|s| s.cpus().first().map(|c| c.brand().to_string()))
            .unwrap_or_default(),
        logical_cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        physical_cores: System::physical_core_count().ok(),
        memory_bytes: sys.map(|s| s.total_memory()).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listener_of_a_loopback_port_is_found_and_no_other() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        assert_eq!(listening_pid(addr), Some(std::process::id()));
        drop(l);
        assert_eq!(listening_pid(addr), None, "closed");
        let elsewhere = std::net::SocketAddr::from(([10, 0, 0, 1], addr.port()));
        assert_eq!(listening_pid(elsewhere), None);
    }

    /// Regression: a server of one process (mariadbd, redis-server) was read as a
    /// backend, so its parent's tree was summed: for an embedded server that parent is
    /// claimbench, and the client's own CPU (and every other embedded server's) counted
    /// as the server's. A root is read as the root; a backend through its parent.
    #[test]
    fn a_root_process_is_not_read_through_its_parent() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        // CPU of this process, which is the child's parent.
        let t0 = std::time::Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < std::time::Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let mut probe = ResourceProbe::new();
        let root = probe.snapshot(Some(ServerProcess::Root(child.id())));
        let through_parent = probe.snapshot(Some(ServerProcess::BackendOf(child.id())));
        let _ = child.kill();
        let _ = child.wait();
        let own = root.client_cpu_ms;
        assert!(own >= 100, "this process burnt {own} ms");
        let server = root.server_cpu_ms.expect("the child is on this host");
        assert!(server < own / 2, "sleep's tree took {server} ms of {own}");
        let parent_tree = through_parent.server_cpu_ms.expect("its parent too");
        assert!(parent_tree >= own, "{parent_tree} < {own}");
    }
}
