//! The strategy vocabulary: how a worker claims jobs, and which backend supports which.
//!
//! The SQL of each strategy lives with its backend (`migrations/<backend>/strategies/`);
//! this module only names the strategies so that the workload, the runner and the reports
//! share one spelling.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a worker claims a batch. See DESIGN.md "Concepts" for what each one stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The seed's fetch path: one statement, skip locked rows, bulkhead, batch.
    Production,
    /// SELECT, then an unconditional UPDATE by id: the read-then-write race.
    Naive,
    /// The production claim with a lock that waits instead of skipping.
    Waiting,
    /// Unlocked read, then one `UPDATE ... WHERE id = ? AND status = pending` per candidate.
    Conditional,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Production,
        Strategy::Naive,
        Strategy::Waiting,
        Strategy::Conditional,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Production => "production",
            Strategy::Naive => "naive",
            Strategy::Waiting => "waiting",
            Strategy::Conditional => "conditional",
        }
    }

    /// Whether the strategy is meant to hand each job to one worker at a time. Reports use
    /// it to tell an expected duplicate (naive) from a defect.
    pub fn prevents_duplicate_claims(self) -> bool {
        !matches!(self, Strategy::Naive)
    }

    /// Whether the strategy applies the seed's per-queue max-workers check. naive and
    /// conditional claim by fetch order alone, so an overshoot there is by design.
    pub fn applies_max_workers(self) -> bool {
        matches!(self, Strategy::Production | Strategy::Waiting)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown strategy `{s}`; expected one of: {}",
                    Strategy::ALL.map(Strategy::as_str).join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for s in Strategy::ALL {
            assert_eq!(s.as_str().parse::<Strategy>().unwrap(), s);
        }
        let err = "skip".parse::<Strategy>().unwrap_err();
        assert!(
            err.contains("production, naive, waiting, conditional"),
            "{err}"
        );
    }
}
