//! How a MySQL or MariaDB error becomes a [`BackendError`]: the server's codes the runner
//! acts on (a deadlock is retried, a lost connection reconnected), and the one code a
//! Galera node means differently from a single server.

use crate::backend::{BackendError, ErrorKind};

/// MySQL error codes the runner acts on.
pub(super) const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
pub(super) const ER_LOCK_DEADLOCK: u16 = 1213;
pub(super) const ER_SERVER_SHUTDOWN: u16 = 1053;
pub(super) const ER_CONNECTION_KILLED: u16 = 1927;
pub(super) const ER_QUERY_INTERRUPTED: u16 = 1317;
/// `KILL` of a connection id that no longer exists.
pub(super) const ER_NO_SUCH_THREAD: u16 = 1094;
pub(super) const ER_BAD_DB_ERROR: u16 = 1049;
pub(super) const ER_UNKNOWN_SYSTEM_VARIABLE: u16 = 1193;
pub(super) const ER_ACCESS_DENIED: u16 = 1045;
pub(super) const ER_DBACCESS_DENIED: u16 = 1044;

pub(super) fn query_error(what: &'static str, e: mysql_async::Error) -> BackendError {
    let (kind, code, message) = match &e {
        mysql_async::Error::Server(s) => (
            match s.code {
                ER_LOCK_DEADLOCK => ErrorKind::Deadlock,
                ER_LOCK_WAIT_TIMEOUT => ErrorKind::LockTimeout,
                ER_SERVER_SHUTDOWN | ER_CONNECTION_KILLED | ER_QUERY_INTERRUPTED => {
                    ErrorKind::ConnectionLost
                }
                _ => ErrorKind::Other,
            },
            Some(s.state.clone()),
            format!("{} (MySQL error {})", s.message, s.code),
        ),
        other if other.is_fatal() => (ErrorKind::ConnectionLost, None, other.to_string()),
        other => (ErrorKind::Other, None, other.to_string()),
    };
    BackendError::query(what, kind, code, message)
}

/// A worker session's error: [`query_error`], except that on a Galera node a
/// brute-force abort (a replicated write set taking the row locks of this session's open
/// transaction) interrupts the statement it finds running with error 1317, which a
/// single server gives only for KILL QUERY: there the connection lives on and the
/// transaction was rolled back, so it is retried as a deadlock is.
pub(super) fn session_error(
    cluster: bool,
    what: &'static str,
    e: mysql_async::Error,
) -> BackendError {
    match &e {
        mysql_async::Error::Server(s) if cluster && s.code == ER_QUERY_INTERRUPTED => {
            BackendError::query(
                what,
                ErrorKind::Deadlock,
                Some(s.state.clone()),
                format!(
                    "{} (MySQL error {}: a brute-force abort by the cluster)",
                    s.message, s.code
                ),
            )
        }
        _ => query_error(what, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Error 1317 is a brute-force abort on a Galera node (retried) and a killed query
    /// on one server (the connection's end, as before).
    #[test]
    fn an_interrupted_statement_is_a_retry_on_a_cluster_only() {
        let interrupted = || {
            mysql_async::Error::Server(mysql_async::ServerError {
                code: ER_QUERY_INTERRUPTED,
                message: "Query execution was interrupted".into(),
                state: "70100".into(),
            })
        };
        let on_cluster = session_error(true, "claim", interrupted());
        assert!(on_cluster.is_retryable(), "{on_cluster}");
        assert!(
            on_cluster.to_string().contains("brute-force abort"),
            "{on_cluster}"
        );
        let alone = session_error(false, "claim", interrupted());
        assert_eq!(alone.kind(), ErrorKind::ConnectionLost);
    }
}
