//! claimbench: a load-testing and benchmark suite for database queue tables with
//! competing consumers. See docs/cli.md for the CLI and
//! docs/architecture.md for the concepts and how the code is laid out.

pub mod analysis;
pub mod backend;
pub mod backend_kind;
pub mod capture;
pub mod custom_layout;
pub mod declared_table;
pub mod embedded;
pub mod input_file;
pub mod invalid;
pub mod ledger;
pub mod markdown;
pub mod metric;
pub mod metrics;
pub mod model;
pub mod names;
pub mod netdelay;
pub mod parallel;
pub mod pooler;
pub mod privileged_sql;
pub mod prove;
pub mod redact;
pub mod report;
pub mod resources;
pub mod results;
pub mod runner;
pub mod session_settings;
pub mod slo;
pub mod statements;
pub mod strategy;
pub mod warnings;
pub mod workload;
