//! Index layouts a workload declares (`[layouts.<name>]`): the team's own index DDL in a
//! file beside the workload, built after the seed like a shipped layout.
//!
//! Like declared strategies, a declaration lives for the process (its text leaked once),
//! so `layout_sql` can hand it out as a shipped file's `&'static str`.

use crate::names::{check_declared_name, leak};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// What run.json records of a declared layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredLayout {
    pub name: String,
    pub file: String,
    pub sql: String,
}

/// (name, file, DDL), latest last: a name declared twice resolves to the latest.
static DECLARED: Mutex<Vec<(&'static str, &'static str, &'static str)>> = Mutex::new(Vec::new());

/// Registers `d`; the message says why a declaration is refused.
pub fn declare(d: &DeclaredLayout) -> Result<(), String> {
    let shipped = crate::names::INDEX_LAYOUTS.contains(&d.name.as_str());
    check_declared_name(&d.name, "layout", shipped.then_some("a shipped layout"))?;
    if crate::strategy::named_params::is_blank(&d.sql) {
        // Regression: such a file ran with no index at all, and said nothing.
        return Err(format!(
            "{} holds no statement; give the index DDL (e.g. CREATE INDEX ... ON jobs_hot ...)",
            d.file
        ));
    }
    DECLARED.lock().unwrap_or_else(|p| p.into_inner()).push((
        leak(&d.name),
        leak(&d.file),
        leak(&d.sql),
    ));
    Ok(())
}

fn find(name: &str) -> Option<(&'static str, &'static str)> {
    DECLARED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .rev()
        .find(|(n, _, _)| *n == name)
        .map(|(_, file, sql)| (*file, *sql))
}

/// The PostgreSQL DDL of a declared layout.
pub fn postgres(name: &str) -> Option<&'static str> {
    find(name).map(|(_, sql)| sql)
}

/// The file a declared layout came from, for errors.
pub fn file(name: &str) -> Option<&'static str> {
    find(name).map(|(file, _)| file)
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
        declare(&d).unwrap();
        assert_eq!(postgres("unit-covering"), Some(d.sql.as_str()));
        assert_eq!(file("unit-covering"), Some("covering.sql"));
        assert!(postgres("nope").is_none());
        let shipped = DeclaredLayout {
            name: "fetch-order".into(),
            ..d
        };
        assert!(declare(&shipped).unwrap_err().contains("shipped"));
        let spaced = DeclaredLayout {
            name: "my layout".into(),
            ..shipped
        };
        assert!(declare(&spaced).unwrap_err().contains("not a layout name"));
        let blank = DeclaredLayout {
            name: "unit-blank".into(),
            sql: "-- later\n".into(),
            ..spaced
        };
        assert!(declare(&blank).unwrap_err().contains("holds no statement"));
        assert!(postgres("my layout").is_none());
    }
}
