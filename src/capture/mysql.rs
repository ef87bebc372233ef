//! Reading a MySQL/MariaDB table for `capture`: one `READ ONLY` transaction on the
//! person's connection, `information_schema`, `SHOW CREATE TABLE` (the DDL a run
//! rebuilds, as the server writes it) and `migrations/mysql/capture.sql`. MySQL keeps no
//! most-common-values statistics, so the values of the columns a queue's roles go by
//! (state, queue, priority) are counted over up to 100,000 rows, and payload widths
//! measured over 1,000: sizes and counts, never a payload's contents. The server
//! refuses any write inside the transaction, whatever the account may do.

use super::postgres::CaptureError;
use super::{Captured, Column};
use crate::statements::{fill, migration, step};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, Row};
use std::time::Duration;

const SQL: &str = migration!("mysql", "capture.sql");

/// Columns whose values say which part a column plays: their values are counted.
const ROLE_NAMED: [&str; 8] = [
    "state",
    "status",
    "job_state",
    "job_status",
    "queue",
    "queue_name",
    "tube",
    "priority",
];

/// `information_schema.TABLES`' kind, row estimate, data and index bytes of a table.
type TableRow = (String, Option<i64>, Option<i64>, Option<i64>);
/// A statement digest's text, calls and mean ms.
type DigestRow = (Option<String>, i64, Option<f64>);

fn query(what: &'static str) -> impl Fn(mysql_async::Error) -> CaptureError {
    move |e| CaptureError::Query {
        what,
        message: match e {
            mysql_async::Error::Server(s) => s.message,
            other => other.to_string(),
        },
    }
}

fn quote(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// A connection of its own inside a `READ ONLY` transaction, each statement stopped
/// after a minute.
async fn read_only(opts: &Opts) -> Result<Conn, CaptureError> {
    let mut c = Conn::new(opts.clone())
        .await
        .map_err(|e| CaptureError::Connect(e.to_string()))?;
    // One of the two names is the server's; the other is refused as unknown.
    for timeout in ["timeout-mariadb", "timeout-mysql"] {
        if c.query_drop(step(SQL, timeout)).await.is_ok() {
            break;
        }
    }
    c.query_drop(step(SQL, "read-only"))
        .await
        .map_err(query("make the session read-only"))?;
    c.query_drop(step(SQL, "begin"))
        .await
        .map_err(query("begin a read-only transaction"))?;
    Ok(c)
}

/// The parts of a queue MySQL's column types play, in the vocabulary the roles are
/// found by (`Column::ty` and `category`, as PostgreSQL's catalogs write them): an
/// integer, a string (an ENUM is a string whose labels are known), a time, a JSON or
/// binary payload.
fn kind(data_type: &str) -> (&'static str, &'static str) {
    match data_type {
        "bigint" => ("bigint", "N"),
        "int" | "mediumint" => ("integer", "N"),
        "smallint" | "tinyint" | "bit" | "year" => ("smallint", "N"),
        "decimal" | "float" | "double" => ("numeric", "N"),
        "char" | "varchar" => ("character varying", "S"),
        "enum" | "set" => ("text", "S"),
        t if t.ends_with("text") => ("text", "S"),
        "json" => ("json", "U"),
        t if t.ends_with("blob") || t.ends_with("binary") => ("bytea", "U"),
        "datetime" | "timestamp" | "date" | "time" => ("timestamp", "D"),
        _ => ("other", "X"),
    }
}

/// An ENUM's labels from its COLUMN_TYPE (`enum('a','b''c')`).
fn enum_labels(column_type: &str) -> Vec<String> {
    let inner = column_type
        .strip_prefix("enum(")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or("");
    let mut labels = Vec::new();
    let mut cur = String::new();
    let mut chars = inner.chars().peekable();
    let mut quoted = false;
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('\'', false) => quoted = true,
            ('\'', true) if chars.peek() == Some(&'\'') => {
                chars.next();
                cur.push('\'');
            }
            ('\'', true) => {
                quoted = false;
                labels.push(std::mem::take(&mut cur));
            }
            (c, true) => cur.push(c),
            _ => {}
        }
    }
    labels
}

/// `SHOW CREATE TABLE`'s text as a run rebuilds it: without foreign keys (they name
/// other tables) and without the counter's current value.
pub(super) fn rebuildable(ddl: &str) -> (String, usize) {
    let mut lines: Vec<&str> = Vec::new();
    let mut foreign = 0;
    for line in ddl.lines() {
        if line.contains(" FOREIGN KEY ") {
            foreign += 1;
            continue;
        }
        lines.push(line);
    }
    // A dropped last definition leaves a comma before the closing line.
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for i in 1..out.len() {
        if out[i].starts_with(')') && out[i - 1].ends_with(',') {
            out[i - 1].pop();
        }
    }
    let text = out.join("\n");
    let text = match text.find(" AUTO_INCREMENT=") {
        Some(at) => {
            let rest = &text[at + " AUTO_INCREMENT=".len()..];
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            format!("{}{}", &text[..at], &rest[digits..])
        }
        None => text,
    };
    (text, foreign)
}

/// Connects with `opts` and reads `schema.name` (a database and a table); `counted`
/// names a column whose values are counted beside those [`ROLE_NAMED`] (the
/// `--state-column`); `sample` is how long to watch its ids for the arrival rate.
pub async fn read(
    opts: &Opts,
    (schema, name): (&str, &str),
    counted: Option<&str>,
    sample: Duration,
) -> Result<Captured, CaptureError> {
    let mut c = read_only(opts).await?;
    let out = read_in(&mut c, (schema, name), counted, sample).await;
    let _ = c.query_drop("ROLLBACK").await;
    let _ = c.disconnect().await;
    out
}

async fn read_in(
    c: &mut Conn,
    (schema, name): (&str, &str),
    counted: Option<&str>,
    sample: Duration,
) -> Result<Captured, CaptureError> {
    let server: Option<String> = c
        .query_first("SELECT VERSION()")
        .await
        .map_err(query("read the server version"))?;
    let t: Option<TableRow> = c
        .exec_first(step(SQL, "table"), (schema, name))
        .await
        .map_err(query("find the table"))?;
    let Some((kind_of, rows, data, index)) = t else {
        return Err(CaptureError::Missing {
            schema: schema.into(),
            name: name.into(),
        });
    };
    if kind_of != "BASE TABLE" {
        return Err(CaptureError::NotATable {
            schema: schema.into(),
            name: name.into(),
            kind: match kind_of.as_str() {
                "VIEW" => "view",
                "SEQUENCE" => "sequence",
                _ => "relation of another kind",
            },
        });
    }
    let table = format!("{}.{}", quote(schema), quote(name));
    let mut out = Captured {
        schema: schema.into(),
        name: name.into(),
        estimated_rows: rows.map(|n| n as f64),
        table_bytes: data.unwrap_or(0),
        index_bytes: index.unwrap_or(0),
        server: format!("MariaDB/MySQL {}", server.unwrap_or_default()),
        ..Captured::default()
    };
    let columns: Vec<Row> = c
        .exec(step(SQL, "columns"), (schema, name))
        .await
        .map_err(query("read the columns"))?;
    for r in columns {
        let get = |i: usize| {
            r.get_opt::<Option<String>, _>(i)
                .and_then(Result::ok)
                .flatten()
        };
        let (data_type, column_type) = (get(1).unwrap_or_default(), get(2).unwrap_or_default());
        let extra = get(5).unwrap_or_default().to_ascii_lowercase();
        let (ty, category) = kind(&data_type);
        let ty = match data_type.as_str() {
            "enum" => {
                out.enums
                    .push((column_type.clone(), enum_labels(&column_type)));
                column_type.clone()
            }
            _ => ty.to_string(),
        };
        // MariaDB writes a NULL default as the word NULL.
        let default = get(4).filter(|d| d != "NULL");
        out.columns.push(Column {
            name: get(0).unwrap_or_default(),
            ty,
            not_null: r.get_opt::<i64, _>(3).and_then(Result::ok) == Some(1),
            default,
            identity: match extra.contains("auto_increment") {
                true => "d".into(),
                false => String::new(),
            },
            generated: match extra.contains("generated") || extra.contains("persistent") {
                true => "s".into(),
                false => String::new(),
            },
            category: category.into(),
            avg_width: None,
            common: Vec::new(),
        });
    }
    let indexes: Vec<(String, i64, String)> = c
        .exec(step(SQL, "indexes"), (schema, name))
        .await
        .map_err(query("read the indexes"))?;
    for (index, non_unique, cols) in indexes {
        if index == "PRIMARY" {
            out.primary_key = cols.split(", ").map(str::to_string).collect();
            continue;
        }
        let kind = if non_unique == 0 { "UNIQUE KEY" } else { "KEY" };
        out.indexes
            .push((index.clone(), format!("{kind} {} ({cols})", quote(&index))));
    }
    let foreign: Option<i64> = c
        .exec_first(step(SQL, "foreign-keys"), (schema, name))
        .await
        .map_err(query("read the foreign keys"))?;
    let create: Option<(String, String)> = c
        .query_first(fill(step(SQL, "create"), &[("table", &table)]))
        .await
        .map_err(query("read the table's DDL"))?;
    let (ddl, _) = rebuildable(&create.map(|(_, d)| d).unwrap_or_default());
    // MariaDB's JSON is LONGTEXT with a json_valid check: a JSON payload all the same.
    for col in &mut out.columns {
        if ddl.contains(&format!("json_valid(`{}`)", col.name)) {
            (col.ty, col.category) = ("json".into(), "U".into());
        }
    }
    out.create_table = Some(ddl);
    out.foreign_keys = foreign.unwrap_or(0) as usize;
    read_values(c, &mut out, &table, counted).await?;
    read_widths(c, &mut out, &table).await?;
    read_statements(c, &mut out).await;
    read_arrivals(c, &mut out, &table, sample).await?;
    Ok(out)
}

/// The values of the role-named columns (and `counted`), as frequencies.
async fn read_values(
    c: &mut Conn,
    out: &mut Captured,
    table: &str,
    counted: Option<&str>,
) -> Result<(), CaptureError> {
    for col in &mut out.columns {
        let named = ROLE_NAMED.contains(&col.name.as_str()) || Some(col.name.as_str()) == counted;
        if !named || !"SN".contains(col.category.as_str()) {
            continue;
        }
        let sql = fill(
            step(SQL, "common"),
            &[("column", &quote(&col.name)), ("table", table)],
        );
        let rows: Vec<(Option<String>, i64, f64)> = c
            .query(sql)
            .await
            .map_err(query("count a column's values"))?;
        col.common = rows
            .into_iter()
            .filter_map(|(v, n, all)| Some((v?, n as f64 / all.max(1.0))))
            .collect();
    }
    Ok(())
}

/// Average sizes of the string, JSON and binary columns: the payload's width.
async fn read_widths(c: &mut Conn, out: &mut Captured, table: &str) -> Result<(), CaptureError> {
    let sized: Vec<usize> = (0..out.columns.len())
        .filter(|&i| "SU".contains(out.columns[i].category.as_str()))
        .collect();
    if sized.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = sized.iter().map(|&i| quote(&out.columns[i].name)).collect();
    let widths: Vec<String> = names
        .iter()
        .map(|n| format!("CAST(AVG(LENGTH({n})) AS SIGNED)"))
        .collect();
    let sql = fill(
        step(SQL, "widths"),
        &[
            ("widths", &widths.join(", ")),
            ("columns", &names.join(", ")),
            ("table", table),
        ],
    );
    let row: Option<Row> = c.query_first(sql).await.map_err(query("measure widths"))?;
    if let Some(row) = row {
        for (k, &i) in sized.iter().enumerate() {
            let w = row
                .get_opt::<Option<i64>, _>(k)
                .and_then(Result::ok)
                .flatten();
            out.columns[i].avg_width = w.map(|w| w.clamp(0, i32::MAX as i64) as i32);
        }
    }
    Ok(())
}

/// Ids handed out over `sample` (the largest id before and after): the arrival rate of
/// a table whose ids are its own counter's.
async fn read_arrivals(
    c: &mut Conn,
    out: &mut Captured,
    table: &str,
    sample: Duration,
) -> Result<(), CaptureError> {
    let id = match out.primary_key.as_slice() {
        [one]
            if out
                .columns
                .iter()
                .any(|k| k.name == *one && k.identity == "d") =>
        {
            one.clone()
        }
        _ => {
            if !sample.is_zero() {
                out.unread.push(
                    "arrivals: the primary key is not an AUTO_INCREMENT column, so ids handed out cannot be counted"
                        .into(),
                );
            }
            return Ok(());
        }
    };
    if sample.is_zero() {
        return Ok(());
    }
    let sql = fill(
        step(SQL, "max-id"),
        &[("id", &quote(&id)), ("table", table)],
    );
    // Out of the transaction, whose snapshot would show the same largest id twice; the
    // session stays read-only.
    c.query_drop("ROLLBACK")
        .await
        .map_err(query("end the read-only transaction"))?;
    let started = std::time::Instant::now();
    let mut largest = [0i64; 2];
    for (k, n) in largest.iter_mut().enumerate() {
        if k == 1 {
            tokio::time::sleep(sample).await;
        }
        let r: Option<Option<i64>> = c
            .query_first(&sql)
            .await
            .map_err(query("read the largest id"))?;
        *n = r.flatten().unwrap_or(0);
    }
    let secs = started.elapsed().as_secs_f64();
    if secs > 0.0 {
        out.arrivals_per_s = Some((largest[1] - largest[0]).max(0) as f64 / secs);
        out.sample_s = secs;
    }
    Ok(())
}

/// The statements that name the table, from performance_schema's digests; else why not.
async fn read_statements(c: &mut Conn, out: &mut Captured) {
    let pattern = format!("%{}%", out.name.replace('%', "\\%").replace('_', "\\_"));
    let rows: Result<Vec<DigestRow>, _> = c
        .exec(step(SQL, "statements"), (&out.schema, pattern))
        .await;
    match rows {
        Ok(rows) if rows.is_empty() => out.unread.push(
            "statements that name the table: performance_schema's digests hold none (performance_schema off, or none ran since the server started)".into(),
        ),
        Ok(rows) => {
            out.statements = rows
                .into_iter()
                .map(|(t, n, ms)| (t.unwrap_or_default(), n, ms.unwrap_or(0.0)))
                .collect();
        }
        Err(e) => out
            .unread
            .push(format!("statements that name the table: {}", query("")(e))),
    }
}

/// Counts rows by state exactly when the table is small, else estimates them from the
/// values counted over 100,000 rows.
pub async fn count_states(
    opts: &Opts,
    out: &mut Captured,
    state: &str,
) -> Result<(), CaptureError> {
    if super::estimate_states(out, state) {
        return Ok(());
    }
    let mut c = read_only(opts).await?;
    let table = format!("{}.{}", quote(&out.schema), quote(&out.name));
    let sql = fill(
        step(SQL, "count-states"),
        &[("column", &quote(state)), ("table", &table)],
    );
    let rows: Result<Vec<(Option<String>, i64)>, _> = c.query(sql).await;
    let _ = c.query_drop("ROLLBACK").await;
    let _ = c.disconnect().await;
    out.by_state = rows
        .map_err(query("count the rows by state"))?
        .into_iter()
        .map(|(v, n)| (v.unwrap_or_default(), n))
        .collect();
    out.by_state_exact = true;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_labels_are_read_with_their_quotes() {
        assert_eq!(enum_labels("enum('a','b''c','d e')"), ["a", "b'c", "d e"]);
        assert!(enum_labels("varchar(10)").is_empty());
    }

    /// A foreign key names another table, and the counter's value is the source's: a
    /// run rebuilds the table without either, and the commas stay right.
    #[test]
    fn the_ddl_is_rebuilt_without_foreign_keys_or_the_counter() {
        let ddl = "CREATE TABLE `jobs` (\n  `id` bigint(20) NOT NULL AUTO_INCREMENT,\n  `owner` bigint(20) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  CONSTRAINT `fk` FOREIGN KEY (`owner`) REFERENCES `owners` (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=60001 DEFAULT CHARSET=utf8mb4";
        let (text, foreign) = rebuildable(ddl);
        assert_eq!(foreign, 1);
        assert!(
            text.contains("  PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET"),
            "{text}"
        );
        assert!(text.contains("NOT NULL AUTO_INCREMENT,"), "{text}");
    }

    #[test]
    fn mysql_types_read_as_the_roles_expect() {
        assert_eq!(kind("bigint"), ("bigint", "N"));
        assert_eq!(kind("varchar"), ("character varying", "S"));
        assert_eq!(kind("longtext"), ("text", "S"));
        assert_eq!(kind("datetime"), ("timestamp", "D"));
        assert_eq!(kind("json").1, "U");
        assert_eq!(kind("mediumblob"), ("bytea", "U"));
    }
}
