//! `summary.md`: the table a person reads first, in GitHub-flavoured Markdown (fit for a
//! CI job summary), rendered from a `RunResult` alone. The same text is printed at the
//! end of a run.

use super::view::{CellView, RunView};
use crate::backend::BackendKind;
use crate::results::{CellResult, RunResult, TrialResult};
use std::fmt::Write;

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
            let (at_production, levels) = match t.backend {
                crate::backend::BackendKind::Postgres => (
                    "fsync, synchronous_commit and full_page_writes on",
                    ", workloads/sync-commit.toml each synchronous_commit level",
                ),
                _ => ("innodb_flush_log_at_trx_commit = 1", ""),
            };
            let except = match production.as_slice() {
                [] => String::new(),
                blocks => format!(
                    ", except in {} (durability = \"production\": {at_production}; the verdict compares them)",
                    blocks.join(", ")
                ),
            };
            notes.push((
                "Durability",
                format!(
                    "the {} server ran with {}{except}: a commit there is not flushed to disk before it returns, so its claim latencies are lower and its rates higher than a production server's (workloads/durability.toml measures the difference on this host{levels}).",
                    t.backend,
                    off.join(", ")
                ),
            ));
        }
    }
    if let Some(n) = network_note(r) {
        notes.push(("Network", n));
    }
    if let Some(n) = super::cluster::note(r) {
        notes.push(("Cluster", n));
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

pub fn render(r: &RunResult) -> String {
    render_view(&RunView::of(r))
}

/// summary.md from the run's view, computed once for every format of a report.
pub fn render_view(v: &RunView) -> String {
    let r = v.run;
    let mut out = String::new();
    let _ = writeln!(out, "# claimbench run `{}`\n", r.run_id);
    let env = &r.environment;
    let _ = writeln!(
        out,
        "Workload **{}** ({}, sha256 `{}`) on {}, {} cores, claimbench {}{}.\n",
        crate::markdown::escape(&r.workload.name),
        crate::markdown::code(&r.workload.path),
        &r.workload.sha256[..r.workload.sha256.len().min(12)],
        crate::markdown::escape(&targets(r)),
        env.logical_cores,
        env.claimbench_version,
        env.git_revision
            .as_deref()
            .map(|g| format!(" ({g})"))
            .unwrap_or_default(),
    );
    for (label, text) in server_notes(r) {
        let _ = writeln!(out, "**{label}**: {}\n", crate::markdown::escape(&text));
    }
    if r.interrupted {
        let _ = writeln!(
            out,
            "**Partial run**: {}.\n",
            r.stop_reason.as_deref().unwrap_or("stopped early")
        );
    }
    if !v.verdict.is_empty() {
        let verdict: String = v.verdict.iter().map(|s| format!("- {s}\n")).collect();
        let _ = writeln!(out, "## Verdict\n\n{verdict}");
    }
    let (header, rows) = table(v);
    markdown_table(&mut out, &header, &rows, 4);
    let _ = writeln!(out, "\n{}", table_how(r));
    if let Some(line) = reset_line(r) {
        let _ = writeln!(out, "\n{line}");
    }
    if !r.slos.is_empty() {
        let (recs, notes) = crate::analysis::recommend::meaningful(r, &r.slos);
        let _ = writeln!(
            out,
            "\n## Recommendation\n\n{}",
            super::answers::recommendation_text(&recs, &r.slos)
        );
        for n in notes {
            let _ = writeln!(out, "{}\n", crate::markdown::escape(&n));
        }
    }
    if let Some((header, rows)) = super::answers::gate_rows(r) {
        let _ = writeln!(out, "\n## Gates\n\n{}\n", super::answers::GATES_HOW);
        markdown_table(&mut out, &header, &rows, 2);
    }
    if let Some((header, rows)) = super::answers::search_rows(r) {
        let _ = writeln!(
            out,
            "\n## Sustainable arrival rate\n\n{}\n",
            super::answers::SEARCH_HOW
        );
        markdown_table(&mut out, &header, &rows, 4);
    }
    if let Some((header, rows)) = super::answers::confidence_rows(r) {
        let _ = writeln!(
            out,
            "\n## Confidence\n\n{}\n",
            super::answers::CONFIDENCE_HOW
        );
        markdown_table(&mut out, &header, &rows, 4);
    }
    if let Some((header, rows)) = super::answers::usl_rows(r) {
        let _ = writeln!(out, "\n## Scalability fit\n\n{}\n", super::answers::USL_HOW);
        markdown_table(&mut out, &header, &rows, 1);
    }
    if let Some((header, rows)) = side_by_side(v) {
        let _ = writeln!(
            out,
            "\n## Backends side by side\n\nThe same cells on each backend, run one after the other in this run; ratios are to the first backend.\n"
        );
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        markdown_table(&mut out, &header, &rows, 2);
        let _ = writeln!(out, "\n{}", durability(r));
    }
    for s in sections(r) {
        let _ = writeln!(out, "\n## {}\n\n{}\n", s.title, s.how);
        markdown_table(&mut out, &s.header, &s.rows, s.left);
    }
    if !v.warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in &v.warnings {
            out.push_str(w);
            out.push('\n');
        }
    }
    out.push_str(
        "\nclaimed/s and completed/s are steady-state means after warm-up (± is the spread across repetitions); latencies merge every repetition's histogram; dup claims come from the claim ledger, dup exec from the ledger and from the effects table (they must agree).\n",
    );
    out
}

pub use crate::markdown::table as markdown_table;
pub use crate::results::{KEY_HEADER, cell_key, phase_label};

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

/// Per queue, max workers, table health, plans, cost per job, faults and the cluster's
/// nodes, each when it applies.
pub fn sections(r: &RunResult) -> Vec<Section> {
    type Table = Option<(Vec<&'static str>, Vec<Vec<String>>)>;
    let all: [(&'static str, &'static str, Table, usize); 8] = [
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
pub const PLANS_HOW: &str = "Per cell, the claim statement's plan as PostgreSQL ran it once mid-trial (EXPLAIN ANALYZE with BUFFERS, inside a transaction that was rolled back; for naive and conditional, their select step): its shape, root first, with the index each scan used; its execution time; the shared buffers it found cached and read in; and the rows its scans produced or filtered out, times their loops: the work behind one batch. A claim that examines many more rows than its batch is scanning past rows it cannot take. On MariaDB the sample is ANALYZE FORMAT=JSON of the claim's locking read (production's uncapped branch; a two-step strategy's select step): its table accesses with their keys, and InnoDB pages accessed (hit) and read from disk in the buffers column. The whole plan is in run.json (trials[].plan). \"plan only\" marks a claim that did not finish within the sample's 5 s (a claim that over-claims can run for seconds): its plan as EXPLAIN gave it without running it, so the shape is there and the measured columns are not. MySQL and SQL Server take no plan sample yet.";

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
    if !t.server_restarts.is_empty() {
        let each: Vec<String> = t
            .server_restarts
            .iter()
            .map(|e| format!("{:.1} s (back in {:.1} s)", e.at_s, e.took_s))
            .collect();
        parts.push(format!("server restarted at {}", each.join(", ")));
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
                format!("{:.1}%", v.lock_wait_share * 100.0),
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

/// One line per cell and kind of warning: repetitions that warn alike are folded into
/// one line, quoting the first occurrence.
pub fn warning_lines(r: &RunResult) -> Vec<String> {
    let mut lines = Vec::new();
    for c in &r.cells {
        let mut kinds: Vec<(
            std::mem::Discriminant<crate::warnings::Warning>,
            String,
            Vec<u32>,
        )> = Vec::new();
        for t in &c.trials {
            for w in &t.warnings {
                let d = std::mem::discriminant(w);
                match kinds.iter_mut().find(|(k, _, _)| *k == d) {
                    Some((_, _, reps)) => reps.push(t.repetition + 1),
                    None => kinds.push((d, w.to_string(), vec![t.repetition + 1])),
                }
            }
        }
        for (_, first, reps) in kinds {
            let which = if reps.len() == 1 {
                format!("rep {}", reps[0])
            } else {
                format!(
                    "{} of {} reps, first rep {}",
                    reps.len(),
                    c.trials.len(),
                    reps[0]
                )
            };
            // The phase first, as the per-trial lines name a cell: two blocks can hold
            // the same backend, strategy, layout, workers and batch.
            let phase = match c.phase.as_str() {
                "" => String::new(),
                p => format!("{p} "),
            };
            lines.push(format!(
                "- {phase}{} {} {} w={} b={} ({which}): {first}",
                c.backend, c.strategy, c.index_layout, c.workers, c.batch_size
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendKind;
    use crate::metrics::{HistogramSummary, new_histogram};
    use crate::strategy::Strategy;
    use crate::warnings::Warning;

    fn trial(rep: u32, claimed: f64, latencies_us: &[u64], warnings: Vec<Warning>) -> TrialResult {
        let mut h = new_histogram();
        for &v in latencies_us {
            h.record(v).unwrap();
        }
        let mut t = TrialResult {
            repetition: rep,
            claimed_per_s: claimed,
            completed_per_s: claimed / 2.0,
            claim_latency: HistogramSummary::from_histogram(&h),
            warnings,
            ..TrialResult::default()
        };
        t.duplicates.ledger.duplicate_claims = 3;
        t
    }

    /// A run with an id and a workload name, for the tests to add cells to.
    fn named_run() -> RunResult {
        RunResult {
            run_id: "20260101-000000-t".into(),
            workload: crate::results::WorkloadRecord {
                name: "t".into(),
                sha256: "abcdef0123456789".into(),
                ..Default::default()
            },
            ..RunResult::default()
        }
    }

    #[test]
    fn a_name_with_markdown_in_it_cannot_break_a_table_or_make_a_link() {
        let mut out = String::new();
        let rows = vec![
            vec!["q|x".to_string(), "**FAIL**".to_string()],
            vec!["[click](http://x) *b*\nrow".to_string(), "1".to_string()],
        ];
        markdown_table(&mut out, &["queue", "result"], &rows, 1);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert_eq!(lines[2], "| q\\|x | **FAIL** |");
        assert_eq!(lines[3], "| [click\\](http://x) \\*b\\* row | 1 |");
    }

    #[test]
    fn rows_merge_repetitions_and_warnings_fold_per_cell() {
        let few = |n| Warning::FewSamples { claims: n };
        let r = RunResult {
            cells: vec![CellResult {
                phase: String::new(),
                arrival_rate_per_s: None,
                arrival_rate_from: None,
                backend: BackendKind::Postgres,
                strategy: Strategy::NAIVE,
                index_layout: "fetch-order".into(),
                workers: 4,
                batch_size: 10,
                session_settings: Vec::new(),
                server_settings: Vec::new(),
                claim_only: None,
                trials: vec![
                    trial(0, 900.0, &[1000, 2000], vec![few(2)]),
                    trial(1, 1100.0, &[3000, 4000], vec![few(3)]),
                ],
            }],
            ..named_run()
        };
        let md = render(&r);
        // mean 1000, sample sd 141 = 14%; p50 over both reps' histograms: 2 ms.
        assert!(
            md.contains(
                "| postgres | naive | fetch-order | 4 | 10 | 2 | 1000 ±14% | 500 ±14% | 2.00 |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 6 | 0/0 | 0 |"),
            "dup claims summed over reps: {md}"
        );
        assert!(
            md.contains(
                "- postgres naive fetch-order w=4 b=10 (2 of 2 reps, first rep 1): only 2 claims"
            ),
            "{md}"
        );
        assert_eq!(
            md.matches("only 2 claims").count(),
            1,
            "folded into one line: {md}"
        );
    }

    /// A claim-only cell shows no completions or executions, which it cannot have, and
    /// its recommendation ranks pools by what they claimed; a full cell keeps its
    /// numbers beside it.
    #[test]
    fn claim_only_cells_show_dashes_for_what_they_do_not_run() {
        // No duplicates: a strategy that duplicated gets no recommendation.
        let mut t = trial(0, 1000.0, &[1000, 2000], vec![]);
        t.duplicates.ledger.duplicate_claims = 0;
        let cell = |phase: &str, claim_only| CellResult {
            phase: phase.into(),
            claim_only: Some(claim_only),
            ..CellResult::fetch_order(Strategy::PRODUCTION, 4, 1, vec![t.clone()])
        };
        let r = RunResult {
            cells: vec![cell("full", false), cell("claims", true)],
            slos: vec![crate::slo::Slo::parse("completed_per_s>=100").unwrap()],
            ..named_run()
        };
        let md = render(&r);
        let row = |phase: &str| {
            md.lines()
                .find(|l| l.starts_with(&format!("| {phase} |")))
                .unwrap_or_else(|| panic!("no {phase} row: {md}"))
                .to_string()
        };
        assert!(row("full").contains("| 1000 | 500 | 1.00 |"), "{md}");
        assert!(row("full").contains("| 0 | 0/0 | 0 |"), "{md}");
        assert!(row("claims").contains("| 1000 | – | 1.00 |"), "{md}");
        assert!(row("claims").contains("| 0 | – | 0 |"), "{md}");
        assert!(md.contains(CLAIM_ONLY_HOW), "{md}");
        // The claim-only phase cannot measure completed/s: not a miss, not a pass, and
        // said why; the full phase is judged on it.
        assert!(
            md.contains("[claims]: no SLO can be judged here (completed_per_s not measured: the phase is claim-only)"),
            "{md}"
        );
        assert!(
            md.contains("| 4 | 1 | 1000 | 2.0 ms | – | – | – (nothing to judge by) |"),
            "{md}"
        );
        assert!(
            md.contains("[full]: 4 workers, batch 1 meet completed_per_s>=100 (500 jobs/s"),
            "{md}"
        );
        assert!(md.contains("| workers | batch | claimed/s |"), "{md}");
        assert!(md.contains("| workers | batch | completed/s |"), "{md}");

        let mut plain = r.clone();
        plain.cells.truncate(1);
        assert!(
            !render(&plain).contains(CLAIM_ONLY_HOW),
            "only when it applies"
        );
    }

    #[test]
    fn backends_side_by_side_pair_the_same_cell_and_take_ratios_to_the_first() {
        let cell = |backend, strategy, claimed: f64, lat: &[u64]| CellResult {
            phase: String::new(),
            arrival_rate_per_s: None,
            arrival_rate_from: None,
            backend,
            strategy,
            index_layout: "fetch-order".into(),
            workers: 16,
            batch_size: 10,
            session_settings: Vec::new(),
            server_settings: Vec::new(),
            claim_only: None,
            trials: vec![trial(0, claimed, lat, vec![])],
        };
        let mut r = RunResult {
            cells: vec![
                cell(BackendKind::Postgres, Strategy::PRODUCTION, 4000.0, &[1000]),
                cell(BackendKind::Mysql, Strategy::PRODUCTION, 1000.0, &[4000]),
                cell(BackendKind::Postgres, Strategy::NAIVE, 6000.0, &[500]),
            ],
            ..RunResult::default()
        };
        r.cells[0].trials[0].counts.jobs_completed = 1;
        let (header, rows) = side_by_side(&RunView::of(&r)).expect("two backends");
        assert_eq!(
            header[5..8],
            [
                "postgres completed/s",
                "mysql completed/s",
                "mysql/postgres"
            ]
        );
        // completed/s is half of claimed/s in `trial`.
        assert_eq!(
            rows[0][..10],
            [
                "–",
                "production",
                "fetch-order",
                "16",
                "10",
                "2000",
                "500",
                "0.25",
                "1.00",
                "4.00"
            ]
        );
        assert_eq!(
            rows[1][5..8],
            ["3000", "–", "–"],
            "a cell one backend lacks"
        );
        // The same cell in another phase is another row, not folded into the first.
        let mut later = r.clone();
        for c in &mut later.cells {
            c.phase = "later".into();
        }
        let mut both = r.clone();
        both.cells.extend(later.cells);
        let (_, rows) = side_by_side(&RunView::of(&both)).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[0][0].as_str(), rows[2][0].as_str()), ("–", "later"));
        let target = |backend, settings: &[(&str, &str)]| crate::results::TargetRecord {
            backend,
            target: String::new(),
            embedded: false,
            session_settings: Vec::new(),
            standbys: Vec::new(),
            cluster: None,
            server: crate::backend::ServerInfo {
                version: String::new(),
                settings: settings
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
        };
        r.environment.targets = vec![
            target(
                BackendKind::Postgres,
                &[("fsync", "off"), ("work_mem", "4MB")],
            ),
            target(
                BackendKind::Mysql,
                &[
                    ("innodb_flush_log_at_trx_commit", "1"),
                    ("sync_binlog", "0"),
                ],
            ),
        ];
        let md = render(&r);
        assert!(md.contains("## Backends side by side"), "{md}");
        assert!(
            md.contains("depend on: postgres fsync=off; mysql innodb_flush_log_at_trx_commit=1 sync_binlog=0."),
            "{md}"
        );
        r.cells.retain(|c| c.backend == BackendKind::Postgres);
        assert!(
            side_by_side(&RunView::of(&r)).is_none(),
            "one backend: no comparison"
        );
    }

    #[test]
    fn an_empty_cell_renders_dashes_not_a_panic() {
        let r = RunResult {
            workload: crate::results::WorkloadRecord::default(),
            cells: vec![CellResult {
                phase: String::new(),
                arrival_rate_per_s: None,
                arrival_rate_from: None,
                backend: BackendKind::Postgres,
                strategy: Strategy::PRODUCTION,
                index_layout: "pk-only".into(),
                workers: 1,
                batch_size: 1,
                session_settings: Vec::new(),
                server_settings: Vec::new(),
                claim_only: None,
                trials: vec![TrialResult::default()],
            }],
            ..RunResult::default()
        };
        let md = render(&r);
        assert!(md.contains("| 0 | 0 | – | – | – |"), "{md}");
    }

    /// A server with a durability shortcut or standbys is named at the top of every
    /// format; one at production durability with none is not.
    #[test]
    fn servers_with_standbys_or_durability_off_are_named_at_the_top() {
        use crate::results::{ServerInfo, StandbyState, TargetRecord};
        let target = |settings: &[(&str, &str)], standbys: Vec<StandbyState>| TargetRecord {
            backend: BackendKind::Postgres,
            target: String::new(),
            embedded: true,
            session_settings: Vec::new(),
            standbys,
            cluster: None,
            server: ServerInfo {
                version: String::new(),
                settings: settings
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
        };
        let standby = StandbyState {
            name: "claimbench_standby".into(),
            state: "streaming".into(),
            sync_state: "sync".into(),
            replay_lag_ms: None,
            replay_behind_bytes: 0,
        };
        let mut r = RunResult::default();
        r.environment.targets = vec![target(
            &[
                ("fsync", "off"),
                ("synchronous_commit", "on"),
                ("full_page_writes", "off"),
            ],
            vec![standby],
        )];
        let notes = server_notes(&r);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(
            notes[0],
            (
                "Topology",
                "the postgres server was a primary streaming to claimbench_standby (sync, streaming).".to_string()
            )
        );
        assert_eq!(notes[1].0, "Durability");
        assert!(
            notes[1]
                .1
                .starts_with("the postgres server ran with fsync, full_page_writes off:"),
            "{}",
            notes[1].1
        );
        let md = render(&r);
        assert!(
            md.contains("**Durability**: the postgres server ran with fsync, full_page_writes off"),
            "{md}"
        );
        r.environment.targets = vec![target(
            &[
                ("fsync", "on"),
                ("synchronous_commit", "on"),
                ("full_page_writes", "on"),
            ],
            Vec::new(),
        )];
        assert!(server_notes(&r).is_empty());

        // The embedded MariaDB's shortcut, and production durability in one block.
        let mut mariadb = target(&[("innodb_flush_log_at_trx_commit", "2")], Vec::new());
        mariadb.backend = BackendKind::Mysql;
        r.environment.targets = vec![mariadb];
        r.cells = vec![CellResult {
            backend: BackendKind::Mysql,
            phase: "production".into(),
            server_settings: vec![("innodb_flush_log_at_trx_commit".into(), "1".into())],
            ..CellResult::fetch_order(Strategy::PRODUCTION, 1, 1, Vec::new())
        }];
        let notes = server_notes(&r);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].1.starts_with(
                "the mysql server ran with innodb_flush_log_at_trx_commit = 2, except in production (durability = \"production\": innodb_flush_log_at_trx_commit = 1;"
            ) && !notes[0].1.contains("sync-commit"),
            "{}",
            notes[0].1
        );
        r.environment.targets[0].server.settings =
            vec![("innodb_flush_log_at_trx_commit".into(), "1".into())];
        assert!(server_notes(&r).is_empty());
    }
}
