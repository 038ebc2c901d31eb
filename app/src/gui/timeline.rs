//! Time mode: profiles over time from a [`ProfileSource`] (a directory indexed by time,
//! or a server), a plot of its series, and selections on the plot (a click: the
//! profiles of one point; a drag: every profile of a range, merged) whose profile goes
//! through the ordinary pipeline. Indexing runs on a worker thread, queries on a small
//! tokio runtime owned by the app; results come back over a channel, so the window
//! never waits for the disk or the network.
//!
//! This module holds time mode's state and the conversions between times and plot
//! positions; the background work is in [`super::time_jobs`], the plot panel in
//! [`super::plot`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Instant;

use capture::{
    Matcher, ProfileSource, ProfileType, Progress, QueryTime, Selector, Series, SourceError,
    TimeRange,
};

use super::compare::Side;

use super::plot::{DrawnLine, drawn_points};
use super::selector_bar::{SelectorBar, SumBy};

/// Series drawn unless "show all" is ticked.
pub const MAX_SERIES: usize = 20;
/// The message shown when a selection holds no profile.
pub const NO_DATA: &str = "no data for this selection and range";
/// What the plot says when its folder or server could not be opened (the window's
/// message says why).
pub const NOT_OPENED: &str = "nothing to plot: opening failed (the message above says why)";
/// Default height of the plot panel (points).
pub const PANEL_HEIGHT: f32 = 290.0;
/// Smallest height of the plot panel (points).
pub const PANEL_MIN_HEIGHT: f32 = 120.0;

/// Where time mode's profiles come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A directory of profile files.
    Dir(PathBuf),
    /// A server, by URL (`grpc://host:7070`).
    Server(String),
    /// This machine, captured live.
    Capture,
}

impl Origin {
    /// How the top bar names it: the directory's name, or the URL.
    pub fn name(&self) -> String {
        match self {
            Origin::Dir(dir) => dir.file_name().map_or_else(
                || dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            Origin::Server(url) => url.clone(),
            Origin::Capture => "local capture".to_string(),
        }
    }
}

/// A source ready to plot: what opening it found out.
pub struct Opened {
    /// The source.
    pub source: Arc<dyn ProfileSource>,
    /// The time span to show first.
    pub span: TimeRange,
    /// Its profile types.
    pub types: Vec<ProfileType>,
    /// The time span of each of `types` (a folder's or a store's), in their order;
    /// empty when the source keeps no such thing (a server, a capture).
    pub type_spans: Vec<TimeRange>,
    /// What opening reported, a line each: files skipped, or a store's records
    /// repaired or skipped.
    pub warnings: Vec<String>,
    /// How many profiles there are, when known (files).
    pub profiles: Option<usize>,
}

/// What the background work sends back.
pub enum TimeMsg {
    /// The directory was indexed, or the server answered.
    Indexed(Result<Opened, String>),
    /// The series of a query: (its generation, the label names of the plotted type,
    /// result).
    Series(u64, Vec<String>, Result<Vec<Series>, SourceError>),
    /// The values of a label (for the matcher autocomplete).
    Values(String, Vec<String>),
    /// News from a live capture.
    Live(super::live::LiveMsg),
    /// A selection's merged profile: the number of its [`Query`], the side it sets in
    /// compare mode and that side's matchers.
    Selected(
        u64,
        QueryTime,
        Option<(Side, Vec<Matcher>)>,
        Result<Selected, SourceError>,
    ),
}

/// A selection query under way: what was selected, for which side, and its progress.
#[derive(Debug, Clone)]
pub struct Query {
    /// Its number: an answer is taken only while its query is still here (a query
    /// replaced by a newer one for the same side is dropped, and so is its answer).
    pub id: u64,
    /// The compare side it sets, `None` outside compare mode.
    pub side: Option<Side>,
    /// The time selected.
    pub time: QueryTime,
    /// Its progress, and the way to cancel it.
    pub progress: Progress,
}

impl Query {
    /// "merging 2/25 profiles", or "waiting" while the queries before it run.
    pub fn progress_text(&self) -> String {
        match self.progress.get() {
            (0, 0) => "waiting".to_string(),
            (done, total) => format!("merging {done}/{total} profiles"),
        }
    }
}

/// What a selection's query answered.
#[derive(Debug)]
pub struct Selected {
    /// The profiles merged.
    pub profile: Box<profile_model::Profile>,
    /// How many profiles were merged.
    pub count: usize,
    /// How long reading and merging them took.
    pub took: std::time::Duration,
    /// The profiles left out, `path: why` (gone or broken since they were indexed).
    pub skipped: Vec<String>,
}

/// One series ready to draw: its name, total and points (seconds, value per second).
#[derive(Debug, Clone)]
pub struct PlotSeries {
    /// "comm=foo", or "total".
    pub name: String,
    /// Its labels (those summed by).
    pub labels: Vec<(String, String)>,
    /// Sum of its values (for ordering).
    pub total: i64,
    /// (time in seconds since the epoch, value per second in display units).
    pub points: Vec<[f64; 2]>,
    /// Where its line breaks: the index of each point that follows a gap in the data
    /// ([`super::plot::gap_starts`]).
    pub breaks: Vec<usize>,
    /// The points averaged in runs of [`super::plot::COARSE`]
    /// ([`super::plot::coarse_points`]): reduced instead of `points` when a view holds
    /// many points per pixel column.
    pub coarse: Vec<[f64; 2]>,
    /// Where the line of `coarse` breaks: the index of each run that follows a gap.
    pub coarse_breaks: Vec<usize>,
}

impl PlotSeries {
    /// A series of `points` (sorted by time), its gaps found.
    pub fn new(
        name: String,
        labels: Vec<(String, String)>,
        total: i64,
        points: Vec<[f64; 2]>,
    ) -> Self {
        let breaks = super::plot::gap_starts(&points);
        let (coarse, coarse_breaks) = super::plot::coarse_points(&points, &breaks);
        Self {
            breaks,
            coarse,
            coarse_breaks,
            name,
            labels,
            total,
            points,
        }
    }
}

/// How to select profiles, said where the flame graph goes until something is selected.
pub const CLICK_HINT: &str = "click a point or drag a range on the plot to select profiles";

/// What a reload of a folder keeps of the time mode it replaces
/// ([`super::app::FlintApp::reload_dir`]): the selector, how series are summed, the
/// type plotted, the legend, the view and the selection shown.
#[derive(Debug, Clone)]
pub struct Kept {
    matchers: Vec<Matcher>,
    sum_by: SumBy,
    profile_type: Option<ProfileType>,
    hidden: std::collections::BTreeSet<String>,
    show_all: bool,
    /// The view's bounds; `None` when it showed everything (the whole new span then).
    view: Option<(f64, f64)>,
    selection: Option<QueryTime>,
    selection_series: Vec<Matcher>,
    selection_profiles: usize,
    selection_took: Option<std::time::Duration>,
}

/// The state of time mode.
pub struct Timeline {
    /// Where the profiles come from.
    pub origin: Origin,
    /// The source, once opened.
    pub source: Option<Arc<dyn ProfileSource>>,
    /// How many profiles there are, when known (files).
    pub profiles: Option<usize>,
    /// Whether the source grows live (a capture of this machine).
    pub live: bool,
    /// The selection made by following the latest interval of a live capture (a
    /// selection of the user's stops the following).
    pub live_selection: Option<QueryTime>,
    /// Values of each label name asked for so far (the autocomplete's).
    pub(super) values: HashMap<String, Vec<String>>,
    /// When the server was last found unavailable (retried a little later).
    pub unavailable_since: Option<Instant>,
    /// What opening reported, a line each: files skipped, or a store's records
    /// repaired or skipped.
    pub warnings: Vec<String>,
    /// Profile types with data.
    pub types: Vec<ProfileType>,
    /// The type plotted.
    pub type_index: usize,
    /// Time span of the profiles shown: of the plotted type's, where the source tells
    /// each type's own (`type_spans`), else of all.
    pub span: TimeRange,
    /// The time span of each of `types`, in their order (see [`Opened::type_spans`]).
    type_spans: Vec<TimeRange>,
    /// Step of the series query.
    pub step_nanos: i64,
    /// The view the series were last asked for at its resolution, after a zoom; `None`
    /// while they cover the whole span ([`Timeline::series_request`]).
    pub zoomed: Option<TimeRange>,
    /// What the series asked for last cover.
    pub series_covered: TimeRange,
    /// The visible x bounds (seconds) and when they last changed, and whether the
    /// series were checked against them since ([`Timeline::view_moved`]).
    view_seen: Option<((f64, f64), Instant, bool)>,
    /// Series of the plotted type, largest first; replaced through [`Timeline::set_series`].
    pub series: Vec<PlotSeries>,
    /// Bumped whenever `series` is replaced, so the drawn lines are recomputed.
    series_version: u64,
    /// The lines last drawn and what they were computed for, reused while neither the
    /// series nor the visible range change (a frame then only draws).
    drawn: Option<(DrawnKey, Vec<DrawnLine>)>,
    /// Draw every series, not only the largest [`MAX_SERIES`].
    pub show_all: bool,
    /// The series switched off in the legend, by name.
    pub hidden: std::collections::BTreeSet<String>,
    /// The legend entry under the pointer last frame (its line is drawn highlighted).
    pub legend_hovered: Option<usize>,
    /// The selection shown (set when its profile arrived).
    pub selection: Option<QueryTime>,
    /// The labels of the series whose point was clicked, as matchers added to the
    /// selector for that selection only (empty for a range, or a click away from every
    /// line): a point shows the profile of its series, as in Parca.
    pub selection_series: Vec<Matcher>,
    /// Profiles merged into the selection.
    pub selection_profiles: usize,
    /// How long reading and merging the selection's profiles took (before its view
    /// was built); shown in the status bar.
    pub selection_took: Option<std::time::Duration>,
    /// Where a primary drag started (seconds).
    pub drag_start: Option<f64>,
    /// Where the pointer is during a drag (seconds).
    pub drag_now: Option<f64>,
    /// Plot x bounds to apply on the next frame (a time preset).
    pub pending_bounds: Option<(f64, f64)>,
    /// The typed time range (*range…* beside the presets).
    pub range: RangeFields,
    /// Visible x bounds and plot width of the last frame (for bucketing).
    pub last_view: Option<(f64, f64, f32)>,
    /// Indexing in progress.
    pub indexing: Option<Progress>,
    /// When opening (indexing a folder, asking a server) began.
    pub opening_started: Instant,
    /// How long opening took, once done: shown in the status bar until a selection's
    /// merge is.
    pub opening_took: Option<std::time::Duration>,
    /// The selection queries under way, in the order asked (they run one after
    /// another): at most one outside compare mode, and one per side in it.
    pub queries: Vec<Query>,
    /// The number of the next [`Query`].
    pub(super) next_query: u64,
    /// Series query in progress.
    pub loading_series: bool,
    /// Notice shown above the plot ("no data …", errors).
    pub notice: Option<String>,
    /// Why the source could not be opened (shown where the flame graph goes).
    pub failed: Option<String>,
    /// Label matchers every series and selection must satisfy.
    pub matchers: Vec<Matcher>,
    /// How the series are summed.
    pub sum_by: SumBy,
    /// The selector row's state.
    pub bar: SelectorBar,
    /// Height of the plot drawn in the last frame (points).
    pub plot_height: f32,
    /// The plot's transform in the last frame (plot values ↔ screen).
    pub last_transform: Option<egui_plot::PlotTransform>,
    /// What the plotted values are (set with the series).
    pub scale: super::plot::PlotScale,
    /// What to keep of the time mode this one reloads, until its index is in.
    pub kept: Option<Kept>,
    /// Generation of the series query (older answers are dropped).
    pub(super) series_gen: u64,
    pub(super) tx: Sender<TimeMsg>,
    pub(super) rx: Receiver<TimeMsg>,
}

/// What a set of drawn lines was computed for: series version, visible range, width in
/// points, number of series drawn.
type DrawnKey = (u64, u64, u64, u32, usize);

/// How long the plot's view must stand still before the series are asked for again at
/// its resolution (a zoom with the wheel changes it every frame).
pub const VIEW_SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// The margin either side of the data in the plot's whole view, as a share of its span.
pub const MARGIN: f64 = 0.03;

impl Timeline {
    /// Cancels the listing and the query under way, if any.
    pub fn cancel_jobs(&self) {
        let queries = self.queries.iter().map(|q| &q.progress);
        for p in self.indexing.iter().chain(queries) {
            p.cancel();
        }
    }

    /// Another profile type is shown: its series are asked for again, and what was
    /// selected (or is being merged: those queries are cancelled and their answers
    /// dropped) is forgotten.
    pub fn type_changed(&mut self) {
        if self.fit_span_to_type() {
            self.pending_bounds = Some(self.whole_bounds());
        }
        self.set_series(Vec::new());
        self.selection = None;
        self.selection_series.clear();
        self.forget_queries(|_| true);
    }

    /// Cancels the queries under way that `which` picks and forgets them: their
    /// answers are dropped when they come.
    pub fn forget_queries(&mut self, which: impl Fn(&Query) -> bool) {
        self.queries.retain(|q| {
            let forgotten = which(q);
            if forgotten {
                q.progress.cancel();
            }
            !forgotten
        });
    }

    /// Whether a selection query is under way.
    pub fn querying(&self) -> bool {
        !self.queries.is_empty()
    }

    /// The query under way for `side` (`None`: the selection outside compare mode).
    pub fn query_of(&self, side: Option<Side>) -> Option<&Query> {
        self.queries.iter().find(|q| q.side == side)
    }

    /// Replaces the plotted series.
    pub fn set_series(&mut self, series: Vec<PlotSeries>) {
        self.series = series;
        self.series_version += 1;
    }

    /// The points of the first `shown` series as drawn on a plot `width` points wide
    /// showing `x0..x1`: computed once, then reused until the series or the view change.
    pub fn drawn_lines(&mut self, shown: usize, x0: f64, x1: f64, width: f32) -> &[DrawnLine] {
        let key = (
            self.series_version,
            x0.to_bits(),
            x1.to_bits(),
            width.to_bits(),
            shown,
        );
        if self.drawn.as_ref().is_none_or(|(k, _)| *k != key) {
            let lines = drawn_points(&self.series[..shown.min(self.series.len())], x0, x1, width);
            self.drawn = Some((key, lines));
        }
        self.drawn
            .as_ref()
            .map_or(&[], |(_, lines)| lines.as_slice())
    }

    pub(super) fn new(origin: Origin) -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            origin,
            source: None,
            opening_started: Instant::now(),
            opening_took: None,
            profiles: None,
            live: false,
            live_selection: None,
            values: HashMap::new(),
            unavailable_since: None,
            warnings: Vec::new(),
            types: Vec::new(),
            type_index: 0,
            span: TimeRange {
                start_nanos: 0,
                end_nanos: 1,
            },
            type_spans: Vec::new(),
            step_nanos: 1_000_000_000,
            zoomed: None,
            series_covered: TimeRange {
                start_nanos: 0,
                end_nanos: 1,
            },
            view_seen: None,
            series: Vec::new(),
            series_version: 0,
            drawn: None,
            show_all: false,
            hidden: std::collections::BTreeSet::new(),
            legend_hovered: None,
            selection: None,
            selection_series: Vec::new(),
            selection_profiles: 0,
            selection_took: None,
            drag_start: None,
            drag_now: None,
            pending_bounds: None,
            range: RangeFields::default(),
            last_view: None,
            indexing: None,
            queries: Vec::new(),
            next_query: 0,
            loading_series: false,
            notice: None,
            failed: None,
            matchers: Vec::new(),
            sum_by: SumBy::Auto,
            bar: SelectorBar::default(),
            plot_height: 0.0,
            last_transform: None,
            scale: super::plot::PlotScale::Cores,
            kept: None,
            series_gen: 0,
            tx,
            rx,
        }
    }

    /// What a reload keeps of this time mode ([`Kept`]).
    pub fn kept(&self) -> Kept {
        let whole = self.whole_bounds();
        let view = self
            .last_view
            .map(|(a, b, _)| (a, b))
            .filter(|&(a, b)| a > whole.0 + 1e-6 || b < whole.1 - 1e-6);
        Kept {
            matchers: self.matchers.clone(),
            sum_by: self.sum_by.clone(),
            profile_type: self.types.get(self.type_index).cloned(),
            hidden: self.hidden.clone(),
            show_all: self.show_all,
            view,
            selection: self.selection,
            selection_series: self.selection_series.clone(),
            selection_profiles: self.selection_profiles,
            selection_took: self.selection_took,
        }
    }

    /// Takes back what a reload kept (once the new index, its span and types, is in):
    /// the type plotted by name where it is still there, and the view unless it showed
    /// everything.
    pub fn restore(&mut self, kept: Kept) {
        if let Some(i) = kept
            .profile_type
            .and_then(|t| self.types.iter().position(|x| *x == t))
        {
            self.type_index = i;
        }
        self.fit_span_to_type();
        self.pending_bounds = Some(kept.view.unwrap_or_else(|| self.whole_bounds()));
        self.matchers = kept.matchers;
        self.sum_by = kept.sum_by;
        self.hidden = kept.hidden;
        self.show_all = kept.show_all;
        self.selection = kept.selection;
        self.selection_series = kept.selection_series;
        self.selection_profiles = kept.selection_profiles;
        self.selection_took = kept.selection_took;
        self.bar.text = self.selector().map(|s| s.to_string()).unwrap_or_default();
    }

    /// The range and step to ask the series for: the whole span at the plot's
    /// resolution or, after a zoom, the view's resolution over the view widened by its
    /// own length on each side (so that panning that far needs nothing new).
    pub fn series_request(&self) -> (TimeRange, i64) {
        match self.zoomed {
            Some(view) => {
                let len = view.end_nanos.saturating_sub(view.start_nanos);
                let widened = TimeRange {
                    start_nanos: view.start_nanos.saturating_sub(len),
                    end_nanos: view.end_nanos.saturating_add(len),
                };
                (clamp_to(widened, self.span), self.step_for(view))
            }
            None => (self.span, self.step_for(self.span)),
        }
    }

    /// The series step that shows `range` at the plot's resolution ([`series_step`]).
    fn step_for(&self, range: TimeRange) -> i64 {
        series_step(
            range,
            self.plot_width(),
            matches!(self.origin, Origin::Server(_)),
        )
    }

    /// Takes the plot's visible x bounds (seconds) at `now`: true once they have stood
    /// still for [`VIEW_SETTLE`] and the series must be asked for again to suit them
    /// (the view leaves what the series cover, or wants a step 1.5 times finer or
    /// coarser than theirs), with [`Timeline::zoomed`] set for that request.
    pub fn view_moved(&mut self, view: (f64, f64), now: Instant) -> bool {
        match &mut self.view_seen {
            Some((seen, since, checked)) if *seen == view => {
                if *checked || now.duration_since(*since) < VIEW_SETTLE {
                    return false;
                }
                *checked = true;
            }
            _ => {
                self.view_seen = Some((view, now, false));
                return false;
            }
        }
        let visible = clamp_to(drag_to_range(view.0, view.1), self.span);
        if visible.end_nanos <= visible.start_nanos {
            return false;
        }
        let wanted = self.step_for(visible);
        let ratio = wanted as f64 / self.step_nanos.max(1) as f64;
        let c = self.series_covered;
        let outside = visible.start_nanos < c.start_nanos || visible.end_nanos > c.end_nanos;
        if !outside && (1.0 / 1.5..=1.5).contains(&ratio) {
            return false;
        }
        self.zoomed = (visible != self.span).then_some(visible);
        true
    }

    /// Whether the view changed and has not yet been checked ([`Timeline::view_moved`]):
    /// the window then repaints once it has stood still long enough.
    pub fn view_settling(&self) -> bool {
        self.view_seen.is_some_and(|(_, _, checked)| !checked)
    }

    /// The matchers a selection is asked with: the selector's, and the labels of the
    /// series whose point was clicked ([`Timeline::selection_series`]).
    pub fn selection_matchers(&self) -> Vec<Matcher> {
        let mut matchers = self.matchers.clone();
        for m in &self.selection_series {
            if !matchers.contains(m) {
                matchers.push(m.clone());
            }
        }
        matchers
    }

    /// The selector of the plotted type and its matchers.
    pub fn selector(&self) -> Option<Selector> {
        self.types.get(self.type_index).map(|t| Selector {
            profile_type: t.clone(),
            matchers: self.matchers.clone(),
        })
    }

    /// The selector of the plotted type alone (every series).
    pub(super) fn type_selector(&self) -> Option<Selector> {
        self.types.get(self.type_index).map(|t| Selector {
            profile_type: t.clone(),
            matchers: Vec::new(),
        })
    }

    /// Sets the profile types, with each one's time span where the source tells them
    /// (else none), and plots the CPU time type first (else the first type).
    pub(super) fn set_types(&mut self, types: Vec<ProfileType>, spans: Vec<TimeRange>) {
        self.type_index = types
            .iter()
            .position(|t| t.sample_type == "cpu")
            .unwrap_or(0);
        self.types = types;
        self.type_spans = spans;
        self.fit_span_to_type();
    }

    /// Makes the span the plotted type's own, where the source tells it; whether it
    /// changed (a zoom into the span left is then forgotten).
    fn fit_span_to_type(&mut self) -> bool {
        let Some(&span) = self.type_spans.get(self.type_index) else {
            return false;
        };
        let changed = span != self.span;
        if changed {
            self.span = span;
            self.zoomed = None;
        }
        changed
    }

    /// Width of the plot in the last frame (points), 800 before the first.
    pub fn plot_width(&self) -> f32 {
        self.last_view.map_or(800.0, |(_, _, w)| w)
    }

    /// Values of label `name` in the plotted type, as far as they are known yet.
    pub fn label_values(&self, name: &str) -> Option<Vec<String>> {
        self.values.get(name).cloned()
    }

    /// The time range visible in the plot (the whole span before the first frame),
    /// widened by a microsecond on each side against rounding.
    pub fn visible_range(&self) -> TimeRange {
        let r = match self.last_view {
            Some((x0, x1, _)) => drag_to_range(x0, x1),
            None => self.span,
        };
        TimeRange {
            start_nanos: r.start_nanos.saturating_sub(1_000),
            end_nanos: r.end_nanos.saturating_add(1_000),
        }
    }

    /// Unit of the plot's y axis ([`Timeline::scale`]): "CPU cores" for CPU time,
    /// "<unit>/s" for other delta types, the unit itself for snapshots (bytes in use).
    pub fn y_unit(&self) -> String {
        match self.types.get(self.type_index) {
            Some(t) => self.scale.unit(&t.sample_unit),
            None => String::new(),
        }
    }

    /// "indexing 3/10 files" or "merging 2/25 profiles", when one is running.
    pub fn progress_text(&self) -> Option<String> {
        if let Some(p) = &self.indexing {
            let (done, total) = p.get();
            return Some(format!("indexing {done}/{total} files"));
        }
        let texts: Vec<String> = self
            .queries
            .iter()
            .map(|q| match q.side {
                Some(side) => format!("{}: {}", side.letter(), q.progress_text()),
                None => q.progress_text(),
            })
            .collect();
        (!texts.is_empty()).then(|| texts.join(" · "))
    }

    /// Shows the time from `start_nanos` to `end_nanos`: a directory's or a capture's
    /// plot moves its view there, a server is asked for the series of that range
    /// (true: they must be loaded again).
    pub fn show_range(&mut self, start_nanos: i64, end_nanos: i64) -> bool {
        self.pending_bounds = Some((start_nanos as f64 / 1e9, end_nanos as f64 / 1e9));
        if !matches!(self.origin, Origin::Server(_)) {
            return false;
        }
        self.span = TimeRange {
            start_nanos,
            end_nanos,
        };
        self.zoomed = None;
        true
    }

    /// What the plot says when it has no series to draw, and so no axes: the work
    /// under way (indexing, merging, loading the series), [`NOT_OPENED`], the notice
    /// of the last answer (a server unavailable), else [`NO_DATA`]; `None` when there
    /// are series.
    pub fn empty_plot_text(&self) -> Option<String> {
        if !self.series.is_empty() {
            return None;
        }
        Some(if let Some(progress) = self.progress_text() {
            format!("{progress}…")
        } else if self.loading_series {
            "loading series…".to_string()
        } else if self.source.is_none() {
            NOT_OPENED.to_string()
        } else if let Some(notice) = &self.notice {
            notice.clone()
        } else {
            NO_DATA.to_string()
        })
    }

    /// The plot's bounds (seconds) that show all the data: the span with a margin of
    /// [`MARGIN`] of it (at least a second) on each side, so that the first and last
    /// points, and a lone one, are drawn inside the plot rather than on its edges.
    pub fn whole_bounds(&self) -> (f64, f64) {
        let (start, end) = (
            self.span.start_nanos as f64 / 1e9,
            self.span.end_nanos as f64 / 1e9,
        );
        let margin = ((end - start) * MARGIN).max(1.0);
        (start - margin, end + margin)
    }

    /// What the flame graph's place says while nothing is selected: the progress, why
    /// there is nothing to select, or how to select ([`CLICK_HINT`]).
    pub fn hint(&self) -> String {
        if let Some(text) = self.progress_text() {
            return text;
        }
        match (&self.failed, &self.notice) {
            (Some(why), _) => format!("nothing to show: {why}"),
            (None, Some(notice)) if self.types.is_empty() => notice.clone(),
            _ => CLICK_HINT.into(),
        }
    }

    /// The name given to a selection's profile.
    pub fn selection_name(&self, time: QueryTime) -> String {
        format!(
            "{} {}",
            self.origin.name(),
            describe_time(time, self.step_nanos)
        )
    }
}

/// "HH:MM:SS" (UTC) of a time in nanoseconds.
pub fn hms(nanos: i64) -> String {
    let text = capture::time::rfc3339(nanos);
    text.get(11..19).unwrap_or(&text).to_string()
}

/// A year of 365.25 days, in seconds: its multiples fall within days of a New Year's
/// midnight (UTC), on either side.
const YEAR: f64 = 31_557_600.0;

/// The month of the time axis: 30 days, in seconds.
const MONTH: f64 = 2_592_000.0;

/// Round steps of clock and calendar time, in seconds: the time axis's grid lines
/// fall on multiples of them (UTC), up to centuries (profiles' times reach from 1677
/// to 2262).
const TIME_STEPS: [f64; 31] = [
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    10800.0,
    21600.0,
    43200.0,
    86400.0,
    172_800.0,
    604_800.0,
    MONTH,
    YEAR / 4.0,
    YEAR,
    2.0 * YEAR,
    5.0 * YEAR,
    10.0 * YEAR,
    20.0 * YEAR,
    50.0 * YEAR,
    100.0 * YEAR,
    200.0 * YEAR,
    500.0 * YEAR,
];

/// The three grid steps of the time axis when its thinnest lines may be `base`
/// seconds apart: the smallest round time step at least that, and two larger ones,
/// each the next but one round step that is a multiple of the one before (so that
/// labelled lines never crowd one another: weeks and years do not divide each other),
/// or the one before again where none is.
pub fn time_grid_steps(base: f64) -> [f64; 3] {
    let last = TIME_STEPS.len() - 1;
    let first = TIME_STEPS.iter().position(|&s| s >= base).unwrap_or(last);
    let next = |i: usize| {
        let divides = |s: &f64| (s / TIME_STEPS[i]).fract() == 0.0;
        TIME_STEPS
            .iter()
            .skip(i + 2)
            .position(divides)
            .map_or(i, |k| i + 2 + k)
    };
    let second = next(first);
    let third = next(second);
    [TIME_STEPS[first], TIME_STEPS[second], TIME_STEPS[third]]
}

/// The three grid steps of the value axis when its thinnest lines may be `base` apart:
/// the smallest step of 1, 2 or 5 times a power of ten at least `base`, and two larger
/// ones, each a multiple of the one before (1, 5, 10; 2, 10, 20; 5, 10, 50), so that
/// the lines labelled never crowd one another (steps of 0.2 and 0.5 both labelled put
/// 0.4, 0.5 and 0.6 side by side). egui_plot's own grid steps by powers of ten, which
/// between 0 and 1 can leave only the 0 labelled.
pub fn value_grid_steps(base: f64) -> [f64; 3] {
    const MANTISSAS: [f64; 3] = [1.0, 2.0, 5.0];
    let base = if base.is_finite() && base > 0.0 {
        base
    } else {
        1.0
    };
    let power = base.log10().floor() as i32;
    let step = |k: i32| MANTISSAS[k.rem_euclid(3) as usize] * 10f64.powi(power + k.div_euclid(3));
    let first = (0..4)
        .find(|&k| step(k) >= base * (1.0 - 1e-9))
        .unwrap_or(3);
    let s = step(first);
    // 5 × 1 and 5 × 2 are 5 and 10; 2 × 5 is 10.
    let next = if first.rem_euclid(3) == 2 { 2.0 } else { 5.0 };
    [s, next * s, 10.0 * s]
}

/// The label of a value axis line at `value` of a grid step of `step`: as many
/// decimals as the step needs ("0.5", "0.05", "2"), in thousands, millions or billions
/// for steps of 10,000 or more ("30k", "1.5M").
pub fn value_label(value: f64, step: f64) -> String {
    // A snapshot's bytes read at a glance: "1.5M" rather than "1500000".
    let (scale, suffix) = match step * 10.0 {
        s if !(step >= 1e4 && s.is_finite()) => (1.0, ""),
        s if s >= 1e9 => (1e9, "G"),
        s if s >= 1e6 => (1e6, "M"),
        _ => (1e3, "k"),
    };
    let step = step / scale;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10() - 1e-9).ceil().max(0.0) as usize
    } else {
        0
    };
    let value = value / scale;
    // No "-0.0" for a line at zero reached from below.
    let value = if value.abs() < step * 1e-6 {
        0.0
    } else {
        value
    };
    if value == 0.0 {
        format!("{value:.decimals$}")
    } else {
        format!("{value:.decimals$}{suffix}")
    }
}

/// The label of a time axis line at `secs` (seconds since the epoch) of a grid step
/// of `step` seconds: "12:39:20" below a minute, "12:40" below a day, the date
/// ("11-30") at midnight and for steps of a day or more, with its year ("2026-11-30")
/// for steps of a month or more, the year alone ("2026") for steps of a year or more
/// (UTC).
pub fn time_label(secs: f64, step: f64) -> String {
    let nanos = (secs * 1e9).round() as i64;
    if step >= YEAR {
        // A year's line lies a little before or after New Year: named after the
        // nearest one.
        let half_year = (YEAR / 2.0 * 1e9) as i64;
        let text = capture::time::rfc3339(nanos.saturating_add(half_year));
        return text.get(..4).unwrap_or(&text).to_string();
    }
    let text = capture::time::rfc3339(nanos);
    let at_midnight = nanos.rem_euclid(86_400_000_000_000) == 0;
    let part = if step >= MONTH {
        text.get(..10)
    } else if step >= 86400.0 || at_midnight {
        text.get(5..10)
    } else if step >= 60.0 {
        text.get(11..16)
    } else {
        text.get(11..19)
    };
    part.unwrap_or(&text).to_string()
}

/// "2026-11-30" (UTC) of a time in nanoseconds.
fn date(nanos: i64) -> String {
    let text = capture::time::rfc3339(nanos);
    text.get(..10).unwrap_or(&text).to_string()
}

/// "2026-11-30 12:39:29" (UTC) of a time in nanoseconds.
pub fn date_hms(nanos: i64) -> String {
    format!("{} {}", date(nanos), hms(nanos))
}

/// "12:01:00–12:05:00" for a range within a day (UTC), "12:01:00" for a point; a
/// range over midnight names both dates ("2026-11-29 22:13:20–2026-11-30 22:13:20"),
/// or a day's merge would read as a second.
pub fn describe_time(time: QueryTime, step_nanos: i64) -> String {
    // A range's ends to the nearest second: the visible range merged reaches a
    // microsecond past the view on each side (`Timeline::visible_range`), and a view
    // from 07:50:00 would read 07:49:59.
    let time = match time {
        QueryTime::Merge(r) => QueryTime::Merge(TimeRange {
            start_nanos: nearest_second(r.start_nanos),
            end_nanos: nearest_second(r.end_nanos),
        }),
        single => single,
    };
    match time {
        QueryTime::Single(t) => hms(t),
        QueryTime::Merge(r) if r.end_nanos.saturating_sub(r.start_nanos) <= step_nanos => {
            hms(r.start_nanos)
        }
        QueryTime::Merge(r) if date(r.start_nanos) == date(r.end_nanos) => {
            format!("{}–{}", hms(r.start_nanos), hms(r.end_nanos))
        }
        QueryTime::Merge(r) => format!("{}–{}", date_hms(r.start_nanos), date_hms(r.end_nanos)),
    }
}

/// `nanos` rounded to the nearest whole second.
fn nearest_second(nanos: i64) -> i64 {
    const SEC: i64 = 1_000_000_000;
    nanos
        .saturating_add(SEC / 2)
        .div_euclid(SEC)
        .saturating_mul(SEC)
}

/// The fields of *range…*: a time range typed as `flint top --from/--to` take it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RangeFields {
    /// Start: RFC 3339, `now-1h`, or nanoseconds since the epoch.
    pub from: String,
    /// End, as the start.
    pub to: String,
    /// Why the last range typed was refused.
    pub error: Option<String>,
}

impl RangeFields {
    /// The fields filled with the view from `start` to `end` (seconds since the epoch),
    /// to the second.
    pub fn of_view(start: f64, end: f64) -> Self {
        let text = |secs: f64| capture::time::rfc3339((secs * 1e9) as i64);
        Self {
            from: text(start.floor()),
            to: text(end.ceil()),
            error: None,
        }
    }

    /// The range typed, in nanoseconds; `now_nanos` is what `now` means. An unreadable
    /// time names its field; an empty or backwards range is refused.
    pub fn parse(&self, now_nanos: i64) -> Result<TimeRange, String> {
        let time = |name: &str, text: &str| {
            capture::time::parse_time(text.trim(), now_nanos).map_err(|e| format!("{name}: {e}"))
        };
        let (start_nanos, end_nanos) = (time("from", &self.from)?, time("to", &self.to)?);
        if end_nanos <= start_nanos {
            return Err(format!(
                "to ({}) must be after from ({})",
                capture::time::rfc3339(end_nanos),
                capture::time::rfc3339(start_nanos)
            ));
        }
        Ok(TimeRange {
            start_nanos,
            end_nanos,
        })
    }
}

/// The range a drag from `x0` to `x1` (seconds since the epoch, either order) selects.
pub fn drag_to_range(x0: f64, x1: f64) -> TimeRange {
    let (a, b) = if x0 <= x1 { (x0, x1) } else { (x1, x0) };
    let start = (a * 1e9).round() as i64;
    let end = (b * 1e9).round() as i64;
    TimeRange {
        start_nanos: start,
        end_nanos: end.max(start + 1),
    }
}

/// The bucket a click at `x` seconds selects: that of the point of `series` drawn
/// nearest to it, when one lies within `max_px` pixels (`px_per_second` along x), so
/// that a click beside a point (drawn at its bucket's start) shows that point's
/// profiles; else the bucket holding `x`.
pub fn snap_click(
    series: &[&PlotSeries],
    x: f64,
    px_per_second: f64,
    max_px: f64,
    step_nanos: i64,
) -> TimeRange {
    // Each series' points on either side of `x`, the nearest of all of them.
    let nearest = series
        .iter()
        .flat_map(|s| {
            let after = s.points.partition_point(|p| p[0] < x);
            let before = after.checked_sub(1).and_then(|i| s.points.get(i));
            [before, s.points.get(after)]
        })
        .flatten()
        .map(|p| p[0])
        .min_by(|a, b| (a - x).abs().total_cmp(&(b - x).abs()));
    match nearest {
        Some(p) if (p - x).abs() * px_per_second <= max_px => click_to_range(p, step_nanos),
        _ => click_to_range(x, step_nanos),
    }
}

/// The step (bucket) holding `x` seconds.
pub fn click_to_range(x: f64, step_nanos: i64) -> TimeRange {
    let t = (x * 1e9).round() as i64;
    let start = t.saturating_sub(t.rem_euclid(step_nanos.max(1)));
    TimeRange {
        start_nanos: start,
        end_nanos: start.saturating_add(step_nanos.max(1)),
    }
}

/// Whether `path` opens in time mode.
pub fn is_time_dir(path: &Path) -> bool {
    capture::PathKind::of(path) == capture::PathKind::Dir
}

/// The step of a series query over `span`: for a server, about one bucket per 10
/// points of plot width (the server sums each bucket); for files, about 2,000 steps.
/// Whole seconds, at least one.
fn series_step(span: TimeRange, plot_width: f32, server: bool) -> i64 {
    let buckets = if server {
        (f64::from(plot_width) / 10.0).max(10.0) as i64
    } else {
        2000
    };
    let step = (span.end_nanos.saturating_sub(span.start_nanos) / buckets).max(1_000_000_000);
    step - step % 1_000_000_000
}

/// `range` cut to `span` where they overlap (a view with margins around the data merges
/// and names the data's range, not the margins'); else `range` as it is.
pub fn clamp_to(range: TimeRange, span: TimeRange) -> TimeRange {
    let cut = TimeRange {
        start_nanos: range.start_nanos.max(span.start_nanos),
        end_nanos: range.end_nanos.min(span.end_nanos),
    };
    if cut.start_nanos <= cut.end_nanos {
        cut
    } else {
        range
    }
}

/// "1 profile", "8,640 profiles".
pub fn profiles_text(n: usize) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!(
        "{} profile{plural}",
        profile_model::units::thousands(n as u64)
    )
}
