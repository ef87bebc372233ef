//! Resetting a trial by copying a pristine database, on a PostgreSQL cluster claimbench
//! started itself. Seeding 1M jobs and building their indexes takes about 4 s; copying
//! the files of a database seeded once (`CREATE DATABASE … TEMPLATE … STRATEGY
//! FILE_COPY`) takes about 0.25 s on the embedded cluster (fsync off), so a sweep spends
//! its time measuring rather than resetting. Every trial still starts from the same bytes:
//! the same rows, the same index pages, the same statistics, no dead tuples.
//!
//! Only for the embedded cluster: on a server claimbench did not start it creates no
//! database, and resets its schema in place as before.

use crate::backend::sql::{fill, migration, step};
use crate::workload::Workload;
use sha2::{Digest, Sha256};

/// The database every trial runs in, recreated from a pristine copy before each.
pub const TRIAL_DB: &str = "claimbench_trial";

const PRISTINE_SQL: &str = migration!("postgres", "pristine.sql");

/// The pristine databases made so far in this run, and which one trials use now.
#[derive(Debug, Default)]
pub struct Pristine {
    /// (what was seeded, its database, jobs seeded).
    made: Vec<(String, String, u64)>,
}

impl Pristine {
    /// The pristine database holding `key`, with its seeded count, if one was made.
    pub fn find(&self, key: &str) -> Option<(String, u64)> {
        self.made
            .iter()
            .find(|m| m.0 == key)
            .map(|m| (m.1.clone(), m.2))
    }

    /// The name the next pristine database gets.
    pub fn next_name(&self) -> String {
        format!("claimbench_pristine_{}", self.made.len())
    }

    pub fn record(&mut self, key: String, db: String, seeded: u64) {
        self.made.push((key, db, seeded));
    }
}

/// What a pristine copy is a copy of: the population, the layout, the seed, the storage
/// model and whether the cleanup job's index is built (the rest of the workload does
/// not reach the tables).
pub fn key(workload: &Workload, layout: &str, seed: u64) -> String {
    let population = serde_json::to_string(&workload.population).expect("serializes");
    let mut h = Sha256::new();
    h.update(population.as_bytes());
    h.update(layout.as_bytes());
    h.update(seed.to_le_bytes());
    h.update([u8::from(workload.cleanup.is_some())]);
    h.update(workload.storage.name().as_bytes());
    hex::encode(h.finalize())
}

/// The statement that copies `template` into the trial database. PostgreSQL 15 made
/// WAL_LOG the default strategy, which writes every page into the WAL; FILE_COPY copies
/// the files (before 15 it was the only strategy, and the keyword does not exist).
pub fn copy_sql(template: &str, server_version_num: i32) -> String {
    let form = if server_version_num >= 150_000 {
        "copy-file-copy"
    } else {
        "copy"
    };
    fill(
        step(PRISTINE_SQL, form),
        &[("trial", TRIAL_DB), ("template", template)],
    )
}

/// Drops the trial database even if a connection of the last trial is still closing
/// (`WITH (FORCE)` exists from PostgreSQL 13).
pub fn drop_sql(server_version_num: i32) -> String {
    let form = if server_version_num >= 130_000 {
        "drop-trial-force"
    } else {
        "drop-trial"
    };
    fill(step(PRISTINE_SQL, form), &[("trial", TRIAL_DB)])
}

/// Drops a stale pristine database of this name, or creates it (`step` is `drop` or
/// `create`); names are claimbench's own ([`Pristine::next_name`]).
pub fn database_sql(form: &str, name: &str) -> String {
    fill(step(PRISTINE_SQL, form), &[("name", name)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_key_changes_with_what_reaches_the_tables_only() {
        let text = std::fs::read_to_string("workloads/smoke.toml").unwrap();
        let w = Workload::parse(Path::new("smoke.toml"), &text).unwrap();
        let k = key(&w, "fetch-order", 7);
        assert_eq!(k, key(&w, "fetch-order", 7));
        assert_ne!(k, key(&w, "pk-only", 7));
        assert_ne!(k, key(&w, "fetch-order", 8));
        let mut bigger = w.clone();
        bigger.population.backlog += 1;
        assert_ne!(k, key(&bigger, "fetch-order", 7));
        let mut other_trial = w.clone();
        other_trial.trial.repetitions = 9;
        assert_eq!(k, key(&other_trial, "fetch-order", 7));
    }

    #[test]
    fn file_copy_only_where_the_server_knows_it() {
        assert!(
            crate::backend::sql::missing_steps(
                PRISTINE_SQL,
                &[
                    "drop",
                    "create",
                    "drop-trial",
                    "drop-trial-force",
                    "copy",
                    "copy-file-copy"
                ]
            )
            .is_empty()
        );
        assert_eq!(
            database_sql("create", "claimbench_pristine_0"),
            "CREATE DATABASE claimbench_pristine_0"
        );
        assert_eq!(
            copy_sql("p", 150_004),
            "CREATE DATABASE claimbench_trial TEMPLATE p STRATEGY FILE_COPY"
        );
        assert_eq!(
            copy_sql("p", 140_010),
            "CREATE DATABASE claimbench_trial TEMPLATE p"
        );
        assert!(drop_sql(160_000).ends_with("WITH (FORCE)"));
        assert!(!drop_sql(120_000).contains("FORCE"));
    }
}
