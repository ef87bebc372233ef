//! What the single-process embedded servers (Redis, NATS) share: waiting until one is
//! ready while noticing that it exited, and stopping it and removing its files.

use super::{EmbeddedError, last_lines, terminate};
use std::path::Path;
use std::process::Child;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a server may take to be ready.
const READY_WITHIN: Duration = Duration::from_secs(15);

/// Polls `ready` every 50 ms until it says so; fails when `child` exits first or after
/// [`READY_WITHIN`], with the last lines of the server's log at `log`.
pub(super) fn wait_until_ready(
    child: &Mutex<Option<Child>>,
    (what, port): (&'static str, u16),
    log: Option<&Path>,
    mut ready: impl FnMut() -> bool,
) -> Result<(), EmbeddedError> {
    let deadline = Instant::now() + READY_WITHIN;
    loop {
        if ready() {
            return Ok(());
        }
        let exited = child
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten());
        if exited.is_some() || Instant::now() > deadline {
            let text = log
                .and_then(|l| std::fs::read_to_string(l).ok())
                .unwrap_or_default();
            return Err(EmbeddedError::Step {
                step: what,
                detail: format!(
                    "it was not ready on port {port} ({}); its log: {}",
                    exited.map_or("timed out after 15 s".into(), |s| s.to_string()),
                    last_lines(&text, 3)
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its directory.
pub(super) fn stop_and_remove(
    child: &mut Mutex<Option<Child>>,
    dir: &mut Option<tempfile::TempDir>,
) {
    let child = child.get_mut().unwrap_or_else(|p| p.into_inner());
    if let Some(mut child) = child.take() {
        terminate(&mut child, Duration::from_secs(10));
    }
    if let Some(dir) = dir.take() {
        let _ = dir.close();
    }
}
