//! `claimbench capture`: a live table read into a workload folder. The URL is shown
//! redacted wherever it appears, in messages and in the files.

use crate::cli::CaptureArgs;
use anyhow::{Result, anyhow, bail};
use claimbench::backend::target::DbTarget;
use claimbench::capture::{self, Hints};
use claimbench::redact::redact;
use std::process::ExitCode;
use std::time::Duration;

pub async fn command(a: CaptureArgs) -> Result<ExitCode> {
    let shown = redact(&a.db);
    let target = DbTarget::parse(&a.db).map_err(|e| anyhow!("--db: {e}"))?;
    let default_schema = match &target {
        DbTarget::Postgres(_) => "public".to_string(),
        DbTarget::Mysql(o) => o.db_name().unwrap_or_default().to_string(),
        other => bail!(
            "--db {shown}: capture reads PostgreSQL, MySQL and MariaDB, not {} (SQL Server's catalogs are to come)",
            other.kind()
        ),
    };
    let (schema, name) = match a.table.split_once('.') {
        Some((s, n)) => (s.to_string(), n.to_string()),
        None => (default_schema, a.table.clone()),
    };
    if schema.is_empty() {
        bail!(
            "--table {}: which database? give it as DATABASE.{} or in --db ({shown} names none)",
            a.table,
            a.table
        );
    }
    // The table becomes a declared table, whose name the workload gives unquoted.
    claimbench::declared_table::check_name(&name)
        .map_err(|e| anyhow!("--table {}: {e}", a.table))?;
    let sample = Duration::from_secs_f64(a.sample_s);
    if !sample.is_zero() {
        outln!(
            "reading {schema}.{name} on {shown} (read-only; watching its inserts for {} s)",
            a.sample_s
        );
    }
    let counted = a.state_column.as_deref();
    let mut read = match &target {
        DbTarget::Mysql(o) => capture::mysql::read(o, (&schema, &name), counted, sample).await,
        DbTarget::Postgres(c) => capture::read(c, &schema, &name, sample).await,
        _ => unreachable!("refused above"),
    }
    .map_err(|e| anyhow!("--db {shown}: {e}"))?;
    let hints = Hints {
        state_column: a.state_column.clone(),
        pending: a.pending.clone(),
        running: a.running.clone(),
        done: a.done.clone(),
    };
    let roles = read
        .roles(&hints)
        .map_err(|e| anyhow!("--table {}: {e}", a.table))?;
    match &target {
        DbTarget::Mysql(o) => capture::mysql::count_states(o, &mut read, &roles.state).await,
        DbTarget::Postgres(c) => capture::count_states(c, &mut read, &roles.state).await,
        _ => unreachable!("refused above"),
    }
    .map_err(|e| anyhow!("--db {shown}: {e}"))?;
    let w = capture::write(&a.out, &read, &roles, &shown)?;
    outln!(
        "captured {schema}.{name}: {} columns, {} indexes, rows by {} {} ({}); seeds {} pending and {} finished rows",
        read.columns.len(),
        read.indexes.len(),
        roles.state,
        match read.by_state_exact {
            true => "counted",
            false => "estimated from statistics",
        },
        read.by_state
            .iter()
            .map(|(v, n)| format!("{v} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        w.backlog,
        w.history
    );
    for n in w.notes.iter().chain(&read.unread) {
        outln!("  note: {n}");
    }
    for f in &w.files {
        outln!("wrote {}", f.display());
    }
    outln!(
        "next: confirm the lifecycle in {} and the claim in {} (capture.md lists what names the table), then `claimbench run {}`",
        w.files[1].display(),
        w.files[2].display(),
        a.out.join("workload.toml").display()
    );
    Ok(ExitCode::SUCCESS)
}
