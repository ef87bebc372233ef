//! Entry point: parse the command line, dispatch, and map the outcome to an exit code.
//!
//! Exit codes (documented in the README): 0 success; 1 the run finished but a
//! correctness check failed (lost jobs, duplicate claims from a strategy that should
//! prevent them, ledger and effects table disagreeing); 2 an error (bad input, an
//! unreachable server, a failed trial); 130 interrupted by Ctrl-C, SIGTERM or SIGHUP
//! (partial results written, embedded cluster removed).

use anyhow::{Context, Result, bail};
use claimbench::backend::DbTarget;
use claimbench::backend::postgres::{self, PostgresBackend};
use claimbench::embedded::EmbeddedPostgres;
use claimbench::resources::host_facts;
use claimbench::results::{Environment, RunResult};
use claimbench::runner::{self, Interrupt, RunOptions};
use claimbench::strategy::Strategy;
use claimbench::workload::Workload;
use claimbench::{backend::Backend, report};
use clap::Parser;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

mod cli;

/// println!/eprintln! without the panic when the terminal is gone (SIGHUP): a closed
/// stdout must not cost the partial results or the embedded cluster's cleanup.
macro_rules! outln {
    ($($t:tt)*) => {{ use std::io::Write as _; let _ = writeln!(std::io::stdout(), $($t)*); }};
}
macro_rules! out {
    ($($t:tt)*) => {{ use std::io::Write as _; let _ = write!(std::io::stdout(), $($t)*); }};
}
macro_rules! errln {
    ($($t:tt)*) => {{ use std::io::Write as _; let _ = writeln!(std::io::stderr(), $($t)*); }};
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            errln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            errln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn dispatch(cmd: cli::Command) -> Result<ExitCode> {
    match cmd {
        cli::Command::Run {
            workload,
            db,
            schema,
            results,
            repetitions,
            quiet,
        } => run(&workload, db, &schema, results, repetitions, quiet).await,
        cli::Command::Prepare {
            workload,
            db,
            schema,
            layout,
        } => {
            let w = Workload::load(&workload)?;
            let layout = layout.unwrap_or_else(|| w.matrix.index_layouts[0].clone());
            if postgres::layout_sql(&layout).is_none() {
                bail!(
                    "unknown layout `{layout}`; expected one of: {}",
                    claimbench::workload::INDEX_LAYOUTS.join(", ")
                );
            }
            let target = DbTarget::parse(&db).map_err(anyhow::Error::msg)?;
            let DbTarget::Postgres(config) = target.clone();
            let backend = PostgresBackend::new(config, target.to_string(), &schema);
            let seeded = backend.reset(&w, &layout, w.seed).await?;
            outln!(
                "{target}: schema `{schema}` holds {seeded} pending jobs, index layout {layout}"
            );
            Ok(ExitCode::SUCCESS)
        }
        cli::Command::Sql {
            backend,
            strategy,
            batch,
        } => {
            print_sql(&backend, &strategy, batch)?;
            Ok(ExitCode::SUCCESS)
        }
        cli::Command::Validate { workload } => {
            let w = Workload::load(&workload)?;
            outln!(
                "{}: ok, {} trials ({} strategies x {} layouts x {} worker counts x {} batch sizes x {} repetitions)",
                workload.display(),
                w.trial_count(),
                w.matrix.strategies.len(),
                w.matrix.index_layouts.len(),
                w.matrix.workers.len(),
                w.matrix.batch_sizes.len(),
                w.trial.repetitions
            );
            Ok(ExitCode::SUCCESS)
        }
        cli::Command::Report { run_json } => {
            let r = RunResult::read(&run_json)?;
            let dir = run_json.parent().unwrap_or(Path::new("."));
            out!("{}", report::summary::render(&r));
            print_report_paths(&r, dir)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_sql(backend: &str, strategy: &str, batch: u32) -> Result<()> {
    if backend != "postgres" {
        bail!("unknown backend `{backend}`; expected: postgres");
    }
    let strategy: Strategy = strategy.parse().map_err(anyhow::Error::msg)?;
    if batch == 0 {
        bail!("--batch 0 is not allowed; give 1 or more");
    }
    outln!("-- strategy {strategy} on {backend}, batch {batch}");
    outln!(
        "-- parameters: {}",
        postgres::strategy_params(strategy, batch)
    );
    outln!("{}", postgres::strategy_sql(strategy).trim_end());
    Ok(())
}

async fn run(
    workload_path: &Path,
    db: Option<String>,
    schema: &str,
    results_dir: std::path::PathBuf,
    repetitions: Option<u32>,
    quiet: bool,
) -> Result<ExitCode> {
    let mut workload = Workload::load(workload_path)?;
    if let Some(n) = repetitions {
        if n == 0 {
            bail!("--repetitions 0 is not allowed; give 1 or more");
        }
        workload.trial.repetitions = n;
    }
    let workload = Arc::new(workload);

    let interrupt: Interrupt = Arc::default();
    {
        let interrupt = interrupt.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                let _ = tokio::signal::ctrl_c().await;
                interrupt.stop();
                return;
            };
            let which = tokio::select! {
                _ = tokio::signal::ctrl_c() => "Ctrl-C",
                _ = term.recv() => "SIGTERM",
                _ = hup.recv() => "SIGHUP",
            };
            errln!(
                "\ninterrupted by {which}: stopping the current trial and writing partial results"
            );
            interrupt.stop();
        });
    }

    // Keeps the throw-away cluster alive for the run; dropped (stopped and deleted) on
    // every way out of this function.
    let mut embedded = None;
    let target = match db {
        Some(url) => DbTarget::parse(&url).map_err(anyhow::Error::msg)?,
        None => {
            if !quiet {
                errln!(
                    "starting the embedded PostgreSQL (pass --db URL to use an existing server)"
                );
            }
            let pg = EmbeddedPostgres::start(&workload.embedded_settings)
                .context("cannot start the embedded PostgreSQL")?;
            let url = pg.url();
            if !quiet {
                errln!(
                    "embedded PostgreSQL on port {} in {} (removed on exit)",
                    pg.port(),
                    pg.path().display()
                );
            }
            embedded = Some(pg);
            DbTarget::parse(&url).map_err(anyhow::Error::msg)?
        }
    };
    let DbTarget::Postgres(config) = target.clone();
    let label = if embedded.is_some() {
        format!("embedded ({target})")
    } else {
        target.to_string()
    };
    let backend = PostgresBackend::new(config, target.to_string(), schema);
    let server = backend.server_info().await?;
    let facts = host_facts();
    let environment = Environment {
        host: facts.host,
        os: facts.os,
        cpu: facts.cpu,
        logical_cores: facts.logical_cores,
        physical_cores: facts.physical_cores,
        memory_bytes: facts.memory_bytes,
        claimbench_version: env!("CARGO_PKG_VERSION").to_string(),
        git_revision: git_revision(),
        target: label,
        embedded: embedded.is_some(),
        server,
    };
    let opts = RunOptions {
        results_dir,
        quiet,
        environment,
    };
    let outcome = match runner::run(&backend, workload, opts, interrupt.clone()).await {
        Ok(o) => o,
        Err(f) => {
            if let Some(dir) = f.partial {
                errln!("partial results: {}", dir.join("run.json").display());
                if let Ok(r) = RunResult::read(&dir.join("run.json")) {
                    let _ = report::render_all(&r, &dir);
                }
            }
            return Err(f.error.into());
        }
    };
    out!("{}", report::summary::render(&outcome.result));
    print_report_paths(&outcome.result, &outcome.dir)?;
    drop(embedded);
    Ok(if interrupt.stopping() {
        ExitCode::from(130)
    } else if outcome.failed_checks {
        errln!("a correctness check failed: see Warnings in the summary");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Renders every report file next to run.json and says where they are.
fn print_report_paths(r: &RunResult, dir: &Path) -> Result<()> {
    let files = report::render_all(r, dir)?;
    for p in &files.problems {
        errln!("warning: {p}");
    }
    outln!(
        "\nresults: {}\n         {}\n         {} ({} plot files, cells.csv, hgrm/)",
        dir.join("run.json").display(),
        dir.join("summary.md").display(),
        files.html.display(),
        files.plots.len()
    );
    Ok(())
}

/// The source revision, when claimbench runs from its git checkout ("+dirty" when the
/// tree has uncommitted changes, since the numbers then belong to no commit).
fn git_revision() -> Option<String> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let rev = git(&["rev-parse", "--short=12", "HEAD"])?;
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{rev}+dirty") } else { rev })
}
