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

/// The paths the layout block of docs/architecture.md names under `src/`: `a/{b,c/{d}}`
/// is `a/b` and `a/c/d`, a note in parentheses is skipped, and `a/` alone names a folder
/// without its files.
fn layout_paths(block: &str) -> std::collections::BTreeSet<String> {
    // Notes first: "(the backend)", "(prepared or unnamed)", nested ones too.
    let mut plain = String::new();
    let mut depth = 0;
    for c in block.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    let mut prefixes: Vec<String> = Vec::new();
    let chars: Vec<char> = plain.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let path = format!("{}{name}", prefixes.concat());
            match (chars.get(i), chars.get(i + 1)) {
                (Some('/'), Some('{')) => {
                    prefixes.push(format!("{name}/"));
                    i += 2;
                }
                (Some('/'), _) => {
                    out.insert(format!("{path}/"));
                    i += 1;
                }
                _ => {
                    out.insert(path);
                }
            }
        } else {
            if c == '}' {
                prefixes.pop();
            }
            i += 1;
        }
    }
    out
}

/// docs/architecture.md's layout block names every file of `src/` (a module's `mod.rs`
/// as its folder's `mod`; unit-test files apart), so a reader finds each file's place
/// and a new file cannot go unlisted.
#[test]
fn the_architecture_layout_names_every_source_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let start = doc
        .find("```\nsrc/")
        .expect("the layout block starts with src/")
        + 8;
    let end = start + doc[start..].find("\nmigrations/").unwrap();
    let named = layout_paths(&doc[start..end]);
    let mut files = Vec::new();
    let mut dirs = vec![root.join("src")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            match p.is_dir() {
                true => dirs.push(p),
                false if p.extension().is_some_and(|x| x == "rs") => files.push(p),
                false => {}
            }
        }
    }
    let missing: Vec<String> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(root.join("src")).unwrap();
            rel.with_extension("").to_string_lossy().to_string()
        })
        .filter(|rel| !matches!(rel.as_str(), "lib") && !rel.ends_with("/tests"))
        .filter(|rel| !named.contains(rel))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md's layout block does not name {missing:?}"
    );
}

/// The dependencies the dev profile optimises are the ones docs/testing.md lists: one of
/// them dropped from Cargo.toml in a merge made every test that reports 1 s slower, and
/// nothing failed.
#[test]
fn the_dev_profiles_optimised_crates_are_the_ones_docs_testing_lists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let mut optimised: Vec<&str> = manifest["profile"]["dev"]["package"]
        .as_table()
        .expect("[profile.dev.package]")
        .iter()
        .filter(|(name, t)| *name != "*" && t.get("opt-level").is_some())
        .map(|(name, _)| name.as_str())
        .collect();
    optimised.sort_unstable();
    let doc = std::fs::read_to_string(root.join("docs/testing.md")).unwrap();
    let start = doc
        .find("only those the tests lean on:")
        .expect("docs/testing.md no longer lists the optimised crates where this test reads");
    let list = &doc[start..start + doc[start..].find(';').unwrap()];
    let mut listed: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    listed.sort_unstable();
    assert_eq!(
        optimised, listed,
        "Cargo.toml's [profile.dev.package] and docs/testing.md"
    );
}
