//! What a strategy sends on MySQL, as `claimbench sql` shows it and the session
//! prepares it: each step's parameters, a two-step claim's steps (declared or shipped),
//! and `:ids` expanded to one placeholder per row of a batch.

use super::*;

/// Where the statements of `:ids` steps take their id list.
const IDS_MARKER: &str = ":ids";

/// The parameters a strategy binds for a batch of `batch`, in the order of its `?`s.
/// A claim-shaped strategy brings its `lock` and `lock-capped` steps; the capacity
/// read and the claim UPDATE are production's, the same for all of them.
pub fn strategy_params(strategy: &Strategy, batch: u32) -> String {
    if let Some(m) = declared(strategy) {
        let show = |params: &[Param]| {
            params
                .iter()
                .map(|p| match p {
                    Param::Batch => format!("? = {batch} (batch)"),
                    Param::WorkerId => "? = worker id".to_string(),
                    Param::Ids => format!(":ids = {batch} placeholders"),
                    Param::Window => "? = window".to_string(),
                    p => format!("? = {}", strategy.param_note(*p)),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        return format!(
            "lock: {}; claim: {}",
            show(&m.lock_params),
            show(&m.claim_params)
        );
    }
    if let Some(k) = strategy.def().offset_window {
        return format!(
            "start: ? = an offset below {k}, drawn per claim; after: the start's priority, due time, id, priority, due time, priority, then ? = {batch}; before (only when after came back short): the start's priority, priority, due time, priority, due time, id, then ? = the rows short; claim: ? = worker id, :ids = {batch} placeholders"
        );
    }
    match strategy.shape() {
        Shape::Claim => format!(
            "capacity: ? = {batch}; lock: ? = {batch}, then per capped queue with room ? = its name, ? = its room; claim: ? = worker id, :ids = {batch} placeholders"
        ),
        Shape::ReadThenWrite | Shape::ReadLockWrite => format!(
            "select: {}? = {batch}; update: ? = worker id, :ids = {batch} placeholders",
            shard_key(strategy)
        ),
        Shape::ReadThenConditional => format!(
            "select: {}? = {batch}; claim-one, per id: ? = worker id, ? = id, ? = attempt count read",
            shard_key(strategy)
        ),
        Shape::VersionCas => format!(
            "select: ? = {batch}; claim-one, per id: ? = worker id, ? = id, ? = version read"
        ),
    }
}

/// What a sharded strategy's select binds before the batch.
fn shard_key(strategy: &Strategy) -> &'static str {
    match strategy.def().sharded {
        true => "? = worker id (its shards), ",
        false => "",
    }
}

/// A workload's own MySQL claim, when `strategy` is one, or a built-in claim written in
/// the same two steps (`lock` and `claim`, beside production's `capacity`-first form:
/// `sharded-skip-locked`, `ready-table`), each file parsed once.
pub fn declared(strategy: &Strategy) -> Option<&crate::strategy::custom::MysqlClaim> {
    use crate::strategy::custom::{DeclaredFile, MysqlClaim, mysql_form};
    static BUILTIN: std::sync::OnceLock<Vec<(Strategy, MysqlClaim)>> = std::sync::OnceLock::new();
    if let Some(c) = &strategy.def().custom {
        return c.mysql.as_ref();
    }
    let builtin = BUILTIN.get_or_init(|| {
        Strategy::builtin()
            .filter(|s| s.shape() == Shape::Claim)
            .filter_map(|s| {
                let sql = s.sql(BackendKind::Mysql)?.to_string();
                let steps: Vec<&str> = sql_steps(&sql).into_iter().map(|(n, _)| n).collect();
                let two_step = steps.contains(&"lock") && steps.contains(&"claim");
                (two_step && !steps.contains(&"capacity")).then(|| {
                    let file = DeclaredFile {
                        file: format!("migrations/mysql/strategies/{s}.sql"),
                        sql: sql.clone(),
                    };
                    let claim = mysql_form(&file, &[]).expect("the shipped file is two steps");
                    (s, claim)
                })
            })
            .collect()
    });
    builtin.iter().find(|(s, _)| s == strategy).map(|(_, c)| c)
}

/// The statements `claimbench sql` shows for `strategy` at `batch`: a declared claim's
/// steps as sent (parameters as `?`, `:ids` expanded), else its file with `:ids`
/// expanded.
pub fn statements_as_sent(strategy: &Strategy, batch: u32) -> String {
    match declared(strategy) {
        Some(m) => format!(
            "-- step: lock\n{}\n-- step: claim\n{}",
            m.lock.trim(),
            expand_ids(m.claim.trim(), batch as usize)
        ),
        None if strategy.def().offset_window.is_some() => offset::as_sent(batch),
        None => expand_ids(strategy.text(BackendKind::Mysql), batch as usize),
    }
}

/// A statement with its `:ids` marker replaced by `n` placeholders.
pub fn expand_ids(sql: &str, n: usize) -> String {
    let list = vec!["?"; n.max(1)].join(", ");
    sql.replace(IDS_MARKER, &list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_update_is_the_statement_the_session_sends() {
        // Sessions prepare one `UPDATE ... WHERE id IN (:ids)` from production.sql's
        // `claim` step and send it for naive too: the two files must say the same SQL.
        let sql = |s: &str| {
            s.lines()
                .filter(|l| !l.starts_with("--"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            sql(step(SQL.naive, "update")),
            sql(step(PRODUCTION_SQL, "claim"))
        );
        // lock-service's file says what the session sends for it: naive's statements.
        let lock = crate::strategy::Strategy::builtin_named("lock-service").unwrap();
        for s in ["select", "update"] {
            assert_eq!(
                sql(step(lock.text(BackendKind::Mysql), s)),
                sql(step(SQL.naive, s))
            );
        }
    }

    #[test]
    fn ids_marker_expands_to_placeholders() {
        assert_eq!(expand_ids("IN (:ids)", 3), "IN (?, ?, ?)");
        assert_eq!(expand_ids("IN (:ids)", 0), "IN (?)");
        for sql in [
            step(PRODUCTION_SQL, "claim"),
            step(SQL.naive, "update"),
            step(SQL.release, "lock"),
            step(SQL.rescue, "update"),
        ] {
            assert!(sql.contains("(:ids)"), "{sql}");
        }
    }
}
