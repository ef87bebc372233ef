//! Reading a file a person or a saved run hands claimbench — a workload, the statement
//! and layout files it names, a run.json, an interval log — so that no such file can
//! hang the process or exhaust its memory.
//!
//! A FIFO blocks its reader until a writer comes, and `/dev/zero` never ends; both look
//! like paths. So a file is opened without blocking, its type is read from the open
//! handle (a link swapped after a check changes nothing), anything but a regular file is
//! refused, and at most a cap is read, which the refusal names. Whether a path stays
//! inside its folder is the caller's rule ([`inside`]), checked before anything is
//! opened.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most read from a workload file.
pub const WORKLOAD_CAP: u64 = 4 << 20;
/// The most read from a declared statement or layout file.
pub const SQL_CAP: u64 = 1 << 20;
/// The most read from a run.json or an interval log.
pub const RESULTS_CAP: u64 = 512 << 20;

/// Why a file was not read; the caller names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Shown, not chained: the message is the whole story, printed once.
    #[error("{0}")]
    Io(std::io::Error),
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("it is larger than {}, the most claimbench reads from {what}", bytes(*.cap))]
    TooLarge { cap: u64, what: &'static str },
    #[error("it is not UTF-8 text")]
    NotText,
}

/// The whole of `path` as text, if it is a regular file of at most `cap` bytes; `what`
/// names the kind of file in the refusal ("a workload file").
pub fn read_text(path: &Path, cap: u64, what: &'static str) -> Result<String, InputError> {
    String::from_utf8(read_bytes(path, cap, what)?).map_err(|_| InputError::NotText)
}

/// [`read_text`] without the UTF-8 check.
pub fn read_bytes(path: &Path, cap: u64, what: &'static str) -> Result<Vec<u8>, InputError> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        // A socket cannot be opened at all (ENXIO): say what it is.
        Err(e) => match std::fs::metadata(path) {
            Ok(m) if !m.file_type().is_file() => {
                return Err(InputError::NotRegular(kind(m.file_type())));
            }
            _ => return Err(InputError::Io(e)),
        },
    };
    let meta = file.metadata().map_err(InputError::Io)?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular(kind(meta.file_type())));
    }
    if meta.len() > cap {
        return Err(InputError::TooLarge { cap, what });
    }
    // The length can grow after the check (a file being written): read one byte past
    // the cap to tell.
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(InputError::Io)?;
    if out.len() as u64 > cap {
        return Err(InputError::TooLarge { cap, what });
    }
    Ok(out)
}

/// What a file that is not a regular one is, in a person's words.
fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// Whether `path`, links resolved, lies in `dir` or below it. A path that cannot be
/// resolved (missing, or a loop) is not inside.
pub fn inside(dir: &Path, path: &Path) -> bool {
    match (dir.canonicalize(), path.canonicalize()) {
        (Ok(d), Ok(f)) => f.starts_with(d),
        _ => false,
    }
}

fn bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{} KiB", n >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("w.toml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, WORKLOAD_CAP, "a workload file").unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read_text(Path::new("/dev/zero"), SQL_CAP, "a statement file").unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        let link = dir.path().join("zero.sql");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(matches!(
            read_text(&link, SQL_CAP, "x"),
            Err(InputError::NotRegular("a device"))
        ));
        assert!(matches!(
            read_text(dir.path(), SQL_CAP, "x"),
            Err(InputError::NotRegular("a directory"))
        ));
    }

    #[test]
    fn a_file_over_the_cap_is_refused_naming_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.sql");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        let e = read_text(&big, 1024, "a statement file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is larger than 1 KiB, the most claimbench reads from a statement file"
        );
        assert_eq!(read_text(&big, 2048, "x").unwrap().len(), 2048);
        std::fs::write(&big, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_text(&big, 10, "x"), Err(InputError::NotText)));
    }

    #[test]
    fn inside_resolves_links_and_refuses_what_cannot_be_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("a.sql"), "x").unwrap();
        std::fs::write(dir.path().join("b.sql"), "x").unwrap();
        assert!(inside(&sub, &sub.join("a.sql")));
        assert!(!inside(&sub, &sub.join("../b.sql")));
        std::os::unix::fs::symlink(dir.path().join("b.sql"), sub.join("l.sql")).unwrap();
        assert!(!inside(&sub, &sub.join("l.sql")));
        assert!(!inside(&sub, &sub.join("missing.sql")));
    }
}
