//! The statement files every engine has, at the same paths under `migrations/<engine>/`:
//! one list, so that an engine's folder is checked against it at compile time (a missing
//! file fails the build) and no backend keeps its own copy of the list. The control
//! recipe (`recipe.rs`) reads the control and evidence files; each file's arguments and
//! columns are written at the top of the file and beside the recipe function that runs
//! it.

/// One engine's shared statement files. The lifecycle files answer as
/// [`super::lifecycle`] reads them.
#[derive(Debug)]
pub struct EngineFiles {
    pub schema: &'static str,
    pub seed: &'static str,
    pub reset: &'static str,
    pub control: &'static str,
    pub session: &'static str,
    pub start: &'static str,
    pub heartbeat: &'static str,
    pub effect: &'static str,
    pub complete: &'static str,
    pub fail: &'static str,
    pub release: &'static str,
    pub rescue: &'static str,
    pub produce: &'static str,
    pub sample: &'static str,
    pub counters: &'static str,
    /// The two read-then-write mistakes, which every engine can make.
    pub naive: &'static str,
    pub conditional: &'static str,
    /// Compare-and-set on a row version, which every engine can do.
    pub version_cas: &'static str,
    pub settings: &'static str,
    pub reconcile: &'static str,
    pub clock: &'static str,
    pub completed_by_queue: &'static str,
    pub job_queues: &'static str,
    pub table_stats: &'static str,
    /// A step of `control` run before `table_stats` where the server's size estimates
    /// need a refresh (MySQL's `ANALYZE TABLE`).
    pub refresh_stats: Option<&'static str>,
}

/// `engine_files!("postgres")`: the [`EngineFiles`] under `migrations/postgres/`;
/// `engine_files!("mysql", refresh_stats: "analyze-hot")` names the control step that
/// refreshes size estimates.
macro_rules! engine_files {
    ($engine:literal) => {
        $crate::backend::files::engine_files!($engine, None)
    };
    ($engine:literal, refresh_stats: $step:literal) => {
        $crate::backend::files::engine_files!($engine, Some($step))
    };
    ($engine:literal, $refresh:expr) => {
        $crate::backend::files::EngineFiles {
            schema: $crate::statements::migration!($engine, "schema.sql"),
            seed: $crate::statements::migration!($engine, "seed.sql"),
            reset: $crate::statements::migration!($engine, "reset.sql"),
            control: $crate::statements::migration!($engine, "control.sql"),
            session: $crate::statements::migration!($engine, "session.sql"),
            start: $crate::statements::migration!($engine, "lifecycle/start.sql"),
            heartbeat: $crate::statements::migration!($engine, "lifecycle/heartbeat.sql"),
            effect: $crate::statements::migration!($engine, "lifecycle/effect.sql"),
            complete: $crate::statements::migration!($engine, "lifecycle/complete.sql"),
            fail: $crate::statements::migration!($engine, "lifecycle/fail.sql"),
            release: $crate::statements::migration!($engine, "lifecycle/release.sql"),
            rescue: $crate::statements::migration!($engine, "lifecycle/rescue.sql"),
            produce: $crate::statements::migration!($engine, "lifecycle/produce.sql"),
            sample: $crate::statements::migration!($engine, "evidence/sample.sql"),
            counters: $crate::statements::migration!($engine, "evidence/counters.sql"),
            naive: $crate::statements::migration!($engine, "strategies/naive.sql"),
            conditional: $crate::statements::migration!($engine, "strategies/conditional.sql"),
            version_cas: $crate::statements::migration!($engine, "strategies/version-cas.sql"),
            settings: $crate::statements::migration!($engine, "evidence/settings.sql"),
            reconcile: $crate::statements::migration!($engine, "evidence/reconcile.sql"),
            clock: $crate::statements::migration!($engine, "evidence/clock.sql"),
            completed_by_queue: $crate::statements::migration!(
                $engine,
                "evidence/completed_by_queue.sql"
            ),
            job_queues: $crate::statements::migration!($engine, "evidence/job_queues.sql"),
            table_stats: $crate::statements::migration!($engine, "evidence/table_stats.sql"),
            refresh_stats: $refresh,
        }
    };
}
pub(crate) use engine_files;
