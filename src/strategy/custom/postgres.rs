//! A declared claim's PostgreSQL file: one statement, or steps `setup`, `lock`,
//! `claim` and `release`, each checked and numbered.

use super::*;

/// A declared PostgreSQL form: the claim numbered, what it binds, and its other steps.
pub(super) struct PostgresForm {
    pub(super) claim: String,
    pub(super) params: Vec<Param>,
    pub(super) release: Option<Release>,
    pub(super) hold: Option<Release>,
    pub(super) lock: Option<Lock>,
    pub(super) setup: Option<String>,
}

/// The steps a declared PostgreSQL file may have, when it has any.
const POSTGRES_STEPS: [&str; 5] = ["setup", "lock", "claim", "release", "hold"];

/// The PostgreSQL file: one claim statement, or steps (`claim`, and optionally `setup`,
/// `lock` and `release`), each with its parameters numbered.
pub(super) fn postgres_form(
    d: &Declared,
    consts: &[String],
) -> Result<PostgresForm, crate::invalid::Invalid> {
    crate::privileged_sql::check_file(&d.file, &d.sql)?;
    if named_params::is_blank(&d.sql) {
        return Err(crate::invalid!(
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
        let (claim, params) = claim_form(d, (&d.sql, &d.sql), false, consts)?;
        return Ok(PostgresForm {
            claim,
            params,
            release: None,
            hold: None,
            lock: None,
            setup: None,
        });
    }
    let steps = checked_steps(
        &d.file,
        &d.sql,
        &POSTGRES_STEPS,
        "`-- step: claim` and, optionally, `-- step: setup` (run after each reset), `-- step: lock` (a locking read of the ids the claim step takes as :ids), `-- step: release` (run with :ids after each job leaves the worker) and `-- step: hold` (what a claim in flight holds of :ids, for prove's model check)",
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
        .map(|sql| ids_form(&d.file, sql, IdsStep::Release).map_err(|e| in_file(e, sql)))
        .transpose()?;
    let hold = find("hold")
        .map(|sql| ids_form(&d.file, sql, IdsStep::Hold).map_err(|e| in_file(e, sql)))
        .transpose()?;
    let lock = find("lock")
        .map(|sql| lock_form(&d.file, sql, consts).map_err(|e| in_file(e, sql)))
        .transpose()?;
    let setup = find("setup")
        .map(|sql| setup_form(&d.file, sql).map_err(|e| format!("{e}{}", at(sql))))
        .transpose()?;
    let (claim, params) = claim_form(d, (&d.sql, claim), lock.is_some(), consts)?;
    Ok(PostgresForm {
        claim,
        params,
        release,
        hold,
        lock,
        setup,
    })
}

/// A `setup` step: statements run as they are (no parameters) after each reset.
fn setup_form(file: &str, sql: &str) -> Result<String, crate::invalid::Invalid> {
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

/// The steps that bind `:ids`.
#[derive(Clone, Copy)]
enum IdsStep {
    /// Run after jobs leave the worker (with `:worker_id` if it reads it).
    Release,
    /// Run by the model check's other session, in its open transaction.
    Hold,
}

/// A `release` or `hold` step: one statement that uses `:ids`.
fn ids_form(file: &str, sql: &str, kind: IdsStep) -> Result<Release, StepError> {
    let (name, allowed, example): (_, &[Param], _) = match kind {
        IdsStep::Release => (
            "release",
            &[Param::Ids, Param::WorkerId],
            "it runs after jobs leave the worker and gives up what their claim took, e.g. SELECT count(pg_advisory_unlock(id)) FROM unnest(:ids::bigint[]) AS id",
        ),
        IdsStep::Hold => (
            "hold",
            &[Param::Ids],
            "it takes what claims in flight hold of those jobs until the transaction ends, e.g. SELECT count(pg_advisory_xact_lock(id)) FROM unnest(:ids::bigint[]) AS id",
        ),
    };
    if let Some(line) = named_params::second_statement_line(sql) {
        let why = match kind {
            IdsStep::Release => {
                "a second statement in step release; a release step is one statement"
            }
            IdsStep::Hold => "a second statement in step hold; a hold step is one statement",
        };
        return Err(StepError::SecondAt(line, why));
    }
    let (sql, params) = named_params::to_postgres_with(sql, allowed)
        .map_err(|e| StepError::Other(format!("{file} step {name}: {e}")))?;
    if !params.contains(&Param::Ids) {
        return Err(StepError::Other(format!(
            "{file} step {name} never uses :ids; {example}"
        )));
    }
    Ok(Release { sql, params })
}

/// The claim statement (`sql`, a slice of the file's text `whole`), checked, with its
/// parameters numbered. After a `lock` step (`locked`) it takes the ids as `:ids`.
fn claim_form(
    d: &Declared,
    (whole, sql): (&str, &str),
    locked: bool,
    consts: &[String],
) -> Result<(String, Vec<Param>), crate::invalid::Invalid> {
    let file = d.file.as_str();
    // Regression: two statements validated, then failed at the first claim ("cannot
    // insert multiple commands into a prepared statement").
    if let Some(line) = named_params::second_statement_line(sql) {
        return Err(crate::invalid!(
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
        return Err(crate::invalid!(
            "{file} step claim never uses :ids; after a lock step it must claim the rows that step returned: WHERE id = ANY(:ids)"
        ));
    }
    if !params.contains(&Param::WorkerId) && !d.on_declared_table {
        return Err(crate::invalid!(
            "{file} never uses :worker_id; claimbench starts and completes a job only while its row names the worker that claimed it, so every job this claims would be lost: set worker_id = :worker_id in the claim (a claim that owns its jobs by a lock sets it too, and gives the lock back in a release step: workloads/examples/advisory-session.sql)"
        ));
    }
    Ok((sql, params))
}
