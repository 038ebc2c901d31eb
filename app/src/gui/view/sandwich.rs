//! Callers and callees of one function (its sandwich) in place of a flame graph: its
//! callers as an inverted flame graph above it, its callees as a flame graph below.
//! [`SandwichState`] holds one, made off the UI thread ([`profile_model::sandwich`])
//! from what it is of (the view shown, or compare mode's comparison) and made again,
//! for the same function found by name, whenever that is replaced; [`pair`] draws it.
//! The view's panel is in [`crate::gui::view::sandwich_panel`], compare mode's in
//! [`crate::gui::compare::diff_sandwich`].

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Weak};

use egui::{Align, Context, Layout, Rect, Ui, UiBuilder, pos2, vec2};
use profile_model::frames::{FrameId, FrameTable};
use profile_model::layout::{FlameRect, RectKind};
use profile_model::sandwich::{FRAME_NODE, Sandwich, sandwich};
use profile_model::{CallTree, NodeId, units};

use crate::gui::view::flame::{self, FlameInput, FlameOutput, FlameParams, NodeStyle};

/// The accessible labels of the two graphs.
pub const CALLERS_GRAPH: &str = "callers graph";
/// See [`CALLERS_GRAPH`].
pub const CALLEES_GRAPH: &str = "callees graph";

/// A sandwich made, with the totals its graphs draw.
pub struct Made {
    /// The two trees.
    pub sandwich: Sandwich,
    /// Totals of the callers tree's nodes, one vector per value column asked for.
    pub callers_totals: Vec<Vec<i64>>,
    /// Totals of the callees tree's nodes, likewise.
    pub callees_totals: Vec<Vec<i64>>,
}

impl Made {
    /// The sandwich of `frame` over `tree`, with the totals of value `columns`.
    pub fn of(tree: &CallTree, frames: &FrameTable, frame: FrameId, columns: &[usize]) -> Self {
        let sandwich = sandwich(tree, frames, frame);
        let totals = |t: &CallTree| columns.iter().map(|&c| t.totals(c)).collect();
        Self {
            callers_totals: totals(&sandwich.callers),
            callees_totals: totals(&sandwich.callees),
            sandwich,
        }
    }

    /// The tree and totals (of the `column`th column asked for) of graph `i` (0:
    /// callers, 1: callees).
    pub fn graph(&self, i: usize, column: usize) -> (&CallTree, &[i64]) {
        let (tree, totals) = match i {
            0 => (&self.sandwich.callers, &self.callers_totals),
            _ => (&self.sandwich.callees, &self.callees_totals),
        };
        (tree, totals.get(column).map_or(&[][..], Vec::as_slice))
    }
}

/// Where a graph was drawn: canvas, parameters and rectangles (for tests).
pub type Drawn = (Rect, FlameParams, Vec<FlameRect>);

/// The sandwich shown, if any, of a `T` (the view shown, or a comparison).
pub struct SandwichState<T> {
    /// The function's name (found again in a recomputed `T`); `None`: none shown.
    pub name: Option<String>,
    /// What is shown.
    pub made: Option<Arc<Made>>,
    /// What `made`, or the one being made, is of.
    of: Weak<T>,
    /// The job making it.
    job: Option<Receiver<Made>>,
    /// The function's frame in what it is of; `None` when it is not there (filtered
    /// out).
    frame: Option<FrameId>,
    /// The function is not in what it is of (filtered out).
    pub missing: bool,
    /// The rectangle under the pointer in either graph (last frame).
    pub hovered: Option<FlameRect>,
    /// Where the callers and the callees graph were last drawn.
    pub last: [Option<Drawn>; 2],
    /// The keyboard's cursor in the callers and the callees graph
    /// ([`crate::gui::view::keys`]).
    pub cursor: [Option<NodeId>; 2],
    /// The graph the arrows move in: the one last under the pointer (0: callers).
    pub key_graph: usize,
}

impl<T> Default for SandwichState<T> {
    fn default() -> Self {
        Self {
            name: None,
            made: None,
            of: Weak::new(),
            job: None,
            frame: None,
            missing: false,
            hovered: None,
            last: [None, None],
            cursor: [None, None],
            key_graph: 1,
        }
    }
}

impl<T: Send + Sync + 'static> SandwichState<T> {
    /// The sandwich of the function named `name`, to be made.
    pub fn of_name(name: String) -> Self {
        Self {
            name: Some(name),
            ..Self::default()
        }
    }

    /// Whether a sandwich is shown.
    pub fn is_open(&self) -> bool {
        self.name.is_some()
    }

    /// Starts making it again when `of` is not what it was made of (on a thread of its
    /// own unless `sync`), from the tree and frames `parts` finds there, with the
    /// totals of value `columns`; takes in a finished one. Returns the function's
    /// frame in `of`, when it is there.
    pub fn refresh(
        &mut self,
        ctx: &Context,
        of: &Arc<T>,
        sync: bool,
        parts: fn(&T) -> (&CallTree, &FrameTable),
        columns: &'static [usize],
    ) -> Option<FrameId> {
        let name = self.name.as_deref()?;
        if !std::ptr::eq(self.of.as_ptr(), Arc::as_ptr(of)) {
            let (_, frames) = parts(of);
            let frame = (frames.frames.iter().position(|f| f.name == name)).map(|f| f as FrameId);
            self.of = Arc::downgrade(of);
            self.made = None;
            self.job = None;
            self.frame = frame;
            self.missing = frame.is_none();
            if let Some(frame) = frame {
                let make = {
                    let of = Arc::clone(of);
                    move || {
                        let (tree, frames) = parts(&of);
                        Made::of(tree, frames, frame, columns)
                    }
                };
                if sync {
                    self.made = Some(Arc::new(make()));
                } else {
                    let (tx, rx) = mpsc::channel();
                    let repaint = ctx.clone();
                    std::thread::spawn(move || {
                        // The receiver is gone when the sandwich was closed meanwhile.
                        let _ = tx.send(make());
                        repaint.request_repaint();
                    });
                    self.job = Some(rx);
                }
            }
        }
        if let Some(made) = self.job.as_ref().and_then(|rx| rx.try_recv().ok()) {
            self.made = Some(Arc::new(made));
            self.job = None;
        }
        self.frame
    }

    /// What is shown, once made and holding samples; else what the place says.
    pub fn shown(&self) -> Result<Arc<Made>, String> {
        let name = self.name.as_deref().unwrap_or_default();
        match &self.made {
            Some(made) if made.sandwich.total(0) != 0 || made.sandwich.total(1) != 0 => {
                Ok(Arc::clone(made))
            }
            Some(_) => Err(format!("{name} is not in this view (filtered out?)")),
            None if self.missing => Err(format!("{name} is not in this view (filtered out?)")),
            None => Err("finding callers and callees…".to_string()),
        }
    }
}

/// The line above a sandwich: *Close* (back to `back`), and the function's `name`;
/// `values` adds to it. Whether *Close* was clicked.
pub fn title(ui: &mut Ui, back: &str, name: &str, values: impl FnOnce(&mut Ui)) -> bool {
    ui.horizontal(|ui| {
        let close = ui
            .button("Close")
            .on_hover_text(format!("back to the {back} (Esc)"))
            .clicked();
        ui.separator();
        ui.label("callers and callees of");
        ui.add(egui::Label::new(egui::RichText::new(name).strong()).truncate());
        values(ui);
        close
    })
    .inner
}

/// "self 1.2 s (3.4%) · total 5.6 s (7.8%)": the function's self and total in value
/// column `column`, as shares of `total` (in `unit`).
pub fn self_and_total(s: &Sandwich, column: usize, total: i64, unit: &str) -> String {
    let value = |v| {
        format!(
            "{} ({})",
            units::readable(v, unit),
            units::percent(v, total)
        )
    };
    format!(
        "self {} · total {}",
        value(s.self_value(column)),
        value(s.total(column))
    )
}

/// The frame of a laid-out rectangle of `tree`, unless it is the root or a sliver.
pub fn frame_of(tree: &CallTree, fr: &FlameRect) -> Option<FrameId> {
    match fr.kind {
        RectKind::Node(node) if node != CallTree::ROOT => Some(tree.frame(node)),
        _ => None,
    }
}

/// Draws the two graphs of a sandwich in the rest of `ui`, one above the other:
/// `inputs[0]` (the callers) root at the bottom, `inputs[1]` (the callees) root on
/// top, each with the function filling the width.
pub fn pair(
    ui: &mut Ui,
    inputs: [FlameInput<'_>; 2],
    styles: [NodeStyle<'_>; 2],
) -> [FlameOutput; 2] {
    let full = ui.available_rect_before_wrap();
    let gap = 6.0;
    let half = ((full.height() - gap) / 2.0).max(40.0);
    let labels = [CALLERS_GRAPH, CALLEES_GRAPH];
    let outputs = std::array::from_fn(|i| {
        let r = Rect::from_min_size(
            pos2(full.left(), full.top() + i as f32 * (half + gap)),
            vec2(full.width(), half),
        );
        let mut child = ui.new_child(
            UiBuilder::new()
                .max_rect(r)
                .id_salt(("sandwich", i))
                .layout(Layout::top_down(Align::Min)),
        );
        let tree = inputs[i].tree;
        // The function fills the width, the root ("all") dimmed beside it.
        let zoom: NodeId = if tree.is_empty() {
            CallTree::ROOT
        } else {
            FRAME_NODE
        };
        flame::show_labeled(
            &mut child,
            &inputs[i],
            &styles[i],
            labels[i],
            zoom,
            i == 0,
            tree.max_depth(),
        )
    });
    ui.advance_cursor_after_rect(full);
    outputs
}
