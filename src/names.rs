//! Names a workload gives and claimbench ships, checked the same way wherever they
//! are declared: the shipped index layouts, the rule for a declared strategy's or
//! layout's name, and the one place a declared name becomes `'static`. It sits at the
//! bottom of the house, so that `strategy` and `custom_layout` check names without
//! importing `workload`, which imports them.

use crate::backend_kind::BackendKind;

/// The index layouts every backend ships; the files live in `migrations/<backend>/indexes/`.
pub const INDEX_LAYOUTS: [&str; 5] = [
    "pk-only",
    "status-created",
    "fetch-order",
    "pending-partial",
    "queue-fetch-order",
];

/// Letters, digits, `-` and `_`, at least one: the names a workload gives (itself,
/// blocks, declared strategies and layouts), safe in file names and run ids.
pub fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Checks the name a workload declares a strategy or layout under: not one claimbench
/// ships (`shipped_as` says what it is, e.g. "a built-in strategy"), and plain.
pub fn check_declared_name(name: &str, kind: &str, shipped_as: Option<&str>) -> Result<(), String> {
    if let Some(what) = shipped_as {
        return Err(format!("`{name}` is {what}; give yours another name"));
    }
    if !is_plain_name(name) {
        return Err(format!(
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
pub fn check_queue_name(name: &str) -> Result<(), String> {
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!(
            "`{}` holds the control character {c:?}; give printable text",
            name.escape_debug()
        ));
    }
    let n = name.chars().count();
    if n > MAX_QUEUE_NAME_CHARS {
        return Err(format!(
            "is {n} characters long; give at most {MAX_QUEUE_NAME_CHARS} (the MySQL schema's VARCHAR({MAX_QUEUE_NAME_CHARS}))"
        ));
    }
    Ok(())
}

/// Whether `name` fits `kind`'s queue columns: SQL Server's are `varchar(255)`, not
/// Unicode, so a name outside printable ASCII would be stored as another name.
pub fn queue_name_fits(kind: BackendKind, name: &str) -> Result<(), String> {
    if kind == BackendKind::Mssql && !name.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        return Err(format!(
            "`{name}` holds characters outside printable ASCII, which SQL Server's varchar(255) queue columns do not store as given; use ASCII letters, digits and punctuation"
        ));
    }
    Ok(())
}
