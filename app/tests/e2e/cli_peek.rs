//! `flint peek` prints exactly what `go tool pprof -peek` prints, line for line: the
//! header, then each matching function with its callers and callees.

use super::{assert_golden, flint};

/// Compares `flint peek ARGS` with a golden file written by `go tool pprof -peek`.
/// pprof orders a function's edges by |weight|, and edges whose weights differ only in
/// sign (in a difference) as its hash map gives them, which changes from run to run:
/// such runs of lines are compared sorted.
fn assert_matches_pprof(golden: &str, args: &[&str]) {
    assert_golden(golden, args, sort_ties);
}

/// The weight of an edge line (`      -0.01s  2.56% |   name`) without its sign;
/// `None` for other lines.
fn edge_weight(line: &str) -> Option<&str> {
    let (value, _) = line.split_once(" |   ")?;
    let indent = value.len() - value.trim_start().len();
    (indent >= 30).then(|| {
        let weight = value.split_whitespace().next().unwrap_or("");
        weight.trim_start_matches('-')
    })
}

/// `lines` with each run of edge lines of the same |weight| sorted.
fn sort_ties(mut lines: Vec<String>) -> Vec<String> {
    let mut start = 0;
    while start < lines.len() {
        let weight = edge_weight(&lines[start]).map(str::to_string);
        let mut end = start + 1;
        if weight.is_some() {
            while end < lines.len() && edge_weight(&lines[end]) == weight.as_deref() {
                end += 1;
            }
        }
        lines[start..end].sort();
        start = end;
    }
    lines
}

#[test]
fn ties_are_told_apart_from_other_lines() {
    let edge = "                                            -0.01s  2.56% |   sort.IntSlice.Swap";
    assert_eq!(edge_weight(edge), Some("0.01s"));
    let node = "     0.91s 21.26% 21.26%      0.91s 21.26%                | main.fib";
    assert_eq!(edge_weight(node), None);
    let sorted = sort_ties(vec![
        edge.to_string(),
        edge.replace("-0.01s", " 0.01s").replace("Swap", "Less"),
        node.to_string(),
    ]);
    assert!(sorted[0].ends_with("Less") && sorted[1].ends_with("Swap"));
}

#[test]
fn every_function_of_a_cpu_profile() {
    assert_matches_pprof("cpu.peek=all.txt", &["peek", ".", "cpu.pb.gz"]);
}

#[test]
fn sample_types_and_units() {
    assert_matches_pprof(
        "cpu.sample_index=0.peek=main.txt",
        &["peek", "main\\.", "cpu.pb.gz", "-s", "0"],
    );
    assert_matches_pprof(
        "heap.sample_index=1.peek=main.txt",
        &["peek", "main\\.", "heap.pb.gz", "-s", "alloc_space"],
    );
}

#[test]
fn merges_and_differences() {
    assert_matches_pprof(
        "merge-cpu-123.peek=sort.txt",
        &[
            "peek",
            "sort\\.",
            "cpu-1.pb.gz",
            "cpu-2.pb.gz",
            "cpu-3.pb.gz",
        ],
    );
    assert_matches_pprof(
        "diff-cpu3-base1.peek=main.txt",
        &[
            "peek",
            "main\\.",
            "--diff-base",
            "cpu-1.pb.gz",
            "cpu-3.pb.gz",
        ],
    );
}

#[test]
fn filters_granularity_and_names_that_are_not_utf8() {
    assert_matches_pprof(
        "cpu.filters.peek=main.txt",
        &[
            "peek",
            "main\\.",
            "cpu.pb.gz",
            "--hide",
            "runtime\\.",
            "--ignore",
            "main.fib",
            "--tag",
            "endpoint=/api/hash",
        ],
    );
    assert_matches_pprof(
        "cpu.lines.peek=main.fib.txt",
        &["peek", "main\\.fib", "cpu.pb.gz", "--granularity", "line"],
    );
    assert_matches_pprof(
        "cpu-badutf8.peek=main.txt",
        &["peek", "main\\.", "cpu-badutf8.pb.gz"],
    );
}

#[test]
fn a_regex_that_matches_nothing_fails_as_pprof_does() {
    // pprof prints nothing on stdout, "no matches found for regexp: …" on stderr, and
    // exits with 1.
    for command in ["peek", "list"] {
        let out = flint(&[command, "no_such_function", "cpu.pb.gz"]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(out.stdout.is_empty(), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr, "error: no matches found for regexp: no_such_function\n",
            "{command}"
        );
    }
}

#[test]
fn a_bad_regex_is_one_line_and_reads_no_profile() {
    for command in ["peek", "list"] {
        let out = flint(&[command, "main.(fib", "no-such-file.pb.gz"]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: invalid regex \"main.(fib\": "),
            "{stderr}"
        );
    }
}
