//! The harness watching itself: one probe per worker thread asks to wake every few
//! milliseconds and records how late it woke. A worker whose reply has arrived but whose
//! thread is busy elsewhere (or not scheduled by the OS) is late by as much, and that
//! lateness lands in claim latency as if the database had spent it; a high p99 here means
//! the latency figures measure the client, not the server.

use super::Shared;
use crate::metrics::{micros, new_histogram};
use hdrhistogram::Histogram;
use std::sync::Arc;
use std::time::Duration;

/// How often a probe asks to wake. Each wake is a context switch for a thread that would
/// otherwise sleep until its next reply: every 5 ms the probes cost 7 µs more client CPU
/// per claim than every 100 ms (64 against 57 µs; 4 workers, batch 10, three runs each).
/// At 50 ms they wake a tenth as often as at 5 ms, and a 5 s trial still gets 100
/// readings per thread.
const PERIOD: Duration = Duration::from_millis(50);

/// Records scheduling delay on the current thread's runtime until the trial stops.
pub async fn probe(shared: Arc<Shared>) -> Histogram<u64> {
    let mut h = new_histogram();
    while !shared.stopping() {
        let deadline = tokio::time::Instant::now() + PERIOD;
        tokio::time::sleep_until(deadline).await;
        // Tokio's timer wheel has millisecond slots: up to 1 ms late is on time.
        let late = tokio::time::Instant::now().saturating_duration_since(deadline);
        h.saturating_record(micros(late).max(1));
    }
    h
}
