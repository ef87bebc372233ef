//! Connection poolers between the workers and PostgreSQL: how a pooler hands out server
//! connections, which decides what session state a worker may rely on. In transaction
//! mode a worker's consecutive transactions may run on different server connections, so
//! named prepared statements, `SET` without `LOCAL`, session advisory locks and `LISTEN`
//! do not follow it; in session mode a client keeps one server connection until it
//! disconnects.

use serde::{Deserialize, Serialize};

/// What claimbench sends a pooler and its admin console (PgBouncer's), by step.
pub const CONSOLE_SQL: &str = crate::statements::migration!("postgres", "pooler.sql");

/// A step of [`CONSOLE_SQL`] as PgBouncer's console takes it: without its comment lines
/// (the console parses no comments, and names the whole text an invalid command).
pub fn console_text(step: &str) -> String {
    let lines: Vec<&str> = step
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect();
    lines.join("\n").trim().to_string()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolMode {
    Session,
    Transaction,
}

impl PoolMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PoolMode::Session => "session",
            PoolMode::Transaction => "transaction",
        }
    }

    pub fn named(s: &str) -> Option<PoolMode> {
        match s {
            "session" => Some(PoolMode::Session),
            "transaction" => Some(PoolMode::Transaction),
            _ => None,
        }
    }
}

impl std::fmt::Display for PoolMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The pooler claimbench starts in front of the embedded PostgreSQL
/// (`[topology] pooler`): its mode and how many server connections it opens per
/// database and user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pooler {
    pub mode: PoolMode,
    pub pool_size: u32,
}

/// The most server connections a pool may be given: far past what a loopback server
/// on one host serves, and under the embedded server's max_connections.
pub const MAX_POOL_SIZE: u32 = 200;

/// A pooler of the person's the workers went through (`--pooler`), as the run found it:
/// claimbench reads it (its admin console, when given) and never changes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TheirPooler {
    /// host:port, as given (no user or password: a URL's secrets stay out of results).
    pub address: String,
    pub mode: PoolMode,
    /// The server connections its pool had, as its admin console reported them;
    /// `None` without `--pooler-admin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_size: Option<u32>,
}
