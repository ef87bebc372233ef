//! The network between the workers and the server (`[[matrix]] network`): a delaying
//! proxy in front of the server for the trial's worker connections only (the sampler,
//! producer, rescuer and the control connection go directly, so the evidence is not
//! slowed by the network under test), and a measurement of what it actually adds.

use crate::backend::{Backend, BackendError, Session};
use crate::netdelay::{Delay, DelayProxy};
use crate::results::NetworkProbe;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Round trips timed on each path.
const PROBES: usize = 20;

/// A running proxy for one trial and what it measured; the proxy closes when this is
/// dropped.
pub(super) struct Route {
    _proxy: DelayProxy,
    pub via: SocketAddr,
    pub probe: NetworkProbe,
}

/// Starts the proxy in front of `backend`'s worker address and times a trivial
/// statement directly and through it.
pub(super) async fn route<B: Backend>(backend: &B, delay: Delay) -> Result<Route, BackendError> {
    let what = "put the network delay in front of the workers";
    let upstream = backend.worker_address().ok_or_else(|| {
        BackendError::other(
            what,
            "the target has no TCP address to put a proxy in front of (a Unix socket?); give host and port",
        )
    })?;
    let proxy = DelayProxy::start(upstream, delay)
        .map_err(|e| BackendError::other(what, format!("cannot start the proxy: {e}")))?;
    let via = proxy.addr();
    let direct = median_round_trip(backend, None).await?;
    let through = median_round_trip(backend, Some(via)).await?;
    Ok(Route {
        _proxy: proxy,
        via,
        probe: NetworkProbe {
            configured: crate::netdelay::label(&delay),
            configured_ms: delay.rtt.as_secs_f64() * 1e3,
            direct_ms: direct,
            through_ms: through,
            added_ms: through - direct,
        },
    })
}

/// The median of [`PROBES`] round trips (BEGIN, then ROLLBACK: two statements, halved)
/// on a new connection, ms.
async fn median_round_trip<B: Backend>(
    backend: &B,
    via: Option<SocketAddr>,
) -> Result<f64, BackendError> {
    let mut s = backend
        .connect_to(
            "claimbench-probe",
            "probe",
            crate::backend::Endpoint::via(via),
        )
        .await?;
    let mut times: Vec<Duration> = Vec::with_capacity(PROBES);
    for _ in 0..PROBES {
        let t = Instant::now();
        s.begin().await?;
        s.end(false).await?;
        times.push(t.elapsed() / 2);
    }
    times.sort_unstable();
    Ok(times[PROBES / 2].as_secs_f64() * 1e3)
}
