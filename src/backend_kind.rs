//! The backend vocabulary: which database engines claimbench drives, and what it knows
//! of each besides its SQL, in one table ([`ENGINES`]). It sits outside `backend/`, so
//! that `workload` (which names backends in `matrix.backends`), `session_settings` and
//! the commands read an engine's facts without importing the backends.
//!
//! A fact that differs between engines and is not a statement belongs in a column here,
//! not in a `match` on [`BackendKind`] somewhere else: adding an engine is then one row.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A database engine claimbench can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    Postgres,
    Mysql,
    Mssql,
    /// Redis Streams: a queue that is not a table (a consumer group's deliveries).
    Redis,
    /// NATS JetStream: a work-queue stream and a durable pull consumer.
    Nats,
    /// RabbitMQ: a durable classic queue, consumers with a prefetch, manual acks.
    Rabbitmq,
}

/// One engine's facts.
#[derive(Debug)]
pub struct Engine {
    pub kind: BackendKind,
    /// The name in workloads, the CLI, run.json and `migrations/<name>/`.
    pub name: &'static str,
    /// URL schemes of `--db` that select this engine.
    pub url_schemes: &'static [&'static str],
    /// An example `--db`, for the error that asks for one.
    pub example_url: &'static str,
    /// `--schema` names refused whatever they hold (lower case): system schemas and
    /// the default one users keep their own tables in.
    pub reserved_schemas: &'static [&'static str],
    /// Prefixes of reserved names (lower case).
    pub reserved_prefixes: &'static [&'static str],
    /// Characters a session setting name may hold besides ASCII letters, digits and `_`
    /// (it must start with a letter), and how the error says so.
    pub setting_name_extra: &'static [char],
    pub setting_name_rule: &'static str,
    /// Whether the server binds a session setting's value; where it does not (SQL
    /// Server's `SET`), the value is checked as a plain word.
    pub binds_setting_values: bool,
    /// Whether the driver binds an array of names as one parameter; elsewhere a list
    /// travels as a JSON array in text, which the statement unpacks (`JSON_TABLE`,
    /// `OPENJSON`).
    pub binds_arrays: bool,
    /// Whether claimbench starts a throw-away server of this engine when no `--db`
    /// names one (the embedded default).
    pub embedded: bool,
    /// Whether an existing schema with no objects and no marker may be taken over (SQL
    /// Server, where claimbench drops its own tables but never the schema, and a login
    /// without CREATE SCHEMA needs an administrator to create an empty one for it).
    pub adopts_empty_schema: bool,
    /// Whether the engine runs SQL (claims are statements, with index layouts, session
    /// settings and `prove`); a broker's claim is a delivery, and only its own
    /// techniques run on it.
    pub runs_sql: bool,
    /// A broker's data models (its `index_layouts`: where the queue is, with no index
    /// to choose); empty on a SQL engine, whose layouts are index files. Written out
    /// here (`names`, which defines them, imports this table); a test in `names` holds
    /// the two together.
    pub broker_layouts: &'static [&'static str],
}

/// How many engines there are: the length of every per-engine table.
pub const ENGINE_COUNT: usize = 6;

/// Every engine, in `BackendKind` order.
pub static ENGINES: [Engine; ENGINE_COUNT] = [
    Engine {
        kind: BackendKind::Postgres,
        name: "postgres",
        url_schemes: &["postgres", "postgresql"],
        example_url: "postgres://postgres@127.0.0.1:5432/test",
        reserved_schemas: &["public", "information_schema"],
        reserved_prefixes: &["pg_"],
        // An extension's dotted prefix: `pg_stat_statements.track`.
        setting_name_extra: &['.'],
        setting_name_rule: ", with . for an extension's",
        binds_setting_values: true,
        binds_arrays: true,
        embedded: true,
        adopts_empty_schema: false,
        runs_sql: true,
        broker_layouts: &[],
    },
    Engine {
        kind: BackendKind::Mysql,
        name: "mysql",
        // mysql_async knows only the mysql scheme; MariaDB speaks the same protocol.
        url_schemes: &["mysql", "mariadb"],
        example_url: "mysql://root@127.0.0.1:3306/test",
        reserved_schemas: &["mysql", "sys", "performance_schema", "information_schema"],
        reserved_prefixes: &[],
        setting_name_extra: &[],
        setting_name_rule: "",
        binds_setting_values: true,
        binds_arrays: false,
        embedded: true,
        adopts_empty_schema: false,
        runs_sql: true,
        broker_layouts: &[],
    },
    Engine {
        kind: BackendKind::Mssql,
        name: "mssql",
        url_schemes: &["mssql", "sqlserver"],
        example_url: "mssql://sa:PASSWORD@127.0.0.1:1433/master?trust_server_certificate=true",
        reserved_schemas: &["dbo", "sys", "guest", "information_schema"],
        reserved_prefixes: &["db_"],
        // Options are words: `LOCK_TIMEOUT`, `TRANSACTION ISOLATION LEVEL`.
        setting_name_extra: &[' '],
        setting_name_rule: ", words separated by spaces",
        binds_setting_values: false,
        binds_arrays: false,
        embedded: false,
        adopts_empty_schema: true,
        runs_sql: true,
        broker_layouts: &[],
    },
    Engine {
        kind: BackendKind::Redis,
        name: "redis",
        url_schemes: &["redis"],
        example_url: "redis://127.0.0.1:6379/0",
        // The schema is the prefix of every key claimbench writes (`claimbench:jobs`).
        reserved_schemas: &[],
        reserved_prefixes: &[],
        setting_name_extra: &[],
        setting_name_rule: "",
        binds_setting_values: false,
        binds_arrays: false,
        embedded: true,
        adopts_empty_schema: false,
        runs_sql: false,
        broker_layouts: &["stream", "hash-by-due"],
    },
    Engine {
        kind: BackendKind::Nats,
        name: "nats",
        url_schemes: &["nats"],
        example_url: "nats://127.0.0.1:4222",
        // The schema names claimbench's two streams (`claimbench_jobs`, `claimbench_ledger`)
        // and prefixes their subjects.
        reserved_schemas: &[],
        reserved_prefixes: &[],
        setting_name_extra: &[],
        setting_name_rule: "",
        binds_setting_values: false,
        binds_arrays: false,
        embedded: true,
        adopts_empty_schema: false,
        runs_sql: false,
        broker_layouts: &["work-queue"],
    },
    Engine {
        kind: BackendKind::Rabbitmq,
        name: "rabbitmq",
        // No TLS: claimbench's load goes to loopback, and lapin is built without it.
        url_schemes: &["amqp"],
        example_url: "amqp://guest:guest@127.0.0.1:5672/%2f",
        // The schema prefixes the names of claimbench's queues (`claimbench_jobs`).
        reserved_schemas: &[],
        reserved_prefixes: &["amq."],
        setting_name_extra: &[],
        setting_name_rule: "",
        binds_setting_values: false,
        binds_arrays: false,
        // A node is slow to start and wants its own Erlang distribution ports and
        // cookie: a running server is given by URL (docs/backends.md).
        embedded: false,
        adopts_empty_schema: false,
        runs_sql: false,
        broker_layouts: &["classic-queue"],
    },
];

impl BackendKind {
    pub fn engine(self) -> &'static Engine {
        let e = &ENGINES[self as usize];
        debug_assert_eq!(e.kind, self, "ENGINES is in BackendKind order");
        e
    }

    pub fn as_str(self) -> &'static str {
        self.engine().name
    }

    /// The engine of this name (`postgres`, `mysql`, `mssql`).
    pub fn named(name: &str) -> Option<BackendKind> {
        ENGINES.iter().find(|e| e.name == name).map(|e| e.kind)
    }

    /// The engine a `--db` URL scheme selects.
    pub fn from_url_scheme(scheme: &str) -> Option<BackendKind> {
        ENGINES
            .iter()
            .find(|e| e.url_schemes.contains(&scheme))
            .map(|e| e.kind)
    }

    /// Whether `--schema name` is refused outright on this engine.
    pub fn reserves_schema(self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        let e = self.engine();
        e.reserved_schemas.contains(&lower.as_str())
            || e.reserved_prefixes.iter().any(|p| lower.starts_with(p))
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_kind_order_and_names_round_trip_through_serde() {
        for (i, e) in ENGINES.iter().enumerate() {
            assert_eq!(e.kind as usize, i);
            let json = serde_json::to_string(&e.kind).unwrap();
            assert_eq!(json, format!("\"{}\"", e.name));
            assert_eq!(BackendKind::named(e.name), Some(e.kind));
            for s in e.url_schemes {
                assert_eq!(BackendKind::from_url_scheme(s), Some(e.kind));
            }
        }
        assert_eq!(BackendKind::from_url_scheme("oracle"), None);
    }
}
