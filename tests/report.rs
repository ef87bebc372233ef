//! Every report file renders from `run.json` alone: from a committed fixture (a real smoke
//! run), and from degenerate variants of it, which must draw notes instead of panicking.

use claimbench::report::{self, render_all};
use claimbench::results::RunResult;
use claimbench::strategy::Strategy;
use std::path::Path;

const PLOTS: [&str; 8] = [
    "throughput_vs_workers",
    "claim_latency_spectrum",
    "queue_wait_spectrum",
    "oldest_pending_over_time",
    "throughput_over_time",
    "duplicates",
    "lock_wait_vs_workers",
    "production_heatmap",
];

fn fixture() -> RunResult {
    RunResult::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"))
        .expect("the committed fixture reads")
}

/// Renders `r` into a fresh folder and checks every file; returns the HTML.
fn render_and_check(r: &RunResult) -> String {
    let dir = tempfile::tempdir().unwrap();
    let files = render_all(r, dir.path()).unwrap();
    assert!(files.problems.is_empty(), "{:?}", files.problems);
    for name in PLOTS {
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
    for name in PLOTS {
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
    r.cells.retain(|c| c.strategy == Strategy::Naive);
    let html = render_and_check(&r);
    assert!(
        html.contains("no production cells in this run"),
        "the heatmap says why it is empty"
    );
}

#[test]
fn zero_duration_trials_render_notes() {
    let mut r = fixture();
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
        2 * PLOTS.len() * 2,
        "png + svg per backend"
    );
    for backend in ["postgres", "mysql"] {
        for name in PLOTS {
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
    assert!(html.contains("<h2>Backends side by side</h2>"));
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
