//! The one place that does what the window's panels ask for ([`Action`]) across
//! features ([`FlintApp::apply`]): what opening a path means, what a connection or a
//! capture replaces, where a dialog's result or a selection's profile goes, what a
//! type switch clears.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use capture::{
    Matcher, ProfileSource, Progress, QueryTime, RemoteOptions, RemoteSource, ServerUrl, TimeRange,
};
use egui::Context;

use crate::gui::action::Action;
use crate::gui::app::FlintApp;
use crate::gui::compare::{Picked, Side};
use crate::gui::live::{self, LiveCapture};
use crate::gui::shell::dialogs::{self, Dialog};
use crate::gui::shell::temp_dirs;
use crate::gui::time::answers::TimeEvent;
use crate::gui::time::demo;
use crate::gui::time::open::open_folder;
use crate::gui::time::queries::QueryRuntime;
use crate::gui::time::selector::SumBy;
use crate::gui::time::timeline::{LiveMsg, Origin, Selected, TimeMsg, Timeline, profiles_text};
use crate::gui::view::loader::Source;

/// How long to wait before asking an unavailable server again.
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

impl FlintApp {
    /// Does what `action` asks, across features.
    pub fn apply(&mut self, ctx: &Context, action: Action) {
        match action {
            Action::OpenDialog => self.shell.dialogs.ask(ctx, dialogs::open_prompt()),
            Action::OpenPath(path) => self.open_path(ctx, path),
            Action::OpenDemo => self.open_demo(ctx),
            Action::ReloadFolder => self.reload_dir(ctx),
            Action::ShowConnect => self.shell.connect.open = true,
            Action::Connect(url, options) => self.connect_to(ctx, &url, options),
            Action::StartCapture => self.start_capture(ctx),
            Action::StopCapture => self.stop_capture(),
            Action::Export(kind) => match dialogs::export_prompt(&self.view, kind) {
                Some(prompt) => self.shell.dialogs.ask(ctx, prompt),
                None => self.shell.tell("nothing to export", true),
            },
            Action::ExportDiff => {
                match dialogs::diff_prompt(&self.compare, self.timeline.as_ref()) {
                    Ok(prompt) => self.shell.dialogs.ask(ctx, prompt),
                    Err(e) => self.shell.tell(e, true),
                }
            }
            Action::CancelJob => self.cancel_job(),
            Action::CancelSymbols => {
                if self.symbols.cancel() {
                    self.shell
                        .tell("naming cancelled: addresses shown".to_string(), false);
                }
            }
            Action::CancelDiff => {
                if self.compare.cancel() {
                    self.shell.tell("cancelled", false);
                }
            }
            Action::CancelTimeJob => self.cancel_time_job(),
            Action::DismissError => self.shell.error = None,
            Action::ShowWarnings => self.shell.warnings_shown = true,
            Action::ResetZoom if self.view.source.is_open() => self.view.close_source(),
            Action::ResetZoom if self.view.sandwich.is_open() => self.view.close_sandwich(),
            Action::ResetZoom => {
                self.view.reset_zoom();
                crate::gui::view::flight::land(ctx);
            }
            Action::ShowSandwich if self.comparing() => self.compare.sandwich_of_selection(),
            Action::ShowSandwich => self.view.sandwich_of_selection(),
            Action::ShowSource if self.comparing() => {
                self.shell.tell(
                    "the source view shows one profile: leave compare mode",
                    false,
                );
            }
            Action::ShowSource => self.view.source_of_selection(),
            Action::StepCursor(step) if self.comparing() => {
                self.compare.step_cursor(step, self.view.flame.flipped);
            }
            Action::ZoomToCursor if self.comparing() => self.compare.zoom_to_cursor(),
            // The source view has no graph to move in.
            Action::StepCursor(_) | Action::ZoomToCursor if self.view.source.is_open() => {}
            Action::StepCursor(step) if self.view.sandwich.is_open() => {
                self.view.sandwich.step_cursor(step, 0);
            }
            Action::StepCursor(step) => self.view.step_cursor(step),
            Action::ZoomToCursor => self.view.zoom_to_cursor(),
            Action::Back => self.view.back(),
            Action::FocusSearch => self.view.focus_search = true,
            Action::SetFlipped(flipped) => self.view.flame.flipped = flipped,
            Action::SetColorMode(mode) => self.view.flame.color_mode = mode,
            Action::SetGroupBy(keys) => self.view.group_by = keys,
            Action::Dialog(Dialog::Open(path)) => self.open_path(ctx, path),
            Action::Dialog(Dialog::Done(result)) => match result {
                Ok(Some(msg)) => self.shell.tell(msg, false),
                Ok(None) => {}
                Err(e) => self.shell.tell(e, true),
            },
            Action::Dialog(Dialog::Unavailable(prompt)) => self.shell.dialogs.prompt = Some(prompt),
            Action::SetCompare(on) => {
                self.compare.turn(on);
                self.sync_side_selector(ctx);
            }
            Action::CompareTarget(side) => {
                self.compare.aim(side);
                self.sync_side_selector(ctx);
            }
            Action::PlotType(index) => {
                self.plot_type(ctx, index);
                self.load_series(ctx);
            }
            Action::LoadSeries => self.load_series(ctx),
            Action::Select(time) => self.select_time(ctx, time),
            Action::SetMatchers(matchers) => self.set_matchers(ctx, matchers),
            Action::AddMatchers(add) => self.add_matchers(ctx, add),
            Action::SelectorText(text) => self.apply_selector_text(ctx, &text),
            Action::SumBy(sum_by) => self.set_sum_by(ctx, sum_by),
            Action::MergeVisible => self.merge_visible(ctx),
            Action::RequestValues(name) => self.request_values(ctx, &name),
        }
    }

    /// Does every action of `actions`, in order.
    pub fn apply_all(&mut self, ctx: &Context, actions: Vec<Action>) {
        for action in actions {
            self.apply(ctx, action);
        }
    }

    /// Opens `path` as a dropped file is opened: a directory of profiles in the time
    /// mode, anything else as one profile.
    pub fn open_path(&mut self, ctx: &Context, path: PathBuf) {
        if crate::gui::time::timeline::opens_in_time_mode(&path) {
            self.open_dir(ctx, path);
        } else {
            self.view.open(Source::Path(path));
        }
    }

    /// Connects to the server at `url` in time mode and remembers it.
    pub fn connect_to(&mut self, ctx: &Context, url: &str, options: RemoteOptions) {
        let url = match ServerUrl::parse(url) {
            Ok(u) => u.to_string(),
            Err(e) => {
                self.shell.fail(e.to_string());
                return;
            }
        };
        self.shell.connect.remember(&url);
        self.shell.error = None;
        self.connect(ctx, &url, options);
    }
}

/// Time mode across features: opening a folder, a server or a capture replaces the
/// plot and compare mode; a selection's answer goes to the view or to a compare side.
impl FlintApp {
    /// Opens a directory in time mode: indexes it in the background.
    pub fn open_dir(&mut self, ctx: &Context, dir: PathBuf) {
        self.open_dir_made(ctx, dir, || Ok(()));
    }

    /// File → *Demo: a fleet's last hour*: the demo hour ([`crate::gui::time::demo`])
    /// written into its temporary folder, then opened as a folder is; both off the UI
    /// thread.
    pub fn open_demo(&mut self, ctx: &Context) {
        let (own, dir) = demo::new_demo_dir();
        self.shell.made(own);
        let target = dir.clone();
        self.open_dir_made(ctx, dir, move || {
            demo::write_demo_hour(&target, capture::time::now_nanos())
        });
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
        let Some(tl) = &self.timeline else {
            return;
        };
        let tx = tl.sender();
        let open = move || {
            make()?;
            open_folder(&dir, decode, budget, &progress)
        };
        if self.view.sync_jobs {
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
                self.shell.fail(e.to_string());
                return;
            }
        };
        let progress = self.start_timeline(Origin::Server(source.url().to_string()));
        let now = capture::time::now_nanos();
        let spans = [1, 24 * 7].map(|hours| TimeRange {
            start_nanos: now.saturating_sub(hours * 3_600_000_000_000),
            end_nanos: now,
        });
        let source: Arc<dyn ProfileSource> = Arc::new(source);
        self.query(|tl, rt| tl.ask_types(rt, ctx, source, spans.to_vec(), progress));
    }

    /// Replaces time mode's state with a new one for `origin` (cancelling what the old
    /// one was doing); returns the progress of opening it.
    fn start_timeline(&mut self, origin: Origin) -> Progress {
        if let Some(old) = &self.timeline {
            old.cancel_jobs();
        }
        self.compare.clear();
        let (tl, progress) = Timeline::opening(origin);
        self.timeline = Some(tl);
        progress
    }

    /// Leaves the time mode (for a file opened on its own): the plot, its queries and
    /// compare go.
    pub(crate) fn leave_time_mode(&mut self) {
        if let Some(old) = self.timeline.take() {
            old.cancel_jobs();
        }
        self.compare.leave();
    }

    /// File → Reload folder (F5): indexes the folder shown again, so that profiles
    /// written since appear (and removed ones go), keeping the selector, sum by, type,
    /// legend, view, selection and compare, and the flame graph shown.
    pub fn reload_dir(&mut self, ctx: &Context) {
        let Some((dir, kept)) = self.timeline.as_ref().and_then(Timeline::reloadable) else {
            return;
        };
        // Opening clears compare: its sides are profiles already merged, kept as they are.
        let compare = std::mem::take(&mut self.compare);
        self.open_dir(ctx, dir);
        self.compare = compare;
        if let Some(tl) = &mut self.timeline {
            tl.keep(kept);
        }
    }

    /// Runs `ask` on the timeline and the query runtime; a runtime that cannot start
    /// is shown as the error.
    fn query(&mut self, ask: impl FnOnce(&mut Timeline, &mut QueryRuntime) -> Result<(), String>) {
        self.queries.sync = self.view.sync_jobs;
        let Some(tl) = &mut self.timeline else {
            return;
        };
        if let Err(e) = ask(tl, &mut self.queries) {
            self.shell.fail(e);
        }
    }

    /// Queries the series of the chosen profile type and matchers.
    pub(crate) fn load_series(&mut self, ctx: &Context) {
        self.query(|tl, rt| tl.load_series(rt, ctx));
    }

    /// Asks for the values of label `name` (for the autocomplete) unless known or
    /// asked for already.
    pub fn request_values(&mut self, ctx: &Context, name: &str) {
        self.query(|tl, rt| tl.request_values(rt, ctx, name));
    }

    /// Sets the label matchers and plots again; what is selected follows the new
    /// selector, as Parca's Search re-runs the query.
    pub fn set_matchers(&mut self, ctx: &Context, matchers: Vec<Matcher>) {
        self.sync_side_selector(ctx);
        let Some(tl) = &mut self.timeline else {
            return;
        };
        // Compare mode: the matchers are those of the side being selected.
        self.compare.edited(&matchers);
        tl.set_matchers(matchers);
        let selected = if self.compare.enabled {
            self.compare.target_time()
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
        let matchers = tl.with_matchers(add);
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
        let Some((index, matchers)) = tl.parse_selector(text) else {
            return;
        };
        if index != tl.type_index {
            self.plot_type(ctx, index);
        }
        self.set_matchers(ctx, matchers);
    }

    /// Plots profile type `index`: what was selected in the type left, its comparison
    /// and its view go (the flame graph, top table, search and status bar describe the
    /// profile on screen, never one of a type no longer plotted); the flame graph's
    /// place says how to select in the new type.
    pub(crate) fn plot_type(&mut self, ctx: &Context, index: usize) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        tl.plot_type(index);
        let name = tl.origin.name();
        self.compare.clear();
        self.view.drop_view();
        self.view.last_job = None;
        self.shell.set_title(ctx, &name);
    }

    /// Sets how the series are summed and plots again.
    pub fn set_sum_by(&mut self, ctx: &Context, sum_by: SumBy) {
        if let Some(tl) = &mut self.timeline {
            tl.set_sum_by(sum_by);
            self.load_series(ctx);
        }
    }

    /// Merges every profile matching the selector in the visible time range; in compare
    /// mode, into the side being selected (its Merge button names it).
    pub fn merge_visible(&mut self, ctx: &Context) {
        if let Some(tl) = &mut self.timeline {
            let time = tl.visible_merge();
            self.select_time(ctx, time);
        }
    }

    /// Shows the merge of the range in view once the first series are in, so that
    /// opening never leaves the flame graph empty; not in compare mode, whose sides
    /// the user picks, nor over a view shown or being made.
    fn first_view(&mut self, ctx: &Context) {
        if !self.comparing() && self.view.current().is_none() && !self.view.is_loading() {
            self.merge_visible(ctx);
        }
    }

    /// Selects `time`: queries its profile (merged) and, once it arrives, shows it (in
    /// compare mode, as the side being selected; after A, the next is B).
    pub fn select_time(&mut self, ctx: &Context, time: QueryTime) {
        self.sync_side_selector(ctx);
        let target = self.comparing().then_some(self.compare.target);
        if !self.timeline.as_ref().is_some_and(Timeline::can_select) {
            return;
        }
        // The merge's tables and the view it becomes are as large as the view shown: a
        // large one is set aside from now on, not only once the merge is done. So it
        // is for a compare side, which the view would outlast hidden (a merged day
        // shown, then two half-days compared, held 1.34 GB): it comes back when
        // compare mode is left.
        if let Some(side) = target {
            // A side picked: the selection being merged no longer becomes A.
            self.compare.picking(side);
            self.view.hide_large_view();
        } else {
            self.view.set_aside_large_view();
        }
        self.query(|tl, rt| tl.start_selection(rt, ctx, time, target));
    }

    /// Takes in time mode's answers and applies what they ask of the window; asks an
    /// unavailable server again every few seconds until it answers.
    pub(crate) fn poll_timeline(&mut self, ctx: &Context) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let msgs = tl.take_messages();
        if tl.busy() {
            ctx.request_repaint_after(crate::gui::app::PROGRESS_REPAINT);
        }
        for msg in msgs {
            let Some(tl) = &mut self.timeline else {
                break;
            };
            for event in tl.handle(msg) {
                self.apply_time_event(ctx, event);
            }
        }
        self.sync_side_selector(ctx);
        match self
            .timeline
            .as_ref()
            .and_then(|tl| tl.retry_due(RETRY_AFTER))
        {
            Some(true) => self.load_series(ctx),
            Some(false) => ctx.request_repaint_after(RETRY_AFTER),
            None => {}
        }
    }

    /// Does what an answer of time mode asks of the window.
    fn apply_time_event(&mut self, ctx: &Context, event: TimeEvent) {
        match event {
            TimeEvent::Opened {
                fresh,
                has_types,
                name,
            } => {
                if has_types {
                    self.load_series(ctx);
                }
                if fresh {
                    // A view of what was open before is not of these profiles, nor is
                    // the time it took.
                    self.view.drop_view();
                    self.view.last_job = None;
                    self.shell.set_title(ctx, &name);
                }
            }
            TimeEvent::OpenFailed(e) => self.shell.fail(e),
            TimeEvent::Cancelled => self.shell.tell("cancelled", false),
            TimeEvent::Selected(time, side, got) => self.selected(time, side, got),
            TimeEvent::NoA => self.compare.aim(Side::A),
            TimeEvent::FirstView => self.first_view(ctx),
            TimeEvent::Live(LiveMsg::Interval(range)) => self.live_interval(ctx, range),
            TimeEvent::Live(LiveMsg::Failed(e)) => self.capture_failed(e),
        }
    }

    /// In compare mode, keeps the timeline's matchers (the selector row and the plot)
    /// those of the side being selected, plotting again when they change; both sides
    /// start with the selector in force when compare mode was switched on. Outside
    /// compare mode, the single selector is the one the active side had.
    pub(crate) fn sync_side_selector(&mut self, ctx: &Context) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        if !self.compare.enabled {
            if let Some(series) = self.compare.off() {
                // The selection shown again is described by its own series, not by
                // those of the last pick of a side.
                tl.set_selection_series(series);
            }
            return;
        }
        self.compare.on(&tl.matchers, &tl.selection_series);
        if self.compare.carrying() {
            self.carry_selection_into_a();
        }
        let Some(matchers) = self.compare.switched() else {
            return;
        };
        if self
            .timeline
            .as_mut()
            .is_some_and(|tl| tl.show_side_matchers(matchers))
        {
            self.load_series(ctx);
        }
    }

    /// Compare mode was switched on: the selection shown becomes A, as Parca's compare
    /// keeps the view's selection on the left, so that what was being looked at is
    /// not lost and needs no second merge. A selection still being merged, or its view
    /// still being made, is carried once it is shown (asked again each frame while
    /// [`crate::gui::compare::CompareState::is_carrying`]), unless a side is picked
    /// first; nothing is carried when compare mode comes back to sides it kept.
    fn carry_selection_into_a(&mut self) {
        let Some(tl) = &self.timeline else {
            return;
        };
        if tl.querying() || self.view.is_loading() {
            return;
        }
        self.compare.stop_carrying();
        let (Some(cur), Some(time)) = (self.view.current(), tl.selection) else {
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
        self.view.hide_large_view();
    }

    /// Shows a selection's merged profile (or sets it as a side in compare mode), and
    /// says which profiles were left out of it.
    fn selected(&mut self, time: QueryTime, side: Option<(Side, Vec<Matcher>)>, got: Selected) {
        if !got.skipped.is_empty() {
            let left_out = format!(
                "left out {} gone or broken since indexing: {}",
                profiles_text(got.skipped.len()),
                got.skipped.join("; ")
            );
            self.shell.tell(left_out, true);
        }
        if let Some((side, matchers)) = side {
            let picked = Picked {
                time,
                profile: Arc::new(*got.profile),
                count: got.count,
                matchers,
            };
            self.compare.set(side, picked);
            return;
        }
        let Some(tl) = &mut self.timeline else {
            return;
        };
        let name = tl.show_selection(time, got.count, got.took);
        // Shown in the type plotted, as Parca shows the profile type searched and as
        // compare mode compares it; the profile's other types stay one choice away.
        let plotted = tl.types.get(tl.type_index);
        let sample_type = plotted.and_then(|t| got.profile.find_sample_type(&t.sample_type));
        self.view.release_set_aside();
        let profile = Arc::new(*got.profile);
        let source = Source::Profile {
            name,
            path: None,
            profile,
        };
        self.view.open_as(source, sample_type);
    }

    /// Cancels indexing and the selection queries under way.
    pub fn cancel_time_job(&mut self) {
        if self.timeline.as_mut().is_some_and(Timeline::cancel_all) {
            self.shell.tell("cancelled", false);
        }
    }

    /// Starts capturing the local machine (all processes, 99 Hz, 5-second intervals)
    /// into a store of its own, shown in time mode as it grows.
    pub fn start_capture(&mut self, ctx: &Context) {
        self.stop_capture();
        // Set aside, not cancelled: shown again if the capture cannot start.
        let previous = self.timeline.take();
        temp_dirs::remove_stale(temp_dirs::CAPTURE);
        let dir = temp_dirs::own_dir(temp_dirs::CAPTURE);
        let _ = std::fs::remove_dir_all(&dir);
        self.shell.made(dir.clone());
        let store = match live::open_store(&dir) {
            Ok(store) => store,
            Err(e) => {
                self.shell.fail(e);
                self.timeline = previous;
                return;
            }
        };
        self.compare.clear();
        let tl = Timeline::capture(live::opened(Arc::clone(&store)));
        let tx = tl.sender();
        self.timeline = Some(tl);
        match LiveCapture::start(ctx, tx, store, dir, previous) {
            Ok(capture) => self.live = Some(capture),
            Err(e) => self.shell.fail(e),
        }
    }

    /// The capture failed (the message is shown): it stops, and if it never stored an
    /// interval, the view from before it started comes back.
    fn capture_failed(&mut self, message: String) {
        self.shell.fail(message);
        let Some(mut capture) = self.live.take() else {
            return;
        };
        let nothing_captured = (self.timeline.as_ref())
            .is_some_and(|tl| tl.origin == Origin::Capture && tl.profiles.unwrap_or(0) == 0);
        if nothing_captured {
            self.timeline = capture.take_previous();
        }
    }

    /// Stops the capture (the interval under way is finished and stored).
    pub fn stop_capture(&mut self) {
        if let Some(capture) = self.live.take() {
            capture.stop.store(true, Ordering::Relaxed);
        }
    }

    /// A new interval was stored: the plot grows to now, and the flame graph follows
    /// the latest interval unless the user selected something else.
    fn live_interval(&mut self, ctx: &Context, range: TimeRange) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        if let Some(previous) = self.live.as_mut().and_then(LiveCapture::take_previous) {
            // The capture works: what was shown before is gone for good.
            previous.cancel_jobs();
        }
        let follow = tl.grow(range);
        self.load_series(ctx);
        if follow && !self.comparing() {
            if let Some(tl) = &mut self.timeline {
                tl.follow(QueryTime::Merge(range));
            }
            self.select_time(ctx, QueryTime::Merge(range));
        }
    }
}
