//! `flint list` prints exactly what `go tool pprof -list` prints, line for line: each
//! matching function's source with flat and cum per line, found as pprof finds it.

use super::{Scratch, assert_golden, flint_ok};

/// Compares `flint list ARGS` with a golden file written by `go tool pprof -list`.
fn assert_matches_pprof(golden: &str, args: &[&str]) {
    assert_golden(golden, args, |lines| lines);
}

/// The folder the fixture profiles were built in, as they name their source
/// (`…/tests/fixtures/go/demo`).
fn built_in() -> String {
    let listing = flint_ok(&["list", "main\\.fib$", "cpu.pb.gz", "--trim-path", "/none"]);
    let routine = listing
        .lines()
        .find_map(|l| l.strip_prefix("ROUTINE ======================== main.fib in "))
        .expect("main.fib's routine");
    routine
        .strip_suffix("/main.go")
        .expect("main.go")
        .to_string()
}

#[test]
fn source_found_below_the_current_folder() {
    // The profiles name demo/main.go by the absolute path it was built at; as pprof,
    // flint cuts it after "/go/" (this folder's name) and finds demo/main.go here.
    assert_matches_pprof("cpu.list=main.txt", &["list", "main\\.", "cpu.pb.gz"]);
}

#[test]
fn sample_types_and_differences() {
    assert_matches_pprof(
        "heap.sample_index=1.list=main.txt",
        &["list", "main\\.", "heap.pb.gz", "-s", "1"],
    );
    assert_matches_pprof(
        "diff-cpu3-base1.list=main.txt",
        &[
            "list",
            "main\\.",
            "--diff-base",
            "cpu-1.pb.gz",
            "cpu-3.pb.gz",
        ],
    );
}

#[test]
fn source_path_and_trim_path() {
    let built = built_in();
    assert_matches_pprof(
        "cpu.list=main.fib.source_path=demo.txt",
        &[
            "list",
            "main\\.fib$",
            "cpu.pb.gz",
            "--source-path",
            "demo",
            "--trim-path",
            &built,
        ],
    );
}

#[test]
fn a_missing_source_file_says_where_it_looked() {
    let built = built_in();
    let parent = built.strip_suffix("/demo").expect("…/go/demo");
    assert_matches_pprof(
        "cpu.list=main.fib.missing.txt",
        &[
            "list",
            "main\\.fib$",
            "cpu.pb.gz",
            "--source-path",
            "/nonexistent/flint-src",
            "--trim-path",
            parent,
        ],
    );
}

#[test]
fn a_source_file_elsewhere_is_found_under_the_source_path() {
    // A copy of demo/main.go under DIR/src/demo: the profile's path, trimmed of
    // everything before `demo`, is looked for in DIR/src and its parents.
    let scratch = Scratch::new("list-source-path");
    let src = scratch.join("src/demo");
    std::fs::create_dir_all(&src).expect("folder");
    let text = "// a stand-in\n".repeat(200);
    std::fs::write(src.join("main.go"), &text).expect("source");
    let built = built_in();
    let parent = built.strip_suffix("/demo").expect("…/go/demo");
    let deeper = scratch.join("src/a/b");
    std::fs::create_dir_all(&deeper).expect("folder");
    let listing = flint_ok(&[
        "list",
        "main\\.fib$",
        "cpu.pb.gz",
        "--source-path",
        deeper.to_str().expect("utf-8 path"),
        "--trim-path",
        parent,
    ]);
    assert!(
        listing.contains("ROUTINE ======================== main.fib in demo/main.go"),
        "{listing}"
    );
    let fib_line = listing
        .lines()
        .find(|l| l.contains(" 128:"))
        .expect("line 128 listed");
    assert_eq!(fib_line, "     280ms      910ms    128:// a stand-in");
}
