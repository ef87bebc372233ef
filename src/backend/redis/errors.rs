//! Redis's errors as the runner classifies them.

use crate::backend::{BackendError, ErrorKind};

/// A Redis command's failure as the runner classifies it: a lost or refused connection
/// ends the worker's connection (it reconnects), anything else ends the trial. Redis
/// has no deadlocks or lock timeouts to retry.
pub(super) fn error(what: &'static str, e: redis::RedisError) -> BackendError {
    let lost = e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error();
    let kind = if lost {
        ErrorKind::ConnectionLost
    } else {
        ErrorKind::Other
    };
    BackendError::query(what, kind, e.code().map(str::to_string), e.to_string())
}
