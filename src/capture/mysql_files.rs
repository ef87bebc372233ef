//! The statements a MySQL/MariaDB capture writes (`table.mysql.sql`, `claim.mysql.sql`):
//! the server's own DDL, a seed step in the table's shape, and a lifecycle and claim for
//! its state column in MySQL's form of a declared table (docs/strategies.md, Your own
//! table: the steps that give ids back are a locking read and an UPDATE, a producer's
//! arrays arrive as JSON). `files.rs` writes them beside the workload and the report.

use super::shape::{Shape, shaped};
use super::{Captured, Column, Roles};
use std::fmt::Write as _;

fn ident(s: &str) -> String {
    match crate::names::is_lower_identifier(s, 63) {
        true => s.to_string(),
        false => format!("`{}`", s.replace('`', "``")),
    }
}

/// A value for a NOT NULL column without a default that no role fills: its most common
/// value where one was counted, else a plain value of its type.
fn filler(col: &Column, c: &Captured) -> Option<String> {
    if let Some((v, _)) = col.common.first() {
        return Some(super::literal(col, v));
    }
    let labels = c.enums.iter().find(|(n, _)| *n == col.ty).map(|(_, l)| l);
    Some(match (col.category.as_str(), labels) {
        (_, Some(l)) => format!("'{}'", l.first()?.replace('\'', "''")),
        ("N", _) => "0".into(),
        ("D", _) => "NOW(6)".into(),
        ("S", _) => "'x'".into(),
        ("U", _) if col.ty == "json" => "'{}'".into(),
        ("U", _) => "''".into(),
        _ => return None,
    })
}

/// MySQL's way of writing a row of `jobs_hot`'s shape (`files::shaped`).
const MYSQL: Shape = Shape {
    ident,
    id: |_| "id".into(),
    priority: |_| "priority".into(),
    now: "NOW(6)",
    payload: |col| match col.ty.as_str() {
        "json" => "JSON_OBJECT('payload', payload)".into(),
        _ => "payload".into(),
    },
    filler,
};

/// The ddl and seed steps: the server's DDL, then claimbench's seeded rows in the
/// table's shape, the first `history` ids finished.
pub(super) fn build(c: &Captured, r: &Roles, history: i64, notes: &mut Vec<String>) -> String {
    let (cols, exprs) = shaped(c, r, (Some(history), &MYSQL), notes);
    format!(
        "-- step: ddl\n{};\n-- step: seed\nINSERT INTO {} ({})\nSELECT {}\nFROM jobs_hot\n",
        c.create_table.as_deref().unwrap_or_default(),
        ident(&c.name),
        cols.join(", "),
        exprs.join(",\n       ")
    )
}

/// The enqueue step, where the id is the table's own counter: a producer's batch, its
/// arrays joined by position, shaped as `jobs_hot`'s rows so that the seed's
/// expressions serve. Empty where the id comes from the table's writers.
pub(super) fn enqueue(c: &Captured, r: &Roles) -> String {
    let own = c
        .columns
        .iter()
        .any(|col| col.name == r.id && col.identity == "d");
    if !own {
        return String::new();
    }
    let (cols, exprs) = shaped(c, r, (None, &MYSQL), &mut Vec::new());
    let json = |name: &str, column: &str, ty: &str| {
        format!("JSON_TABLE(:{name}, '$[*]' COLUMNS (n FOR ORDINALITY, {column} {ty} PATH '$'))")
    };
    format!(
        "-- step: enqueue\n\
         -- A producer's batch: its arrays come as JSON, joined by position.\n\
         INSERT INTO {} ({})\nSELECT {}\n\
         FROM (SELECT q.queue, p.priority, CAST(NULL AS DATETIME(6)) AS scheduled_at,\n\
         \x20            NOW(6) - INTERVAL a.age_us MICROSECOND AS created_at,\n\
         \x20            REPEAT('x', :payload_bytes) AS payload, 'bench' AS type\n\
         \x20     FROM {} a\n\
         \x20     JOIN {} q ON q.n = a.n\n\
         \x20     JOIN {} p ON p.n = a.n) AS jobs_hot\n",
        ident(&c.name),
        cols.join(", "),
        exprs.join(",\n       "),
        json("ages_us", "age_us", "BIGINT"),
        json("queues", "queue", "VARCHAR(255)"),
        json("priorities", "priority", "INT"),
    )
}

/// The lifecycle for the state column: complete, requeue (a locking read of the ids the
/// worker still holds, then their UPDATE), rescue where a claim time is kept, oldest
/// and counts.
pub(super) fn lifecycle(c: &Captured, r: &Roles) -> String {
    let (t, id, st, s) = (ident(&c.name), ident(&r.id), ident(&r.state), &r.states);
    let as_id = returned_as_id(r);
    let mut out = String::new();
    out.push_str(&super::shape::complete(c, r, &MYSQL));
    let _ = writeln!(
        out,
        "-- step: requeue-lock\nSELECT {as_id} FROM {t} WHERE {id} IN (:ids) AND {st} = {} FOR UPDATE\n\
         -- step: requeue\nUPDATE {t} SET {st} = {} WHERE {id} IN (:ids)",
        s.running, s.pending
    );
    if let Some(at) = &r.claimed_at {
        let _ = writeln!(
            out,
            "-- step: rescue-lock\nSELECT {as_id} FROM {t}\nWHERE {st} = {} AND {} < NOW(6) - INTERVAL ROUND(:lease_s * 1000000) MICROSECOND\nFOR UPDATE SKIP LOCKED\n\
             -- step: rescue\nUPDATE {t} SET {st} = {} WHERE {id} IN (:ids)",
            s.running,
            ident(at),
            s.pending
        );
    }
    let _ = match r.due.as_ref().or(r.created.as_ref()) {
        Some(due) => writeln!(
            out,
            "-- step: oldest\n-- The oldest pending job's age: a min over the pending rows (an index on the\n-- state and due columns keeps it a probe).\nSELECT TIMESTAMPDIFF(MICROSECOND, MIN({}), NOW(6)) / 1e3 AS oldest_pending_ms\nFROM {t} WHERE {st} = {}",
            ident(due),
            s.pending
        ),
        None => writeln!(
            out,
            "-- step: oldest\n-- No due or created column to age the pending jobs by.\nSELECT NULL AS oldest_pending_ms"
        ),
    };
    let sum = |v: &str| format!("CAST(SUM({st} = {v}) AS SIGNED)");
    let dead = s.dead.as_deref().map_or("0".into(), sum);
    let _ = writeln!(
        out,
        "-- step: counts\nSELECT {} AS pending,\n       {} AS running,\n       {} AS completed,\n       {dead} AS dead\nFROM {t}",
        sum(&s.pending),
        sum(&s.running),
        sum(&s.done)
    );
    out
}

/// The id column as the steps that return ids name it: `id`.
fn returned_as_id(r: &Roles) -> String {
    match r.id.as_str() {
        "id" => "id".into(),
        other => format!("{} AS id", ident(other)),
    }
}

/// The index a claim of pending rows walks in order: the first led by the state column
/// (then, where it follows, the queue, which the claim then takes as `:queue`); its
/// other columns are the claim's order.
fn poll_index(c: &Captured, r: &Roles) -> Option<(String, bool, Vec<String>)> {
    c.indexes.iter().find_map(|(name, def)| {
        let cols = def.rsplit_once(" (")?.1.strip_suffix(')')?;
        let mut cols: Vec<&str> = cols.split(", ").collect();
        let first = cols.first()?.split(' ').next()?;
        if first != r.state {
            return None;
        }
        cols.remove(0);
        let per_queue = r.queue.as_deref().is_some_and(|q| {
            cols.first()
                .is_some_and(|c0| c0.split(' ').next() == Some(q))
        });
        if per_queue {
            cols.remove(0);
        }
        if cols.is_empty() {
            return None;
        }
        let mut order: Vec<String> = cols
            .iter()
            .map(|term| match term.split_once(' ') {
                Some((col, dir)) => format!("{} {dir}", ident(col)),
                None => ident(term),
            })
            .collect();
        if !cols
            .iter()
            .any(|term| term.split(' ').next() == Some(&r.id))
        {
            order.push(ident(&r.id));
        }
        Some((name.clone(), per_queue, order))
    })
}

/// A skip-locked claim on the table's columns, in MySQL's two steps: the locking read of
/// its pending, due rows, then their UPDATE by id.
pub(super) fn claim(c: &Captured, r: &Roles) -> String {
    let (t, id, st, s) = (ident(&c.name), ident(&r.id), ident(&r.state), &r.states);
    let as_id = returned_as_id(r);
    let mut sets = vec![format!("{st} = {}", s.running)];
    let mut owned = String::new();
    match &r.worker {
        Some(w) => sets.push(format!("{} = :worker_id", ident(w))),
        // The table records no worker; the step binds :worker_id, as every declared
        // MySQL claim does, where it changes nothing.
        None => owned = " AND :worker_id IS NOT NULL".into(),
    }
    if let Some(at) = &r.claimed_at {
        sets.push(format!("{} = NOW(6)", ident(at)));
    }
    let mut filter = r
        .due
        .as_ref()
        .map_or(String::new(), |d| format!(" AND {} <= NOW(6)", ident(d)));
    let (order, how) = match poll_index(c, r) {
        Some((index, per_queue, order)) => {
            if per_queue {
                let q = ident(r.queue.as_deref().expect("per queue only with one"));
                filter = format!(" AND {q} = :queue{filter}");
            }
            let how = format!(
                "in the order of its poll index {}{}",
                ident(&index),
                if per_queue {
                    ", one queue per worker (:queue)"
                } else {
                    ""
                }
            );
            (order.join(", "), how)
        }
        None => match &r.due {
            Some(d) => (format!("{}, {id}", ident(d)), "in due order".to_string()),
            None => (id.clone(), "in id order".to_string()),
        },
    };
    format!(
        "-- A skip-locked claim written by claimbench capture for {t}'s columns: its pending,\n\
         -- due rows {how}, locked,\n\
         -- then claimed by id in the same transaction.\n\
         -- Replace it with your own (capture.md lists the statements that name the table,\n\
         -- where the server keeps them).\n\
         -- step: lock\nSELECT {as_id} FROM {t}\nWHERE {st} = {}{filter}\nORDER BY {order}\nLIMIT :batch\nFOR UPDATE SKIP LOCKED\n\
         -- step: claim\nUPDATE {t} SET {}\nWHERE {id} IN (:ids){owned}\n",
        s.pending,
        sets.join(", ")
    )
}
