//! Index layouts per engine: the shipped ones, one file each under
//! `migrations/<engine>/indexes/`, in one table; the ones a workload declares, PostgreSQL
//! only for now (their DDL is PostgreSQL's); and why a layout cannot be built somewhere.

use super::BackendError;
use crate::backend_kind::BackendKind;
use crate::statements::migration;

macro_rules! shipped {
    ($kind:ident, $engine:literal, $name:literal) => {
        (
            BackendKind::$kind,
            $name,
            migration!($engine, "indexes/", $name, ".sql"),
        )
    };
}

/// (engine, layout, its DDL). MySQL and MariaDB have no `pending-partial`: they have no
/// partial (filtered) indexes.
static SHIPPED: [(BackendKind, &str, &str); 11] = [
    shipped!(Postgres, "postgres", "pk-only"),
    shipped!(Postgres, "postgres", "status-created"),
    shipped!(Postgres, "postgres", "fetch-order"),
    shipped!(Postgres, "postgres", "pending-partial"),
    shipped!(Mysql, "mysql", "pk-only"),
    shipped!(Mysql, "mysql", "status-created"),
    shipped!(Mysql, "mysql", "fetch-order"),
    shipped!(Mssql, "mssql", "pk-only"),
    shipped!(Mssql, "mssql", "status-created"),
    shipped!(Mssql, "mssql", "fetch-order"),
    shipped!(Mssql, "mssql", "pending-partial"),
];

/// Why an index layout cannot be built on a backend.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "MySQL and MariaDB have no partial (filtered) indexes, so `pending-partial` cannot be built there; use fetch-order"
    )]
    NoPartialIndexes,
    #[error("declared layouts are built on PostgreSQL only for now (their DDL is PostgreSQL's)")]
    DeclaredPostgresOnly,
    #[error("no {kind} index layout named `{layout}`")]
    Unknown { kind: BackendKind, layout: String },
}

/// The DDL of `layout` on `kind`, or why there is none.
pub fn sql(kind: BackendKind, layout: &str) -> Result<&'static str, LayoutError> {
    if let Some((_, _, ddl)) = SHIPPED.iter().find(|(k, n, _)| *k == kind && *n == layout) {
        return Ok(ddl);
    }
    match (kind, crate::custom_layout::postgres(layout)) {
        (BackendKind::Postgres, Some(ddl)) => Ok(ddl),
        (_, Some(_)) => Err(LayoutError::DeclaredPostgresOnly),
        (BackendKind::Mysql, None) if layout == "pending-partial" => {
            Err(LayoutError::NoPartialIndexes)
        }
        _ => Err(LayoutError::Unknown {
            kind,
            layout: layout.to_string(),
        }),
    }
}

/// [`sql`] as a reset reports it.
pub fn sql_for_reset(kind: BackendKind, layout: &str) -> Result<&'static str, BackendError> {
    sql(kind, layout).map_err(|why| BackendError::other("build index layout", why.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_layout_has_ddl_where_the_engine_can_build_it() {
        for kind in [
            BackendKind::Postgres,
            BackendKind::Mysql,
            BackendKind::Mssql,
        ] {
            for l in crate::names::INDEX_LAYOUTS {
                let partial_on_mysql = kind == BackendKind::Mysql && l == "pending-partial";
                match sql(kind, l) {
                    Ok(_) => assert!(!partial_on_mysql, "{kind} {l}"),
                    Err(e) => assert!(
                        partial_on_mysql && e == LayoutError::NoPartialIndexes,
                        "{kind} {l}: {e}"
                    ),
                }
            }
            assert!(matches!(
                sql(kind, "btree"),
                Err(LayoutError::Unknown { .. })
            ));
        }
    }
}
