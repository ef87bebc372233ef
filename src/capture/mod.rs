//! `claimbench capture`: a live queue table read, read-only, into a workload that
//! reproduces its shape on a server claimbench starts — its DDL and indexes as the
//! catalogs write them, its rows by state and queue as the statistics count them, its
//! payload width, its arrival rate — with a claim and lifecycle written for its columns
//! for the person to confirm (and the statements that name it, where the server keeps
//! them, as candidates).
//!
//! Three parts: what was read ([`Captured`]: `postgres.rs` reads PostgreSQL's catalogs,
//! `mysql.rs` MySQL's and MariaDB's), which column plays which part in a queue
//! ([`Roles`], here: names and types, overridable), and the files written from the two
//! (`files.rs`; `mysql_files.rs` MySQL's statements). No payload's contents are read:
//! sizes and counts only.

mod files;
pub mod mysql;
mod mysql_files;
mod postgres;
mod shape;

pub use files::{Written, write};
pub use postgres::{CaptureError, EXACT_COUNT_ROWS, count_states, read};

/// One column as the catalog describes it, and what the statistics say of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    /// The type as `format_type` writes it (`bigint`, `character varying(255)`,
    /// `river_job_state`, `text[]`).
    pub ty: String,
    pub not_null: bool,
    pub default: Option<String>,
    /// `a` (always) or `d` (by default) for an identity column, empty otherwise.
    pub identity: String,
    /// `s` for a stored generated column, empty otherwise.
    pub generated: String,
    /// The type's category (`N` numeric, `S` string, `D` date/time, `E` enum, `A` array,
    /// `B` boolean, `U` user-defined such as json and uuid).
    pub category: String,
    pub avg_width: Option<i32>,
    /// Most common values and their frequencies (the statistics' summary).
    pub common: Vec<(String, f64)>,
}

/// What a capture read of one table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Captured {
    pub schema: String,
    pub name: String,
    pub columns: Vec<Column>,
    /// Enum types the columns use: their name and labels in order.
    pub enums: Vec<(String, Vec<String>)>,
    /// Sequences the columns own (serial columns).
    pub sequences: Vec<String>,
    /// Primary key, unique, check and exclusion constraints: name and definition.
    pub constraints: Vec<(String, String)>,
    pub primary_key: Vec<String>,
    /// Foreign keys left out (they name other tables).
    pub foreign_keys: usize,
    /// Indexes no constraint owns: name and `CREATE INDEX` as the server writes it.
    pub indexes: Vec<(String, String)>,
    /// The planner's row estimate (`None`: never analyzed).
    pub estimated_rows: Option<f64>,
    /// Rows by value of the state column, and whether they were counted exactly (a small
    /// table) or estimated from the statistics' most common values.
    pub by_state: Vec<(String, i64)>,
    pub by_state_exact: bool,
    pub table_bytes: i64,
    pub index_bytes: i64,
    pub dead_rows: i64,
    pub autovacuum_options: String,
    /// Rows inserted per second over the sample, if it was taken.
    pub arrivals_per_s: Option<f64>,
    pub sample_s: f64,
    /// Statements that name the table (pg_stat_statements): text, calls, mean ms.
    pub statements: Vec<(String, i64, f64)>,
    /// What could not be read, and why.
    pub unread: Vec<String>,
    /// The server, as `version()` says.
    pub server: String,
    /// MySQL's and MariaDB's DDL of the table as `SHOW CREATE TABLE` wrote it (foreign
    /// keys and the counter's value left out); `None` on PostgreSQL, whose DDL is built
    /// from the catalogs. Its presence is what makes the files MySQL's.
    pub create_table: Option<String>,
}

impl Captured {
    /// Whether this is a MySQL/MariaDB table.
    pub fn is_mysql(&self) -> bool {
        self.create_table.is_some()
    }
}

/// The values of the state column that mean pending, running and finished (and, where
/// the table has one, dead), written as SQL literals of the column's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct States {
    pub pending: String,
    pub running: String,
    pub done: String,
    pub dead: Option<String>,
}

/// Which column plays which part in a queue. `None`: the table has no such column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roles {
    pub id: String,
    pub state: String,
    pub states: States,
    pub queue: Option<String>,
    pub priority: Option<String>,
    /// When a job is due (its order and its age).
    pub due: Option<String>,
    pub created: Option<String>,
    /// Who claimed it (text or text[]).
    pub worker: Option<String>,
    /// When it was claimed (the rescue's clock).
    pub claimed_at: Option<String>,
    /// When it finished (set with the finished state, where a check may ask for it).
    pub finished_at: Option<String>,
    /// The widest string, json or bytea column: the payload.
    pub payload: Option<String>,
}

/// What the person says that the names cannot: `--state-column` and the values.
#[derive(Debug, Clone, Default)]
pub struct Hints {
    pub state_column: Option<String>,
    pub pending: Option<String>,
    pub running: Option<String>,
    pub done: Option<String>,
}

const PENDING: [&str; 9] = [
    "available",
    "pending",
    "ready",
    "queued",
    "new",
    "scheduled",
    "enqueued",
    "waiting",
    "todo",
];
const RUNNING: [&str; 11] = [
    "running",
    "processing",
    "active",
    "locked",
    "claimed",
    "fetched",
    "in_progress",
    "started",
    "executing",
    "working",
    "reserved",
];
const DONE: [&str; 6] = [
    "completed",
    "done",
    "finished",
    "succeeded",
    "success",
    "complete",
];
const DEAD: [&str; 6] = [
    "discarded",
    "dead",
    "failed",
    "errored",
    "cancelled",
    "killed",
];

impl Captured {
    fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The first column named one of `names` (in the order given) of a category in
    /// `categories`.
    fn named(&self, names: &[&str], categories: &str) -> Option<String> {
        names.iter().find_map(|n| {
            self.column(n)
                .filter(|c| categories.contains(c.category.as_str()))
                .map(|c| c.name.clone())
        })
    }

    /// The labels of `column`'s enum type, if it is one.
    fn labels(&self, column: &Column) -> Option<&[String]> {
        self.enums
            .iter()
            .find(|(name, _)| *name == column.ty)
            .map(|(_, labels)| labels.as_slice())
    }

    /// Which column plays which part: by name and type, with `hints` first. The
    /// message says what to pass when the names do not tell.
    pub fn roles(&self, hints: &Hints) -> Result<Roles, String> {
        let id = self.id_column()?;
        let state = self.state_column(hints)?;
        let states = self.state_values(&state, hints)?;
        let payload = self.payload_column(&[&id, &state]);
        Ok(Roles {
            id,
            state,
            states,
            queue: self.named(&["queue", "queue_name", "tube"], "S"),
            priority: self.named(&["priority"], "N"),
            due: self.named(
                &[
                    "scheduled_at",
                    "run_at",
                    "available_at",
                    "scheduled_for",
                    "due_at",
                    "start_after",
                    "created_at",
                ],
                "D",
            ),
            created: self.named(&["created_at", "inserted_at", "enqueued_at"], "D"),
            worker: self.named(
                &[
                    "locked_by",
                    "worker_id",
                    "worker",
                    "claimed_by",
                    "attempted_by",
                    "owner",
                ],
                "SA",
            ),
            claimed_at: self.named(
                &[
                    "locked_at",
                    "claimed_at",
                    "attempted_at",
                    "started_at",
                    "fetched_at",
                ],
                "D",
            ),
            finished_at: self.named(
                &["finalized_at", "finished_at", "completed_at", "done_at"],
                "D",
            ),
            payload,
        })
    }
}

/// How a job's number is written in an id column of type `ty` (`format_type`'s
/// spelling): `None` for a type that cannot hold one.
pub(crate) fn id_kind(ty: &str) -> Option<IdKind> {
    match ty {
        "bigint" | "integer" => Some(IdKind::Integer),
        "uuid" => Some(IdKind::Uuid),
        "text" => Some(IdKind::Text),
        t if t.starts_with("character varying") => Some(IdKind::Text),
        _ => None,
    }
}

/// An id column's kind: an integer takes the table's own ids on enqueue; a uuid or text
/// id takes the numbers claimbench hands out, written in its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdKind {
    Integer,
    Uuid,
    Text,
}

impl Captured {
    /// The single-column primary key the ledger counts jobs by: an integer, or a uuid or
    /// text that holds claimbench's job numbers (`files::id_expr`).
    fn id_column(&self) -> Result<String, String> {
        let integer = |c: &Column| id_kind(&c.ty) == Some(IdKind::Integer);
        if let [one] = self.primary_key.as_slice()
            && self.is_mysql()
            && self.column(one).is_some_and(|c| !integer(c))
        {
            return Err(format!(
                "the primary key `{one}` is {}; on MySQL and MariaDB claimbench counts jobs by an integer id (uuid and text ids are PostgreSQL's for now)",
                self.column(one).map_or("", |c| c.ty.as_str())
            ));
        }
        match self.primary_key.as_slice() {
            [one] if self.column(one).is_some_and(|c| id_kind(&c.ty).is_some()) => Ok(one.clone()),
            [one] => Err(format!(
                "the primary key `{one}` is {}; claimbench's ledger counts jobs by an id of type bigint, integer, uuid or text",
                self.column(one).map_or("not a column", |c| c.ty.as_str())
            )),
            [] => Err("the table has no primary key; a queue table needs one to claim by".into()),
            more => Err(format!(
                "the primary key has {} columns; claimbench claims jobs by one integer id",
                more.len()
            )),
        }
    }

    /// `--state-column`, else the first column named like a job's state.
    fn state_column(&self, hints: &Hints) -> Result<String, String> {
        match &hints.state_column {
            Some(s) => self
                .column(s)
                .map(|c| c.name.clone())
                .ok_or_else(|| format!("--state-column {s}: the table has no such column")),
            None => self
                .named(&["state", "status", "job_state", "job_status"], "SENE")
                .ok_or_else(|| {
                    "no column named state or status; say which column holds a job's state with --state-column, and its values with --pending, --running and --done".to_string()
                }),
        }
    }

    /// The state column's values for pending, running, done and dead: the flags', else
    /// the first of its enum labels or common values named like one.
    fn state_values(&self, state: &str, hints: &Hints) -> Result<States, String> {
        let col = self.column(state).expect("a column of the table");
        let values: Vec<String> = match self.labels(col) {
            Some(labels) => labels.to_vec(),
            None => col.common.iter().map(|(v, _)| v.clone()).collect(),
        };
        let pick = |given: &Option<String>, names: &[&str], what: &str| {
            if let Some(v) = given {
                return Ok(literal(col, v));
            }
            names
                .iter()
                .find_map(|n| values.iter().find(|v| v.eq_ignore_ascii_case(n)))
                .map(|v| literal(col, v))
                .ok_or_else(|| {
                    format!(
                        "cannot tell which value of `{state}` ({}) means {what}; pass --{what} VALUE",
                        match values.is_empty() {
                            true => "no values in its statistics".to_string(),
                            false => values.join(", "),
                        }
                    )
                })
        };
        Ok(States {
            pending: pick(&hints.pending, &PENDING, "pending")?,
            running: pick(&hints.running, &RUNNING, "running")?,
            done: pick(&hints.done, &DONE, "done")?,
            dead: pick(&None, &DEAD, "dead").ok(),
        })
    }

    /// The widest string, json or bytea column that plays no other part.
    fn payload_column(&self, taken: &[&str]) -> Option<String> {
        const NOT_PAYLOAD: [&str; 5] = ["queue", "queue_name", "kind", "type", "job_class"];
        self.columns
            .iter()
            .filter(|c| !taken.contains(&c.name.as_str()) && "SU".contains(c.category.as_str()))
            .filter(|c| {
                c.ty.starts_with("json")
                    || c.ty == "bytea"
                    || c.ty == "text"
                    || c.ty.starts_with("character")
            })
            .filter(|c| !NOT_PAYLOAD.contains(&c.name.as_str()))
            .max_by_key(|c| c.avg_width.unwrap_or(0))
            .map(|c| c.name.clone())
    }
}

/// Above [`EXACT_COUNT_ROWS`] rows by the server's estimate, the rows by state are that
/// estimate times each state value's share (the statistics' on PostgreSQL, a sample's on
/// MySQL), and this says so and returns true; below, the caller counts them.
fn estimate_states(out: &mut Captured, state: &str) -> bool {
    let small = out.estimated_rows.is_none_or(|n| n <= EXACT_COUNT_ROWS);
    if small {
        return false;
    }
    let n = out.estimated_rows.unwrap_or(0.0);
    let col = out.columns.iter().find(|c| c.name == state);
    out.by_state = col
        .map(|c| {
            c.common
                .iter()
                .map(|(v, f)| (v.clone(), (f * n).round() as i64))
                .collect()
        })
        .unwrap_or_default();
    out.by_state_exact = false;
    true
}

/// `v` as a literal of `col`'s type: numbers as they are, anything else quoted (and
/// cast to an enum type by name).
fn literal(col: &Column, v: &str) -> String {
    if col.category == "N" && v.parse::<f64>().is_ok() {
        return v.to_string();
    }
    let quoted = format!("'{}'", v.replace('\'', "''"));
    match col.category.as_str() {
        "E" => format!("{quoted}::{}", col.ty),
        _ => quoted,
    }
}

#[cfg(test)]
mod tests;
