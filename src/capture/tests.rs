use super::*;

fn col(name: &str, ty: &str, category: &str) -> Column {
    Column {
        name: name.into(),
        ty: ty.into(),
        not_null: true,
        default: None,
        identity: String::new(),
        generated: String::new(),
        category: category.into(),
        avg_width: None,
        common: Vec::new(),
    }
}

/// A Que-like table: an integer state, a text queue, a jsonb payload.
fn captured() -> Captured {
    let mut state = col("status", "job_status", "E");
    state.common = vec![("ready".into(), 0.7), ("done".into(), 0.3)];
    let mut args = col("args", "jsonb", "U");
    args.avg_width = Some(90);
    let mut queue = col("queue", "text", "S");
    queue.common = vec![("mail".into(), 0.75), ("sms".into(), 0.25)];
    let mut worker = col("locked_by", "text", "S");
    worker.not_null = false;
    let mut note = col("note", "character varying(20)", "S");
    note.avg_width = Some(5);
    note.common = vec![("it's".into(), 0.9)];
    let mut id = col("id", "bigint", "N");
    id.default = Some("nextval('jobs_id_seq'::regclass)".into());
    Captured {
        schema: "app".into(),
        name: "jobs".into(),
        arrivals_per_s: Some(41.6),
        sample_s: 2.0,
        columns: vec![
            id,
            state,
            queue,
            col("run_at", "timestamp with time zone", "D"),
            worker,
            args,
            note,
            col("tries", "integer", "N"),
        ],
        enums: vec![(
            "job_status".into(),
            vec![
                "ready".into(),
                "working".into(),
                "done".into(),
                "failed".into(),
            ],
        )],
        primary_key: vec!["id".into()],
        sequences: vec!["jobs_id_seq".into()],
        constraints: vec![("jobs_pkey".into(), "PRIMARY KEY (id)".into())],
        indexes: vec![(
            "jobs_poll".into(),
            "CREATE INDEX jobs_poll ON jobs USING btree (status, run_at)".into(),
        )],
        by_state: vec![("ready".into(), 700), ("done".into(), 300)],
        by_state_exact: true,
        ..Captured::default()
    }
}

#[test]
fn the_columns_are_told_apart_by_name_type_and_enum_labels() {
    let r = captured().roles(&Hints::default()).unwrap();
    assert_eq!((r.id.as_str(), r.state.as_str()), ("id", "status"));
    assert_eq!(r.states.pending, "'ready'::job_status");
    assert_eq!(r.states.running, "'working'::job_status");
    assert_eq!(r.states.done, "'done'::job_status");
    assert_eq!(r.states.dead.as_deref(), Some("'failed'::job_status"));
    assert_eq!(r.queue.as_deref(), Some("queue"));
    assert_eq!(r.due.as_deref(), Some("run_at"));
    assert_eq!(r.worker.as_deref(), Some("locked_by"));
    assert_eq!(r.payload.as_deref(), Some("args"));
}

#[test]
fn a_claim_follows_a_partial_poll_index_one_queue_per_worker() {
    let mut c = captured();
    c.indexes = vec![
        (
            "jobs_locked".into(),
            "CREATE INDEX jobs_locked ON jobs USING btree (run_at) WHERE (status = 'working'::job_status)".into(),
        ),
        (
            "jobs_by_args".into(),
            "CREATE INDEX jobs_by_args ON jobs USING gin (args)".into(),
        ),
        (
            "jobs_poll".into(),
            "CREATE INDEX jobs_poll ON jobs USING btree (queue, run_at DESC, id) WHERE (status = 'ready'::job_status)".into(),
        ),
    ];
    let r = c.roles(&Hints::default()).unwrap();
    let p = poll_index_of(&c, &r).expect("the partial index on the state");
    assert!(
        p.contains("queue = :queue") && p.contains("ORDER BY run_at DESC, id"),
        "{p}"
    );
    // An index of the running rows, or on neither the state nor with the pending rows in
    // its predicate, is not a poll index.
    c.indexes.truncate(2);
    assert!(
        poll_index_of(&c, &r)
            .unwrap()
            .contains("ORDER BY run_at, id")
    );
}

/// The claim capture writes for `c`.
fn poll_index_of(c: &Captured, r: &Roles) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), c, r, "postgres://u@h/db").ok()?;
    std::fs::read_to_string(dir.path().join("claim.sql")).ok()
}

#[test]
fn what_the_names_cannot_tell_is_asked_for_by_flag() {
    let mut c = captured();
    c.columns[1] = col("status", "smallint", "N");
    c.columns[1].common = vec![("0".into(), 0.5), ("2".into(), 0.5)];
    c.enums.clear();
    let e = c.roles(&Hints::default()).unwrap_err();
    assert!(
        e.contains("`status` (0, 2) means pending; pass --pending"),
        "{e}"
    );
    let hints = Hints {
        pending: Some("0".into()),
        running: Some("1".into()),
        done: Some("2".into()),
        ..Hints::default()
    };
    let r = c.roles(&hints).unwrap();
    assert_eq!(
        (r.states.pending.as_str(), r.states.done.as_str()),
        ("0", "2")
    );
    c.primary_key = vec!["id".into(), "queue".into()];
    assert!(c.roles(&hints).unwrap_err().contains("2 columns"));
    c.primary_key.clear();
    assert!(c.roles(&hints).unwrap_err().contains("no primary key"));
}

#[test]
fn the_files_hold_the_servers_ddl_a_seed_in_its_shape_and_a_lifecycle_that_validates() {
    let c = captured();
    let r = c.roles(&Hints::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let w = write(dir.path(), &c, &r, "postgres://u@h/db").unwrap();
    assert_eq!((w.backlog, w.history), (700, 300));
    let table = std::fs::read_to_string(dir.path().join("table.sql")).unwrap();
    assert!(
        table.contains("CREATE TYPE job_status AS ENUM ('ready', 'working', 'done', 'failed');"),
        "{table}"
    );
    assert!(
        table.contains("CREATE INDEX jobs_poll ON jobs USING btree (status, run_at);"),
        "{table}"
    );
    // Owned, as a serial column's is, so that the run moves it past the seeded ids.
    assert!(
        table.contains("ALTER SEQUENCE jobs_id_seq OWNED BY jobs.id;"),
        "{table}"
    );
    assert!(
        table.contains("CASE WHEN id <= 300 THEN 'done'::job_status ELSE 'ready'::job_status END"),
        "{table}"
    );
    // A NOT NULL column no role fills gets its most common value, or else a value of its
    // type; a nullable one none.
    assert!(table.contains("'it''s'"), "{table}");
    assert!(
        table.contains("tries") && !table.contains("locked_by,"),
        "{table}"
    );
    let workload = std::fs::read_to_string(dir.path().join("workload.toml")).unwrap();
    assert!(
        workload.contains("backlog = 1000") && workload.contains("payload_bytes = 90"),
        "{workload}"
    );
    assert!(
        workload.contains("{ name = \"mail\", weight = 0.7500 }"),
        "{workload}"
    );
    // The inserts sampled become open-loop arrivals through an enqueue step of its shape.
    assert!(
        workload.contains("[producers]\nrate_per_s = 42 "),
        "{workload}"
    );
    assert!(
        table.contains(
            "-- step: enqueue\nINSERT INTO jobs (status, queue, run_at, args, note, tries)"
        ),
        "{table}"
    );
    let parsed = crate::workload::Workload::load(&dir.path().join("workload.toml"));
    assert!(parsed.is_ok(), "{parsed:?}");
    // A table whose ids its writers choose gets no enqueue step, and says why.
    let mut c = c;
    c.columns[0].default = None;
    let w = write(dir.path(), &c, &r, "postgres://u@h/db").unwrap();
    assert!(
        w.notes.iter().any(|n| n.contains("no enqueue step")),
        "{:?}",
        w.notes
    );
    let workload = std::fs::read_to_string(dir.path().join("workload.toml")).unwrap();
    assert!(!workload.contains("[producers]"), "{workload}");
    // The claim walks the table's poll index: led by the state column, so its order is
    // the index's next columns.
    let claim = std::fs::read_to_string(dir.path().join("claim.sql")).unwrap();
    assert!(
        claim.contains("ORDER BY run_at, id\n") && claim.contains("poll index jobs_poll"),
        "{claim}"
    );
    let md = std::fs::read_to_string(dir.path().join("capture.md")).unwrap();
    assert!(
        md.contains("counted exactly") && md.contains("| ready | 700 |"),
        "{md}"
    );
}

/// A table whose ids are uuids (pg-boss's, GoodJob's): its seed and enqueue steps write
/// claimbench's job numbers as uuids, the same way in both, and every other step uses
/// the table's own ids; a text id writes them in decimal. An id of another type is
/// refused, naming it.
#[test]
fn a_uuid_or_text_id_holds_claimbenchs_numbers_in_the_seed_and_the_enqueue_step() {
    let mut c = captured();
    c.columns[0] = col("id", "uuid", "U");
    c.columns[0].default = Some("gen_random_uuid()".into());
    let r = c.roles(&Hints::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &c, &r, "postgres://u@h/db").unwrap();
    let table = std::fs::read_to_string(dir.path().join("table.sql")).unwrap();
    let seed = &table[table.find("-- step: seed").unwrap()..];
    let seed = &seed[..seed.find("-- step: enqueue").unwrap()];
    let enqueue = &table[table.find("-- step: enqueue").unwrap()..];
    let enqueue = &enqueue[..enqueue[3..].find("-- step: ").unwrap() + 3];
    for step in [seed, enqueue] {
        assert!(
            step.contains("INSERT INTO jobs (id, ")
                && step.contains("lpad(to_hex(id), 32, '0')::uuid"),
            "{step}"
        );
    }
    assert!(
        enqueue.contains("SELECT j.id, j.queue")
            && enqueue.contains("unnest(:ids::bigint[], :ages_us::bigint[]")
            && enqueue.contains("AS j (id, age_us, queue, priority)"),
        "{enqueue}"
    );
    let parsed = crate::workload::Workload::load(&dir.path().join("workload.toml"));
    assert!(parsed.is_ok(), "{parsed:?}");

    c.columns[0] = col("id", "character varying(36)", "S");
    write(dir.path(), &c, &r, "postgres://u@h/db").unwrap();
    let table = std::fs::read_to_string(dir.path().join("table.sql")).unwrap();
    assert!(table.contains("id::text::character varying(36)"), "{table}");

    c.columns[0] = col("id", "numeric", "N");
    let e = c.roles(&Hints::default()).unwrap_err();
    assert!(
        e.contains("`id` is numeric") && e.contains("uuid or text"),
        "{e}"
    );
}

/// The sampler reads one row from the oldest step: a table with no due or created
/// column gets a NULL age in one row, not a row per pending job (which stopped a
/// captured pg-boss-like table's first sample).
#[test]
fn a_table_with_no_due_or_created_column_reads_no_age_in_one_row() {
    let mut c = captured();
    c.columns.retain(|col| col.name != "run_at");
    let r = c.roles(&Hints::default()).unwrap();
    assert_eq!((r.due.as_deref(), r.created.as_deref()), (None, None));
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &c, &r, "postgres://u@h/db").unwrap();
    let table = std::fs::read_to_string(dir.path().join("table.sql")).unwrap();
    let oldest = &table[table.find("-- step: oldest").unwrap()..];
    let oldest = &oldest[..oldest.find("-- step: counts").unwrap()];
    assert!(
        oldest
            .trim_end()
            .ends_with("SELECT NULL::float8 AS oldest_pending_ms"),
        "{oldest}"
    );
}

/// A MySQL table read as `mysql.rs` reads one: an ENUM state (a string with labels), a
/// poll index led by it and the queue, its own counter for ids, no worker column.
fn captured_on_mysql() -> Captured {
    let ty = "enum('ready','working','done')";
    let mut state = col("state", ty, "S");
    state.common = vec![("ready".into(), 0.8), ("done".into(), 0.2)];
    let mut queue = col("queue", "character varying", "S");
    queue.common = vec![("default".into(), 1.0)];
    let mut id = col("id", "bigint", "N");
    id.identity = "d".into();
    let mut args = col("args", "json", "U");
    args.avg_width = Some(40);
    Captured {
        schema: "app".into(),
        name: "jobs".into(),
        columns: vec![
            id,
            state,
            queue,
            col("run_at", "timestamp", "D"),
            args,
            col("tries", "integer", "N"),
        ],
        enums: vec![(
            ty.into(),
            vec!["ready".into(), "working".into(), "done".into()],
        )],
        primary_key: vec!["id".into()],
        indexes: vec![(
            "jobs_poll".into(),
            "KEY `jobs_poll` (state, queue, run_at DESC)".into(),
        )],
        by_state: vec![("ready".into(), 800), ("done".into(), 200)],
        by_state_exact: true,
        create_table: Some(
            "CREATE TABLE `jobs` (\n  `id` bigint NOT NULL AUTO_INCREMENT\n)".into(),
        ),
        ..Captured::default()
    }
}

/// MySQL's files: the server's DDL, the ENUM's labels as plain quoted values, a claim
/// of two steps in the poll index's order serving one queue per worker, which binds
/// :worker_id though the table has no worker column, ids given back in two steps, and
/// no rescue without a claim time to measure the lease by.
#[test]
fn a_mysql_capture_writes_mysqls_steps() {
    let c = captured_on_mysql();
    let r = c.roles(&Hints::default()).expect("roles");
    assert_eq!(r.states.pending, "'ready'");
    let mut notes = Vec::new();
    let built = super::mysql_files::build(&c, &r, 200, &mut notes);
    assert!(
        built.starts_with("-- step: ddl\nCREATE TABLE `jobs` ("),
        "{built}"
    );
    assert!(
        built.contains("CASE WHEN id <= 200 THEN 'done' ELSE 'ready' END"),
        "{built}"
    );
    assert!(built.contains("JSON_OBJECT('payload', payload)"), "{built}");
    assert!(
        built.contains("tries"),
        "a NOT NULL column is filled: {built}"
    );
    let claim = super::mysql_files::claim(&c, &r);
    assert!(
        claim.contains("WHERE state = 'ready' AND queue = :queue AND run_at <= NOW(6)\nORDER BY run_at DESC, id\n"),
        "{claim}"
    );
    assert!(
        claim.contains("WHERE id IN (:ids) AND :worker_id IS NOT NULL"),
        "{claim}"
    );
    let steps = super::mysql_files::lifecycle(&c, &r);
    assert!(steps.contains("-- step: requeue-lock\n") && steps.contains("-- step: requeue\n"));
    assert!(!steps.contains("rescue"), "{steps}");
    assert!(super::mysql_files::enqueue(&c, &r).contains("JSON_TABLE(:ages_us"));
    // The whole file is a declared table validate accepts on MySQL.
    let d = crate::declared_table::DeclaredTable {
        name: "jobs".into(),
        file: String::new(),
        sql: String::new(),
        also: Vec::new(),
        mysql: Some(crate::strategy::custom::DeclaredFile {
            file: "table.mysql.sql".into(),
            sql: format!("{built}{}{steps}", super::mysql_files::enqueue(&c, &r)),
        }),
    };
    crate::declared_table::form_for(&d, crate::backend_kind::BackendKind::Mysql)
        .expect("a valid MySQL table file");
}

/// On MySQL a uuid or text id cannot hold claimbench's numbers yet: refused by name.
#[test]
fn a_mysql_table_keyed_by_text_is_refused() {
    let mut c = captured_on_mysql();
    c.columns[0] = col("id", "character varying", "S");
    let e = c.roles(&Hints::default()).unwrap_err();
    assert!(e.contains("counts jobs by an integer id"), "{e}");
}
