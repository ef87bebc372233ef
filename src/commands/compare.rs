//! `compare` (a run against a baseline, for the nightly gate) and `recommend` (the
//! smallest cell that meets the SLOs): both read run.json files only.

use super::run_json_path;
use anyhow::{Context, Result, bail};
use claimbench::analysis::recommend;
use claimbench::report;
use claimbench::results::RunResult;
use claimbench::slo::Slo;
use std::path::Path;
use std::process::ExitCode;

/// `recommend`: exit 0 when some cell meets the SLOs, 3 when none does.
pub(crate) fn recommend(run_json: &Path, flags: &[Slo]) -> Result<ExitCode> {
    let r = RunResult::read(&run_json_path(run_json))?;
    let slos = recommend::effective_slos(&r.slos, flags);
    let recs = recommend::recommend(&r, &slos);
    if recs.is_empty() {
        bail!("{}: no cells to recommend from", run_json.display());
    }
    out!("{}", report::answers::recommendation_text(&recs, &slos));
    for pool in claimbench::analysis::pooler::pool_sizing(&r, &slos) {
        outln!("{}", pool.sentence());
    }
    if recs.iter().all(|r| r.recommended.is_none()) {
        let slo_list = super::comma_list(&slos);
        if recs.iter().any(|r| r.candidates.iter().any(|c| c.judged)) {
            errln!("no cell meets {slo_list}: widen the sweep or relax the SLOs");
        } else {
            errln!(
                "no cell can measure {slo_list} (see why above): give SLOs these phases measure"
            );
        }
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// `compare`: the Markdown report on stdout (and in `--markdown`), JSON in `--json`,
/// and the comparison's exit code.
pub(crate) fn compare(
    [baseline, current]: [&Path; 2],
    force: bool,
    thresholds: &[String],
    [markdown, json, junit]: [Option<std::path::PathBuf>; 3],
    html: bool,
) -> Result<ExitCode> {
    let thresholds = thresholds
        .iter()
        .map(|t| {
            claimbench::analysis::compare::parse_threshold(t)
                .map_err(|e| anyhow::anyhow!("--threshold {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let base = RunResult::read(&run_json_path(baseline))?;
    let cur_json = run_json_path(current);
    let cur = RunResult::read(&cur_json)?;
    let c = claimbench::analysis::compare::compare_with(&base, &cur, force, &thresholds);
    let md = report::comparison::markdown(&c);
    out!("{md}");
    if let Some(p) = markdown {
        std::fs::write(&p, &md).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&c).expect("a comparison serializes");
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(p) = junit {
        let xml = report::comparison::junit(&c).context("cannot write JUnit XML")?;
        std::fs::write(&p, xml).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if html {
        let dir = cur_json.parent().unwrap_or(Path::new("."));
        let files = report::render_compared(&cur, dir, &base, &c)?;
        errln!("report with the comparison: {}", files.html.display());
    }
    Ok(ExitCode::from(c.exit_code()))
}
