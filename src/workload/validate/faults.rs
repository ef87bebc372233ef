//! `[faults]`: rates that are shares, times that are bounded, and the lease a stranding
//! fault needs.

use super::super::*;
use super::Validator;

impl Validator<'_> {
    /// `[faults]`: each rate a share, each time bounded, and the lease every fault that
    /// strands jobs needs.
    pub(super) fn faults(&self, f: raw::Faults) -> Result<Faults, WorkloadError> {
        let lease = match f.lease_s {
            Some(s) => Some(self.positive_secs("faults.lease_s", s)?),
            None => None,
        };
        let faults = Faults {
            abandon_rate: self.share("faults.abandon_rate", f.abandon_rate)?,
            lease,
            crash_after_start_rate: self
                .share("faults.crash_after_start_rate", f.crash_after_start_rate)?,
            poison_share: self.share("faults.poison_share", f.poison_share)?,
            hang_rate: self.share("faults.hang_rate", f.hang_rate)?,
            // Past the lease by default: a hang shorter than it is only a slow handler.
            hang: match (f.hang_s, lease) {
                (Some(s), _) => self.positive_secs("faults.hang_s", s)?,
                (None, Some(l)) => l * 2,
                (None, None) => Duration::ZERO,
            },
            kill_connections_at: f
                .kill_connections_at_s
                .iter()
                .map(|&t| self.positive_secs("faults.kill_connections_at_s", t))
                .collect::<Result<_, _>>()?,
            kill_connections_every: match f.kill_connections_every_s {
                Some(t) if t.is_finite() && t < MIN_KILL_EVERY_S => {
                    return Err(self.err(
                        "faults.kill_connections_every_s",
                        format!(
                            "{} is not allowed; give at least {MIN_KILL_EVERY_S} s (workers need time to reconnect)",
                            short_float(t)
                        ),
                    ));
                }
                Some(t) => Some(self.positive_secs("faults.kill_connections_every_s", t)?),
                None => None,
            },
            restart_at: f
                .restart_db_at_s
                .iter()
                .map(|&t| self.positive_secs("faults.restart_db_at_s", t))
                .collect::<Result<_, _>>()?,
            restart_lock_service_at: f
                .restart_lock_service_at_s
                .iter()
                .map(|&t| self.positive_secs("faults.restart_lock_service_at_s", t))
                .collect::<Result<_, _>>()?,
            failover_at: match f.failover_at_s.as_slice() {
                [] => Vec::new(),
                [t] => vec![self.positive_secs("faults.failover_at_s", *t)?],
                more => {
                    return Err(self.err(
                        "faults.failover_at_s",
                        format!(
                            "{} instants are not allowed; give one: after a failover the new primary runs alone, with no standby left to promote (the pair is made again between trials)",
                            more.len()
                        ),
                    ));
                }
            },
            hold_snapshot: match f.hold_snapshot_s.as_deref() {
                None => None,
                Some(w) => self.hold_window("faults.hold_snapshot_s", w, false)?,
            },
            hold_kind: match f.hold_kind.as_deref() {
                None => HoldKind::default(),
                Some(k) => HoldKind::parse(k).ok_or_else(|| {
                    self.err(
                        "faults.hold_kind",
                        format!(
                            "\"{k}\" is not a hold; use one of {}",
                            HoldKind::NAMES.join(", ")
                        ),
                    )
                })?,
            },
            hold_pool: self.pool_hold(f.hold_pool_s.as_deref(), f.hold_pool_connections)?,
        };
        if f.restart_command.is_some() {
            return Err(self.err(
                "faults.restart_command",
                "a workload file carries no commands; give it to `claimbench run --restart-command CMD` (or CLAIMBENCH_RESTART_COMMAND) and keep faults.restart_db_at_s here",
            ));
        }
        if f.failover_command.is_some() {
            return Err(self.err(
                "faults.failover_command",
                "a workload file carries no commands; give it to `claimbench run --failover-command CMD` (or CLAIMBENCH_FAILOVER_COMMAND) and keep faults.failover_at_s here",
            ));
        }
        for (field, on) in [
            (
                "crash_after_start_rate",
                faults.crash_after_start_rate > 0.0,
            ),
            ("hang_rate", faults.hang_rate > 0.0),
        ] {
            if on && faults.lease.is_none() {
                return Err(self.err(
                    "faults.lease_s",
                    format!("is required when faults.{field} > 0: the jobs it strands come back only through the rescuer"),
                ));
            }
        }
        if faults.breaks_connections() && faults.lease.is_none() {
            return Err(self.err(
                "faults.lease_s",
                "is required when connections are killed, the server restarts or fails over: the claims a worker held come back only through the rescuer",
            ));
        }
        if faults.abandon_rate > 0.0 && faults.lease.is_none() {
            return Err(self.err(
                "faults.lease_s",
                "is required when faults.abandon_rate > 0: abandoned jobs come back only through the rescuer",
            ));
        }
        Ok(faults)
    }

    /// `hold_pool_s = [from, to]` with `hold_pool_connections` (default 1): a window
    /// inside the trial and a count a pool can have; the connections alone mean
    /// nothing.
    fn pool_hold(
        &self,
        window: Option<&[f64]>,
        connections: Option<i64>,
    ) -> Result<Option<PoolHold>, WorkloadError> {
        use crate::pooler::MAX_POOL_SIZE;
        let Some(w) = window else {
            if connections.is_some() {
                return Err(self.err(
                    "faults.hold_pool_connections",
                    "says how many server connections another client holds during faults.hold_pool_s; give that window too",
                ));
            }
            return Ok(None);
        };
        let Some((from, to)) = self.hold_window("faults.hold_pool_s", w, false)? else {
            return Ok(None);
        };
        let connections = match connections {
            None => 1,
            Some(n) if (1..=i64::from(MAX_POOL_SIZE)).contains(&n) => n as u32,
            Some(n) => {
                return Err(self.err(
                    "faults.hold_pool_connections",
                    format!("{n} is not allowed; give 1 to {MAX_POOL_SIZE}"),
                ));
            }
        };
        Ok(Some(PoolHold {
            connections,
            from,
            to,
        }))
    }
}
