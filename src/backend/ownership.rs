//! Which schema claimbench may drop: only one it created itself.
//!
//! Every trial drops and recreates the `--schema` (a PostgreSQL or SQL Server schema, a
//! MySQL database). On a server claimbench did not start, that name could be the user's
//! own (`--schema public` once dropped a user's tables with exit 0). So claimbench marks
//! what it creates with a table named [`MARKER_TABLE`], created in the same step as the
//! schema, and before it drops anything it asks the server whether the schema exists and
//! whether it has the marker. This module holds the decision, as a pure function; each
//! backend only answers the two questions with its own catalog query.

use super::BackendKind;

/// The table claimbench creates in every schema it creates; its presence is what lets a
/// later run drop that schema.
pub const MARKER_TABLE: &str = "claimbench_schema";

/// The longest `--schema` every backend takes as a name (PostgreSQL's is 63 bytes).
pub const MAX_SCHEMA_NAME: usize = 63;

/// A `--schema` every backend can hold as a plain identifier: letters, digits and `_`,
/// not starting with a digit. Each backend quotes it too, but SQL Server's statements
/// also name it inside string literals (`OBJECT_ID(N'[schema].[t]')`), where a quote
/// would end the literal; a plain name needs no quoting rule to be right.
pub fn check_name(name: &str) -> Result<(), crate::invalid::Invalid> {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain || name.len() > MAX_SCHEMA_NAME {
        return Err(crate::invalid!(
            "--schema `{}` is not allowed; give letters, digits and _ (not starting with a digit), at most {MAX_SCHEMA_NAME} characters",
            name.chars()
                .map(|c| if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                })
                .collect::<String>()
        ));
    }
    Ok(())
}

/// Why claimbench will not touch a schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("`{0}` is a system or default schema name")]
    Reserved(String),
    #[error(
        "schema `{0}` exists and was not created by claimbench (it has no {MARKER_TABLE} table)"
    )]
    NotOurs(String),
}

/// What the server said about the schema before a reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchemaFacts {
    pub exists: bool,
    pub marked: bool,
    /// The schema holds no object at all. Asked on SQL Server only, where claimbench
    /// drops its own tables but never the schema, and where a login without CREATE
    /// SCHEMA needs an administrator to create an empty one for it.
    pub empty: bool,
}

/// Whether a reset may drop and recreate `name`: a reserved name never; an existing
/// schema only with the marker (or, on SQL Server, when it is empty); a missing one
/// always (claimbench creates and marks it).
pub fn may_recreate(kind: BackendKind, name: &str, facts: SchemaFacts) -> Result<(), Refusal> {
    if kind.reserves_schema(name) {
        return Err(Refusal::Reserved(name.to_string()));
    }
    let adoptable = kind.engine().adopts_empty_schema && facts.empty;
    if facts.exists && !facts.marked && !adoptable {
        return Err(Refusal::NotOurs(name.to_string()));
    }
    Ok(())
}

/// What to tell the user after a refusal.
pub const REFUSAL_HINT: &str = "claimbench drops and recreates its --schema for every trial, so it works only in a schema it created; pass another --schema (default claimbench), or drop this one yourself if it is left over from an older claimbench";

#[cfg(test)]
mod tests {
    use super::*;

    const FRESH: SchemaFacts = SchemaFacts {
        exists: false,
        marked: false,
        empty: true,
    };
    const OURS: SchemaFacts = SchemaFacts {
        exists: true,
        marked: true,
        empty: false,
    };
    const FOREIGN: SchemaFacts = SchemaFacts {
        exists: true,
        marked: false,
        empty: false,
    };

    #[test]
    fn system_and_default_schemas_are_refused_even_when_missing() {
        for (kind, name) in [
            (BackendKind::Postgres, "public"),
            (BackendKind::Postgres, "pg_catalog"),
            (BackendKind::Postgres, "information_schema"),
            (BackendKind::Postgres, "PUBLIC"),
            (BackendKind::Mysql, "mysql"),
            (BackendKind::Mysql, "sys"),
            (BackendKind::Mysql, "performance_schema"),
            (BackendKind::Mssql, "dbo"),
            (BackendKind::Mssql, "sys"),
            (BackendKind::Mssql, "db_owner"),
        ] {
            for facts in [FRESH, OURS, FOREIGN] {
                assert_eq!(
                    may_recreate(kind, name, facts),
                    Err(Refusal::Reserved(name.into())),
                    "{kind} {name}"
                );
            }
        }
    }

    #[test]
    fn a_schema_name_is_a_plain_identifier() {
        for ok in ["claimbench", "claimbench_ci_123", "_x", "A1"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1x", "a'b", "a]b", "a b", "a-b", "é", &"x".repeat(64)] {
            let e = check_name(bad).unwrap_err();
            assert!(e.contains("letters, digits and _"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_existing_schema_needs_the_marker() {
        let k = BackendKind::Postgres;
        assert_eq!(may_recreate(k, "claimbench", FRESH), Ok(()));
        assert_eq!(may_recreate(k, "claimbench", OURS), Ok(()));
        assert_eq!(
            may_recreate(k, "app", FOREIGN),
            Err(Refusal::NotOurs("app".into()))
        );
        // `public` is only reserved on PostgreSQL; elsewhere the marker decides.
        assert_eq!(may_recreate(BackendKind::Mysql, "public", FRESH), Ok(()));
    }

    #[test]
    fn an_empty_unmarked_schema_is_adopted_on_sql_server_only() {
        let empty = SchemaFacts {
            empty: true,
            ..FOREIGN
        };
        assert_eq!(may_recreate(BackendKind::Mssql, "bench", empty), Ok(()));
        for kind in [BackendKind::Postgres, BackendKind::Mysql] {
            assert!(may_recreate(kind, "bench", empty).is_err(), "{kind}");
        }
    }

    #[test]
    fn the_refusal_names_the_schema_and_the_marker() {
        let msg = Refusal::NotOurs("app".into()).to_string();
        assert!(msg.contains("`app`") && msg.contains(MARKER_TABLE), "{msg}");
    }
}
