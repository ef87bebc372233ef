//! The reference pages a user reads, checked against the code they describe, so they
//! cannot drift: every field the workload parser accepts is in docs/workload.md.

use claimbench::workload::Workload;
use std::path::Path;

/// Each table of the workload format, as a snippet that puts an unknown key in it: the
/// parser refuses it and lists the keys that table accepts.
const TABLES: &[(&str, &str)] = &[
    ("the top level", "bogus_key = 1"),
    ("[population]", "[population]\nbogus_key = 1"),
    (
        "population.history",
        "[population]\nhistory = { bogus_key = 1 }",
    ),
    (
        "population.queues[]",
        "[population]\nqueues = [{ name = \"a\", bogus_key = 1 }]",
    ),
    (
        "population.priorities[]",
        "[population]\npriorities = [{ value = 0, bogus_key = 1 }]",
    ),
    ("[producers]", "[producers]\nbogus_key = 1"),
    ("[handler]", "[handler]\nbogus_key = 1"),
    ("[worker]", "[worker]\nbogus_key = 1"),
    ("[faults]", "[faults]\nbogus_key = 1"),
    ("[[matrix]]", "[[matrix]]\nbogus_key = 1"),
    (
        "matrix.shard_moves",
        "[[matrix]]\nshard_moves = { bogus_key = 1 }",
    ),
    (
        "matrix.arrival_rate_from",
        "[[matrix]]\narrival_rate_from = { bogus_key = 1 }",
    ),
    ("matrix.search", "[[matrix]]\nsearch = { bogus_key = 1 }"),
    (
        "matrix.timeline[]",
        "[[matrix]]\n[[matrix.timeline]]\nbogus_key = 1",
    ),
    ("[[gate]]", "[[gate]]\nbogus_key = 1"),
    ("[trial]", "[trial]\nbogus_key = 1"),
    ("[embedded]", "[embedded]\nbogus_key = 1"),
    ("[topology]", "[topology]\nbogus_key = 1"),
    ("[mssql]", "[mssql]\nbogus_key = 1"),
    ("[strategies.<name>]", "[strategies.mine]\nbogus_key = 1"),
    ("[layouts.<name>]", "[layouts.mine]\nbogus_key = 1"),
];

/// The keys the parser's refusal of `bogus_key` lists as accepted.
fn accepted_keys(table: &str, snippet: &str) -> Vec<String> {
    // The tables a workload needs, where the snippet does not bring its own.
    let mut text = format!("name = \"docs\"\n{snippet}\n");
    for (table, body) in [
        ("[population]", "backlog = 0\nqueues = [{ name = \"a\" }]"),
        ("[trial]", "duration_s = 1"),
    ] {
        if !snippet.contains(table) {
            text.push_str(&format!("{table}\n{body}\n"));
        }
    }
    let err = match Workload::parse(Path::new("docs.toml"), &text) {
        Ok(_) => panic!("{table}: an unknown key was accepted"),
        Err(e) => e.to_string(),
    };
    let (_, listed) = err
        .split_once("expected one of ")
        .or_else(|| err.split_once("expected "))
        .unwrap_or_else(|| panic!("{table}: no accepted keys in `{err}`"));
    let keys: Vec<String> = listed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(!keys.is_empty(), "{table}: no accepted keys in `{err}`");
    keys
}

#[test]
fn every_workload_key_the_parser_accepts_is_in_the_workload_reference() {
    let doc = std::fs::read_to_string("docs/workload.md").unwrap();
    let documented = |key: &str| {
        [
            format!("{key} ="),
            format!("`{key}`"),
            format!(".{key}"),
            format!("[{key}]"),
            format!("[[{key}]]"),
            format!("[{key}."),
        ]
        .iter()
        .any(|form| doc.contains(form.as_str()))
    };
    let mut missing = Vec::new();
    for (table, snippet) in TABLES {
        for key in accepted_keys(table, snippet) {
            if !documented(&key) {
                missing.push(format!("{table}: {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/workload.md does not describe these keys: {missing:?}"
    );
}
