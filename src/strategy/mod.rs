//! The strategy vocabulary: how a worker claims jobs, what it promises, and which backend
//! has which form of it.
//!
//! A strategy is an entry of the registry ([`registry::REGISTRY`]) or one a workload
//! declares ([`custom`], held by that workload): its SQL per backend plus a small
//! description. A backend executes a strategy by its [`Shape`], never by its name, so
//! adding a strategy means adding its SQL file(s) and one registry entry.

pub mod custom;
pub mod named_params;
pub mod registry;

use crate::backend_kind::{BackendKind, ENGINE_COUNT};
use named_params::Param;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The mechanics a backend uses to run a strategy's SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One claim that locks, marks and returns the batch: a single statement with
    /// `RETURNING` / `OUTPUT` on PostgreSQL and SQL Server; on MySQL, which has neither,
    /// the locking read, pick and update steps of one short transaction.
    Claim,
    /// An unlocked read of candidate ids, then an unconditional update of them.
    ReadThenWrite,
    /// An unlocked read, then one update per candidate that re-checks it is pending.
    ReadThenConditional,
    /// An unlocked read of candidates with their row versions, then a compare-and-set
    /// on those versions: one statement for the batch where the engine can say which
    /// rows it changed (PostgreSQL's RETURNING, SQL Server's OUTPUT), else one per
    /// candidate. A candidate whose version moved is a lost race.
    VersionCas,
    /// An unlocked read of candidate ids, a lease per candidate from a lock service
    /// beside the database (a lost race where another worker holds it), then an
    /// unconditional update of the ids whose lease it won; the lease is given back once
    /// the job leaves the worker.
    ReadLockWrite,
}

/// What a claim does when it meets a row another claim holds; `prove` expects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contention {
    /// Skips it and takes other rows at once (SKIP LOCKED, READPAST, a try-lock).
    Skips,
    /// Waits for the other transaction to end.
    Waits,
    /// Does not see the lock: reads the row and writes it again (a duplicate).
    Ignores,
    /// Reads it, then its per-row update finds it taken (a lost race, no duplicate).
    Rechecks,
}

/// What a strategy promises; the verdicts hold it to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Promises {
    /// Each job goes to one worker at a time: a duplicate claim is a defect, not a
    /// demonstration.
    pub prevents_duplicates: bool,
    /// Applies the seed's per-queue max-workers check, so an overshoot is measured
    /// against it rather than expected.
    pub respects_max_workers: bool,
}

/// A strategy's form on one backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    /// The statement file, as shipped (or as translated from a declared file).
    Sql(Cow<'static, str>),
    /// The technique does not exist there, and why (shown when a run asks for it).
    Absent(&'static str),
}

/// Why a technique whose claim rests on a session-level lock (`Def::advisory`) cannot
/// run on a multi-primary cluster.
pub const UNREPLICATED_LOCKS: &str = "its claim rests on a session-level lock held on one node, and Galera replicates row changes only: a worker on another node never sees that lock and claims the same job";

/// A strategy's colour in every plot (RGB), part of its registry entry so that a new
/// strategy cannot borrow another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour(pub u8, pub u8, pub u8);

impl Colour {
    /// The colours of declared strategies, which no built-in uses.
    pub const DECLARED: [Colour; 2] = [Colour(0x17, 0xBE, 0xCF), Colour(0x6A, 0x3D, 0x9A)];

    /// A declared strategy's colour: one of [`Colour::DECLARED`], by its name, so a
    /// strategy keeps its colour from run to run.
    pub fn declared(name: &str) -> Colour {
        Colour::DECLARED[name.len() % Colour::DECLARED.len()]
    }

    /// `offset-start-<K>`'s: the technique's wine, lighter as K grows, so windows side by
    /// side stay apart and read as one technique.
    fn lighter_by_window(self, k: u32) -> Colour {
        let step = (k.max(1).ilog2().min(8) * 16) as u8;
        Colour(
            self.0.saturating_add(step / 2),
            self.1.saturating_add(step),
            self.2.saturating_add(step),
        )
    }
}

/// One strategy: a registry entry, or one a workload declares. Built-ins borrow their
/// text from the binary; a declared one owns its own.
#[derive(Debug)]
pub struct Def {
    pub name: Cow<'static, str>,
    pub colour: Colour,
    /// One line: where the technique is used in practice and what it shows.
    pub about: Cow<'static, str>,
    pub shape: Shape,
    pub contention: Contention,
    pub promises: Promises,
    /// Its form on each engine, in the engine table's order (`backend_kind::ENGINES`):
    /// a new engine is one more entry here, not one more field.
    pub forms: [Form; ENGINE_COUNT],
    /// PostgreSQL only: the claim holds a session-level advisory lock per job until the
    /// job is finished or released, which the session then unlocks.
    pub advisory: bool,
    /// PostgreSQL only: an idle worker waits for the producer's NOTIFY (or its longest
    /// back-off, for jobs no one announces) instead of polling with back-off.
    pub listens: bool,
    /// `offset-start` only: each claim starts at a random offset among the first this
    /// many eligible rows (its statement's `$3`); `offset-start-<K>` names the same
    /// technique with K = `<K>`.
    pub offset_window: Option<u32>,
    /// The `sharded` strategies: a worker claims only jobs of the queues the shard map
    /// (`shard_owners`) gives it, and its claim (or select step) binds its worker id.
    pub sharded: bool,
    /// Declared by a workload rather than shipped.
    pub custom: Option<custom::Source>,
}

/// The window of `offset-start-<K>`, from 1 (production's start) to this.
pub const MAX_OFFSET_WINDOW: u32 = 100_000;

/// A handle on a strategy: a built-in registry entry, or a declaration the workload that
/// made it holds (shared, so a cell, a worker and a result can each keep one). Compared,
/// hashed and ordered by name (built-ins first, in registry order), serialized as the
/// name.
#[derive(Clone)]
pub struct Strategy(Handle);

#[derive(Clone)]
enum Handle {
    Builtin(&'static Def),
    Declared(Arc<Def>),
}

impl Strategy {
    pub const PRODUCTION: Strategy = Strategy(Handle::Builtin(&registry::REGISTRY[0]));
    pub const NAIVE: Strategy = Strategy(Handle::Builtin(&registry::REGISTRY[1]));
    pub const WAITING: Strategy = Strategy(Handle::Builtin(&registry::REGISTRY[2]));
    pub const CONDITIONAL: Strategy = Strategy(Handle::Builtin(&registry::REGISTRY[3]));

    /// The four strategies of the seed's story: the production claim and the three
    /// mistakes it avoids. `prove` and the default `sql` listing walk these.
    pub const CORE: [Strategy; 4] = [
        Strategy::PRODUCTION,
        Strategy::NAIVE,
        Strategy::WAITING,
        Strategy::CONDITIONAL,
    ];

    /// Every built-in strategy, in registry order.
    pub fn builtin() -> impl Iterator<Item = Strategy> {
        registry::REGISTRY
            .iter()
            .map(|d| Strategy(Handle::Builtin(d)))
    }

    /// A built-in strategy by name, or `offset-start-<K>`: `offset-start` with its
    /// window set to K (1 to [`MAX_OFFSET_WINDOW`]).
    pub fn builtin_named(name: &str) -> Option<Strategy> {
        Strategy::builtin()
            .find(|s| s.as_str() == name)
            .or_else(|| Strategy::offset_variant(name))
    }

    /// `offset-start-<K>` as its own strategy: the built-in's statement and promises,
    /// K in its name, so a run can set several windows side by side.
    fn offset_variant(name: &str) -> Option<Strategy> {
        let base = Strategy::builtin().find(|s| s.def().offset_window.is_some())?;
        let digits = name.strip_prefix(base.as_str())?.strip_prefix('-')?;
        let k: u32 = digits.parse().ok()?;
        // One name per window: `offset-start-7`, not `-07` or `-+7`, which would run
        // the same window as two strategies.
        if digits != k.to_string() || !(1..=MAX_OFFSET_WINDOW).contains(&k) {
            return None;
        }
        let d = base.def();
        Some(Strategy::declared(Def {
            name: Cow::Owned(name.to_string()),
            colour: d.colour.lighter_by_window(k),
            about: Cow::Owned(format!("{} (K = {k})", d.about)),
            shape: d.shape,
            contention: d.contention,
            promises: d.promises,
            forms: d.forms.clone(),
            advisory: d.advisory,
            listens: d.listens,
            offset_window: Some(k),
            sharded: false,
            custom: None,
        }))
    }

    /// A strategy a workload declared (see [`custom`]).
    pub(crate) fn declared(def: Def) -> Strategy {
        Strategy(Handle::Declared(Arc::new(def)))
    }

    pub fn def(&self) -> &Def {
        match &self.0 {
            Handle::Builtin(d) => d,
            Handle::Declared(d) => d,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.def().name
    }

    pub fn shape(&self) -> Shape {
        self.def().shape
    }

    pub fn contention(&self) -> Contention {
        self.def().contention
    }

    /// Its claim takes leases in a lock service beside the database (`lock-service`):
    /// what runs a claim on the server alone (`prove`) cannot run it.
    pub fn needs_lock_service(&self) -> bool {
        self.shape() == Shape::ReadLockWrite
    }

    pub fn is_custom(&self) -> bool {
        self.def().custom.is_some()
    }

    /// The statement file(s) on `kind`, or why the technique has none there.
    pub fn form(&self, kind: BackendKind) -> &Form {
        &self.def().forms[kind as usize]
    }

    /// The statement file(s) on `kind`; `None` where the technique does not exist.
    pub fn sql(&self, kind: BackendKind) -> Option<&str> {
        match self.form(kind) {
            Form::Sql(s) => Some(s),
            Form::Absent(_) => None,
        }
    }

    /// The statement file(s) on `kind` as `claimbench sql` prints them; empty where the
    /// technique has no form (a run refuses those before it starts).
    pub fn text(&self, kind: BackendKind) -> &str {
        self.sql(kind).unwrap_or_default()
    }

    /// What its first statement binds, in order — the claim for a claim-shaped strategy,
    /// else its select step — as PostgreSQL's `$n` and SQL Server's `@Pn` take them: a
    /// declared claim's from its named parameters, a built-in's from its entry (the
    /// window for `offset-start`, the worker id for a sharded select). Each backend's
    /// binder reads this list; a statement file that takes other parameters fails
    /// `every_builtin_statement_takes_the_parameters_its_entry_binds`.
    pub fn binds(&self) -> &[Param] {
        use Param::*;
        const CLAIM: [Param; 3] = [Batch, WorkerId, Window];
        const SELECT: [Param; 2] = [Batch, WorkerId];
        let def = self.def();
        match (&def.custom, def.shape) {
            (Some(src), _) => &src.params,
            (None, Shape::Claim) => &CLAIM[..2 + usize::from(def.offset_window.is_some())],
            (None, _) => &SELECT[..1 + usize::from(def.sharded)],
        }
    }

    /// Whether a declared claim binds `:queue` on some backend: its workers then claim
    /// from one queue each.
    pub fn reads_queue(&self) -> bool {
        let Some(src) = &self.def().custom else {
            return false;
        };
        let q = |p: &[Param]| p.contains(&Param::Queue);
        q(&src.params)
            || src.lock.as_ref().is_some_and(|l| q(&l.params))
            || src
                .mysql
                .as_ref()
                .is_some_and(|m| q(&m.lock_params) || q(&m.claim_params))
            || src.mssql.as_ref().is_some_and(|m| q(&m.params))
    }

    /// What a declared statement's `:queue` or constant binds, for `sql`'s parameter
    /// listing (empty for anything else).
    pub fn param_note(&self, p: Param) -> String {
        self.def()
            .custom
            .as_ref()
            .and_then(|c| c.describe(p))
            .unwrap_or_default()
    }

    /// The strategy's `setup` step on `kind`, when its file there has one: the tables
    /// and triggers a technique needs beside the seed's schema (`ready-table`, or a
    /// declared claim's own tables). Run after each reset.
    pub fn setup_step(&self, kind: BackendKind) -> Option<&str> {
        if let Some(src) = &self.def().custom {
            return match kind {
                BackendKind::Postgres => src.setup.as_deref(),
                BackendKind::Mysql => src.mysql.as_ref()?.setup.as_deref(),
                BackendKind::Mssql
                | BackendKind::Redis
                | BackendKind::Nats
                | BackendKind::Rabbitmq => None,
            };
        }
        crate::statements::sql_steps(self.sql(kind)?)
            .into_iter()
            .find(|(name, _)| *name == "setup")
            .map(|(_, sql)| sql)
    }

    /// Whether the strategy is meant to hand each job to one worker at a time. Reports use
    /// it to tell an expected duplicate (naive) from a defect.
    pub fn prevents_duplicate_claims(&self) -> bool {
        self.def().promises.prevents_duplicates
    }

    /// Whether the server itself delivers a job again once its visibility timeout has
    /// passed (JetStream's AckWait), with no rescuer to take it back first: a job held
    /// past the lease is then claimed while its first worker still holds it, the
    /// technique's own duplicate claim rather than a defect.
    pub fn redelivers_on_timeout(&self) -> bool {
        crate::names::broker_layout_of(self.as_str()) == Some(crate::names::WORK_QUEUE)
    }

    /// Whether the server delivers a job again as soon as the connection of the worker
    /// holding it is gone (RabbitMQ: an unacknowledged delivery returns to the queue
    /// when its channel closes): a job whose worker lost its connection (a kill, a
    /// crash) is then claimed while the ledger still has it in that worker's hands,
    /// the technique's own duplicate claim rather than a defect.
    pub fn redelivers_on_connection_loss(&self) -> bool {
        crate::names::broker_layout_of(self.as_str()) == Some(crate::names::CLASSIC_QUEUE)
    }

    /// Whether the strategy applies the seed's per-queue max-workers check. naive and
    /// conditional claim by fetch order alone, so an overshoot there is by design.
    pub fn applies_max_workers(&self) -> bool {
        self.def().promises.respects_max_workers
    }

    /// Position for ordering: built-ins by registry order, then custom ones.
    fn rank(&self) -> usize {
        match &self.0 {
            Handle::Builtin(d) => registry::REGISTRY
                .iter()
                .position(|r| std::ptr::eq(r, *d))
                .unwrap_or(usize::MAX),
            Handle::Declared(_) => usize::MAX,
        }
    }

    /// Every name a workload or flag may use: the built-ins, for error messages.
    pub fn builtin_names() -> String {
        Strategy::builtin()
            .map(|s| match s.def().offset_window {
                Some(_) => format!("{s}, {s}-<K> (K = 1 to {MAX_OFFSET_WINDOW})"),
                None => s.as_str().to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl PartialEq for Strategy {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.def(), other.def()) || self.def().name == other.def().name
    }
}

impl Eq for Strategy {}

impl Hash for Strategy {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.def().name.hash(state);
    }
}

impl PartialOrd for Strategy {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Strategy {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.rank(), self.as_str()).cmp(&(other.rank(), other.as_str()))
    }
}

impl fmt::Debug for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Built-in names only: a declared strategy is known to the workload that declares it,
/// which resolves its names itself.
impl std::str::FromStr for Strategy {
    type Err = crate::invalid::Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::builtin_named(s).ok_or_else(|| {
                crate::invalid!(
                    "unknown strategy `{s}`; expected one of: {} (or a strategy declared under [strategies.<name>])",
                    Strategy::builtin_names()
                )
            })
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A saved run names its strategies; a declared one comes back as a placeholder that
/// keeps the name (its SQL is in the run's `custom_strategies`).
impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Strategy::builtin_named(&name).unwrap_or_else(|| custom::placeholder(&name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The highest `$n` (PostgreSQL) or `@Pn` (SQL Server) a statement uses.
    fn highest_param(sql: &str, mark: &str) -> usize {
        sql.match_indices(mark)
            .filter_map(|(at, _)| {
                let digits: String = sql[at + mark.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            })
            .max()
            .unwrap_or(0)
    }

    /// Each backend binds a built-in's first statement (its claim, or its select step)
    /// from [`Strategy::binds`]: the file on PostgreSQL and SQL Server must take exactly
    /// that many positional parameters, so a new entry whose statement needs another
    /// value fails here instead of at its first claim.
    #[test]
    fn every_builtin_statement_takes_the_parameters_its_entry_binds() {
        let mut checked = 0;
        for s in Strategy::builtin() {
            for (kind, mark) in [(BackendKind::Postgres, "$"), (BackendKind::Mssql, "@P")] {
                let Some(file) = s.sql(kind) else { continue };
                // A file without steps is its claim (`sql_steps` names it so).
                let wanted = match s.shape() {
                    Shape::Claim => "claim",
                    _ => "select",
                };
                let first = crate::statements::step(file, wanted);
                assert_eq!(
                    highest_param(first, mark),
                    s.binds().len(),
                    "{s} on {kind}: binds {:?}",
                    s.binds()
                );
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} statements checked");
    }

    /// Every built-in has a colour of its own, none a declared strategy's, and
    /// offset-start's windows shade the technique's colour rather than take another's.
    #[test]
    fn every_strategy_has_its_own_plot_colour() {
        let colours: Vec<(String, Colour)> = Strategy::builtin()
            .map(|s| (s.to_string(), s.def().colour))
            .collect();
        for (i, (name, c)) in colours.iter().enumerate() {
            for (other, d) in &colours[i + 1..] {
                assert_ne!(c, d, "{name} and {other} share a colour");
            }
            assert!(
                !Colour::DECLARED.contains(c),
                "{name} takes a declared colour"
            );
        }
        let base = Strategy::builtin_named("offset-start")
            .unwrap()
            .def()
            .colour;
        let k16 = Strategy::offset_variant("offset-start-16")
            .unwrap()
            .def()
            .colour;
        assert_ne!(base, k16);
        assert!(k16.0 >= base.0 && k16.1 > base.1 && k16.2 > base.2);
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for s in Strategy::builtin() {
            assert_eq!(s.as_str().parse::<Strategy>().unwrap(), s);
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Strategy>(&json).unwrap(), s);
        }
        let err = "skip".parse::<Strategy>().unwrap_err();
        assert!(
            err.contains("production, naive, waiting, conditional"),
            "{err}"
        );
    }

    #[test]
    fn built_ins_order_by_registry_position() {
        let mut v = vec![
            Strategy::CONDITIONAL,
            Strategy::PRODUCTION,
            Strategy::WAITING,
        ];
        v.sort();
        assert_eq!(
            v,
            vec![
                Strategy::PRODUCTION,
                Strategy::WAITING,
                Strategy::CONDITIONAL
            ]
        );
    }

    #[test]
    fn an_unknown_saved_name_keeps_its_name() {
        let s: Strategy = serde_json::from_str("\"team-claim\"").unwrap();
        assert_eq!(s.as_str(), "team-claim");
        assert!(s.is_custom());
        assert!(s.prevents_duplicate_claims());
    }
}
