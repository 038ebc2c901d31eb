//! The window's code keeps the shape its design asks for: one owner per feature, no
//! file too long to read, and no import circle through the window (issue: redesign).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The Rust files under `dir`, with their paths relative to it.
fn rust_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), text));
            }
        }
    }
    out.sort();
    out
}

fn app_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_window_is_owned_in_at_most_two_files() {
    let owners: Vec<PathBuf> = rust_files(&app_src())
        .into_iter()
        .filter(|(_, text)| text.lines().any(|l| l.starts_with("impl FlintApp")))
        .map(|(path, _)| path)
        .collect();
    assert!(owners.len() <= 2, "impl FlintApp in {owners:?}");
}

#[test]
fn no_file_of_the_binary_is_over_800_lines() {
    let long: Vec<(PathBuf, usize)> = rust_files(&app_src())
        .into_iter()
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|&(_, n)| n > 800)
        .collect();
    assert!(long.is_empty(), "{long:?}");
}

/// The module path (`time::plot`) of a file under app/src/gui.
fn module_of(path: &Path) -> String {
    let mut parts: Vec<String> = path
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The window's modules each imports (`crate::gui::…` paths, outside comments and
/// tests), by the longest module prefix of each path.
fn imports(files: &[(PathBuf, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().map(|(p, _)| module_of(p)).collect();
    let resolve = |path: &str| {
        let parts: Vec<&str> = path.split("::").collect();
        (0..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| modules.contains(m))
    };
    let mut graph = BTreeMap::new();
    for (path, text) in files {
        let from = module_of(path);
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut to = BTreeSet::new();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            for (at, _) in line.match_indices("crate::gui::") {
                let rest = &line[at + "crate::gui::".len()..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(rest.len());
                let base = rest[..end].trim_end_matches(':');
                let mut targets = vec![base.to_string()];
                if rest[end..].starts_with('{') {
                    let group =
                        &rest[end + 1..rest[end..].find('}').map_or(rest.len(), |e| end + e)];
                    targets = group
                        .split(',')
                        .map(|t| t.trim().split(' ').next().unwrap_or(""))
                        .filter(|t| !t.is_empty() && *t != "self")
                        .map(|t| match base {
                            "" => t.to_string(),
                            _ => format!("{base}::{t}"),
                        })
                        .collect();
                    targets.push(base.to_string());
                }
                for t in targets {
                    if let Some(m) = resolve(&t).filter(|m| *m != from && !m.is_empty()) {
                        to.insert(m);
                    }
                }
            }
        }
        graph.insert(from, to);
    }
    graph
}

/// The longest simple cycle of `graph` (its modules in order), by a bounded search.
fn longest_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        path: &mut Vec<String>,
        best: &mut Vec<String>,
    ) {
        let Some(last) = path.last().cloned() else {
            return;
        };
        for next in graph.get(&last).into_iter().flatten() {
            if next == start && path.len() > best.len() {
                *best = path.clone();
            } else if next.as_str() > start && !path.contains(next) && path.len() < 12 {
                path.push(next.clone());
                walk(graph, start, path, best);
                path.pop();
            }
        }
    }
    let mut best = Vec::new();
    for start in graph.keys() {
        walk(graph, start, &mut vec![start.clone()], &mut best);
    }
    best
}

#[test]
fn the_window_has_no_import_circle_of_more_than_three_files() {
    let files: Vec<(PathBuf, String)> = rust_files(&app_src().join("gui"))
        .into_iter()
        .filter(|(p, _)| !p.starts_with("tests"))
        .collect();
    let graph = imports(&files);
    let cycle = longest_cycle(&graph);
    assert!(cycle.len() <= 3, "import circle: {}", cycle.join(" → "));
}

#[test]
fn the_import_scan_finds_a_circle_it_is_given() {
    let file = |name: &str, text: &str| (PathBuf::from(name), text.to_string());
    let files = [
        file("a.rs", "use crate::gui::b::B;"),
        file("b.rs", "use crate::gui::{c::C, d};"),
        file("c.rs", "fn f() { crate::gui::d::g() }"),
        file("d/mod.rs", "use crate::gui::a::A; // crate::gui::c"),
    ];
    let cycle = longest_cycle(&imports(&files));
    assert_eq!(cycle, ["a", "b", "c", "d"]);
}
