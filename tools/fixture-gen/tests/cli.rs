//! The generator's command line: bad arguments are refused with one `error:` line
//! and write nothing.

#![allow(clippy::expect_used, reason = "a test fails on what it cannot set up")]

use flint_fixture_gen::Scratch;
use std::process::Command;

/// An empty directory of its own for test `what`.
fn temp_dir(what: &str) -> Scratch {
    Scratch::new(&format!("gen-{what}"))
}

fn generator(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flint-fixture-gen"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the generator runs")
}

#[test]
fn help_prints_the_usage_and_writes_nothing() {
    let dir = temp_dir("help");
    let out = generator(&["series", "--help"], &dir);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("usage:"));
    let written: Vec<_> = std::fs::read_dir(&dir).expect("listed").collect();
    assert!(written.is_empty(), "wrote {written:?}");
}

#[test]
fn a_flag_where_the_output_path_goes_is_refused() {
    let dir = temp_dir("flag");
    let out = generator(&["series", "--count", "3"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: expected an output path, not \"--count\""),
        "{stderr}"
    );
    assert!(!&dir.join("--count").exists());
}

#[test]
fn a_bad_value_is_named() {
    let dir = temp_dir("value");
    let out = generator(&["series", "out", "--count", "many"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim(), "error: bad value for --count: \"many\"");
}

#[test]
fn times_past_what_nanoseconds_hold_are_refused() {
    let dir = temp_dir("time");
    let out = generator(
        &[
            "series",
            "out",
            "--count",
            "3",
            "--time-nanos",
            "9223372036854775000",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("would not fit in 64-bit nanoseconds"),
        "{stderr}"
    );
    assert!(!dir.join("out").exists());
}
