//! The MySQL backend's statements and helpers, from their text.

#[test]
fn the_rights_that_reach_the_host_are_read_from_global_grants() {
    let g = |lines: &[&str]| {
        super::host_rights(&lines.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    };
    assert_eq!(
        g(&["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"]),
        ["ALL PRIVILEGES"]
    );
    assert_eq!(
        g(&[
            "GRANT SELECT, FILE, PROCESS ON *.* TO `u`@`%`",
            "GRANT ALL PRIVILEGES ON `claimbench`.* TO `u`@`%`",
        ]),
        ["FILE"]
    );
    assert!(
        g(&[
            "GRANT PROCESS ON *.* TO `u`@`%`",
            "GRANT ALL PRIVILEGES ON `claimbench`.* TO `u`@`%`"
        ])
        .is_empty()
    );
    assert!(g(&["GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION"]).is_empty());
}

use super::*;
use crate::backend::sql::sql_steps;

#[test]
fn production_skips_locked_rows_and_waiting_does_not() {
    for branch in ["lock", "lock-capped"] {
        assert!(step(PRODUCTION_SQL, branch).ends_with("FOR UPDATE SKIP LOCKED)"));
        assert!(step(Strategy::WAITING.text(BackendKind::Mysql), branch).ends_with("FOR UPDATE)"));
    }
    // Apart from the lock clause and the header comments, the two are the same steps.
    let body = |s: &str| {
        sql_steps(s)
            .into_iter()
            .map(|(n, sql)| (n.to_string(), sql.replace(" SKIP LOCKED", "")))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        body(PRODUCTION_SQL),
        body(Strategy::WAITING.text(BackendKind::Mysql))
    );
}

#[test]
fn inlined_statements_drop_comments_and_take_every_parameter_in_order() {
    let sql = "-- ? in a comment\nSELECT a FROM t\nWHERE b = ? AND c > ?";
    assert_eq!(
        session::inlined(sql, ["1".into(), "'x'".into()]).as_deref(),
        Some("SELECT a FROM t\nWHERE b = 1 AND c > 'x'")
    );
    assert_eq!(session::inlined(sql, ["1".into()]), None, "too few");
    assert_eq!(
        session::inlined(sql, ["1".into(), "2".into(), "3".into()]),
        None
    );
    // Every shipped offset-start `after` read takes its seven.
    let after = fill(step(offset::OFFSET_SQL, "after"), &[("force_index", "")]);
    assert!(
        session::inlined(
            &after,
            std::array::from_fn::<String, 7, _>(|i| i.to_string())
        )
        .is_some()
    );
}

#[test]
fn locking_reads_join_no_other_table() {
    // InnoDB locks the rows of every table joined in a locking read: a join to
    // `queues` would lock the queue row and hide all its jobs from other claimers.
    let lock = session::lock_sql(PRODUCTION_SQL, 2);
    assert!(!lock.contains("JOIN"), "{lock}");
    assert_eq!(lock.matches("UNION ALL").count(), 2);
    assert!(lock.contains("NOT EXISTS (SELECT 1 FROM queues p"));
}

#[test]
fn claim_columns_match_the_positions_read() {
    for sql in [
        step(PRODUCTION_SQL, "lock"),
        step(PRODUCTION_SQL, "lock-capped"),
        step(SQL.naive, "select"),
        step(SQL.conditional, "select"),
        step(SQL.version_cas, "select"),
    ] {
        let body: String = sql
            .lines()
            .filter(|l| !l.starts_with("--") && !l.starts_with("UNION"))
            .collect::<Vec<_>>()
            .join(" ");
        let body = body.trim_start_matches('(');
        let list = &body["SELECT".len()..body.find(" FROM jobs_hot h").unwrap()];
        // Split at the commas outside parentheses.
        let mut cols = vec![String::new()];
        let mut depth = 0;
        for ch in list.chars() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    cols.push(String::new());
                    continue;
                }
                _ => {}
            }
            cols.last_mut().unwrap().push(ch);
        }
        let cols: Vec<&str> = cols.iter().map(|c| c.trim()).collect();
        assert_eq!(cols[COL_ID], "h.id");
        assert_eq!(cols[1], "h.queue");
        assert_eq!(cols[COL_PRIORITY], "h.priority");
        assert_eq!(cols[COL_ATTEMPT], "h.attempt_count");
        assert!(cols[COL_QUEUE_WAIT_US].ends_with("AS queue_wait_us"));
        if sql == step(SQL.version_cas, "select") {
            assert_eq!(cols[COL_VERSION], "h.version");
            assert_eq!(cols.len(), COL_VERSION + 1);
        } else {
            assert_eq!(cols.len(), COL_QUEUE_WAIT_US + 1);
        }
    }
}

#[test]
fn naive_counts_only_the_rows_its_update_reached() {
    // Regression: every selected id was counted as claimed even when the row had
    // been completed (deleted) before the UPDATE, so naive's claimed/s and
    // duplicate denominators were larger than PostgreSQL's (RETURNING) for the same
    // behaviour.
    use crate::backend::ClaimedJob;
    let job = |id| ClaimedJob {
        id,
        attempt: 0,
        queue_wait_us: 1,
    };
    let got: Vec<i64> = session::naive_claimed([job(1), job(2), job(3)].into_iter(), &[1, 3])
        .map(|j| j.id)
        .collect();
    assert_eq!(got, [1, 3]);
}

#[test]
fn pick_orders_by_priority_then_due_then_id_and_keeps_the_batch() {
    use crate::backend::ClaimedJob;
    let job = |id, queue_wait_us| ClaimedJob {
        id,
        attempt: 0,
        queue_wait_us,
    };
    // As the UNION ALL returns them: uncapped queues' rows, then a capped queue's.
    let mut rows = vec![
        (0, job(1, 500)),
        (0, job(2, 900)),
        (0, job(3, 500)),
        (5, job(9, 10)),
        (0, job(7, 900)),
    ];
    let mut out = Vec::new();
    session::pick(&mut rows, 4, &mut out);
    assert_eq!(out.iter().map(|j| j.id).collect::<Vec<_>>(), [9, 2, 7, 1]);
}
