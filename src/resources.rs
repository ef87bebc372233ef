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

    /// Reads this process and, given the pid of one server backend process, the server's
    /// postmaster and all its children (the server process tree). Processes that exited
    /// since the last reading take their CPU time with them, so read before workers
    /// disconnect.
    pub fn snapshot(&mut self, server_backend_pid: Option<u32>) -> CpuSnapshot {
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
        let root = server_backend_pid
            .and_then(|pid| sys.process(Pid::from_u32(pid)))
            .and_then(|p| p.parent());
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
