//! Time mode: a directory of profiles indexed by time ([`FileSource`]), a plot of its
//! series over time, and selections on the plot (a click: the profiles of one point; a
//! drag: every profile of a range, merged) whose profile goes through the ordinary
//! pipeline. Indexing runs on a worker thread, queries on a small tokio runtime owned by
//! the app; results come back over a channel.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};

use capture::{
    FileSource, Matcher, ProfileSource as _, ProfileType, Progress, QueryTime, Selector, Series,
    SourceError, TimeRange,
};
use egui::{Color32, Context, PointerButton, Ui};
use egui_plot::{Legend, Line, Plot, PlotPoints, Span, VLine};
use profile_model::units;

use super::app::FlintApp;
use super::compare::{Picked, Side};
use super::loader::Source;
use super::selector_bar::{SelectorBar, SumBy, nearest_series, series_matchers};

/// Series drawn unless "show all" is ticked.
pub const MAX_SERIES: usize = 20;
/// The message shown when a selection holds no profile.
pub const NO_DATA: &str = "no data for this selection and range";
/// Default height of the plot panel (points).
pub const PANEL_HEIGHT: f32 = 220.0;
/// Smallest height of the plot panel (points).
pub const PANEL_MIN_HEIGHT: f32 = 120.0;

/// What the background work sends back.
pub enum TimeMsg {
    /// The directory was indexed.
    Indexed(Result<(FileSource, Vec<String>), String>),
    /// The series of a query: (its generation, result).
    Series(u64, Result<Vec<Series>, SourceError>),
    /// A selection's profile and how many profiles it merged; the side it sets in
    /// compare mode.
    Selected(
        QueryTime,
        Option<Side>,
        Result<(Box<profile_model::Profile>, usize), SourceError>,
    ),
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
}

/// The state of time mode.
pub struct Timeline {
    /// The directory indexed.
    pub dir: PathBuf,
    /// The index, once built.
    pub source: Option<Arc<FileSource>>,
    /// One line per file that could not be read.
    pub skipped: Vec<String>,
    /// Profile types with data.
    pub types: Vec<ProfileType>,
    /// The type plotted.
    pub type_index: usize,
    /// Time span of all profiles.
    pub span: TimeRange,
    /// Step of the series query.
    pub step_nanos: i64,
    /// Series of the plotted type, largest first.
    pub series: Vec<PlotSeries>,
    /// Draw every series, not only the largest [`MAX_SERIES`].
    pub show_all: bool,
    /// The selection shown (set when its profile arrived).
    pub selection: Option<QueryTime>,
    /// Profiles merged into the selection.
    pub selection_profiles: usize,
    /// Where a primary drag started (seconds).
    pub drag_start: Option<f64>,
    /// Where the pointer is during a drag (seconds).
    pub drag_now: Option<f64>,
    /// Plot x bounds to apply on the next frame (a time preset).
    pub pending_bounds: Option<(f64, f64)>,
    /// Visible x bounds and plot width of the last frame (for bucketing).
    pub last_view: Option<(f64, f64, f32)>,
    /// Indexing in progress.
    pub indexing: Option<Progress>,
    /// A selection query in progress.
    pub querying: Option<Progress>,
    /// Series query in progress.
    pub loading_series: bool,
    /// Notice shown above the plot ("no data …", errors).
    pub notice: Option<String>,
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
    /// Generation of the series query (older answers are dropped).
    series_gen: u64,
    tx: Sender<TimeMsg>,
    rx: Receiver<TimeMsg>,
}

impl Timeline {
    fn new(dir: PathBuf) -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            dir,
            source: None,
            skipped: Vec::new(),
            types: Vec::new(),
            type_index: 0,
            span: TimeRange {
                start_nanos: 0,
                end_nanos: 1,
            },
            step_nanos: 1_000_000_000,
            series: Vec::new(),
            show_all: false,
            selection: None,
            selection_profiles: 0,
            drag_start: None,
            drag_now: None,
            pending_bounds: None,
            last_view: None,
            indexing: None,
            querying: None,
            loading_series: false,
            notice: None,
            matchers: Vec::new(),
            sum_by: SumBy::Auto,
            bar: SelectorBar::default(),
            plot_height: 0.0,
            last_transform: None,
            series_gen: 0,
            tx,
            rx,
        }
    }

    /// The selector of the plotted type and its matchers.
    pub fn selector(&self) -> Option<Selector> {
        self.types.get(self.type_index).map(|t| Selector {
            profile_type: t.clone(),
            matchers: self.matchers.clone(),
        })
    }

    /// The selector of the plotted type alone (every series).
    fn type_selector(&self) -> Option<Selector> {
        self.types.get(self.type_index).map(|t| Selector {
            profile_type: t.clone(),
            matchers: Vec::new(),
        })
    }

    /// Label names of the plotted type (the index answers at once).
    pub fn label_names(&self) -> Vec<String> {
        match (&self.source, self.type_selector()) {
            (Some(source), Some(sel)) => {
                index_answer(source.labels(sel, self.span)).unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }

    /// Values of label `name` in the plotted type.
    pub fn label_values(&self, name: &str) -> Vec<String> {
        match (&self.source, self.type_selector()) {
            (Some(source), Some(sel)) => {
                index_answer(source.values(name.to_string(), sel, self.span)).unwrap_or_default()
            }
            _ => Vec::new(),
        }
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

    /// Unit of the plot's y axis: "CPU cores" for nanoseconds, else "<unit>/s".
    pub fn y_unit(&self) -> String {
        match self.types.get(self.type_index) {
            Some(t) if t.sample_unit == "nanoseconds" => "CPU cores".to_string(),
            Some(t) => format!("{}/s", t.sample_unit),
            None => String::new(),
        }
    }

    /// "indexing 3/10 files" or "merging 2/25 profiles", when one is running.
    pub fn progress_text(&self) -> Option<String> {
        if let Some(p) = &self.indexing {
            let (done, total) = p.get();
            return Some(format!("indexing {done}/{total} files"));
        }
        if let Some(p) = &self.querying {
            let (done, total) = p.get();
            return Some(format!("merging {done}/{total} profiles"));
        }
        None
    }

    /// The name given to a selection's profile.
    pub fn selection_name(&self, time: QueryTime) -> String {
        let dir = self.dir.file_name().map_or_else(
            || self.dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        format!("{dir} {}", describe_time(time, self.step_nanos))
    }
}

/// "HH:MM:SS" (UTC) of a time in nanoseconds.
pub fn hms(nanos: i64) -> String {
    let text = capture::time::rfc3339(nanos);
    text.get(11..19).unwrap_or(&text).to_string()
}

/// "12:01:00–12:05:00" for a range, "12:01:00" for a point.
pub fn describe_time(time: QueryTime, step_nanos: i64) -> String {
    match time {
        QueryTime::Single(t) => hms(t),
        QueryTime::Merge(r) if r.end_nanos - r.start_nanos <= step_nanos => hms(r.start_nanos),
        QueryTime::Merge(r) => format!("{}–{}", hms(r.start_nanos), hms(r.end_nanos)),
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

/// The step (bucket) holding `x` seconds: a click selects it.
pub fn click_to_range(x: f64, step_nanos: i64) -> TimeRange {
    let t = (x * 1e9).round() as i64;
    let start = t - t.rem_euclid(step_nanos.max(1));
    TimeRange {
        start_nanos: start,
        end_nanos: start + step_nanos.max(1),
    }
}

/// Points reduced to at most one per pixel column of a plot `width` pixels wide showing
/// `x0..x1` (the mean of each column; the nearest point outside on each side is kept so
/// that lines reach the edges).
pub fn bucket_points(points: &[[f64; 2]], x0: f64, x1: f64, width: f32) -> Vec<[f64; 2]> {
    let columns = width.max(1.0) as usize;
    if points.len() <= columns || x1 <= x0 {
        return points.to_vec();
    }
    let first = points.partition_point(|p| p[0] < x0);
    let last = points.partition_point(|p| p[0] <= x1);
    let mut out = Vec::with_capacity(columns + 2);
    if first > 0 {
        out.push(points[first - 1]);
    }
    let scale = columns as f64 / (x1 - x0);
    let mut bucket: Option<(usize, f64, f64, usize)> = None;
    for p in &points[first..last] {
        let col = (((p[0] - x0) * scale) as usize).min(columns - 1);
        match &mut bucket {
            Some((c, sx, sy, n)) if *c == col => {
                *sx += p[0];
                *sy += p[1];
                *n += 1;
            }
            _ => {
                if let Some((_, sx, sy, n)) = bucket {
                    out.push([sx / n as f64, sy / n as f64]);
                }
                bucket = Some((col, p[0], p[1], 1));
            }
        }
    }
    if let Some((_, sx, sy, n)) = bucket {
        out.push([sx / n as f64, sy / n as f64]);
    }
    if last < points.len() {
        out.push(points[last]);
    }
    out
}

/// Series as drawn: named, in display units, largest first.
pub fn plot_series(series: Vec<Series>, nanoseconds: bool) -> Vec<PlotSeries> {
    let scale = if nanoseconds { 1e-9 } else { 1.0 };
    let mut out: Vec<PlotSeries> = series
        .into_iter()
        .map(|s| {
            let name = if s.labels.is_empty() {
                "total".to_string()
            } else {
                s.labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            PlotSeries {
                name,
                labels: s.labels.into_iter().collect(),
                total: s.points.iter().map(|p| p.value).sum(),
                points: s
                    .points
                    .iter()
                    .map(|p| [p.time_nanos as f64 / 1e9, p.value_per_second * scale])
                    .collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
    out
}

/// The tokio runtime the app runs its queries on (one worker thread).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("flint-query")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the query runtime: {e}"))
}

impl FlintApp {
    /// Opens a directory in time mode: indexes it in the background.
    pub fn open_dir(&mut self, ctx: &Context, dir: PathBuf) {
        if let Some(old) = &self.timeline {
            for p in old.indexing.iter().chain(old.querying.iter()) {
                p.cancel();
            }
        }
        let mut tl = Timeline::new(dir.clone());
        let progress = Progress::default();
        tl.indexing = Some(progress.clone());
        let decode = self.decode;
        let tx = tl.tx.clone();
        self.timeline = Some(tl);
        if self.sync_jobs {
            let result = FileSource::open(&[dir], decode, &progress);
            let _ = tx.send(TimeMsg::Indexed(result));
        } else {
            let ctx = ctx.clone();
            std::thread::spawn(move || {
                let result = FileSource::open(&[dir], decode, &progress);
                let _ = tx.send(TimeMsg::Indexed(result));
                ctx.request_repaint();
            });
            // Progress is read from the shared counters: repaint while indexing.
        }
    }

    /// Runs `fut` on the query runtime (blocking in tests), sending its message back.
    fn run_query(&mut self, ctx: &Context, fut: impl Future<Output = TimeMsg> + Send + 'static) {
        let Some(tl) = &self.timeline else {
            return;
        };
        let tx = tl.tx.clone();
        if self.runtime.is_none() {
            match runtime() {
                Ok(rt) => self.runtime = Some(rt),
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            }
        }
        let Some(rt) = &self.runtime else {
            return;
        };
        if self.sync_jobs {
            let msg = rt.block_on(fut);
            let _ = tx.send(msg);
        } else {
            let ctx = ctx.clone();
            rt.spawn(async move {
                let msg = fut.await;
                let _ = tx.send(msg);
                ctx.request_repaint();
            });
        }
    }

    /// Queries the series of the chosen profile type and matchers.
    fn load_series(&mut self, ctx: &Context) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let (Some(source), Some(selector)) = (tl.source.clone(), tl.selector()) else {
            return;
        };
        tl.bar.label_names = tl.label_names();
        let sum_by = tl.sum_by.resolve(&tl.bar.label_names);
        tl.series_gen += 1;
        let generation = tl.series_gen;
        let span = tl.span;
        // About 2,000 steps over the data, whole seconds.
        let step = ((span.end_nanos - span.start_nanos) / 2000).max(1_000_000_000);
        let step = step - step % 1_000_000_000;
        tl.step_nanos = step;
        tl.loading_series = true;
        self.run_query(ctx, async move {
            let result = source.query_range(selector, span, step, sum_by).await;
            TimeMsg::Series(generation, result)
        });
    }

    /// Sets the label matchers and plots again.
    pub fn set_matchers(&mut self, ctx: &Context, matchers: Vec<Matcher>) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        tl.matchers = matchers;
        tl.notice = None;
        if let Some(sel) = tl.selector() {
            tl.bar.text = sel.to_string();
        }
        self.load_series(ctx);
    }

    /// Adds matchers (those not there yet) and plots again.
    pub fn add_matchers(&mut self, ctx: &Context, add: Vec<Matcher>) {
        let Some(tl) = &self.timeline else {
            return;
        };
        let mut matchers = tl.matchers.clone();
        for m in add {
            if !matchers.contains(&m) {
                matchers.push(m);
            }
        }
        if matchers != tl.matchers {
            self.set_matchers(ctx, matchers);
        }
    }

    /// Applies a selector typed as text; an invalid one leaves everything as it was and
    /// says why.
    pub fn apply_selector_text(&mut self, ctx: &Context, text: &str) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let parsed = Selector::parse(text).and_then(|sel| {
            tl.types
                .iter()
                .position(|t| *t == sel.profile_type)
                .map(|i| (i, sel.matchers))
                .ok_or_else(|| format!("no profiles of type {} here", sel.profile_type))
        });
        match parsed {
            Ok((index, matchers)) => {
                tl.bar.text_error = None;
                if index != tl.type_index {
                    tl.type_index = index;
                    tl.series.clear();
                    tl.selection = None;
                    self.compare.clear();
                }
                self.set_matchers(ctx, matchers);
            }
            Err(e) => tl.bar.text_error = Some(e),
        }
    }

    /// Sets how the series are summed and plots again.
    pub fn set_sum_by(&mut self, ctx: &Context, sum_by: SumBy) {
        if let Some(tl) = &mut self.timeline {
            tl.sum_by = sum_by;
            self.load_series(ctx);
        }
    }

    /// Merges every profile matching the selector in the visible time range.
    pub fn merge_visible(&mut self, ctx: &Context) {
        if let Some(tl) = &self.timeline {
            let range = tl.visible_range();
            self.select_time(ctx, QueryTime::Merge(range));
        }
    }

    /// Selects `time`: queries its profile (merged) and, once it arrives, shows it.
    pub fn select_time(&mut self, ctx: &Context, time: QueryTime) {
        let side = self.comparing().then_some(self.compare.target);
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let (Some(source), Some(selector)) = (tl.source.clone(), tl.selector()) else {
            return;
        };
        if let Some(p) = tl.querying.take() {
            p.cancel();
        }
        let progress = Progress::default();
        tl.querying = Some(progress.clone());
        tl.notice = None;
        self.run_query(ctx, async move {
            let range = match time {
                QueryTime::Single(t) => TimeRange {
                    start_nanos: t,
                    end_nanos: t.saturating_add(1),
                },
                QueryTime::Merge(r) => r,
            };
            let result = async {
                let profile = source.query(selector.clone(), time, progress).await?;
                // One point per distinct profile time: the number of profiles merged.
                let count = source
                    .query_range(selector, range, 1, Some(Vec::new()))
                    .await
                    .map_or(0, |s| s.iter().map(|s| s.points.len()).sum());
                Ok((Box::new(profile), count))
            }
            .await;
            TimeMsg::Selected(time, side, result)
        });
    }

    /// Drains the timeline's messages.
    pub(super) fn poll_timeline(&mut self, ctx: &Context) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let msgs: Vec<TimeMsg> = tl.rx.try_iter().collect();
        if tl.indexing.is_some() || tl.querying.is_some() {
            ctx.request_repaint_after(std::time::Duration::from_millis(250));
        }
        for msg in msgs {
            self.handle_time_msg(ctx, msg);
        }
    }

    fn handle_time_msg(&mut self, ctx: &Context, msg: TimeMsg) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        match msg {
            TimeMsg::Indexed(result) => {
                let cancelled = tl.indexing.take().is_some_and(|p| p.is_cancelled());
                match result {
                    Ok(_) if cancelled => self.message = Some(("cancelled".into(), false)),
                    Ok((source, skipped)) => {
                        tl.span = source.span();
                        tl.types = source_types(&source);
                        tl.type_index = tl
                            .types
                            .iter()
                            .position(|t| t.sample_type == "cpu")
                            .unwrap_or(0);
                        tl.skipped = skipped;
                        tl.pending_bounds = Some((
                            tl.span.start_nanos as f64 / 1e9,
                            tl.span.end_nanos as f64 / 1e9,
                        ));
                        if source.is_empty() {
                            tl.notice = Some(format!("no profiles in {}", tl.dir.display()));
                        }
                        tl.source = Some(Arc::new(source));
                        self.load_series(ctx);
                    }
                    Err(e) => self.error = Some(e),
                }
            }
            TimeMsg::Series(generation, result) => {
                if generation != tl.series_gen {
                    return;
                }
                tl.loading_series = false;
                let nanos = tl
                    .types
                    .get(tl.type_index)
                    .is_some_and(|t| t.sample_unit == "nanoseconds");
                match result {
                    Ok(series) => tl.series = plot_series(series, nanos),
                    Err(e) => {
                        tl.series.clear();
                        tl.notice = Some(e.to_string());
                    }
                }
            }
            TimeMsg::Selected(time, side, result) => {
                tl.querying = None;
                match result {
                    Ok((profile, count)) if let Some(side) = side => {
                        self.compare.set(
                            side,
                            Picked {
                                time,
                                profile: Arc::new(*profile),
                                count,
                            },
                        );
                    }
                    Ok((profile, count)) => {
                        tl.selection = Some(time);
                        tl.selection_profiles = count;
                        let name = tl.selection_name(time);
                        self.open(Source::Profile {
                            name,
                            path: None,
                            profile: Arc::new(*profile),
                        });
                    }
                    Err(SourceError::NoData) => tl.notice = Some(NO_DATA.to_string()),
                    Err(SourceError::Cancelled) => {
                        self.message = Some(("cancelled".into(), false));
                    }
                    Err(e) => tl.notice = Some(e.to_string()),
                }
            }
        }
    }

    /// Cancels indexing or the selection query.
    pub fn cancel_time_job(&mut self) {
        if let Some(tl) = &mut self.timeline {
            for p in tl.indexing.iter().chain(tl.querying.iter()) {
                p.cancel();
            }
            tl.querying = None;
        }
    }

    /// The line above the flame graph: "selection: 12:01:00–12:05:00, 25 profiles, total 3 s".
    pub fn selection_text(&self) -> Option<String> {
        let tl = self.timeline.as_ref()?;
        let time = tl.selection?;
        let cur = self.current.as_ref()?;
        Some(format!(
            "selection: {}, {} profile{}, total {}",
            describe_time(time, tl.step_nanos),
            tl.selection_profiles,
            if tl.selection_profiles == 1 { "" } else { "s" },
            units::readable(cur.totals.first().copied().unwrap_or(0), cur.unit())
        ))
    }

    /// The plot panel: type, presets, the plot and the selection line.
    pub(super) fn timeline_panel(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        let selection_text = self.selection_text();
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let mut reload = false;
        ui.horizontal(|ui| {
            ui.strong(tl.dir.display().to_string());
            if let Some(source) = &tl.source {
                ui.weak(format!(
                    "{} profiles",
                    units::thousands(source.len() as u64)
                ));
            }
            let before = tl.type_index;
            let shown = tl
                .types
                .get(tl.type_index)
                .map_or_else(String::new, ProfileType::friendly);
            egui::ComboBox::from_id_salt("profile type")
                .selected_text(shown)
                .show_ui(ui, |ui| {
                    for (i, t) in tl.types.iter().enumerate() {
                        ui.selectable_value(&mut tl.type_index, i, t.friendly())
                            .on_hover_text(t.to_string());
                    }
                })
                .response
                .on_hover_text("profile type plotted and selected");
            reload = before != tl.type_index;
            ui.separator();
            let end = tl.span.end_nanos as f64 / 1e9;
            let start = tl.span.start_nanos as f64 / 1e9;
            for (label, secs) in [
                ("15 min", 900.0),
                ("1 h", 3600.0),
                ("1 day", 86_400.0),
                ("all", f64::INFINITY),
            ] {
                if ui
                    .button(label)
                    .on_hover_text("relative to the end of the data")
                    .clicked()
                {
                    tl.pending_bounds = Some(((end - secs).max(start), end));
                }
            }
            ui.separator();
            ui.toggle_value(&mut self.compare.enabled, "Compare")
                .on_hover_text("compare two selections: A (before) and B (after)");
            if self.compare.enabled {
                ui.radio_value(&mut self.compare.target, Side::A, "select A");
                ui.radio_value(&mut self.compare.target, Side::B, "select B");
            }
            ui.separator();
            ui.checkbox(&mut tl.show_all, "show all")
                .on_hover_text(format!(
                    "draw every series, not only the {MAX_SERIES} largest"
                ));
            if tl.loading_series {
                ui.weak("loading series…");
            }
            if let Some(n) = &tl.notice {
                ui.colored_label(ui.visuals().warn_fg_color, n);
            }
        });
        if reload {
            tl.series.clear();
            tl.selection = None;
            tl.bar.text = tl.selector().map(|s| s.to_string()).unwrap_or_default();
            self.compare.clear();
            self.load_series(&ctx);
            return;
        }
        self.selector_row(ui);
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let unit = tl.y_unit();
        let hover_unit = unit.clone();
        let (vx0, vx1, width) = tl.last_view.unwrap_or((
            tl.span.start_nanos as f64 / 1e9,
            tl.span.end_nanos as f64 / 1e9,
            800.0,
        ));
        let shown = if tl.show_all {
            tl.series.len()
        } else {
            tl.series.len().min(MAX_SERIES)
        };
        let lines: Vec<(String, Vec<[f64; 2]>)> = tl.series[..shown]
            .iter()
            .map(|s| (s.name.clone(), bucket_points(&s.points, vx0, vx1, width)))
            .collect();
        let pending = tl.pending_bounds.take();
        let selection = tl.selection;
        let step = tl.step_nanos;
        let drag = tl.drag_start.zip(tl.drag_now);
        let sides: Vec<(&str, QueryTime, Color32)> = if self.compare.enabled {
            [
                (
                    "A",
                    &self.compare.a,
                    Color32::from_rgba_unmultiplied(255, 140, 0, 60),
                ),
                (
                    "B",
                    &self.compare.b,
                    Color32::from_rgba_unmultiplied(170, 60, 255, 60),
                ),
            ]
            .into_iter()
            .filter_map(|(name, p, c)| p.as_ref().map(|p| (name, p.time, c)))
            .collect()
        } else {
            Vec::new()
        };
        let selection = if self.compare.enabled {
            None
        } else {
            selection
        };
        // The plot takes what the footer line leaves, so that the panel's content fills
        // it exactly: a smaller content would be stored as the panel's new size and the
        // panel would shrink a little with every frame.
        let footer = ui.spacing().interact_size.y + ui.spacing().item_spacing.y * 2.0;
        let height = (ui.available_height() - footer).max(60.0);
        tl.plot_height = height;
        let resp = Plot::new("flint timeline plot")
            .height(height)
            .legend(Legend::default())
            .pan_pointer_button(PointerButton::Middle)
            .allow_boxed_zoom(false)
            .allow_double_click_reset(true)
            .y_axis_label(unit)
            .include_y(0.0)
            .x_axis_formatter(|mark, _| hms((mark.value * 1e9) as i64))
            .label_formatter(move |pos| match pos {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => Some(format!(
                    "{plot_name}\n{}\n{:.3} {hover_unit}",
                    hms((position.x * 1e9) as i64),
                    position.y
                )),
                egui_plot::HoverPosition::Elsewhere { position } => {
                    Some(hms((position.x * 1e9) as i64))
                }
            })
            .show(ui, |plot_ui| {
                if let Some((a, b)) = pending {
                    plot_ui.set_plot_bounds_x(a..=b);
                    plot_ui.set_auto_bounds([false, true]);
                }
                for (name, points) in lines {
                    plot_ui.line(Line::new(name, PlotPoints::new(points)).width(1.5));
                }
                let sel_color = Color32::from_rgba_unmultiplied(90, 140, 255, 50);
                match selection {
                    Some(QueryTime::Single(t)) => {
                        plot_ui.add(VLine::new("selection", t as f64 / 1e9).color(sel_color));
                    }
                    Some(QueryTime::Merge(r)) if r.end_nanos - r.start_nanos <= step => {
                        plot_ui.add(
                            VLine::new("selection", r.start_nanos as f64 / 1e9)
                                .color(Color32::from_rgb(90, 140, 255)),
                        );
                    }
                    Some(QueryTime::Merge(r)) => {
                        plot_ui.add(
                            Span::new(
                                "selection",
                                r.start_nanos as f64 / 1e9..=r.end_nanos as f64 / 1e9,
                            )
                            .fill(sel_color),
                        );
                    }
                    None => {}
                }
                for (name, time, color) in sides {
                    let range = match time {
                        QueryTime::Single(t) => TimeRange {
                            start_nanos: t,
                            end_nanos: t,
                        },
                        QueryTime::Merge(r) => r,
                    };
                    let (x0, x1) = (range.start_nanos as f64 / 1e9, range.end_nanos as f64 / 1e9);
                    if range.end_nanos - range.start_nanos <= step {
                        plot_ui.add(VLine::new(name, x0).color(color.to_opaque()).width(2.0));
                    } else {
                        plot_ui.add(
                            Span::new(name, x0..=x1)
                                .fill(color)
                                .border_color(color.to_opaque()),
                        );
                    }
                }
                if let Some((a, b)) = drag {
                    plot_ui.add(
                        Span::new("dragging", a.min(b)..=a.max(b))
                            .fill(Color32::from_rgba_unmultiplied(255, 200, 60, 50)),
                    );
                }
            });
        tl.last_transform = Some(resp.transform);
        let bounds = resp.transform.bounds();
        tl.last_view = Some((
            bounds.min()[0],
            bounds.max()[0],
            resp.transform.frame().width(),
        ));
        let r = &resp.response;
        let x_at = |pos: egui::Pos2| resp.transform.value_from_position(pos).x;
        let mut chosen = None;
        let mut add = Vec::new();
        let shift = ui.input(|i| i.modifiers.shift);
        if shift
            && r.clicked_by(PointerButton::Primary)
            && let Some(pos) = r.interact_pointer_pos()
        {
            let p = resp.transform.value_from_position(pos);
            let d = resp.transform.dpos_dvalue();
            let drawn: Vec<Vec<[f64; 2]>> = tl.series[..shown]
                .iter()
                .map(|s| bucket_points(&s.points, vx0, vx1, width))
                .collect();
            let refs: Vec<&[[f64; 2]]> = drawn.iter().map(Vec::as_slice).collect();
            if let Some(i) = nearest_series(&refs, p.x, p.y, [d[0].abs(), d[1].abs()], 12.0) {
                add = series_matchers(&tl.series[i].labels, &tl.matchers);
            }
        } else if r.drag_started_by(PointerButton::Primary)
            && let Some(pos) = r.interact_pointer_pos()
        {
            tl.drag_start = Some(x_at(pos));
            tl.drag_now = tl.drag_start;
        }
        if tl.drag_start.is_some()
            && let Some(pos) = r.interact_pointer_pos()
        {
            tl.drag_now = Some(x_at(pos));
        }
        if r.drag_stopped_by(PointerButton::Primary) {
            if let (Some(a), Some(b)) = (tl.drag_start.take(), tl.drag_now.take()) {
                chosen = Some(QueryTime::Merge(drag_to_range(a, b)));
            }
        } else if !shift
            && r.clicked_by(PointerButton::Primary)
            && let Some(pos) = r.interact_pointer_pos()
        {
            chosen = Some(QueryTime::Merge(click_to_range(x_at(pos), step)));
        }
        ui.horizontal(|ui| {
            if let Some(text) = selection_text {
                ui.strong(text);
                ui.separator();
            }
            ui.weak("click a point or drag a range to select; Shift+click a line to filter by its labels; scroll to pan, Ctrl+scroll to zoom, double-click to reset");
        });
        // Fill the panel (see above): its stored size is the size of what it holds.
        ui.expand_to_include_rect(ui.max_rect());
        if !add.is_empty() {
            self.add_matchers(&ctx, add);
        }
        if let Some(time) = chosen {
            self.select_time(&ctx, time);
        }
    }

    /// The status bar part of time mode: skipped files, progress and Cancel.
    pub(super) fn timeline_status(&mut self, ui: &mut Ui) {
        let Some(tl) = &self.timeline else {
            return;
        };
        let mut cancel = false;
        if let Some(text) = tl.progress_text() {
            cancel = ui.button("Cancel").clicked();
            ui.label(text);
        }
        if !tl.skipped.is_empty() {
            let first: Vec<&str> = tl.skipped.iter().take(2).map(String::as_str).collect();
            let more = if tl.skipped.len() > 2 { ", …" } else { "" };
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "skipped {} file{}: {}{more}",
                    tl.skipped.len(),
                    if tl.skipped.len() == 1 { "" } else { "s" },
                    first.join(", ")
                ),
            )
            .on_hover_text(tl.skipped.join("\n"));
        }
        if cancel {
            self.cancel_time_job();
        }
    }
}

/// The profile types of a source (its index answers at once: no runtime needed).
fn source_types(source: &FileSource) -> Vec<ProfileType> {
    index_answer(source.profile_types(TimeRange::ALL)).unwrap_or_default()
}

/// The answer of a query the file index gives at once (no runtime needed).
fn index_answer<T>(fut: impl Future<Output = Result<T, SourceError>>) -> Option<T> {
    let rt = tokio::runtime::Builder::new_current_thread().build().ok()?;
    rt.block_on(fut).ok()
}

/// Whether `path` opens in time mode.
pub fn is_time_dir(path: &Path) -> bool {
    path.is_dir()
}
