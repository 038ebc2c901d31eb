//! Flying through flame graphs: the wheel zooms around the pointer, a drag pans, Esc
//! lands, and an overview strip shows the whole graph.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use egui::{Event, Key, Modifiers, MouseWheelUnit, Pos2, Rect, TouchPhase, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

use crate::gui::app::FlintApp;
use crate::gui::tests::compare::compared;
use crate::gui::tests::fixtures::drag;
use crate::gui::tests::view::harness;
use crate::gui::view::flame::FlameParams;

/// Turns the wheel by `lines` notches (positive: away from the user, zooming in) at
/// `pos`, and lets the smoothed scrolling run out.
fn wheel(h: &mut Harness<'_, FlintApp>, pos: Pos2, lines: f32) {
    h.hover_at(pos);
    h.event(Event::MouseWheel {
        unit: MouseWheelUnit::Line,
        delta: vec2(0.0, lines),
        phase: TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(40);
}

/// The canvas and parameters the view's flame graph was last drawn with.
fn view_graph(h: &Harness<'_, FlintApp>) -> (Rect, FlameParams) {
    let (canvas, params, _) = h.state().view.flame.last.clone().expect("drawn");
    (canvas, params)
}

/// The share of the zoomed node under screen x `x`.
fn share_at(canvas: Rect, window: (f64, f64), x: f32) -> f64 {
    window.0 + f64::from((x - canvas.left()) / canvas.width()) * (window.1 - window.0)
}

#[test]
fn the_wheel_zooms_around_the_pointer_a_drag_pans_and_esc_lands() {
    let mut h = harness();
    h.get_by_label("overview of flame graph");
    let (canvas, params) = view_graph(&h);
    assert_eq!(params.window, (0.0, 1.0));
    let pos = Pos2::new(canvas.left() + canvas.width() * 0.3, canvas.top() + 40.0);
    let before = share_at(canvas, params.window, pos.x);
    wheel(&mut h, pos, 5.0);
    let (canvas, params) = view_graph(&h);
    let (a, b) = params.window;
    assert!(b - a < 0.8, "zoomed in: {:?}", params.window);
    assert!(
        (share_at(canvas, params.window, pos.x) - before).abs() < 1e-3,
        "around the pointer"
    );
    // Narrower rectangles are wider on screen; none goes past the edges.
    let (_, _, rects) = h.state().view.flame.last.clone().unwrap();
    assert!(
        rects
            .iter()
            .all(|r| r.x0 >= 0.0 && r.x1 <= canvas.width() + 0.01)
    );
    // A drag to the left moves the window right by as much.
    drag(&mut h, pos, vec2(-100.0, 0.0));
    let (_, dragged) = view_graph(&h);
    let moved = dragged.window.0 - a;
    let expected = 100.0 / f64::from(canvas.width()) * (b - a);
    assert!((moved - expected).abs() < 1e-3, "{moved} vs {expected}");
    assert_eq!(
        h.state().view.flame.zoom,
        params.zoom,
        "a drag does not click"
    );
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert_eq!(view_graph(&h).1.window, (0.0, 1.0));
}

#[test]
fn compare_modes_diff_graph_flies_too() {
    let (mut h, dir) = compared("flight");
    h.get_by_label("overview of diff flame graph");
    let (canvas, params, _) = h.state().compare.last.clone().expect("diff drawn");
    assert_eq!(params.window, (0.0, 1.0));
    let pos = Pos2::new(canvas.center().x, canvas.top() + 30.0);
    wheel(&mut h, pos, 5.0);
    let (_, params, _) = h.state().compare.last.clone().unwrap();
    assert!(
        params.window.1 - params.window.0 < 0.8,
        "{:?}",
        params.window
    );
    let _ = std::fs::remove_dir_all(dir);
}
