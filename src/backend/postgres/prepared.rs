//! A strategy's statements by its shape, prepared (or described, through a transaction
//! pooler) on its first claim on a connection; a declared statement the server refuses
//! fails with its file named.

use super::statement::{Keep, Stmt, describe_all};
use super::*;
use crate::strategy::custom::Lock;

/// A claim-shaped strategy's statement: its `claim` step when its file has steps (a
/// `setup` before it), else the whole file. A declared statement is always taken whole,
/// so a comment of the user's that reads like a step marker cannot split it.
pub(super) fn claim_step<'a>(strategy: &Strategy, file: &'a str) -> &'a str {
    match strategy.is_custom() {
        true => file,
        false => step(file, "claim"),
    }
}

/// A strategy's statements by its shape.
pub(super) enum Prepared {
    Claim(ClaimStatement),
    /// A declared claim with a `lock` step: the locking read, then the claim of the ids
    /// it returned, in one transaction.
    Stepped(Box<Stepped>),
    ReadThenWrite {
        select: Stmt,
        update: Stmt,
    },
    ReadThenConditional {
        select: Stmt,
        claim_one: Stmt,
    },
    VersionCas {
        select: Stmt,
        claim_batch: Stmt,
    },
}

/// A declared claim's lock and claim steps, described.
pub(super) struct Stepped {
    pub(super) lock: ClaimStatement,
    pub(super) claim: ClaimStatement,
}

/// Prepares `strategy`'s statements. A custom statement the server refuses, or that
/// binds or returns what claimbench cannot use, fails with its file named.
pub(super) async fn prepare_strategy(
    c: &Client,
    strategy: &Strategy,
    (keep, in_transaction): (Keep, bool),
) -> Result<Prepared, BackendError> {
    let refused = |message: String| {
        let message = match &strategy.def().custom {
            Some(src) => format!("{}: strategies.{strategy}.postgres: {message}", src.file),
            None => format!("strategy `{strategy}`: {message}"),
        };
        BackendError::other("prepare the claim", message)
    };
    let file = strategy
        .sql(BackendKind::Postgres)
        .ok_or_else(|| refused("no PostgreSQL form".into()))?;
    let p = async |sqls: &[&str]| {
        describe_all(c, keep, sqls, in_transaction)
            .await
            .map_err(|e| match query_error("prepare", e) {
                BackendError::Query {
                    kind: ErrorKind::Other,
                    code,
                    message,
                    ..
                } => refused(match code {
                    Some(code) => format!("the server refused it (SQLSTATE {code}): {message}"),
                    None => format!("the server refused it: {message}"),
                }),
                other => other,
            })
    };
    Ok(match strategy.shape() {
        Shape::Claim if let Some((src, lock)) = custom_lock(strategy) => {
            let mut both = p(&[&lock.sql, file]).await?.into_iter();
            let (l, c) = (both.next().unwrap(), both.next().unwrap());
            let step = |name: &str, params: &[Param], d: super::statement::Described| {
                claim::Binds::listed(params, (1, &src.consts), d.stmt.params())
                    .and_then(|b| ClaimStatement::with(b, d))
                    .map_err(|e| refused(format!("step {name}: {e}")))
            };
            Prepared::Stepped(Box::new(Stepped {
                lock: step("lock", &lock.params, l)?,
                claim: step("claim", &src.params, c)?,
            }))
        }
        Shape::Claim => {
            let claim = p(&[claim_step(strategy, file)]).await?.remove(0);
            Prepared::Claim(
                ClaimStatement::describe(strategy, claim).map_err(|e| refused(e.into()))?,
            )
        }
        shape => {
            let second = match shape {
                Shape::ReadThenWrite | Shape::ReadLockWrite => "update",
                Shape::ReadThenConditional => "claim-one",
                _ => "claim-batch",
            };
            let mut both = p(&[step(file, "select"), step(file, second)])
                .await?
                .into_iter()
                .map(|d| d.stmt);
            let (select, then) = (both.next().unwrap(), both.next().unwrap());
            match shape {
                Shape::ReadThenWrite | Shape::ReadLockWrite => Prepared::ReadThenWrite {
                    select,
                    update: then,
                },
                Shape::ReadThenConditional => Prepared::ReadThenConditional {
                    select,
                    claim_one: then,
                },
                _ => Prepared::VersionCas {
                    select,
                    claim_batch: then,
                },
            }
        }
    })
}

/// A declared claim's source and its `lock` step, when it has one.
pub(super) fn custom_lock(
    strategy: &Strategy,
) -> Option<(&crate::strategy::custom::Source, &Lock)> {
    let src = strategy.def().custom.as_ref()?;
    Some((src, src.lock.as_ref()?))
}

/// Which statement a plan sample explains, and its text: the claim, or a two-step
/// strategy's select step (a declared claim's lock step).
pub(super) fn explained_statement(strategy: &Strategy) -> (&'static str, &str) {
    if let Some((_, lock)) = custom_lock(strategy) {
        return ("lock step", &lock.sql);
    }
    match strategy.shape() {
        Shape::Claim => (
            "claim",
            claim_step(strategy, strategy.text(BackendKind::Postgres)),
        ),
        Shape::ReadThenWrite
        | Shape::ReadLockWrite
        | Shape::ReadThenConditional
        | Shape::VersionCas => (
            "select step",
            step(strategy.text(BackendKind::Postgres), "select"),
        ),
    }
}

/// The parameters a strategy binds for a batch of `batch`, in the order of its `$n`s.
pub fn strategy_params(strategy: &Strategy, batch: u32) -> String {
    match strategy.shape() {
        Shape::Claim => claim::params(strategy)
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                Param::Batch => format!("${} = {batch} (batch)", i + 1),
                Param::WorkerId => format!("${} = worker id", i + 1),
                Param::Window => format!(
                    "${} = {} (window)",
                    i + 1,
                    strategy.def().offset_window.unwrap_or(1)
                ),
                Param::Ids => format!("${} = ids", i + 1),
                p => format!("${} = {}", i + 1, strategy.param_note(*p)),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Shape::ReadThenWrite => format!(
            "select: $1 = {batch}{}; update: $1 = ids read, $2 = worker id",
            shard_key(strategy)
        ),
        Shape::ReadThenConditional => format!(
            "select: $1 = {batch}{}; claim-one, per id: $1 = id, $2 = worker id, $3 = attempt count read",
            shard_key(strategy)
        ),
        Shape::ReadLockWrite => format!(
            "select: $1 = {batch}; then a lease per id read (Redis SET <schema>:lock:<id> NX PX lease); update: $1 = ids whose lease was won, $2 = worker id"
        ),
        Shape::VersionCas => format!(
            "select: $1 = {batch}; claim-batch: $1 = ids read, $2 = their versions, $3 = worker id"
        ),
    }
}

/// What a sharded strategy's select binds after the batch.
fn shard_key(strategy: &Strategy) -> &'static str {
    match strategy.def().sharded {
        true => ", $2 = worker id (its shards)",
        false => "",
    }
}
