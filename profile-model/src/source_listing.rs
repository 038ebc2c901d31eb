//! A function's source with flat and cum per line, as `go tool pprof -list` shows it,
//! and pprof's rules for finding a source file (`-source_path`, `-trim_path`). The
//! files themselves are read by the caller, through the function it passes in.
//! The window's source view asks the same per line over a whole file
//! ([`function_files`]), with what each line calls, inlined callees marked
//! ([`line_callees`]), looks in more places ([`locate_source`]) and refuses what is
//! not text ([`source_text`]).

use std::collections::BTreeMap;
use std::io;

use rustc_hash::FxHashMap;

use crate::calltree::{CallTree, NodeId};
use crate::frames::{FrameId, FrameTable};
use crate::names::clean_path;
use crate::top::{InlineMark, Top};

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

/// A function's values in one of its source files, per line, before the file is read:
/// what the window's source view shows beside the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileValues {
    /// The path as [`RoutineFile::path`]: trimmed and cleaned as pprof does.
    pub path: String,
    /// The path as the profile names it (of the file's hottest row).
    pub profile_path: String,
    /// The binary (mapping path) of the file's hottest row, empty when unknown.
    pub binary: String,
    /// The function's flat in this file.
    pub flat: i64,
    /// The sum of its lines' cum, as `-list`'s header.
    pub cum: i64,
    /// Flat and cum of each line with samples, as `-list` counts them.
    pub lines: BTreeMap<i64, (i64, i64)>,
}

impl FileValues {
    /// The line with the largest cum (the first of equals), if any has samples.
    pub fn hottest_line(&self) -> Option<i64> {
        self.lines
            .iter()
            .max_by_key(|(n, (_, cum))| (*cum, std::cmp::Reverse(**n)))
            .map(|(n, _)| *n)
    }
}

/// The source files of the function named `function` in `top` (a top table at line
/// granularity over `frames`), with their values per line as [`source_listing`] counts
/// them, hottest file (by cum) first.
pub fn function_files(
    frames: &FrameTable,
    top: &Top,
    function: &str,
    paths: &SourcePaths,
) -> Vec<FileValues> {
    let mut files: BTreeMap<String, (FileValues, i64)> = BTreeMap::new();
    for row in &top.rows {
        let frame = frames.get(row.frame);
        if frame.function != function || frame.file.is_empty() {
            continue;
        }
        let path = trim_path(&frame.file, &paths.trim_path, &paths.source_path);
        let path = clean_path(path).into_owned();
        let (file, hottest) = files.entry(path.clone()).or_insert_with(|| {
            let values = FileValues {
                path,
                profile_path: frame.file.clone(),
                binary: frame.binary.clone(),
                flat: 0,
                cum: 0,
                lines: BTreeMap::new(),
            };
            (values, i64::MIN)
        });
        file.flat = file.flat.wrapping_add(row.flat);
        file.cum = file.cum.wrapping_add(row.cum);
        let at = file.lines.entry(frame.line).or_default();
        *at = (at.0.wrapping_add(row.flat), at.1.wrapping_add(row.cum));
        if row.cum > *hottest {
            *hottest = row.cum;
            file.profile_path.clone_from(&frame.file);
            file.binary.clone_from(&frame.binary);
        }
    }
    let mut files: Vec<FileValues> = files.into_values().map(|(f, _)| f).collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.cum));
    files
}

/// A frame called from one line of a function, and the cum under it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineCallee {
    /// The callee, as its frame is named at line granularity (`fn file:line`).
    pub frame: FrameId,
    /// The value of the samples through the call from that line.
    pub cum: i64,
    /// Whether the callee is inlined where it is reached, as pprof marks it.
    pub inline: InlineMark,
}

/// What each line of the function named `function` in file `file` (as the profile
/// names it) calls: per line, its callees in `tree` (a call tree at line granularity,
/// not inverted, with `totals`) with the cum of each, largest first, marked as `top`
/// (of the same frames) marks them. A recursive function's inner calls are within its
/// outermost ones' and are not counted again.
pub fn line_callees(
    frames: &FrameTable,
    tree: &CallTree,
    totals: &[i64],
    top: &Top,
    function: &str,
    file: &str,
) -> BTreeMap<i64, Vec<LineCallee>> {
    let is_function = |frame: FrameId| frames.get(frame).function == function;
    let outermost = |mut n: NodeId| {
        while n != CallTree::ROOT {
            n = tree.parent(n);
            if n != CallTree::ROOT && is_function(tree.frame(n)) {
                return false;
            }
        }
        true
    };
    let mut by_line: BTreeMap<i64, FxHashMap<FrameId, i64>> = BTreeMap::new();
    for n in 1..tree.len() {
        let Ok(node) = NodeId::try_from(n) else {
            break;
        };
        let frame = frames.get(tree.frame(node));
        if frame.function != function || frame.file != file || !outermost(node) {
            continue;
        }
        let callees = by_line.entry(frame.line).or_default();
        for child in tree.children(node) {
            let cum = totals.get(child as usize).copied().unwrap_or(0);
            if cum != 0 {
                let at = callees.entry(tree.frame(child)).or_default();
                *at = at.wrapping_add(cum);
            }
        }
    }
    let marks: FxHashMap<FrameId, InlineMark> = top
        .rows
        .iter()
        .map(|r| (r.frame, r.reached.mark()))
        .collect();
    by_line
        .into_iter()
        .filter(|(_, callees)| !callees.is_empty())
        .map(|(line, callees)| {
            let mut callees: Vec<LineCallee> = callees
                .into_iter()
                .map(|(frame, cum)| LineCallee {
                    frame,
                    cum,
                    inline: marks.get(&frame).copied().unwrap_or_default(),
                })
                .collect();
            callees.sort_by_key(|c| (std::cmp::Reverse(c.cum), c.frame));
            (line, callees)
        })
        .collect()
}

/// A source file found: where, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The path it was read from.
    pub at: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Finds the file a profile names `profile_path` on this machine: as pprof finds it
/// ([`find_source`], under `paths`), else at `profile_path` itself. `Err` is every
/// path tried, each with why it failed (or pprof's message when it tried none).
pub fn locate_source(
    profile_path: &str,
    paths: &SourcePaths,
    mut read: impl FnMut(&str) -> io::Result<Vec<u8>>,
) -> Result<Located, Vec<String>> {
    let mut tried: Vec<String> = Vec::new();
    // Each path read; a folder is no file here (pprof lists it as empty).
    let mut attempt = |p: &str, tried: &mut Vec<String>| match read(p) {
        Ok(bytes) => Ok(Located {
            at: p.to_string(),
            bytes,
        }),
        Err(e) => {
            let why = if e.kind() == io::ErrorKind::IsADirectory {
                "a folder".to_string()
            } else {
                go_error_text(&e)
            };
            tried.push(format!("{p}: {why}"));
            Err(io::Error::from(io::ErrorKind::NotFound))
        }
    };
    let mut found = None;
    let pprof = find_source(profile_path, paths, |p| {
        let located = attempt(p, &mut tried)?;
        let bytes = located.bytes.clone();
        found = Some(located);
        Ok(bytes)
    });
    if let Some(located) = found {
        return Ok(located);
    }
    if let (Err(why), true) = (pprof, tried.is_empty()) {
        tried.push(why);
    }
    let as_named = format!("{profile_path}: ");
    if !tried.iter().any(|t| t.starts_with(&as_named))
        && let Ok(located) = attempt(profile_path, &mut tried)
    {
        return Ok(located);
    }
    Err(tried)
}

/// Bytes read of a file checked for the first this many for a NUL: a binary file.
const BINARY_SNIFF: usize = 8000;

/// A source file's text as the source view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceText {
    /// Its lines, as [`source_listing`] splits them.
    pub lines: Vec<String>,
    /// Whether some bytes were not UTF-8 (shown replaced).
    pub lossy: bool,
}

/// The text of a source file's `bytes`, or why it is not shown: a binary file (a NUL
/// in its first 8,000 bytes, as git decides).
pub fn source_text(bytes: &[u8]) -> Result<SourceText, String> {
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return Err("a binary file, not source text".to_string());
    }
    Ok(SourceText {
        lines: split_lines(bytes),
        lossy: std::str::from_utf8(bytes).is_err(),
    })
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
    #![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

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

    #[test]
    fn the_window_looks_where_pprof_does_then_at_the_path_as_named() {
        let paths = SourcePaths {
            source_path: "/src".into(),
            trim_path: "/build".into(),
            search_path: "/src".into(),
        };
        let mut asked = Vec::new();
        let found = locate_source("/build/pkg/a.go", &paths, |p| {
            asked.push(p.to_string());
            match p {
                "/build/pkg/a.go" => Ok(b"package a\n".to_vec()),
                _ => Err(io::Error::from_raw_os_error(2)),
            }
        });
        assert_eq!(
            found,
            Ok(Located {
                at: "/build/pkg/a.go".into(),
                bytes: b"package a\n".to_vec()
            })
        );
        assert_eq!(asked, ["/src/pkg/a.go", "/pkg/a.go", "/build/pkg/a.go"]);
        let missing = locate_source("/build/pkg/b.go", &paths, |p| match p {
            "/src/pkg/b.go" => Err(io::Error::from(io::ErrorKind::IsADirectory)),
            _ => Err(io::Error::from_raw_os_error(2)),
        });
        assert_eq!(
            missing,
            Err(vec![
                "/src/pkg/b.go: a folder".to_string(),
                "/pkg/b.go: no such file or directory".to_string(),
                "/build/pkg/b.go: no such file or directory".to_string(),
            ])
        );
    }

    #[test]
    fn an_untrimmed_absolute_path_is_tried_once() {
        let paths = SourcePaths {
            search_path: "/w".into(),
            ..SourcePaths::default()
        };
        let missing = locate_source("/src/a.go", &paths, |_| {
            Err(io::Error::from_raw_os_error(2))
        });
        assert_eq!(
            missing,
            Err(vec!["/src/a.go: no such file or directory".to_string()])
        );
        let under = locate_source("/src/a.go", &paths, |p| match p {
            "/src/a.go" => Ok(b"x".to_vec()),
            _ => Err(io::Error::from_raw_os_error(2)),
        });
        assert_eq!(under.map(|l| l.at), Ok("/src/a.go".to_string()));
    }

    #[test]
    fn binary_files_are_refused_and_bad_utf8_is_shown_replaced() {
        assert!(source_text(b"\x7fELF\x02\x01\x00\x00").is_err());
        let text = source_text(b"ok\n\xff\xfe\n").unwrap();
        assert!(text.lossy);
        assert_eq!(text.lines, ["ok", "\u{fffd}\u{fffd}"]);
        let clean = source_text(b"a\r\nb").unwrap();
        assert!(!clean.lossy);
        assert_eq!(clean.lines, ["a", "b"]);
    }

    #[test]
    fn a_functions_files_hold_the_values_go_tool_pprof_lists() {
        use crate::{Granularity, View, ViewOptions};
        let bytes = include_bytes!("../../tests/fixtures/go/cpu.pb.gz");
        let profile = crate::codec::decode(bytes).unwrap();
        let view = View::new(
            &profile,
            &ViewOptions {
                granularity: Granularity::FunctionLine,
                ..ViewOptions::default()
            },
        );
        let top = view.top(&profile, 1);
        let paths = SourcePaths {
            trim_path: "/work/main/tests/fixtures/go/demo".into(),
            ..SourcePaths::default()
        };
        let files = function_files(&view.frames, &top, "main.fib", &paths);
        // golden/cpu.list=main.fib.source_path=demo.txt
        let ms = |v: i64| v * 1_000_000;
        let [file] = files.as_slice() else {
            panic!("one file: {files:?}");
        };
        assert_eq!(file.path, "main.go");
        assert!(file.profile_path.ends_with("/demo/main.go"));
        assert_eq!((file.flat, file.cum), (ms(910), ms(1540)));
        let lines: Vec<(i64, (i64, i64))> = file.lines.iter().map(|(n, v)| (*n, *v)).collect();
        assert_eq!(
            lines,
            [
                (124, (ms(260), ms(260))),
                (125, (ms(10), ms(10))),
                (126, (ms(360), ms(360))),
                (128, (ms(280), ms(910))),
            ]
        );
        assert_eq!(file.hottest_line(), Some(128));
        // Line 128 calls fib: its cum is under the calls from the outermost fib
        // (which was never sampled at 128 itself), counted once however deep the
        // recursion goes.
        let (tree, _) = view.call_tree_of(&profile, 1, || ());
        let totals = tree.totals(0);
        let callees = line_callees(
            &view.frames,
            &tree,
            &totals,
            &top,
            "main.fib",
            &file.profile_path,
        );
        assert_eq!(callees.keys().copied().collect::<Vec<_>>(), [128]);
        let called: i64 = callees[&128].iter().map(|c| c.cum).sum();
        assert_eq!(called, ms(910));
        assert!(
            callees[&128]
                .iter()
                .all(|c| view.frames.get(c.frame).function == "main.fib")
        );
        assert!(callees[&128].windows(2).all(|w| w[0].cum >= w[1].cum));
        assert!(function_files(&view.frames, &top, "main.nothing", &paths).is_empty());
    }
}
