//! Named parameters in a custom claim statement (`:batch`, `:worker_id`, `:queue`, the
//! workload's declared constants, and in a claim step after a lock step `:ids`),
//! rewritten to the server's positional form. Written by hand because it must know just enough SQL
//! lexing to leave `::casts`, strings, quoted names and comments alone.

use std::fmt;

/// A value claimbench binds to a custom claim statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// The batch size the worker asks for.
    Batch,
    /// The claiming worker's id, as the lifecycle statements match it.
    WorkerId,
    /// `offset-start`'s window (`Def::offset_window`); built-in statements only, so
    /// not in [`Param::ALL`].
    Window,
    /// A claim step after a lock step: the ids the lock step returned (PostgreSQL
    /// `bigint[]`; MySQL one placeholder each, [`to_mysql`] keeping the marker for the
    /// session to expand).
    Ids,
    /// The queue the claiming worker serves: worker `i` of a block serves the
    /// workload's queue `i mod n`, in the order `[population] queues` lists them.
    Queue,
    /// The strategy's declared constant at this index (`[strategies.<name>] params`).
    Const(u8),
}

impl Param {
    pub const ALL: [Param; 3] = [Param::Batch, Param::WorkerId, Param::Queue];

    /// The name a statement writes after `:` (a constant's is its declaration's).
    pub fn name(self) -> &'static str {
        match self {
            Param::Batch => "batch",
            Param::WorkerId => "worker_id",
            Param::Window => "window",
            Param::Ids => "ids",
            Param::Queue => "queue",
            Param::Const(_) => "a declared constant",
        }
    }
}

/// The names a statement may use: `allowed` built-in ones and the strategy's declared
/// constants, in declaration order.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    pub allowed: &'a [Param],
    pub consts: &'a [String],
}

impl Names<'_> {
    fn find(&self, name: &str) -> Option<Param> {
        self.allowed
            .iter()
            .copied()
            .find(|p| !matches!(p, Param::Const(_)) && p.name() == name)
            .or_else(|| {
                let i = self.consts.iter().position(|c| c == name)?;
                Some(Param::Const(u8::try_from(i).ok()?))
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamError {
    Unknown(String),
    Positional(String),
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Unknown(n) => write!(
                f,
                "unknown parameter `:{n}`; a claim statement may use :batch, :worker_id, :queue and the constants its strategy declares (`params = {{ {n} = … }}`), and a claim step after a lock step :ids"
            ),
            ParamError::Positional(p) => write!(
                f,
                "positional parameter `{p}`; write :batch and :worker_id instead, claimbench numbers them"
            ),
        }
    }
}

/// Rewrites each `:name` to `$n` (numbered by first use, so a repeated name reuses its
/// number) and returns the parameters in that order.
pub fn to_postgres(sql: &str) -> Result<(String, Vec<Param>), ParamError> {
    to_postgres_with(sql, &Param::ALL)
}

/// [`to_postgres`] with `allowed` names: a declared `release` step binds `:ids` (the
/// jobs that left the worker, as `bigint[]`) and `:worker_id`.
pub fn to_postgres_with(sql: &str, allowed: &[Param]) -> Result<(String, Vec<Param>), ParamError> {
    to_postgres_in(
        sql,
        Names {
            allowed,
            consts: &[],
        },
    )
}

/// [`to_postgres`] with `names`: built-in ones and declared constants.
pub fn to_postgres_in(sql: &str, names: Names<'_>) -> Result<(String, Vec<Param>), ParamError> {
    numbered(sql, names, "$")
}

/// Each `:name` as `prefix` and its number by first use (a repeated name reuses it).
fn numbered(sql: &str, names: Names<'_>, prefix: &str) -> Result<(String, Vec<Param>), ParamError> {
    let mut order: Vec<Param> = Vec::new();
    let out = rewrite(sql, names, |p| {
        let n = match order.iter().position(|q| *q == p) {
            Some(i) => i + 1,
            None => {
                order.push(p);
                order.len()
            }
        };
        format!("{prefix}{n}")
    })?;
    Ok((out, order))
}

/// Rewrites each `:name` to `@P<n>` (SQL Server's parameters as tiberius sends them,
/// numbered by first use like [`to_postgres`]); a `@P<n>` written by hand is refused,
/// as `$1` is on PostgreSQL.
pub fn to_mssql_in(sql: &str, names: Names<'_>) -> Result<(String, Vec<Param>), ParamError> {
    if let Some(at) = hand_numbered(sql) {
        return Err(ParamError::Positional(at));
    }
    numbered(sql, names, "@P")
}

/// A `@P1`-style parameter in `sql` outside strings and comments, if there is one.
fn hand_numbered(sql: &str) -> Option<String> {
    unquoted(sql).find_map(|i| {
        let b = &sql.as_bytes()[i..];
        let digits = b.iter().skip(2).take_while(|c| c.is_ascii_digit()).count();
        (b.len() > 2 && b[0] == b'@' && (b[1] == b'P' || b[1] == b'p') && digits > 0)
            .then(|| sql[i..i + 2 + digits].to_string())
    })
}

/// The byte offset of each character of `sql` outside comments, strings, quoted names,
/// dollar-quoted text and `::` casts: where a parameter or a statement end can be.
fn unquoted(sql: &str) -> impl Iterator<Item = usize> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < sql.len() {
            let skip = quoted_len(&sql[i..]);
            if skip > 0 {
                i += skip;
                continue;
            }
            let at = i;
            i += sql[i..].chars().next().map_or(1, char::len_utf8);
            return Some(at);
        }
        None
    })
}

/// Whether `word` stands in `sql` as a keyword: outside comments, strings and quoted
/// names (`[OUTPUT]`), whole, in any case (`OUTPUT`, `Output`, not `outputs` or `-- OUTPUT`).
pub fn has_keyword(sql: &str, word: &str) -> bool {
    let b = sql.as_bytes();
    let ident = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    unquoted(sql).any(|i| {
        sql.get(i..i + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
            // A T-SQL [bracketed] name is a name, whatever it spells.
            && (i == 0 || !(ident(i - 1) || b[i - 1] == b'['))
            && !ident(i + word.len())
    })
}

/// The first of `tables` that T-SQL `sql` names without `[{SCHEMA}].` in front, with
/// its line (from 1), outside comments and strings, bracketed (`[JobsHot]`) or bare, in
/// any case. On SQL Server an unqualified name resolves in the login's default schema
/// (`dbo`), not the run's: the claim would read another table, or none.
pub fn unqualified_table<'t>(sql: &str, tables: &[&'t str]) -> Option<(&'t str, usize)> {
    let b = sql.as_bytes();
    let ident = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    unquoted(sql).find_map(|i| {
        let rest = &sql[i..];
        let (bracketed, at) = match rest.strip_prefix('[') {
            Some(inner) => (true, inner),
            None => (false, rest),
        };
        if !bracketed && i > 0 && (ident(i - 1) || b[i - 1] == b'[') {
            return None;
        }
        let table = tables.iter().find(|t| {
            at.get(..t.len()).is_some_and(|w| w.eq_ignore_ascii_case(t))
                && match bracketed {
                    true => at.as_bytes().get(t.len()) == Some(&b']'),
                    false => !ident(i + t.len()),
                }
        })?;
        let qualified = sql[..i].ends_with("[{SCHEMA}].");
        (!qualified).then(|| (*table, sql[..i].matches('\n').count() + 1))
    })
}

/// Rewrites each `:name` to `?` (MySQL numbers nothing: a repeated name is bound again)
/// and returns the parameters in order. With `ids`, `:ids` is allowed and kept as the
/// marker the session expands to one `?` per id, and [`Param::Ids`] says where they go.
pub fn to_mysql(sql: &str, ids: bool) -> Result<(String, Vec<Param>), ParamError> {
    to_mysql_in(sql, ids, &[])
}

/// [`to_mysql`] with the strategy's declared constants.
pub fn to_mysql_in(
    sql: &str,
    ids: bool,
    consts: &[String],
) -> Result<(String, Vec<Param>), ParamError> {
    let allowed: &[Param] = if ids {
        &[Param::Batch, Param::WorkerId, Param::Queue, Param::Ids]
    } else {
        &Param::ALL
    };
    to_mysql_names(sql, Names { allowed, consts })
}

/// [`to_mysql`] with `names`: a declared table's step, whose names are its own.
pub fn to_mysql_names(sql: &str, names: Names<'_>) -> Result<(String, Vec<Param>), ParamError> {
    let mut order: Vec<Param> = Vec::new();
    let out = rewrite(sql, names, |p| {
        order.push(p);
        match p {
            Param::Ids => ":ids".to_string(),
            _ => "?".to_string(),
        }
    })?;
    Ok((out, order))
}

/// Whether `sql` holds no statement: only white space, comments and semicolons.
pub fn is_blank(sql: &str) -> bool {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map_or("", |e| &r[e..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |e| &r[e + 2..]);
        } else {
            return rest.is_empty();
        }
    }
}

/// The opening tag of a PostgreSQL dollar-quoted string at the start of `s`: `$$` or
/// `$name$` (a name does not start with a digit, so `$1` is no tag).
fn dollar_tag(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('$')?;
    let len = rest
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    let starts_ok = rest.bytes().next().is_some_and(|c| !c.is_ascii_digit());
    (rest.as_bytes().get(len) == Some(&b'$') && (len == 0 || starts_ok)).then(|| &s[..len + 2])
}

/// How many bytes at the start of `rest` are a comment, a quoted string or name, a
/// dollar-quoted string or a `::` cast: text no parameter or statement end is in. 0 when
/// `rest` starts with none of them.
fn quoted_len(rest: &str) -> usize {
    let b = rest.as_bytes();
    if rest.starts_with("--") {
        rest.find('\n').unwrap_or(rest.len())
    } else if rest.starts_with("/*") {
        rest.find("*/").map_or(rest.len(), |e| e + 2)
    } else if b.first().is_some_and(|c| *c == b'\'' || *c == b'"') {
        rest[1..].find(b[0] as char).map_or(rest.len(), |e| e + 2)
    } else if let Some(tag) = dollar_tag(rest) {
        // A dollar-quoted string (`$$…$$`, `$f$…$f$`) is text: a `:worker_id` in it is
        // no parameter (rewritten, it became a `$1` the statement never binds).
        rest[tag.len()..]
            .find(tag)
            .map_or(rest.len(), |e| tag.len() + e + tag.len())
    } else if rest.starts_with("::") {
        2
    } else {
        0
    }
}

/// The line (from 1) where a second statement begins after a `;` outside strings and
/// comments, if `sql` holds more than one: PostgreSQL prepares one statement, so such a
/// claim would validate and then fail at its first claim.
pub fn second_statement_line(sql: &str) -> Option<usize> {
    unquoted(sql).find_map(|i| {
        let rest = &sql[i..];
        let after = rest.strip_prefix(';')?;
        if is_blank(after) {
            return None;
        }
        let start = after.len() - after.trim_start().len();
        Some(sql[..i + 1 + start].matches('\n').count() + 1)
    })
}

fn rewrite(
    sql: &str,
    names: Names<'_>,
    mut number: impl FnMut(Param) -> String,
) -> Result<String, ParamError> {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let rest = &sql[i..];
        let skip = quoted_len(rest);
        if skip > 0 {
            out.push_str(&rest[..skip]);
            i += skip;
            continue;
        }
        let c = b[i];
        let len = b[i + 1..].iter().take_while(|&&c| ident(c)).count();
        if c == b':' && len > 0 && b[i + 1].is_ascii_alphabetic() {
            let name = &sql[i + 1..i + 1 + len];
            let p = names
                .find(name)
                .ok_or_else(|| ParamError::Unknown(name.to_string()))?;
            out.push_str(&number(p));
            i += 1 + len;
        } else if c == b'$' && len > 0 && b[i + 1].is_ascii_digit() {
            return Err(ParamError::Positional(sql[i..i + 1 + len].to_string()));
        } else {
            let ch = rest.chars().next().unwrap_or_default();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyword_counts_only_where_it_is_code() {
        assert!(has_keyword(
            "UPDATE t SET a = 1 Output Inserted.[Id]",
            "output"
        ));
        assert!(has_keyword("output inserted.id", "OUTPUT"));
        assert!(!has_keyword(
            "UPDATE t SET a = 1 -- OUTPUT INSERTED.[Id]",
            "OUTPUT"
        ));
        assert!(!has_keyword(
            "UPDATE t SET a = 'OUTPUT' /* OUTPUT */",
            "OUTPUT"
        ));
        assert!(!has_keyword(
            "UPDATE t SET outputs = 1, [OUTPUT] = 2",
            "OUTPUT"
        ));
    }

    #[test]
    fn names_become_numbers_by_first_use() {
        let (sql, order) = to_postgres(
            "UPDATE t SET w = :worker_id WHERE id IN (SELECT id LIMIT :batch) AND x = :worker_id",
        )
        .unwrap();
        assert_eq!(
            sql,
            "UPDATE t SET w = $1 WHERE id IN (SELECT id LIMIT $2) AND x = $1"
        );
        assert_eq!(order, vec![Param::WorkerId, Param::Batch]);
    }

    /// A claim of two statements is found, at the line the second begins; a `;` in a
    /// string, a comment or at the end is no second statement.
    #[test]
    fn a_second_statement_is_found_where_it_begins() {
        assert_eq!(second_statement_line("UPDATE t SET a = 1;"), None);
        assert_eq!(
            second_statement_line("UPDATE t SET a = ';b'; -- done;\n"),
            None
        );
        assert_eq!(
            second_statement_line("UPDATE t SET a = $$;$$ /* ; */"),
            None
        );
        assert_eq!(
            second_statement_line("WITH x AS (SELECT 1)\nSELECT 1;\n\n  INSERT INTO t VALUES (1)"),
            Some(4)
        );
        assert_eq!(second_statement_line("SELECT 1; SELECT 2"), Some(1));
    }

    /// Regression: a `:worker_id` inside a dollar-quoted string became `$1` in text,
    /// validated, and failed at run time.
    #[test]
    fn dollar_quoted_strings_are_text() {
        let (sql, order) = to_postgres(
            "UPDATE t SET a = $$ :worker_id $$, b = $f$ :batch $f$ WHERE w = :worker_id",
        )
        .unwrap();
        assert_eq!(
            sql,
            "UPDATE t SET a = $$ :worker_id $$, b = $f$ :batch $f$ WHERE w = $1"
        );
        assert_eq!(order, vec![Param::WorkerId]);
        assert!(matches!(
            to_postgres("SELECT $1"),
            Err(ParamError::Positional(_))
        ));
        // Only in the string: the claim never binds its worker (refused by declare).
        let (_, order) = to_postgres("UPDATE t SET w = $q$:worker_id$q$").unwrap();
        assert!(order.is_empty());
    }

    #[test]
    fn casts_strings_quoted_names_and_comments_are_left_alone() {
        let sql =
            "SELECT x::bigint, ':batch', \":worker_id\" -- :nope\n/* :nope */ FROM t LIMIT :batch";
        let (out, order) = to_postgres(sql).unwrap();
        assert_eq!(
            out,
            "SELECT x::bigint, ':batch', \":worker_id\" -- :nope\n/* :nope */ FROM t LIMIT $1"
        );
        assert_eq!(order, vec![Param::Batch]);
        assert_eq!(
            to_postgres("SELECT 'é' || :batch").unwrap().0,
            "SELECT 'é' || $1"
        );
    }

    #[test]
    fn mysql_takes_a_placeholder_per_use_and_keeps_the_ids_marker() {
        let (sql, order) = to_mysql(
            "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (:ids) AND w <> :worker_id",
            true,
        )
        .unwrap();
        assert_eq!(
            sql,
            "UPDATE jobs_hot SET worker_id = ? WHERE id IN (:ids) AND w <> ?"
        );
        assert_eq!(order, vec![Param::WorkerId, Param::Ids, Param::WorkerId]);
        // Only a claim step takes the ids.
        assert_eq!(
            to_mysql("SELECT id FROM t WHERE id IN (:ids)", false).unwrap_err(),
            ParamError::Unknown("ids".into())
        );
        assert!(to_postgres("WHERE id IN (:ids)").is_err());
    }

    /// T-SQL takes tiberius's `@P1`, numbered by first use; `$` in a string or an
    /// `@P1` written by hand is no parameter of claimbench's.
    #[test]
    fn sql_server_parameters_are_numbered_as_tiberius_sends_them() {
        let names = Names {
            allowed: &Param::ALL,
            consts: &["tries".to_string()],
        };
        let (sql, order) = to_mssql_in(
            "UPDATE TOP (:batch) t SET w = :worker_id, s = '$1' WHERE q = :queue AND a < :tries AND w2 = :worker_id",
            names,
        )
        .unwrap();
        assert_eq!(
            sql,
            "UPDATE TOP (@P1) t SET w = @P2, s = '$1' WHERE q = @P3 AND a < @P4 AND w2 = @P2"
        );
        assert_eq!(
            order,
            [Param::Batch, Param::WorkerId, Param::Queue, Param::Const(0)]
        );
        assert_eq!(
            to_mssql_in("SELECT TOP (@P1) 1", names).unwrap_err(),
            ParamError::Positional("@P1".into())
        );
        assert!(to_mssql_in("SELECT '@P1', @Limit", names).is_ok());
    }

    #[test]
    fn a_file_of_comments_holds_no_statement() {
        assert!(is_blank(""));
        assert!(is_blank("  -- nothing yet\n/* later */ ;\n"));
        assert!(!is_blank("-- the claim\nSELECT 1"));
        assert!(!is_blank("/* a */ CREATE INDEX ON t (x)"));
    }

    #[test]
    fn unknown_and_positional_parameters_are_refused() {
        assert_eq!(
            to_postgres("LIMIT :limit").unwrap_err(),
            ParamError::Unknown("limit".into())
        );
        assert!(
            to_postgres("LIMIT $1")
                .unwrap_err()
                .to_string()
                .contains("`$1`")
        );
        // jsonb's `?` operator is not a parameter on PostgreSQL.
        assert_eq!(to_postgres("WHERE tags ? 'x'").unwrap().1, vec![]);
    }
}
