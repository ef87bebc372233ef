//! `summary.md`: the report's document (report/document.rs) as GitHub-flavoured
//! Markdown, the table a person reads first. `run --verbose` and `inspect` print it.

use super::document::{Block, Document, Part, Renderer, Section, Table};
use super::view::RunView;
use crate::markdown::{code, escape, table as markdown_table};
use crate::results::RunResult;
use std::fmt::Write;

pub fn render(r: &RunResult) -> String {
    show(&RunView::of(r))
}

/// As [`render`], of a run analysed already.
pub fn show(view: &RunView) -> String {
    Markdown.text(&Document::of(view))
}

/// summary.md: GitHub-flavoured Markdown, fit for a CI job summary.
pub struct Markdown;

fn table(out: &mut String, t: &Table) {
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| match c.bold {
                    true => format!("**{}**", c.text),
                    false => c.text.clone(),
                })
                .collect()
        })
        .collect();
    markdown_table(out, &t.header_text(), &rows, t.left());
}

fn blocks(out: &mut String, s: &Section) {
    for b in &s.blocks {
        match b {
            Block { table: Some(t), .. } => {
                table(out, t);
                out.push('\n');
            }
            Block { bold: true, .. } => {
                let _ = writeln!(out, "**{}**\n", b.text);
            }
            _ => {
                let _ = writeln!(out, "{}\n", b.text);
            }
        }
    }
}

impl Markdown {
    /// The page, which cannot fail.
    pub fn text(&self, doc: &Document) -> String {
        let lead = &doc.lead;
        let mut out = String::new();
        let _ = writeln!(out, "# claimbench run `{}`\n", lead.run_id);
        let _ = writeln!(
            out,
            "Workload **{}** ({}, sha256 `{}`) on {}, {} cores, claimbench {}.\n",
            escape(&lead.workload_name),
            code(&lead.workload_path),
            lead.workload_sha,
            escape(&lead.targets),
            lead.cores,
            lead.version,
        );
        for (label, text) in &doc.notes {
            let _ = writeln!(out, "**{label}**: {}\n", escape(text));
        }
        if let Some(why) = &doc.partial {
            let _ = writeln!(out, "**Partial run**: {why}.\n");
        }
        if !doc.verdict.is_empty() {
            let verdict: String = doc.verdict.iter().map(|s| format!("- {s}\n")).collect();
            let _ = writeln!(out, "## Verdict\n\n{verdict}");
        }
        for s in &doc.sections {
            // The cell table opens the page under the verdict, its notes after it; every
            // other section is a heading, how to read it, then its blocks.
            if s.part == Part::Cells {
                blocks(&mut out, s);
                for h in &s.how {
                    let _ = writeln!(out, "{h}\n");
                }
                continue;
            }
            let _ = writeln!(out, "## {}\n", s.title);
            for h in &s.how {
                let _ = writeln!(out, "{h}\n");
            }
            blocks(&mut out, s);
        }
        if !doc.warnings.is_empty() {
            out.push_str("## Warnings\n\n");
            for w in &doc.warnings {
                let _ = writeln!(out, "- {w}");
            }
        }
        out
    }
}

impl Renderer for Markdown {
    type Error = std::convert::Infallible;

    fn render(&self, doc: &Document) -> Result<String, Self::Error> {
        Ok(self.text(doc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendKind;
    use crate::metrics::{HistogramSummary, new_histogram};
    use crate::report::tables::{CLAIM_ONLY_HOW, server_notes, side_by_side};
    use crate::results::{CellResult, TrialResult};
    use crate::strategy::Strategy;
    use crate::warnings::Warning;

    fn trial(rep: u32, claimed: f64, latencies_us: &[u64], warnings: Vec<Warning>) -> TrialResult {
        let mut h = new_histogram();
        for &v in latencies_us {
            h.record(v).unwrap();
        }
        let mut t = TrialResult {
            repetition: rep,
            claimed_per_s: claimed,
            completed_per_s: claimed / 2.0,
            claim_latency: HistogramSummary::from_histogram(&h),
            warnings,
            ..TrialResult::default()
        };
        t.duplicates.ledger.duplicate_claims = 3;
        t
    }

    /// A run with an id and a workload name, for the tests to add cells to.
    fn named_run() -> RunResult {
        RunResult {
            run_id: "20260101-000000-t".into(),
            workload: crate::results::WorkloadRecord {
                name: "t".into(),
                sha256: "abcdef0123456789".into(),
                ..Default::default()
            },
            ..RunResult::default()
        }
    }

    #[test]
    fn a_name_with_markdown_in_it_cannot_break_a_table_or_make_a_link() {
        let mut out = String::new();
        let rows = vec![
            vec!["q|x".to_string(), "**FAIL**".to_string()],
            vec!["[click](http://x) *b*\nrow".to_string(), "1".to_string()],
        ];
        markdown_table(&mut out, &["queue", "result"], &rows, 1);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert_eq!(lines[2], "| q\\|x | **FAIL** |");
        assert_eq!(lines[3], "| [click\\](http://x) \\*b\\* row | 1 |");
    }

    #[test]
    fn rows_merge_repetitions_and_warnings_fold_per_cell() {
        let few = |n| Warning::FewSamples { claims: n };
        let r = RunResult {
            cells: vec![CellResult {
                phase: String::new(),
                arrival_rate_per_s: None,
                arrival_rate_from: None,
                backend: BackendKind::Postgres,
                strategy: Strategy::NAIVE,
                index_layout: "fetch-order".into(),
                workers: 4,
                batch_size: 10,
                session_settings: Vec::new(),
                server_settings: Vec::new(),
                pool_size: None,
                claim_only: None,
                storage: None,
                pair: None,
                server: None,
                trials: vec![
                    trial(0, 900.0, &[1000, 2000], vec![few(2)]),
                    trial(1, 1100.0, &[3000, 4000], vec![few(3)]),
                ],
            }],
            ..named_run()
        };
        let md = render(&r);
        // mean 1000, sample sd 141 = 14%; p50 over both reps' histograms: 2 ms.
        assert!(
            md.contains(
                "| postgres | naive | fetch-order | 4 | 10 | 2 | 1000 ±14% | 500 ±14% | 2.00 |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 6 | 0/0 | 0 |"),
            "dup claims summed over reps: {md}"
        );
        assert!(
            md.contains(
                "- postgres naive fetch-order w=4 b=10 (2 of 2 reps, first rep 1): only 2 claims"
            ),
            "{md}"
        );
        assert_eq!(
            md.matches("only 2 claims").count(),
            1,
            "folded into one line: {md}"
        );
    }

    /// A claim-only cell shows no completions or executions, which it cannot have, and
    /// its recommendation ranks pools by what they claimed; a full cell keeps its
    /// numbers beside it.
    #[test]
    fn claim_only_cells_show_dashes_for_what_they_do_not_run() {
        // No duplicates: a strategy that duplicated gets no recommendation.
        let mut t = trial(0, 1000.0, &[1000, 2000], vec![]);
        t.duplicates.ledger.duplicate_claims = 0;
        let cell = |phase: &str, claim_only| CellResult {
            phase: phase.into(),
            claim_only: Some(claim_only),
            ..CellResult::fetch_order(Strategy::PRODUCTION, 4, 1, vec![t.clone()])
        };
        let r = RunResult {
            cells: vec![cell("full", false), cell("claims", true)],
            slos: vec![crate::slo::Slo::parse("completed_per_s>=100").unwrap()],
            ..named_run()
        };
        let md = render(&r);
        let row = |phase: &str| {
            md.lines()
                .find(|l| l.starts_with(&format!("| {phase} |")))
                .unwrap_or_else(|| panic!("no {phase} row: {md}"))
                .to_string()
        };
        assert!(row("full").contains("| 1000 | 500 | 1.00 |"), "{md}");
        assert!(row("full").contains("| 0 | 0/0 | 0 |"), "{md}");
        assert!(row("claims").contains("| 1000 | – | 1.00 |"), "{md}");
        assert!(row("claims").contains("| 0 | – | 0 |"), "{md}");
        assert!(md.contains(CLAIM_ONLY_HOW), "{md}");
        // The claim-only phase cannot measure completed/s: not a miss, not a pass, and
        // said why; the full phase is judged on it.
        assert!(
            md.contains("[claims]: no SLO can be judged here (completed_per_s not measured: the phase is claim-only)"),
            "{md}"
        );
        assert!(
            md.contains("| 4 | 1 | 1000 | 2.0 ms | – | – | – (nothing to judge by) |"),
            "{md}"
        );
        assert!(
            md.contains("[full]: 4 workers, batch 1 meet completed_per_s>=100 (500 jobs/s"),
            "{md}"
        );
        assert!(md.contains("| workers | batch | claimed/s |"), "{md}");
        assert!(md.contains("| workers | batch | completed/s |"), "{md}");

        let mut plain = r.clone();
        plain.cells.truncate(1);
        assert!(
            !render(&plain).contains(CLAIM_ONLY_HOW),
            "only when it applies"
        );
    }

    #[test]
    fn backends_side_by_side_pair_the_same_cell_and_take_ratios_to_the_first() {
        let cell = |backend, strategy, claimed: f64, lat: &[u64]| CellResult {
            phase: String::new(),
            arrival_rate_per_s: None,
            arrival_rate_from: None,
            backend,
            strategy,
            index_layout: "fetch-order".into(),
            workers: 16,
            batch_size: 10,
            session_settings: Vec::new(),
            server_settings: Vec::new(),
            pool_size: None,
            claim_only: None,
            storage: None,
            pair: None,
            server: None,
            trials: vec![trial(0, claimed, lat, vec![])],
        };
        let mut r = RunResult {
            cells: vec![
                cell(BackendKind::Postgres, Strategy::PRODUCTION, 4000.0, &[1000]),
                cell(BackendKind::Mysql, Strategy::PRODUCTION, 1000.0, &[4000]),
                cell(BackendKind::Postgres, Strategy::NAIVE, 6000.0, &[500]),
            ],
            ..RunResult::default()
        };
        r.cells[0].trials[0].counts.jobs_completed = 1;
        let (header, rows) = side_by_side(&RunView::of(&r)).expect("two backends");
        assert_eq!(
            header[5..8],
            [
                "postgres completed/s",
                "mysql completed/s",
                "mysql/postgres"
            ]
        );
        // completed/s is half of claimed/s in `trial`.
        assert_eq!(
            rows[0][..10],
            [
                "–",
                "production",
                "fetch-order",
                "16",
                "10",
                "2000",
                "500",
                "0.25",
                "1.00",
                "4.00"
            ]
        );
        assert_eq!(
            rows[1][5..8],
            ["3000", "–", "–"],
            "a cell one backend lacks"
        );
        // The same cell in another phase is another row, not folded into the first.
        let mut later = r.clone();
        for c in &mut later.cells {
            c.phase = "later".into();
        }
        let mut both = r.clone();
        both.cells.extend(later.cells);
        let (_, rows) = side_by_side(&RunView::of(&both)).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[0][0].as_str(), rows[2][0].as_str()), ("–", "later"));
        let target = |backend, settings: &[(&str, &str)]| crate::results::TargetRecord {
            backend,
            target: String::new(),
            embedded: false,
            session_settings: Vec::new(),
            standbys: Vec::new(),
            cluster: None,
            pooler: None,
            their_pooler: None,
            server: crate::backend::ServerInfo {
                version: String::new(),
                settings: settings
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
        };
        r.environment.targets = vec![
            target(
                BackendKind::Postgres,
                &[("fsync", "off"), ("work_mem", "4MB")],
            ),
            target(
                BackendKind::Mysql,
                &[
                    ("innodb_flush_log_at_trx_commit", "1"),
                    ("sync_binlog", "0"),
                ],
            ),
        ];
        let md = render(&r);
        assert!(md.contains("## Backends side by side"), "{md}");
        assert!(
            md.contains("depend on: postgres fsync=off; mysql innodb_flush_log_at_trx_commit=1 sync_binlog=0."),
            "{md}"
        );
        // Two backends that ran no cell in common (a table's block, a broker's block):
        // nothing to set side by side.
        let mut apart = r.clone();
        for c in apart
            .cells
            .iter_mut()
            .filter(|c| c.backend == BackendKind::Mysql)
        {
            c.phase = "elsewhere".into();
        }
        assert!(
            side_by_side(&RunView::of(&apart)).is_none(),
            "no cell in common"
        );
        r.cells.retain(|c| c.backend == BackendKind::Postgres);
        assert!(
            side_by_side(&RunView::of(&r)).is_none(),
            "one backend: no comparison"
        );
    }

    #[test]
    fn an_empty_cell_renders_dashes_not_a_panic() {
        let r = RunResult {
            workload: crate::results::WorkloadRecord::default(),
            cells: vec![CellResult {
                phase: String::new(),
                arrival_rate_per_s: None,
                arrival_rate_from: None,
                backend: BackendKind::Postgres,
                strategy: Strategy::PRODUCTION,
                index_layout: "pk-only".into(),
                workers: 1,
                batch_size: 1,
                session_settings: Vec::new(),
                server_settings: Vec::new(),
                pool_size: None,
                claim_only: None,
                storage: None,
                pair: None,
                server: None,
                trials: vec![TrialResult::default()],
            }],
            ..RunResult::default()
        };
        let md = render(&r);
        assert!(md.contains("| 0 | 0 | – | – | – |"), "{md}");
    }

    /// A server with a durability shortcut or standbys is named at the top of every
    /// format; one at production durability with none is not.
    #[test]
    fn servers_with_standbys_or_durability_off_are_named_at_the_top() {
        use crate::results::{ServerInfo, StandbyState, TargetRecord};
        let target = |settings: &[(&str, &str)], standbys: Vec<StandbyState>| TargetRecord {
            backend: BackendKind::Postgres,
            target: String::new(),
            embedded: true,
            session_settings: Vec::new(),
            standbys,
            cluster: None,
            pooler: None,
            their_pooler: None,
            server: ServerInfo {
                version: String::new(),
                settings: settings
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
        };
        let standby = StandbyState {
            name: "claimbench_standby".into(),
            state: "streaming".into(),
            sync_state: "sync".into(),
            replay_lag_ms: None,
            replay_behind_bytes: 0,
        };
        let mut r = RunResult::default();
        r.environment.targets = vec![target(
            &[
                ("fsync", "off"),
                ("synchronous_commit", "on"),
                ("full_page_writes", "off"),
            ],
            vec![standby],
        )];
        let notes = server_notes(&r);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(
            notes[0],
            (
                "Topology",
                "the postgres server was a primary streaming to claimbench_standby (sync, streaming).".to_string()
            )
        );
        assert_eq!(notes[1].0, "Durability");
        assert!(
            notes[1]
                .1
                .starts_with("the postgres server ran with fsync, full_page_writes off:"),
            "{}",
            notes[1].1
        );
        let md = render(&r);
        assert!(
            md.contains("**Durability**: the postgres server ran with fsync, full_page_writes off"),
            "{md}"
        );
        r.environment.targets = vec![target(
            &[
                ("fsync", "on"),
                ("synchronous_commit", "on"),
                ("full_page_writes", "on"),
            ],
            Vec::new(),
        )];
        assert!(server_notes(&r).is_empty());

        // The embedded MariaDB's shortcut, and production durability in one block.
        let mut mariadb = target(&[("innodb_flush_log_at_trx_commit", "2")], Vec::new());
        mariadb.backend = BackendKind::Mysql;
        r.environment.targets = vec![mariadb];
        r.cells = vec![CellResult {
            backend: BackendKind::Mysql,
            phase: "production".into(),
            server_settings: vec![("innodb_flush_log_at_trx_commit".into(), "1".into())],
            pool_size: None,
            ..CellResult::fetch_order(Strategy::PRODUCTION, 1, 1, Vec::new())
        }];
        let notes = server_notes(&r);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].1.starts_with(
                "the mysql server ran with innodb_flush_log_at_trx_commit = 2, except in production (durability = \"production\": innodb_flush_log_at_trx_commit = 1;"
            ) && !notes[0].1.contains("sync-commit"),
            "{}",
            notes[0].1
        );
        r.environment.targets[0].server.settings =
            vec![("innodb_flush_log_at_trx_commit".into(), "1".into())];
        assert!(server_notes(&r).is_empty());
    }
}
