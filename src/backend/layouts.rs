//! Index layouts per engine: the shipped ones, one file each under
//! `migrations/<engine>/indexes/`, in one table; the ones a workload declares (carried in
//! the workload), PostgreSQL only for now (their DDL is PostgreSQL's); and why a layout cannot be built somewhere.

use super::BackendError;
use crate::backend_kind::BackendKind;
use crate::custom_layout::DeclaredLayout;
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
static SHIPPED: [(BackendKind, &str, &str); 14] = [
    shipped!(Postgres, "postgres", "pk-only"),
    shipped!(Postgres, "postgres", "status-created"),
    shipped!(Postgres, "postgres", "fetch-order"),
    shipped!(Postgres, "postgres", "pending-partial"),
    shipped!(Postgres, "postgres", "queue-fetch-order"),
    shipped!(Mysql, "mysql", "pk-only"),
    shipped!(Mysql, "mysql", "status-created"),
    shipped!(Mysql, "mysql", "fetch-order"),
    shipped!(Mysql, "mysql", "queue-fetch-order"),
    shipped!(Mssql, "mssql", "pk-only"),
    shipped!(Mssql, "mssql", "status-created"),
    shipped!(Mssql, "mssql", "fetch-order"),
    shipped!(Mssql, "mssql", "pending-partial"),
    shipped!(Mssql, "mssql", "queue-fetch-order"),
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

/// The DDL of `layout` on `kind`, a shipped one or one of `declared` (the workload's),
/// or why there is none.
pub fn sql<'a>(
    kind: BackendKind,
    layout: &str,
    declared: &'a [DeclaredLayout],
) -> Result<&'a str, LayoutError> {
    if let Some((_, _, ddl)) = SHIPPED.iter().find(|(k, n, _)| *k == kind && *n == layout) {
        return Ok(ddl);
    }
    match (kind, crate::custom_layout::find(declared, layout)) {
        (BackendKind::Postgres, Some(d)) => Ok(&d.sql),
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
pub fn sql_for_reset<'a>(
    kind: BackendKind,
    layout: &str,
    declared: &'a [DeclaredLayout],
) -> Result<&'a str, BackendError> {
    sql(kind, layout, declared)
        .map_err(|why| BackendError::other("build index layout", why.to_string()))
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
                match sql(kind, l, &[]) {
                    Ok(_) => assert!(!partial_on_mysql, "{kind} {l}"),
                    Err(e) => assert!(
                        partial_on_mysql && e == LayoutError::NoPartialIndexes,
                        "{kind} {l}: {e}"
                    ),
                }
            }
            assert!(matches!(
                sql(kind, "btree", &[]),
                Err(LayoutError::Unknown { .. })
            ));
        }
    }

    /// Regression: declarations lived in a process-wide registry where the latest of two
    /// workloads declaring one name won for both; each workload now builds its own.
    #[test]
    fn a_declared_layout_is_the_workloads_own() {
        let declared = |sql: &str| DeclaredLayout {
            name: "covering".into(),
            file: "covering.sql".into(),
            sql: sql.into(),
        };
        let a = [declared("CREATE INDEX a ON jobs_hot (id)")];
        let b = [declared("CREATE INDEX b ON jobs_hot (id)")];
        assert_eq!(
            sql(BackendKind::Postgres, "covering", &a),
            Ok(a[0].sql.as_str())
        );
        assert_eq!(
            sql(BackendKind::Postgres, "covering", &b),
            Ok(b[0].sql.as_str())
        );
        assert_eq!(
            sql(BackendKind::Mysql, "covering", &a),
            Err(LayoutError::DeclaredPostgresOnly)
        );
        assert!(matches!(
            sql(BackendKind::Postgres, "covering", &[]),
            Err(LayoutError::Unknown { .. })
        ));
    }
}
