//! Flying through a flame graph: the wheel zooms around the pointer and a drag pans,
//! continuously, within the node zoomed into; an overview strip above the graph shows
//! the whole of it and the part on screen. Each canvas keeps its window in egui's
//! memory under its label, so that every flame graph (the view's, compare's A, B and
//! diff, a sandwich's two) flies alike without state of its own.

use egui::{Color32, Id, Mesh, Rect, Response, Sense, Shape, Stroke, Ui, pos2, vec2};
use profile_model::layout::{LayoutParams, RectKind, layout, offset};
use profile_model::{CallTree, NodeId};

use crate::gui::view::flame::{FlameInput, FlameParams, FlameStyle, NodeStyle, row_top};

/// Height of the overview strip (points) and the rows a graph must have room for below
/// it: a smaller graph gets a thinner strip, and one with room for a few rows none.
const STRIPS: [(f32, f32); 2] = [(26.0, 12.0), (12.0, 6.0)];

/// The height of the overview strip of a graph `room` points high whose rows are
/// `row_height` high (0: none).
pub fn strip_height(room: f32, row_height: f32) -> f32 {
    STRIPS
        .iter()
        .find(|(height, rows)| room >= height + rows * row_height)
        .map_or(0.0, |(height, _)| *height)
}

/// The narrowest window, as a share of the node zoomed into.
const NARROWEST: f64 = 1e-7;

/// How much a point of wheel scrolling zooms.
const WHEEL_ZOOM: f64 = 0.004;

/// The part of its zoomed node a canvas shows, and of which node.
#[derive(Debug, Clone, Copy)]
struct Flight {
    zoom: NodeId,
    window: (f64, f64),
}

/// The id a canvas labelled `label` keeps its window under.
fn id_of(label: &str) -> Id {
    Id::unique(("flame flight", label))
}

/// The window of the canvas labelled `label` over `zoom` (all of it when it last
/// showed another node).
pub fn window(ui: &Ui, label: &str, zoom: NodeId) -> (f64, f64) {
    ui.data(|d| d.get_temp::<Flight>(id_of(label)))
        .filter(|f| f.zoom == zoom)
        .map_or((0.0, 1.0), |f| f.window)
}

/// Every canvas shows the whole of its zoomed node again (Esc, Reset).
pub fn land(ctx: &egui::Context) {
    ctx.data_mut(|d| d.remove_by_type::<Flight>());
}

/// `window` zoomed by `factor` (below 1: in) around the share `at` of the canvas's
/// width, then moved by `shift` (a share of the window's width), kept inside the node.
pub fn moved(window: (f64, f64), factor: f64, at: f64, shift: f64) -> (f64, f64) {
    let width = window.1 - window.0;
    let new_width = (width * factor).clamp(NARROWEST, 1.0);
    let pivot = window.0 + at * width;
    let start = pivot - at * new_width + shift * new_width;
    let start = start.clamp(0.0, 1.0 - new_width);
    (start, start + new_width)
}

/// Takes the wheel and the drag over the canvas of `response` (labelled `label`,
/// showing `zoom`): the new window, which is remembered. A vertical drag scrolls the
/// graph's rows instead.
pub fn fly(ui: &Ui, response: &Response, label: &str, zoom: NodeId) -> (f64, f64) {
    let mut w = window(ui, label, zoom);
    let rect = response.rect;
    if rect.width() <= 0.0 {
        return w;
    }
    if let Some(pos) = response.hover_pos() {
        let (scroll, pinch) = ui.input(|i| (i.smooth_scroll_delta, i.zoom_delta()));
        if scroll != egui::Vec2::ZERO || pinch != 1.0 {
            let at = f64::from((pos.x - rect.left()) / rect.width());
            let factor = (-f64::from(scroll.y) * WHEEL_ZOOM).exp() / f64::from(pinch);
            let shift = -f64::from(scroll.x / rect.width());
            w = moved(w, factor, at, shift);
            ui.ctx()
                .input_mut(|i| i.smooth_scroll_delta = egui::Vec2::ZERO);
        }
    }
    if response.dragged() {
        let delta = response.drag_delta();
        w = moved(w, 1.0, 0.0, -f64::from(delta.x / rect.width()));
        if delta.y != 0.0 {
            ui.scroll_with_delta(vec2(0.0, delta.y));
        }
    }
    ui.data_mut(|d| d.insert_temp(id_of(label), Flight { zoom, window: w }));
    w
}

/// Scrolls the rows of the canvas labelled `label` (`rect`, drawn with `params`) so
/// that the keyboard's `cursor`, a node of `tree`, is on screen, once each time it moves
/// (so that the rows can still be scrolled away from it).
pub fn reveal(
    ui: &Ui,
    label: &str,
    cursor: Option<NodeId>,
    tree: &CallTree,
    (rect, params): (Rect, &FlameParams),
) {
    let id = id_of(label).with("cursor");
    if ui.data(|d| d.get_temp::<Option<NodeId>>(id)) == Some(cursor) {
        return;
    }
    ui.data_mut(|d| d.insert_temp(id, cursor));
    let Some(node) = cursor.filter(|&n| (n as usize) < tree.len()) else {
        return;
    };
    let top = row_top(rect, tree.depth(node), params);
    let row = Rect::from_x_y_ranges(rect.x_range(), top..=top + params.style.row_height);
    if !params.visible.contains_rect(row) {
        ui.scroll_to_rect(row, None);
    }
}

/// The overview strip: the whole graph in `height` points, the part on screen
/// (the `window` of node `zoom`) outlined and the rest darkened. Root at the bottom
/// when `flipped`, as the graph.
pub fn strip(
    ui: &mut Ui,
    (label, height): (&str, f32),
    input: &FlameInput<'_>,
    nodes: &NodeStyle<'_>,
    zoom: NodeId,
    window: (f64, f64),
    flipped: bool,
) {
    let (rect, response) =
        ui.allocate_exact_size(vec2(ui.available_width(), height), Sense::hover());
    response.widget_info(|| {
        egui::WidgetInfo::labeled(egui::Role::Image, true, format!("overview of {label}"))
    });
    let total = input.totals.first().copied().unwrap_or(0);
    if total <= 0 || !ui.is_rect_visible(rect) {
        return;
    }
    let style = FlameStyle::for_ui(ui);
    let rows = (input.tree.max_depth() + 1).min(height as u32);
    let row_height = height / rows as f32;
    let rects = layout(
        input.tree,
        input.totals,
        &LayoutParams::whole(CallTree::ROOT, rect.width(), 0..rows),
    );
    let mut mesh = Mesh::default();
    mesh.add_colored_rect(rect, style.background);
    for fr in &rects {
        let top = if flipped {
            rect.bottom() - (fr.row + 1) as f32 * row_height
        } else {
            rect.top() + fr.row as f32 * row_height
        };
        let fill = match fr.kind {
            RectKind::Node(CallTree::ROOT) => style.root,
            RectKind::Node(node) => match nodes.node_colors {
                Some(colors) => colors.get(node as usize),
                None => input.colors.get(input.tree.frame(node) as usize),
            }
            .copied()
            .unwrap_or(style.sliver),
            RectKind::Hidden { .. } => style.sliver,
        };
        let r = Rect::from_min_max(
            pos2(rect.left() + fr.x0, top),
            pos2(rect.left() + fr.x1.max(fr.x0 + 0.5), top + row_height),
        );
        mesh.add_colored_rect(r, fill);
    }
    // The part on screen: the window of the zoomed node, in the whole graph.
    let scale = f64::from(rect.width()) / total as f64;
    let start = offset(input.tree, input.totals, zoom) as f64;
    let width = input.totals.get(zoom as usize).copied().unwrap_or(0) as f64;
    let x0 = rect.left() + ((start + window.0 * width) * scale) as f32;
    let x1 = rect.left() + ((start + window.1 * width) * scale) as f32;
    let shown = Rect::from_min_max(pos2(x0, rect.top()), pos2(x1.max(x0 + 2.0), rect.bottom()));
    let shade = Color32::from_black_alpha(110);
    mesh.add_colored_rect(
        Rect::from_min_max(rect.min, pos2(shown.left(), rect.bottom())),
        shade,
    );
    mesh.add_colored_rect(
        Rect::from_min_max(pos2(shown.right(), rect.top()), rect.max),
        shade,
    );
    let painter = ui.painter_at(rect);
    painter.add(Shape::mesh(mesh));
    painter.rect_stroke(
        shown,
        0.0,
        Stroke::new(1.5, style.outline),
        egui::StrokeKind::Inside,
    );
}

#[cfg(test)]
mod tests {
    use super::{moved, strip_height};

    #[test]
    fn smaller_graphs_get_a_thinner_strip_and_the_smallest_none() {
        assert_eq!(strip_height(500.0, 18.0), 26.0);
        assert_eq!(strip_height(200.0, 18.0), 12.0);
        assert_eq!(strip_height(100.0, 18.0), 0.0);
    }

    #[test]
    fn zooming_keeps_the_point_under_the_pointer_and_stays_inside_the_node() {
        let (a, b) = moved((0.0, 1.0), 0.5, 0.25, 0.0);
        assert!((a - 0.125).abs() < 1e-12 && (b - 0.625).abs() < 1e-12);
        // The share under the pointer (a quarter in) is the same before and after.
        assert!((a + 0.25 * (b - a) - 0.25).abs() < 1e-12);
        assert_eq!(
            moved((0.0, 0.5), 4.0, 0.5, 0.0),
            (0.0, 1.0),
            "no wider than all"
        );
        assert_eq!(
            moved((0.5, 0.6), 1.0, 0.0, 10.0).1,
            1.0,
            "no further than the end"
        );
        let (a, b) = moved((0.5, 0.6), 1.0, 0.0, -0.5);
        assert!((a - 0.45).abs() < 1e-12 && (b - 0.55).abs() < 1e-12);
    }
}
