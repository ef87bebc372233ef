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
        "invalid",
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
    &["strategy", "custom_layout", "declared_table"],
    // the on-disk seam
    &["results"],
    // input
    &["workload"],
    // the databases
    &["backend", "capture"],
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

/// Production code of `f`: its text before a `#[cfg(test)] mod tests`, without comment
/// lines (a doc link names a module without depending on it).
fn production_text(f: &Path) -> String {
    let text = std::fs::read_to_string(f).unwrap();
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A folder's `mod.rs` as a node of its folder's graph.
const ROOT: &str = "mod.rs";

/// What a folder's `mod.rs` takes from a sibling by a `use` line (`use x::A;`,
/// `pub use x::{A, B};`): a sibling naming `super::A` depends on `x`, not on `mod.rs`.
fn imported_by_root(
    root: &str,
    siblings: &BTreeMap<String, Vec<PathBuf>>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in root.lines().map(str::trim_start) {
        let Some(rest) = line
            .split_once("use ")
            .filter(|(vis, _)| vis.is_empty() || vis.starts_with("pub"))
            .map(|(_, r)| r)
        else {
            continue;
        };
        let rest = rest.trim_start_matches("self::");
        let Some((x, items)) = rest.split_once("::") else {
            continue;
        };
        if !siblings.contains_key(x) {
            continue;
        }
        let items = items
            .trim_end_matches(';')
            .trim_start_matches('{')
            .trim_end_matches('}');
        for item in items.split(',') {
            // `a::B` names B; `B as C` names C.
            let item = item.trim().rsplit("::").next().unwrap_or("");
            let name = item.rsplit(" as ").next().unwrap_or("").trim();
            if !name.is_empty() && name != "*" {
                out.insert(name.to_string(), x.to_string());
            }
        }
    }
    out
}

/// Inside each folder of `src/`: which sibling module (a file, a subfolder, or the
/// folder's own `mod.rs`) names which. A sibling names another through `super::x` (from a
/// subfolder's own files, `super::super::x`) or `crate::<folder>::x`, and `mod.rs`
/// through `super::A` for an item A defined there, or through `super::*`; an item
/// `mod.rs` takes from a sibling by `use` counts as that sibling's. `mod.rs` names a
/// sibling by any path `x::` outside its `mod x;` lines and its `pub use` re-exports.
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
    let root_file = dir.join("mod.rs");
    let root = match root_file.exists() {
        true => production_text(&root_file),
        false => String::new(),
    };
    let through_root = imported_by_root(&root, &siblings);
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
            let glob = text.contains(&format!("{up}*")) || text.contains(&format!("{up}{{*"));
            let mut to_root = glob && root_file.exists();
            for to in named {
                let to = match (siblings.contains_key(&to), through_root.get(&to)) {
                    (true, _) => to,
                    (false, Some(x)) => x.clone(),
                    // An item of mod.rs (a type, a function, a constant).
                    (false, None)
                        if root_file.exists()
                            && to.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) =>
                    {
                        to_root = true;
                        continue;
                    }
                    (false, None) => continue,
                };
                if &to != from {
                    graph.entry(from.clone()).or_default().insert(to);
                }
            }
            if to_root {
                graph
                    .entry(from.clone())
                    .or_default()
                    .insert(ROOT.to_string());
            }
        }
    }
    // mod.rs's own code, without its `mod x;` declarations and re-exports.
    let code: String = root
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            !(l.starts_with("mod ")
                || l.starts_with("pub mod ")
                || l.starts_with("pub(crate) mod ")
                || l.starts_with("pub use ")
                || l.starts_with("pub(crate) use ")
                || l.starts_with("pub(super) use "))
        })
        .collect::<Vec<_>>()
        .join("\n");
    for x in siblings.keys() {
        let named = code.match_indices(&format!("{x}::")).any(|(at, _)| {
            !code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                || code[..at].ends_with("self::")
        });
        if named {
            graph.entry(ROOT.to_string()).or_default().insert(x.clone());
        }
    }
    graph
}

/// Folders whose `mod.rs` still closes a circle with a file of its own (it defines what
/// its files use and uses what they define). Each is checked without its `mod.rs`
/// instead; the list may only shrink: a folder that no longer circles must leave it.
const CIRCLING_THROUGH_MOD_RS: &[&str] = &[
    "backend",
    "backend/mysql",
    "runner",
    "runner/trial",
    "strategy",
    "strategy/custom",
    "workload",
];

#[test]
fn no_import_closes_a_circle_inside_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src.clone()];
    let (mut found, mut cleared) = (Vec::new(), Vec::new());
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
        let rel = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let mut graph = folder_edges(&dir, &src);
        if CIRCLING_THROUGH_MOD_RS.contains(&rel.as_str()) {
            if cycle_edges(&graph).is_empty() {
                cleared.push(rel.clone());
            }
            graph.remove(ROOT);
            graph.values_mut().for_each(|tos| {
                tos.remove(ROOT);
            });
        }
        for (a, b) in cycle_edges(&graph) {
            found.push(format!("{rel}: {a} -> {b}"));
        }
    }
    assert!(
        found.is_empty(),
        "these imports close a circle inside a folder of src/: {found:?}"
    );
    assert!(
        cleared.is_empty(),
        "no circle through mod.rs is left in {cleared:?}: take them off CIRCLING_THROUGH_MOD_RS"
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

#[test]
fn the_folder_reader_sees_mod_rs_and_glob_imports() {
    let src = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
    let dir = src.join("f");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    // mod.rs uses `a`; `a` takes everything of mod.rs by glob: a circle through mod.rs.
    // `b` names an item mod.rs re-exports from `c`: an edge to `c`, not to mod.rs.
    write(
        "mod.rs",
        "mod a;\nmod b;\nmod c;\npub use c::Thing;\nfn f() { a::g(); }\n",
    );
    write("a.rs", "use super::*;\npub fn g() {}\n");
    write(
        "b.rs",
        "// super::a is only named in a comment\nfn h(_: super::Thing) {}\n",
    );
    write("c.rs", "pub struct Thing;\n");
    let graph = folder_edges(&dir, &src);
    std::fs::remove_dir_all(&src).unwrap();
    let edge = |a: &str, b: &str| graph.get(a).is_some_and(|t| t.contains(b));
    assert!(edge(ROOT, "a") && edge("a", ROOT), "{graph:?}");
    assert!(
        edge("b", "c") && !edge("b", ROOT) && !edge("b", "a"),
        "{graph:?}"
    );
    assert!(
        !edge(ROOT, "c"),
        "a re-export is not mod.rs's own use: {graph:?}"
    );
    assert_eq!(
        cycle_edges(&graph),
        [(ROOT, "a"), ("a", ROOT)]
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .into()
    );
}

/// A file over this many lines holds more than one concept; split it by concern.
const MAX_FILE_LINES: usize = 1000;

#[test]
fn no_file_in_src_is_over_a_thousand_lines() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("{} ({n} lines)", f.display()))
        .collect();
    assert!(long.is_empty(), "split these by concern: {long:?}");
}
