//! The window's state ([`FlintApp`]), the background jobs that fill it (start, poll,
//! finish) and the frame loop that lays out its panels.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use egui::{Color32, Context, Ui, ViewportCommand};
use profile_model::codec::DecodeOptions;
use profile_model::frames::FrameId;
use profile_model::layout::FlameRect;
use profile_model::{CallTree, Granularity, NodeId, ViewOptions};

use super::colors::{self, ColorMode};
use super::compare::CompareState;
use super::dialogs::Dialog;
use super::filters::{FilterFields, SearchState};
use super::flame::FlameParams;
use super::loader::{self, Job, Loaded, Poll, Settings, Source};
use super::panel_size::PanelSize;
use super::top_table::TopTableState;
use super::zoom::find_path;

/// What a view is computed for, comparable (unlike [`ViewOptions`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsKey {
    /// Applied filters.
    pub filters: FilterFields,
    /// Granularity.
    pub granularity: Granularity,
    /// Bottom-up.
    pub invert: bool,
    /// Sample type (`None`: the profile's default).
    pub sample_type: Option<usize>,
}

/// How often the window repaints while work runs in the background, to show its
/// progress: every frame costs CPU the work could use (where rendering is done in
/// software, repainting at 4 Hz took 0.3 s of a 6 s merge of a day; at 2 Hz half that).
pub const PROGRESS_REPAINT: Duration = Duration::from_millis(500);

/// Call-tree nodes from which the shown view is set aside while a job builds another
/// (a merged day of profiles: 6.5 million nodes, ~450 MB with its profile and totals).
pub const SET_ASIDE_NODES: usize = 1 << 21;

/// How much of a folder's samples the window keeps as it indexes it, so that its
/// merges add them up instead of reading the files again
/// ([`capture::FileSource::open_keeping_stacks`]): a day of 10-second profiles of
/// ~2,000 samples each takes about 200 MB.
pub const KEPT_STACKS_BUDGET: usize = 384 << 20;

/// A view set aside while a job builds the next one: what rebuilds it if that job
/// fails or is cancelled (its profile, settings and zoom), and not its call tree,
/// totals or top table, so that the window never holds two large views at once.
struct SetAside {
    source: Source,
    key: SettingsKey,
    zoom: Vec<String>,
    /// Whether the last job started is the one that rebuilds it.
    restoring: bool,
    /// Set aside because compare mode hides it, not because something replaces it:
    /// rebuilt with the settings in force when compare mode is left.
    hidden: bool,
}

/// Flame graph view state.
#[derive(Debug, Default)]
pub struct FlameState {
    /// The node filling the width.
    pub zoom: NodeId,
    /// Previous zooms, for Back.
    pub history: Vec<NodeId>,
    /// Root at the bottom (flame) instead of the top (icicle).
    pub flipped: bool,
    /// Color by package or by binary.
    pub color_mode: ColorMode,
    /// The rectangle under the pointer (last frame).
    pub hovered: Option<FlameRect>,
    /// The frame selected in the top table.
    pub selected: Option<FrameId>,
    /// How many rectangles are outlined for the selection.
    pub highlighted: usize,
    /// Time taken by the last flame graph frame (layout + mesh + text).
    pub frame_time: Duration,
    /// Last canvas, drawing parameters and rectangles (for tests and hit testing).
    pub last: Option<(egui::Rect, FlameParams, Vec<FlameRect>)>,
}

/// The application.
pub struct FlintApp {
    pub(super) decode: DecodeOptions,
    /// When set (by [`super::EXIT_AFTER_FIRST_FRAME`]), the launch time: the first
    /// painted flame graph prints the time since then and closes the window.
    pub(super) report_first_frame: Option<Instant>,
    /// Time mode (a directory opened), when active.
    pub timeline: Option<super::timeline::Timeline>,
    pub(super) runtime: Option<tokio::runtime::Runtime>,
    /// The profile and view shown.
    pub current: Option<Arc<Loaded>>,
    current_key: SettingsKey,
    data_generation: u64,
    search_generation: u64,
    pub(super) job: Option<Job>,
    job_key: SettingsKey,
    /// What to open next, and in which sample type (`None`: the profile's default).
    pub(super) pending: Vec<(Source, Option<usize>)>,
    /// The shown view while a job replaces it, when it was large.
    set_aside: Option<SetAside>,
    /// Call-tree nodes from which the shown view is set aside ([`SET_ASIDE_NODES`]).
    pub set_aside_nodes: usize,
    /// How much of a folder's samples indexing it keeps ([`KEPT_STACKS_BUDGET`]).
    pub kept_stacks_budget: usize,
    /// Run jobs on the UI thread (tests).
    pub sync_jobs: bool,
    /// Sample type chosen.
    pub sample_type: Option<usize>,
    /// Bottom-up call tree.
    pub invert: bool,
    /// Granularity chosen.
    pub granularity: Granularity,
    /// Filter fields being edited.
    pub filters: FilterFields,
    pub(super) applied_filters: FilterFields,
    /// Filter error shown inline.
    pub filter_error: Option<String>,
    /// Search.
    pub search: SearchState,
    /// Flame graph state.
    pub flame: FlameState,
    pub(super) colors: Vec<Color32>,
    colors_key: Option<(u64, bool, ColorMode)>,
    pub(super) top_table: TopTableState,
    /// Last load error (shown in a red banner).
    pub error: Option<String>,
    /// Last status message and whether it is an error.
    pub message: Option<(String, bool)>,
    /// How long the last job took, from its start until its result was installed, and
    /// whether it opened a new file (else it recomputed the view).
    pub last_job: Option<(Duration, bool)>,
    pub(super) dialogs: Vec<Receiver<Dialog>>,
    /// The window's prompt for a path, where no system file dialog can be shown.
    pub path_prompt: Option<super::dialogs::PathPrompt>,
    pub(super) focus_search: bool,
    /// The window's title as last set ([`FlintApp::set_title`]).
    pub(super) title: String,
    /// Compare mode (time mode): selections A and B and their comparison.
    pub compare: CompareState,
    /// The Connect dialog and the recent connections.
    pub connect_dialog: super::connect::ConnectDialog,
    /// A capture of this machine, while it runs.
    pub live: Option<super::live::LiveCapture>,
    /// The temporary folders this window made (the demo's, a capture's store), removed
    /// when it closes.
    pub(super) made_dirs: Vec<std::path::PathBuf>,
    /// The sizes the user gave the resizable panels.
    pub(super) panel_sizes: PanelSizes,
    /// Whether the window listing what opening a folder reported is open.
    pub warnings_shown: bool,
}

/// The sizes the user gave the window's resizable panels, each restored once the
/// window has room again after it was made small ([`PanelSize`]).
#[derive(Debug, Default)]
pub(super) struct PanelSizes {
    plot: PanelSize,
    top_table: PanelSize,
    diff_table: PanelSize,
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
            report_first_frame: None,
            timeline: None,
            runtime: None,
            current: None,
            current_key: SettingsKey::default(),
            data_generation: 0,
            search_generation: 0,
            job: None,
            job_key: SettingsKey::default(),
            pending: Vec::new(),
            set_aside: None,
            set_aside_nodes: SET_ASIDE_NODES,
            kept_stacks_budget: KEPT_STACKS_BUDGET,
            sync_jobs: false,
            sample_type: None,
            invert: false,
            granularity: Granularity::Function,
            filters: FilterFields::default(),
            applied_filters: FilterFields::default(),
            filter_error: None,
            search: SearchState::default(),
            flame: FlameState::default(),
            colors: Vec::new(),
            colors_key: None,
            top_table: TopTableState::default(),
            error: None,
            message: None,
            last_job: None,
            dialogs: Vec::new(),
            path_prompt: None,
            focus_search: false,
            title: String::new(),
            compare: CompareState::default(),
            connect_dialog: super::connect::ConnectDialog::default(),
            live: None,
            made_dirs: Vec::new(),
            panel_sizes: PanelSizes::default(),
            warnings_shown: false,
        }
    }

    /// Queues a file to open (loaded in the background on the next frame).
    pub fn open(&mut self, source: Source) {
        self.pending.push((source, None));
    }

    /// [`FlintApp::open`], shown in sample type `sample_type` where it has one.
    pub(super) fn open_as(&mut self, source: Source, sample_type: Option<usize>) {
        self.pending.push((source, sample_type));
    }

    /// Takes over a job started before the window existed (so that loading overlaps
    /// the window's start-up); it computes with the default settings.
    pub fn adopt_job(&mut self, job: Job) {
        self.job_key = self.wanted_key();
        self.job = Some(job);
    }

    /// Whether a job is running or queued.
    pub fn is_loading(&self) -> bool {
        self.job.is_some() || !self.pending.is_empty()
    }

    pub(super) fn wanted_key(&self) -> SettingsKey {
        SettingsKey {
            filters: self.applied_filters.clone(),
            granularity: self.granularity,
            invert: self.invert,
            sample_type: self.sample_type,
        }
    }

    pub(super) fn settings_for(&self, key: &SettingsKey) -> Result<Settings, String> {
        Ok(Settings {
            options: ViewOptions {
                granularity: key.granularity,
                filters: key.filters.compile()?,
            },
            invert: key.invert,
            sample_type: key.sample_type,
        })
    }

    /// Starts a job (cancelling a running one, whose result is then discarded).
    fn start(&mut self, ctx: &Context, source: Source, key: SettingsKey) {
        let settings = match self.settings_for(&key) {
            Ok(s) => s,
            Err(e) => {
                self.filter_error = Some(e);
                return;
            }
        };
        if let Some(job) = self.job.take() {
            job.cancel();
        }
        if let Some(aside) = &mut self.set_aside {
            // A job that is not the rebuild (which says so once started).
            aside.restoring = false;
        }
        self.set_aside_large_view();
        self.job_key = key;
        if self.sync_jobs {
            let started = Instant::now();
            let new_file = source.is_new_file();
            let result = loader::compute(
                source,
                settings,
                self.decode,
                &AtomicBool::new(false),
                &mut |_| {},
            );
            self.finish(ctx, result, new_file, started);
        } else {
            let repaint = ctx.clone();
            self.job = Some(Job::spawn(source, settings, self.decode, move || {
                repaint.request_repaint();
            }));
        }
    }

    /// Sets the shown view aside when it has at least `set_aside_nodes` nodes: held
    /// beside the view the job builds, it would about double the window's memory at
    /// the job's peak (a second merge of a day went from 0.8 to 1.3 GB). The central
    /// panel shows the job's progress meanwhile (or the time query's, which sets the
    /// view aside when it starts); if the job or query fails or is cancelled,
    /// [`FlintApp::poll`] rebuilds the view from its profile.
    pub(super) fn set_aside_large_view(&mut self) {
        if self
            .current
            .as_ref()
            .is_none_or(|cur| cur.tree.len() < self.set_aside_nodes)
        {
            return;
        }
        let zoom = self.zoom_names();
        let Some(cur) = self.current.take() else {
            return;
        };
        self.flame.hovered = None;
        self.flame.last = None;
        self.set_aside = Some(SetAside {
            source: Source::Profile {
                name: cur.name.clone(),
                path: cur.path.clone(),
                profile: Arc::clone(&cur.profile),
            },
            key: self.current_key.clone(),
            zoom,
            restoring: false,
            hidden: false,
        });
    }

    /// [`FlintApp::set_aside_large_view`] for compare mode, which hides the view
    /// rather than replacing it: the view comes back, with the settings then in force,
    /// once compare mode is left.
    pub(super) fn hide_large_view(&mut self) {
        self.set_aside_large_view();
        if let Some(aside) = &mut self.set_aside {
            aside.hidden = true;
        }
    }

    /// Lets the view set aside go: what replaces it has been merged, so its profile is
    /// freed now instead of being held beside the new one while that one's view is
    /// built (a second merge of a 2,000-sample day peaked at 1,024 MiB with it). If
    /// that build is cancelled, the panel shows the time mode's hint.
    pub(super) fn release_set_aside(&mut self) {
        self.set_aside = None;
    }

    /// Rebuilds the view set aside when no job or time query is left to replace it,
    /// once compare mode (which hides it) is left; gives up when rebuilding it failed
    /// too.
    fn restore_set_aside(&mut self, ctx: &Context) {
        let querying = self
            .timeline
            .as_ref()
            .is_some_and(super::timeline::Timeline::querying);
        let busy = self.job.is_some() || !self.pending.is_empty() || querying;
        if busy || self.current.is_some() || self.comparing() {
            return;
        }
        let Some(aside) = &mut self.set_aside else {
            return;
        };
        if aside.restoring {
            self.set_aside = None;
            return;
        }
        let (source, key, hidden) = (aside.source.clone(), aside.key.clone(), aside.hidden);
        let wanted = self.wanted_key();
        if hidden && self.settings_for(&wanted).is_ok() {
            // Hidden by compare mode: settings changed meanwhile are kept.
            self.start(ctx, source, wanted);
        } else {
            self.settings_back_to(key.clone());
            self.start(ctx, source, key);
        }
        if let Some(aside) = &mut self.set_aside {
            aside.restoring = true;
        }
    }

    /// Names `what` (a file, a folder, a server) in the window's title.
    pub(super) fn set_title(&mut self, ctx: &Context, what: &str) {
        let title = format!("flint — {what}");
        if title != self.title {
            ctx.send_viewport_cmd(ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    /// Drops the view shown, and any job recomputing it: what was opened replaces it.
    pub(super) fn drop_view(&mut self) {
        if let Some(job) = self.job.take() {
            job.cancel();
        }
        self.set_aside = None;
        self.current = None;
        self.flame.selected = None;
        self.flame.hovered = None;
        self.flame.history.clear();
        self.flame.zoom = CallTree::ROOT;
        self.data_generation += 1;
    }

    /// Puts the settings being edited back to `key` (so that a view rebuilt or kept
    /// with them is not recomputed at once).
    fn settings_back_to(&mut self, key: SettingsKey) {
        self.filters = key.filters.clone();
        self.applied_filters = key.filters;
        self.granularity = key.granularity;
        self.invert = key.invert;
        self.sample_type = key.sample_type;
    }

    /// Installs the result of a job started at `started`.
    fn finish(
        &mut self,
        ctx: &Context,
        result: Result<Option<Box<Loaded>>, String>,
        new_file: bool,
        started: Instant,
    ) {
        match result {
            Ok(Some(loaded)) => {
                let set_aside = self.set_aside.take();
                let zoom_path = match set_aside {
                    _ if new_file => Vec::new(),
                    Some(aside) => aside.zoom,
                    None => self.zoom_names(),
                };
                self.sample_type = Some(loaded.sample_type);
                let mut key = self.job_key.clone();
                key.sample_type = Some(loaded.sample_type);
                self.current_key = key;
                if new_file {
                    self.flame.selected = None;
                    self.error = None;
                    if self.live.is_none() {
                        // A file opened on its own replaces the plot it was opened from.
                        self.leave_time_mode();
                    }
                }
                self.flame.history.clear();
                self.flame.hovered = None;
                self.flame.zoom = find_path(&loaded, &zoom_path);
                self.set_title(ctx, &loaded.name);
                self.current = Some(Arc::from(loaded));
                self.data_generation += 1;
                self.last_job = Some((started.elapsed(), new_file));
            }
            Ok(None) => {}
            Err(e) => {
                if !new_file {
                    // Do not retry the same settings forever.
                    self.current_key = self.job_key.clone();
                }
                self.error = Some(e);
            }
        }
    }

    fn poll(&mut self, ctx: &Context) {
        if let Some(job) = &mut self.job {
            match job.poll() {
                Poll::Running => {}
                Poll::Done(result) => {
                    let new_file = job.new_file;
                    let started = job.started;
                    let cancelled = job.is_cancelled();
                    self.job = None;
                    if !cancelled {
                        self.finish(ctx, result, new_file, started);
                    }
                }
            }
        }
        self.poll_dialogs(ctx);
        // Queued files, then settings changes.
        if let Some((source, sample_type)) = self.pending.pop() {
            self.pending.clear();
            let key = SettingsKey {
                sample_type,
                ..self.wanted_key()
            };
            self.start(ctx, source, key);
        } else if let Some(cur) = self.current.clone() {
            let wanted = self.wanted_key();
            let busy_with_file = self.job.as_ref().is_some_and(|j| j.new_file);
            let already = self.job.is_some() && self.job_key == wanted;
            if wanted != self.current_key && !busy_with_file && !already {
                let source = Source::Profile {
                    name: cur.name.clone(),
                    path: cur.path.clone(),
                    profile: Arc::clone(&cur.profile),
                };
                self.start(ctx, source, wanted);
            }
        }
        self.restore_set_aside(ctx);
    }

    fn refresh_caches(&mut self, dark: bool) {
        let Some(cur) = &self.current else {
            return;
        };
        let key = (self.data_generation, dark, self.flame.color_mode);
        if self.colors_key != Some(key) {
            self.colors = colors::frame_colors(&cur.frames.frames, self.flame.color_mode, dark);
            self.colors_key = Some(key);
        }
        let search_key = (
            self.search.text.clone(),
            self.search.regex,
            self.data_generation,
        );
        if self.search.key.as_ref() != Some(&search_key) {
            match SearchState::pattern(&self.search.text, self.search.regex) {
                Ok(Some(re)) => {
                    let matches = CallTree::frame_matches(&cur.frames, &re);
                    self.search.matched = cur.tree.matched_total(&cur.totals, &matches);
                    self.search.matches = Some(matches);
                    self.search.error = None;
                }
                Ok(None) => {
                    self.search.matches = None;
                    self.search.error = None;
                }
                Err(e) => {
                    self.search.matches = None;
                    self.search.error = Some(e);
                }
            }
            self.search.key = Some(search_key);
            self.search_generation += 1;
        }
        self.top_table.refresh(
            self.data_generation << 32 | (self.search_generation & 0xffff_ffff),
            &cur.top,
            &cur.frames,
            self.search.matches.as_deref(),
        );
    }

    /// Cancels the running job. Cancelling a recompute also puts the settings back to
    /// those of the view shown, so that it is not started again.
    pub fn cancel_job(&mut self) {
        let Some(job) = self.job.take() else {
            return;
        };
        job.cancel();
        if !job.new_file {
            self.settings_back_to(self.current_key.clone());
        }
        self.message = Some(("cancelled".to_string(), false));
    }

    /// Draws the whole window inside `ui`.
    pub fn show(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        self.handle_input(&ctx);
        self.poll_timeline(&ctx);
        self.poll(&ctx);
        self.poll_compare(&ctx);
        self.refresh_caches(ui.visuals().dark_mode);

        egui::Panel::top("flint menu").show(ui, |ui| self.menu(ui));
        egui::Panel::top("flint toolbar").show(ui, |ui| self.toolbar(ui));
        if self.error.is_some() {
            egui::Panel::top("flint error")
                .frame(
                    egui::Frame::new()
                        .fill(ui.visuals().error_fg_color.gamma_multiply(0.18))
                        .inner_margin(egui::Margin::symmetric(8, 4)),
                )
                .show(ui, |ui| self.error_banner(ui));
        }
        egui::Panel::bottom("flint status").show(ui, |ui| self.status_bar(ui));
        if self.timeline.is_some() {
            let panel = egui::Panel::top(PLOT_PANEL)
                .resizable(true)
                .default_size(super::timeline::PANEL_HEIGHT)
                .min_size(super::timeline::PANEL_MIN_HEIGHT);
            let mut size = self.panel_sizes.plot;
            size.show(ui, PLOT_PANEL, true, panel, plot_panel_most, |ui| {
                self.timeline_panel(ui)
            });
            self.panel_sizes.plot = size;
        }
        let comparing = self.comparing();
        if comparing {
            let mut size = self.panel_sizes.diff_table;
            let panel = side_panel(DIFF_PANEL);
            size.show(ui, DIFF_PANEL, false, panel, side_panel_most, |ui| {
                self.diff_panel(ui)
            });
            self.panel_sizes.diff_table = size;
        } else if self.current.is_some()
            && !(self.timeline.as_ref()).is_some_and(super::timeline::Timeline::opening_anew)
        {
            // Not while a folder or a server is opened anew: the view is not of it.
            let mut size = self.panel_sizes.top_table;
            let panel = side_panel(TOP_PANEL);
            size.show(ui, TOP_PANEL, false, panel, side_panel_most, |ui| {
                self.top_panel(ui)
            });
            self.panel_sizes.top_table = size;
        }
        egui::CentralPanel::default().show(ui, |ui| {
            if comparing {
                self.compare_central(ui);
            } else {
                self.central(ui);
            }
        });

        self.connect_window(&ctx);
        self.warnings_window(&ctx);
        self.path_prompt_window(&ctx);
        self.drop_overlay(&ctx);
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
        for dir in self.made_dirs.drain(..) {
            super::temp_dirs::remove(&dir);
        }
    }

    /// Remembers the recent connections (URLs only, never tokens).
    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        storage.set_string(
            super::connect::RECENT_KEY,
            self.connect_dialog.recent.join("\n"),
        );
    }
}
