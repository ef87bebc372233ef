//! Every format renders one view of a run (report/view.rs); these pin what each one
//! writes for the committed fixture run, so a change to a number or a column shows up
//! as a reviewed diff, not just as "the file exists". After a deliberate change:
//! `INSTA_UPDATE=always cargo test --test snapshots`, then review the `.snap` diffs.

use claimbench::analysis::compare;
use claimbench::report::document::{Document, Renderer};
use claimbench::report::{comparison, export, html, summary, terminal, view};
use claimbench::results::RunResult;
use std::path::Path;

/// Three repetitions per cell under arrivals, an SLO and two gates (one fails): the
/// fixture on which a rule that takes the mean and one that takes the worst repetition
/// show different numbers (tests/report.rs checks they agree across formats).
fn three_reps() -> RunResult {
    RunResult::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/three-reps.json"))
        .expect("the committed fixture reads")
}

fn fixture() -> RunResult {
    RunResult::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"))
        .expect("the committed fixture reads")
}

/// The fixture with every production trial 30% slower: a regression to render.
fn slower() -> RunResult {
    let mut r = fixture();
    r.run_id.push_str("-slower");
    for c in r
        .cells
        .iter_mut()
        .filter(|c| c.strategy.as_str() == "production")
    {
        for t in &mut c.trials {
            t.claims_per_s *= 0.7;
            t.claimed_per_s *= 0.7;
            t.completed_per_s *= 0.7;
        }
    }
    r
}

#[test]
fn summary_md() {
    insta::assert_snapshot!(summary::render(&fixture()));
}

#[test]
fn cells_csv() {
    let r = fixture();
    insta::assert_snapshot!(export::cells_csv(&view::RunView::of(&r).cells).unwrap());
}

#[test]
fn hgrm_of_the_first_cell() {
    let v = claimbench::report::view::merged(&fixture().cells[0], |t| &t.claim_latency);
    insta::assert_snapshot!(export::hgrm(&v).unwrap());
}

#[test]
fn comparison_outputs() {
    let (base, cur) = (fixture(), slower());
    let c = compare::compare(&base, &cur, false);
    insta::assert_snapshot!("compare_markdown", comparison::markdown(&c));
    insta::assert_snapshot!("compare_junit", comparison::junit(&c).unwrap());
    insta::assert_snapshot!(
        "compare_html_section",
        comparison::html_section(&c, &base.run_id, &[])
    );
    insta::assert_snapshot!(
        "compare_json",
        serde_json::to_string_pretty(&c).expect("a comparison serializes")
    );
}

/// The screen `run` prints on stdout.
#[test]
fn terminal_screen() {
    insta::assert_snapshot!(terminal::render(&fixture()));
}

/// The whole report page but its plots, whose inline SVGs are drawn by plotters (their
/// figures are checked in tests/report.rs): sections, contents, tables and sentences.
#[test]
fn report_html_without_its_plots() {
    let r = fixture();
    let html = html::Html {
        plots: &[],
        plot_problems: &[],
        comparison: None,
    };
    insta::assert_snapshot!(html.render(&Document::of(&view::RunView::of(&r))).unwrap());
}

/// Every format of the three-repetition run, each rendered from one document: summary.md,
/// report.html (without its plots), the screen, cells.csv, and compare's JSON and
/// Markdown against the same run with production's p99 doubled.
#[test]
fn every_format_of_the_three_repetition_run() {
    let r = three_reps();
    let view = view::RunView::of(&r);
    let doc = Document::of(&view);
    let html = html::Html {
        plots: &[],
        plot_problems: &[],
        comparison: None,
    };
    insta::assert_snapshot!("three_reps_summary_md", summary::Markdown.text(&doc));
    insta::assert_snapshot!("three_reps_report_html", html.page(&doc));
    insta::assert_snapshot!("three_reps_terminal", terminal::Terminal.text(&doc));
    insta::assert_snapshot!(
        "three_reps_cells_csv",
        export::CellsCsv.render(&doc).unwrap()
    );
    let mut slower = three_reps();
    for t in slower
        .cells
        .iter_mut()
        .filter(|c| c.strategy.as_str() == "production")
        .flat_map(|c| &mut c.trials)
    {
        t.oldest_pending.p99_ms *= 2.0;
    }
    let c = compare::compare(&r, &slower, false);
    insta::assert_snapshot!("three_reps_compare_markdown", comparison::markdown(&c));
    insta::assert_snapshot!(
        "three_reps_compare_json",
        serde_json::to_string_pretty(&c).expect("a comparison serializes")
    );
}

/// The three-repetition run read as a paired block (production as A, naive as B, the
/// repetitions as rounds): the verdict's paired sentence, the Paired A/B table on the
/// screen and in summary.md, and paired.json's data.
#[test]
fn a_paired_run_on_the_screen_and_the_page() {
    use claimbench::results::{Pair, PairSide};
    let mut r = three_reps();
    for (c, side) in r.cells.iter_mut().zip([PairSide::A, PairSide::B]) {
        c.pair = Some(Pair {
            side,
            id: 1,
            threshold: 0.05,
        });
    }
    insta::assert_snapshot!("paired_terminal", terminal::render(&r));
    let md = summary::render(&r);
    let section = &md[md.find("## Paired A/B").expect("a Paired A/B section")..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    insta::assert_snapshot!("paired_summary_section", section);
    let judged = claimbench::analysis::RunAnalysis::of(&r).paired;
    assert_eq!(judged.cells.len(), 1);
    assert_eq!(
        (judged.cells[0].a.as_str(), judged.cells[0].b.as_str()),
        ("production", "naive")
    );
    insta::assert_snapshot!(
        "paired_json",
        serde_json::to_string_pretty(&judged).unwrap()
    );
}
