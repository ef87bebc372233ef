//! The threads workers run on: each a single-threaded tokio runtime that owns some
//! workers *and their connections*. On a shared work-stealing runtime a worker's query
//! hops to the thread polling its connection and the reply hops back, a cross-thread
//! wake-up per round trip; measured side by side with pgbench on the same statement, that
//! cost the client about 7 µs of CPU per claim, taken from the server on a host they
//! share (docs/harness-overhead.md). Here a query, its connection task and the reply stay
//! on one thread, as in pgbench's own threads (`-j`).

use std::future::Future;
use std::thread::JoinHandle;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// A fixed set of worker threads for a run; worker `i` of a trial runs on thread
/// `i mod n`, where n is the thread count or the trial's worker count if smaller.
pub struct WorkerThreads {
    handles: Vec<Handle>,
    stops: Vec<oneshot::Sender<()>>,
    joins: Vec<JoinHandle<()>>,
}

impl WorkerThreads {
    /// Starts `n` threads (at least one).
    pub fn start(n: usize) -> std::io::Result<WorkerThreads> {
        let mut threads = WorkerThreads {
            handles: Vec::new(),
            stops: Vec::new(),
            joins: Vec::new(),
        };
        for i in 0..n.max(1) {
            // Timers and sockets. Enabling sockets brings tokio's signal and, with its
            // `process` feature, process drivers too, polled on every park: the
            // process driver's orphan reaping (a lock shared by every runtime) was
            // 0.5 µs of each claim on the worker threads (perf record, claim-only,
            // batch 10), so claimbench builds tokio without that feature (it starts
            // its servers with std::process). Ctrl-C is the main runtime's.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()?;
            let (stop, stopped) = oneshot::channel::<()>();
            threads.handles.push(runtime.handle().clone());
            threads.stops.push(stop);
            threads.joins.push(
                std::thread::Builder::new()
                    .name(format!("claimbench-workers-{i}"))
                    .spawn(move || {
                        // Drives every task spawned onto this runtime until the run
                        // ends; dropping the runtime then cancels what is left.
                        runtime.block_on(async {
                            let _ = stopped.await;
                        });
                    })?,
            );
        }
        Ok(threads)
    }

    /// The number of threads a run starts when not told: one per core this process may
    /// use, as pgbench is usually given (`-j`). Measured side by side with pgbench on 2
    /// cores (docs/harness-overhead.md): one thread for 4 workers at batch 1 reached
    /// 0.91x pgbench's claims/s, two threads 1.00x; at 16 workers both matched it.
    pub fn default_count() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// Threads a trial of `workers` workers uses.
    pub fn used(&self, workers: usize) -> usize {
        self.handles.len().min(workers.max(1))
    }

    /// Runs `task` on the thread of worker `i` of a trial of `workers` workers.
    pub fn spawn<F>(&self, i: usize, workers: usize, task: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handles[i % self.used(workers)].spawn(task)
    }
}

impl Drop for WorkerThreads {
    fn drop(&mut self) {
        for stop in self.stops.drain(..) {
            let _ = stop.send(());
        }
        for join in self.joins.drain(..) {
            let _ = join.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_worker_and_what_it_spawns_stay_on_its_thread() {
        let threads = WorkerThreads::start(2).unwrap();
        let mut names = Vec::new();
        for i in 0..4 {
            let here = threads
                .spawn(i, 4, async {
                    // A task spawned from a worker (a connection's driver) lands on the
                    // worker's own runtime, so on its thread.
                    let inner = tokio::spawn(async { std::thread::current().id() })
                        .await
                        .unwrap();
                    (std::thread::current().name().map(String::from), inner)
                })
                .await
                .unwrap();
            names.push(here);
        }
        let name = |i: usize| names[i].0.clone().unwrap();
        assert_eq!(name(0), "claimbench-workers-0");
        assert_eq!(name(1), "claimbench-workers-1");
        assert_eq!(name(2), name(0));
        assert_eq!(name(3), name(1));
        assert_ne!(
            names[0].1, names[1].1,
            "inner tasks ran on their workers' threads"
        );
        assert_eq!(threads.used(1), 1);
    }
}
