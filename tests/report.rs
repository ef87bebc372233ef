//! Every report file renders from `run.json` alone: from a committed fixture (a real smoke
//! run), and from degenerate variants of it, which must draw notes instead of panicking.

use claimbench::report::{self, render_all};
use claimbench::results::RunResult;
use claimbench::strategy::Strategy;
use std::path::Path;

const PLOTS: [&str; 6] = [
    "throughput_vs_workers",
    "claim_latency_spectrum",
    "throughput_over_time",
    "duplicates",
    "lock_wait_vs_workers",
    "production_heatmap",
];

/// The plots a run gets: the arrival plots only with a phase with arrivals (a rate
/// search's steps do not count), the sustained-rate plot only with a rate search.
fn expected_plots(r: &RunResult) -> Vec<&'static str> {
    let mut p = PLOTS.to_vec();
    if !report::plots::arrival_cells(r).is_empty() {
        p.extend(["queue_wait_spectrum", "oldest_pending_over_time"]);
    }
    if !r.rate_searches.is_empty() {
        p.push("sustained_rate_vs_workers");
    }
    p
}

/// The fixture as if its jobs had arrived at 200/s during the trial.
fn with_arrivals(mut r: RunResult) -> RunResult {
    for c in &mut r.cells {
        c.phase = "arrivals".into();
        c.arrival_rate_per_s = Some(200.0);
    }
    r
}

fn fixture() -> RunResult {
    RunResult::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"))
        .expect("the committed fixture reads")
}

/// Renders `r` into a fresh folder and checks every file; returns the HTML.
fn render_and_check(r: &RunResult) -> String {
    let dir = tempfile::tempdir().unwrap();
    let files = render_all(r, dir.path()).unwrap();
    assert!(files.problems.is_empty(), "{:?}", files.problems);
    let expected = expected_plots(r);
    assert_eq!(
        files.plots.len(),
        2 * expected.len(),
        "png + svg, and no other"
    );
    for &name in &expected {
        let png = std::fs::read(dir.path().join(format!("plots/{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png is a PNG");
        assert!(png.len() > 2000, "{name}.png has content");
        let svg = std::fs::read_to_string(dir.path().join(format!("plots/{name}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}.svg"
        );
        assert!(svg.contains("<text"), "{name}.svg has text");
    }
    let html = std::fs::read_to_string(&files.html).unwrap();
    for &name in &expected {
        assert!(
            html.contains(&format!("<figure id=\"{name}\">")),
            "report.html shows {name}"
        );
    }
    for fetch in ["src=\"http", "href=\"http", "url(http", "<link", "<script"] {
        assert!(
            !html.contains(fetch),
            "report.html must not load anything: {fetch}"
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("cells.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        r.cells.len() + 1,
        "one row per cell plus header"
    );
    let hgrms = std::fs::read_dir(dir.path().join("hgrm")).unwrap().count();
    assert_eq!(hgrms, r.cells.len() * 2);
    assert!(dir.path().join("summary.md").is_file());
    html
}

#[test]
fn fixture_renders_every_plot_and_file() {
    let r = fixture();
    assert_eq!(
        r.cells.len(),
        4,
        "the fixture is the four-strategy smoke run"
    );
    let html = render_and_check(&r);
    assert!(html.contains("<td class=\"l\">production</td>"));
    assert!(html.contains(&r.workload.sha256));
    let at = |h: &str| html.find(&format!("\">{h}</h2>")).unwrap_or(usize::MAX);
    assert!(at("Verdict") < at("Summary"), "the verdict comes first");
    assert!(
        html.contains("<a href=\"#verdict\">Verdict</a>") && html.contains("<h2 id=\"verdict\">"),
        "a table of contents links every section"
    );
    assert!(
        !html.contains("oldest_pending_over_time"),
        "no arrivals: the oldest-pending plot would measure the trial's clock"
    );
    let html = render_and_check(&with_arrivals(fixture()));
    assert!(html.contains("<figure id=\"oldest_pending_over_time\">"));
}

#[test]
fn a_rate_search_draws_the_sustained_rate_plot_and_table() {
    use claimbench::analysis::rate_search::{SearchResult, SearchStep};
    let mut r = with_arrivals(fixture());
    for (workers, sustained) in [(1, 300.0), (4, 900.0), (8, 1200.0)] {
        let c = &r.cells[0];
        r.rate_searches.push(SearchResult {
            phase: "arrivals".into(),
            backend: c.backend,
            strategy: c.strategy.clone(),
            index_layout: c.index_layout.clone(),
            workers,
            batch_size: c.batch_size,
            sustained_per_s: Some(sustained),
            steps: vec![
                SearchStep {
                    rate_per_s: sustained,
                    held: true,
                    completed_per_s: sustained,
                    misses: Vec::new(),
                },
                SearchStep {
                    rate_per_s: sustained * 2.0,
                    held: false,
                    completed_per_s: sustained,
                    misses: vec!["queue_wait_p99<=1000ms (measured 2.0 s)".into()],
                },
            ],
        });
    }
    let html = render_and_check(&r);
    assert!(html.contains("\">Sustainable arrival rate</h2>"));
    assert!(
        html.contains("with 4 workers sustains 900 arrivals/s"),
        "the verdict says it"
    );
}

#[test]
fn many_worker_counts_render_lines_and_heatmap_cells() {
    let mut r = fixture();
    let base = r.cells.clone();
    for (workers, batch) in [(2, 5), (4, 20), (16, 20)] {
        for c in &base {
            let mut c = c.clone();
            c.workers = workers;
            c.batch_size = batch;
            r.cells.push(c);
        }
    }
    let html = render_and_check(&r);
    assert!(html.contains("batch 20"), "a panel per batch size");
}

#[test]
fn one_strategy_renders() {
    let mut r = fixture();
    r.cells.retain(|c| c.strategy == Strategy::NAIVE);
    let html = render_and_check(&r);
    assert!(
        html.contains("no production cells without arrivals in this run"),
        "the heatmap says why it is empty"
    );
}

#[test]
fn zero_duration_trials_render_notes() {
    let mut r = with_arrivals(fixture());
    for c in &mut r.cells {
        for t in &mut c.trials {
            t.measured_s = 0.0;
            t.claimed_per_s = 0.0;
            t.completed_per_s = 0.0;
            t.claimed_series.clear();
            t.completed_series.clear();
            t.claim_latency = Default::default();
            t.queue_wait = Default::default();
            t.oldest_pending = Default::default();
        }
    }
    let html = render_and_check(&r);
    assert!(
        html.contains("no claims were recorded after warm-up"),
        "spectra say why they are empty"
    );
    assert!(html.contains("no oldest-pending samples"));
}

#[test]
fn a_run_without_cells_renders() {
    let mut r = fixture();
    r.cells.clear();
    r.interrupted = true;
    r.stop_reason = Some("interrupted by Ctrl-C".into());
    let html = render_and_check(&r);
    assert!(html.contains("Partial run"));
    assert!(report::summary::render(&r).contains("**Partial run**"));
}

#[test]
fn two_backends_render_side_by_side_and_one_plot_set_each() {
    use claimbench::backend::BackendKind;
    use claimbench::results::TargetRecord;
    let mut r = fixture();
    let mysql: Vec<_> = r
        .cells
        .iter()
        .cloned()
        .map(|mut c| {
            c.backend = BackendKind::Mysql;
            c
        })
        .collect();
    r.cells.extend(mysql);
    let target = |backend, target: &str| TargetRecord {
        backend,
        target: target.into(),
        embedded: false,
        session_settings: Vec::new(),
        standbys: Vec::new(),
        cluster: None,
        pooler: None,
        their_pooler: None,
        server: Default::default(),
    };
    r.environment.targets = vec![
        target(BackendKind::Postgres, "postgres://u@h:5432/db"),
        target(BackendKind::Mysql, "mysql://u@h:3306/db"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let files = render_all(&r, dir.path()).unwrap();
    assert!(files.problems.is_empty(), "{:?}", files.problems);
    assert_eq!(
        files.plots.len(),
        (2 * expected_plots(&r).len() + 1) * 2,
        "png + svg per backend, and the backends on one set of axes"
    );
    let across = std::fs::read_to_string(dir.path().join("plots/throughput_by_backend.svg"))
        .expect("both backends on one figure");
    for line in ["on postgres", "on mysql"] {
        assert!(across.contains(line), "{line}");
    }
    for backend in ["postgres", "mysql"] {
        for name in expected_plots(&r) {
            let svg =
                std::fs::read_to_string(dir.path().join(format!("plots/{backend}/{name}.svg")))
                    .unwrap();
            assert!(
                svg.contains(&format!("{backend}: ")),
                "{backend}/{name} says which"
            );
        }
    }
    let html = std::fs::read_to_string(&files.html).unwrap();
    assert!(html.contains("\">Backends side by side</h2>"));
    assert!(html.contains("<figure id=\"mysql-duplicates\">"));
    assert!(
        html.contains("postgres://u@h:5432/db (") && html.contains(" and mysql://u@h:3306/db (")
    );
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(md.contains("| mysql/postgres |"), "{md}");
    assert!(
        md.contains("| 1.00 |"),
        "identical cells give a ratio of 1: {md}"
    );
}

#[test]
fn the_committed_baseline_belongs_to_the_nightly_workload_and_compares_clean_with_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let baseline = RunResult::read(&root.join("results/baseline/run.json")).unwrap();
    let nightly =
        claimbench::workload::Workload::load(&root.join("workloads/nightly.toml")).unwrap();
    assert_eq!(
        baseline.workload.sha256, nightly.source_hash,
        "workloads/nightly.toml changed since the baseline was made: refresh it (the command is at the top of the workload)"
    );
    assert!(!baseline.interrupted);
    assert!(baseline.cells.iter().all(|c| c.trials.len() == 5));
    let c = claimbench::analysis::compare::compare(&baseline, &baseline, false);
    assert_eq!(c.exit_code(), 0);
    assert!(c.gates.iter().all(|g| g.passed), "{:?}", c.gates);
}

/// The throughput plot rings the cells `recommend` picks and no other: none without
/// SLOs, one per recommendation once an SLO on throughput tells pools apart.
#[test]
fn the_throughput_plot_rings_only_the_recommended_cells() {
    use claimbench::report::plots::{self, VsWorkers};
    let ring = "r=\"9\"";
    let draw = |r: &RunResult| {
        let dir = tempfile::tempdir().unwrap();
        let figure = VsWorkers {
            run: r,
            lock_wait: false,
        };
        let folder = claimbench::results::Folder::open(dir.path()).unwrap();
        plots::render(&figure, &folder).unwrap().svg
    };
    let mut r = fixture();
    r.slos.clear();
    assert_eq!(draw(&r).matches(ring).count(), 0, "no SLOs, no ring");
    r.slos = vec![claimbench::slo::Slo::parse("completed_per_s>=1").unwrap()];
    let picked = claimbench::analysis::recommend::meaningful(&r, &r.slos)
        .0
        .iter()
        .filter(|rec| rec.recommended.is_some())
        .count();
    assert!(picked > 0, "an SLO on throughput recommends a pool");
    assert_eq!(draw(&r).matches(ring).count(), picked);
}

/// One cell, one figure under one rule in every output (metric.rs): on a real run with
/// three repetitions under arrivals, whose repetitions' oldest-pending p99 differ (so
/// the mean and the worst repetition disagree), summary.md's table and SLO line,
/// cells.csv, the cell figures SLOs read and compare's JSON all give the mean; and
/// queue wait, measured only where jobs arrived, is blank in cells.csv exactly where
/// summary.md shows `–`. Claim p99, merged over repetitions, is one figure in
/// summary.md, the terminal, cells.csv and compare's JSON.
#[test]
fn every_output_gives_a_cell_the_same_oldest_pending_p99() {
    use claimbench::analysis::figures::CellFigures;
    let mut r = RunResult::read(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/three-reps.json"),
    )
    .unwrap();
    r.slos = vec![claimbench::slo::Slo::parse("oldest_pending_p99<=1ms").unwrap()];
    let md = claimbench::report::summary::render(&r);
    let screen = claimbench::report::terminal::render(&r);
    let view = claimbench::report::view::RunView::of(&r);
    let csv = claimbench::report::export::cells_csv(&view.cells).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let comparison =
        serde_json::to_value(claimbench::analysis::compare::compare(&r, &r, false)).unwrap();
    let phase_label = claimbench::results::phase_label;
    for (i, c) in r.cells.iter().enumerate() {
        let reps: Vec<f64> = c.trials.iter().map(|t| t.oldest_pending.p99_ms).collect();
        assert_eq!(reps.len(), 3);
        let mean = reps.iter().sum::<f64>() / 3.0;
        let worst = reps.iter().copied().fold(0.0, f64::max);
        assert_ne!(
            format!("{mean:.0}"),
            format!("{worst:.0}"),
            "{reps:?}: rules alike"
        );

        assert_eq!(CellFigures::of(c).oldest_pending_p99_ms, Some(mean));
        let row: Vec<&str> = csv.lines().nth(i + 1).unwrap().split(',').collect();
        let in_csv: f64 = row[column("oldest_pending_p99_ms")].parse().unwrap();
        assert!((in_csv - mean).abs() < 1e-9, "{in_csv} against {mean}");
        assert!(!row[column("queue_wait_p99_us")].is_empty());

        let line = md
            .lines()
            .find(|l| l.contains(&format!("| {} |", c.strategy)) && l.contains("| 2 | 1 |"))
            .unwrap_or_else(|| panic!("no {} row in {md}", c.strategy));
        assert!(line.contains(&format!("| {mean:.0} |")), "{line}");
        // The SLO verdict (production's: naive duplicates, so it gets none) reads the
        // same figure.
        if c.strategy == Strategy::PRODUCTION {
            assert!(
                md.contains(&format!(
                    "oldest_pending_p99\\<=1ms (measured {})",
                    claimbench::analysis::figures::fmt_ms(mean)
                )),
                "{md}"
            );
        }

        // Claim p99 merges every repetition's histogram: the same figure in the table,
        // the terminal's line, cells.csv and compare.
        let p99 = CellFigures::of(c).claim_p99_ms.unwrap();
        assert!(line.contains(&format!("| {p99:.2} |")), "{line}");
        let screen_line = screen
            .lines()
            .find(|l| l.starts_with(&phase_label(c)) && l.contains(&format!(" {} ", c.strategy)))
            .unwrap_or_else(|| panic!("no {} line in {screen}", c.strategy));
        assert!(
            screen_line.contains(&claimbench::analysis::figures::fmt_ms(p99)),
            "{screen_line}"
        );
        let csv_p99: f64 = row[column("claim_p99_us")].parse().unwrap();
        assert!(
            (csv_p99 / 1000.0 - p99).abs() < 1e-9,
            "{csv_p99} against {p99}"
        );
        let claim = comparison["cells"][i]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == "claim_p99")
            .unwrap()
            .clone();
        let value = claim["baseline"]["value"].as_f64().unwrap();
        assert!((value - p99).abs() < 1e-9, "{claim}");

        let metric = comparison["cells"][i]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == "oldest_pending_p99")
            .unwrap()
            .clone();
        let value = metric["baseline"]["value"].as_f64().unwrap();
        assert!((value - mean).abs() < 1e-9, "{metric}");
    }

    // The same run as a drain (no arrivals): `–` in summary.md, blank in cells.csv.
    for c in &mut r.cells {
        c.arrival_rate_per_s = None;
        c.phase = "drain".into();
        for t in &mut c.trials {
            t.produced_jobs = 0;
        }
    }
    let md = claimbench::report::summary::render(&r);
    assert!(
        md.lines()
            .filter(|l| l.starts_with("| drain |") && l.contains(" ±"))
            .all(|l| l.contains("| – | – |")),
        "{md}"
    );
    let view = claimbench::report::view::RunView::of(&r);
    let csv = claimbench::report::export::cells_csv(&view.cells).unwrap();
    for line in csv.lines().skip(1) {
        let row: Vec<&str> = line.split(',').collect();
        for name in [
            "queue_wait_p99_us",
            "oldest_pending_p99_ms",
            "oldest_pending_max_ms",
        ] {
            assert!(row[column(name)].is_empty(), "{name} in {line}");
        }
    }
}

/// Every metric of the catalogue has one value per cell: on the three-repetition fixture
/// (arrivals, so every metric is measured), the run's analysis, compare's JSON, history's
/// series, cells.csv and summary.md's table give each cell's figure as the catalogue
/// combines it. (transactions_per_job is in no table: the fixture's server counted no
/// transactions for it, and compare and history are held to the analysis there too.)
#[test]
fn every_metric_has_one_value_per_cell_in_every_output() {
    use claimbench::metric::{CATALOGUE, Metric};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/three-reps.json");
    let r = RunResult::read(&path).unwrap();
    let view = claimbench::report::view::RunView::of(&r);
    let figures = &view.analysis.figures;
    let comparison =
        serde_json::to_value(claimbench::analysis::compare::compare(&r, &r, false)).unwrap();
    // Enough nights of the same run for history to draw its series.
    let settings = claimbench::analysis::changepoint::Settings::default();
    let nights: Vec<RunResult> = (0..claimbench::analysis::history::min_nights(settings))
        .map(|i| {
            let mut n = r.clone();
            n.run_id = format!("night-{i}");
            n.started_at = format!("2026-01-{:02}T00:00:00Z", i + 1);
            n
        })
        .collect();
    let history = claimbench::analysis::history::history(&nights, settings, 0.1);
    let csv = claimbench::report::export::cells_csv(&view.cells).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    // Each metric's cells.csv column and the factor from the figure's unit to it.
    let in_csv = |m: Metric| -> Option<(&str, f64)> {
        Some(match m {
            Metric::Throughput | Metric::CompletedPerS => ("completed_per_s", 1.0),
            Metric::ClaimP50 => ("claim_p50_us", 1000.0),
            Metric::ClaimP99 => ("claim_p99_us", 1000.0),
            Metric::ClaimP999 => ("claim_p999_us", 1000.0),
            Metric::QueueWaitP99 => ("queue_wait_p99_us", 1000.0),
            Metric::OldestPendingP99 => ("oldest_pending_p99_ms", 1.0),
            Metric::OldestPendingMax => ("oldest_pending_max_ms", 1.0),
            Metric::Duplicates => ("duplicate_claims", 1.0),
            Metric::DuplicateExecutions => ("duplicate_executions_ledger", 1.0),
            Metric::Lost => ("lost", 1.0),
            Metric::TransactionsPerJob => return None,
        })
    };
    let md = claimbench::report::summary::show(&view);
    let mut checked = 0;
    for (i, c) in r.cells.iter().enumerate() {
        assert_eq!(c.trials.len(), 3);
        let f = &figures[i];
        assert_eq!(f, &claimbench::analysis::figures::CellFigures::of(c));
        let row: Vec<&str> = csv.lines().nth(i + 1).unwrap().split(',').collect();
        let key = claimbench::results::cell_key(c);
        for e in &CATALOGUE {
            let Some(v) = f.value(e.metric) else { continue };
            let what = format!("{} of {} w={}", e.name, c.strategy, c.workers);
            // compare's JSON, for the metrics it compares.
            if let Some(m) = comparison["cells"][i]["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["metric"] == e.name)
            {
                let got = m["baseline"]["value"].as_f64().unwrap();
                assert!((got - v).abs() < 1e-9, "compare: {what}: {got} against {v}");
                let series = history
                    .series
                    .iter()
                    .find(|s| s.cell == key && s.metric == e.metric)
                    .unwrap_or_else(|| panic!("history has no series for {what}"));
                assert!(
                    series.points.iter().all(|(_, x)| (x - v).abs() < 1e-9),
                    "history: {what}: {:?} against {v}",
                    series.points
                );
            }
            if let Some((column, scale)) = in_csv(e.metric) {
                let at = header.iter().position(|h| *h == column).unwrap();
                let got: f64 = row[at].parse().unwrap();
                // Latencies are whole microseconds in cells.csv.
                let tolerance = if scale > 1.0 { 1.0 } else { 1e-9 };
                assert!(
                    (got - v * scale).abs() <= tolerance,
                    "cells.csv {column}: {what}: {got} against {}",
                    v * scale
                );
            }
            checked += 1;
        }
        // summary.md's table, as it rounds each figure.
        let line = md
            .lines()
            .find(|l| l.contains(&format!("| {} |", c.strategy)) && l.contains("| 2 | 1 |"))
            .unwrap_or_else(|| panic!("no {} row in {md}", c.strategy));
        let shown =
            |m: Metric, decimals: usize| format!("| {:.*} |", decimals, f.value(m).unwrap());
        for (m, decimals) in [
            (Metric::ClaimP50, 2),
            (Metric::ClaimP99, 2),
            (Metric::QueueWaitP99, 2),
            (Metric::OldestPendingP99, 0),
            (Metric::Lost, 0),
        ] {
            assert!(line.contains(&shown(m, decimals)), "{m}: {line}");
        }
    }
    assert!(checked >= 10 * r.cells.len(), "{checked} figures checked");
}
