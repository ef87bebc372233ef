//! The claim path itself: one claim round trip per strategy at batch 1, 10 and 100, on a
//! throw-away embedded PostgreSQL seeded from `benches/claim-path.toml`, measured with
//! criterion's own statistics (and its saved baselines: `--save-baseline`, `--baseline`).
//! Each benchmark starts from a freshly seeded schema; only the claim is timed, and its
//! jobs are then released so that every claim meets the same backlog. One connection, no
//! contention: this is the statement's own cost, what the load runs multiply.
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
    let mut group = c.benchmark_group("claim round trip");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    let mut jobs = Vec::with_capacity(100);
    let mut ids = Vec::with_capacity(100);
    for strategy in Strategy::CORE {
        for batch in [1u32, 10, 100] {
            let mut session = fresh_session();
            let id = BenchmarkId::new(strategy.as_str(), format!("batch {batch}"));
            group.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let mut timed = Duration::ZERO;
                        for _ in 0..iters {
                            jobs.clear();
                            let t = Instant::now();
                            session
                                .claim(&strategy, batch, &mut jobs)
                                .await
                                .expect("a claim");
                            timed += t.elapsed();
                            assert_eq!(jobs.len(), batch as usize, "a full batch every time");
                            ids.clear();
                            ids.extend(jobs.iter().map(|j| j.id));
                            session.release(&ids).await.expect("releasing the batch");
                        }
                        timed
                    })
                })
            });
        }
    }
    group.finish();
    drop(pg);
}

criterion_group!(benches, claims);
criterion_main!(benches);
