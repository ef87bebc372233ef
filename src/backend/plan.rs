//! The claim statement's plan, sampled once mid-trial, and the figures a reviewer asks
//! for read off it: its shape (which scans, which indexes), the buffers it touched, the
//! rows it examined to claim a batch. PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS, FORMAT
//! JSON)` is read here; backends without a sample leave it out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One claim's plan, executed inside a transaction that was rolled back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSample {
    /// Seconds since the trial's start when it was taken.
    pub at_s: f64,
    /// Which statement: the claim, or a two-step strategy's select step.
    pub statement: String,
    /// `Node (index) > child`, children of one node in brackets.
    pub shape: String,
    pub execution_ms: f64,
    /// Shared buffers found in the cache and read in, for the whole statement.
    pub shared_hit: u64,
    pub shared_read: u64,
    /// Rows the scans produced or filtered out, times their loops: the work behind one
    /// batch.
    pub rows_examined: u64,
    /// The server's plan as it gave it.
    pub plan: Value,
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
