//! A statement as a worker session sends it. On a direct connection (or through a pooler
//! in session mode) it is prepared once and each call sends only Bind/Execute, as a
//! driver with a statement cache does. Through a pooler in transaction mode each
//! transaction may run on another server connection, so a named prepared statement made
//! on one is missing on the next (or collides with another client's of the same name):
//! there the statement is described once inside a transaction, which pins one server
//! connection, closed on that same connection before the transaction ends, and then sent
//! unnamed on every call (Parse, Bind, Execute in one round trip, with the types the
//! server gave) — what losing named statements costs is measured in docs/backends.md.

use std::sync::Arc;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row, RowStream, Statement};

/// How a session keeps its statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// Prepared once per connection.
    #[default]
    Prepared,
    /// Described once, sent unnamed each time: safe through a transaction pooler.
    Unnamed,
}

#[derive(Clone)]
pub enum Stmt {
    Prepared(Statement),
    Unnamed { sql: Arc<str>, types: Arc<[Type]> },
}

/// A statement just described: its parameter and column types, for the checks a claim
/// statement gets before it is used.
pub struct Described {
    pub stmt: Stmt,
    /// Each column's name and type.
    pub columns: Vec<(String, Type)>,
}

fn columns(s: &Statement) -> Vec<(String, Type)> {
    s.columns()
        .iter()
        .map(|c| (c.name().to_string(), c.type_().clone()))
        .collect()
}

impl Stmt {
    pub fn params(&self) -> &[Type] {
        match self {
            Stmt::Prepared(s) => s.params(),
            Stmt::Unnamed { types, .. } => types,
        }
    }

    /// The driver's own future, not one wrapped around it: on the claim path every
    /// async layer's future is copied whole into its caller's as it starts.
    pub fn query_raw<'a>(
        &self,
        c: &Client,
        args: impl ExactSizeIterator<Item = &'a (dyn ToSql + Sync)> + Send,
    ) -> impl Future<Output = Result<RowStream, tokio_postgres::Error>> + Send {
        use futures_util::future::Either;
        match self {
            Stmt::Prepared(s) => Either::Left(c.query_raw(s, args)),
            Stmt::Unnamed { sql, types } => {
                let typed = args.zip(types.iter().cloned());
                Either::Right(c.query_typed_raw(sql, typed))
            }
        }
    }

    pub async fn query(
        &self,
        c: &Client,
        args: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        use futures_util::TryStreamExt;
        match self {
            Stmt::Prepared(s) => c.query(s, args).await,
            Stmt::Unnamed { .. } => {
                self.query_raw(c, args.iter().copied())
                    .await?
                    .try_collect()
                    .await
            }
        }
    }

    pub async fn query_opt(
        &self,
        c: &Client,
        args: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        match self {
            Stmt::Prepared(s) => c.query_opt(s, args).await,
            Stmt::Unnamed { .. } => Ok(self.query(c, args).await?.into_iter().next()),
        }
    }

    /// Rows changed.
    pub async fn execute(
        &self,
        c: &Client,
        args: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, tokio_postgres::Error> {
        use futures_util::TryStreamExt;
        match self {
            Stmt::Prepared(s) => c.execute(s, args).await,
            Stmt::Unnamed { .. } => {
                let rows = self.query_raw(c, args.iter().copied()).await?;
                let mut rows = std::pin::pin!(rows);
                while rows.try_next().await?.is_some() {}
                Ok(rows.rows_affected().unwrap_or(0))
            }
        }
    }
}

/// Prepares (or describes) every statement of `sqls` the way `keep` says, in order.
/// Unnamed: one transaction pins a server connection while each is prepared, read and
/// closed (tokio-postgres sends the Close when the statement drops, ahead of the COMMIT
/// on the same connection), so no named statement outlives it on a pooled server
/// connection. `in_transaction`: the session already holds one open (a claim inside
/// the caller's transaction), which pins the connection, and whose work a COMMIT here
/// would commit.
pub async fn describe_all(
    c: &Client,
    keep: Keep,
    sqls: &[&str],
    in_transaction: bool,
) -> Result<Vec<Described>, tokio_postgres::Error> {
    if keep == Keep::Prepared {
        let mut out = Vec::with_capacity(sqls.len());
        for sql in sqls {
            let s = c.prepare(sql).await?;
            out.push(Described {
                columns: columns(&s),
                stmt: Stmt::Prepared(s),
            });
        }
        return Ok(out);
    }
    if !in_transaction {
        c.batch_execute("BEGIN").await?;
    }
    let mut out = Vec::with_capacity(sqls.len());
    for sql in sqls {
        match c.prepare(sql).await {
            Ok(s) => out.push(Described {
                columns: columns(&s),
                stmt: Stmt::Unnamed {
                    sql: Arc::from(*sql),
                    types: Arc::from(s.params()),
                },
            }),
            Err(e) => {
                if !in_transaction {
                    let _ = c.batch_execute("ROLLBACK").await;
                }
                return Err(e);
            }
        }
    }
    if !in_transaction {
        c.batch_execute("COMMIT").await?;
    }
    Ok(out)
}
