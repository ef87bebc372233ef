//! Index layouts a workload declares (`[layouts.<name>]`): the team's own index DDL in a
//! file beside the workload, built after the seed like a shipped layout.
//!
//! A declaration lives in the validated workload (`Workload::custom_layouts`), which
//! the reset reads it from: nothing about it outlives the workload.

use crate::names::check_declared_name;
use serde::{Deserialize, Serialize};

/// What run.json records of a declared layout: its PostgreSQL DDL (`file` empty
/// without one) and its MySQL DDL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredLayout {
    pub name: String,
    pub file: String,
    pub sql: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<crate::strategy::custom::DeclaredFile>,
    /// SQL Server's DDL (`[{SCHEMA}]` where the run's schema goes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mssql: Option<crate::strategy::custom::DeclaredFile>,
}

impl DeclaredLayout {
    /// The DDL for PostgreSQL, if the declaration has it.
    pub fn postgres(&self) -> Option<&str> {
        (!self.file.is_empty()).then_some(self.sql.as_str())
    }

    /// Every (file, DDL) of the declaration.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        let pg = (!self.file.is_empty()).then_some((self.file.as_str(), self.sql.as_str()));
        let other = [&self.mysql, &self.mssql]
            .into_iter()
            .flatten()
            .map(|m| (m.file.as_str(), m.sql.as_str()));
        pg.into_iter().chain(other)
    }
}

/// Checks `d`; the message says why a declaration is refused.
pub fn check(d: &DeclaredLayout) -> Result<(), crate::invalid::Invalid> {
    check_name(&d.name)?;
    d.files().try_for_each(|(file, sql)| check_form(file, sql))
}

/// A declared layout's name: plain, and not a shipped layout's.
pub fn check_name(name: &str) -> Result<(), crate::invalid::Invalid> {
    let shipped = crate::names::INDEX_LAYOUTS.contains(&name);
    check_declared_name(name, "layout", shipped.then_some("a shipped layout"))
}

/// One engine's DDL file of a declared layout: a statement, and none that reaches the
/// host.
pub fn check_form(file: &str, sql: &str) -> Result<(), crate::invalid::Invalid> {
    crate::privileged_sql::check_file(file, sql)?;
    if crate::strategy::named_params::is_blank(sql) {
        // Regression: such a file ran with no index at all, and said nothing.
        return Err(crate::invalid!(
            "{file} holds no statement; give the index DDL (e.g. CREATE INDEX ... ON jobs_hot ...)"
        ));
    }
    Ok(())
}

/// The declaration of `name` among a workload's.
pub fn find<'a>(declared: &'a [DeclaredLayout], name: &str) -> Option<&'a DeclaredLayout> {
    declared.iter().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_layout_is_found_by_name_and_shipped_names_are_refused() {
        let d = DeclaredLayout {
            name: "unit-covering".into(),
            file: "covering.sql".into(),
            sql: "CREATE INDEX ON jobs_hot (status, id)".into(),
            mysql: None,
            mssql: None,
        };
        check(&d).unwrap();
        let declared = [d.clone()];
        assert_eq!(find(&declared, "unit-covering"), Some(&d));
        assert!(find(&declared, "nope").is_none());
        let shipped = DeclaredLayout {
            name: "fetch-order".into(),
            ..d
        };
        assert!(check(&shipped).unwrap_err().contains("shipped"));
        let spaced = DeclaredLayout {
            name: "my layout".into(),
            ..shipped
        };
        assert!(check(&spaced).unwrap_err().contains("not a layout name"));
        let blank = DeclaredLayout {
            name: "unit-blank".into(),
            sql: "-- later\n".into(),
            ..spaced
        };
        assert!(check(&blank).unwrap_err().contains("holds no statement"));
    }
}
