//! Names a workload gives and claimbench ships, checked the same way wherever they
//! are declared: the shipped index layouts, the rule for a declared strategy's or
//! layout's name, and the one place a declared name becomes `'static`. It sits at the
//! bottom of the house, so that `strategy` and `custom_layout` check names without
//! importing `workload`, which imports them.

use crate::backend_kind::BackendKind;

/// The index layouts claimbench ships (files under `migrations/<engine>/indexes/`), and
/// Redis's two data models, `stream` and `hash-by-due` (a broker's queue has no index to
/// choose; the layout chooses where the queue is).
pub const INDEX_LAYOUTS: [&str; 9] = [
    "pk-only",
    "status-created",
    "fetch-order",
    "pending-partial",
    "queue-fetch-order",
    // Redis's ([`BROKER_LAYOUTS`]).
    STREAM,
    HASH_BY_DUE,
    // NATS JetStream's.
    WORK_QUEUE,
    // RabbitMQ's.
    CLASSIC_QUEUE,
];

/// A broker's layouts (`backend::layouts`): where its queue is, with no index to choose.
/// `stream`: a Redis stream and consumer group.
pub const STREAM: &str = "stream";
/// `hash-by-due`: versioned records and a sorted set of pending jobs, claimed by
/// compare-and-set (a key-value store's queue).
pub const HASH_BY_DUE: &str = "hash-by-due";
/// `work-queue`: a JetStream stream with work-queue retention (a message is gone once
/// acknowledged) and one durable pull consumer the workers share.
pub const WORK_QUEUE: &str = "work-queue";
/// `classic-queue`: a durable RabbitMQ classic queue whose rejected messages go to a
/// dead-letter queue, consumed with a prefetch and manual acknowledgements.
pub const CLASSIC_QUEUE: &str = "classic-queue";
pub const BROKER_LAYOUTS: [&str; 4] = [STREAM, HASH_BY_DUE, WORK_QUEUE, CLASSIC_QUEUE];

/// The layout a broker's technique claims on: each Redis technique has its own data
/// model, and a cell pairing it with the other's is refused before anything starts.
pub fn broker_layout_of(strategy: &str) -> Option<&'static str> {
    match strategy {
        "redis-streams" => Some(STREAM),
        "redis-cas" => Some(HASH_BY_DUE),
        "jetstream" => Some(WORK_QUEUE),
        "rabbitmq" => Some(CLASSIC_QUEUE),
        _ => None,
    }
}

/// Letters, digits, `-` and `_`, at least one: the names a workload gives (itself,
/// blocks, declared strategies and layouts), safe in file names and run ids.
pub fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A lower-case SQL name that needs no quoting on any engine (a declared constant, a
/// declared table): a letter, then letters, digits and `_`, at most `max` bytes.
pub fn is_lower_identifier(s: &str, max: usize) -> bool {
    s.len() <= max
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The longest file-name part [`file_component`] makes, in bytes: with the rest of a
/// file name (phase, workers, extension) well under the usual 255.
pub const MAX_FILE_COMPONENT: usize = 64;

/// `s` as one part of a file name under a results folder, whatever it holds: a name read
/// back from a run.json someone else wrote may hold `..`, `/`, a NUL or a screenful.
/// Letters, digits, `-` and `_` stay; anything else (`.` and `/` included) becomes `_`;
/// a long name keeps its start and ends with a hash of the whole, so two long names
/// stay apart. The one sanitiser for every path built from data (hgrm, hlog).
pub fn file_component(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '_',
            },
        )
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    if out.len() > MAX_FILE_COMPONENT {
        use sha2::Digest;
        let hash = hex::encode(&sha2::Sha256::digest(s.as_bytes())[..4]);
        out.truncate(MAX_FILE_COMPONENT - hash.len() - 1);
        out.push('-');
        out.push_str(&hash);
    }
    out
}

/// Checks the name a workload declares a strategy or layout under: not one claimbench
/// ships (`shipped_as` says what it is, e.g. "a built-in strategy"), and plain.
pub fn check_declared_name(
    name: &str,
    kind: &str,
    shipped_as: Option<&str>,
) -> Result<(), crate::invalid::Invalid> {
    if let Some(what) = shipped_as {
        return Err(crate::invalid!(
            "`{name}` is {what}; give yours another name"
        ));
    }
    if !is_plain_name(name) {
        return Err(crate::invalid!(
            "`{name}` is not a {kind} name; use letters, digits, `-` and `_`"
        ));
    }
    Ok(())
}

/// The longest queue name every backend's schema stores: MySQL's `VARCHAR(200)`
/// (PostgreSQL's `text` has no limit; SQL Server's `varchar(255)` is checked per backend,
/// see [`queue_name_fits`]).
pub const MAX_QUEUE_NAME_CHARS: usize = 200;

/// A queue name every backend can store and every report can show: no control
/// characters (PostgreSQL's text refuses NUL, and a newline breaks every table), and at
/// most [`MAX_QUEUE_NAME_CHARS`] characters.
pub fn check_queue_name(name: &str) -> Result<(), crate::invalid::Invalid> {
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(crate::invalid!(
            "`{}` holds the control character {c:?}; give printable text",
            name.escape_debug()
        ));
    }
    let n = name.chars().count();
    if n > MAX_QUEUE_NAME_CHARS {
        return Err(crate::invalid!(
            "is {n} characters long; give at most {MAX_QUEUE_NAME_CHARS} (the MySQL schema's VARCHAR({MAX_QUEUE_NAME_CHARS}))"
        ));
    }
    Ok(())
}

/// Whether `name` fits `kind`'s queue columns: SQL Server's are `varchar(255)`, not
/// Unicode, so a name outside printable ASCII would be stored as another name.
pub fn queue_name_fits(kind: BackendKind, name: &str) -> Result<(), crate::invalid::Invalid> {
    if kind == BackendKind::Mssql && !name.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        return Err(crate::invalid!(
            "`{name}` holds characters outside printable ASCII, which SQL Server's varchar(255) queue columns do not store as given; use ASCII letters, digits and punctuation"
        ));
    }
    Ok(())
}

/// The role a workload's own SQL runs as on a PostgreSQL server claimbench started
/// (`migrations/postgres/privilege.sql` creates it): no superuser, none of the roles
/// that reach the host. The pooler claimbench starts lets it in by this name.
pub const WORKLOAD_ROLE: &str = "claimbench_workload";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every broker layout belongs to exactly one engine, and each engine's are these.
    #[test]
    fn each_broker_layout_is_one_engines() {
        let mut all: Vec<&str> = crate::backend_kind::ENGINES
            .iter()
            .flat_map(|e| e.broker_layouts.iter().copied())
            .collect();
        all.sort_unstable();
        let mut want = BROKER_LAYOUTS.to_vec();
        want.sort_unstable();
        assert_eq!(all, want);
        assert_eq!(BackendKind::Nats.engine().broker_layouts, [WORK_QUEUE]);
        assert_eq!(
            BackendKind::Rabbitmq.engine().broker_layouts,
            [CLASSIC_QUEUE]
        );
    }
    use std::path::Path;

    #[test]
    fn a_file_component_never_leaves_its_folder() {
        let long = "x".repeat(5000);
        for s in [
            "..",
            "../../etc/passwd",
            "/abs",
            "a\0b",
            "a/b",
            ".hidden",
            "",
            "ünïcødé",
            "\u{1b}[31mred",
            long.as_str(),
        ] {
            let c = file_component(s);
            assert!(
                !c.is_empty() && c.len() <= MAX_FILE_COMPONENT,
                "{s:?} -> {c:?}"
            );
            assert!(
                c.chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_'),
                "{s:?} -> {c:?}"
            );
            let dir = Path::new("/results/run");
            assert_eq!(dir.join(&c).parent(), Some(dir), "{s:?} -> {c:?}");
        }
        assert_eq!(file_component("production"), "production");
        assert_eq!(file_component("fetch-order"), "fetch-order");
        assert_ne!(
            file_component(&format!("{}a", "x".repeat(100))),
            file_component(&format!("{}b", "x".repeat(100)))
        );
    }
}
