//! A function's source with flat and cum per line, as `go tool pprof -list` shows it,
//! and pprof's rules for finding a source file (`-source_path`, `-trim_path`). The
//! files themselves are read by the caller, through the function it passes in.

use std::collections::BTreeMap;
use std::io;

use rustc_hash::FxHashMap;

use crate::frames::{FrameId, FrameTable};
use crate::names::clean_path;
use crate::top::Top;

/// Lines shown before the first and after the last line with samples.
const MARGIN: i64 = 5;

/// Where source files are looked for, as pprof's `-source_path` and `-trim_path`.
#[derive(Debug, Clone, Default)]
pub struct SourcePaths {
    /// `-source_path` as given (`:`-separated folders), empty when not given.
    pub source_path: String,
    /// `-trim_path` (`:`-separated prefixes), empty when not given.
    pub trim_path: String,
    /// The folders searched: `source_path`, or the current folder when it is empty.
    pub search_path: String,
}

/// One function of a listing: its source files, none when the profile has no file
/// for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routine {
    /// The function's name.
    pub function: String,
    /// Each of its source files, by path.
    pub files: Vec<RoutineFile>,
}

/// A function's lines in one source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutineFile {
    /// The file's path as the profile names it, trimmed as pprof trims it.
    pub path: String,
    /// The function's flat in this file: the sum of its lines'.
    pub flat: i64,
    /// The sum of its lines' cum.
    pub cum: i64,
    /// The lines around those with samples, or why the file could not be read.
    pub lines: Result<Vec<SourceLine>, String>,
}

/// One line of source with its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// 1-based line number.
    pub number: i64,
    /// Flat of the line (0 for none).
    pub flat: i64,
    /// Cum of the line (0 for none).
    pub cum: i64,
    /// The line's text, without its line ending.
    pub text: String,
}

/// The listing of every function whose name `chosen` picks, by name, from `top` (a top
/// table at line granularity over `frames`). Each file is read once with `read` (given
/// its path as [`RoutineFile::path`]; see [`find_source`]), which returns its bytes or
/// why it could not.
pub fn source_listing(
    frames: &FrameTable,
    top: &Top,
    chosen: impl Fn(&str) -> bool,
    paths: &SourcePaths,
    mut read: impl FnMut(&str) -> Result<Vec<u8>, String>,
) -> Vec<Routine> {
    // Per function, per file (trimmed and cleaned as pprof's nodes are), its rows.
    let mut functions: BTreeMap<&str, BTreeMap<String, Vec<FrameId>>> = BTreeMap::new();
    let mut values: FxHashMap<FrameId, (i64, i64)> = FxHashMap::default();
    for row in &top.rows {
        let frame = frames.get(row.frame);
        if !chosen(&frame.function) {
            continue;
        }
        values.insert(row.frame, (row.flat, row.cum));
        let files = functions.entry(&frame.function).or_default();
        if frame.file.is_empty() {
            continue;
        }
        let path = trim_path(&frame.file, &paths.trim_path, &paths.source_path);
        let path = clean_path(path).into_owned();
        files.entry(path).or_default().push(row.frame);
    }
    let mut sources: FxHashMap<String, Result<Vec<String>, String>> = FxHashMap::default();
    let value = |f: &FrameId| values.get(f).copied().unwrap_or((0, 0));
    functions
        .into_iter()
        .map(|(function, files)| Routine {
            function: function.to_string(),
            files: files
                .into_iter()
                .map(|(path, rows)| {
                    let source = sources
                        .entry(path.clone())
                        .or_insert_with(|| read(&path).map(|bytes| split_lines(&bytes)));
                    let (flat, cum) = rows.iter().map(value).fold((0i64, 0i64), |s, v| {
                        (s.0.wrapping_add(v.0), s.1.wrapping_add(v.1))
                    });
                    let lines = match source {
                        Ok(text) => Ok(lines_around(frames, &rows, value, text)),
                        Err(e) => Err(e.clone()),
                    };
                    RoutineFile {
                        path,
                        flat,
                        cum,
                        lines,
                    }
                })
                .collect(),
        })
        .collect()
}

/// The lines pprof shows of one file: from the function's first line (or five before
/// the first line with samples) to five after the last, as far as the file goes.
/// pprof starts from whichever row it meets first; here, the first of the top table.
fn lines_around(
    frames: &FrameTable,
    rows: &[FrameId],
    value: impl Fn(&FrameId) -> (i64, i64),
    text: &[String],
) -> Vec<SourceLine> {
    let span = |f: FrameId| {
        let frame = frames.get(f);
        let start = if frame.start_line != 0 {
            frame.start_line
        } else {
            frame.line - MARGIN
        };
        (start, frame.line.saturating_add(MARGIN))
    };
    let Some(&first) = rows.first() else {
        return Vec::new();
    };
    let (mut start, mut end) = span(first);
    let mut by_line: FxHashMap<i64, (i64, i64)> = FxHashMap::default();
    for &f in rows {
        let (s, e) = span(f);
        // As pprof: a row that moves the start does not move the end.
        if s < start {
            start = s;
        } else if e > end {
            end = e;
        }
        let (flat, cum) = value(&f);
        let at = by_line.entry(frames.get(f).line).or_default();
        *at = (at.0.wrapping_add(flat), at.1.wrapping_add(cum));
    }
    (start.max(1)..=end)
        .map_while(|number| {
            let line = text.get(usize::try_from(number - 1).ok()?)?;
            let (flat, cum) = by_line.get(&number).copied().unwrap_or((0, 0));
            Some(SourceLine {
                number,
                flat,
                cum,
                text: line.clone(),
            })
        })
        .collect()
}

/// A file's lines as Go's `bufio.Scanner` splits them: at `\n`, a `\r` before it
/// dropped, no empty last line; bytes that are not UTF-8 replaced.
fn split_lines(bytes: &[u8]) -> Vec<String> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    body.split(|&b| b == b'\n')
        .map(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            String::from_utf8_lossy(line).into_owned()
        })
        .collect()
}

/// `path` as pprof's `trimPath` leaves it: without the first of `trim`'s prefixes it
/// starts with (or `/proc/self/cwd/`); with no `trim`, cut after the first
/// `/BASE/` in it, BASE being the last element of a folder of `search_path`.
pub fn trim_path<'p>(path: &'p str, trim: &str, search_path: &str) -> &'p str {
    if trim.is_empty() {
        for dir in split_list(search_path) {
            let want = format!("/{}/", base(dir));
            if let Some(found) = path.find(&want) {
                return &path[found + want.len()..];
            }
        }
    }
    let defaults = ["/proc/self/cwd/./", "/proc/self/cwd/"];
    let prefixes = split_list(trim).chain(defaults);
    for prefix in prefixes {
        let prefix = if prefix.ends_with('/') {
            prefix.to_string()
        } else {
            format!("{prefix}/")
        };
        if let Some(rest) = path.strip_prefix(&prefix) {
            return rest;
        }
    }
    path
}

/// Finds and reads the source file a profile names `path` as pprof does: trimmed
/// ([`trim_path`]); an absolute path as it is; a relative one under each folder of
/// `search_path` and each of its parents, the first that opens. `read` reads one
/// file; a folder opens (as in Go) and lists no lines. The error is pprof's.
pub fn find_source(
    path: &str,
    paths: &SourcePaths,
    mut read: impl FnMut(&str) -> io::Result<Vec<u8>>,
) -> Result<Vec<u8>, String> {
    let mut open = |p: &str| match read(p) {
        Err(e) if e.kind() == io::ErrorKind::IsADirectory => Ok(Vec::new()),
        other => other,
    };
    let path = trim_path(path, &paths.trim_path, &paths.search_path);
    if path.starts_with('/') {
        return open(path).map_err(|e| format!("open {path}: {}", go_error_text(&e)));
    }
    for dir in split_list(&paths.search_path) {
        let mut dir = dir.to_string();
        loop {
            if let Ok(bytes) = open(&join(&dir, path)) {
                return Ok(bytes);
            }
            let parent = parent_dir(&dir);
            if parent == dir {
                break;
            }
            dir = parent;
        }
    }
    Err(format!(
        "could not find file {path} on path {}",
        paths.search_path
    ))
}

/// An I/O error as Go prints the system's message: `no such file or directory`.
fn go_error_text(e: &io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error ") {
        Some(at) => &text[..at],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Go's `filepath.SplitList`: `:`-separated, nothing for an empty list.
fn split_list(list: &str) -> impl Iterator<Item = &str> {
    (!list.is_empty())
        .then(|| list.split(':'))
        .into_iter()
        .flatten()
}

/// Go's `filepath.Base`.
fn base(path: &str) -> &str {
    if path.is_empty() {
        return ".";
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/";
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// Go's `filepath.Join` of two elements.
fn join(dir: &str, path: &str) -> String {
    match (dir.is_empty(), path.is_empty()) {
        (true, true) => String::new(),
        (true, false) => clean_path(path).into_owned(),
        (false, true) => clean_path(dir).into_owned(),
        (false, false) => clean_path(&format!("{dir}/{path}")).into_owned(),
    }
}

/// Go's `filepath.Dir`.
fn parent_dir(path: &str) -> String {
    let dir = match path.rfind('/') {
        Some(at) => &path[..=at],
        None => "",
    };
    let cleaned = clean_path(dir);
    if cleaned.is_empty() {
        ".".to_string()
    } else {
        cleaned.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_follows_pprof() {
        // Without -trim_path: cut after the search folder's last element.
        assert_eq!(
            trim_path("/build/src/proj/pkg/a.go", "", "/home/me/proj"),
            "pkg/a.go"
        );
        // With it: the first prefix the path starts with, a slash added.
        assert_eq!(
            trim_path("/build/src/proj/pkg/a.go", "/x:/build/src", "/home/me/proj"),
            "proj/pkg/a.go"
        );
        assert_eq!(trim_path("/proc/self/cwd/./a.go", "", ""), "a.go");
        assert_eq!(
            trim_path("/elsewhere/a.go", "/build", ""),
            "/elsewhere/a.go"
        );
    }

    #[test]
    fn go_paths_join_and_climb_as_go_does() {
        assert_eq!(join("/a/b", "c/d.go"), "/a/b/c/d.go");
        assert_eq!(join("", "c/./d.go"), "c/d.go");
        assert_eq!(parent_dir("/a/b"), "/a");
        assert_eq!(parent_dir("/a"), "/");
        assert_eq!(parent_dir("/"), "/");
        assert_eq!(parent_dir("a"), ".");
        assert_eq!(parent_dir("."), ".");
        assert_eq!(base("/a/b/"), "b");
        assert_eq!(split_list("").count(), 0);
        assert_eq!(split_list("a::b").collect::<Vec<_>>(), ["a", "", "b"]);
    }

    #[test]
    fn a_relative_path_is_searched_up_the_parents() {
        let paths = SourcePaths {
            search_path: "/w/x/y".into(),
            ..SourcePaths::default()
        };
        let mut tried = Vec::new();
        let found = find_source("pkg/a.go", &paths, |p| {
            tried.push(p.to_string());
            if p == "/w/pkg/a.go" {
                Ok(b"package a\n".to_vec())
            } else {
                Err(io::Error::from(io::ErrorKind::NotFound))
            }
        });
        assert_eq!(found, Ok(b"package a\n".to_vec()));
        assert_eq!(tried, ["/w/x/y/pkg/a.go", "/w/x/pkg/a.go", "/w/pkg/a.go"]);
        let missing = find_source("pkg/b.go", &paths, |_| {
            Err(io::Error::from(io::ErrorKind::NotFound))
        });
        assert_eq!(
            missing,
            Err("could not find file pkg/b.go on path /w/x/y".to_string())
        );
    }

    #[test]
    fn an_absolute_path_is_opened_as_it_is_with_gos_message() {
        let paths = SourcePaths {
            search_path: "/w".into(),
            ..SourcePaths::default()
        };
        let missing = find_source("/src/a.go", &paths, |_| {
            Err(io::Error::from_raw_os_error(2))
        });
        assert_eq!(
            missing,
            Err("open /src/a.go: no such file or directory".to_string())
        );
        let folder = find_source("/src", &paths, |_| {
            Err(io::Error::from(io::ErrorKind::IsADirectory))
        });
        assert_eq!(folder, Ok(Vec::new()));
    }

    #[test]
    fn lines_split_as_gos_scanner_splits_them() {
        assert_eq!(split_lines(b"a\r\nb\n"), ["a", "b"]);
        assert_eq!(split_lines(b"a\n\nb"), ["a", "", "b"]);
        assert!(split_lines(b"").is_empty());
        assert_eq!(split_lines(b"\n"), [""]);
        assert_eq!(split_lines(b"\xff\n"), ["\u{fffd}"]);
    }
}
