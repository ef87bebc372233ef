//! A trial's readings beyond its rates and latencies: the sampler's (purge, the hot
//! table's health), the counters, sizes and CPU before and after, where every job ended
//! up, the oldest pending job, the locks, each queue's share and max-workers evidence,
//! the plan, the network in front of the workers and a cluster's nodes. The run's shape
//! (run, cell, trial) stays in `results/mod.rs`; run.json reads the same.

use serde::{Deserialize, Serialize};

/// InnoDB's purge at one sampler reading (MySQL, MariaDB): the history list length,
/// undo logs of committed transactions purge has not removed yet. While a read view
/// older than them is open, purge cannot remove them, and the list grows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PurgeSample {
    /// Seconds since the trial's start.
    pub at_s: f64,
    pub history_length: i64,
}

/// The hot table's health at one sampler reading (PostgreSQL): what the claim's
/// updates leave behind, and whether vacuum and HOT keep up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableSample {
    /// Seconds since the trial's start.
    pub at_s: f64,
    pub dead_tuples: i64,
    pub table_bytes: i64,
    pub index_bytes: i64,
    /// Row updates and HOT updates (no index entry written) since the statistics began.
    pub updates: i64,
    pub hot_updates: i64,
    /// The slowest standby's `replay_lag`, ms, where the server streams to one (`None`
    /// without a standby, or once it has caught up and no WAL flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_lag_ms: Option<f64>,
    /// The most WAL any standby had not replayed yet, bytes (`None` without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_behind_bytes: Option<i64>,
    /// Advisory locks held in the database at the reading: a claim that owns jobs by
    /// a session-level lock holds one per job in hand, and more if it never gives them
    /// back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory_locks: Option<i64>,
    /// How many transactions old the oldest xmin or xid another session or a
    /// replication slot holds: what keeps vacuum from removing dead row versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon_age: Option<i64>,
    /// Autovacuum runs of the hot table since the statistics began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autovacuums: Option<i64>,
    /// Autoanalyze runs of the hot table since the statistics began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoanalyzes: Option<i64>,
    /// Who holds `horizon_age`: a session's application name (or kind) and state,
    /// `claimbench-holder (idle in transaction)`, or `slot <name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon_holder: Option<String>,
    /// What the run's active worker connections waited on at the reading: each
    /// distinct `wait_event_type:wait_event` (`CPU`: none) with how many.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<(String, u32)>,
    /// WAL the server has written, bytes (its position; `None` on a standby).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_bytes: Option<i64>,
    /// WAL the server keeps for replication slots past the oldest one's restart point,
    /// bytes (`None`: no slot, or not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_wal_bytes: Option<i64>,
}

/// A trial on a multi-primary cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterTrial {
    /// `spread`, `single-writer` or `standalone` (the block ran on the plain server
    /// beside the cluster, whose nodes only idled).
    pub placement: String,
    /// The node (1-based) the sampler, producer, rescuer and control connection use.
    pub service_node: usize,
    pub nodes: Vec<NodeTrial>,
}

/// One node's share of a trial: its workers, and its own counters' differences from
/// before the trial to after it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeTrial {
    /// 1-based, in the target's order.
    pub node: usize,
    pub address: String,
    pub workers: u32,
    /// `wsrep_local_cert_failures`: this node's commits that lost certification.
    pub cert_failures: i64,
    /// `wsrep_local_bf_aborts`: this node's open transactions a replicated write set
    /// aborted.
    pub bf_aborts: i64,
    /// `Innodb_deadlocks`: the node's own lock-wait cycles, apart from both.
    pub innodb_deadlocks: i64,
    /// `wsrep_flow_control_paused_ns`, as ms: replication paused for a full apply queue.
    pub flow_control_paused_ms: f64,
    /// Write sets this node sent and received (`wsrep_replicated`, `wsrep_received`).
    pub replicated: i64,
    pub received: i64,
    /// `wsrep_local_recv_queue_max` after the trial: the longest apply queue the node
    /// has had (since it started or the counter was last read, as the server keeps it).
    pub recv_queue_max: i64,
}

impl NodeTrial {
    /// Another repetition's share of the same node: counts add up, the longest queue
    /// is the longest of both.
    pub fn add(&mut self, o: &NodeTrial) {
        self.cert_failures += o.cert_failures;
        self.bf_aborts += o.bf_aborts;
        self.innodb_deadlocks += o.innodb_deadlocks;
        self.flow_control_paused_ms += o.flow_control_paused_ms;
        self.replicated += o.replicated;
        self.received += o.received;
        self.recv_queue_max = self.recv_queue_max.max(o.recv_queue_max);
    }
}

/// The network in front of the workers, measured: the median round trip of a trivial
/// statement (BEGIN, then ROLLBACK, halved) on a direct connection and on one through
/// the delaying proxy, 20 each, just before the trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetworkProbe {
    /// The round trip asked for, as written (`"5ms±1ms"`).
    pub configured: String,
    pub configured_ms: f64,
    pub direct_ms: f64,
    pub through_ms: f64,
    /// What the proxy added: through − direct.
    pub added_ms: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reconciliation {
    pub created: i64,
    pub db: DbReconciliation,
    /// Rows left fetched or processing that the workload's mode or faults explain.
    pub accounted_by_faults: i64,
    /// Jobs missing, or left fetched or processing, because a failover lost their
    /// acknowledged insert or completion ([`FailoverLosses`]).
    #[serde(default)]
    pub accounted_by_failover: i64,
    /// Jobs that are nowhere, or stranded without a fault to explain it.
    pub lost: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OldestPending {
    /// Whether a sampler ran (`trial.sample_interval_ms = 0` turns it off).
    pub sampled: bool,
    /// Mean wall time of one sample query, ms, and the longest interval the sampler
    /// stretched to so as to stay within its budget of 5% of one server core.
    pub mean_sample_ms: f64,
    pub max_interval_ms: f64,
    /// (seconds since trial start, age ms); `None` age when nothing was eligible.
    pub series: Vec<(f64, Option<f64>)>,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LockEvidence {
    /// Sum over samples of worker connections waiting on a lock.
    pub lock_wait_samples: u64,
    /// Sum over samples of worker connections running a statement.
    pub active_samples: u64,
    /// lock-waiting / (samples × workers): the share of worker time spent in lock waits.
    pub lock_wait_share: f64,
    pub samples: u64,
    pub server_before: ServerCounters,
    pub server_after: ServerCounters,
    pub deadlocks: i64,
    /// InnoDB row lock waits during the trial (server-wide); `None` on PostgreSQL,
    /// which keeps no such counter (its lock waits are in `lock_wait_share`).
    #[serde(default)]
    pub row_lock_waits: Option<i64>,
    /// Time spent in those waits, ms.
    #[serde(default)]
    pub row_lock_time_ms: Option<i64>,
    /// SQL Server: lock escalations on the hot table during the trial.
    #[serde(default)]
    pub lock_escalations: Option<i64>,
    /// Through a pooler claimbench reads: the transactions it passed during the trial,
    /// and the microseconds its clients waited in it for a server connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_transactions: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_wait_us: Option<i64>,
    /// The most server connections the pooler had serving clients at once, and the
    /// most clients waiting for one (`SHOW POOLS` every 100 ms, warm-up included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_peak_server: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_peak_waiting: Option<i64>,
}

/// One queue's share of a trial, for workloads with more than one queue: who kept their
/// throughput and who fell behind (the noisy-neighbour question).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueResult {
    pub queue: String,
    /// Jobs of this queue completed in the steady window (archive finish times on the
    /// server's clock).
    pub completed: i64,
    pub completed_per_s: f64,
    /// The sampler's oldest eligible pending age of this queue, after warm-up, ms
    /// (`None`: never a pending eligible job when sampled, or not sampled).
    pub oldest_pending_p99_ms: Option<f64>,
    pub oldest_pending_max_ms: Option<f64>,
    /// (seconds since start, age in ms), warm-up included.
    pub oldest_pending_series: Vec<(f64, Option<f64>)>,
}

/// One capped queue's max-workers evidence: exact from the ledger, and as sampled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaxWorkersCheck {
    pub queue: String,
    pub max_workers: i32,
    /// The most active jobs the sampler saw at one of its readings (every 50-400 ms):
    /// overshoots shorter than the sampling interval fall between readings.
    pub max_observed_active: i64,
    /// The most jobs of the queue held at once, from every claim and release instant in
    /// the ledger (a lower bound: claims are stamped when their call returned, releases
    /// when theirs began).
    #[serde(default)]
    pub max_held_exact: i64,
    /// Time during which more than `max_workers` jobs were held, ms (same bound).
    #[serde(default)]
    pub ms_above_limit: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resources {
    pub client_cpu_s: f64,
    /// Client CPU per claim call, µs: what the harness costs.
    pub client_cpu_us_per_claim: f64,
    pub client_rss_bytes: u64,
    /// CPU of the server's processes over the trial, when the server is local.
    pub server_cpu_s: Option<f64>,
    /// How late the worker threads woke when they asked to (runner/lag.rs), ms: time a
    /// reply may have waited for its worker, counted in claim latency.
    #[serde(default)]
    pub scheduling_delay_p99_ms: f64,
    #[serde(default)]
    pub scheduling_delay_max_ms: f64,
    pub table: TableStats,
}

/// Cumulative server counters read before and after a trial; the report shows deltas.
/// PostgreSQL counts per database, MySQL per server (other work on it counts too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCounters {
    pub deadlocks: i64,
    /// PostgreSQL: recovery conflicts. MySQL: 0 (no counterpart).
    pub conflicts: i64,
    pub rollbacks: i64,
    pub commits: i64,
    /// InnoDB row lock waits (`Innodb_row_lock_waits`); PostgreSQL has no counter of them.
    #[serde(default)]
    pub row_lock_waits: Option<i64>,
    /// Time spent waiting for InnoDB row locks (`Innodb_row_lock_time`), ms.
    /// On SQL Server both come from the hot table's `sys.dm_db_index_operational_stats`.
    #[serde(default)]
    pub row_lock_time_ms: Option<i64>,
    /// SQL Server: lock promotions (escalations) on the hot table's indexes.
    #[serde(default)]
    pub lock_escalations: Option<i64>,
    /// SQL Server: `LCK_M_*` waits in `sys.dm_os_wait_stats` (server-wide).
    #[serde(default)]
    pub lock_waits: Option<i64>,
    #[serde(default)]
    pub lock_wait_ms: Option<i64>,
    /// The pooler's transactions and the microseconds its clients waited for a server
    /// connection (PgBouncer's `SHOW STATS`: total_xact_count, total_wait_time), when
    /// claimbench reads its admin console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_transactions: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_wait_us: Option<i64>,
    /// PostgreSQL: advisory locks held in the database when read (a level, not a
    /// counter): after a trial, the locks workers' unlocks missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory_locks: Option<i64>,
}

/// Sizes and dead rows of the hot table after a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableStats {
    pub live_tuples: i64,
    pub dead_tuples: i64,
    pub table_bytes: i64,
    pub index_bytes: i64,
}

/// Where every job ended up, counted in the database at the end of a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DbReconciliation {
    pub pending: i64,
    pub fetched: i64,
    pub processing: i64,
    pub completed: i64,
    pub dead_lettered: i64,
    /// Effects rows in all.
    pub effect_rows: i64,
    /// Runs that overlapped an earlier run of their job or followed one that succeeded:
    /// duplicate executions, by the same rule as the ledger's.
    pub duplicate_executions: i64,
    /// Distinct jobs with at least one effects row.
    pub distinct_executed: i64,
    /// Effects rows written when the worker no longer owned the job.
    #[serde(default)]
    pub unowned_executions: i64,
}

impl DbReconciliation {
    /// From the nine columns every backend's `reconcile.sql` selects, in its order.
    pub fn from_columns(n: impl Fn(usize) -> i64) -> DbReconciliation {
        DbReconciliation {
            pending: n(0),
            fetched: n(1),
            processing: n(2),
            completed: n(3),
            dead_lettered: n(4),
            effect_rows: n(5),
            duplicate_executions: n(6),
            distinct_executed: n(7),
            unowned_executions: n(8),
        }
    }
}

/// Server version and the settings that decide whether two runs may be compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerInfo {
    pub version: String,
    pub settings: Vec<(String, String)>,
}

/// One claim's plan, executed inside a transaction that was rolled back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSample {
    /// Seconds since the trial's start when it was taken.
    pub at_s: f64,
    /// Which statement: the claim, or a two-step strategy's select step.
    pub statement: String,
    /// `Node (index) > child`, children of one node in brackets.
    pub shape: String,
    pub execution_ms: f64,
    /// Shared buffers found in the cache and read in, for the whole statement.
    pub shared_hit: u64,
    pub shared_read: u64,
    /// Rows the scans produced or filtered out, times their loops: the work behind one
    /// batch.
    pub rows_examined: u64,
    /// The server's plan as it gave it.
    pub plan: serde_json::Value,
    /// Whether the claim ran (EXPLAIN ANALYZE): `false` for the plan alone, kept when
    /// the analysed sample did not come back in time (a claim that over-claims can run
    /// for seconds), so the cell still shows the shape that did it.
    #[serde(default = "analyzed_by_default")]
    pub analyzed: bool,
}

fn analyzed_by_default() -> bool {
    true
}
