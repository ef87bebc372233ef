//! A declared claim's MySQL file: steps `lock` and `claim`, and optionally `setup`.

use super::*;

/// What a team's MySQL file must also be, beyond [`mysql_form`]'s shape (which the
/// shipped two-step files share, setup step and all): no statement that reaches the
/// host, and its two steps each once with nothing outside them.
pub(super) fn check_declared_mysql(m: &DeclaredFile) -> Result<(), crate::invalid::Invalid> {
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
pub(crate) fn mysql_form(
    m: &DeclaredFile,
    consts: &[String],
) -> Result<MysqlClaim, crate::invalid::Invalid> {
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
            return Err(crate::invalid!(
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
        return Err(crate::invalid!(
            "{} step claim never uses :ids; it must update the rows the lock step returned: WHERE id IN (:ids)",
            m.file
        ));
    }
    if !claim_params.contains(&Param::WorkerId) {
        return Err(crate::invalid!(
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
