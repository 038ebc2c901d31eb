//! Callers and callees of one function (its sandwich) in place of the flame graph: its
//! callers as an inverted flame graph above it, its callees as a flame graph below,
//! with its self and total. Made off the UI thread from the view shown
//! ([`profile_model::sandwich`]), and made again, for the same function found by
//! name, whenever that view is recomputed (filters, granularity, sample type).

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Weak};

use egui::{Align, Layout, Rect, RichText, Ui, UiBuilder, pos2, vec2};
use profile_model::frames::FrameId;
use profile_model::layout::{FlameRect, RectKind};
use profile_model::sandwich::{FRAME_NODE, Sandwich, sandwich};
use profile_model::{CallTree, units};

use crate::gui::view::ProfileView;
use crate::gui::view::flame::{self, FlameInput, FlameParams, NodeStyle};
use crate::gui::view::frame_menu;
use crate::gui::view::loader::Loaded;

/// The accessible labels of the two graphs.
pub const CALLERS_GRAPH: &str = "callers graph";
/// See [`CALLERS_GRAPH`].
pub const CALLEES_GRAPH: &str = "callees graph";

/// A sandwich made, with the totals its graphs draw.
pub struct Made {
    /// The two trees.
    pub sandwich: Sandwich,
    /// Totals of the callers tree's nodes.
    pub callers_totals: Vec<i64>,
    /// Totals of the callees tree's nodes.
    pub callees_totals: Vec<i64>,
}

impl Made {
    fn of(loaded: &Loaded, frame: FrameId) -> Self {
        let sandwich = sandwich(&loaded.tree, &loaded.frames, frame);
        Self {
            callers_totals: sandwich.callers.totals(0),
            callees_totals: sandwich.callees.totals(0),
            sandwich,
        }
    }
}

/// The sandwich shown, if any: the function, what was made of it and for which view.
#[derive(Default)]
pub struct SandwichState {
    /// The function's name (found again in a recomputed view); `None`: none shown.
    pub name: Option<String>,
    /// What is shown.
    pub made: Option<Arc<Made>>,
    /// The view `made`, or the one being made, is of.
    of: Weak<Loaded>,
    /// The job making it.
    job: Option<Receiver<Made>>,
    /// The function is not in the view shown (filtered out).
    pub missing: bool,
    /// The rectangle under the pointer in either graph (last frame).
    pub hovered: Option<FlameRect>,
    /// Last canvas, parameters and rectangles of the callers and the callees graph.
    pub last: [Option<(Rect, FlameParams, Vec<FlameRect>)>; 2],
}

impl SandwichState {
    /// Whether a sandwich is shown.
    pub fn is_open(&self) -> bool {
        self.name.is_some()
    }

    /// Whether it is being made.
    pub fn is_making(&self) -> bool {
        self.job.is_some()
    }
}

impl ProfileView {
    /// Shows the callers and callees of `frame` (of the view shown).
    pub fn open_sandwich(&mut self, frame: FrameId) {
        let Some(name) = self.frame_name(frame) else {
            return;
        };
        self.sandwich = SandwichState {
            name: Some(name),
            ..SandwichState::default()
        };
        self.flame.selected = Some(frame);
    }

    /// Back to the flame graph.
    pub fn close_sandwich(&mut self) {
        self.sandwich = SandwichState::default();
    }

    /// The sandwich of the frame selected, else of the one under the pointer (`s`).
    pub fn sandwich_of_selection(&mut self) {
        let hovered = match self.flame.hovered.map(|h| h.kind) {
            Some(RectKind::Node(node)) if node != CallTree::ROOT => {
                self.current.as_ref().map(|cur| cur.tree.frame(node))
            }
            _ => None,
        };
        if let Some(frame) = self.flame.selected.or(hovered) {
            self.open_sandwich(frame);
        }
    }

    /// Starts making the sandwich again when the view shown is not the one it is of,
    /// and takes in a finished one.
    pub(crate) fn refresh_sandwich(&mut self, ctx: &egui::Context) {
        let (Some(name), Some(cur)) = (self.sandwich.name.clone(), self.current.clone()) else {
            return;
        };
        if !std::ptr::eq(self.sandwich.of.as_ptr(), Arc::as_ptr(&cur)) {
            self.sandwich.of = Arc::downgrade(&cur);
            self.sandwich.made = None;
            self.sandwich.job = None;
            let frame = cur.frames.frames.iter().position(|f| f.name == name);
            self.sandwich.missing = frame.is_none();
            if let Some(frame) = frame {
                let frame = frame as FrameId;
                self.flame.selected = Some(frame);
                if self.sync_jobs {
                    self.sandwich.made = Some(Arc::new(Made::of(&cur, frame)));
                } else {
                    let (tx, rx) = mpsc::channel();
                    let repaint = ctx.clone();
                    std::thread::spawn(move || {
                        // The receiver is gone when the sandwich was closed meanwhile.
                        let _ = tx.send(Made::of(&cur, frame));
                        repaint.request_repaint();
                    });
                    self.sandwich.job = Some(rx);
                }
            }
        }
        if let Some(made) = self.sandwich.job.as_ref().and_then(|rx| rx.try_recv().ok()) {
            self.sandwich.made = Some(Arc::new(made));
            self.sandwich.job = None;
        }
    }

    /// The sandwich in place of the flame graph: a line naming the function with its
    /// self and total, then its callers above it and its callees below.
    pub(crate) fn sandwich_panel(&mut self, ui: &mut Ui, cur: &Loaded) {
        let name = self.sandwich.name.clone().unwrap_or_default();
        let made = self.sandwich.made.clone();
        let total = cur.totals.first().copied().unwrap_or(0);
        let unit = cur.unit();
        ui.horizontal(|ui| {
            if ui
                .button("Close")
                .on_hover_text("back to the flame graph (Esc)")
                .clicked()
            {
                self.close_sandwich();
            }
            ui.separator();
            ui.label("callers and callees of");
            ui.add(egui::Label::new(RichText::new(&name).strong()).truncate());
            if let Some(made) = made.as_ref().filter(|m| m.sandwich.total(0) > 0) {
                let s = &made.sandwich;
                let value = |v: i64| {
                    format!(
                        "{} ({})",
                        units::readable(v, unit),
                        units::percent(v, total)
                    )
                };
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    ui.label(format!(
                        "self {} · total {}",
                        value(s.self_value(0)),
                        value(s.total(0))
                    ));
                });
            }
        });
        if !self.sandwich.is_open() {
            return;
        }
        let absent = made.as_ref().is_some_and(|m| m.sandwich.total(0) == 0);
        let Some(made) = made.filter(|_| !absent) else {
            ui.centered_and_justified(|ui| {
                if self.sandwich.missing || absent {
                    ui.label(format!("{name} is not in this view (filtered out?)"));
                } else {
                    ui.label("finding callers and callees…");
                }
            });
            return;
        };
        let full = ui.available_rect_before_wrap();
        let half = ((full.height() - 6.0) / 2.0).max(40.0);
        self.sandwich.hovered = None;
        let graphs = [
            (
                &made.sandwich.callers,
                &made.callers_totals,
                CALLERS_GRAPH,
                true,
            ),
            (
                &made.sandwich.callees,
                &made.callees_totals,
                CALLEES_GRAPH,
                false,
            ),
        ];
        for (i, (tree, totals, label, flipped)) in graphs.into_iter().enumerate() {
            let r = Rect::from_min_size(
                pos2(full.left(), full.top() + i as f32 * (half + 6.0)),
                vec2(full.width(), half),
            );
            let mut child = ui.new_child(
                UiBuilder::new()
                    .max_rect(r)
                    .id_salt(("sandwich", i))
                    .layout(Layout::top_down(Align::Min)),
            );
            let input = FlameInput {
                tree,
                frames: &cur.frames,
                totals,
                colors: &self.colors,
                matches: self.search.matches.as_deref(),
                selected: None,
                unit,
            };
            // The function fills the width, the root ("all") dimmed beside it.
            let zoom = if tree.is_empty() {
                CallTree::ROOT
            } else {
                FRAME_NODE
            };
            let out = flame::show_labeled(
                &mut child,
                &input,
                &NodeStyle::default(),
                label,
                zoom,
                flipped,
                tree.max_depth(),
            );
            if out.hovered.is_some() {
                self.sandwich.hovered = out.hovered;
            }
            let frame_of = |fr: &FlameRect| match fr.kind {
                RectKind::Node(node) if node != CallTree::ROOT => Some(tree.frame(node)),
                _ => None,
            };
            // A click shows the sandwich of the function clicked.
            if let Some(frame) = out.clicked.as_ref().and_then(frame_of)
                && frame != made.sandwich.frame
            {
                self.open_sandwich(frame);
            }
            if let Some(frame) = out.secondary.as_ref().and_then(frame_of) {
                self.flame.menu_frame = Some(frame);
            }
            self.frame_context_menu(&out.response, cur);
            self.sandwich.last[i] = Some((out.canvas, out.params, out.rects));
        }
        ui.advance_cursor_after_rect(full);
    }

    /// The context menu of the frame last clicked with the secondary button on the
    /// canvas of `response`.
    pub(crate) fn frame_context_menu(&mut self, response: &egui::Response, cur: &Loaded) {
        let Some(frame) = self.flame.menu_frame else {
            return;
        };
        let Some(name) = cur
            .frames
            .frames
            .get(frame as usize)
            .map(|f| f.name.clone())
        else {
            return;
        };
        let mut picked = None;
        response.context_menu(|ui| picked = frame_menu::menu(ui, &name));
        if let Some(action) = picked {
            self.frame_action(frame, action);
        }
    }
}
