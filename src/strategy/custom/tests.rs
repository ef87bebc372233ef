//! The declarations' checks, one form and one refusal at a time (no server: what
//! the servers do with them is the behaviour suite's and tests/cli.rs's).

use super::*;
use crate::backend_kind::BackendKind;

fn declared(name: &str, sql: &str) -> Declared {
    Declared::postgres(name, &format!("{name}.sql"), sql)
}

/// A file with `claim` and `release` steps: the claim alone is the form, the
/// release step numbered on its own (`:ids`, then `:worker_id`); a release step that
/// never reads `:ids`, or a step of another name, is refused naming the file.
#[test]
fn a_release_step_is_its_own_statement_and_must_read_the_ids() {
    let claim = "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot LIMIT :batch) RETURNING id";
    let s = declare(&declared(
        "unit-release",
        &format!("-- step: claim\n{claim}\n-- step: release\nSELECT count(pg_advisory_unlock(id)) FROM unnest(:ids::bigint[]) AS id WHERE :worker_id IS NOT NULL\n"),
    ))
    .unwrap();
    assert!(!s.text(BackendKind::Postgres).contains("release"));
    let r = s.def().custom.as_ref().unwrap().release.clone().unwrap();
    assert!(r.sql.contains("unnest($1::bigint[])") && r.sql.contains("$2 IS NOT NULL"));
    assert_eq!(r.params, vec![Param::Ids, Param::WorkerId]);
    let e = declare(&declared(
        "unit-release",
        &format!("-- step: claim\n{claim}\n-- step: release\nSELECT pg_advisory_unlock_all()\n"),
    ))
    .unwrap_err();
    assert!(e.contains("step release never uses :ids"), "{e}");
    let e = declare(&declared(
        "unit-release",
        &format!("-- step: claim\n{claim}\n-- step: listen\nLISTEN x\n"),
    ))
    .unwrap_err();
    assert!(e.contains("has `-- step: listen`"), "{e}");
}

/// A file with `setup`, `lock` and `claim` steps: the lock step numbered on its own,
/// the claim taking the ids as `:ids`, the setup kept as written; each step's
/// misuse is refused naming the file and the step.
#[test]
fn a_lock_step_hands_its_ids_to_the_claim_and_a_setup_binds_nothing() {
    let setup = "CREATE TABLE claimed (job_id bigint PRIMARY KEY, w text);\nCREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n";
    let lock = "SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED\n";
    let claim = "WITH c AS (INSERT INTO claimed SELECT id, :worker_id FROM unnest(:ids::bigint[]) AS id)\nUPDATE jobs_hot SET worker_id = :worker_id WHERE id = ANY(:ids) RETURNING id\n";
    let file = |setup: &str, lock: &str, claim: &str| {
        format!("-- step: setup\n{setup}-- step: lock\n{lock}-- step: claim\n{claim}")
    };
    let s = declare(&declared("unit-lock", &file(setup, lock, claim))).unwrap();
    let src = s.def().custom.as_ref().unwrap();
    let l = src.lock.as_ref().unwrap();
    assert_eq!(
        l.sql.trim(),
        "SELECT id FROM jobs_hot WHERE status = 0 LIMIT $1 FOR UPDATE SKIP LOCKED"
    );
    assert_eq!(l.params, [Param::Batch]);
    assert_eq!(src.params, [Param::WorkerId, Param::Ids]);
    assert!(
        s.text(BackendKind::Postgres)
            .contains("unnest($2::bigint[])")
    );
    assert_eq!(s.setup_step(BackendKind::Postgres), Some(setup.trim_end()));
    for (f, says) in [
        (
            file(
                setup,
                lock,
                "UPDATE jobs_hot SET worker_id = :worker_id RETURNING id\n",
            ),
            "step claim never uses :ids",
        ),
        (
            file("CREATE TABLE t (n int DEFAULT :batch);\n", lock, claim),
            "step setup: unknown parameter `:batch`",
        ),
        (
            file(setup, &format!("{lock};\nSELECT 2\n"), claim),
            "line 7: a second statement in step lock",
        ),
        (
            file(setup, "SELECT id FROM t WHERE id = ANY(:ids)\n", claim),
            "step lock: unknown parameter `:ids`",
        ),
        (
            format!("-- step: lock\n{lock}-- step: lock\n{lock}-- step: claim\n{claim}"),
            "has `-- step: lock` twice",
        ),
    ] {
        let e = declare(&declared("unit-lock", &f)).unwrap_err();
        assert!(
            e.starts_with("unit-lock.sql") && e.contains(says),
            "{says}: {e}"
        );
    }
    // Without a lock step, :ids is no parameter of a claim.
    let e = declare(&declared("unit-lock", &format!("-- step: claim\n{claim}"))).unwrap_err();
    assert!(e.contains("unknown parameter `:ids`"), "{e}");
}

/// `:queue` and declared constants are numbered like the rest; a constant no
/// statement reads, one named like claimbench's own, or one with an odd name is
/// refused naming `params`.
#[test]
fn constants_and_the_queue_are_parameters_too() {
    let sql = "UPDATE jobs_hot SET worker_id = :worker_id WHERE queue = :queue AND attempt_count < :max_attempts AND id IN (SELECT id FROM jobs_hot LIMIT :batch) RETURNING id";
    let with = |params: &[(&str, Constant)]| {
        let mut d = declared("unit-const", sql);
        d.params = params
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        d
    };
    let s = declare(&with(&[("max_attempts", Constant::Int(5))])).unwrap();
    assert_eq!(
        s.text(BackendKind::Postgres),
        "UPDATE jobs_hot SET worker_id = $1 WHERE queue = $2 AND attempt_count < $3 AND id IN (SELECT id FROM jobs_hot LIMIT $4) RETURNING id"
    );
    let src = s.def().custom.as_ref().unwrap();
    assert_eq!(
        src.params,
        [Param::WorkerId, Param::Queue, Param::Const(0), Param::Batch]
    );
    assert_eq!(
        src.describe(Param::Const(0)).as_deref(),
        Some(":max_attempts = 5")
    );
    // Undeclared: the statement's constant is an unknown parameter.
    let e = declare(&with(&[])).unwrap_err();
    assert!(e.contains("unknown parameter `:max_attempts`"), "{e}");
    for (params, says) in [
        (
            vec![
                ("max_attempts", Constant::Int(5)),
                ("lease", Constant::Text("30 s".into())),
            ],
            "params.lease is declared but no statement",
        ),
        (
            vec![
                ("max_attempts", Constant::Int(5)),
                ("queue", Constant::Text("x".into())),
            ],
            "params.queue is a parameter claimbench binds itself",
        ),
        (
            vec![
                ("max_attempts", Constant::Int(5)),
                ("Max", Constant::Bool(true)),
            ],
            "is not a parameter name",
        ),
    ] {
        let e = declare(&with(&params)).unwrap_err();
        assert!(e.starts_with("params") && e.contains(says), "{says}: {e}");
    }
}

/// A T-SQL claim's misuse is refused naming its file: no worker, no OUTPUT, a
/// parameter numbered by hand, a statement that reaches the host.
#[test]
fn a_sql_server_declaration_says_what_is_wrong() {
    let mssql = |sql: &str| Declared {
        mysql: None,
        mssql: Some(DeclaredFile {
            file: "team.mssql.sql".into(),
            sql: sql.into(),
        }),
        file: String::new(),
        sql: String::new(),
        ..declared("team-claim", "")
    };
    let ok = "UPDATE TOP (:batch) [{SCHEMA}].[JobsHot] SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id] WHERE [Status] = 0 AND [Queue] <> 'JobsHot' AND [JobsHotFlag] = 0";
    let s = declare(&mssql(ok)).unwrap();
    assert!(s.sql(BackendKind::Mssql).unwrap().contains("TOP (@P1)"));
    assert!(s.sql(BackendKind::Postgres).is_none());
    for (sql, says) in [
        (
            "UPDATE TOP (:batch) t SET [Status] = 1 OUTPUT INSERTED.[Id]",
            "never uses :worker_id",
        ),
        (
            "UPDATE TOP (:batch) t SET [WorkerId] = :worker_id",
            "has no OUTPUT clause",
        ),
        (
            "UPDATE TOP (@P1) t SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id]",
            "positional parameter `@P1`",
        ),
        ("EXEC xp_cmdshell 'dir'", "xp_cmdshell"),
        (
            "-- step: setup\nCREATE TABLE t (a int)\n-- step: claim\nUPDATE t SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id]",
            "line 1: a SQL Server claim has no steps",
        ),
        // Unqualified, a name resolves in the login's default schema (dbo): bracketed,
        // bare, or in another schema, each is refused at its line.
        (
            "UPDATE TOP (:batch) [JobsHot] SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id]",
            "line 1: names [JobsHot] without [{SCHEMA}]. in front",
        ),
        (
            "-- [JobsHot] in a comment is no name\nUPDATE TOP (:batch) [{SCHEMA}].[JobsHot]\nSET [WorkerId] = :worker_id OUTPUT INSERTED.[Id]\nWHERE [Queue] NOT IN (SELECT [Name] FROM queues)",
            "line 4: names [Queues] without",
        ),
        (
            "UPDATE TOP (:batch) [dbo].[JobsHot] SET [WorkerId] = :worker_id OUTPUT INSERTED.[Id]",
            "names [JobsHot] without",
        ),
    ] {
        let e = declare(&mssql(sql)).unwrap_err();
        assert!(
            e.starts_with("team.mssql.sql") && e.contains(says),
            "{says}: {e}"
        );
    }
}

#[test]
fn a_declared_statement_runs_as_a_claim_with_numbered_parameters() {
    let s = declare(&declared(
        "unit-claim",
        "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot LIMIT :batch) RETURNING id",
    ))
    .unwrap();
    assert_eq!(s.shape(), Shape::Claim);
    assert!(s.is_custom());
    assert_eq!(
        s.sql(BackendKind::Postgres).unwrap(),
        "UPDATE jobs_hot SET worker_id = $1 WHERE id IN (SELECT id FROM jobs_hot LIMIT $2) RETURNING id"
    );
    assert_eq!(
        s.def().custom.as_ref().unwrap().params,
        &[Param::WorkerId, Param::Batch]
    );
    assert!(s.sql(BackendKind::Mysql).is_none());
    // Known to the workload that declared it, not to the process.
    assert!("unit-claim".parse::<Strategy>().is_err());
}

#[test]
fn a_mysql_declaration_is_two_steps_with_ids_and_worker_id() {
    let mysql = |sql: &str| Declared {
        mysql: Some(DeclaredFile {
            file: "team.mysql.sql".into(),
            sql: sql.into(),
        }),
        ..Declared::postgres("team-claim", "", "")
    };
    let s = declare(&mysql(
        "-- step: setup\nCREATE TABLE claimed (job_id BIGINT PRIMARY KEY)\n\
         -- step: lock\nSELECT id FROM jobs_hot LIMIT :batch FOR UPDATE SKIP LOCKED\n\
         -- step: claim\nUPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (:ids)",
    ))
    .unwrap();
    assert_eq!(
        s.setup_step(BackendKind::Mysql).map(str::trim),
        Some("CREATE TABLE claimed (job_id BIGINT PRIMARY KEY)")
    );
    assert!(s.sql(BackendKind::Mysql).is_some());
    assert!(s.sql(BackendKind::Postgres).is_none());
    let m = s.def().custom.as_ref().unwrap().mysql.as_ref().unwrap();
    assert_eq!(
        m.lock,
        "SELECT id FROM jobs_hot LIMIT ? FOR UPDATE SKIP LOCKED"
    );
    assert_eq!(m.lock_params, [Param::Batch]);
    assert_eq!(
        m.claim,
        "UPDATE jobs_hot SET worker_id = ? WHERE id IN (:ids)"
    );
    assert_eq!(m.claim_params, [Param::WorkerId, Param::Ids]);
    for (sql, says) in [
        (
            "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (:ids)",
            "no `-- step: lock`",
        ),
        (
            "-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET worker_id = :worker_id",
            "never uses :ids",
        ),
        (
            "-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET s = 1 WHERE id IN (:ids)",
            "never uses :worker_id",
        ),
        (
            "-- step: lock\nSELECT id WHERE id IN (:ids)\n-- step: claim\nUPDATE t",
            "step lock: unknown parameter `:ids`",
        ),
        (
            "-- step: setup\nCREATE TABLE t (n INT DEFAULT :batch)\n-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET worker_id = :worker_id WHERE id IN (:ids)",
            "step setup binds parameters",
        ),
        (
            "-- step: lock\nSELECT id\n-- step: claim\nUPDATE t SET worker_id = :worker_id WHERE id IN (:ids);\nINSERT INTO c VALUES (1)",
            "line 5: a second statement in step claim",
        ),
    ] {
        let e = declare(&mysql(sql)).unwrap_err();
        assert!(e.contains(says) && e.starts_with("team.mysql.sql"), "{e}");
    }
}

/// Regression: a process-wide registry resolved a name to its latest declaration, so
/// two workloads in one process shared one `team-claim`; each now keeps its own.
#[test]
fn two_workloads_may_each_declare_one_name() {
    let sql = |t: &str| format!("UPDATE {t} SET worker_id = :worker_id RETURNING id");
    let a = declare(&declared("team-claim", &sql("a"))).unwrap();
    let b = declare(&declared("team-claim", &sql("b"))).unwrap();
    assert!(
        a.sql(BackendKind::Postgres)
            .unwrap()
            .starts_with("UPDATE a ")
    );
    assert!(
        b.sql(BackendKind::Postgres)
            .unwrap()
            .starts_with("UPDATE b ")
    );
}

#[test]
fn bad_declarations_say_why() {
    assert!(
        declare(&declared("production", "SELECT :batch"))
            .unwrap_err()
            .contains("built-in")
    );
    assert!(
        declare(&declared("a b", "SELECT :batch"))
            .unwrap_err()
            .contains("not a strategy name")
    );
    assert!(
        declare(&declared("bad-param", "SELECT :batch, :tenant"))
            .unwrap_err()
            .contains("unknown parameter `:tenant`")
    );
    // Regression: these ran, and every job was reported lost (exit 1).
    let e = declare(&declared(
        "no-worker",
        "UPDATE jobs_hot SET status = 1 RETURNING id",
    ))
    .unwrap_err();
    assert!(e.contains("never uses :worker_id"), "{e}");
    // On a table the workload declares, its lifecycle says who owns a job: a claim that
    // owns its jobs by a session lock need not name the worker.
    let by_lock = Declared {
        on_declared_table: true,
        ..declared(
            "by-lock",
            "SELECT id FROM que_jobs WHERE pg_try_advisory_lock(id) LIMIT :batch",
        )
    };
    assert!(declare(&by_lock).is_ok());
    let e = declare(&declared("blank", "-- to do\n")).unwrap_err();
    assert!(e.contains("holds no statement"), "{e}");
}
