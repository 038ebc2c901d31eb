//! Time mode tests: a directory of three Go CPU profiles.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;

use capture::{QueryTime, TimeRange};
use egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::codec::{self, DecodeOptions};
use profile_model::units;

use super::app::FlintApp;
use super::timeline::{self, NO_DATA};

const FILES: [&str; 3] = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"];

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

/// A fresh directory holding copies of the three fixtures.
fn fixture_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-time-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in FILES {
        std::fs::copy(fixture(f), dir.join(f)).unwrap();
    }
    dir
}

/// A window in time mode over `dir`; jobs and queries run synchronously.
fn harness(dir: PathBuf) -> Harness<'static, FlintApp> {
    let mut app = FlintApp::new(DecodeOptions::default());
    app.sync_jobs = true;
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(tl.source.is_some(), "indexed");
    assert!(!tl.series.is_empty(), "series loaded");
    h
}

fn default_total(name: &str) -> (i64, String) {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let p = codec::decode(&bytes).unwrap();
    let t = p.default_sample_index();
    (p.total(t), p.str(p.sample_types[t].unit).to_string())
}

#[test]
fn range_over_all_files_merges_their_totals() {
    let dir = fixture_dir("merge");
    let mut h = harness(dir.clone());
    let span = h.state().timeline.as_ref().unwrap().span;
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    h.run_steps(4);
    let app = h.state();
    let cur = app.current.as_ref().expect("selection shown");
    let expected: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    let unit = default_total(FILES[0]).1;
    assert_eq!(cur.totals[0], expected);
    let text = app.selection_text().unwrap();
    assert!(text.contains("3 profiles"), "{text}");
    assert!(
        text.ends_with(&format!("total {}", units::readable(expected, &unit))),
        "{text}"
    );
    h.get_by_label(&text);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn empty_selection_keeps_the_view_and_says_so() {
    let dir = fixture_dir("empty");
    let mut h = harness(dir.clone());
    let span = h.state().timeline.as_ref().unwrap().span;
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    h.run_steps(4);
    let before = h.state().current.as_ref().unwrap().totals[0];
    let far = TimeRange {
        start_nanos: span.end_nanos + 3_600_000_000_000,
        end_nanos: span.end_nanos + 7_200_000_000_000,
    };
    h.state_mut().select_time(&ctx, QueryTime::Merge(far));
    h.run_steps(4);
    assert_eq!(h.state().current.as_ref().unwrap().totals[0], before);
    h.get_by_label(NO_DATA);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn plot_shows_cpu_cores() {
    let dir = fixture_dir("plot");
    let h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.y_unit(), "CPU cores");
    assert!(
        tl.series
            .iter()
            .all(|s| s.points.iter().all(|p| p[1] >= 0.0))
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn drag_and_click_convert_to_ranges() {
    let r = timeline::drag_to_range(20.5, 10.0);
    assert_eq!(r.start_nanos, 10_000_000_000);
    assert_eq!(r.end_nanos, 20_500_000_000);
    let r = timeline::drag_to_range(5.0, 5.0);
    assert_eq!(r.end_nanos, r.start_nanos + 1);
    let r = timeline::click_to_range(125.3, 10_000_000_000);
    assert_eq!(
        (r.start_nanos, r.end_nanos),
        (120_000_000_000, 130_000_000_000)
    );
    assert_eq!(timeline::hms(1_796_042_369_000_000_000), "12:39:29");
}

#[test]
fn points_are_bucketed_per_pixel() {
    let points: Vec<[f64; 2]> = (0..1000).map(|i| [f64::from(i), 1.0]).collect();
    let out = timeline::bucket_points(&points, 100.0, 899.0, 100.0);
    // 100 columns plus the neighbor on each side.
    assert_eq!(out.len(), 102);
    assert!(out.windows(2).all(|w| w[0][0] < w[1][0]));
    assert!(out.iter().all(|p| (p[1] - 1.0).abs() < 1e-9));
    let few = timeline::bucket_points(&points[..10], 0.0, 9.0, 100.0);
    assert_eq!(few.len(), 10);
}
