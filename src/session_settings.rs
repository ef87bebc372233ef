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

/// Why a name or value cannot be sent; the caller adds the file and field.
pub fn check(kind: BackendKind, name: &str, value: &str) -> Result<(), String> {
    let engine = kind.engine();
    let name_ok = starts_alpha(name)
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || c == '_' || engine.setting_name_extra.contains(&c)
        });
    if !name_ok {
        return Err(format!(
            "`{name}` is not a {kind} setting name (letters, digits and _{})",
            engine.setting_name_rule
        ));
    }
    // PostgreSQL and MySQL bind the value; SQL Server's SET takes it as text.
    if !engine.binds_setting_values
        && (value.is_empty()
            || !value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | '-' | '.')))
    {
        return Err(format!(
            "`{value}` is not allowed as a SQL Server SET value (letters, digits, spaces, _ - .)"
        ));
    }
    Ok(())
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
        assert!(check(Postgres, "x; DROP TABLE y", "1").is_err());
        assert!(check(Postgres, "1abc", "1").is_err());
        assert!(check(Mysql, "transaction_isolation", "READ-COMMITTED").is_ok());
        assert!(check(Mysql, "a.b", "1").is_err());
        assert!(check(Mssql, "TRANSACTION ISOLATION LEVEL", "READ COMMITTED").is_ok());
        assert!(check(Mssql, "LOCK_TIMEOUT", "-1").is_ok());
        assert!(check(Mssql, "LOCK_TIMEOUT", "1; SHUTDOWN").is_err());
        assert!(check(Mssql, "NOCOUNT", "").is_err());
        let e = check(Mysql, "", "1").unwrap_err();
        assert!(e.contains("not a mysql setting name"), "{e}");
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
