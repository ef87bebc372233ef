//! Entry point: parse the command line, dispatch, and map the outcome to an exit code.
//!
//! Exit codes: see `cli::EXIT_CODES` (printed by `--help`, and in the README).

use anyhow::{Context, Result, bail};
use claimbench::analysis::recommend;
use claimbench::backend::any::AnyBackend;
use claimbench::backend::{BackendKind, DbTarget, mssql, mysql, postgres};
use claimbench::embedded::EmbeddedPostgres;
use claimbench::resources::host_facts;
use claimbench::results::{Environment, RunResult, TargetRecord};
use claimbench::runner::{self, Interrupt, Restart, RunOptions};
use claimbench::slo::Slo;
use claimbench::strategy::{self, Strategy};
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
            slo,
            worker_threads,
        } => {
            let flags = RunFlags {
                results_dir: results,
                repetitions,
                quiet,
                slos: parse_slos(&slo)?,
                worker_threads: worker_threads.map(usize::from),
            };
            run(&workload, db, &schema, flags).await
        }
        cli::Command::Recommend { run_json, slo } => recommend(&run_json, &parse_slos(&slo)?),
        cli::Command::Compare {
            baseline,
            current,
            force,
            threshold,
            markdown,
            json,
            junit,
            report,
        } => compare(
            [&baseline, &current],
            force,
            &threshold,
            [markdown, json, junit],
            report,
        ),
        cli::Command::Prepare {
            workload,
            db,
            schema,
            layout,
        } => {
            let w = Workload::load(&workload)?;
            let layout = layout.unwrap_or_else(|| w.index_layouts()[0].clone());
            if !w.index_layouts().contains(&layout)
                && !claimbench::workload::INDEX_LAYOUTS.contains(&layout.as_str())
            {
                bail!(
                    "unknown layout `{layout}`; expected one of: {}",
                    claimbench::workload::INDEX_LAYOUTS.join(", ")
                );
            }
            let target = DbTarget::parse(&db)?;
            AnyBackend::layout_check(target.kind(), &layout)?;
            let backend = AnyBackend::new(&target, target.to_string(), &schema);
            let seeded = backend.reset(&w, &layout, w.seed).await?;
            outln!(
                "{target}: schema `{schema}` holds {seeded} pending jobs, index layout {layout}"
            );
            Ok(ExitCode::SUCCESS)
        }
        cli::Command::Prove {
            db,
            schema,
            strategy,
            set,
        } => prove(db.as_deref(), &schema, &strategy, &set).await,
        cli::Command::Sql {
            backend,
            strategy,
            batch,
            workload,
        } => {
            if let Some(w) = &workload {
                // Declares the workload's custom strategies, so their names resolve.
                Workload::load(w)?;
            }
            print_sql(&backend, &strategy, batch)?;
            Ok(ExitCode::SUCCESS)
        }
        cli::Command::Validate { workload } => validate(&workload),
        cli::Command::Report { run_json } => {
            let run_json = run_json_path(&run_json);
            let r = RunResult::read(&run_json)?;
            let dir = run_json.parent().unwrap_or(Path::new("."));
            out!("{}", report::summary::render(&r));
            print_report_paths(&r, dir)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `prove`: the verdict table; exit 1 when a strategy does not behave as expected.
async fn prove(
    db: Option<&str>,
    schema: &str,
    strategy: &[String],
    set: &[String],
) -> Result<ExitCode> {
    use claimbench::prove;
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
            let (name, value) = (name.trim().to_string(), value.trim().to_string());
            claimbench::session_settings::check(target.kind(), &name, &value)
                .map_err(|e| anyhow::anyhow!("--set {s}: {e}"))?;
            Ok((name, value))
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
        names_of(&strategies),
        prove::HELD,
        prove::BACKLOG,
        prove::PATIENCE.as_secs()
    );
    let mut verdicts = Vec::new();
    for &s in &strategies {
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

fn names_of(strategies: &[Strategy]) -> String {
    strategies
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `validate`: the trial count and what each matrix block expands to.
fn validate(workload: &Path) -> Result<ExitCode> {
    let w = Workload::load(workload)?;
    check_layouts(&w, &w.backends)?;
    outln!(
        "{}: ok, {} trials{} on {}",
        workload.display(),
        w.trial_count(),
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
            match p.producer_rate_per_s {
                Some(r) => format!(", {r} arrivals/s"),
                None => String::new(),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_slos(texts: &[String]) -> Result<Vec<Slo>> {
    texts
        .iter()
        .map(|t| Slo::parse(t).map_err(|e| anyhow::anyhow!("--slo {t}: {e}")))
        .collect()
}

/// `recommend`: exit 0 when some cell meets the SLOs, 3 when none does.
fn recommend(run_json: &Path, flags: &[Slo]) -> Result<ExitCode> {
    let r = RunResult::read(&run_json_path(run_json))?;
    let slos = recommend::effective_slos(&r.slos, flags);
    let recs = recommend::recommend(&r, &slos);
    if recs.is_empty() {
        bail!("{}: no cells to recommend from", run_json.display());
    }
    out!("{}", report::answers::recommendation_text(&recs, &slos));
    if recs.iter().all(|r| r.recommended.is_none()) {
        errln!(
            "no cell meets {}: widen the sweep or relax the SLOs",
            slos.iter()
                .map(Slo::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// `compare`: the Markdown report on stdout (and in `--markdown`), JSON in `--json`,
/// and the comparison's exit code.
fn compare(
    [baseline, current]: [&Path; 2],
    force: bool,
    thresholds: &[String],
    [markdown, json, junit]: [Option<std::path::PathBuf>; 3],
    html: bool,
) -> Result<ExitCode> {
    let thresholds = thresholds
        .iter()
        .map(|t| {
            claimbench::analysis::compare::parse_threshold(t)
                .map_err(|e| anyhow::anyhow!("--threshold {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let base = RunResult::read(&run_json_path(baseline))?;
    let cur_json = run_json_path(current);
    let cur = RunResult::read(&cur_json)?;
    let c = claimbench::analysis::compare::compare_with(&base, &cur, force, &thresholds);
    let md = report::comparison::markdown(&c);
    out!("{md}");
    if let Some(p) = markdown {
        std::fs::write(&p, &md).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&c).expect("a comparison serializes");
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(p) = junit {
        let xml = report::comparison::junit(&c).context("cannot write JUnit XML")?;
        std::fs::write(&p, xml).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if html {
        let dir = cur_json.parent().unwrap_or(Path::new("."));
        let files = report::render_compared(&cur, dir, &base, &c)?;
        errln!("report with the comparison: {}", files.html.display());
    }
    Ok(ExitCode::from(c.exit_code()))
}

/// A results folder stands for the run.json inside it.
fn run_json_path(p: &Path) -> std::path::PathBuf {
    if p.is_dir() {
        p.join("run.json")
    } else {
        p.to_path_buf()
    }
}

fn print_sql(backend: &str, strategy: &str, batch: u32) -> Result<()> {
    if !["postgres", "mysql", "mssql"].contains(&backend) {
        bail!("unknown backend `{backend}`; expected: postgres, mysql, mssql");
    }
    let strategy: Strategy = strategy.parse().map_err(anyhow::Error::msg)?;
    if batch == 0 {
        bail!("--batch 0 is not allowed; give 1 or more");
    }
    let kind = match backend {
        "mysql" => BackendKind::Mysql,
        "mssql" => BackendKind::Mssql,
        _ => BackendKind::Postgres,
    };
    if let strategy::Form::Absent(why) = strategy.form(kind) {
        bail!("strategy `{strategy}` has no {kind} form: {why}");
    }
    let (params, text) = match kind {
        BackendKind::Mysql => (
            mysql::strategy_params(strategy, batch),
            mysql::expand_ids(mysql::strategy_sql(strategy), batch as usize),
        ),
        BackendKind::Mssql => (
            mssql::strategy_params(strategy, batch),
            match strategy.shape() {
                strategy::Shape::Claim => format!(
                    "-- as sent to a database with READ_COMMITTED_SNAPSHOT OFF; with it ON, each\n-- lock hint also gets READCOMMITTEDLOCK (the form that ran is in run.json)\n{}",
                    mssql::locking_claim_sql(strategy, "claimbench", false)
                ),
                _ => mssql::with_schema(mssql::strategy_sql(strategy), "claimbench"),
            },
        ),
        BackendKind::Postgres => (
            postgres::strategy_params(strategy, batch),
            postgres::strategy_sql(strategy).to_string(),
        ),
    };
    if let Some(src) = &strategy.def().custom {
        outln!(
            "-- declared in {}; named parameters numbered as sent",
            src.file
        );
    }
    outln!("-- strategy {strategy} on {backend}, batch {batch}");
    outln!("-- parameters: {params}");
    outln!("{}", text.trim_end());
    Ok(())
}

/// Which database each of the run's backends uses: a `--db` URL, or (for postgres
/// only) `None`, the embedded cluster. Fills in the workload's backends when it left
/// them to `--db`, and checks that every index layout exists on every backend.
fn resolve_targets(
    workload: &mut Workload,
    urls: &[String],
) -> Result<Vec<(BackendKind, Option<DbTarget>)>> {
    let mut given: Vec<DbTarget> = Vec::new();
    for url in urls {
        let t = DbTarget::parse(url)?;
        if given.iter().any(|g| g.kind() == t.kind()) {
            bail!(
                "--db names two {} servers; give one URL per backend",
                t.kind()
            );
        }
        given.push(t);
    }
    let path = workload.source_path.display().to_string();
    if workload.backends.is_empty() {
        workload.backends = if given.is_empty() {
            vec![BackendKind::Postgres]
        } else {
            given.iter().map(DbTarget::kind).collect()
        };
    } else if let Some(extra) = given
        .iter()
        .find(|t| !workload.backends.contains(&t.kind()))
    {
        bail!(
            "--db gives a {} URL but {path}'s matrix.backends lists only {}; add {} there or drop that --db",
            extra.kind(),
            names(&workload.backends),
            extra.kind()
        );
    }
    let mut out = Vec::new();
    for &kind in &workload.backends {
        let target = given.iter().find(|t| t.kind() == kind).cloned();
        if target.is_none() && kind != BackendKind::Postgres {
            let example = match kind {
                BackendKind::Mssql => {
                    "mssql://sa:PASSWORD@127.0.0.1:1433/master?trust_server_certificate=true"
                }
                _ => "mysql://root@127.0.0.1:3306/test",
            };
            bail!(
                "{path}: matrix.backends lists {kind} but no --db {kind}:// URL was given, e.g. --db {example}"
            );
        }
        check_layouts(workload, &[kind])?;
        out.push((kind, target));
    }
    Ok(out)
}

/// Every index layout and strategy of the workload must exist on each of `kinds`.
fn check_layouts(workload: &Workload, kinds: &[BackendKind]) -> Result<()> {
    for &kind in kinds {
        // Settings written for PostgreSQL only, in any block.
        let phases: Vec<Workload> = (0..workload.matrices.len())
            .map(|i| workload.phase(i))
            .collect();
        let postgres_only = [
            (
                "population.history",
                phases.iter().any(|p| p.population.history.rows() > 0),
            ),
            (
                "handler.complete = \"batched\"",
                phases
                    .iter()
                    .any(|p| p.handler.complete == claimbench::workload::Completion::Batched),
            ),
        ];
        for (field, used) in postgres_only {
            if used && kind != BackendKind::Postgres {
                bail!(
                    "{}: {field} on {kind}: written for PostgreSQL only for now",
                    workload.source_path.display()
                );
            }
        }
        for m in &workload.matrices {
            for s in &m.strategies {
                if let strategy::Form::Absent(why) = s.form(kind) {
                    bail!(
                        "{}: matrix.strategies: `{s}` on {kind}: {why}",
                        workload.source_path.display()
                    );
                }
            }
        }
        for layout in &workload.index_layouts() {
            AnyBackend::layout_check(kind, layout).map_err(|why| {
                anyhow::anyhow!(
                    "{}: matrix.index_layouts: `{layout}` on {kind}: {why}",
                    workload.source_path.display()
                )
            })?;
        }
    }
    Ok(())
}

fn names(kinds: &[BackendKind]) -> String {
    kinds
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `run`'s options beyond the workload and where it runs.
struct RunFlags {
    results_dir: std::path::PathBuf,
    repetitions: Option<u32>,
    quiet: bool,
    slos: Vec<Slo>,
    worker_threads: Option<usize>,
}

async fn run(
    workload_path: &Path,
    db: Vec<String>,
    schema: &str,
    flags: RunFlags,
) -> Result<ExitCode> {
    let RunFlags {
        results_dir,
        repetitions,
        quiet,
        slos: slo_flags,
        worker_threads,
    } = flags;
    let mut workload = Workload::load(workload_path)?;
    if let Some(n) = repetitions {
        if n == 0 {
            bail!("--repetitions 0 is not allowed; give 1 or more");
        }
        workload.set_repetitions(n);
    }
    if !slo_flags.is_empty() {
        workload.slos = recommend::effective_slos(&workload.slos, &slo_flags);
    }
    let targets = resolve_targets(&mut workload, &db)?;
    let workload = Arc::new(workload);

    let interrupt: Interrupt = Arc::default();
    stop_on_signals(interrupt.clone());

    // Keeps the throw-away cluster alive for the run; dropped (stopped and deleted) on
    // every way out of this function.
    let mut embedded = None;
    let mut backends = Vec::new();
    let mut records = Vec::new();
    let mut restarts = Vec::new();
    for (kind, target) in targets {
        let (target, label) = match target {
            Some(t) => {
                let label = t.to_string();
                (t, label)
            }
            None => start_embedded(&workload, quiet, &mut embedded)?,
        };
        let backend = AnyBackend::new(&target, target.to_string(), schema);
        // On the cluster claimbench started, trials reset from a pristine copy.
        let own_cluster = matches!(kind, BackendKind::Postgres) && embedded.is_some();
        let backend = if own_cluster {
            backend.with_pristine_copies()
        } else {
            backend
        };
        let own = embedded.as_ref().filter(|_| own_cluster);
        restarts.push(restart_action(&workload, own, &target)?);
        let server = backend.server_info().await?;
        // Before anything runs: refuse a --schema claimbench did not create.
        backend.check_schema().await?;
        records.push(TargetRecord {
            backend: kind,
            target: label,
            embedded: matches!(kind, BackendKind::Postgres) && embedded.is_some(),
            server,
            session_settings: claimbench::session_settings::for_backend(
                &workload.session_settings,
                kind,
            ),
        });
        backends.push(backend);
    }
    let opts = RunOptions {
        results_dir,
        quiet,
        environment: environment(records),
        worker_threads,
        restarts,
    };
    let backends: Vec<_> = backends.into_iter().map(Arc::new).collect();
    let outcome = match runner::run(&backends, workload, opts, interrupt.clone()).await {
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
    let failed_gates = claimbench::analysis::gates::check(&outcome.result)
        .iter()
        .filter(|g| !g.passed)
        .count();
    Ok(if interrupt.stopping() {
        ExitCode::from(130)
    } else if outcome.failed_checks {
        errln!("a correctness check failed: see Warnings in the summary");
        ExitCode::from(1)
    } else if failed_gates > 0 {
        errln!("{failed_gates} gate checks failed: see Gates in the summary");
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// This host, this build, and the servers of the run (the first one also at the top
/// level, where runs from before several backends read it).
fn environment(records: Vec<TargetRecord>) -> Environment {
    let facts = host_facts();
    let first = records[0].clone();
    Environment {
        host: facts.host,
        os: facts.os,
        cpu: facts.cpu,
        logical_cores: facts.logical_cores,
        physical_cores: facts.physical_cores,
        memory_bytes: facts.memory_bytes,
        claimbench_version: env!("CARGO_PKG_VERSION").to_string(),
        git_revision: git_revision(),
        target: first.target,
        embedded: first.embedded,
        server: first.server,
        targets: records,
    }
}

/// How to restart a backend's server for `faults.restart_db_at_s`: the embedded cluster
/// restarts itself; a `--db` server only through `faults.restart_command`.
fn restart_action(
    w: &Workload,
    own: Option<&Arc<EmbeddedPostgres>>,
    target: &DbTarget,
) -> Result<Option<Restart>> {
    if w.faults.restart_at.is_empty() {
        return Ok(None);
    }
    if let Some(pg) = own {
        let pg = pg.clone();
        return Ok(Some(Arc::new(move || {
            pg.restart().map_err(|e| e.to_string())
        })));
    }
    let Some(cmd) = w.faults.restart_command.clone() else {
        bail!(
            "{}: faults.restart_db_at_s: claimbench restarts only the server it started, not {target}; give faults.restart_command (e.g. \"docker restart pg\")",
            w.source_path.display()
        );
    };
    Ok(Some(Arc::new(move || run_shell(&cmd))))
}

/// `sh -c cmd`, which must succeed; its stderr in the error.
fn run_shell(cmd: &str) -> std::result::Result<(), String> {
    let out = std::process::Command::new("sh")
        .args(["-c", cmd])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `sh -c {cmd}`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{cmd}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Starts the throw-away cluster into `embedded` (which keeps it alive for the run) and
/// returns its target and the label results record for it.
fn start_embedded(
    workload: &Workload,
    quiet: bool,
    embedded: &mut Option<Arc<EmbeddedPostgres>>,
) -> Result<(DbTarget, String)> {
    if !quiet {
        errln!("starting the embedded PostgreSQL (pass --db URL to use an existing server)");
    }
    let mut settings = workload.embedded_settings.clone();
    if !workload.faults.restart_at.is_empty() {
        // The default's synchronous_commit = off acknowledges a commit before its WAL is
        // written: a restart in immediate mode (a crash) forgets the last 200 ms of
        // claims and completions the workers were told had committed, and the ledger
        // rightly reports duplicates that are the setting's, not the claim's. A workload
        // that sets it off itself keeps it off.
        settings
            .entry("synchronous_commit".to_string())
            .or_insert_with(|| "on".to_string());
    }
    let pg = EmbeddedPostgres::start(&settings).context("cannot start the embedded PostgreSQL")?;
    if !quiet {
        errln!(
            "embedded PostgreSQL on port {} in {} (removed on exit)",
            pg.port(),
            pg.path().display()
        );
    }
    let t = DbTarget::parse(&pg.url())?;
    *embedded = Some(Arc::new(pg));
    let label = format!("embedded ({t})");
    Ok((t, label))
}

/// Ctrl-C, SIGTERM and SIGHUP stop the current trial: partial results are written and
/// the embedded cluster is removed.
fn stop_on_signals(interrupt: Interrupt) {
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
        errln!("\ninterrupted by {which}: stopping the current trial and writing partial results");
        interrupt.stop();
    });
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
