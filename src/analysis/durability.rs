//! What stronger commit settings cost, told in the verdict: each `synchronous_commit`
//! level against the weakest in the run, and production durability against the
//! embedded servers' shortcuts, the same cells otherwise, at the smallest pool.

use super::figures::{CellFigures, fmt_ms};
use crate::results::{CellResult, RunResult};

/// The verdict's sentences on commit settings, levels first.
pub(super) fn sentences(r: &RunResult, out: &mut Vec<String>) {
    commit_level_sentences(r, out);
    shortcut_sentences(r, out);
}

/// The `synchronous_commit` a cell's workers committed with: their session's, else
/// their block's server setting, else the server's.
pub(super) fn commit_level(r: &RunResult, c: &CellResult) -> Option<String> {
    let own = c
        .session_settings
        .iter()
        .find(|(k, _)| k == "synchronous_commit");
    let server = || {
        let t = r
            .environment
            .targets
            .iter()
            .find(|t| t.backend == c.backend)?;
        t.server
            .settings
            .iter()
            .find(|(k, _)| k == "synchronous_commit")
    };
    let block = || {
        c.server_settings
            .iter()
            .find(|(k, _)| k == "synchronous_commit")
    };
    own.or_else(block).or_else(server).map(|(_, v)| v.clone())
}

/// What `to` costs against `from`, the same cell at a stronger setting: claim p99 and
/// completed jobs/s side by side ("+0.23 ms on claim p99 (0.90 ms → 1.1 ms) and 22% of
/// throughput (1775 → 1387 jobs/s)").
fn cost(from: &CellFigures, to: &CellFigures) -> String {
    let p99 = match (from.claim_p99_ms, to.claim_p99_ms) {
        (Some(x), Some(y)) => format!(
            "{:+.2} ms on claim p99 ({} → {})",
            y - x,
            fmt_ms(x),
            fmt_ms(y)
        ),
        _ => "an unmeasured claim p99".into(),
    };
    let share = if from.throughput > 0.0 {
        (1.0 - to.throughput / from.throughput) * 100.0
    } else {
        0.0
    };
    if share < 0.0 {
        // The stronger setting ran faster: not a cost, and said so (a fast disk, or the
        // host's noise between the two cells).
        format!(
            "{p99} and no throughput cost ({:.0}% more: {:.0} → {:.0} jobs/s)",
            -share, from.throughput, to.throughput
        )
    } else {
        format!(
            "{p99} and {share:.0}% of throughput ({:.0} → {:.0} jobs/s)",
            from.throughput, to.throughput
        )
    }
}

/// What each `synchronous_commit` level cost against the weakest one the run has, for
/// the same cell otherwise (strategy, layout, workers, batch, arrivals), at the smallest
/// worker count: one worker waits out every commit in turn, so the level's wait shows
/// in full there, where a larger pool on a small host is bound by its cores and the
/// server's group commit hides the wait. Claim p99 and completed jobs/s, side by side.
fn commit_level_sentences(r: &RunResult, out: &mut Vec<String>) {
    const WEAKEST_FIRST: [&str; 5] = ["off", "local", "remote_write", "on", "remote_apply"];
    let rank = |l: &str| WEAKEST_FIRST.iter().position(|x| *x == l);
    let levelled: Vec<(&CellResult, String)> = r
        .cells
        .iter()
        .filter_map(|c| Some((c, commit_level(r, c)?)))
        .filter(|(_, l)| rank(l).is_some())
        .collect();
    let Some(workers) = levelled.iter().map(|(c, _)| c.workers).min() else {
        return;
    };
    let at: Vec<&(&CellResult, String)> = levelled
        .iter()
        .filter(|(c, _)| c.workers == workers)
        .collect();
    let Some((base, base_level)) = at.iter().min_by_key(|(_, l)| rank(l)).map(|x| (x.0, &x.1))
    else {
        return;
    };
    let same = |c: &CellResult| {
        (c.backend, c.strategy.clone(), c.batch_size)
            == (base.backend, base.strategy.clone(), base.batch_size)
            && c.index_layout == base.index_layout
            && c.arrival_rate_per_s == base.arrival_rate_per_s
            // A block at another durability changes fsync too: shortcut_sentences.
            && c.server_settings == base.server_settings
    };
    let b = CellFigures::of(base);
    let mut costs = Vec::new();
    let mut others: Vec<&&(&CellResult, String)> = at
        .iter()
        .filter(|(c, l)| l != base_level && same(c))
        .collect();
    others.sort_by_key(|(_, l)| rank(l));
    for (c, level) in others {
        costs.push(format!("{level} {}", cost(&b, &CellFigures::of(c))));
    }
    if costs.is_empty() {
        return;
    }
    let standby = base
        .trials
        .iter()
        .flat_map(|t| &t.standbys)
        .find(|s| s.sync_state == "sync")
        .map_or(String::new(), |s| {
            format!(" with {} as a synchronous standby", s.name)
        });
    out.push(format!(
        "synchronous_commit against {base_level}{standby}, {} at {workers} worker{}, batch {}: {}.",
        base.strategy,
        if workers == 1 { "" } else { "s" },
        base.batch_size,
        costs.join("; ")
    ));
}

/// What production durability (`durability = "production"`: fsync, synchronous_commit
/// and full_page_writes on; on MariaDB the redo log flushed at every commit) costs against the embedded default's shortcuts, for the same
/// cell otherwise, at the smallest pool that ran both: claim p99 and throughput side by
/// side, so the shortcut is a measured number rather than a footnote.
fn shortcut_sentences(r: &RunResult, out: &mut Vec<String>) {
    // Whether the block flushed at commit: fsync on PostgreSQL, the redo log's flush at
    // every commit on MariaDB; `None` where no block set it.
    let fsync = |c: &CellResult| {
        c.server_settings
            .iter()
            .find_map(|(k, v)| match k.as_str() {
                "fsync" => Some(v == "on"),
                "innodb_flush_log_at_trx_commit" => Some(v == "1"),
                _ => None,
            })
    };
    let same = |a: &CellResult, b: &CellResult| {
        (a.backend, &a.strategy, a.workers, a.batch_size)
            == (b.backend, &b.strategy, b.workers, b.batch_size)
            && a.index_layout == b.index_layout
            && a.arrival_rate_per_s == b.arrival_rate_per_s
            && a.session_settings == b.session_settings
    };
    let mut pairs: Vec<(&CellResult, &CellResult)> = r
        .cells
        .iter()
        .filter(|c| fsync(c) == Some(false))
        .filter_map(|off| {
            let on = r
                .cells
                .iter()
                .find(|c| fsync(c) == Some(true) && same(off, c))?;
            Some((off, on))
        })
        .collect();
    let Some(workers) = pairs.iter().map(|(c, _)| c.workers).min() else {
        return;
    };
    pairs.retain(|(c, _)| c.workers == workers);
    for (off, on) in pairs {
        let cost = cost(&CellFigures::of(off), &CellFigures::of(on));
        let settings = match off.backend {
            crate::backend::BackendKind::Postgres => {
                "fsync, synchronous_commit, full_page_writes on"
            }
            _ => "innodb_flush_log_at_trx_commit = 1",
        };
        let backend = match r.environment.targets.len() {
            1 => String::new(),
            _ => format!("on {}, ", off.backend),
        };
        out.push(format!(
            "production durability ({settings}; {}) against the embedded default's shortcuts ({}), {backend}{} at {workers} worker{}, batch {}: {cost}.",
            on.phase,
            off.phase,
            off.strategy,
            if workers == 1 { "" } else { "s" },
            off.batch_size,
        ));
    }
}

/// A production cell at batch 10 completing `per_s` jobs/s, its phase named for and its
/// workers committing at `level` (none: the server's); for the verdict's tests.
#[cfg(test)]
pub(super) fn at_level(level: Option<&str>, workers: u32, per_s: f64) -> CellResult {
    let t = crate::results::TrialResult {
        completed_per_s: per_s,
        ..Default::default()
    };
    let mut c =
        CellResult::fetch_order(crate::strategy::Strategy::PRODUCTION, workers, 10, vec![t]);
    if let Some(l) = level {
        c.phase = l.into();
        c.session_settings = vec![("synchronous_commit".into(), l.into())];
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each level against the weakest, at the smallest pool, strongest last; levels a
    /// cell does not set come from the server's settings.
    #[test]
    fn each_commit_level_is_costed_against_the_weakest_at_the_smallest_pool() {
        let r = RunResult {
            cells: vec![
                at_level(Some("remote_apply"), 1, 600.0),
                at_level(Some("off"), 8, 400.0),
                at_level(Some("off"), 1, 1000.0),
                at_level(Some("on"), 1, 700.0),
            ],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        commit_level_sentences(&r, &mut out);
        assert_eq!(
            out,
            [
                "synchronous_commit against off, production at 1 worker, batch 10: on an unmeasured claim p99 and 30% of throughput (1000 → 700 jobs/s); remote_apply an unmeasured claim p99 and 40% of throughput (1000 → 600 jobs/s)."
            ]
        );
        // A stronger level that ran faster is not a cost, and is not written as one.
        let r = RunResult {
            cells: vec![
                at_level(Some("off"), 1, 73.0),
                at_level(Some("on"), 1, 129.0),
            ],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        commit_level_sentences(&r, &mut out);
        assert!(
            out[0].ends_with(
                "on an unmeasured claim p99 and no throughput cost (77% more: 73 → 129 jobs/s)."
            ),
            "{out:?}"
        );
        // One level only (the embedded default's, from the server): nothing to cost.
        let mut r = RunResult {
            cells: vec![at_level(None, 8, 1000.0), at_level(None, 1, 300.0)],
            ..RunResult::default()
        };
        r.environment.targets.push(crate::results::TargetRecord {
            backend: crate::backend_kind::BackendKind::Postgres,
            target: "embedded".into(),
            embedded: true,
            server: crate::results::ServerInfo {
                version: "15".into(),
                settings: vec![("synchronous_commit".into(), "off".into())],
            },
            session_settings: Vec::new(),
            standbys: Vec::new(),
            cluster: None,
            pooler: None,
            their_pooler: None,
        });
        let mut out = Vec::new();
        commit_level_sentences(&r, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
