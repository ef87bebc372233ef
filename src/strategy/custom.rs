//! Strategies a workload declares (`[strategies.<name>]`): the team's own claim
//! statement in a file beside the workload, run like a built-in one and held to what it
//! promises.
//!
//! A declared strategy is a [`Strategy`] like any other, held by the workload that
//! declares it (and by whatever cell, worker or result it reaches): no process-wide
//! registry, so two workloads in one process may each declare their own `team-claim`.

use super::named_params::{self, Names, Param};
use super::{Colour, Contention, Def, Form, Promises, Shape, Strategy};
use crate::names::check_declared_name;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A declared claim's `release` step (PostgreSQL): run after each job leaves the worker
/// (completed, failed, released), to give up what the claim took beyond the row, such as
/// session-level advisory locks. Its text numbered, and what each `$n` binds.
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
    /// PostgreSQL: the `lock` step, when the file has one.
    pub lock: Option<Lock>,
    /// PostgreSQL: the `setup` step (tables, functions, triggers on claimbench's schema),
    /// run as the workers' role after each reset, when the file has one.
    pub setup: Option<String>,
    /// The declared constants, in name order: [`Param::Const`]`(i)` is the i-th.
    pub consts: Vec<(String, Constant)>,
    /// The reference model the declaration names (`prove` holds the claim to it).
    pub model: Option<crate::model::ModelRef>,
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
}

const NO_MSSQL: &str = "the workload declares no SQL Server form (give `mssql = \"file.sql\"`: one T-SQL batch, UPDATE … OUTPUT)";
const NO_POSTGRES: &str =
    "the workload declares it for MySQL only (give `postgres = \"file.sql\"` too)";
const NO_MYSQL: &str = "the workload declares it for PostgreSQL only (give `mysql = \"file.sql\"` too, with steps `lock` and `claim`)";

/// Checks `d` and returns its strategy. `d.sql` holds named parameters; errors are
/// the message for the workload's field (the caller adds file and field).
pub fn declare(d: &Declared) -> Result<Strategy, String> {
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
        return Err(format!(
            "{} is a SQL Server form of a claim that listens; SQL Server has no LISTEN/NOTIFY, so its idle workers could only poll: declare the SQL Server claim as a strategy of its own without `listens`",
            m.file
        ));
    }
    if let Some(m) = &d.mysql {
        check_declared_mysql(m)?;
        if d.listens {
            return Err(format!(
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
        return Err(format!(
            "params.{} is declared but no statement of the strategy reads :{}; use it, or remove it",
            unused.1, unused.1
        ));
    }
    let release = postgres.as_ref().and_then(|p| p.release.clone());
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
            lock,
            setup,
            consts: d.params.clone().into_iter().collect(),
            model: d.model,
            mssql,
        }),
    }))
}

/// The names of the declared constants: plain lower-case names that are none of the
/// parameters claimbench binds itself, at most 16 of them.
fn check_constants(d: &Declared) -> Result<(), String> {
    const OWN: [&str; 5] = ["batch", "worker_id", "queue", "ids", "window"];
    if d.params.len() > 16 {
        return Err(format!(
            "params declares {} constants; a claim binds at most 16",
            d.params.len()
        ));
    }
    for name in d.params.keys() {
        let plain = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !plain || name.len() > 40 {
            return Err(format!(
                "params.{name:?} is not a parameter name; use lower-case letters, digits and _ (starting with a letter, at most 40)"
            ));
        }
        if OWN.contains(&name.as_str()) {
            return Err(format!(
                "params.{name} is a parameter claimbench binds itself; name the constant otherwise"
            ));
        }
    }
    Ok(())
}

/// A declared PostgreSQL form: the claim numbered, what it binds, and its other steps.
struct PostgresForm {
    claim: String,
    params: Vec<Param>,
    release: Option<Release>,
    lock: Option<Lock>,
    setup: Option<String>,
}

/// The steps a declared PostgreSQL file may have, when it has any.
const POSTGRES_STEPS: [&str; 4] = ["setup", "lock", "claim", "release"];

/// The PostgreSQL file: one claim statement, or steps (`claim`, and optionally `setup`,
/// `lock` and `release`), each with its parameters numbered.
fn postgres_form(d: &Declared, consts: &[String]) -> Result<PostgresForm, String> {
    crate::privileged_sql::check_file(&d.file, &d.sql)?;
    if named_params::is_blank(&d.sql) {
        return Err(format!(
            "{} holds no statement; give the claim statement (an UPDATE ... RETURNING id that sets worker_id = :worker_id)",
            d.file
        ));
    }
    // Steps only when a line names one of them exactly: a comment that merely reads
    // like a marker (`-- step: lock the rows first`) leaves the file one statement.
    let stepped = d.sql.lines().any(|l| {
        POSTGRES_STEPS
            .iter()
            .any(|s| l.trim() == format!("-- step: {s}"))
    });
    if !stepped {
        let (claim, params) = claim_form(&d.file, (&d.sql, &d.sql), false, consts)?;
        return Ok(PostgresForm {
            claim,
            params,
            release: None,
            lock: None,
            setup: None,
        });
    }
    let steps = checked_steps(
        &d.file,
        &d.sql,
        &POSTGRES_STEPS,
        "`-- step: claim` and, optionally, `-- step: setup` (run after each reset), `-- step: lock` (a locking read of the ids the claim step takes as :ids) and `-- step: release` (run with :ids after each job leaves the worker)",
    )?;
    let find = |name: &str| steps.iter().find(|(n, _)| *n == name).map(|(_, sql)| *sql);
    let claim = find("claim")
        .filter(|sql| !named_params::is_blank(sql))
        .ok_or_else(|| {
            format!(
                "{} has no `-- step: claim`; give the claim statement there",
                d.file
            )
        })?;
    let at = |sql: &str| format!(" (the step begins at line {})", line_of(&d.sql, sql));
    // A second statement's line, counted in the step, becomes the file's.
    let in_file = |e: StepError, sql: &str| match e {
        StepError::SecondAt(line, why) => {
            format!("{} line {}: {why}", d.file, line_of(&d.sql, sql) + line - 1)
        }
        StepError::Other(e) => format!("{e}{}", at(sql)),
    };
    let release = find("release")
        .map(|sql| release_form(&d.file, sql).map_err(|e| in_file(e, sql)))
        .transpose()?;
    let lock = find("lock")
        .map(|sql| lock_form(&d.file, sql, consts).map_err(|e| in_file(e, sql)))
        .transpose()?;
    let setup = find("setup")
        .map(|sql| setup_form(&d.file, sql).map_err(|e| format!("{e}{}", at(sql))))
        .transpose()?;
    let (claim, params) = claim_form(&d.file, (&d.sql, claim), lock.is_some(), consts)?;
    Ok(PostgresForm {
        claim,
        params,
        release,
        lock,
        setup,
    })
}

/// The steps of a stepped file, each one of `allowed` and each once, with nothing
/// before the first: an unknown or repeated marker (a typo of `lock`, a pasted second
/// claim) was accepted and its text never ran. `say` lists what a file of its kind has.
fn checked_steps<'a>(
    file: &str,
    sql: &'a str,
    allowed: &[&str],
    say: &str,
) -> Result<Vec<(&'a str, &'a str)>, String> {
    if let Some(first) = sql.find("-- step: ")
        && !named_params::is_blank(&sql[..first])
    {
        return Err(format!(
            "{file} has statement text before its first `-- step:` line, which would never run; a file of steps has {say}"
        ));
    }
    let steps = crate::statements::sql_steps(sql);
    for (i, (name, _)) in steps.iter().enumerate() {
        let repeated = steps[..i].iter().any(|(n, _)| n == name);
        if !allowed.contains(name) || repeated {
            return Err(format!(
                "{file} has `-- step: {name}`{}; a file of steps has {say}, each once",
                if repeated { " twice" } else { "" }
            ));
        }
    }
    Ok(steps)
}

/// A `setup` step: statements run as they are (no parameters) after each reset.
fn setup_form(file: &str, sql: &str) -> Result<String, String> {
    named_params::to_postgres_with(sql, &[]).map_err(|e| {
        format!(
            "{file} step setup: {e}; the setup step runs once after each reset and binds nothing"
        )
    })?;
    Ok(sql.to_string())
}

/// Why a one-statement step was refused: a second statement at a line of the step
/// (the caller makes it the file's), or another reason, whole.
enum StepError {
    SecondAt(usize, &'static str),
    Other(String),
}

/// A `lock` step: one statement reading the ids to claim, with :batch and :worker_id.
fn lock_form(file: &str, sql: &str, consts: &[String]) -> Result<Lock, StepError> {
    if let Some(line) = named_params::second_statement_line(sql) {
        return Err(StepError::SecondAt(
            line,
            "a second statement in step lock; a lock step is one locking read (SELECT id ... FOR UPDATE SKIP LOCKED)",
        ));
    }
    let names = Names {
        allowed: &Param::ALL,
        consts,
    };
    let (sql, params) = named_params::to_postgres_in(sql, names)
        .map_err(|e| StepError::Other(format!("{file} step lock: {e}")))?;
    Ok(Lock { sql, params })
}

/// A `release` step: one statement that uses `:ids`.
fn release_form(file: &str, sql: &str) -> Result<Release, StepError> {
    if let Some(line) = named_params::second_statement_line(sql) {
        return Err(StepError::SecondAt(
            line,
            "a second statement in step release; a release step is one statement",
        ));
    }
    let (sql, params) = named_params::to_postgres_with(sql, &[Param::Ids, Param::WorkerId])
        .map_err(|e| StepError::Other(format!("{file} step release: {e}")))?;
    if !params.contains(&Param::Ids) {
        return Err(StepError::Other(format!(
            "{file} step release never uses :ids; it runs after jobs leave the worker and gives up what their claim took, e.g. SELECT count(pg_advisory_unlock(id)) FROM unnest(:ids::bigint[]) AS id"
        )));
    }
    Ok(Release { sql, params })
}

/// The line of `file_text` (from 1) at which `part`, a slice of it, begins.
fn line_of(file_text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(file_text.as_ptr() as usize);
    file_text[..offset.min(file_text.len())]
        .matches('\n')
        .count()
        + 1
}

/// The claim statement (`sql`, a slice of the file's text `whole`), checked, with its
/// parameters numbered. After a `lock` step (`locked`) it takes the ids as `:ids`.
fn claim_form(
    file: &str,
    (whole, sql): (&str, &str),
    locked: bool,
    consts: &[String],
) -> Result<(String, Vec<Param>), String> {
    // Regression: two statements validated, then failed at the first claim ("cannot
    // insert multiple commands into a prepared statement").
    if let Some(line) = named_params::second_statement_line(sql) {
        return Err(format!(
            "{file} line {}: a second statement; a PostgreSQL claim step is one statement (PostgreSQL prepares one): fold them into one with WITH … (data-modifying CTEs run as one statement), or split the file into `-- step: lock` (a locking read of the ids) and `-- step: claim` (which takes them as :ids), run in one transaction",
            line_of(whole, sql) + line - 1
        ));
    }
    // A statement that never reads :batch is allowed: the over-claim check is what
    // catches a claim that ignores the batch size, with numbers.
    let allowed: &[Param] = match locked {
        false => &Param::ALL,
        true => &[Param::Batch, Param::WorkerId, Param::Queue, Param::Ids],
    };
    let (sql, params) =
        named_params::to_postgres_in(sql, Names { allowed, consts }).map_err(|e| e.to_string())?;
    if locked && !params.contains(&Param::Ids) {
        return Err(format!(
            "{file} step claim never uses :ids; after a lock step it must claim the rows that step returned: WHERE id = ANY(:ids)"
        ));
    }
    if !params.contains(&Param::WorkerId) {
        return Err(format!(
            "{file} never uses :worker_id; claimbench starts and completes a job only while its row names the worker that claimed it, so every job this claims would be lost: set worker_id = :worker_id in the claim (a claim that owns its jobs by a lock sets it too, and gives the lock back in a release step: workloads/examples/advisory-session.sql)"
        ));
    }
    Ok((sql, params))
}

/// What a team's MySQL file must also be, beyond [`mysql_form`]'s shape (which the
/// shipped two-step files share, setup step and all): no statement that reaches the
/// host, and its two steps each once with nothing outside them.
fn check_declared_mysql(m: &DeclaredFile) -> Result<(), String> {
    crate::privileged_sql::check_file(&m.file, &m.sql)?;
    checked_steps(
        &m.file,
        &m.sql,
        &["setup", "lock", "claim"],
        "`-- step: lock` and `-- step: claim` and, optionally, `-- step: setup` (run after each reset)",
    )?;
    Ok(())
}

/// The MySQL file's `lock` and `claim` steps, checked as far as can be without a server
/// (the server prepares both before the first trial, and the lock step must return `id`).
pub(crate) fn mysql_form(m: &DeclaredFile, consts: &[String]) -> Result<MysqlClaim, String> {
    let steps = crate::statements::sql_steps(&m.sql);
    let get = |name: &str| {
        steps
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, sql)| *sql)
            .filter(|sql| !named_params::is_blank(sql))
            .ok_or_else(|| {
                format!(
                    "{} has no `-- step: {name}`; a MySQL claim is two steps of one transaction: `-- step: lock`, a locking read (FOR UPDATE SKIP LOCKED) returning the rows' id, LIMIT :batch, then `-- step: claim`, an UPDATE ... SET worker_id = :worker_id ... WHERE id IN (:ids)",
                    m.file
                )
            })
    };
    // Each step is one prepared statement: a second one validated, then failed at the
    // first claim.
    for name in ["lock", "claim"] {
        let sql = get(name)?;
        if let Some(line) = named_params::second_statement_line(sql) {
            return Err(format!(
                "{} line {}: a second statement in step {name}; each MySQL step is one statement (a claim step that must also write elsewhere can do it in a trigger the setup step creates)",
                m.file,
                line_of(&m.sql, sql) + line - 1
            ));
        }
    }
    let (lock, lock_params) = named_params::to_mysql_in(get("lock")?, false, consts)
        .map_err(|e| format!("{} step lock: {e}", m.file))?;
    let (claim, claim_params) = named_params::to_mysql_in(get("claim")?, true, consts)
        .map_err(|e| format!("{} step claim: {e}", m.file))?;
    if !claim_params.contains(&Param::Ids) {
        return Err(format!(
            "{} step claim never uses :ids; it must update the rows the lock step returned: WHERE id IN (:ids)",
            m.file
        ));
    }
    if !claim_params.contains(&Param::WorkerId) {
        return Err(format!(
            "{} step claim never uses :worker_id; claimbench starts and completes a job only while its row names the worker that claimed it: set worker_id = :worker_id",
            m.file
        ));
    }
    let setup = steps
        .iter()
        .find(|(n, _)| *n == "setup")
        .map(|(_, sql)| {
            named_params::to_mysql(sql, false)
                .ok()
                .filter(|(_, p)| p.is_empty())
                .map(|_| sql.to_string())
                .ok_or_else(|| {
                    format!(
                        "{} step setup binds parameters; the setup step runs once after each reset and binds nothing",
                        m.file
                    )
                })
        })
        .transpose()?;
    Ok(MysqlClaim {
        file: m.file.clone(),
        lock,
        lock_params,
        claim,
        claim_params,
        setup,
    })
}

/// The SQL Server file: one T-SQL batch with its named parameters numbered as tiberius
/// sends them, checked as far as can be without a server (none runs here: the session
/// sends it as written, with `[{SCHEMA}]` filled in).
fn mssql_form(m: &DeclaredFile, consts: &[String]) -> Result<MssqlClaim, String> {
    crate::privileged_sql::check_file(&m.file, &m.sql)?;
    // Steps would be comments to SQL Server: a setup step would run with every claim.
    if let Some(line) = m
        .sql
        .lines()
        .position(|l| l.trim().starts_with("-- step: "))
    {
        return Err(format!(
            "{} line {}: a SQL Server claim has no steps; write it as one T-SQL batch (DECLARE what it needs, then UPDATE … OUTPUT, as the shipped claims are), and build the tables a setup step would in a declared layout (`[layouts.<name>] mssql`)",
            m.file,
            line + 1
        ));
    }
    if named_params::is_blank(&m.sql) {
        return Err(format!(
            "{} holds no statement; give the claim (an UPDATE … SET [WorkerId] = :worker_id … OUTPUT INSERTED.[Id])",
            m.file
        ));
    }
    let names = Names {
        allowed: &Param::ALL,
        consts,
    };
    let (sql, params) =
        named_params::to_mssql_in(&m.sql, names).map_err(|e| format!("{}: {e}", m.file))?;
    if !params.contains(&Param::WorkerId) {
        return Err(format!(
            "{} never uses :worker_id; claimbench starts and completes a job only while its row names the worker that claimed it: SET [WorkerId] = :worker_id",
            m.file
        ));
    }
    if !m.sql.contains("OUTPUT") && !m.sql.contains("output") {
        return Err(format!(
            "{} has no OUTPUT clause; the claim returns its rows with OUTPUT INSERTED.[Id] (and optionally INSERTED.[AttemptCount] and a QueueWaitUs column)",
            m.file
        ));
    }
    Ok(MssqlClaim {
        file: m.file.clone(),
        sql,
        params,
    })
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
            lock: None,
            setup: None,
            consts: Vec::new(),
            model: None,
            mssql: None,
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
            mysql: None,
            mssql: None,
            prevents_duplicates: true,
            respects_max_workers: false,
            listens: false,
            params: BTreeMap::new(),
            model: None,
        }
    }

    /// A file with `claim` and `release` steps: the claim alone is the form, the
    /// release step numbered on its own (`:ids`, then `:worker_id`); a release step that
    /// never reads `:ids`, or a step of another name, is refused naming the file.
    #[test]
    fn a_release_step_is_its_own_statement_and_must_read_the_ids() {
        let claim = "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot LIMIT :batch) RETURNING id";
        let s = declare(&declared(
            "unit-release",
            &format!("-- step: claim\n{claim}\n-- step: release\nSELECT count(pg_advisory_unlock(id)) FROM unnest(:ids::bigint[]) AS id WHERE :worker_id IS NOT NULL\n"),
        ))
        .unwrap();
        assert!(!s.text(BackendKind::Postgres).contains("release"));
        let r = s.def().custom.as_ref().unwrap().release.clone().unwrap();
        assert!(r.sql.contains("unnest($1::bigint[])") && r.sql.contains("$2 IS NOT NULL"));
        assert_eq!(r.params, vec![Param::Ids, Param::WorkerId]);
        let e = declare(&declared(
            "unit-release",
            &format!(
                "-- step: claim\n{claim}\n-- step: release\nSELECT pg_advisory_unlock_all()\n"
            ),
        ))
        .unwrap_err();
        assert!(e.contains("step release never uses :ids"), "{e}");
        let e = declare(&declared(
            "unit-release",
            &format!("-- step: claim\n{claim}\n-- step: listen\nLISTEN x\n"),
        ))
        .unwrap_err();
        assert!(e.contains("has `-- step: listen`"), "{e}");
    }

    /// A file with `setup`, `lock` and `claim` steps: the lock step numbered on its own,
    /// the claim taking the ids as `:ids`, the setup kept as written; each step's
    /// misuse is refused naming the file and the step.
    #[test]
    fn a_lock_step_hands_its_ids_to_the_claim_and_a_setup_binds_nothing() {
        let setup = "CREATE TABLE claimed (job_id bigint PRIMARY KEY, w text);\nCREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n";
        let lock = "SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED\n";
        let claim = "WITH c AS (INSERT INTO claimed SELECT id, :worker_id FROM unnest(:ids::bigint[]) AS id)\nUPDATE jobs_hot SET worker_id = :worker_id WHERE id = ANY(:ids) RETURNING id\n";
        let file = |setup: &str, lock: &str, claim: &str| {
            format!("-- step: setup\n{setup}-- step: lock\n{lock}-- step: claim\n{claim}")
        };
        let s = declare(&declared("unit-lock", &file(setup, lock, claim))).unwrap();
        let src = s.def().custom.as_ref().unwrap();
        let l = src.lock.as_ref().unwrap();
        assert_eq!(
            l.sql.trim(),
            "SELECT id FROM jobs_hot WHERE status = 0 LIMIT $1 FOR UPDATE SKIP LOCKED"
        );
        assert_eq!(l.params, [Param::Batch]);
        assert_eq!(src.params, [Param::WorkerId, Param::Ids]);
        assert!(
            s.text(BackendKind::Postgres)
                .contains("unnest($2::bigint[])")
        );
        assert_eq!(s.setup_step(BackendKind::Postgres), Some(setup.trim_end()));
        for (f, says) in [
            (
                file(
                    setup,
                    lock,
                    "UPDATE jobs_hot SET worker_id = :worker_id RETURNING id\n",
                ),
                "step claim never uses :ids",
            ),
            (
                file("CREATE TABLE t (n int DEFAULT :batch);\n", lock, claim),
                "step setup: unknown parameter `:batch`",
            ),
            (
                file(setup, &format!("{lock};\nSELECT 2\n"), claim),
                "line 7: a second statement in step lock",
            ),
            (
                file(setup, "SELECT id FROM t WHERE id = ANY(:ids)\n", claim),
                "step lock: unknown parameter `:ids`",
            ),
            (
                format!("-- step: lock\n{lock}-- step: lock\n{lock}-- step: claim\n{claim}"),
                "has `-- step: lock` twice",
            ),
        ] {
            let e = declare(&declared("unit-lock", &f)).unwrap_err();
            assert!(
                e.starts_with("unit-lock.sql") && e.contains(says),
                "{says}: {e}"
            );
        }
        // Without a lock step, :ids is no parameter of a claim.
        let e = declare(&declared("unit-lock", &format!("-- step: claim\n{claim}"))).unwrap_err();
        assert!(e.contains("unknown parameter `:ids`"), "{e}");
    }

    /// `:queue` and declared constants are numbered like the rest; a constant no
    /// statement reads, one named like claimbench's own, or one with an odd name is
    /// refused naming `params`.
    #[test]
    fn constants_and_the_queue_are_parameters_too() {
        let sql = "UPDATE jobs_hot SET worker_id = :worker_id WHERE queue = :queue AND attempt_count < :max_attempts AND id IN (SELECT id FROM jobs_hot LIMIT :batch) RETURNING id";
        let with = |params: &[(&str, Constant)]| {
            let mut d = declared("unit-const", sql);
            d.params = params
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect();
            d
        };
        let s = declare(&with(&[("max_attempts", Constant::Int(5))])).unwrap();
        assert_eq!(
            s.text(BackendKind::Postgres),
            "UPDATE jobs_hot SET worker_id = $1 WHERE queue = $2 AND attempt_count < $3 AND id IN (SELECT id FROM jobs_hot LIMIT $4) RETURNING id"
        );
        let src = s.def().custom.as_ref().unwrap();
        assert_eq!(
            src.params,
            [Param::WorkerId, Param::Queue, Param::Const(0), Param::Batch]
        );
        assert_eq!(
            src.describe(Param::Const(0)).as_deref(),
            Some(":max_attempts = 5")
        );
        // Undeclared: the statement's constant is an unknown parameter.
        let e = declare(&with(&[])).unwrap_err();
        assert!(e.contains("unknown parameter `:max_attempts`"), "{e}");
        for (params, says) in [
            (
                vec![
                    ("max_attempts", Constant::Int(5)),
                    ("lease", Constant::Text("30 s".into())),
                ],
                "params.lease is declared but no statement",
            ),
            (
                vec![
                    ("max_attempts", Constant::Int(5)),
                    ("queue", Constant::Text("x".into())),
                ],
                "params.queue is a parameter claimbench binds itself",
            ),
            (
                vec![
                    ("max_attempts", Constant::Int(5)),
                    ("Max", Constant::Bool(true)),
                ],
                "is not a parameter name",
            ),
        ] {
            let e = declare(&with(&params)).unwrap_err();
            assert!(e.starts_with("params") && e.contains(says), "{says}: {e}");
        }
    }

    /// A T-SQL claim's misuse is refused naming its file: no worker, no OUTPUT, a
    /// parameter numbered by hand, a statement that reaches the host.
    #[test]
    fn a_sql_server_declaration_says_what_is_wrong() {
        let mssql = |sql: &str| Declared {
            mysql: None,
            mssql: Some(DeclaredFile {
                file: "team.mssql.sql".into(),
                sql: sql.into(),
            }),
            file: String::new(),
            sql: String::new(),
            ..declared("team-claim", "")
        };
        let ok = "UPDATE TOP (:batch) [{SCHEMA}].[JobsHot] SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id] WHERE [Status] = 0";
        let s = declare(&mssql(ok)).unwrap();
        assert!(s.sql(BackendKind::Mssql).unwrap().contains("TOP (@P1)"));
        assert!(s.sql(BackendKind::Postgres).is_none());
        for (sql, says) in [
            (
                "UPDATE TOP (:batch) t SET [Status] = 1 OUTPUT INSERTED.[Id]",
                "never uses :worker_id",
            ),
            (
                "UPDATE TOP (:batch) t SET [WorkerId] = :worker_id",
                "has no OUTPUT clause",
            ),
            (
                "UPDATE TOP (@P1) t SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id]",
                "positional parameter `@P1`",
            ),
            ("EXEC xp_cmdshell 'dir'", "xp_cmdshell"),
            (
                "-- step: setup\nCREATE TABLE t (a int)\n-- step: claim\nUPDATE t SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id]",
                "line 1: a SQL Server claim has no steps",
            ),
        ] {
            let e = declare(&mssql(sql)).unwrap_err();
            assert!(
                e.starts_with("team.mssql.sql") && e.contains(says),
                "{says}: {e}"
            );
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

    #[test]
    fn a_mysql_declaration_is_two_steps_with_ids_and_worker_id() {
        let mysql = |sql: &str| Declared {
            name: "team-claim".into(),
            file: String::new(),
            sql: String::new(),
            mysql: Some(DeclaredFile {
                file: "team.mysql.sql".into(),
                sql: sql.into(),
            }),
            mssql: None,
            prevents_duplicates: true,
            respects_max_workers: false,
            listens: false,
            params: BTreeMap::new(),
            model: None,
        };
        let s = declare(&mysql(
            "-- step: setup\nCREATE TABLE claimed (job_id BIGINT PRIMARY KEY)\n\
             -- step: lock\nSELECT id FROM jobs_hot LIMIT :batch FOR UPDATE SKIP LOCKED\n\
             -- step: claim\nUPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (:ids)",
        ))
        .unwrap();
        assert_eq!(
            s.setup_step(BackendKind::Mysql).map(str::trim),
            Some("CREATE TABLE claimed (job_id BIGINT PRIMARY KEY)")
        );
        assert!(s.sql(BackendKind::Mysql).is_some());
        assert!(s.sql(BackendKind::Postgres).is_none());
        let m = s.def().custom.as_ref().unwrap().mysql.as_ref().unwrap();
        assert_eq!(
            m.lock,
            "SELECT id FROM jobs_hot LIMIT ? FOR UPDATE SKIP LOCKED"
        );
        assert_eq!(m.lock_params, [Param::Batch]);
        assert_eq!(
            m.claim,
            "UPDATE jobs_hot SET worker_id = ? WHERE id IN (:ids)"
        );
        assert_eq!(m.claim_params, [Param::WorkerId, Param::Ids]);
        for (sql, says) in [
            (
                "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (:ids)",
                "no `-- step: lock`",
            ),
            (
                "-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET worker_id = :worker_id",
                "never uses :ids",
            ),
            (
                "-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET s = 1 WHERE id IN (:ids)",
                "never uses :worker_id",
            ),
            (
                "-- step: lock\nSELECT id WHERE id IN (:ids)\n-- step: claim\nUPDATE t",
                "step lock: unknown parameter `:ids`",
            ),
            (
                "-- step: setup\nCREATE TABLE t (n INT DEFAULT :batch)\n-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET worker_id = :worker_id WHERE id IN (:ids)",
                "step setup binds parameters",
            ),
            (
                "-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET worker_id = :worker_id WHERE id IN (:ids);\nINSERT INTO c VALUES (1)",
                "line 5: a second statement in step claim",
            ),
        ] {
            let e = declare(&mysql(sql)).unwrap_err();
            assert!(e.contains(says) && e.starts_with("team.mysql.sql"), "{e}");
        }
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
            declare(&declared("bad-param", "SELECT :batch, :tenant"))
                .unwrap_err()
                .contains("unknown parameter `:tenant`")
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
