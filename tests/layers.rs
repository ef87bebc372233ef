//! The house's layering, read from the source: which top-level module of `src/` names
//! which (`crate::x` in code and in `use` lines, `#[cfg(test)]` modules left out), and
//! whether any of them import each other round a circle. docs/architecture.md lists the
//! layers; this test keeps that list honest.
//!
//! One knot is left from before the layers were written down: `IN_A_CYCLE` names its
//! imports, one per line. The test fails when a new import joins a circle, and also when
//! a listed one no longer does, so the list only shrinks and stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The imports that still close a circle between top-level modules, each `from -> to`.
/// Untangling them (the serialised results and the validated workload as a vocabulary
/// at the bottom) is the rest of the work docs/architecture.md describes.
const IN_A_CYCLE: &[(&str, &str)] = &[
    ("analysis", "backend"),
    ("analysis", "results"),
    ("analysis", "strategy"),
    ("analysis", "workload"),
    ("backend", "custom_layout"),
    ("backend", "results"),
    ("backend", "strategy"),
    ("backend", "workload"),
    ("custom_layout", "strategy"),
    ("custom_layout", "workload"),
    ("results", "analysis"),
    ("results", "backend"),
    ("results", "custom_layout"),
    ("results", "strategy"),
    ("strategy", "workload"),
    ("workload", "analysis"),
    ("workload", "custom_layout"),
    ("workload", "strategy"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module paths `text` names after `crate::`, first segment only, with the
/// segments of a `crate::{a, b::c}` group each counted.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        out.insert(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// Edges between top-level modules of `src/`, from production code only.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let top = |p: &Path| -> String {
        let rel = p.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|f| top(f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = top(f);
        if matches!(from.as_str(), "lib" | "main") || f.file_name().unwrap() == "tests.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        for to in named_modules(text) {
            if to != from && modules.contains(&to) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

/// The edges that lie on a cycle: `a -> b` where `b` reaches `a` back.
fn cycle_edges(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<(String, String)> {
    let reaches = |from: &str, to: &str| -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if seen.insert(n.clone()) {
                stack.extend(graph.get(&n).into_iter().flatten().cloned());
            }
        }
        false
    };
    let mut out = BTreeSet::new();
    for (a, tos) in graph {
        for b in tos {
            if reaches(b, a) {
                out.insert((a.clone(), b.clone()));
            }
        }
    }
    out
}

#[test]
fn no_new_import_closes_a_circle_and_the_listed_ones_are_still_there() {
    let found = cycle_edges(&edges());
    let known: BTreeSet<(String, String)> = IN_A_CYCLE
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "these imports close a circle between modules of src/ (see docs/architecture.md for the layers): {new:?}"
    );
    assert!(
        gone.is_empty(),
        "these imports no longer close a circle: remove them from IN_A_CYCLE in tests/layers.rs: {gone:?}"
    );
}

#[test]
fn the_reader_sees_grouped_and_nested_imports() {
    let m = named_modules(
        "use crate::{a::X, b, c::{d, e}};\nfn f() { crate::g::h(); }\nuse crate::{\n    i,\n};",
    );
    let want: BTreeSet<String> = ["a", "b", "c", "g", "i"].map(String::from).into();
    assert_eq!(m, want);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("x".into()).or_default().insert("y".into());
    g.entry("y".into()).or_default().insert("x".into());
    g.entry("y".into()).or_default().insert("z".into());
    let c = cycle_edges(&g);
    assert_eq!(
        c,
        [("x", "y"), ("y", "x")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .into()
    );
}
