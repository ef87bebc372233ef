//! What a workload's fields decide together, checked once each is valid on its own: a
//! setting that would pass without effect is refused here, before any connection, so a
//! nightly job cannot go green on a check that checks nothing. A fault after the trial's
//! end never fires; a gate that matches no cell (a typo in a strategy name) gates
//! nothing; a heartbeat no shorter than the lease never saves a job; a workload in which
//! no job can be claimed measures only its empty polls.
//!
//! What only a run can see (a drain that ends before a fault, a gate whose cells were
//! interrupted) is reported by the run itself.

use super::{Workload, short_float};
use crate::backend_kind::BackendKind;
use crate::results::Gate;
use crate::slo::Metric;
use std::time::Duration;

/// A field and what is wrong with it; the validator adds the file.
pub(super) type Refusal = (String, String);

pub(super) fn check(w: &Workload) -> Result<(), Refusal> {
    heartbeat_below_lease(w)?;
    faults_within_trials(w)?;
    for (i, g) in w.gates.iter().enumerate() {
        gate_matches(w, i, g)?;
        gates_agree(w, i, g)?;
    }
    rates_from_earlier_blocks(w)?;
    trials_within_bounds(w)?;
    failover_on_postgres(w)?;
    lock_restart_with_a_lock_service(w)?;
    placement_on_a_cluster(w)?;
    hold_kind_with_a_hold(w)?;
    timeline_owns_the_clock(w)?;
    pool_hold_fits_the_pool(w)?;
    broker_misfit(w)?;
    broker_layouts_match(w)?;
    Ok(())
}

/// A workload that declares its own queue table runs only what runs on that table:
/// its own claims, on the engines its file of steps is written for, with the steps its
/// faults and failures need. A built-in claim, a shipped index layout, a producer or a
/// storage model would act on claimbench's `jobs_hot`, which a declared table leaves
/// empty, and measure nothing.
pub(super) fn declared_table(w: &Workload) -> Result<(), Refusal> {
    let Some(t) = &w.table else {
        return Ok(());
    };
    let form = |k: BackendKind| match t.file_for(k) {
        Some(_) => crate::declared_table::form_for(t, k).map_err(|m| (format!("table.{k}"), m.0)),
        None => Err((
            "backends".into(),
            format!(
                "names {k}; the declared table {} has no file of steps for it (a declared table runs on PostgreSQL and MySQL/MariaDB: give `table.{k}`, or run it on {})",
                t.name,
                written_for(t)
            ),
        )),
    };
    for k in &w.backends {
        form(*k)?;
    }
    // A block that names no backend runs on the --db URLs given: each form the table
    // has is held to it.
    let written: Vec<BackendKind> = ENGINES_OF_TABLES
        .into_iter()
        .filter(|k| t.file_for(*k).is_some())
        .collect();
    for (i, m) in w.matrices.iter().enumerate() {
        let kinds = match m.backends.is_empty() {
            true => &written,
            false => &m.backends,
        };
        let forms = kinds
            .iter()
            .map(|k| form(*k).map_err(|(_, why)| (block_field(w, i, "backends"), why)))
            .collect::<Result<Vec<_>, _>>()?;
        for form in &forms {
            declared_table_block(w, (i, m), form)?;
        }
    }
    Ok(())
}

/// The engines a declared table may have a file of steps for.
const ENGINES_OF_TABLES: [BackendKind; 2] = [BackendKind::Postgres, BackendKind::Mysql];

/// The engines `t` has a file for, as a phrase.
fn written_for(t: &crate::declared_table::DeclaredTable) -> String {
    let names: Vec<String> = ENGINES_OF_TABLES
        .into_iter()
        .filter(|k| t.file_for(*k).is_some())
        .map(|k| k.to_string())
        .collect();
    names.join(" and ")
}

/// One block's settings against one engine's form of the declared table.
fn declared_table_block(
    w: &Workload,
    (i, m): (usize, &super::Matrix),
    form: &crate::declared_table::TableForm,
) -> Result<(), Refusal> {
    let (file, t) = (&form.file, form);
    let f = |x: &str| block_field(w, i, x);
    if let Some(s) = m.strategies.iter().find(|s| !s.is_custom()) {
        return Err((
            f("strategies"),
            format!(
                "names `{s}`, a built-in claim of claimbench's own table (jobs_hot), which the declared table {} leaves empty; list strategies the workload declares on its table (`[strategies.<name>]`)",
                t.name
            ),
        ));
    }
    let shipped =
        |l: &&String| crate::names::INDEX_LAYOUTS.contains(&l.as_str()) && *l != "pk-only";
    if let Some(l) = m.index_layouts.iter().find(shipped) {
        return Err((
            f("index_layouts"),
            format!(
                "names `{l}`, a shipped layout of claimbench's jobs_hot, which the declared table leaves empty; use \"pk-only\" (the table's own indexes, from its ddl step) or a layout the workload declares on {}",
                t.name
            ),
        ));
    }
    let p = w.phase(i);
    let refuse = |field: &str, why: &str| Err((field.to_string(), why.to_string()));
    let arrives = p.producer_rate_per_s.is_some() || m.phase.arrival_rate_from.is_some();
    if arrives && form.enqueue.is_none() {
        return Err((
            "producers.rate_per_s".into(),
            format!(
                "adds jobs while the trial runs, and {file} has no `-- step: enqueue` to insert them; give it (binding :ages_us, and :queues, :priorities, :payload_bytes as it needs), or give the backlog in [population] alone"
            ),
        ));
    }
    if p.storage != super::Storage::default() || p.cleanup.is_some() {
        return refuse(
            "storage",
            "is claimbench's storage model for its own table; a declared table's file says where finished rows go",
        );
    }
    if p.population.history.rows() > 0 || p.population.history.archived > 0 {
        return refuse(
            "population.history",
            "seeds claimbench's own table and archive; a declared table's seed step copies the backlog only",
        );
    }
    if p.handler.complete != super::Completion::default() {
        return refuse(
            "handler.complete",
            "batches claimbench's own completion; a declared table completes each job with its complete step",
        );
    }
    let fails = p.handler.failure_rate > 0.0 || p.faults.poison_share > 0.0;
    if fails && form.fail.is_none() {
        return Err((
            "handler.failure_rate".into(),
            format!(
                "fails jobs, and {file} has no `-- step: fail`; give it (binding :id, and :retry_delay_s, :max_attempts and :worker_id as it needs)"
            ),
        ));
    }
    let f = &p.faults;
    let strands = f.abandon_rate > 0.0
        || f.crash_after_start_rate > 0.0
        || f.hang_rate > 0.0
        || !f.kill_connections_at.is_empty()
        || f.kill_connections_every.is_some()
        || !f.restart_at.is_empty();
    if strands && form.rescue.is_none() {
        let give = match form.kind {
            BackendKind::Mysql => {
                "`-- step: rescue-lock` and `-- step: rescue` to give them back after the lease; give them (a locking read binding :lease_s that returns the ids, then the UPDATE of :ids)"
            }
            _ => {
                "`-- step: rescue` to give them back after the lease; give it (binding :lease_s, returning the ids it gave back)"
            }
        };
        return Err((
            "faults".into(),
            format!("leave jobs claimed with nobody to finish them, and {file} has no {give}"),
        ));
    }
    if !f.failover_at.is_empty() || f.hold_snapshot.is_some() || f.hold_pool.is_some() {
        return refuse(
            "faults",
            "failovers and held horizons read claimbench's own table; a declared table does not run them yet",
        );
    }

    Ok(())
}

/// A broker's technique runs on its own data model: a block that pairs it with another
/// layout would build the keys one way and claim them another.
pub(super) fn broker_layouts_match(w: &Workload) -> Result<(), Refusal> {
    use crate::names::broker_layout_of;
    for (i, m) in w.matrices.iter().enumerate() {
        let on_a_broker = w
            .backends
            .iter()
            .any(|k| !k.engine().runs_sql && m.runs_on(*k));
        if !on_a_broker {
            continue;
        }
        for s in &m.strategies {
            let Some(wants) = broker_layout_of(s.as_str()) else {
                continue;
            };
            if let Some(other) = m.index_layouts.iter().find(|l| *l != wants) {
                return Err((
                    block_field(w, i, "index_layouts"),
                    format!(
                        "`{other}` with {s}, which claims on the layout `{wants}` only; give it index_layouts = [\"{wants}\"] (a technique of another layout goes in a [[matrix]] block of its own)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What a broker's queue cannot express of the production claim and its table: each is
/// refused naming the field, never approximated (a stream delivers in arrival order to
/// any consumer, at once, with nothing retained after the acknowledgement; the records'
/// model claims by priority and due time, so it orders by priority and holds scheduled
/// jobs and retries back until they are due).
/// The most priority levels a RabbitMQ queue orders by (`x-max-priority` 0 to 255).
const MAX_PRIORITY_LEVELS: usize = 256;

pub(super) fn broker_misfit(w: &Workload) -> Result<(), Refusal> {
    let Some(kind) = w.backends.iter().find(|k| !k.engine().runs_sql) else {
        return Ok(());
    };
    let p = &w.population;
    let refuse = |field: String, what: &str| {
        Err((
            field,
            format!(
                "{what}, and {kind} cannot express it: its queues (a stream delivered in arrival order, records claimed by due time) have no such field (docs/strategies.md, Queues that are not tables); drop it, or run this workload on postgres or mysql"
            ),
        ))
    };
    for (i, q) in p.queues.iter().enumerate() {
        let f = |x: &str| format!("population.queues[{i}].{x}");
        if q.max_workers.is_some() {
            return refuse(f("max_workers"), "caps the workers of one queue");
        }
        if q.paused || !q.active {
            return refuse(
                f(if q.paused { "paused" } else { "active" }),
                "stops a queue",
            );
        }
    }
    // Only a stream cannot order by priority or hold a job back until it is due: the
    // records' model claims in the production claim's order (priority, then due time),
    // so it takes priorities, scheduled jobs and a retry's delay.
    let claims_on = |layouts: &[&str]| {
        w.matrices.iter().any(|m| {
            m.strategies.iter().any(|s| {
                let wants = crate::names::broker_layout_of(s.as_str());
                wants.is_some_and(|l| layouts.contains(&l))
                    && w.backends.iter().any(|k| m.runs_on(*k))
            })
        })
    };
    // JetStream's work queue delivers in arrival order too, but delays a retry (a
    // negative acknowledgement with a delay); a RabbitMQ queue delays none (that takes
    // a plugin or a queue per delay), and orders by priority (x-max-priority) the
    // messages it has not yet pushed to a consumer.
    use crate::names::{CLASSIC_QUEUE, STREAM, WORK_QUEUE};
    let no_delay = claims_on(&[STREAM, CLASSIC_QUEUE]);
    let in_arrival_order = claims_on(&[STREAM, WORK_QUEUE]);
    let levels = p.all_priorities().len();
    if levels > 1 && in_arrival_order {
        return refuse("population.priorities".into(), "orders jobs by priority");
    }
    if levels > MAX_PRIORITY_LEVELS && claims_on(&[CLASSIC_QUEUE]) {
        return Err((
            "population.priorities".into(),
            format!(
                "has {levels} levels (with the queues' own), and RabbitMQ's x-max-priority takes at most {MAX_PRIORITY_LEVELS} (0 to 255); give fewer"
            ),
        ));
    }
    // The sampler's drain rule needs to know when no job is left anywhere, and AMQP
    // tells only the messages ready in a queue, not those its consumers hold.
    if w.trial.stop == super::StopRule::Drain && claims_on(&[CLASSIC_QUEUE]) {
        return Err((
            "trial.stop".into(),
            "\"drain\" stops when no job is left, and rabbitmq cannot tell that: AMQP reports the messages ready in a queue, not those its consumers hold unacknowledged; give stop = \"duration\"".into(),
        ));
    }
    if p.scheduled_share > 0.0 && (in_arrival_order || claims_on(&[CLASSIC_QUEUE])) {
        return refuse("population.scheduled_share".into(), "makes jobs due later");
    }
    if p.history.rows() > 0 || p.history.archived > 0 {
        return refuse(
            "population.history".into(),
            "keeps finished jobs beside the queue",
        );
    }
    if w.cleanup.is_some() {
        return refuse("cleanup".into(), "removes finished rows from an archive");
    }
    let other_storage = (0..w.matrices.len()).find(|&i| {
        w.matrices[i].runs_on(*kind) && w.phase(i).storage != super::Storage::ArchiveMove
    });
    if let Some(i) = other_storage {
        let field = match w.matrices[i].phase.storage {
            Some(_) => block_field(w, i, "storage"),
            None => "storage".into(),
        };
        return refuse(field, "chooses where a finished job's row goes in a table");
    }
    let h = &w.handler;
    // The delay matters only where a job can fail (it defaults to 100 ms).
    let fails = h.failure_rate > 0.0 || w.faults.poison_share > 0.0;
    if h.retry_delay > Duration::ZERO && fails && no_delay {
        return refuse("handler.retry_delay_ms".into(), "delays a retry");
    }
    if h.complete != super::Completion::PerJob {
        return refuse(
            "handler.complete".into(),
            "completes a batch in one statement",
        );
    }
    if w.faults.hold_snapshot.is_some() || w.faults.hold_pool.is_some() {
        return refuse("faults.hold_snapshot_s".into(), "holds a transaction open");
    }
    if let Some(s) = w.session_settings.iter().find(|s| s.backend == *kind) {
        return refuse(
            format!("session.{kind}.{}", s.name),
            "sets a session setting",
        );
    }
    Ok(())
}

/// Another client cannot hold more of claimbench's pooler's server connections than
/// the pool has: the holder would wait for one that never frees, and the trial fail
/// late. Holding all of them is the scenario of an exhausted pool.
fn pool_hold_fits_the_pool(w: &Workload) -> Result<(), Refusal> {
    let Some(hold) = w.faults.hold_pool else {
        return Ok(());
    };
    for (i, m) in w.matrices.iter().enumerate() {
        let size = m.phase.pool_size.or(w.topology.pooler.map(|p| p.pool_size));
        if let Some(size) = size.filter(|&n| hold.connections > n) {
            let whose = match m.phase.pool_size {
                Some(_) => block_field(w, i, "pool_sizes"),
                None => "topology.pool_size".to_string(),
            };
            return Err((
                "faults.hold_pool_connections".into(),
                format!(
                    "{} is more than the pool of {size} ({whose}) has; another client can hold at most all of it",
                    hold.connections
                ),
            ));
        }
    }
    Ok(())
}

/// A block's `[[matrix.timeline]]` sets its trials' length and pin and scales their
/// arrival rate phase by phase: a block setting of its own for the same thing would be
/// silently ignored, and a timeline that ends inside the warm-up measures nothing.
fn timeline_owns_the_clock(w: &Workload) -> Result<(), Refusal> {
    for (i, m) in w.matrices.iter().enumerate() {
        let p = &m.phase;
        let Some(last) = p.timeline.last() else {
            continue;
        };
        let given = [
            ("search", p.search.is_some()),
            ("duration_s", p.duration.is_some()),
            ("hold_snapshot_s", p.hold_snapshot.is_some()),
        ];
        if let Some((name, _)) = given.iter().find(|(_, set)| *set) {
            return Err((
                block_field(w, i, name),
                "the block's [[matrix.timeline]] sets its trials' length and pin and scales their arrival rate phase by phase; set this in the timeline instead (or drop the timeline)".into(),
            ));
        }
        let timeline = block_field(w, i, "timeline");
        let pin = p.timeline.iter().position(|t| t.pin.is_some());
        if let (Some(j), Some(_)) = (pin, w.faults.hold_snapshot) {
            return Err((
                "faults.hold_snapshot_s".into(),
                format!(
                    "holds a pin in every block's trials, and {timeline}[{j}] holds one too; give the block's pin in its timeline only (a block without one can set hold_snapshot_s)"
                ),
            ));
        }
        if w.trial.stop != super::StopRule::Duration {
            return Err((
                "trial.stop".into(),
                format!(
                    "\"drain\" would end the trials elsewhere than {timeline} does: leave stop out"
                ),
            ));
        }
        let warmup = p.warmup.unwrap_or(w.trial.warmup);
        if last.to <= warmup {
            return Err((
                timeline,
                format!(
                    "its phases last {} s, no longer than the warm-up ({} s): nothing would be measured",
                    short_float(last.to.as_secs_f64()),
                    short_float(warmup.as_secs_f64())
                ),
            ));
        }
        let base = w.phase(i).producer_rate_per_s.is_some() || p.arrival_rate_from.is_some();
        let scaled = p
            .timeline
            .iter()
            .position(|t| matches!(t.rate, super::PhaseRate::Times(k) if k > 0.0));
        if let (false, Some(j)) = (base, scaled) {
            return Err((
                format!("{timeline}[{j}].rate_times"),
                "is a multiple of the trial's own arrival rate, and the block has none: give producers.rate_per_s, the block's arrival_rate_per_s or arrival_rate_from, or the phase's own rate_per_s".into(),
            ));
        }
    }
    Ok(())
}

/// A logical-slot pin is PostgreSQL's, and the server must keep logical WAL for it: the
/// embedded server is started with `wal_level = logical` when any trial holds one
/// (a workload that sets another level itself is refused, not overruled).
pub(super) fn logical_wal_for_slots(w: &mut Workload) -> Result<(), Refusal> {
    let slot = (0..w.matrices.len()).find(|&i| {
        let p = w.phase(i);
        p.faults.hold_snapshot.is_some() && p.faults.hold_kind == super::HoldKind::LogicalSlot
    });
    let Some(i) = slot else {
        return Ok(());
    };
    let field = match w.matrices[i]
        .phase
        .timeline
        .iter()
        .position(|t| t.pin.is_some())
    {
        Some(j) => format!("{}[{j}].pin", block_field(w, i, "timeline")),
        None => "faults.hold_kind".into(),
    };
    if let Some(other) = w.backends.iter().find(|b| **b != BackendKind::Postgres) {
        return Err((
            field,
            format!(
                "\"logical-slot\" is a PostgreSQL replication slot, and this workload runs on {other} too: on MySQL and MariaDB a read view holds purge back (\"snapshot\"); run the slot in a workload of its own"
            ),
        ));
    }
    match w.embedded_settings.get("wal_level").map(String::as_str) {
        None => {
            w.embedded_settings
                .insert("wal_level".into(), "logical".into());
            Ok(())
        }
        Some("logical") => Ok(()),
        Some(level) => Err((
            "embedded.settings.wal_level".into(),
            format!(
                "is \"{level}\", and {field} holds a logical slot, which needs \"logical\": drop the setting (the embedded server then runs with logical) or set it to logical"
            ),
        )),
    }
}

/// A hold kind other than the default names what a hold holds: without any hold in the
/// run it would be silently ignored.
fn hold_kind_with_a_hold(w: &Workload) -> Result<(), Refusal> {
    let kind = w.faults.hold_kind;
    let any_hold = (0..w.matrices.len()).any(|i| w.phase(i).faults.hold_snapshot.is_some());
    if kind != super::HoldKind::default() && !any_hold {
        return Err((
            "faults.hold_kind".into(),
            format!(
                "\"{}\" says what a hold holds, and no trial holds anything; give the window too: faults.hold_snapshot_s = [from, to] (or a block's hold_snapshot_s)",
                kind.name()
            ),
        ));
    }
    Ok(())
}

/// A placement spreads workers over a Galera cluster's nodes: a block that places them
/// on a run whose backends include PostgreSQL (one primary) places nothing.
fn placement_on_a_cluster(w: &Workload) -> Result<(), Refusal> {
    let placed = w.matrices.iter().any(|m| m.phase.placement.is_some());
    if placed && w.backends.contains(&BackendKind::Postgres) {
        return Err((
            "matrix.placement".into(),
            "places workers over a cluster's nodes, and postgres runs on one primary here; give placement only to mysql runs on a Galera cluster ([topology] kind = \"galera\", or --db with every node)".into(),
        ));
    }
    Ok(())
}

/// A run of more than [`super::MAX_TRIALS`] trials is a typo, not a plan.
fn trials_within_bounds(w: &Workload) -> Result<(), Refusal> {
    let n = w.trial_count();
    if n > super::MAX_TRIALS {
        return Err((
            "matrix".into(),
            format!(
                "expands to {n} trials (backends × strategies × layouts × workers × batch sizes × repetitions); at most {} in one run",
                super::MAX_TRIALS
            ),
        ));
    }
    Ok(())
}

/// A failover promotes a PostgreSQL standby: `validate` refuses it for other backends as
/// `run` does, with no server to ask.
fn failover_on_postgres(w: &Workload) -> Result<(), Refusal> {
    if let Some(kind) = w
        .backends
        .iter()
        .find(|k| **k != BackendKind::Postgres)
        .filter(|_| !w.faults.failover_at.is_empty())
    {
        return Err((
            "faults.failover_at_s".into(),
            format!(
                "a failover is PostgreSQL's here (a primary and its standbys); {kind} has none to move"
            ),
        ));
    }
    Ok(())
}

/// A restart of the lock service needs a block that takes leases in one.
fn lock_restart_with_a_lock_service(w: &Workload) -> Result<(), Refusal> {
    if !w.faults.restart_lock_service_at.is_empty() && !w.uses_lock_service() {
        return Err((
            "faults.restart_lock_service_at_s".into(),
            "restarts the lock service of a `lock-service` claim, and no block runs one; add `lock-service` to a block's strategies, or drop it".into(),
        ));
    }
    Ok(())
}

/// `arrival_rate_from` names an earlier block that runs, for every strategy and layout
/// of this one, the cell whose throughput it scales.
fn rates_from_earlier_blocks(w: &Workload) -> Result<(), Refusal> {
    for (i, m) in w.matrices.iter().enumerate() {
        let Some(from) = &w.matrices[i].phase.arrival_rate_from else {
            continue;
        };
        let field = format!(
            "{}.arrival_rate_from",
            block_field(w, i, "").trim_end_matches('.')
        );
        let Some(src) = w.matrices[..i].iter().find(|s| s.name == from.phase) else {
            return Err((
                field,
                format!(
                    "no earlier [[matrix]] block is named `{}`; name a block that runs before this one",
                    from.phase
                ),
            ));
        };
        let missing = if !src.workers.contains(&from.workers) {
            Some(format!("{} workers", from.workers))
        } else if !src.batch_sizes.contains(&from.batch_size) {
            Some(format!("batch {}", from.batch_size))
        } else if let Some(s) = m.strategies.iter().find(|s| !src.strategies.contains(s)) {
            Some(format!("strategy {s}"))
        } else {
            m.index_layouts
                .iter()
                .find(|l| !src.index_layouts.contains(l))
                .map(|l| format!("layout {l}"))
        };
        if let Some(what) = missing {
            return Err((
                field,
                format!(
                    "block `{}` does not run {what}, so there is no rate to scale",
                    from.phase
                ),
            ));
        }
    }
    Ok(())
}

fn heartbeat_below_lease(w: &Workload) -> Result<(), Refusal> {
    if let (Some(beat), Some(lease)) = (w.handler.heartbeat, w.faults.lease)
        && beat >= lease
    {
        return Err((
            "handler.heartbeat_ms".into(),
            format!(
                "{} ms is not below faults.lease_s ({} s): the lease runs out before the first heartbeat extends it, so every long job is rescued while it runs; give a heartbeat well below the lease (a third of it is usual)",
                short_float(beat.as_secs_f64() * 1e3),
                short_float(lease.as_secs_f64())
            ),
        ));
    }
    Ok(())
}

/// Some queue a job can be claimed from, and in every block a job to claim. Checked for
/// `run` and `validate` only: an empty table is a fine thing to `prepare` (for another
/// tool to fill) or for a test to load its own rows into, but not to measure.
/// What `run` needs beyond a valid workload: a job to claim, and enough rounds in every
/// paired block (checked after `--repetitions`, which may lower them).
pub(super) fn runnable(w: &Workload) -> Result<(), Refusal> {
    something_to_claim(w)?;
    paired_rounds(w)
}

/// A paired block judges ratios over its rounds: fewer than
/// [`super::Pairing::MIN_ROUNDS`] give no interval.
fn paired_rounds(w: &Workload) -> Result<(), Refusal> {
    for (i, m) in w.matrices.iter().enumerate() {
        let rounds = m.phase.repetitions.unwrap_or(w.trial.repetitions);
        if m.phase.paired.is_some() && rounds < super::Pairing::MIN_ROUNDS {
            let field = match m.phase.repetitions {
                Some(_) => block_field(w, i, "repetitions"),
                None => "trial.repetitions".to_string(),
            };
            return Err((
                field,
                format!(
                    "{rounds} is too few for a paired block: each repetition is a round of A and B, and judging their ratios takes at least {} (10 is a good start; --repetitions sets every block's)",
                    super::Pairing::MIN_ROUNDS
                ),
            ));
        }
    }
    Ok(())
}

fn something_to_claim(w: &Workload) -> Result<(), Refusal> {
    let open = w
        .population
        .queues
        .iter()
        .any(|q| q.weight > 0.0 && !q.paused && q.active);
    if !open {
        return Err((
            "population.queues".into(),
            "every queue with jobs is paused or inactive, so no job can ever be claimed and the run would measure empty polls only; leave at least one queue with weight > 0 unpaused and active".into(),
        ));
    }
    for i in 0..w.matrices.len() {
        let p = w.phase(i);
        if p.population.backlog == 0 && !w.block_has_arrivals(i) {
            return Err((
                block_field(w, i, "backlog"),
                "no job to claim: the backlog is 0 and no producer adds jobs in this block; give population.backlog (or the block's backlog) above 0, or producers.rate_per_s".into(),
            ));
        }
    }
    Ok(())
}

/// `matrix.x` for a lone block, `matrix[i].x` (named) for several.
fn block_field(w: &Workload, i: usize, x: &str) -> String {
    if w.matrices.len() == 1 {
        format!("matrix.{x}")
    } else {
        format!("matrix[{i}] ({}).{x}", w.matrices[i].name)
    }
}

/// Every fault instant inside every block's trials (a block's own hold included).
fn faults_within_trials(w: &Workload) -> Result<(), Refusal> {
    for i in 0..w.matrices.len() {
        let field = w.matrices[i]
            .phase
            .hold_snapshot
            .map(|_| block_field(w, i, "hold_snapshot_s"));
        block_faults_within_trial(w, i, field)?;
    }
    Ok(())
}

/// Block `i`'s fault instants inside its trials; `hold_field` names a hold the block
/// set itself.
fn block_faults_within_trial(
    w: &Workload,
    i: usize,
    hold_field: Option<String>,
) -> Result<(), Refusal> {
    let phase = w.phase(i);
    let f = &phase.faults;
    let hold_field = hold_field.unwrap_or_else(|| "faults.hold_snapshot_s".to_string());
    // (field, instant, whether it may fall on the end itself: only a hold's release).
    let mut instants: Vec<(&str, Duration, bool)> = Vec::new();
    let at = |field, t: &Duration| (field, *t, false);
    instants.extend(
        f.kill_connections_at
            .iter()
            .map(|t| at("faults.kill_connections_at_s", t)),
    );
    instants.extend(f.restart_at.iter().map(|t| at("faults.restart_db_at_s", t)));
    instants.extend(
        f.restart_lock_service_at
            .iter()
            .map(|t| at("faults.restart_lock_service_at_s", t)),
    );
    instants.extend(f.failover_at.iter().map(|t| at("faults.failover_at_s", t)));
    if let Some(every) = &f.kill_connections_every {
        instants.push(at("faults.kill_connections_every_s", every));
    }
    if let Some((from, to)) = f.hold_snapshot {
        instants.push((&hold_field, from, false));
        instants.push((&hold_field, to, true));
    }
    if let Some(h) = f.hold_pool {
        instants.push(("faults.hold_pool_s", h.from, false));
        instants.push(("faults.hold_pool_s", h.to, true));
    }
    let moves_field = block_field(w, i, "shard_moves.at_s");
    if let Some(m) = phase.shard_moves() {
        instants.extend(m.at.iter().map(|t| (moves_field.as_str(), *t, false)));
    }
    let end = phase.planned_trial();
    let late = |(_, t, may_end): &&(&str, Duration, bool)| {
        if *may_end { *t > end } else { *t >= end }
    };
    if let Some((field, at, _)) = instants.iter().find(late) {
        let trial = if w.matrices.len() == 1 {
            "the trial".to_string()
        } else {
            format!("block `{}`'s trials", w.matrices[i].name)
        };
        return Err((
            field.to_string(),
            format!(
                "{} s is after the end of {trial} ({} s from the start, warm-up included), so it would never happen; give a time before it or lengthen the trial",
                short_float(at.as_secs_f64()),
                short_float(end.as_secs_f64())
            ),
        ));
    }
    Ok(())
}

/// Two gates on the same cells and metric that no value meets together (`lost==0` and
/// `lost>=1`) fail every run, whatever it measures.
fn gates_agree(w: &Workload, i: usize, g: &Gate) -> Result<(), Refusal> {
    let same_cells = |o: &Gate| {
        (
            &o.phase,
            &o.strategy,
            &o.index_layout,
            o.workers,
            o.batch_size,
        ) == (
            &g.phase,
            &g.strategy,
            &g.index_layout,
            g.workers,
            g.batch_size,
        )
    };
    match w.gates[..i]
        .iter()
        .position(|o| same_cells(o) && !o.check.compatible(&g.check))
    {
        Some(j) => Err((
            format!("gate[{i}].check"),
            format!(
                "`{}` contradicts gate[{j}]'s `{}` on the same cells: no run can pass both; drop one",
                g.check, w.gates[j].check
            ),
        )),
        None => Ok(()),
    }
}

/// A gate must name at least one cell of the matrix that can measure its metric.
fn gate_matches(w: &Workload, i: usize, g: &Gate) -> Result<(), Refusal> {
    let field = format!("gate[{i}]");
    let blocks: Vec<usize> = (0..w.matrices.len())
        .filter(|&b| {
            let m = &w.matrices[b];
            g.phase.as_ref().is_none_or(|p| *p == m.name)
                && g.strategy.clone().is_none_or(|s| m.strategies.contains(&s))
                && g.index_layout
                    .as_ref()
                    .is_none_or(|l| m.index_layouts.contains(l))
                && g.workers.is_none_or(|n| m.workers.contains(&n))
                && g.batch_size.is_none_or(|n| m.batch_sizes.contains(&n))
        })
        .collect();
    if blocks.is_empty() {
        return Err((
            field,
            format!(
                "`{}` matches no cell of the matrix ({}), so it would check nothing; name a strategy, layout, worker count and batch size that one block runs together",
                g.label(),
                what_the_matrix_runs(w)
            ),
        ));
    }
    let needs_arrivals = g.check.metric.entry().needs_arrivals;
    let needs_handler = matches!(
        g.check.metric,
        Metric::CompletedPerS | Metric::DuplicateExecutions
    );
    let measurable = blocks.iter().any(|&b| {
        let full = w.phase(b).handler.mode == super::HandlerMode::Full;
        (!needs_arrivals || w.block_has_arrivals(b)) && (!needs_handler || full)
    });
    if !measurable {
        let why = if needs_arrivals {
            "is measured only where jobs arrive during the trial, and no block it matches has producers"
        } else {
            "is measured only where the handler runs, and every block it matches is claim-only"
        };
        return Err((
            format!("{field}.check"),
            format!(
                "`{}` {why}, so it would check nothing",
                g.check.metric.name()
            ),
        ));
    }
    Ok(())
}

/// `production, waiting × fetch-order × 1, 4 workers × batch 10` per block, for the
/// message of a gate that matches none.
fn what_the_matrix_runs(w: &Workload) -> String {
    let list = |v: Vec<String>| v.join(", ");
    w.matrices
        .iter()
        .map(|m| {
            let name = if m.name.is_empty() {
                String::new()
            } else {
                format!("{}: ", m.name)
            };
            format!(
                "{name}{} x {} x {} workers x batch {}",
                list(m.strategies.iter().map(|s| s.to_string()).collect()),
                list(m.index_layouts.clone()),
                list(m.workers.iter().map(|n| n.to_string()).collect()),
                list(m.batch_sizes.iter().map(|n| n.to_string()).collect())
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}
