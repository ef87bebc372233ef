//! Redis's errors as the runner classifies them.

use crate::backend::{BackendError, ErrorKind};

/// A Redis command's failure as the runner classifies it: a lost or refused connection,
/// or a server still loading its data after a restart (`LOADING`), ends the worker's
/// connection (it reconnects once the server answers), anything else ends the trial.
/// Redis has no deadlocks or lock timeouts to retry.
pub(crate) fn error(what: &'static str, e: redis::RedisError) -> BackendError {
    let lost = e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
        || loading(&e);
    let kind = if lost {
        ErrorKind::ConnectionLost
    } else {
        ErrorKind::Other
    };
    BackendError::query(what, kind, e.code().map(str::to_string), e.to_string())
}

/// The server is up but still loading its data (after a restart): it answers `LOADING`
/// to every command but a few until it is done.
pub(super) fn loading(e: &redis::RedisError) -> bool {
    e.code() == Some("LOADING")
}
