//! The top table side panel and the central panel: the flame graph under its
//! breadcrumb (zoom path, Reset and Back).

use std::time::Instant;

use egui::{Align, Layout, Ui};
use profile_model::layout::RectKind;
use profile_model::{CallTree, units};

use super::app::FlintApp;
use super::flame::{self, FlameInput};
use super::loader::Loaded;

impl FlintApp {
    pub(super) fn top_panel(&mut self, ui: &mut Ui) {
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
        if let Some(frame) = clicked {
            self.flame.selected = if self.flame.selected == Some(frame) {
                None
            } else {
                Some(frame)
            };
        }
    }

    pub(super) fn central(&mut self, ui: &mut Ui) {
        let Some(cur) = self.current.clone() else {
            ui.centered_and_justified(|ui| {
                if let Some(job) = &self.job {
                    ui.label(job.progress_text());
                } else if let Some(tl) = &self.timeline {
                    ui.label(tl.hint());
                } else {
                    ui.label("Open a profile (Ctrl+O) or drop a file here");
                }
            });
            return;
        };
        if self.flame.zoom as usize >= cur.tree.len() {
            self.flame.zoom = CallTree::ROOT;
        }
        self.breadcrumb(ui, &cur);
        let input = FlameInput {
            tree: &cur.tree,
            frames: &cur.frames,
            totals: &cur.totals,
            colors: &self.colors,
            matches: self.search.matches.as_deref(),
            selected: self.flame.selected,
            unit: cur.unit(),
        };
        if cur.totals.first().copied().unwrap_or(0) <= 0 {
            ui.centered_and_justified(|ui| ui.label("no samples match the filters"));
            return;
        }
        let started = Instant::now();
        let out = flame::show(
            ui,
            &input,
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
        }
        self.flame.last = Some((out.canvas, out.params, out.rects));
    }

    fn breadcrumb(&mut self, ui: &mut Ui, cur: &Loaded) {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(
                    self.flame.zoom != CallTree::ROOT,
                    egui::Button::new("Reset"),
                )
                .on_hover_text("show everything (Esc)")
                .clicked()
            {
                self.reset_zoom();
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
            let mut target = None;
            // Long paths: the root, "…", and the last few levels.
            const SHOWN: usize = 6;
            let skip = path.len().saturating_sub(SHOWN);
            if ui.link("all").clicked() {
                target = Some(CallTree::ROOT);
            }
            if skip > 0 {
                ui.weak("› …");
            }
            for &node in &path[skip..] {
                ui.weak("›");
                let name = flame::node_name(&cur.tree, &cur.frames, node);
                let short = flame::elide(name, 48).unwrap_or_default();
                if node == self.flame.zoom {
                    ui.strong(short);
                } else if ui.link(short).on_hover_text(name).clicked() {
                    target = Some(node);
                }
            }
            if let Some(t) = target {
                self.zoom_to(t);
            }
            if self.flame.zoom != CallTree::ROOT {
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    let v = cur
                        .totals
                        .get(self.flame.zoom as usize)
                        .copied()
                        .unwrap_or(0);
                    ui.label(format!(
                        "zoom: {} ({})",
                        flame::node_name(&cur.tree, &cur.frames, self.flame.zoom),
                        units::percent(v, cur.totals.first().copied().unwrap_or(0))
                    ));
                });
            }
        });
    }
}
