//! The servers the tests use: the one CLAIMBENCH_PG_URL or CLAIMBENCH_MYSQL_URL names,
//! or else a throw-away server this test process starts on first use (the embedded
//! PostgreSQL and the embedded MariaDB, as `claimbench run` starts them) and stops and
//! removes when the process exits. A database test therefore runs wherever the server is
//! installed, with nothing to start by hand, never skips, and fails when neither can be
//! had.

use claimbench::embedded::EmbeddedPostgres;
use claimbench::embedded::mariadb::EmbeddedMariadb;
use std::sync::{Mutex, OnceLock};

type Slot<T> = OnceLock<Mutex<Option<T>>>;

static PG: Slot<EmbeddedPostgres> = OnceLock::new();
static MARIADB: Slot<EmbeddedMariadb> = OnceLock::new();

/// Stops the throw-away servers at process exit: the test harness exits without running
/// statics' destructors, and a running server would outlive it.
extern "C" fn stop_embedded() {
    fn stop<T>(slot: &Slot<T>) {
        if let Some(cell) = slot.get()
            && let Ok(mut server) = cell.lock()
        {
            server.take();
        }
    }
    stop(&PG);
    stop(&MARIADB);
}

/// `var`'s URL when set, else `url` of the server in `slot`, started on first use.
fn url_of<T, E: std::fmt::Display>(
    var: &str,
    slot: &'static Slot<T>,
    start: impl FnOnce() -> Result<T, E>,
    url: impl FnOnce(&T) -> String,
) -> String {
    if let Ok(url) = std::env::var(var)
        && !url.is_empty()
    {
        return url;
    }
    let cell = slot.get_or_init(|| {
        let server = start().unwrap_or_else(|e| {
            panic!("{var} is not set and the throw-away server did not start: {e}")
        });
        // SAFETY: atexit only records the function; running it twice is harmless.
        unsafe { libc::atexit(stop_embedded) };
        Mutex::new(Some(server))
    });
    url(cell
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .expect("stopped only at exit"))
}

/// The PostgreSQL test server's URL.
pub fn pg_url() -> String {
    url_of(
        "CLAIMBENCH_PG_URL",
        &PG,
        || EmbeddedPostgres::start(&Default::default()),
        EmbeddedPostgres::url,
    )
}

/// The MySQL/MariaDB test server's URL: the embedded MariaDB's `root`, as
/// CLAIMBENCH_MYSQL_URL usually is (the tests inspect lock tables and end connections
/// the way an operator would).
pub fn mysql_url() -> String {
    url_of(
        "CLAIMBENCH_MYSQL_URL",
        &MARIADB,
        || EmbeddedMariadb::start_single("claimbench"),
        EmbeddedMariadb::admin_url,
    )
}
