//! The source view over the Go CPU profile and its program's source
//! (`tests/fixtures/go/demo/main.go`): opened from a frame's or a row's menu and by
//! `l`, the values per line those of `go tool pprof -list`, a file not found saying
//! where it was looked for while the source shown stays.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use std::path::Path;
use std::sync::Arc;

use capture::symbolize::source_file::SourceConfig;
use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::codec;
use profile_model::source_listing::SourcePaths;

use crate::gui::app::FlintApp;
use crate::gui::tests::fixtures::secondary_click_at;
use crate::gui::tests::view::{find_rect, harness};
use crate::gui::view::loader::Source;
use crate::gui::view::source_job::Row;

const FIXTURE: &[u8] = include_bytes!("../../../../tests/fixtures/go/cpu.pb.gz");
const GOLDEN: &str =
    include_str!("../../../../tests/fixtures/go/golden/cpu.list=main.fib.source_path=demo.txt");

/// Where the profile was built, as its file names say.
const BUILT_IN: &str = "/work/main/tests/fixtures/go/demo/";
/// Where this test moves it to: nowhere on any machine.
const MOVED_TO: &str = "/nonexistent/flint-build/demo/";

/// The Go fixtures folder, absolute.
fn go_fixtures() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/go");
    std::fs::canonicalize(dir).unwrap().display().to_string()
}

/// A source config as `--source-path DIR --trim-path PREFIX` makes it.
fn config(source_path: &str, trim_path: &str) -> Arc<SourceConfig> {
    Arc::new(SourceConfig {
        paths: SourcePaths {
            source_path: source_path.into(),
            trim_path: trim_path.into(),
            search_path: source_path.into(),
        },
        debuginfod: None,
    })
}

/// The fixture with its source paths moved to [`MOVED_TO`], so that only the source
/// path finds them.
fn moved_harness() -> Harness<'static, FlintApp> {
    let mut h = harness();
    let mut profile = codec::decode(FIXTURE).unwrap();
    for s in &mut profile.strings {
        if let Some(rest) = s.strip_prefix(BUILT_IN) {
            *s = format!("{MOVED_TO}{rest}");
        }
    }
    h.state_mut().open(Source::Profile {
        name: "moved.pb.gz".into(),
        path: None,
        profile: Arc::new(profile),
    });
    h.run_steps(3);
    h
}

/// Lines with values: (line, flat, cum) in milliseconds.
type LineValues = Vec<(i64, i64, i64)>;

/// `go tool pprof -list`'s lines with values, and every line's text.
fn golden() -> (LineValues, Vec<(i64, String)>) {
    let ms = |v: &str| -> i64 {
        match v {
            "." => 0,
            v if v.ends_with("ms") => v.trim_end_matches("ms").parse().unwrap(),
            v => (v.trim_end_matches('s').parse::<f64>().unwrap() * 1000.0).round() as i64,
        }
    };
    let mut values = Vec::new();
    let mut texts = Vec::new();
    for line in GOLDEN.lines().skip(3) {
        let (head, text) = line.split_once(':').unwrap();
        let parts: Vec<&str> = head.split_whitespace().collect();
        let number: i64 = parts[2].parse().unwrap();
        texts.push((number, text.to_string()));
        if parts[1] != "." {
            values.push((number, ms(parts[0]), ms(parts[1])));
        }
    }
    (values, texts)
}

#[test]
fn show_source_lists_main_fib_with_the_values_go_tool_pprof_lists() {
    let mut h = moved_harness();
    h.state_mut().view.source.config = config(&go_fixtures(), "/nonexistent/flint-build");
    let (_, pos) = find_rect(&h, "main.fib", 10.0);
    secondary_click_at(&mut h, pos);
    h.get_by_label("Show source (l)").click();
    h.run_steps(4);
    let file = h.state().view.source.shown.clone().expect("source shown");
    assert!(h.query_by_label("flame graph").is_none(), "in its place");
    assert_eq!(file.function, "main.fib");
    assert_eq!(file.at, format!("{}/demo/main.go", go_fixtures()));
    let (values, texts) = golden();
    let shown: Vec<(i64, i64, i64)> = file
        .values
        .lines
        .iter()
        .map(|(n, (flat, cum))| (*n, flat / 1_000_000, cum / 1_000_000))
        .collect();
    assert_eq!(shown, values);
    for (number, text) in texts {
        assert_eq!(
            file.text.lines[(number - 1) as usize],
            text,
            "line {number}"
        );
    }
    // Under line 128, the recursive calls it makes, with the cum under each.
    let at = file.rows.iter().position(|r| *r == Row::Line(128)).unwrap();
    let under: Vec<&Row> = file.rows[at + 1..]
        .iter()
        .take_while(|r| !matches!(r, Row::Line(_)))
        .collect();
    assert!(!under.is_empty(), "line 128 calls fib");
    let called: i64 = under
        .iter()
        .map(|r| match r {
            Row::Callee(name, cum) => {
                assert!(name.starts_with("main.fib main.go:"), "{name}");
                *cum
            }
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(called, 910_000_000);
    assert_eq!(file.rows[at + under.len() + 1], Row::Line(129));
    h.get_by_label_contains("→ main.fib main.go:12");
    // The hottest line (128: 910 ms cum) is on screen, with its values.
    h.get_by_label_contains("   128    280 ms    910 ms  ");
    h.get_by_label_contains("flat 910 ms, cum 1.54 s");
    h.key_press(Key::Escape);
    h.run_steps(2);
    h.get_by_label("flame graph");
    assert!(!h.state().view.source.is_open());
}

#[test]
fn a_source_not_found_says_where_it_looked_and_the_source_shown_stays() {
    let mut h = moved_harness();
    h.state_mut().view.source.config = config(&go_fixtures(), "/nonexistent/flint-build");
    let (_, pos) = find_rect(&h, "main.fib", 10.0);
    h.hover_at(pos);
    h.run_steps(2);
    h.key_press(Key::L);
    h.run_steps(4);
    assert!(
        h.state().view.source.shown.is_some(),
        "found under the source path"
    );
    // Now with a source path where it is not: every place tried is listed.
    h.state_mut().view.source.config = config("/nonexistent/src", "");
    let cur = h.state().view.current().unwrap().clone();
    let frame = cur
        .frames
        .frames
        .iter()
        .position(|f| f.name == "main.hashLoop");
    h.state_mut()
        .view
        .open_source(frame.unwrap().try_into().unwrap());
    h.run_steps(4);
    let source = &h.state().view.source;
    let not_shown = source.not_shown.clone().expect("not found");
    assert_eq!(
        not_shown.why,
        format!("{MOVED_TO}main.go of main.hashLoop not found")
    );
    assert_eq!(
        not_shown.tried,
        [
            format!("{MOVED_TO}main.go: no such file or directory"),
            "debuginfod: not asked (no --debuginfod URL nor DEBUGINFOD_URLS)".to_string(),
        ]
    );
    assert_eq!(
        source.shown.as_ref().unwrap().function,
        "main.fib",
        "the source shown before stays"
    );
    h.get_by_label("Looked in:");
    h.get_by_label(&format!("{MOVED_TO}main.go: no such file or directory"));
    // Typed in the box: found there, the box gone.
    h.state_mut().view.source.edit = Some((go_fixtures(), "/nonexistent/flint-build".into()));
    h.get_by_label("Look again").click();
    h.run_steps(4);
    let source = &h.state().view.source;
    assert!(source.not_shown.is_none(), "{:?}", source.not_shown);
    let shown = source.shown.as_ref().unwrap();
    assert_eq!(shown.function, "main.hashLoop");
    assert_eq!(shown.at, format!("{}/demo/main.go", go_fixtures()));
}

#[test]
fn a_binary_file_is_refused_and_bytes_not_utf8_are_shown_replaced_in_the_panel() {
    let dir = std::env::temp_dir().join(format!("flint-source-bad-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("demo")).unwrap();
    let file = dir.join("demo/main.go");
    let mut h = moved_harness();
    h.state_mut().view.source.config = config(dir.to_str().unwrap(), "/nonexistent/flint-build");
    let frame = {
        let cur = h.state().view.current().unwrap().clone();
        let at = cur.frames.frames.iter().position(|f| f.name == "main.fib");
        u32::try_from(at.unwrap()).unwrap()
    };
    // Not UTF-8: shown, the bad bytes replaced, with a note.
    let mut text: Vec<u8> = (1..=140)
        .flat_map(|n| format!("// line {n}\n").into_bytes())
        .collect();
    text.extend_from_slice(b"caf\xe9\n");
    std::fs::write(&file, &text).unwrap();
    h.state_mut().view.open_source(frame);
    h.run_steps(4);
    let shown = h.state().view.source.shown.clone().expect("shown");
    assert!(shown.text.lossy);
    assert_eq!(shown.text.lines[140], "caf\u{fffd}");
    h.get_by_label_contains("not UTF-8: bytes shown as ?");
    h.get_by_label_contains("caf?");
    // A binary file: said in the panel, the text shown before kept.
    std::fs::write(&file, b"\x7fELF\x02\x01\x01\x00\x00\x00").unwrap();
    h.state_mut().view.open_source(frame);
    h.run_steps(4);
    let why = format!("{}: a binary file, not source text", file.display());
    assert_eq!(h.state().view.source.not_shown.as_ref().unwrap().why, why);
    h.get_by_label(&why);
    assert!(h.state().view.source.shown.is_some(), "kept");
    std::fs::remove_dir_all(&dir).unwrap();
}
