//! Index layouts per engine: the shipped ones, one file each under
//! `migrations/<engine>/indexes/`, in one table; the ones a workload declares (carried in
//! the workload, one DDL file per engine: PostgreSQL's and MySQL's); and why a layout
//! cannot be built somewhere.

use super::BackendError;
use crate::backend_kind::BackendKind;
use crate::custom_layout::DeclaredLayout;
use crate::statements::migration;
use crate::strategy::Strategy;

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

/// A broker's layouts: where its queue is, with no index to choose. A SQL engine
/// refuses them, a broker every other.
pub use crate::names::{BROKER_LAYOUTS, HASH_BY_DUE, STREAM, WORK_QUEUE};

/// Why an index layout cannot be built on a backend.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "MySQL and MariaDB have no partial (filtered) indexes, so `pending-partial` cannot be built there; use fetch-order"
    )]
    NoPartialIndexes,
    #[error(
        "the declared layout `{layout}` has no {kind} DDL; name a file for it in layouts.{layout}.{kind}"
    )]
    DeclaredWithoutForm { kind: BackendKind, layout: String },
    #[error("no {kind} index layout named `{layout}`")]
    Unknown { kind: BackendKind, layout: String },
    #[error(
        "{kind} keeps its queue outside a table, with no index to choose: give it index_layouts = {}, not `{layout}`", broker_layouts(*kind)
    )]
    NotATable { kind: BackendKind, layout: String },
    #[error(
        "`{layout}` is a broker's layout ({}): {kind} keeps its queue in a table; name one of its index layouts",
        broker_of(layout)
    )]
    NotABroker { kind: BackendKind, layout: String },
}

/// A broker's layouts as a workload writes them: `["stream"] or ["hash-by-due"]`.
fn broker_layouts(kind: BackendKind) -> String {
    let each: Vec<String> = kind
        .engine()
        .broker_layouts
        .iter()
        .map(|l| format!("[\"{l}\"]"))
        .collect();
    each.join(" or ")
}

/// The broker whose layout `layout` is.
fn broker_of(layout: &str) -> &'static str {
    crate::backend_kind::ENGINES
        .iter()
        .find(|e| e.broker_layouts.contains(&layout))
        .map_or("a broker", |e| e.name)
}

/// The DDL of `layout` on `kind`, a shipped one or one of `declared` (the workload's),
/// or why there is none.
pub fn sql<'a>(
    kind: BackendKind,
    layout: &str,
    declared: &'a [DeclaredLayout],
) -> Result<&'a str, LayoutError> {
    match (kind.engine().runs_sql, BROKER_LAYOUTS.contains(&layout)) {
        (false, _) if kind.engine().broker_layouts.contains(&layout) => return Ok(""),
        (false, _) => {
            return Err(LayoutError::NotATable {
                kind,
                layout: layout.to_string(),
            });
        }
        (true, true) => {
            return Err(LayoutError::NotABroker {
                kind,
                layout: layout.to_string(),
            });
        }
        (true, false) => {}
    }
    if let Some((_, _, ddl)) = SHIPPED.iter().find(|(k, n, _)| *k == kind && *n == layout) {
        return Ok(ddl);
    }
    let without = || LayoutError::DeclaredWithoutForm {
        kind,
        layout: layout.to_string(),
    };
    match (kind, crate::custom_layout::find(declared, layout)) {
        (BackendKind::Postgres, Some(d)) => d.postgres().ok_or_else(without),
        (BackendKind::Mysql, Some(d)) => {
            d.mysql.as_ref().map(|m| m.sql.as_str()).ok_or_else(without)
        }
        (BackendKind::Mssql, Some(d)) => {
            d.mssql.as_ref().map(|m| m.sql.as_str()).ok_or_else(without)
        }
        (BackendKind::Mysql, None) if layout == "pending-partial" => {
            Err(LayoutError::NoPartialIndexes)
        }
        _ => Err(LayoutError::Unknown {
            kind,
            layout: layout.to_string(),
        }),
    }
}

/// A server's refusal of a declared layout's DDL, naming the file and the layout
/// before the server's reason.
pub fn declared_refused(err: BackendError, file: &str, layout: &str) -> BackendError {
    err.in_file(&format!("{file} (layout `{layout}`)"))
}

/// A server's refusal of a declared strategy's `setup` step, naming its file; a
/// built-in's as it is.
pub fn setup_refused(err: BackendError, strategy: &Strategy, kind: BackendKind) -> BackendError {
    let file = strategy.def().custom.as_ref().map(|src| match kind {
        BackendKind::Mysql => src.mysql.as_ref().map_or("", |m| m.file.as_str()),
        _ => src.file.as_str(),
    });
    match file {
        Some(file) => err.in_file(&format!("{file} (strategy `{strategy}`, step setup)")),
        None => err,
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
                    Ok(_) => assert!(
                        !partial_on_mysql && !BROKER_LAYOUTS.contains(&l),
                        "{kind} {l}"
                    ),
                    Err(LayoutError::NotABroker { .. }) => assert!(BROKER_LAYOUTS.contains(&l)),
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
        // A broker builds its own layouts, and refuses every table's and every other
        // broker's by name.
        for (kind, own) in [
            (
                BackendKind::Redis,
                "index_layouts = [\"stream\"] or [\"hash-by-due\"]",
            ),
            (BackendKind::Nats, "index_layouts = [\"work-queue\"]"),
            (BackendKind::Rabbitmq, "index_layouts = [\"classic-queue\"]"),
        ] {
            for l in crate::names::INDEX_LAYOUTS {
                match kind.engine().broker_layouts.contains(&l) {
                    true => assert_eq!(sql(kind, l, &[]), Ok("")),
                    false => {
                        let e = sql(kind, l, &[]).unwrap_err().to_string();
                        assert!(e.contains(own), "{kind} {l}: {e}");
                    }
                }
            }
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
            mysql: None,
            mssql: None,
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
            Err(LayoutError::DeclaredWithoutForm {
                kind: BackendKind::Mysql,
                layout: "covering".into()
            })
        );
        let both = [DeclaredLayout {
            mysql: Some(crate::strategy::custom::DeclaredFile {
                file: "covering.mysql.sql".into(),
                sql: "CREATE INDEX c ON jobs_hot (id)".into(),
            }),
            ..declared("CREATE INDEX a ON jobs_hot (id)")
        }];
        assert_eq!(
            sql(BackendKind::Mysql, "covering", &both),
            Ok("CREATE INDEX c ON jobs_hot (id)")
        );
        assert_eq!(
            sql(BackendKind::Mssql, "covering", &both),
            Err(LayoutError::DeclaredWithoutForm {
                kind: BackendKind::Mssql,
                layout: "covering".into()
            })
        );
        let t_sql = "CREATE INDEX c ON [{SCHEMA}].[JobsHot] ([Status], [Id])";
        let all = [DeclaredLayout {
            mssql: Some(crate::strategy::custom::DeclaredFile {
                file: "covering.mssql.sql".into(),
                sql: t_sql.into(),
            }),
            ..both[0].clone()
        }];
        assert_eq!(sql(BackendKind::Mssql, "covering", &all), Ok(t_sql));
        assert!(matches!(
            sql(BackendKind::Postgres, "covering", &[]),
            Err(LayoutError::Unknown { .. })
        ));
    }
}
