//! The report's tables and notes, built from a run for every format: the per-cell
//! table, the side-by-side backends, the sections (queues, plans, table health, faults,
//! max workers), the server and durability notes. summary.md (`summary.rs`), report.html
//! and the terminal render them; none of them is built twice.

use super::view::{CellView, RunView};
use crate::backend::BackendKind;
use crate::results::{CellResult, KEY_HEADER, RunResult, TrialResult, cell_key};

/// One line per finished trial, for the progress log; a claim-only trial's has no
/// completions or executions to show.
pub fn trial_line(t: &TrialResult, claim_only: bool) -> String {
    let (ran, executions) = if claim_only {
        (String::new(), String::new())
    } else {
        (
            format!(", {:.0} completed/s", t.completed_per_s),
            format!(
                ", dup exec {}/{}",
                t.duplicates.ledger.duplicate_executions, t.duplicates.effects_duplicate_executions
            ),
        )
    };
    format!(
        "{:.0} claimed/s{ran}, claim p50 {} p99 {}, dup claims {}{executions}, lost {}{}",
        t.claimed_per_s,
        ms(t.claim_latency.p50_us),
        ms(t.claim_latency.p99_us),
        t.duplicates.ledger.duplicate_claims,
        t.reconciliation.lost,
        if t.interrupted { " (interrupted)" } else { "" }
    )
}

fn ms(us: u64) -> String {
    format!("{:.2} ms", us as f64 / 1000.0)
}

fn mean(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = xs.collect();
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
    } else {
        0.0
    };
    (m, var.sqrt())
}

/// What every format says at the top about the servers a run's figures come from, as
/// (label, plain text): the standbys a primary streamed to, and a durability shortcut
/// (the embedded default runs with fsync, synchronous_commit and full_page_writes off),
/// so that nobody reads such figures as a production server's.
pub fn server_notes(r: &RunResult) -> Vec<(&'static str, String)> {
    fn setting<'a>(t: &'a crate::results::TargetRecord, name: &str) -> Option<&'a str> {
        t.server
            .settings
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    const SHORTCUTS: [&str; 3] = ["fsync", "synchronous_commit", "full_page_writes"];
    let mut notes = Vec::new();
    for t in &r.environment.targets {
        if !t.standbys.is_empty() {
            let each: Vec<String> = t
                .standbys
                .iter()
                .map(|s| format!("{} ({}, {})", s.name, s.sync_state, s.state))
                .collect();
            notes.push((
                "Topology",
                format!(
                    "the {} server was a primary streaming to {}.",
                    t.backend,
                    each.join(", ")
                ),
            ));
        }
        let pg_off: Vec<&str> = SHORTCUTS
            .into_iter()
            .filter(|name| setting(t, name) == Some("off"))
            .collect();
        let off: Vec<String> = (!pg_off.is_empty())
            .then(|| format!("{} off", pg_off.join(", ")))
            .into_iter()
            .chain(
                // MariaDB's: the redo log written at commit but not flushed (0 or 2).
                setting(t, "innodb_flush_log_at_trx_commit")
                    .filter(|v| *v != "1")
                    .map(|v| format!("innodb_flush_log_at_trx_commit = {v}")),
            )
            .chain(
                // Redis's: the append-only file flushed by the kernel, or once a second.
                setting(t, "appendfsync")
                    .filter(|v| *v != "always")
                    .map(|v| format!("appendfsync {v}")),
            )
            .chain(
                // JetStream's: its files synced to disk on the server's interval.
                setting(t, "sync")
                    .filter(|v| *v == "interval")
                    .map(|_| "JetStream's files synced on the server's interval".to_string()),
            )
            .collect();
        if !off.is_empty() {
            let mut production: Vec<&str> = Vec::new();
            for c in r.cells.iter().filter(|c| c.backend == t.backend) {
                let on = c.server_settings.iter().any(|(k, v)| {
                    (k == "fsync" && v == "on")
                        || (k == "innodb_flush_log_at_trx_commit" && v == "1")
                });
                if on && !production.contains(&c.phase.as_str()) {
                    production.push(&c.phase);
                }
            }
            let measured = "workloads/durability.toml measures the difference on this host";
            let (at_production, measure) = match t.backend {
                crate::backend::BackendKind::Postgres => (
                    "fsync, synchronous_commit and full_page_writes on",
                    format!("{measured}, workloads/sync-commit.toml each synchronous_commit level"),
                ),
                crate::backend::BackendKind::Redis => (
                    "appendfsync always",
                    "claimbench changes no setting of Redis's: --db a Redis of yours with appendfsync always measures a flush per write".to_string(),
                ),
                crate::backend::BackendKind::Nats => (
                    "sync_interval always",
                    "claimbench changes no setting of NATS's: --db a server of yours (2.10 or later) with jetstream.sync_interval always measures a flush per write".to_string(),
                ),
                _ => ("innodb_flush_log_at_trx_commit = 1", measured.to_string()),
            };
            let except = match production.as_slice() {
                [] => String::new(),
                blocks => format!(
                    ", except in {} (durability = \"production\": {at_production}; the verdict compares them)",
                    blocks.join(", ")
                ),
            };
            let note = (
                "Durability",
                format!(
                    "the {} server ran with {}{except}: a commit there is not flushed to disk before it returns, so its claim latencies are lower and its rates higher than a production server's ({measure}).",
                    t.backend,
                    off.join(", ")
                ),
            );
            // Two servers of one backend (--versus-pg-bindir) ran alike: said once.
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    if let Some(n) = network_note(r) {
        notes.push(("Network", n));
    }
    if let Some(n) = super::cluster::note(r) {
        notes.push(("Cluster", n));
    }
    if let Some(n) = super::pooler::note(r) {
        notes.push(("Pooler", n));
    }
    notes
}

/// The round trips a `network` sweep added, as configured and as measured per trial.
fn network_note(r: &RunResult) -> Option<String> {
    let mut by_label: Vec<(String, f64, Vec<f64>)> = Vec::new();
    let mut direct: Vec<f64> = Vec::new();
    for p in r
        .cells
        .iter()
        .flat_map(|c| &c.trials)
        .filter_map(|t| t.network.as_ref())
    {
        direct.push(p.direct_ms);
        match by_label.iter_mut().find(|(l, _, _)| *l == p.configured) {
            Some(e) => e.2.push(p.added_ms),
            None => by_label.push((p.configured.clone(), p.configured_ms, vec![p.added_ms])),
        }
    }
    if by_label.is_empty() {
        return None;
    }
    by_label.sort_by(|a, b| a.1.total_cmp(&b.1));
    let range = |v: &[f64]| {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
        if hi - lo < 0.05 {
            format!("{lo:.2} ms")
        } else {
            format!("{lo:.2}–{hi:.2} ms")
        }
    };
    let each: Vec<String> = by_label
        .iter()
        .map(|(l, _, added)| format!("{} for {l}", range(added)))
        .collect();
    Some(format!(
        "the workers reached the server through claimbench's delaying proxy (the sampler, producer, rescuer and control connection directly). Before each trial a trivial statement's median round trip was timed directly ({}) and through the proxy; the proxy added {}.",
        range(&direct),
        each.join(", ")
    ))
}

/// How much of the run resetting took: the cost a sweep pays besides measuring.
pub fn reset_line(r: &RunResult) -> Option<String> {
    let trials: Vec<&TrialResult> = r.cells.iter().flat_map(|c| &c.trials).collect();
    if trials.is_empty() {
        return None;
    }
    let mut resets: Vec<f64> = trials.iter().map(|t| t.reset_s).collect();
    let total: f64 = resets.iter().sum();
    let spent: f64 = trials
        .iter()
        .map(|t| t.reset_s + t.warmup_s + t.measured_s)
        .sum();
    resets.sort_by(f64::total_cmp);
    let median = resets[resets.len() / 2];
    let longest = resets[resets.len() - 1];
    let copies = r.environment.targets.iter().any(|t| {
        t.server
            .settings
            .iter()
            .any(|(k, _)| k == "claimbench.reset")
    });
    Some(format!(
        "Resets: {total:.1} s of {spent:.1} s of trials ({:.0}%), median {median:.2} s, longest {longest:.2} s per trial{}.",
        if spent > 0.0 {
            total / spent * 100.0
        } else {
            0.0
        },
        if copies {
            " (copies of a pristine database; the first trial of each population and layout seeds it)"
        } else {
            " (each trial seeds its schema)"
        }
    ))
}

/// How to read the main table's arrival columns.
pub const TABLE_HOW: &str = "Queue wait and oldest pending are shown only for phases with arrivals (the phase column gives the rate): with a seeded backlog alone, every job waits from the trial's start, so both would measure the trial's clock rather than whether the pool keeps up.";

/// Added to [`TABLE_HOW`] when the run has claim-only cells.
pub const CLAIM_ONLY_HOW: &str = "Completed/s and duplicate executions are shown only for cells whose workers run the job's lifecycle: a claim-only phase claims and drops, so nothing completes or executes there, and its throughput is claimed/s.";

/// How to read the main table, for this run.
pub fn table_how(r: &RunResult) -> String {
    if r.cells.iter().any(CellResult::is_claim_only) {
        format!("{TABLE_HOW} {CLAIM_ONLY_HOW}")
    } else {
        TABLE_HOW.to_string()
    }
}

/// `text` where the cell measured it (`measured`), else "–".
pub fn measured_or_dash(measured: bool, text: String) -> String {
    if measured { text } else { "–".to_string() }
}

/// How to read the per-queue table.
pub const QUEUES_HOW: &str = "Per queue and cell: jobs of the queue completed per second after warm-up (mean over repetitions), and the sampler's age of the queue's oldest eligible pending job after warm-up (the worst repetition). A capped queue held at its max workers should not take throughput from the others, and an uncapped queue's oldest pending age should stay flat while it does.";

/// One row per cell and queue, for workloads with more than one queue.
pub fn queue_table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = KEY_HEADER.to_vec();
    header.extend([
        "queue",
        "completed/s",
        "oldest pending p99 ms",
        "oldest pending max ms",
    ]);
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    let mut rows = Vec::new();
    for c in &r.cells {
        let Some(first) = c.trials.first() else {
            continue;
        };
        for (i, q) in first.queues.iter().enumerate() {
            let each = || c.trials.iter().filter_map(move |t| t.queues.get(i));
            let (rate, _) = mean(each().map(|q| q.completed_per_s));
            let worst = |f: fn(&crate::results::QueueResult) -> Option<f64>| {
                each().filter_map(f).reduce(f64::max)
            };
            let mut row = cell_key(c);
            row.extend([
                q.queue.clone(),
                format!("{rate:.0}"),
                opt(worst(|q| q.oldest_pending_p99_ms)),
                opt(worst(|q| q.oldest_pending_max_ms)),
            ]);
            rows.push(row);
        }
    }
    (!rows.is_empty()).then_some((header, rows))
}

/// One of the tables a report shows after the main one when the run has something for
/// it: summary.md and report.html render the same list in the same order.
pub struct Section {
    pub title: &'static str,
    pub how: &'static str,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    /// Leading columns that hold names (left-aligned in Markdown).
    pub left: usize,
}

/// Per queue, max workers, table health, plans, cost per job, faults, shard moves, the
/// cluster's nodes, the pooler and the cleanup job, each when it applies.
pub fn sections(r: &RunResult) -> Vec<Section> {
    type Table = Option<(Vec<&'static str>, Vec<Vec<String>>)>;
    let all: [(&'static str, &'static str, Table, usize); 10] = [
        ("Per queue", QUEUES_HOW, queue_table(r), 7),
        ("Max workers", MAX_WORKERS_HOW, max_workers_table(r), 7),
        ("Table health", TABLE_HEALTH_HOW, table_health_table(r), 6),
        ("Plans", PLANS_HOW, plans_table(r), 8),
        (
            "Cost per job",
            super::cost::COST_HOW,
            super::cost::table(r),
            6,
        ),
        ("Faults", FAULTS_HOW, faults_table(r), 8),
        (
            "Shard moves",
            super::shards::SHARDS_HOW,
            super::shards::table(r),
            6,
        ),
        (
            "Cluster",
            super::cluster::CLUSTER_HOW,
            super::cluster::table(r),
            8,
        ),
        (
            "Pooler",
            super::pooler::POOLER_HOW,
            super::pooler::table(r),
            6,
        ),
        (
            "Cleanup job",
            super::cleanup::CLEANUP_HOW,
            super::cleanup::table(r),
            6,
        ),
    ];
    all.into_iter()
        .filter_map(|(title, how, table, left)| {
            let (header, rows) = table?;
            Some(Section {
                title,
                how,
                header,
                rows,
                left,
            })
        })
        .collect()
}

/// How to read the plans table.
pub const PLANS_HOW: &str = "Per cell, the claim statement's plan as PostgreSQL ran it once mid-trial (EXPLAIN ANALYZE with BUFFERS, inside a transaction that was rolled back; for naive and conditional, their select step; for a declared claim with a lock step, that step): its shape, root first, with the index each scan used; its execution time; the shared buffers it found cached and read in; and the rows its scans produced or filtered out, times their loops: the work behind one batch. A claim that examines many more rows than its batch is scanning past rows it cannot take. On MariaDB the sample is ANALYZE FORMAT=JSON of the claim's locking read (production's uncapped branch; a two-step strategy's select step; a declared claim's lock step): its table accesses with their keys, and InnoDB pages accessed (hit) and read from disk in the buffers column. The whole plan is in run.json (trials[].plan). \"plan only\" marks a claim that did not finish within the sample's 5 s (a claim that over-claims can run for seconds): its plan as EXPLAIN gave it without running it, so the shape is there and the measured columns are not. MySQL (ANALYZE FORMAT=JSON is MariaDB's) and SQL Server take no plan sample yet.";

/// One row per cell whose first trial has a plan sample. `None` when none has.
pub fn plans_table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = KEY_HEADER.to_vec();
    header.extend([
        "statement",
        "plan",
        "ms",
        "buffers hit/read",
        "rows examined",
    ]);
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .filter_map(|c| {
            let p = c.trials.iter().find_map(|t| t.plan.as_ref())?;
            let mut row = cell_key(c);
            let ran = |v: String| if p.analyzed { v } else { "–".into() };
            row.extend([
                if p.analyzed {
                    p.statement.clone()
                } else {
                    format!("{} (plan only)", p.statement)
                },
                p.shape.clone(),
                ran(format!("{:.2}", p.execution_ms)),
                ran(format!("{}/{}", p.shared_hit, p.shared_read)),
                ran(p.rows_examined.to_string()),
            ]);
            Some(row)
        })
        .collect();
    (!rows.is_empty()).then_some((header, rows))
}

/// How to read the table-health table.
pub const TABLE_HEALTH_HOW: &str = "Per cell, the hot table as the sampler saw it over the first trial (PostgreSQL's statistics): the most dead tuples at one reading, heap and index size at the first and last reading, and the share of the trial's row updates that were HOT (no index entry written, possible only when no indexed column changes and the page has room). Index growth with a low HOT share is the cost of indexing a column the claim updates, such as status. PostgreSQL publishes these counters from each backend at most once a second, so readings closer together than that can repeat a value.";

/// One row per cell whose first trial has table samples. `None` when none has.
pub fn table_health_table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = KEY_HEADER.to_vec();
    header.extend([
        "dead tuples (max)",
        "table MB first→last",
        "index MB first→last",
        "HOT updates",
    ]);
    let mb = |b: i64| b as f64 / 1_048_576.0;
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .filter_map(|c| {
            let s = &c.trials.first()?.table_series;
            let (first, last) = (s.first()?, s.last()?);
            let updates = last.updates - first.updates;
            let hot = last.hot_updates - first.hot_updates;
            let mut row = cell_key(c);
            row.extend([
                s.iter()
                    .map(|t| t.dead_tuples)
                    .max()
                    .unwrap_or(0)
                    .to_string(),
                format!("{:.1}→{:.1}", mb(first.table_bytes), mb(last.table_bytes)),
                format!("{:.1}→{:.1}", mb(first.index_bytes), mb(last.index_bytes)),
                if updates > 0 {
                    format!("{:.0}%", 100.0 * hot as f64 / updates as f64)
                } else {
                    "–".to_string()
                },
            ]);
            Some(row)
        })
        .collect();
    (!rows.is_empty()).then_some((header, rows))
}

/// How to read the faults table.
pub const FAULTS_HOW: &str = "Per trial with injected faults: what was injected (connection kills with their instants in seconds since the trial's start and the connections the server ended; server restarts with how long the server took to accept connections again; a snapshot held open by another session, and how long after its release the oldest-pending age came back to its level before it (at most twice its median before the hold, or 20 ms above it); workers that crashed after a claim or after a start; handlers that hung past the lease; runs of poison jobs, which always fail and end dead-lettered), how often workers reconnected and the worker time spent without a connection (summed, and the longest single outage), the jobs the faults stranded and the jobs the rescuer returned, the time from a stranding to its rescue, and the calls whose outcome died with their connection (a claim that may have committed, an effect that may have been written). Lost jobs and the ledger against the effects table are in the main table, as for any trial; there the effects table may count up to one more duplicate execution than the ledger per effect in doubt: the write committed, the reply died with the connection, and the rescued job ran again, a real duplicate the worker could not see.";

/// What was injected into one trial, in words; empty when nothing was.
fn injected(t: &crate::results::TrialResult) -> String {
    let k = &t.counts;
    let mut parts = Vec::new();
    if !t.connection_kills.is_empty() {
        let at: Vec<String> = t
            .connection_kills
            .iter()
            .map(|e| format!("{:.1}", e.at_s))
            .collect();
        let ended: u64 = t.connection_kills.iter().map(|e| e.connections).sum();
        parts.push(format!(
            "kills at {} s ({ended} connections)",
            at.join(", ")
        ));
    }
    if let Some(h) = &t.snapshot_held {
        let back = match h.recovery_s {
            Some(s) => format!("oldest pending back to its level {s:.1} s after"),
            None => "oldest pending not back to its level by the end".to_string(),
        };
        parts.push(format!(
            "snapshot held {:.1}–{:.1} s; {back}",
            h.from_s, h.to_s
        ));
    }
    for (events, what) in [
        (&t.server_restarts, "server restarted"),
        (&t.lock_service_restarts, "lock service restarted empty"),
    ] {
        if !events.is_empty() {
            let each: Vec<String> = events
                .iter()
                .map(|e| format!("{:.1} s (back in {:.1} s)", e.at_s, e.took_s))
                .collect();
            parts.push(format!("{what} at {}", each.join(", ")));
        }
    }
    for (n, what) in [
        (k.abandoned, "crashed after claim"),
        (k.crashed_after_start, "crashed after start"),
        (k.hangs, "hung"),
        (k.poisoned_runs, "poison runs"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.join("; ")
}

/// One row per trial that had faults injected. `None` when none had.
pub fn faults_table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = KEY_HEADER.to_vec();
    header.extend([
        "rep",
        "injected",
        "reconnects",
        "downtime ms (longest)",
        "stranded",
        "rescued",
        "time to rescue p50/max ms",
        "in doubt (claims/effects)",
        "dead-lettered",
    ]);
    let ms = |us: u64| format!("{:.0}", us as f64 / 1e3);
    let mut rows = Vec::new();
    for c in &r.cells {
        for t in &c.trials {
            let what = injected(t);
            if what.is_empty() {
                continue;
            }
            let k = &t.counts;
            let stranded = k.stranded_by_loss + k.abandoned + k.crashed_after_start + k.hung_batch;
            let mut row = cell_key(c);
            row.extend([
                (t.repetition + 1).to_string(),
                what,
                k.reconnects.to_string(),
                format!("{} ({})", ms(k.downtime_us), ms(k.max_outage_us)),
                stranded.to_string(),
                t.rescued_jobs.to_string(),
                t.time_to_rescue.as_ref().map_or("–".to_string(), |h| {
                    format!("{}/{}", ms(h.p50_us), ms(h.max_us))
                }),
                format!("{}/{}", k.claims_in_doubt, k.executions_in_doubt),
                t.reconciliation.db.dead_lettered.to_string(),
            ]);
            rows.push(row);
        }
    }
    (!rows.is_empty()).then_some((header, rows))
}

/// How to read the max-workers table.
pub const MAX_WORKERS_HOW: &str = "Per capped queue and cell, the most jobs held at once: exact, from every claim and release instant in the ledger (a lower bound), with the time spent above the limit; and as the sampler saw it at its readings, which miss overshoots shorter than its interval. With repetitions: the largest of their maxima, and their times above the limit added up.";

/// One row per cell and capped queue: the limit, the exact and the sampled figures.
/// `None` when no queue has a max workers limit.
pub fn max_workers_table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = KEY_HEADER.to_vec();
    header.extend([
        "queue",
        "max workers",
        "held at once (exact)",
        "ms above limit (exact)",
    ]);
    let mut rows = Vec::new();
    for c in &r.cells {
        let Some(first) = c.trials.first() else {
            continue;
        };
        for (i, q) in first.max_workers.iter().enumerate() {
            let each = || c.trials.iter().filter_map(move |t| t.max_workers.get(i));
            let exact = each().map(|m| m.max_held_exact).max().unwrap_or(0);
            let sampled = each().map(|m| m.max_observed_active).max().unwrap_or(0);
            let above: f64 = each().map(|m| m.ms_above_limit).sum();
            let mut row = cell_key(c);
            row.extend([
                q.queue.clone(),
                q.max_workers.to_string(),
                format!("{exact} (sampled {sampled})"),
                format!("{above:.1}"),
            ]);
            rows.push(row);
        }
    }
    (!rows.is_empty()).then_some((header, rows))
}

pub const HEADER: [&str; 18] = [
    "phase",
    "backend",
    "strategy",
    "layout",
    "workers",
    "batch",
    "reps",
    "claimed/s",
    "completed/s",
    "claim p50 ms",
    "claim p99 ms",
    "queue wait p99 ms",
    "oldest pending p99 ms",
    "dup claims",
    "dup exec ledger/effects",
    "lost",
    "lock wait",
    "CPU µs/claim",
];

/// The per-cell table every report shows: one row per cell, repetitions merged.
pub fn table(v: &RunView) -> ([&'static str; 18], Vec<Vec<String>>) {
    let rows = v
        .cells
        .iter()
        .map(|v| {
            let (c, f) = (v.cell, &v.figures);
            let mut row = cell_key(c);
            row.extend([
                c.trials.len().to_string(),
                v.claimed_per_s.show(),
                measured_or_dash(!f.claim_only, v.completed_per_s.show()),
                ms_of(&v.claim, v.claim.p50_us),
                ms_of(&v.claim, v.claim.p99_us),
                f.queue_wait_p99_ms
                    .map_or("–".into(), |v| format!("{v:.2}")),
                f.oldest_pending_p99_ms
                    .map_or("–".into(), |v| format!("{v:.0}")),
                v.duplicate_claims.to_string(),
                measured_or_dash(
                    !f.claim_only,
                    format!(
                        "{}/{}",
                        v.duplicate_executions_ledger, v.duplicate_executions_effects
                    ),
                ),
                v.lost.to_string(),
                // A broker's queue has no locks to wait on: no figure, not 0.0%.
                measured_or_dash(
                    c.backend.engine().runs_sql,
                    format!("{:.1}%", v.lock_wait_share * 100.0),
                ),
                format!("{:.1}", v.client_cpu_us_per_claim),
            ]);
            row
        })
        .collect();
    (HEADER, rows)
}

/// "target (server version)" for each database the run drove, joined with "and".
pub fn targets(r: &RunResult) -> String {
    let env = &r.environment;
    let one = |target: &str, version: &str| {
        format!(
            "{target} ({})",
            version.split(',').next().unwrap_or_default()
        )
    };
    if env.targets.is_empty() {
        return one(&env.target, &env.server.version);
    }
    env.targets
        .iter()
        .map(|t| one(&t.target, &t.server.version))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The backends of a run, in the order their cells first appear.
pub fn backends(r: &RunResult) -> Vec<BackendKind> {
    let mut kinds = Vec::new();
    for c in &r.cells {
        if !kinds.contains(&c.backend) {
            kinds.push(c.backend);
        }
    }
    kinds
}

/// With more than one backend: one row per cell (phase, strategy, layout, workers,
/// batch) with each backend's throughput, claim latency and duplicates next to each
/// other, and each later backend's throughput as a ratio to the first's. Claim-only runs
/// compare claimed jobs, others completed jobs.
pub fn side_by_side(v: &RunView) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let r = v.run;
    let kinds = backends(r);
    if kinds.len() < 2 {
        return None;
    }
    let claim_only = crate::report::plots::claim_only(r);
    let (rate_name, rate_of): (&str, fn(&CellView) -> super::view::Spread) = if claim_only {
        ("claimed/s", |v| v.claimed_per_s)
    } else {
        ("completed/s", |v| v.completed_per_s)
    };
    let mut header: Vec<String> = ["phase", "strategy", "layout", "workers", "batch"]
        .map(String::from)
        .to_vec();
    for k in &kinds {
        header.push(format!("{k} {rate_name}"));
    }
    for k in &kinds[1..] {
        header.push(format!("{k}/{}", kinds[0]));
    }
    for (what, _) in LATENCY_AND_DUPS {
        for k in &kinds {
            header.push(format!("{k} {what}"));
        }
    }
    let views = &v.cells;
    // The cell key without the backend: what the backends are compared on.
    let key = |v: &CellView| {
        let mut k = cell_key(v.cell);
        k.remove(1);
        k
    };
    let mut rows = Vec::new();
    let mut seen: Vec<Vec<String>> = Vec::new();
    // Without one cell run on two backends there is nothing to compare (a table's block
    // beside a broker's runs other strategies: the verdict sets those side by side).
    let shared = |v: &CellView| {
        views
            .iter()
            .any(|o| o.cell.backend != v.cell.backend && key(o) == key(v))
    };
    if !views.iter().any(shared) {
        return None;
    }
    for v in views {
        let row_key = key(v);
        if seen.contains(&row_key) {
            continue;
        }
        let cells: Vec<Option<&CellView>> = kinds
            .iter()
            .map(|k| {
                views
                    .iter()
                    .find(|o| o.cell.backend == *k && key(o) == row_key)
            })
            .collect();
        let mut row = row_key.clone();
        seen.push(row_key);
        row.extend(cells.iter().map(|o| match o {
            Some(v) => rate_of(v).show(),
            None => "–".into(),
        }));
        let rates: Vec<Option<f64>> = cells.iter().map(|o| o.map(|v| rate_of(v).mean)).collect();
        for later in &rates[1..] {
            row.push(match (rates[0], later) {
                (Some(first), Some(x)) if first > 0.0 => format!("{:.2}", x / first),
                _ => "–".into(),
            });
        }
        for (_, f) in LATENCY_AND_DUPS {
            row.extend(cells.iter().map(|o| o.map(f).unwrap_or_else(|| "–".into())));
        }
        rows.push(row);
    }
    Some((header, rows))
}

/// The settings that decide what a commit costs, per backend: a comparison between a
/// backend that fsyncs every commit and one that does not measures the disk, not the
/// claim, and the reader must see that next to the ratios.
pub fn durability(r: &RunResult) -> String {
    const KEYS: [&str; 4] = [
        "fsync",
        "synchronous_commit",
        "innodb_flush_log_at_trx_commit",
        "sync_binlog",
    ];
    let per_target: Vec<String> = r
        .environment
        .targets
        .iter()
        .map(|t| {
            let set: Vec<String> = t
                .server
                .settings
                .iter()
                .filter(|(k, _)| KEYS.contains(&k.as_str()))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!("{} {}", t.backend, set.join(" "))
        })
        .collect();
    format!(
        "Commit durability, which the ratios depend on: {}.",
        if per_target.is_empty() {
            "not recorded".to_string()
        } else {
            per_target.join("; ")
        }
    )
}

type CellColumn = fn(&CellView) -> String;

/// Claim latency in ms from a merged histogram, "–" when nothing was recorded.
fn ms_of(h: &crate::metrics::HistogramSummary, q: u64) -> String {
    match h.count {
        0 => "–".to_string(),
        _ => format!("{:.2}", q as f64 / 1000.0),
    }
}

/// The per-backend columns of `side_by_side` after throughput.
const LATENCY_AND_DUPS: [(&str, CellColumn); 3] = [
    ("claim p50 ms", |v| ms_of(&v.claim, v.claim.p50_us)),
    ("claim p99 ms", |v| ms_of(&v.claim, v.claim.p99_us)),
    ("dup claims", |v| v.duplicate_claims.to_string()),
];

/// One line per cell: its key (backend and layout only when the run has several),
/// jobs/s, claim p99, duplicate claims, lost jobs, and `!` for a cell that missed an
/// SLO or warned.
pub fn glance(v: &RunView) -> super::blocks::Table {
    let (r, cells) = (v.run, &v.cells);
    let several = |f: fn(&crate::results::CellResult) -> String| {
        let mut v: Vec<String> = cells.iter().map(|c| f(c.cell)).collect();
        v.sort();
        v.dedup();
        v.len() > 1
    };
    let phases =
        several(|c| c.phase.clone()) || r.cells.iter().any(|c| c.arrival_rate_per_s.is_some());
    let backends = several(|c| c.backend_label());
    let layouts = several(|c| c.index_layout.clone());
    let mut header = Vec::new();
    if phases {
        header.push("phase");
    }
    if backends {
        header.push("backend");
    }
    header.push("strategy");
    if layouts {
        header.push("layout");
    }
    header.extend([
        "workers",
        "batch",
        "jobs/s",
        "claim p99",
        "dup claims",
        "lost",
        "",
    ]);
    let rows = cells
        .iter()
        .map(|v| {
            let c = v.cell;
            let mut row = Vec::new();
            if phases {
                row.push(crate::results::phase_label(c));
            }
            if backends {
                row.push(c.backend_label());
            }
            row.push(c.strategy.to_string());
            if layouts {
                row.push(c.index_layout.clone());
            }
            let warned = c.trials.iter().any(|t| !t.warnings.is_empty())
                || !v.figures.misses(&r.slos).is_empty();
            row.extend([
                c.workers.to_string(),
                c.batch_size.to_string(),
                format!("{:.0}", v.figures.throughput),
                v.figures
                    .claim_p99_ms
                    .map_or("–".into(), crate::analysis::figures::fmt_ms),
                v.duplicate_claims.to_string(),
                v.lost.to_string(),
                if warned { "!".into() } else { String::new() },
            ]);
            row
        })
        .collect::<Vec<Vec<String>>>();
    let names = header.len() - 7;
    super::blocks::Table::of(&header, &rows, names)
}
