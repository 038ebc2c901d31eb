//! End-to-end tests of the `flint` binary: its answers against `go tool pprof`'s on
//! real Go profiles, and its behaviour on bad input.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

mod cli_errors;
mod cli_fold;
mod cli_list;
mod cli_peek;
mod cli_series;
mod cli_symbolize;
mod cli_top;
mod deploy;
mod formats;
mod gui_smoke;
mod layout;
mod perf_data;
mod record;
mod serve;
mod serve_memory;
mod version;
mod writers;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use flint_fixture_gen::Scratch;

/// The folder of the Go fixtures and their golden outputs.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/go")
}

/// A fresh folder (`tag` makes it the test's own) holding a copy of the fixture
/// cpu-1.pb.gz for each of `names` (`NAME.pb.gz`), the `i`th as `edit(i, profile)`
/// leaves it.
pub fn edited_copies(
    tag: &str,
    names: &[&str],
    edit: impl Fn(usize, &mut profile_model::Profile),
) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-e2e-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bytes = std::fs::read(fixtures().join("cpu-1.pb.gz")).expect("fixture");
    for (i, name) in names.iter().enumerate() {
        let mut profile = profile_model::codec::decode(&bytes).expect("fixture decodes");
        edit(i, &mut profile);
        let path = dir.join(format!("{name}.pb.gz"));
        std::fs::write(path, profile_model::codec::encode_gzip(&profile)).expect("write");
    }
    dir
}

/// Runs `flint` with `args` in the fixtures folder.
pub fn flint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flint"))
        .args(args)
        .current_dir(fixtures())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("the flint binary runs")
}

/// Runs `flint` with `args` in the fixtures folder, `input` written to its standard
/// input through a pipe (which gives its bytes only once, as `curl … | flint` does).
pub fn flint_piped(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flint"))
        .args(args)
        .current_dir(fixtures())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the flint binary runs");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        // flint may stop reading (and close the pipe) once it has refused the input.
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("flint ends");
    writer.join().expect("the writer ends");
    out
}

/// The lines of `text`, each owned.
pub fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

/// Compares the output of `flint ARGS` with a golden file written by `go tool pprof`,
/// line for line, both as `normalize` leaves them. Where pprof writes a name's bytes
/// that are not UTF-8 as they are, flint writes U+FFFD for each invalid sequence (what
/// a terminal shows of pprof's): the golden file is read so.
pub fn assert_golden(golden: &str, args: &[&str], normalize: impl Fn(Vec<String>) -> Vec<String>) {
    let path = fixtures().join("golden").join(golden);
    let expected =
        String::from_utf8_lossy(&std::fs::read(&path).expect("golden file")).into_owned();
    let expected = normalize(lines(&expected));
    assert!(expected.len() > 3, "{golden} holds rows");
    let actual = normalize(lines(&flint_ok(args)));
    if actual != expected {
        let first = actual
            .iter()
            .zip(&expected)
            .position(|(a, e)| a != e)
            .unwrap_or(actual.len().min(expected.len()));
        panic!(
            "flint {args:?} differs from {golden} at line {first} (of {} vs {}):\n  flint: {:?}\n  pprof: {:?}",
            actual.len(),
            expected.len(),
            actual.get(first),
            expected.get(first)
        );
    }
}

/// Runs `flint` and returns its stdout, failing the test on a non-zero exit.
pub fn flint_ok(args: &[&str]) -> String {
    let out = flint(args);
    assert!(
        out.status.success(),
        "flint {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Compiles `tests/fixtures/symbols/burn.erl` into `dir`; false after a SKIP line
/// where erlc (erlang-base) is missing.
pub fn compile_burn_erl(dir: &Path) -> bool {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/symbols/burn.erl");
    let compiled = Command::new("erlc")
        .arg("-o")
        .arg(dir)
        .arg(&source)
        .status();
    let ok = compiled.is_ok_and(|s| s.success());
    if !ok {
        println!("SKIP: erlc (erlang-base) is not installed");
    }
    ok
}

/// The total of `flint top --format tsv` of `args` (the sum of its flat column).
pub fn top_total(args: &[&str]) -> i64 {
    let mut all = vec!["top", "--format", "tsv"];
    all.extend_from_slice(args);
    flint_ok(&all)
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next()?.parse::<i64>().ok())
        .sum()
}

/// The points of `flint series --format tsv FILE`: (time, value), and the text.
pub fn series_points(file: &str) -> (Vec<(String, i64)>, String) {
    let series = flint_ok(&["series", "--format", "tsv", file]);
    let points = series
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((f.first()?.to_string(), f.get(2)?.parse().ok()?))
        })
        .collect();
    (points, series)
}
