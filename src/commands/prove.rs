//! `prove`: the scripted two-session interleavings of each strategy on a server, and
//! the likely causes of any check that fails.

use super::targets::{start_embedded, start_mariadb};
use anyhow::{Result, bail};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::{Backend, DbTarget};
use claimbench::backend_kind::BackendKind;
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
    /// `--backend`: the throw-away servers to prove on without `--db`.
    pub backends: &'a [BackendKind],
    /// `--model-cases`: generated states for a declared claim that names its model.
    pub model_cases: u32,
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
            .map(|s| {
                let s = resolve(s).map_err(|e| anyhow::anyhow!("--strategy: {e}"))?;
                if s.needs_lock_service() {
                    // Before any server starts.
                    bail!(
                        "--strategy {s}: prove runs the claim on the server alone, and {s}'s lock lives in a Redis beside it; `run` measures it (tests/brokers.rs holds its leases to their promises)"
                    );
                }
                Ok(s)
            })
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

/// The throw-away servers claimbench starts for `prove` without `--db`, kept alive
/// until it has printed its verdicts.
#[derive(Default)]
struct Servers {
    pg: Option<super::targets::Embedded>,
    mariadb: Option<claimbench::embedded::mariadb::EmbeddedMariadb>,
}

/// The backends to prove on without `--db`: those `--backend` names; with `--workload`
/// alone, every backend one of its declared strategies has a form for; else PostgreSQL.
/// Declared strategies with a form for none of the servers claimbench can start are
/// refused before one starts.
fn embedded_kinds(asked: &[BackendKind], strategies: &[Strategy]) -> Result<Vec<BackendKind>> {
    if !asked.is_empty() {
        let mut kinds = asked.to_vec();
        kinds.dedup();
        return Ok(kinds);
    }
    let startable = [BackendKind::Postgres, BackendKind::Mysql];
    if let Some(s) = strategies.iter().find(|s| {
        s.is_custom()
            && !startable.iter().any(|k| s.sql(*k).is_some())
            && s.sql(BackendKind::Mssql).is_some()
    }) {
        bail!(
            "--strategy {s}: the workload declares it for SQL Server only, and claimbench cannot start a SQL Server here; pass --db mssql://… (or give it a postgres or mysql form)"
        );
    }
    let kinds: Vec<BackendKind> = [BackendKind::Postgres, BackendKind::Mysql]
        .into_iter()
        .filter(|k| {
            strategies
                .iter()
                .any(|s| s.is_custom() && s.sql(*k).is_some())
        })
        .collect();
    Ok(match kinds.is_empty() {
        true => vec![BackendKind::Postgres],
        false => kinds,
    })
}

/// The server to prove on and the person's pooler in front of it: `--db` (through the
/// pooler `--pool-mode` names, located as `run` does), or a throw-away server of `kind`
/// (PostgreSQL behind a PgBouncer claimbench starts in the mode asked, its pool roomy
/// enough for both sessions).
async fn prove_target(
    db: Option<&str>,
    (kind, schema): (BackendKind, &str),
    pooler: Option<super::pooler::PoolerFlags>,
    servers: &mut Servers,
) -> Result<(DbTarget, Option<super::pooler::UserPooler>)> {
    use claimbench::prove;
    let kind = db.map_or(Ok(kind), |u| DbTarget::parse(u).map(|t| t.kind()))?;
    if !kind.engine().runs_sql {
        bail!(
            "prove runs on the SQL engines: its steps hold one session's claim open in a transaction while another claims, and {kind} has no transaction a delivery is held in (its technique's promises are checked by a run's ledger instead)"
        );
    }
    let Some(url) = db else {
        let own_mode = pooler.map(|f| f.own_mode()).transpose()?;
        let w = prove::workload(own_mode, &prove::Scratch::default())?;
        let target = match kind {
            BackendKind::Mysql if own_mode.is_some() => {
                bail!("--pool-mode: a pooler is PostgreSQL's; prove on mysql without it")
            }
            BackendKind::Mysql => start_mariadb(&w, schema, false, &mut servers.mariadb)?.0,
            BackendKind::Mssql => {
                bail!("--backend mssql: no SQL Server can be started here; pass --db mssql://…")
            }
            BackendKind::Postgres => start_embedded(&w, false, &mut servers.pg, None)?.0,
            BackendKind::Redis | BackendKind::Nats | BackendKind::Rabbitmq => {
                unreachable!("refused above: prove runs on SQL engines")
            }
        };
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

/// `prove`: the verdict table per server; exit 1 when a strategy does not behave as
/// expected on one of them.
/// `prove`: its flags as what is asked, then the proof.
pub(crate) async fn command(a: crate::cli::ProveArgs) -> Result<ExitCode> {
    let pooler = super::pooler::flags(a.server.pooler)?;
    let backends: Vec<BackendKind> = a.backend.into_iter().map(BackendKind::from).collect();
    let declared = match &a.workload {
        Some(w) => Some(Workload::load_with(w, a.server.files.files())?),
        None => None,
    };
    let asked = Asked {
        strategies: &a.strategy,
        set: &a.set,
        declared: declared.as_ref(),
        allow_privileged_sql: a.server.privilege.allow_privileged_sql,
        backends: &backends,
        model_cases: a.model_cases,
    };
    prove(a.db.as_deref(), &a.schema, asked, pooler).await
}

pub(crate) async fn prove(
    db: Option<&str>,
    schema: &str,
    asked: Asked<'_>,
    pooler: Option<super::pooler::PoolerFlags>,
) -> Result<ExitCode> {
    let schema = super::schema_name(schema)?;
    let strategies = asked_strategies(asked.strategies, asked.declared)?;
    let kinds = match db {
        Some(url) => vec![DbTarget::parse(url)?.kind()],
        None => embedded_kinds(asked.backends, &strategies)?,
    };
    let mut servers = Servers::default();
    let mut failed = 0;
    for (i, kind) in kinds.iter().enumerate() {
        let (target, user) =
            prove_target(db, (*kind, schema), pooler.clone(), &mut servers).await?;
        // With --workload alone, each server proves the declared strategies it has a
        // form of; a strategy --strategy named must have one on every server asked.
        let here: Vec<Strategy> = match asked.strategies.is_empty() && kinds.len() > 1 {
            true => strategies
                .iter()
                .filter(|s| s.sql(target.kind()).is_some())
                .cloned()
                .collect(),
            false => strategies.clone(),
        };
        if i > 0 {
            outln!();
        }
        failed += prove_on(&target, (schema, &here), &asked, user.as_ref(), &servers).await?;
    }
    drop(servers);
    if failed == 0 {
        outln!(
            "\nevery strategy behaves as expected on {}",
            match kinds.len() {
                1 => "this server".to_string(),
                n => format!("these {n} servers"),
            }
        );
        Ok(ExitCode::SUCCESS)
    } else {
        errln!(
            "{failed} checks failed: on that server those strategies do not lock as claimbench's reports assume (likely causes above)"
        );
        Ok(ExitCode::from(1))
    }
}

/// Proves `strategies` (empty: every built-in the server has) on `target`, prints the
/// verdict table, and returns how many checks failed.
async fn prove_on(
    target: &DbTarget,
    (schema, strategies): (&str, &[Strategy]),
    asked: &Asked<'_>,
    user: Option<&super::pooler::UserPooler>,
    servers: &Servers,
) -> Result<usize> {
    use claimbench::prove;
    let Asked {
        set,
        declared,
        allow_privileged_sql,
        ..
    } = *asked;
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
    // Every built-in technique the server has, unless --strategy chose; not one whose
    // claim needs a lock service beside the server.
    let strategies: Vec<Strategy> = if strategies.is_empty() {
        Strategy::builtin()
            .filter(|s| s.sql(target.kind()).is_some() && !s.needs_lock_service())
            .collect()
    } else {
        for s in strategies {
            if let strategy::Form::Absent(why) = s.form(target.kind()) {
                bail!("--strategy {s}: no {} form: {why}", target.kind());
            }
        }
        strategies.to_vec()
    };
    let own = servers.pg.as_ref().and_then(|e| e.pooler.as_ref());
    let embedded = match target.kind() {
        BackendKind::Mysql => servers.mariadb.is_some(),
        _ => servers.pg.is_some(),
    };
    let backend = AnyBackend::new(target, target.to_string(), schema);
    // On claimbench's own server the sessions log in as the workload's role: declared
    // SQL then runs without rights over the host, and a transaction pooler finds the
    // schema in the role's default search_path, which claimbench sets.
    let backend = match embedded && (own.is_some() || declared.is_some()) {
        true => backend.with_workload_role(),
        false => backend,
    };
    let backend = super::pooler::through(backend, user, own)?;
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
    let scratch = declared.map_or_else(prove::Scratch::default, prove::Scratch::like);
    let mut verdicts = Vec::new();
    for s in &strategies {
        verdicts.extend(prove::prove(&backend, s, s, &settings, &scratch).await?);
        let model = s.def().custom.as_ref().and_then(|c| c.model);
        if let Some(m) = model.filter(|_| asked.model_cases > 0) {
            let cases = (asked.model_cases, 1);
            let table = scratch.table();
            verdicts.push(prove::model_check(&backend, (s, m), cases, &settings, table).await?);
        }
    }
    let transaction_pooled = own.map(|p| p.mode()).or(user.map(|p| p.mode))
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
    Ok(causes.len())
}
