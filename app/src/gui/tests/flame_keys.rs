//! The flame graph driven by the keyboard: arrows, Enter and Esc.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::CallTree;

use crate::gui::app::FlintApp;
use crate::gui::tests::view::harness;
use crate::gui::view::flame;

/// Presses `key` and lets the window settle.
fn press(h: &mut Harness<'_, FlintApp>, key: Key) {
    h.key_press(key);
    h.run_steps(2);
}

/// The name of the node the cursor is on.
fn cursor_name(h: &Harness<'_, FlintApp>) -> String {
    let app = h.state();
    let cur = app.view.current().unwrap();
    let node = app.view.flame.cursor.expect("a cursor");
    flame::node_name(&cur.tree, &cur.frames, node).to_string()
}

#[test]
fn arrows_walk_the_graph_enter_zooms_and_esc_resets() {
    let mut h = harness();
    // The first arrow puts the cursor on the zoomed node (the root).
    press(&mut h, Key::ArrowDown);
    assert_eq!(h.state().view.flame.cursor, Some(CallTree::ROOT));
    // Down: the widest callee, each time.
    for _ in 0..5 {
        press(&mut h, Key::ArrowDown);
    }
    let name = cursor_name(&h);
    h.get_by_label(&format!("selected: {name}"));
    // Right then left comes back; up then down too (it is the widest).
    let here = h.state().view.flame.cursor;
    press(&mut h, Key::ArrowRight);
    let right = h.state().view.flame.cursor;
    assert_ne!(right, here, "{name} has a sibling after it");
    press(&mut h, Key::ArrowLeft);
    assert_eq!(h.state().view.flame.cursor, here);
    press(&mut h, Key::ArrowUp);
    let parent = h.state().view.flame.cursor.unwrap();
    let cur = h.state().view.current().cloned().unwrap();
    assert_eq!(cur.tree.parent(here.unwrap()), parent);
    // Enter zooms to it: it fills the width, and the breadcrumb names it.
    press(&mut h, Key::Enter);
    assert_eq!(h.state().view.flame.zoom, parent);
    let parent_name = cursor_name(&h);
    h.get_by_label_contains(&format!("zoom: {parent_name} ("));
    press(&mut h, Key::Escape);
    let app = h.state();
    assert_eq!(app.view.flame.zoom, CallTree::ROOT);
    assert_eq!(app.view.flame.cursor, None);
}

#[test]
fn arrows_leave_a_search_field_being_typed_in_alone() {
    let mut h = harness();
    h.state_mut().view.focus_search = true;
    h.run_steps(2);
    press(&mut h, Key::ArrowDown);
    assert_eq!(h.state().view.flame.cursor, None);
}

#[test]
fn the_rows_scroll_to_keep_the_cursor_on_screen() {
    let mut h = harness();
    h.set_size(egui::vec2(1400.0, 420.0));
    h.run_steps(3);
    // Down the widest callees to the deepest: below the rows on screen at first.
    for _ in 0..40 {
        press(&mut h, Key::ArrowDown);
    }
    h.run_steps(3);
    let app = h.state();
    let cur = app.view.current().unwrap();
    let node = app.view.flame.cursor.unwrap();
    let (canvas, params, _) = app.view.flame.last.clone().unwrap();
    let depth = cur.tree.depth(node);
    assert!(depth > 15, "deep enough to leave the screen: {depth}");
    let top = flame::row_top(canvas, depth, &params);
    assert!(
        params.visible.y_range().contains(top + 1.0),
        "row {depth} at {top} is off {:?}",
        params.visible
    );
}

#[test]
fn with_the_root_at_the_bottom_up_goes_to_the_callee_above() {
    let mut h = harness();
    h.state_mut().view.flame.flipped = true;
    press(&mut h, Key::ArrowUp);
    press(&mut h, Key::ArrowUp);
    assert_eq!(
        cursor_name(&h),
        "main.worker",
        "the widest callee of the root"
    );
    press(&mut h, Key::ArrowDown);
    assert_eq!(h.state().view.flame.cursor, Some(CallTree::ROOT));
}

#[test]
fn arrows_move_in_the_sandwich_graph_under_the_pointer_and_enter_follows() {
    use crate::gui::view::sandwich::CALLERS_GRAPH;
    use profile_model::sandwich::FRAME_NODE;
    let mut h = harness();
    h.get_by_label("main.fib").click();
    h.run_steps(3);
    let frame_name = |h: &Harness<'_, FlintApp>, i: usize| {
        let app = h.state();
        let made = app.view.sandwich.made.clone().unwrap();
        let (tree, _) = made.graph(i, 0);
        let node = app.view.sandwich.cursor[i].expect("a cursor");
        app.view
            .current()
            .unwrap()
            .frames
            .get(tree.frame(node))
            .name
            .clone()
    };
    // The callees graph until the pointer says otherwise: on the function, then its
    // widest callee (main.fib calls itself).
    press(&mut h, Key::ArrowDown);
    assert_eq!(h.state().view.sandwich.cursor[1], Some(FRAME_NODE));
    press(&mut h, Key::ArrowDown);
    assert_ne!(h.state().view.sandwich.cursor[1], Some(FRAME_NODE));
    assert_eq!(frame_name(&h, 1), "main.fib");
    press(&mut h, Key::ArrowUp);
    assert_eq!(h.state().view.sandwich.cursor[1], Some(FRAME_NODE));
    // In the callers graph (root at the bottom), up goes to the caller.
    let callers = h.get_by_label(CALLERS_GRAPH).rect().center();
    h.hover_at(callers);
    h.run_steps(2);
    press(&mut h, Key::ArrowUp);
    press(&mut h, Key::ArrowUp);
    assert_eq!(frame_name(&h, 0), "main.handleFib");
    assert_eq!(
        h.state().view.sandwich.cursor[1],
        Some(FRAME_NODE),
        "untouched"
    );
    // Enter: the sandwich of the cursor's function; Esc: back to the flame graph.
    press(&mut h, Key::Enter);
    assert_eq!(
        h.state().view.sandwich.name.as_deref(),
        Some("main.handleFib")
    );
    press(&mut h, Key::Escape);
    assert!(!h.state().view.sandwich.is_open());
    h.get_by_label("flame graph");
}

#[test]
fn arrows_move_in_compare_modes_graph_under_the_pointer_enter_zooms_esc_resets() {
    use crate::gui::compare::DIFF_GRAPH;
    let (mut h, _dir) = crate::gui::tests::compare::compared("compare-keys");
    // The diff graph until another is under the pointer.
    press(&mut h, Key::ArrowDown);
    press(&mut h, Key::ArrowDown);
    let zooms = h.state().compare.zooms.clone();
    let diff_cursor = zooms[DIFF_GRAPH]
        .cursor
        .expect("a cursor in the diff graph");
    assert_ne!(diff_cursor, CallTree::ROOT);
    assert_eq!(zooms[0].cursor, None);
    // A's graph: down twice, Enter zooms A there, the diff as it was.
    let a = h.state().compare.side_last[0]
        .as_ref()
        .unwrap()
        .0
        .left_top()
        + egui::vec2(60.0, 8.0);
    h.hover_at(a);
    h.run_steps(2);
    press(&mut h, Key::ArrowDown);
    press(&mut h, Key::ArrowDown);
    let a_cursor = h.state().compare.zooms[0].cursor.expect("a cursor in A");
    assert_ne!(a_cursor, CallTree::ROOT);
    press(&mut h, Key::Enter);
    let zooms = h.state().compare.zooms.clone();
    assert_eq!(zooms[0].zoom, a_cursor);
    assert_eq!(zooms[DIFF_GRAPH].zoom, CallTree::ROOT);
    assert_eq!(zooms[DIFF_GRAPH].cursor, Some(diff_cursor));
    press(&mut h, Key::Escape);
    let zooms = h.state().compare.zooms.clone();
    assert!(
        zooms
            .iter()
            .all(|z| z.zoom == CallTree::ROOT && z.cursor.is_none())
    );
}
