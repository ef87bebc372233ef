//! A long trial in flight, kept on disk as it goes. run.json is written as each cell
//! finishes, and Ctrl-C or SIGTERM write the trial they stop; but a SIGKILL, an
//! out-of-memory kill or a lost host would take an hour-long trial's every second with
//! it. So a trial planned for [`CHECKPOINT_FROM_S`] or more appends, beside its `.hlog`,
//! one line a second (the claims so far) and one per sampler reading (the oldest pending
//! job, the table's or InnoDB's evidence), each flushed as written: the process's death
//! loses at most the line in hand. The file is removed when the trial ends normally,
//! run.json then holding all of it.

use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Trials planned this long (s) or longer keep a checkpoint.
pub const CHECKPOINT_FROM_S: f64 = crate::workload::READ_OVER_TIME_S;

/// The in-flight file of one trial. Writing is best effort: a full disk stops the
/// checkpoint (the file says so by ending), never the trial.
pub struct Checkpoint {
    path: PathBuf,
    file: Mutex<Option<std::io::LineWriter<std::fs::File>>>,
}

/// Its first line: which trial, and when it began (ms since the Unix epoch).
#[derive(Serialize)]
struct Header<'a> {
    trial: &'a str,
    started_unix_ms: u128,
}

impl Checkpoint {
    /// The file for a trial whose `.hlog` goes to `hlog`: the same name with
    /// `.inflight.jsonl`.
    pub fn open(hlog: &Path, trial: &str) -> std::io::Result<Checkpoint> {
        let path = hlog.with_extension("inflight.jsonl");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // A new file: never one (or a link) that was there before.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let c = Checkpoint {
            path,
            file: Mutex::new(Some(std::io::LineWriter::new(file))),
        };
        let started_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        c.write(&Header {
            trial,
            started_unix_ms,
        });
        Ok(c)
    }

    /// Appends `line` as one JSON line; after a failed write, writes nothing more.
    pub fn write<T: Serialize>(&self, line: &T) {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let Some(f) = guard.as_mut() else {
            return;
        };
        let ok = serde_json::to_writer(&mut *f, line).is_ok() && f.write_all(b"\n").is_ok();
        if !ok {
            *guard = None;
        }
    }

    /// The trial ended and its result is in hand: the file has no more to keep, and
    /// nothing is written to it after.
    pub fn finish(&self) {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if guard.take().is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A line a second from the trial's driver: the claims so far.
#[derive(Serialize)]
pub struct Progress {
    pub at_s: f64,
    pub claimed: u64,
}

/// A line per sampler reading.
#[derive(Serialize)]
pub struct Reading<'a> {
    pub at_s: f64,
    pub oldest_pending_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<&'a crate::results::TableSample>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_on_disk_as_written_and_finishing_removes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let c = Checkpoint::open(&dir.path().join("hlog/t.hlog"), "t").unwrap();
        let path = dir.path().join("hlog/t.inflight.jsonl");
        c.write(&Progress {
            at_s: 1.0,
            claimed: 10,
        });
        // Read back while still open: a killed process would leave exactly this.
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["trial"], "t");
        assert_eq!(lines[1]["claimed"], 10);
        c.finish();
        assert!(!path.exists());
    }
}
