//! Strategies a workload declares (`[strategies.<name>]`): the team's own claim
//! statement in a file beside the workload, run like a built-in one and held to what it
//! promises.
//!
//! A declared strategy is a [`Strategy`] like any other, held by the workload that
//! declares it (and by whatever cell, worker or result it reaches): no process-wide
//! registry, so two workloads in one process may each declare their own `team-claim`.

use super::named_params::{self, Names, Param};

mod mssql;
mod mysql;
mod postgres;

use super::{Colour, Contention, Def, Form, Promises, Shape, Strategy};
use crate::names::check_declared_name;
use mssql::mssql_form;
use mysql::check_declared_mysql;
pub(crate) use mysql::mysql_form;
use postgres::postgres_form;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A declared claim's step that binds `:ids` (PostgreSQL): `release`, run after each job
/// leaves the worker (completed, failed, released), to give up what the claim took
/// beyond the row, such as session-level advisory locks; or `hold`, what a claim in
/// flight holds of jobs until its transaction ends, for the model check. Its text
/// numbered, and what each `$n` binds.
#[derive(Debug, Clone)]
pub struct Release {
    pub sql: String,
    pub params: Vec<Param>,
}

/// A declared PostgreSQL claim's `lock` step: a locking read returning the ids to claim
/// (an `id` column), run before the `claim` step in one transaction; the claim step
/// binds them as `:ids` (`bigint[]`). For claims that take a second statement, such as
/// recording the claim in a table of its own.
#[derive(Debug, Clone)]
pub struct Lock {
    pub sql: String,
    pub params: Vec<Param>,
}

/// Where a declared strategy came from, and how its statements bind.
#[derive(Debug)]
pub struct Source {
    /// The PostgreSQL statement file as the workload names it (empty without one).
    pub file: String,
    /// PostgreSQL: the order of `$1`, `$2`, … after rewriting the named parameters.
    pub params: Vec<Param>,
    /// The MySQL form, when the workload gives one.
    pub mysql: Option<MysqlClaim>,
    /// PostgreSQL: the `release` step, when the file has one.
    pub release: Option<Release>,
    /// PostgreSQL: the `hold` step, when the file has one: how the model check's other
    /// session holds jobs as this technique's claims in flight would (else their rows
    /// and advisory locks on their ids).
    pub hold: Option<Release>,
    /// The technique honours a paused or inactive queue in its workers' code, not in
    /// its claim: the model check's reference model then takes such queues' jobs too.
    pub pauses_in_worker: bool,
    /// PostgreSQL: the `lock` step, when the file has one.
    pub lock: Option<Lock>,
    /// PostgreSQL: the `setup` step (tables, functions, triggers on claimbench's schema),
    /// run as the workers' role after each reset, when the file has one.
    pub setup: Option<String>,
    /// The declared constants, in name order: [`Param::Const`]`(i)` is the i-th.
    pub consts: Vec<(String, Constant)>,
    /// The reference model the declaration names (`prove` holds the claim to it).
    pub model: Option<crate::model::ModelRef>,
    /// The order the uncapped model sorts by, where the declaration gives one.
    pub order: Vec<crate::model::OrderKey>,
    /// The SQL Server form, when the workload gives one.
    pub mssql: Option<MssqlClaim>,
}

/// A declared SQL Server claim: one T-SQL batch (sent with `sp_executesql`, so it may
/// DECLARE and hold several statements) that claims and returns its rows with `OUTPUT`,
/// its named parameters as tiberius's `@P1`, `@P2`, … in the order of `params`, and
/// `[{SCHEMA}]` where the run's schema goes, as in the shipped files.
#[derive(Debug, Clone)]
pub struct MssqlClaim {
    pub file: String,
    pub sql: String,
    pub params: Vec<Param>,
}

impl Source {
    /// The declared constants' names, in the order [`Param::Const`] indexes them.
    pub fn const_names(&self) -> Vec<String> {
        self.consts.iter().map(|(n, _)| n.clone()).collect()
    }

    /// What `p` binds, for `sql --strategy`'s listing: a constant's name and value.
    pub fn describe(&self, p: Param) -> Option<String> {
        match p {
            Param::Const(i) => self
                .consts
                .get(usize::from(i))
                .map(|(n, v)| format!(":{n} = {v}")),
            Param::Queue => Some("the worker's queue".to_string()),
            _ => None,
        }
    }
}

/// A declared MySQL claim: MySQL has no `UPDATE ... RETURNING`, so it is two steps of
/// one transaction, as production's port is: `lock`, a locking read that returns the
/// rows to claim (an `id` column, and `attempt_count` and `queue_wait_us` when it has
/// them), then `claim`, an UPDATE of those rows by id (`:ids`). Both with `?` in place
/// of their named parameters, in the order of `*_params`.
#[derive(Debug)]
pub struct MysqlClaim {
    pub file: String,
    pub lock: String,
    pub lock_params: Vec<Param>,
    pub claim: String,
    pub claim_params: Vec<Param>,
    /// The `setup` step, run after each reset, when the file has one.
    pub setup: Option<String>,
}

/// A value a workload declares for its claim statements (`[strategies.<name>]
/// params`), bound like `:batch`: an integer as the integer type the server infers, a
/// string as text, a boolean as a boolean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Constant {
    Int(i64),
    Bool(bool),
    Text(String),
}

impl std::fmt::Display for Constant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Constant::Int(n) => write!(f, "{n}"),
            Constant::Bool(b) => write!(f, "{b}"),
            Constant::Text(t) => write!(f, "{t:?}"),
        }
    }
}

/// A declared statement file and what it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredFile {
    pub file: String,
    pub sql: String,
}

/// What run.json records of a declared strategy: enough to run it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    pub name: String,
    /// The PostgreSQL statement file and its text (named parameters); both empty when
    /// the workload gives none.
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub sql: String,
    /// The MySQL statement file (steps `lock` and `claim`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<DeclaredFile>,
    /// The SQL Server statement file (one T-SQL batch, `UPDATE … OUTPUT`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mssql: Option<DeclaredFile>,
    pub prevents_duplicates: bool,
    pub respects_max_workers: bool,
    /// Idle workers wait for the producer's `NOTIFY` (`LISTEN claimbench_work`) instead
    /// of polling, as the built-in `notify` does; PostgreSQL only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub listens: bool,
    /// Constants its statements bind by name (`:max_attempts`), in name order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Constant>,
    /// The reference model its pick follows, which `prove` holds it to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<crate::model::ModelRef>,
    /// `order = [...]`: the columns the uncapped model sorts by instead of the seed's
    /// (a library that orders by priority and id, ignoring due times).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<crate::model::OrderKey>,
    /// `pauses = "worker"`: its claim takes the jobs of paused and inactive queues (the
    /// library pauses in worker code), and the model check's model does too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pauses_in_worker: bool,
    /// The claim runs on a table the workload declares (`[table]`), whose own lifecycle
    /// decides who owns a job: it need not bind `:worker_id` (a claim that owns its jobs
    /// by a lock held for the run, given back by its release step).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_declared_table: bool,
}

impl Declared {
    /// A PostgreSQL claim in `file` holding `sql`, promising no duplicates and nothing
    /// else: the common case, which other forms extend with struct update syntax.
    pub fn postgres(name: &str, file: &str, sql: &str) -> Declared {
        Declared {
            name: name.into(),
            file: file.into(),
            sql: sql.into(),
            mysql: None,
            mssql: None,
            prevents_duplicates: true,
            respects_max_workers: false,
            listens: false,
            params: BTreeMap::new(),
            model: None,
            order: Vec::new(),
            pauses_in_worker: false,
            on_declared_table: false,
        }
    }
}

const NO_MSSQL: &str = "the workload declares no SQL Server form (give `mssql = \"file.sql\"`: one T-SQL batch, UPDATE … OUTPUT)";
const NO_POSTGRES: &str =
    "the workload declares it for MySQL only (give `postgres = \"file.sql\"` too)";
const NO_MYSQL: &str = "the workload declares it for PostgreSQL only (give `mysql = \"file.sql\"` too, with steps `lock` and `claim`)";

/// Checks `d` and returns its strategy. `d.sql` holds named parameters; errors are
/// the message for the workload's field (the caller adds file and field).
pub fn declare(d: &Declared) -> Result<Strategy, crate::invalid::Invalid> {
    let builtin = Strategy::builtin_named(&d.name).is_some();
    check_declared_name(
        &d.name,
        "strategy",
        builtin.then_some("a built-in strategy"),
    )?;
    let consts: Vec<String> = d.params.keys().cloned().collect();
    check_constants(d)?;
    let postgres = if d.file.is_empty() {
        None
    } else {
        Some(postgres_form(d, &consts)?)
    };
    if let Some(m) = d.mssql.as_ref().filter(|_| d.listens) {
        return Err(crate::invalid!(
            "{} is a SQL Server form of a claim that listens; SQL Server has no LISTEN/NOTIFY, so its idle workers could only poll: declare the SQL Server claim as a strategy of its own without `listens`",
            m.file
        ));
    }
    if let Some(m) = &d.mysql {
        check_declared_mysql(m)?;
        if d.listens {
            return Err(crate::invalid!(
                "{} is a MySQL form of a claim that listens; MySQL has no LISTEN/NOTIFY, so its idle workers could only poll: declare the MySQL claim as a strategy of its own without `listens`",
                m.file
            ));
        }
    }
    let mysql = d
        .mysql
        .as_ref()
        .map(|m| mysql_form(m, &consts))
        .transpose()?;
    let mssql = d
        .mssql
        .as_ref()
        .map(|m| mssql_form(m, &consts))
        .transpose()?;
    // A constant no statement reads is a typo of one that some statement does.
    let used = |i: usize| {
        let c = Param::Const(i as u8);
        postgres.as_ref().is_some_and(|p| {
            p.params.contains(&c) || p.lock.as_ref().is_some_and(|l| l.params.contains(&c))
        }) || mysql
            .as_ref()
            .is_some_and(|m| m.lock_params.contains(&c) || m.claim_params.contains(&c))
            || mssql.as_ref().is_some_and(|m| m.params.contains(&c))
    };
    if let Some(unused) = consts.iter().enumerate().find(|(i, _)| !used(*i)) {
        return Err(crate::invalid!(
            "params.{} is declared but no statement of the strategy reads :{}; use it, or remove it",
            unused.1,
            unused.1
        ));
    }
    let release = postgres.as_ref().and_then(|p| p.release.clone());
    let hold = postgres.as_ref().and_then(|p| p.hold.clone());
    let lock = postgres.as_ref().and_then(|p| p.lock.clone());
    let setup = postgres.as_ref().and_then(|p| p.setup.clone());
    let forms = [
        postgres.as_ref().map_or(Form::Absent(NO_POSTGRES), |p| {
            // The claim alone: the session prepares the form as one statement, and
            // the release step from the source.
            Form::Sql(Cow::Owned(p.claim.clone()))
        }),
        d.mysql.as_ref().map_or(Form::Absent(NO_MYSQL), |m| {
            Form::Sql(Cow::Owned(m.sql.clone()))
        }),
        mssql.as_ref().map_or(Form::Absent(NO_MSSQL), |m| {
            Form::Sql(Cow::Owned(m.sql.clone()))
        }),
        Form::Absent(crate::strategy::registry::SQL_ON_A_BROKER),
        Form::Absent(crate::strategy::registry::SQL_ON_A_BROKER),
        Form::Absent(crate::strategy::registry::SQL_ON_A_BROKER),
    ];
    Ok(Strategy::declared(Def {
        name: Cow::Owned(d.name.clone()),
        colour: Colour::declared(&d.name),
        about: Cow::Owned(format!(
            "declared by the workload, from {}",
            [
                d.file.as_str(),
                d.mysql.as_ref().map_or("", |m| m.file.as_str()),
                d.mssql.as_ref().map_or("", |m| m.file.as_str())
            ]
            .iter()
            .filter(|f| !f.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" and ")
        )),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: Promises {
            prevents_duplicates: d.prevents_duplicates,
            respects_max_workers: d.respects_max_workers,
        },
        forms,
        advisory: false,
        listens: d.listens,
        offset_window: None,
        sharded: false,
        custom: Some(Source {
            file: d.file.clone(),
            params: postgres.map(|p| p.params).unwrap_or_default(),
            mysql,
            release,
            hold,
            pauses_in_worker: d.pauses_in_worker,
            lock,
            setup,
            consts: d.params.clone().into_iter().collect(),
            model: d.model,
            order: d.order.clone(),
            mssql,
        }),
    }))
}

/// The names of the declared constants: plain lower-case names that are none of the
/// parameters claimbench binds itself, at most 16 of them.
fn check_constants(d: &Declared) -> Result<(), crate::invalid::Invalid> {
    const OWN: [&str; 5] = ["batch", "worker_id", "queue", "ids", "window"];
    if d.params.len() > 16 {
        return Err(crate::invalid!(
            "params declares {} constants; a claim binds at most 16",
            d.params.len()
        ));
    }
    for name in d.params.keys() {
        if !crate::names::is_lower_identifier(name, 40) {
            return Err(crate::invalid!(
                "params.{name:?} is not a parameter name; use lower-case letters, digits and _ (starting with a letter, at most 40)"
            ));
        }
        if OWN.contains(&name.as_str()) {
            return Err(crate::invalid!(
                "params.{name} is a parameter claimbench binds itself; name the constant otherwise"
            ));
        }
    }
    // A NUL cuts a text value short in one driver and is refused by another.
    if let Some((name, _)) = d
        .params
        .iter()
        .find(|(_, v)| matches!(v, Constant::Text(t) if t.contains('\0')))
    {
        return Err(crate::invalid!(
            "params.{name} holds a NUL character, which no server stores in text; give printable text"
        ));
    }
    Ok(())
}

/// The steps of a stepped file, each one of `allowed` and each once, with nothing
/// before the first: an unknown or repeated marker (a typo of `lock`, a pasted second
/// claim) was accepted and its text never ran. `say` lists what a file of its kind has.
pub(crate) fn checked_steps<'a>(
    file: &str,
    sql: &'a str,
    allowed: &[&str],
    say: &str,
) -> Result<Vec<(&'a str, &'a str)>, crate::invalid::Invalid> {
    if let Some(first) = sql.find("-- step: ")
        && !named_params::is_blank(&sql[..first])
    {
        return Err(crate::invalid!(
            "{file} has statement text before its first `-- step:` line, which would never run; a file of steps has {say}"
        ));
    }
    let steps = crate::statements::sql_steps(sql);
    for (i, (name, _)) in steps.iter().enumerate() {
        let repeated = steps[..i].iter().any(|(n, _)| n == name);
        if !allowed.contains(name) || repeated {
            return Err(crate::invalid!(
                "{file} has `-- step: {name}`{}; a file of steps has {say}, each once",
                if repeated { " twice" } else { "" }
            ));
        }
    }
    Ok(steps)
}

/// The line of `file_text` (from 1) at which `part`, a slice of it, begins.
pub(crate) fn line_of(file_text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(file_text.as_ptr() as usize);
    file_text[..offset.min(file_text.len())]
        .matches('\n')
        .count()
        + 1
}

/// A saved run's custom strategy this process never declared: the name, and the
/// strictest promise (a duplicate counts against it).
pub fn placeholder(name: &str) -> Strategy {
    Strategy::declared(Def {
        name: Cow::Owned(name.to_string()),
        colour: Colour::declared(name),
        about: Cow::Borrowed("a custom strategy of a saved run"),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: Promises {
            prevents_duplicates: true,
            respects_max_workers: false,
        },
        forms: [
            Form::Absent("a saved run's custom strategy; its SQL is in that run's run.json"),
            Form::Absent("a saved run's custom strategy; its SQL is in that run's run.json"),
            Form::Absent(NO_MSSQL),
            Form::Absent(crate::strategy::registry::SQL_ON_A_BROKER),
            Form::Absent(crate::strategy::registry::SQL_ON_A_BROKER),
            Form::Absent(crate::strategy::registry::SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: Some(Source {
            file: String::new(),
            params: Vec::new(),
            mysql: None,
            release: None,
            hold: None,
            pauses_in_worker: false,
            lock: None,
            setup: None,
            consts: Vec::new(),
            model: None,
            order: Vec::new(),
            mssql: None,
        }),
    })
}

#[cfg(test)]
mod tests;
