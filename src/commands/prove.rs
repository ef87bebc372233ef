//! `prove`: the scripted two-session interleavings of each strategy on a server, and
//! the likely causes of any check that fails.

use super::targets::start_embedded;
use anyhow::{Result, bail};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::{Backend, DbTarget};
use claimbench::strategy::{self, Strategy};
use claimbench::workload::Workload;
use std::process::ExitCode;

/// Why a step failed through a transaction pooler, when a strategy proved so far (this
/// one or an earlier) takes session-level advisory locks: they stay on the server
/// connection that took them, after the session moved on or ended.
fn pooled_cause(so_far: &[claimbench::prove::Verdict]) -> Option<String> {
    let failed = so_far.last()?;
    let holder = so_far.iter().find(|v| v.strategy.def().advisory)?;
    let whose = if holder.strategy == failed.strategy {
        "its".to_string()
    } else {
        format!("{}'s (proved earlier)", holder.strategy)
    };
    Some(format!(
        "through a transaction-mode pooler, {whose} session-level advisory locks stay on whichever server connection took them once the session moves on or ends, and the pooler keeps that connection open: they hold the same job ids against every later claim until it closes it (advisory-xact's locks end with their transaction; or pool in session mode)"
    ))
}

/// What `prove` was asked to prove.
pub(crate) struct Asked<'a> {
    /// `--strategy`: built-in names, or names the workload declares.
    pub strategies: &'a [String],
    /// `--set NAME=VALUE`.
    pub set: &'a [String],
    /// `--workload`: its declared strategies, proved under its own promises.
    pub declared: Option<&'a Workload>,
    pub allow_privileged_sql: bool,
}

/// The strategies `--strategy` names (a workload's declared names resolve first), or
/// with `--workload` alone every one it declares; empty: every built-in, decided once
/// the server is known.
fn asked_strategies(named: &[String], declared: Option<&Workload>) -> Result<Vec<Strategy>> {
    let resolve = |s: &String| match declared {
        Some(w) => w.strategy_named(s),
        None => s.parse::<Strategy>(),
    };
    match (named.is_empty(), declared) {
        (false, _) => named
            .iter()
            .map(|s| resolve(s).map_err(|e| anyhow::anyhow!("--strategy: {e}")))
            .collect(),
        (true, Some(w)) => {
            if w.custom_strategies.is_empty() {
                bail!(
                    "--workload {}: declares no strategies ([strategies.<name>]); name built-ins with --strategy instead",
                    w.source_path.display()
                );
            }
            w.custom_strategies
                .iter()
                .map(|d| resolve(&d.name).map_err(anyhow::Error::msg))
                .collect()
        }
        (true, None) => Ok(Vec::new()),
    }
}

/// The server to prove on and the person's pooler in front of it: `--db` (through the
/// pooler `--pool-mode` names, located as `run` does), or a throw-away PostgreSQL,
/// behind a PgBouncer claimbench starts in the mode asked (its pool roomy enough for
/// both sessions).
async fn prove_target(
    db: Option<&str>,
    pooler: Option<super::pooler::PoolerFlags>,
    embedded: &mut Option<super::targets::Embedded>,
) -> Result<(DbTarget, Option<super::pooler::UserPooler>)> {
    use claimbench::prove;
    let Some(url) = db else {
        let own_mode = pooler.map(|f| f.own_mode()).transpose()?;
        let target = start_embedded(&prove::workload(own_mode)?, false, embedded)?.0;
        return Ok((target, None));
    };
    let t = DbTarget::parse(url)?;
    let Some(f) = pooler else {
        return Ok((t, None));
    };
    let mut targets = [(t.kind(), Some(t))];
    let user = super::pooler::locate(f, &mut targets).await?;
    Ok((targets[0].1.take().expect("located in place"), Some(user)))
}

/// `prove`: the verdict table; exit 1 when a strategy does not behave as expected.
pub(crate) async fn prove(
    db: Option<&str>,
    schema: &str,
    asked: Asked<'_>,
    pooler: Option<super::pooler::PoolerFlags>,
) -> Result<ExitCode> {
    use claimbench::prove;
    let Asked {
        strategies: strategy,
        set,
        declared,
        allow_privileged_sql,
    } = asked;
    let schema = super::schema_name(schema)?;
    let strategies = asked_strategies(strategy, declared)?;
    let mut embedded = None;
    let (target, user) = prove_target(db, pooler, &mut embedded).await?;
    let settings = set
        .iter()
        .map(|s| {
            let (name, value) = s
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--set {s}: give NAME=VALUE"))?;
            claimbench::session_settings::check(target.kind(), name.trim(), value.trim())
                .map_err(|e| anyhow::anyhow!("--set {s}: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    // Every built-in technique the server has, unless --strategy chose.
    let strategies: Vec<Strategy> = if strategies.is_empty() {
        Strategy::builtin()
            .filter(|s| s.sql(target.kind()).is_some())
            .collect()
    } else {
        for s in &strategies {
            if let strategy::Form::Absent(why) = s.form(target.kind()) {
                bail!("--strategy {s}: no {} form: {why}", target.kind());
            }
        }
        strategies
    };
    let own = embedded.as_ref().and_then(|e| e.pooler.as_ref());
    let backend = AnyBackend::new(&target, target.to_string(), schema);
    // On claimbench's own server the sessions log in as the workload's role: declared
    // SQL then runs without rights over the host, and a transaction pooler finds the
    // schema in the role's default search_path, which claimbench sets.
    let backend = match embedded.is_some() && (own.is_some() || declared.is_some()) {
        true => backend.with_workload_role(),
        false => backend,
    };
    let backend = super::pooler::through(backend, user.as_ref(), own)?;
    if let Some(w) = declared {
        // A declared claim is the workload's SQL: held to the same role check as `run`.
        let files = w.declared_files(target.kind());
        claimbench::runner::refuse_privileged_role(&backend, w, &files, allow_privileged_sql)
            .await?;
    }
    let mut server = backend.server_info().await?;
    backend.check_schema().await?;
    // What the sessions run with: the server's settings, then --set's over them.
    server
        .settings
        .retain(|(n, _)| !settings.iter().any(|(s, _)| s.eq_ignore_ascii_case(n)));
    server.settings.extend(settings.iter().cloned());
    let version = server.version.split(" on ").next().unwrap_or_default();
    errln!(
        "proving {} on {target} ({version}) in scratch schema `{schema}`: A holds {} of {} rows open, B waits up to {} s",
        super::comma_list(&strategies),
        prove::HELD,
        prove::BACKLOG,
        prove::PATIENCE.as_secs()
    );
    let mut verdicts = Vec::new();
    for s in &strategies {
        verdicts.extend(prove::prove(&backend, s, s, &settings).await?);
    }
    let transaction_pooled = own.map(|p| p.mode()).or(user.as_ref().map(|p| p.mode))
        == Some(claimbench::pooler::PoolMode::Transaction);
    let causes: Vec<(usize, Vec<String>)> = verdicts
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.ok)
        .map(|(i, v)| {
            let mut c = prove::likely_causes(target.kind(), &server.settings, v);
            if transaction_pooled {
                c.extend(pooled_cause(&verdicts[..=i]));
            }
            (i, c)
        })
        .collect();
    out!("{}", prove::render(&verdicts, &causes));
    drop(embedded);
    if causes.is_empty() {
        outln!("\nevery strategy behaves as expected on this server");
        Ok(ExitCode::SUCCESS)
    } else {
        errln!(
            "{} of {} checks failed: on this server those strategies do not lock as claimbench's reports assume (likely causes above)",
            causes.len(),
            verdicts.len()
        );
        Ok(ExitCode::from(1))
    }
}
