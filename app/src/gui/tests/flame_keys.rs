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
