//! One type for "whichever backend `--db` named", so that one run can drive several
//! backends side by side through the same generic runner.
//!
//! Enum dispatch rather than `dyn`: the traits use `async fn` (not object safe), and a
//! `match` per call costs nothing next to a database round trip.

use super::claim::{Ask, Done, Won};
use super::mssql::{MssqlBackend, MssqlSession};
use super::mysql::{MysqlBackend, MysqlSession};
use super::nats::{NatsBackend, NatsSession};
use super::postgres::{PostgresBackend, PostgresSession};
use super::rabbitmq::{RabbitBackend, RabbitSession};
use super::redis::{RedisBackend, RedisSession};
use super::{
    Backend, BackendError, BackendKind, ClaimedJob, DbTarget, Sample, ServerCounters, Session,
};
use crate::strategy::Strategy;
use crate::workload::Workload;
use std::time::Duration;

// One value per database or connection, never in a collection that the size would bloat:
// boxing the larger variant would only add an indirection to every call.
#[allow(clippy::large_enum_variant)]
pub enum AnyBackend {
    Postgres(PostgresBackend),
    Mysql(MysqlBackend),
    Mssql(MssqlBackend),
    Redis(RedisBackend),
    Nats(NatsBackend),
    Rabbitmq(RabbitBackend),
}

#[allow(clippy::large_enum_variant)]
pub enum AnySession {
    Postgres(PostgresSession),
    Mysql(MysqlSession),
    Mssql(MssqlSession),
    Redis(RedisSession),
    Nats(NatsSession),
    Rabbitmq(RabbitSession),
}

impl AnyBackend {
    /// A backend for `target`, working in `schema` (a PostgreSQL schema, a MySQL
    /// database), named in messages by the redacted `display`.
    pub fn new(target: &DbTarget, display: String, schema: &str) -> AnyBackend {
        match target {
            DbTarget::Postgres(c) => {
                AnyBackend::Postgres(PostgresBackend::new(c.clone(), display, schema))
            }
            DbTarget::Mysql(o) => AnyBackend::Mysql(MysqlBackend::new(o.clone(), display, schema)),
            DbTarget::MysqlCluster(nodes) => {
                AnyBackend::Mysql(MysqlBackend::cluster(nodes.clone(), display, schema))
            }
            DbTarget::Mssql(t) => AnyBackend::Mssql(MssqlBackend::new(t.clone(), schema)),
            DbTarget::Redis(t) => AnyBackend::Redis(RedisBackend::new(t.clone(), schema)),
            DbTarget::Nats(t) => AnyBackend::Nats(NatsBackend::new(t.clone(), schema)),
            DbTarget::Rabbitmq(t) => AnyBackend::Rabbitmq(RabbitBackend::new(t.clone(), schema)),
        }
    }

    /// On MySQL, the plain server a `standalone` placement runs on.
    pub fn with_standalone(self, target: &DbTarget) -> AnyBackend {
        match (self, target) {
            (AnyBackend::Mysql(b), DbTarget::Mysql(o)) => {
                AnyBackend::Mysql(b.with_standalone(o.clone()))
            }
            (other, _) => other,
        }
    }

    /// On a MariaDB claimbench started, the `root` URL through which a block changes the
    /// server's durability (workers keep the workload account of `target`).
    pub fn with_admin(self, admin: &DbTarget) -> AnyBackend {
        match (self, admin) {
            (AnyBackend::Mysql(b), DbTarget::Mysql(o)) => {
                AnyBackend::Mysql(b.with_admin(o.clone()))
            }
            (other, _) => other,
        }
    }

    /// On PostgreSQL and MySQL: workers of a `lock-service` claim take their leases in
    /// `service`.
    pub fn with_lock_service(
        self,
        service: Option<crate::backend::lock_service::LockService>,
    ) -> AnyBackend {
        match (self, service) {
            (AnyBackend::Postgres(b), Some(s)) => AnyBackend::Postgres(b.with_lock_service(s)),
            (AnyBackend::Mysql(b), Some(s)) => AnyBackend::Mysql(b.with_lock_service(s)),
            (other, _) => other,
        }
    }

    /// On a server claimbench started: workload SQL runs as a role without host rights
    /// that it creates (PostgreSQL only; see `PostgresBackend::with_workload_role`).
    pub fn with_workload_role(self) -> AnyBackend {
        match self {
            AnyBackend::Postgres(b) => AnyBackend::Postgres(b.with_workload_role()),
            other => other,
        }
    }

    /// On PostgreSQL, workers connect through a pooler (see
    /// `PostgresBackend::with_pooler`); other backends have none (validation refuses
    /// a pooler for them).
    pub fn with_pooler(self, route: super::postgres::PoolerRoute) -> AnyBackend {
        match self {
            AnyBackend::Postgres(b) => AnyBackend::Postgres(b.with_pooler(route)),
            other => other,
        }
    }

    /// On PostgreSQL, read the pooler's counters on its admin console around each trial.
    pub fn with_pooler_admin(self, admin: &DbTarget) -> AnyBackend {
        match (self, admin) {
            (AnyBackend::Postgres(b), DbTarget::Postgres(c)) => {
                AnyBackend::Postgres(b.with_pooler_admin(c.clone()))
            }
            (other, _) => other,
        }
    }

    /// On PostgreSQL, reset trials by copying a pristine database (for a cluster
    /// claimbench started: it creates and drops databases); other backends unchanged.
    pub fn with_pristine_copies(self) -> AnyBackend {
        match self {
            AnyBackend::Postgres(b) => AnyBackend::Postgres(b.with_pristine_copies()),
            other => other,
        }
    }

    /// Whether `layout` (shipped, or declared by `workload`) can be built on `kind`.
    pub fn layout_check(
        kind: BackendKind,
        layout: &str,
        workload: &Workload,
    ) -> Result<(), LayoutError> {
        super::layouts::sql(kind, layout, &workload.custom_layouts).map(|_| ())
    }
}

pub use super::layouts::LayoutError;

/// `each!(x, b => expr)`: `expr` with `b` bound to the concrete backend or session.
macro_rules! each {
    ($on:expr, $t:ident, $b:ident => $e:expr) => {
        match $on {
            $t::Postgres($b) => $e,
            $t::Mysql($b) => $e,
            $t::Mssql($b) => $e,
            $t::Redis($b) => $e,
            $t::Nats($b) => $e,
            $t::Rabbitmq($b) => $e,
        }
    };
}

impl super::recipe::Dialect for AnyBackend {
    fn instance(&self) -> &super::recipe::Instance {
        each!(self, AnyBackend, b => b.instance())
    }

    async fn control_rows(&self, q: super::recipe::Query<'_>) -> super::recipe::Rows {
        each!(self, AnyBackend, b => b.control_rows(q).await)
    }

    fn own_settings(&self) -> Vec<(String, String)> {
        each!(self, AnyBackend, b => b.own_settings())
    }
}

impl Backend for AnyBackend {
    type Session = AnySession;

    async fn connect(&self, role: &str, worker_id: &str) -> Result<AnySession, BackendError> {
        self.connect_to(role, worker_id, super::Endpoint::default())
            .await
    }

    fn nodes(&self) -> usize {
        each!(self, AnyBackend, b => b.nodes())
    }

    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        each!(self, AnyBackend, b => b.worker_address())
    }

    async fn connect_to(
        &self,
        role: &str,
        worker_id: &str,
        to: super::Endpoint,
    ) -> Result<AnySession, BackendError> {
        Ok(match self {
            AnyBackend::Postgres(b) => {
                AnySession::Postgres(b.connect_to(role, worker_id, to).await?)
            }
            AnyBackend::Mysql(b) => AnySession::Mysql(b.connect_to(role, worker_id, to).await?),
            AnyBackend::Mssql(b) => AnySession::Mssql(b.connect_to(role, worker_id, to).await?),
            AnyBackend::Redis(b) => AnySession::Redis(b.connect_to(role, worker_id, to).await?),
            AnyBackend::Nats(b) => AnySession::Nats(b.connect_to(role, worker_id, to).await?),
            AnyBackend::Rabbitmq(b) => {
                AnySession::Rabbitmq(b.connect_to(role, worker_id, to).await?)
            }
        })
    }

    // The control questions the SQL engines answer through the recipe: forwarded, so
    // that an engine which answers them its own way (a broker) is asked, not the recipe.
    async fn server_info(&self) -> Result<super::ServerInfo, BackendError> {
        each!(self, AnyBackend, b => b.server_info().await)
    }

    async fn check_schema(&self) -> Result<(), BackendError> {
        each!(self, AnyBackend, b => b.check_schema().await)
    }

    async fn table_stats(&self) -> Result<super::TableStats, BackendError> {
        each!(self, AnyBackend, b => b.table_stats().await)
    }

    async fn reconcile(&self) -> Result<super::DbReconciliation, BackendError> {
        each!(self, AnyBackend, b => b.reconcile().await)
    }

    async fn change_shards(
        &self,
        change: super::recipe::ShardChange,
        queues: &[String],
        workers: &[String],
    ) -> Result<(), BackendError> {
        each!(self, AnyBackend, b => b.change_shards(change, queues, workers).await)
    }

    async fn server_clock_us(&self) -> Result<i64, BackendError> {
        each!(self, AnyBackend, b => b.server_clock_us().await)
    }

    async fn completed_by_queue(
        &self,
        from_us: i64,
        to_us: i64,
    ) -> Result<Vec<(String, i64)>, BackendError> {
        each!(self, AnyBackend, b => b.completed_by_queue(from_us, to_us).await)
    }

    async fn job_queues(&self, queues: &[String]) -> Result<Vec<(i64, String)>, BackendError> {
        each!(self, AnyBackend, b => b.job_queues(queues).await)
    }

    async fn rebuild(&self, r: super::Reset<'_>) -> Result<u64, BackendError> {
        each!(self, AnyBackend, b => b.rebuild(r).await)
    }

    async fn counters(&self) -> Result<ServerCounters, BackendError> {
        each!(self, AnyBackend, b => b.counters().await)
    }

    async fn cluster_readings(
        &self,
        settings: bool,
    ) -> Result<Vec<super::cluster::NodeReading>, BackendError> {
        each!(self, AnyBackend, b => b.cluster_readings(settings).await)
    }

    async fn set_placement(&self, p: crate::workload::Placement) -> Result<(), BackendError> {
        each!(self, AnyBackend, b => b.set_placement(p).await)
    }

    async fn standbys(&self) -> Result<Vec<crate::results::StandbyState>, BackendError> {
        each!(self, AnyBackend, b => b.standbys().await)
    }

    async fn set_durability(
        &self,
        d: crate::workload::Durability,
    ) -> Result<Vec<(String, String)>, BackendError> {
        each!(self, AnyBackend, b => b.set_durability(d).await)
    }

    async fn size_pool(&self, n: Option<u32>) -> Result<Option<u32>, BackendError> {
        each!(self, AnyBackend, b => b.size_pool(n).await)
    }

    async fn pool_now(&self) -> Result<Option<(i64, i64)>, BackendError> {
        each!(self, AnyBackend, b => b.pool_now().await)
    }

    async fn acknowledged_missing(
        &self,
        effects: &[(i64, i64)],
        completions: &[(i64, i64)],
    ) -> Result<crate::backend::Missing, BackendError> {
        each!(self, AnyBackend, b => b.acknowledged_missing(effects, completions).await)
    }

    async fn server_pid(&self) -> Option<super::ServerProcess> {
        each!(self, AnyBackend, b => b.server_pid().await)
    }

    async fn load_model_state(&self, state: &crate::model::TableState) -> Result<(), BackendError> {
        each!(self, AnyBackend, b => b.load_model_state(state).await)
    }

    async fn setup_strategy(&self, strategy: &Strategy) -> Result<(), BackendError> {
        each!(self, AnyBackend, b => b.setup_strategy(strategy).await)
    }

    async fn workload_role(&self) -> Result<Option<super::WorkloadRole>, BackendError> {
        each!(self, AnyBackend, b => b.workload_role().await)
    }

    fn trial_warnings(
        &self,
        workload: &Workload,
        layout: &str,
        strategy: &Strategy,
    ) -> Vec<crate::warnings::Warning> {
        each!(self, AnyBackend, b => b.trial_warnings(workload, layout, strategy))
    }

    fn run_notes(&self) -> Vec<(String, String)> {
        each!(self, AnyBackend, b => b.run_notes())
    }
}

impl super::Lifecycle for AnySession {
    async fn run(&mut self, step: super::Step) -> Result<super::lifecycle::Reply, BackendError> {
        each!(self, AnySession, s => s.run(step).await)
    }

    async fn finished(&mut self, jobs: &[i64]) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.finished(jobs).await)
    }
}

impl super::ClaimSteps for AnySession {
    async fn locking_claim(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        // An enum's future is as large as its largest arm's, and on the claim path each
        // caller's future is copied whole as the call starts, at every layer up to the
        // worker's round. The brokers' and SQL Server's claims (their clients' futures,
        // 1.9–2.8 KB, against PostgreSQL's 1.3) are boxed so that they do not set every
        // backend's size: an allocation per claim beside their clients' own channels and
        // tasks. `claim_path_futures_stay_small` holds it.
        match self {
            AnySession::Postgres(s) => s.locking_claim(ask, out).await,
            AnySession::Mysql(s) => s.locking_claim(ask, out).await,
            AnySession::Redis(s) => s.locking_claim(ask, out).await,
            AnySession::Mssql(s) => Box::pin(s.locking_claim(ask, out)).await,
            AnySession::Nats(s) => Box::pin(s.locking_claim(ask, out)).await,
            AnySession::Rabbitmq(s) => Box::pin(s.locking_claim(ask, out)).await,
        }
    }

    async fn read_then_write(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        each!(self, AnySession, s => s.read_then_write(ask, out).await)
    }

    async fn candidates(&mut self, ask: Ask<'_>, out: &mut Vec<ClaimedJob>) -> Done {
        each!(self, AnySession, s => s.candidates(ask, out).await)
    }

    async fn read_lock_write(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<u32, BackendError> {
        each!(self, AnySession, s => s.read_lock_write(ask, out).await)
    }

    async fn version_cas(
        &mut self,
        ask: Ask<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<u32, BackendError> {
        each!(self, AnySession, s => s.version_cas(ask, out).await)
    }

    async fn claim_one(&mut self, ask: Ask<'_>, job: ClaimedJob) -> Won {
        each!(self, AnySession, s => s.claim_one(ask, job).await)
    }
}

impl Session for AnySession {
    async fn complete_many(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        each!(self, AnySession, s => s.complete_many(jobs).await)
    }

    async fn wait_for_work(&mut self, max: Duration) -> bool {
        each!(self, AnySession, s => s.wait_for_work(max).await)
    }

    async fn announce(&mut self) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.announce().await)
    }

    async fn prepare(&mut self, strategy: &Strategy) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.prepare(strategy).await)
    }

    fn serve_queue(&mut self, queue: &str) {
        each!(self, AnySession, s => s.serve_queue(queue))
    }

    async fn hold_in_flight(
        &mut self,
        strategy: &Strategy,
        ids: &[i64],
    ) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.hold_in_flight(strategy, ids).await)
    }

    async fn begin(&mut self) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.begin().await)
    }

    async fn end(&mut self, commit: bool) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.end(commit).await)
    }

    async fn apply(&mut self, settings: &[(String, String)]) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.apply(settings).await)
    }

    async fn release(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
        each!(self, AnySession, s => s.release(jobs).await)
    }

    async fn rescue(&mut self, lease: Duration) -> Result<Vec<i64>, BackendError> {
        each!(self, AnySession, s => s.rescue(lease).await)
    }

    async fn clean(&mut self, retain: Duration, batch: u32) -> Result<u64, BackendError> {
        each!(self, AnySession, s => s.clean(retain, batch).await)
    }

    async fn cleanup_state(
        &mut self,
        retain: Duration,
        cap: u64,
    ) -> Result<crate::results::CleanupState, BackendError> {
        each!(self, AnySession, s => s.cleanup_state(retain, cap).await)
    }

    async fn produce(&mut self, workload: &Workload, ages_us: &[i64]) -> Result<u64, BackendError> {
        each!(self, AnySession, s => s.produce(workload, ages_us).await)
    }

    async fn sample(&mut self, workload: &Workload) -> Result<Sample, BackendError> {
        each!(self, AnySession, s => s.sample(workload).await)
    }

    async fn explain_claim(
        &mut self,
        strategy: &Strategy,
        batch: u32,
    ) -> Result<Option<super::plan::PlanSample>, BackendError> {
        each!(self, AnySession, s => s.explain_claim(strategy, batch).await)
    }

    async fn explain_claim_plan_only(
        &mut self,
        strategy: &Strategy,
        batch: u32,
    ) -> Result<Option<super::plan::PlanSample>, BackendError> {
        each!(self, AnySession, s => s.explain_claim_plan_only(strategy, batch).await)
    }

    async fn hold_snapshot(&mut self, kind: crate::workload::HoldKind) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.hold_snapshot(kind).await)
    }

    async fn scan_held(&mut self) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.scan_held().await)
    }

    async fn kill_workers(&mut self, role: &str) -> Result<u64, BackendError> {
        each!(self, AnySession, s => s.kill_workers(role).await)
    }

    async fn crashed(&mut self, job: i64) -> Result<(), BackendError> {
        each!(self, AnySession, s => s.crashed(job).await)
    }
}
