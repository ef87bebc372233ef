//! Workload files: TOML as the user typed it (`raw.rs`), checked field by field
//! (`validate/`) and as a whole (`coherence.rs`), into the validated types
//! (`types.rs`, a [`Workload`]). Names shared with other modules (shipped layouts,
//! declared names, queue names) are checked by `crate::names`.
//!
//! Validation happens before any connection opens, and every error names the file, the
//! field and what is allowed. The runner only ever sees a [`Workload`], never the raw
//! structs, so it does not re-check anything.

mod coherence;
pub mod plan;
mod raw;
mod toml_errors;
mod types;
mod validate;

use crate::backend_kind::BackendKind;
pub use crate::names::{
    INDEX_LAYOUTS, MAX_QUEUE_NAME_CHARS, check_declared_name, check_queue_name, is_plain_name,
    queue_name_fits,
};
use crate::strategy::Strategy;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a workload file was refused.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The reason is shown, not chained, so it is printed once.
    #[error("{file}: cannot read workload: {reason}")]
    Read {
        file: PathBuf,
        reason: crate::input_file::InputError,
    },
    #[error("{file}: {message}")]
    Parse { file: PathBuf, message: String },
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: PathBuf,
        field: String,
        message: String,
    },
}

#[cfg(test)]
use types::lower_bounds;
pub use types::*;
use validate::{Validator, short_float};

/// The most trials one run may expand to.
pub const MAX_TRIALS: usize = 100_000;

/// A trial measured this long (s) or longer is read over time, as a soak; its sampler
/// readings then take the horizon, autovacuum runs and WAL too.
pub const READ_OVER_TIME_S: f64 = 60.0;

impl Workload {
    pub fn load(path: &Path) -> Result<Workload, WorkloadError> {
        Workload::load_with(path, Files::BesideOnly)
    }

    /// [`Workload::load`], with the rule for the statement and layout files it names.
    pub fn load_with(path: &Path, files: Files) -> Result<Workload, WorkloadError> {
        let text =
            crate::input_file::read_text(path, crate::input_file::WORKLOAD_CAP, "a workload file")
                .map_err(|reason| WorkloadError::Read {
                    file: path.to_path_buf(),
                    reason,
                })?;
        Workload::parse_with(path, &text, files)
    }

    /// Parse and validate `text`; `path` names it in messages and the record, and its
    /// folder is where declared files are read from.
    pub fn parse(path: &Path, text: &str) -> Result<Workload, WorkloadError> {
        Workload::parse_with(path, text, Files::BesideOnly)
    }

    fn parse_with(path: &Path, text: &str, files: Files) -> Result<Workload, WorkloadError> {
        let raw: raw::Workload = toml_errors::parse(text).map_err(|e| match e.field {
            Some(field) => WorkloadError::Invalid {
                file: path.to_path_buf(),
                field,
                message: e.message,
            },
            None => WorkloadError::Parse {
                file: path.to_path_buf(),
                message: e.message,
            },
        })?;
        let mut v = Validator {
            file: path,
            files,
            declared: Vec::new(),
            layouts: Vec::new(),
        };
        let declared = v.declare_strategies(&raw.strategies, raw.table.is_some())?;
        let layouts = v.declare_layouts(&raw.layouts)?;
        let table = v.declare_table(raw.table.as_ref())?;
        v.declared = declared.iter().map(|(s, _)| s.clone()).collect();
        v.layouts = layouts.iter().map(|l| l.name.clone()).collect();
        let mut w = v.workload(raw, text)?;
        coherence::check(&w).map_err(|(field, message)| v.err(&field, message))?;
        coherence::logical_wal_for_slots(&mut w)
            .map_err(|(field, message)| v.err(&field, message))?;
        w.custom_strategies = declared.into_iter().map(|(_, d)| d).collect();
        w.custom_layouts = layouts;
        w.table = table;
        coherence::declared_table(&w).map_err(|(field, message)| v.err(&field, message))?;
        if !w.custom_strategies.is_empty() || !w.custom_layouts.is_empty() || w.table.is_some() {
            // The files are part of what ran: a changed file is a changed workload.
            let mut h = Sha256::new();
            h.update(text.as_bytes());
            for sql in w.custom_strategies.iter().map(|d| &d.sql) {
                h.update(sql.as_bytes());
            }
            for (_, sql) in w.custom_layouts.iter().flat_map(|d| d.files()) {
                h.update(sql.as_bytes());
            }
            if let Some(t) = &w.table {
                h.update(t.sql.as_bytes());
                if let Some(m) = &t.mysql {
                    h.update(m.sql.as_bytes());
                }
            }
            w.source_hash = hex::encode(h.finalize());
        }
        Ok(w)
    }

    /// The files of SQL this workload brings that `kind` would run: declared claims
    /// and layouts with a form for it.
    pub fn declared_files(&self, kind: BackendKind) -> Vec<String> {
        let claims = self.custom_strategies.iter().filter_map(|d| match kind {
            BackendKind::Postgres if !d.file.is_empty() => Some(d.file.clone()),
            BackendKind::Mysql => d.mysql.as_ref().map(|m| m.file.clone()),
            BackendKind::Mssql => d.mssql.as_ref().map(|m| m.file.clone()),
            _ => None,
        });
        let layouts = self.custom_layouts.iter().filter_map(|d| match kind {
            BackendKind::Postgres if !d.file.is_empty() => Some(d.file.clone()),
            BackendKind::Mysql => d.mysql.as_ref().map(|m| m.file.clone()),
            BackendKind::Mssql => d.mssql.as_ref().map(|m| m.file.clone()),
            _ => None,
        });
        let table = self
            .table
            .iter()
            .filter_map(|t| t.file_for(kind).map(str::to_string));
        claims.chain(layouts).chain(table).collect()
    }

    /// How many trials the matrices expand to (a rate search counts its most), as
    /// [`plan::Plan::trials`] counts them (a test holds the two equal), but by
    /// multiplication: validation asks before refusing a count past [`MAX_TRIALS`], and a
    /// matrix of a million cells per dimension must not be expanded to say so. Saturates
    /// rather than wraps.
    pub fn trial_count(&self) -> usize {
        self.matrices
            .iter()
            .map(|m| {
                let per_cell = match m.phase.search {
                    Some(s) => s.max_trials,
                    None => m.phase.repetitions.unwrap_or(self.trial.repetitions),
                };
                let backends = match m.backends.is_empty() {
                    true => self.backends.len().max(1),
                    false => m.backends.len(),
                };
                [
                    backends,
                    m.strategies.len(),
                    m.index_layouts.len(),
                    m.workers.len(),
                    m.batch_sizes.len(),
                    per_cell as usize,
                ]
                .iter()
                .fold(1usize, |n, x| n.saturating_mul(*x))
            })
            .fold(0usize, usize::saturating_add)
    }

    /// The workload as the trials of matrix block `i` see it: the block's phase
    /// settings in place of the workload's, and only that block.
    pub fn phase(&self, i: usize) -> Workload {
        let m = &self.matrices[i];
        let p = &m.phase;
        let mut w = self.clone();
        if let Some(b) = p.backlog {
            w.population.backlog = b;
        }
        if let Some(r) = p.arrival_rate_per_s {
            w.producer_rate_per_s = (r > 0.0).then_some(r);
        }
        if let Some(mode) = p.handler_mode {
            w.handler.mode = mode;
        }
        if let Some(c) = p.complete {
            w.handler.complete = c;
        }
        if let Some(h) = p.history {
            w.population.history = h;
        }
        if let Some(s) = p.storage {
            w.storage = s;
        }
        if let Some(hold) = p.hold_snapshot {
            w.faults.hold_snapshot = hold;
        }
        if let Some(d) = p.empty_backoff_max {
            w.empty_backoff_max = d;
            w.empty_backoff = w.empty_backoff.min(d);
        }
        if let Some(d) = p.warmup {
            w.trial.warmup = d;
        }
        if let Some(d) = p.duration {
            w.trial.duration = Some(d);
            w.trial.stop = StopRule::Duration;
        }
        if let Some(n) = p.repetitions {
            w.trial.repetitions = n;
        }
        if let Some(end) = p.timeline.last().map(|t| t.to) {
            // Validated: the timeline ends after the warm-up.
            w.trial.duration = Some(end.saturating_sub(w.trial.warmup));
            w.trial.stop = StopRule::Duration;
            if let Some(pin) = p.timeline.iter().find(|t| t.pin.is_some()) {
                w.faults.hold_snapshot = Some((pin.from, pin.to));
                w.faults.hold_kind = pin.pin.expect("found by its pin");
            }
            w.timeline = p.timeline.clone();
        }
        for s in &p.session_settings {
            w.session_settings
                .retain(|o| o.backend != s.backend || o.name != s.name);
            w.session_settings.push(s.clone());
        }
        w.matrices = vec![m.clone()];
        w
    }

    /// Whether a phase's ([`Workload::phase`]) trials pin the horizon with a logical
    /// replication slot.
    pub fn holds_logical_slot(&self) -> bool {
        self.faults.hold_snapshot.is_some() && self.faults.hold_kind == HoldKind::LogicalSlot
    }

    /// The round trip added in front of the workers' connections, in a phase's
    /// workload ([`Workload::phase`]): its block's `network`.
    pub fn network(&self) -> Option<crate::netdelay::Delay> {
        self.matrices.first().and_then(|m| m.phase.network)
    }

    /// When a phase's shards move ([`Workload::phase`]): its block's `shard_moves`.
    pub fn shard_moves(&self) -> Option<&ShardMoves> {
        self.matrices
            .first()
            .and_then(|m| m.phase.shard_moves.as_ref())
    }

    /// Where a phase's workers connect on a cluster target ([`Workload::phase`]): its
    /// block's `placement`, spread over the nodes when it says none.
    pub fn placement(&self) -> Placement {
        self.matrices
            .first()
            .and_then(|m| m.phase.placement)
            .unwrap_or(Placement::Spread)
    }

    /// A strategy by name: a built-in, or one this workload declares (known to it only,
    /// never to the process).
    pub fn strategy_named(&self, name: &str) -> Result<Strategy, crate::invalid::Invalid> {
        match self.custom_strategies.iter().find(|d| d.name == name) {
            Some(d) => crate::strategy::custom::declare(d),
            None => name.parse(),
        }
    }

    /// Every index layout any block uses, once each, in order of first use.
    pub fn index_layouts(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for l in self.matrices.iter().flat_map(|m| &m.index_layouts) {
            if !out.contains(l) {
                out.push(l.clone());
            }
        }
        out
    }

    /// Whether jobs arrive during block `i`'s trials: producers, a rate search, or a rate
    /// derived from an earlier block.
    pub fn block_has_arrivals(&self, i: usize) -> bool {
        let p = &self.matrices[i].phase;
        self.phase(i).offered_mean().is_some()
            || p.search.is_some()
            || p.arrival_rate_from.is_some()
    }

    /// Jobs offered per second over a trial's measured time (warm-up's end to its end):
    /// the producers' rate, or with a timeline its phases' rates weighed by their
    /// measured seconds (the busiest phase's when only the warm-up offers any); `None`
    /// when no job arrives. What a cell reports as its arrival rate.
    pub fn offered_mean(&self) -> Option<f64> {
        let base = self.producer_rate_per_s;
        let Some(last) = self.timeline.last() else {
            return base;
        };
        let (from, end) = (self.trial.warmup.as_secs_f64(), last.to.as_secs_f64());
        let jobs: f64 = self
            .timeline
            .iter()
            .map(|p| {
                (p.to.as_secs_f64() - p.from.as_secs_f64().max(from)).max(0.0) * p.rate_per_s(base)
            })
            .sum();
        let busiest = self
            .timeline
            .iter()
            .map(|p| p.rate_per_s(base))
            .fold(0.0, f64::max);
        let mean = jobs / (end - from);
        (mean > 0.0)
            .then_some(mean)
            .or((busiest > 0.0).then_some(busiest))
    }

    /// Refuses what a broker among the run's backends cannot express, once `--db` has
    /// filled in the backends a workload left to it (the load's check saw none).
    pub fn check_brokers(&self) -> Result<(), WorkloadError> {
        let refused =
            coherence::broker_misfit(self).and_then(|()| coherence::broker_layouts_match(self));
        refused.map_err(|(field, message)| WorkloadError::Invalid {
            file: self.source_path.clone(),
            field,
            message,
        })
    }

    /// Leaves out the blocks marked `if_db_given` for which `given` (the backends of
    /// `--db`) lacks a backend, and the backends no block is left to run on; returns
    /// the names of the blocks left out.
    pub fn drop_blocks_without_db(&mut self, given: &[BackendKind]) -> Vec<String> {
        let (keep, left_out): (Vec<Matrix>, Vec<Matrix>) = std::mem::take(&mut self.matrices)
            .into_iter()
            .partition(|m| !m.if_db_given || m.backends.iter().all(|k| given.contains(k)));
        self.matrices = keep;
        if !left_out.is_empty() {
            let matrices = &self.matrices;
            self.backends
                .retain(|k| matrices.iter().any(|m| m.runs_on(*k)));
        }
        left_out.into_iter().map(|m| m.name).collect()
    }

    /// Whether a block claims through a lock service beside its database
    /// (`lock-service`): the run then needs a Redis for the leases.
    pub fn uses_lock_service(&self) -> bool {
        self.matrices
            .iter()
            .any(|m| m.strategies.iter().any(|s| s.needs_lock_service()))
    }

    /// Refuses a workload in which no job can be claimed, for a command that would
    /// measure it (`run`, `validate`): it would measure empty polls only; and a paired
    /// block with too few rounds to judge (after `--repetitions`).
    pub fn check_runnable(&self) -> Result<(), WorkloadError> {
        coherence::runnable(self).map_err(|(field, message)| WorkloadError::Invalid {
            file: self.source_path.clone(),
            field,
            message,
        })
    }

    /// How long a trial's clock runs at most: warm-up plus duration, or the drain cap.
    /// Fault instants count from the same start.
    pub fn planned_trial(&self) -> Duration {
        match self.trial.stop {
            StopRule::Duration => self.trial.warmup + self.trial.duration.expect("validated"),
            StopRule::Drain => self.trial.max,
        }
    }

    /// `--repetitions N`: every block runs N repetitions, whatever its own setting.
    pub fn set_repetitions(&mut self, n: u32) {
        self.trial.repetitions = n;
        for m in &mut self.matrices {
            m.phase.repetitions = None;
        }
    }
}

/// Where the statement and layout files a workload names may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Files {
    /// In the workload's folder or below it: a workload from someone else cannot make
    /// claimbench read (and record in run.json) a file elsewhere on the machine.
    BesideOnly,
    /// Anywhere (`--allow-outside-files`).
    Anywhere,
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "t"
[population]
backlog = 100
queues = [{ name = "default" }]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [2]
batch_sizes = [5]
[trial]
duration_s = 1
"#;

    fn parse(text: &str) -> Result<Workload, WorkloadError> {
        Workload::parse(Path::new("w.toml"), text)
    }

    fn error_of(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn kill_schedule_merges_instants_and_the_period_within_the_trial() {
        let f = Faults {
            abandon_rate: 0.0,
            crash_after_start_rate: 0.0,
            poison_share: 0.0,
            hang_rate: 0.0,
            hang: Duration::ZERO,
            lease: Some(Duration::from_secs(1)),
            kill_connections_at: vec![Duration::from_millis(2500), Duration::from_secs(9)],
            kill_connections_every: Some(Duration::from_secs(2)),
            restart_at: vec![],
            restart_lock_service_at: vec![],
            failover_at: vec![],
            hold_snapshot: None,
            hold_kind: HoldKind::default(),
            hold_pool: None,
        };
        let s = |v: &[u64]| {
            v.iter()
                .map(|&ms| Duration::from_millis(ms))
                .collect::<Vec<_>>()
        };
        // 9 s is past a 7 s trial; 2 s, 4 s and 6 s from the period, 2.5 s listed.
        assert_eq!(
            f.kill_schedule(Duration::from_secs(7)),
            s(&[2000, 2500, 4000, 6000])
        );
        assert!(f.kills_connections());
        let none = Faults {
            kill_connections_at: vec![],
            kill_connections_every: None,
            ..f
        };
        assert!(none.kill_schedule(Duration::from_secs(7)).is_empty());
        assert!(!none.kills_connections());
    }

    #[test]
    fn poison_jobs_are_a_stable_share_chosen_by_id() {
        let w = Workload::parse(
            Path::new("t.toml"),
            &format!("{MINIMAL}\n[faults]\npoison_share = 0.1\n"),
        )
        .unwrap();
        let f = &w.faults;
        let poison = (1..=20_000).filter(|&id| f.is_poison(id, 7)).count();
        assert!((1_800..2_200).contains(&poison), "{poison} of 20000");
        // The same ids under the same seed; other ids under another.
        assert!((1..=200).all(|id| f.is_poison(id, 7) == f.is_poison(id, 7)));
        assert!((1..=200).any(|id| f.is_poison(id, 7) != f.is_poison(id, 8)));
        assert!(
            !Faults {
                poison_share: 0.0,
                ..f.clone()
            }
            .is_poison(1, 7)
        );
    }

    #[test]
    fn minimal_workload_gets_defaults() {
        let w = parse(MINIMAL).unwrap();
        assert!(w.backends.is_empty(), "the backends of --db");
        assert_eq!(w.handler.max_attempts, 3);
        assert!(w.handler.start_gate);
        assert_eq!(w.population.priorities, vec![(0, 1.0)]);
        assert_eq!(w.trial_count(), 1);
        assert_eq!(w.source_hash.len(), 64);
    }

    #[test]
    fn zero_workers_names_file_and_field() {
        let e = error_of(&MINIMAL.replace("workers = [2]", "workers = [0]"));
        assert_eq!(e, "w.toml: matrix.workers: 0 is not allowed; give 1 to 512");
    }

    #[test]
    fn unknown_strategy_lists_the_choices() {
        let e = error_of(&MINIMAL.replace("[\"production\"]", "[\"fastest\"]"));
        assert!(e.starts_with("w.toml: "), "{e}");
        assert!(
            e.contains("matrix.strategies: unknown strategy `fastest`"),
            "{e}"
        );
        assert!(e.contains("production"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn unknown_layout_lists_the_choices() {
        let e = error_of(&MINIMAL.replace("[\"fetch-order\"]", "[\"btree\"]"));
        assert!(
            e.contains("matrix.index_layouts: unknown layout `btree`"),
            "{e}"
        );
        assert!(e.contains("pending-partial"), "{e}");
    }

    #[test]
    fn backends_are_listed_once_each_and_not_empty() {
        let with = |b: &str| MINIMAL.replace("[matrix]", &format!("[matrix]\nbackends = {b}"));
        let w = parse(&with("[\"mysql\", \"postgres\"]")).unwrap();
        assert_eq!(w.backends, vec![BackendKind::Mysql, BackendKind::Postgres]);
        assert_eq!(w.trial_count(), 2);
        let e = error_of(&with("[]"));
        assert!(e.contains("matrix.backends: is empty"), "{e}");
        let e = error_of(&with("[\"mysql\", \"mysql\"]"));
        assert!(e.contains("matrix.backends: lists `mysql` twice"), "{e}");
        let e = error_of(&with("[\"oracle\"]"));
        assert!(e.contains("matrix.backends") || e.contains("oracle"), "{e}");
    }

    #[test]
    fn negative_durations_are_refused() {
        let e = error_of(&MINIMAL.replace("duration_s = 1", "duration_s = -1"));
        assert_eq!(
            e,
            "w.toml: trial.duration_s: -1 is not allowed; give a number > 0"
        );
        let e = error_of(&format!(
            "{MINIMAL}\n[handler]\nduration = {{ dist = \"fixed\", ms = -2.5 }}\n"
        ));
        assert_eq!(
            e,
            "w.toml: handler.duration.ms: -2.5 is not allowed; give a number >= 0"
        );
    }

    #[test]
    fn malformed_toml_and_typos_are_one_line_errors() {
        let e = error_of("name = \"t\"\n[population\n");
        assert!(e.starts_with("w.toml: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = error_of(&MINIMAL.replace("backlog = 100", "backlog = 100\nbaclog = 3"));
        assert!(e.contains("unknown field `baclog`"), "{e}");
    }

    /// A lock service's restart needs a block that takes leases in one, and an instant
    /// inside the trial.
    #[test]
    fn a_lock_service_restart_needs_a_lock_service_claim_inside_the_trial() {
        let faults = "[faults]\nlease_s = 1.0\nrestart_lock_service_at_s = [0.5]\n";
        let e = error_of(&format!("{MINIMAL}{faults}"));
        assert_eq!(
            e,
            "w.toml: faults.restart_lock_service_at_s: restarts the lock service of a `lock-service` claim, and no block runs one; add `lock-service` to a block's strategies, or drop it"
        );
        let leased = MINIMAL.replace("\"production\"", "\"production\", \"lock-service\"");
        let w = Workload::parse(Path::new("w.toml"), &format!("{leased}{faults}")).unwrap();
        assert_eq!(
            w.faults.restart_lock_service_at,
            vec![Duration::from_millis(500)]
        );
        let late = faults.replace("[0.5]", "[3.0]");
        let e = error_of(&format!("{leased}{late}"));
        assert!(e.contains("faults.restart_lock_service_at_s"), "{e}");
        let unleased = faults.replace("lease_s = 1.0\n", "");
        let e = error_of(&format!("{leased}{unleased}"));
        assert!(e.contains("faults.lease_s"), "{e}");
    }

    #[test]
    fn abandon_without_lease_is_refused() {
        let e = error_of(&format!("{MINIMAL}\n[faults]\nabandon_rate = 0.1\n"));
        assert!(e.contains("faults.lease_s"), "{e}");
    }

    #[test]
    fn bounds_are_cumulative_lower_bounds() {
        assert_eq!(lower_bounds([3.0, 1.0].into_iter()), vec![0.0, 0.75]);
        assert_eq!(lower_bounds([1.0].into_iter()), vec![0.0]);
    }

    const TWO_BLOCKS: &str = r#"
name = "t"
[population]
backlog = 100
queues = [{ name = "default" }]
[producers]
rate_per_s = 50
[[matrix]]
name = "compare"
strategies = ["production", "naive"]
index_layouts = ["fetch-order"]
workers = [1, 4]
batch_sizes = [10]
arrival_rate_per_s = 0
[[matrix]]
name = "sweep"
strategies = ["production"]
index_layouts = ["pk-only", "fetch-order"]
workers = [2]
batch_sizes = [1, 50]
backlog = 5000
handler_mode = "claim-only"
duration_s = 3
repetitions = 2
[trial]
duration_s = 1
[slo]
claim_p99 = "<=20ms"
duplicates = "==0"
"#;

    #[test]
    fn matrix_blocks_each_get_their_own_phase_settings() {
        let w = parse(TWO_BLOCKS).unwrap();
        assert_eq!(w.matrices.len(), 2);
        assert_eq!(
            w.trial_count(),
            4 + 4 * 2,
            "compare: 4 cells x 1 rep; sweep: 4 cells x 2 reps"
        );
        let compare = w.phase(0);
        assert_eq!(compare.producer_rate_per_s, None, "0 turns producers off");
        assert_eq!(compare.population.backlog, 100);
        let sweep = w.phase(1);
        assert_eq!(
            sweep.producer_rate_per_s,
            Some(50.0),
            "kept from [producers]"
        );
        assert_eq!(sweep.population.backlog, 5000);
        assert_eq!(sweep.handler.mode, HandlerMode::ClaimOnly);
        assert_eq!(sweep.trial.duration, Some(Duration::from_secs(3)));
        assert_eq!(sweep.trial.repetitions, 2);
        assert_eq!(sweep.matrices.len(), 1);
        assert_eq!(sweep.matrices[0].name, "sweep");
        assert_eq!(w.index_layouts(), vec!["fetch-order", "pk-only"]);
        assert_eq!(w.slos.len(), 2);
    }

    #[test]
    fn a_derived_arrival_rate_names_an_earlier_cell() {
        let text = TWO_BLOCKS.replace(
            "backlog = 5000\n",
            "backlog = 5000\narrival_rate_from = { phase = \"compare\", workers = 4, batch_size = 10, times = 1.5 }\n",
        ).replace("index_layouts = [\"pk-only\", \"fetch-order\"]", "index_layouts = [\"fetch-order\"]");
        match parse(&text) {
            Ok(w) => {
                let from = w.matrices[1].phase.arrival_rate_from.as_ref().expect("set");
                assert_eq!((from.workers, from.times), (4, 1.5));
                assert!(w.block_has_arrivals(1));
            }
            Err(e) => panic!("{e}\n{text}"),
        }
    }

    #[test]
    fn repetitions_flag_overrides_every_block() {
        let mut w = parse(TWO_BLOCKS).unwrap();
        w.set_repetitions(3);
        assert_eq!(w.phase(1).trial.repetitions, 3);
        assert_eq!(w.trial_count(), 4 * 3 + 4 * 3);
    }

    #[test]
    fn matrix_block_errors_name_the_block() {
        let e = error_of(&TWO_BLOCKS.replace("name = \"sweep\"\n", ""));
        assert_eq!(
            e,
            "w.toml: matrix[1].name: is missing; with several [[matrix]] blocks each needs a name (it labels its cells)"
        );
        let e = error_of(&TWO_BLOCKS.replace("\"sweep\"", "\"compare\""));
        assert!(
            e.contains("matrix[1].name: `compare` names two blocks"),
            "{e}"
        );
        let e = error_of(&TWO_BLOCKS.replace("workers = [2]", "workers = [0]"));
        assert_eq!(
            e,
            "w.toml: matrix[1].workers: 0 is not allowed; give 1 to 512"
        );
        let e = error_of(&TWO_BLOCKS.replace("backlog = 5000", "backlog = -1"));
        assert!(e.contains("matrix[1].backlog: -1 is not allowed"), "{e}");
        let e = error_of(&TWO_BLOCKS.replace("backlog = 5000", "bakclog = 1"));
        assert!(
            e.contains("matrix[1].bakclog: unknown field `bakclog`"),
            "{e}"
        );
        let e = error_of(&TWO_BLOCKS.replace("duplicates = \"==0\"", "duplicates = \"==0ms\""));
        assert!(e.contains("slo.duplicates: `0ms` is a time"), "{e}");
        let e = error_of(&TWO_BLOCKS.replace(
            "repetitions = 2",
            "repetitions = 2\nsearch = { start_per_s = 100 }\narrival_rate_per_s = 5",
        ));
        assert!(
            e.contains("matrix[1].arrival_rate_per_s: cannot be combined with search"),
            "{e}"
        );
        let e = error_of(&TWO_BLOCKS.replace(
            "repetitions = 2",
            "search = { start_per_s = 100, tolerance = 2 }",
        ));
        assert!(
            e.contains("matrix[1].search.tolerance: 2 is not allowed"),
            "{e}"
        );
    }

    #[test]
    fn a_lone_matrix_table_keeps_its_old_field_names() {
        let w = parse(MINIMAL).unwrap();
        assert_eq!(w.matrices.len(), 1);
        assert_eq!(w.matrices[0].name, "");
        let e = error_of(&MINIMAL.replace("batch_sizes = [5]", "batch_sizes = []"));
        assert!(e.contains("w.toml: matrix.batch_sizes: is empty"), "{e}");
    }

    #[test]
    fn thresholds_name_compare_metrics() {
        let w = parse(&format!(
            "{MINIMAL}\n[thresholds]\nclaim_p99 = 0.5\nthroughput = 0.3\n"
        ))
        .unwrap();
        assert_eq!(
            w.thresholds,
            vec![
                ("claim_p99".to_string(), 0.5),
                ("throughput".to_string(), 0.3)
            ]
        );
        let e = error_of(&format!("{MINIMAL}\n[thresholds]\np99 = 0.5\n"));
        assert!(e.contains("thresholds.p99: unknown metric `p99`"), "{e}");
        let e = error_of(&format!("{MINIMAL}\n[thresholds]\nclaim_p99 = -1\n"));
        assert!(
            e.contains("thresholds.claim_p99: `-1` is not a share"),
            "{e}"
        );
    }

    #[test]
    fn gates_are_checked_objectives_with_optional_filters() {
        let w = parse(&format!(
            "{TWO_BLOCKS}\n[[gate]]\ncheck = \"claim_p99<=20ms\"\nstrategy = \"production\"\nphase = \"sweep\"\n[[gate]]\ncheck = \"lost==0\"\n"
        ))
        .unwrap();
        assert_eq!(w.gates.len(), 2);
        assert_eq!(
            w.gates[0].label(),
            "claim_p99<=20ms for phase sweep, production"
        );
        assert_eq!(w.gates[1].label(), "lost==0 for every cell");
        let e = error_of(&format!("{TWO_BLOCKS}\n[[gate]]\ncheck = \"p99<20\"\n"));
        assert!(e.contains("gate[0].check: unknown metric `p99`"), "{e}");
        let e = error_of(&format!(
            "{TWO_BLOCKS}\n[[gate]]\ncheck = \"lost==0\"\nphase = \"nightly\"\n"
        ));
        assert!(
            e.contains("gate[0].phase: no [[matrix]] block is named `nightly`"),
            "{e}"
        );
    }

    #[test]
    fn shipped_workloads_are_valid() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut seen = 0;
        for dir in ["workloads", "benches"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "toml") {
                    Workload::load(&path).unwrap_or_else(|e| panic!("{e}"));
                    seen += 1;
                }
            }
        }
        assert!(seen >= 2, "quickstart and smoke at least");
    }
}
