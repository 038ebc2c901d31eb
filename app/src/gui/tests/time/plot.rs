//! The plot: axes, lines, gaps, legend, wheel zoom and the panel's size.

use super::*;

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
fn points_are_bucketed_per_pixel() {
    let points: Vec<[f64; 2]> = (0..1000).map(|i| [f64::from(i), 1.0]).collect();
    let out = lines::bucket_points(&points, 100.0, 899.0, 100.0);
    // 100 columns plus the neighbor on each side.
    assert_eq!(out.len(), 102);
    assert!(out.windows(2).all(|w| w[0].x < w[1].x));
    assert!(out.iter().all(|p| (p.y - 1.0).abs() < 1e-9));
    // Each column holds the mean of its points: 8 points of the 7.99-wide columns.
    assert!((out[1].x - 103.5).abs() < 1e-9, "{:?}", out[1]);
    let few = lines::bucket_points(&points[..10], 0.0, 9.0, 100.0);
    assert_eq!(few.len(), 10);
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
    assert!(first_view_kept(&h), "a click on the legend does not select");
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
fn drawn_lines_are_reused_until_the_series_or_the_view_change() {
    let series = |v: f64| {
        lines::PlotSeries::new(
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
fn the_time_axis_falls_on_round_times_and_names_days() {
    assert_eq!(axis::time_grid_steps(0.3), [1.0, 5.0, 15.0]);
    assert_eq!(axis::time_grid_steps(40.0), [60.0, 300.0, 900.0]);
    assert_eq!(axis::time_grid_steps(2000.0), [3600.0, 10800.0, 43200.0]);
    let year = 31_557_600.0;
    let (day, week) = (86_400.0, 604_800.0);
    // Each step a multiple of the one before, or itself again.
    assert_eq!(axis::time_grid_steps(50_000.0), [day, week, week]);
    for base in (0..40).map(|k| 1.7f64.powi(k)) {
        let [a, b, c] = axis::time_grid_steps(base);
        assert!(a >= base.min(500.0 * year), "{base}: {a}");
        assert_eq!((b / a).fract(), 0.0, "{base}: {a} {b}");
        assert_eq!((c / b).fract(), 0.0, "{base}: {b} {c}");
    }
    assert_eq!(axis::time_grid_steps(2e7), [year, 5.0 * year, 20.0 * year]);
    assert_eq!(
        axis::time_grid_steps(1e9),
        [50.0 * year, 200.0 * year, 200.0 * year]
    );
    assert_eq!(axis::time_grid_steps(1e12), [500.0 * year; 3]);
    let noon = 1_796_040_000.0; // 2026-11-30 12:00:00 UTC
    assert_eq!(axis::time_label(noon + 20.0, 10.0), "12:00:20");
    assert_eq!(axis::time_label(noon + 900.0, 900.0), "12:15");
    assert_eq!(
        axis::time_label(noon + 43_200.0, 3600.0),
        "12-01",
        "midnight"
    );
    assert_eq!(axis::time_label(noon - 43_200.0, 86_400.0), "11-30");
    assert_eq!(axis::time_label(noon, 2_592_000.0), "2026-11-30");
    // Lines a year apart fall near New Year, either side, and before 1970 too.
    assert_eq!(axis::time_label(year, year), "1971");
    assert_eq!(axis::time_label(3.0 * year, year), "1973");
    assert_eq!(axis::time_label(-year, year), "1969");
    assert_eq!(axis::time_label(-3.0 * year, 100.0 * year), "1967");
    // 200 years of 365.25 days end 2 days before 1770 began.
    assert_eq!(axis::time_label(-200.0 * year, 100.0 * year), "1770");
}

#[test]
fn the_value_axis_steps_by_one_two_and_five() {
    let close = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
    // Each step a multiple of the one before: labelled lines never crowd.
    assert!(close(axis::value_grid_steps(0.03), [0.05, 0.1, 0.5]));
    assert!(close(axis::value_grid_steps(0.1), [0.1, 0.5, 1.0]));
    assert!(close(axis::value_grid_steps(0.15), [0.2, 1.0, 2.0]));
    assert!(close(
        axis::value_grid_steps(700.0),
        [1000.0, 5000.0, 10000.0]
    ));
    assert!(close(axis::value_grid_steps(0.0), [1.0, 5.0, 10.0]));
    assert_eq!(axis::value_label(1.5, 0.5), "1.5");
    assert_eq!(axis::value_label(0.25, 0.05), "0.25");
    assert_eq!(axis::value_label(0.2, 0.2), "0.2");
    assert_eq!(axis::value_label(4.0, 2.0), "4");
    assert_eq!(axis::value_label(3000.0, 1000.0), "3000");
    assert_eq!(axis::value_label(-1e-17, 0.1), "0.0");
    // Bytes in use: thousands, millions, billions.
    assert_eq!(axis::value_label(30_000.0, 10_000.0), "30k");
    assert_eq!(axis::value_label(1_500_000.0, 500_000.0), "1.5M");
    assert_eq!(axis::value_label(2_000_000.0, 1_000_000.0), "2M");
    assert_eq!(axis::value_label(3e9, 1e9), "3G");
    assert_eq!(axis::value_label(0.0, 500_000.0), "0.0");
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
fn a_line_breaks_where_the_data_has_a_gap() {
    // Ten points 10 s apart, an hour without data, ten more.
    let points: Vec<[f64; 2]> = (0..10)
        .map(|i| [f64::from(i) * 10.0, 1.0])
        .chain((0..10).map(|i| [3690.0 + f64::from(i) * 10.0, 2.0]))
        .collect();
    assert_eq!(lines::gap_starts(&points), [10]);
    // Steady steps, or too few points to tell a usual step: one line.
    assert!(lines::gap_starts(&points[..10]).is_empty());
    assert!(lines::gap_starts(&[[0.0, 1.0], [1000.0, 1.0]]).is_empty());
    let series = lines::PlotSeries::new("total".into(), Vec::new(), 1, points);
    // Each side of the gap is drawn, and reduced to the pixel columns, on its own.
    for width in [1000.0, 10.0] {
        let line = &lines::drawn_points(std::slice::from_ref(&series), 0.0, 3800.0, width)[0];
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
    let (coarse, breaks) = lines::coarse_points(&points, &[6]);
    assert_eq!(lines::COARSE, 4);
    assert_eq!(
        coarse,
        [[1.5, 1.5], [4.5, 4.5], [1001.5, 10.0], [1004.0, 10.0]]
    );
    assert_eq!(breaks, [2]);
    assert_eq!(lines::coarse_points(&[], &[]), (Vec::new(), Vec::new()));
}

#[test]
fn a_view_with_many_points_per_column_is_reduced_from_the_coarse_copy() {
    // A day of 10-second points: 8,640 of them.
    let points: Vec<[f64; 2]> = (0..8640)
        .map(|i| [f64::from(i) * 10.0, 1.0 + (f64::from(i) / 300.0).sin()])
        .collect();
    let mut series = lines::PlotSeries::new("total".into(), Vec::new(), 1, points);
    let (x0, x1) = (0.0, 86_390.0);
    let exact = lines::bucket_points(&series.points, x0, x1, 800.0);
    let drawn = &lines::drawn_points(std::slice::from_ref(&series), x0, x1, 800.0)[0];
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
    let drawn = &lines::drawn_points(std::slice::from_ref(&series), x0, x1, 800.0)[0];
    assert!(drawn.points.iter().all(|p| p.y == 7.0));
    let drawn = &lines::drawn_points(std::slice::from_ref(&series), x0, x1, 1600.0)[0];
    assert!(drawn.points.iter().all(|p| p.y < 2.01));
    // Zoomed in on an hour: few points per column, the points themselves.
    let hour = &lines::drawn_points(std::slice::from_ref(&series), 0.0, 3600.0, 800.0)[0];
    assert!(hour.points.iter().all(|p| p.y < 2.01));
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
    use crate::gui::time::lines::PlotScale;
    let cpu = capture::ProfileType::parse("process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta");
    let inuse = capture::ProfileType::parse("memory:inuse_space:bytes:space:bytes");
    let samples = capture::ProfileType::parse("process_cpu:samples:count:cpu:nanoseconds:delta");
    let objects = capture::ProfileType::parse("memory:alloc_objects:count:space:bytes:delta");
    assert_eq!(PlotScale::of(&cpu.unwrap(), &[]), PlotScale::Cores);
    assert_eq!(PlotScale::of(&inuse.unwrap(), &[]), PlotScale::Value);
    // CPU samples are ranged as the CPU time they stand for, as Parca does.
    assert_eq!(PlotScale::of(&samples.unwrap(), &[]), PlotScale::Cores);
    assert_eq!(PlotScale::of(&objects.unwrap(), &[]), PlotScale::PerSecond);
    assert_eq!(PlotScale::Cores.unit("nanoseconds"), "CPU cores");
    assert_eq!(PlotScale::PerSecond.unit("count"), "count/s");
}

#[test]
fn the_hover_tells_a_value_in_its_unit() {
    use crate::gui::time::lines::PlotScale;
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
    assert!(h.state().shell.error.is_some(), "the window says why");
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.empty_plot_text().as_deref(), Some(timeline::NOT_OPENED));
    let _ = std::fs::remove_dir_all(empty);
}
