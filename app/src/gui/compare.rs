//! Compare mode (time mode only): two selections on the plot, A ("before") and B
//! ("after"), combined with [`profile_model::diff`] on a worker thread and shown as a
//! diff flame graph (colors per node by how each node changed) with a table of
//! differences per function.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Instant;

use capture::QueryTime;
use egui::{
    Align, Align2, Color32, Context, FontId, Key, Layout, Rect, Role, ScrollArea, Sense, Ui,
    UiBuilder, WidgetInfo, pos2, vec2,
};
use profile_model::codec::DecodeOptions;
use profile_model::diff::{self, Change, DiffMode, DiffRow};
use profile_model::frames::{FrameId, FrameTable};
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{CallTree, NodeId, Profile, View, units};

use super::app::{FlintApp, SettingsKey};
use super::colors::{self, ColorMode};
use super::filters::SearchState;
use super::flame::{self, DiffValues, FlameInput, FlameParams, NodeStyle};
use super::loader::{self, Loaded, Settings, Source};

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

/// A selection's merged profile.
#[derive(Debug, Clone)]
pub struct Picked {
    /// The time selected.
    pub time: QueryTime,
    /// Its merged profile.
    pub profile: Arc<Profile>,
    /// How many profiles it merged.
    pub count: usize,
}

/// Everything the diff flame graph and table show.
#[derive(Debug)]
pub struct DiffLoaded {
    /// Frames of the combined profile at the chosen granularity.
    pub frames: FrameTable,
    /// Call tree of the combined profile.
    pub tree: CallTree,
    /// Totals of every node in A.
    pub totals_a: Vec<i64>,
    /// Totals of every node in B.
    pub totals_b: Vec<i64>,
    /// Table of differences, sorted by |delta|.
    pub rows: Vec<DiffRow>,
    /// Depth of the deepest node.
    pub max_depth: u32,
    /// Unit of both sides.
    pub unit: String,
    /// A's and B's own views (frames, call tree, totals) under the same settings.
    pub sides: [Option<Arc<Loaded>>; 2],
}

impl DiffLoaded {
    /// A's total.
    pub fn total_a(&self) -> i64 {
        self.totals_a.first().copied().unwrap_or(0)
    }

    /// B's total.
    pub fn total_b(&self) -> i64 {
        self.totals_b.first().copied().unwrap_or(0)
    }

    /// The values of both sides for drawing, in `mode`.
    pub fn values(&self, mode: DiffMode) -> DiffValues<'_> {
        DiffValues {
            a: &self.totals_a,
            b: &self.totals_b,
            total_a: self.total_a(),
            total_b: self.total_b(),
            mode,
        }
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

/// The stages of a comparison job, for the progress line.
pub const DIFF_STAGES: [&str; 4] = ["combining", "building frames", "aggregating", "diffing"];

/// A's or B's own view (the loader pipeline on the merged profile of one selection).
fn side_view(
    profile: &Arc<Profile>,
    sample_type: usize,
    name: &str,
    settings: &Settings,
    cancel: &AtomicBool,
) -> Result<Option<Arc<Loaded>>, String> {
    let source = Source::Profile {
        name: name.to_string(),
        path: None,
        profile: Arc::clone(profile),
    };
    let settings = Settings {
        sample_type: Some(sample_type),
        ..settings.clone()
    };
    let loaded = loader::compute(
        source,
        settings,
        DecodeOptions::default(),
        cancel,
        &mut |_| {},
    )?;
    Ok(loaded.map(Arc::from))
}

/// Combines A and B and builds the diff tree, totals and table, and A's and B's own
/// views (on worker threads of their own); `Ok(None)` when cancelled.
pub fn compute_diff(
    a: &Arc<Profile>,
    b: &Arc<Profile>,
    type_name: &str,
    settings: &Settings,
    cancel: &AtomicBool,
    stage: &dyn Fn(usize),
) -> Result<Option<Box<DiffLoaded>>, String> {
    let (at, bt) = side_types(a, b, type_name);
    let (diffed, side_a, side_b) = std::thread::scope(|s| {
        let side_a = s.spawn(|| side_view(a, at, "A", settings, cancel));
        let side_b = s.spawn(|| side_view(b, bt, "B", settings, cancel));
        let diffed = diff_only(a, b, (at, bt), settings, cancel, stage);
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        (diffed, join(side_a), join(side_b))
    });
    let (Some(mut diffed), Some(side_a), Some(side_b)) = (diffed?, side_a?, side_b?) else {
        return Ok(None);
    };
    diffed.sides = [Some(side_a), Some(side_b)];
    Ok(Some(diffed))
}

fn diff_only(
    a: &Profile,
    b: &Profile,
    (at, bt): (usize, usize),
    settings: &Settings,
    cancel: &AtomicBool,
    stage: &dyn Fn(usize),
) -> Result<Option<Box<DiffLoaded>>, String> {
    let cancelled = || cancel.load(Ordering::Relaxed);
    stage(0);
    let combined = diff::combine(a, at, b, bt).map_err(|e| format!("compare: {e}"))?;
    if cancelled() {
        return Ok(None);
    }
    stage(1);
    let view = View::new(&combined, &settings.options);
    if cancelled() {
        return Ok(None);
    }
    stage(2);
    let mut tree = view.call_tree(&combined);
    if settings.invert {
        tree = tree.inverted(&view.frames);
    }
    if cancelled() {
        return Ok(None);
    }
    stage(3);
    let totals_a = tree.totals(diff::A);
    let totals_b = tree.totals(diff::B);
    let rows = diff::diff_rows(&view, &combined);
    let max_depth = (0..tree.len() as u32)
        .map(|n| tree.depth(n))
        .max()
        .unwrap_or(0);
    let unit = combined
        .sample_types
        .get(diff::B)
        .map_or_else(String::new, |t| combined.str(t.unit).to_string());
    if cancelled() {
        return Ok(None);
    }
    Ok(Some(Box::new(DiffLoaded {
        frames: view.frames,
        tree,
        totals_a,
        totals_b,
        rows,
        max_depth,
        unit,
        sides: [None, None],
    })))
}

/// What a comparison is computed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffKey {
    a: u64,
    b: u64,
    type_name: String,
    settings: SettingsKey,
}

type DiffResult = Result<Option<Box<DiffLoaded>>, String>;

/// A comparison running on a worker thread.
pub struct DiffJob {
    key: DiffKey,
    started: Instant,
    stage: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    rx: Receiver<DiffResult>,
}

impl DiffJob {
    /// "Comparing A and B… (aggregating, 3/4, 0.4 s)".
    pub fn progress_text(&self) -> String {
        let stage = self.stage.load(Ordering::Relaxed);
        format!(
            "Comparing A and B… ({}, {}/{}, {:.1} s)",
            DIFF_STAGES.get(stage).copied().unwrap_or(""),
            stage + 1,
            DIFF_STAGES.len(),
            self.started.elapsed().as_secs_f32()
        )
    }
}

/// A sortable column of the diff table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffSort {
    /// Function name.
    Name,
    /// Value in A.
    A,
    /// Value in B.
    B,
    /// |delta| (the default).
    Delta,
    /// Signed delta (in % of A).
    DeltaPercent,
}

/// The row order of `rows` sorted by `sort`.
pub fn diff_order(
    rows: &[DiffRow],
    frames: &FrameTable,
    sort: DiffSort,
    descending: bool,
) -> Vec<usize> {
    let name = |r: &DiffRow| {
        frames
            .frames
            .get(r.frame as usize)
            .map_or("", |f| f.name.as_str())
    };
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&x, &y| {
        let (rx, ry) = (&rows[x], &rows[y]);
        let ord = match sort {
            DiffSort::Name => name(rx).cmp(name(ry)),
            DiffSort::A => rx.a.cmp(&ry.a),
            DiffSort::B => rx.b.cmp(&ry.b),
            DiffSort::Delta => rx.delta.unsigned_abs().cmp(&ry.delta.unsigned_abs()),
            DiffSort::DeltaPercent => rx.delta.cmp(&ry.delta),
        };
        let ord = if descending { ord.reverse() } else { ord };
        ord.then_with(|| name(rx).cmp(name(ry)))
    });
    order
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

/// The state of compare mode.
#[derive(Default)]
pub struct CompareState {
    /// Compare mode is on.
    pub enabled: bool,
    /// Which side the next plot selection sets.
    pub target: Side,
    /// Selection A, once its profile arrived.
    pub a: Option<Picked>,
    /// Selection B, once its profile arrived.
    pub b: Option<Picked>,
    generation: u64,
    a_generation: u64,
    b_generation: u64,
    /// Relative or absolute comparison.
    pub mode: DiffMode,
    /// Widths from A instead of B.
    pub widths_from_a: bool,
    /// The comparison shown.
    pub result: Option<Arc<DiffLoaded>>,
    result_key: Option<DiffKey>,
    result_generation: u64,
    /// The comparison being computed.
    pub job: Option<DiffJob>,
    /// The last comparison error.
    pub error: Option<String>,
    colors: Vec<Color32>,
    colors_key: Option<(u64, DiffMode, bool)>,
    /// The row (frame) selected in the diff table: outlined in the graph.
    pub selected: Option<FrameId>,
    /// Diff table sort column.
    pub sort: Option<DiffSort>,
    /// Diff table descending order.
    pub descending: bool,
    /// Diff table row order (indices into the result's rows).
    pub order: Vec<usize>,
    order_key: Option<(u64, DiffSort, bool)>,
    /// The rectangle under the pointer (last frame).
    pub hovered: Option<FlameRect>,
    /// Last canvas, parameters and rectangles of the diff graph (for tests).
    pub last: Option<(Rect, FlameParams, Vec<FlameRect>)>,
    /// Zooms of A's, B's and the diff flame graph ([`DIFF_GRAPH`]).
    pub zooms: [GraphZoom; 3],
    /// The rectangle under the pointer in A's or B's flame graph (last frame).
    pub side_hovered: Option<(Side, FlameRect)>,
    /// Last canvas, parameters and rectangles of A's and B's flame graphs (for tests).
    pub side_last: [Option<Drawn>; 2],
    side_colors: [Vec<Color32>; 2],
    side_colors_key: Option<(u64, bool, ColorMode)>,
    /// Search matches per frame of A, B and the diff (when searching).
    pub matches: [Option<Vec<bool>>; 3],
    matches_key: Option<(String, bool, u64)>,
}

impl CompareState {
    /// Stores a selection's profile for `side`; after A, the next selection is B.
    pub fn set(&mut self, side: Side, picked: Picked) {
        self.generation += 1;
        match side {
            Side::A => {
                self.a = Some(picked);
                self.a_generation = self.generation;
                self.target = Side::B;
            }
            Side::B => {
                self.b = Some(picked);
                self.b_generation = self.generation;
            }
        }
    }

    /// Forgets both selections and the comparison (another profile type was chosen).
    pub fn clear(&mut self) {
        if let Some(job) = self.job.take() {
            job.cancel.store(true, Ordering::Relaxed);
        }
        self.a = None;
        self.b = None;
        self.result = None;
        self.result_key = None;
        self.target = Side::A;
        self.hovered = None;
        self.last = None;
        self.selected = None;
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

/// "hovered: crypto/sha256.block — more in B (+0.38 s)".
pub fn diff_hover_text(res: &DiffLoaded, mode: DiffMode, h: &FlameRect) -> String {
    match h.kind {
        RectKind::Node(n) => {
            let values = res.values(mode);
            let at = |v: &[i64]| v.get(n as usize).copied().unwrap_or(0);
            format!(
                "hovered: {} — {} ({})",
                flame::node_name(&res.tree, &res.frames, n),
                flame::change_name(values.change(n)),
                flame::signed(at(&res.totals_b) - at(&res.totals_a), &res.unit)
            )
        }
        RectKind::Hidden { count, .. } => format!("hovered: {count} narrow frames"),
    }
}

impl FlintApp {
    fn diff_key(&self) -> Option<DiffKey> {
        let tl = self.timeline.as_ref()?;
        let c = &self.compare;
        c.a.as_ref()?;
        c.b.as_ref()?;
        Some(DiffKey {
            a: c.a_generation,
            b: c.b_generation,
            type_name: tl.types.get(tl.type_index)?.sample_type.clone(),
            settings: SettingsKey {
                sample_type: None,
                ..self.wanted_key()
            },
        })
    }

    /// Installs a finished comparison and starts one when the selections or the
    /// settings changed.
    pub(super) fn poll_compare(&mut self, ctx: &Context) {
        if let Some(job) = &self.compare.job {
            match job.rx.try_recv() {
                Err(TryRecvError::Empty) => {}
                result => {
                    let result =
                        result.unwrap_or_else(|_| Err("compare: the worker stopped".to_string()));
                    if let Some(job) = self.compare.job.take()
                        && !job.cancel.load(Ordering::Relaxed)
                    {
                        self.install_diff(job.key, result);
                    }
                }
            }
        }
        if !self.compare.enabled {
            return;
        }
        let Some(key) = self.diff_key() else {
            return;
        };
        let running = self.compare.job.as_ref().is_some_and(|j| j.key == key);
        if running || self.compare.result_key.as_ref() == Some(&key) {
            return;
        }
        let settings = match self.settings_for(&key.settings) {
            Ok(s) => s,
            Err(e) => {
                self.filter_error = Some(e);
                return;
            }
        };
        let (Some(a), Some(b)) = (&self.compare.a, &self.compare.b) else {
            return;
        };
        let (a, b) = (Arc::clone(&a.profile), Arc::clone(&b.profile));
        if let Some(old) = self.compare.job.take() {
            old.cancel.store(true, Ordering::Relaxed);
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let stage = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        let type_name = key.type_name.clone();
        let job = DiffJob {
            key,
            started: Instant::now(),
            stage: Arc::clone(&stage),
            cancel: Arc::clone(&cancel),
            rx,
        };
        let work = move || {
            let set = |s: usize| stage.store(s, Ordering::Relaxed);
            compute_diff(&a, &b, &type_name, &settings, &cancel, &set)
        };
        if self.sync_jobs {
            let result = work();
            self.install_diff(job.key, result);
        } else {
            let ctx = ctx.clone();
            std::thread::spawn(move || {
                let _ = tx.send(work());
                ctx.request_repaint();
            });
            self.compare.job = Some(job);
        }
    }

    fn install_diff(&mut self, key: DiffKey, result: DiffResult) {
        match result {
            Ok(Some(res)) => {
                let c = &mut self.compare;
                c.result = Some(Arc::from(res));
                c.result_key = Some(key);
                c.result_generation += 1;
                c.error = None;
                c.hovered = None;
                c.side_hovered = None;
                c.zooms = Default::default();
            }
            Ok(None) => {}
            Err(e) => {
                // Do not retry the same comparison forever.
                self.compare.result_key = Some(key);
                self.compare.error = Some(e);
            }
        }
    }

    /// The text of the frame hovered in the diff flame graph, or in A's or B's
    /// ("hovered: main.fib — 1.23 s (30.1%) in A"); also in the status bar.
    pub fn compare_hover_text(&self) -> Option<String> {
        let res = self.compare.result.as_ref()?;
        if let Some(h) = self.compare.hovered.as_ref() {
            return Some(diff_hover_text(res, self.compare.mode, h));
        }
        let (side, h) = self.compare.side_hovered.as_ref()?;
        let cur = res.sides[*side as usize].as_ref()?;
        let name = match side {
            Side::A => "A",
            Side::B => "B",
        };
        Some(format!(
            "{} in {name}",
            super::status_bar::hovered_text(cur, h)
        ))
    }

    /// "A: 12:39:12, 1 profile, 2.26 s": the caption of A's or B's flame graph.
    pub fn side_caption(&self, side: Side) -> String {
        let (name, picked) = match side {
            Side::A => ("A", &self.compare.a),
            Side::B => ("B", &self.compare.b),
        };
        let Some(p) = picked else {
            return format!("{name}: not selected");
        };
        let when = self.timeline.as_ref().map_or_else(String::new, |tl| {
            super::timeline::describe_time(p.time, tl.step_nanos)
        });
        let total = self
            .compare
            .result
            .as_ref()
            .and_then(|r| r.sides[side as usize].as_ref())
            .map_or_else(String::new, |cur| {
                format!(
                    ", {}",
                    units::readable(cur.totals.first().copied().unwrap_or(0), cur.unit())
                )
            });
        format!(
            "{name}: {when}, {} profile{}{total}",
            p.count,
            if p.count == 1 { "" } else { "s" }
        )
    }

    /// Search matches of the frames of A, B and the diff, for the search box's text.
    fn refresh_compare_search(&mut self, res: &DiffLoaded) {
        let key = (
            self.search.text.clone(),
            self.search.regex,
            self.compare.result_generation,
        );
        if self.compare.matches_key.as_ref() == Some(&key) {
            return;
        }
        let tables = [
            res.sides[0].as_ref().map(|c| &c.frames),
            res.sides[1].as_ref().map(|c| &c.frames),
            Some(&res.frames),
        ];
        self.compare.matches = match SearchState::pattern(&self.search.text, self.search.regex) {
            Ok(Some(re)) => {
                self.search.error = None;
                tables.map(|t| t.map(|f| CallTree::frame_matches(f, &re)))
            }
            Ok(None) => {
                self.search.error = None;
                [None, None, None]
            }
            Err(e) => {
                self.search.error = Some(e);
                [None, None, None]
            }
        };
        self.compare.matches_key = Some(key);
    }

    /// A's or B's flame graph with its caption, Reset and Back, in `ui`.
    fn side_graph(&mut self, ui: &mut Ui, res: &DiffLoaded, side: Side) {
        let i = side as usize;
        let caption = self.side_caption(side);
        let Some(cur) = res.sides[i].clone() else {
            ui.label(caption);
            return;
        };
        let z = &mut self.compare.zooms[i];
        if z.zoom as usize >= cur.tree.len() {
            z.reset();
        }
        ui.horizontal(|ui| {
            ui.strong(caption);
            let z = &mut self.compare.zooms[i];
            if ui
                .add_enabled(z.zoom != CallTree::ROOT, egui::Button::new("Reset").small())
                .on_hover_text("show everything (Esc)")
                .clicked()
            {
                z.reset();
            }
            if ui
                .add_enabled(
                    !z.history.is_empty() || z.zoom != CallTree::ROOT,
                    egui::Button::new("Back").small(),
                )
                .on_hover_text("previous zoom")
                .clicked()
            {
                z.back(&cur.tree);
            }
            if z.zoom != CallTree::ROOT {
                let name = flame::node_name(&cur.tree, &cur.frames, z.zoom);
                ui.add(egui::Label::new(format!("› {name}")).truncate());
            }
        });
        if cur.totals.first().copied().unwrap_or(0) <= 0 {
            ui.centered_and_justified(|ui| ui.label("no samples match the filters"));
            return;
        }
        let input = FlameInput {
            tree: &cur.tree,
            frames: &cur.frames,
            totals: &cur.totals,
            colors: &self.compare.side_colors[i],
            matches: self.compare.matches[i].as_deref(),
            selected: None,
            unit: cur.unit(),
        };
        let label = match side {
            Side::A => "flame graph A",
            Side::B => "flame graph B",
        };
        let out = flame::show_labeled(
            ui,
            &input,
            &NodeStyle::default(),
            label,
            self.compare.zooms[i].zoom,
            self.flame.flipped,
            cur.max_depth,
        );
        if let Some(h) = out.hovered {
            self.compare.side_hovered = Some((side, h));
        }
        if let Some(clicked) = out.clicked
            && let RectKind::Node(node) = clicked.kind
        {
            self.compare.zooms[i].zoom_to(node);
        }
        self.compare.side_last[i] = Some((out.canvas, out.params, out.rects));
    }

    /// "A: 12:01:00 (1 profile, 3 s) · B: …", for the line above the diff graph.
    pub fn compare_sides_text(&self) -> String {
        let tl = self.timeline.as_ref();
        let side = |name: &str, p: &Option<Picked>, total: Option<i64>, unit: &str| match p {
            None => format!("{name}: not selected"),
            Some(p) => {
                let when = tl.map_or_else(String::new, |tl| {
                    super::timeline::describe_time(p.time, tl.step_nanos)
                });
                let total =
                    total.map_or_else(String::new, |t| format!(", {}", units::readable(t, unit)));
                format!(
                    "{name}: {when} ({} profile{}{total})",
                    p.count,
                    if p.count == 1 { "" } else { "s" }
                )
            }
        };
        let res = self.compare.result.as_deref();
        let unit = res.map_or("", |r| r.unit.as_str());
        format!(
            "{} · {}",
            side("A", &self.compare.a, res.map(DiffLoaded::total_a), unit),
            side("B", &self.compare.b, res.map(DiffLoaded::total_b), unit)
        )
    }

    /// The central panel in compare mode: options, legend and the diff flame graph.
    pub(super) fn compare_central(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.radio_value(&mut self.compare.mode, DiffMode::Relative, "relative")
                .on_hover_text("each side as a share of its own total");
            ui.radio_value(&mut self.compare.mode, DiffMode::Absolute, "absolute")
                .on_hover_text("raw values: a longer selection counts more");
            ui.separator();
            ui.checkbox(&mut self.compare.widths_from_a, "widths from A")
                .on_hover_text("size frames by A (frames only in A become visible)");
            ui.separator();
            ui.label(self.compare_sides_text());
        });
        let Some(res) = self.compare.result.clone() else {
            ui.label(legend_text(self.compare.mode));
            ui.centered_and_justified(|ui| {
                if let Some(job) = &self.compare.job {
                    ui.label(job.progress_text());
                } else if let Some(e) = &self.compare.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                } else {
                    let next = match self.compare.target {
                        Side::A => "A (before)",
                        Side::B => "B (after)",
                    };
                    ui.label(format!("drag a range on the plot to select {next}"));
                }
            });
            return;
        };
        let dark = ui.visuals().dark_mode;
        self.refresh_compare_search(&res);
        if !ui.ctx().egui_wants_keyboard_input() {
            let (escape, back) =
                ui.input(|i| (i.key_pressed(Key::Escape), i.key_pressed(Key::Backspace)));
            if escape {
                for z in &mut self.compare.zooms {
                    z.reset();
                }
            }
            if back {
                self.compare.zooms[DIFF_GRAPH].back(&res.tree);
            }
        }
        let side_key = (self.compare.result_generation, dark, self.flame.color_mode);
        if self.compare.side_colors_key != Some(side_key) {
            for (colors, side) in self.compare.side_colors.iter_mut().zip(&res.sides) {
                *colors = side.as_ref().map_or_else(Vec::new, |cur| {
                    colors::frame_colors(&cur.frames.frames, self.flame.color_mode, dark)
                });
            }
            self.compare.side_colors_key = Some(side_key);
        }
        // A and B side by side on the top 40%, the diff below.
        self.compare.side_hovered = None;
        let full = ui.available_rect_before_wrap();
        let gap = 10.0;
        let top_height = (full.height() * 0.4).round().max(80.0);
        let half = ((full.width() - gap) / 2.0).max(0.0);
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
            self.side_graph(&mut child, &res, side);
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
        ui.separator();
        self.diff_graph(ui, &res);
    }

    /// The diff flame graph under its legend, Reset and Back.
    fn diff_graph(&mut self, ui: &mut Ui, res: &DiffLoaded) {
        let dark = ui.visuals().dark_mode;
        let mode = self.compare.mode;
        let values = res.values(mode);
        let colors_key = (self.compare.result_generation, mode, dark);
        if self.compare.colors_key != Some(colors_key) {
            self.compare.colors = node_colors(&values, res.tree.len(), dark);
            self.compare.colors_key = Some(colors_key);
        }
        let z = &mut self.compare.zooms[DIFF_GRAPH];
        if z.zoom as usize >= res.tree.len() {
            z.reset();
        }
        ui.label(legend_text(mode));
        ui.horizontal(|ui| {
            ui.strong("diff (B − A)");
            let z = &mut self.compare.zooms[DIFF_GRAPH];
            if ui
                .add_enabled(z.zoom != CallTree::ROOT, egui::Button::new("Reset"))
                .on_hover_text("show everything (Esc)")
                .clicked()
            {
                z.reset();
            }
            if ui
                .add_enabled(
                    !z.history.is_empty() || z.zoom != CallTree::ROOT,
                    egui::Button::new("Back"),
                )
                .on_hover_text("previous zoom (Backspace)")
                .clicked()
            {
                z.back(&res.tree);
            }
            if z.zoom != CallTree::ROOT {
                ui.label(format!(
                    "zoom: {}",
                    flame::node_name(&res.tree, &res.frames, z.zoom)
                ));
            }
        });
        let totals = if self.compare.widths_from_a {
            &res.totals_a
        } else {
            &res.totals_b
        };
        if totals.first().copied().unwrap_or(0) <= 0 {
            ui.centered_and_justified(|ui| {
                ui.label("no samples on this side: try the other width")
            });
            return;
        }
        let input = FlameInput {
            tree: &res.tree,
            frames: &res.frames,
            totals,
            colors: &[],
            matches: self.compare.matches[DIFF_GRAPH].as_deref(),
            selected: self.compare.selected,
            unit: &res.unit,
        };
        let nodes = NodeStyle {
            node_colors: Some(&self.compare.colors),
            diff: Some(values),
        };
        let out = flame::show_labeled(
            ui,
            &input,
            &nodes,
            "diff flame graph",
            self.compare.zooms[DIFF_GRAPH].zoom,
            self.flame.flipped,
            res.max_depth,
        );
        self.compare.hovered = out.hovered;
        if let Some(clicked) = out.clicked
            && let RectKind::Node(node) = clicked.kind
        {
            self.compare.zooms[DIFF_GRAPH].zoom_to(node);
        }
        self.compare.last = Some((out.canvas, out.params, out.rects));
    }

    /// The diff table (instead of the top table in compare mode).
    pub(super) fn diff_panel(&mut self, ui: &mut Ui) {
        // Keep the panel's width: a resizable panel shrinks to its content.
        ui.set_min_width(ui.available_width());
        let Some(res) = self.compare.result.clone() else {
            ui.strong("Differences");
            ui.weak("select A and B on the plot");
            return;
        };
        let (sort, descending) = self.compare.sort_column();
        let key = (self.compare.result_generation, sort, descending);
        if self.compare.order_key != Some(key) {
            self.compare.order = diff_order(&res.rows, &res.frames, sort, descending);
            self.compare.order_key = Some(key);
        }
        ui.horizontal(|ui| {
            ui.strong("Differences");
            ui.weak(format!(
                "{} functions, B − A",
                units::thousands(res.rows.len() as u64)
            ));
        });
        let full = ui.available_width();
        const VALUE: f32 = 70.0;
        const PERCENT: f32 = 62.0;
        let name_width = (full - 3.0 * VALUE - PERCENT).max(80.0);
        let widths = [name_width, VALUE, VALUE, VALUE, PERCENT];
        let cells = |r: Rect| {
            let mut x = r.left();
            widths.map(|w| {
                let c = Rect::from_min_max(pos2(x, r.top()), pos2(x + w, r.bottom()));
                x += w;
                c
            })
        };
        let (header, _) = ui.allocate_exact_size(vec2(full, 20.0), Sense::hover());
        let titles = [
            ("function", DiffSort::Name),
            ("A", DiffSort::A),
            ("B", DiffSort::B),
            ("delta", DiffSort::Delta),
            ("delta %", DiffSort::DeltaPercent),
        ];
        for (i, (cell, (title, column))) in cells(header).into_iter().zip(titles).enumerate() {
            let sorted = (sort == column).then_some(descending);
            let response =
                super::top_table::sort_header(ui, cell, "diff header", title, i > 0, sorted);
            let response = response.on_hover_text(match column {
                DiffSort::Delta => "sort by |B − A|",
                DiffSort::DeltaPercent => "sort by B − A, in % of A's total",
                _ => "sort by this column",
            });
            if response.clicked() {
                if sort == column {
                    self.compare.descending = !descending;
                } else {
                    self.compare.descending = column != DiffSort::Name;
                }
                self.compare.sort = Some(column);
            }
        }
        let total_a = res.total_a();
        let mode = self.compare.mode;
        let mut clicked = None;
        let spacing = ui.spacing().item_spacing.y;
        ui.spacing_mut().item_spacing.y = 0.0;
        ScrollArea::vertical()
            .id_salt("diff table")
            .auto_shrink([false, false])
            .show_rows(ui, 18.0, self.compare.order.len(), |ui, range| {
                let font = FontId::proportional(12.5);
                let dark = ui.visuals().dark_mode;
                for i in range {
                    let Some(row) = self.compare.order.get(i).and_then(|&r| res.rows.get(r)) else {
                        continue;
                    };
                    let name = res
                        .frames
                        .frames
                        .get(row.frame as usize)
                        .map_or("?", |f| f.name.as_str());
                    let (rect, response) = ui.allocate_exact_size(vec2(full, 18.0), Sense::click());
                    response.widget_info(|| WidgetInfo::labeled(Role::Row, true, name));
                    let painter = ui.painter();
                    if self.compare.selected == Some(row.frame) {
                        painter.rect_filled(rect, 0.0, ui.visuals().selection.bg_fill);
                    } else if response.hovered() {
                        painter.rect_filled(rect, 0.0, ui.visuals().widgets.hovered.weak_bg_fill);
                    } else if i % 2 == 1 {
                        painter.rect_filled(rect, 0.0, ui.visuals().faint_bg_color);
                    }
                    let change = diff::classify(row.a, row.b, total_a, res.total_b(), mode);
                    let c = cells(rect);
                    // A swatch of the row's class, then the name.
                    let swatch = Rect::from_center_size(
                        pos2(c[0].left() + 7.0, c[0].center().y),
                        vec2(8.0, 8.0),
                    );
                    painter.rect_filled(swatch, 1.0, diff_color(change, dark));
                    let text = ui.visuals().text_color();
                    painter.with_clip_rect(c[0].shrink2(vec2(2.0, 0.0))).text(
                        pos2(c[0].left() + 15.0, c[0].center().y),
                        Align2::LEFT_CENTER,
                        name,
                        font.clone(),
                        text,
                    );
                    let values = [
                        units::readable(row.a, &res.unit),
                        units::readable(row.b, &res.unit),
                        flame::signed(row.delta, &res.unit),
                        format!("{:+.2}%", diff::delta_percent(row, total_a)),
                    ];
                    for (cell, value) in c[1..].iter().zip(values) {
                        painter.with_clip_rect(*cell).text(
                            pos2(cell.right() - 4.0, cell.center().y),
                            Align2::RIGHT_CENTER,
                            value,
                            font.clone(),
                            text,
                        );
                    }
                    let response = response.on_hover_text_at_pointer(format!(
                        "{name}\n{}",
                        flame::change_name(change)
                    ));
                    if response.clicked() {
                        clicked = Some(row.frame);
                    }
                }
            });
        ui.spacing_mut().item_spacing.y = spacing;
        if let Some(frame) = clicked {
            self.compare.selected = if self.compare.selected == Some(frame) {
                None
            } else {
                Some(frame)
            };
        }
    }
}
