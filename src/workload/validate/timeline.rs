//! `[[matrix.timeline]]`: a block's trials as named phases in order from their start,
//! each with its own arrival rate, at most one holding a horizon pin. The timeline sets
//! the trial's length, so a trial and its phases can never disagree about when it ends.

use super::super::*;
use super::{MAX_TIME_S, Validator};

impl Validator<'_> {
    /// The phases as given, laid end to end from the trial's start; a phase without a
    /// rate offers the trial's own.
    pub(super) fn timeline(
        &self,
        field: &str,
        phases: Vec<raw::TimelinePhase>,
    ) -> Result<Vec<TimelinePhase>, WorkloadError> {
        let mut out: Vec<TimelinePhase> = Vec::with_capacity(phases.len());
        let mut at = Duration::ZERO;
        for (i, p) in phases.into_iter().enumerate() {
            let field = |f: &str| format!("{field}[{i}].{f}");
            if !is_plain_name(&p.name) {
                return Err(self.err(
                    &field("name"),
                    format!("`{}` is not allowed; use letters, digits, - and _", p.name),
                ));
            }
            if out.iter().any(|o| o.name == p.name) {
                return Err(self.err(
                    &field("name"),
                    format!(
                        "`{}` names an earlier phase too; give each phase its own name",
                        p.name
                    ),
                ));
            }
            let length = self.positive_secs(&field("for_s"), p.for_s)?;
            let rate = match (p.rate_per_s, p.rate_times) {
                (Some(_), Some(_)) => {
                    return Err(self.err(
                        &field("rate_times"),
                        "give rate_per_s (jobs per second) or rate_times (a multiple of the trial's own rate), not both",
                    ));
                }
                (Some(r), None) => PhaseRate::PerS(self.rate(&field("rate_per_s"), r)?),
                (None, Some(k)) => PhaseRate::Times(self.multiple(&field("rate_times"), k)?),
                (None, None) => PhaseRate::Trial,
            };
            let pin = match p.pin {
                None => None,
                Some(k) => Some(HoldKind::parse(&k).ok_or_else(|| {
                    self.err(
                        &field("pin"),
                        format!(
                            "\"{k}\" is not a hold; use one of {}",
                            HoldKind::NAMES.join(", ")
                        ),
                    )
                })?),
            };
            if pin.is_some() && i == 0 {
                return Err(self.err(
                    &field("pin"),
                    "the first phase cannot pin: a pin is read against the clean phase before it; put a phase without a pin first",
                ));
            }
            if let Some(earlier) = out
                .iter()
                .find(|o| o.pin.is_some())
                .filter(|_| pin.is_some())
            {
                return Err(self.err(
                    &field("pin"),
                    format!(
                        "phase `{}` holds this trial's pin already; a trial holds one (one holder connection): merge the phases or run two workloads",
                        earlier.name
                    ),
                ));
            }
            let to = at + length;
            if to.as_secs_f64() > MAX_TIME_S {
                return Err(self.err(
                    &field("for_s"),
                    format!(
                        "the phases up to this one last {} s; a timeline may last {MAX_TIME_S} s (a week) at most",
                        short_float(to.as_secs_f64())
                    ),
                ));
            }
            out.push(TimelinePhase {
                name: p.name,
                from: at,
                to,
                rate,
                pin,
            });
            at = to;
        }
        Ok(out)
    }
}
