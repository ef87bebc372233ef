//! RabbitMQ's errors as the runner classifies them.

use crate::backend::{BackendError, ErrorKind};
use std::time::Duration;

/// The server's reply code when it closes a connection itself (a broker shutting down,
/// `rabbitmqctl close_connection`).
const CONNECTION_FORCED: u16 = 320;

/// A failed call as the runner classifies it: a connection or channel that is no
/// longer open (the server restarted or closed it, the faults' kill) ends the worker's
/// connection, which reconnects once the server answers; a refusal by the server (a
/// queue of another shape, no access) ends the trial. RabbitMQ has no deadlocks or
/// lock timeouts to retry.
pub(crate) fn error(what: &'static str, e: lapin::Error) -> BackendError {
    use lapin::Error as E;
    let lost = match &e {
        E::InvalidChannelState(_)
        | E::InvalidConnectionState(_)
        | E::IOError(_)
        | E::MissingHeartbeatError => true,
        E::ProtocolError(p) => p.get_id() == CONNECTION_FORCED,
        _ => false,
    };
    let kind = match lost {
        true => ErrorKind::ConnectionLost,
        false => ErrorKind::Other,
    };
    BackendError::query(what, kind, None, e.to_string())
}

/// A call that did not finish in time: the server is gone or not answering.
fn timed_out(what: &'static str) -> BackendError {
    BackendError::query(
        what,
        ErrorKind::ConnectionLost,
        None,
        "no answer from the server in time".into(),
    )
}

/// `what` did not finish within `within`: the server is not answering.
pub(crate) async fn within<T>(
    what: &'static str,
    within: Duration,
    f: impl Future<Output = Result<T, BackendError>>,
) -> Result<T, BackendError> {
    tokio::time::timeout(within, f)
        .await
        .map_err(|_| timed_out(what))?
}
