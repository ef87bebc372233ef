//! `prove`: the scripted two-session interleavings of each strategy on a server, and
//! the likely causes of any check that fails.

use super::targets::start_embedded;
use anyhow::{Result, bail};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::{Backend, DbTarget};
use claimbench::strategy::{self, Strategy};
use std::process::ExitCode;

/// `prove`: the verdict table; exit 1 when a strategy does not behave as expected.
pub(crate) async fn prove(
    db: Option<&str>,
    schema: &str,
    strategy: &[String],
    set: &[String],
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
    let target = match db {
        Some(url) => DbTarget::parse(url)?,
        None => start_embedded(&prove::workload()?, false, &mut embedded)?.0,
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
    let backend = AnyBackend::new(&target, target.to_string(), schema);
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
    let causes: Vec<(usize, Vec<String>)> = verdicts
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.ok)
        .map(|(i, v)| (i, prove::likely_causes(target.kind(), &server.settings, v)))
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
