//! The backend vocabulary: which database engines claimbench drives. It sits beside
//! `strategy.rs`, outside `backend/`, so that `workload` (which names backends in
//! `matrix.backends`) and `backend` (which implements them) do not import each other.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A database engine claimbench can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    Postgres,
    Mysql,
    Mssql,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Postgres => "postgres",
            BackendKind::Mysql => "mysql",
            BackendKind::Mssql => "mssql",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
