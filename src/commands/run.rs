//! `run`: the workload's matrix on its servers, the summary, the report files, and the
//! exit code from the correctness checks and gates. Ctrl-C, SIGTERM and SIGHUP end it
//! with partial results.

use super::targets::{
    Embedded, environment, failover_action, resolve_targets, restart_action, start_embedded,
    start_mariadb, start_nats, start_redis,
};
use anyhow::{Context, Result};
use claimbench::analysis::{RunAnalysis, recommend};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::lock_service::LockService;
use claimbench::backend::recipe::Dialect as _;
use claimbench::backend::{Backend, BackendKind, DbTarget};
use claimbench::embedded::mariadb::EmbeddedMariadb;
use claimbench::report::{self, view::RunView};
use claimbench::results::{RunResult, TargetRecord};
use claimbench::runner::{self, Interrupt, RunOptions};
use claimbench::slo::Slo;
use claimbench::workload::{Files, TopologyKind, Workload};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// `run`'s options beyond the workload and where it runs.
pub(crate) struct RunFlags {
    pub results_dir: std::path::PathBuf,
    pub repetitions: Option<u32>,
    pub quiet: bool,
    /// `--no-rerun`: a disturbed trial is reported with its warnings, not run again.
    pub no_rerun: bool,
    /// `--verbose`: all of summary.md at the end, not the screen.
    pub verbose: bool,
    pub slos: Vec<Slo>,
    pub worker_threads: Option<usize>,
    /// `--restart-command`: how a `--db` server restarts for a restart fault.
    pub restart_command: Option<String>,
    /// `--failover-command`: how a `--db` cluster fails over for a failover fault.
    pub failover_command: Option<String>,
    /// `--allow-privileged-sql`: run declared SQL as a role that could reach the host.
    pub allow_privileged_sql: bool,
    /// `--pool-mode` (with `--pooler`, `--pooler-admin`): the person's pooler.
    pub pooler: Option<super::pooler::PoolerFlags>,
    /// `--versus-pg-bindir`: a second embedded PostgreSQL from these programs, B to the
    /// first's A in every cell.
    pub versus_pg_bindir: Option<std::path::PathBuf>,
}

/// `run`: its flags as the run's options, then the run.
pub(crate) async fn command(a: crate::cli::RunArgs) -> Result<ExitCode> {
    let flags = RunFlags {
        results_dir: a.results,
        repetitions: a.repetitions,
        quiet: a.quiet,
        no_rerun: a.no_rerun,
        verbose: a.verbose,
        slos: super::parse_slos(&a.slo)?,
        worker_threads: a.worker_threads.map(usize::from),
        restart_command: a.restart_command,
        failover_command: a.failover_command,
        allow_privileged_sql: a.server.privilege.allow_privileged_sql,
        pooler: super::pooler::flags(a.server.pooler)?,
        versus_pg_bindir: a.versus_pg_bindir,
    };
    run(&a.workload, a.server.files.files(), a.db, &a.schema, flags).await
}

pub(crate) async fn run(
    workload_path: &Path,
    files: Files,
    db: Vec<String>,
    schema: &str,
    flags: RunFlags,
) -> Result<ExitCode> {
    let RunFlags {
        results_dir,
        repetitions,
        quiet,
        no_rerun,
        verbose,
        slos: slo_flags,
        worker_threads,
        restart_command,
        failover_command,
        allow_privileged_sql,
        pooler: user_pooler,
        versus_pg_bindir,
    } = flags;
    check_results_dir(&results_dir)?;
    let schema = super::schema_name(schema)?;
    let mut workload = Workload::load_with(workload_path, files)?;
    if let Some(n) = repetitions {
        workload.set_repetitions(n);
    }
    workload.check_runnable()?;
    super::targets::check_embedded_settings(&workload)?;
    if !slo_flags.is_empty() {
        workload.slos = recommend::effective_slos(&workload.slos, &slo_flags);
    }
    let mut targets = resolve_targets(&mut workload, &db)?;
    let lock_url = super::targets::lock_service_url(&workload, &db)?;
    super::pooler::refuse_mix(&workload, &targets)?;
    let user_pooler = match user_pooler {
        Some(f) => Some(super::pooler::locate(f, &mut targets).await?),
        None => None,
    };
    super::pooler::refuse_hold_without_one(&workload, user_pooler.is_some())?;
    refuse_before_starting(
        &workload,
        &targets,
        [restart_command.as_deref(), failover_command.as_deref()],
    )?;
    let versus = match versus_pg_bindir {
        Some(dir) => Some(super::versus::check(&workload, &targets, &dir)?),
        None => None,
    };
    let workload = Arc::new(workload);

    let interrupt: Interrupt = Arc::default();
    stop_on_signals(interrupt.clone());

    let mut servers = OwnServers::default();
    let commands = [restart_command.as_deref(), failover_command.as_deref()];
    let setup = (workload.as_ref(), schema, quiet);
    let (lock, lock_restart) = lock_service(setup, lock_url, &mut servers)?.unzip();
    let mut drive = connect(
        setup,
        targets,
        (user_pooler.as_ref(), lock.as_ref()),
        commands,
        &mut servers,
    )
    .await?;
    drive.restart_locks_with(lock_restart.flatten());
    let versus = match versus {
        Some(dir) => Some(drive.versus(setup, &dir, &mut servers.versus).await?),
        None => None,
    };
    let Drive {
        backends,
        records,
        restarts,
        failovers,
        lock_restarts,
    } = drive;
    let opts = RunOptions {
        results_dir,
        quiet,
        environment: environment(records),
        worker_threads,
        restarts,
        failovers,
        lock_restarts,
        rerun_disturbed: !no_rerun,
        allow_privileged_sql,
        render: runner::Render {
            trial_line: report::tables::trial_line,
        },
        versus,
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
    // The run analysed once, for the screen, the files and the exit code.
    let view = report::view::RunView::of(&outcome.result);
    let screen = match verbose {
        true => report::summary::show(&view),
        false => report::terminal::show(&view),
    };
    out!("{screen}");
    print_report_paths(&view, &outcome.dir)?;
    drop(servers);
    Ok(exit_code(&outcome, &view.analysis, interrupt.stopping()))
}

/// The servers claimbench started for the run, kept alive for it: dropped (stopped and
/// deleted) on every way out of `run`.
#[derive(Default)]
struct OwnServers {
    embedded: Option<Embedded>,
    /// The second PostgreSQL of `--versus-pg-bindir`.
    versus: Option<Embedded>,
    mariadb: Option<EmbeddedMariadb>,
    redis: Option<std::sync::Arc<claimbench::embedded::redis::EmbeddedRedis>>,
    /// The lock service's own, when the workload restarts it.
    lock_redis: Option<std::sync::Arc<claimbench::embedded::redis::EmbeddedRedis>>,
    nats: Option<std::sync::Arc<claimbench::embedded::nats::EmbeddedNats>>,
}

/// Per backend, in the targets' order: what the runner drives, and how.
#[derive(Default)]
struct Drive {
    backends: Vec<AnyBackend>,
    records: Vec<TargetRecord>,
    restarts: Vec<Option<runner::Restart>>,
    failovers: Vec<Option<runner::Failover>>,
    lock_restarts: Vec<Option<runner::Restart>>,
}

/// The workload, the schema it works in, and whether to stay quiet.
type Setup<'a> = (&'a Workload, &'a str, bool);

/// Starts the servers no `--db` names and connects to every target: each backend as
/// the run drives it (through a pooler where there is one), its record for run.json,
/// and how its server restarts or fails over for the workload's faults.
async fn connect(
    (workload, schema, quiet): Setup<'_>,
    targets: Vec<(BackendKind, Option<DbTarget>)>,
    (user_pooler, lock): (
        Option<&super::pooler::UserPooler>,
        Option<&claimbench::backend::lock_service::LockService>,
    ),
    [restart_command, failover_command]: [Option<&str>; 2],
    servers: &mut OwnServers,
) -> Result<Drive> {
    let mut drive = Drive::default();
    for (kind, target) in targets {
        let (target, label) = match target {
            Some(t) => {
                let label = t.to_string();
                (t, label)
            }
            None if kind == BackendKind::Mysql => {
                start_mariadb(workload, schema, quiet, &mut servers.mariadb)?
            }
            None if kind == BackendKind::Redis => start_redis(quiet, &mut servers.redis)?,
            None if kind == BackendKind::Nats => start_nats(quiet, &mut servers.nats)?,
            None => start_embedded(workload, quiet, &mut servers.embedded, None)?,
        };
        let own_cluster = matches!(kind, BackendKind::Postgres) && servers.embedded.is_some();
        let own_mariadb = servers
            .mariadb
            .as_ref()
            .filter(|_| kind == BackendKind::Mysql);
        let backend = backend_for(&target, schema, own_cluster, own_mariadb)?;
        let backend = backend.with_lock_service(lock.filter(|_| takes_leases(kind)).cloned());
        let label = match lock.filter(|_| takes_leases(kind)) {
            Some(l) => with_leases(label, l.display()),
            None => label,
        };
        let own_servers = servers.embedded.as_ref().filter(|_| own_cluster);
        let user = user_pooler.filter(|_| kind == BackendKind::Postgres);
        let own_pooler = own_servers.and_then(|e| e.pooler.as_ref());
        let backend = super::pooler::through(backend, user, own_pooler)?;
        // A server claimbench started restarts itself: the cluster's primary, Redis, NATS.
        let own_restart: Option<claimbench::runner::Restart> = match own_servers {
            Some(e) => {
                let pg = e.pg.clone();
                Some(std::sync::Arc::new(move || {
                    pg.restart().map_err(|e| e.to_string())
                }))
            }
            None => servers
                .redis
                .clone()
                .filter(|_| kind == BackendKind::Redis)
                .map(|r| -> claimbench::runner::Restart {
                    std::sync::Arc::new(move || r.restart().map_err(|e| e.to_string()))
                })
                .or_else(|| {
                    let n = servers.nats.clone().filter(|_| kind == BackendKind::Nats)?;
                    Some(std::sync::Arc::new(move || {
                        n.restart().map_err(|e| e.to_string())
                    }))
                }),
        };
        drive.restarts.push(restart_action(
            workload,
            own_restart,
            &target,
            restart_command,
        )?);
        drive.failovers.push(failover_action(
            workload,
            own_servers,
            (kind, &target),
            failover_command,
        )?);
        let own_broker = match kind {
            BackendKind::Redis => servers.redis.is_some(),
            BackendKind::Nats => servers.nats.is_some(),
            _ => false,
        };
        let started_here = own_cluster || own_mariadb.is_some() || own_broker;
        let mut record = record_target(&backend, label, started_here, workload).await?;
        if let Some(p) = user {
            // Read before any trial: a console that contradicts --pool-mode stops here.
            record.their_pooler = Some(claimbench::pooler::TheirPooler {
                address: p.addr.to_string(),
                mode: p.mode,
                pool_size: backend.size_pool(None).await?,
            });
        }
        drive.records.push(record);
        drive.backends.push(backend);
    }
    Ok(drive)
}

/// Whether `kind`'s workers take `lock-service` leases (the engines with its form).
fn takes_leases(kind: BackendKind) -> bool {
    matches!(kind, BackendKind::Postgres | BackendKind::Mysql)
}

/// A target's label that says where its `lock-service` leases are: inside the
/// embedded server's parentheses, or in its own after a URL.
fn with_leases(label: String, leases: &str) -> String {
    match label.strip_suffix(')') {
        Some(open) => format!("{open}, lock-service leases in {leases})"),
        None => format!("{label} (lock-service leases in {leases})"),
    }
}

/// The Redis a workload's `lock-service` claims take their leases in: `--db redis://…`,
/// or the embedded Redis (started here, shared with a redis backend of the run).
/// A workload that restarts its lock service (`faults.restart_lock_service_at_s`) gets
/// one of its own that keeps nothing on disk, so the restart forgets every lease; a
/// `--db redis://` that was to be the lock service is then refused (claimbench restarts
/// only what it starts).
fn lock_service(
    (workload, schema, quiet): Setup<'_>,
    url: Option<DbTarget>,
    servers: &mut OwnServers,
) -> Result<Option<(LockService, Option<runner::Restart>)>> {
    if !workload.uses_lock_service() {
        return Ok(None);
    }
    let restarts = !workload.faults.restart_lock_service_at.is_empty();
    let (target, restart) = match (url, restarts) {
        (Some(t), true) if !workload.backends.contains(&BackendKind::Redis) => {
            anyhow::bail!(
                "{}: faults.restart_lock_service_at_s: claimbench restarts only the lock service it starts, not {t}; drop that --db (the run then starts its own)",
                workload.source_path.display()
            )
        }
        (Some(t), false) => (t, None),
        (_, true) => {
            let started = claimbench::embedded::redis::EmbeddedRedis::start_volatile()
                .context("cannot start the lock service's Redis")?;
            if !quiet {
                errln!(
                    "embedded Redis for the lock service's leases on {} (keeps nothing on disk, so a restart forgets every lease; removed on exit)",
                    started.url()
                );
            }
            let target = DbTarget::parse(&started.url())?;
            let started = Arc::new(started);
            servers.lock_redis = Some(started.clone());
            let restart: runner::Restart =
                Arc::new(move || started.restart().map_err(|e| e.to_string()));
            (target, Some(restart))
        }
        (None, false) => (start_redis(quiet, &mut servers.redis)?.0, None),
    };
    let DbTarget::Redis(redis) = target else {
        anyhow::bail!("the lock service is a Redis server; give --db redis://…");
    };
    Ok(Some((LockService::new(redis, schema), restart)))
}

impl Drive {
    /// The lock service's restart is the SQL targets', whose workers take leases.
    fn restart_locks_with(&mut self, restart: Option<runner::Restart>) {
        self.lock_restarts = self
            .records
            .iter()
            .map(|r| restart.clone().filter(|_| takes_leases(r.backend)))
            .collect();
    }

    /// `--versus-pg-bindir`: the second embedded PostgreSQL, from `dir`'s programs, as
    /// the last backend; returns both servers' names for the cells.
    async fn versus(
        &mut self,
        (workload, schema, quiet): Setup<'_>,
        dir: &Path,
        server: &mut Option<Embedded>,
    ) -> Result<[String; 2]> {
        let (target, label) = start_embedded(workload, quiet, server, Some(dir))?;
        let backend = backend_for(&target, schema, true, None)?;
        self.records
            .push(record_target(&backend, label, true, workload).await?);
        self.backends.push(backend);
        self.restarts.push(None);
        self.failovers.push(None);
        Ok(super::versus::labels(&self.records))
    }
}

/// 130 after an interrupt, 1 for a failed correctness check, 3 for a failed gate, 4 for
/// a paired block's B regressed against A, else success (`cli::EXIT_CODES`).
fn exit_code(outcome: &runner::RunOutcome, a: &RunAnalysis, interrupted: bool) -> ExitCode {
    let failed_gates = a.failed_gates();
    if interrupted {
        ExitCode::from(130)
    } else if outcome.failed_checks {
        errln!("a correctness check failed: see Warnings in the summary");
        ExitCode::from(1)
    } else if failed_gates > 0 {
        errln!("{failed_gates} gate checks failed: see Gates in the summary");
        ExitCode::from(3)
    } else if let regressed @ 1.. = a.paired.regressions().count() {
        errln!(
            "B regressed against A in {regressed} paired figures: see Paired A/B in the summary"
        );
        ExitCode::from(4)
    } else {
        ExitCode::SUCCESS
    }
}

/// The backend on `target`: on the PostgreSQL claimbench started, trials reset from a
/// pristine copy and workload SQL runs as a role without host rights; on the MariaDB it
/// started, workers use the workload account (the target), a block's durability goes
/// through `root`, and beside its Galera cluster the standalone placement runs on the
/// plain server.
fn backend_for(
    target: &DbTarget,
    schema: &str,
    own_postgres: bool,
    own_mariadb: Option<&EmbeddedMariadb>,
) -> Result<AnyBackend> {
    let backend = AnyBackend::new(target, target.to_string(), schema);
    let backend = match own_postgres {
        true => backend.with_pristine_copies().with_workload_role(),
        false => backend,
    };
    let Some(servers) = own_mariadb else {
        return Ok(backend);
    };
    let backend = backend.with_admin(&DbTarget::parse(&servers.admin_url())?);
    Ok(match servers.standalone_url() {
        Some(url) => backend.with_standalone(&DbTarget::parse(&url)?),
        None => backend,
    })
}

/// `--results` must be a folder claimbench can write in (or one it can create), checked
/// before anything else: a file there, or a folder it may not write, used to fail only
/// after the first trial had run, without naming the flag. Nothing is left behind.
fn check_results_dir(dir: &Path) -> Result<()> {
    let shown = dir.display();
    let mut existing = dir;
    while !existing.exists() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p,
            _ => {
                existing = Path::new(".");
                break;
            }
        }
    }
    if !existing.is_dir() {
        anyhow::bail!(
            "--results {shown}: {} is not a directory; give a folder to hold the run folders",
            existing.display()
        );
    }
    tempfile::tempfile_in(existing).map(drop).map_err(|e| {
        anyhow::anyhow!(
            "--results {shown}: cannot write in {}: {e}",
            existing.display()
        )
    })
}

/// What the workload asks of the servers that their kind rules out, refused before any
/// server starts: a block's durability changes a server's own settings, which claimbench
/// does only on the one it starts; a failover on the embedded default needs a standby.
fn refuse_before_starting(
    workload: &Workload,
    targets: &[(BackendKind, Option<DbTarget>)],
    [restart_command, failover_command]: [Option<&str>; 2],
) -> Result<()> {
    let given = |c: Option<&str>| c.is_some_and(|c| !c.trim().is_empty());
    // The faults' actions, as restart_action and failover_action will settle them once
    // the servers are up: what they would refuse is refused now.
    for (kind, t) in targets {
        // claimbench restarts the PostgreSQL, the Redis and the NATS it starts itself.
        let restarts_itself = t.is_none()
            && matches!(
                kind,
                BackendKind::Postgres | BackendKind::Redis | BackendKind::Nats
            );
        if !workload.faults.restart_at.is_empty() && !restarts_itself && !given(restart_command) {
            let label = t
                .as_ref()
                .map_or_else(|| format!("the embedded {kind}"), |t| t.to_string());
            return Err(super::targets::no_restart_command(workload, &label));
        }
        if !workload.faults.failover_at.is_empty() {
            if *kind != BackendKind::Postgres {
                return Err(super::targets::no_failover(workload, *kind, None));
            }
            if let Some(t) = t.as_ref().filter(|_| !given(failover_command)) {
                return Err(super::targets::no_failover(
                    workload,
                    *kind,
                    Some(&t.to_string()),
                ));
            }
        }
    }
    if workload
        .matrices
        .iter()
        .any(|m| m.phase.durability.is_some())
        && targets.iter().any(|(_, t)| t.is_some())
    {
        anyhow::bail!(
            "{}: matrix.durability changes the server's own settings: claimbench does that only on the embedded servers it starts, never with --db",
            workload.source_path.display()
        );
    }
    if workload
        .matrices
        .iter()
        .any(|m| m.phase.durability.is_some())
        && workload.topology.kind == TopologyKind::Galera
    {
        anyhow::bail!(
            "{}: matrix.durability changes one server's settings, and a Galera cluster's durability is its nodes' certification as much as their flushes; run the durability blocks without [topology] kind = \"galera\"",
            workload.source_path.display()
        );
    }
    let placed = workload
        .matrices
        .iter()
        .any(|m| m.phase.placement.is_some());
    let one_node = targets.iter().find(|(kind, t)| match t {
        Some(DbTarget::MysqlCluster(_)) => false,
        None => !(*kind == BackendKind::Mysql && workload.topology.kind == TopologyKind::Galera),
        Some(_) => true,
    });
    if let (true, Some((kind, _))) = (placed, one_node) {
        anyhow::bail!(
            "{}: matrix.placement places workers over a cluster's nodes, and the {kind} target is one server; give --db with every node of a Galera cluster (mysql://user@h1:3306,h2:3306,h3:3306/db) or [topology] kind = \"galera\"",
            workload.source_path.display()
        );
    }
    if !workload.faults.failover_at.is_empty()
        && workload.topology.kind != TopologyKind::PrimaryStandby
        && targets.iter().any(|(_, t)| t.is_none())
    {
        anyhow::bail!(
            "{}: faults.failover_at_s needs a standby to promote: add [topology] kind = \"primary-standby\" (or give --db with --failover-command for your cluster)",
            workload.source_path.display()
        );
    }
    Ok(())
}

/// A target as run.json records it, read before any trial: the server's version and
/// settings, the standbys it streams to (on the embedded topology, once the standby
/// streams as asked), and a refusal of a `--schema` claimbench did not create.
async fn record_target(
    backend: &AnyBackend,
    label: String,
    own_cluster: bool,
    workload: &Workload,
) -> Result<TargetRecord> {
    match workload.topology.kind {
        TopologyKind::PrimaryStandby if own_cluster => {
            runner::wait_for_standby(backend, workload.topology.synchronous).await?;
        }
        TopologyKind::Galera if own_cluster => {
            runner::wait_for_cluster(backend, workload.topology.nodes as usize).await?;
        }
        _ => {}
    }
    let server = backend.server_info().await?;
    let standbys = backend.standbys().await?;
    let cluster = cluster_record(backend, workload).await?;
    backend.check_schema().await?;
    let kind = backend.kind();
    Ok(TargetRecord {
        backend: kind,
        target: label,
        embedded: own_cluster,
        server,
        session_settings: claimbench::session_settings::for_backend(
            &workload.session_settings,
            kind,
        ),
        standbys,
        cluster,
        pooler: workload.topology.pooler.filter(|_| own_cluster),
        their_pooler: None,
    })
}

/// A target with several hosts, checked to be one Galera cluster and recorded; `None`
/// for a single server.
async fn cluster_record(
    backend: &AnyBackend,
    workload: &Workload,
) -> Result<Option<claimbench::results::ClusterRecord>> {
    let readings = backend.cluster_readings(true).await?;
    if readings.is_empty() {
        return Ok(None);
    }
    if workload.faults.kills_connections() {
        anyhow::bail!(
            "{}: faults.kill_connections_at_s {}",
            workload.source_path.display(),
            claimbench::workload::KILLS_ON_A_CLUSTER
        );
    }
    let record = claimbench::backend::cluster::record(&readings)
        .map_err(|e| anyhow::anyhow!("{}: {e}", backend.instance().display))?;
    Ok(Some(record))
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
            interrupt.interrupt("Ctrl-C");
            return;
        };
        let which = tokio::select! {
            _ = tokio::signal::ctrl_c() => "Ctrl-C",
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
        };
        errln!("\ninterrupted by {which}: stopping the current trial and writing partial results");
        interrupt.interrupt(which);
    });
}

/// Renders every report file next to run.json and says where they are.
pub(crate) fn print_report_paths(view: &RunView, dir: &Path) -> Result<()> {
    let files = report::render_view(view, dir)?;
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
