//! Compare mode (time mode only): two selections on the plot, A ("before") and B
//! ("after"), combined with [`profile_model::diff`] on a worker thread and shown as a
//! diff flame graph (colors per node by how each node changed) with a table of
//! differences per function.
//!
//! This module holds compare mode's state, the A/B selections and the colors of a
//! diff; the comparison job is in [`crate::gui::compare::diff_job`], the flame graphs in
//! [`crate::gui::compare::diff_view`] and the table in [`crate::gui::compare::diff_table`].

pub mod diff_job;
pub mod diff_sandwich;
pub mod diff_table;
pub mod diff_view;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use capture::{Matcher, QueryTime};
use egui::{Color32, Rect};
use profile_model::diff::{Change, DiffMode};
use profile_model::frames::FrameId;
use profile_model::layout::FlameRect;
use profile_model::{CallTree, NodeId, Profile};

use crate::gui::compare::diff_job::{DiffJob, DiffKey, DiffLoaded};
use crate::gui::compare::diff_table::{DiffShow, DiffSort};
use crate::gui::view::colors::ColorMode;
use crate::gui::view::flame::{DiffValues, FlameParams};

/// The legend above the diff flame graph (followed by [`mode_note`]).
pub const LEGEND: &str = "red = more in B, green = less in B, blue = within ±0.1% of the total; \
                          intensity grows with the relative change";

/// How the comparison mode is described after the legend.
pub fn mode_note(mode: DiffMode) -> &'static str {
    match mode {
        DiffMode::Relative => "(relative: each side as a share of its own total)",
        DiffMode::Absolute => "(absolute)",
    }
}

/// The whole legend line for `mode`.
pub fn legend_text(mode: DiffMode) -> String {
    format!("{LEGEND} {}", mode_note(mode))
}

/// Which selection a plot selection sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Side {
    /// The "before".
    #[default]
    A,
    /// The "after".
    B,
}

impl Side {
    /// "A" or "B".
    pub fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
}

/// A selection's merged profile.
#[derive(Debug, Clone)]
pub struct Picked {
    /// The time selected.
    pub time: QueryTime,
    /// Its merged profile.
    pub profile: Arc<Profile>,
    /// How many profiles it merged.
    pub count: usize,
    /// The label matchers of the side's selector when it was selected.
    pub matchers: Vec<Matcher>,
}

/// `{endpoint="/api/sort"}` for matchers, nothing when there are none.
pub fn matchers_text(matchers: &[Matcher]) -> String {
    if matchers.is_empty() {
        return String::new();
    }
    let ms: Vec<String> = matchers.iter().map(ToString::to_string).collect();
    format!("{{{}}}", ms.join(", "))
}

/// `A` or `A {endpoint="/api/sort"}`: a side's name and its selector's matchers.
pub fn side_name(side: Side, matchers: &[Matcher]) -> String {
    let name = side.letter();
    match matchers_text(matchers) {
        m if m.is_empty() => name.to_string(),
        m => format!("{name} {m}"),
    }
}

/// The sample types of `a` and `b` named `type_name` (each profile's default when missing).
pub fn side_types(a: &Profile, b: &Profile, type_name: &str) -> (usize, usize) {
    let find = |p: &Profile| {
        p.find_sample_type(type_name)
            .unwrap_or_else(|| p.default_sample_index())
    };
    (find(a), find(b))
}

/// The fill of a node that changed by `change`.
pub fn diff_color(change: Change, dark: bool) -> Color32 {
    let (weak_red, weak_green) = if dark {
        (
            Color32::from_rgb(110, 72, 72),
            Color32::from_rgb(68, 104, 72),
        )
    } else {
        (
            Color32::from_rgb(240, 200, 200),
            Color32::from_rgb(200, 236, 204),
        )
    };
    let strong_red = Color32::from_rgb(222, 45, 38);
    let strong_green = Color32::from_rgb(40, 168, 70);
    match change {
        Change::Same => {
            if dark {
                Color32::from_rgb(78, 110, 160)
            } else {
                Color32::from_rgb(160, 190, 232)
            }
        }
        Change::More(i) => weak_red.lerp_to_gamma(strong_red, i.clamp(0.0, 1.0)),
        Change::Less(i) => weak_green.lerp_to_gamma(strong_green, i.clamp(0.0, 1.0)),
        Change::New => Color32::from_rgb(190, 0, 0),
        Change::Vanished => Color32::from_rgb(0, 130, 40),
    }
}

/// The fill of every node of a diff tree of `len` nodes.
pub fn node_colors(values: &DiffValues<'_>, len: usize, dark: bool) -> Vec<Color32> {
    (0..len as NodeId)
        .map(|n| diff_color(values.change(n), dark))
        .collect()
}

/// The zoom of one flame graph of compare mode.
#[derive(Debug, Clone, Default)]
pub struct GraphZoom {
    /// The node filling the width.
    pub zoom: NodeId,
    /// Previous zooms, for Back.
    pub history: Vec<NodeId>,
    /// The keyboard's cursor ([`crate::gui::view::keys`]).
    pub cursor: Option<NodeId>,
}

impl GraphZoom {
    /// Zooms to `node` (remembering the previous zoom for Back).
    pub fn zoom_to(&mut self, node: NodeId) {
        if node != self.zoom {
            self.history.push(self.zoom);
            self.zoom = node;
        }
    }

    /// Back to the whole graph.
    pub fn reset(&mut self) {
        self.zoom = CallTree::ROOT;
        self.history.clear();
        self.cursor = None;
    }

    /// Back one zoom level (to the parent when there is no history).
    pub fn back(&mut self, tree: &CallTree) {
        if let Some(prev) = self.history.pop() {
            self.zoom = prev;
        } else if self.zoom != CallTree::ROOT && (self.zoom as usize) < tree.len() {
            self.zoom = tree.parent(self.zoom);
        }
    }
}

/// Index of the diff flame graph in [`CompareState::zooms`] (A and B are 0 and 1).
pub const DIFF_GRAPH: usize = 2;

/// Last canvas, parameters and rectangles of a flame graph (for tests).
pub type Drawn = (Rect, FlameParams, Vec<FlameRect>);

/// How the flame graphs of compare mode are drawn: as the view's (icicle or flame,
/// colors by package or binary).
#[derive(Debug, Clone, Copy)]
pub struct Look {
    /// Root at the bottom (flame) instead of the top (icicle).
    pub flipped: bool,
    /// Color by package or by binary (A's and B's graphs).
    pub color_mode: ColorMode,
}

/// The state of compare mode.
#[derive(Default)]
pub struct CompareState {
    /// Compare mode is on.
    pub enabled: bool,
    /// Which side the next plot selection sets (and whose selector the selector row
    /// edits and the plot shows).
    pub target: Side,
    /// The label matchers of A's and B's selectors while compare mode is on (`None`
    /// until it is switched on: both start as the selector then in force).
    pub selectors: Option<[Vec<Matcher>; 2]>,
    /// The side whose matchers the timeline holds (and plots).
    pub(in crate::gui::compare) shown: Side,
    /// The series of the selection shown outside compare mode
    /// ([`crate::gui::time::timeline::Timeline::selection_series`]), kept while compare mode's
    /// picks set the timeline's own, and given back when compare mode is left.
    pub(in crate::gui::compare) selection_series: Option<Vec<Matcher>>,
    /// Compare mode was switched on while the selection shown was still being merged
    /// (or its view made): it becomes A once it is shown, unless a side is picked
    /// first or compare mode is left.
    pub(in crate::gui::compare) carry_waiting: bool,
    /// Selection A, once its profile arrived.
    pub a: Option<Picked>,
    /// Selection B, once its profile arrived.
    pub b: Option<Picked>,
    generation: u64,
    pub(in crate::gui::compare) a_generation: u64,
    pub(in crate::gui::compare) b_generation: u64,
    /// Relative or absolute comparison.
    pub mode: DiffMode,
    /// Widths from A instead of B.
    pub widths_from_a: bool,
    /// The comparison shown.
    pub result: Option<Arc<DiffLoaded>>,
    pub(in crate::gui::compare) result_key: Option<DiffKey>,
    pub(in crate::gui::compare) result_generation: u64,
    /// The comparison being computed.
    pub job: Option<DiffJob>,
    /// The last comparison error.
    pub error: Option<String>,
    pub(in crate::gui::compare) colors: Vec<Color32>,
    pub(in crate::gui::compare) colors_key: Option<(u64, DiffMode, bool)>,
    /// The row (frame) selected in the diff table: outlined in the graph.
    pub selected: Option<FrameId>,
    /// The callers and callees of a function, when shown in place of the diff graph.
    pub sandwich: diff_sandwich::DiffSandwich,
    /// The frame whose context menu is open (clicked with the secondary button).
    pub menu_frame: Option<FrameId>,
    /// Make sandwiches on this thread (tests).
    pub(crate) sync_jobs: bool,
    /// Diff table sort column.
    pub sort: Option<DiffSort>,
    /// Diff table descending order.
    pub descending: bool,
    /// Which rows the diff table lists.
    pub show: DiffShow,
    /// Diff table row order (indices into the result's rows that `show` and the search
    /// keep).
    pub order: Vec<usize>,
    pub(in crate::gui::compare) order_key: Option<(u64, DiffSort, bool, DiffMode, DiffShow)>,
    /// The rectangle under the pointer (last frame).
    pub hovered: Option<FlameRect>,
    /// Last canvas, parameters and rectangles of the diff graph (for tests).
    pub last: Option<(Rect, FlameParams, Vec<FlameRect>)>,
    /// Zooms of A's, B's and the diff flame graph ([`DIFF_GRAPH`]).
    pub zooms: [GraphZoom; 3],
    /// The graph the arrows move in: the one last under the pointer (`None`: the
    /// diff graph).
    pub key_graph: Option<usize>,
    /// The rectangle under the pointer in A's or B's flame graph (last frame).
    pub side_hovered: Option<(Side, FlameRect)>,
    /// Last canvas, parameters and rectangles of A's and B's flame graphs (for tests).
    pub side_last: [Option<Drawn>; 2],
    /// The fill of each frame in A's and B's flame graphs (by package or binary).
    pub(in crate::gui::compare) side_colors: Vec<Color32>,
    pub(in crate::gui::compare) side_colors_key: Option<(u64, bool, ColorMode)>,
    /// Search matches per frame of the comparison's tree, which A's, B's and the diff
    /// graph share (when searching).
    pub matches: Option<Vec<bool>>,
    pub(in crate::gui::compare) matches_key: Option<(String, bool, u64)>,
    /// Totals of A's and of B's samples with a matching frame (each counted once), while
    /// searching: what the search box tells in compare mode.
    pub matched: [i64; 2],
}

impl CompareState {
    /// The selection of `side`, once its profile arrived.
    pub fn picked(&self, side: Side) -> Option<&Picked> {
        match side {
            Side::A => self.a.as_ref(),
            Side::B => self.b.as_ref(),
        }
    }

    /// Whether `side` is waiting for the selection being merged (see
    /// [`CompareState::carry_waiting`]): A only.
    pub(crate) fn waits_to_carry(&self, side: Side) -> bool {
        side == Side::A && self.carry_waiting
    }

    /// Stores a selection's profile for `side`.
    pub fn set(&mut self, side: Side, picked: Picked) {
        self.generation += 1;
        match side {
            Side::A => {
                self.a = Some(picked);
                self.a_generation = self.generation;
            }
            Side::B => {
                self.b = Some(picked);
                self.b_generation = self.generation;
            }
        }
    }

    /// Forgets both selections and the comparison (another profile type was chosen).
    pub fn clear(&mut self) {
        self.drop_result();
        self.a = None;
        self.b = None;
        self.target = Side::A;
        self.selected = None;
        self.close_sandwich();
        // The selection those series were of is gone too.
        self.selection_series = None;
    }

    /// Forgets the comparison (and stops the one being made), keeping both
    /// selections: it is made again when it is shown again.
    pub fn drop_result(&mut self) {
        if let Some(job) = self.job.take() {
            job.cancel.store(true, Ordering::Relaxed);
        }
        self.result = None;
        self.result_key = None;
        self.colors = Vec::new();
        self.colors_key = None;
        self.hovered = None;
        self.last = None;
        self.zooms = Default::default();
        self.side_hovered = None;
        self.side_last = [None, None];
    }

    /// The sort column of the diff table (|delta| by default).
    pub fn sort_column(&self) -> (DiffSort, bool) {
        match self.sort {
            Some(s) => (s, self.descending),
            None => (DiffSort::Delta, true),
        }
    }

    /// Cancels the comparison job.
    pub fn cancel(&mut self) -> bool {
        match self.job.take() {
            Some(job) => {
                job.cancel.store(true, Ordering::Relaxed);
                // Do not start it again for the same selections and settings.
                self.result_key = Some(job.key);
                true
            }
            None => false,
        }
    }
}

impl CompareState {
    /// What the search matched in A and in B ("matched A: 1.2 s (30%) · B: …"), once
    /// there is a comparison and a search.
    pub fn matched_text(&self) -> Option<String> {
        let (Some(res), Some(_)) = (&self.result, &self.matches) else {
            return None;
        };
        let share = |side: Side| {
            let matched = self.matched[side as usize];
            format!(
                "{}: {} ({})",
                side.letter(),
                profile_model::units::readable(matched, &res.unit),
                profile_model::units::percent(matched, res.total(side))
            )
        };
        Some(format!("matched {} · {}", share(Side::A), share(Side::B)))
    }
}

/// Compare mode's rules for its sides' selectors and picks, kept by its methods.
impl CompareState {
    /// Turns compare mode on or off (the window then syncs the selector row).
    pub fn turn(&mut self, on: bool) {
        self.enabled = on;
    }

    /// Sets the side the next selection sets.
    pub fn aim(&mut self, side: Side) {
        self.target = side;
    }

    /// Leaves compare mode and forgets its sides (a file opened on its own).
    pub fn leave(&mut self) {
        self.clear();
        self.enabled = false;
    }

    /// While compare mode is off: forgets the sides' selectors and the comparison (made
    /// again if compare mode comes back: its trees are not held beside the normal
    /// view); the series of the selection shown before compare mode, to give back to
    /// it, once.
    pub fn off(&mut self) -> Option<Vec<Matcher>> {
        self.selectors = None;
        self.carry_waiting = false;
        self.drop_result();
        self.selection_series.take()
    }

    /// Compare mode was switched on (its sides have no selectors yet): both start with
    /// `matchers`, the selector in force, and the selection shown (with its `series`)
    /// waits to become A.
    pub fn on(&mut self, matchers: &[Matcher], series: &[Matcher]) {
        if self.selectors.is_some() {
            return;
        }
        self.selectors = Some([matchers.to_vec(), matchers.to_vec()]);
        self.selection_series = Some(series.to_vec());
        self.shown = self.target;
        self.carry_waiting = true;
    }

    /// The selector of the side being selected was set to `matchers`.
    pub fn edited(&mut self, matchers: &[Matcher]) {
        if let Some(selectors) = &mut self.selectors {
            selectors[self.target as usize] = matchers.to_vec();
            self.shown = self.target;
        }
    }

    /// The time picked for the side being selected, which a new selector merges again.
    pub fn target_time(&self) -> Option<QueryTime> {
        self.picked(self.target).map(|p| p.time)
    }

    /// The side the selector row shows changed to the side being selected: its
    /// matchers, to show.
    pub fn switched(&mut self) -> Option<Vec<Matcher>> {
        if self.shown == self.target {
            return None;
        }
        let matchers = self.selectors.as_ref()?[self.target as usize].clone();
        self.shown = self.target;
        Some(matchers)
    }

    /// Whether the selection shown is still to become A: `false` once a side is
    /// picked (nothing is then carried).
    pub fn carrying(&mut self) -> bool {
        if self.a.is_some() || self.b.is_some() {
            self.carry_waiting = false;
        }
        self.carry_waiting
    }

    /// Whether the selection shown waits to become A.
    pub fn is_carrying(&self) -> bool {
        self.carry_waiting
    }

    /// Nothing (more) is carried into A.
    pub fn stop_carrying(&mut self) {
        self.carry_waiting = false;
    }

    /// `side` is being picked: nothing is carried into A any more; after A, the next
    /// pick is B.
    pub fn picking(&mut self, side: Side) {
        self.carry_waiting = false;
        if side == Side::A {
            self.target = Side::B;
        }
    }
}
