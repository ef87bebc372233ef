//! Service-level objectives: `claim_p99<=20ms`, `duplicates==0`, `completed_per_s>=500`.
//! The same text form is read from a workload's `[slo]` table (`claim_p99 = "<=20ms"`)
//! and from `--slo` flags, so a threshold reads the same wherever it is written.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

pub use crate::metric::Metric;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SloOp {
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = "==")]
    Eq,
}

impl SloOp {
    fn symbol(self) -> &'static str {
        match self {
            SloOp::Le => "<=",
            SloOp::Lt => "<",
            SloOp::Ge => ">=",
            SloOp::Gt => ">",
            SloOp::Eq => "==",
        }
    }
}

/// One objective: `metric op value`, with times in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub metric: Metric,
    pub op: SloOp,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SloError {
    #[error("`{0}` has no comparison; write it like claim_p99<=20ms or duplicates==0")]
    NoOperator(String),
    #[error("`{0}`: `{1}` is not a comparison; use one of <=, <, >=, >, == (e.g. claim_p99<=20ms)")]
    BadOperator(String, String),
    #[error("unknown metric `{0}`; expected one of: {names}", names = Metric::slo_names())]
    UnknownMetric(String),
    #[error("`{0}` is not a threshold; give a number, with ms, s or us for a time (e.g. 20ms)")]
    BadValue(String),
    #[error("`{0}` is a time, but {1} counts jobs; give a plain number")]
    UnitOnCount(String, &'static str),
    #[error("`{0}` is not a whole number, and {1} counts jobs; give one (e.g. {1}==0)")]
    FractionOfCount(String, &'static str),
}

impl Slo {
    /// Parses `claim_p99<=20ms`; spaces are allowed around the parts.
    pub fn parse(text: &str) -> Result<Slo, SloError> {
        let ops = [
            ("<=", SloOp::Le),
            (">=", SloOp::Ge),
            ("==", SloOp::Eq),
            ("<", SloOp::Lt),
            (">", SloOp::Gt),
        ];
        let (at, sym, op) = ops
            .iter()
            .filter_map(|(sym, op)| text.find(sym).map(|at| (at, *sym, *op)))
            .min_by_key(|(at, sym, _)| (*at, std::cmp::Reverse(sym.len())))
            .ok_or_else(|| {
                // `!=` or a lone `=`: operator characters, but no operator.
                match text.find(['!', '=']) {
                    Some(i) => {
                        let run = &text[i..];
                        let end = run.find(|c| !matches!(c, '!' | '=')).unwrap_or(run.len());
                        SloError::BadOperator(text.to_string(), run[..end].to_string())
                    }
                    None => SloError::NoOperator(text.to_string()),
                }
            })?;
        // `=<`, `=>`, `!=`, `<<`: operator characters around the one found.
        let is_op = |c: char| matches!(c, '<' | '>' | '=' | '!');
        let before = text[..at].trim_end();
        let lead = before.len() - before.trim_end_matches(is_op).len();
        let after = &text[at + sym.len()..];
        let trail = after.len() - after.trim_start_matches(is_op).len();
        if lead > 0 || trail > 0 {
            let written = format!("{}{sym}{}", &before[before.len() - lead..], &after[..trail]);
            return Err(SloError::BadOperator(text.to_string(), written));
        }
        let name = text[..at].trim();
        let metric = Metric::named(name)
            .filter(|m| m.entry().slo)
            .ok_or_else(|| SloError::UnknownMetric(name.to_string()))?;
        let raw = text[at + sym.len()..].trim();
        let value = threshold(raw, metric)?;
        Ok(Slo { metric, op, value })
    }

    /// Whether some value meets both `self` and `other` (of one metric): `lost==0` and
    /// `lost>=1` do not, so a gate pair that says both can never pass.
    pub fn compatible(&self, other: &Slo) -> bool {
        if self.metric != other.metric {
            return true;
        }
        // Each as an interval (low, low included, high, high included).
        let bounds = |s: &Slo| match s.op {
            SloOp::Le => (f64::NEG_INFINITY, false, s.value, true),
            SloOp::Lt => (f64::NEG_INFINITY, false, s.value, false),
            SloOp::Ge => (s.value, true, f64::INFINITY, false),
            SloOp::Gt => (s.value, false, f64::INFINITY, false),
            SloOp::Eq => (s.value, true, s.value, true),
        };
        let (a, b) = (bounds(self), bounds(other));
        let (low, low_in) = match a.0.partial_cmp(&b.0) {
            Some(std::cmp::Ordering::Greater) => (a.0, a.1),
            Some(std::cmp::Ordering::Less) => (b.0, b.1),
            _ => (a.0, a.1 && b.1),
        };
        let (high, high_in) = match a.2.partial_cmp(&b.2) {
            Some(std::cmp::Ordering::Less) => (a.2, a.3),
            Some(std::cmp::Ordering::Greater) => (b.2, b.3),
            _ => (a.2, a.3 && b.3),
        };
        low < high || (low == high && low_in && high_in)
    }

    /// Whether `observed` meets the objective (`None`: not measured, so not met).
    pub fn holds(&self, observed: Option<f64>) -> bool {
        let Some(x) = observed else {
            return false;
        };
        match self.op {
            SloOp::Le => x <= self.value,
            SloOp::Lt => x < self.value,
            SloOp::Ge => x >= self.value,
            SloOp::Gt => x > self.value,
            SloOp::Eq => x == self.value,
        }
    }
}

fn threshold(raw: &str, metric: Metric) -> Result<f64, SloError> {
    let bad = || SloError::BadValue(raw.to_string());
    let (number, scale) = [("ms", 1.0), ("us", 1e-3), ("µs", 1e-3), ("s", 1e3)]
        .iter()
        .find_map(|(unit, scale)| raw.strip_suffix(unit).map(|n| (n.trim(), Some(*scale))))
        .unwrap_or((raw, None));
    let v: f64 = number.parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad());
    }
    if metric.entry().unit == crate::metric::Unit::Count && v.fract() != 0.0 {
        return Err(SloError::FractionOfCount(raw.to_string(), metric.name()));
    }
    match (metric.is_time(), scale) {
        (true, Some(s)) => Ok(v * s),
        (true, None) | (false, None) => Ok(v),
        (false, Some(_)) => Err(SloError::UnitOnCount(raw.to_string(), metric.name())),
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if self.metric.is_time() { "ms" } else { "" };
        write!(
            f,
            "{}{}{}{unit}",
            self.metric.name(),
            self.op.symbol(),
            self.value
        )
    }
}

/// The workload's `[slo]` table: metric = "op value", e.g. `claim_p99 = "<=20ms"`.
#[derive(Debug, Default, Deserialize)]
#[serde(transparent)]
pub struct RawSlos(BTreeMap<String, String>);

impl RawSlos {
    /// The objectives, or the key of the first that does not parse.
    pub fn parse(self) -> Result<Vec<Slo>, (String, SloError)> {
        self.0
            .into_iter()
            .map(|(k, v)| Slo::parse(&format!("{k}{v}")).map_err(|e| (k, e)))
            .collect()
    }
}

/// `metric=share` (e.g. `claim_p99=0.5`) replacing a default threshold.
pub fn parse_threshold(text: &str) -> Result<(String, f64), crate::invalid::Invalid> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: write it as metric=share, e.g. claim_p99=0.5"))?;
    let name = name.trim();
    if !Metric::compared().any(|e| e.name == name) {
        let names: Vec<&str> = Metric::compared().map(|e| e.name).collect();
        return Err(crate::invalid!(
            "unknown metric `{name}`; expected one of: {}",
            names.join(", ")
        ));
    }
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok((name.to_string(), v)),
        _ => Err(crate::invalid!(
            "`{value}` is not a share; give a number > 0, e.g. 0.3 for 30%"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contradictory_objectives_are_told_apart_from_compatible_ones() {
        let p = |t| Slo::parse(t).unwrap();
        for (a, b) in [
            ("lost==0", "lost>=1"),
            ("lost<1", "lost>=1"),
            ("claim_p99<=5ms", "claim_p99>10ms"),
            ("duplicates==0", "duplicates==1"),
            ("claim_p99<5ms", "claim_p99>5ms"),
        ] {
            assert!(!p(a).compatible(&p(b)), "{a} {b}");
            assert!(!p(b).compatible(&p(a)), "{b} {a}");
        }
        for (a, b) in [
            ("lost==0", "lost<=1"),
            ("claim_p99<=5ms", "claim_p99>=5ms"),
            ("claim_p99<=5ms", "claim_p99>1ms"),
            ("lost==0", "duplicates>=1"),
        ] {
            assert!(p(a).compatible(&p(b)), "{a} {b}");
        }
        assert!(matches!(
            Slo::parse("duplicates<=0.5"),
            Err(SloError::FractionOfCount(..))
        ));
    }

    #[test]
    fn parses_times_counts_and_rates() {
        let s = Slo::parse("claim_p99<=20ms").unwrap();
        assert_eq!(
            (s.metric, s.op, s.value),
            (Metric::ClaimP99, SloOp::Le, 20.0)
        );
        assert_eq!(
            Slo::parse("oldest_pending_max < 1.5s").unwrap().value,
            1500.0
        );
        assert_eq!(Slo::parse("queue_wait_p99<=500us").unwrap().value, 0.5);
        assert_eq!(Slo::parse("duplicates==0").unwrap().op, SloOp::Eq);
        assert_eq!(Slo::parse("completed_per_s>=800").unwrap().value, 800.0);
        assert_eq!(Slo::parse("claim_p50<=3").unwrap().value, 3.0, "plain: ms");
    }

    #[test]
    fn bad_objectives_say_what_is_allowed() {
        assert_eq!(
            Slo::parse("claim_p99 20ms"),
            Err(SloError::NoOperator("claim_p99 20ms".into()))
        );
        let e = Slo::parse("p99<=20ms").unwrap_err().to_string();
        assert!(
            e.contains("unknown metric `p99`") && e.contains("claim_p99"),
            "{e}"
        );
        assert!(matches!(
            Slo::parse("claim_p99<=fast"),
            Err(SloError::BadValue(_))
        ));
        assert!(matches!(
            Slo::parse("claim_p99<=-1ms"),
            Err(SloError::BadValue(_))
        ));
        assert!(matches!(
            Slo::parse("lost==0ms"),
            Err(SloError::UnitOnCount(..))
        ));
        // Regression: a reversed operator was reported as an unknown metric.
        for (text, written) in [
            ("claim_p99=<20ms", "=<"),
            ("claim_p99 => 20ms", "=>"),
            ("duplicates!=0", "!="),
            ("lost===0", "==="),
            ("claim_p99<<20ms", "<<"),
        ] {
            let e = Slo::parse(text).unwrap_err();
            assert_eq!(
                e,
                SloError::BadOperator(text.into(), written.into()),
                "{text}"
            );
            assert!(e.to_string().contains("use one of <=, <, >=, >, =="), "{e}");
        }
    }

    #[test]
    fn holds_compares_and_unmeasured_never_holds() {
        let s = Slo::parse("claim_p99<=20ms").unwrap();
        assert!(s.holds(Some(20.0)));
        assert!(!s.holds(Some(20.1)));
        assert!(!s.holds(None));
        assert!(
            Slo::parse("completed_per_s>100")
                .unwrap()
                .holds(Some(101.0))
        );
    }

    #[test]
    fn display_round_trips() {
        for text in ["claim_p99<=20ms", "duplicates==0", "completed_per_s>=800"] {
            let s = Slo::parse(text).unwrap();
            assert_eq!(Slo::parse(&s.to_string()).unwrap(), s);
        }
    }

    #[test]
    fn a_workload_table_names_the_bad_key() {
        let raw: RawSlos =
            toml::from_str("claim_p99 = \"<=20ms\"\nlost = \"==0\"\nqueue_wiat_p99 = \"<=1s\"")
                .unwrap();
        let (key, e) = raw.parse().unwrap_err();
        assert_eq!(key, "queue_wiat_p99");
        assert!(matches!(e, SloError::UnknownMetric(_)));
    }
}
