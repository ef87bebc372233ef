//! The statements no declared layout or claim needs, refused before anything connects:
//! those that run a command, read or write a file on the database host, load code into
//! the server, or change roles and server-wide settings.
//!
//! This is defence in depth, not the defence: a statement can build another at run time
//! (`EXECUTE 'CO' || 'PY …'`), so what really keeps workload SQL off the host is the
//! role it runs as (on the embedded server a role claimbench makes without those
//! rights; on a user's server, a refusal to run it as a superuser unless asked). The
//! scan reads words, string contents included (a `DO` body or an `EXECUTE` text is a
//! string), and skips comments, so a word in a comment is no reason to refuse.

/// One refusal: the line (from 1) and what was found, with why nothing needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub line: usize,
    pub found: &'static str,
    pub why: &'static str,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: `{}` is not allowed in declared SQL: {}; a layout needs only CREATE INDEX and a claim only reads and updates claimbench's tables",
            self.line, self.found, self.why
        )
    }
}

const HOST_COMMAND: &str = "it runs a command on the database host";
const HOST_FILES: &str = "it reads or writes files on the database host";
const SERVER_CODE: &str = "it loads code into the server";
const PRIVILEGES: &str = "it changes roles, privileges or server-wide settings";

/// Single words, refused wherever they stand.
const WORDS: &[(&str, &str, &str)] = &[
    (
        "copy",
        "COPY",
        "COPY … PROGRAM runs a command on the database host and COPY … TO/FROM a file reads or writes its files",
    ),
    ("program", "PROGRAM", HOST_COMMAND),
    ("lo_import", "lo_import", HOST_FILES),
    ("lo_export", "lo_export", HOST_FILES),
    ("pg_read_file", "pg_read_file", HOST_FILES),
    ("pg_read_binary_file", "pg_read_binary_file", HOST_FILES),
    ("pg_ls_dir", "pg_ls_dir", HOST_FILES),
    ("pg_stat_file", "pg_stat_file", HOST_FILES),
    ("pg_file_write", "pg_file_write", HOST_FILES),
    ("file_fdw", "file_fdw", HOST_FILES),
    (
        "dblink",
        "dblink",
        "it opens a connection of its own, outside the role the claim runs as",
    ),
    (
        "dblink_exec",
        "dblink_exec",
        "it opens a connection of its own, outside the role the claim runs as",
    ),
    ("pg_reload_conf", "pg_reload_conf", PRIVILEGES),
    ("plpythonu", "plpythonu", SERVER_CODE),
    ("plpython2u", "plpython2u", SERVER_CODE),
    ("plpython3u", "plpython3u", SERVER_CODE),
    ("plperlu", "plperlu", SERVER_CODE),
    ("pltclu", "pltclu", SERVER_CODE),
    ("plsh", "plsh", HOST_COMMAND),
    ("load_file", "LOAD_FILE", HOST_FILES),
    ("outfile", "INTO OUTFILE", HOST_FILES),
    ("dumpfile", "INTO DUMPFILE", HOST_FILES),
    ("soname", "SONAME", SERVER_CODE),
    ("sys_exec", "sys_exec", HOST_COMMAND),
    ("sys_eval", "sys_eval", HOST_COMMAND),
    ("shutdown", "SHUTDOWN", "it stops the server"),
    ("xp_cmdshell", "xp_cmdshell", HOST_COMMAND),
    ("sp_configure", "sp_configure", PRIVILEGES),
    ("reconfigure", "RECONFIGURE", PRIVILEGES),
    ("openrowset", "OPENROWSET", HOST_FILES),
    ("opendatasource", "OPENDATASOURCE", HOST_FILES),
    ("sp_oacreate", "sp_OACreate", HOST_COMMAND),
    ("sp_oamethod", "sp_OAMethod", HOST_COMMAND),
    ("sp_addextendedproc", "sp_addextendedproc", SERVER_CODE),
];

/// Two words in a row.
const PAIRS: &[(&str, &str, &str, &str)] = &[
    ("alter", "system", "ALTER SYSTEM", PRIVILEGES),
    ("create", "role", "CREATE ROLE", PRIVILEGES),
    ("create", "user", "CREATE USER", PRIVILEGES),
    ("create", "group", "CREATE GROUP", PRIVILEGES),
    ("alter", "role", "ALTER ROLE", PRIVILEGES),
    ("alter", "user", "ALTER USER", PRIVILEGES),
    ("alter", "group", "ALTER GROUP", PRIVILEGES),
    ("set", "role", "SET ROLE", PRIVILEGES),
    (
        "session",
        "authorization",
        "SET SESSION AUTHORIZATION",
        PRIVILEGES,
    ),
    ("set", "global", "SET GLOBAL", PRIVILEGES),
    ("grant", "", "GRANT", PRIVILEGES),
    ("create", "extension", "CREATE EXTENSION", SERVER_CODE),
    ("create", "language", "CREATE LANGUAGE", SERVER_CODE),
    ("create", "server", "CREATE SERVER", HOST_FILES),
    ("foreign", "data", "FOREIGN DATA WRAPPER", HOST_FILES),
    ("language", "c", "LANGUAGE C", SERVER_CODE),
    ("load", "", "LOAD", SERVER_CODE),
    ("install", "plugin", "INSTALL PLUGIN", SERVER_CODE),
    ("install", "soname", "INSTALL SONAME", SERVER_CODE),
    ("bulk", "insert", "BULK INSERT", HOST_FILES),
    ("data", "directory", "DATA DIRECTORY", HOST_FILES),
    ("index", "directory", "INDEX DIRECTORY", HOST_FILES),
];

/// Words that may stand between `SET` and `ROLE` (`SET SESSION ROLE`, `SET LOCAL ROLE`),
/// and between `CREATE` and `LANGUAGE` (`CREATE OR REPLACE TRUSTED LANGUAGE`).
const SET_SCOPES: &[&str] = &["session", "local"];
const LANGUAGE_MODIFIERS: &[&str] = &["or", "replace", "trusted", "procedural"];

/// A server-wide variable's scope in a MySQL `SET` list: `GLOBAL x = …`, `@@global.x`,
/// `PERSIST x = …` (MySQL 8 writes it to disk too), `PERSIST_ONLY`.
fn server_wide(word: &str) -> bool {
    let w = word.strip_prefix("@@").unwrap_or(word);
    matches!(w, "global" | "persist" | "persist_only")
}

/// The word after `i` once `skip` words are passed over.
fn after<'a>(words: &'a [(String, usize)], i: usize, skip: &[&str]) -> &'a str {
    words[i + 1..]
        .iter()
        .map(|(w, _)| w.as_str())
        .find(|w| !skip.contains(w))
        .unwrap_or("")
}

/// The refusals that need more than two words in a row: a role set through a scope or
/// a function, a server-wide variable anywhere in a `SET` list, a language created with
/// modifiers.
fn statement_refusal(words: &[(String, usize)], i: usize) -> Option<(&'static str, &'static str)> {
    let w = words[i].0.as_str();
    match w {
        "set" if after(words, i, SET_SCOPES) == "role" => Some(("SET ROLE", PRIVILEGES)),
        "set_config" if matches!(after(words, i, &[]), "role" | "session_authorization") => {
            Some(("set_config('role', …)", PRIVILEGES))
        }
        "create" if after(words, i, LANGUAGE_MODIFIERS) == "language" => {
            Some(("CREATE LANGUAGE", SERVER_CODE))
        }
        // Every item of the SET list, up to the statement's end: `SET @x = 1,
        // @@global.y = 2`, `SET SESSION a = 1, GLOBAL b = 2`.
        "set" => words[i + 1..]
            .iter()
            .map(|(w, _)| w.as_str())
            .take_while(|w| *w != ";")
            .scan(true, |item_start, w| {
                let hit = w.starts_with("@@") && server_wide(w) || *item_start && server_wide(w);
                *item_start = w == ",";
                Some(hit)
            })
            .any(|hit| hit)
            .then_some(("SET GLOBAL", PRIVILEGES)),
        _ => None,
    }
}

/// The first statement in `sql` that no declared layout or claim needs, if any.
pub fn check(sql: &str) -> Result<(), Refusal> {
    let words = words(sql);
    for (i, (w, line)) in words.iter().enumerate() {
        let next = words.get(i + 1).map_or("", |(n, _)| n.as_str());
        if let Some((found, why)) = statement_refusal(&words, i) {
            return Err(Refusal {
                line: *line,
                found,
                why,
            });
        }
        if let Some((_, found, why)) = WORDS.iter().find(|(k, _, _)| k == w) {
            return Err(Refusal {
                line: *line,
                found,
                why,
            });
        }
        if let Some((_, _, found, why)) = PAIRS
            .iter()
            .find(|(a, b, _, _)| a == w && (b.is_empty() || *b == next))
        {
            return Err(Refusal {
                line: *line,
                found,
                why,
            });
        }
        // xp_regread, xp_dirtree, …: SQL Server's extended procedures reach the host.
        if w.starts_with("xp_") {
            return Err(Refusal {
                line: *line,
                found: "xp_… (an extended stored procedure)",
                why: HOST_COMMAND,
            });
        }
    }
    Ok(())
}

/// [`check`] for a declared file, and no NUL byte in it (a driver cuts the statement
/// there, or refuses it as a lost connection): the refusal names the file and the line.
pub fn check_file(file: &str, sql: &str) -> Result<(), crate::invalid::Invalid> {
    if let Some(at) = sql.find('\0') {
        let line = sql[..at].matches('\n').count() + 1;
        return Err(crate::invalid!(
            "{file} line {line}: holds a NUL byte; a statement file is text"
        ));
    }
    check(sql).map_err(|r| crate::invalid!("{file} {r}"))
}

/// The lowercase words of `sql` with their lines, comments (`--` to the line's end,
/// `/* … */`) left out and string contents kept; a MySQL system variable keeps its
/// `@@`, and `,` and `;` stand as words of their own (a `SET` list's items, a
/// statement's end).
fn words(sql: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut word = String::new();
    let mut chars = sql.chars().peekable();
    let flush = |word: &mut String, out: &mut Vec<(String, usize)>, line: usize| {
        if !word.is_empty() {
            out.push((std::mem::take(word).to_ascii_lowercase(), line));
        }
    };
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out, line);
        match (c, chars.peek()) {
            ('@', Some('@')) => {
                chars.next();
                word.push_str("@@");
            }
            (',' | ';', _) => out.push((c.to_string(), line)),
            ('-', Some('-')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            ('\n', _) => line += 1,
            _ => {}
        }
    }
    flush(&mut word, &mut out, line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_reaches_the_host_is_refused_with_its_line() {
        for (sql, found, line) in [
            (
                "CREATE INDEX ON jobs_hot (status);\nCOPY (SELECT 1) TO PROGRAM 'touch /tmp/x'",
                "COPY",
                2,
            ),
            (
                "DO $$ BEGIN\n  EXECUTE 'copy (select 1) to program ''id''';\nEND $$",
                "COPY",
                2,
            ),
            ("SELECT pg_read_file('/etc/passwd')", "pg_read_file", 1),
            ("SELECT lo_export(1, '/tmp/x')", "lo_export", 1),
            ("ALTER SYSTEM SET archive_command = 'x'", "ALTER SYSTEM", 1),
            (
                "CREATE FUNCTION f() RETURNS int LANGUAGE plpython3u AS $$ $$",
                "plpython3u",
                1,
            ),
            (
                "CREATE FUNCTION f() RETURNS int AS 'x' LANGUAGE C",
                "LANGUAGE C",
                1,
            ),
            ("LOAD 'auto_explain'", "LOAD", 1),
            ("CREATE ROLE x SUPERUSER", "CREATE ROLE", 1),
            (
                "SELECT id INTO OUTFILE '/tmp/x' FROM jobs_hot",
                "INTO OUTFILE",
                1,
            ),
            ("LOAD DATA INFILE '/etc/passwd' INTO TABLE t", "LOAD", 1),
            ("SELECT LOAD_FILE('/etc/passwd')", "LOAD_FILE", 1),
            (
                "CREATE TABLE t (id INT) DATA DIRECTORY = '/var/tmp'",
                "DATA DIRECTORY",
                1,
            ),
            (
                "CREATE TABLE t (id INT) ENGINE=MyISAM INDEX DIRECTORY='/var/tmp'",
                "INDEX DIRECTORY",
                1,
            ),
            ("EXEC xp_cmdshell 'dir'", "xp_cmdshell", 1),
            (
                "EXEC master..xp_dirtree 'c:\\'",
                "xp_… (an extended stored procedure)",
                1,
            ),
            ("SHUTDOWN WITH NOWAIT", "SHUTDOWN", 1),
            ("CREATE EXTENSION file_fdw", "CREATE EXTENSION", 1),
            ("GRANT pg_execute_server_program TO x", "GRANT", 1),
            ("SET ROLE postgres", "SET ROLE", 1),
            ("SET SESSION ROLE postgres", "SET ROLE", 1),
            ("SET LOCAL ROLE postgres", "SET ROLE", 1),
            (
                "SELECT set_config('role', 'postgres', false)",
                "set_config('role', …)",
                1,
            ),
            (
                "CREATE OR REPLACE TRUSTED LANGUAGE plx HANDLER h",
                "CREATE LANGUAGE",
                1,
            ),
            ("SET @x = 1, @@global.max_connections = 5", "SET GLOBAL", 1),
            ("SET @x = 1, @@GLOBAL.max_connections = 5", "SET GLOBAL", 1),
            ("SET SESSION a = 1, GLOBAL b = 2", "SET GLOBAL", 1),
            ("SET PERSIST max_connections = 5", "SET GLOBAL", 1),
            ("SET persist_only max_connections = 5", "SET GLOBAL", 1),
        ] {
            let r = check(sql).unwrap_err();
            assert_eq!((r.found, r.line), (found, line), "{sql}");
            assert!(
                r.to_string()
                    .starts_with(&format!("line {line}: `{found}`"))
            );
        }
    }

    #[test]
    fn claims_and_layouts_pass_and_comments_do_not_count() {
        for sql in [
            "CREATE INDEX ix ON jobs_hot (priority DESC, scheduled_at) WHERE status = 0",
            "-- copy of production's claim, COPY-edited\nUPDATE jobs_hot SET worker_id = :worker_id \
             WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 ORDER BY priority DESC \
             LIMIT :batch FOR UPDATE SKIP LOCKED) RETURNING id",
            "/* LOAD nothing; GRANT nothing */ SELECT id FROM jobs_hot LIMIT ? FOR UPDATE SKIP LOCKED",
            "SELECT pg_advisory_xact_lock(id) FROM jobs_hot WHERE copy_count = 0",
            "UPDATE jobs_hot SET payload = 'program' || 'x'",
            "SET SESSION innodb_lock_wait_timeout = 1, SESSION transaction_isolation = 'READ-COMMITTED'",
            "UPDATE jobs_hot SET payload = 'global', tags = NULL; SELECT @@global.max_connections",
            "SELECT set_config('work_mem', '8MB', true)",
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        ] {
            // The last one: a word inside a string counts (a DO body is a string).
            let r = check(sql);
            if sql.contains("'program'") {
                assert!(r.is_err());
            } else {
                assert_eq!(r, Ok(()), "{sql}");
            }
        }
    }
}
