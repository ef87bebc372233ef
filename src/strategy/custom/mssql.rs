//! A declared claim's SQL Server file: one T-SQL batch.

use super::*;

/// claimbench's tables on SQL Server (migrations/mssql/schema.sql), which a claim must
/// name in the run's schema.
const TABLES: [&str; 6] = [
    "JobsHot",
    "JobsArchive",
    "JobsDLQ",
    "Queues",
    "ShardOwners",
    "Effects",
];

/// The SQL Server file: one T-SQL batch with its named parameters numbered as tiberius
/// sends them, checked as far as can be without a server (none runs here: the session
/// sends it as written, with `[{SCHEMA}]` filled in).
pub(super) fn mssql_form(
    m: &DeclaredFile,
    consts: &[String],
) -> Result<MssqlClaim, crate::invalid::Invalid> {
    crate::privileged_sql::check_file(&m.file, &m.sql)?;
    // Steps would be comments to SQL Server: a setup step would run with every claim.
    if let Some(line) = m
        .sql
        .lines()
        .position(|l| l.trim().starts_with("-- step: "))
    {
        return Err(crate::invalid!(
            "{} line {}: a SQL Server claim has no steps; write it as one T-SQL batch (DECLARE what it needs, then UPDATE … OUTPUT, as the shipped claims are), and build the tables a setup step would in a declared layout (`[layouts.<name>] mssql`)",
            m.file,
            line + 1
        ));
    }
    if named_params::is_blank(&m.sql) {
        return Err(crate::invalid!(
            "{} holds no statement; give the claim (an UPDATE … SET [WorkerId] = :worker_id … OUTPUT INSERTED.[Id])",
            m.file
        ));
    }
    if let Some((table, line)) = named_params::unqualified_table(&m.sql, &TABLES) {
        return Err(crate::invalid!(
            "{} line {line}: names [{table}] without [{{SCHEMA}}]. in front: SQL Server would look for it in the login's default schema (dbo), not the run's; write [{{SCHEMA}}].[{table}], as the shipped claims do",
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
        return Err(crate::invalid!(
            "{} never uses :worker_id; claimbench starts and completes a job only while its row names the worker that claimed it: SET [WorkerId] = :worker_id",
            m.file
        ));
    }
    if !named_params::has_keyword(&m.sql, "OUTPUT") {
        return Err(crate::invalid!(
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
