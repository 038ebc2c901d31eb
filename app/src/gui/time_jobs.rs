//! The background work of time mode: indexing a directory, series and selection
//! queries on the query runtime, their answers, and their progress in the status bar.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use capture::{
    FileSource, Matcher, ProfileSource, Progress, QueryTime, RemoteOptions, RemoteSource, Selector,
    SourceError, Store, StoreOptions, TimeRange,
};
use egui::{Context, Ui};
use profile_model::units;

use super::app::FlintApp;
use super::compare::{Picked, Side};
use super::loader::Source;
use super::plot::{PlotScale, plot_series};
use super::selector_bar::SumBy;
use super::timeline::{NO_DATA, Opened, Origin, Query, Selected, TimeMsg, Timeline, describe_time};

/// How long to wait before asking an unavailable server again.
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

/// The answer of a query a local index (files, a store) gives at once, without the
/// network or the query runtime; empty on error.
pub(super) fn instant_answer<T: Default>(fut: impl Future<Output = Result<T, SourceError>>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .ok()
        .and_then(|rt| rt.block_on(fut).ok())
        .unwrap_or_default()
}

/// The tokio runtime the app runs its queries on (one worker thread).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    Ok(capture::runtime(capture::RuntimeUse::Query)?)
}

impl FlintApp {
    /// Opens a directory in time mode: indexes it in the background.
    pub fn open_dir(&mut self, ctx: &Context, dir: PathBuf) {
        self.open_dir_made(ctx, dir, || Ok(()));
    }

    /// File → *Demo: a fleet's last hour*: the demo hour ([`super::demo`]) written into
    /// its temporary folder, then opened as a folder is; both off the UI thread.
    pub fn open_demo(&mut self, ctx: &Context) {
        let (own, dir) = super::demo::new_demo_dir();
        self.made(own);
        let target = dir.clone();
        self.open_dir_made(ctx, dir, move || {
            super::demo::write_demo_hour(&target, capture::time::now_nanos())
        });
    }

    /// Notes a temporary folder this window made, to be removed when it closes.
    pub(super) fn made(&mut self, dir: PathBuf) {
        if !self.made_dirs.contains(&dir) {
            self.made_dirs.push(dir);
        }
    }

    /// [`FlintApp::open_dir`], once `make` has made the folder's files (on the
    /// indexing thread).
    fn open_dir_made(
        &mut self,
        ctx: &Context,
        dir: PathBuf,
        make: impl FnOnce() -> Result<(), String> + Send + 'static,
    ) {
        let progress = self.start_timeline(Origin::Dir(dir.clone()));
        let (decode, budget) = (self.decode, self.kept_stacks_budget);
        let open = move || {
            make()?;
            if Store::is_store_dir(&dir) {
                // flint's own store (`flint record --store`, `flint serve --store`).
                let store = Store::open(&dir, StoreOptions::default())?;
                let span = store.span();
                let profiles = store.stats().profiles;
                let types = instant_answer(store.profile_types(TimeRange::ALL));
                let type_spans = types.iter().map(|t| store.span_of(t)).collect();
                return Ok(Opened {
                    warnings: store.warnings(),
                    source: Arc::new(store),
                    span,
                    types,
                    type_spans,
                    profiles: Some(profiles),
                });
            }
            FileSource::open_keeping_stacks(&[dir], decode, budget, &progress).map(
                |(source, skipped)| {
                    let span = source.span();
                    let types = instant_answer(source.profile_types(TimeRange::ALL));
                    let type_spans = types.iter().map(|t| source.span_of(t)).collect();
                    Opened {
                        profiles: Some(source.len()),
                        source: Arc::new(source),
                        span,
                        types,
                        type_spans,
                        warnings: skipped
                            .into_iter()
                            .map(|s| format!("skipped {s}"))
                            .collect(),
                    }
                },
            )
        };
        let Some(tl) = &self.timeline else {
            return;
        };
        let tx = tl.tx.clone();
        if self.sync_jobs {
            let _ = tx.send(TimeMsg::Indexed(open()));
        } else {
            let ctx = ctx.clone();
            std::thread::spawn(move || {
                let _ = tx.send(TimeMsg::Indexed(open()));
                ctx.request_repaint();
            });
        }
    }

    /// Connects to a server (`grpc://host:7070`, `https://host`) in time mode: asks
    /// for its profile types of the last hour (of the last week when the hour has
    /// none) in the background.
    pub fn connect(&mut self, ctx: &Context, url: &str, options: RemoteOptions) {
        let source = match RemoteSource::new(url, options) {
            Ok(s) => s,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let progress = self.start_timeline(Origin::Server(source.url().to_string()));
        let now = capture::time::now_nanos();
        let spans = [1, 24 * 7].map(|hours| TimeRange {
            start_nanos: now.saturating_sub(hours * 3_600_000_000_000),
            end_nanos: now,
        });
        self.ask_types(ctx, Arc::new(source), spans.to_vec(), progress);
    }

    /// Asks a server for its profile types over each of `spans` in turn, until one has
    /// some (or the last is asked); the answer comes as [`TimeMsg::Indexed`], over that
    /// span.
    fn ask_types(
        &mut self,
        ctx: &Context,
        source: Arc<dyn ProfileSource>,
        spans: Vec<TimeRange>,
        progress: Progress,
    ) {
        self.run_query(ctx, async move {
            let mut result = Err(String::new());
            for span in spans {
                result = source
                    .profile_types(span)
                    .await
                    .map_err(|e| e.to_string())
                    .map(|types| (span, types));
                if result.as_ref().is_ok_and(|(_, t)| !t.is_empty()) || progress.is_cancelled() {
                    break;
                }
            }
            TimeMsg::Indexed(result.map(|(span, types)| Opened {
                source,
                span,
                types,
                type_spans: Vec::new(),
                warnings: Vec::new(),
                profiles: None,
            }))
        });
    }

    /// Replaces time mode's state with a new one for `origin` (cancelling what the old
    /// one was doing); returns the progress of opening it.
    pub(super) fn start_timeline(&mut self, origin: Origin) -> Progress {
        if let Some(old) = &self.timeline {
            old.cancel_jobs();
        }
        self.compare.clear();
        let mut tl = Timeline::new(origin);
        let progress = Progress::default();
        tl.indexing = Some(progress.clone());
        self.timeline = Some(tl);
        progress
    }

    /// Leaves the time mode (for a file opened on its own): the plot, its queries and
    /// compare go.
    pub(super) fn leave_time_mode(&mut self) {
        if let Some(old) = self.timeline.take() {
            old.cancel_jobs();
        }
        self.compare.clear();
        self.compare.enabled = false;
    }

    /// File → Reload folder (F5): indexes the folder shown again, so that profiles
    /// written since appear (and removed ones go), keeping the selector, sum by, type,
    /// legend, view, selection and compare, and the flame graph shown.
    pub fn reload_dir(&mut self, ctx: &Context) {
        let Some(tl) = &self.timeline else {
            return;
        };
        let (Origin::Dir(dir), None) = (&tl.origin, &tl.indexing) else {
            return;
        };
        let (dir, kept) = (dir.clone(), tl.kept());
        // Opening clears compare: its sides are profiles already merged, kept as they are.
        let compare = std::mem::take(&mut self.compare);
        self.open_dir(ctx, dir);
        self.compare = compare;
        if let Some(tl) = &mut self.timeline {
            tl.kept = Some(kept);
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
    pub(super) fn load_series(&mut self, ctx: &Context) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        if tl.types.is_empty()
            && matches!(tl.origin, Origin::Server(_))
            && let Some(source) = tl.source.clone()
        {
            // A server with no profiles in the time asked before: its types in this
            // time first (a preset or a typed range asks for another).
            let progress = Progress::default();
            tl.indexing = Some(progress.clone());
            let span = tl.span;
            self.ask_types(ctx, source, vec![span], progress);
            return;
        }
        let (Some(source), Some(selector)) = (tl.source.clone(), tl.selector()) else {
            return;
        };
        let Some(all_series) = tl.type_selector() else {
            return;
        };
        let sum_by = tl.sum_by.clone();
        tl.series_gen += 1;
        let generation = tl.series_gen;
        let span = tl.span;
        let (range, step) = tl.series_request();
        tl.step_nanos = step;
        tl.series_covered = range;
        tl.loading_series = true;
        // The notice is about the last answer, unless the server is being retried (the
        // notice then stays until it answers).
        if tl.unavailable_since.is_none() {
            tl.notice = None;
        }
        self.run_query(ctx, async move {
            let names = source.labels(all_series, span).await.unwrap_or_default();
            let sum_by = sum_by.resolve(&names);
            let result = source.query_range(selector, range, step, sum_by).await;
            TimeMsg::Series(generation, names, result)
        });
    }

    /// Sets the label matchers and plots again.
    pub fn set_matchers(&mut self, ctx: &Context, matchers: Vec<Matcher>) {
        self.sync_side_selector(ctx);
        let Some(tl) = &mut self.timeline else {
            return;
        };
        tl.matchers = matchers;
        tl.notice = None;
        if let Some(selectors) = &mut self.compare.selectors {
            // Compare mode: the matchers are those of the side being selected.
            selectors[self.compare.target as usize] = tl.matchers.clone();
            self.compare.shown = self.compare.target;
        }
        if let Some(sel) = tl.selector() {
            tl.bar.text = sel.to_string();
        }
        // What is selected follows the new selector, as Parca's Search re-runs the query.
        let selected = if self.compare.enabled {
            self.compare.picked(self.compare.target).map(|p| p.time)
        } else {
            tl.selection
        };
        self.load_series(ctx);
        if let Some(time) = selected {
            self.select_time(ctx, time);
        }
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
                    tl.type_changed();
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
        if let Some(tl) = &mut self.timeline {
            tl.selection_series.clear();
            let range = super::timeline::clamp_to(tl.visible_range(), tl.span);
            self.select_time(ctx, QueryTime::Merge(range));
        }
    }

    /// Selects `time`: queries its profile (merged) and, once it arrives, shows it.
    pub fn select_time(&mut self, ctx: &Context, time: QueryTime) {
        self.sync_side_selector(ctx);
        let target = self.comparing().then_some(self.compare.target);
        let Some(tl) = &self.timeline else {
            return;
        };
        let (Some(source), Some(mut selector)) = (tl.source.clone(), tl.selector()) else {
            return;
        };
        selector.matchers = tl.selection_matchers();
        let side = target.map(|s| (s, selector.matchers.clone()));
        // The merge's tables and the view it becomes are as large as the view shown: a
        // large one is set aside from now on, not only once the merge is done. So it
        // is for a compare side, which the view would outlast hidden (a merged day
        // shown, then two half-days compared, held 1.34 GB): it comes back when
        // compare mode is left.
        if side.is_some() {
            // A side picked: the selection being merged no longer becomes A.
            self.compare.carry_waiting = false;
            self.hide_large_view();
        } else {
            self.set_aside_large_view();
        }
        let Some(tl) = &mut self.timeline else {
            return;
        };
        // A new selection replaces the one under way for the same side only: picking
        // B while A is still merging keeps A (B waits for it). Outside compare mode
        // there is one selection, and it replaces every other.
        tl.forget_queries(|q| q.side == target || q.side.is_none() || target.is_none());
        let progress = Progress::default();
        let id = tl.next_query;
        tl.next_query += 1;
        tl.queries.push(Query {
            id,
            side: target,
            time,
            progress: progress.clone(),
        });
        tl.notice = None;
        if target == Some(Side::A) {
            // After A, the next selection is B.
            self.compare.target = Side::B;
        }
        self.run_query(ctx, async move {
            let started = std::time::Instant::now();
            let range = match time {
                QueryTime::Single(t) => TimeRange {
                    start_nanos: t,
                    end_nanos: t.saturating_add(1),
                },
                QueryTime::Merge(r) => r,
            };
            // One point per distinct profile time: the number of profiles merged, asked
            // at the same time as the merge (on a server, two requests in flight).
            let watch = progress.clone();
            let (profile, count) = tokio::join!(
                source.query(selector.clone(), time, progress),
                source.query_range(selector, range, 1, Some(Vec::new()))
            );
            let count: usize = count.map_or(0, |s| s.iter().map(|s| s.points.len()).sum());
            let skipped = watch.skipped();
            let result = profile.map(|p| Selected {
                profile: Box::new(p),
                count: count.saturating_sub(skipped.len()),
                took: started.elapsed(),
                skipped,
            });
            TimeMsg::Selected(id, time, side, result)
        });
    }

    /// Drains the timeline's messages.
    pub(super) fn poll_timeline(&mut self, ctx: &Context) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let msgs: Vec<TimeMsg> = tl.rx.try_iter().collect();
        if tl.indexing.is_some() || tl.querying() {
            ctx.request_repaint_after(super::app::PROGRESS_REPAINT);
        }
        for msg in msgs {
            self.handle_time_msg(ctx, msg);
        }
        self.sync_side_selector(ctx);
        // A server that was unavailable: ask again every few seconds until it answers.
        if let Some(tl) = &self.timeline
            && let Some(since) = tl.unavailable_since
        {
            if since.elapsed() >= RETRY_AFTER && !tl.loading_series {
                self.load_series(ctx);
            } else {
                ctx.request_repaint_after(RETRY_AFTER);
            }
        }
    }

    /// Asks for the values of label `name` (for the autocomplete) unless known or
    /// asked for already.
    pub fn request_values(&mut self, ctx: &Context, name: &str) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let (Some(source), Some(selector)) = (tl.source.clone(), tl.type_selector()) else {
            return;
        };
        if tl.values.contains_key(name) {
            return;
        }
        tl.values.insert(name.to_string(), Vec::new());
        let (name, span) = (name.to_string(), tl.span);
        self.run_query(ctx, async move {
            let values = source
                .values(name.clone(), selector, span)
                .await
                .unwrap_or_default();
            TimeMsg::Values(name, values)
        });
    }

    /// In compare mode, keeps the timeline's matchers (the selector row and the plot)
    /// those of the side being selected, plotting again when they change; both sides
    /// start with the selector in force when compare mode was switched on. Outside
    /// compare mode, the single selector is the one the active side had.
    pub(super) fn sync_side_selector(&mut self, ctx: &Context) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let c = &mut self.compare;
        if !c.enabled {
            c.selectors = None;
            c.carry_waiting = false;
            // The comparison is made again if compare mode comes back: its trees are
            // not held beside the normal view, rebuilt now if it was set aside.
            c.drop_result();
            return;
        }
        if c.selectors.is_none() {
            c.selectors = Some([tl.matchers.clone(), tl.matchers.clone()]);
            c.shown = c.target;
            c.carry_waiting = true;
        }
        if c.carry_waiting {
            self.carry_selection_into_a();
        }
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let c = &mut self.compare;
        let Some(selectors) = &c.selectors else {
            return;
        };
        if c.shown == c.target {
            return;
        }
        c.shown = c.target;
        let matchers = selectors[c.target as usize].clone();
        if matchers != tl.matchers {
            tl.matchers = matchers;
            tl.notice = None;
            if let Some(sel) = tl.selector() {
                tl.bar.text = sel.to_string();
            }
            tl.bar.text_error = None;
            self.load_series(ctx);
        }
    }

    /// Compare mode was switched on: the selection shown becomes A, as Parca's compare
    /// keeps the view's selection on the left, so that what was being looked at is
    /// not lost and needs no second merge. The next pick still sets A (the story of
    /// the issue picks both sides afresh); *select B* compares the selection with
    /// another. A selection still being merged, or its view still being made, when
    /// compare mode was switched on is carried once it is shown (asked again each
    /// frame while [`super::compare::CompareState::carry_waiting`]), unless a side is
    /// picked first; nothing is carried when compare mode comes back to sides it kept.
    fn carry_selection_into_a(&mut self) {
        let Some(tl) = &self.timeline else {
            return;
        };
        if self.compare.a.is_some() || self.compare.b.is_some() {
            self.compare.carry_waiting = false;
            return;
        }
        if tl.querying() || self.job.is_some() || !self.pending.is_empty() {
            return;
        }
        self.compare.carry_waiting = false;
        let (Some(cur), Some(time)) = (&self.current, tl.selection) else {
            return;
        };
        let picked = Picked {
            time,
            profile: Arc::clone(&cur.profile),
            count: tl.selection_profiles,
            matchers: tl.selection_matchers(),
        };
        self.compare.set(Side::A, picked);
        // Compare mode hides the normal view: a large one lets its tree go, as a pick
        // would make it (its profile is A's).
        self.hide_large_view();
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
                    Ok(opened) => {
                        tl.opening_took = Some(tl.opening_started.elapsed());
                        tl.span = opened.span;
                        tl.set_types(opened.types, opened.type_spans);
                        tl.warnings = opened.warnings;
                        tl.profiles = opened.profiles;
                        tl.pending_bounds = Some(tl.whole_bounds());
                        tl.failed = None;
                        tl.source = Some(opened.source);
                        let reloaded = tl.kept.take();
                        let fresh = tl.origin != Origin::Capture && reloaded.is_none();
                        if let Some(kept) = reloaded {
                            tl.restore(kept);
                        }
                        let name = tl.origin.name();
                        if tl.types.is_empty() {
                            tl.notice = Some(match tl.origin {
                                // A server keeps more than the time asked for.
                                Origin::Server(_) => format!(
                                    "no profiles from {} to {}: a preset or range… asks \
                                     for another time",
                                    super::timeline::date_hms(tl.span.start_nanos),
                                    super::timeline::date_hms(tl.span.end_nanos),
                                ),
                                _ => format!("no profiles in {name}"),
                            });
                        } else {
                            self.load_series(ctx);
                        }
                        if fresh {
                            // A view of what was open before is not of these profiles,
                            // nor is the time it took.
                            self.drop_view();
                            self.last_job = None;
                            self.set_title(ctx, &name);
                        }
                    }
                    Err(e) => {
                        tl.failed = Some(e.clone());
                        self.error = Some(e);
                    }
                }
            }
            TimeMsg::Series(generation, names, result) => {
                if generation != tl.series_gen {
                    return;
                }
                tl.loading_series = false;
                tl.bar.label_names = names;
                match result {
                    Ok(series) => {
                        if tl.unavailable_since.take().is_some() {
                            tl.notice = None;
                        }
                        tl.scale = tl
                            .types
                            .get(tl.type_index)
                            .map_or(PlotScale::Cores, |t| PlotScale::of(t, &series));
                        tl.set_series(plot_series(series, tl.scale));
                    }
                    Err(e @ SourceError::Unavailable(_)) => {
                        // Keep what is shown; try again in a moment.
                        tl.unavailable_since = Some(Instant::now());
                        tl.notice = Some(format!("{e}; showing the last answer, retrying"));
                    }
                    Err(e) => {
                        tl.set_series(Vec::new());
                        tl.notice = Some(e.to_string());
                    }
                }
            }
            TimeMsg::Values(name, values) => {
                tl.values.insert(name, values);
            }
            TimeMsg::Live(super::live::LiveMsg::Interval(range)) => self.live_interval(ctx, range),
            TimeMsg::Live(super::live::LiveMsg::Failed(e)) => self.capture_failed(e),
            TimeMsg::Selected(id, time, side, result) => {
                let Some(at) = tl.queries.iter().position(|q| q.id == id) else {
                    // Replaced by a newer selection of its side, or cancelled.
                    return;
                };
                tl.queries.remove(at);
                let a_failed = result.is_err() && matches!(side, Some((Side::A, _)));
                if a_failed && tl.query_of(Some(Side::B)).is_none() {
                    // No A after all (no data there, say): the next pick is A's again.
                    self.compare.target = Side::A;
                }
                match (result, side) {
                    (Ok(got), side) => self.selected(time, side, got),
                    (Err(SourceError::NoData), _) => tl.notice = Some(NO_DATA.to_string()),
                    (Err(SourceError::Cancelled), _) => {
                        self.message = Some(("cancelled".into(), false));
                    }
                    (Err(e), _) => tl.notice = Some(e.to_string()),
                }
            }
        }
    }

    /// Shows a selection's merged profile (or sets it as a side in compare mode), and
    /// says which profiles were left out of it.
    fn selected(&mut self, time: QueryTime, side: Option<(Side, Vec<Matcher>)>, got: Selected) {
        if !got.skipped.is_empty() {
            self.message = Some((
                format!(
                    "left out {} gone or broken since indexing: {}",
                    super::timeline::profiles_text(got.skipped.len()),
                    got.skipped.join("; ")
                ),
                true,
            ));
        }
        match side {
            Some((side, matchers)) => self.compare.set(
                side,
                Picked {
                    time,
                    profile: Arc::new(*got.profile),
                    count: got.count,
                    matchers,
                },
            ),
            None => {
                let Some(tl) = &mut self.timeline else {
                    return;
                };
                tl.selection = Some(time);
                tl.selection_profiles = got.count;
                tl.selection_took = Some(got.took);
                let name = tl.selection_name(time);
                // Shown in the type plotted, as Parca shows the profile type searched
                // and as compare mode compares it; the profile's other types stay one
                // choice away in the view.
                let plotted = tl.types.get(tl.type_index);
                let sample_type =
                    plotted.and_then(|t| got.profile.find_sample_type(&t.sample_type));
                self.release_set_aside();
                self.open_as(
                    Source::Profile {
                        name,
                        path: None,
                        profile: Arc::new(*got.profile),
                    },
                    sample_type,
                );
            }
        }
    }

    /// Cancels indexing and the selection queries under way.
    pub fn cancel_time_job(&mut self) {
        if let Some(tl) = &mut self.timeline {
            tl.cancel_jobs();
            if tl.querying() {
                self.message = Some(("cancelled".into(), false));
            }
            tl.queries.clear();
        }
    }

    /// The line above the flame graph: "selection: 12:01:00–12:05:00, 25 profiles, total 3 s".
    /// None in compare mode, whose panel names A's and B's selections instead.
    pub fn selection_text(&self) -> Option<String> {
        if self.comparing() {
            return None;
        }
        let tl = self.timeline.as_ref()?;
        let time = tl.selection?;
        let cur = self.current.as_ref()?;
        let series = match super::compare::matchers_text(&tl.selection_series) {
            text if text.is_empty() => text,
            text => format!(" {text}"),
        };
        Some(format!(
            "selection: {}{series}, {}, total {}",
            describe_time(time, tl.step_nanos),
            super::timeline::profiles_text(tl.selection_profiles),
            units::readable(cur.totals.first().copied().unwrap_or(0), cur.unit())
        ))
    }

    /// How long the selection shown took to read and merge, in the status bar (left of
    /// the time its view took).
    pub(super) fn merge_status(&self, ui: &mut Ui) {
        let Some(tl) = &self.timeline else {
            return;
        };
        let shown = tl.selection.is_some() && !tl.querying() && !self.comparing();
        if let (Some(took), true) = (tl.selection_took, shown) {
            ui.weak(format!(
                "merged {} in {}",
                super::timeline::profiles_text(tl.selection_profiles),
                super::status_bar::took_text(took)
            ))
            .on_hover_text(
                "reading and merging the selection's profiles, before its view was built",
            );
        } else if let (Some(took), Some(n)) = (tl.opening_took, tl.profiles) {
            ui.weak(format!(
                "indexed {} in {}",
                super::timeline::profiles_text(n),
                super::status_bar::took_text(took)
            ))
            .on_hover_text("reading every profile of the folder for the plot and its merges");
        }
    }
}
