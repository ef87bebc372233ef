//! The built-in strategies: one entry each, with its SQL per backend. Adding a strategy
//! means its statement file(s) under `migrations/<backend>/strategies/` and one entry
//! here; backends run it by its [`Shape`]. Each file's header says where the technique is
//! used and what it promises.

use super::{Colour, Contention, Def, Form, Promises, Shape};
use std::borrow::Cow;

const EVERYTHING: Promises = Promises {
    prevents_duplicates: true,
    respects_max_workers: true,
};

/// Prevents duplicates, but claims by fetch order alone: no per-queue cap.
const NO_DUPLICATES: Promises = Promises {
    prevents_duplicates: true,
    respects_max_workers: false,
};

macro_rules! sql {
    ($backend:literal, $file:literal) => {
        Form::Sql(Cow::Borrowed(crate::statements::migration!(
            $backend,
            concat!("strategies/", $file)
        )))
    };
}

/// No SQL Server server runs here, so a technique is written for it only once its form
/// is pinned by golden tests like production's.
/// Why the advisory techniques have no MySQL form.
const NO_ADVISORY_FOR_MYSQL: &str = "MySQL's GET_LOCK takes named locks, one per name and connection, with no try-lock inside a scan; the technique is PostgreSQL's";
const NOT_FOR_MSSQL: &str = "not written for SQL Server yet; its production claim (UPDLOCK, READPAST with UPDATE ... OUTPUT) is the technique there";

/// Why a SQL technique has no form on a broker: the broker's claim is a delivery.
pub const SQL_ON_A_BROKER: &str = "a SQL technique, and a broker is not a SQL server: redis's claims are redis-streams (a delivery to a consumer group) and redis-cas (a compare-and-set on a record's version), nats's is jetstream (a pull consumer's fetch), rabbitmq's is rabbitmq (a consumer's prefetch)";

/// Why a broker's technique has no form on a SQL engine.
const BROKER_ONLY: &str = "Redis Streams' technique (XREADGROUP, XACK, XAUTOCLAIM): run it on matrix.backends = [\"redis\"]";

/// Why JetStream's technique has no form elsewhere.
const JETSTREAM_ONLY: &str = "NATS JetStream's technique (a durable pull consumer's fetch, ack, nak with a delay; AckWait as the visibility timeout): run it on matrix.backends = [\"nats\"]";

/// Why RabbitMQ's technique has no form elsewhere.
const RABBITMQ_ONLY: &str = "RabbitMQ's technique (a consumer with a prefetch of the batch, manual acks, a dead-letter queue for the last attempt; no visibility timeout): run it on matrix.backends = [\"rabbitmq\"]";

/// Why the key-value store's compare-and-set has no form on a SQL engine.
const KV_ONLY: &str = "a key-value store's compare-and-set on Redis (versioned records, layout hash-by-due): run it on matrix.backends = [\"redis\"]; version-cas is the same claim on a table";

/// Why the lock service has no SQL Server form yet.
const LOCK_SERVICE_NOT_FOR_MSSQL: &str = "written for PostgreSQL and MySQL so far: its read and update are naive's, its lock is Redis's (run it on matrix.backends = [\"postgres\"] or [\"mysql\"])";

/// Lock-hint variants exist where there are lock hints.
const HINTS_ARE_SQL_SERVERS: &str = "a SQL Server lock-hint variant: PostgreSQL and MySQL lock rows only, with no hint to choose the granularity";

pub static REGISTRY: [Def; 21] = [
    Def {
        name: Cow::Borrowed("production"),
        colour: Colour(0x00, 0x72, 0xB2),
        about: Cow::Borrowed(
            "the seed's FetchNextBatch: one locking claim that skips locked rows and caps busy queues",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: EVERYTHING,
        forms: [
            sql!("postgres", "production.sql"),
            sql!("mysql", "production.sql"),
            sql!("mssql", "production.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("naive"),
        colour: Colour(0xCC, 0x79, 0xA7),
        about: Cow::Borrowed(
            "read, then update by id without a check: the read-then-write race (duplicates)",
        ),
        shape: Shape::ReadThenWrite,
        contention: Contention::Ignores,
        promises: Promises {
            prevents_duplicates: false,
            respects_max_workers: false,
        },
        forms: [
            sql!("postgres", "naive.sql"),
            sql!("mysql", "naive.sql"),
            sql!("mssql", "naive.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("waiting"),
        colour: Colour(0xD5, 0x5E, 0x00),
        about: Cow::Borrowed(
            "production's claim with a lock that waits instead of skipping: the convoy",
        ),
        shape: Shape::Claim,
        contention: Contention::Waits,
        promises: EVERYTHING,
        forms: [
            sql!("postgres", "waiting.sql"),
            sql!("mysql", "waiting.sql"),
            sql!("mssql", "waiting.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("conditional"),
        colour: Colour(0x00, 0x9E, 0x73),
        about: Cow::Borrowed(
            "unlocked read, then one conditional update per candidate: lost races, no duplicates",
        ),
        shape: Shape::ReadThenConditional,
        contention: Contention::Rechecks,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "conditional.sql"),
            sql!("mysql", "conditional.sql"),
            sql!("mssql", "conditional.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("version-cas"),
        colour: Colour(0xB8, 0x86, 0x0B),
        about: Cow::Borrowed(
            "unlocked read, then compare-and-set on each row's version (stores with conditional writes, optimistic schedulers): lost races, no duplicates",
        ),
        shape: Shape::VersionCas,
        contention: Contention::Rechecks,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "version-cas.sql"),
            sql!("mysql", "version-cas.sql"),
            sql!("mssql", "version-cas.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("in-subquery"),
        colour: Colour(0x56, 0xB4, 0xE9),
        about: Cow::Borrowed(
            "UPDATE ... WHERE id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED): the common hand-written claim",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "in-subquery.sql"),
            Form::Absent(
                "MySQL and MariaDB reject LIMIT in an IN subquery (error 1235) and an UPDATE that reads its own table (error 1093); production's lock-then-update transaction is their form of it",
            ),
            Form::Absent(NOT_FOR_MSSQL),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("offset-start"),
        colour: Colour(0x88, 0x22, 0x55),
        about: Cow::Borrowed(
            "a skip-locked claim that starts at a random offset among the first K eligible rows (K = 16), so pollers do not all fight over the oldest",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "offset-start.sql"),
            sql!("mysql", "offset-start.sql"),
            sql!("mssql", "offset-start.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: Some(16),
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("sharded"),
        colour: Colour(0x2C, 0x6E, 0x49),
        about: Cow::Borrowed(
            "each worker claims only in its own shards (queues, by a shard map) and keeps the conditional claim for when ownership moves: lost races, no duplicates",
        ),
        shape: Shape::ReadThenConditional,
        contention: Contention::Rechecks,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "sharded.sql"),
            sql!("mysql", "sharded.sql"),
            sql!("mssql", "sharded.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: true,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("sharded-skip-locked"),
        colour: Colour(0x1F, 0x3A, 0x93),
        about: Cow::Borrowed(
            "each worker claims only in its own shards (queues, by a shard map) with a skip-locked claim",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "sharded-skip-locked.sql"),
            sql!("mysql", "sharded-skip-locked.sql"),
            sql!("mssql", "sharded-skip-locked.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: true,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("sharded-read-write"),
        colour: Colour(0xE7, 0x29, 0x8A),
        about: Cow::Borrowed(
            "each worker claims only in its own shards (queues, by a shard map) with a plain read then write: duplicates while a moved shard has two owners",
        ),
        shape: Shape::ReadThenWrite,
        contention: Contention::Ignores,
        promises: Promises {
            prevents_duplicates: false,
            respects_max_workers: false,
        },
        forms: [
            sql!("postgres", "sharded-read-write.sql"),
            sql!("mysql", "sharded-read-write.sql"),
            sql!("mssql", "sharded-read-write.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: true,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("advisory"),
        colour: Colour(0x00, 0x00, 0x00),
        about: Cow::Borrowed(
            "claim by pg_try_advisory_lock on the job id, held while the job runs (several Ruby queues)",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "advisory.sql"),
            Form::Absent(NO_ADVISORY_FOR_MYSQL),
            Form::Absent(NOT_FOR_MSSQL),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: true,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("advisory-xact"),
        colour: Colour(0x4D, 0x4D, 0x4D),
        about: Cow::Borrowed(
            "advisory's claim with pg_try_advisory_xact_lock: the lock lasts the claim's transaction, the row says who owns the job (survives a transaction pooler)",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "advisory-xact.sql"),
            Form::Absent(NO_ADVISORY_FOR_MYSQL),
            Form::Absent(NOT_FOR_MSSQL),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("ready-table"),
        colour: Colour(0xE6, 0xAB, 0x02),
        about: Cow::Borrowed(
            "claims from a narrow table of ready ids with SKIP LOCKED and joins back to the job row",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            sql!("postgres", "ready-table.sql"),
            sql!("mysql", "ready-table.sql"),
            Form::Absent(NOT_FOR_MSSQL),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("notify"),
        colour: Colour(0x66, 0xA6, 0x1E),
        about: Cow::Borrowed(
            "production's claim; idle workers wait for the producer's NOTIFY instead of polling",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: EVERYTHING,
        forms: [
            sql!("postgres", "production.sql"),
            Form::Absent("MySQL has no LISTEN/NOTIFY: idle workers there can only poll"),
            Form::Absent(
                "SQL Server's counterpart (Service Broker, or WAITFOR on a queue) is not written yet",
            ),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: true,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("rowlock"),
        colour: Colour(0x99, 0x99, 0x99),
        about: Cow::Borrowed("SQL Server: production with ROWLOCK added to UPDLOCK, READPAST"),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: EVERYTHING,
        forms: [
            Form::Absent(HINTS_ARE_SQL_SERVERS),
            Form::Absent(HINTS_ARE_SQL_SERVERS),
            sql!("mssql", "rowlock.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("paglock"),
        colour: Colour(0x8C, 0x56, 0x4B),
        about: Cow::Borrowed(
            "SQL Server: production with page locks (UPDLOCK, PAGLOCK, READPAST): skips whole pages",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: EVERYTHING,
        forms: [
            Form::Absent(HINTS_ARE_SQL_SERVERS),
            Form::Absent(HINTS_ARE_SQL_SERVERS),
            sql!("mssql", "paglock.sql"),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("redis-streams"),
        colour: Colour(0xDC, 0x38, 0x2C),
        about: Cow::Borrowed(
            "Redis Streams: a consumer group's XREADGROUP of a batch, XACK, and XAUTOCLAIM after the lease as the visibility timeout",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            Form::Absent(BROKER_ONLY),
            Form::Absent(BROKER_ONLY),
            Form::Absent(BROKER_ONLY),
            Form::Sql(Cow::Borrowed(crate::statements::migration!(
                "redis",
                "strategies/streams.lua"
            ))),
            Form::Absent(BROKER_ONLY),
            Form::Absent(BROKER_ONLY),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("redis-cas"),
        colour: Colour(0x6B, 0x4C, 0x9A),
        about: Cow::Borrowed(
            "a key-value store's queue: versioned records and a sorted set by due time in Redis, an unlocked read then a compare-and-set on each version; lost races, no duplicates",
        ),
        shape: Shape::VersionCas,
        contention: Contention::Rechecks,
        promises: NO_DUPLICATES,
        forms: [
            Form::Absent(KV_ONLY),
            Form::Absent(KV_ONLY),
            Form::Absent(KV_ONLY),
            Form::Sql(Cow::Borrowed(crate::statements::migration!(
                "redis",
                "strategies/cas.lua"
            ))),
            Form::Absent(KV_ONLY),
            Form::Absent(KV_ONLY),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("jetstream"),
        colour: Colour(0x27, 0xAA, 0xE1),
        about: Cow::Borrowed(
            "NATS JetStream: a durable pull consumer's fetch of a batch from a work-queue stream, ack, nak with the retry delay, and AckWait (the lease) as the visibility timeout",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            Form::Absent(JETSTREAM_ONLY),
            Form::Absent(JETSTREAM_ONLY),
            Form::Absent(JETSTREAM_ONLY),
            Form::Absent(JETSTREAM_ONLY),
            Form::Sql(Cow::Borrowed(crate::statements::migration!(
                "nats",
                "strategies/jetstream.txt"
            ))),
            Form::Absent(JETSTREAM_ONLY),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("rabbitmq"),
        colour: Colour(0xFF, 0x66, 0x00),
        about: Cow::Borrowed(
            "RabbitMQ: a consumer with a prefetch of the batch on a durable classic queue, manual acks, a retry published again with its attempt counted, the last attempt rejected to a dead-letter queue; no visibility timeout (a delivery is the consumer's until its channel closes)",
        ),
        shape: Shape::Claim,
        contention: Contention::Skips,
        promises: NO_DUPLICATES,
        forms: [
            Form::Absent(RABBITMQ_ONLY),
            Form::Absent(RABBITMQ_ONLY),
            Form::Absent(RABBITMQ_ONLY),
            Form::Absent(RABBITMQ_ONLY),
            Form::Absent(RABBITMQ_ONLY),
            Form::Sql(Cow::Borrowed(crate::statements::migration!(
                "rabbitmq",
                "strategies/rabbitmq.txt"
            ))),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
    Def {
        name: Cow::Borrowed("lock-service"),
        colour: Colour(0x99, 0x66, 0x00),
        about: Cow::Borrowed(
            "an unlocked read, a lease per job from a lock service (Redis SET NX PX), then naive's unconditional update of the ids it won: lost races at the lock, duplicates where a lease expires or a read is stale",
        ),
        shape: Shape::ReadLockWrite,
        contention: Contention::Rechecks,
        promises: Promises {
            prevents_duplicates: false,
            respects_max_workers: false,
        },
        forms: [
            sql!("postgres", "lock-service.sql"),
            sql!("mysql", "lock-service.sql"),
            Form::Absent(LOCK_SERVICE_NOT_FOR_MSSQL),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
            Form::Absent(SQL_ON_A_BROKER),
        ],
        advisory: false,
        listens: false,
        offset_window: None,
        sharded: false,
        custom: None,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend_kind::BackendKind;
    use crate::strategy::Strategy;

    /// Walks the registry: unique names, a form or a reason on every backend, SQL that
    /// reads the shape's parameters, and a header that says what the technique is.
    /// Every strategy has a form somewhere, and the core four have one everywhere.
    #[test]
    fn every_entry_is_complete() {
        let mut names = std::collections::HashSet::new();
        for s in Strategy::builtin() {
            assert!(names.insert(s.as_str().to_string()), "{s} twice");
            assert!(!s.def().about.is_empty());
            let kinds = [
                BackendKind::Postgres,
                BackendKind::Mysql,
                BackendKind::Mssql,
            ];
            assert!(
                kinds
                    .iter()
                    .chain([
                        &BackendKind::Redis,
                        &BackendKind::Nats,
                        &BackendKind::Rabbitmq,
                    ])
                    .any(|&k| s.sql(k).is_some()),
                "{s}: a form somewhere"
            );
            if Strategy::CORE.contains(&s) {
                assert!(kinds.iter().all(|&k| s.sql(k).is_some()), "{s}: everywhere");
            }
            for kind in [
                BackendKind::Postgres,
                BackendKind::Mysql,
                BackendKind::Mssql,
            ] {
                match s.form(kind) {
                    Form::Sql(sql) => {
                        let borrowed = Strategy::PRODUCTION.sql(kind) == Some(sql);
                        assert!(
                            sql.starts_with(&format!("-- {}:", s.as_str())) || borrowed,
                            "{s} on {kind}: the header names the strategy"
                        );
                        if s.shape() == Shape::Claim && kind == BackendKind::Postgres {
                            assert!(sql.contains("$1") && sql.contains("$2"), "{s}");
                        }
                    }
                    Form::Absent(why) => assert!(why.len() > 20, "{s} on {kind}: say why"),
                }
            }
            if s.contention() == Contention::Skips {
                assert!(s.prevents_duplicate_claims(), "{s}");
            }
        }
        assert_eq!(
            Strategy::CORE.map(|s| s.as_str().to_string()),
            ["production", "naive", "waiting", "conditional"]
        );
    }
}
