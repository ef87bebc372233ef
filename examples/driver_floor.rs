//! The driver's floor: a claim loop with tokio-postgres and nothing of claimbench's
//! around it, to tell what the client costs per claim because of the driver from what
//! it costs because of the harness (benches/driver_floor.sh runs it beside pgbench and
//! claimbench on the same statement; docs/harness-overhead.md has the numbers).
//!
//! It runs the claim as claimbench's claim-only mode does — the same prepared statement,
//! its rows streamed and the id, attempt and queue wait read from each, one
//! current-thread runtime per thread with the workers and their connections spread over
//! them — and records nothing: no latency, no ledger, no tally.
//!
//!   cargo run --release --example driver_floor -- URL SQL_FILE WORKERS SECONDS BATCH [THREADS]
//!
//! Prints `claims claims_per_s cpu_us_per_claim` (the process's CPU, user and system,
//! over the claiming only, from getrusage).

use futures_util::TryStreamExt;
use std::time::{Duration, Instant};
use tokio_postgres::types::{ToSql, Type};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 6 {
        eprintln!("usage: driver_floor URL SQL_FILE WORKERS SECONDS BATCH [THREADS]");
        std::process::exit(2);
    }
    let number = |i: usize, what: &str| -> f64 {
        args[i].parse().unwrap_or_else(|_| {
            eprintln!("{what} must be a number, not {:?}", args[i]);
            std::process::exit(2)
        })
    };
    let url = args[1].clone();
    let sql = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", args[2]);
        std::process::exit(2)
    });
    let workers = number(3, "WORKERS") as usize;
    let seconds = number(4, "SECONDS");
    let batch = number(5, "BATCH") as i64;
    let threads = args
        .get(6)
        .map_or(2, |_| number(6, "THREADS") as usize)
        .max(1);

    // Every connection is open and prepared before the clock starts, as claimbench's
    // sessions are before its trial's.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let (go_tx, go_rx) = tokio::sync::watch::channel(None::<Instant>);
    let joins: Vec<_> = (0..threads)
        .map(|t| {
            let (url, sql, ready, go) = (url.clone(), sql.clone(), ready_tx.clone(), go_rx.clone());
            let mine = (0..workers).filter(|i| i % threads == t).count();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_io()
                    .enable_time()
                    .build()
                    .expect("a runtime");
                rt.block_on(async move {
                    let loops: Vec<_> = (0..mine)
                        .map(|_| {
                            let (url, sql, ready, go) =
                                (url.clone(), sql.clone(), ready.clone(), go.clone());
                            tokio::spawn(async move {
                                worker(&url, &sql, batch, seconds, ready, go).await
                            })
                        })
                        .collect();
                    let mut claims = 0u64;
                    for l in loops {
                        claims += l.await.expect("a worker");
                    }
                    claims
                })
            })
        })
        .collect();
    drop(ready_tx);
    for _ in 0..workers {
        if ready_rx.recv().is_err() {
            std::process::exit(1);
        }
    }
    let cpu_before = cpu_us();
    let start = Instant::now();
    let _ = go_tx.send(Some(start));
    let claims: u64 = joins.into_iter().map(|j| j.join().expect("a thread")).sum();
    let cpu = cpu_us() - cpu_before;
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{claims} {:.1} {:.1}",
        claims as f64 / wall,
        cpu as f64 / claims.max(1) as f64
    );
}

/// One worker: connect, prepare, then claim until `seconds` after the start.
async fn worker(
    url: &str,
    sql: &str,
    batch: i64,
    seconds: f64,
    ready: std::sync::mpsc::Sender<()>,
    mut go: tokio::sync::watch::Receiver<Option<Instant>>,
) -> u64 {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| {
            eprintln!("cannot connect to the server: {e}");
            std::process::exit(1)
        });
    tokio::spawn(connection);
    client
        .batch_execute("SET search_path = claimbench")
        .await
        .expect("search_path");
    let statement = client.prepare(sql).await.unwrap_or_else(|e| {
        eprintln!("cannot prepare the statement: {e}");
        std::process::exit(1)
    });
    let column = |name: &str| statement.columns().iter().position(|c| c.name() == name);
    let (id, attempt, wait) = (
        column("id").expect("an id column"),
        column("attempt_count"),
        column("queue_wait_us"),
    );
    let (b8, b4) = (batch, batch as i32);
    let worker_id = String::from("floor");
    let batch_param: &(dyn ToSql + Sync) = match statement.params()[0] {
        Type::INT4 => &b4,
        _ => &b8,
    };
    let _ = ready.send(());
    let start = loop {
        if let Some(at) = *go.borrow() {
            break at;
        }
        if go.changed().await.is_err() {
            return 0;
        }
    };
    let end = start + Duration::from_secs_f64(seconds);
    let mut claims = 0u64;
    let mut seen = 0i64;
    while Instant::now() < end {
        let params: [&(dyn ToSql + Sync); 2] = [batch_param, &worker_id];
        let rows = client
            .query_raw(&statement, params)
            .await
            .expect("the claim");
        let mut rows = std::pin::pin!(rows);
        while let Some(r) = rows.try_next().await.expect("a row") {
            let job: i64 = r.try_get(id).unwrap_or(0);
            let tries: i32 = attempt.and_then(|i| r.try_get(i).ok()).unwrap_or(0);
            let waited: i64 = wait.and_then(|i| r.try_get(i).ok()).unwrap_or(-1);
            seen = seen.wrapping_add(job ^ i64::from(tries) ^ waited);
        }
        claims += 1;
    }
    std::hint::black_box(seen);
    claims
}

/// The process's CPU time so far (user and system), µs.
fn cpu_us() -> u64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(u.ru_utime) + us(u.ru_stime)
}
