//! The claim path itself: one claim round trip per strategy at batch 1, 10 and 100, on a
//! throw-away embedded PostgreSQL seeded from `benches/claim-path.toml`, measured with
//! criterion's own statistics (and its saved baselines: `--save-baseline`, `--baseline`).
//! Each benchmark starts from a freshly seeded schema; only the claim is timed, and its
//! jobs are then released so that every claim meets the same backlog. One connection, no
//! contention: this is the statement's own cost, what the load runs multiply.
//!
//! A second group times production's claim with its statements prepared once per
//! connection (a direct connection) against the unnamed form claimbench sends through a
//! transaction-mode pooler (parse, bind and execute in one round trip, every claim):
//! the same server and backlog, side by side in one run.
//!
//!     cargo bench --bench claim

use claimbench::backend::any::AnyBackend;
use claimbench::backend::target::DbTarget;
use claimbench::backend::{Backend, Session};
use claimbench::embedded::EmbeddedPostgres;
use claimbench::strategy::Strategy;
use claimbench::workload::Workload;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

fn claims(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let workload = Workload::load(std::path::Path::new("benches/claim-path.toml"))
        .expect("benches/claim-path.toml is valid");
    let pg = EmbeddedPostgres::start(&workload.embedded_settings)
        .expect("the embedded PostgreSQL starts (initdb and pg_ctl on PATH)");
    let target = DbTarget::parse(&pg.url()).expect("the embedded URL parses");
    let backend = AnyBackend::new(&target, target.to_string(), "claimbench_bench");
    // Each benchmark starts from the freshly seeded state: claims and releases leave
    // dead row versions behind, and the next strategy should not pay for them.
    let fresh_session = || {
        rt.block_on(async {
            backend
                .reset(&workload, "fetch-order", workload.seed)
                .await
                .expect("seeding the backlog");
            backend
                .connect(&backend.worker_role(), "bench")
                .await
                .expect("a worker connection")
        })
    };
    // The same server as a transaction pooler would present it: the worker's
    // statements unnamed, its schema the role's default (set here on the bench's own
    // throw-away server; a pooled connection cannot SET it).
    let server = std::net::SocketAddr::from(([127, 0, 0, 1], pg.port()));
    let unnamed = AnyBackend::new(&target, target.to_string(), "claimbench_bench").with_pooler(
        claimbench::backend::postgres::PoolerRoute {
            addr: server,
            mode: claimbench::pooler::PoolMode::Transaction,
            own: false,
            database: None,
        },
    );
    rt.block_on(async {
        let (c, conn) = tokio_postgres::connect(&pg.url(), tokio_postgres::NoTls)
            .await
            .expect("the bench's server");
        tokio::spawn(conn);
        c.batch_execute("ALTER ROLE postgres SET search_path TO claimbench_bench")
            .await
            .expect("the role's default schema");
    });
    let mut group = c.benchmark_group("claim round trip");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    for strategy in Strategy::CORE {
        for batch in [1u32, 10, 100] {
            let mut session = fresh_session();
            let id = BenchmarkId::new(strategy.as_str(), format!("batch {batch}"));
            group.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    rt.block_on(timed_claims(&mut session, &strategy, batch, iters))
                })
            });
        }
    }
    group.finish();
    let mut group = c.benchmark_group("production claim statements");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    let production = Strategy::builtin()
        .find(|s| s.as_str() == "production")
        .expect("production is built in");
    for batch in [1u32, 10] {
        for (form, b) in [("prepared", &backend), ("unnamed", &unnamed)] {
            let mut session = rt.block_on(async {
                backend
                    .reset(&workload, "fetch-order", workload.seed)
                    .await
                    .expect("seeding the backlog");
                b.connect(&b.worker_role(), "bench")
                    .await
                    .expect("a worker connection")
            });
            let id = BenchmarkId::new(form, format!("batch {batch}"));
            group.bench_function(id, |bench| {
                bench.iter_custom(|iters| {
                    rt.block_on(timed_claims(&mut session, &production, batch, iters))
                })
            });
        }
    }
    group.finish();
    drop(pg);
}

/// `iters` claims of a full batch, each released again so the next meets the same
/// backlog: only the claims are timed.
async fn timed_claims<S: Session>(
    session: &mut S,
    strategy: &Strategy,
    batch: u32,
    iters: u64,
) -> Duration {
    let mut jobs = Vec::with_capacity(batch as usize);
    let mut ids = Vec::with_capacity(batch as usize);
    let mut timed = Duration::ZERO;
    for _ in 0..iters {
        jobs.clear();
        let t = Instant::now();
        session
            .claim(strategy, batch, &mut jobs)
            .await
            .expect("a claim");
        timed += t.elapsed();
        assert_eq!(jobs.len(), batch as usize, "a full batch every time");
        ids.clear();
        ids.extend(jobs.iter().map(|j| j.id));
        session.release(&ids).await.expect("releasing the batch");
    }
    timed
}

criterion_group!(benches, claims);
criterion_main!(benches);
