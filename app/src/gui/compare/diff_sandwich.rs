//! Compare mode's sandwich: the callers and callees of a function in the comparison,
//! in place of the diff flame graph, colored as it is by how each call path changed
//! from A to B (see [`crate::gui::view::sandwich`]).

use std::sync::Arc;

use egui::{Color32, Ui};
use profile_model::diff::{self, DiffMode};
use profile_model::frames::FrameId;
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{CallTree, FrameTable};

use crate::gui::compare::diff_job::DiffLoaded;
use crate::gui::compare::{CompareState, legend_text, node_colors};
use crate::gui::view::flame::{DiffValues, FlameInput, NodeStyle};
use crate::gui::view::frame_menu::{self, FrameAction};
use crate::gui::view::sandwich::{Made, SandwichState, frame_of, pair, self_and_total, title};

/// The value columns of a comparison's tree: A's and B's.
const SIDES: [usize; 2] = [diff::A, diff::B];

/// The tree and frames a sandwich of a comparison is made from.
fn parts(res: &DiffLoaded) -> (&CallTree, &FrameTable) {
    (&res.tree, &res.frames)
}

/// A comparison's sandwich and the colors of its two graphs.
#[derive(Default)]
pub struct DiffSandwich {
    /// The sandwich.
    pub state: SandwichState<DiffLoaded>,
    colors: [Vec<Color32>; 2],
    colors_key: Option<(usize, DiffMode, bool)>,
}

impl DiffSandwich {
    /// The values of graph `i` of `made` for the diff colors and tooltips, as shares of
    /// the whole comparison's sides (`res`).
    fn values<'a>(made: &'a Made, i: usize, res: &DiffLoaded, mode: DiffMode) -> DiffValues<'a> {
        DiffValues {
            a: made.graph(i, 0).1,
            b: made.graph(i, 1).1,
            total_a: res.total_a(),
            total_b: res.total_b(),
            mode,
        }
    }
}

impl CompareState {
    /// Shows the callers and callees of `frame` of the comparison, in place of the
    /// diff flame graph.
    pub fn open_sandwich(&mut self, frame: FrameId) {
        let name = self
            .result
            .as_ref()
            .and_then(|res| res.frames.frames.get(frame as usize))
            .map(|f| f.name.clone());
        if let Some(name) = name {
            self.sandwich = DiffSandwich {
                state: SandwichState::of_name(name),
                ..DiffSandwich::default()
            };
        }
    }

    /// Back to the diff flame graph.
    pub fn close_sandwich(&mut self) {
        self.sandwich = DiffSandwich::default();
    }

    /// The sandwich of the diff table's row selected, else of the diff graph's frame
    /// under the pointer (`s`).
    pub fn sandwich_of_selection(&mut self) {
        let hovered = match (&self.result, self.hovered.map(|h| h.kind)) {
            (Some(res), Some(RectKind::Node(node))) if node != CallTree::ROOT => {
                Some(res.tree.frame(node))
            }
            _ => None,
        };
        if let Some(frame) = self.selected.or(hovered) {
            self.open_sandwich(frame);
        }
    }

    /// The sandwich in place of the diff graph: the function with A's and B's self and
    /// total, then its callers above and its callees below, in diff colors. Returns
    /// what a frame's context menu asked of the window (filters, search).
    pub(crate) fn diff_sandwich(
        &mut self,
        ui: &mut Ui,
        res: &Arc<DiffLoaded>,
    ) -> Option<(String, FrameAction)> {
        let sync = self.sync_jobs;
        self.sandwich
            .state
            .refresh(ui.ctx(), res, sync, parts, &SIDES);
        let name = self.sandwich.state.name.clone().unwrap_or_default();
        let shown = self.sandwich.state.shown();
        let values = |ui: &mut Ui| {
            if let Ok(made) = &shown {
                let s = &made.sandwich;
                ui.separator();
                ui.label(format!(
                    "A: {} | B: {}",
                    self_and_total(s, 0, res.total_a(), &res.unit),
                    self_and_total(s, 1, res.total_b(), &res.unit)
                ));
            }
        };
        ui.label(legend_text(self.mode));
        if title(ui, "diff flame graph", &name, values) {
            self.close_sandwich();
        }
        if !self.sandwich.state.is_open() {
            return None;
        }
        let made = match shown {
            Ok(made) => made,
            Err(why) => {
                ui.centered_and_justified(|ui| ui.label(why));
                return None;
            }
        };
        let dark = ui.visuals().dark_mode;
        let key = (Arc::as_ptr(&made) as usize, self.mode, dark);
        if self.sandwich.colors_key != Some(key) {
            self.sandwich.colors = std::array::from_fn(|i| {
                let values = DiffSandwich::values(&made, i, res, self.mode);
                node_colors(&values, made.graph(i, 0).0.len(), dark)
            });
            self.sandwich.colors_key = Some(key);
        }
        let width_column = usize::from(!self.widths_from_a);
        let input = |i: usize| {
            let (tree, totals) = made.graph(i, width_column);
            FlameInput {
                tree,
                frames: &res.frames,
                totals,
                colors: &[],
                matches: self.matches.as_deref(),
                selected: None,
                unit: &res.unit,
            }
        };
        let style = |i: usize| NodeStyle {
            node_colors: Some(&self.sandwich.colors[i]),
            diff: Some(DiffSandwich::values(&made, i, res, self.mode)),
            cursor: self.sandwich.state.cursor[i],
        };
        let outputs = pair(ui, [input(0), input(1)], [style(0), style(1)]);
        let mut asked = None;
        self.sandwich.state.hovered = None;
        for (i, out) in outputs.into_iter().enumerate() {
            let (tree, _) = made.graph(i, 0);
            if out.hovered.is_some() {
                self.sandwich.state.hovered = out.hovered;
            }
            if out.response.contains_pointer() {
                self.sandwich.state.key_graph = i;
            }
            if let Some(frame) = out.clicked.as_ref().and_then(|r| frame_of(tree, r))
                && frame != made.sandwich.frame
            {
                self.open_sandwich(frame);
            }
            if let Some(frame) = out.secondary.as_ref().and_then(|r| frame_of(tree, r)) {
                self.menu_frame = Some(frame);
            }
            asked = asked.or(self.frame_context_menu(&out.response, res));
            if self.sandwich.state.is_open() {
                self.sandwich.state.last[i] = Some((out.canvas, out.params, out.rects));
            }
        }
        asked
    }

    /// Remembers the frame of the rectangle of the comparison's tree clicked with the
    /// secondary button, if any, for its context menu.
    pub(crate) fn menu_frame_at(&mut self, secondary: Option<FlameRect>, res: &DiffLoaded) {
        if let Some(frame) = secondary.as_ref().and_then(|r| frame_of(&res.tree, r)) {
            self.menu_frame = Some(frame);
        }
    }

    /// The context menu of the comparison's frame last clicked with the secondary
    /// button on the canvas of `response`: the sandwich is opened here; what else it
    /// asks (filters, search) is returned, with the frame's name, for the window.
    pub(crate) fn frame_context_menu(
        &mut self,
        response: &egui::Response,
        res: &DiffLoaded,
    ) -> Option<(String, FrameAction)> {
        let frame = self.menu_frame?;
        let name = res.frames.frames.get(frame as usize)?.name.clone();
        let mut picked = None;
        response.context_menu(|ui| picked = frame_menu::menu(ui, &name, false));
        match picked? {
            FrameAction::Sandwich => {
                self.open_sandwich(frame);
                None
            }
            action => Some((name, action)),
        }
    }
}
