//! Golden tests: the exact T-SQL each strategy sends (schema `claimbench`) and the
//! parameters it binds, pinned in `tests/golden/mssql/`. After a deliberate change to a
//! statement, `CLAIMBENCH_BLESS=1 cargo test --lib mssql` rewrites the files; review
//! their diff like code.

use super::*;
use crate::backend::sql::{sql_steps, step};
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/mssql")
}

/// Compares `actual` with the golden file `name`, or rewrites it when blessing.
fn check(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("CLAIMBENCH_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run with CLAIMBENCH_BLESS=1", path.display()));
    assert_eq!(
        actual,
        expected,
        "{name} differs from {}; if the change is meant, rerun with CLAIMBENCH_BLESS=1 and review the diff",
        path.display()
    );
}

fn named(name: &str) -> Strategy {
    Strategy::builtin_named(name).unwrap()
}

/// A sharded strategy's SQL Server file.
fn sharded(name: &str) -> &'static str {
    match named(name).form(BackendKind::Mssql) {
        crate::strategy::Form::Sql(std::borrow::Cow::Borrowed(sql)) => sql,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn statements_match_their_golden_files() {
    let schema = "claimbench";
    for (name, sql) in [
        (
            "production.sql",
            locking_claim_sql(&Strategy::PRODUCTION, schema, false),
        ),
        (
            "production-rcsi.sql",
            locking_claim_sql(&Strategy::PRODUCTION, schema, true),
        ),
        (
            "waiting.sql",
            locking_claim_sql(&Strategy::WAITING, schema, false),
        ),
        (
            "waiting-rcsi.sql",
            locking_claim_sql(&Strategy::WAITING, schema, true),
        ),
        (
            "rowlock.sql",
            locking_claim_sql(&Strategy::builtin_named("rowlock").unwrap(), schema, false),
        ),
        (
            "rowlock-rcsi.sql",
            locking_claim_sql(&Strategy::builtin_named("rowlock").unwrap(), schema, true),
        ),
        (
            "paglock.sql",
            locking_claim_sql(&Strategy::builtin_named("paglock").unwrap(), schema, false),
        ),
        (
            "paglock-rcsi.sql",
            locking_claim_sql(&Strategy::builtin_named("paglock").unwrap(), schema, true),
        ),
        (
            "naive-select.sql",
            with_schema(step(SQL.naive, "select"), schema),
        ),
        (
            "naive-update.sql",
            with_schema(step(SQL.naive, "update"), schema),
        ),
        (
            "conditional-select.sql",
            with_schema(step(SQL.conditional, "select"), schema),
        ),
        (
            "conditional-claim-one.sql",
            with_schema(step(SQL.conditional, "claim-one"), schema),
        ),
        (
            "version-cas-select.sql",
            with_schema(step(SQL.version_cas, "select"), schema),
        ),
        (
            "version-cas-claim-batch.sql",
            with_schema(step(SQL.version_cas, "claim-batch"), schema),
        ),
        (
            "offset-start.sql",
            locking_claim_sql(&named("offset-start"), schema, false),
        ),
        (
            "offset-start-rcsi.sql",
            locking_claim_sql(&named("offset-start"), schema, true),
        ),
        (
            "sharded-select.sql",
            with_schema(step(sharded("sharded"), "select"), schema),
        ),
        (
            "sharded-read-write-select.sql",
            with_schema(step(sharded("sharded-read-write"), "select"), schema),
        ),
        (
            "sharded-skip-locked.sql",
            locking_claim_sql(&named("sharded-skip-locked"), schema, false),
        ),
        (
            "sharded-skip-locked-rcsi.sql",
            locking_claim_sql(&named("sharded-skip-locked"), schema, true),
        ),
    ] {
        check(name, &format!("{sql}\n"));
    }
}

#[test]
fn binds_match_their_golden_file() {
    let text = format!(
        "production, waiting, sharded-skip-locked (batch 10, worker w3): {:?}\noffset-start-64 (batch 10, worker w3): {:?}\nnaive select, conditional select, version-cas select (batch 10): {:?}\nsharded select, sharded-read-write select (batch 10, worker w3): {:?}\nnaive update: {:?}\nconditional claim-one: {:?}\nversion-cas claim-batch: {:?}\n",
        {
            let (b, n) = claim_binds(&Strategy::PRODUCTION, 10, "w3");
            b[..n].to_vec()
        },
        {
            let (b, n) = claim_binds(&named("offset-start-64"), 10, "w3");
            b[..n].to_vec()
        },
        select_binds(10),
        sharded_select_binds(10, "w3"),
        naive_update_binds("w3", "[7,9]"),
        claim_one_binds("w3", 7, 2),
        version_cas_binds("w3", "[[7,2001],[9,2002]]"),
    );
    check("binds.txt", &text);
}

#[test]
fn production_is_the_seed_statement() {
    // The seed's text (../shared/seeds/000_*), line for line, between its WITH and its
    // last OUTPUT column; claimbench adds one OUTPUT column and the DECLARE naming @P1/@P2.
    let sql = locking_claim_sql(&Strategy::PRODUCTION, "chokaq", false);
    for line in [
        "WITH ActiveCounts AS (",
        "    FROM [chokaq].[JobsHot] h WITH (UPDLOCK, READPAST)",
        "    LEFT JOIN [chokaq].[Queues] q ON h.[Queue] = q.[Name]",
        "      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)",
        "       OR ([CurrentActive] + [QueueRank]) <= [MaxWorkers]",
        "    SELECT TOP (@Limit) [Id]",
        "FROM [chokaq].[JobsHot] h WITH (UPDLOCK, READPAST)",
        "INNER JOIN Picked p ON p.[Id] = h.[Id];",
    ] {
        assert!(sql.lines().any(|l| l == line), "missing `{line}`:\n{sql}");
    }
    assert!(sql.starts_with("DECLARE @Limit int = @P1, @WorkerId varchar(100) = @P2;\n"));
    assert_eq!(sql.matches("READPAST").count(), 2);
}

#[test]
fn rcsi_form_adds_readcommittedlock_to_every_lock_hint_and_nothing_else() {
    for strategy in [Strategy::PRODUCTION, Strategy::WAITING] {
        let plain = locking_claim_sql(&strategy, "s", false);
        let rcsi = locking_claim_sql(&strategy, "s", true);
        assert_eq!(rcsi.matches("READCOMMITTEDLOCK").count(), 2, "{strategy}");
        assert_eq!(rcsi.replace(", READCOMMITTEDLOCK", ""), plain);
    }
    let waiting = locking_claim_sql(&Strategy::WAITING, "s", false);
    assert!(!waiting.contains("READPAST"));
    assert_eq!(waiting.matches("WITH (UPDLOCK)").count(), 2);
}

#[test]
fn schema_names_are_bracket_escaped() {
    assert_eq!(with_schema("[{SCHEMA}].[T]", "a]b"), "[a]]b].[T]");
}

#[test]
fn the_partial_layout_filters_on_a_literal() {
    let ddl = crate::backend::layouts::sql(BackendKind::Mssql, "pending-partial", &[]).unwrap();
    assert!(ddl.contains("WHERE [Status] = 0;"));
}

#[test]
fn escalation_warning_counts_the_eligible_backlog_not_the_batch() {
    // Regression: the estimate was batch x indexes, but the seed's Candidates CTE
    // U-locks every eligible row it reads: a batch of 10 over 60,000 eligible rows is
    // far past the threshold, and was not warned about.
    let target = crate::backend::mssql_target::parse_url("mssql://sa:x@h/db").unwrap();
    let b = MssqlBackend::new(target, "s");
    let workload = |backlog: u32| {
        crate::workload::Workload::parse(
            std::path::Path::new("w.toml"),
            &format!("name = \"t\"\n[population]\nbacklog = {backlog}\nscheduled_share = 0.5\nqueues = [{{ name = \"q\", weight = 3 }}, {{ name = \"p\", paused = true }}]\n[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [10]\n[trial]\nduration_s = 1\n"),
        )
        .unwrap()
    };
    let small = workload(4000); // 4000 x 3/4 open x 1/2 due = 1500 eligible, 3000 locks
    assert!(
        b.trial_warnings(&small, "fetch-order", &Strategy::PRODUCTION)
            .is_empty()
    );
    let mut big = workload(8000); // 3000 eligible x 2 indexes
    assert_eq!(
        b.trial_warnings(&big, "fetch-order", &Strategy::PRODUCTION),
        vec![Warning::LockEscalationRisk {
            eligible: 3000,
            indexes: 2,
            locks: 6000
        }]
    );
    assert!(
        b.trial_warnings(&big, "fetch-order", &Strategy::NAIVE)
            .is_empty()
    );
    big.lock_escalation = crate::workload::LockEscalation::Disable;
    assert!(
        b.trial_warnings(&big, "fetch-order", &Strategy::PRODUCTION)
            .is_empty()
    );
}

#[test]
fn deadlocks_and_lock_timeouts_are_retryable_and_refusals_say_what_to_check() {
    assert_eq!(server_error_kind(1205), ErrorKind::Deadlock);
    assert_eq!(server_error_kind(1222), ErrorKind::LockTimeout);
    assert_eq!(server_error_kind(3960), ErrorKind::Serialization);
    assert_eq!(server_error_kind(208), ErrorKind::Other);
    assert!(connect_hint(18456).contains("user and password"));
    assert!(connect_hint(4060).contains("database does not exist"));
    assert!(permission_hint(300).contains("VIEW SERVER STATE"));
    assert!(permission_hint(2760).contains("CREATE SCHEMA"));
    assert_eq!(permission_hint(208), "");
    let io =
        tiberius::error::Error::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
    assert_eq!(query_error("claim", io).kind(), ErrorKind::ConnectionLost);
}

#[test]
fn tls_failures_name_the_server_and_the_fix_but_not_the_password() {
    let target = crate::backend::mssql_target::parse_url("mssql://sa:hunter2@db.local/q").unwrap();
    let b = MssqlBackend::new(target, "s");
    let e = b
        .connect_error(&tiberius::error::Error::Tls(
            "invalid peer certificate: UnknownIssuer".into(),
        ))
        .to_string();
    assert!(
        e.starts_with(
            "cannot connect to mssql://sa@db.local:1433/q: TLS: invalid peer certificate"
        ),
        "{e}"
    );
    assert!(e.contains("trust_server_certificate=true"), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
}

/// Every T-SQL text the backend can send, with the schema filled in, by name.
fn every_statement() -> Vec<(String, String)> {
    let s = |sql: &str| with_schema(sql, "claimbench");
    let mut all = Vec::new();
    // Every built-in strategy with a SQL Server form: a claim as sent (with and without
    // RCSI's hint), a two-step strategy's every step.
    for strategy in Strategy::builtin() {
        let Some(file) = strategy.sql(BackendKind::Mssql) else {
            continue;
        };
        if strategy.shape() == Shape::Claim {
            for rcsi in [false, true] {
                all.push((
                    format!("strategies/{strategy} (rcsi {rcsi})"),
                    locking_claim_sql(&strategy, "claimbench", rcsi),
                ));
            }
        } else {
            for (name, sql) in sql_steps(file) {
                all.push((format!("strategies/{strategy} {name}"), s(sql)));
            }
        }
    }
    for (name, file) in [
        ("lifecycle/start", SQL.start),
        ("lifecycle/start_ungated", START_UNGATED_SQL),
        ("lifecycle/heartbeat", SQL.heartbeat),
        ("lifecycle/effect", SQL.effect),
        ("lifecycle/complete", SQL.complete),
        ("lifecycle/fail", SQL.fail),
        ("lifecycle/release", SQL.release),
        ("lifecycle/rescue", SQL.rescue),
        ("lifecycle/produce", SQL.produce),
        ("evidence/sample", SQL.sample),
        ("evidence/reconcile", SQL.reconcile),
        ("evidence/counters", SQL.counters),
        ("evidence/table_stats", SQL.table_stats),
        ("evidence/settings", SQL.settings),
        ("evidence/job_queues", SQL.job_queues),
        ("evidence/clock", SQL.clock),
        ("evidence/completed_by_queue", SQL.completed_by_queue),
        ("schema", SQL.schema),
        ("drop", DROP_SQL),
        ("marker", MARKER_SQL),
        ("seed", SQL.seed),
    ] {
        all.push((name.to_string(), s(&statement_body(file))));
    }
    let placeholders = [
        ("escalation", "TABLE"),
        ("name", "LOCK_TIMEOUT"),
        ("value", "100"),
        ("id", "52"),
    ];
    for (file, sql) in [
        ("control", SQL.control),
        ("reset", SQL.reset),
        ("session", SQL.session),
    ] {
        for (name, step) in sql_steps(sql) {
            let filled = crate::backend::sql::fill(step, &placeholders);
            all.push((format!("{file} {name}"), s(&filled)));
        }
    }
    for l in crate::workload::INDEX_LAYOUTS {
        if crate::backend::layouts::BROKER_LAYOUTS.contains(&l) {
            continue;
        }
        all.push((
            format!("indexes/{l}"),
            s(&statement_body(
                crate::backend::layouts::sql(BackendKind::Mssql, l, &[]).unwrap(),
            )),
        ));
    }
    all
}

/// What `sqlparser`'s T-SQL dialect (0.61) cannot read, removed before parsing so the
/// rest of each statement is still checked: `OUTPUT ...` clauses of UPDATE, INSERT and
/// DELETE (with their `INTO`), which it parses only on MERGE, and `CLUSTERED` after
/// `PRIMARY KEY`. docs/backends.md's "SQL Server" section says the same.
fn parseable_form(sql: &str) -> (String, Vec<&'static str>) {
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    let mut output_indent: Option<usize> = None;
    for line in sql.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if t == "OUTPUT" || t.starts_with("OUTPUT ") {
            output_indent = Some(indent);
            if !removed.contains(&"OUTPUT") {
                removed.push("OUTPUT");
            }
            continue;
        }
        if let Some(i) = output_indent {
            if indent > i || (indent == i && t.starts_with("INTO ")) {
                continue;
            }
            output_indent = None;
        }
        kept.push(line);
    }
    let mut text = kept.join("\n");
    if text.contains(" CLUSTERED") {
        text = text.replace(" CLUSTERED", "");
        removed.push("CLUSTERED");
    }
    (text, removed)
}

/// The statements that still do not parse after `parseable_form`, and why.
const UNPARSED: &[(&str, &str)] = &[
    (
        "schema",
        "the persisted computed column `[DueUtc] AS ISNULL(...) PERSISTED`",
    ),
    (
        "reset create-schema",
        "dynamic SQL: `EXEC(N'CREATE SCHEMA ' + QUOTENAME(@P1))`",
    ),
    ("reset statistics", "`UPDATE STATISTICS [schema].[table]`"),
];

#[test]
fn every_t_sql_statement_parses_with_a_t_sql_parser() {
    use sqlparser::dialect::MsSqlDialect;
    use sqlparser::parser::Parser;
    let mut failed = Vec::new();
    let mut partial = Vec::new();
    for (name, sql) in every_statement() {
        let (text, removed) = parseable_form(&sql);
        if !removed.is_empty() {
            partial.push(format!("{name} (without {})", removed.join(", ")));
        }
        if let Err(e) = Parser::parse_sql(&MsSqlDialect {}, &text) {
            failed.push(format!("{name}: {e}"));
        }
    }
    let expected: Vec<&str> = UNPARSED.iter().map(|(n, _)| *n).collect();
    let got: Vec<&str> = failed
        .iter()
        .map(|f| f.split(':').next().unwrap())
        .collect();
    assert_eq!(got, expected, "parser failures:\n{}", failed.join("\n"));
    // What could be checked only in part: the claim statements, the lifecycle moves and
    // the schema. A new OUTPUT elsewhere shows up here.
    assert_eq!(partial.len(), 23, "{partial:#?}");
}

/// A declared T-SQL claim as sent and bound, pinned like the built-ins: its named
/// parameters as tiberius's `@P1`…, `[{SCHEMA}]` filled in, READCOMMITTEDLOCK added to
/// its UPDLOCK hints under RCSI, and its binds in order (the batch as int, the worker
/// and queue as text, an integer constant as bigint). No SQL Server runs here: what
/// the server does with it is the integration suite's, given CLAIMBENCH_MSSQL_URL.
#[test]
fn a_declared_claim_is_sent_and_bound_as_pinned() {
    use crate::strategy::custom::{Declared, DeclaredFile, declare};
    let text = "WITH picked AS (\n    SELECT TOP (:batch) [Id] FROM [{SCHEMA}].[JobsHot] WITH (UPDLOCK, READPAST)\n    WHERE [Status] = 0 AND [Queue] = :queue AND [AttemptCount] < :max_attempts\n    ORDER BY [Priority] DESC, [Id]\n)\nUPDATE h SET h.[Status] = 1, h.[WorkerId] = :worker_id\nOUTPUT INSERTED.[Id], INSERTED.[AttemptCount]\nFROM [{SCHEMA}].[JobsHot] h INNER JOIN picked p ON p.[Id] = h.[Id];\n";
    let s = declare(&Declared {
        mssql: Some(DeclaredFile {
            file: "team.mssql.sql".into(),
            sql: text.into(),
        }),
        params: [("max_attempts".to_string(), Constant::Int(5))].into(),
        ..Declared::postgres("team-claim", "", "")
    })
    .unwrap();
    let m = s.def().custom.as_ref().unwrap().mssql.clone().unwrap();
    let sent = |rcsi| declared_claim_sql(&m, "claimbench", rcsi);
    let consts = &s.def().custom.as_ref().unwrap().consts;
    let binds = declared_binds(&m, consts, 10, ("w3", "mail"));
    let pinned = format!(
        "-- as sent:\n{}\n-- under RCSI:\n{}\n-- binds, batch 10, worker w3 serving mail:\n{binds:?}\n-- sql --backend mssql lists:\n{}\n",
        sent(false),
        sent(true),
        strategy_params(&s, 10)
    );
    check("declared-claim.sql", &pinned);
    assert!(sent(true).contains("WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)"));
    // It reads as T-SQL, but for its OUTPUT clause, as the shipped claims do.
    let (text, removed) = parseable_form(&sent(false));
    assert_eq!(removed.len(), 1, "{removed:?}");
    sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::MsSqlDialect {}, &text)
        .unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        binds,
        [
            Bind::Int(10),
            Bind::Text("mail"),
            Bind::BigInt(5),
            Bind::Text("w3")
        ]
    );
}
