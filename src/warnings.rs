//! Quality warnings are data: each is stored in `run.json` with the trial it concerns and
//! shown by every report, with a one-line hint on what to do about it.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Warning {
    /// The ledger and the effects table disagree on duplicate executions: a harness bug.
    LedgerEffectsMismatch { ledger: u64, effects: i64 },
    /// Jobs ended nowhere, or stranded without an injected fault to explain it.
    LostJobs { lost: i64 },
    /// A strategy meant to prevent duplicate claims produced some.
    UnexpectedDuplicateClaims { count: u64 },
    /// Claims returned more rows than the batch asked for: the statement's limit does
    /// not bound what it claims (a subquery the plan re-runs claims again each time).
    OverClaims {
        claims: u64,
        /// The most rows one claim returned.
        most: u64,
        batch: u32,
    },
    /// The sampler saw more active jobs in a queue than its max workers.
    MaxWorkersExceeded {
        queue: String,
        limit: i32,
        /// The most jobs held at once, exactly (ledger).
        observed: i64,
        #[serde(default)]
        ms_above: f64,
    },
    /// Too few claims after warm-up for tail percentiles to mean much.
    FewSamples { claims: u64 },
    /// The load generator used a large share of its worker threads' cores: it may be
    /// the bottleneck.
    HarnessBusy {
        cpu_share: f64,
        #[serde(default = "one")]
        threads: u32,
    },
    /// The worker threads woke late when they asked to: replies waited for their
    /// workers, and that wait is in claim latency.
    SchedulingDelay { p99_ms: f64, max_ms: f64 },
    /// The harness spent more than half the CPU the server did: the server was not the
    /// clear bottleneck the numbers are meant to describe.
    HarnessHeavy {
        client_cpu_s: f64,
        server_cpu_s: f64,
    },
    /// The backlog ran out while measuring: throughput then measures an empty queue.
    BacklogExhausted { at_s: f64 },
    /// Sample queries were slow, so samples were spread out to keep the sampler's load
    /// within its budget: the oldest-pending series is coarser than asked.
    SamplerStretched {
        mean_sample_ms: f64,
        max_interval_ms: f64,
    },
    /// The open-loop producer inserted jobs later than their arrival times: the rate
    /// asked for was not offered, so the trial is invalid as a test of that rate.
    ProducerBehind { max_lag_ms: f64 },
    /// The trial was cut short by Ctrl-C.
    Interrupted,
    /// Workers were still in a statement long after the stop, and the runner ended
    /// their connections so the run could go on (or write its results).
    StopForced { workers: u32, grace_s: f64 },
    /// Claim attempts the server refused a lock (a `NOWAIT` claim meeting a locked row,
    /// or a lock timeout) and that were sent again: such a claim neither skips nor
    /// waits, and its retries are its cost. Their back-off is not in claim latency.
    ClaimsRefusedLocks { refused: u64, claims: u64 },
    /// PostgreSQL: the sampler saw more advisory locks held than the workers' jobs in
    /// hand and claims in flight could hold: a claim's session-level locks outlive their
    /// jobs (a release step missing, or one that misses its lock). Neither the ledger
    /// nor the effects table sees it; the server's shared lock table does, until it is
    /// full.
    AdvisoryLocksPiled {
        /// The most held at one reading, above the level before the trial.
        most: i64,
        /// The most claims in hand and in flight could hold: 2 x workers x batch.
        bound: i64,
    },
    /// SQL Server: one claim's UPDATE takes about batch × (1 + secondary indexes) key
    /// locks; near 5,000 in one statement SQL Server escalates to a table lock, and then
    /// every READPAST claimer waits on it.
    LockEscalationRisk {
        /// Eligible rows at the trial's start, estimated from the population.
        eligible: u64,
        indexes: u32,
        locks: u64,
    },
}

fn one() -> u32 {
    1
}

impl Warning {
    /// Whether the warning means the numbers are wrong (exit code 1), not just weak.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Warning::LedgerEffectsMismatch { .. }
                | Warning::LostJobs { .. }
                | Warning::UnexpectedDuplicateClaims { .. }
                | Warning::OverClaims { .. }
        )
    }

    /// Whether the trial did not test what it was meant to: the load generator may have
    /// been the bottleneck, or the producer did not offer the rate asked for. `compare`
    /// never calls such a trial's numbers a regression.
    pub fn invalidates(&self) -> bool {
        matches!(
            self,
            Warning::HarnessBusy { .. }
                | Warning::SchedulingDelay { .. }
                | Warning::HarnessHeavy { .. }
                | Warning::ProducerBehind { .. }
                | Warning::Interrupted
        )
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::LedgerEffectsMismatch { ledger, effects } => write!(
                f,
                "ledger counts {ledger} duplicate executions, effects table {effects}: a claimbench bug, please report it with run.json"
            ),
            Warning::LostJobs { lost } => write!(
                f,
                "{lost} jobs lost (not completed, pending, dead-lettered or held by an injected fault): check the claim and completion SQL"
            ),
            Warning::UnexpectedDuplicateClaims { count } => write!(
                f,
                "{count} duplicate claims from a strategy that should prevent them: check the lock clause and isolation level"
            ),
            Warning::OverClaims {
                claims,
                most,
                batch,
            } => write!(
                f,
                "{claims} claims returned more rows than the batch of {batch} asked for (up to {most}): the statement's limit does not bound what it claims; check its plan for a subquery run again per row"
            ),
            Warning::MaxWorkersExceeded {
                queue,
                limit,
                observed,
                ms_above,
            } => write!(
                f,
                "queue {} held {observed} jobs at once, above max workers {limit}, for {ms_above:.1} ms in all (exact, from the ledger): concurrent claims read the same committed count",
                crate::markdown::code(queue)
            ),
            Warning::FewSamples { claims } => write!(
                f,
                "only {claims} claims after warm-up: tail percentiles are noisy; lengthen trial.duration_s"
            ),
            Warning::HarnessBusy { cpu_share, threads } => write!(
                f,
                "claimbench used {:.0}% of a core on each of its {threads} worker thread(s): it may limit throughput; give it more --worker-threads, run it on another host, or lower the worker count",
                cpu_share * 100.0 / f64::from((*threads).max(1))
            ),
            Warning::SchedulingDelay { p99_ms, max_ms } => write!(
                f,
                "the worker threads woke up to {p99_ms:.1} ms late (p99; max {max_ms:.0} ms): replies waited for their workers and claim latency includes that wait; the client host is overloaded, run claimbench on another host or with fewer workers"
            ),
            Warning::HarnessHeavy {
                client_cpu_s,
                server_cpu_s,
            } => write!(
                f,
                "claimbench used {client_cpu_s:.2} s of CPU against the server's {server_cpu_s:.2} s: the harness was not far cheaper than what it loaded, so the server was not the clear bottleneck; run claimbench on another host"
            ),
            Warning::BacklogExhausted { at_s } => write!(
                f,
                "the backlog ran out {at_s:.1}s into the trial: throughput after that measures an empty queue; raise population.backlog"
            ),
            Warning::SamplerStretched {
                mean_sample_ms,
                max_interval_ms,
            } => write!(
                f,
                "each sample took {mean_sample_ms:.1} ms, so samples were up to {max_interval_ms:.0} ms apart to keep the sampler under 5% of a server core; samples slow down under CPU contention, or without an index that yields the fetch order (the oldest-pending probe then scans the backlog)"
            ),
            Warning::ProducerBehind { max_lag_ms } => write!(
                f,
                "the producer fell up to {max_lag_ms:.0} ms behind its arrival schedule: the rate asked for was not offered, so this trial is invalid for it; lower the rate or give the database more headroom"
            ),
            Warning::Interrupted => write!(f, "interrupted: this trial is partial"),
            Warning::StopForced { workers, grace_s } => write!(
                f,
                "{workers} workers were still in a statement {grace_s:.0} s after the stop, so their connections were ended (what they held is counted as stranded): a claim that slow is the finding; see the Plans table"
            ),
            Warning::ClaimsRefusedLocks { refused, claims } => write!(
                f,
                "{refused} claim attempts were refused a lock (NOWAIT, or a lock timeout) and sent again, beside {claims} claim calls that returned: the claim neither skips locked rows nor waits for them, so under contention its time goes to retries (their back-off is not in claim latency); see claim_lock_refusals in run.json"
            ),
            Warning::AdvisoryLocksPiled { most, bound } => write!(
                f,
                "the server held up to {most} advisory locks during the trial, more than the {bound} its workers' jobs in hand and claims in flight could hold: the claim's session-level locks outlive their jobs, so each worker's session keeps one per job it ran until it closes, a retried job stays locked against every other worker, and the lock table fills (max_locks_per_transaction x max_connections); give the strategy a release step that unlocks :ids (docs/strategies.md)"
            ),
            Warning::LockEscalationRisk {
                eligible,
                indexes,
                locks,
            } => write!(
                f,
                "the seed's claim U-locks every eligible row it reads: about {eligible} eligible rows x {indexes} indexes = {locks} locks per claim, at or past SQL Server's 5,000-lock escalation threshold: an escalated table lock makes every READPAST claimer wait; shrink the eligible backlog or set [mssql] lock_escalation = \"disable\""
            ),
        }
    }
}
