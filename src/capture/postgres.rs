//! Reading a PostgreSQL table for `capture`: one `READ ONLY` transaction on the
//! person's connection, the catalogs and statistics of `migrations/postgres/capture.sql`,
//! and one count of rows by state when the statistics say the table is small. The
//! server refuses any write inside it, whatever the role may do.

use super::{Captured, Column};
use crate::backend::postgres::quote_ident;
use crate::statements::{fill, migration, step};
use std::time::Duration;
use tokio_postgres::{Client, Config, NoTls};

const SQL: &str = migration!("postgres", "capture.sql");

/// Up to this many rows (by the planner's estimate), the rows by state are counted
/// exactly; above, they are the statistics' most common values times the estimate.
pub const EXACT_COUNT_ROWS: f64 = 1_000_000.0;

/// Why a capture stopped. The messages never hold the URL's password: the caller
/// shows the URL redacted.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(
        "cannot connect: {0}; check the address, that the server is up and that it accepts this user"
    )]
    Connect(String),
    #[error(
        "no table `{schema}.{name}` is there (capture reads a table of the database --db names; give it as [SCHEMA.]NAME)"
    )]
    Missing { schema: String, name: String },
    #[error("`{schema}.{name}` is a {kind}, not a table; capture reads a queue table")]
    NotATable {
        schema: String,
        name: String,
        kind: &'static str,
    },
    #[error("{what}: {message}")]
    Query { what: &'static str, message: String },
}

fn query(what: &'static str) -> impl Fn(tokio_postgres::Error) -> CaptureError {
    move |e| CaptureError::Query {
        what,
        message: e
            .as_db_error()
            .map_or_else(|| e.to_string(), |d| d.message().to_string()),
    }
}

/// A connection of its own inside a `READ ONLY` transaction, with a statement timeout.
async fn read_only(config: &Config) -> Result<Client, CaptureError> {
    let mut config = config.clone();
    config.application_name("claimbench-capture");
    let (client, conn) = config
        .connect(NoTls)
        .await
        .map_err(|e| CaptureError::Connect(e.to_string()))?;
    tokio::spawn(conn);
    client
        .batch_execute("BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = '60s'")
        .await
        .map_err(query("begin a read-only transaction"))?;
    Ok(client)
}

/// Connects with `config` and reads `schema.name`; `sample` is how long to watch its
/// inserts for the arrival rate (zero: not sampled).
pub async fn read(
    config: &Config,
    schema: &str,
    name: &str,
    sample: Duration,
) -> Result<Captured, CaptureError> {
    let client = read_only(config).await?;
    let out = read_in(&client, schema, name, sample).await;
    let _ = client.batch_execute("ROLLBACK").await;
    out
}

async fn read_in(
    c: &Client,
    schema: &str,
    name: &str,
    sample: Duration,
) -> Result<Captured, CaptureError> {
    c.query_one(step(SQL, "enter"), &[&schema])
        .await
        .map_err(query("enter the table's schema"))?;
    let server: String = c
        .query_one("SELECT version()", &[])
        .await
        .map_err(query("read the server version"))?
        .get(0);
    let t = c
        .query_opt(step(SQL, "table"), &[&schema, &name])
        .await
        .map_err(query("find the table"))?
        .ok_or_else(|| CaptureError::Missing {
            schema: schema.into(),
            name: name.into(),
        })?;
    let kind: String = t.get(1);
    let kind = match kind.as_str() {
        "r" | "p" => None,
        "v" => Some("view"),
        "m" => Some("materialized view"),
        "f" => Some("foreign table"),
        "S" => Some("sequence"),
        "i" | "I" => Some("index"),
        _ => Some("relation of another kind"),
    };
    if let Some(kind) = kind {
        return Err(CaptureError::NotATable {
            schema: schema.into(),
            name: name.into(),
            kind,
        });
    }
    let oid: u32 = t.get(0);
    let reltuples: f64 = t.get(2);
    let mut out = Captured {
        schema: schema.into(),
        name: name.into(),
        estimated_rows: (reltuples >= 0.0).then_some(reltuples),
        table_bytes: t.get(3),
        index_bytes: t.get(4),
        autovacuum_options: t.get(5),
        server,
        ..Captured::default()
    };
    let mut enum_types: Vec<u32> = Vec::new();
    for r in rows(c, "columns", &[&oid], "read the columns").await? {
        let values: Option<Vec<String>> = r.get(10);
        let freqs: Option<Vec<f64>> = r.get(11);
        let typtype: String = r.get(6);
        if typtype == "e" {
            enum_types.push(r.get(7));
        }
        out.columns.push(Column {
            name: r.get(0),
            ty: r.get(1),
            not_null: r.get(2),
            default: r.get(3),
            identity: r.get(4),
            generated: r.get(5),
            category: r.get(12),
            avg_width: r.get(8),
            common: values
                .unwrap_or_default()
                .into_iter()
                .zip(freqs.unwrap_or_default())
                .collect(),
        });
    }
    if !enum_types.is_empty() {
        for r in rows(c, "enums", &[&enum_types], "read the enum types").await? {
            out.enums.push((r.get(0), r.get(1)));
        }
    }
    for r in rows(c, "constraints", &[&oid], "read the constraints").await? {
        let kind: String = r.get(1);
        match kind.as_str() {
            "f" => out.foreign_keys += 1,
            "p" | "u" | "c" | "x" => {
                if kind == "p" {
                    out.primary_key = r.get(3);
                }
                out.constraints.push((r.get(0), r.get(2)));
            }
            _ => {}
        }
    }
    for r in rows(c, "indexes", &[&oid], "read the indexes").await? {
        out.indexes.push((r.get(0), r.get(1)));
    }
    for r in rows(c, "sequences", &[&oid], "read the owned sequences").await? {
        out.sequences.push(r.get(0));
    }
    let before = activity(c, oid).await?;
    out.dead_rows = before.get(1);
    if !sample.is_zero() {
        tokio::time::sleep(sample).await;
        let after = activity(c, oid).await?;
        let (n0, n1): (i64, i64) = (before.get(0), after.get(0));
        let (t0, t1): (std::time::SystemTime, std::time::SystemTime) =
            (before.get(3), after.get(3));
        let secs = t1.duration_since(t0).unwrap_or_default().as_secs_f64();
        if secs > 0.0 {
            out.arrivals_per_s = Some((n1 - n0).max(0) as f64 / secs);
            out.sample_s = secs;
        }
    }
    read_statements(c, &mut out).await?;
    Ok(out)
}

/// The rows of step `name` of capture.sql.
async fn rows(
    c: &Client,
    name: &str,
    args: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    what: &'static str,
) -> Result<Vec<tokio_postgres::Row>, CaptureError> {
    c.query(step(SQL, name), args).await.map_err(query(what))
}

/// Rows inserted so far, dead rows, autovacuum runs and the server's clock.
async fn activity(c: &Client, oid: u32) -> Result<tokio_postgres::Row, CaptureError> {
    c.query_one(step(SQL, "activity"), &[&oid])
        .await
        .map_err(query("read the table's statistics"))
}

/// The statements that name the table, where pg_stat_statements is there and readable;
/// else why not, in `unread`.
async fn read_statements(c: &Client, out: &mut Captured) -> Result<(), CaptureError> {
    let r = c
        .query_one(step(SQL, "statements-readable"), &[])
        .await
        .map_err(query("look for pg_stat_statements"))?;
    let (Some(ext_schema), all_stats): (Option<String>, bool) = (r.get(0), r.get(1)) else {
        out.unread.push(
            "statements that name the table: pg_stat_statements is not installed in this database"
                .into(),
        );
        return Ok(());
    };
    if !all_stats {
        out.unread.push(
            "other roles' statement texts: this role is not a member of pg_read_all_stats, so pg_stat_statements shows only its own".into(),
        );
    }
    let sql = fill(
        step(SQL, "statements"),
        &[("extension_schema", &quote_ident(&ext_schema))],
    );
    // A query that fails here (the library not preloaded) is a note, not the end.
    match c.query(&sql, &[&out.name]).await {
        Ok(rows) => {
            out.statements = rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2)))
                .collect();
        }
        Err(e) => out.unread.push(format!(
            "statements that name the table: {}",
            e.as_db_error()
                .map_or_else(|| e.to_string(), |d| d.message().to_string())
        )),
    }
    Ok(())
}

/// Counts rows by state exactly when the table is small (or never analyzed), else
/// estimates them from the state column's most common values.
pub async fn count_states(
    config: &Config,
    out: &mut Captured,
    state: &str,
) -> Result<(), CaptureError> {
    if super::estimate_states(out, state) {
        return Ok(());
    }
    let sql = format!(
        "SELECT {}::text, count(*) FROM {}.{} GROUP BY 1 ORDER BY 2 DESC",
        quote_ident(state),
        quote_ident(&out.schema),
        quote_ident(&out.name)
    );
    let client = read_only(config).await?;
    let rows = client
        .query(&sql, &[])
        .await
        .map_err(query("count the rows by state"))?;
    let _ = client.batch_execute("ROLLBACK").await;
    out.by_state = rows
        .iter()
        .map(|r| (r.get::<_, Option<String>>(0).unwrap_or_default(), r.get(1)))
        .collect();
    out.by_state_exact = true;
    Ok(())
}
