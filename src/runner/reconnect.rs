//! Reopening a connection the server ended (an injected kill or a restart): one
//! jittered, doubling back-off for the workers and for the tasks beside them.

use crate::backend::{BackendError, ErrorKind, Session};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Opens a new connection in the role of the one that was lost; called on the task's
/// own thread, so a worker's new connection has its driver beside it.
pub type Connector<S> =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<S, BackendError>> + Send>> + Send + Sync>;

/// The first pause between attempts; it doubles up to [`MAX_PAUSE`], each drawn between
/// half and all of it, so that the connections one kill ended do not all knock at once.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MAX_PAUSE: Duration = Duration::from_secs(1);
/// A task that cannot reconnect for this long ends the trial with the last error: longer
/// than a restart of any server worth benchmarking.
const GIVE_UP: Duration = Duration::from_secs(60);

/// Tries `connect` until it opens, pausing between attempts; returns the connection and
/// how long the task was without one (from `lost_at`).
pub async fn reconnect<S>(
    connect: &Connector<S>,
    rng: &mut SmallRng,
    lost_at: Instant,
) -> Result<(S, Duration), BackendError> {
    let mut pause = FIRST_PAUSE;
    loop {
        match connect().await {
            Ok(s) => return Ok((s, lost_at.elapsed())),
            Err(e) if lost_at.elapsed() >= GIVE_UP => return Err(e),
            Err(_) => {
                tokio::time::sleep(pause.mul_f64(0.5 + 0.5 * rng.r#gen::<f64>())).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
        }
    }
}

/// A background task's session (sampler, producer, rescuer, killer): when the server
/// ends it and the workload breaks connections on purpose, the call that noticed
/// reconnects and reports nothing, and the task skips or repeats that step.
pub struct Resilient<S> {
    session: S,
    connect: Option<Connector<S>>,
    rng: SmallRng,
}

impl<S: Session> Resilient<S> {
    pub fn new(session: S, connect: Option<Connector<S>>) -> Resilient<S> {
        Resilient {
            session,
            connect,
            rng: SmallRng::seed_from_u64(0x7265_636f_6e6e),
        }
    }

    /// `f` on the session: `Some` of its value, or `None` after a lost connection that
    /// was reopened. Without a connector, a lost connection is an error like any other.
    pub async fn call<T>(
        &mut self,
        f: impl AsyncFnOnce(&mut S) -> Result<T, BackendError>,
    ) -> Result<Option<T>, BackendError> {
        match f(&mut self.session).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind() == ErrorKind::ConnectionLost => {
                let Some(connect) = &self.connect else {
                    return Err(e);
                };
                let (s, _) = reconnect(connect, &mut self.rng, Instant::now()).await?;
                self.session = s;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}
