//! A row of claimbench's seeded `jobs_hot` in a captured table's shape: which column
//! each part of a job fills, the same on every engine, and how an engine writes each
//! ([`Shape`]); the seed and enqueue steps of `files.rs` and `mysql_files.rs` are
//! written from it.

use super::{Captured, Column, Roles};

/// How an engine writes the parts of a row of `jobs_hot`'s shape in the table's: a
/// column's name, the id, a priority no common value stands for, the finish time, the
/// payload, and a value for a NOT NULL column no part fills.
pub(super) struct Shape {
    pub(super) ident: fn(&str) -> String,
    pub(super) id: fn(&Column) -> String,
    pub(super) priority: fn(&Column) -> String,
    pub(super) now: &'static str,
    pub(super) payload: fn(&Column) -> String,
    pub(super) filler: fn(&Column, &Captured) -> Option<String>,
}

/// Each column a row of `jobs_hot`'s shape fills, and how, as `shape` writes it: the id
/// (unless `history` is `None`: an insert that takes the table's own ids), the state
/// (finished for the first `history` ids; `Some(0)`: none), the roles' columns, and a
/// value of its type for any other NOT NULL column without a default.
pub(super) fn shaped(
    c: &Captured,
    r: &Roles,
    (history, shape): (Option<i64>, &Shape),
    notes: &mut Vec<String>,
) -> (Vec<String>, Vec<String>) {
    let mut cols = Vec::new();
    let mut exprs = Vec::new();
    for col in &c.columns {
        let is = |role: &Option<String>| role.as_deref() == Some(col.name.as_str());
        let e = if col.name == r.id {
            history.map(|_| (shape.id)(col))
        } else if col.name == r.state {
            Some(match history {
                Some(h) => format!(
                    "CASE WHEN id <= {h} THEN {} ELSE {} END",
                    r.states.done, r.states.pending
                ),
                None => r.states.pending.clone(),
            })
        } else if is(&r.queue) {
            Some("queue".into())
        } else if is(&r.priority) {
            // The workload draws claimbench's priorities; a table whose checks bound its
            // own (River's 1 to 4) gets its most common one.
            Some(match col.common.first() {
                Some((v, _)) => super::literal(col, v),
                None => (shape.priority)(col),
            })
        } else if is(&r.due) {
            Some("COALESCE(scheduled_at, created_at)".into())
        } else if is(&r.created) {
            Some("created_at".into())
        } else if is(&r.finished_at) {
            history.map(|h| format!("CASE WHEN id <= {h} THEN {} END", shape.now))
        } else if is(&r.payload) {
            Some((shape.payload)(col))
        } else if col.generated == "s" || col.default.is_some() || !col.not_null {
            None
        } else {
            let f = (shape.filler)(col, c);
            if f.is_none() {
                notes.push(format!(
                    "column `{}` ({}) is NOT NULL without a default and capture has no value for it: add one to the seed step",
                    col.name, col.ty
                ));
            }
            f
        };
        if let Some(e) = e {
            cols.push((shape.ident)(&col.name));
            exprs.push(e);
        }
    }
    (cols, exprs)
}

/// The complete step: a running job of this worker's made done (its finish time set,
/// where the table keeps one).
pub(super) fn complete(c: &Captured, r: &Roles, shape: &Shape) -> String {
    let (t, id, st) = (
        (shape.ident)(&c.name),
        (shape.ident)(&r.id),
        (shape.ident)(&r.state),
    );
    let finished = r.finished_at.as_ref().map_or(String::new(), |f| {
        format!(", {} = {}", (shape.ident)(f), shape.now)
    });
    format!(
        "-- step: complete\nUPDATE {t} SET {st} = {}{finished}\nWHERE {id} = :id AND {st} = {}\n",
        r.states.done, r.states.running
    )
}
