//! `flint top` prints exactly what `go tool pprof -top` prints, line for line: the
//! header (main binary, type, time, duration, filters), the totals and every row.

use super::{assert_golden, fixtures, flint, flint_ok, flint_piped, lines};

/// Compares `flint top ARGS` with a golden file written by `go tool pprof -top`.
fn assert_matches_pprof(golden: &str, args: &[&str]) {
    assert_golden(golden, args, |lines| lines);
}

#[test]
fn cpu_profile_every_sample_type() {
    assert_matches_pprof(
        "cpu.sample_index=0.top.txt",
        &["top", "cpu.pb.gz", "--sample-type", "0"],
    );
    assert_matches_pprof(
        "cpu.sample_index=1.top.txt",
        &["top", "cpu.pb.gz", "--sample-type", "cpu"],
    );
    // Without --sample-type: the last one, as pprof.
    assert_matches_pprof("cpu.sample_index=1.top.txt", &["top", "cpu.pb.gz"]);
}

#[test]
fn names_that_are_not_utf8_are_read_as_pprof_reads_them() {
    // cpu.pb.gz with main.fib's name made "main.\xffib" (tests/fixtures/go/regen.sh).
    assert_matches_pprof("cpu-badutf8.top.txt", &["top", "cpu-badutf8.pb.gz"]);
    let folded = flint_ok(&["fold", "cpu-badutf8.pb.gz"]);
    assert!(folded.contains("main.\u{fffd}ib"), "{folded}");
}

#[test]
fn heap_profile_every_sample_type() {
    for (i, name) in [
        "alloc_objects",
        "alloc_space",
        "inuse_objects",
        "inuse_space",
    ]
    .iter()
    .enumerate()
    {
        assert_matches_pprof(
            &format!("heap.sample_index={i}.top.txt"),
            &["top", "heap.pb.gz", "-s", name],
        );
    }
}

#[test]
fn several_files_are_merged() {
    assert_matches_pprof(
        "merge-cpu-123.top.txt",
        &["top", "cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"],
    );
}

#[test]
fn filters_match_pprof() {
    assert_matches_pprof(
        "cpu.focus=main.fib.top.txt",
        &["top", "cpu.pb.gz", "--focus", "main.fib"],
    );
    assert_matches_pprof(
        "cpu.ignore=main.hashLoop.top.txt",
        &["top", "cpu.pb.gz", "--ignore", "main.hashLoop"],
    );
    assert_matches_pprof(
        "cpu.hide=runtime.top.txt",
        &["top", "cpu.pb.gz", "--hide", "runtime\\."],
    );
    assert_matches_pprof(
        "cpu.tagfocus=endpoint=_api_hash.top.txt",
        &["top", "cpu.pb.gz", "--tag", "endpoint=/api/hash"],
    );
}

#[test]
fn tsv_has_raw_values_and_json_has_unit_and_total() {
    let tsv = flint_ok(&["top", "cpu.pb.gz", "--format", "tsv", "--limit", "3"]);
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines[0], "flat\tflat_pct\tcum\tcum_pct\tname");
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1], "910000000\t21.26\t910000000\t21.26\tmain.fib");
    let json: serde_json::Value = serde_json::from_str(&flint_ok(&[
        "top",
        "cpu.pb.gz",
        "--format",
        "json",
        "-n",
        "2",
    ]))
    .expect("json");
    assert_eq!(json["unit"], "nanoseconds");
    assert_eq!(json["total"], 4_280_000_000i64);
    assert_eq!(json["rows"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        json["rows"][1]["name"],
        "compress/flate.(*compressor).findMatch"
    );
    assert_eq!(json["rows"][1]["cum"], 810_000_000i64);
}

#[test]
fn limit_says_how_many_rows_are_shown() {
    let text = flint_ok(&["top", "cpu.pb.gz", "--limit", "5"]);
    assert!(text.contains("Showing top 5 nodes out of 246"), "{text}");
    let rows = text
        .lines()
        .skip_while(|l| !l.contains("flat%"))
        .skip(1)
        .count();
    assert_eq!(rows, 5);
}

#[test]
fn diff_base_matches_pprof() {
    assert_matches_pprof(
        "diff-cpu3-base1.top.txt",
        &["top", "--diff-base", "cpu-1.pb.gz", "--", "cpu-3.pb.gz"],
    );
    assert_matches_pprof(
        "diff-cpu3-base1.top.txt",
        &["top", "cpu-3.pb.gz", "--diff-base", "cpu-1.pb.gz"],
    );
    // As pprof is called: the base, then the file.
    assert_matches_pprof(
        "diff-cpu3-base1.top.txt",
        &["top", "--diff-base", "cpu-1.pb.gz", "cpu-3.pb.gz"],
    );
}

/// Two bases are merged, as pprof merges the profiles it is given (pprof itself keeps
/// only the last `-diff_base`: the golden file subtracts the two merged by pprof).
#[test]
fn two_diff_bases_are_merged_as_pprof_merges_them() {
    assert_matches_pprof(
        "diff-cpu3-base12.top.txt",
        &[
            "top",
            "--diff-base",
            "cpu-1.pb.gz",
            "--diff-base",
            "cpu-2.pb.gz",
            "cpu-3.pb.gz",
        ],
    );
}

#[test]
fn a_directory_is_merged_and_broken_files_in_it_are_skipped() {
    let dir = std::env::temp_dir().join(format!("flint-e2e-dir-{}", std::process::id()));
    let sub = dir.join("nested");
    std::fs::create_dir_all(&sub).expect("temp dir");
    for (name, to) in [
        ("cpu-1.pb.gz", &dir),
        ("cpu-2.pb.gz", &dir),
        ("cpu-3.pb.gz", &sub),
    ] {
        std::fs::copy(fixtures().join(name), to.join(name)).expect("copy fixture");
    }
    std::fs::write(sub.join("broken.pb.gz"), b"\x1f\x8b not really gzip").expect("write");
    let out = super::flint(&["top", dir.to_str().expect("utf-8 path")]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("warning: skipped ") && stderr.contains("broken.pb.gz"),
        "{stderr}"
    );
    let expected = lines(
        &std::fs::read_to_string(fixtures().join("golden/merge-cpu-123.top.txt")).expect("golden"),
    );
    assert_eq!(lines(&String::from_utf8_lossy(&out.stdout)), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn values_whose_sums_overflow_wrap_as_in_pprof_and_never_panic() {
    // Every sample weighs a third of what 64 bits hold: two profiles' sums overflow.
    let dir = super::edited_copies("huge-values", &["a", "b"], |_, profile| {
        for column in &mut profile.samples.values {
            column.iter_mut().for_each(|v| *v = i64::MAX / 3);
        }
    });
    let (a, b) = (dir.join("a.pb.gz"), dir.join("b.pb.gz"));
    let (a, b, dir) = (a.display(), b.display(), dir.display().to_string());
    for args in [
        vec!["top".to_string(), dir.clone()],
        vec![
            "top".into(),
            "--diff-base".into(),
            a.to_string(),
            b.to_string(),
        ],
        vec!["fold".into(), dir.clone()],
        vec!["series".into(), dir.clone()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = flint_ok(&args);
        assert!(!out.is_empty(), "flint {args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_range_or_a_query_selects_among_files() {
    // cpu-2 starts at 12:39:14.77, after cpu-1 (12:39:12.63) and before cpu-3.
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.trim_start().starts_with("flat"))
            .map(str::to_string)
            .collect()
    };
    let selected = flint_ok(&[
        "top",
        "cpu-1.pb.gz",
        "cpu-2.pb.gz",
        "cpu-3.pb.gz",
        "--from",
        "2026-11-30T12:39:13Z",
    ]);
    let two = flint_ok(&["top", "cpu-2.pb.gz", "cpu-3.pb.gz"]);
    assert!(rows(&selected).len() > 10, "{selected}");
    assert_eq!(rows(&selected), rows(&two));
    assert!(selected.contains("Total samples = 4.02s"), "{selected}");
    // A selector over the samples' labels: /api/hash's share of cpu-3, as pprof's
    // -tagfocus=endpoint=/api/hash counts it (1.10s of 1.98s).
    let hash = flint_ok(&[
        "top",
        "cpu-3.pb.gz",
        "-q",
        r#"process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{endpoint="/api/hash"}"#,
    ]);
    assert!(hash.contains("Total samples = 1.10s"), "{hash}");
    let series = flint_ok(&[
        "series",
        "cpu-1.pb.gz",
        "cpu-2.pb.gz",
        "cpu-3.pb.gz",
        "--from",
        "2026-11-30T12:39:13Z",
    ]);
    assert_eq!(series.lines().count(), 2, "{series}");
}

#[test]
fn a_profile_piped_to_dev_stdin_reads_as_its_file_does() {
    let bytes = std::fs::read(fixtures().join("cpu-1.pb.gz")).expect("fixture");
    let piped = |args: &[&str]| {
        let out = flint_piped(args, &bytes);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "flint {args:?} failed: {stderr}");
        String::from_utf8(out.stdout).expect("utf-8 output")
    };
    // Read straight from the bytes, with a filter (decoded), and as a diff's side.
    for args in [
        &["top"][..],
        &["top", "--focus", "main\\."],
        &["top", "--diff-base", "cpu-2.pb.gz"],
        &["fold"],
    ] {
        let from_file = flint_ok(&[args, &["cpu-1.pb.gz"]].concat());
        let from_pipe = piped(&[args, &["/dev/stdin"]].concat());
        assert!(from_file.lines().count() > 10, "{args:?}: {from_file}");
        assert_eq!(from_pipe, from_file, "flint {args:?} of a pipe");
    }
    // A pipe cut short is refused as the same file cut short is.
    let cut = &bytes[..bytes.len() / 2];
    let dir = std::env::temp_dir().join(format!("flint-e2e-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("cut.pb.gz");
    std::fs::write(&file, cut).expect("write");
    let from_file = flint(&["top", file.to_str().expect("utf-8 path")]);
    let from_pipe = flint_piped(&["top", "/dev/stdin"], cut);
    let message = |out: &std::process::Output, name: &str| {
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).replace(name, "INPUT")
    };
    let expected = message(&from_file, file.to_str().expect("utf-8 path"));
    assert!(expected.contains("truncated"), "{expected}");
    assert_eq!(message(&from_pipe, "/dev/stdin"), expected);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_reached_by_several_paths_counts_once() {
    let dir = std::env::temp_dir().join(format!("flint-e2e-twice-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for name in ["cpu-1.pb.gz", "cpu-2.pb.gz"] {
        std::fs::copy(fixtures().join(name), dir.join(name)).expect("copy");
    }
    let d = dir.to_str().expect("utf-8 path");
    let file = dir.join("cpu-1.pb.gz");
    let file = file.to_str().expect("utf-8 path");
    let dotted = format!("{d}/./cpu-1.pb.gz");
    for command in ["top", "fold", "series"] {
        let once = flint_ok(&[command, d]);
        assert!(once.lines().count() > 1, "{command}: {once}");
        for twice in [&[d, d][..], &[d, file], &[file, d]] {
            let args = [&[command][..], twice].concat();
            assert_eq!(flint_ok(&args), once, "flint {args:?}");
        }
        let one = flint_ok(&[command, file]);
        assert_eq!(
            flint_ok(&[command, file, &dotted]),
            one,
            "{command}: one file"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn profiles_from_another_encoder_read_as_pprof_reads_them() {
    // Written by Google's protobuf package with what Go's runtime never sets
    // (tests/fixtures/writers/make.py): doc_url, a string table index, had been refused
    // as a field of the wrong wire type; a function with no name and a system name is
    // named by its system name.
    let writers = fixtures().join("../writers");
    for name in ["doc_url", "system_name"] {
        let golden =
            std::fs::read_to_string(writers.join(format!("golden/{name}.top.txt"))).unwrap();
        let file = writers.join(format!("{name}.pb.gz"));
        let out = flint_ok(&["top", file.to_str().unwrap()]);
        assert_eq!(lines(&out), lines(&golden), "{name}");
    }
}
