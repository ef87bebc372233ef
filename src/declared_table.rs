//! A queue table a workload declares (`[table]`): the team's own `CREATE TABLE` and
//! indexes, and its own statement for each step of the job's life, in one file of
//! steps beside the workload. The harness keeps what it needs to judge a run — the
//! ledger, the effects table, the reconciliation — and asks the declared statements
//! for the rest: which rows a claim took, whether a completion changed its row, where
//! every job is at the end.
//!
//! Parsed and checked here, from the text alone, one file per engine; the engine runs
//! it (`backend/postgres/declared_table.rs`, `backend/mysql/declared_table.rs`).

use crate::backend_kind::BackendKind;
use crate::strategy::custom::DeclaredFile;
use crate::strategy::named_params::{self, Names, Param};
use serde::{Deserialize, Serialize};

/// What run.json records of a declared table: its name and its file as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredTable {
    /// The table the `ddl` step creates, in the run's schema.
    pub name: String,
    /// The PostgreSQL file of steps, as the workload names it, and its text.
    pub file: String,
    pub sql: String,
    /// The other tables the ddl step creates for the technique (a table of ready
    /// executions, one of claimed executions), which its steps may write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// The MySQL/MariaDB file of steps (`table.mysql`), where the workload gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<DeclaredFile>,
}

impl DeclaredTable {
    /// The file of steps `kind` runs, if the workload gives one for it.
    pub fn file_for(&self, kind: BackendKind) -> Option<&str> {
        match kind {
            BackendKind::Postgres if !self.file.is_empty() => Some(&self.file),
            BackendKind::Mysql => self.mysql.as_ref().map(|m| m.file.as_str()),
            _ => None,
        }
    }
}

/// What a lifecycle statement binds, by the name it writes after `:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bind {
    /// The job, in the table's id type (`bigint`, `integer`, `uuid` or `text`: the
    /// number claimbench counts it by, written in that type).
    Id,
    /// Several jobs (`id = ANY(:ids)`); in the enqueue step, the new jobs' ids, which
    /// claimbench hands out (a table whose ids are uuid or text takes them so).
    Ids,
    /// The worker that claimed the job (text): the same value the claim bound.
    WorkerId,
    /// The workload's retry delay, seconds (`float8`).
    RetryDelayS,
    /// The workload's attempts before a job is dead (integer).
    MaxAttempts,
    /// The workload's lease, seconds (`float8`).
    LeaseS,
    /// A producer's batch: each new job's age at its insert, µs (`bigint[]`), its
    /// queue (`text[]`) and priority (`int[]`), drawn as the workload's mix says, and
    /// the workload's payload size (integer).
    AgesUs,
    Queues,
    Priorities,
    PayloadBytes,
}

impl Bind {
    fn name(self) -> &'static str {
        match self {
            Bind::Id => "id",
            Bind::Ids => "ids",
            Bind::WorkerId => "worker_id",
            Bind::RetryDelayS => "retry_delay_s",
            Bind::MaxAttempts => "max_attempts",
            Bind::LeaseS => "lease_s",
            Bind::AgesUs => "ages_us",
            Bind::Queues => "queues",
            Bind::Priorities => "priorities",
            Bind::PayloadBytes => "payload_bytes",
        }
    }
}

/// The most values a step binds (each name once): the session binds them from an
/// array of this size on the stack.
pub const MAX_BINDS: usize = 5;

/// One declared statement: its text numbered (`$1`, …) and what each number binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub sql: String,
    pub binds: Vec<Bind>,
}

/// Every step of a declared table's file for one engine, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableForm {
    pub kind: BackendKind,
    pub name: String,
    pub also: Vec<String>,
    pub file: String,
    /// Creates the table and its indexes (several statements, no parameters).
    pub ddl: String,
    /// Fills the table from claimbench's seeded `jobs_hot` (one statement on
    /// PostgreSQL, several on MySQL).
    pub seed: String,
    pub start: Option<Statement>,
    pub heartbeat: Option<Statement>,
    pub complete: Statement,
    pub fail: Option<Statement>,
    /// Gives jobs in hand back (`:ids`): the trial's end hands back the jobs that did
    /// not start.
    pub requeue: Statement,
    pub rescue: Option<Statement>,
    /// MySQL, which has no `UPDATE … RETURNING`: the locking reads that say which
    /// rows the requeue and rescue steps give back (as a declared claim's `lock`).
    pub requeue_lock: Option<Statement>,
    pub rescue_lock: Option<Statement>,
    /// Inserts a producer's batch, one job per element of `:ages_us`.
    pub enqueue: Option<Statement>,
    /// The sampler's reading: `oldest_pending_ms`.
    pub oldest: String,
    /// After the trial: `pending`, `running`, `completed`, `dead`.
    pub counts: String,
}

/// One step: its name, whether a file must have it, whether it is one statement, and
/// what it may bind (the first listed it must).
struct StepRule {
    name: &'static str,
    required: bool,
    binds: &'static [Bind],
    must: Option<Bind>,
    example: &'static str,
}

/// What a fail step may bind, on every engine (its example is each engine's).
const FAIL_BINDS: &[Bind] = &[
    Bind::Id,
    Bind::WorkerId,
    Bind::RetryDelayS,
    Bind::MaxAttempts,
];

// The steps whose rule is the same on every engine.
const DDL: StepRule = StepRule {
    name: "ddl",
    required: true,
    binds: &[],
    must: None,
    example: "CREATE TABLE … and its indexes",
};

const SEED: StepRule = StepRule {
    name: "seed",
    required: true,
    binds: &[],
    must: None,
    example: "INSERT INTO <table> (…) SELECT id, queue, priority, … FROM jobs_hot",
};

const START: StepRule = StepRule {
    name: "start",
    required: false,
    binds: &[Bind::Id, Bind::WorkerId],
    must: Some(Bind::Id),
    example: "UPDATE <table> SET state = 'running' WHERE id = :id AND worker = :worker_id",
};

const COMPLETE: StepRule = StepRule {
    name: "complete",
    required: true,
    binds: &[Bind::Id, Bind::WorkerId],
    must: Some(Bind::Id),
    example: "UPDATE <table> SET state = 'completed' WHERE id = :id AND worker = :worker_id",
};

const STEPS: [StepRule; 11] = [
    DDL,
    SEED,
    START,
    StepRule {
        name: "heartbeat",
        required: false,
        binds: &[Bind::Id, Bind::WorkerId],
        must: Some(Bind::Id),
        example: "UPDATE <table> SET heartbeat_at = now() WHERE id = :id AND worker = :worker_id",
    },
    COMPLETE,
    StepRule {
        name: "fail",
        required: false,
        binds: FAIL_BINDS,
        must: Some(Bind::Id),
        example: "UPDATE <table> SET state = 'retryable', scheduled_at = now() + make_interval(secs => :retry_delay_s) WHERE id = :id AND worker = :worker_id",
    },
    StepRule {
        name: "requeue",
        required: true,
        binds: &[Bind::Ids, Bind::WorkerId],
        must: Some(Bind::Ids),
        example: "UPDATE <table> SET state = 'available', worker = NULL WHERE id = ANY(:ids) AND worker = :worker_id RETURNING id",
    },
    StepRule {
        name: "rescue",
        required: false,
        binds: &[Bind::LeaseS],
        must: Some(Bind::LeaseS),
        example: "UPDATE <table> SET state = 'available' WHERE state = 'running' AND attempted_at < now() - make_interval(secs => :lease_s) RETURNING id",
    },
    StepRule {
        name: "enqueue",
        required: false,
        binds: &[
            Bind::AgesUs,
            Bind::Queues,
            Bind::Priorities,
            Bind::PayloadBytes,
            Bind::Ids,
        ],
        must: Some(Bind::AgesUs),
        example: "INSERT INTO <table> (queue, priority, created_at, args) SELECT q, p, now() - make_interval(secs => a / 1e6), … FROM unnest(:ages_us::bigint[], :queues::text[], :priorities::int[]) AS j(a, q, p)",
    },
    StepRule {
        name: "oldest",
        required: true,
        binds: &[],
        must: None,
        example: "SELECT extract(epoch FROM now() - min(scheduled_at)) * 1000 AS oldest_pending_ms FROM <table> WHERE state = 'available'",
    },
    StepRule {
        name: "counts",
        required: true,
        binds: &[],
        must: None,
        example: "SELECT count(*) FILTER (WHERE state = 'available') AS pending, … AS running, … AS completed, … AS dead FROM <table>",
    },
];

/// The steps a file has, for messages.
const SAY: &str = "steps ddl, seed, complete, requeue, oldest and counts, and optionally start, heartbeat, fail, rescue and enqueue (docs/strategies.md, Your own table)";

/// MySQL's form: as PostgreSQL's, but a step that gives ids back is a locking read of
/// them (`requeue-lock`, `rescue-lock`) and an UPDATE of `:ids` (`requeue`, `rescue`),
/// in one transaction; arrays are JSON text (`JSON_TABLE(:ages_us, '$[*]' …)`).
const MYSQL_STEPS: [StepRule; 13] = [
    DDL,
    SEED,
    START,
    StepRule {
        name: "heartbeat",
        required: false,
        binds: &[Bind::Id, Bind::WorkerId],
        must: Some(Bind::Id),
        example: "UPDATE <table> SET heartbeat_at = NOW(6) WHERE id = :id AND worker = :worker_id",
    },
    COMPLETE,
    StepRule {
        name: "fail",
        required: false,
        binds: FAIL_BINDS,
        must: Some(Bind::Id),
        example: "UPDATE <table> SET state = 'retryable', run_at = NOW(6) + INTERVAL :retry_delay_s SECOND WHERE id = :id AND worker = :worker_id",
    },
    StepRule {
        name: "requeue-lock",
        required: true,
        binds: &[Bind::Ids, Bind::WorkerId],
        must: Some(Bind::Ids),
        example: "SELECT id FROM <table> WHERE id IN (:ids) AND worker = :worker_id FOR UPDATE",
    },
    StepRule {
        name: "requeue",
        required: true,
        binds: &[Bind::Ids, Bind::WorkerId],
        must: Some(Bind::Ids),
        example: "UPDATE <table> SET state = 'available', worker = NULL WHERE id IN (:ids)",
    },
    StepRule {
        name: "rescue-lock",
        required: false,
        binds: &[Bind::LeaseS],
        must: Some(Bind::LeaseS),
        example: "SELECT id FROM <table> WHERE state = 'running' AND claimed_at < NOW(6) - INTERVAL :lease_s SECOND FOR UPDATE SKIP LOCKED",
    },
    StepRule {
        name: "rescue",
        required: false,
        binds: &[Bind::Ids],
        must: Some(Bind::Ids),
        example: "UPDATE <table> SET state = 'available', worker = NULL WHERE id IN (:ids)",
    },
    StepRule {
        name: "enqueue",
        required: false,
        binds: &[
            Bind::AgesUs,
            Bind::Queues,
            Bind::Priorities,
            Bind::PayloadBytes,
        ],
        must: Some(Bind::AgesUs),
        example: "INSERT INTO <table> (queue, priority, created_at, args) SELECT q.v, p.v, NOW(6) - INTERVAL a.v MICROSECOND, … FROM JSON_TABLE(:ages_us, '$[*]' COLUMNS (n FOR ORDINALITY, v BIGINT PATH '$')) a JOIN JSON_TABLE(:queues, …) q USING (n) JOIN JSON_TABLE(:priorities, …) p USING (n)",
    },
    StepRule {
        name: "oldest",
        required: true,
        binds: &[],
        must: None,
        example: "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(run_at), NOW(6)) / 1000.0 AS oldest_pending_ms FROM <table> WHERE state = 'available'",
    },
    StepRule {
        name: "counts",
        required: true,
        binds: &[],
        must: None,
        example: "SELECT SUM(state = 'available') AS pending, … AS running, … AS completed, … AS dead FROM <table>",
    },
];

/// MySQL's steps, for messages.
const MYSQL_SAY: &str = "steps ddl, seed, complete, requeue-lock, requeue, oldest and counts, and optionally start, heartbeat, fail, rescue-lock with rescue, and enqueue (docs/strategies.md, Your own table)";

/// Tables of claimbench's schema: a declared table may not take one's name.
pub const CLAIMBENCH_TABLES: [&str; 8] = [
    "claimbench_schema",
    "queues",
    "jobs_hot",
    "shard_owners",
    "jobs_archive",
    "jobs_dead_letter",
    "jobs_cleaned",
    "effects",
];

/// A declared table's name: a plain lower-case SQL identifier that needs no quoting,
/// and none of claimbench's own tables.
pub fn check_name(name: &str) -> Result<(), crate::invalid::Invalid> {
    if !crate::names::is_lower_identifier(name, 63) {
        return Err(crate::invalid!(
            "`{}` is not a table name claimbench can use; give the name as the ddl step creates it, unquoted: lower-case letters, digits and _, starting with a letter, at most 63",
            name.escape_debug()
        ));
    }
    if CLAIMBENCH_TABLES.contains(&name) {
        return Err(crate::invalid!(
            "`{name}` is one of claimbench's own tables; give your table its own name"
        ));
    }
    Ok(())
}

/// Checks `d`'s PostgreSQL file and numbers its steps. The message names the file and
/// the step.
pub fn form(d: &DeclaredTable) -> Result<TableForm, crate::invalid::Invalid> {
    form_for(d, BackendKind::Postgres)
}

/// Checks `d`'s file for `kind` and numbers (or, on MySQL, marks) its parameters.
pub fn form_for(
    d: &DeclaredTable,
    kind: BackendKind,
) -> Result<TableForm, crate::invalid::Invalid> {
    check_name(&d.name)?;
    for (i, other) in d.also.iter().enumerate() {
        check_name(other)?;
        if *other == d.name || d.also[..i].contains(other) {
            return Err(crate::invalid!(
                "`{other}` is named twice; name each table once"
            ));
        }
    }
    let (file, whole, rules, say) = match (kind, &d.mysql) {
        (BackendKind::Postgres, _) if !d.file.is_empty() => {
            (d.file.as_str(), d.sql.as_str(), &STEPS[..], SAY)
        }
        (BackendKind::Mysql, Some(m)) => {
            (m.file.as_str(), m.sql.as_str(), &MYSQL_STEPS[..], MYSQL_SAY)
        }
        _ => {
            return Err(crate::invalid!(
                "the declared table {} has no file of steps for {kind}; give `table.{kind} = \"file.sql\"`",
                d.name
            ));
        }
    };
    crate::privileged_sql::check_file(file, whole)?;
    if !whole
        .lines()
        .any(|l| l.trim_start().starts_with("-- step: "))
    {
        return Err(crate::invalid!(
            "{file} has no `-- step:` lines; it has {say}"
        ));
    }
    let names: Vec<&str> = rules.iter().map(|s| s.name).collect();
    let steps = crate::strategy::custom::checked_steps(file, whole, &names, say)?;
    let find = |name: &str| {
        steps
            .iter()
            .find(|(n, sql)| *n == name && !named_params::is_blank(sql))
            .map(|(_, sql)| *sql)
    };
    let mut out: Vec<Option<Statement>> = Vec::with_capacity(rules.len());
    for rule in rules {
        let Some(sql) = find(rule.name) else {
            if rule.required {
                return Err(crate::invalid!(
                    "{file} has no `-- step: {}`; give it: {}",
                    rule.name,
                    rule.example
                ));
            }
            out.push(None);
            continue;
        };
        out.push(Some(statement((file, whole, kind), sql, rule)?));
    }
    let mut take = |name: &str| {
        let i = rules.iter().position(|s| s.name == name)?;
        out[i].take()
    };
    let text = |s: Option<Statement>| s.map(|s| s.sql).unwrap_or_default();
    let (ddl, seed) = (text(take("ddl")), text(take("seed")));
    let (start, heartbeat) = (take("start"), take("heartbeat"));
    let complete = take("complete").expect("required");
    let fail = take("fail");
    let requeue = take("requeue").expect("required");
    let rescue = take("rescue");
    let (requeue_lock, rescue_lock) = (take("requeue-lock"), take("rescue-lock"));
    if kind == BackendKind::Mysql && rescue.is_some() != rescue_lock.is_some() {
        return Err(crate::invalid!(
            "{file} has one of `-- step: rescue-lock` and `-- step: rescue` without the other; on MySQL a rescue is both, a locking read of the ids it gives back and the UPDATE of them: {}",
            MYSQL_STEPS[8].example
        ));
    }
    let enqueue = take("enqueue");
    let (oldest, counts) = (text(take("oldest")), text(take("counts")));
    Ok(TableForm {
        kind,
        name: d.name.clone(),
        also: d.also.clone(),
        file: file.to_string(),
        ddl,
        seed,
        start,
        heartbeat,
        complete,
        fail,
        requeue,
        rescue,
        requeue_lock,
        rescue_lock,
        enqueue,
        oldest,
        counts,
    })
}

/// One step's text (`sql`, a slice of `whole`, the text of `file` for `kind`), checked
/// by `rule`.
fn statement(
    (file, whole, kind): (&str, &str, BackendKind),
    sql: &str,
    rule: &StepRule,
) -> Result<Statement, crate::invalid::Invalid> {
    let at = crate::strategy::custom::line_of(whole, sql);
    let mysql = kind == BackendKind::Mysql;
    if rule.name == "ddl" || (mysql && rule.name == "seed") {
        // Several statements, run as they are: nothing to bind.
        let (_, params) = named_params::to_postgres_with(sql, &[]).map_err(|e| {
            crate::invalid!(
                "{file} step {} (line {at}): {e}; the {} step binds nothing",
                rule.name,
                rule.name
            )
        })?;
        debug_assert!(params.is_empty());
        return Ok(Statement {
            sql: sql.to_string(),
            binds: Vec::new(),
        });
    }
    if let Some(line) = named_params::second_statement_line(sql) {
        let fold = match mysql {
            true => "each step but ddl and seed is one statement (MySQL prepares one)",
            false => {
                "each step but ddl is one statement (PostgreSQL prepares one): fold them into one with WITH …"
            }
        };
        return Err(crate::invalid!(
            "{file} line {}: a second statement in step {}; {fold}",
            at + line - 1,
            rule.name
        ));
    }
    // The names a step may use, as the parser's constants: their index is the bind.
    let consts: Vec<String> = rule
        .binds
        .iter()
        .filter(|b| !matches!(b, Bind::Ids | Bind::WorkerId))
        .map(|b| b.name().to_string())
        .collect();
    let own: Vec<Param> = rule
        .binds
        .iter()
        .filter_map(|b| match b {
            Bind::Ids => Some(Param::Ids),
            Bind::WorkerId => Some(Param::WorkerId),
            _ => None,
        })
        .collect();
    let names = Names {
        allowed: &own,
        consts: &consts,
    };
    let converted = match mysql {
        true => named_params::to_mysql_names(sql, names),
        false => named_params::to_postgres_in(sql, names),
    };
    let (numbered, params) = converted.map_err(|e| {
        let may: Vec<String> = rule
            .binds
            .iter()
            .map(|b| format!(":{}", b.name()))
            .collect();
        let may = match may.is_empty() {
            true => "binds nothing".to_string(),
            false => format!("may bind {}", may.join(", ")),
        };
        let why = match e {
            named_params::ParamError::Unknown(n) => format!("unknown parameter `:{n}`"),
            named_params::ParamError::Positional(p) => format!("positional parameter `{p}`"),
        };
        crate::invalid!(
            "{file} step {} (line {at}): {why}; this step {may}",
            rule.name
        )
    })?;
    let binds: Vec<Bind> = params
        .iter()
        .map(|p| match p {
            Param::Ids => Bind::Ids,
            Param::WorkerId => Bind::WorkerId,
            Param::Const(i) => {
                let name = &consts[usize::from(*i)];
                *rule
                    .binds
                    .iter()
                    .find(|b| b.name() == name)
                    .expect("a listed name")
            }
            _ => unreachable!("only the step's own names are allowed"),
        })
        .collect();
    if let Some(must) = rule.must.filter(|m| !binds.contains(m)) {
        return Err(crate::invalid!(
            "{file} step {} (line {at}) never uses :{}; e.g. {}",
            rule.name,
            must.name(),
            rule.example
        ));
    }
    Ok(Statement {
        sql: numbered,
        binds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const RIVER: &str = include_str!("../workloads/examples/river-table.sql");

    fn declared(sql: &str) -> DeclaredTable {
        DeclaredTable {
            name: "river_job".into(),
            file: "river-table.sql".into(),
            sql: sql.into(),
            also: Vec::new(),
            mysql: None,
        }
    }

    #[test]
    fn the_shipped_example_numbers_each_step_by_first_use() {
        let f = form(&declared(RIVER)).expect("the example is valid");
        assert_eq!(f.complete.binds, vec![Bind::Id]);
        assert_eq!(
            f.fail.as_ref().unwrap().binds,
            vec![Bind::RetryDelayS, Bind::Id]
        );
        assert!(f.complete.sql.contains("$1") && !f.complete.sql.contains(":id"));
        assert_eq!(f.requeue.binds[0], Bind::Ids);
        assert!(f.rescue.as_ref().unwrap().binds == vec![Bind::LeaseS]);
        assert!(f.ddl.contains("CREATE TABLE river_job"));
    }

    #[test]
    fn a_missing_step_an_unknown_name_and_a_second_statement_are_refused_by_file_and_step() {
        let no_counts = RIVER.replace("-- step: counts", "-- step: oldest2");
        let e = form(&declared(&no_counts)).unwrap_err().to_string();
        assert!(e.contains("river-table.sql has `-- step: oldest2`"), "{e}");
        let cut = &RIVER[..RIVER.find("-- step: counts").unwrap()];
        let e = form(&declared(cut)).unwrap_err().to_string();
        assert!(e.contains("has no `-- step: counts`"), "{e}");
        let typo = RIVER.replacen(":lease_s", ":lease", 1);
        let e = form(&declared(&typo)).unwrap_err().to_string();
        assert!(
            e.contains("step rescue") && e.contains("unknown parameter `:lease`"),
            "{e}"
        );
        let two = RIVER.replace("-- step: oldest\n", "-- step: oldest\nSELECT 1;\n");
        let e = form(&declared(&two)).unwrap_err().to_string();
        assert!(e.contains("a second statement in step oldest"), "{e}");
    }

    #[test]
    fn a_step_that_never_binds_what_it_is_for_is_refused() {
        let f = RIVER.replace("id = ANY(:ids)", "true");
        let e = form(&declared(&f)).unwrap_err().to_string();
        assert!(
            e.contains("step requeue") && e.contains("never uses :ids"),
            "{e}"
        );
    }

    const OBAN_MYSQL: &str = include_str!("../workloads/examples/oban-table.mysql.sql");

    fn on_mysql(sql: &str) -> DeclaredTable {
        DeclaredTable {
            name: "oban_jobs".into(),
            file: String::new(),
            sql: String::new(),
            also: Vec::new(),
            mysql: Some(DeclaredFile {
                file: "oban-table.mysql.sql".into(),
                sql: sql.into(),
            }),
        }
    }

    /// MySQL numbers nothing: each use is a `?` bound again, `:ids` stays the marker
    /// the session expands to one `?` per id, and the steps that give ids back are a
    /// locking read and an UPDATE.
    #[test]
    fn the_mysql_example_binds_each_use_and_gives_ids_back_in_two_steps() {
        let f = form_for(&on_mysql(OBAN_MYSQL), BackendKind::Mysql).expect("valid");
        assert_eq!(f.kind, BackendKind::Mysql);
        assert_eq!(
            f.fail.as_ref().unwrap().binds,
            vec![Bind::RetryDelayS, Bind::Id]
        );
        assert!(f.complete.sql.contains("id = ?") && !f.complete.sql.contains('$'));
        let lock = f.requeue_lock.as_ref().unwrap();
        assert!(lock.sql.contains("IN (:ids)"), "{}", lock.sql);
        assert_eq!(lock.binds, vec![Bind::Ids]);
        assert_eq!(f.rescue_lock.as_ref().unwrap().binds, vec![Bind::LeaseS]);
        assert_eq!(f.rescue.as_ref().unwrap().binds, vec![Bind::Ids]);
        let enqueue = &f.enqueue.as_ref().unwrap().binds;
        assert_eq!(
            enqueue,
            &[
                Bind::PayloadBytes,
                Bind::AgesUs,
                Bind::Queues,
                Bind::Priorities
            ]
        );
        // Its PostgreSQL form is another file: none given, none read.
        let e = form(&on_mysql(OBAN_MYSQL)).unwrap_err().to_string();
        assert!(e.contains("no file of steps for postgres"), "{e}");
    }

    #[test]
    fn a_mysql_file_is_held_to_mysqls_steps() {
        let d = |sql: String| form_for(&on_mysql(&sql), BackendKind::Mysql);
        // A seed of several statements is MySQL's (no WITH … INSERT into two tables).
        let two = OBAN_MYSQL.replace(
            "FROM jobs_hot\n",
            "FROM jobs_hot;\nANALYZE TABLE oban_jobs\n",
        );
        assert!(d(two).is_ok());
        let two = OBAN_MYSQL.replace("WHERE id = :id\n", "WHERE id = :id;\nSELECT 1\n");
        let e = d(two).unwrap_err().to_string();
        assert!(
            e.contains("a second statement in step complete") && e.contains("MySQL prepares one"),
            "{e}"
        );
        let rescue =
            "-- step: rescue\nUPDATE oban_jobs SET state = 'available' WHERE id IN (:ids)\n";
        assert!(OBAN_MYSQL.contains(rescue));
        let alone = OBAN_MYSQL.replace(rescue, "");
        let e = d(alone).unwrap_err().to_string();
        assert!(
            e.contains("`-- step: rescue-lock` and `-- step: rescue` without the other"),
            "{e}"
        );
        let pg = OBAN_MYSQL.replace("-- step: requeue-lock", "-- step: requeue-lock-x");
        let e = d(pg).unwrap_err().to_string();
        assert!(e.contains("has `-- step: requeue-lock-x`"), "{e}");
        let ids = OBAN_MYSQL.replace("-- step: enqueue\n", "-- step: enqueue\n-- :ids\n");
        assert!(d(ids).is_ok(), "a name in a comment is not a parameter");
    }

    #[test]
    fn no_step_binds_more_than_a_session_has_room_for() {
        assert!(STEPS.iter().all(|s| s.binds.len() <= MAX_BINDS));
        assert!(STEPS.iter().any(|s| s.binds.len() == MAX_BINDS));
    }

    #[test]
    fn the_other_tables_a_technique_needs_are_named_once_each() {
        let mut d = declared(RIVER);
        d.also = vec!["river_leader".into(), "river_queue".into()];
        assert!(form(&d).is_ok());
        d.also.push("river_job".into());
        let e = form(&d).unwrap_err().to_string();
        assert!(e.contains("`river_job` is named twice"), "{e}");
        d.also = vec!["effects".into()];
        assert!(
            form(&d)
                .unwrap_err()
                .to_string()
                .contains("claimbench's own")
        );
    }

    #[test]
    fn names_of_claimbench_tables_and_names_needing_quotes_are_refused() {
        assert!(check_name("river_job").is_ok());
        for bad in ["jobs_hot", "effects", "River", "a b", "x;drop", ""] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_step_reaching_the_host_is_refused_from_the_file() {
        let f = RIVER.replace(
            "-- step: seed\n",
            "-- step: seed\nCOPY river_job TO PROGRAM 'id';\n",
        );
        assert!(form(&declared(&f)).is_err());
    }
}
