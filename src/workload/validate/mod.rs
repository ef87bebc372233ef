//! Raw TOML to a validated [`Workload`]: each field checked on its own, with errors
//! that name the file, the dotted field and what is allowed; what fields decide together
//! is in coherence.rs.

use super::*;

mod cleanup;
mod declared;
mod faults;
mod matrix;
mod timeline;

pub(super) struct Validator<'a> {
    pub(super) file: &'a Path,
    pub(super) files: Files,
    /// The strategies `[strategies.<name>]` declared, for the matrices to name.
    pub(super) declared: Vec<Strategy>,
    /// The layouts `[layouts.<name>]` declared.
    pub(super) layouts: Vec<String>,
}

/// The longest time a workload may give anywhere: a week.
const MAX_TIME_S: f64 = 604_800.0;
/// The fastest arrival rate a workload may ask for, jobs per second: far above what a
/// producer on one host inserts, and low enough that every gap and count made from it
/// stays finite.
pub(super) const MAX_RATE_PER_S: f64 = 10_000_000.0;
/// The largest multiple of a rate (`rate_times`, `arrival_rate_from.times`).
pub(super) const MAX_RATE_TIMES: f64 = 100.0;
/// The furthest ahead a seeded job may be scheduled: a year.
const MAX_SCHEDULED_WITHIN_S: f64 = 31_536_000.0;

/// A number as a person wrote it, or in exponent form when it would print hundreds of
/// digits (1e300 is one line, not a screenful).
pub(super) fn short_float(v: f64) -> String {
    if v.abs() >= 1e9 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

impl Validator<'_> {
    pub(super) fn err(&self, field: &str, message: impl Into<String>) -> WorkloadError {
        WorkloadError::Invalid {
            file: self.file.to_path_buf(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// A strategy the workload names: declared by it, or built in.
    fn strategy(&self, field: &str, name: &str) -> Result<Strategy, WorkloadError> {
        self.declared
            .iter()
            .find(|s| s.as_str() == name)
            .cloned()
            .or_else(|| Strategy::builtin_named(name))
            .ok_or_else(|| {
                let declared: String = self
                    .declared
                    .iter()
                    .map(|s| format!(", {s}"))
                    .collect();
                self.err(
                    field,
                    format!(
                        "unknown strategy `{name}`; expected one of: {}{declared}, or one declared under [strategies.<name>]",
                        Strategy::builtin_names()
                    ),
                )
            })
    }

    /// A layout the workload names: shipped, or declared by it.
    fn layout(&self, field: &str, name: &str) -> Result<(), WorkloadError> {
        if INDEX_LAYOUTS.contains(&name) || self.layouts.iter().any(|l| l == name) {
            return Ok(());
        }
        let declared: String = self.layouts.iter().map(|l| format!(", {l}")).collect();
        Err(self.err(
            field,
            format!(
                "unknown layout `{name}`; expected one of: {}{declared}, or one declared under [layouts.<name>]",
                INDEX_LAYOUTS.join(", ")
            ),
        ))
    }

    /// `[from, to]` in seconds since the trial's start, from before to (`[]`, where
    /// `may_be_empty`: no hold).
    fn hold_window(
        &self,
        field: &str,
        w: &[f64],
        may_be_empty: bool,
    ) -> Result<Option<(Duration, Duration)>, WorkloadError> {
        match *w {
            [] if may_be_empty => Ok(None),
            [from, to] if from < to => Ok(Some((
                self.positive_secs(field, from)?,
                self.positive_secs(field, to)?,
            ))),
            _ => Err(self.err(
                field,
                format!(
                    "give [from, to]: two times in seconds since the trial's start, from before to{}",
                    if may_be_empty { " ([] for none)" } else { "" }
                ),
            )),
        }
    }

    /// Moves need a strategy that has shards, instants in order, and an overlap that
    /// ends before the next move (two moves in one overlap would give a shard a third
    /// owner the map cannot express).
    fn shard_moves(
        &self,
        field: &str,
        m: raw::ShardMoves,
        strategies: &[Strategy],
    ) -> Result<ShardMoves, WorkloadError> {
        if !strategies.iter().any(|s| s.def().sharded) {
            let sharded: Vec<String> = Strategy::builtin()
                .filter(|s| s.def().sharded)
                .map(|s| s.to_string())
                .collect();
            return Err(self.err(
                field,
                format!(
                    "moves nothing: none of the block's strategies has shards; add one of {}",
                    sharded.join(", ")
                ),
            ));
        }
        let overlap = self.positive_secs(&format!("{field}.overlap_s"), m.overlap_s)?;
        let at_field = format!("{field}.at_s");
        if m.at_s.is_empty() {
            return Err(self.err(
                &at_field,
                "give at least one instant (seconds since the trial's start)",
            ));
        }
        let mut at: Vec<Duration> = Vec::with_capacity(m.at_s.len());
        for &t in &m.at_s {
            let t = self.positive_secs(&at_field, t)?;
            if let Some(&before) = at.last()
                && t <= before + overlap
            {
                return Err(self.err(
                    &at_field,
                    format!(
                        "{} s comes before the move at {} s and its {} s overlap have ended; give increasing instants more than overlap_s apart",
                        short_float(t.as_secs_f64()),
                        short_float(before.as_secs_f64()),
                        short_float(overlap.as_secs_f64())
                    ),
                ));
            }
            at.push(t);
        }
        Ok(ShardMoves { at, overlap })
    }

    fn non_negative(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("{v} is not allowed; give a number >= 0")))
        }
    }

    /// An arrival rate: at least 0, at most [`MAX_RATE_PER_S`].
    fn rate(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        let v = self.non_negative(field, v)?;
        if v > MAX_RATE_PER_S {
            return Err(self.err(
                field,
                format!(
                    "{} jobs/s is not allowed; give at most {MAX_RATE_PER_S} (ten million a second)",
                    short_float(v)
                ),
            ));
        }
        Ok(v)
    }

    /// A multiple of another rate: at least 0, at most [`MAX_RATE_TIMES`].
    fn multiple(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        let v = self.non_negative(field, v)?;
        if v > MAX_RATE_TIMES {
            return Err(self.err(
                field,
                format!(
                    "{} is not allowed; give a multiple from 0 to {MAX_RATE_TIMES}",
                    short_float(v)
                ),
            ));
        }
        Ok(v)
    }

    fn positive(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("{v} is not allowed; give a number > 0")))
        }
    }

    fn share(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(
                field,
                format!("{v} is not allowed; give a share between 0 and 1"),
            ))
        }
    }

    /// A time of `secs` seconds, refused above a week: no trial means more, and
    /// `Duration` (then `Instant` arithmetic) cannot hold every finite float.
    fn bounded(
        &self,
        field: &str,
        secs: f64,
        shown: f64,
        unit: &str,
    ) -> Result<Duration, WorkloadError> {
        if secs <= MAX_TIME_S {
            Ok(Duration::from_secs_f64(secs))
        } else {
            let most = if unit == "ms" {
                MAX_TIME_S * 1000.0
            } else {
                MAX_TIME_S
            };
            Err(self.err(
                field,
                format!(
                    "{} is not allowed; give at most {most} {unit} (a week)",
                    short_float(shown)
                ),
            ))
        }
    }

    fn ms(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.non_negative(field, v)? / 1000.0, v, "ms")
    }

    fn positive_ms(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.positive(field, v)? / 1000.0, v, "ms")
    }

    fn secs(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.non_negative(field, v)?, v, "s")
    }

    fn positive_secs(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.positive(field, v)?, v, "s")
    }

    fn counts(&self, field: &str, v: &[i64], max: i64) -> Result<Vec<u32>, WorkloadError> {
        if v.is_empty() {
            return Err(self.err(field, "is empty; list at least one value"));
        }
        let out = v
            .iter()
            .map(|&n| {
                if (1..=max).contains(&n) {
                    Ok(n as u32)
                } else {
                    Err(self.err(field, format!("{n} is not allowed; give 1 to {max}")))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.unrepeated(field, &out)?;
        Ok(out)
    }

    /// A matrix list names each value once: a repeat runs the same cells twice and
    /// multiplies the trial count (repeats once wrapped it past 2^64).
    fn unrepeated<T: PartialEq + std::fmt::Display + std::hash::Hash + Eq>(
        &self,
        field: &str,
        v: &[T],
    ) -> Result<(), WorkloadError> {
        let mut seen = std::collections::HashSet::with_capacity(v.len());
        match v.iter().find(|x| !seen.insert(*x)) {
            Some(x) => Err(self.err(field, format!("lists `{x}` twice; name each value once"))),
            None => Ok(()),
        }
    }

    pub(super) fn workload(&self, w: raw::Workload, text: &str) -> Result<Workload, WorkloadError> {
        if !is_plain_name(&w.name) {
            return Err(self.err(
                "name",
                format!("`{}` is not allowed; use letters, digits, - and _", w.name),
            ));
        }
        let population = self.population(w.population)?;
        let handler = self.handler(w.handler)?;
        let (producer_rate_per_s, arrivals) = match w.producers {
            Some(p) => (
                Some(self.rate("producers.rate_per_s", p.rate_per_s)?),
                p.arrivals,
            ),
            None => (None, Arrivals::default()),
        };
        let producer_rate_per_s = producer_rate_per_s.filter(|&r| r > 0.0);
        let empty_backoff = self.ms("worker.empty_backoff_ms", w.worker.empty_backoff_ms)?;
        let empty_backoff_max =
            self.ms("worker.empty_backoff_max_ms", w.worker.empty_backoff_max_ms)?;
        if empty_backoff_max < empty_backoff {
            return Err(self.err(
                "worker.empty_backoff_max_ms",
                "is below worker.empty_backoff_ms; give a maximum >= the base",
            ));
        }
        let faults = self.faults(w.faults)?;
        let cleanup = w.cleanup.map(|c| self.cleanup(c)).transpose()?;
        let (backends, matrices) = self.matrices(w.matrix)?;
        let timed = matrices.iter().all(|m| !m.phase.timeline.is_empty());
        let trial = self.trial(w.trial, timed)?;
        let matrices = self.durability(matrices, &backends, &w.embedded.settings)?;
        if !faults.failover_at.is_empty() && matrices.iter().any(|m| m.phase.network.is_some()) {
            return Err(self.err(
                "matrix.network",
                "cannot be combined with faults.failover_at_s: the workers' delaying proxy points at one server and would keep pointing at the old primary; measure the network and the failover in separate workloads",
            ));
        }
        for m in &matrices {
            let arrivals = match m.phase.arrival_rate_per_s {
                Some(r) => r > 0.0,
                None => producer_rate_per_s.is_some() || m.phase.arrival_rate_from.is_some(),
            };
            if trial.stop == StopRule::Drain && m.phase.duration.is_none() && arrivals {
                return Err(self.err(
                    "trial.stop",
                    "\"drain\" cannot be combined with producers: the queue never drains; use \"duration\"",
                ));
            }
        }
        let slos = match w.slo {
            Some(raw) => raw
                .parse()
                .map_err(|(field, e)| self.err(&format!("slo.{field}"), e.to_string()))?,
            None => Vec::new(),
        };
        let gates = w
            .gate
            .into_iter()
            .enumerate()
            .map(|(i, g)| self.gate(i, g, &matrices))
            .collect::<Result<Vec<_>, _>>()?;
        let thresholds = w
            .thresholds
            .into_iter()
            .map(|(k, v)| {
                crate::slo::parse_threshold(&format!("{k}={v}"))
                    .map_err(|e| self.err(&format!("thresholds.{k}"), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let embedded_settings = self.embedded_settings(w.embedded.settings)?;
        let topology = self.topology(w.topology, &backends)?;
        if topology.kind == TopologyKind::Galera {
            self.on_galera(&matrices, &faults)?;
        } else if matrices
            .iter()
            .any(|m| m.phase.placement == Some(Placement::Standalone))
        {
            return Err(self.err(
                "matrix.placement",
                "\"standalone\" is the plain MariaDB server claimbench starts beside its own Galera cluster: set [topology] kind = \"galera\"",
            ));
        }
        let session_settings = self.session_settings("session", w.session)?;
        self.pooler_fits(&topology, &matrices, &session_settings, &faults)?;
        Ok(Workload {
            name: w.name,
            description: w.description,
            seed: w.seed,
            population,
            producer_rate_per_s,
            arrivals,
            timeline: Vec::new(),
            handler,
            empty_backoff,
            empty_backoff_max,
            faults,
            cleanup,
            storage: w.storage.unwrap_or_default(),
            backends,
            matrices,
            trial,
            slos,
            gates,
            thresholds,
            embedded_settings,
            topology,
            session_settings,
            lock_escalation: w.mssql.lock_escalation.unwrap_or_default(),
            custom_strategies: Vec::new(),
            custom_layouts: Vec::new(),
            table: None,
            source_text: text.to_string(),
            source_hash: hex::encode(Sha256::digest(text.as_bytes())),
            source_path: self.file.to_path_buf(),
        })
    }

    /// `[topology]`: a primary and standby for PostgreSQL, a Galera cluster for mysql;
    /// `synchronous` needs a standby, `nodes` a cluster.
    fn topology(
        &self,
        raw: Option<raw::Topology>,
        backends: &[BackendKind],
    ) -> Result<Topology, WorkloadError> {
        let Some(t) = raw else {
            return Ok(Topology::default());
        };
        if t.kind == TopologyKind::PrimaryStandby
            && let Some(other) = backends.iter().find(|b| **b != BackendKind::Postgres)
        {
            return Err(self.err(
                "topology.kind",
                format!("`primary-standby` is started by claimbench for PostgreSQL only; this workload also runs {other}"),
            ));
        }
        if t.kind == TopologyKind::Galera
            && let Some(other) = backends.iter().find(|b| **b != BackendKind::Mysql)
        {
            return Err(self.err(
                "topology.kind",
                format!("`galera` is a MariaDB cluster claimbench starts for mysql only; this workload also runs {other}"),
            ));
        }
        let nodes = match (t.kind, t.nodes) {
            (TopologyKind::Galera, None) => 3,
            (TopologyKind::Galera, Some(n)) if (2..=5).contains(&n) => n as u32,
            (TopologyKind::Galera, Some(n)) => {
                return Err(self.err(
                    "topology.nodes",
                    format!("{n} is not allowed; give 2 to 5 nodes (3 is the usual cluster)"),
                ));
            }
            (_, Some(_)) => {
                return Err(self.err(
                    "topology.nodes",
                    "counts a cluster's nodes: set kind = \"galera\"",
                ));
            }
            (_, None) => 0,
        };
        if t.synchronous && t.kind != TopologyKind::PrimaryStandby {
            return Err(self.err(
                "topology.synchronous",
                "a synchronous standby needs one: set kind = \"primary-standby\"",
            ));
        }
        let standby_network = match &t.standby_network {
            None => crate::netdelay::Delay::default(),
            Some(_) if t.kind != TopologyKind::PrimaryStandby => {
                return Err(self.err(
                    "topology.standby_network",
                    "the standby's link needs a standby: set kind = \"primary-standby\"",
                ));
            }
            Some(s) => crate::netdelay::parse(s).map_err(|e| {
                self.err(
                    "topology.standby_network",
                    format!("{e}; write \"local\", \"4ms\" or \"4ms±1ms\""),
                )
            })?,
        };
        let pooler = self.pooler(&t, backends)?;
        Ok(Topology {
            kind: t.kind,
            synchronous: t.synchronous,
            standby_network,
            nodes,
            pooler,
        })
    }

    /// What a pooler's mode asks of the rest of the workload: in session mode a server
    /// connection per worker, in transaction mode no session settings on PostgreSQL.
    fn pooler_fits(
        &self,
        topology: &Topology,
        matrices: &[Matrix],
        session_settings: &[crate::session_settings::SessionSetting],
        faults: &Faults,
    ) -> Result<(), WorkloadError> {
        if topology.pooler.is_some() && !faults.failover_at.is_empty() {
            return Err(self.err(
                "faults.failover_at_s",
                "cannot be combined with topology.pooler: the pooler claimbench starts points at the primary and would keep pointing at it once the standby is promoted; measure the pooler and the failover in separate workloads",
            ));
        }
        // After the sweep's expansion a block's index is no longer the file's: the
        // field is named, and the block by its name.
        if topology.pooler.is_none()
            && let Some(m) = matrices.iter().find(|m| m.phase.pool_size.is_some())
        {
            return Err(self.err(
                "matrix.pool_sizes",
                format!("(block `{}`) sizes the pool of the PgBouncer claimbench starts: set [topology] pooler = \"transaction\" or \"session\" (a pooler of yours, --pooler, keeps the pool you gave it)", m.name),
            ));
        }
        if topology.pooler.is_some()
            && let Some(m) = matrices.iter().find(|m| m.phase.network.is_some())
        {
            return Err(self.err(
                "matrix.network",
                format!("(block `{}`) cannot be combined with topology.pooler: the workers reach the server either through the delaying proxy or through the pooler; measure them in separate workloads", m.name),
            ));
        }
        if let Some(p) = topology
            .pooler
            .filter(|p| p.mode == crate::pooler::PoolMode::Session)
        {
            for m in matrices {
                let size = m.phase.pool_size.unwrap_or(p.pool_size);
                let Some(most) = m.workers.iter().copied().max().filter(|w| *w > size) else {
                    continue;
                };
                let field = match m.phase.pool_size {
                    Some(_) => "matrix.pool_sizes",
                    None => "topology.pool_size",
                };
                return Err(self.err(
                    field,
                    format!("{size} server connections cannot serve {most} workers in session mode, where each worker keeps its server connection until it disconnects (the rest would wait for the whole trial); give {most} or more, or pooler = \"transaction\""),
                ));
            }
        }
        let transaction_pooled =
            topology.pooler.map(|p| p.mode) == Some(crate::pooler::PoolMode::Transaction);
        let settings_of_blocks = matrices.iter().enumerate().flat_map(|(i, m)| {
            m.phase
                .session_settings
                .iter()
                .map(move |s| (format!("matrix[{i}].session.{}.{}", s.backend, s.name), s))
        });
        let mut all_settings = session_settings
            .iter()
            .map(|s| (format!("session.{}.{}", s.backend, s.name), s))
            .chain(settings_of_blocks);
        if transaction_pooled
            && let Some((field, _)) = all_settings.find(|(_, s)| s.backend == BackendKind::Postgres)
        {
            return Err(self.err(
                &field,
                "is a session setting, and through a transaction-mode pooler a session's SET stays on whichever server connection ran it; drop it, or set pooler = \"session\"",
            ));
        }
        Ok(())
    }

    /// `topology.pooler` and `topology.pool_size`: a PgBouncer in front of the embedded
    /// PostgreSQL alone, in a mode it has, with a pool it can open.
    fn pooler(
        &self,
        t: &raw::Topology,
        backends: &[BackendKind],
    ) -> Result<Option<crate::pooler::Pooler>, WorkloadError> {
        use crate::pooler::{MAX_POOL_SIZE, PoolMode, Pooler};
        let Some(mode) = &t.pooler else {
            if t.pool_size.is_some() {
                return Err(self.err(
                    "topology.pool_size",
                    "sizes a pooler's pool: set pooler = \"transaction\" or \"session\"",
                ));
            }
            return Ok(None);
        };
        let mode = PoolMode::named(mode).ok_or_else(|| {
            self.err(
                "topology.pooler",
                format!("`{mode}` is not a pool mode; give \"transaction\" or \"session\" (PgBouncer's statement mode cannot run a claim's transaction)"),
            )
        })?;
        if let Some(other) = backends.iter().find(|b| **b != BackendKind::Postgres) {
            return Err(self.err(
                "topology.pooler",
                format!("claimbench starts PgBouncer in front of PostgreSQL only; this workload also runs {other}"),
            ));
        }
        if t.kind == TopologyKind::Galera {
            return Err(self.err(
                "topology.pooler",
                "runs in front of PostgreSQL, a single server or the primary of kind = \"primary-standby\"; a Galera cluster is MariaDB's",
            ));
        }
        let pool_size = match t.pool_size {
            None => 4,
            Some(n) if (1..=i64::from(MAX_POOL_SIZE)).contains(&n) => n as u32,
            Some(n) => {
                return Err(self.err(
                    "topology.pool_size",
                    format!("{n} is not allowed; give 1 to {MAX_POOL_SIZE} server connections"),
                ));
            }
        };
        Ok(Some(Pooler { mode, pool_size }))
    }

    /// What a Galera cluster cannot run: a technique whose promise rests on a lock
    /// Galera does not replicate, a delaying proxy in front of one node, and the faults
    /// written for a single server.
    fn on_galera(&self, matrices: &[Matrix], faults: &Faults) -> Result<(), WorkloadError> {
        let many = matrices.len() > 1;
        for (i, m) in matrices.iter().enumerate() {
            let at = |f: &str| match many {
                true => format!("matrix[{i}].{f}"),
                false => format!("matrix.{f}"),
            };
            if let Some(s) = m.strategies.iter().find(|s| s.def().advisory) {
                return Err(self.err(
                    &at("strategies"),
                    format!(
                        "`{s}` cannot run on a Galera cluster: {}",
                        crate::strategy::UNREPLICATED_LOCKS
                    ),
                ));
            }
            if m.phase.network.is_some() {
                return Err(self.err(
                    &at("network"),
                    "cannot be combined with topology.kind = \"galera\" yet: the delaying proxy stands in front of one node",
                ));
            }
        }
        let single_server = [
            (
                "faults.restart_db_at_s",
                !faults.restart_at.is_empty(),
                "is written for one server (or PostgreSQL's primary and standby); a Galera cluster has no primary to restart or move",
            ),
            (
                "faults.failover_at_s",
                !faults.failover_at.is_empty(),
                "is written for one server (or PostgreSQL's primary and standby); a Galera cluster has no primary to restart or move",
            ),
            (
                "faults.kill_connections_at_s",
                faults.kills_connections(),
                super::KILLS_ON_A_CLUSTER,
            ),
        ];
        if let Some((field, _, why)) = single_server.iter().find(|(_, used, _)| *used) {
            return Err(self.err(field, *why));
        }
        Ok(())
    }

    /// `[embedded.settings]`: names and values the embedded server may take from a
    /// workload (see `embedded::settings`), each later one `-c name=value` argument.
    fn embedded_settings(
        &self,
        settings: BTreeMap<String, toml::Value>,
    ) -> Result<BTreeMap<String, String>, WorkloadError> {
        settings
            .into_iter()
            .map(|(k, v)| {
                let field = format!("embedded.settings.{k}");
                let value = self.setting_value(&field, v)?;
                crate::embedded::settings::check(&k, &value).map_err(|e| self.err(&field, e))?;
                Ok((k, value))
            })
            .collect()
    }

    /// A setting's value as the server reads it: text, a number, or on/off.
    fn setting_value(&self, field: &str, v: toml::Value) -> Result<String, WorkloadError> {
        Ok(match v {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => if b { "on" } else { "off" }.to_string(),
            other => {
                return Err(self.err(
                    field,
                    format!("{other} is not allowed; give a string, number or boolean"),
                ));
            }
        })
    }

    fn session_settings(
        &self,
        prefix: &str,
        by_backend: BTreeMap<String, BTreeMap<String, toml::Value>>,
    ) -> Result<Vec<crate::session_settings::SessionSetting>, WorkloadError> {
        let mut out = Vec::new();
        for (backend, settings) in by_backend {
            let Some(kind) = BackendKind::named(&backend) else {
                return Err(self.err(
                    &format!("{prefix}.{backend}"),
                    "is not a backend; expected postgres, mysql or mssql",
                ));
            };
            for (name, v) in settings {
                let field = format!("{prefix}.{backend}.{name}");
                let value = self.setting_value(&field, v)?;
                let (name, value) = crate::session_settings::check(kind, &name, &value)
                    .map_err(|e| self.err(&field, e))?;
                out.push(crate::session_settings::SessionSetting {
                    backend: kind,
                    name,
                    value,
                });
            }
        }
        Ok(out)
    }

    fn population(&self, p: raw::Population) -> Result<Population, WorkloadError> {
        if !(0..=100_000_000).contains(&p.backlog) {
            return Err(self.err(
                "population.backlog",
                format!("{} is not allowed; give 0 to 100000000 jobs", p.backlog),
            ));
        }
        if !(0..=1_000_000).contains(&p.payload_bytes) {
            return Err(self.err(
                "population.payload_bytes",
                format!(
                    "{} is not allowed; give 0 to 1000000 bytes",
                    p.payload_bytes
                ),
            ));
        }
        if p.queues.is_empty() {
            return Err(self.err("population.queues", "is empty; define at least one queue"));
        }
        let mut queues = Vec::with_capacity(p.queues.len());
        // Names seen so far: a set, so 100,000 queues validate in linear time (a scan
        // of the list per queue took over a minute for 200,000).
        let mut seen = std::collections::HashSet::with_capacity(p.queues.len());
        for (i, q) in p.queues.into_iter().enumerate() {
            let field = |f: &str| format!("population.queues[{i}].{f}");
            if q.name.is_empty() || !seen.insert(q.name.clone()) {
                return Err(self.err(&field("name"), format!("`{}` is empty or repeated", q.name)));
            }
            check_queue_name(&q.name).map_err(|m| self.err(&field("name"), m))?;
            self.non_negative(&field("weight"), q.weight)?;
            let max_workers = match q.max_workers {
                Some(n) if (1..=i32::MAX as i64).contains(&n) => Some(n as i32),
                Some(n) => {
                    return Err(self.err(
                        &field("max_workers"),
                        format!("{n} is not allowed; give 1 or more, or leave it out for no limit"),
                    ));
                }
                None => None,
            };
            queues.push(QueueSpec {
                name: q.name,
                weight: q.weight,
                max_workers,
                paused: q.paused,
                active: q.active,
                priority: q.priority,
            });
        }
        if queues.iter().all(|q| q.weight == 0.0) {
            return Err(self.err(
                "population.queues",
                "every weight is 0; give one a weight > 0",
            ));
        }
        let mut priorities = Vec::new();
        for (i, pr) in p.priorities.into_iter().enumerate() {
            self.non_negative(&format!("population.priorities[{i}].weight"), pr.weight)?;
            priorities.push((pr.value, pr.weight));
        }
        if priorities.is_empty() {
            priorities.push((0, 1.0));
        }
        if priorities.iter().all(|p| p.1 == 0.0) {
            return Err(self.err(
                "population.priorities",
                "every weight is 0; give one a weight > 0",
            ));
        }
        Ok(Population {
            backlog: p.backlog as u64,
            payload_bytes: p.payload_bytes as u32,
            scheduled_share: self.share("population.scheduled_share", p.scheduled_share)?,
            scheduled_within_s: {
                let field = "population.scheduled_within_s";
                let v = self.non_negative(field, p.scheduled_within_s)?;
                if v > MAX_SCHEDULED_WITHIN_S {
                    return Err(self.err(
                        field,
                        format!(
                            "{} is not allowed; give at most {MAX_SCHEDULED_WITHIN_S} s (a year)",
                            short_float(v)
                        ),
                    ));
                }
                v
            },
            queues,
            priorities,
            history: match p.history {
                Some(h) => self.history("population.history", h)?,
                None => History::default(),
            },
        })
    }

    /// Up to 10 million rows of each kind.
    fn history(&self, field: &str, h: raw::History) -> Result<History, WorkloadError> {
        let count = |what: &str, n: i64| {
            if (0..=10_000_000).contains(&n) {
                Ok(n as u64)
            } else {
                Err(self.err(
                    &format!("{field}.{what}"),
                    format!("{n} is not allowed; give 0 to 10000000 rows"),
                ))
            }
        };
        Ok(History {
            finished: count("finished", h.finished)?,
            failed: count("failed", h.failed)?,
            future: count("future", h.future)?,
            paused: count("paused", h.paused)?,
            archived: count("archived", h.archived)?,
        })
    }

    fn handler(&self, h: raw::Handler) -> Result<Handler, WorkloadError> {
        if let Some(d) = h.duration {
            let f = "handler.duration";
            match d {
                DurationDist::Fixed { ms } => {
                    self.ms(&format!("{f}.ms"), ms)?;
                }
                DurationDist::Uniform { min_ms, max_ms } => {
                    self.ms(&format!("{f}.min_ms"), min_ms)?;
                    self.ms(&format!("{f}.max_ms"), max_ms)?;
                    if max_ms < min_ms {
                        return Err(self.err(&format!("{f}.max_ms"), "is below min_ms"));
                    }
                }
                DurationDist::Exponential { mean_ms } => {
                    self.positive_ms(&format!("{f}.mean_ms"), mean_ms)?;
                }
                DurationDist::Lognormal { median_ms, sigma } => {
                    self.positive_ms(&format!("{f}.median_ms"), median_ms)?;
                    self.non_negative(&format!("{f}.sigma"), sigma)?;
                }
            }
        }
        if !(1..=1000).contains(&h.max_attempts) {
            return Err(self.err(
                "handler.max_attempts",
                format!("{} is not allowed; give 1 to 1000", h.max_attempts),
            ));
        }
        Ok(Handler {
            mode: h.mode,
            duration: h.duration,
            failure_rate: self.share("handler.failure_rate", h.failure_rate)?,
            max_attempts: h.max_attempts as u32,
            retry_delay: self.ms("handler.retry_delay_ms", h.retry_delay_ms)?,
            start_gate: h.start_gate,
            heartbeat: match h.heartbeat_ms {
                Some(ms) => Some(self.positive_ms("handler.heartbeat_ms", ms)?),
                None => None,
            },
            complete: h.complete,
        })
    }

    /// `[trial]`; when every block has a timeline, the duration comes from them
    /// ([`Workload::phase`]) and must not be given.
    fn trial(&self, t: raw::Trial, timed: bool) -> Result<Trial, WorkloadError> {
        let duration = match t.duration_s {
            Some(s) => Some(self.positive_secs("trial.duration_s", s)?),
            None => None,
        };
        if timed && duration.is_some() {
            return Err(self.err(
                "trial.duration_s",
                "every block's [[matrix.timeline]] sets its trials' length (its phases' for_s, warm-up included); leave duration_s out",
            ));
        }
        if t.stop == StopRule::Duration && duration.is_none() && !timed {
            return Err(self.err(
                "trial.duration_s",
                "is required when trial.stop = \"duration\" (the default)",
            ));
        }
        if !(1..=10_000).contains(&t.repetitions) {
            return Err(self.err(
                "trial.repetitions",
                format!("{} is not allowed; give 1 to 10000", t.repetitions),
            ));
        }
        let sample_interval = self.ms("trial.sample_interval_ms", t.sample_interval_ms)?;
        let sample_interval = if sample_interval.is_zero() {
            if t.stop == StopRule::Drain {
                return Err(self.err(
                    "trial.sample_interval_ms",
                    "0 turns the sampler off, but trial.stop = \"drain\" needs it to see the queue empty",
                ));
            }
            None
        } else if sample_interval < Duration::from_millis(10) {
            return Err(self.err(
                "trial.sample_interval_ms",
                "is below 10; the sampler would load the database it measures (0 turns it off)",
            ));
        } else {
            Some(sample_interval)
        };
        Ok(Trial {
            warmup: self.secs("trial.warmup_s", t.warmup_s)?,
            duration,
            stop: t.stop,
            max: self.positive_secs("trial.max_s", t.max_s)?,
            repetitions: t.repetitions as u32,
            sample_interval,
        })
    }
}
