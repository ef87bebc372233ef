//! The subcommands, one module each: each turns what `cli` parsed into domain types, does
//! the work and returns the exit code (`cli::EXIT_CODES`); `main` only dispatches.

pub mod capture;
pub mod compare;
pub mod inspect;
pub mod pooler;
pub mod prove;
pub mod run;
pub mod targets;
mod versus;

use anyhow::Result;
use claimbench::slo::Slo;
use std::fmt::Display;
use std::path::Path;

/// "a, b, c": names, backends or objectives for a message.
pub(crate) fn comma_list<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A results folder stands for the run.json inside it.
pub(crate) fn run_json_path(p: &Path) -> std::path::PathBuf {
    if p.is_dir() {
        p.join("run.json")
    } else {
        p.to_path_buf()
    }
}

/// The folder a run.json is in, where its report files go: `.` for a bare `run.json`.
pub(crate) fn run_folder(run_json: &Path) -> &Path {
    match run_json.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

pub(crate) fn parse_slos(texts: &[String]) -> Result<Vec<Slo>> {
    texts
        .iter()
        .map(|t| Slo::parse(t).map_err(|e| anyhow::anyhow!("--slo {t}: {e}")))
        .collect()
}

/// `--schema`, checked before any connection opens.
pub(crate) fn schema_name(s: &str) -> Result<&str> {
    claimbench::backend::ownership::check_name(s).map_err(anyhow::Error::msg)?;
    Ok(s)
}
