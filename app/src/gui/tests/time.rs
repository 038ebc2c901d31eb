//! Time mode tests: a directory of three Go CPU profiles.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;

use capture::selector::MatchOp;
use capture::{Matcher, QueryTime, Selector, TimeRange};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use profile_model::codec;
use profile_model::units;

use crate::gui::app::{FlintApp, SET_ASIDE_NODES};
use crate::gui::shell::dialogs::ExportKind;
use crate::gui::time::plot;
use crate::gui::time::selector_bar::{self, SumBy};
use crate::gui::time::timeline::{self, NO_DATA};

use crate::gui::tests::fixtures::{FILES, click_at, fixture, fixture_dir, shift_click_at, window};

/// A window in time mode over `dir`; jobs and queries run synchronously.
fn harness(dir: PathBuf) -> Harness<'static, FlintApp> {
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(tl.source.is_some(), "indexed");
    assert!(!tl.series.is_empty(), "series loaded");
    h
}

/// Merges every profile of the window's span, as a drag over all of it does; the span.
fn merge_everything(h: &mut Harness<'static, FlintApp>) -> TimeRange {
    let span = h.state().timeline.as_ref().expect("time mode").span;
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    h.run_steps(4);
    span
}

/// Plots the type whose sample type is `sample_type`, as choosing it in the type menu does.
fn plot_type(h: &mut Harness<'static, FlintApp>, sample_type: &str) {
    let tl = h.state_mut().timeline.as_mut().expect("time mode");
    tl.type_index = tl
        .types
        .iter()
        .position(|t| t.sample_type == sample_type)
        .expect("the type is listed");
    let ctx = h.ctx.clone();
    h.state_mut().load_series(&ctx);
    h.run_steps(4);
}

fn default_total(name: &str) -> (i64, String) {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let p = codec::decode(&bytes).unwrap();
    let t = p.default_sample_index();
    (p.total(t), p.str(p.sample_types[t].unit).to_string())
}

#[test]
fn range_over_all_files_merges_their_totals() {
    // Also with the view shown set aside while the merge runs (as a large one is).
    for set_aside_nodes in [SET_ASIDE_NODES, 0] {
        range_over_all_files_merges(set_aside_nodes);
    }
}

fn range_over_all_files_merges(set_aside_nodes: usize) {
    let dir = fixture_dir("merge");
    let mut h = harness(dir.clone());
    h.state_mut().set_aside_nodes = set_aside_nodes;
    // Twice: the second merge replaces the view the first one made.
    for _ in 0..2 {
        merge_everything(&mut h);
    }
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
    // The status bar says how long the merge took.
    h.get_by_label_contains("merged 3 profiles in ");
    // Exported, the merged range is offered under a name a shell takes unquoted.
    let offered = app.export_prompt(ExportKind::Pprof).expect("a view").path;
    let name = offered.rsplit('/').next().unwrap_or_default();
    assert!(name.ends_with(".view.pb.gz"), "{offered}");
    assert!(
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c)),
        "{offered}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn empty_selection_keeps_the_view_and_says_so() {
    // Also with the view set aside while the query runs (as a large one is).
    for set_aside_nodes in [SET_ASIDE_NODES, 0] {
        empty_selection_keeps_the_view(set_aside_nodes);
    }
}

fn empty_selection_keeps_the_view(set_aside_nodes: usize) {
    let dir = fixture_dir("empty");
    let mut h = harness(dir.clone());
    h.state_mut().set_aside_nodes = set_aside_nodes;
    let span = merge_everything(&mut h);
    let ctx = h.ctx.clone();
    let before = h.state().current.as_ref().unwrap().totals[0];
    let far = TimeRange {
        start_nanos: span.end_nanos + 3_600_000_000_000,
        end_nanos: span.end_nanos + 7_200_000_000_000,
    };
    h.state_mut().select_time(&ctx, QueryTime::Merge(far));
    h.run_steps(4);
    assert_eq!(h.state().current.as_ref().unwrap().totals[0], before);
    h.get_by_label(NO_DATA);
    // Plotting again (another preset, type or selector) answers anew: the notice about
    // the empty selection goes.
    h.state_mut().load_series(&ctx);
    h.run_steps(4);
    assert!(h.query_by_label(NO_DATA).is_none(), "the notice is stale");
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
fn a_click_beside_a_point_selects_that_points_bucket() {
    const SEC: i64 = 1_000_000_000;
    let series = |points: &[f64]| {
        timeline::PlotSeries::new(
            "total".into(),
            Vec::new(),
            1,
            points.iter().map(|&x| [x, 1.0]).collect(),
        )
    };
    let (a, b) = (series(&[100.0, 102.0]), series(&[104.0]));
    let lines = [&a, &b];
    let snap = |x, px| {
        let r = timeline::snap_click(&lines, x, px, 8.0, SEC);
        (r.start_nanos / SEC, r.end_nanos / SEC)
    };
    // 5 px left of the point at 102 s (drawn at its bucket's start): its bucket, not
    // the empty one under the click.
    assert_eq!(snap(101.95, 100.0), (102, 103));
    // The nearest point of any series, on either side.
    assert_eq!(snap(103.97, 100.0), (104, 105));
    assert_eq!(snap(100.04, 100.0), (100, 101));
    // Far from every point: the bucket under the click.
    assert_eq!(snap(101.5, 100.0), (101, 102));
    assert_eq!(snap(99.0, 100.0), (99, 100));
    // No series: the bucket under the click.
    let r = timeline::snap_click(&[], 101.95, 100.0, 8.0, SEC);
    assert_eq!((r.start_nanos / SEC, r.end_nanos / SEC), (101, 102));
}

#[test]
fn a_range_over_midnight_names_its_dates() {
    const SEC: i64 = 1_000_000_000;
    let noon = 1_796_042_369 * SEC; // 2026-11-30 12:39:29 UTC
    let merge = |start, end| {
        timeline::describe_time(
            QueryTime::Merge(TimeRange {
                start_nanos: start,
                end_nanos: end,
            }),
            10 * SEC,
        )
    };
    assert_eq!(merge(noon, noon + 3600 * SEC), "12:39:29–13:39:29");
    // The visible range merged reaches a microsecond past the view: not a second.
    assert_eq!(
        merge(noon - 1_000, noon + 3600 * SEC + 1_000),
        "12:39:29–13:39:29"
    );
    // A day's merge: the same clock time at both ends, a day apart.
    assert_eq!(
        merge(noon, noon + 86_400 * SEC),
        "2026-11-30 12:39:29–2026-12-01 12:39:29"
    );
    // One step is a point.
    assert_eq!(merge(noon, noon + 10 * SEC), "12:39:29");
    assert_eq!(
        timeline::describe_time(QueryTime::Single(noon), 10 * SEC),
        "12:39:29"
    );
}

#[test]
fn points_are_bucketed_per_pixel() {
    let points: Vec<[f64; 2]> = (0..1000).map(|i| [f64::from(i), 1.0]).collect();
    let out = plot::bucket_points(&points, 100.0, 899.0, 100.0);
    // 100 columns plus the neighbor on each side.
    assert_eq!(out.len(), 102);
    assert!(out.windows(2).all(|w| w[0].x < w[1].x));
    assert!(out.iter().all(|p| (p.y - 1.0).abs() < 1e-9));
    // Each column holds the mean of its points: 8 points of the 7.99-wide columns.
    assert!((out[1].x - 103.5).abs() < 1e-9, "{:?}", out[1]);
    let few = plot::bucket_points(&points[..10], 0.0, 9.0, 100.0);
    assert_eq!(few.len(), 10);
}

/// Sum of the default sample type over the samples labelled `endpoint=<value>`.
fn endpoint_total(name: &str, value: &str) -> i64 {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let p = codec::decode(&bytes).unwrap();
    let t = p.default_sample_index();
    (0..p.samples.len())
        .filter(|&i| {
            p.sample_labels(i)
                .any(|(k, v)| k == "endpoint" && v == value)
        })
        .map(|i| p.samples.values[t][i])
        .sum()
}

fn plotted_total(h: &Harness<'static, FlintApp>) -> i64 {
    h.state()
        .timeline
        .as_ref()
        .unwrap()
        .series
        .iter()
        .map(|s| s.total)
        .sum()
}

/// The window on `dir` in time mode, its series summed by `endpoint`.
fn by_endpoint(dir: &std::path::Path) -> Harness<'static, FlintApp> {
    let mut h = harness(dir.to_path_buf());
    let ctx = h.ctx.clone();
    h.state_mut()
        .set_sum_by(&ctx, SumBy::Labels(vec!["endpoint".to_string()]));
    h.run_steps(4);
    h
}

/// Where on the screen the middle point of the first series with an `endpoint` label
/// is drawn, and that label's value.
fn endpoint_point(h: &Harness<'_, FlintApp>) -> (egui::Pos2, String) {
    let tl = h.state().timeline.as_ref().expect("time mode");
    let series = tl
        .series
        .iter()
        .find(|s| s.labels.iter().any(|(k, _)| k == "endpoint"))
        .expect("a series by endpoint");
    let p = series.points[series.points.len() / 2];
    let pos = tl
        .last_transform
        .expect("the plot was drawn")
        .position_from_point(&egui_plot::PlotPoint::new(p[0], p[1]));
    (pos, series.labels[0].1.clone())
}

/// The values of the label `endpoint` the time mode knows of.
fn endpoint_values(h: &Harness<'_, FlintApp>) -> Vec<String> {
    let tl = h.state().timeline.as_ref().expect("time mode");
    tl.label_values("endpoint").expect("endpoint values loaded")
}

fn endpoint(value: &str) -> Matcher {
    Matcher::new("endpoint", MatchOp::Equal, value).unwrap()
}

#[test]
fn endpoint_matcher_reduces_the_plotted_total() {
    let dir = fixture_dir("matcher");
    let mut h = harness(dir.clone());
    let all: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    assert_eq!(plotted_total(&h), all);
    let hash: i64 = FILES.iter().map(|f| endpoint_total(f, "/api/hash")).sum();
    assert!(hash > 0 && hash < all, "{hash} of {all}");
    let names = h.state().timeline.as_ref().unwrap().bar.label_names.clone();
    assert!(names.iter().any(|n| n == "endpoint"), "{names:?}");
    // Label values are asked for in the background, once.
    let ctx = h.ctx.clone();
    h.state_mut().request_values(&ctx, "endpoint");
    h.run_steps(2);
    let values = endpoint_values(&h);
    assert!(values.iter().any(|v| v == "/api/hash"), "{values:?}");

    h.state_mut()
        .add_matchers(&ctx, vec![endpoint("/api/hash")]);
    h.run_steps(4);
    assert_eq!(plotted_total(&h), hash);
    h.get_by_label(r#"endpoint="/api/hash""#);

    // A selection merges only the matching samples.
    merge_everything(&mut h);
    assert_eq!(h.state().current.as_ref().unwrap().totals[0], hash);

    // The chip's × removes the matcher.
    h.get_by_label("×").click();
    h.run_steps(4);
    assert!(h.state().timeline.as_ref().unwrap().matchers.is_empty());
    assert_eq!(plotted_total(&h), all);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn invalid_text_selector_shows_the_error_and_keeps_the_series() {
    let dir = fixture_dir("text");
    let mut h = harness(dir.clone());
    h.get_by_label("text").click();
    h.run_steps(2);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.bar.text_mode);
    let typ = tl.selector().unwrap().profile_type.to_string();
    assert_eq!(tl.bar.text, typ);
    let before: Vec<(String, i64)> = tl
        .series
        .iter()
        .map(|s| (s.name.clone(), s.total))
        .collect();

    let bad = format!(r#"{typ}{{endpoint="/api/hash""#);
    let err = Selector::parse(&bad).unwrap_err();
    let ctx = h.ctx.clone();
    h.state_mut().apply_selector_text(&ctx, &bad);
    h.run_steps(4);
    h.get_by_label(&err);
    let tl = h.state().timeline.as_ref().unwrap();
    let after: Vec<(String, i64)> = tl
        .series
        .iter()
        .map(|s| (s.name.clone(), s.total))
        .collect();
    assert_eq!(after, before);
    assert!(tl.matchers.is_empty());

    let good = format!(r#"{typ}{{endpoint="/api/sort"}}"#);
    h.state_mut().apply_selector_text(&ctx, &good);
    h.run_steps(4);
    let sort: i64 = FILES.iter().map(|f| endpoint_total(f, "/api/sort")).sum();
    assert!(
        h.state()
            .timeline
            .as_ref()
            .unwrap()
            .bar
            .text_error
            .is_none()
    );
    assert_eq!(plotted_total(&h), sort);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn merge_button_merges_every_visible_profile() {
    let dir = fixture_dir("mergebutton");
    let mut h = harness(dir.clone());
    h.get_by_label("Merge").click();
    h.run_steps(4);
    let expected: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    let app = h.state();
    assert_eq!(app.current.as_ref().expect("merged").totals[0], expected);
    let text = app.selection_text().unwrap();
    assert!(text.contains("3 profiles"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sum_by_endpoint_yields_several_series() {
    let dir = fixture_dir("sumby");
    let mut h = harness(dir.clone());
    let all = plotted_total(&h);
    let ctx = h.ctx.clone();
    h.state_mut()
        .set_sum_by(&ctx, SumBy::Labels(vec!["endpoint".to_string()]));
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.series.len() > 1, "{}", tl.series.len());
    let named = tl
        .series
        .iter()
        .filter(|s| s.name.starts_with("endpoint="))
        .count();
    assert!(named > 1, "{named}");
    assert_eq!(plotted_total(&h), all);
    h.state_mut().set_sum_by(&ctx, SumBy::Total);
    h.run_steps(4);
    assert_eq!(h.state().timeline.as_ref().unwrap().series.len(), 1);
    assert_eq!(plotted_total(&h), all);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sum_by_two_labels_ticked_in_the_drop_down_keeps_each_pair_apart() {
    let dir = fixture_dir("sumby2");
    let mut h = by_endpoint(&dir);
    let all = plotted_total(&h);
    let by_endpoint = h.state().timeline.as_ref().unwrap().series.len();
    // The drop-down stays open while a second label is ticked.
    h.get_by_label_contains("how the plotted series are summed")
        .click();
    h.run_steps(2);
    h.get_by_label("path").click();
    h.run_steps(4);
    assert!(
        h.query_by_label("endpoint").is_some(),
        "the drop-down is open"
    );
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(
        tl.sum_by,
        SumBy::Labels(vec!["endpoint".to_string(), "path".to_string()])
    );
    assert!(tl.series.len() > by_endpoint, "{}", tl.series.len());
    for s in &tl.series {
        let keys: Vec<&str> = s.labels.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"path"), "{keys:?}");
    }
    assert_eq!(plotted_total(&h), all);
    let combo = h.get_by_label_contains("how the plotted series are summed");
    assert_eq!(
        combo.accesskit_node().value().as_deref(),
        Some("endpoint, path")
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sum_by_labels_toggle_in_the_order_of_the_names() {
    let names: Vec<String> = ["comm", "endpoint", "path"].map(String::from).to_vec();
    let labels = |l: &[&str]| SumBy::Labels(l.iter().map(|s| s.to_string()).collect());
    let both = SumBy::Auto.toggled("path", &names).toggled("comm", &names);
    assert_eq!(both, labels(&["comm", "path"]));
    assert_eq!(both.text(&names), "comm, path");
    assert_eq!(
        both.resolve(&names),
        Some(vec!["comm".into(), "path".into()])
    );
    assert_eq!(both.toggled("comm", &names), labels(&["path"]));
    assert_eq!(labels(&["path"]).toggled("path", &names), SumBy::Total);
}

#[test]
fn auto_sum_by_names_the_label_it_sums_by() {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    assert_eq!(
        SumBy::Auto.text(&names(&["comm", "container"])),
        "auto: comm"
    );
    assert_eq!(
        SumBy::Auto.text(&names(&["container", "pid"])),
        "auto: container"
    );
    assert_eq!(
        SumBy::Auto.text(&names(&["path", "pid"])),
        "auto: one series"
    );
}

#[test]
fn shift_click_picks_the_nearest_line_and_its_labels() {
    let low: Vec<[f64; 2]> = vec![[0.0, 1.0], [10.0, 1.0]];
    let high: Vec<[f64; 2]> = vec![[0.0, 5.0], [10.0, 9.0]];
    let lines = [low.as_slice(), high.as_slice()];
    // One unit is 10 px along both axes.
    assert_eq!(
        selector_bar::nearest_series(&lines, 5.0, 1.2, [10.0, 10.0], 12.0),
        Some(0)
    );
    assert_eq!(
        selector_bar::nearest_series(&lines, 5.0, 6.8, [10.0, 10.0], 12.0),
        Some(1)
    );
    assert_eq!(
        selector_bar::nearest_series(&lines, 5.0, 4.0, [10.0, 10.0], 12.0),
        None
    );
    let labels = vec![
        ("container".to_string(), "parca".to_string()),
        ("endpoint".to_string(), "/api/hash".to_string()),
    ];
    let existing = vec![endpoint("/api/hash")];
    let add = selector_bar::series_matchers(&labels, &existing);
    assert_eq!(add.len(), 1);
    assert_eq!(add[0].to_string(), r#"container="parca""#);
}

#[test]
fn plot_panel_keeps_its_height() {
    let dir = fixture_dir("height");
    let mut h = harness(dir.clone());
    h.run_steps(3);
    let first = h.state().timeline.as_ref().unwrap().plot_height;
    assert!(first >= 60.0, "{first}");
    let ctx = h.ctx.clone();
    for _ in 0..5 {
        h.state_mut()
            .add_matchers(&ctx, vec![endpoint("/api/hash")]);
        h.run_steps(3);
        h.state_mut().set_matchers(&ctx, Vec::new());
        h.run_steps(3);
        h.get_by_label("Merge").click();
        h.run_steps(3);
    }
    let last = h.state().timeline.as_ref().unwrap().plot_height;
    assert!((last - first).abs() < 0.5, "{first} → {last}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shift_click_on_a_line_adds_its_labels_as_matchers() {
    let dir = fixture_dir("shift");
    let mut h = by_endpoint(&dir);
    let (pos, _) = endpoint_point(&h);
    shift_click_at(&mut h, pos);
    let app = h.state();
    assert!(app.current.is_none(), "a Shift+click does not select");
    let matchers = &app.timeline.as_ref().unwrap().matchers;
    assert_eq!(matchers.len(), 1, "{matchers:?}");
    assert_eq!(matchers[0].name, "endpoint");
    let value = matchers[0].value.clone();
    let expected: i64 = FILES.iter().map(|f| endpoint_total(f, &value)).sum();
    assert_eq!(plotted_total(&h), expected);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_click_on_a_legend_entry_hides_its_line_and_a_second_shows_it() {
    let dir = fixture_dir("legend-toggle");
    let mut h = by_endpoint(&dir);
    let names: Vec<String> = {
        let tl = h.state().timeline.as_ref().unwrap();
        tl.series.iter().map(|s| s.name.clone()).collect()
    };
    assert!(names.len() > 1, "{names:?}");
    let toggled =
        |h: &Harness<'_, FlintApp>, name: &str| h.get_by_label(name).accesskit_node().toggled();
    let entry = h.get_by_label(&names[0]).rect().center();
    click_at(&mut h, entry);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.hidden.contains(&names[0]), "{:?}", tl.hidden);
    assert!(
        h.state().current.is_none(),
        "a click on the legend does not select"
    );
    assert_eq!(
        toggled(&h, &names[0]),
        Some(egui::accesskit::Toggled::False)
    );
    assert_eq!(toggled(&h, &names[1]), Some(egui::accesskit::Toggled::True));
    click_at(&mut h, entry);
    assert!(h.state().timeline.as_ref().unwrap().hidden.is_empty());
    assert_eq!(toggled(&h, &names[0]), Some(egui::accesskit::Toggled::True));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shift_click_on_a_legend_entry_adds_its_labels_and_keeps_the_line() {
    let dir = fixture_dir("legend");
    let mut h = by_endpoint(&dir);
    let tl = h.state().timeline.as_ref().unwrap();
    let series = tl
        .series
        .iter()
        .find(|s| s.labels.iter().any(|(k, _)| k == "endpoint"))
        .unwrap();
    let name = series.name.clone();
    let value = series.labels[0].1.clone();
    let entry = h.get_by_label(&name).rect().center();
    shift_click_at(&mut h, entry);
    let app = h.state();
    assert!(app.current.is_none(), "a Shift+click does not select");
    let matchers = &app.timeline.as_ref().unwrap().matchers;
    assert_eq!(matchers, &vec![endpoint(&value)]);
    let expected: i64 = FILES.iter().map(|f| endpoint_total(f, &value)).sum();
    assert_eq!(plotted_total(&h), expected);
    // The entry is still checked: the Shift+click did not hide the line.
    let entry = h.get_by_label(&name);
    assert_eq!(
        entry.accesskit_node().toggled(),
        Some(egui::accesskit::Toggled::True),
        "the line stays visible"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shift_click_on_a_legend_entry_summed_by_two_labels_adds_both() {
    let dir = fixture_dir("legend2");
    let mut h = harness(dir.clone());
    let ctx = h.ctx.clone();
    let both = SumBy::Labels(vec!["endpoint".to_string(), "path".to_string()]);
    h.state_mut().set_sum_by(&ctx, both);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    let series = tl
        .series
        .iter()
        .find(|s| s.labels.len() == 2)
        .expect("a series with both labels");
    let (name, labels) = (series.name.clone(), series.labels.clone());
    let entry = h.get_by_label(&name).rect().center();
    shift_click_at(&mut h, entry);
    let matchers = &h.state().timeline.as_ref().unwrap().matchers;
    let expected: Vec<Matcher> = labels
        .iter()
        .map(|(k, v)| Matcher::new(k, MatchOp::Equal, v).unwrap())
        .collect();
    assert_eq!(matchers, &expected);
    // Only that series is left, alone.
    assert_eq!(h.state().timeline.as_ref().unwrap().series.len(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn changing_the_matchers_merges_the_selection_again() {
    let dir = fixture_dir("remerge");
    let mut h = harness(dir.clone());
    let span = merge_everything(&mut h);
    let ctx = h.ctx.clone();
    let all: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    assert_eq!(h.state().current.as_ref().unwrap().totals[0], all);
    let value = "/api/sort";
    h.state_mut().set_matchers(&ctx, vec![endpoint(value)]);
    h.run_steps(4);
    let expected: i64 = FILES.iter().map(|f| endpoint_total(f, value)).sum();
    assert!(expected > 0 && expected < all, "{expected} of {all}");
    let app = h.state();
    assert_eq!(app.current.as_ref().unwrap().totals[0], expected);
    assert_eq!(
        app.timeline.as_ref().unwrap().selection,
        Some(QueryTime::Merge(span))
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn drawn_lines_are_reused_until_the_series_or_the_view_change() {
    let series = |v: f64| {
        timeline::PlotSeries::new(
            "total".into(),
            Vec::new(),
            1,
            (0..1000).map(|i| [f64::from(i), v]).collect(),
        )
    };
    let mut tl = timeline::Timeline::new(timeline::Origin::Dir(PathBuf::from("unused")));
    tl.set_series(vec![series(1.0)]);
    let first = tl.drawn_lines(1, 0.0, 999.0, 100.0).to_vec();
    assert!(
        first[0].points.len() <= 102,
        "one point per pixel column (and the edges)"
    );
    assert_eq!(tl.drawn_lines(1, 0.0, 999.0, 100.0), first.as_slice());
    // New series: recomputed even though the view is the same.
    tl.set_series(vec![series(2.0)]);
    assert!(
        tl.drawn_lines(1, 0.0, 999.0, 100.0)[0]
            .points
            .iter()
            .all(|p| p.y == 2.0)
    );
    // A wider plot: more columns.
    assert!(tl.drawn_lines(1, 0.0, 999.0, 400.0)[0].points.len() > first[0].points.len());
}

#[test]
fn a_corrupt_file_in_the_directory_is_skipped_with_a_visible_warning() {
    let dir = fixture_dir("corrupt");
    std::fs::write(dir.join("broken.pb.gz"), b"\x1f\x8b not really gzip").unwrap();
    let h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.profiles, Some(FILES.len()), "the others load");
    assert_eq!(tl.warnings.len(), 1, "{:?}", tl.warnings);
    assert!(
        tl.warnings[0].starts_with("skipped ") && tl.warnings[0].contains("broken.pb.gz"),
        "{:?}",
        tl.warnings
    );
    assert!(
        h.query_by_label_contains("broken.pb.gz").is_some(),
        "the warning is on screen"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A window over a fresh fixture directory (`tag`) with `endpoint` chosen as the label
/// of the matcher to add.
fn adding_endpoint(tag: &str) -> (Harness<'static, FlintApp>, PathBuf) {
    let dir = fixture_dir(tag);
    let mut h = harness(dir.clone());
    h.state_mut().timeline.as_mut().unwrap().bar.add_name = "endpoint".to_string();
    h.run_steps(4);
    (h, dir)
}

/// Types `text` into the matcher's value field.
fn type_value(h: &mut Harness<'static, FlintApp>, text: &str) {
    let field = h.get_by(|n| n.placeholder() == Some("value"));
    field.focus();
    field.type_text(text);
    h.run_steps(3);
}

#[test]
fn typing_a_value_lists_the_labels_values_that_contain_it() {
    let (mut h, dir) = adding_endpoint("suggest");
    type_value(&mut h, "/api/s");
    // The values with "/api/s" in them are listed under the field.
    let values = endpoint_values(&h);
    let expected = selector_bar::suggestions(&values, "/api/s", 12);
    assert!(expected.contains(&"/api/sort"), "{values:?}");
    assert!(!expected.contains(&"/api/hash"), "{expected:?}");
    assert!(
        h.query_by_label("/api/hash").is_none(),
        "only the values typed"
    );
    h.get_by_label("/api/sort").click();
    h.run_steps(3);
    let bar = &h.state().timeline.as_ref().unwrap().bar;
    assert_eq!(bar.add_value, "/api/sort");
    assert!(!bar.suggesting, "the list closes once a value is picked");
    assert!(h.query_by_label("/api/sort").is_none());
    h.get_by_label("Add").click();
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.matchers, vec![endpoint("/api/sort")]);
    assert_eq!(
        tl.bar.add_value, "",
        "the field is ready for the next matcher"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn enter_adds_the_highlighted_suggestion_and_arrows_move_it() {
    let (mut h, dir) = adding_endpoint("suggest-keys");
    let values = endpoint_values(&h);
    let listed = selector_bar::suggestions(&values, "/api/", 12);
    assert!(listed.len() >= 2, "{listed:?}");
    // A value typed in part: Enter takes the first suggestion, not the text typed
    // (which `=` would match with nothing).
    type_value(&mut h, "/api/");
    h.key_press(egui::Key::Enter);
    h.run_steps(4);
    assert_eq!(
        h.state().timeline.as_ref().unwrap().matchers,
        vec![endpoint(listed[0])]
    );
    // ↓ moves to the next one, ↑ back, and past the end it stays on the last.
    type_value(&mut h, "/api/");
    for key in [
        egui::Key::ArrowDown,
        egui::Key::ArrowDown,
        egui::Key::ArrowUp,
    ] {
        h.key_press(key);
        h.run_steps(1);
    }
    h.key_press(egui::Key::Enter);
    h.run_steps(4);
    assert_eq!(
        h.state().timeline.as_ref().unwrap().matchers,
        vec![endpoint(listed[0]), endpoint(listed[1])]
    );
    // The Add button adds the text as typed.
    type_value(&mut h, "/api/");
    h.get_by_label("Add").click();
    h.run_steps(4);
    assert_eq!(
        h.state().timeline.as_ref().unwrap().matchers,
        vec![endpoint(listed[0]), endpoint(listed[1]), endpoint("/api/")]
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_value_entered_is_the_highlighted_suggestion_or_the_text() {
    let listed = ["envoy".to_string(), "envoy-admin".to_string()];
    assert_eq!(selector_bar::entered_value("env", &listed, 0), "envoy");
    assert_eq!(
        selector_bar::entered_value("env", &listed, 1),
        "envoy-admin"
    );
    assert_eq!(
        selector_bar::entered_value("env", &listed, 7),
        "envoy-admin"
    );
    assert_eq!(selector_bar::entered_value("x.*", &[], 0), "x.*");
}

#[test]
fn suggestions_ignore_case_and_stop_at_an_exact_value() {
    let values: Vec<String> = ["api-server", "API-gateway", "envoy"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        selector_bar::suggestions(&values, "api", 12),
        ["api-server", "API-gateway"]
    );
    assert_eq!(
        selector_bar::suggestions(&values, "", 2),
        ["api-server", "API-gateway"]
    );
    assert!(selector_bar::suggestions(&values, "envoy", 12).is_empty());
    assert!(selector_bar::suggestions(&values, "zzz", 12).is_empty());
}

#[test]
fn a_directory_without_profiles_says_so_where_the_flame_graph_goes() {
    let dir = std::env::temp_dir().join(format!("flint-gui-empty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), b"not a profile").unwrap();
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    let app = h.state();
    let error = app.error.clone().expect("the error is shown");
    assert!(
        error.contains("its one file is not a pprof profile (") && error.contains("notes.txt"),
        "{error}"
    );
    let hint = app.timeline.as_ref().unwrap().hint();
    assert_eq!(hint, format!("nothing to show: {error}"));
    h.get_by_label(&hint);
    assert!(h.query_by_label(timeline::CLICK_HINT).is_none());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_time_axis_falls_on_round_times_and_names_days() {
    assert_eq!(timeline::time_grid_steps(0.3), [1.0, 5.0, 15.0]);
    assert_eq!(timeline::time_grid_steps(40.0), [60.0, 300.0, 900.0]);
    assert_eq!(
        timeline::time_grid_steps(2000.0),
        [3600.0, 10800.0, 43200.0]
    );
    let year = 31_557_600.0;
    let (day, week) = (86_400.0, 604_800.0);
    // Each step a multiple of the one before, or itself again.
    assert_eq!(timeline::time_grid_steps(50_000.0), [day, week, week]);
    for base in (0..40).map(|k| 1.7f64.powi(k)) {
        let [a, b, c] = timeline::time_grid_steps(base);
        assert!(a >= base.min(500.0 * year), "{base}: {a}");
        assert_eq!((b / a).fract(), 0.0, "{base}: {a} {b}");
        assert_eq!((c / b).fract(), 0.0, "{base}: {b} {c}");
    }
    assert_eq!(
        timeline::time_grid_steps(2e7),
        [year, 5.0 * year, 20.0 * year]
    );
    assert_eq!(
        timeline::time_grid_steps(1e9),
        [50.0 * year, 200.0 * year, 200.0 * year]
    );
    assert_eq!(timeline::time_grid_steps(1e12), [500.0 * year; 3]);
    let noon = 1_796_040_000.0; // 2026-11-30 12:00:00 UTC
    assert_eq!(timeline::time_label(noon + 20.0, 10.0), "12:00:20");
    assert_eq!(timeline::time_label(noon + 900.0, 900.0), "12:15");
    assert_eq!(
        timeline::time_label(noon + 43_200.0, 3600.0),
        "12-01",
        "midnight"
    );
    assert_eq!(timeline::time_label(noon - 43_200.0, 86_400.0), "11-30");
    assert_eq!(timeline::time_label(noon, 2_592_000.0), "2026-11-30");
    // Lines a year apart fall near New Year, either side, and before 1970 too.
    assert_eq!(timeline::time_label(year, year), "1971");
    assert_eq!(timeline::time_label(3.0 * year, year), "1973");
    assert_eq!(timeline::time_label(-year, year), "1969");
    assert_eq!(timeline::time_label(-3.0 * year, 100.0 * year), "1967");
    // 200 years of 365.25 days end 2 days before 1770 began.
    assert_eq!(timeline::time_label(-200.0 * year, 100.0 * year), "1770");
}

#[test]
fn the_value_axis_steps_by_one_two_and_five() {
    let close = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
    // Each step a multiple of the one before: labelled lines never crowd.
    assert!(close(timeline::value_grid_steps(0.03), [0.05, 0.1, 0.5]));
    assert!(close(timeline::value_grid_steps(0.1), [0.1, 0.5, 1.0]));
    assert!(close(timeline::value_grid_steps(0.15), [0.2, 1.0, 2.0]));
    assert!(close(
        timeline::value_grid_steps(700.0),
        [1000.0, 5000.0, 10000.0]
    ));
    assert!(close(timeline::value_grid_steps(0.0), [1.0, 5.0, 10.0]));
    assert_eq!(timeline::value_label(1.5, 0.5), "1.5");
    assert_eq!(timeline::value_label(0.25, 0.05), "0.25");
    assert_eq!(timeline::value_label(0.2, 0.2), "0.2");
    assert_eq!(timeline::value_label(4.0, 2.0), "4");
    assert_eq!(timeline::value_label(3000.0, 1000.0), "3000");
    assert_eq!(timeline::value_label(-1e-17, 0.1), "0.0");
    // Bytes in use: thousands, millions, billions.
    assert_eq!(timeline::value_label(30_000.0, 10_000.0), "30k");
    assert_eq!(timeline::value_label(1_500_000.0, 500_000.0), "1.5M");
    assert_eq!(timeline::value_label(2_000_000.0, 1_000_000.0), "2M");
    assert_eq!(timeline::value_label(3e9, 1e9), "3G");
    assert_eq!(timeline::value_label(0.0, 500_000.0), "0.0");
}

/// The sum of the default column of the samples of the fixtures in `range` that have
/// `endpoint` = `value` (every sample when `value` is `None`).
fn total_in(range: TimeRange, value: Option<&str>) -> i64 {
    FILES
        .iter()
        .filter(|f| {
            let bytes = std::fs::read(fixture(f)).unwrap();
            let t = codec::decode(&bytes).unwrap().time_nanos;
            range.start_nanos <= t && t < range.end_nanos
        })
        .map(|f| match value {
            Some(v) => endpoint_total(f, v),
            None => default_total(f).0,
        })
        .sum()
}

#[test]
fn a_click_on_a_line_shows_that_series_profile_at_the_point() {
    let dir = fixture_dir("point");
    let mut h = by_endpoint(&dir);
    let (pos, value) = endpoint_point(&h);
    click_at(&mut h, pos);
    h.run_steps(4);
    let app = h.state();
    let tl = app.timeline.as_ref().unwrap();
    assert_eq!(tl.selection_series, vec![endpoint(&value)]);
    assert!(tl.matchers.is_empty(), "the selector itself is unchanged");
    let Some(QueryTime::Merge(range)) = tl.selection else {
        panic!("a point is selected: {:?}", tl.selection);
    };
    let (series_total, all) = (total_in(range, Some(&value)), total_in(range, None));
    assert!(
        series_total > 0 && series_total < all,
        "{series_total} of {all}"
    );
    assert_eq!(app.current.as_ref().unwrap().totals[0], series_total);
    let text = app.selection_text().unwrap();
    assert!(
        text.contains(&format!("{{endpoint=\"{value}\"}}")),
        "{text}"
    );
    h.get_by_label(&text);

    // Merge takes every series again.
    let ctx = h.ctx.clone();
    h.state_mut().merge_visible(&ctx);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.selection_series.is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_whole_view_keeps_the_first_last_and_a_lone_point_off_the_edges() {
    const SEC: i64 = 1_000_000_000;
    let mut tl = timeline::Timeline::new(timeline::Origin::Capture);
    let day = 86_400 * SEC;
    tl.span = TimeRange {
        start_nanos: 1_700_000_000 * SEC,
        end_nanos: 1_700_000_000 * SEC + day,
    };
    let (a, b) = tl.whole_bounds();
    let (start, end) = (1_700_000_000.0, 1_700_000_000.0 + 86_400.0);
    assert!(
        (start - a - 86_400.0 * timeline::MARGIN).abs() < 1e-3,
        "{a}"
    );
    assert!((b - end - 86_400.0 * timeline::MARGIN).abs() < 1e-3, "{b}");
    // One 10-second profile: at least a second either side.
    tl.span.end_nanos = tl.span.start_nanos + 10 * SEC;
    let (a, b) = tl.whole_bounds();
    assert_eq!((a, b), (start - 1.0, start + 11.0));
}

/// Turns the wheel by `lines` over `pos` with `modifiers` held, and lets the window settle.
fn wheel(h: &mut Harness<'_, FlintApp>, pos: egui::Pos2, lines: f32, modifiers: egui::Modifiers) {
    h.hover_at(pos);
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Line,
        delta: egui::vec2(0.0, lines),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers,
    });
    h.run_steps(30);
}

#[test]
fn the_wheel_pans_and_zooms_the_time_and_the_values_stay_fitted() {
    let dir = fixture_dir("wheel");
    let mut h = harness(dir.clone());
    let bounds = |h: &Harness<'_, FlintApp>| {
        let tl = h.state().timeline.as_ref().unwrap();
        *tl.last_transform.expect("the plot was drawn").bounds()
    };
    let before = bounds(&h);
    let center = h
        .state()
        .timeline
        .as_ref()
        .unwrap()
        .last_transform
        .unwrap()
        .frame()
        .center();
    wheel(&mut h, center, 3.0, egui::Modifiers::COMMAND);
    let zoomed = bounds(&h);
    assert!(
        zoomed.width() < before.width() * 0.9,
        "{before:?} → {zoomed:?}"
    );
    assert_eq!(zoomed.range_y(), before.range_y(), "values are not zoomed");
    wheel(&mut h, center, 3.0, egui::Modifiers::NONE);
    let panned = bounds(&h);
    assert!((panned.width() - zoomed.width()).abs() < 1e-6 * zoomed.width());
    assert!(
        panned.min()[0] != zoomed.min()[0],
        "the wheel pans the time"
    );
    assert_eq!(panned.range_y(), before.range_y(), "values are not panned");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_merge_of_the_view_is_cut_to_the_data() {
    let r = |a, b| TimeRange {
        start_nanos: a,
        end_nanos: b,
    };
    let span = r(100, 200);
    assert_eq!(timeline::clamp_to(r(90, 210), span), span);
    assert_eq!(timeline::clamp_to(r(150, 250), span), r(150, 200));
    assert_eq!(timeline::clamp_to(r(120, 130), span), r(120, 130));
    assert_eq!(timeline::clamp_to(r(300, 400), span), r(300, 400));
}

/// A fresh folder holding the Go heap profile (several sample types) alone.
fn heap_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-gui-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("heap.pb.gz"), dir.join("heap.pb.gz")).unwrap();
    dir
}

#[test]
fn a_heap_profile_is_plotted_as_its_values_having_no_duration() {
    let dir = heap_dir("heap");
    let mut h = harness(dir.clone());
    let profile = codec::decode(&std::fs::read(fixture("heap.pb.gz")).unwrap()).unwrap();
    // Bytes in use: a snapshot. Objects allocated: counted from the program's start,
    // with no duration to divide by.
    for (sample_type, delta, unit) in [
        ("inuse_space", false, "bytes"),
        ("alloc_objects", true, "count"),
    ] {
        plot_type(&mut h, sample_type);
        let tl = h.state().timeline.as_ref().unwrap();
        assert_eq!(tl.types[tl.type_index].delta, delta);
        let index = profile.find_sample_type(sample_type).unwrap();
        let tl = h.state().timeline.as_ref().unwrap();
        assert_eq!(tl.y_unit(), unit);
        let points: Vec<f64> = tl
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p[1]))
            .collect();
        assert_eq!(points, [profile.total(index) as f64], "{sample_type}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_selection_being_merged_is_dropped_when_another_type_is_chosen() {
    let dir = heap_dir("heap-type");
    let mut h = harness(dir.clone());
    let ctx = h.ctx.clone();
    let (span, other) = {
        let tl = h.state().timeline.as_ref().unwrap();
        let other = (tl.type_index + 1) % tl.types.len();
        (tl.span, tl.types[other].to_string())
    };
    // As for a user: the merge runs on the window's runtime while the type is changed.
    h.state_mut().sync_jobs = false;
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    assert!(h.state().timeline.as_ref().unwrap().querying());
    h.state_mut().apply_selector_text(&ctx, &other);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.types[tl.type_index].to_string(), other);
    assert!(!tl.querying(), "the merge of the other type is forgotten");
    // Whenever its answer comes, it is not shown.
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.run_steps(1);
    }
    let app = h.state();
    assert!(
        app.current.is_none(),
        "a profile of the type left was shown"
    );
    assert!(app.timeline.as_ref().unwrap().selection.is_none());
    let _ = std::fs::remove_dir_all(dir);
}

/// A directory of `count` generated 10-second profiles of a few samples each.
fn generated_dir(tag: &str, count: u64) -> PathBuf {
    use flint_fixture_gen::{SeriesParams, Universe, UniverseParams, encode_gz, series_profile};
    let dir = std::env::temp_dir().join(format!("flint-gui-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let u = Universe::new(&UniverseParams {
        locations: 200,
        functions: 60,
        binaries: 4,
        min_depth: 3,
        max_depth: 8,
        seed: 5,
    })
    .unwrap();
    let sp = SeriesParams {
        samples: 8,
        start_nanos: 1_700_000_000_000_000_000,
        step_secs: 10,
        seed: 5,
    };
    for i in 0..count {
        let (_, gz) = encode_gz(&series_profile(&u, &sp, i)).unwrap();
        std::fs::write(dir.join(format!("{i:05}.pb.gz")), gz).unwrap();
    }
    dir
}

#[test]
fn each_profile_type_is_shown_over_its_own_time_span() {
    // Thirty generated CPU profiles of 2023 and a Go heap profile taken years later.
    let dir = generated_dir("type-span", 30);
    std::fs::copy(fixture("heap.pb.gz"), dir.join("heap.pb.gz")).unwrap();
    let mut cpu = TimeRange {
        start_nanos: i64::MAX,
        end_nanos: i64::MIN,
    };
    for i in 0..30 {
        let p = codec::decode(&std::fs::read(dir.join(format!("{i:05}.pb.gz"))).unwrap()).unwrap();
        cpu.start_nanos = cpu.start_nanos.min(p.time_nanos);
        cpu.end_nanos = cpu.end_nanos.max(p.time_nanos + p.duration_nanos);
    }
    let heap = codec::decode(&std::fs::read(fixture("heap.pb.gz")).unwrap()).unwrap();
    assert!(heap.time_nanos > cpu.end_nanos + 365 * 86_400_000_000_000);
    let mut h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.types[tl.type_index].sample_type, "cpu");
    assert_eq!(tl.span, cpu, "the CPU profiles' own span");
    let (start, end) = tl.whole_bounds();
    assert!(
        end - start < 400.0,
        "the whole view fits five minutes: {start}..{end}"
    );
    let heap_type = tl
        .types
        .iter()
        .find(|t| t.sample_type == "inuse_space")
        .expect("the heap profile's types are listed")
        .to_string();
    // The heap type, chosen: its own span, one snapshot.
    let ctx = h.ctx.clone();
    h.state_mut().apply_selector_text(&ctx, &heap_type);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.types[tl.type_index].to_string(), heap_type);
    assert_eq!(
        tl.span,
        TimeRange {
            start_nanos: heap.time_nanos,
            end_nanos: heap.time_nanos + 1,
        }
    );
    let points: usize = tl.series.iter().map(|s| s.points.len()).sum();
    assert_eq!(points, 1);
    // And back: the CPU profiles' span again.
    let cpu_type = tl
        .types
        .iter()
        .find(|t| t.sample_type == "cpu")
        .unwrap()
        .to_string();
    h.state_mut().apply_selector_text(&ctx, &cpu_type);
    h.run_steps(4);
    assert_eq!(h.state().timeline.as_ref().unwrap().span, cpu);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_line_breaks_where_the_data_has_a_gap() {
    // Ten points 10 s apart, an hour without data, ten more.
    let points: Vec<[f64; 2]> = (0..10)
        .map(|i| [f64::from(i) * 10.0, 1.0])
        .chain((0..10).map(|i| [3690.0 + f64::from(i) * 10.0, 2.0]))
        .collect();
    assert_eq!(plot::gap_starts(&points), [10]);
    // Steady steps, or too few points to tell a usual step: one line.
    assert!(plot::gap_starts(&points[..10]).is_empty());
    assert!(plot::gap_starts(&[[0.0, 1.0], [1000.0, 1.0]]).is_empty());
    let series = timeline::PlotSeries::new("total".into(), Vec::new(), 1, points);
    // Each side of the gap is drawn, and reduced to the pixel columns, on its own.
    for width in [1000.0, 10.0] {
        let line = &plot::drawn_points(std::slice::from_ref(&series), 0.0, 3800.0, width)[0];
        let segments: Vec<_> = line.segments().collect();
        assert_eq!(segments.len(), 2, "{width}");
        assert!(segments[0].iter().all(|p| p.x < 100.0 && p.y == 1.0));
        assert!(segments[1].iter().all(|p| p.x >= 3690.0 && p.y == 2.0));
    }
}

#[test]
fn coarse_points_average_runs_within_each_segment() {
    // Six points, a gap, then five: runs of four never span the gap.
    let points: Vec<[f64; 2]> = (0..6)
        .map(|i| [f64::from(i), f64::from(i)])
        .chain((0..5).map(|i| [1000.0 + f64::from(i), 10.0]))
        .collect();
    let (coarse, breaks) = plot::coarse_points(&points, &[6]);
    assert_eq!(plot::COARSE, 4);
    assert_eq!(
        coarse,
        [[1.5, 1.5], [4.5, 4.5], [1001.5, 10.0], [1004.0, 10.0]]
    );
    assert_eq!(breaks, [2]);
    assert_eq!(plot::coarse_points(&[], &[]), (Vec::new(), Vec::new()));
}

#[test]
fn a_view_with_many_points_per_column_is_reduced_from_the_coarse_copy() {
    // A day of 10-second points: 8,640 of them.
    let points: Vec<[f64; 2]> = (0..8640)
        .map(|i| [f64::from(i) * 10.0, 1.0 + (f64::from(i) / 300.0).sin()])
        .collect();
    let mut series = timeline::PlotSeries::new("total".into(), Vec::new(), 1, points);
    let (x0, x1) = (0.0, 86_390.0);
    let exact = plot::bucket_points(&series.points, x0, x1, 800.0);
    let drawn = &plot::drawn_points(std::slice::from_ref(&series), x0, x1, 800.0)[0];
    // 10.8 points a column: the coarse copy, one point per column, each within a
    // hundredth of the values' range of the exact mean.
    assert_eq!(drawn.points.len(), exact.len());
    for (d, e) in drawn.points.iter().zip(&exact) {
        assert!(
            (d.x - e.x).abs() <= 20.0 && (d.y - e.y).abs() < 0.02,
            "{d:?} {e:?}"
        );
    }
    // What is drawn comes from the coarse copy at 800 columns, from the points at 1,600
    // (5.4 points a column).
    series.coarse.iter_mut().for_each(|p| p[1] = 7.0);
    let drawn = &plot::drawn_points(std::slice::from_ref(&series), x0, x1, 800.0)[0];
    assert!(drawn.points.iter().all(|p| p.y == 7.0));
    let drawn = &plot::drawn_points(std::slice::from_ref(&series), x0, x1, 1600.0)[0];
    assert!(drawn.points.iter().all(|p| p.y < 2.01));
    // Zoomed in on an hour: few points per column, the points themselves.
    let hour = &plot::drawn_points(std::slice::from_ref(&series), 0.0, 3600.0, 800.0)[0];
    assert!(hour.points.iter().all(|p| p.y < 2.01));
}

#[test]
fn a_folder_with_an_hour_missing_is_plotted_in_two_lines() {
    use flint_fixture_gen::{
        Scratch, SeriesParams, Universe, UniverseParams, encode_gz, series_profile,
    };
    let dir = Scratch::new("gui-gap");
    let u = Universe::new(&UniverseParams {
        locations: 50,
        functions: 20,
        binaries: 2,
        min_depth: 2,
        max_depth: 5,
        seed: 3,
    })
    .unwrap();
    let sp = SeriesParams {
        samples: 4,
        start_nanos: 1_700_000_000_000_000_000,
        step_secs: 10,
        seed: 3,
    };
    // Twenty 10-second profiles, then twenty more an hour later.
    for i in (0..20).chain(380..400) {
        let (_, gz) = encode_gz(&series_profile(&u, &sp, i)).unwrap();
        std::fs::write(dir.join(format!("{i:05}.pb.gz")), gz).unwrap();
    }
    let mut h = harness(dir.to_path_buf());
    h.run_steps(2);
    let tl = h.state_mut().timeline.as_mut().unwrap();
    let (x0, x1, width) = tl.last_view.expect("drawn");
    let shown = tl.series.len();
    for line in tl.drawn_lines(shown, x0, x1, width) {
        let segments: Vec<_> = line.segments().collect();
        assert_eq!(segments.len(), 2, "one line each side of the hour");
        let gap_start = 1_700_000_000.0 + 20.0 * 10.0;
        assert!(segments[0].iter().all(|p| p.x < gap_start));
        assert!(segments[1].iter().all(|p| p.x >= 1_700_000_000.0 + 3800.0));
    }
}

#[test]
fn a_drag_starts_where_the_button_was_pressed_however_far_the_first_move() {
    use egui::{Event, Modifiers, PointerButton};
    let dir = generated_dir("fast-drag", 60);
    let mut h = harness(dir.clone());
    let transform = h.state().timeline.as_ref().unwrap().last_transform.unwrap();
    let frame = transform.frame();
    let at = |share: f32| egui::pos2(frame.left() + frame.width() * share, frame.center().y);
    let (a, b) = (at(0.2), at(0.8));
    let button = |pos, pressed| Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed,
        modifiers: Modifiers::default(),
    };
    h.event(Event::PointerMoved(a));
    h.event(button(a, true));
    h.run_steps(1);
    // The pointer is far from where it was pressed by the time the drag is seen (a
    // quick flick, or a frame that took long).
    h.event(Event::PointerMoved(at(0.5)));
    h.run_steps(1);
    h.event(Event::PointerMoved(b));
    h.run_steps(1);
    h.event(button(b, false));
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    let Some(QueryTime::Merge(range)) = tl.selection else {
        panic!("a range is selected: {:?}", tl.selection);
    };
    let x = |pos: egui::Pos2| transform.value_from_position(pos).x;
    let second = 1e9;
    // Within a pixel of where the button went down and came up.
    let pixel = transform.dvalue_dpos()[0].abs() * second;
    assert!(
        (range.start_nanos as f64 - x(a) * second).abs() <= pixel,
        "starts at {} s, pressed at {} s",
        range.start_nanos as f64 / second,
        x(a)
    );
    assert!((range.end_nanos as f64 - x(b) * second).abs() <= pixel);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_zoom_that_settles_plots_the_view_at_its_own_resolution() {
    // 3,000 profiles 10 s apart: over the whole span a point sums 15 s of them.
    let dir = generated_dir("zoom", 3000);
    let mut h = harness(dir.clone());
    // The times of the points of every series (a profile of a few samples does not
    // have every series).
    let points_in = |h: &Harness<'_, FlintApp>, a: f64, b: f64| {
        let tl = h.state().timeline.as_ref().unwrap();
        let times: std::collections::BTreeSet<u64> = tl
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p[0]))
            .filter(|&x| x >= a && x < b)
            .map(f64::to_bits)
            .collect();
        times.len()
    };
    let tl = h.state().timeline.as_ref().unwrap();
    let coarse = tl.step_nanos;
    assert!(coarse > 10_000_000_000, "{coarse}");
    let start = tl.span.start_nanos as f64 / 1e9;
    // A tenth of the span, in its middle; the profiles there are 10 s apart.
    let (a, b) = (start + 12_000.0, start + 15_000.0);
    let before = points_in(&h, a, b);
    assert!(before < 300, "{before} points for 300 profiles");
    h.state_mut().timeline.as_mut().unwrap().pending_bounds = Some((a, b));
    h.run_steps(3);
    std::thread::sleep(
        crate::gui::time::timeline::VIEW_SETTLE + std::time::Duration::from_millis(50),
    );
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.step_nanos <= 10_000_000_000, "{}", tl.step_nanos);
    assert!(tl.zoomed.is_some());
    let c = tl.series_covered;
    assert!(c.start_nanos as f64 / 1e9 <= a && c.end_nanos as f64 / 1e9 >= b);
    assert_eq!(points_in(&h, a, b), 300, "a point per profile");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_scale_of_a_type_without_points_is_its_own() {
    use crate::gui::time::plot::PlotScale;
    let cpu = capture::ProfileType::parse("process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta");
    let inuse = capture::ProfileType::parse("memory:inuse_space:bytes:space:bytes");
    let samples = capture::ProfileType::parse("process_cpu:samples:count:cpu:nanoseconds:delta");
    assert_eq!(PlotScale::of(&cpu.unwrap(), &[]), PlotScale::Cores);
    assert_eq!(PlotScale::of(&inuse.unwrap(), &[]), PlotScale::Value);
    assert_eq!(PlotScale::of(&samples.unwrap(), &[]), PlotScale::PerSecond);
    assert_eq!(PlotScale::Cores.unit("nanoseconds"), "CPU cores");
    assert_eq!(PlotScale::PerSecond.unit("count"), "count/s");
}

#[test]
fn the_hover_tells_a_value_in_its_unit() {
    use crate::gui::time::plot::PlotScale;
    assert_eq!(
        PlotScale::Cores.hover_text(0.8754, "nanoseconds"),
        "0.875 CPU cores"
    );
    assert_eq!(
        PlotScale::PerSecond.hover_text(107.8594, "count"),
        "107.859 count/s"
    );
    assert_eq!(
        PlotScale::Value.hover_text(2_683_469.0, "bytes"),
        "2.56 MiB"
    );
    assert_eq!(PlotScale::Value.hover_text(1234.0, "count"), "1,234 count");
}

#[test]
fn a_file_gone_since_indexing_is_merged_from_the_samples_kept() {
    let dir = fixture_dir("gone-kept");
    let mut h = harness(dir.clone());
    std::fs::remove_file(dir.join(FILES[1])).unwrap();
    let ctx = h.ctx.clone();
    h.state_mut().merge_visible(&ctx);
    h.run_steps(4);
    let app = h.state();
    let expected: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    assert_eq!(app.current.as_ref().expect("shown").totals[0], expected);
    assert!(app.message.is_none(), "{:?}", app.message);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_gone_since_indexing_is_left_out_of_the_merge_and_named() {
    let dir = fixture_dir("gone");
    // No samples kept beyond the first profile's: the merge reads the files.
    let mut h = window();
    h.state_mut().kept_stacks_budget = 0;
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    std::fs::remove_file(dir.join(FILES[1])).unwrap();
    let ctx = h.ctx.clone();
    h.state_mut().merge_visible(&ctx);
    h.run_steps(4);
    let app = h.state();
    let expected = default_total(FILES[0]).0 + default_total(FILES[2]).0;
    assert_eq!(
        app.current.as_ref().expect("the rest is shown").totals[0],
        expected
    );
    let (message, is_error) = app.message.clone().expect("said");
    assert!(is_error && message.contains(FILES[1]), "{message}");
    assert!(
        message.starts_with("left out 1 profile gone or broken"),
        "{message}"
    );
    let text = app.selection_text().unwrap();
    assert!(text.contains(", 2 profiles,"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn reloading_a_folder_adds_the_profiles_written_since_and_keeps_what_is_shown() {
    let dir = fixture_dir("reload");
    std::fs::remove_file(dir.join(FILES[2])).unwrap();
    let mut h = harness(dir.clone());
    let ctx = h.ctx.clone();
    assert_eq!(h.state().timeline.as_ref().unwrap().profiles, Some(2));
    h.state_mut()
        .set_matchers(&ctx, vec![endpoint("/api/hash")]);
    h.run_steps(4);
    h.state_mut().merge_visible(&ctx);
    h.run_steps(4);
    let shown = h.state().current.as_ref().unwrap().totals[0];
    let selection = h.state().timeline.as_ref().unwrap().selection;
    assert!(selection.is_some());
    // A profile written since the folder was opened.
    std::fs::copy(fixture(FILES[2]), dir.join(FILES[2])).unwrap();
    h.key_press(egui::Key::F5);
    h.run_steps(6);
    let app = h.state();
    let tl = app.timeline.as_ref().unwrap();
    assert_eq!(tl.profiles, Some(3), "the new profile is indexed");
    assert_eq!(
        tl.matchers,
        vec![endpoint("/api/hash")],
        "the selector is kept"
    );
    assert_eq!(tl.selection, selection, "the selection is kept");
    assert_eq!(
        app.current.as_ref().unwrap().totals[0],
        shown,
        "the view is kept"
    );
    let hash: i64 = FILES.iter().map(|f| endpoint_total(f, "/api/hash")).sum();
    assert_eq!(
        plotted_total(&h),
        hash,
        "the plot has the new profile, selector applied"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn profiles_at_the_ends_of_time_are_plotted_and_merged() {
    // Times 64-bit nanoseconds can just hold (1677 and 2262), with durations past
    // the end: every sum and difference of them is out of range.
    let dir = fixture_dir("ends-of-time");
    let mut profile = codec::decode(&std::fs::read(fixture(FILES[0])).unwrap()).unwrap();
    for f in FILES {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    for (name, time) in [("first", i64::MIN + 1), ("last", i64::MAX - 1)] {
        profile.time_nanos = time;
        profile.duration_nanos = i64::MAX;
        std::fs::write(
            dir.join(format!("{name}.pb.gz")),
            codec::encode_gzip(&profile),
        )
        .unwrap();
    }
    let mut h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    let span = tl.span;
    assert!(span.start_nanos < -9_000_000_000_000_000_000, "{span:?}");
    assert!(span.end_nanos > 9_000_000_000_000_000_000, "{span:?}");
    merge_everything(&mut h);
    let merged = h.state().current.as_ref().expect("merged").totals[0];
    assert_eq!(merged, 2 * default_total(FILES[0]).0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_window_made_small_then_large_again_gives_the_panels_their_sizes_back() {
    let dir = fixture_dir("panel-sizes");
    let mut h = harness(dir.clone());
    merge_everything(&mut h);
    // Below the plot: the flame graph's Reset; the top table's heading beside it.
    let places = |h: &Harness<'static, FlintApp>| {
        let reset = h.get_by_label("Reset").rect().top();
        let table = h.get_by_label_contains(" functions").rect().left();
        (reset, table)
    };
    let before = places(&h);
    h.set_size(egui::vec2(300.0, 160.0));
    h.run_steps(3);
    h.set_size(egui::vec2(1400.0, 900.0));
    h.run_steps(3);
    assert_eq!(places(&h), before, "plot height and table width as before");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_plot_without_series_says_why_instead_of_drawing_empty_axes() {
    let dir = fixture_dir("empty-plot");
    let mut h = harness(dir.clone());
    assert_eq!(h.state().timeline.as_ref().unwrap().empty_plot_text(), None);
    let typ = {
        let tl = h.state().timeline.as_ref().unwrap();
        tl.selector().unwrap().profile_type.to_string()
    };
    let ctx = h.ctx.clone();
    h.state_mut()
        .apply_selector_text(&ctx, &format!(r#"{typ}{{endpoint="/no/such"}}"#));
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.series.is_empty());
    assert_eq!(tl.empty_plot_text().as_deref(), Some(NO_DATA));
    let _ = std::fs::remove_dir_all(dir);
    // A folder without profiles: nothing was opened, and the plot does not say
    // "no data for this selection" of it.
    let empty = std::env::temp_dir().join(format!("flint-gui-no-profiles-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let mut h = crate::gui::tests::fixtures::window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, empty.clone());
    h.run_steps(4);
    assert!(h.state().error.is_some(), "the window says why");
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.empty_plot_text().as_deref(), Some(timeline::NOT_OPENED));
    let _ = std::fs::remove_dir_all(empty);
}

#[test]
fn a_typed_range_moves_the_view_and_merge_takes_what_it_shows() {
    let dir = fixture_dir("typed-range");
    let mut h = harness(dir.clone());
    h.get_by_label("range…").click();
    h.run_steps(2);
    // Filled with the view shown, to the second.
    let filled = h.state().timeline.as_ref().unwrap().range.clone();
    assert!(
        filled.from.ends_with('Z') && filled.to.ends_with('Z'),
        "{filled:?}"
    );
    let set = |h: &mut Harness<'static, FlintApp>, from: &str, to: &str| {
        let range = &mut h.state_mut().timeline.as_mut().unwrap().range;
        range.from = from.to_string();
        range.to = to.to_string();
        h.get_by_label("Show").click();
        h.run_steps(3);
    };
    // A bad time is named, and the view stays.
    set(&mut h, "2026-11-30T12:39:14Z", "soon");
    let error = h.state().timeline.as_ref().unwrap().range.error.clone();
    let error = error.expect("refused");
    assert!(error.starts_with("to: "), "{error}");
    h.get_by_label(&error);
    set(&mut h, "2026-11-30T12:39:16Z", "2026-11-30T12:39:14Z");
    assert!(h.state().timeline.as_ref().unwrap().range.error.is_some());
    // Around the second file only: the view shows it, and Merge merges it alone.
    set(&mut h, "2026-11-30T12:39:14Z", "2026-11-30T12:39:16Z");
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.range.error, None);
    let (x0, x1, _) = tl.last_view.unwrap();
    assert!((x0 - 1_796_042_354.0).abs() < 1e-3, "{x0}");
    assert!((x1 - 1_796_042_356.0).abs() < 1e-3, "{x1}");
    h.get_by_label("Merge").click();
    h.run_steps(4);
    let app = h.state();
    assert_eq!(
        app.current.as_ref().unwrap().totals[0],
        default_total(FILES[1]).0
    );
    assert!(app.selection_text().unwrap().contains("1 profile"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn many_skipped_files_are_counted_in_the_tooltip_and_listed_whole_on_a_click() {
    let dir = fixture_dir("many-broken");
    for i in 0..25 {
        std::fs::write(dir.join(format!("broken-{i:02}.pb.gz")), b"junk").unwrap();
    }
    let mut h = harness(dir.clone());
    let warnings = h.state().timeline.as_ref().unwrap().warnings.clone();
    assert_eq!(warnings.len(), 25);
    let tooltip = crate::gui::shell::status_bar::warnings_tooltip(&warnings);
    assert_eq!(tooltip.lines().count(), 21, "{tooltip}");
    assert!(
        tooltip.ends_with("… and 5 more: click to see them all"),
        "{tooltip}"
    );
    assert!(
        crate::gui::shell::status_bar::warnings_tooltip(&warnings[..1])
            .ends_with("click to see the list")
    );
    h.get_by_label_contains("(and 24 more)").click();
    h.run_steps(3);
    h.get_by_label("Warnings from opening (25)");
    h.get_by_label("Copy the list");
    assert!(h.state().warnings_shown);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_bundled_profile_leads_to_a_demo_hour_of_profiles_over_time() {
    // The folder of a process that no longer runs (killed) goes with the next demo.
    let stale = std::env::temp_dir().join(format!("flint-demo-{}", u32::MAX));
    std::fs::create_dir_all(&stale).unwrap();
    let mut h = window();
    h.state_mut().open(crate::gui::view::loader::Source::Bytes {
        name: crate::gui::DEMO_NAME.to_string(),
        bytes: std::sync::Arc::from(crate::gui::DEMO_BYTES),
    });
    h.run_steps(3);
    h.get_by_label(crate::gui::shell::status_bar::DEMO_LINK)
        .click();
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert_eq!(tl.origin.name(), "demo fleet, last hour");
    assert!(!stale.exists() || !cfg!(target_os = "linux"));
    // An hour ending now, a profile every 10 s, four services.
    let hour = 3_600_000_000_000;
    let now = capture::time::now_nanos();
    assert_eq!(tl.span.end_nanos - tl.span.start_nanos, hour);
    assert!((now - tl.span.end_nanos).abs() < 60_000_000_000, "ends now");
    let names: Vec<&str> = tl.series.iter().map(|s| s.name.as_str()).collect();
    for comm in ["api-server", "search-indexer", "ingest-worker", "envoy"] {
        assert!(
            names.contains(&format!("comm={comm}").as_str()),
            "{names:?}"
        );
    }
    let points: usize = tl.series.iter().map(|s| s.points.len()).sum();
    assert_eq!(points, 4 * crate::gui::time::demo::DEMO_PROFILES as usize);
    assert!(
        h.query_by_label(crate::gui::shell::status_bar::DEMO_LINK)
            .is_none()
    );
    let plotted: i64 = tl.series.iter().map(|s| s.total).sum();
    merge_everything(&mut h);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert_eq!(
        tl.selection_profiles,
        crate::gui::time::demo::DEMO_PROFILES as usize
    );
    let cur = h.state().current.as_ref().expect("the merged hour");
    assert_eq!(
        cur.totals[0], plotted,
        "the merge holds what the plot shows"
    );
    // Compare before and after the demo's deploy: the function it slows is red.
    let deploy = span_start_plus(h.state(), crate::gui::time::demo::DEPLOY_AT);
    let end = h.state().timeline.as_ref().unwrap().span.end_nanos;
    let start = h.state().timeline.as_ref().unwrap().span.start_nanos;
    h.state_mut().compare.enabled = true;
    h.run_steps(1);
    let ctx = h.ctx.clone();
    for (from, to) in [(start, deploy - 1), (deploy, end)] {
        let range = TimeRange {
            start_nanos: from,
            end_nanos: to,
        };
        h.state_mut().select_time(&ctx, QueryTime::Merge(range));
        h.run_steps(4);
    }
    let app = h.state();
    let res = app.compare.result.as_ref().expect("compared");
    let slower = (0..res.tree.len() as u32)
        .filter(|&n| {
            crate::gui::view::flame::node_name(&res.tree, &res.frames, n)
                == crate::gui::time::demo::SLOWER
        })
        .max_by_key(|&n| res.totals_b[n as usize])
        .expect("the slowed function is in the comparison");
    let change = res.values(app.compare.mode).change(slower);
    assert!(
        matches!(change, profile_model::diff::Change::More(x) if x > 0.5),
        "{change:?}"
    );
    // Closing the window removes the demo's files.
    let crate::gui::time::timeline::Origin::Dir(dir) =
        h.state().timeline.as_ref().unwrap().origin.clone()
    else {
        panic!("the demo is a folder");
    };
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 360);
    eframe::App::on_exit(h.state_mut(), None);
    assert!(!dir.exists());
    assert!(
        !dir.parent().unwrap().exists(),
        "the window's own folder goes too"
    );
}

/// The time of profile `index` of the window's directory (a profile every 10 s from
/// the start of its span).
fn span_start_plus(app: &FlintApp, index: u64) -> i64 {
    let span = app.timeline.as_ref().expect("time mode").span;
    span.start_nanos + index as i64 * 10_000_000_000
}

#[test]
fn a_selection_is_shown_in_the_type_plotted() {
    let dir = fixture_dir("plotted-type");
    let mut h = harness(dir.clone());
    let profiles: Vec<_> = FILES
        .iter()
        .map(|f| codec::decode(&std::fs::read(fixture(f)).unwrap()).unwrap())
        .collect();
    // The files' default is CPU time; their sample counts are plotted as the other type.
    for sample_type in ["samples", "cpu", "samples"] {
        plot_type(&mut h, sample_type);
        merge_everything(&mut h);
        let cur = h.state().current.as_ref().expect("selection shown");
        let shown = cur.profile.sample_types[cur.sample_type];
        assert_eq!(cur.profile.str(shown.kind), sample_type);
        let expected: i64 = profiles
            .iter()
            .map(|p| p.total(p.find_sample_type(sample_type).unwrap()))
            .sum();
        assert_eq!(cur.totals[0], expected, "{sample_type}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_time_a_merge_took_is_told_in_a_readable_unit() {
    use std::time::Duration;
    let text = crate::gui::shell::status_bar::took_text;
    assert_eq!(text(Duration::from_micros(3210)), "3.21 ms");
    assert_eq!(text(Duration::from_millis(1260)), "1.26 s");
    assert_eq!(text(Duration::from_secs(90)), "1.50 min");
}

#[test]
fn the_status_bar_tells_how_long_indexing_took_until_a_merge_is_shown() {
    let mut h = window();
    // A file opened first: the time it took is not the folder's.
    h.state_mut()
        .open(crate::gui::view::loader::Source::Path(fixture(FILES[0])));
    h.run_steps(4);
    h.get_by_label_contains("opened in ");
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, fixture_dir("indexed-in"));
    h.run_steps(4);
    let text = h
        .get_by_label_contains("indexed ")
        .accesskit_node()
        .value()
        .unwrap_or_default();
    let took = text
        .strip_prefix(&format!("indexed {} profiles in ", FILES.len()))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(
        took.split_once(' ')
            .is_some_and(|(n, unit)| n.parse::<f64>().is_ok_and(|n| n > 0.0)
                && ["µs", "ms", "s"].contains(&unit)),
        "{text:?}"
    );
    assert!(h.query_by_label_contains("opened in ").is_none());
    merge_everything(&mut h);
    h.get_by_label_contains("merged ");
    assert!(h.query_by_label_contains("indexed ").is_none());
}
