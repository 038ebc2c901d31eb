//! Selections: a click, a drag, Merge, and the profile each shows.

use super::*;

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
    h.state_mut().view.set_aside_nodes = set_aside_nodes;
    // Twice: the second merge replaces the view the first one made.
    for _ in 0..2 {
        merge_everything(&mut h);
    }
    let app = h.state();
    let cur = app.view.current().expect("selection shown");
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
    let offered = crate::gui::shell::dialogs::export_prompt(&app.view, ExportKind::Pprof)
        .expect("a view")
        .path;
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
    h.state_mut().view.set_aside_nodes = set_aside_nodes;
    let span = merge_everything(&mut h);
    let ctx = h.ctx.clone();
    let before = h.state().view.current().unwrap().totals[0];
    let far = TimeRange {
        start_nanos: span.end_nanos + 3_600_000_000_000,
        end_nanos: span.end_nanos + 7_200_000_000_000,
    };
    h.state_mut().select_time(&ctx, QueryTime::Merge(far));
    h.run_steps(4);
    assert_eq!(h.state().view.current().unwrap().totals[0], before);
    h.get_by_label(NO_DATA);
    // Plotting again (another preset, type or selector) answers anew: the notice about
    // the empty selection goes.
    h.state_mut().load_series(&ctx);
    h.run_steps(4);
    assert!(h.query_by_label(NO_DATA).is_none(), "the notice is stale");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn drag_and_click_convert_to_ranges() {
    let r = pick::drag_to_range(20.5, 10.0);
    assert_eq!(r.start_nanos, 10_000_000_000);
    assert_eq!(r.end_nanos, 20_500_000_000);
    let r = pick::drag_to_range(5.0, 5.0);
    assert_eq!(r.end_nanos, r.start_nanos + 1);
    let r = pick::click_to_range(125.3, 10_000_000_000);
    assert_eq!(
        (r.start_nanos, r.end_nanos),
        (120_000_000_000, 130_000_000_000)
    );
    assert_eq!(axis::hms(1_796_042_369_000_000_000), "12:39:29");
}

#[test]
fn a_click_beside_a_point_selects_that_points_bucket() {
    const SEC: i64 = 1_000_000_000;
    let series = |points: &[f64]| {
        lines::PlotSeries::new(
            "total".into(),
            Vec::new(),
            1,
            points.iter().map(|&x| [x, 1.0]).collect(),
        )
    };
    let (a, b) = (series(&[100.0, 102.0]), series(&[104.0]));
    let lines = [&a, &b];
    let snap = |x, px| {
        let r = pick::snap_click(&lines, x, px, 8.0, SEC);
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
    let r = pick::snap_click(&[], 101.95, 100.0, 8.0, SEC);
    assert_eq!((r.start_nanos / SEC, r.end_nanos / SEC), (101, 102));
}

#[test]
fn a_range_over_midnight_names_its_dates() {
    const SEC: i64 = 1_000_000_000;
    let noon = 1_796_042_369 * SEC; // 2026-11-30 12:39:29 UTC
    let merge = |start, end| {
        axis::describe_time(
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
        axis::describe_time(QueryTime::Single(noon), 10 * SEC),
        "12:39:29"
    );
}

#[test]
fn merge_button_merges_every_visible_profile() {
    let dir = fixture_dir("mergebutton");
    let mut h = harness(dir.clone());
    h.get_by_label("Merge").click();
    h.run_steps(4);
    let expected: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    let app = h.state();
    assert_eq!(app.view.current().expect("merged").totals[0], expected);
    let text = app.selection_text().unwrap();
    assert!(text.contains("3 profiles"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn changing_the_matchers_merges_the_selection_again() {
    let dir = fixture_dir("remerge");
    let mut h = harness(dir.clone());
    let span = merge_everything(&mut h);
    let ctx = h.ctx.clone();
    let all: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    assert_eq!(h.state().view.current().unwrap().totals[0], all);
    let value = "/api/sort";
    h.state_mut().set_matchers(&ctx, vec![endpoint(value)]);
    h.run_steps(4);
    let expected: i64 = FILES.iter().map(|f| endpoint_total(f, value)).sum();
    assert!(expected > 0 && expected < all, "{expected} of {all}");
    let app = h.state();
    assert_eq!(app.view.current().unwrap().totals[0], expected);
    assert_eq!(
        app.timeline.as_ref().unwrap().selection,
        Some(QueryTime::Merge(span))
    );
    let _ = std::fs::remove_dir_all(dir);
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
    assert_eq!(app.view.current().unwrap().totals[0], series_total);
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
    h.state_mut().view.sync_jobs = false;
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
    let tl = app.timeline.as_ref().unwrap();
    // What is shown, if anything, is the first view of the type chosen.
    if let Some(cur) = app.view.current() {
        let kind = cur.profile.sample_types[cur.sample_type].kind;
        assert_eq!(
            cur.profile.str(kind),
            tl.types[tl.type_index].sample_type,
            "a profile of the type left was shown"
        );
    }
    assert!(tl.selection.is_none_or(|s| s == QueryTime::Merge(tl.span)));
    let _ = std::fs::remove_dir_all(dir);
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
    assert_eq!(app.view.current().expect("shown").totals[0], expected);
    assert!(app.shell.message.is_none(), "{:?}", app.shell.message);
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
        app.view.current().expect("the rest is shown").totals[0],
        expected
    );
    let (message, is_error) = app.shell.message.clone().expect("said");
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
    let merged = h.state().view.current().expect("merged").totals[0];
    assert_eq!(merged, 2 * default_total(FILES[0]).0);
    let _ = std::fs::remove_dir_all(dir);
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
        app.view.current().unwrap().totals[0],
        default_total(FILES[1]).0
    );
    assert!(app.selection_text().unwrap().contains("1 profile"));
    let _ = std::fs::remove_dir_all(dir);
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
        let cur = h.state().view.current().expect("selection shown");
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
