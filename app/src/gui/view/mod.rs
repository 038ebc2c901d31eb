//! The profile view: one profile loaded and seen through its settings (sample type,
//! granularity, filters, inversion), drawn as a flame graph beside a top table.
//!
//! [`ProfileView`] owns what is shown and the job that replaces it: a settings change
//! recomputes the view on a worker thread, a large view is set aside while its
//! replacement is built, and what the window must know of a finished job comes back as
//! a [`ViewEvent`] for the window to apply.

pub mod colors;
pub mod filters;
pub mod flame;
pub mod flight;
pub mod frame_menu;
pub mod keys;
pub mod loader;
pub mod panels;
pub mod sandwich;
pub mod sandwich_panel;
pub mod source_job;
pub mod source_panel;
pub mod toolbar;
pub mod top_table;
pub mod zoom;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use egui::{Color32, Context};
use profile_model::codec::DecodeOptions;
use profile_model::frames::FrameId;
use profile_model::layout::FlameRect;
use profile_model::{CallTree, Granularity, NodeId, ViewOptions};

use self::colors::ColorMode;
use self::filters::{FilterFields, SearchState};
use self::flame::FlameParams;
use self::loader::{Job, Loaded, Poll, Settings, Source};
use self::sandwich::SandwichState;
use self::source_panel::SourceState;
use self::top_table::TopTableState;
use self::zoom::find_path;

/// Call-tree nodes from which the shown view is set aside while a job builds another
/// (a merged day of profiles: 6.5 million nodes, ~450 MB with its profile and totals).
pub const SET_ASIDE_NODES: usize = 1 << 21;

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
    /// Label keys grouped by, outermost first.
    pub group_by: Vec<String>,
}

impl SettingsKey {
    /// The settings a job computes with; an error names a filter that does not compile.
    pub fn settings(&self) -> Result<Settings, String> {
        Ok(Settings {
            options: ViewOptions {
                granularity: self.granularity,
                filters: self.filters.compile()?,
            },
            invert: self.invert,
            sample_type: self.sample_type,
            group_by: self.group_by.clone(),
        })
    }
}

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
    /// The node the keyboard's arrows moved to ([`keys`]).
    pub cursor: Option<NodeId>,
    /// The frame whose context menu is open (clicked with the secondary button).
    pub menu_frame: Option<FrameId>,
    /// How many rectangles are outlined for the selection.
    pub highlighted: usize,
    /// Time taken by the last flame graph frame (layout + mesh + text).
    pub frame_time: Duration,
    /// Last canvas, drawing parameters and rectangles (for tests and hit testing).
    pub last: Option<(egui::Rect, FlameParams, Vec<FlameRect>)>,
}

/// What a finished job tells the window.
#[derive(Debug)]
pub enum ViewEvent {
    /// A view was installed: its name, and whether it opened a new file (else it
    /// recomputed the view shown).
    Installed {
        /// The profile's name (for the title).
        name: String,
        /// Whether a new file was opened.
        new_file: bool,
    },
    /// The job failed: why.
    Failed(String),
}

/// The profile view's state: the view shown, the job replacing it, and the settings
/// being edited (a change of which recomputes the view on the next frame).
pub struct ProfileView {
    decode: DecodeOptions,
    /// The profile and view shown.
    current: Option<Arc<Loaded>>,
    current_key: SettingsKey,
    data_generation: u64,
    search_generation: u64,
    job: Option<Job>,
    job_key: SettingsKey,
    /// What to open next, and in which sample type (`None`: the profile's default).
    pending: Vec<(Source, Option<usize>)>,
    /// The shown view while a job replaces it, when it was large.
    set_aside: Option<SetAside>,
    /// Call-tree nodes from which the shown view is set aside ([`SET_ASIDE_NODES`]).
    pub set_aside_nodes: usize,
    /// Run jobs on the UI thread (tests).
    pub sync_jobs: bool,
    /// Sample type chosen.
    pub sample_type: Option<usize>,
    /// Bottom-up call tree.
    pub invert: bool,
    /// Label keys ticked to group by, in the order ticked (outermost first).
    pub group_by: Vec<String>,
    /// Granularity chosen.
    pub granularity: Granularity,
    /// Filter fields being edited.
    pub filters: FilterFields,
    applied_filters: FilterFields,
    /// Filter error shown inline.
    pub filter_error: Option<String>,
    /// Search.
    pub search: SearchState,
    /// Flame graph state.
    pub flame: FlameState,
    colors: Vec<Color32>,
    colors_key: Option<(u64, bool, ColorMode)>,
    /// The top table's sort and column widths.
    pub top_table: TopTableState,
    /// The callers and callees of a function, when shown in place of the flame graph.
    pub sandwich: SandwichState<Loaded>,
    /// A function's source, when shown in place of the flame graph.
    pub source: SourceState,
    /// How long the last job took, from its start until its result was installed, and
    /// whether it opened a new file (else it recomputed the view).
    pub last_job: Option<(Duration, bool)>,
    /// Focus the search field on the next frame (Ctrl+F).
    pub focus_search: bool,
    /// When set (by [`crate::gui::EXIT_AFTER_FIRST_FRAME`]), the launch time: the first
    /// painted flame graph prints the time since then and closes the window.
    pub report_first_frame: Option<Instant>,
}

impl ProfileView {
    /// An empty view; [`ProfileView::open`] queues a file.
    pub fn new(decode: DecodeOptions) -> Self {
        Self {
            decode,
            current: None,
            current_key: SettingsKey::default(),
            data_generation: 0,
            search_generation: 0,
            job: None,
            job_key: SettingsKey::default(),
            pending: Vec::new(),
            set_aside: None,
            set_aside_nodes: SET_ASIDE_NODES,
            sync_jobs: false,
            sample_type: None,
            invert: false,
            group_by: Vec::new(),
            granularity: Granularity::Function,
            filters: FilterFields::default(),
            applied_filters: FilterFields::default(),
            filter_error: None,
            search: SearchState::default(),
            flame: FlameState::default(),
            colors: Vec::new(),
            colors_key: None,
            top_table: TopTableState::default(),
            sandwich: SandwichState::default(),
            source: SourceState::default(),
            last_job: None,
            focus_search: false,
            report_first_frame: None,
        }
    }

    /// The profile and view shown.
    pub fn current(&self) -> Option<&Arc<Loaded>> {
        self.current.as_ref()
    }

    /// The colors of the shown view's frames (by package or binary).
    pub fn colors(&self) -> &[Color32] {
        &self.colors
    }

    /// The job running, if any.
    pub fn job(&self) -> Option<&Job> {
        self.job.as_ref()
    }

    /// Queues a file to open (loaded in the background on the next frame).
    pub fn open(&mut self, source: Source) {
        self.pending.push((source, None));
    }

    /// [`ProfileView::open`], shown in sample type `sample_type` where it has one.
    pub fn open_as(&mut self, source: Source, sample_type: Option<usize>) {
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

    /// The settings being edited, as a view is computed for them.
    pub fn wanted_key(&self) -> SettingsKey {
        SettingsKey {
            filters: self.applied_filters.clone(),
            granularity: self.granularity,
            invert: self.invert,
            sample_type: self.sample_type,
            group_by: self.group_by.clone(),
        }
    }

    /// Applies the filter fields being edited (Enter, *Apply*), or says what is wrong
    /// with them.
    pub fn apply_filters(&mut self) {
        match self.filters.compile() {
            Ok(_) => {
                self.applied_filters = self.filters.clone();
                self.filter_error = None;
            }
            Err(e) => self.filter_error = Some(e),
        }
    }

    /// Whether the filter fields differ from those applied.
    pub fn filters_edited(&self) -> bool {
        self.filters != self.applied_filters
    }

    /// Starts a job (cancelling a running one, whose result is then discarded).
    fn start(&mut self, ctx: &Context, source: Source, key: SettingsKey) -> Option<ViewEvent> {
        let settings = match key.settings() {
            Ok(s) => s,
            Err(e) => {
                self.filter_error = Some(e);
                return None;
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
            return self.finish(result, new_file, started);
        }
        let repaint = ctx.clone();
        self.job = Some(Job::spawn(source, settings, self.decode, move || {
            repaint.request_repaint();
        }));
        None
    }

    /// Sets the shown view aside when it has at least `set_aside_nodes` nodes: held
    /// beside the view the job builds, it would about double the window's memory at
    /// the job's peak (a second merge of a day went from 0.8 to 1.3 GB). The central
    /// panel shows the job's progress meanwhile (or the time query's, which sets the
    /// view aside when it starts); if the job or query fails or is cancelled,
    /// [`ProfileView::poll`] rebuilds the view from its profile.
    pub fn set_aside_large_view(&mut self) {
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

    /// [`ProfileView::set_aside_large_view`] for compare mode, which hides the view
    /// rather than replacing it: the view comes back, with the settings then in force,
    /// once compare mode is left.
    pub fn hide_large_view(&mut self) {
        self.set_aside_large_view();
        if let Some(aside) = &mut self.set_aside {
            aside.hidden = true;
        }
    }

    /// Lets the view set aside go: what replaces it has been merged, so its profile is
    /// freed now instead of being held beside the new one while that one's view is
    /// built (a second merge of a 2,000-sample day peaked at 1,024 MiB with it). If
    /// that build is cancelled, the panel shows the time mode's hint.
    pub fn release_set_aside(&mut self) {
        self.set_aside = None;
    }

    /// Rebuilds the view set aside when nothing is left to replace it (`busy`: a time
    /// query runs; `hidden`: compare mode hides the view); gives up when rebuilding it
    /// failed too.
    fn restore_set_aside(&mut self, ctx: &Context, busy: bool, hidden: bool) -> Option<ViewEvent> {
        if busy || self.is_loading() || self.current.is_some() || hidden {
            return None;
        }
        let aside = self.set_aside.as_mut()?;
        if aside.restoring {
            self.set_aside = None;
            return None;
        }
        let (source, key, was_hidden) = (aside.source.clone(), aside.key.clone(), aside.hidden);
        let wanted = self.wanted_key();
        let event = if was_hidden && wanted.settings().is_ok() {
            // Hidden by compare mode: settings changed meanwhile are kept.
            self.start(ctx, source, wanted)
        } else {
            self.settings_back_to(key.clone());
            self.start(ctx, source, key)
        };
        if let Some(aside) = &mut self.set_aside {
            aside.restoring = true;
        }
        event
    }

    /// Drops the view shown, and any job recomputing it: what was opened replaces it.
    pub fn drop_view(&mut self) {
        if let Some(job) = self.job.take() {
            job.cancel();
        }
        self.set_aside = None;
        self.current = None;
        self.close_sandwich();
        self.close_source();
        self.flame.selected = None;
        self.flame.cursor = None;
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
        self.group_by = key.group_by;
    }

    /// Installs the result of a job started at `started`.
    fn finish(
        &mut self,
        result: Result<Option<Box<Loaded>>, String>,
        new_file: bool,
        started: Instant,
    ) -> Option<ViewEvent> {
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
                    self.close_sandwich();
                    self.close_source();
                }
                self.flame.history.clear();
                self.flame.hovered = None;
                self.flame.cursor = None;
                self.flame.zoom = find_path(&loaded, &zoom_path);
                let name = loaded.name.clone();
                self.current = Some(Arc::from(loaded));
                self.data_generation += 1;
                self.last_job = Some((started.elapsed(), new_file));
                Some(ViewEvent::Installed { name, new_file })
            }
            Ok(None) => None,
            Err(e) => {
                if !new_file {
                    // Do not retry the same settings forever.
                    self.current_key = self.job_key.clone();
                }
                Some(ViewEvent::Failed(e))
            }
        }
    }

    /// Takes a finished job's result, starts what is queued or what the settings now
    /// ask for, and rebuilds a view set aside that nothing replaces (`busy`: a time
    /// query runs; `hidden`: compare mode hides the view). Returns what the window
    /// must know of the jobs that finished.
    pub fn poll(&mut self, ctx: &Context, busy: bool, hidden: bool) -> Vec<ViewEvent> {
        let mut events = Vec::new();
        if let Some(job) = &mut self.job
            && let Poll::Done(result) = job.poll()
        {
            let (new_file, started, cancelled) = (job.new_file, job.started, job.is_cancelled());
            self.job = None;
            if !cancelled {
                events.extend(self.finish(result, new_file, started));
            }
        }
        // Queued files, then settings changes.
        if let Some((source, sample_type)) = self.pending.pop() {
            self.pending.clear();
            let key = SettingsKey {
                sample_type,
                ..self.wanted_key()
            };
            events.extend(self.start(ctx, source, key));
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
                events.extend(self.start(ctx, source, wanted));
            }
        }
        events.extend(self.restore_set_aside(ctx, busy, hidden));
        events
    }

    /// Brings the colors, the search's matches and the top table's order up to date
    /// with the view shown.
    pub fn refresh_caches(&mut self, dark: bool) {
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

    /// Cancels the running job; whether there was one. Cancelling a recompute also puts
    /// the settings back to those of the view shown, so that it is not started again.
    pub fn cancel_job(&mut self) -> bool {
        let Some(job) = self.job.take() else {
            return false;
        };
        job.cancel();
        if !job.new_file {
            self.settings_back_to(self.current_key.clone());
        }
        true
    }
}
