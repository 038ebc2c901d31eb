//! The profile view's sandwich: callers and callees of a function of the view shown,
//! in place of its flame graph (see [`crate::gui::view::sandwich`]).

use egui::{Align, Layout, Ui};
use profile_model::frames::FrameId;
use profile_model::layout::RectKind;
use profile_model::{CallTree, FrameTable};

use crate::gui::view::ProfileView;
use crate::gui::view::flame::{FlameInput, NodeStyle};
use crate::gui::view::frame_menu;
use crate::gui::view::loader::Loaded;
use crate::gui::view::sandwich::{SandwichState, frame_of, pair, self_and_total, title};

/// The tree and frames a sandwich of the view is made from.
fn parts(loaded: &Loaded) -> (&CallTree, &FrameTable) {
    (&loaded.tree, &loaded.frames)
}

impl ProfileView {
    /// Shows the callers and callees of `frame` (of the view shown).
    pub fn open_sandwich(&mut self, frame: FrameId) {
        if let Some(name) = self.frame_name(frame) {
            self.sandwich = SandwichState::of_name(name);
            self.flame.selected = Some(frame);
        }
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

    /// The sandwich in place of the flame graph: a line naming the function with its
    /// self and total, then its callers above it and its callees below.
    pub(crate) fn sandwich_panel(&mut self, ui: &mut Ui, cur: &std::sync::Arc<Loaded>) {
        let sync = self.sync_jobs;
        if let Some(frame) = self.sandwich.refresh(ui.ctx(), cur, sync, parts, &[0]) {
            self.flame.selected = Some(frame);
        }
        let name = self.sandwich.name.clone().unwrap_or_default();
        let shown = self.sandwich.shown();
        let (total, unit) = (cur.totals.first().copied().unwrap_or(0), cur.unit());
        let values = |ui: &mut Ui| {
            if let Ok(made) = &shown {
                let line = self_and_total(&made.sandwich, 0, total, unit);
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| ui.label(line));
            }
        };
        if title(ui, "flame graph", &name, values) {
            self.close_sandwich();
        }
        if !self.sandwich.is_open() {
            return;
        }
        let made = match shown {
            Ok(made) => made,
            Err(why) => {
                ui.centered_and_justified(|ui| ui.label(why));
                return;
            }
        };
        let input = |i: usize| {
            let (tree, totals) = made.graph(i, 0);
            FlameInput {
                tree,
                frames: &cur.frames,
                totals,
                colors: &self.colors,
                matches: self.search.matches.as_deref(),
                selected: None,
                unit,
            }
        };
        let style = |i: usize| NodeStyle {
            cursor: self.sandwich.cursor[i],
            ..NodeStyle::default()
        };
        let outputs = pair(ui, [input(0), input(1)], [style(0), style(1)]);
        self.sandwich.hovered = None;
        for (i, out) in outputs.into_iter().enumerate() {
            let (tree, _) = made.graph(i, 0);
            if out.hovered.is_some() {
                self.sandwich.hovered = out.hovered;
            }
            if out.response.contains_pointer() {
                self.sandwich.key_graph = i;
            }
            // A click shows the sandwich of the function clicked.
            if let Some(frame) = out.clicked.as_ref().and_then(|r| frame_of(tree, r))
                && frame != made.sandwich.frame
            {
                self.open_sandwich(frame);
            }
            if let Some(frame) = out.secondary.as_ref().and_then(|r| frame_of(tree, r)) {
                self.flame.menu_frame = Some(frame);
            }
            self.frame_context_menu(&out.response, cur);
            if self.sandwich.is_open() {
                self.sandwich.last[i] = Some((out.canvas, out.params, out.rects));
            }
        }
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
        response.context_menu(|ui| picked = frame_menu::menu(ui, &name, true));
        if let Some(action) = picked {
            self.frame_action(frame, action);
        }
    }
}
