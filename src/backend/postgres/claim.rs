//! A PostgreSQL claim statement (shape [`Shape::Claim`]) prepared and described once:
//! which parameter takes the batch and which the worker id, and where the id, attempt
//! and queue wait are in its rows. Built-in and custom statements alike are read by
//! column name, so a custom statement may return the columns in any order.
//!
//! [`Shape::Claim`]: crate::strategy::Shape::Claim

use super::job_key::JobKey;
use super::statement::{Described, Stmt};
use crate::backend::ClaimedJob;
use crate::strategy::custom::Constant;
use crate::strategy::named_params::Param;
use crate::strategy::{MAX_OFFSET_WINDOW, Strategy};
use futures_util::TryStreamExt;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Row, RowStream};

/// How the batch is bound: as the integer type the server inferred for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BatchAs {
    Int8,
    Int4,
    Int2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bind {
    Batch(BatchAs),
    WorkerId,
    Window,
    /// A declared claim step's `:ids`: what its lock step returned, as an array of
    /// the table's id type.
    Ids,
    /// The worker's queue (`:queue`).
    Queue,
    /// A declared constant, as [`Binds::fixed`] holds it at this index.
    Fixed(u8),
}

/// What one call binds: the batch asked for, the worker and the queue it serves, and
/// for a declared claim step the ids its lock step returned (empty otherwise).
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub batch: u32,
    pub worker_id: &'a String,
    pub queue: &'a str,
    pub ids: &'a [JobKey],
}

impl<'a> Call<'a> {
    pub fn new(batch: u32, worker_id: &'a String, queue: &'a str) -> Call<'a> {
        Call {
            batch,
            worker_id,
            queue,
            ids: &[],
        }
    }
}

/// One call's values, as the types a statement's parameters may take.
struct Values<'a> {
    b8: i64,
    b4: i32,
    b2: i16,
    worker_id: &'a String,
    queue: &'a str,
    ids: &'a [JobKey],
}

impl<'a> Values<'a> {
    fn of(call: Call<'a>) -> Values<'a> {
        let b = call.batch;
        Values {
            b8: i64::from(b),
            b4: b.min(i32::MAX as u32) as i32,
            b2: b.min(i16::MAX as u32) as i16,
            worker_id: call.worker_id,
            queue: call.queue,
            ids: call.ids,
        }
    }
}

/// The most parameters a statement binds: claimbench's five and the constants.
const MAX_BINDS: usize = 5 + 16;

/// What a statement's `$1`, `$2`, … take, checked against the types the server
/// inferred.
#[derive(Debug)]
pub struct Binds {
    binds: [Bind; MAX_BINDS],
    n: usize,
    /// `offset-start`'s window, bound as the integer its statement casts it to.
    window: i32,
    /// The declared constants this statement binds, each as the type the server
    /// inferred, made once when the statement is described.
    fixed: Vec<Box<dyn ToSql + Sync + Send>>,
}

/// What `strategy`'s claim (or, for a two-step strategy, its select step) binds to
/// `$1`, `$2`, `$3`, in order: the strategy's own list ([`Strategy::binds`]).
pub fn params(strategy: &Strategy) -> &[Param] {
    strategy.binds()
}

impl Binds {
    /// The binds of [`params`] as the server typed them (`types`, from describing the
    /// statement).
    pub fn of(strategy: &Strategy, types: &[Type]) -> Result<Binds, crate::invalid::Invalid> {
        let window = strategy.def().offset_window.unwrap_or(1);
        let consts = strategy
            .def()
            .custom
            .as_ref()
            .map_or(&[][..], |c| &c.consts);
        Binds::listed(params(strategy), (window, consts), types)
    }

    /// The binds of `params` (a declared step's own list, reading `consts`) as the
    /// server typed them.
    pub fn listed(
        params: &[Param],
        (window, consts): (u32, &[(String, Constant)]),
        types: &[Type],
    ) -> Result<Binds, crate::invalid::Invalid> {
        if types.len() != params.len() || params.len() > MAX_BINDS {
            return Err(crate::invalid!(
                "the statement has {} parameters where claimbench binds {}",
                types.len(),
                params.len()
            ));
        }
        let mut binds = [Bind::WorkerId; MAX_BINDS];
        let mut fixed: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
        for (i, (p, ty)) in params.iter().zip(types).enumerate() {
            binds[i] = match p {
                Param::Batch => Bind::Batch(match *ty {
                    Type::INT8 => BatchAs::Int8,
                    Type::INT4 => BatchAs::Int4,
                    Type::INT2 => BatchAs::Int2,
                    _ => return Err(wrong_type(":batch", ty, "an integer")),
                }),
                Param::WorkerId if <String as ToSql>::accepts(ty) => Bind::WorkerId,
                Param::WorkerId => return Err(wrong_type(":worker_id", ty, "text")),
                Param::Window if *ty == Type::INT4 => Bind::Window,
                Param::Window => return Err(wrong_type("$3 (window)", ty, "an integer")),
                Param::Ids if JobKey::is_ids_type(ty) => Bind::Ids,
                Param::Ids => {
                    return Err(wrong_type(
                        ":ids",
                        ty,
                        "an array of the table's id type, bigint[], uuid[] or text[] (`id = ANY(:ids)`)",
                    ));
                }
                Param::Queue if <&str as ToSql>::accepts(ty) => Bind::Queue,
                Param::Queue => return Err(wrong_type(":queue", ty, "text")),
                Param::Const(k) => {
                    let (name, value) = consts
                        .get(usize::from(*k))
                        .ok_or_else(|| format!("no constant {k} is declared"))?;
                    fixed.push(constant(name, value, ty)?);
                    Bind::Fixed((fixed.len() - 1) as u8)
                }
            };
        }
        Ok(Binds {
            binds,
            n: params.len(),
            window: window.min(MAX_OFFSET_WINDOW) as i32,
            fixed,
        })
    }

    /// Runs `statement` for `call`, its rows as they arrive.
    pub async fn query_raw(
        &self,
        client: &tokio_postgres::Client,
        statement: &Stmt,
        call: Call<'_>,
    ) -> Result<RowStream, tokio_postgres::Error> {
        let values = Values::of(call);
        statement.query_raw(client, self.values(&values)).await
    }

    /// What `$1`, `$2`, … take for one call: only the statement's own binds, no array
    /// of every possible one per claim.
    fn values<'a>(
        &'a self,
        v: &'a Values<'a>,
    ) -> impl ExactSizeIterator<Item = &'a (dyn ToSql + Sync)> + Send + 'a {
        self.binds[..self.n]
            .iter()
            .map(move |&b| -> &(dyn ToSql + Sync) {
                match b {
                    Bind::Batch(BatchAs::Int8) => &v.b8,
                    Bind::Batch(BatchAs::Int4) => &v.b4,
                    Bind::Batch(BatchAs::Int2) => &v.b2,
                    Bind::WorkerId => v.worker_id,
                    Bind::Window => &self.window,
                    Bind::Ids => &v.ids,
                    Bind::Queue => &v.queue,
                    Bind::Fixed(k) => &*self.fixed[usize::from(k)],
                }
            })
    }

    /// Runs `statement` for `call`, its rows collected.
    pub async fn query(
        &self,
        client: &tokio_postgres::Client,
        statement: &Stmt,
        call: Call<'_>,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let rows = self.query_raw(client, statement, call).await?;
        rows.try_collect().await
    }
}

/// A claim statement ready for the hot path: no lookups, no allocation per call.
pub struct ClaimStatement {
    pub statement: Stmt,
    pub binds: Binds,
    id: usize,
    /// The id column is `bigint`, read as itself; else as a [`JobKey`].
    id_is_bigint: bool,
    attempt: Option<usize>,
    queue_wait: Option<usize>,
}

impl ClaimStatement {
    /// Checks `statement` (described from `strategy`'s PostgreSQL form) against what
    /// claimbench binds and reads; the message says which parameter or column is wrong.
    pub fn describe(
        strategy: &Strategy,
        described: Described,
    ) -> Result<ClaimStatement, crate::invalid::Invalid> {
        let binds = Binds::of(strategy, described.stmt.params())?;
        ClaimStatement::with(binds, described)
    }

    /// [`ClaimStatement::describe`] with its binds already read (a declared step's).
    pub fn with(
        binds: Binds,
        described: Described,
    ) -> Result<ClaimStatement, crate::invalid::Invalid> {
        let Described { stmt, columns } = described;
        let column = |name: &str, ty: Type| -> Result<Option<usize>, crate::invalid::Invalid> {
            match columns.iter().position(|(n, _)| n == name) {
                None => Ok(None),
                Some(i) if columns[i].1 == ty => Ok(Some(i)),
                Some(i) => Err(crate::invalid!(
                    "column `{name}` is {}; claimbench reads it as {ty}: return it as {} (e.g. `h.{name}::{} AS {name}`)",
                    columns[i].1,
                    sql_type(&ty),
                    sql_type(&ty)
                )),
            }
        };
        let id = match columns.iter().position(|(n, _)| n == "id") {
            None => Err("the statement returns no `id` column; return the claimed ids as `id`")?,
            Some(i) if JobKey::is_id_type(&columns[i].1) => i,
            Some(i) => Err(crate::invalid!(
                "column `id` is {}; claimbench reads a job's id as bigint, integer, uuid or text",
                columns[i].1
            ))?,
        };
        Ok(ClaimStatement {
            binds,
            id,
            id_is_bigint: columns[id].1 == Type::INT8,
            attempt: column("attempt_count", Type::INT4)?,
            queue_wait: column("queue_wait_us", Type::INT8)?,
            statement: stmt,
        })
    }

    /// Runs the claim for `batch` as `worker_id` on `client`, appending the claimed
    /// jobs to `out` as their rows arrive (no vector of rows in between: this is the
    /// hot path). A statement without `attempt_count` reports attempt 0; one without
    /// `queue_wait_us` reports no queue wait (-1, which is not recorded). A row whose id
    /// is NULL claimed nothing; one whose id is not a number claimbench handed out
    /// ([`JobKey`]) is an error, not a job dropped.
    pub async fn claim(
        &self,
        client: &tokio_postgres::Client,
        call: Call<'_>,
        out: &mut Vec<ClaimedJob>,
    ) -> Result<(), tokio_postgres::Error> {
        // The driver's future directly, not through `Binds::query_raw`: one async
        // layer less to copy on every claim.
        let values = Values::of(call);
        let query = self.statement.query_raw(client, self.binds.values(&values));
        let mut rows = std::pin::pin!(query.await?);
        while let Some(r) = rows.try_next().await? {
            // Types were checked by `describe`; a NULL reads as absent rather than
            // panicking.
            // A bigint id as itself: the type test of another id type, per row, cost 1.6 %
            // of the worker's instructions at batch 10 (benches/claim_instructions.sh).
            let id = match self.id_is_bigint {
                true => r.try_get::<_, Option<i64>>(self.id)?,
                false => r.try_get::<_, Option<JobKey>>(self.id)?.map(|k| k.0),
            };
            if let Some(id) = id {
                out.push(ClaimedJob {
                    id,
                    attempt: self.attempt.and_then(|i| r.try_get(i).ok()).unwrap_or(0),
                    queue_wait_us: self
                        .queue_wait
                        .and_then(|i| r.try_get(i).ok())
                        .unwrap_or(-1),
                });
            }
        }
        Ok(())
    }
}

/// A declared constant as the server typed its parameter: an integer as that integer
/// type, a string as text, a boolean as a boolean; anything else is refused with the
/// cast that makes it one.
fn constant(
    name: &str,
    value: &Constant,
    ty: &Type,
) -> Result<Box<dyn ToSql + Sync + Send>, crate::invalid::Invalid> {
    let out_of_range = || format!("constant :{name} = {value} does not fit the server's {ty}");
    Ok(match (value, ty) {
        (Constant::Int(n), &Type::INT8) => Box::new(*n),
        (Constant::Int(n), &Type::INT4) => Box::new(i32::try_from(*n).map_err(|_| out_of_range())?),
        (Constant::Int(n), &Type::INT2) => Box::new(i16::try_from(*n).map_err(|_| out_of_range())?),
        (Constant::Bool(b), &Type::BOOL) => Box::new(*b),
        (Constant::Text(t), ty) if <String as ToSql>::accepts(ty) => Box::new(t.clone()),
        (value, ty) => {
            let (what, cast) = match value {
                Constant::Int(_) => ("an integer", "bigint"),
                Constant::Bool(_) => ("a boolean", "boolean"),
                Constant::Text(_) => ("text", "text"),
            };
            return Err(crate::invalid!(
                "constant :{name} is compared with a {ty}; claimbench binds it as {what}: cast it in the statement (:{name}::{cast}::{ty})"
            ));
        }
    })
}

/// How a statement writes `ty` in a cast.
fn sql_type(ty: &Type) -> &'static str {
    match *ty {
        Type::INT8 => "bigint",
        Type::INT4 => "integer",
        _ => "its type",
    }
}

fn wrong_type(param: &str, ty: &Type, want: &str) -> crate::invalid::Invalid {
    crate::invalid!("parameter {param} is compared with a {ty}; claimbench binds {want}")
}
