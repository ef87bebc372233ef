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
        let dir = super::run_folder(&cur_json);
        let files = report::render_compared(&cur, dir, &base, &c)?;
        errln!("report with the comparison: {}", files.html.display());
    }
    Ok(ExitCode::from(c.exit_code()))
}

/// `history`: the runs under `dir` in the order they started, the shifts found, a plot
/// per metric under `out` (default `dir/history`), and compare's exit code.
pub(crate) fn history(
    dir: &Path,
    min_change: f64,
    out: Option<std::path::PathBuf>,
    json: Option<std::path::PathBuf>,
) -> Result<ExitCode> {
    use claimbench::analysis::{changepoint::Settings, history};
    if !(0.0..1.0).contains(&min_change) {
        bail!("--min-change {min_change}: give a share from 0 to below 1 (0.05 is 5 %)");
    }
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the folder {}", dir.display()))?;
    let mut paths = Vec::new();
    for e in entries {
        let path = e?.path().join("run.json");
        if path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    // A thousand nights are a thousand files to parse: over the host's cores.
    let mut runs = Vec::new();
    for read in claimbench::parallel::map(paths, |p| RunResult::read(&p)) {
        match read {
            Ok(r) => runs.push(r),
            // The error names the file.
            Err(e) => errln!(
                "skipped: {}",
                claimbench::markdown::printable(&format!("{e:#}"))
            ),
        }
    }
    // The latest run's workload defines the history: another workload's nights are
    // other cells, not another night of these.
    runs.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let Some(name) = runs.last().map(|r| r.workload.name.clone()) else {
        bail!("{}: no results folder with a run.json in it", dir.display());
    };
    let before = runs.len();
    runs.retain(|r| r.workload.name == name);
    if runs.len() < before {
        errln!(
            "read {} runs of workload `{name}` (the latest's); left out {} of other workloads",
            runs.len(),
            before - runs.len()
        );
    }
    let settings = Settings::default();
    let least = history::min_nights(settings);
    if runs.len() < least {
        bail!(
            "{}: {} runs of `{name}`; a history needs at least {least} (two stretches of {})",
            dir.display(),
            runs.len(),
            settings.min_size
        );
    }
    let h = history::history(&runs, settings, min_change);
    out!("{}", report::history::markdown(&h));
    let out = out.unwrap_or_else(|| dir.join("history"));
    let out = claimbench::results::Folder::open(&out)?;
    let mut plotted = 0;
    for entry in claimbench::metric::Metric::compared() {
        if h.series.iter().any(|s| s.metric == entry.metric) {
            let fig = report::plots::OverNights {
                history: &h,
                metric: entry.metric,
            };
            report::plots::render(&fig, &out)
                .map_err(|e| anyhow::anyhow!("cannot draw {}: {e:?}", entry.name))?;
            plotted += 1;
        }
    }
    errln!("{plotted} plots in {}", out.path().display());
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&h).expect("a history serializes");
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(ExitCode::from(h.exit_code()))
}
