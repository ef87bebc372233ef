//! Files a test looks for after a run: every file below a folder.

use std::path::{Path, PathBuf};

/// Every file below `dir`, at any depth (none when it cannot be read).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}
