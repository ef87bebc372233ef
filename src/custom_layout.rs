//! Index layouts a workload declares (`[layouts.<name>]`): the team's own index DDL in a
//! file beside the workload, built after the seed like a shipped layout.
//!
//! A declaration lives in the validated workload (`Workload::custom_layouts`), which
//! the reset reads it from: nothing about it outlives the workload.

use crate::names::check_declared_name;
use serde::{Deserialize, Serialize};

/// What run.json records of a declared layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredLayout {
    pub name: String,
    pub file: String,
    pub sql: String,
}

/// Checks `d`; the message says why a declaration is refused.
pub fn check(d: &DeclaredLayout) -> Result<(), String> {
    let shipped = crate::names::INDEX_LAYOUTS.contains(&d.name.as_str());
    check_declared_name(&d.name, "layout", shipped.then_some("a shipped layout"))?;
    crate::privileged_sql::check_file(&d.file, &d.sql)?;
    if crate::strategy::named_params::is_blank(&d.sql) {
        // Regression: such a file ran with no index at all, and said nothing.
        return Err(format!(
            "{} holds no statement; give the index DDL (e.g. CREATE INDEX ... ON jobs_hot ...)",
            d.file
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
