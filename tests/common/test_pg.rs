//! The PostgreSQL the tests use: the server CLAIMBENCH_PG_URL names, or else a
//! throw-away cluster this test process starts on first use (the embedded default, as
//! `claimbench run` starts it) and stops and removes when the process exits. A test that
//! needs PostgreSQL therefore runs wherever PostgreSQL is installed, never skips, and
//! fails when neither can be had.

use claimbench::embedded::EmbeddedPostgres;
use std::sync::{Mutex, OnceLock};

static EMBEDDED: OnceLock<Mutex<Option<EmbeddedPostgres>>> = OnceLock::new();

/// Stops the embedded cluster at process exit: the test harness exits without running
/// statics' destructors, and a running postmaster would outlive it.
extern "C" fn stop_embedded() {
    if let Some(cell) = EMBEDDED.get()
        && let Ok(mut pg) = cell.lock()
    {
        pg.take();
    }
}

/// The URL of the test server.
pub fn pg_url() -> String {
    if let Ok(url) = std::env::var("CLAIMBENCH_PG_URL")
        && !url.is_empty()
    {
        return url;
    }
    let cell = EMBEDDED.get_or_init(|| {
        let pg = EmbeddedPostgres::start(&Default::default()).unwrap_or_else(|e| {
            panic!("CLAIMBENCH_PG_URL is not set and the embedded PostgreSQL did not start: {e}")
        });
        // SAFETY: atexit only records the function; it runs once, at exit.
        unsafe { libc::atexit(stop_embedded) };
        Mutex::new(Some(pg))
    });
    cell.lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .expect("stopped only at exit")
        .url()
}
