//! The commands that look without running trials: `validate` (what a workload expands
//! to), `sql` (the statements a strategy sends), `prepare` (a seeded schema for other
//! tools) and `report` (re-render a run).

use super::run::print_report_paths;
use super::run_json_path;
use super::targets::check_layouts;
use anyhow::{Result, bail};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::{Backend, BackendKind, DbTarget, mssql, mysql, postgres};
use claimbench::report;
use claimbench::results::RunResult;
use claimbench::strategy::{self, Strategy};
use claimbench::workload::plan::{Plan, Targets};
use claimbench::workload::{Files, Workload};
use std::path::Path;
use std::process::ExitCode;

/// `validate`: the trial count and what each matrix block expands to.
pub(crate) fn validate(workload: &Path, files: Files) -> Result<ExitCode> {
    let w = Workload::load_with(workload, files)?;
    w.check_runnable()?;
    check_layouts(&w, &w.backends)?;
    // Without matrix.backends the engine is --db's, which validate does not take: what
    // a run without --db (the embedded PostgreSQL) would refuse is said, not failed.
    let default_refusal = match w.backends.is_empty() {
        true => check_layouts(&w, &[BackendKind::Postgres]).err(),
        false => None,
    };
    super::targets::check_embedded_settings(&w)?;
    // The plan the run executes on the workload's own backends (validation bounds it).
    let plan = Plan::of(&w, Targets::declared(&w));
    outln!(
        "{}: ok, {} cells, {} trials{} on {}",
        workload.display(),
        plan.cells(),
        plan.trials(&w),
        if w.matrices.iter().any(|m| m.phase.search.is_some()) {
            " at most"
        } else {
            ""
        },
        if w.backends.is_empty() {
            "each backend: those of the --db URLs given (PostgreSQL without any)".to_string()
        } else {
            format!("{} backends", w.backends.len())
        },
    );
    if let Some(e) = default_refusal {
        outln!(
            "  note: a run without --db (the embedded PostgreSQL) refuses it: {e}; run it with --db on a server it has a form for, or name its engines in matrix.backends"
        );
    }
    for (i, m) in w.matrices.iter().enumerate() {
        let p = w.phase(i);
        outln!(
            "  {}: {} strategies x {} layouts x {} worker counts x {} batch sizes x {}{}",
            if m.name.is_empty() { "matrix" } else { &m.name },
            m.strategies.len(),
            m.index_layouts.len(),
            m.workers.len(),
            m.batch_sizes.len(),
            match m.phase.search {
                Some(s) => format!("a rate search of at most {} trials", s.max_trials),
                None => format!("{} repetitions", p.trial.repetitions),
            },
            match (&m.phase.arrival_rate_from, p.producer_rate_per_s) {
                (Some(from), _) => format!(", arrivals at {}", from.describe()),
                (None, Some(r)) => format!(", {r} arrivals/s"),
                (None, None) => String::new(),
            }
        );
        if m.if_db_given {
            let schemes: Vec<String> = m
                .backends
                .iter()
                .map(|k| format!("--db {}://…", k.engine().url_schemes[0]))
                .collect();
            outln!(
                "    runs only with {} (if_db_given); left out without",
                schemes.join(" and ")
            );
        }
        if !p.timeline.is_empty() {
            let phases: Vec<String> = p
                .timeline
                .iter()
                .map(|t| {
                    let rate = match t.rate {
                        claimbench::workload::PhaseRate::Trial => String::new(),
                        claimbench::workload::PhaseRate::PerS(r) => format!(" at {r}/s"),
                        claimbench::workload::PhaseRate::Times(k) => format!(" at {k} x"),
                    };
                    let pin = t
                        .pin
                        .map(|k| format!(", {} pin", k.name()))
                        .unwrap_or_default();
                    format!("{} {} s{rate}{pin}", t.name, (t.to - t.from).as_secs_f64())
                })
                .collect();
            outln!("    timeline: {}", phases.join("; "));
        }
        // A claim that serves one queue per worker leaves queues without a worker when
        // there are fewer workers than queues: say which, before a run shows 0 jobs/s.
        let queues = w.population.queue_names();
        for s in m.strategies.iter().filter(|s| s.reads_queue()) {
            for &workers in m.workers.iter().filter(|&&n| (n as usize) < queues.len()) {
                outln!(
                    "  note: {s} reads :queue (worker i serves queue i mod {}); at {workers} workers {} get none",
                    queues.len(),
                    queues[workers as usize..].join(", ")
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `prepare`: a reset and seeded schema in `layout` (the workload's first by default),
/// for another tool to load (benches/pgbench_compare.sh runs pgbench on it).
pub(crate) async fn prepare(
    (workload, files): (&Path, Files),
    db: &str,
    schema: &str,
    layout: Option<String>,
    allow_privileged_sql: bool,
) -> Result<ExitCode> {
    let schema = super::schema_name(schema)?;
    let w = Workload::load_with(workload, files)?;
    let layout = layout.unwrap_or_else(|| w.index_layouts()[0].clone());
    if !w.index_layouts().contains(&layout)
        && !claimbench::workload::INDEX_LAYOUTS.contains(&layout.as_str())
    {
        bail!(
            "--layout: unknown layout `{layout}`; expected one of: {}",
            claimbench::workload::INDEX_LAYOUTS.join(", ")
        );
    }
    let target = DbTarget::parse(db)?;
    AnyBackend::layout_check(target.kind(), &layout, &w)?;
    let backend = AnyBackend::new(&target, target.to_string(), schema);
    // A declared layout and a declared table are the workload's SQL: held to the same
    // role check as `run` (the table's steps run at every reset).
    let table = w
        .table
        .as_ref()
        .filter(|t| t.file_for(target.kind()).is_some());
    let declared: Vec<String> = claimbench::custom_layout::find(&w.custom_layouts, &layout)
        .map(|d| d.file.clone())
        .into_iter()
        .chain(
            table
                .and_then(|t| t.file_for(target.kind()))
                .map(str::to_string),
        )
        .collect();
    claimbench::runner::refuse_privileged_role(&backend, &w, &declared, allow_privileged_sql)
        .await?;
    let seeded = backend.reset(&w, &layout, w.seed).await?;
    match table {
        Some(t) => outln!(
            "{target}: schema `{schema}` holds the declared table {} with the {seeded} rows its seed step wrote, index layout {layout}",
            t.name
        ),
        None => {
            outln!("{target}: schema `{schema}` holds {seeded} pending jobs, index layout {layout}")
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `sql`: a strategy's statements as claimbench sends them, with a workload's declared
/// strategies resolvable by name.
pub(crate) fn sql(
    kind: BackendKind,
    strategy: &str,
    batch: u32,
    workload: Option<(&Path, Files)>,
) -> Result<ExitCode> {
    let strategy = match workload {
        Some((w, files)) => Workload::load_with(w, files)?.strategy_named(strategy),
        None => strategy.parse(),
    };
    print_sql(kind, strategy.map_err(anyhow::Error::msg)?, batch)?;
    Ok(ExitCode::SUCCESS)
}

/// `report`: the summary of a stored run, and its report files rendered anew.
pub(crate) fn report(run_json: &Path) -> Result<ExitCode> {
    let run_json = run_json_path(run_json);
    let r = RunResult::read(&run_json)?;
    let dir = super::run_folder(&run_json);
    let view = report::view::RunView::of(&r);
    out!("{}", report::summary::show(&view));
    print_report_paths(&view, dir)?;
    Ok(ExitCode::SUCCESS)
}

fn print_sql(kind: BackendKind, strategy: Strategy, batch: u32) -> Result<()> {
    if let strategy::Form::Absent(why) = strategy.form(kind) {
        bail!("strategy `{strategy}` has no {kind} form: {why}");
    }
    let (params, text) = match kind {
        BackendKind::Mysql => (
            mysql::strategy_params(&strategy, batch),
            mysql::statements_as_sent(&strategy, batch),
        ),
        BackendKind::Mssql => (
            mssql::strategy_params(&strategy, batch),
            match strategy.shape() {
                strategy::Shape::Claim => format!(
                    "-- as sent to a database with READ_COMMITTED_SNAPSHOT OFF; with it ON, each\n-- lock hint also gets READCOMMITTEDLOCK (the form that ran is in run.json)\n{}",
                    mssql::locking_claim_sql(&strategy, "claimbench", false)
                ),
                _ => mssql::with_schema(strategy.text(BackendKind::Mssql), "claimbench"),
            },
        ),
        BackendKind::Postgres => (
            postgres::strategy_params(&strategy, batch),
            strategy.text(BackendKind::Postgres).to_string(),
        ),
        // The script as the server runs it: the shared prelude, its data model, then
        // the technique.
        BackendKind::Redis => (
            claimbench::backend::redis::script_params(&strategy, batch),
            claimbench::backend::redis::script_text(&strategy),
        ),
        // No script: the calls the technique sends, as its file lists them.
        BackendKind::Nats => (
            format!("batch {batch}: the fetch's max_messages"),
            strategy.text(BackendKind::Nats).to_string(),
        ),
        BackendKind::Rabbitmq => (
            format!("batch {batch}: the consumer's prefetch_count"),
            strategy.text(BackendKind::Rabbitmq).to_string(),
        ),
    };
    if let Some(src) = &strategy.def().custom {
        // The file of this backend's form: `sql --backend mysql` named the PostgreSQL one.
        let file = match kind {
            BackendKind::Mysql => src.mysql.as_ref().map_or("", |m| m.file.as_str()),
            BackendKind::Mssql => src.mssql.as_ref().map_or("", |m| m.file.as_str()),
            _ => src.file.as_str(),
        };
        outln!("-- declared in {file}; named parameters numbered as sent");
    }
    outln!("-- strategy {strategy} on {kind}, batch {batch}");
    outln!("-- parameters: {params}");
    outln!("{}", text.trim_end());
    Ok(())
}
