//! Regression tests of the plot and the window's layout, as a new user met them with
//! the fleet demo: a click selecting another point than the hover names, series
//! changing colors when others are filtered out, the old flame graph shown while the
//! demo is indexed, and the layout collapsing in small windows.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use egui::{Vec2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use egui_plot::PlotPoint;

use crate::gui::app::FlintApp;
use crate::gui::tests::fixtures::click_at;

/// An empty window of `size` whose jobs and queries run synchronously.
fn window_of(size: Vec2) -> Harness<'static, FlintApp> {
    let mut app = FlintApp::new(profile_model::codec::DecodeOptions::default());
    app.view.sync_jobs = true;
    Harness::builder()
        .with_size(size)
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app)
}

/// A window of `size` showing the fleet demo's hour (File → Demo), series plotted.
fn demo_window(size: Vec2) -> Harness<'static, FlintApp> {
    let mut h = window_of(size);
    let ctx = h.ctx.clone();
    h.state_mut().open_demo(&ctx);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(tl.source.is_some(), "the demo is indexed");
    assert_eq!(tl.series.len(), 4, "the demo's four services");
    h
}

/// Removes the demo's files, as closing the window does.
fn close(mut h: Harness<'static, FlintApp>) {
    eframe::App::on_exit(h.state_mut(), None);
}

/// The plot's tooltip: a label of several lines, the first naming a series
/// (`comm=api-server`) or none.
fn plot_tooltip(h: &Harness<'static, FlintApp>) -> Option<String> {
    h.query_all_by_label_contains("\n")
        .filter_map(|n| n.value())
        .find(|text| !text.contains("Shift+click"))
}

#[test]
fn a_click_on_a_line_selects_the_point_and_series_its_hover_names() {
    let mut h = demo_window(vec2(1440.0, 900.0));
    let tl = h.state().timeline.as_ref().unwrap();
    let transform = tl.last_transform.expect("the plot was drawn");
    let at = |p: [f64; 2]| transform.position_from_point(&PlotPoint::new(p[0], p[1]));
    let api = tl
        .series
        .iter()
        .position(|s| s.name == "comm=api-server")
        .expect("api-server is plotted");
    // A run of api-server's points (a few pixels apart) far from every other line, in
    // the middle third of the hour.
    let points = &tl.series[api].points;
    const RUN: usize = 5;
    let gap = |k: usize| {
        (k..k + RUN)
            .flat_map(|j| {
                tl.series
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != api)
                    .filter_map(move |(_, s)| s.points.get(j))
                    .map(move |p| (at(*p).y - at(points[j]).y).abs())
            })
            .fold(f32::INFINITY, f32::min)
    };
    let k = (points.len() / 3..2 * points.len() / 3)
        .max_by(|&a, &b| gap(a).total_cmp(&gap(b)))
        .unwrap();
    assert!(gap(k) > 30.0, "api-server's line stands apart: {}", gap(k));
    let run: Vec<egui::Pos2> = points[k..k + RUN].iter().map(|p| at(*p)).collect();
    // Every pixel column along the run, on the line and a little above and below it
    // (as a hand aims).
    let mut mismatches = Vec::new();
    let columns = (run[0].x.ceil() as i32)..=(run[RUN - 1].x.floor() as i32);
    assert!(columns.clone().count() >= 10, "{run:?}");
    let aims: Vec<(f32, f32)> = [0.0, -3.0, 3.0]
        .into_iter()
        .flat_map(|dy| columns.clone().map(move |x| (x as f32, dy)))
        .collect();
    for &(x, dy) in &aims {
        let j = run.windows(2).position(|w| w[1].x >= x).unwrap_or(0);
        let (a, b) = (run[j], run[j + 1]);
        let y = a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x) + dy;
        let pos = egui::pos2(x, y);
        h.hover_at(pos);
        h.run_steps(2);
        let tooltip = plot_tooltip(&h).unwrap_or_else(|| panic!("no tooltip at {pos:?}"));
        let mut lines = tooltip.lines();
        let (series, time) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
        assert_eq!(
            series, "comm=api-server",
            "the hover names the line: {tooltip:?}"
        );
        let hms = time.get(time.len().saturating_sub(8)..).unwrap_or("");
        click_at(&mut h, pos);
        let selected = h.state().selection_text().expect("a selection shown");
        let expected = format!("selection: {hms} {{comm=\"api-server\"}}, 1 profile, ");
        if !selected.starts_with(&expected) {
            mismatches.push(format!("{pos:?}: hover {tooltip:?}, click {selected:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} clicks select another point than the hover names:\n{}",
        mismatches.len(),
        aims.len(),
        mismatches.join("\n")
    );
    close(h);
}

/// Each plotted series' name and color (of its line and its legend entry).
fn series_colors(h: &Harness<'static, FlintApp>) -> Vec<(String, egui::Color32)> {
    let tl = h.state().timeline.as_ref().expect("time mode");
    (tl.series.iter().enumerate())
        .map(|(i, s)| (s.name.clone(), tl.color_of(i)))
        .collect()
}

#[test]
fn a_series_keeps_its_color_when_others_are_filtered_out() {
    use capture::Matcher;
    use capture::selector::MatchOp;
    let mut h = demo_window(vec2(1440.0, 900.0));
    let first = series_colors(&h);
    let mut distinct: Vec<_> = first.iter().map(|(_, c)| c.to_array()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "four services, four colors: {first:?}");
    let color_first = |name: &str| first.iter().find(|(n, _)| n == name).map(|(_, c)| *c);
    let ctx = h.ctx.clone();
    // The largest series filtered out, then every series back.
    let largest = first[0].0.clone();
    let value = largest.strip_prefix("comm=").expect("summed by comm");
    let without = Matcher::new("comm", MatchOp::NotEqual, value).unwrap();
    for (matchers, left) in [(vec![without], 3), (Vec::new(), 4)] {
        h.state_mut().set_matchers(&ctx, matchers);
        h.run_steps(4);
        let now = series_colors(&h);
        assert_eq!(now.len(), left, "{now:?}");
        for (name, color) in &now {
            assert_eq!(
                Some(*color),
                color_first(name),
                "{name} changed color with {left} series shown: {first:?} then {now:?}"
            );
        }
    }
    close(h);
}

#[test]
fn while_the_demo_is_indexed_its_progress_replaces_the_old_flame_graph() {
    use egui::accesskit::Role;
    let mut h = window_of(vec2(1440.0, 900.0));
    h.state_mut().open(crate::gui::view::loader::Source::Bytes {
        name: crate::gui::DEMO_NAME.to_string(),
        bytes: std::sync::Arc::from(crate::gui::DEMO_BYTES),
    });
    h.run_steps(3);
    h.get_by_role_and_label(Role::Canvas, "flame graph");
    h.get_by_label("function");
    // The demo written and indexed in the background, as the window does it.
    h.state_mut().view.sync_jobs = false;
    h.get_by_label(crate::gui::shell::status_bar::DEMO_LINK)
        .click();
    h.run_steps(2);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(tl.indexing.is_some(), "still being opened");
    let counts: Vec<String> = (h.query_all_by_label_contains("0/0"))
        .filter_map(|n| n.value())
        .collect();
    assert!(counts.is_empty(), "a count not known yet: {counts:?}");
    assert!(
        h.query_by_role_and_label(Role::Canvas, "flame graph")
            .is_none(),
        "the bundled profile's flame graph is shown as if it were the demo's"
    );
    assert!(h.query_by_label("function").is_none(), "nor its top table");
    assert!(
        h.query_by_label(crate::gui::DEMO_NAME).is_none(),
        "nor its name in the status bar"
    );
    assert!(
        h.query_by_label("cpu/nanoseconds").is_none(),
        "nor its sample type in the toolbar"
    );
    assert!(
        h.query_all_by_label("indexing").count() >= 2,
        "the progress is where the flame graph goes, and in the status bar"
    );
    // Once opened, the demo's own first view: its hour merged.
    let started = std::time::Instant::now();
    let demo_shown = |h: &Harness<'_, FlintApp>| {
        (h.state().view.current()).is_some_and(|c| c.name.starts_with("demo fleet, last hour"))
    };
    while !demo_shown(&h) {
        assert!(started.elapsed().as_secs() < 300, "the demo opens");
        std::thread::sleep(std::time::Duration::from_millis(50));
        h.run_steps(1);
    }
    h.run_steps(2);
    h.get_by_role_and_label(Role::Canvas, "flame graph");
    close(h);
}

/// The part of the flame graph's canvas that can be seen (its scroll area clips it).
fn visible_flame_graph(h: &Harness<'static, FlintApp>) -> egui::Rect {
    let (canvas, params, _) = h
        .state()
        .view
        .flame
        .last
        .as_ref()
        .expect("a flame graph drawn");
    canvas.intersect(params.visible)
}

#[test]
fn a_small_window_keeps_the_plot_flame_graph_table_and_toolbar_usable() {
    use egui::accesskit::Role;
    for size in [vec2(640.0, 400.0), vec2(480.0, 320.0)] {
        let dir = crate::gui::tests::fixtures::fixture_dir(&format!("small-{}", size.x));
        let mut h = window_of(size);
        let ctx = h.ctx.clone();
        h.state_mut().open_dir(&ctx, dir.clone());
        h.run_steps(4);
        let span = h.state().timeline.as_ref().expect("time mode").span;
        h.state_mut()
            .select_time(&ctx, capture::QueryTime::Merge(span));
        h.run_steps(6);
        let window = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
        let inside = |r: egui::Rect| window.expand(0.5).contains_rect(r);
        // The flame graph: at least about 40% of the width, and some rows of height
        // (a few in the smallest window the window manager gives, two below it).
        h.get_by_role_and_label(Role::Canvas, "flame graph");
        let flame = visible_flame_graph(&h);
        let rows = if size.y >= 400.0 { 3.0 } else { 2.0 };
        assert!(
            flame.width() >= 0.35 * size.x
                && flame.height() >= rows * crate::gui::view::flame::ROW_HEIGHT,
            "{size:?}: the flame graph gets {flame:?}"
        );
        // The table beside it: some rows, and its columns inside the window (every
        // one in the smallest window the window manager gives; below it, the
        // functions and their own values).
        let columns: &[&str] = if size.x >= 640.0 {
            &["function", "self", "self %", "total", "total %"]
        } else {
            &["function", "self"]
        };
        let table = (columns.iter())
            .map(|c| h.get_by_role_and_label(Role::Button, c).rect())
            .reduce(egui::Rect::union)
            .unwrap();
        let rows = (h.query_all_by_role(Role::Row))
            .filter(|row| inside(row.rect()))
            .count();
        assert!(
            inside(table) && table.width() >= 150.0 && rows >= 2,
            "{size:?}: the table's columns {columns:?} are at {table:?}, {rows} rows shown"
        );
        assert!(table.left() >= flame.right(), "{size:?}: side by side");
        // The toolbar wraps: search, Apply and Clear stay in the window.
        for name in ["search", "regex", "Apply", "Clear"] {
            let r = h.get_by_label(name).rect();
            assert!(inside(r), "{size:?}: {name} at {r:?}, outside the window");
        }
        if size.x >= 640.0 {
            // The smallest window the window manager gives: the plot is usable too.
            let tl = h.state().timeline.as_ref().expect("time mode");
            let plot = *tl.last_transform.expect("the plot drawn").frame();
            assert!(
                inside(plot)
                    && plot.bottom() <= flame.top()
                    && plot.height() >= 40.0
                    && plot.width() >= 0.5 * size.x,
                "{size:?}: the plot gets {plot:?}, above the flame graph at {flame:?}"
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
