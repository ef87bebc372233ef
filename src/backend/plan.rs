//! The claim statement's plan, sampled once mid-trial, and the figures a reviewer asks
//! for read off it: its shape (which scans, which indexes), the buffers it touched, the
//! rows it examined to claim a batch. PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS, FORMAT
//! JSON)` and MariaDB's `ANALYZE FORMAT=JSON` are read here; backends without a sample
//! leave it out.

use serde_json::Value;

pub use crate::results::PlanSample;

/// The sample of `statement` from a PostgreSQL `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`
/// result (an array holding one object with `Plan` and `Execution Time`), taken `at_s`
/// into the trial; `None` when it is not one.
pub fn from_postgres(statement: &str, explain: Value, at_s: f64) -> Option<PlanSample> {
    let top = explain.as_array()?.first()?;
    let plan = top.get("Plan")?;
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    Some(PlanSample {
        at_s,
        statement: statement.to_string(),
        shape: shape(plan),
        execution_ms: n(top, "Execution Time"),
        shared_hit: n(plan, "Shared Hit Blocks") as u64,
        shared_read: n(plan, "Shared Read Blocks") as u64,
        rows_examined: examined(plan) as u64,
        analyzed: top.get("Execution Time").is_some(),
        plan: explain,
    })
}

fn children(node: &Value) -> &[Value] {
    node.get("Plans")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn shape(node: &Value) -> String {
    let kind = node.get("Node Type").and_then(Value::as_str).unwrap_or("?");
    let mut s = match node.get("Index Name").and_then(Value::as_str) {
        Some(ix) => format!("{kind} ({ix})"),
        None => kind.to_string(),
    };
    match children(node) {
        [] => {}
        [one] => s.push_str(&format!(" > {}", shape(one))),
        many => {
            let inner: Vec<String> = many.iter().map(shape).collect();
            s.push_str(&format!(" > [{}]", inner.join("; ")));
        }
    }
    s
}

fn examined(node: &Value) -> f64 {
    let n = |k: &str| node.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let kind = node.get("Node Type").and_then(Value::as_str).unwrap_or("");
    let own = if kind.contains("Scan") {
        (n("Actual Rows") + n("Rows Removed by Filter") + n("Rows Removed by Index Recheck"))
            * n("Actual Loops").max(1.0)
    } else {
        0.0
    };
    own + children(node).iter().map(examined).sum::<f64>()
}

/// The sample of `statement` from MariaDB's `ANALYZE FORMAT=JSON` (the statement run,
/// with actual row counts per table access). Its shape lists the table accesses in plan
/// order as `table access_type (key)`; rows examined are each access's rows read times
/// its loops; "buffers" are InnoDB pages accessed (hit = accessed less read from disk).
pub fn from_mariadb(statement: &str, analyze: Value, at_s: f64) -> Option<PlanSample> {
    let block = analyze.get("query_block")?;
    let mut tables = Vec::new();
    table_accesses(block, &mut tables);
    if tables.is_empty() {
        return None;
    }
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let (mut accessed, mut read, mut examined) = (0.0, 0.0, 0.0);
    let mut shape = Vec::new();
    for t in &tables {
        let access = t.get("access_type").and_then(Value::as_str).unwrap_or("?");
        let name = t.get("table_name").and_then(Value::as_str).unwrap_or("?");
        shape.push(match t.get("key").and_then(Value::as_str) {
            Some(key) => format!("{name} {access} ({key})"),
            None => format!("{name} {access}"),
        });
        examined += n(t, "r_rows") * n(t, "r_loops").max(1.0);
        let stats = t.get("r_engine_stats").unwrap_or(&Value::Null);
        accessed += n(stats, "pages_accessed");
        read += n(stats, "pages_read_count");
    }
    let total_ms = analyze
        .get("query_optimization")
        .map_or(0.0, |o| n(o, "r_total_time_ms"))
        + n(block, "r_total_time_ms");
    Some(PlanSample {
        at_s,
        statement: statement.to_string(),
        shape: shape.join("; "),
        execution_ms: total_ms,
        shared_hit: (accessed - read).max(0.0) as u64,
        shared_read: read as u64,
        rows_examined: examined as u64,
        plan: analyze,
        analyzed: true,
    })
}

/// Every object with a `table_name`, depth first (nested loops, unions, subqueries,
/// materializations and sorts all nest their tables); arrays in their order, an
/// object's members in serde_json's (alphabetical) order.
fn table_accesses<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) if m.contains_key("table_name") => {
            out.push(v);
            m.values().for_each(|c| table_accesses(c, out));
        }
        Value::Object(m) => m.values().for_each(|c| table_accesses(c, out)),
        Value::Array(a) => a.iter().for_each(|c| table_accesses(c, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tables_pages_and_rows_examined_off_a_mariadb_analyze() {
        let analyze = serde_json::json!({
            "query_optimization": {"r_total_time_ms": 0.2},
            "query_block": {
                "select_id": 1, "r_loops": 1, "r_total_time_ms": 0.08,
                "nested_loop": [{"table": {
                    "table_name": "h", "access_type": "range", "key": "ix_fetch",
                    "r_loops": 1, "r_rows": 12, "r_engine_stats": {"pages_accessed": 3}
                }}],
                "subqueries": [{"materialization": {"query_block": {
                    "nested_loop": [{"table": {
                        "table_name": "p", "access_type": "eq_ref", "key": "PRIMARY",
                        "r_loops": 12, "r_rows": 1,
                        "r_engine_stats": {"pages_accessed": 12, "pages_read_count": 2}
                    }}]
                }}}]
            }
        });
        let p = from_mariadb("lock step", analyze, 2.0).unwrap();
        assert_eq!(p.shape, "h range (ix_fetch); p eq_ref (PRIMARY)");
        assert_eq!(p.rows_examined, 12 + 12);
        assert_eq!((p.shared_hit, p.shared_read), (13, 2));
        assert!((p.execution_ms - 0.28).abs() < 1e-9);
        assert!(from_mariadb("x", serde_json::json!({"query_block": {}}), 0.0).is_none());
    }

    #[test]
    fn reads_shape_buffers_and_rows_examined_off_a_postgres_plan() {
        let explain = serde_json::json!([{
            "Plan": {
                "Node Type": "ModifyTable", "Shared Hit Blocks": 40, "Shared Read Blocks": 2,
                "Plans": [{
                    "Node Type": "Nested Loop",
                    "Plans": [
                        {"Node Type": "Subquery Scan", "Actual Rows": 10, "Actual Loops": 1,
                         "Plans": [{"Node Type": "Limit", "Plans": [{"Node Type": "LockRows",
                            "Plans": [{"Node Type": "Index Scan", "Index Name": "ix_fetch",
                                       "Actual Rows": 12, "Rows Removed by Filter": 3,
                                       "Actual Loops": 1}]}]}]},
                        {"Node Type": "Index Scan", "Index Name": "jobs_hot_pkey",
                         "Actual Rows": 1, "Actual Loops": 10}
                    ]
                }]
            },
            "Execution Time": 0.42
        }]);
        let p = from_postgres("claim", explain.clone(), 1.5).unwrap();
        assert_eq!(
            p.shape,
            "ModifyTable > Nested Loop > [Subquery Scan > Limit > LockRows > Index Scan (ix_fetch); Index Scan (jobs_hot_pkey)]"
        );
        assert_eq!((p.execution_ms, p.shared_hit, p.shared_read), (0.42, 40, 2));
        // 10 from the subquery scan, 12 + 3 from the index scan, 1 × 10 loops.
        assert_eq!(p.rows_examined, 35);
        assert_eq!(
            (p.statement.as_str(), p.at_s, &p.plan),
            ("claim", 1.5, &explain)
        );
        assert!(from_postgres("claim", serde_json::json!({"not": "a plan"}), 0.0).is_none());
    }
}
