//! The top table side panel and the central panel: the flame graph under its
//! breadcrumb (zoom path, Reset and Back).

use std::time::Instant;

use egui::{Align, Layout, Ui};
use profile_model::layout::RectKind;
use profile_model::{CallTree, units};

use crate::gui::view::ProfileView;
use crate::gui::view::flame::{self, FlameInput};
use crate::gui::view::flight;
use crate::gui::view::loader::Loaded;
use crate::gui::view::top_table::TopClick;

impl ProfileView {
    /// The top table's side panel, its clicks selecting a frame.
    pub fn top_panel(&mut self, ui: &mut Ui) {
        let Some(cur) = self.current.clone() else {
            return;
        };
        ui.horizontal(|ui| {
            ui.strong("Top");
            ui.weak(format!(
                "{} of {} functions",
                units::thousands(self.top_table.order.len() as u64),
                units::thousands(cur.top.rows.len() as u64)
            ));
        });
        let clicked =
            self.top_table
                .show(ui, &cur.top, &cur.frames, cur.unit(), self.flame.selected);
        match clicked {
            // A click on the row selected closes its sandwich.
            Some(TopClick::Row(frame)) if self.flame.selected == Some(frame) => {
                self.flame.selected = None;
                self.close_sandwich();
            }
            Some(TopClick::Row(frame)) => self.open_sandwich(frame),
            Some(TopClick::Menu(frame, action)) => self.frame_action(frame, action),
            None => {}
        }
    }

    /// The central panel: the flame graph under its breadcrumb; without a view (or
    /// while it is `hidden`: a folder or a server is being opened), the job's
    /// progress, else `hint` (time mode's), else how to open a profile.
    pub fn central(&mut self, ui: &mut Ui, hint: Option<&str>, hidden: bool) {
        let Some(cur) = self.current.clone().filter(|_| !hidden) else {
            ui.centered_and_justified(|ui| {
                if let Some(job) = &self.job {
                    ui.label(job.progress_text());
                } else if let Some(hint) = hint {
                    ui.label(hint);
                } else {
                    ui.label("Open a profile (Ctrl+O) or drop a file here");
                }
            });
            return;
        };
        if self.flame.zoom as usize >= cur.tree.len() {
            self.flame.zoom = CallTree::ROOT;
        }
        if self.source.is_open() {
            self.source_panel(ui, &cur);
            return;
        }
        if self.sandwich.is_open() {
            self.sandwich_panel(ui, &cur);
            return;
        }
        self.breadcrumb(ui, &cur);
        let input = FlameInput {
            colors: &self.colors,
            matches: self.search.matches.as_deref(),
            selected: self.flame.selected,
            ..cur.flame_input()
        };
        if cur.totals.first().copied().unwrap_or(0) <= 0 {
            ui.centered_and_justified(|ui| ui.label("no samples match the filters"));
            return;
        }
        let started = Instant::now();
        let nodes = flame::NodeStyle {
            cursor: self.flame.cursor,
            ..flame::NodeStyle::default()
        };
        let out = flame::show_styled(
            ui,
            &input,
            &nodes,
            self.flame.zoom,
            self.flame.flipped,
            cur.tree.max_depth(),
        );
        self.flame.frame_time = started.elapsed();
        if self.job.is_none()
            && let Some(launched) = self.report_first_frame.take()
        {
            // For benchmarks (bench/open.sh): launch to the first painted flame graph.
            eprintln!(
                "first flame graph painted {:.3} s after launch",
                launched.elapsed().as_secs_f64()
            );
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
        self.flame.hovered = out.hovered;
        self.flame.highlighted = out.highlighted;
        if let Some(clicked) = out.clicked
            && let RectKind::Node(node) = clicked.kind
        {
            self.zoom_to(node);
            self.flame.cursor = Some(node);
        }
        if let Some(secondary) = out.secondary
            && let RectKind::Node(node) = secondary.kind
            && node != CallTree::ROOT
        {
            self.flame.menu_frame = Some(cur.tree.frame(node));
        }
        self.frame_context_menu(&out.response, &cur);
        self.flame.last = Some((out.canvas, out.params, out.rects));
    }

    fn breadcrumb(&mut self, ui: &mut Ui, cur: &Loaded) {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(
                    self.flame.zoom != CallTree::ROOT
                        || flight::window(ui, flame::VIEW_GRAPH, self.flame.zoom) != (0.0, 1.0),
                    egui::Button::new("Reset"),
                )
                .on_hover_text("show everything (Esc)")
                .clicked()
            {
                self.reset_zoom();
                flight::land(ui.ctx());
            }
            if ui
                .add_enabled(
                    !self.flame.history.is_empty() || self.flame.zoom != CallTree::ROOT,
                    egui::Button::new("Back"),
                )
                .on_hover_text("previous zoom (Backspace)")
                .clicked()
            {
                self.back();
            }
            ui.separator();
            let path = cur.tree.path(self.flame.zoom);
            let names: Vec<(&str, String)> = path
                .iter()
                .map(|&node| {
                    let name = flame::node_name(&cur.tree, &cur.frames, node);
                    (name, flame::elide(name, 48).unwrap_or_default())
                })
                .collect();
            let zoom_text = (self.flame.zoom != CallTree::ROOT).then(|| {
                let v = cur
                    .totals
                    .get(self.flame.zoom as usize)
                    .copied()
                    .unwrap_or(0);
                format!(
                    "zoom: {} ({})",
                    names.last().map_or("", |n| n.0),
                    units::percent(v, cur.totals.first().copied().unwrap_or(0))
                )
            });
            // As many of the last levels as fit beside "all", "› …" and (some of) the
            // zoom label: a deep path in a narrow panel must not run under the label.
            let font = egui::TextStyle::Body.resolve(ui.style());
            let gap = ui.spacing().item_spacing.x;
            let width = |text: &str| {
                let galley = ui.painter().layout_no_wrap(
                    text.to_string(),
                    font.clone(),
                    egui::Color32::WHITE,
                );
                galley.size().x + gap
            };
            let label_room = zoom_text
                .as_deref()
                .map_or(0.0, |t| width(t).min(ZOOM_LABEL_ROOM));
            let room = ui.available_width() - width("all") - width("› …") - label_room;
            let widths: Vec<f32> = names
                .iter()
                .map(|(_, short)| width("›") + width(short))
                .collect();
            let skip = path.len() - levels_that_fit(&widths, room);
            let mut target = None;
            if ui.link("all").clicked() {
                target = Some(CallTree::ROOT);
            }
            if skip > 0 {
                ui.weak("› …");
            }
            for (&node, (name, short)) in path.iter().zip(&names).skip(skip) {
                ui.weak("›");
                if node == self.flame.zoom {
                    ui.add(egui::Label::new(egui::RichText::new(short).strong()).truncate());
                } else if ui.link(short).on_hover_text(*name).clicked() {
                    target = Some(node);
                }
            }
            if let Some(t) = target {
                self.zoom_to(t);
            }
            if let Some(text) = zoom_text {
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    ui.add(egui::Label::new(text).truncate());
                });
            }
        });
    }
}

/// Room the zoom label beside the breadcrumb keeps at most (points); a longer one is
/// shortened, whole on hover.
const ZOOM_LABEL_ROOM: f32 = 220.0;

/// How many of a zoom path's last levels fit in `room` points, level i taking
/// `widths[i]`: at least one, the frame zoomed into (shortened if it must be).
pub fn levels_that_fit(widths: &[f32], room: f32) -> usize {
    let mut used = 0.0;
    let mut shown = 0;
    for &w in widths.iter().rev() {
        if shown > 0 && used + w > room {
            break;
        }
        used += w;
        shown += 1;
    }
    shown
}
