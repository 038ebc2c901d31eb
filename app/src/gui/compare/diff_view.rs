//! The central panel of compare mode: A's and B's flame graphs side by side over the
//! diff flame graph, with the legend, the mode options and the hover texts.

use egui::{
    Align, Context, CursorIcon, Id, Key, Label, Layout, Rect, RichText, Sense, Ui, UiBuilder, pos2,
    vec2,
};
use profile_model::diff::DiffMode;
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{CallTree, NodeId, units};

use crate::gui::compare::diff_job::DiffLoaded;
use crate::gui::compare::{CompareState, Look};
use crate::gui::compare::{DIFF_GRAPH, GraphZoom, Side, legend_text, node_colors, side_name};
use crate::gui::time::timeline::Timeline;
use crate::gui::view::colors;
use crate::gui::view::filters::SearchState;
use crate::gui::view::flame::{self, FlameInput, NodeStyle};
use crate::gui::view::frame_menu::FrameAction;
use crate::gui::view::keys::{Step, step};

/// "hovered: crypto/sha256.block — more in B (+0.38 s, +1.20%)": the change as the
/// diff table shows it in `mode`.
pub fn diff_hover_text(res: &DiffLoaded, mode: DiffMode, h: &FlameRect) -> String {
    match h.kind {
        RectKind::Node(n) => {
            let values = res.values(mode);
            let delta = values.delta(n);
            format!(
                "hovered: {} — {} ({}, {:+.2}%)",
                flame::node_name(&res.tree, &res.frames, n),
                flame::change_name(values.change(n)),
                flame::signed(delta.value, &res.unit),
                delta.percent
            )
        }
        RectKind::Hidden { count, .. } => format!("hovered: {count} narrow frames"),
    }
}

impl CompareState {
    /// The text of the frame hovered in the diff flame graph, or in A's or B's
    /// ("hovered: main.fib — 1.23 s (30.1%) in A"); also in the status bar.
    pub fn hover_text(&self) -> Option<String> {
        let res = self.result.as_ref()?;
        if let Some(h) = self.hovered.as_ref() {
            return Some(diff_hover_text(res, self.mode, h));
        }
        let (side, h) = self.side_hovered.as_ref()?;
        let line = crate::gui::shell::status_bar::hovered_line(
            &res.tree,
            &res.frames,
            res.total(*side),
            &res.unit,
            h,
        );
        Some(format!("{line} in {}", side.letter()))
    }

    /// `A` or `A {endpoint="/api/sort"}`: a side's name and the matchers of its
    /// selection (of its selector before it has one).
    pub fn side_label(&self, side: Side) -> String {
        let matchers = match (self.picked(side), &self.selectors) {
            (Some(p), _) => p.matchers.as_slice(),
            (None, Some(sels)) => sels[side as usize].as_slice(),
            (None, None) => &[],
        };
        side_name(side, matchers)
    }

    /// `A {endpoint="/api/sort"}: 12:39:12, 1 profile, 2.26 s`: the caption of A's or
    /// B's flame graph.
    pub fn side_caption(&self, side: Side, tl: Option<&Timeline>) -> String {
        match self.side_parts(side, tl) {
            Ok((name, when, what)) => format!("{name}: {when}, {what}"),
            Err(text) => text,
        }
    }

    /// A side's name, when it was selected, and "1 profile, 2.26 s" (with the
    /// comparison's total of the side once there is one); or the whole text while the
    /// side is being merged or not selected.
    fn side_parts(
        &self,
        side: Side,
        tl: Option<&Timeline>,
    ) -> Result<(String, String, String), String> {
        let name = self.side_label(side);
        if let Some(text) = self.side_merging(side, &name, tl) {
            return Err(text);
        }
        let Some(p) = self.picked(side) else {
            let carried = tl.and_then(|tl| {
                let time = tl.selection.filter(|_| self.waits_to_carry(side))?;
                Some(crate::gui::time::axis::describe_time(time, tl.step_nanos))
            });
            return Err(match carried {
                // Merged: its view is being made, then it is A.
                Some(when) => format!("{name}: {when} (making its view)"),
                None => format!("{name}: not selected"),
            });
        };
        let when = tl.map_or_else(String::new, |tl| {
            crate::gui::time::axis::describe_time(p.time, tl.step_nanos)
        });
        let total = self.result.as_ref().map_or_else(String::new, |r| {
            format!(", {}", units::readable(r.total(side), &r.unit))
        });
        Ok((
            name,
            when,
            format!(
                "{}{total}",
                crate::gui::time::timeline::profiles_text(p.count)
            ),
        ))
    }

    /// Search matches of the frames of A, B and the diff, for the search box's text,
    /// and the matched total of each side; the diff table is filtered by them.
    pub fn refresh_search(&mut self, res: &DiffLoaded, search: &mut SearchState) {
        let key = (search.text.clone(), search.regex, self.result_generation);
        if self.matches_key.as_ref() == Some(&key) {
            return;
        }
        self.matches = match SearchState::pattern(&search.text, search.regex) {
            Ok(Some(re)) => {
                search.error = None;
                Some(CallTree::frame_matches(&res.frames, &re))
            }
            Ok(None) => {
                search.error = None;
                None
            }
            Err(e) => {
                search.error = Some(e);
                None
            }
        };
        self.matched = [Side::A, Side::B].map(|side| {
            self.matches
                .as_ref()
                .map_or(0, |m| res.tree.matched_total(res.totals(side), m))
        });
        self.matches_key = Some(key);
        // The diff table lists the functions that match.
        self.order_key = None;
    }

    /// A's or B's flame graph with its caption, Reset and Back, in `ui`.
    fn side_graph(
        &mut self,
        ui: &mut Ui,
        res: &DiffLoaded,
        side: Side,
        (tl, look): (Option<&Timeline>, Look),
    ) -> Option<(String, FrameAction)> {
        let i = side as usize;
        let caption = self.side_caption(side, tl);
        let z = &mut self.zooms[i];
        if z.zoom as usize >= res.tree.len() {
            z.reset();
        }
        ui.horizontal(|ui| {
            // The caption gives way to Reset and Back where the side is narrow (whole
            // on hover): a caption wider than the side would widen it over B's.
            let zoomed = self.zooms[i].zoom != CallTree::ROOT;
            let reserved = ZOOM_BUTTONS_WIDTH + if zoomed { ZOOM_NAME_WIDTH } else { 0.0 };
            let room = (ui.available_width() - reserved).max(0.0);
            ui.scope(|ui| {
                ui.set_max_width(room);
                ui.add(Label::new(RichText::new(caption).strong()).truncate());
            });
            let z = &mut self.zooms[i];
            zoom_buttons(ui, z, &res.tree, true);
            if z.zoom != CallTree::ROOT {
                let name = flame::node_name(&res.tree, &res.frames, z.zoom);
                ui.add(egui::Label::new(format!("› {name}")).truncate());
            }
        });
        if res.total(side) <= 0 {
            ui.centered_and_justified(|ui| ui.label("no samples match the filters"));
            return None;
        }
        let input = FlameInput {
            tree: &res.tree,
            frames: &res.frames,
            totals: res.totals(side),
            colors: &self.side_colors,
            matches: self.matches.as_deref(),
            selected: None,
            unit: &res.unit,
        };
        let label = match side {
            Side::A => "flame graph A",
            Side::B => "flame graph B",
        };
        let style = NodeStyle {
            cursor: self.zooms[i].cursor,
            ..NodeStyle::default()
        };
        let out = flame::show_labeled(
            ui,
            &input,
            &style,
            label,
            self.zooms[i].zoom,
            look.flipped,
            res.tree.max_depth(),
        );
        if let Some(h) = out.hovered {
            self.side_hovered = Some((side, h));
        }
        if out.response.contains_pointer() {
            self.key_graph = Some(i);
        }
        if let Some(clicked) = out.clicked
            && let RectKind::Node(node) = clicked.kind
        {
            self.zooms[i].zoom_to(node);
        }
        self.menu_frame_at(out.secondary, res);
        let asked = self.frame_context_menu(&out.response, res);
        self.side_last[i] = Some((out.canvas, out.params, out.rects));
        asked
    }

    /// `A: 12:01:00–12:05:00 (merging 2/25 profiles)` while side `side` (named
    /// `name`) is being merged.
    fn side_merging(&self, side: Side, name: &str, tl: Option<&Timeline>) -> Option<String> {
        let tl = tl?;
        // The selection that becomes A once merged is A's merge until then.
        let q = tl
            .query_of(Some(side))
            .or_else(|| tl.query_of(None).filter(|_| self.waits_to_carry(side)))?;
        Some(format!(
            "{name}: {} ({})",
            crate::gui::time::axis::describe_time(q.time, tl.step_nanos),
            q.progress_text()
        ))
    }

    /// "A: 12:01:00 (1 profile, 3 s) · B: …", for the line above the diff graph.
    pub fn sides_text(&self, tl: Option<&Timeline>) -> String {
        let side = |side| match self.side_parts(side, tl) {
            Ok((name, when, what)) => format!("{name}: {when} ({what})"),
            Err(text) => text,
        };
        format!("{} · {}", side(Side::A), side(Side::B))
    }

    /// The central panel in compare mode: options, legend and the diff flame graph.
    pub fn central(
        &mut self,
        ui: &mut Ui,
        tl: Option<&Timeline>,
        look: Look,
    ) -> Option<(String, FrameAction)> {
        // Wrapped: a narrow window puts the rest of the row on a line of its own.
        ui.horizontal_wrapped(|ui| {
            ui.radio_value(&mut self.mode, DiffMode::Relative, "relative")
                .on_hover_text("each side as a share of its own total");
            ui.radio_value(&mut self.mode, DiffMode::Absolute, "absolute")
                .on_hover_text("raw values: a longer selection counts more");
            ui.separator();
            ui.checkbox(&mut self.widths_from_a, "widths from A")
                .on_hover_text("size frames by A (frames only in A become visible)");
            ui.separator();
            let mut collapsed = sides_collapsed(ui.ctx());
            if ui
                .checkbox(&mut collapsed, "collapse A and B")
                .on_hover_text("A's and B's graphs as a strip: the diff takes the height")
                .changed()
            {
                ui.ctx()
                    .data_mut(|d| d.insert_persisted(Id::unique(SIDES_COLLAPSED), collapsed));
            }
            ui.separator();
            ui.add(Label::new(self.sides_text(tl)).truncate());
        });
        let Some(res) = self.result.clone() else {
            ui.label(legend_text(self.mode));
            ui.centered_and_justified(|ui| {
                if let Some(job) = &self.job {
                    ui.label(job.progress_text());
                } else if let Some(e) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                } else if self.carry_waiting {
                    ui.label(CARRY_HINT);
                } else {
                    ui.label(pick_hint(self.target, self.picked(self.target).is_some()));
                }
            });
            return None;
        };
        let dark = ui.visuals().dark_mode;
        if !ui.ctx().egui_wants_keyboard_input() {
            let (escape, back) =
                ui.input(|i| (i.key_pressed(Key::Escape), i.key_pressed(Key::Backspace)));
            if escape {
                for z in &mut self.zooms {
                    z.reset();
                }
                self.close_sandwich();
            }
            if back {
                self.zooms[DIFF_GRAPH].back(&res.tree);
            }
        }
        let side_key = (self.result_generation, dark, look.color_mode);
        if self.side_colors_key != Some(side_key) {
            self.side_colors = colors::frame_colors(&res.frames.frames, look.color_mode, dark);
            self.side_colors_key = Some(side_key);
        }
        // A and B side by side on the top 40% (a strip of their captions when
        // collapsed), the diff below.
        self.side_hovered = None;
        let full = ui.available_rect_before_wrap();
        let gap = 10.0;
        let collapsed = sides_collapsed(ui.ctx());
        let share = sides_share(ui.ctx());
        let top_height = if collapsed {
            ui.spacing().interact_size.y
        } else {
            (full.height() * share).round().max(80.0)
        };
        let half = ((full.width() - gap) / 2.0).max(0.0);
        let mut asked = None;
        for (i, side) in [Side::A, Side::B].into_iter().enumerate() {
            let r = Rect::from_min_size(
                pos2(full.left() + i as f32 * (half + gap), full.top()),
                vec2(half, top_height),
            );
            let mut child = ui.new_child(
                UiBuilder::new()
                    .max_rect(r)
                    .id_salt(("compare side", i))
                    .layout(Layout::top_down(Align::Min)),
            );
            if collapsed {
                child.add(
                    Label::new(RichText::new(self.side_caption(side, tl)).strong()).truncate(),
                );
            } else {
                asked = asked.or(self.side_graph(&mut child, &res, side, (tl, look)));
            }
        }
        let x = full.left() + half + gap / 2.0;
        ui.painter().vline(
            x,
            full.top()..=full.top() + top_height,
            ui.visuals().widgets.noninteractive.bg_stroke,
        );
        ui.advance_cursor_after_rect(Rect::from_min_size(
            full.min,
            vec2(full.width(), top_height),
        ));
        if collapsed {
            ui.separator();
        } else {
            sides_divider(ui, full.height(), share);
        }
        let below = if self.sandwich.state.is_open() {
            self.diff_sandwich(ui, &res)
        } else {
            self.diff_graph(ui, &res, look)
        };
        asked.or(below)
    }

    /// The diff flame graph under its legend, Reset and Back.
    fn diff_graph(
        &mut self,
        ui: &mut Ui,
        res: &DiffLoaded,
        look: Look,
    ) -> Option<(String, FrameAction)> {
        let dark = ui.visuals().dark_mode;
        let mode = self.mode;
        let values = res.values(mode);
        let colors_key = (self.result_generation, mode, dark);
        if self.colors_key != Some(colors_key) {
            self.colors = node_colors(&values, res.tree.len(), dark);
            self.colors_key = Some(colors_key);
        }
        let z = &mut self.zooms[DIFF_GRAPH];
        if z.zoom as usize >= res.tree.len() {
            z.reset();
        }
        ui.horizontal(|ui| {
            ui.label(legend_text(mode));
            if let Some(warning) = res.noise_warning() {
                ui.separator();
                ui.add(
                    Label::new(RichText::new(warning).color(ui.visuals().warn_fg_color)).truncate(),
                );
            }
        });
        ui.horizontal(|ui| {
            ui.strong("diff (B − A)");
            let z = &mut self.zooms[DIFF_GRAPH];
            zoom_buttons(ui, z, &res.tree, false);
            if z.zoom != CallTree::ROOT {
                ui.label(format!(
                    "zoom: {}",
                    flame::node_name(&res.tree, &res.frames, z.zoom)
                ));
            }
        });
        let totals = if self.widths_from_a {
            &res.totals_a
        } else {
            &res.totals_b
        };
        if totals.first().copied().unwrap_or(0) <= 0 {
            ui.centered_and_justified(|ui| {
                ui.label("no samples on this side: try the other width")
            });
            return None;
        }
        let input = FlameInput {
            tree: &res.tree,
            frames: &res.frames,
            totals,
            colors: &[],
            matches: self.matches.as_deref(),
            selected: self.selected,
            unit: &res.unit,
        };
        let nodes = NodeStyle {
            node_colors: Some(&self.colors),
            diff: Some(values),
            cursor: self.zooms[DIFF_GRAPH].cursor,
        };
        let out = flame::show_labeled(
            ui,
            &input,
            &nodes,
            "diff flame graph",
            self.zooms[DIFF_GRAPH].zoom,
            look.flipped,
            res.tree.max_depth(),
        );
        self.hovered = out.hovered;
        if out.response.contains_pointer() {
            self.key_graph = Some(DIFF_GRAPH);
        }
        if let Some(clicked) = out.clicked
            && let RectKind::Node(node) = clicked.kind
        {
            self.zooms[DIFF_GRAPH].zoom_to(node);
        }
        self.menu_frame_at(out.secondary, res);
        let asked = self.frame_context_menu(&out.response, res);
        self.last = Some((out.canvas, out.params, out.rects));
        asked
    }
}

/// The id under which egui keeps (and eframe saves) whether A and B are collapsed.
const SIDES_COLLAPSED: &str = "flint compare sides collapsed";

/// Whether A's and B's graphs are collapsed to a strip, as last chosen.
fn sides_collapsed(ctx: &Context) -> bool {
    ctx.data_mut(|d| d.get_persisted::<bool>(Id::unique(SIDES_COLLAPSED)))
        .unwrap_or(false)
}

/// The id under which egui keeps (and eframe saves) the share of the height A and B take.
const SIDES_SHARE: &str = "flint compare sides share";

/// The share of the central panel's height A and B take, as last dragged.
fn sides_share(ctx: &Context) -> f32 {
    ctx.data_mut(|d| d.get_persisted::<f32>(Id::unique(SIDES_SHARE)))
        .unwrap_or(0.4)
}

/// The line under A and B, dragged to share the height (of `height`) between them and
/// the diff; the share is kept between 15% and 80%.
fn sides_divider(ui: &mut Ui, height: f32, share: f32) {
    let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width(), 6.0), Sense::drag());
    response
        .widget_info(|| egui::WidgetInfo::labeled(egui::Role::Splitter, true, "height of A and B"));
    let stroke = if response.hovered() || response.dragged() {
        ui.visuals().widgets.hovered.bg_stroke
    } else {
        ui.visuals().widgets.noninteractive.bg_stroke
    };
    ui.painter().hline(rect.x_range(), rect.center().y, stroke);
    let response = response
        .on_hover_cursor(CursorIcon::ResizeVertical)
        .on_hover_text("drag to give A and B more or less height");
    let moved = response.drag_delta().y;
    if moved != 0.0 && height > 0.0 {
        let share = (share + moved / height).clamp(0.15, 0.8);
        ui.ctx()
            .data_mut(|d| d.insert_persisted(Id::unique(SIDES_SHARE), share));
    }
}

/// Room kept for Reset and Back beside a side's caption (points).
const ZOOM_BUTTONS_WIDTH: f32 = 110.0;

/// Room kept for the name of the frame a side is zoomed into (points).
const ZOOM_NAME_WIDTH: f32 = 140.0;

/// Reset and Back buttons of one graph's zoom (small ones for the A and B graphs).
fn zoom_buttons(ui: &mut egui::Ui, z: &mut GraphZoom, tree: &CallTree, small: bool) {
    let button = |text: &str| {
        let b = egui::Button::new(text);
        if small { b.small() } else { b }
    };
    if ui
        .add_enabled(z.zoom != CallTree::ROOT, button("Reset"))
        .on_hover_text("show everything (Esc)")
        .clicked()
    {
        z.reset();
    }
    if ui
        .add_enabled(
            !z.history.is_empty() || z.zoom != CallTree::ROOT,
            button("Back"),
        )
        // Backspace goes back in the diff graph only.
        .on_hover_text(if small {
            "previous zoom"
        } else {
            "previous zoom (Backspace)"
        })
        .clicked()
    {
        z.back(tree);
    }
}

/// What compare mode says while the selection shown when it was switched on is still
/// being merged (its progress is on the line above).
pub const CARRY_HINT: &str = "the selection being merged becomes A once it is shown; \
     or click a point or drag a range on the plot to select another A (before)";

/// What to do next in compare mode before there is a comparison: the side the next
/// pick sets, and whether it replaces a selection that side has (A carried over from
/// the view shown when compare mode was switched on).
pub fn pick_hint(target: Side, picked: bool) -> String {
    let side = match target {
        Side::A => "A (before)",
        Side::B => "B (after)",
    };
    if !picked {
        return format!("click a point or drag a range on the plot to select {side}");
    }
    let other = match target {
        Side::A => "B",
        Side::B => "A",
    };
    format!(
        "click a point or drag a range on the plot to select {side} again, \
         or choose \"select {other}\" above to pick the other side"
    )
}

impl CompareState {
    /// An arrow: moves the cursor of the graph last under the pointer (A's, B's or the
    /// diff's; in a sandwich, its callers' or callees') one `step`, as in the view's
    /// flame graph (`flipped`: root at the bottom).
    pub fn step_cursor(&mut self, to: Step, flipped: bool) {
        let Some(res) = self.result.clone() else {
            return;
        };
        if self.sandwich.state.is_open() {
            let width_column = usize::from(!self.widths_from_a);
            self.sandwich.state.step_cursor(to, width_column);
            return;
        }
        let g = self.key_graph.unwrap_or(DIFF_GRAPH);
        let totals = match g {
            0 => res.totals(Side::A),
            1 => res.totals(Side::B),
            _ if self.widths_from_a => &res.totals_a,
            _ => &res.totals_b,
        };
        let z = &mut self.zooms[g];
        let valid = |n: &NodeId| (*n as usize) < res.tree.len();
        z.cursor = Some(match z.cursor.filter(valid) {
            None => z.zoom,
            Some(from) => {
                let to = if flipped { to.flipped() } else { to };
                step(&res.tree, totals, from, to)
            }
        });
    }

    /// Enter: zooms that graph to its cursor; in a sandwich, shows the sandwich of the
    /// cursor's function.
    pub fn zoom_to_cursor(&mut self) {
        if self.sandwich.state.is_open() {
            if let Some(frame) = self.sandwich.state.cursor_frame() {
                self.open_sandwich(frame);
            }
            return;
        }
        let z = &mut self.zooms[self.key_graph.unwrap_or(DIFF_GRAPH)];
        if let Some(node) = z.cursor {
            z.zoom_to(node);
        }
    }
}
