//! Time mode: profiles over time from a [`ProfileSource`] (a directory indexed by time,
//! or a server), a plot of its series, and selections on the plot (a click: the
//! profiles of one point; a drag: every profile of a range, merged) whose profile goes
//! through the ordinary pipeline. Indexing runs on a worker thread, queries on a small
//! tokio runtime owned by the app; results come back over a channel, so the window
//! never waits for the disk or the network.
//!
//! This module holds time mode's state and the conversions between times and plot
//! positions; the background work is in [`crate::gui::time::jobs`], the plot panel in
//! [`crate::gui::time::plot`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Instant;

use super::axis::{RangeFields, describe_time};
use super::pick::{PlotPick, drag_to_range, pick_point};
use super::selection::Kept;
use capture::{
    Matcher, ProfileSource, ProfileType, Progress, QueryTime, Selector, Series, SourceError,
    TimeRange,
};

use crate::gui::compare::Side;

use crate::gui::time::lines::{DrawnLine, PlotSeries, drawn_points};
use crate::gui::time::selector::{SelectorBar, SumBy};

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
    /// The type its profiles show by default ([`capture::ProfileSource::default_type`]),
    /// when it tells one.
    pub default_type: Option<ProfileType>,
    /// The time span of each of `types` (a folder's or a store's), in their order;
    /// empty when the source keeps no such thing (a server, a capture).
    pub type_spans: Vec<TimeRange>,
    /// What opening reported, a line each: files skipped, or a store's records
    /// repaired or skipped.
    pub warnings: Vec<String>,
    /// How many profiles there are, when known (files).
    pub profiles: Option<usize>,
}

/// A message from a live capture's thread.
pub enum LiveMsg {
    /// An interval was stored: its time range.
    Interval(TimeRange),
    /// The recorder could not start or failed.
    Failed(String),
}

/// What the background work sends back.
pub enum TimeMsg {
    /// The directory was indexed, or the server answered.
    Indexed(Result<Opened, String>),
    /// The server did not answer when asked for its profile types (it is asked again
    /// a little later): the source, the widest span asked, and what happened.
    Unreachable(Arc<dyn ProfileSource>, TimeRange, String),
    /// The series of a query: (its generation, the label names of the plotted type,
    /// result).
    Series(u64, Vec<String>, Result<Vec<Series>, SourceError>),
    /// The values of a label (for the matcher autocomplete).
    Values(String, Vec<String>),
    /// News from a live capture.
    Live(LiveMsg),
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

/// How to select profiles, said where the flame graph goes until something is selected.
pub const CLICK_HINT: &str = "click a point or drag a range on the plot to select profiles";

/// The state of time mode.
pub struct Timeline {
    /// Where the profiles come from.
    pub origin: Origin,
    /// The source, once opened.
    pub source: Option<Arc<dyn ProfileSource>>,
    /// How many profiles there are, when known (files).
    pub profiles: Option<usize>,
    /// Whether the source grows live (a capture of this machine).
    pub(in crate::gui::time) live: bool,
    /// The selection made by following the latest interval of a live capture (a
    /// selection of the user's stops the following).
    pub live_selection: Option<QueryTime>,
    /// Values of each label name asked for so far (the autocomplete's).
    pub(in crate::gui::time) values: HashMap<String, Vec<String>>,
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
    /// The color of each series seen, by name: the place in the palette
    /// ([`crate::gui::time::lines::series_color`]) given to it when it was first plotted, so that
    /// a series keeps its color whichever others are plotted beside it.
    colors: HashMap<String, usize>,
    /// The lines last drawn and what they were computed for, reused while neither the
    /// series nor the visible range change (a frame then only draws).
    drawn: Option<(DrawnKey, Vec<DrawnLine>)>,
    /// Draw every series, not only the largest [`MAX_SERIES`].
    pub(in crate::gui::time) show_all: bool,
    /// The series switched off in the legend, by name.
    pub hidden: std::collections::BTreeSet<String>,
    /// The legend entry under the pointer last frame (its line is drawn highlighted).
    pub(in crate::gui::time) legend_hovered: Option<usize>,
    /// The selection shown (set when its profile arrived).
    pub selection: Option<QueryTime>,
    /// Whether the merge of the range in view is still to be shown as soon as the
    /// series are in (opening, a type switch), until a selection is asked for.
    pub(in crate::gui::time) first_view_due: bool,
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
    pub(in crate::gui::time) drag_start: Option<f64>,
    /// Where the pointer is during a drag (seconds).
    pub(in crate::gui::time) drag_now: Option<f64>,
    /// Plot x bounds to apply on the next frame (a time preset).
    pub pending_bounds: Option<(f64, f64)>,
    /// The typed time range (*range…* beside the presets).
    pub range: RangeFields,
    /// Visible x bounds and plot width of the last frame (for bucketing).
    pub last_view: Option<(f64, f64, f32)>,
    /// Indexing in progress.
    pub indexing: Option<Progress>,
    /// When opening (indexing a folder, asking a server) began.
    pub(in crate::gui::time) opening_started: Instant,
    /// How long opening took, once done: shown in the status bar until a selection's
    /// merge is.
    pub opening_took: Option<std::time::Duration>,
    /// The selection queries under way, in the order asked (they run one after
    /// another): at most one outside compare mode, and one per side in it.
    pub queries: Vec<Query>,
    /// The number of the next [`Query`].
    pub(in crate::gui::time) next_query: u64,
    /// Series query in progress.
    pub(in crate::gui::time) loading_series: bool,
    /// Notice shown above the plot ("no data …", errors).
    pub notice: Option<String>,
    /// Why the source could not be opened (shown where the flame graph goes).
    pub(in crate::gui::time) failed: Option<String>,
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
    pub(in crate::gui::time) scale: crate::gui::time::lines::PlotScale,
    /// What to keep of the time mode this one reloads, until its index is in.
    pub(in crate::gui::time) kept: Option<Kept>,
    /// Generation of the series query (older answers are dropped).
    pub(in crate::gui::time) series_gen: u64,
    pub(in crate::gui::time) tx: Sender<TimeMsg>,
    pub(in crate::gui::time) rx: Receiver<TimeMsg>,
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
        self.first_view_due = true;
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

    /// Replaces the plotted series; a series plotted for the first time gets the next
    /// color of the palette.
    pub fn set_series(&mut self, series: Vec<PlotSeries>) {
        for s in &series {
            let next = self.colors.len();
            self.colors.entry(s.name.clone()).or_insert(next);
        }
        self.series = series;
        self.series_version += 1;
    }

    /// The color of the `i`th series: of its line, its markers and its legend entry;
    /// given by its name ([`Timeline::set_series`]), not by its rank.
    pub fn color_of(&self, i: usize) -> egui::Color32 {
        let place = (self.series.get(i))
            .and_then(|s| self.colors.get(&s.name))
            .copied();
        crate::gui::time::lines::series_color(place.unwrap_or(i))
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

    /// What the pointer at `pos` points at ([`pick_point`]): among the first `shown`
    /// series as drawn for `view` (the bounds and width [`Timeline::drawn_lines`]
    /// takes), those `visible`, on the plot drawn with `transform`; `px` are the
    /// pixels within which a line, then a point, is picked.
    pub fn pick(
        &mut self,
        shown: usize,
        view: (f64, f64, f32),
        visible: &[bool],
        transform: &egui_plot::PlotTransform,
        pos: egui::Pos2,
        px: [f64; 2],
    ) -> PlotPick {
        let (x0, x1, width) = view;
        self.drawn_lines(shown, x0, x1, width);
        let lines = self.drawn.as_ref().map_or(&[][..], |(_, l)| l.as_slice());
        pick_point(
            lines,
            &self.series,
            visible,
            transform,
            pos,
            px,
            self.step_nanos,
        )
    }

    pub(crate) fn new(origin: Origin) -> Self {
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
            colors: HashMap::new(),
            drawn: None,
            show_all: false,
            hidden: std::collections::BTreeSet::new(),
            legend_hovered: None,
            selection: None,
            first_view_due: true,
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
            scale: crate::gui::time::lines::PlotScale::Cores,
            kept: None,
            series_gen: 0,
            tx,
            rx,
        }
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
    pub(crate) fn type_selector(&self) -> Option<Selector> {
        self.types.get(self.type_index).map(|t| Selector {
            profile_type: t.clone(),
            matchers: Vec::new(),
        })
    }

    /// Sets the profile types, with each one's time span where the source tells them
    /// (else none), and plots first the type the source shows, as `flint series` does
    /// ([`capture::shown_type`]: `default`, the profiles' own, else CPU time).
    pub(crate) fn set_types(
        &mut self,
        types: Vec<ProfileType>,
        spans: Vec<TimeRange>,
        default: Option<&ProfileType>,
    ) {
        self.type_index = capture::shown_type(&types, default)
            .and_then(|shown| types.iter().position(|t| t == shown))
            .unwrap_or(0);
        self.types = types;
        self.type_spans = spans;
        self.fit_span_to_type();
    }

    /// Makes the span the plotted type's own, where the source tells it; whether it
    /// changed (a zoom into the span left is then forgotten).
    pub(in crate::gui::time) fn fit_span_to_type(&mut self) -> bool {
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
            Some(t) => self.scale.unit(t.range_unit().1),
            None => String::new(),
        }
    }

    /// Whether the source is being opened anew (not reloaded): until it is, the view
    /// shown is of what was open before, not of it, and its place shows the progress.
    pub fn opening_anew(&self) -> bool {
        self.indexing.is_some() && self.source.is_none() && self.kept.is_none()
    }

    /// "indexing 3/10 files" or "merging 2/25 profiles", when one is running; before
    /// the number of files is known (a folder being listed, the demo being written), or
    /// for a server, which has none, "indexing" or "asking the server".
    pub fn progress_text(&self) -> Option<String> {
        if let Some(p) = &self.indexing {
            return Some(match (p.get(), &self.origin) {
                (_, Origin::Server(_)) => "asking the server".to_string(),
                ((_, 0), _) => "indexing".to_string(),
                ((done, total), _) => format!("indexing {done}/{total} files"),
            });
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
            match (&self.notice, self.unavailable_since) {
                // A server that did not answer, being asked again.
                (Some(notice), Some(_)) => format!("{notice} ({progress} again…)"),
                _ => format!("{progress}…"),
            }
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

/// Whether `path` opens in time mode: a folder, or a perf.data recording (a series of
/// time slices, see [`capture::perfdata::slices`]), known by its first bytes.
pub fn opens_in_time_mode(path: &Path) -> bool {
    use std::io::Read as _;
    let mut magic = [0u8; 8];
    capture::PathKind::of(path) == capture::PathKind::Dir
        || std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok_and(|()| capture::perfdata::is_perf_data(&magic))
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
