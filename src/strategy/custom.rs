//! Strategies a workload declares (`[strategies.<name>]`): the team's own claim
//! statement in a file beside the workload, run like a built-in one and held to what it
//! promises.
//!
//! A declared strategy is a [`Strategy`] like any other, held by the workload that
//! declares it (and by whatever cell, worker or result it reaches): no process-wide
//! registry, so two workloads in one process may each declare their own `team-claim`.

use super::named_params::{self, Param};
use super::{Contention, Def, Form, Promises, Shape, Strategy};
use crate::names::check_declared_name;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Where a declared strategy came from, and how its statement binds.
#[derive(Debug)]
pub struct Source {
    /// The statement file as the workload names it.
    pub file: String,
    /// PostgreSQL: the order of `$1`, `$2`, … after rewriting the named parameters.
    pub params: Vec<Param>,
}

/// What run.json records of a declared strategy: enough to run it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    pub name: String,
    pub file: String,
    /// The statement as the file holds it (named parameters).
    pub sql: String,
    pub prevents_duplicates: bool,
    pub respects_max_workers: bool,
}

const NOT_YET: &str = "custom strategies run on PostgreSQL only for now: their single-statement form needs RETURNING, which MySQL lacks, and no SQL Server runs here to check one";

/// Checks `d` and returns its strategy. `d.sql` holds named parameters; errors are
/// the message for the workload's field (the caller adds file and field).
pub fn declare(d: &Declared) -> Result<Strategy, String> {
    let builtin = Strategy::builtin_named(&d.name).is_some();
    check_declared_name(
        &d.name,
        "strategy",
        builtin.then_some("a built-in strategy"),
    )?;
    if named_params::is_blank(&d.sql) {
        return Err(format!(
            "{} holds no statement; give the claim statement (an UPDATE ... RETURNING id that sets worker_id = :worker_id)",
            d.file
        ));
    }
    // A statement that never reads :batch is allowed: the over-claim check is what
    // catches a claim that ignores the batch size, with numbers.
    let (sql, params) = named_params::to_postgres(&d.sql).map_err(|e| e.to_string())?;
    if !params.contains(&Param::WorkerId) {
        return Err(format!(
            "{} never uses :worker_id; claimbench starts and completes a job only while its row names the worker that claimed it, so every job this claims would be lost: set worker_id = :worker_id in the claim",
            d.file
        ));
    }
    Ok(Strategy::declared(Def {
        name: Cow::Owned(d.name.clone()),
        about: Cow::Owned(format!("declared by the workload, from {}", d.file)),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: Promises {
            prevents_duplicates: d.prevents_duplicates,
            respects_max_workers: d.respects_max_workers,
        },
        forms: [
            Form::Sql(Cow::Owned(sql)),
            Form::Absent(NOT_YET),
            Form::Absent(NOT_YET),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        custom: Some(Source {
            file: d.file.clone(),
            params,
        }),
    }))
}

/// A saved run's custom strategy this process never declared: the name, and the
/// strictest promise (a duplicate counts against it).
pub fn placeholder(name: &str) -> Strategy {
    Strategy::declared(Def {
        name: Cow::Owned(name.to_string()),
        about: Cow::Borrowed("a custom strategy of a saved run"),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: Promises {
            prevents_duplicates: true,
            respects_max_workers: false,
        },
        forms: [
            Form::Absent("a saved run's custom strategy; its SQL is in that run's run.json"),
            Form::Absent(NOT_YET),
            Form::Absent(NOT_YET),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        custom: Some(Source {
            file: String::new(),
            params: Vec::new(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend_kind::BackendKind;

    fn declared(name: &str, sql: &str) -> Declared {
        Declared {
            name: name.into(),
            file: format!("{name}.sql"),
            sql: sql.into(),
            prevents_duplicates: true,
            respects_max_workers: false,
        }
    }

    #[test]
    fn a_declared_statement_runs_as_a_claim_with_numbered_parameters() {
        let s = declare(&declared(
            "unit-claim",
            "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot LIMIT :batch) RETURNING id",
        ))
        .unwrap();
        assert_eq!(s.shape(), Shape::Claim);
        assert!(s.is_custom());
        assert_eq!(
            s.sql(BackendKind::Postgres).unwrap(),
            "UPDATE jobs_hot SET worker_id = $1 WHERE id IN (SELECT id FROM jobs_hot LIMIT $2) RETURNING id"
        );
        assert_eq!(
            s.def().custom.as_ref().unwrap().params,
            &[Param::WorkerId, Param::Batch]
        );
        assert!(s.sql(BackendKind::Mysql).is_none());
        // Known to the workload that declared it, not to the process.
        assert!("unit-claim".parse::<Strategy>().is_err());
    }

    /// Regression: a process-wide registry resolved a name to its latest declaration, so
    /// two workloads in one process shared one `team-claim`; each now keeps its own.
    #[test]
    fn two_workloads_may_each_declare_one_name() {
        let sql = |t: &str| format!("UPDATE {t} SET worker_id = :worker_id RETURNING id");
        let a = declare(&declared("team-claim", &sql("a"))).unwrap();
        let b = declare(&declared("team-claim", &sql("b"))).unwrap();
        assert!(
            a.sql(BackendKind::Postgres)
                .unwrap()
                .starts_with("UPDATE a ")
        );
        assert!(
            b.sql(BackendKind::Postgres)
                .unwrap()
                .starts_with("UPDATE b ")
        );
    }

    #[test]
    fn bad_declarations_say_why() {
        assert!(
            declare(&declared("production", "SELECT :batch"))
                .unwrap_err()
                .contains("built-in")
        );
        assert!(
            declare(&declared("a b", "SELECT :batch"))
                .unwrap_err()
                .contains("not a strategy name")
        );
        assert!(
            declare(&declared("bad-param", "SELECT :batch, :queue"))
                .unwrap_err()
                .contains(":queue")
        );
        // Regression: these ran, and every job was reported lost (exit 1).
        let e = declare(&declared(
            "no-worker",
            "UPDATE jobs_hot SET status = 1 RETURNING id",
        ))
        .unwrap_err();
        assert!(e.contains("never uses :worker_id"), "{e}");
        let e = declare(&declared("blank", "-- to do\n")).unwrap_err();
        assert!(e.contains("holds no statement"), "{e}");
    }
}
