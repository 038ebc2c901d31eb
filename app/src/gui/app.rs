//! The window ([`FlintApp`]): the features it owns (the profile view, time mode,
//! compare mode, a live capture, the shell's dialogs and messages) and the frame loop
//! that polls them and lays out their panels.

use std::time::Duration;

use egui::{Context, Ui};
use profile_model::codec::DecodeOptions;

use crate::gui::compare::diff_job::{self, CompareEvent};
use crate::gui::compare::{CompareState, Look};
use crate::gui::shell::{Shell, input, menu_bar, status_bar};
use crate::gui::symbols::Symbols;
use crate::gui::time::queries::QueryRuntime;
use crate::gui::view::loader::Source;
use crate::gui::view::{ProfileView, ViewEvent};

/// How often the window repaints while work runs in the background, to show its
/// progress: every frame costs CPU the work could use (where rendering is done in
/// software, repainting at 4 Hz took 0.3 s of a 6 s merge of a day; at 2 Hz half that).
pub const PROGRESS_REPAINT: Duration = Duration::from_millis(500);

/// How much of a folder's samples the window keeps as it indexes it, so that its
/// merges add them up instead of reading the files again
/// ([`capture::FileSource::open_keeping_stacks`]): a day of 10-second profiles of
/// ~2,000 samples each takes about 200 MB.
pub const KEPT_STACKS_BUDGET: usize = 384 << 20;

/// The application.
pub struct FlintApp {
    pub(super) decode: DecodeOptions,
    /// The profile view: the profile shown, its flame graph, top table and settings.
    pub view: ProfileView,
    /// Time mode (a directory opened), when active.
    pub timeline: Option<crate::gui::time::timeline::Timeline>,
    /// The runtime time mode's queries run on.
    pub(super) queries: QueryRuntime,
    /// How much of a folder's samples indexing it keeps ([`KEPT_STACKS_BUDGET`]).
    pub kept_stacks_budget: usize,
    /// The shell: error banner, status message, title, dialogs, panel sizes.
    pub shell: Shell,
    /// Compare mode (time mode): selections A and B and their comparison.
    pub compare: CompareState,
    /// A capture of this machine, while it runs.
    pub live: Option<crate::gui::live::LiveCapture>,
    /// Names for the profiles shown, from the sources the user gave.
    pub symbols: Symbols,
}

/// The panels' names (egui keeps their sizes by them).
const PLOT_PANEL: &str = "flint time plot";
const TOP_PANEL: &str = "flint top table";
const DIFF_PANEL: &str = "flint diff table";

/// The table beside the flame graphs (the top table, or the diff table in compare mode).
fn side_panel(name: &str) -> egui::Panel {
    egui::Panel::right(name.to_owned())
        .resizable(true)
        .default_size(470.0)
        .min_size(260.0)
}

/// The share of the width the table beside the flame graphs takes at most: a narrow
/// window leaves the flame graph the rest (at 480 points, 8 points of flame graph were
/// left beside a 400-point table).
const SIDE_PANEL_SHARE: f32 = 0.6;

/// The most the table beside the flame graphs takes of `room` points of width
/// ([`SIDE_PANEL_SHARE`]).
fn side_panel_most(room: f32) -> f32 {
    room * SIDE_PANEL_SHARE
}

/// The height the plot panel leaves the flame graph and the table below it, where the
/// window has room for it (at 640×400 the plot's 290 points left them none: this leaves
/// a few rows of each, and the plot itself); else it takes at most half the height.
const BELOW_PLOT_HEIGHT: f32 = 100.0;

/// The most the plot panel takes of `room` points of height ([`BELOW_PLOT_HEIGHT`]).
fn plot_panel_most(room: f32) -> f32 {
    (room - BELOW_PLOT_HEIGHT).max(room * 0.5)
}

impl FlintApp {
    /// An empty window; [`FlintApp::open`] queues a file.
    pub fn new(decode: DecodeOptions) -> Self {
        Self {
            decode,
            view: ProfileView::new(decode),
            timeline: None,
            queries: QueryRuntime::default(),
            kept_stacks_budget: KEPT_STACKS_BUDGET,
            shell: Shell::default(),
            compare: CompareState::default(),
            live: None,
            symbols: Symbols::default(),
        }
    }

    /// Queues a file to open (loaded in the background on the next frame).
    pub fn open(&mut self, source: Source) {
        self.view.open(source);
    }

    /// Whether a job is running or queued.
    pub fn is_loading(&self) -> bool {
        self.view.is_loading()
    }

    /// Applies what the profile view's finished jobs tell: a new file replaces the
    /// plot it was opened from (unless a capture runs) and clears the last error; a
    /// failure is shown in the error banner.
    fn apply_view_events(&mut self, ctx: &Context, events: Vec<ViewEvent>) {
        for event in events {
            match event {
                ViewEvent::Installed { name, new_file } => {
                    if new_file {
                        self.shell.error = None;
                        if self.live.is_none() {
                            self.leave_time_mode();
                        }
                    }
                    self.shell.set_title(ctx, &name);
                }
                ViewEvent::Failed(e) => self.shell.fail(e),
            }
        }
    }

    /// Polls the profile view's jobs and applies what they tell.
    fn poll_view(&mut self, ctx: &Context) {
        let querying = self
            .timeline
            .as_ref()
            .is_some_and(crate::gui::time::timeline::Timeline::querying);
        let events = self.view.poll(ctx, querying, self.comparing());
        let installed = events
            .iter()
            .any(|e| matches!(e, ViewEvent::Installed { .. }));
        self.apply_view_events(ctx, events);
        if installed && let Some(cur) = self.view.current() {
            let profile = std::sync::Arc::clone(&cur.profile);
            self.symbols.start(&profile, self.view.sync_jobs);
        }
        let shown = self.view.current().map(|c| &c.profile);
        if let Some(named) = self.symbols.poll(shown)
            && let Some(cur) = self.view.current()
        {
            let source = Source::Profile {
                name: cur.name.clone(),
                path: cur.path.clone(),
                profile: named,
            };
            let sample_type = Some(cur.sample_type);
            self.view.open_as(source, sample_type);
        }
        if self.symbols.job().is_some() {
            ctx.request_repaint_after(PROGRESS_REPAINT);
        }
    }

    /// Polls compare mode's comparison, started anew when A, B or the settings change.
    fn poll_compare(&mut self, ctx: &Context) {
        let key = diff_job::diff_key(
            &self.compare,
            self.timeline.as_ref(),
            self.view.wanted_key(),
        );
        match self.compare.poll(ctx, key, self.view.sync_jobs) {
            Some(CompareEvent::Started) => self.view.hide_large_view(),
            Some(CompareEvent::FilterError(e)) => self.view.filter_error = Some(e),
            None => {}
        }
    }

    /// Cancels the profile view's running job.
    pub fn cancel_job(&mut self) {
        if self.view.cancel_job() {
            self.shell.tell("cancelled".to_string(), false);
        }
    }

    /// Draws the whole window inside `ui`.
    pub fn show(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        let actions = input::actions(&ctx);
        self.apply_all(&ctx, actions);
        self.poll_timeline(&ctx);
        let done = self.shell.dialogs.poll();
        self.apply_all(&ctx, done);
        self.poll_view(&ctx);
        self.poll_compare(&ctx);
        if self.comparing()
            && let Some(res) = self.compare.result.clone()
        {
            // The search is on what compare mode shows, not on the view it hides.
            self.compare.refresh_search(&res, &mut self.view.search);
        }
        self.view.refresh_caches(ui.visuals().dark_mode);

        let picked = egui::Panel::top("flint menu")
            .show(ui, |ui| menu_bar::menu(ui, self))
            .inner;
        self.apply_all(&ctx, picked);
        let compared = self.comparing().then(|| self.compare.matched_text());
        let opening = self.opening();
        egui::Panel::top("flint toolbar").show(ui, |ui| self.view.toolbar(ui, compared, opening));
        if self.shell.error.is_some() {
            let dismissed = egui::Panel::top("flint error")
                .frame(
                    egui::Frame::new()
                        .fill(ui.visuals().error_fg_color.gamma_multiply(0.18))
                        .inner_margin(egui::Margin::symmetric(8, 4)),
                )
                .show(ui, |ui| {
                    self.shell
                        .error
                        .as_deref()
                        .and_then(|e| status_bar::error_banner(ui, e))
                });
            if let Some(action) = dismissed.inner {
                self.apply(&ctx, action);
            }
        }
        let asked = egui::Panel::bottom("flint status")
            .show(ui, |ui| status_bar::status_bar(ui, self))
            .inner;
        self.apply_all(&ctx, asked);
        if self.timeline.is_some() {
            let panel = egui::Panel::top(PLOT_PANEL)
                .resizable(true)
                .default_size(crate::gui::time::timeline::PANEL_HEIGHT)
                .min_size(crate::gui::time::timeline::PANEL_MIN_HEIGHT);
            let mut size = self.shell.panel_sizes.plot;
            let selection = self.selection_text();
            let asked = size.show(ui, PLOT_PANEL, true, panel, plot_panel_most, |ui| {
                let tl = self.timeline.as_mut()?;
                Some(crate::gui::time::plot::panel(
                    ui,
                    tl,
                    &self.compare,
                    selection,
                ))
            });
            self.apply_all(&ctx, asked.unwrap_or_default());
            self.shell.panel_sizes.plot = size;
        }
        let comparing = self.comparing();
        if comparing {
            let mut size = self.shell.panel_sizes.diff_table;
            let panel = side_panel(DIFF_PANEL);
            let asked = size.show(ui, DIFF_PANEL, false, panel, side_panel_most, |ui| {
                self.compare.diff_panel(ui)
            });
            self.shell.panel_sizes.diff_table = size;
            if let Some((name, action)) = asked {
                self.view.named_action(name, action);
            }
        } else if self.view.current().is_some() && !opening {
            // Not while a folder or a server is opened anew: the view is not of it.
            let mut size = self.shell.panel_sizes.top_table;
            let panel = side_panel(TOP_PANEL);
            size.show(ui, TOP_PANEL, false, panel, side_panel_most, |ui| {
                self.view.top_panel(ui)
            });
            self.shell.panel_sizes.top_table = size;
        }
        egui::CentralPanel::default().show(ui, |ui| {
            if comparing {
                let look = Look {
                    flipped: self.view.flame.flipped,
                    color_mode: self.view.flame.color_mode,
                };
                if let Some((name, action)) = self.compare.central(ui, self.timeline.as_ref(), look)
                {
                    self.view.named_action(name, action);
                }
            } else {
                let hint = self.timeline.as_ref().map(|t| t.hint());
                self.view.central(ui, hint.as_deref(), opening);
            }
        });

        let max_bytes = self.decode.max_decompressed_bytes;
        if let Some(action) = self.shell.connect.window(&ctx, max_bytes) {
            self.apply(&ctx, action);
        }
        match &self.timeline {
            Some(tl) => status_bar::warnings_window(&ctx, tl, &mut self.shell.warnings_shown),
            None => self.shell.warnings_shown = false,
        }
        if let Some(action) = self.shell.dialogs.prompt_window(&ctx) {
            self.apply(&ctx, action);
        }
        input::drop_overlay(&ctx);
        if self.is_loading()
            || self.compare.job.is_some()
            || self
                .timeline
                .as_ref()
                .is_some_and(|t| t.progress_text().is_some())
        {
            ctx.request_repaint_after(PROGRESS_REPAINT);
        }
    }
}

impl FlintApp {
    /// The line under the plot: "selection: 12:01:00–12:05:00, 25 profiles, total 3 s".
    /// None in compare mode, whose panel names A's and B's selections instead.
    pub fn selection_text(&self) -> Option<String> {
        let tl = self.timeline.as_ref().filter(|_| !self.comparing())?;
        crate::gui::time::plot::selection_text(tl, self.view.current())
    }

    /// Whether a folder or a server is being opened anew: the view shown until it is
    /// open is not of it, so nothing describes that view meanwhile.
    pub fn opening(&self) -> bool {
        (self.timeline.as_ref()).is_some_and(crate::gui::time::timeline::Timeline::opening_anew)
    }

    /// Whether compare mode is shown (time mode with Compare on).
    pub fn comparing(&self) -> bool {
        self.compare.enabled && self.timeline.is_some()
    }
}

impl eframe::App for FlintApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    /// Stops a capture, and removes the window's temporary folders (the demo's files, a
    /// capture's store).
    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.stop_capture();
        self.shell.remove_made();
    }

    /// Remembers the recent connections (URLs only, never tokens).
    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        storage.set_string(
            crate::gui::shell::connect::RECENT_KEY,
            self.shell.connect.recent.join("\n"),
        );
    }
}
