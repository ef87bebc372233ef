//! The trial's connections and tasks: opening each role's session (workers on their own
//! threads), and spawning the workers, the background tasks and the fault injectors.

use super::*;
use crate::runner::checkpoint::{CHECKPOINT_FROM_S, Checkpoint};
use crate::runner::worker::Progress;

/// A worker connection with the workload's session settings for its backend.
/// To the node and through the network `to` says.
pub(super) async fn open_worker<B: Backend>(
    backend: &B,
    (role, id, queue): (&str, &str, &str),
    settings: &[(String, String)],
    to: Endpoint,
) -> Result<B::Session, crate::backend::BackendError> {
    let mut s = backend.connect_to(role, id, to).await?;
    s.serve_queue(queue);
    if !settings.is_empty() {
        s.apply(settings).await?;
    }
    Ok(s)
}

/// Opens the workers' connections on their own threads (so a driver task a connection
/// spawns, as tokio-postgres's does, runs beside its worker), the rest here.
pub(super) async fn open_sessions<B: Backend>(
    backend: &Arc<B>,
    w: &Workload,
    spec: &TrialSpec<'_>,
    threads: &WorkerThreads,
    routes: Routes,
) -> Result<Sessions<B::Session>, RunError> {
    let role = Arc::new(backend.worker_role());
    let settings = Arc::new(crate::session_settings::for_backend(
        &w.session_settings,
        backend.kind(),
    ));
    let n = spec.workers as usize;
    let connecting: Vec<_> = (0..n)
        .map(|i| {
            let (backend, role, settings) = (backend.clone(), role.clone(), settings.clone());
            let queue = w.population.worker_queue(i).to_string();
            threads.spawn(i, n, async move {
                let to = routes.worker(i);
                let id = crate::runner::shards::worker_id(i);
                open_worker(backend.as_ref(), (&role, &id, &queue), &settings, to).await
            })
        })
        .collect();
    let mut workers = Vec::with_capacity(n);
    for c in connecting {
        workers.push(c.await.map_err(spawn_err)??);
    }
    let backend = backend.as_ref();
    let one = async |wanted: bool, role: &str| -> Result<Option<B::Session>, RunError> {
        Ok(match wanted {
            true => Some(
                backend
                    .connect(role, role.trim_start_matches("claimbench-"))
                    .await?,
            ),
            false => None,
        })
    };
    // The plan sample runs the workers' claim, so under the workers' session settings.
    let planner_role = format!("claimbench-{}", crate::runner::shards::PLANNER);
    let mut planner = one(w.trial.sample_interval.is_some(), &planner_role).await?;
    if let Some(p) = planner.as_mut() {
        // Worker 0's claim: its queue too.
        p.serve_queue(w.population.worker_queue(0));
        if !settings.is_empty() {
            p.apply(&settings).await?;
        }
    }
    Ok(Sessions {
        workers,
        sampler: one(w.trial.sample_interval.is_some(), "claimbench-sampler").await?,
        producer: one(
            super::super::schedule::Schedule::of(w).is_some(),
            "claimbench-producer",
        )
        .await?,
        rescuer: one(w.faults.lease.is_some(), "claimbench-rescuer").await?,
        cleaner: one(w.cleanup.is_some(), "claimbench-cleaner").await?,
        killer: one(w.faults.kills_connections(), "claimbench-killer").await?,
        // Evidence, like the sampler's: none in a trial that runs without one.
        planner,
        holder: one(w.faults.hold_snapshot.is_some(), "claimbench-holder").await?,
        pool_holders: {
            let n = w.faults.hold_pool.map_or(0, |h| h.connections);
            let mut held = Vec::with_capacity(n as usize);
            for i in 0..n {
                held.push(backend.connect(&role, &format!("pool-holder-{i}")).await?);
            }
            held
        },
    })
}

/// The sessions the fault injectors run on.
pub(super) struct FaultSessions<S> {
    pub killer: Option<S>,
    pub holder: Option<S>,
    pub pool_holders: Vec<S>,
}

/// The tasks that inject the workload's faults at their instants: the killer, the
/// restart, the snapshot holder, the pool holders, the shard mover (each only when the
/// workload asks for it).
pub(super) fn spawn_faults<B: Backend>(
    backend: &Arc<B>,
    (w, spec): (&Workload, &TrialSpec<'_>),
    FaultSessions {
        killer,
        holder,
        pool_holders,
    }: FaultSessions<B::Session>,
    harness: &Harness<'_>,
    clock: TrialClock,
    shared: &Arc<Shared>,
) -> FaultTasks {
    let killer = killer.map(|k| {
        let reopen = connector(
            backend,
            w,
            ("claimbench-killer".into(), "killer".into(), String::new()),
            Endpoint::default(),
        );
        tokio::spawn(background::kill(
            Resilient::new(k, reopen),
            backend.worker_role(),
            w.faults.kill_schedule(TrialClock::planned(w)),
            clock,
            shared.clone(),
        ))
    });
    let restarter = harness
        .restart
        .filter(|_| !w.faults.restart_at.is_empty())
        .map(|action| {
            tokio::spawn(background::restart(
                (
                    action.clone(),
                    "restart the server (faults.restart_db_at_s)",
                ),
                w.faults.restart_at.clone(),
                clock,
                shared.clone(),
            ))
        });
    // Only a cell that takes leases has a lock service to lose.
    let lock_restarter = harness
        .lock_restart
        .filter(|_| spec.strategy.needs_lock_service())
        .filter(|_| !w.faults.restart_lock_service_at.is_empty())
        .map(|action| {
            tokio::spawn(background::restart(
                (
                    action.clone(),
                    "restart the lock service (faults.restart_lock_service_at_s)",
                ),
                w.faults.restart_lock_service_at.clone(),
                clock,
                shared.clone(),
            ))
        });
    let failover = match (harness.failover, w.faults.failover_at.first()) {
        (Some(f), Some(&at)) => Some(tokio::spawn(crate::runner::failover::inject(
            backend.clone(),
            f.fail_over.clone(),
            at,
            clock,
            shared.clone(),
        ))),
        _ => None,
    };
    let pool_holder = w.faults.hold_pool.map(|h| {
        tokio::spawn(background::hold_pool(
            pool_holders,
            (h.from, h.to),
            clock,
            shared.clone(),
        ))
    });
    let holder = holder.map(|h| {
        tokio::spawn(background::hold_snapshot(
            h,
            (
                w.faults.hold_snapshot.expect("session only with a hold"),
                w.faults.hold_kind,
            ),
            clock,
            shared.clone(),
        ))
    });
    let mover = w
        .shard_moves()
        .filter(|_| spec.strategy.def().sharded)
        .map(|moves| {
            let queues = w.population.queue_names();
            let changes = crate::runner::shards::changes(&queues, spec.workers, moves);
            tokio::spawn(crate::runner::shards::mover(
                backend.clone(),
                changes,
                clock,
                shared.clone(),
            ))
        });
    FaultTasks {
        killer,
        restarter,
        lock_restarter,
        failover,
        holder,
        pool_holder,
        mover,
    }
}

/// How a task opens a new connection in `role` when the workload breaks connections
/// (kills, restarts); `None` when it does not, so that an unplanned loss ends the trial.
pub(super) fn connector<B: Backend>(
    backend: &Arc<B>,
    w: &Workload,
    (role, id, queue): (String, String, String),
    to: Endpoint,
) -> Option<worker::Connector<B::Session>> {
    if !w.faults.breaks_connections() {
        return None;
    }
    let backend = backend.clone();
    // Workers get the workload's session settings again; the tasks beside them have none.
    let settings = if role == backend.worker_role() {
        crate::session_settings::for_backend(&w.session_settings, backend.kind())
    } else {
        Vec::new()
    };
    Some(Arc::new(move || {
        let (backend, role, id, queue) = (backend.clone(), role.clone(), id.clone(), queue.clone());
        let settings = settings.clone();
        Box::pin(
            async move { open_worker(backend.as_ref(), (&role, &id, &queue), &settings, to).await },
        )
    }))
}

/// Starts the workers, the sampler, the producer, the rescuer, the cleanup job and the
/// killer on their sessions.
pub(super) fn spawn<B: Backend>(
    backend: &Arc<B>,
    workload: &Arc<Workload>,
    spec: &TrialSpec<'_>,
    (clock, routes): (TrialClock, Routes),
    sessions: Sessions<B::Session>,
    (harness, tally): (&Harness<'_>, crate::ledger::TallyThread),
) -> Running<B::Session> {
    let threads = harness.threads;
    let w = workload.as_ref();
    // A long trial keeps its seconds on disk as it goes (runner/checkpoint.rs); a file
    // that cannot be made costs the checkpoint only.
    let checkpoint = spec
        .interval_log
        .as_ref()
        .filter(|_| TrialClock::planned(w).as_secs_f64() >= CHECKPOINT_FROM_S)
        .and_then(|(hlog, name)| Checkpoint::open(hlog, name).ok());
    let shared = Arc::new(Shared {
        checkpoint,
        ..Shared::default()
    });
    let worker_spec = Arc::new(worker::WorkerSpec::new(
        w,
        &spec.strategy,
        spec.batch,
        w.seed.wrapping_add(u64::from(spec.repetition)),
    ));
    let progress: Vec<Progress> = (0..spec.workers).map(|_| Progress::default()).collect();
    let on = (threads, &shared, &progress[..]);
    let workers = spawn_workers(
        backend,
        w,
        (spec, worker_spec),
        (clock, routes),
        sessions.workers,
        on,
        &tally,
    );
    let n = spec.workers as usize;
    let lag_probes = (0..threads.used(n))
        .map(|t| threads.spawn(t, n, lag::probe(shared.clone())))
        .collect();
    let has_producer = sessions.producer.is_some();
    // A background task reconnects in its own role, named as it was first.
    let resilient = |s, role: &str| {
        let id = role.trim_start_matches("claimbench-").to_string();
        Resilient::new(
            s,
            connector(
                backend,
                w,
                (role.to_string(), id, String::new()),
                Endpoint::default(),
            ),
        )
    };
    let sampler = sessions.sampler.map(|s| {
        tokio::spawn(background::sample(
            resilient(s, "claimbench-sampler"),
            workload.clone(),
            clock,
            shared.clone(),
            has_producer,
        ))
    });
    let producer = sessions.producer.map(|p| {
        tokio::spawn(background::produce(
            resilient(p, "claimbench-producer"),
            workload.clone(),
            (
                super::super::schedule::Schedule::of(w).expect("session only with a rate"),
                spec.strategy.def().listens,
            ),
            clock,
            shared.clone(),
        ))
    });
    let rescuer = sessions.rescuer.map(|r| {
        tokio::spawn(background::rescue(
            resilient(r, "claimbench-rescuer"),
            w.faults.lease.expect("session only with a lease"),
            (clock, shared.clone()),
            tally.ledger(crate::ledger::RESCUER),
        ))
    });
    let cleaner = sessions.cleaner.map(|c| {
        tokio::spawn(crate::runner::cleanup::clean(
            resilient(c, "claimbench-cleaner"),
            w.cleanup.expect("session only with a cleanup"),
            (clock, shared.clone()),
        ))
    });
    let faults = spawn_faults(
        backend,
        (w, spec),
        FaultSessions {
            killer: sessions.killer,
            holder: sessions.holder,
            pool_holders: sessions.pool_holders,
        },
        harness,
        clock,
        &shared,
    );
    let planner = sessions.planner.map(|p| {
        tokio::spawn(background::plan(
            resilient(p, "claimbench-planner"),
            spec.strategy.clone(),
            spec.batch,
            workload.clone(),
            clock,
            shared.clone(),
        ))
    });
    let pool_watch = Some(tokio::spawn(background::watch_pool(
        backend.clone(),
        shared.clone(),
    )));
    Running {
        faults,
        planner,
        pool_watch,
        workers,
        lag_probes,
        sampler,
        producer,
        rescuer,
        cleaner,
        tally,
        progress,
        shared,
    }
}

pub(super) type WorkerTask<S> =
    JoinHandle<Result<worker::WorkerReport<S>, crate::backend::BackendError>>;

/// Each worker on its thread with its session, its spec and its progress counter, and a
/// connector for reconnecting in its own role and shard identity.
pub(super) fn spawn_workers<B: Backend>(
    backend: &Arc<B>,
    w: &Workload,
    (spec, worker_spec): (&TrialSpec<'_>, Arc<worker::WorkerSpec>),
    (clock, routes): (TrialClock, Routes),
    sessions: Vec<B::Session>,
    (threads, shared, progress): (&WorkerThreads, &Arc<Shared>, &[Progress]),
    tally: &crate::ledger::TallyThread,
) -> Vec<WorkerTask<B::Session>> {
    let n = spec.workers as usize;
    let spawn_one = |(i, s)| {
        let connect = connector(
            backend,
            w,
            (
                backend.worker_role(),
                crate::runner::shards::worker_id(i),
                w.population.worker_queue(i).to_string(),
            ),
            routes.worker(i),
        );
        let (stats, counter) = (shared.clone(), progress[i].clone());
        let run = worker::run(
            s,
            tally.ledger(i as u32),
            worker_spec.clone(),
            clock,
            stats,
            counter,
            connect,
        );
        let shared = shared.clone();
        threads.spawn(i, n, async move {
            let r = run.await;
            if r.is_err() {
                // A worker that cannot go on ends the trial now, not at its deadline.
                shared.stop();
            }
            r
        })
    };
    sessions.into_iter().enumerate().map(spawn_one).collect()
}
