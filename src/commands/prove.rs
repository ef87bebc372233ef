//! `prove`: the scripted two-session interleavings of each strategy on a server, and
//! the likely causes of any check that fails.

use super::targets::start_embedded;
use anyhow::{Result, bail};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::{Backend, DbTarget};
use claimbench::strategy::{self, Strategy};
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

/// `prove`: the verdict table; exit 1 when a strategy does not behave as expected.
pub(crate) async fn prove(
    db: Option<&str>,
    schema: &str,
    (strategy, set): (&[String], &[String]),
    pooler: Option<super::pooler::PoolerFlags>,
) -> Result<ExitCode> {
    use claimbench::prove;
    let schema = super::schema_name(schema)?;
    let strategies: Vec<Strategy> = if strategy.is_empty() {
        Vec::new()
    } else {
        strategy
            .iter()
            .map(|s| {
                s.parse::<Strategy>()
                    .map_err(|e| anyhow::anyhow!("--strategy: {e}"))
            })
            .collect::<Result<_>>()?
    };
    let mut embedded = None;
    // Through a pooler: on the throw-away server, one claimbench starts in the mode
    // asked (its pool roomy enough for both sessions); on --db, the person's.
    let mut user = None;
    let own_mode = match (&pooler, db) {
        (Some(f), None) => Some(f.own_mode()?),
        _ => None,
    };
    let target = match db {
        Some(url) => {
            let t = DbTarget::parse(url)?;
            if let Some(f) = pooler {
                let mut targets = [(t.kind(), Some(t))];
                user = Some(super::pooler::locate(f, &mut targets).await?);
                targets[0].1.take().expect("located in place")
            } else {
                t
            }
        }
        None => start_embedded(&prove::workload(own_mode)?, false, &mut embedded)?.0,
    };
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
    // The sessions log in as the workload's role on claimbench's own server, whose
    // default search_path it sets for a transaction pooler.
    let backend = match own {
        Some(_) => backend.with_workload_role(),
        None => backend,
    };
    let backend = super::pooler::through(backend, user.as_ref(), own)?;
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
