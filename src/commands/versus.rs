//! `run --versus-pg-bindir DIR`: the same workload on two embedded PostgreSQL servers,
//! one from the machine's (or `--pg-bindir`'s) programs and one from DIR's, every cell
//! a pair run interleaved round by round, so "our claim on 15 against 18" is one run
//! judged by paired ratios rather than two runs minutes or nights apart.

use anyhow::{Result, bail};
use claimbench::backend::{BackendKind, DbTarget};
use claimbench::results::TargetRecord;
use claimbench::workload::{TopologyKind, Workload};
use std::path::{Path, PathBuf};

/// `dir` as a checked programs directory, when the workload can run on two embedded
/// servers side by side: PostgreSQL alone, no `--db`, one server each (no standby, no
/// pooler, no restart or failover, which act on one server), and blocks that are not
/// searches (each side would search its own rates) or already paired, each with enough
/// repetitions to judge its rounds. A derived rate is A's cell's, for both sides.
pub(crate) fn check(
    w: &Workload,
    targets: &[(BackendKind, Option<DbTarget>)],
    dir: &Path,
) -> Result<PathBuf> {
    let dir = claimbench::embedded::checked_bindir(dir)
        .map_err(|e| anyhow::anyhow!("--versus-pg-bindir {}: {e}", dir.display()))?;
    let path = w.source_path.display();
    if !matches!(targets, [(BackendKind::Postgres, None)]) {
        bail!(
            "--versus-pg-bindir runs two embedded PostgreSQL servers: {path} must run on postgres alone (matrix.backends), without --db"
        );
    }
    if w.topology.kind != TopologyKind::Single || w.topology.pooler.is_some() {
        bail!(
            "--versus-pg-bindir runs one server per side: drop {path}'s [topology] (a standby or a pooler) for this run"
        );
    }
    if w.uses_lock_service() {
        bail!(
            "--versus-pg-bindir: {path} runs lock-service, whose leases live in one Redis beside one server; run it without --versus-pg-bindir"
        );
    }
    if !w.faults.restart_at.is_empty() || !w.faults.failover_at.is_empty() {
        bail!(
            "--versus-pg-bindir: {path}'s restart and failover faults act on one server; run them without it"
        );
    }
    for (i, m) in w.matrices.iter().enumerate() {
        let field = if w.matrices.len() == 1 {
            "matrix".to_string()
        } else {
            format!("matrix[{i}]")
        };
        let what = if m.phase.paired.is_some() {
            "paired (it pairs its own variants; a run pairs one thing at a time)"
        } else if m.phase.search.is_some() {
            "search (each side would search its own rates)"
        } else {
            let rounds = m.phase.repetitions.unwrap_or(w.trial.repetitions);
            let least = claimbench::workload::Pairing::MIN_ROUNDS;
            if rounds < least {
                bail!(
                    "--versus-pg-bindir judges each cell by its rounds: {path}'s {field} runs {rounds} repetitions, and it takes at least {least} (give --repetitions 10)"
                );
            }
            continue;
        };
        bail!("--versus-pg-bindir cannot run {path}'s {field}: it sets {what}");
    }
    Ok(dir)
}

/// The two servers' names in tables: their versions, and the side when both are one.
pub(crate) fn labels(records: &[TargetRecord]) -> [String; 2] {
    // "PostgreSQL 15.19 (Debian 15.19-0+deb12u1) on x86_64-pc-linux-gnu, …" → "15.19".
    let version = |r: &TargetRecord| {
        r.server
            .version
            .split_whitespace()
            .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or("?")
            .to_string()
    };
    let (a, b) = (version(&records[0]), version(&records[1]));
    if a == b {
        [format!("{a} (A)"), format!("{b} (B)")]
    } else {
        [a, b]
    }
}
