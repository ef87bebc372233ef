//! Session settings a workload sets on every worker connection, per backend: PostgreSQL
//! parameters (`enable_hashjoin = "off"`), MySQL session variables
//! (`transaction_isolation = "READ-COMMITTED"`), SQL Server `SET` options
//! (`"TRANSACTION ISOLATION LEVEL" = "SNAPSHOT"`). A plan change or an isolation level
//! is then part of the workload: reproduced by rerunning it, and compared by `compare`
//! through the workload's hash.
//!
//! Names cannot be bound as parameters on any of the three, and SQL Server's `SET`
//! binds no value either, so both are checked against a narrow alphabet here, before
//! they reach a statement.

use crate::backend_kind::BackendKind;
use serde::{Deserialize, Serialize};

/// One setting for one backend's worker connections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSetting {
    pub backend: BackendKind,
    pub name: String,
    pub value: String,
}

/// What a SQL Server `SET` option takes.
#[derive(Debug, Clone, Copy)]
enum MssqlValue {
    OnOff,
    /// An integer in this range.
    Int(i64, i64),
    /// One of these words, or (with a range) an integer in it.
    Words(&'static [&'static str], Option<(i64, i64)>),
}

/// SQL Server's `SET` options a workload may give, and what each takes. `SET` binds
/// nothing, so the batch claimbench sends is made of these words and a checked integer
/// alone: a value such as `1 SHUTDOWN WITH NOWAIT` is no value of any of them.
const MSSQL_SETS: &[(&str, MssqlValue)] = &[
    (
        "TRANSACTION ISOLATION LEVEL",
        MssqlValue::Words(
            &[
                "READ UNCOMMITTED",
                "READ COMMITTED",
                "REPEATABLE READ",
                "SNAPSHOT",
                "SERIALIZABLE",
            ],
            None,
        ),
    ),
    ("LOCK_TIMEOUT", MssqlValue::Int(-1, i32::MAX as i64)),
    (
        "DEADLOCK_PRIORITY",
        MssqlValue::Words(&["LOW", "NORMAL", "HIGH"], Some((-10, 10))),
    ),
    (
        "QUERY_GOVERNOR_COST_LIMIT",
        MssqlValue::Int(0, i32::MAX as i64),
    ),
    ("DATEFIRST", MssqlValue::Int(1, 7)),
    ("NOCOUNT", MssqlValue::OnOff),
    ("XACT_ABORT", MssqlValue::OnOff),
    ("ARITHABORT", MssqlValue::OnOff),
    ("ARITHIGNORE", MssqlValue::OnOff),
    ("ANSI_NULLS", MssqlValue::OnOff),
    ("ANSI_PADDING", MssqlValue::OnOff),
    ("ANSI_WARNINGS", MssqlValue::OnOff),
    ("QUOTED_IDENTIFIER", MssqlValue::OnOff),
    ("CONCAT_NULL_YIELDS_NULL", MssqlValue::OnOff),
    ("NUMERIC_ROUNDABORT", MssqlValue::OnOff),
    ("IMPLICIT_TRANSACTIONS", MssqlValue::OnOff),
];

/// Checks a setting and returns it as it will be sent: PostgreSQL's and MySQL's as
/// given (their values are bound), SQL Server's name and value in the one spelling of
/// [`MSSQL_SETS`]. The message says why one is refused; the caller adds file and field.
pub fn check(
    kind: BackendKind,
    name: &str,
    value: &str,
) -> Result<(String, String), crate::invalid::Invalid> {
    let engine = kind.engine();
    let name_ok = starts_alpha(name)
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || c == '_' || engine.setting_name_extra.contains(&c)
        });
    if !name_ok {
        return Err(crate::invalid!(
            "`{name}` is not a {kind} setting name (letters, digits and _{})",
            engine.setting_name_rule
        ));
    }
    if value.contains('\0') {
        return Err("a setting value holds a NUL byte".into());
    }
    if engine.binds_setting_values {
        return Ok((name.to_string(), value.to_string()));
    }
    mssql(name, value)
}

/// A SQL Server `SET` option from the allowed list, in its one spelling.
fn mssql(name: &str, value: &str) -> Result<(String, String), crate::invalid::Invalid> {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let upper = words(name).to_ascii_uppercase();
    let Some((name, takes)) = MSSQL_SETS.iter().find(|(n, _)| *n == upper) else {
        let names: Vec<&str> = MSSQL_SETS.iter().map(|(n, _)| *n).collect();
        return Err(crate::invalid!(
            "`{name}` is not a SQL Server SET option claimbench sends; expected one of: {}",
            names.join(", ")
        ));
    };
    let v = words(value).to_ascii_uppercase();
    let int_in = |lo: i64, hi: i64| v.parse::<i64>().ok().filter(|n| (lo..=hi).contains(n));
    let ok = match *takes {
        MssqlValue::OnOff => ["ON", "OFF"].contains(&v.as_str()).then(|| v.clone()),
        MssqlValue::Int(lo, hi) => int_in(lo, hi).map(|n| n.to_string()),
        MssqlValue::Words(list, range) => {
            list.contains(&v.as_str()).then(|| v.clone()).or_else(|| {
                range
                    .and_then(|(lo, hi)| int_in(lo, hi))
                    .map(|n| n.to_string())
            })
        }
    };
    ok.map(|v| (name.to_string(), v)).ok_or_else(|| {
        let allowed = match *takes {
            MssqlValue::OnOff => "ON or OFF".to_string(),
            MssqlValue::Int(lo, hi) => format!("an integer from {lo} to {hi}"),
            MssqlValue::Words(list, None) => list.join(", "),
            MssqlValue::Words(list, Some((lo, hi))) => {
                format!("{}, or an integer from {lo} to {hi}", list.join(", "))
            }
        };
        crate::invalid!("`{value}` is not a value of SET {name}; expected {allowed}")
    })
}

fn starts_alpha(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// The settings of `kind`, as (name, value), in name order.
pub fn for_backend(all: &[SessionSetting], kind: BackendKind) -> Vec<(String, String)> {
    all.iter()
        .filter(|s| s.backend == kind)
        .map(|s| (s.name.clone(), s.value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_that_could_carry_sql_are_refused() {
        use BackendKind::*;
        assert!(check(Postgres, "enable_hashjoin", "off").is_ok());
        assert!(check(Postgres, "pg_stat_statements.track", "all").is_ok());
        assert!(
            check(Postgres, "work_mem", "64MB; DROP TABLE x").is_ok(),
            "values are bound"
        );
        assert!(check(Postgres, "work_mem", "64\0MB").is_err());
        assert!(check(Postgres, "x; DROP TABLE y", "1").is_err());
        assert!(check(Postgres, "1abc", "1").is_err());
        assert!(check(Mysql, "transaction_isolation", "READ-COMMITTED").is_ok());
        assert!(check(Mysql, "a.b", "1").is_err());
        let e = check(Mysql, "", "1").unwrap_err();
        assert!(e.contains("not a mysql setting name"), "{e}");
    }

    /// Regression: `SET {name} {value}` went out as a batch, and T-SQL needs no `;`
    /// between statements: a value of `1 SHUTDOWN WITH NOWAIT` passed the alphabet check.
    #[test]
    fn sql_server_settings_are_an_allowed_list_with_typed_values() {
        use BackendKind::Mssql;
        let ok = |n: &str, v: &str| check(Mssql, n, v).unwrap();
        assert_eq!(
            ok("transaction  isolation level", "read committed"),
            (
                "TRANSACTION ISOLATION LEVEL".into(),
                "READ COMMITTED".into()
            )
        );
        assert_eq!(
            ok("LOCK_TIMEOUT", "-1"),
            ("LOCK_TIMEOUT".into(), "-1".into())
        );
        assert_eq!(ok("deadlock_priority", "high").1, "HIGH");
        assert_eq!(ok("DEADLOCK_PRIORITY", "-5").1, "-5");
        assert_eq!(ok("NOCOUNT", "on").1, "ON");
        for (n, v, says) in [
            (
                "LOCK_TIMEOUT",
                "1 SHUTDOWN WITH NOWAIT",
                "not a value of SET LOCK_TIMEOUT",
            ),
            ("LOCK_TIMEOUT", "1; SHUTDOWN", "not a value"),
            ("LOCK_TIMEOUT", "-2", "an integer from -1"),
            ("NOCOUNT", "ON SHUTDOWN", "ON or OFF"),
            ("NOCOUNT", "", "ON or OFF"),
            (
                "DEADLOCK_PRIORITY",
                "11",
                "LOW, NORMAL, HIGH, or an integer from -10 to 10",
            ),
            (
                "TRANSACTION ISOLATION LEVEL",
                "SNAPSHOT SHUTDOWN",
                "READ UNCOMMITTED",
            ),
            ("SHOWPLAN_XML", "ON", "not a SQL Server SET option"),
            ("ROWCOUNT", "1", "not a SQL Server SET option"),
        ] {
            let e = check(Mssql, n, v).unwrap_err();
            assert!(e.contains(says), "{n} {v}: {e}");
        }
    }

    #[test]
    fn each_backend_gets_its_own_settings_in_order() {
        let s = |b, n: &str, v: &str| SessionSetting {
            backend: b,
            name: n.into(),
            value: v.into(),
        };
        let all = [
            s(BackendKind::Postgres, "b", "2"),
            s(BackendKind::Mysql, "m", "x"),
            s(BackendKind::Postgres, "a", "1"),
        ];
        assert_eq!(
            for_backend(&all, BackendKind::Postgres),
            vec![("b".into(), "2".into()), ("a".into(), "1".into())]
        );
        assert!(for_backend(&all, BackendKind::Mssql).is_empty());
    }
}
