//! Regression tests of what the window shows: the flame graph, the top table, the
//! search and the status bar describe the profile on screen.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;

use capture::QueryTime;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{CallTree, codec, units};

use crate::gui::app::FlintApp;
use crate::gui::compare::Side;
use crate::gui::tests::fixtures::{click_at, fixture, fixture_dir, window};
use crate::gui::time::selector::SumBy;
use crate::gui::view::filters::SearchState;
use crate::gui::view::flame;

/// A window in time mode over `dir`; jobs and queries run synchronously.
fn time_window(dir: PathBuf) -> Harness<'static, FlintApp> {
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(!tl.series.is_empty(), "series loaded");
    h
}

/// Selects every profile of the plotted type, as a drag over all of it does.
fn merge_span(h: &mut Harness<'static, FlintApp>) {
    let span = h.state().timeline.as_ref().expect("time mode").span;
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    h.run_steps(4);
}

/// The name of the sample type the view shown is in, if there is a view.
fn shown_type(app: &FlintApp) -> Option<String> {
    let cur = app.view.current()?;
    let t = cur.profile.sample_types.get(cur.sample_type)?;
    Some(cur.profile.str(t.kind).to_string())
}

/// The sample type plotted.
fn plotted_type(app: &FlintApp) -> String {
    let tl = app.timeline.as_ref().expect("time mode");
    tl.types[tl.type_index].sample_type.clone()
}

#[test]
fn a_plot_type_switch_leaves_no_view_of_the_type_left() {
    // Three Go CPU profiles and a heap profile.
    let dir = fixture_dir("rv-type-switch");
    std::fs::copy(fixture("heap.pb.gz"), dir.join("heap.pb.gz")).unwrap();
    let mut h = time_window(dir.clone());
    assert_eq!(plotted_type(h.state()), "cpu");
    merge_span(&mut h);
    assert_eq!(shown_type(h.state()).as_deref(), Some("cpu"));
    // In-use bytes chosen in the plot's type menu.
    h.get_by_label_contains("profile type plotted and selected")
        .click();
    h.run_steps(2);
    h.get_by_label_contains("In-use bytes").click();
    h.run_steps(4);
    let app = h.state();
    assert_eq!(plotted_type(app), "inuse_space");
    let shown = shown_type(app);
    assert!(
        shown.is_none() || shown.as_deref() == Some("inuse_space"),
        "the view shows {shown:?} while the plot shows in-use bytes"
    );
    // The first view of the type switched to, if any: never the CPU merge's.
    assert!(
        app.selection_text()
            .is_none_or(|t| t.contains(", 1 profile,")),
        "{:?}",
        app.selection_text()
    );
    assert!(
        h.query_by_label_contains("merged 3 profiles").is_none(),
        "the status bar still tells of the CPU merge"
    );
    // The heap snapshot selected, then CPU time typed as the selector: the same.
    merge_span(&mut h);
    assert_eq!(shown_type(h.state()).as_deref(), Some("inuse_space"));
    let cpu = {
        let tl = h.state().timeline.as_ref().unwrap();
        let t = tl.types.iter().find(|t| t.sample_type == "cpu").unwrap();
        t.to_string()
    };
    let ctx = h.ctx.clone();
    h.state_mut().apply_selector_text(&ctx, &cpu);
    h.run_steps(4);
    let app = h.state();
    assert_eq!(plotted_type(app), "cpu");
    let shown = shown_type(app);
    assert!(
        shown.is_none() || shown.as_deref() == Some("cpu"),
        "the view shows {shown:?} while the plot shows CPU time"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The time range holding only the fixture profile `name`.
fn range_of(name: &str) -> QueryTime {
    let p = codec::decode(&std::fs::read(fixture(name)).unwrap()).unwrap();
    QueryTime::Merge(capture::TimeRange {
        start_nanos: p.time_nanos,
        end_nanos: p.time_nanos + 1,
    })
}

/// A window in time mode showing the merge of the three CPU profiles, then switched to
/// compare mode with A = cpu-1 and B = cpu-3 picked and compared: the merge shown
/// before is hidden, not A.
fn compared_after_a_merge(tag: &str) -> (Harness<'static, FlintApp>, PathBuf) {
    let dir = fixture_dir(tag);
    let mut h = time_window(dir.clone());
    merge_span(&mut h);
    h.state_mut().compare.enabled = true;
    h.run_steps(2);
    let ctx = h.ctx.clone();
    h.state_mut().compare.target = Side::A;
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    h.run_steps(2);
    assert_eq!(h.state().compare.target, Side::B);
    h.state_mut().select_time(&ctx, range_of("cpu-3.pb.gz"));
    h.run_steps(4);
    let app = h.state();
    assert!(app.compare.result.is_some(), "{:?}", app.compare.error);
    (h, dir)
}

#[test]
fn compare_mode_search_counts_and_filters_what_is_compared() {
    let (mut h, dir) = compared_after_a_merge("rv-compare-search");
    h.state_mut().view.search.text = "sha256".to_string();
    h.run_steps(3);
    let app = h.state();
    let res = app.compare.result.as_ref().unwrap();
    let re = SearchState::pattern("sha256", false).unwrap().unwrap();
    let matches = CallTree::frame_matches(&res.frames, &re);
    let share = |side: Side| {
        let matched = res.tree.matched_total(res.totals(side), &matches);
        assert!(matched > 0, "{side:?} runs sha256");
        format!(
            "{}: {} ({})",
            side.letter(),
            units::readable(matched, &res.unit),
            units::percent(matched, res.total(side))
        )
    };
    // The matched share of A and of B, not of the merge hidden by compare mode.
    let expected = format!("matched {} · {}", share(Side::A), share(Side::B));
    h.get_by_label(&expected);
    // The diff table lists the functions that match, as the top table does.
    let order = &app.compare.order;
    let matching = res
        .rows
        .iter()
        .filter(|r| matches[r.frame as usize])
        .count();
    assert!(matching > 0 && matching < res.rows.len(), "{matching}");
    assert_eq!(order.len(), matching, "rows listed while searching");
    for &i in order {
        let frame = res.rows[i].frame as usize;
        assert!(matches[frame], "{} listed", res.frames.frames[frame].name);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn merge_in_compare_mode_names_and_sets_the_side_being_selected() {
    let dir = fixture_dir("rv-compare-merge");
    let mut h = time_window(dir.clone());
    h.state_mut().compare.enabled = true;
    h.run_steps(2);
    // Nothing picked yet: Merge says it sets A.
    assert!(
        h.query_by_label("Merge").is_none(),
        "a Merge that names no side"
    );
    h.get_by_label("Merge into A");
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    h.run_steps(2);
    // A picked, B is being selected: Merge says so, and merges into B alone.
    h.get_by_label("Merge into B").click();
    h.run_steps(4);
    let app = h.state();
    let a = app.compare.a.as_ref().expect("A kept");
    assert_eq!(a.time, range_of("cpu-1.pb.gz"));
    let b = app
        .compare
        .b
        .as_ref()
        .expect("the visible range merged into B");
    assert_eq!(b.count, 3, "every visible profile");
    assert!(app.compare.result.is_some(), "{:?}", app.compare.error);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_selection_keeps_its_series_after_compare_mode() {
    let dir = fixture_dir("rv-series-after-compare");
    let mut h = time_window(dir.clone());
    let ctx = h.ctx.clone();
    h.state_mut()
        .set_sum_by(&ctx, SumBy::Labels(vec!["endpoint".to_string()]));
    h.run_steps(4);
    // A click on one endpoint's line: that series' profile at the point.
    let (pos, value) = crate::gui::tests::time::endpoint_point(&h);
    click_at(&mut h, pos);
    h.run_steps(4);
    let before = h.state().selection_text().expect("a selection");
    assert!(
        before.contains(&format!("{{endpoint=\"{value}\"}}")),
        "{before}"
    );
    // Compare on (the selection becomes A), B merged from the whole view, compare off.
    h.state_mut().compare.enabled = true;
    h.run_steps(2);
    assert!(
        h.state().compare.a.is_some(),
        "the selection carried into A"
    );
    h.state_mut().compare.target = Side::B;
    h.state_mut().merge_visible(&ctx);
    h.run_steps(4);
    assert!(h.state().compare.b.is_some(), "B merged");
    h.state_mut().compare.enabled = false;
    h.run_steps(2);
    assert_eq!(h.state().selection_text(), Some(before.clone()));
    h.get_by_label(&before);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_inverted_tree_tells_the_self_of_its_leaf_functions_as_the_top_table() {
    let mut h = window();
    h.state_mut()
        .open(crate::gui::view::loader::Source::Path(fixture(
            "cpu-1.pb.gz",
        )));
    h.run_steps(4);
    h.state_mut().view.invert = true;
    h.run_steps(4);
    let app = h.state();
    let cur = app.view.current().expect("a view");
    assert!(cur.settings.invert, "bottom-up");
    let input = cur.flame_input();
    // The roots of a bottom-up tree are the leaf functions: each one's self is the
    // top table's.
    let mut checked = 0;
    for node in cur.tree.children(CallTree::ROOT) {
        let frame = cur.tree.frame(node);
        let flat = cur
            .top
            .rows
            .iter()
            .find(|r| r.frame == frame)
            .map_or(0, |r| r.flat);
        let rect = FlameRect {
            kind: RectKind::Node(node),
            row: 1,
            x0: 0.0,
            x1: 100.0,
            value: cur.totals[node as usize],
            hidden: 0,
        };
        let lines = flame::describe(&input, &rect);
        let self_line = lines.iter().find(|l| l.starts_with("self: ")).unwrap();
        let name = &lines[0];
        assert!(
            self_line.starts_with(&format!("self: {} (", units::readable(flat, cur.unit()))),
            "{name}: {self_line}, the top table's self is {flat}"
        );
        checked += usize::from(flat > 0);
    }
    assert!(checked > 1, "leaf functions with a self of their own");
}
