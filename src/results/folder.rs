//! A folder results are written into, which may be someone else's: a CI artifact
//! downloaded and re-rendered with `claimbench report`, a folder of nightly runs read by
//! `history`. Its contents are data. A symbolic link where claimbench writes (the folder
//! itself, a subfolder such as `plots/`, a file such as `summary.md` or its temporary
//! name) would send the write anywhere the person running claimbench can write, so each
//! is refused, naming the path; and every file is written by creating a new temporary
//! file in the folder (which fails on any existing name, a link included) and renaming
//! it over the target, so a reader never sees half a file and nothing is written through
//! a name that was there before.

use super::ResultsError;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A folder claimbench writes in: checked to be a real folder, not a link.
#[derive(Debug, Clone)]
pub struct Folder {
    path: PathBuf,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |reason| ResultsError::Io {
        path: path.to_path_buf(),
        reason,
    }
}

/// The error for a link found where claimbench would write.
fn link(path: &Path) -> ResultsError {
    ResultsError::Io {
        path: path.to_path_buf(),
        reason: std::io::Error::other(
            "is a symbolic link, and claimbench writes results only into real folders and files (give the folder it points to, or remove the link)",
        ),
    }
}

/// Whether `path` exists as a symbolic link (dangling or not).
fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

impl Folder {
    /// `path` as a folder to write in, created (with its parents) if missing; refused
    /// when it is a link or not a folder.
    pub fn open(path: &Path) -> Result<Folder, ResultsError> {
        if is_link(path) {
            return Err(link(path));
        }
        std::fs::create_dir_all(path).map_err(io(path))?;
        Self::checked(path.to_path_buf())
    }

    fn checked(path: PathBuf) -> Result<Folder, ResultsError> {
        let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
        if meta.file_type().is_symlink() {
            return Err(link(&path));
        }
        if !meta.is_dir() {
            return Err(ResultsError::Io {
                reason: std::io::Error::other("is not a folder"),
                path,
            });
        }
        Ok(Folder { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where `name` is inside the folder.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The folder `name` inside this one, created if missing; refused when it is a link.
    /// `name` is one component claimbench chose (`plots`, `hgrm`, a backend's name).
    pub fn sub(&self, name: &str) -> Result<Folder, ResultsError> {
        debug_assert!(!name.contains('/') && name != ".." && name != ".");
        let path = self.path.join(name);
        if is_link(&path) {
            return Err(link(&path));
        }
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(&path)(e)),
        }
        Self::checked(path)
    }

    /// Writes `name` whole: a new temporary file beside it, then a rename over it.
    /// Refused when `name` is a link.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, ResultsError> {
        let (tmp, mut file) = self.temporary(name)?;
        let written = file.write_all(bytes).and_then(|()| file.flush());
        drop(file);
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(&tmp)(e));
        }
        self.commit(&tmp, name)
    }

    /// A new file of its own beside `name`, for a writer that must open a path itself;
    /// [`Folder::commit`] puts it in place.
    pub fn temporary(&self, name: &str) -> Result<(PathBuf, std::fs::File), ResultsError> {
        static N: AtomicU64 = AtomicU64::new(0);
        let target = self.join(name);
        if is_link(&target) {
            return Err(link(&target));
        }
        let tmp = self.join(&format!(
            ".{name}.{}-{}.tmp",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        // create_new: O_CREAT | O_EXCL, which fails on any existing name, a link too.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io(&tmp))?;
        Ok((tmp, file))
    }

    /// Renames the temporary file `tmp` over `name` (a rename replaces a name; it never
    /// writes through a link that took its place).
    pub fn commit(&self, tmp: &Path, name: &str) -> Result<PathBuf, ResultsError> {
        let target = self.join(name);
        if is_link(&target) {
            let _ = std::fs::remove_file(tmp);
            return Err(link(&target));
        }
        if let Err(e) = std::fs::rename(tmp, &target) {
            let _ = std::fs::remove_file(tmp);
            return Err(io(&target)(e));
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn writes_whole_files_and_replaces_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let f = Folder::open(&dir.path().join("run")).unwrap();
        f.write("a.md", b"one").unwrap();
        f.write("a.md", b"two").unwrap();
        assert_eq!(std::fs::read(f.join("a.md")).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(f.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
    }

    #[test]
    fn links_where_it_writes_are_refused_and_nothing_lands_outside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        symlink(outside.join("victim"), run.join("summary.md")).unwrap();
        symlink(&outside, run.join("plots")).unwrap();
        let f = Folder::open(&run).unwrap();
        let e = f.write("summary.md", b"x").unwrap_err().to_string();
        assert!(
            e.contains("summary.md") && e.contains("symbolic link"),
            "{e}"
        );
        let e = f.sub("plots").unwrap_err().to_string();
        assert!(e.contains("plots") && e.contains("symbolic link"), "{e}");
        f.write("report.html", b"x").unwrap();
        let linked_run = dir.path().join("linked");
        symlink(&run, &linked_run).unwrap();
        assert!(Folder::open(&linked_run).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}
