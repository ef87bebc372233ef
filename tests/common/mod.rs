//! Shared set-up for the integration tests: which servers to test against, a schema of
//! the test's own on each, and workloads written inline.
//!
//! A server that is not reachable makes a test skip with a message, unless
//! CLAIMBENCH_REQUIRE_DB is set (CI sets it), in which case the test fails.

#![allow(dead_code)]

use claimbench::backend::postgres::PostgresBackend;
use claimbench::backend::{Backend, DbTarget};
use claimbench::workload::Workload;
use std::path::Path;

pub fn pg_url() -> String {
    std::env::var("CLAIMBENCH_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

fn required() -> bool {
    std::env::var_os("CLAIMBENCH_REQUIRE_DB").is_some_and(|v| !v.is_empty() && v != "0")
}

/// A backend on the test server in a schema named for the test, or `None` (skip) when
/// the server is unreachable and not required.
pub async fn postgres(test: &str) -> Option<PostgresBackend> {
    let url = pg_url();
    let DbTarget::Postgres(config) = DbTarget::parse(&url).expect("CLAIMBENCH_PG_URL parses");
    let schema = format!("cbtest_{test}_{}", std::process::id());
    let backend = PostgresBackend::new(config, url.clone(), &schema);
    match backend.server_info().await {
        Ok(_) => Some(backend),
        Err(e) if !required() => {
            eprintln!("SKIPPED {test}: PostgreSQL not reachable ({e}); set CLAIMBENCH_PG_URL");
            None
        }
        Err(e) => panic!("CLAIMBENCH_REQUIRE_DB is set but PostgreSQL is not reachable: {e}"),
    }
}

/// Drops the test's schema (best effort; a failed test leaves it for inspection).
pub async fn drop_schema(backend: &PostgresBackend) {
    let mut s = backend.connect("cbtest-cleanup", "cleanup").await.unwrap();
    s.client()
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
            backend.schema()
        ))
        .await
        .unwrap();
}

/// A workload from inline TOML; the fields a test does not care about get small defaults.
pub fn workload(population: &str, rest: &str) -> Workload {
    let text = format!(
        "name = \"test\"\nseed = 5\n[population]\n{population}\n{rest}\n{}",
        if rest.contains("[matrix]") {
            ""
        } else {
            "[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [10]\n[trial]\nduration_s = 1\n"
        }
    );
    Workload::parse(Path::new("inline.toml"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}
