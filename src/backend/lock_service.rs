//! A lock service beside a read-then-write claim (`lock-service`): the alternative to
//! the database's own row locks that a team reaches for when it distrusts them. A
//! worker takes a lease per candidate job in Redis (`SET <schema>:lock:<id> <token> NX
//! PX <lease>`, one pipelined round trip for the batch), updates only the ids it won,
//! and gives a lease back with a compare-and-delete on its token once the job has left
//! it, so a lease that expired and was taken by another worker is never deleted by the
//! first. The row does not know about the lock: what the technique costs in duplicates
//! (a lease that expires under a slow handler, a read that saw the row before another
//! worker finished with it, a lock server that forgets) is the ledger's to count.

use super::BackendError;
use super::redis::errors::error;
use super::redis::{RedisTarget, open};
use redis::aio::MultiplexedConnection;
use redis::{AsyncCommands, Script};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

/// The lease when the workload sets no `faults.lease_s`: long enough that no healthy
/// handler outlives it, short enough that a crashed worker's jobs come back in a run.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The compare-and-delete in `migrations/redis/lock-service/give-back.lua`, built once.
fn give_back_script() -> &'static Script {
    static S: OnceLock<Script> = OnceLock::new();
    S.get_or_init(|| {
        Script::new(crate::statements::migration!(
            "redis",
            "lock-service/give-back.lua"
        ))
    })
}

/// Numbers each worker session's leases apart: a worker that reconnects starts a new
/// session, and its tokens must not repeat the old one's.
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// Where the run's leases live: a Redis server and the run's key prefix (its schema),
/// and the lease the last reset read from the workload (shared by every clone: the
/// backend's sessions opened after a reset take leases that long).
#[derive(Clone, Debug)]
pub struct LockService {
    target: RedisTarget,
    prefix: String,
    lease: Arc<RwLock<Duration>>,
}

impl LockService {
    pub fn new(target: RedisTarget, schema: &str) -> LockService {
        LockService {
            target,
            prefix: format!("{schema}:lock:"),
            lease: Arc::new(RwLock::new(DEFAULT_LEASE)),
        }
    }

    /// Before a trial: leases last `lease` (the workload's `faults.lease_s`, else
    /// [`DEFAULT_LEASE`]) from now on, and the last trial's are removed.
    pub async fn reset(&self, lease: Option<Duration>) -> Result<u64, BackendError> {
        *self.lease.write().unwrap_or_else(|p| p.into_inner()) = lease.unwrap_or(DEFAULT_LEASE);
        self.clear().await
    }

    /// The server as results and messages name it (no password).
    pub fn display(&self) -> &str {
        self.target.display()
    }

    /// A worker's leases, on a connection of its own named `role`.
    pub async fn leases(&self, role: &str, owner: &str) -> Result<Leases, BackendError> {
        let lease = *self.lease.read().unwrap_or_else(|p| p.into_inner());
        let session = SESSIONS.fetch_add(1, Ordering::Relaxed);
        Ok(Leases {
            conn: open(&self.target, role, None).await?,
            prefix: self.prefix.clone(),
            owner: format!("{owner}:{session}"),
            lease_ms: lease.as_millis().max(1) as u64,
            taken: 0,
            held: HashMap::new(),
        })
    }

    /// Removes every lease of the run's prefix (a new trial's jobs reuse the ids, and a
    /// hung worker of the last one may still hold some). Only keys under the prefix are
    /// touched, on a server claimbench may share.
    pub async fn clear(&self) -> Result<u64, BackendError> {
        let what = "clear the lock service's leases";
        let mut c = open(&self.target, "claimbench-control", None).await?;
        let pattern = format!("{}*", self.prefix);
        let (mut cursor, mut removed) = (0u64, 0u64);
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut c)
                .await
                .map_err(|e| error(what, e))?;
            // Deleting what a SCAN returned does not make it skip other keys.
            if !batch.is_empty() {
                let n: u64 = c.del(&batch).await.map_err(|e| error(what, e))?;
                removed += n;
            }
            if next == 0 {
                return Ok(removed);
            }
            cursor = next;
        }
    }
}

/// A claim's leases: none for a plain read-then-write (`leased` false), the session's
/// for a `lock-service` claim, refused where the run gave the session none.
pub fn for_claim<'a>(
    leases: Option<&'a mut Leases>,
    leased: bool,
    strategy: &crate::strategy::Strategy,
) -> Result<Option<&'a mut Leases>, BackendError> {
    match (leased, leases) {
        (false, _) => Ok(None),
        (true, Some(l)) => Ok(Some(l)),
        (true, None) => Err(BackendError::other(
            "claim",
            format!("{strategy} needs a lock service, and this run has none"),
        )),
    }
}

/// One worker's leases: the tokens of the jobs it holds.
pub struct Leases {
    conn: MultiplexedConnection,
    /// The run's key prefix (`<schema>:lock:`).
    prefix: String,
    /// `<worker>:<session>`: with `taken`, each token is unique to one taking.
    owner: String,
    lease_ms: u64,
    /// Leases taken so far by this session.
    taken: u64,
    held: HashMap<i64, String>,
}

impl Leases {
    fn key(&self, job: i64) -> String {
        format!("{}{job}", self.prefix)
    }

    /// Tries a lease on each of `ids` in one round trip and keeps in `ids` (in order)
    /// those it won; returns how many were held by another worker.
    pub async fn take(&mut self, ids: &mut Vec<i64>) -> Result<u32, BackendError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let mut pipe = redis::pipe();
        let mut tokens = Vec::with_capacity(ids.len());
        for &id in ids.iter() {
            self.taken += 1;
            let token = format!("{}:{}", self.owner, self.taken);
            pipe.cmd("SET")
                .arg(self.key(id))
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(self.lease_ms);
            tokens.push(token);
        }
        let won: Vec<Option<String>> = pipe
            .query_async(&mut self.conn)
            .await
            .map_err(|e| error("take the leases", e))?;
        let before = ids.len();
        let mut kept = 0;
        for (i, (token, w)) in tokens.into_iter().zip(won).enumerate() {
            if w.is_some() {
                self.held.insert(ids[i], token);
                ids[kept] = ids[i];
                kept += 1;
            }
        }
        ids.truncate(kept);
        Ok((before - kept) as u32)
    }

    /// Gives back the leases this worker holds on `jobs` (others are ignored); a lease
    /// that expired and was taken by another worker stays that worker's. They are
    /// forgotten here even when the call fails (they then only expire), so a caller
    /// may ignore the error.
    pub async fn give_back(&mut self, jobs: &[i64]) -> Result<u64, BackendError> {
        let mut inv = give_back_script().prepare_invoke();
        let mut any = false;
        for job in jobs {
            if let Some(token) = self.held.remove(job) {
                inv.key(self.key(*job)).arg(token);
                any = true;
            }
        }
        if !any {
            return Ok(0);
        }
        inv.invoke_async(&mut self.conn)
            .await
            .map_err(|e| error("give back the leases", e))
    }

    /// Forgets the leases of `jobs` without giving them back (their update failed, and
    /// whether it reached the rows is unknown): they only expire, as a crashed worker's
    /// would.
    pub fn forget(&mut self, jobs: &[i64]) {
        for job in jobs {
            self.held.remove(job);
        }
    }

    /// How many leases this worker holds.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}
