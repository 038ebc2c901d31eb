//! The flame graph widget: the call tree laid out by [`profile_model::layout`], painted as
//! one [`Mesh`] for every rectangle plus text only where a name fits, with manual hit
//! testing over the laid-out rectangles (never one egui widget per node).
//!
//! [`build_mesh`] is the pure, benchmarkable part: layout + tessellation of the visible
//! rows. [`show`] wraps it in a scrollable, clickable canvas with a tooltip.

use std::borrow::Cow;

use egui::{Align2, Color32, FontId, Mesh, Pos2, Rect, ScrollArea, Sense, Shape, Ui, pos2, vec2};
use profile_model::diff::{self, Change, DiffMode};
use profile_model::frames::{FrameId, FrameTable};
use profile_model::layout::{FlameRect, LayoutParams, RectKind, layout};
use profile_model::units;
use profile_model::{CallTree, NodeId};

use crate::gui::view::flight;

/// The accessible label of the view's flame graph.
pub const VIEW_GRAPH: &str = "flame graph";

/// Height of one row in points, the 1 px gap included.
pub const ROW_HEIGHT: f32 = 18.0;
/// Size of the frame names.
pub const FONT_SIZE: f32 = 12.0;

/// How the flame graph looks: sizes and the neutral colors.
#[derive(Debug, Clone, Copy)]
pub struct FlameStyle {
    /// Height of one row, gap included.
    pub row_height: f32,
    /// Gap between rows and between neighbouring rectangles.
    pub gap: f32,
    /// Advance of one character of the (monospace) label font.
    pub char_width: f32,
    /// Space left of a label.
    pub text_padding: f32,
    /// Fill of the root ("all").
    pub root: Color32,
    /// Fill of slivers (children narrower than one pixel).
    pub sliver: Color32,
    /// Dimmed rectangles are blended towards this (the background).
    pub background: Color32,
    /// Outline of selected frames.
    pub outline: Color32,
}

impl FlameStyle {
    /// The style for the current theme of `ui`.
    pub fn for_ui(ui: &Ui) -> Self {
        let dark = ui.visuals().dark_mode;
        let font = FontId::monospace(FONT_SIZE);
        let char_width = ui.ctx().fonts_mut(|f| f.glyph_width(&font, 'x'));
        Self {
            char_width,
            root: crate::gui::view::colors::root_color(dark),
            sliver: crate::gui::view::colors::sliver_color(dark),
            background: ui.visuals().extreme_bg_color,
            outline: if dark {
                Color32::WHITE
            } else {
                Color32::from_rgb(0x10, 0x10, 0x10)
            },
            ..Self::default()
        }
    }
}

impl Default for FlameStyle {
    fn default() -> Self {
        Self {
            row_height: ROW_HEIGHT,
            gap: 1.0,
            char_width: 7.2,
            text_padding: 4.0,
            root: Color32::from_gray(200),
            sliver: Color32::from_gray(180),
            background: Color32::WHITE,
            outline: Color32::BLACK,
        }
    }
}

/// The data a flame graph shows; everything here is cached by the caller.
#[derive(Debug, Clone, Copy)]
pub struct FlameInput<'a> {
    /// The call tree (top-down or inverted).
    pub tree: &'a CallTree,
    /// Names of the frames.
    pub frames: &'a FrameTable,
    /// [`CallTree::totals`] of the shown sample type.
    pub totals: &'a [i64],
    /// Fill of every frame, indexed by frame id.
    pub colors: &'a [Color32],
    /// Search matches per frame id: when set, frames that do not match are dimmed.
    pub matches: Option<&'a [bool]>,
    /// The frame selected in the top table: its rectangles are outlined.
    pub selected: Option<FrameId>,
    /// Unit of the values, for tooltips.
    pub unit: &'a str,
}

/// Both sides of a comparison, per node of the tree shown (see [`profile_model::diff`]).
#[derive(Debug, Clone, Copy)]
pub struct DiffValues<'a> {
    /// Totals of every node in A.
    pub a: &'a [i64],
    /// Totals of every node in B.
    pub b: &'a [i64],
    /// A's total.
    pub total_a: i64,
    /// B's total.
    pub total_b: i64,
    /// Relative or absolute comparison.
    pub mode: DiffMode,
}

impl DiffValues<'_> {
    /// `node`'s totals in A and in B.
    pub fn of(&self, node: NodeId) -> (i64, i64) {
        let at = |v: &[i64]| v.get(node as usize).copied().unwrap_or(0);
        (at(self.a), at(self.b))
    }

    /// How `node` changed from A to B.
    pub fn change(&self, node: NodeId) -> Change {
        let (a, b) = self.of(node);
        diff::classify(a, b, self.total_a, self.total_b, self.mode)
    }

    /// `node`'s change as the diff table shows it, in the comparison's mode.
    pub fn delta(&self, node: NodeId) -> diff::Delta {
        let (a, b) = self.of(node);
        diff::delta(a, b, self.total_a, self.total_b, self.mode)
    }
}

/// Per-node drawing of a flame graph: colors per node instead of per frame, and the
/// values of a comparison (tooltips, outlines of new and vanished frames).
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeStyle<'a> {
    /// Fill of every node, indexed by node id: used instead of the frame colors when set.
    pub node_colors: Option<&'a [Color32]>,
    /// The comparison drawn, when this is a diff flame graph.
    pub diff: Option<DiffValues<'a>>,
    /// The node the keyboard moved to: outlined, whatever its frame.
    pub cursor: Option<NodeId>,
}

/// Where and how to draw.
#[derive(Debug, Clone, Copy)]
pub struct FlameParams {
    /// The node that fills the width.
    pub zoom: NodeId,
    /// Root at the bottom (flame graph) instead of the top (icicle).
    pub flipped: bool,
    /// The part of the canvas on screen; rows outside it are not laid out.
    pub visible: Rect,
    /// The part of the zoomed node across the width, as shares of it
    /// ([`crate::gui::view::flight`]; `(0.0, 1.0)`: all of it).
    pub window: (f64, f64),
    /// Sizes and colors.
    pub style: FlameStyle,
}

/// A label to paint over a rectangle (left-center anchored, monospace).
#[derive(Debug, Clone, PartialEq)]
pub struct TextJob {
    /// Left-center anchor.
    pub pos: Pos2,
    /// The (possibly elided) name.
    pub text: String,
    /// Color contrasting with the rectangle's fill.
    pub color: Color32,
}

/// What [`build_mesh`] produces.
#[derive(Debug, Default)]
pub struct FlameMesh {
    /// Every rectangle (and outline) of the visible rows.
    pub mesh: Mesh,
    /// Labels of the rectangles wide enough for one.
    pub texts: Vec<TextJob>,
    /// The laid-out rectangles, for hit testing.
    pub rects: Vec<FlameRect>,
    /// How many rectangles are outlined as the selected frame.
    pub highlighted: usize,
}

/// Height of the whole canvas for a tree of depth `max_depth`.
pub fn content_height(max_depth: u32, style: &FlameStyle) -> f32 {
    (max_depth as f32 + 1.0) * style.row_height
}

/// Top edge of `row` on screen.
pub fn row_top(rect: Rect, row: u32, params: &FlameParams) -> f32 {
    let h = params.style.row_height;
    if params.flipped {
        rect.bottom() - (row as f32 + 1.0) * h
    } else {
        rect.top() + row as f32 * h
    }
}

/// The rows that intersect `params.visible`.
pub fn visible_rows(rect: Rect, params: &FlameParams) -> std::ops::Range<u32> {
    let h = params.style.row_height;
    let visible = params.visible.intersect(rect);
    if !visible.is_positive() {
        return 0..0;
    }
    let (from, to) = if params.flipped {
        (
            rect.bottom() - visible.bottom(),
            rect.bottom() - visible.top(),
        )
    } else {
        (visible.top() - rect.top(), visible.bottom() - rect.top())
    };
    let first = (from / h).floor().max(0.0) as u32;
    let last = (to / h).ceil().max(0.0) as u32;
    first..last
}

/// The name drawn for a node ("all" for the root).
pub fn node_name<'a>(tree: &CallTree, frames: &'a FrameTable, node: NodeId) -> &'a str {
    if node == CallTree::ROOT {
        "all"
    } else {
        let f = tree.frame(node);
        frames
            .frames
            .get(f as usize)
            .map_or("?", |f| f.name.as_str())
    }
}

/// `name` shortened to at most `max_chars` characters, the same way in every view: first
/// without the package path (`github.com/a/b.F` → `b.F`), then with a C++ or Rust
/// argument list that ends it shown as `(…)` (`ns::Impl::serve(Buf&)` → `ns::Impl::serve(…)`),
/// then with the middle elided, keeping the package (`b.` or `crate::`, when it takes at
/// most half) and the end, where the function's own name is (`handler.…).ServeHTTP`).
/// `None` when not even 3 fit.
pub fn elide(name: &str, max_chars: usize) -> Option<String> {
    let count = name.chars().count();
    if count <= max_chars {
        return Some(name.to_string());
    }
    if max_chars < 3 {
        return None;
    }
    let short = match name.rfind('/') {
        Some(i) if i + 1 < name.len() => &name[i + 1..],
        _ => name,
    };
    if short.chars().count() <= max_chars {
        return Some(short.to_string());
    }
    let short = &*without_arguments(short);
    let chars: Vec<char> = short.chars().collect();
    if chars.len() <= max_chars {
        return Some(short.to_string());
    }
    let budget = max_chars - 1;
    let package = match (short.find('.'), short.find("::")) {
        (Some(dot), Some(colons)) if colons < dot => short[..colons + 2].chars().count(),
        (Some(dot), _) => short[..=dot].chars().count(),
        (None, Some(colons)) => short[..colons + 2].chars().count(),
        (None, None) => 0,
    };
    let head = if package > 0 && package <= budget / 2 {
        package
    } else {
        budget / 2
    };
    let tail = budget - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    Some(out)
}

/// `name` with the argument list that ends it (`f(int, char*)`, maybe then ` const`)
/// shown as `(…)`, as the functions that share a signature are told apart by their own
/// names; a name without one (Go's `(*T).M`, Node's `(anonymous)`, `f()`) as it is.
fn without_arguments(name: &str) -> Cow<'_, str> {
    let (body, qualifier) = match name.strip_suffix(" const") {
        Some(body) => (body, " const"),
        None => (name, ""),
    };
    let Some(inside) = body.strip_suffix(')') else {
        return Cow::Borrowed(name);
    };
    let mut depth = 0usize;
    let open = inside.char_indices().rev().find_map(|(i, c)| match c {
        ')' => {
            depth += 1;
            None
        }
        '(' if depth == 0 => Some(i),
        '(' => {
            depth -= 1;
            None
        }
        _ => None,
    });
    match open {
        Some(open) if open > 0 && open + 1 < inside.len() => {
            Cow::Owned(format!("{}(…){qualifier}", &body[..open]))
        }
        _ => Cow::Borrowed(name),
    }
}

fn dim(color: Color32, background: Color32, amount: f32) -> Color32 {
    color.lerp_to_gamma(background, amount)
}

fn add_outline(mesh: &mut Mesh, r: Rect, width: f32, color: Color32) {
    let w = width.min(r.width() / 2.0).min(r.height() / 2.0);
    mesh.add_colored_rect(Rect::from_min_max(r.min, pos2(r.max.x, r.min.y + w)), color);
    mesh.add_colored_rect(Rect::from_min_max(pos2(r.min.x, r.max.y - w), r.max), color);
    mesh.add_colored_rect(
        Rect::from_min_max(pos2(r.min.x, r.min.y + w), pos2(r.min.x + w, r.max.y - w)),
        color,
    );
    mesh.add_colored_rect(
        Rect::from_min_max(pos2(r.max.x - w, r.min.y + w), pos2(r.max.x, r.max.y - w)),
        color,
    );
}

/// The screen rectangle of a laid-out rectangle (gaps excluded).
pub fn screen_rect(fr: &FlameRect, rect: Rect, params: &FlameParams) -> Rect {
    let style = &params.style;
    let top = row_top(rect, fr.row, params);
    let x0 = rect.left() + fr.x0;
    let mut x1 = rect.left() + fr.x1;
    if x1 - x0 >= 3.0 {
        x1 -= style.gap;
    }
    Rect::from_min_max(
        pos2(x0, top),
        pos2(x1.max(x0 + 0.5), top + style.row_height - style.gap),
    )
}

/// Lays out the visible rows of the flame graph and tessellates them: one mesh for all
/// rectangles, and a text job for every rectangle wide enough for a (possibly elided)
/// label. `rect` is the whole canvas (all rows); only rows intersecting
/// `params.visible` are laid out.
pub fn build_mesh(input: &FlameInput<'_>, params: &FlameParams, rect: Rect) -> FlameMesh {
    build_mesh_styled(input, &NodeStyle::default(), params, rect)
}

/// [`build_mesh`] with per-node colors and, for a comparison, a dark outline around
/// new and vanished frames.
pub fn build_mesh_styled(
    input: &FlameInput<'_>,
    nodes: &NodeStyle<'_>,
    params: &FlameParams,
    rect: Rect,
) -> FlameMesh {
    let style = &params.style;
    let rows = visible_rows(rect, params);
    let rects = layout(
        input.tree,
        input.totals,
        &LayoutParams {
            window: params.window.0..params.window.1,
            ..LayoutParams::whole(params.zoom, rect.width(), rows)
        },
    );
    let mut mesh = Mesh::default();
    mesh.reserve_vertices(rects.len() * 4);
    mesh.reserve_triangles(rects.len() * 2);
    let mut texts = Vec::new();
    let mut outlines = Vec::new();
    let mut diff_outlines = Vec::new();
    let mut cursor = None;
    let searching = input.matches.is_some();
    let zoom_row = input.tree.depth(params.zoom);
    for fr in &rects {
        let r = screen_rect(fr, rect, params);
        let (fill, name) = match fr.kind {
            RectKind::Node(CallTree::ROOT) => (style.root, Some("all")),
            RectKind::Node(node) => {
                let frame = input.tree.frame(node);
                let mut fill = match nodes.node_colors {
                    Some(colors) => colors.get(node as usize),
                    None => input.colors.get(frame as usize),
                }
                .copied()
                .unwrap_or(style.sliver);
                if let Some(d) = &nodes.diff
                    && matches!(d.change(node), Change::New | Change::Vanished)
                {
                    diff_outlines.push(r);
                }
                let matched = input
                    .matches
                    .map(|m| m.get(frame as usize).copied().unwrap_or(false));
                let selected = input.selected == Some(frame);
                if selected {
                    outlines.push(r);
                }
                if nodes.cursor == Some(node) {
                    cursor = Some(r);
                }
                if matched == Some(false) {
                    fill = dim(fill, style.background, 0.72);
                } else if fr.row < zoom_row {
                    // Ancestors of the zoomed frame: context, not content.
                    fill = dim(fill, style.background, 0.35);
                } else if !searching && input.selected.is_some() && !selected {
                    fill = dim(fill, style.background, 0.45);
                }
                (fill, Some(node_name(input.tree, input.frames, node)))
            }
            RectKind::Hidden { .. } => {
                let fill = if searching || input.selected.is_some() {
                    dim(style.sliver, style.background, 0.5)
                } else {
                    style.sliver
                };
                (fill, None)
            }
        };
        mesh.add_colored_rect(r, fill);
        if let Some(name) = name {
            let room = r.width() - 2.0 * style.text_padding;
            if room >= style.char_width * 3.0 {
                let max_chars = (room / style.char_width).floor() as usize;
                if let Some(text) = elide(name, max_chars) {
                    texts.push(TextJob {
                        pos: pos2(r.left() + style.text_padding, r.center().y),
                        text,
                        color: crate::gui::view::colors::text_on(fill),
                    });
                }
            }
        }
    }
    let highlighted = outlines.len();
    for r in diff_outlines {
        add_outline(&mut mesh, r, 1.5, Color32::from_gray(30));
    }
    for r in outlines {
        add_outline(&mut mesh, r, 1.5, style.outline);
    }
    if let Some(r) = cursor {
        add_outline(&mut mesh, r.expand(1.0), 2.5, style.outline);
    }
    FlameMesh {
        mesh,
        texts,
        rects,
        highlighted,
    }
}

/// The laid-out rectangle under `pos`, if any.
pub fn hit_test(
    rects: &[FlameRect],
    params: &FlameParams,
    rect: Rect,
    pos: Pos2,
) -> Option<FlameRect> {
    if !rect.contains(pos) {
        return None;
    }
    let h = params.style.row_height;
    let from = if params.flipped {
        rect.bottom() - pos.y
    } else {
        pos.y - rect.top()
    };
    let row = (from / h).floor();
    if row < 0.0 {
        return None;
    }
    let row = row as u32;
    let x = pos.x - rect.left();
    // Slivers are at least 1 px wide and may overlap a neighbour: prefer nodes.
    let mut found = None;
    for fr in rects.iter().filter(|r| r.row == row) {
        if fr.x0 <= x && x < fr.x1.max(fr.x0 + 1.0) {
            match fr.kind {
                RectKind::Node(_) => return Some(*fr),
                RectKind::Hidden { .. } => found = Some(*fr),
            }
        }
    }
    found
}

/// What a comparison class is called in tooltips, the status bar and tests.
pub fn change_name(change: Change) -> &'static str {
    match change {
        Change::Same => "same",
        Change::More(_) => "more in B",
        Change::Less(_) => "less in B",
        Change::New => "new in B",
        Change::Vanished => "only in A",
    }
}

/// `v` with its sign: "+0.38 s", "-1.20 s".
pub fn signed(v: i64, unit: &str) -> String {
    let sign = if v < 0 { "-" } else { "+" };
    format!("{sign}{}", units::readable(v.saturating_abs(), unit))
}

/// The lines of the tooltip of a rectangle of a diff flame graph: name, A, B, change
/// (as the diff table shows it in the comparison's mode) and class.
pub fn describe_diff(input: &FlameInput<'_>, d: &DiffValues<'_>, fr: &FlameRect) -> Vec<String> {
    let RectKind::Node(node) = fr.kind else {
        return describe(input, fr);
    };
    let (a, b) = d.of(node);
    let delta = d.delta(node);
    let change = match d.mode {
        DiffMode::Relative => format!(
            "change: {} ({:+.2}% of B's total), A scaled to B's total",
            signed(delta.value, input.unit),
            delta.percent
        ),
        DiffMode::Absolute => format!(
            "change: {} ({:+.2}% of A's total)",
            signed(delta.value, input.unit),
            delta.percent
        ),
    };
    vec![
        node_name(input.tree, input.frames, node).to_string(),
        format!(
            "A: {} ({})",
            units::readable(a, input.unit),
            units::percent(a, d.total_a)
        ),
        format!(
            "B: {} ({})",
            units::readable(b, input.unit),
            units::percent(b, d.total_b)
        ),
        change,
        format!("class: {}", change_name(d.change(node))),
    ]
}

/// The lines of the tooltip of a rectangle.
pub fn describe(input: &FlameInput<'_>, fr: &FlameRect) -> Vec<String> {
    let total = input.totals.first().copied().unwrap_or(0);
    let value = |v: i64| {
        format!(
            "{} ({})",
            units::readable(v, input.unit),
            units::percent(v, total)
        )
    };
    let mut lines = Vec::new();
    match fr.kind {
        RectKind::Node(node) => {
            lines.push(node_name(input.tree, input.frames, node).to_string());
            if node != CallTree::ROOT
                && let Some(frame) = input.frames.frames.get(input.tree.frame(node) as usize)
            {
                if !frame.full_name.is_empty() {
                    lines.push(frame.full_name.clone());
                }
                if !frame.file.is_empty() {
                    lines.push(if frame.line > 0 {
                        format!("{}:{}", frame.file, frame.line)
                    } else {
                        frame.file.clone()
                    });
                }
                if !frame.binary.is_empty() {
                    lines.push(format!("binary: {}", frame.binary));
                }
            }
            // Bottom-up, a root's whole total: the leaf function's own, as the top table's.
            let self_value = input.tree.self_value(node, input.totals);
            lines.push(format!("total: {}", value(fr.value)));
            lines.push(format!("self: {}", value(self_value)));
            if fr.hidden > 0 {
                let n = input
                    .tree
                    .children(node)
                    .filter(|c| {
                        // Narrower than one pixel at the scale of this rectangle.
                        let v = input.totals.get(*c as usize).copied().unwrap_or(0);
                        let w = f64::from(fr.x1 - fr.x0) * v as f64 / fr.value.max(1) as f64;
                        v > 0 && w < 1.0
                    })
                    .count();
                lines.push(format!("{n} below one pixel: {}", value(fr.hidden)));
            }
        }
        RectKind::Hidden { count, .. } => {
            lines.push(format!(
                "{count} frames narrower than one pixel: {}",
                value(fr.value)
            ));
        }
    }
    lines
}

/// What happened on the flame graph this frame.
#[derive(Debug)]
pub struct FlameOutput {
    /// The rectangle under the pointer.
    pub hovered: Option<FlameRect>,
    /// The rectangle clicked.
    pub clicked: Option<FlameRect>,
    /// The rectangle clicked with the secondary button (its context menu opens).
    pub secondary: Option<FlameRect>,
    /// The canvas's response (for its context menu).
    pub response: egui::Response,
    /// How many rectangles are outlined as the selected frame.
    pub highlighted: usize,
    /// Where the canvas is (all rows, not only the visible ones).
    pub canvas: Rect,
    /// How it was drawn.
    pub params: FlameParams,
    /// The rectangles laid out this frame.
    pub rects: Vec<FlameRect>,
}

/// Shows the flame graph in the remaining space of `ui`, scrolling vertically when the
/// tree is deeper than the viewport.
pub fn show(
    ui: &mut Ui,
    input: &FlameInput<'_>,
    zoom: NodeId,
    flipped: bool,
    max_depth: u32,
) -> FlameOutput {
    show_styled(ui, input, &NodeStyle::default(), zoom, flipped, max_depth)
}

/// [`show`] with per-node colors and comparison tooltips.
pub fn show_styled(
    ui: &mut Ui,
    input: &FlameInput<'_>,
    nodes: &NodeStyle<'_>,
    zoom: NodeId,
    flipped: bool,
    max_depth: u32,
) -> FlameOutput {
    show_labeled(ui, input, nodes, VIEW_GRAPH, zoom, flipped, max_depth)
}

/// [`show_styled`] with the accessible `label` of the canvas ("flame graph A").
pub fn show_labeled(
    ui: &mut Ui,
    input: &FlameInput<'_>,
    nodes: &NodeStyle<'_>,
    label: &str,
    zoom: NodeId,
    flipped: bool,
    max_depth: u32,
) -> FlameOutput {
    let style = FlameStyle::for_ui(ui);
    let window = flight::window(ui, label, zoom);
    let strip = flight::strip_height(ui.available_height(), style.row_height);
    if strip > 0.0 {
        flight::strip(ui, (label, strip), input, nodes, zoom, window, flipped);
    }
    // The wheel zooms the graph (flight.rs): rows scroll with the bar or a drag.
    let sources = egui::scroll_area::ScrollSource {
        scroll_bar: true,
        drag: egui::scroll_area::DragScroll::Never,
        mouse_wheel: false,
    };
    ScrollArea::vertical()
        .id_salt(("flame", flipped))
        .auto_shrink([false, false])
        .stick_to_bottom(flipped)
        .scroll_source(sources)
        .show(ui, |ui| {
            let size = vec2(
                ui.available_width(),
                content_height(max_depth, &style).max(ui.available_height()),
            );
            let (response, painter) = ui.allocate_painter(size, Sense::click_and_drag());
            let rect = response.rect;
            let params = FlameParams {
                zoom,
                flipped,
                visible: painter.clip_rect(),
                window: flight::fly(ui, &response, label, zoom),
                style,
            };
            flight::reveal(ui, label, nodes.cursor, input.tree, (rect, &params));
            let mut built = build_mesh_styled(input, nodes, &params, rect);
            let hovered = response
                .hover_pos()
                .and_then(|p| hit_test(&built.rects, &params, rect, p));
            let hit_if = |yes: bool| {
                yes.then(|| response.interact_pointer_pos())
                    .flatten()
                    .and_then(|p| hit_test(&built.rects, &params, rect, p))
            };
            let clicked = hit_if(response.clicked());
            let secondary = hit_if(response.secondary_clicked());
            if let Some(h) = &hovered {
                let r = screen_rect(h, rect, &params);
                add_outline(&mut built.mesh, r, 1.0, style.outline.gamma_multiply(0.7));
            }
            painter.add(Shape::mesh(built.mesh));
            let font = FontId::monospace(FONT_SIZE);
            for t in built.texts.drain(..) {
                painter.text(t.pos, Align2::LEFT_CENTER, t.text, font.clone(), t.color);
            }
            response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, label));
            if let Some(h) = hovered {
                response.clone().on_hover_ui_at_pointer(|ui| {
                    ui.set_max_width(520.0);
                    let lines = match &nodes.diff {
                        Some(d) => describe_diff(input, d, &h),
                        None => describe(input, &h),
                    };
                    for (i, line) in lines.into_iter().enumerate() {
                        if i == 0 {
                            ui.strong(line);
                        } else {
                            ui.label(line);
                        }
                    }
                });
            }
            FlameOutput {
                hovered,
                clicked,
                secondary,
                response,
                highlighted: built.highlighted,
                canvas: rect,
                params,
                rects: built.rects,
            }
        })
        .inner
}
