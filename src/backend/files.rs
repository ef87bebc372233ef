//! The statement files every engine has, at the same paths under `migrations/<engine>/`:
//! one list, so that an engine's folder is checked against it at compile time (a missing
//! file fails the build) and no backend keeps its own copy of the list.

/// One engine's shared statement files. What each binds and returns is written at the
/// top of the file; the lifecycle files answer as [`super::lifecycle`] reads them.
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
}

/// `engine_files!("mysql")`: the [`EngineFiles`] under `migrations/mysql/`.
macro_rules! engine_files {
    ($engine:literal) => {
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
        }
    };
}
pub(crate) use engine_files;
