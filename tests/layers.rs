//! The house's layering, read from the source: which top-level module of `src/` names
//! which (`crate::x` in code and in `use` lines, `#[cfg(test)]` modules left out), and
//! whether each import goes down the layers docs/architecture.md lists (here as
//! [`LAYERS`]) and none closes a circle; inside each folder, no circle between its
//! files either (`super::x`, `crate::folder::x`). The test keeps that list honest: a module added
//! to `src/` must be given a layer here and in the doc.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of `src/` by layer, bottom first, as docs/architecture.md
/// lists them. A module may import its own layer (without a circle) and those below.
const LAYERS: &[&[&str]] = &[
    // vocabulary and measurement data
    &[
        "backend_kind",
        "names",
        "statements",
        "markdown",
        "redact",
        "input_file",
        "privileged_sql",
        "metric",
        "slo",
        "session_settings",
        "model",
        "metrics",
        "ledger",
        "resources",
        "warnings",
        "embedded",
        "netdelay",
        "pooler",
        "parallel",
    ],
    // what a workload names
    &["strategy", "custom_layout"],
    // the on-disk seam
    &["results"],
    // input
    &["workload"],
    // the databases
    &["backend"],
    // answers from results
    &["analysis"],
    // running
    &["runner", "prove"],
    // rendering
    &["report"],
    // the command line
    &["commands", "cli"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

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
    named_after(text, "crate::")
}

/// [`named_modules`] after any path prefix (`super::`, `crate::report::`).
fn named_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in text.match_indices(prefix) {
        // `xsuper::` or `a::crate::` is not the prefix.
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let rest = &text[at + prefix.len()..];
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

/// Every `.rs` file of `src/` with the top-level module it belongs to.
fn files_by_module() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap();
            let first = rel.components().next().unwrap().as_os_str();
            let module = first.to_string_lossy().trim_end_matches(".rs").to_string();
            (f, module)
        })
        .collect()
}

/// Edges between top-level modules of `src/`, from production code only.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let files = files_by_module();
    let modules: BTreeSet<String> = files.iter().map(|(_, m)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (f, from) in &files {
        let from = from.clone();
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
fn no_import_closes_a_circle_between_modules() {
    let found = cycle_edges(&edges());
    assert!(
        found.is_empty(),
        "these imports close a circle between modules of src/ (docs/architecture.md lists the layers and what each may import): {found:?}"
    );
}

/// Production code of `f`: its text before a `#[cfg(test)] mod tests`.
fn production_text(f: &Path) -> String {
    let text = std::fs::read_to_string(f).unwrap();
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Inside each folder of `src/`: which sibling module (a file, or a subfolder) names
/// which, through `super::x` (from a subfolder's own files, `super::super::x`) or
/// `crate::<folder>::x`. `mod.rs` is the folder itself, not a sibling.
fn folder_edges(dir: &Path, src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    // A module may be a file and a folder of its own at once (`plots.rs`, `plots/`).
    let mut siblings: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let file = path.extension().is_some_and(|e| e == "rs") && name != "mod";
        if path.is_dir() || file {
            siblings.entry(name).or_default().push(path);
        }
    }
    let rel = dir.strip_prefix(src).unwrap();
    let crate_path: String = rel
        .components()
        .map(|c| format!("{}::", c.as_os_str().to_string_lossy()))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, paths) in &siblings {
        // A file and what it names; a subfolder, each of its files one level down.
        let mut texts = Vec::new();
        for path in paths {
            if path.is_dir() {
                let mut files = Vec::new();
                rust_files(path, &mut files);
                for f in files {
                    let depth = f.strip_prefix(path).unwrap().components().count();
                    let up = match f.file_name().unwrap() == "mod.rs" {
                        true => depth - 1,
                        false => depth,
                    };
                    texts.push((production_text(&f), "super::".repeat(up + 1)));
                }
            } else {
                texts.push((production_text(path), "super::".to_string()));
            }
        }
        for (text, up) in texts {
            let mut named = named_after(&text, &up);
            if !crate_path.is_empty() {
                named.extend(named_after(&text, &format!("crate::{crate_path}")));
            }
            for to in named {
                if &to != from && siblings.contains_key(&to) {
                    graph.entry(from.clone()).or_default().insert(to);
                }
            }
        }
    }
    graph
}

#[test]
fn no_import_closes_a_circle_inside_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src.clone()];
    let mut found = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            }
        }
        if dir == src {
            continue; // the top level: the layers test above
        }
        for (a, b) in cycle_edges(&folder_edges(&dir, &src)) {
            found.push(format!(
                "{}: {a} -> {b}",
                dir.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "these imports close a circle inside a folder of src/: {found:?}"
    );
}

#[test]
fn every_module_has_a_layer_and_imports_only_its_own_or_lower() {
    let graph = edges();
    let unplaced: BTreeSet<String> = files_by_module()
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| !matches!(m.as_str(), "lib" | "main") && layer(m).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "give these modules a layer in LAYERS and in docs/architecture.md: {unplaced:?}"
    );
    let upward: Vec<String> = graph
        .iter()
        .flat_map(|(from, tos)| tos.iter().map(move |to| (from, to)))
        .filter(|(from, to)| layer(to) > layer(from))
        .map(|(from, to)| format!("{from} -> {to}"))
        .collect();
    assert!(
        upward.is_empty(),
        "these imports go up the layers of docs/architecture.md: {upward:?}"
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
