//! Which servers a run talks to: the `--db` URLs matched to the workload's backends, the
//! embedded cluster when PostgreSQL has none, the checks that every strategy and layout
//! exists on each, how each server restarts for a fault, and the environment recorded
//! for comparing runs.

use anyhow::{Context, Result, bail};
use claimbench::backend::any::AnyBackend;
use claimbench::backend::{BackendKind, DbTarget};
use claimbench::embedded::mariadb::EmbeddedMariadb;
use claimbench::embedded::{EmbeddedError, EmbeddedPostgres};
use claimbench::resources::host_facts;
use claimbench::results::{Environment, TargetRecord};
use claimbench::runner::{Failover, Restart};
use claimbench::strategy;
use claimbench::workload::{TopologyKind, Workload};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which database each of the run's backends uses: a `--db` URL, or (for postgres
/// only) `None`, the embedded cluster. Fills in the workload's backends when it left
/// them to `--db`, and checks that every index layout exists on every backend.
pub(crate) fn resolve_targets(
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
    let kinds: Vec<BackendKind> = given.iter().map(DbTarget::kind).collect();
    for name in workload.drop_blocks_without_db(&kinds) {
        errln!(
            "{path}: block `{name}` left out: it runs only when --db names its server (if_db_given)"
        );
    }
    if workload.matrices.is_empty() {
        bail!("{path}: every block waits for a --db (if_db_given); give one");
    }
    // A redis:// URL beside a lock-service claim names the lock service; it is a
    // backend only where the matrix lists redis.
    let lock_service = workload.uses_lock_service();
    let leases_only = |t: &DbTarget| {
        lock_service && t.kind() == BackendKind::Redis && !workload.backends.contains(&t.kind())
    };
    if workload.backends.is_empty() {
        let kinds: Vec<BackendKind> = given
            .iter()
            .filter(|t| !leases_only(t))
            .map(DbTarget::kind)
            .collect();
        workload.backends = match kinds.is_empty() {
            true => vec![BackendKind::Postgres],
            false => kinds,
        };
    } else if let Some(extra) = given
        .iter()
        .find(|t| !workload.backends.contains(&t.kind()) && !leases_only(t))
    {
        bail!(
            "--db gives a {} URL but {path}'s matrix.backends lists only {}; add {} there or drop that --db",
            extra.kind(),
            super::comma_list(&workload.backends),
            extra.kind()
        );
    }
    workload.check_brokers()?;
    if let Some(why) =
        claimbench::workload::topology_misfit(workload.topology.kind, &workload.backends)
    {
        bail!("{path}: topology.kind: {why}");
    }
    if let Some((kind, name)) = workload.topology.kind.backend()
        && let Some(t) = given.iter().find(|t| t.kind() == kind)
    {
        bail!(
            "{path}: topology.kind: a `{name}` topology is one claimbench starts; drop --db {t}, or drop [topology] to run on that server as it is"
        );
    }
    let mut out = Vec::new();
    for &kind in &workload.backends {
        let target = given.iter().find(|t| t.kind() == kind).cloned();
        let galera = kind == BackendKind::Mysql && workload.topology.kind == TopologyKind::Galera;
        if target.is_none() && !kind.engine().embedded && !galera {
            let (example, scheme) = (kind.engine().example_url, kind.engine().url_schemes[0]);
            bail!(
                "{path}: matrix.backends lists {kind} but no --db {scheme}:// URL was given (claimbench starts no {kind} server), e.g. --db {example}"
            );
        }
        check_layouts(workload, &[kind])?;
        out.push((kind, target));
    }
    Ok(out)
}

/// The lock service of a workload's `lock-service` claims: the `--db redis://` URL
/// when one is given, else `None` (the run starts its own Redis); never asked for a
/// workload without such a claim.
pub(crate) fn lock_service_url(workload: &Workload, urls: &[String]) -> Result<Option<DbTarget>> {
    if !workload.uses_lock_service() {
        return Ok(None);
    }
    for url in urls {
        let t = DbTarget::parse(url)?;
        if t.kind() == BackendKind::Redis {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

/// Every index layout and strategy of the workload must exist on each of `kinds`.
/// An embedded server's refusal: a setting's names the workload's file and field.
fn embedded_refusal(workload: &Workload, e: EmbeddedError) -> anyhow::Error {
    match e {
        EmbeddedError::Setting { name, message } => anyhow::anyhow!(
            "{}: embedded.settings.{name}: {message}",
            workload.source_path.display()
        ),
        e => anyhow::Error::new(e).context("cannot start the embedded PostgreSQL"),
    }
}

/// `[embedded.settings]` against the list of the PostgreSQL the embedded server would
/// start from, before anything starts (`validate` and `run`, with or without --db):
/// a value of the wrong type is refused naming its field.
pub(crate) fn check_embedded_settings(workload: &Workload) -> Result<()> {
    claimbench::embedded::check_settings(&workload.embedded_settings)
        .map_err(|e| embedded_refusal(workload, e))
}

pub(crate) fn check_layouts(workload: &Workload, kinds: &[BackendKind]) -> Result<()> {
    for &kind in kinds {
        // Settings written for PostgreSQL only, in any block that runs on `kind`.
        let phases: Vec<Workload> = (0..workload.matrices.len())
            .filter(|&i| workload.matrices[i].runs_on(kind))
            .map(|i| workload.phase(i))
            .collect();
        // A storage model other than the archive move, where `kind` lacks it.
        use claimbench::workload::Storage;
        let has = |s: Storage| match kind {
            BackendKind::Postgres => true,
            BackendKind::Mysql => s.runs_on_mysql(),
            _ => s == Storage::ArchiveMove,
        };
        if let Some(s) = phases.iter().map(|p| p.storage).find(|s| !has(*s)) {
            let on = match s.runs_on_mysql() {
                true => "PostgreSQL, MySQL and MariaDB",
                false => "PostgreSQL",
            };
            bail!(
                "{}: storage = \"{}\" on {kind}: written for {on} only for now",
                workload.source_path.display(),
                s.name()
            );
        }
        let postgres_only = [
            (
                "population.history",
                phases.iter().any(|p| p.population.history.rows() > 0),
            ),
            (
                "population.history.archived",
                phases.iter().any(|p| p.population.history.archived > 0),
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
        if workload.cleanup.is_some() && kind == BackendKind::Mssql {
            bail!(
                "{}: [cleanup] on {kind}: written for PostgreSQL, MySQL and MariaDB only for now",
                workload.source_path.display()
            );
        }
        for (i, q) in workload.population.queues.iter().enumerate() {
            claimbench::workload::queue_name_fits(kind, &q.name).map_err(|why| {
                anyhow::anyhow!(
                    "{}: population.queues[{i}].name on {kind}: {why}",
                    workload.source_path.display()
                )
            })?;
        }
        // Each block on the backends it runs on: a SQL block beside a broker's is
        // checked on its own engines only.
        let on_kind = workload.matrices.iter().filter(|m| m.runs_on(kind));
        for m in on_kind.clone() {
            for s in &m.strategies {
                if let strategy::Form::Absent(why) = s.form(kind) {
                    bail!(
                        "{}: matrix.strategies: `{s}` on {kind}: {why}",
                        workload.source_path.display()
                    );
                }
            }
        }
        let mut layouts: Vec<&String> = on_kind.flat_map(|m| &m.index_layouts).collect();
        layouts.dedup();
        for layout in layouts {
            AnyBackend::layout_check(kind, layout, workload).map_err(|why| {
                anyhow::anyhow!(
                    "{}: matrix.index_layouts: `{layout}` on {kind}: {why}",
                    workload.source_path.display()
                )
            })?;
        }
    }
    Ok(())
}

/// This host, this build, and the servers of the run (the first one also at the top
/// level, where runs from before several backends read it).
pub(crate) fn environment(records: Vec<TargetRecord>) -> Environment {
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

/// How to restart a backend's server for `faults.restart_db_at_s`: a server claimbench
/// started restarts itself (`own`: the embedded PostgreSQL, or the embedded Redis); a
/// `--db` server only through `--restart-command`, which comes from the person running
/// claimbench, never from the workload file.
pub(crate) fn restart_action(
    w: &Workload,
    own: Option<Restart>,
    target: &DbTarget,
    command: Option<&str>,
) -> Result<Option<Restart>> {
    if w.faults.restart_at.is_empty() {
        return Ok(None);
    }
    if let Some(own) = own {
        return Ok(Some(own));
    }
    let Some(cmd) = command.filter(|c| !c.trim().is_empty()) else {
        return Err(no_restart_command(w, &target.to_string()));
    };
    let cmd = cmd.to_string();
    Ok(Some(Arc::new(move || run_shell(&cmd, "--restart-command"))))
}

/// Why a restart fault cannot run on `target` without `--restart-command`.
pub(crate) fn no_restart_command(w: &Workload, target: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: faults.restart_db_at_s: claimbench restarts only the server it started, not {target}; give --restart-command CMD (e.g. 'docker restart pg'), or CLAIMBENCH_RESTART_COMMAND",
        w.source_path.display()
    )
}

/// Why a failover fault cannot run on a `kind` target, or on `target` (a `--db`) without
/// `--failover-command`.
pub(crate) fn no_failover(w: &Workload, kind: BackendKind, target: Option<&str>) -> anyhow::Error {
    let file = w.source_path.display();
    match (kind, target) {
        (BackendKind::Postgres, Some(target)) => anyhow::anyhow!(
            "{file}: faults.failover_at_s: claimbench never promotes or stops a node of a cluster it did not start ({target}); give --failover-command CMD (e.g. 'patronictl failover --force'), or CLAIMBENCH_FAILOVER_COMMAND"
        ),
        _ => anyhow::anyhow!(
            "{file}: faults.failover_at_s: a failover is PostgreSQL's here (a primary and its standbys); {kind} has none to move"
        ),
    }
}

/// How to fail a backend's primary over for `faults.failover_at_s`: the embedded
/// topology fails over itself (and makes the pair again between trials); a `--db`
/// PostgreSQL cluster only through `--failover-command`, which comes from the person
/// running claimbench, never from the workload file.
pub(crate) fn failover_action(
    w: &Workload,
    own: Option<&Embedded>,
    (kind, target): (BackendKind, &DbTarget),
    command: Option<&str>,
) -> Result<Option<Failover>> {
    if w.faults.failover_at.is_empty() {
        return Ok(None);
    }
    let file = w.source_path.display();
    if kind != BackendKind::Postgres {
        return Err(no_failover(w, kind, None));
    }
    if let Some(Embedded {
        pg, standby_link, ..
    }) = own
    {
        if w.topology.kind != TopologyKind::PrimaryStandby {
            bail!(
                "{file}: faults.failover_at_s needs a standby to promote: add [topology] kind = \"primary-standby\" (or give --db with --failover-command for your cluster)"
            );
        }
        let (down, again, link) = (pg.clone(), pg.clone(), standby_link.clone());
        return Ok(Some(Failover {
            // The primary's zone goes dark: its link first, so that what the standby had
            // not received by then never arrives, then the server itself.
            fail_over: Arc::new(move || {
                if let Some(l) = &link {
                    l.cut();
                }
                down.failover().map_err(|e| e.to_string())
            }),
            rebuild: Some((
                Arc::new(move || again.rebuild_after_failover().map_err(|e| e.to_string())),
                w.topology.synchronous,
            )),
        }));
    }
    let Some(cmd) = command.filter(|c| !c.trim().is_empty()) else {
        return Err(no_failover(w, kind, Some(&target.to_string())));
    };
    let cmd = cmd.to_string();
    Ok(Some(Failover {
        fail_over: Arc::new(move || run_shell(&cmd, "--failover-command")),
        rebuild: None,
    }))
}

/// `sh -c cmd`, which must succeed; its stderr in the error. The command itself is not
/// echoed: it may carry a credential, and errors reach run.json.
fn run_shell(cmd: &str, flag: &str) -> std::result::Result<(), String> {
    let out = std::process::Command::new("sh")
        .args(["-c", cmd])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run the {flag} with sh: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "the {flag} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The throw-away servers of a run, kept alive until it ends: the cluster (with its
/// standby) and the delaying proxy on the standby's link, if any.
pub(crate) struct Embedded {
    /// Dropped first: the pooler goes before the server it pools.
    pub pooler: Option<claimbench::embedded::pgbouncer::EmbeddedPgBouncer>,
    pub pg: Arc<EmbeddedPostgres>,
    /// Dropped after the cluster (fields drop in order): the standby never loses its
    /// link while it runs. A failover cuts it (a zone going dark).
    pub standby_link: Option<Arc<claimbench::netdelay::DelayProxy>>,
}

/// Starts the throw-away cluster into `embedded` (which keeps it alive for the run) and
/// returns its target and the label results record for it.
pub(crate) fn start_embedded(
    workload: &Workload,
    quiet: bool,
    embedded: &mut Option<Embedded>,
    bindir: Option<&std::path::Path>,
) -> Result<(DbTarget, String)> {
    if !quiet {
        errln!("starting the embedded PostgreSQL (pass --db URL to use an existing server)");
    }
    let mut settings = workload.embedded_settings.clone();
    if !workload.faults.restart_at.is_empty() || !workload.faults.failover_at.is_empty() {
        // The default's synchronous_commit = off acknowledges a commit before its WAL is
        // written: a restart in immediate mode (a crash) forgets the last 200 ms of
        // claims and completions the workers were told had committed, and the ledger
        // rightly reports duplicates that are the setting's, not the claim's. A workload
        // that sets it off itself keeps it off.
        settings
            .entry("synchronous_commit".to_string())
            .or_insert_with(|| "on".to_string());
    }
    let topology = workload.topology;
    let started = match topology.kind {
        TopologyKind::PrimaryStandby => EmbeddedPostgres::start_primary(&settings),
        // A Galera topology is mysql's: PostgreSQL beside it runs on one server.
        TopologyKind::Single | TopologyKind::Galera => {
            EmbeddedPostgres::start_from(&settings, bindir)
        }
    };
    let mut pg = started.map_err(|e| embedded_refusal(workload, e))?;
    if !quiet {
        errln!(
            "embedded PostgreSQL on port {} in {} (removed on exit)",
            pg.port(),
            pg.path().display()
        );
    }
    let mut label_suffix = String::new();
    let mut standby_link = None;
    if topology.kind == TopologyKind::PrimaryStandby {
        let delay = topology.standby_network;
        if !delay.rtt.is_zero() {
            let primary = std::net::SocketAddr::from(([127, 0, 0, 1], pg.port()));
            let proxy = claimbench::netdelay::DelayProxy::start(primary, delay)
                .context("cannot start the standby link's delaying proxy")?;
            standby_link = Some(Arc::new(proxy));
        }
        let link = standby_link.as_ref().map(|p| p.port());
        let port = pg
            .attach_standby(topology.synchronous, link)
            .context("cannot start the embedded standby")?;
        let sync = if topology.synchronous {
            "synchronous"
        } else {
            "asynchronous"
        };
        if !quiet {
            let dir = pg.standby_path().map(|p| p.display().to_string());
            errln!(
                "{sync} streaming standby on port {port} in {} (removed on exit)",
                dir.unwrap_or_default()
            );
        }
        label_suffix = format!(", {sync} standby on port {port}");
        if link.is_some() {
            let rtt = claimbench::netdelay::label(&delay);
            if !quiet {
                errln!(
                    "the standby reaches the primary through a proxy that adds {rtt} per round trip"
                );
            }
            label_suffix.push_str(&format!(" over a {rtt} link"));
        }
    }
    let pooler = match topology.pooler {
        Some(p) => {
            let started =
                claimbench::embedded::pgbouncer::EmbeddedPgBouncer::start(pg.port(), pg.owner(), p)
                    .context("cannot start the pooler")?;
            if !quiet {
                errln!(
                    "PgBouncer ({} mode, {} server connections) on port {} in {} (removed on exit); the workers connect through it, every other connection directly",
                    p.mode,
                    p.pool_size,
                    started.port(),
                    started
                        .path()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default()
                );
            }
            label_suffix.push_str(&format!(
                ", workers through PgBouncer in {} mode with {} server connections",
                p.mode, p.pool_size
            ));
            Some(started)
        }
        None => None,
    };
    // With a standby: both servers as one read-write target, so a connection reopened
    // after the primary is gone finds whichever node takes writes.
    let t = DbTarget::parse(&pg.writable_url())?;
    // The proxy after the cluster: a standby that outlived its link would only retry.
    let pg = Arc::new(pg);
    *embedded = Some(Embedded {
        pooler,
        pg,
        standby_link,
    });
    let label = format!("embedded PostgreSQL ({t}{label_suffix})");
    Ok((t, label))
}

/// Starts the MariaDB a run on `mysql` gets without `--db`: one server, or the Galera
/// cluster `[topology]` asks for (with a plain server beside it when a block places
/// workers there).
pub(crate) fn start_mariadb(
    workload: &Workload,
    schema: &str,
    quiet: bool,
    servers: &mut Option<EmbeddedMariadb>,
) -> Result<(DbTarget, String)> {
    let galera = workload.topology.kind == TopologyKind::Galera;
    let n = if galera {
        workload.topology.nodes as usize
    } else {
        0
    };
    let standalone = !galera
        || workload
            .matrices
            .iter()
            .any(|m| m.phase.placement == Some(claimbench::workload::Placement::Standalone));
    let beside = if galera && standalone {
        " and a standalone MariaDB beside it"
    } else {
        ""
    };
    if !quiet {
        match galera {
            true => errln!(
                "starting a {n}-node MariaDB Galera cluster{beside} (each node joins in turn)"
            ),
            false => errln!(
                "starting the embedded MariaDB (pass --db mysql://… to use an existing server)"
            ),
        }
    }
    let t0 = std::time::Instant::now();
    let started = EmbeddedMariadb::start(n, standalone, schema).with_context(|| match galera {
        true => "cannot start the embedded Galera cluster",
        false => "cannot start the embedded MariaDB",
    })?;
    if !quiet {
        let ports = started
            .ports()
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let secs = t0.elapsed().as_secs_f64();
        match galera {
            true => errln!(
                "Galera cluster of {n} nodes{beside} on ports {ports} in {secs:.1} s (removed on exit)"
            ),
            false => errln!(
                "embedded MariaDB on port {ports} in {} (started in {secs:.1} s, removed on exit)",
                started.paths()[0].display()
            ),
        }
    }
    let t = DbTarget::parse(&started.url())?;
    let label = match (galera, started.standalone_url()) {
        (false, _) => format!("embedded MariaDB ({t})"),
        (true, Some(url)) => format!(
            "embedded Galera cluster ({t}), standalone MariaDB beside it ({})",
            DbTarget::parse(&url)?
        ),
        (true, None) => format!("embedded Galera cluster ({t})"),
    };
    *servers = Some(started);
    Ok((t, label))
}

/// Starts the Redis a run on `redis` (or a lock service) gets without `--db`: one per
/// run, shared when both ask.
pub(crate) fn start_redis(
    quiet: bool,
    server: &mut Option<Arc<claimbench::embedded::redis::EmbeddedRedis>>,
) -> Result<(DbTarget, String)> {
    use claimbench::embedded::redis::EmbeddedRedis;
    if let Some(started) = server.as_ref() {
        let t = DbTarget::parse(&started.url())?;
        let label = format!("embedded Redis ({t})");
        return Ok((t, label));
    }
    let at = |s: &EmbeddedRedis| (s.url(), s.path().map(Path::to_path_buf));
    let (started, t, label) = start_broker(quiet, ("Redis", "redis"), EmbeddedRedis::start, at)?;
    *server = Some(Arc::new(started));
    Ok((t, label))
}

/// Starts the NATS server a run on `nats` gets without `--db`: one per run.
pub(crate) fn start_nats(
    quiet: bool,
    server: &mut Option<Arc<claimbench::embedded::nats::EmbeddedNats>>,
) -> Result<(DbTarget, String)> {
    use claimbench::embedded::nats::EmbeddedNats;
    let at = |s: &EmbeddedNats| (s.url(), s.path().map(Path::to_path_buf));
    let (started, t, label) = start_broker(quiet, ("NATS", "nats"), EmbeddedNats::start, at)?;
    *server = Some(Arc::new(started));
    Ok((t, label))
}

/// Starts one of the embedded brokers (`name`, whose URLs are `scheme://`), saying so
/// unless `quiet`: where it runs and how long it took. Returns it, its target and the
/// label the run records.
fn start_broker<S>(
    quiet: bool,
    (name, scheme): (&str, &str),
    start: impl FnOnce() -> Result<S, claimbench::embedded::EmbeddedError>,
    at: impl Fn(&S) -> (String, Option<PathBuf>),
) -> Result<(S, DbTarget, String)> {
    if !quiet {
        errln!("starting the embedded {name} (pass --db {scheme}://… to use an existing server)");
    }
    let t0 = std::time::Instant::now();
    let started = start().with_context(|| format!("cannot start the embedded {name}"))?;
    let (url, dir) = at(&started);
    if !quiet {
        errln!(
            "embedded {name} on {url} in {} (started in {:.1} s, removed on exit)",
            dir.map(|p| p.display().to_string()).unwrap_or_default(),
            t0.elapsed().as_secs_f64()
        );
    }
    let t = DbTarget::parse(&url)?;
    let label = format!("embedded {name} ({t})");
    Ok((started, t, label))
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
