//! `[matrix]` blocks and what they nest (durability, network, placement, gates, rate
//! searches): the dimensions a run sweeps, each checked with its field named.

use super::super::*;
use super::Validator;

impl Validator<'_> {
    /// `[matrix]` (one block, fields named `matrix.x`) or `[[matrix]]` (fields named
    /// `matrix[i].x`), and the run's backends: those the blocks list, in the order first
    /// named (each block runs on its own list, or on all of them when it gives none).
    #[allow(clippy::type_complexity)]
    pub(super) fn matrices(
        &self,
        value: toml::Value,
    ) -> Result<(Vec<BackendKind>, Vec<Matrix>), WorkloadError> {
        let blocks: Vec<(String, toml::Value)> = match value {
            toml::Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("matrix[{i}]"), v))
                .collect(),
            other @ toml::Value::Table(_) => vec![("matrix".to_string(), other)],
            other => {
                return Err(self.err(
                    "matrix",
                    format!(
                        "is a {}; give a [matrix] table or [[matrix]] blocks",
                        other.type_str()
                    ),
                ));
            }
        };
        if blocks.is_empty() {
            return Err(self.err("matrix", "is empty; give at least one [[matrix]] block"));
        }
        let many = blocks.len() > 1;
        let mut backends: Vec<BackendKind> = Vec::new();
        let mut out: Vec<Matrix> = Vec::new();
        // The names as given, before a list (network, placement, pools) expands a block.
        let mut given: Vec<String> = Vec::new();
        for (field, value) in blocks {
            let raw: raw::Matrix = toml_errors::from_value(value).map_err(|(path, message)| {
                let at = if path == "." {
                    field.clone()
                } else {
                    format!("{field}.{path}")
                };
                self.err(&at, message)
            })?;
            // The run's backends are every block's, in the order they are first named;
            // a block that names none runs on all of them.
            let own = self.block_backends(&field, raw.backends.clone())?;
            for k in own.iter().flatten() {
                if !backends.contains(k) {
                    backends.push(*k);
                }
            }
            let (network, placement, pools) = (
                raw.network.clone(),
                raw.placement.clone(),
                raw.pool_sizes.clone(),
            );
            let m = self.matrix(&field, raw)?;
            let network_blocks = match (network, placement, pools) {
                (Some(_), Some(_), _) => {
                    return Err(self.err(
                        &format!("{field}.placement"),
                        "cannot be combined with network in one block: the workers' delaying proxy points at one node; sweep one of the two",
                    ));
                }
                (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => {
                    return Err(self.err(
                        &format!("{field}.pool_sizes"),
                        "cannot be combined with network or placement in one block: the workers reach the server through one of them; sweep one",
                    ));
                }
                (Some(list), None, None) => Some(self.network_blocks(&field, &m, &list)?),
                (None, Some(list), None) => Some(self.placement_blocks(&field, &m, &list)?),
                (None, None, Some(list)) => Some(self.pool_blocks(&field, &m, &list)?),
                (None, None, None) => None,
            };
            if many && m.name.is_empty() {
                return Err(self.err(
                    &format!("{field}.name"),
                    "is missing; with several [[matrix]] blocks each needs a name (it labels its cells)",
                ));
            }
            let expanded = network_blocks.unwrap_or_else(|| vec![m.clone()]);
            if given.contains(&m.name)
                || expanded
                    .iter()
                    .any(|e| out.iter().any(|o| o.name == e.name))
            {
                return Err(self.err(
                    &format!("{field}.name"),
                    format!("`{}` names two blocks; give each its own", m.name),
                ));
            }
            given.push(m.name.clone());
            out.extend(expanded);
        }
        Ok((backends, out))
    }

    /// `durability`: the embedded servers only, and not over a shortcut the
    /// workload fixes in `[embedded.settings]` (an argument ALTER SYSTEM cannot
    /// change). Once a block sets it, the blocks that do not run at the embedded
    /// default's, so each block's trials run at the durability it says.
    pub(super) fn durability(
        &self,
        mut matrices: Vec<Matrix>,
        backends: &[BackendKind],
        embedded: &BTreeMap<String, toml::Value>,
    ) -> Result<Vec<Matrix>, WorkloadError> {
        let Some(i) = matrices.iter().position(|m| m.phase.durability.is_some()) else {
            return Ok(matrices);
        };
        let field = if matrices.len() == 1 {
            "matrix.durability".to_string()
        } else {
            format!("matrix[{i}].durability")
        };
        if let Some(other) = backends.iter().find(|b| !b.engine().embedded) {
            return Err(self.err(
                &field,
                format!(
                    "changes the settings of the servers claimbench starts (PostgreSQL, MariaDB); this workload also runs {other}, which it never starts"
                ),
            ));
        }
        if let Some(k) = crate::embedded::DURABILITY_SHORTCUTS
            .iter()
            .find(|k| embedded.contains_key(**k))
        {
            return Err(self.err(
                &field,
                format!("cannot change {k}: embedded.settings fixes it for the whole run; leave it out there"),
            ));
        }
        for m in &mut matrices {
            m.phase
                .durability
                .get_or_insert(crate::workload::Durability::Embedded);
        }
        Ok(matrices)
    }

    /// `network = ["local", "1ms", "5ms±1ms"]`: one block per round trip (see
    /// [`Validator::named_copies`]).
    pub(super) fn network_blocks(
        &self,
        field: &str,
        m: &Matrix,
        list: &[String],
    ) -> Result<Vec<Matrix>, WorkloadError> {
        let at = format!("{field}.network");
        if list.is_empty() {
            return Err(self.err(&at, "is empty; list round trips such as \"local\", \"1ms\", \"5ms±1ms\", or leave it out"));
        }
        let delays = list
            .iter()
            .map(|v| {
                crate::netdelay::parse(v).map_err(|e| {
                    self.err(
                        &at,
                        format!("{e}; write \"local\", \"1ms\", \"0.5ms\" or \"5ms±1ms\""),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let labels: Vec<String> = delays.iter().map(crate::netdelay::label).collect();
        let mut out = self.named_copies(&at, m, &labels, list)?;
        for (block, d) in out.iter_mut().zip(delays) {
            block.phase.network = Some(d).filter(|d| !d.rtt.is_zero());
        }
        Ok(out)
    }

    /// `placement = ["spread", "single-writer"]`: one block per placement of the
    /// workers over a cluster's nodes (see [`Validator::named_copies`]).
    pub(super) fn placement_blocks(
        &self,
        field: &str,
        m: &Matrix,
        list: &[Placement],
    ) -> Result<Vec<Matrix>, WorkloadError> {
        let at = format!("{field}.placement");
        if list.is_empty() {
            return Err(self.err(
                &at,
                "is empty; list \"spread\" and/or \"single-writer\", or leave it out",
            ));
        }
        let labels: Vec<String> = list.iter().map(|p| p.label().to_string()).collect();
        let mut out = self.named_copies(&at, m, &labels, &labels)?;
        for (block, p) in out.iter_mut().zip(list) {
            block.phase.placement = Some(*p);
        }
        Ok(out)
    }

    /// `pool_sizes = [1, 2, 4]`: one block per server pool of the pooler claimbench
    /// starts (named `pool 2`, see [`Validator::named_copies`]); the topology check
    /// (`pooler_fits`) says whether there is such a pooler.
    pub(super) fn pool_blocks(
        &self,
        field: &str,
        m: &Matrix,
        list: &[i64],
    ) -> Result<Vec<Matrix>, WorkloadError> {
        let at = format!("{field}.pool_sizes");
        let sizes = self.counts(&at, list, i64::from(crate::pooler::MAX_POOL_SIZE))?;
        let labels: Vec<String> = sizes.iter().map(|n| format!("pool {n}")).collect();
        let given: Vec<String> = list.iter().map(i64::to_string).collect();
        let mut out = self.named_copies(&at, m, &labels, &given)?;
        for (block, n) in out.iter_mut().zip(sizes) {
            block.phase.pool_size = Some(n);
        }
        Ok(out)
    }

    /// One copy of `m` per level of a block-level sweep, named by the level's label
    /// (`5ms`, or `name 5ms` for a named block), so every cell of the sweep is its own
    /// phase in every table, plot and comparison. `given` is what the workload wrote,
    /// for the error on a level listed twice.
    pub(super) fn named_copies(
        &self,
        at: &str,
        m: &Matrix,
        labels: &[String],
        given: &[String],
    ) -> Result<Vec<Matrix>, WorkloadError> {
        let mut out: Vec<Matrix> = Vec::with_capacity(labels.len());
        for (label, v) in labels.iter().zip(given) {
            let mut block = m.clone();
            block.name = if m.name.is_empty() {
                label.clone()
            } else {
                format!("{} {label}", m.name)
            };
            if out.iter().any(|o| o.name == block.name) {
                return Err(self.err(at, format!("lists `{v}` twice")));
            }
            out.push(block);
        }
        Ok(out)
    }

    pub(super) fn block_backends(
        &self,
        field: &str,
        b: Option<Vec<BackendKind>>,
    ) -> Result<Option<Vec<BackendKind>>, WorkloadError> {
        match b {
            None => Ok(None),
            Some(b) if b.is_empty() => Err(self.err(
                &format!("{field}.backends"),
                "is empty; list backends (postgres, mysql), or leave it out to run on the backend of --db",
            )),
            Some(b) => {
                if let Some(d) = b.iter().enumerate().find(|(i, k)| b[..*i].contains(k)) {
                    return Err(self.err(
                        &format!("{field}.backends"),
                        format!("lists `{}` twice", d.1),
                    ));
                }
                Ok(Some(b))
            }
        }
    }

    pub(super) fn matrix(&self, field: &str, m: raw::Matrix) -> Result<Matrix, WorkloadError> {
        let f = |x: &str| format!("{field}.{x}");
        if m.strategies.is_empty() {
            return Err(self.err(&f("strategies"), "is empty; list at least one strategy"));
        }
        let strategies = m
            .strategies
            .iter()
            .map(|name| self.strategy(&f("strategies"), name))
            .collect::<Result<Vec<_>, _>>()?;
        if m.index_layouts.is_empty() {
            return Err(self.err(&f("index_layouts"), "is empty; list at least one layout"));
        }
        for l in &m.index_layouts {
            self.layout(&f("index_layouts"), l)?;
        }
        self.unrepeated(&f("strategies"), &m.strategies)?;
        self.unrepeated(&f("index_layouts"), &m.index_layouts)?;
        let paired = self.pairing(field, &m)?;
        let name = m.name.unwrap_or_default();
        if !name.is_empty() && !is_plain_name(&name) {
            return Err(self.err(
                &f("name"),
                format!("`{name}` is not allowed; use letters, digits, - and _"),
            ));
        }
        let phase = PhaseSettings {
            backlog: match m.backlog {
                Some(b) if (0..=100_000_000).contains(&b) => Some(b as u64),
                Some(b) => {
                    return Err(self.err(
                        &f("backlog"),
                        format!("{b} is not allowed; give 0 to 100000000 jobs"),
                    ));
                }
                None => None,
            },
            arrival_rate_per_s: match m.arrival_rate_per_s {
                Some(r) => Some(self.rate(&f("arrival_rate_per_s"), r)?),
                None => None,
            },
            arrival_rate_from: match m.arrival_rate_from {
                Some(r) => Some(self.rate_from(&f("arrival_rate_from"), r)?),
                None => None,
            },
            handler_mode: m.handler_mode,
            complete: m.complete,
            storage: m.storage,
            history: match m.history {
                Some(h) => Some(self.history(&f("history"), h)?),
                None => None,
            },
            empty_backoff_max: match m.empty_backoff_max_ms {
                Some(ms) => Some(self.positive_ms(&f("empty_backoff_max_ms"), ms)?),
                None => None,
            },
            warmup: match m.warmup_s {
                Some(s) => Some(self.secs(&f("warmup_s"), s)?),
                None => None,
            },
            duration: match m.duration_s {
                Some(s) => Some(self.positive_secs(&f("duration_s"), s)?),
                None => None,
            },
            repetitions: match m.repetitions {
                Some(n) if (1..=10_000).contains(&n) => Some(n as u32),
                Some(n) => {
                    return Err(self.err(
                        &f("repetitions"),
                        format!("{n} is not allowed; give 1 to 10000"),
                    ));
                }
                None => None,
            },
            search: match m.search {
                Some(s) => Some(self.search(&f("search"), s)?),
                None => None,
            },
            hold_snapshot: match m.hold_snapshot_s.as_deref() {
                Some(w) => Some(self.hold_window(&f("hold_snapshot_s"), w, true)?),
                None => None,
            },
            session_settings: self.session_settings(&f("session"), m.session)?,
            network: None,
            placement: None,
            pool_size: None,
            durability: m.durability,
            shard_moves: match m.shard_moves {
                Some(moves) => Some(self.shard_moves(&f("shard_moves"), moves, &strategies)?),
                None => None,
            },
            paired,
            timeline: self.timeline(&f("timeline"), m.timeline)?,
        };
        if phase.arrival_rate_from.is_some()
            && (phase.search.is_some() || phase.arrival_rate_per_s.is_some())
        {
            return Err(self.err(
                &f("arrival_rate_from"),
                "cannot be combined with arrival_rate_per_s or search: it sets the rate itself",
            ));
        }
        if phase.search.is_some() && m.arrival_rate_per_s.is_some() {
            return Err(self.err(
                &f("arrival_rate_per_s"),
                "cannot be combined with search: the search chooses the rate",
            ));
        }
        let if_db_given = m.if_db_given == Some(true);
        if if_db_given && m.backends.as_ref().is_none_or(|b| b.is_empty()) {
            return Err(self.err(
                &f("if_db_given"),
                "needs the block's own backends: list the ones whose --db it waits for in backends",
            ));
        }
        Ok(Matrix {
            if_db_given,
            name,
            backends: m.backends.unwrap_or_default(),
            strategies,
            index_layouts: m.index_layouts,
            workers: self.counts(&f("workers"), &m.workers, 512)?,
            batch_sizes: self.counts(&f("batch_sizes"), &m.batch_sizes, 10_000)?,
            phase,
        })
    }

    /// `paired = true` (with `paired_threshold`): a block of exactly two variants, two
    /// strategies on one layout or one strategy on two layouts, whose rate is its own.
    fn pairing(&self, field: &str, m: &raw::Matrix) -> Result<Option<Pairing>, WorkloadError> {
        let f = |x: &str| format!("{field}.{x}");
        if m.paired != Some(true) {
            if m.paired_threshold.is_some() {
                return Err(self.err(
                    &f("paired_threshold"),
                    "is set but the block is not paired; add paired = true or drop it",
                ));
            }
            return Ok(None);
        }
        let (s, l) = (m.strategies.len(), m.index_layouts.len());
        if !matches!((s, l), (2, 1) | (1, 2)) {
            return Err(self.err(
                &f("paired"),
                format!(
                    "pairs two variants, A and B: list two strategies and one layout, or one strategy and two layouts (this block lists {s} {} and {l} {})",
                    if s == 1 { "strategy" } else { "strategies" },
                    if l == 1 { "layout" } else { "layouts" }
                ),
            ));
        }
        let other = if m.search.is_some() {
            Some("search")
        } else if m.arrival_rate_from.is_some() {
            Some("arrival_rate_from")
        } else {
            None
        };
        if let Some(other) = other {
            return Err(self.err(
                &f("paired"),
                format!("cannot be combined with {other}: both sides must run at one rate, the block's own"),
            ));
        }
        if let Some(n) = m.repetitions.filter(|n| *n < Pairing::MIN_ROUNDS as i64) {
            return Err(self.err(
                &f("repetitions"),
                format!("{n} is too few for a paired block: each repetition is a round of A and B, and judging their ratios takes at least {} (10 is a good start)", Pairing::MIN_ROUNDS),
            ));
        }
        let threshold = match m.paired_threshold {
            None => Pairing::DEFAULT_THRESHOLD,
            Some(t) if t > 0.0 && t < 1.0 => t,
            Some(t) => {
                return Err(self.err(
                    &f("paired_threshold"),
                    format!("{t} is not allowed; give a relative change above 0 and below 1 (0.05 is 5 %)"),
                ));
            }
        };
        Ok(Some(Pairing { threshold }))
    }

    /// A rate taken from another phase's cell, times a multiple above 0, at most 100.
    pub(super) fn rate_from(
        &self,
        field: &str,
        r: raw::RateFrom,
    ) -> Result<RateFrom, WorkloadError> {
        let at = format!("{field}.times");
        let times = self.positive(&at, r.times)?;
        if times > super::MAX_RATE_TIMES {
            return Err(self.err(
                &at,
                format!(
                    "{times} is not allowed; give a multiple above 0, at most {}",
                    super::MAX_RATE_TIMES
                ),
            ));
        }
        Ok(RateFrom {
            phase: r.phase,
            workers: r.workers,
            batch_size: r.batch_size,
            times,
        })
    }

    pub(super) fn gate(
        &self,
        i: usize,
        g: raw::Gate,
        matrices: &[Matrix],
    ) -> Result<crate::results::Gate, WorkloadError> {
        let field = |f: &str| format!("gate[{i}].{f}");
        let check = crate::slo::Slo::parse(&g.check)
            .map_err(|e| self.err(&field("check"), e.to_string()))?;
        if let Some(p) = &g.phase
            && !matrices.iter().any(|m| &m.name == p)
        {
            return Err(self.err(
                &field("phase"),
                format!("no [[matrix]] block is named `{p}`"),
            ));
        }
        if let Some(l) = &g.index_layout {
            self.layout(&field("index_layout"), l)?;
        }
        let strategy = match &g.strategy {
            Some(name) => Some(self.strategy(&field("strategy"), name)?),
            None => None,
        };
        Ok(crate::results::Gate {
            check,
            phase: g.phase,
            strategy,
            index_layout: g.index_layout,
            workers: g.workers,
            batch_size: g.batch_size,
        })
    }

    pub(super) fn search(
        &self,
        field: &str,
        s: raw::RateSearch,
    ) -> Result<RateSearch, WorkloadError> {
        let at = format!("{field}.start_per_s");
        let start_per_s = self.rate(&at, self.positive(&at, s.start_per_s)?)?;
        if !(2..=100).contains(&s.max_trials) {
            return Err(self.err(
                &format!("{field}.max_trials"),
                format!("{} is not allowed; give 2 to 100", s.max_trials),
            ));
        }
        if !(s.tolerance > 0.0 && s.tolerance < 1.0) {
            return Err(self.err(
                &format!("{field}.tolerance"),
                format!(
                    "{} is not allowed; give a share between 0 and 1, e.g. 0.1",
                    s.tolerance
                ),
            ));
        }
        Ok(RateSearch {
            start_per_s,
            max_trials: s.max_trials as u32,
            tolerance: s.tolerance,
        })
    }
}
