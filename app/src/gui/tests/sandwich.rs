//! Callers and callees (the sandwich) and the frames' context menu, over the Go CPU
//! profile of `view.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::layout::RectKind;
use profile_model::units;

use crate::gui::app::FlintApp;
use crate::gui::tests::fixtures::secondary_click_at;
use crate::gui::tests::view::{find_rect, harness};
use crate::gui::view::sandwich::{CALLEES_GRAPH, CALLERS_GRAPH};

/// The "self … · total …" line of a sandwich of the row of `name` in the top table.
fn expected_line(h: &Harness<'_, FlintApp>, name: &str) -> String {
    let cur = h.state().view.current().unwrap();
    let row = cur
        .top
        .rows
        .iter()
        .find(|r| cur.frames.get(r.frame).name == name)
        .unwrap();
    let value = |v| {
        format!(
            "{} ({})",
            units::readable(v, cur.unit()),
            units::percent(v, cur.totals[0])
        )
    };
    format!("self {} · total {}", value(row.flat), value(row.cum))
}

/// The names of the frames drawn in row `row` of the sandwich graph `i` (0: callers).
fn drawn(h: &Harness<'_, FlintApp>, i: usize, row: u32) -> Vec<String> {
    let app = h.state();
    let cur = app.view.current().unwrap();
    let made = app.view.sandwich.made.as_ref().expect("sandwich made");
    let tree = [&made.sandwich.callers, &made.sandwich.callees][i];
    let (_, _, rects) = app.view.sandwich.last[i].as_ref().expect("drawn");
    rects
        .iter()
        .filter(|r| r.row == row)
        .filter_map(|r| match r.kind {
            RectKind::Node(n) => Some(cur.frames.get(tree.frame(n)).name.clone()),
            RectKind::Hidden { .. } => None,
        })
        .collect()
}

#[test]
fn a_top_table_row_shows_its_callers_above_and_callees_below_until_esc() {
    let mut h = harness();
    let line = expected_line(&h, "main.fib");
    h.get_by_label("main.fib").click();
    h.run_steps(3);
    h.get_by_label("callers and callees of");
    h.get_by_label(&line);
    h.get_by_label(CALLERS_GRAPH);
    h.get_by_label(CALLEES_GRAPH);
    assert!(h.query_by_label("flame graph").is_none(), "in its place");
    // main.fib fills both graphs' width, called by main.handleFib, calling itself.
    assert_eq!(drawn(&h, 0, 1), ["main.fib"]);
    assert_eq!(drawn(&h, 0, 2), ["main.handleFib"]);
    assert_eq!(drawn(&h, 1, 1), ["main.fib"]);
    assert_eq!(drawn(&h, 1, 2), ["main.fib"]);
    h.key_press(Key::Escape);
    h.run_steps(2);
    h.get_by_label("flame graph");
    assert!(h.query_by_label(CALLERS_GRAPH).is_none());
}

#[test]
fn s_shows_the_sandwich_of_the_frame_under_the_pointer_and_a_click_there_follows_a_caller() {
    let mut h = harness();
    let (_, pos) = find_rect(&h, "main.handleFib", 20.0);
    h.hover_at(pos);
    h.run_steps(2);
    h.key_press(Key::S);
    h.run_steps(3);
    h.get_by_label(&expected_line(&h, "main.handleFib"));
    // Its caller clicked in the callers graph: the sandwich of that caller.
    let caller = drawn(&h, 0, 2);
    assert_eq!(caller, ["main.dispatch"]);
    let (canvas, params, rects) = h.state().view.sandwich.last[0].clone().unwrap();
    let fr = rects.iter().find(|r| r.row == 2).unwrap();
    let pos = crate::gui::view::flame::screen_rect(fr, canvas, &params).center();
    crate::gui::tests::fixtures::click_at(&mut h, pos);
    h.get_by_label(&expected_line(&h, "main.dispatch"));
}

#[test]
fn the_sandwich_follows_the_filters_and_says_when_its_function_is_filtered_out() {
    let mut h = harness();
    h.get_by_label("main.fib").click();
    h.run_steps(3);
    let before = h
        .state()
        .view
        .sandwich
        .made
        .as_ref()
        .unwrap()
        .sandwich
        .total(0);
    h.state_mut().view.filters.ignore = "handleFib".to_string();
    h.state_mut().view.apply_filters();
    h.run_steps(4);
    h.get_by_label("main.fib is not in this view (filtered out?)");
    h.state_mut().view.filters.ignore = String::new();
    h.state_mut().view.filters.focus = "main.fib".to_string();
    h.state_mut().view.apply_filters();
    h.run_steps(4);
    let made = h.state().view.sandwich.made.clone().expect("made again");
    assert_eq!(
        made.sandwich.total(0),
        before,
        "focus keeps all of main.fib"
    );
    h.get_by_label(&expected_line(&h, "main.fib"));
}

#[test]
fn the_context_menu_of_a_frame_focuses_ignores_hides_searches_and_shows_callers() {
    let mut h = harness();
    let (_, pos) = find_rect(&h, "main.handleFib", 20.0);
    secondary_click_at(&mut h, pos);
    h.get_by_label("Focus on this").click();
    h.run_steps(4);
    let app = h.state();
    assert_eq!(app.view.filters.focus, r"main\.handleFib");
    let cur = app.view.current().unwrap();
    assert_eq!(
        cur.settings
            .options
            .filters
            .focus
            .as_ref()
            .unwrap()
            .as_str(),
        r"main\.handleFib"
    );
    // From the top table: search for it, then its callers and callees.
    h.get_by_label("main.fib").click_secondary();
    h.run_steps(2);
    h.get_by_label("Search for this").click();
    h.run_steps(3);
    assert_eq!(h.state().view.search.text, "main.fib");
    h.get_by_label("main.fib").click_secondary();
    h.run_steps(2);
    h.get_by_label("Show callers and callees (s)").click();
    h.run_steps(3);
    h.get_by_label(CALLERS_GRAPH);
    // Hide, from the callees graph's menu: main.fib leaves the stacks.
    let (canvas, params, rects) = h.state().view.sandwich.last[1].clone().unwrap();
    let fr = rects.iter().find(|r| r.row == 1).unwrap();
    let pos = crate::gui::view::flame::screen_rect(fr, canvas, &params).center();
    secondary_click_at(&mut h, pos);
    h.get_by_label("Hide (keep its samples)").click();
    h.run_steps(4);
    assert_eq!(h.state().view.filters.hide, r"main\.fib");
    h.get_by_label("main.fib is not in this view (filtered out?)");
}

#[test]
fn compare_mode_shows_a_diff_sandwich_with_both_sides_values() {
    let (mut h, dir) = crate::gui::tests::compare::compared("diff-sandwich");
    let (_, pos) = crate::gui::tests::compare::diff_rect(&h, "crypto/sha256.block");
    secondary_click_at(&mut h, pos);
    h.get_by_label("Show callers and callees (s)").click();
    h.run_steps(4);
    h.get_by_label(CALLERS_GRAPH);
    h.get_by_label(CALLEES_GRAPH);
    assert!(
        h.query_by_label("diff flame graph").is_none(),
        "in its place"
    );
    // A's and B's self and total are the diff table's.
    let line = {
        let app = h.state();
        let res = app.compare.result.as_ref().unwrap();
        let row = res
            .rows
            .iter()
            .find(|r| res.frames.get(r.frame).name == "crypto/sha256.block")
            .unwrap();
        let value = |v, total| {
            format!(
                "{} ({})",
                units::readable(v, &res.unit),
                units::percent(v, total)
            )
        };
        format!(
            "A: self {} · total {} | B: self {} · total {}",
            value(row.a_flat, res.total_a()),
            value(row.a, res.total_a()),
            value(row.b_flat, res.total_b()),
            value(row.b, res.total_b())
        )
    };
    h.get_by_label(&line);
    // Drawn in the diff colors: the function itself is more in B.
    let app = h.state();
    let made = app.compare.sandwich.state.made.clone().unwrap();
    let (tree, a) = made.graph(1, 0);
    let (_, b) = made.graph(1, 1);
    let node = profile_model::sandwich::FRAME_NODE as usize;
    assert_eq!(
        cur_name(&app.compare.result.as_ref().unwrap().frames, tree.frame(1)),
        "crypto/sha256.block"
    );
    assert!(b[node] > a[node], "sha256 is more in B");
    h.key_press(Key::Escape);
    h.run_steps(2);
    h.get_by_label("diff flame graph");
    let _ = std::fs::remove_dir_all(dir);
}

/// The name of `frame`.
fn cur_name(frames: &profile_model::FrameTable, frame: profile_model::FrameId) -> String {
    frames.get(frame).name.clone()
}

#[test]
fn compare_modes_table_rows_and_side_graphs_have_the_context_menu_too() {
    let (mut h, dir) = crate::gui::tests::compare::compared("diff-menus");
    // From a row of the diff table: focus, through the view's filters.
    h.get_by_label("crypto/sha256.block").click_secondary();
    h.run_steps(2);
    h.get_by_label("Focus on this").click();
    h.run_steps(6);
    assert_eq!(h.state().view.filters.focus, r"crypto/sha256\.block");
    let res = h.state().compare.result.clone().expect("compared again");
    let kept = |name: &str| {
        res.rows
            .iter()
            .any(|r| res.frames.get(r.frame).name == name)
    };
    assert!(
        kept("crypto/sha256.block") && !kept("sort.partition"),
        "focused"
    );
    // From A's flame graph: callers and callees, in place of the diff graph.
    let (canvas, params, rects) = h.state().compare.side_last[0].clone().unwrap();
    let fr = rects.iter().find(|r| r.row == 1).unwrap();
    let pos = crate::gui::view::flame::screen_rect(fr, canvas, &params).center();
    secondary_click_at(&mut h, pos);
    h.get_by_label("Show callers and callees (s)").click();
    h.run_steps(4);
    h.get_by_label(CALLERS_GRAPH);
    assert!(h.query_by_label("diff flame graph").is_none());
    let _ = std::fs::remove_dir_all(dir);
}
