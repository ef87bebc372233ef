//! The MySQL/MariaDB the tests use: the server CLAIMBENCH_MYSQL_URL names, or else a
//! throw-away MariaDB this test process starts on first use (the embedded MariaDB, as
//! `claimbench run` starts it) and stops and removes when the process exits. A test that
//! needs MySQL therefore runs wherever MariaDB is installed, with nothing to start by
//! hand, never skips, and fails when neither can be had.
//!
//! The URL is the server's `root`, as CLAIMBENCH_MYSQL_URL usually is: the tests inspect
//! lock tables and end connections the way an operator would.

use claimbench::embedded::mariadb::EmbeddedMariadb;
use std::sync::{Mutex, OnceLock};

static EMBEDDED: OnceLock<Mutex<Option<EmbeddedMariadb>>> = OnceLock::new();

/// Stops the server at process exit: the test harness exits without running statics'
/// destructors, and a running `mariadbd` would outlive it.
extern "C" fn stop_embedded() {
    if let Some(cell) = EMBEDDED.get()
        && let Ok(mut server) = cell.lock()
    {
        server.take();
    }
}

/// The URL of the test server.
pub fn mysql_url() -> String {
    if let Ok(url) = std::env::var("CLAIMBENCH_MYSQL_URL")
        && !url.is_empty()
    {
        return url;
    }
    let cell = EMBEDDED.get_or_init(|| {
        let server = EmbeddedMariadb::start_single().unwrap_or_else(|e| {
            panic!("CLAIMBENCH_MYSQL_URL is not set and the embedded MariaDB did not start: {e}")
        });
        // SAFETY: atexit only records the function; it runs once, at exit.
        unsafe { libc::atexit(stop_embedded) };
        Mutex::new(Some(server))
    });
    cell.lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .expect("stopped only at exit")
        .admin_url()
}
