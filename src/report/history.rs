//! `claimbench history`'s Markdown: the nights read, the lasting shifts found, and what
//! changed in the environment around them.

use crate::analysis::history::History;
use crate::markdown::table;
use std::fmt::Write;

/// The history as Markdown: a sentence with the answer first, the shifts table, and the
/// nights on which the environment or workload changed.
pub fn markdown(h: &History) -> String {
    let mut s = String::new();
    let (first, last) = (
        h.nights.first().map_or("", String::as_str),
        h.nights.last().map_or("", String::as_str),
    );
    let _ = writeln!(
        s,
        "# History over {} nights ({first} … {last})\n",
        h.nights.len()
    );
    let shifts: Vec<_> = h.shifts().collect();
    let current: Vec<_> = shifts
        .iter()
        .filter(|(_, sh)| sh.current && sh.verdict == crate::analysis::compare::Verdict::Regressed)
        .collect();
    let _ = writeln!(
        s,
        "{} series (cells × compared metrics) checked for lasting shifts of at least {:.0} %: {} found, {} of them a regression still there.\n",
        h.series.len(),
        h.min_change * 100.0,
        shifts.len(),
        current.len()
    );
    if !shifts.is_empty() {
        let rows: Vec<Vec<String>> = shifts
            .iter()
            .map(|(series, sh)| {
                vec![
                    series.label(),
                    series.metric.name().to_string(),
                    format!("{} ({})", sh.night + 1, h.nights[sh.night]),
                    series.metric.show(sh.before),
                    series.metric.show(sh.after),
                    format!("{:+.1} %", sh.change * 100.0),
                    format!("{:.3}", sh.p_value),
                    sh.verdict.to_string(),
                    if sh.current { "yes" } else { "no" }.to_string(),
                ]
            })
            .collect();
        let header = [
            "cell",
            "metric",
            "from night",
            "before",
            "after",
            "change",
            "p",
            "verdict",
            "still there",
        ];
        table(&mut s, &header, &rows, 3);
        s.push('\n');
    }
    if !h.changes.is_empty() {
        s.push_str("The environment or workload changed on these nights; a shift that begins there may be theirs, not the claim's:\n\n");
        for (night, what) in &h.changes {
            let _ = writeln!(
                s,
                "- night {} ({}): {}",
                night + 1,
                h.nights[*night],
                what.join("; ")
            );
        }
    }
    s
}
