//! What the harness itself costs: the per-claim recording a worker does on its hot path,
//! and the end-of-trial merge and ledger analysis. Compare the per-claim figure with a
//! claim's round trip (hundreds of µs): recording must be a rounding error.
//!
//!     cargo bench --bench recording

use claimbench::ledger::{Chunk, Event, EventKind, Execution, Tally, WorkerLedger, analyse};
use claimbench::metrics::{WorkerMetrics, bump, micros};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// One claim of `batch` jobs as worker.rs records it.
fn record_claim(m: &mut WorkerMetrics, l: &mut WorkerLedger, batch: i64, n: i64) {
    let us = micros(Duration::from_micros(350 + (n % 97) as u64));
    m.claim_latency.saturating_record(us);
    // The .hlog's per-second split: a new second every 10,000 claims here, more often
    // than a worker sees one at 2,000 claims/s.
    m.claim_seconds.record((n / 10_000) as usize, us);
    for j in 0..batch {
        l.claim(n * batch + j, n as u64 * 1000, 0);
        m.queue_wait.saturating_record(1000 + (j as u64 * 37));
    }
    bump(&mut m.claimed_per_s, (n / 10_000) as usize, batch as u32);
    m.counts.claim_calls += 1;
}

fn ledgers(workers: u32, jobs_per_worker: i64) -> Vec<WorkerLedger> {
    (0..workers)
        .map(|w| {
            let mut l = WorkerLedger::new(w);
            for i in 0..jobs_per_worker {
                let job = i * workers as i64 + w as i64;
                l.claim(job, i as u64 * 100, 0);
                l.execute(
                    job,
                    i as u64 * 100 + 55,
                    (0, i * 100 + 20, i * 100 + 50, true),
                );
                l.release(job, i as u64 * 100 + 60);
            }
            l
        })
        .collect()
}

/// What [`ledgers`] records, as each worker hands it over: one chunk per 50 ms of the
/// trial's time (500 jobs at 100 ns each here), sources interleaved.
fn chunks(workers: u32, jobs_per_worker: i64) -> Vec<Chunk> {
    let per = 500;
    let mut out = Vec::new();
    for from in (0..jobs_per_worker).step_by(per) {
        for w in 0..workers {
            let mut events = Vec::with_capacity(per * 3);
            for i in from..(from + per as i64).min(jobs_per_worker) {
                let job = i * workers as i64 + w as i64;
                let t = i as u64 * 100;
                let ev = |t_ns, kind| Event {
                    job,
                    t_ns,
                    worker: w,
                    kind,
                };
                events.push(ev(t, EventKind::Claim { attempt: 0 }));
                let run = Execution {
                    job,
                    worker: w,
                    attempt: 0,
                    started_us: i * 100 + 20,
                    finished_us: i * 100 + 50,
                    ok: true,
                    in_doubt: false,
                };
                events.push(ev(t + 55, EventKind::Run(run)));
                events.push(ev(t + 60, EventKind::Release));
            }
            let low_water_ns = (from as u64 + per as u64) * 100;
            out.push(Chunk {
                source: w,
                events,
                low_water_ns,
            });
        }
    }
    out
}

fn benches(c: &mut Criterion) {
    for batch in [1i64, 10] {
        c.bench_function(&format!("record one claim of batch {batch}"), |b| {
            let mut m = WorkerMetrics::default();
            let mut l = WorkerLedger::new(0);
            let mut n = 0i64;
            b.iter(|| {
                n += 1;
                record_claim(&mut m, &mut l, batch, black_box(n));
            });
        });
    }
    // 16 workers x 62,500 jobs x (2 events + 1 execution): a long, busy trial.
    let big = ledgers(16, 62_500);
    c.bench_function("analyse ledger, 1M jobs / 2M events + 1M executions", |b| {
        b.iter_batched(
            || big.clone(),
            |l| black_box(analyse(l)),
            BatchSize::LargeInput,
        )
    });
    // The same trial as the workers hand it to the streaming tally: 50 ms chunks.
    let chunks = chunks(16, 62_500);
    c.bench_function("tally ledger streamed, 1M jobs in 50 ms chunks", |b| {
        b.iter_batched(
            || chunks.clone(),
            |chunks| {
                let mut t = Tally::new(0..16, false);
                for c in chunks {
                    t.take(c);
                }
                black_box(t.finish())
            },
            BatchSize::LargeInput,
        )
    });
    let parts: Vec<WorkerMetrics> = (0..16)
        .map(|w| {
            let mut m = WorkerMetrics::default();
            let mut l = WorkerLedger::new(w);
            for n in 0..10_000 {
                record_claim(&mut m, &mut l, 10, n);
            }
            m
        })
        .collect();
    c.bench_function("merge 16 workers' metrics", |b| {
        b.iter(|| {
            let mut all = WorkerMetrics::default();
            for p in &parts {
                all.merge(p);
            }
            black_box(all)
        })
    });
}

criterion_group!(recording, benches);
criterion_main!(recording);
