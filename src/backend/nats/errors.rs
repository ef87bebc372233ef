//! NATS's errors as the runner classifies them.

use crate::backend::{BackendError, ErrorKind};

/// What an async-nats error says when its request never reached a server that could
/// answer: each operation has its own error type, and all of them print these.
const CONNECTION_LOST: [&str; 5] = [
    "timed out",
    "no responders",
    "disconnected",
    "connection",
    "broken pipe",
];

/// A failed call as the runner classifies it: a request that timed out or found no
/// server (the server restarting, the connection gone) ends the worker's connection,
/// which reconnects once the server answers; anything else ends the trial. JetStream
/// has no deadlocks or lock timeouts to retry.
pub(crate) fn error(what: &'static str, e: impl std::fmt::Display) -> BackendError {
    let message = e.to_string();
    let lower = message.to_ascii_lowercase();
    let kind = match CONNECTION_LOST.iter().any(|m| lower.contains(m)) {
        true => ErrorKind::ConnectionLost,
        false => ErrorKind::Other,
    };
    BackendError::query(what, kind, None, message)
}

/// Whether a stream lookup or deletion failed only because the stream does not exist.
pub(crate) fn no_such_stream(e: &async_nats::jetstream::context::GetStreamError) -> bool {
    use async_nats::jetstream::ErrorCode;
    use async_nats::jetstream::context::GetStreamErrorKind;
    matches!(e.kind(), GetStreamErrorKind::JetStream(j) if j.error_code() == ErrorCode::STREAM_NOT_FOUND)
}
