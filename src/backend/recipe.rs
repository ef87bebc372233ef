//! The control side of every backend, written once: whether the schema is claimbench's,
//! the server's version and settings, the reconciliation, the server clock, the jobs
//! completed per queue, where each job ended, and the hot table's size. Each is one
//! statement file per engine with the same arguments and the same columns; a backend
//! supplies only a [`Dialect`]: how to run a statement on its control connection and
//! hand back the rows as [`Cell`]s.
//!
//! None of this is on the claim path: each call runs once per trial or less, so rows
//! as vectors of cells cost nothing worth measuring.

use super::files::EngineFiles;
use super::{BackendError, DbReconciliation, ServerInfo, TableStats, ownership};
use crate::backend_kind::BackendKind;
use crate::statements::step;

/// A value bound to a control statement.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    Int(i64),
    Text(&'a str),
    /// A list of names: an array where the engine binds arrays (PostgreSQL); the recipe
    /// sends it as a JSON array in text elsewhere.
    TextList(&'a [String]),
}

/// One value of a row a control statement returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
}

impl Cell {
    /// The value as an integer: NULL as 0, a float truncated, a number in text parsed
    /// (MySQL sends many numbers as text), anything else 0.
    pub fn int(&self) -> i64 {
        match self {
            Cell::Null => 0,
            Cell::Int(i) => *i,
            Cell::Float(f) => *f as i64,
            Cell::Text(t) => t
                .trim()
                .parse::<i64>()
                .or_else(|_| t.trim().parse::<f64>().map(|f| f as i64))
                .unwrap_or(0),
        }
    }

    /// The value as text: NULL as empty.
    pub fn text(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Text(t) => t.clone(),
        }
    }
}

/// What names one backend instance, in messages and on the server.
#[derive(Debug, Clone)]
pub struct Instance {
    pub kind: BackendKind,
    /// The schema (a MySQL database) the run works in: created and dropped by
    /// claimbench, which touches no other.
    pub schema: String,
    /// The target as messages show it, without a password.
    pub display: String,
    /// How this instance's worker connections are named on the server
    /// (`application_name`, SQL Server's program name; MySQL tells them apart by
    /// connection id instead): unique per instance, so that two runs in one process (or
    /// on one server) never count or touch each other's workers.
    pub worker_role: String,
    /// The engine's control statements; none on a broker, which answers each control
    /// question its own way (its backend overrides every method that would read them).
    pub files: Option<&'static EngineFiles>,
}

impl Instance {
    pub fn new(
        kind: BackendKind,
        schema: &str,
        display: String,
        files: Option<&'static EngineFiles>,
    ) -> Instance {
        static INSTANCES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = INSTANCES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Instance {
            kind,
            schema: schema.to_string(),
            display,
            worker_role: format!("claimbench-worker-{}-{n}", std::process::id()),
            files,
        }
    }
}

/// A control statement, its arguments in order, and the step its errors name.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    pub sql: &'static str,
    pub args: &'a [Arg<'a>],
    pub what: &'static str,
}

/// Every row of a control statement's first result set.
pub type Rows = Result<Vec<Vec<Cell>>, BackendError>;

/// Why an engine without array binding never meets [`Arg::TextList`].
pub const NO_ARRAYS: &str = "the recipe sends lists as JSON text to an engine that binds no arrays";

/// Which of a backend's connections a recipe statement runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    /// The control connection: the run's schema, as its owner.
    Schema,
    /// The server connection: the server's own catalogs and settings only.
    Server,
}

/// Runs `sql` with `args` on `d`'s control connection; a list of names goes as a JSON
/// array in text to an engine that binds no arrays, so a dialect meets
/// [`Arg::TextList`] only where it can bind one.
async fn rows(
    d: &(impl Dialect + ?Sized),
    sql: &'static str,
    args: &[Arg<'_>],
    what: &'static str,
) -> Rows {
    rows_on(d, On::Schema, sql, args, what).await
}

/// [`rows`] on the connection `on` names.
async fn rows_on(
    d: &(impl Dialect + ?Sized),
    on: On,
    sql: &'static str,
    args: &[Arg<'_>],
    what: &'static str,
) -> Rows {
    let send = async |q: Query<'_>| match on {
        On::Schema => d.control_rows(q).await,
        On::Server => d.server_rows(q).await,
    };
    if d.instance().kind.engine().binds_arrays {
        return send(Query { sql, args, what }).await;
    }
    let json: Vec<Option<String>> = args
        .iter()
        .map(|a| match a {
            Arg::TextList(l) => Some(serde_json::to_string(l).expect("strings serialize")),
            _ => None,
        })
        .collect();
    let args: Vec<Arg<'_>> = args
        .iter()
        .zip(&json)
        .map(|(a, j)| j.as_deref().map_or(*a, Arg::Text))
        .collect();
    let args = &args;
    send(Query { sql, args, what }).await
}

/// What an engine supplies to the control recipe.
pub trait Dialect: Sync {
    fn instance(&self) -> &Instance;

    /// Runs the query on the control connection and returns every row of its first
    /// result set. Every statement that reads or writes a table of the run's schema
    /// comes here: the connection must be logged in with no more rights than the
    /// workload's own SQL has (its triggers, views and functions run as whoever
    /// touches them).
    fn control_rows(&self, q: Query<'_>) -> impl Future<Output = Rows> + Send;

    /// Runs a query that reads only the server's catalogs and settings, never the
    /// run's schema, on a connection that may have more rights (a replica's lag, every
    /// setting); the control connection where an engine has one login for both.
    fn server_rows(&self, q: Query<'_>) -> impl Future<Output = Rows> + Send {
        self.control_rows(q)
    }

    /// Settings this engine's sessions choose for themselves, recorded beside the
    /// server's.
    fn own_settings(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// The engine's control statements, or why there are none (a broker's backend answers
/// the recipe's questions itself; reaching here from one is a defect, reported).
fn files(d: &(impl Dialect + ?Sized)) -> Result<&'static EngineFiles, BackendError> {
    let i = d.instance();
    i.files.ok_or_else(|| {
        BackendError::other(
            "read the control statements",
            format!("{} has no SQL control statements", i.kind),
        )
    })
}

/// The first row, or an error naming `what` when the statement returned none.
fn one_row(mut rows: Vec<Vec<Cell>>, what: &'static str) -> Result<Vec<Cell>, BackendError> {
    if rows.is_empty() {
        return Err(BackendError::other(what, "the statement returned no row"));
    }
    Ok(rows.swap_remove(0))
}

fn cell(row: &[Cell], i: usize) -> &Cell {
    row.get(i).unwrap_or(&Cell::Null)
}

/// `schema-facts` binds (schema, marker table) and returns (exists, marked[, empty]) as
/// numbers; an engine that never adopts an empty schema may leave the third out.
pub async fn check_schema(
    d: &(impl Dialect + ?Sized),
    kind: BackendKind,
) -> Result<(), BackendError> {
    let what = "look up the schema";
    let sql = step(files(d)?.control, "schema-facts");
    let args = [
        Arg::Text(&d.instance().schema),
        Arg::Text(ownership::MARKER_TABLE),
    ];
    let row = one_row(rows_on(d, On::Server, sql, &args, what).await?, what)?;
    let facts = ownership::SchemaFacts {
        exists: cell(&row, 0).int() != 0,
        marked: cell(&row, 1).int() != 0,
        empty: row.get(2).is_some_and(|c| c.int() == 0),
    };
    ownership::may_recreate(kind, &d.instance().schema, facts).map_err(|refusal| {
        BackendError::ForeignSchema {
            target: d.instance().display.clone(),
            refusal,
        }
    })
}

/// `version` returns one text; the settings file rows of (name, value).
pub async fn server_info(d: &(impl Dialect + ?Sized)) -> Result<ServerInfo, BackendError> {
    let files = files(d)?;
    let what = "read server version";
    let version_sql = step(files.control, "version");
    let row = one_row(rows_on(d, On::Server, version_sql, &[], what).await?, what)?;
    let version = cell(&row, 0).text().replace('\n', " ");
    let mut settings: Vec<(String, String)> =
        rows_on(d, On::Server, files.settings, &[], "read server settings")
            .await?
            .iter()
            .map(|r| (cell(r, 0).text(), cell(r, 1).text()))
            .collect();
    settings.extend(d.own_settings());
    Ok(ServerInfo { version, settings })
}

/// One row of the nine counts [`DbReconciliation::from_columns`] reads.
pub async fn reconcile(d: &(impl Dialect + ?Sized)) -> Result<DbReconciliation, BackendError> {
    let what = "reconcile jobs";
    let row = one_row(rows(d, files(d)?.reconcile, &[], what).await?, what)?;
    Ok(DbReconciliation::from_columns(|i| cell(&row, i).int()))
}

/// One number: the server's clock, µs since the epoch.
pub async fn server_clock_us(d: &(impl Dialect + ?Sized)) -> Result<i64, BackendError> {
    let what = "read the server clock";
    let row = one_row(rows(d, files(d)?.clock, &[], what).await?, what)?;
    Ok(cell(&row, 0).int())
}

/// Binds (from, to) in µs since the epoch; rows of (queue, jobs completed).
pub async fn completed_by_queue(
    d: &(impl Dialect + ?Sized),
    from_us: i64,
    to_us: i64,
) -> Result<Vec<(String, i64)>, BackendError> {
    let args = [Arg::Int(from_us), Arg::Int(to_us)];
    let found = rows(
        d,
        files(d)?.completed_by_queue,
        &args,
        "count completed jobs per queue",
    )
    .await?;
    Ok(found
        .iter()
        .map(|r| (cell(r, 0).text(), cell(r, 1).int()))
        .collect())
}

/// Binds the queue names once; rows of (job id, queue) from the hot, archive and
/// dead-letter tables.
pub async fn job_queues(
    d: &(impl Dialect + ?Sized),
    queues: &[String],
) -> Result<Vec<(i64, String)>, BackendError> {
    let found = rows(
        d,
        files(d)?.job_queues,
        &[Arg::TextList(queues)],
        "read job queues",
    )
    .await?;
    Ok(found
        .iter()
        .map(|r| (cell(r, 0).int(), cell(r, 1).text()))
        .collect())
}

/// Rows of (name, state, sync_state, replay lag ms or NULL, bytes not yet replayed),
/// one per standby the server streams to (`file`: an engine with replication has one).
pub async fn standbys(
    d: &(impl Dialect + ?Sized),
    file: &'static str,
) -> Result<Vec<crate::results::StandbyState>, BackendError> {
    let found = rows_on(d, On::Server, file, &[], "read the standbys").await?;
    Ok(found
        .iter()
        .map(|r| crate::results::StandbyState {
            name: cell(r, 0).text(),
            state: cell(r, 1).text(),
            sync_state: cell(r, 2).text(),
            replay_lag_ms: match cell(r, 3) {
                Cell::Float(f) => Some(*f),
                _ => None,
            },
            replay_behind_bytes: cell(r, 4).int(),
        })
        .collect())
}

/// Of the writes the workers saw acknowledged ((job, start µs) of effects and of
/// completions), those the server does not have: (effects missing, jobs whose
/// acknowledged completion is missing). `file`: an engine with failover has one.
pub async fn acknowledged_missing(
    d: &(impl Dialect + ?Sized),
    file: &'static str,
    effects: &[(i64, i64)],
    completions: &[(i64, i64)],
) -> Result<super::Missing, BackendError> {
    let json = |l: &[(i64, i64)]| serde_json::to_string(l).expect("pairs of integers serialize");
    let (effects, completions) = (json(effects), json(completions));
    let args = [Arg::Text(&effects), Arg::Text(&completions)];
    let found = rows(d, file, &args, "compare the ledger with the new primary").await?;
    let mut missing = (Vec::new(), Vec::new());
    for r in &found {
        match cell(r, 0).text().as_str() {
            "effect" => missing.0.push((cell(r, 1).int(), cell(r, 2).int())),
            _ => missing.1.push(cell(r, 1).int()),
        }
    }
    Ok(missing)
}

/// A change to a `sharded` strategy's shard map (`shard_owners`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardChange {
    /// Each worker now owns its shard too.
    Give,
    /// Each worker no longer owns its shard.
    Take,
}

/// Gives or takes shards: `queues[i]` to or from `workers[i]`. Both steps bind the two
/// lists pairwise and change nothing for a pair already so.
pub async fn change_shards(
    d: &(impl Dialect + ?Sized),
    change: ShardChange,
    queues: &[String],
    workers: &[String],
) -> Result<(), BackendError> {
    let (name, what) = match change {
        ShardChange::Give => ("give-shards", "give shards"),
        ShardChange::Take => ("take-shards", "take shards"),
    };
    let sql = step(files(d)?.control, name);
    let args = [Arg::TextList(queues), Arg::TextList(workers)];
    rows(d, sql, &args, what).await.map(|_| ())
}

/// One row of (live rows, dead rows, table bytes, index bytes) of the hot table; an
/// engine without a dead-row count (MySQL's purge backlog stands in; SQL Server has
/// none) returns what it has there, or 0.
pub async fn table_stats(d: &(impl Dialect + ?Sized)) -> Result<TableStats, BackendError> {
    let files = files(d)?;
    let what = "read table statistics";
    if let Some(name) = files.refresh_stats {
        rows(d, step(files.control, name), &[], what).await?;
    }
    let row = one_row(rows(d, files.table_stats, &[], what).await?, what)?;
    Ok(TableStats {
        live_tuples: cell(&row, 0).int(),
        dead_tuples: cell(&row, 1).int(),
        table_bytes: cell(&row, 2).int(),
        index_bytes: cell(&row, 3).int(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_as_numbers_the_way_each_server_sends_them() {
        assert_eq!(Cell::Null.int(), 0);
        assert_eq!(Cell::Int(7).int(), 7);
        assert_eq!(Cell::Float(2.9).int(), 2);
        assert_eq!(Cell::Text("42".into()).int(), 42);
        assert_eq!(Cell::Text(" 12.0 ".into()).int(), 12);
        assert_eq!(Cell::Text("ON".into()).int(), 0);
        assert_eq!(Cell::Null.text(), "");
        assert_eq!(Cell::Int(3).text(), "3");
        assert_eq!(Cell::Text("x".into()).text(), "x");
    }
}
