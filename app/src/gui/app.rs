//! The window's state and panels: menu, toolbar (sample type, granularity, invert,
//! search, filters), error banner, status bar, top table and the flame graph, plus the
//! plumbing of background jobs, file dialogs, drag-and-drop and keyboard shortcuts.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use egui::{
    Align, Color32, Context, Id, Key, KeyboardShortcut, Layout, Modifiers, RichText, Ui,
    ViewportCommand,
};
use profile_model::codec::{self, DecodeOptions};
use profile_model::filter::{TagFilter, compile_regex};
use profile_model::frames::FrameId;
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{
    CallTree, Filters, Granularity, NodeId, View, ViewOptions, export, fold, units,
};

use super::colors::{self, ColorMode};
use super::flame::{self, FlameInput, FlameParams};
use super::loader::{self, Job, Loaded, Poll, Settings, Source};
use super::top_table::TopTableState;

/// The filter text fields, as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterFields {
    /// Focus regex.
    pub focus: String,
    /// Ignore regex.
    pub ignore: String,
    /// Hide regex.
    pub hide: String,
    /// Tag filter, `key=value`.
    pub tag: String,
}

impl FilterFields {
    /// Compiles the fields; the error names the field.
    pub fn compile(&self) -> Result<Filters, String> {
        let tag = self.tag.trim();
        Ok(Filters {
            focus: compile_regex("focus", &self.focus)?,
            ignore: compile_regex("ignore", &self.ignore)?,
            hide: compile_regex("hide", &self.hide)?,
            tags: if tag.is_empty() {
                Vec::new()
            } else {
                vec![TagFilter::parse(tag)?]
            },
        })
    }
}

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

/// The search box and its cached results.
#[derive(Debug, Default)]
pub struct SearchState {
    /// Text typed.
    pub text: String,
    /// Interpret the text as a regex (else a case-insensitive substring).
    pub regex: bool,
    /// Invalid regex message.
    pub error: Option<String>,
    /// Matches per frame id, when searching.
    pub matches: Option<Vec<bool>>,
    /// Total of the samples with a matching frame (each counted once).
    pub matched: i64,
    key: Option<(String, bool, u64)>,
}

impl SearchState {
    /// The regex the search stands for, `None` when the box is empty.
    pub fn pattern(text: &str, regex: bool) -> Result<Option<regex::Regex>, String> {
        if text.is_empty() {
            return Ok(None);
        }
        let pattern = if regex {
            text.to_string()
        } else {
            format!("(?i){}", regex::escape(text))
        };
        regex::Regex::new(&pattern).map(Some).map_err(|e| {
            format!(
                "invalid regex: {}",
                e.to_string().lines().last().unwrap_or("")
            )
        })
    }
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

/// A finished file dialog.
enum Dialog {
    Open(Option<PathBuf>, Duration),
    Export(Result<Option<String>, String>, Duration),
}

/// Which export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// gzip-compressed pprof.
    Pprof,
    /// Folded stacks text.
    Folded,
}

/// The application.
pub struct FlintApp {
    decode: DecodeOptions,
    /// The profile and view shown.
    pub current: Option<Arc<Loaded>>,
    current_key: SettingsKey,
    data_generation: u64,
    search_generation: u64,
    job: Option<Job>,
    job_key: SettingsKey,
    pending: Vec<Source>,
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
    applied_filters: FilterFields,
    /// Filter error shown inline.
    pub filter_error: Option<String>,
    /// Search.
    pub search: SearchState,
    /// Flame graph state.
    pub flame: FlameState,
    colors: Vec<Color32>,
    colors_key: Option<(u64, bool, ColorMode)>,
    top_table: TopTableState,
    /// Last load error (shown in a red banner).
    pub error: Option<String>,
    /// Last status message and whether it is an error.
    pub message: Option<(String, bool)>,
    dialogs: Vec<Receiver<Dialog>>,
    focus_search: bool,
    title: String,
}

const SEARCH_ID: &str = "flint search";

impl FlintApp {
    /// An empty window; [`FlintApp::open`] queues a file.
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
            dialogs: Vec::new(),
            focus_search: false,
            title: String::new(),
        }
    }

    /// Queues a file to open (loaded in the background on the next frame).
    pub fn open(&mut self, source: Source) {
        self.pending.push(source);
    }

    /// Whether a job is running or queued.
    pub fn is_loading(&self) -> bool {
        self.job.is_some() || !self.pending.is_empty()
    }

    fn wanted_key(&self) -> SettingsKey {
        SettingsKey {
            filters: self.applied_filters.clone(),
            granularity: self.granularity,
            invert: self.invert,
            sample_type: self.sample_type,
        }
    }

    fn settings_for(&self, key: &SettingsKey) -> Result<Settings, String> {
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
        self.job_key = key;
        if self.sync_jobs {
            let new_file = source.is_new_file();
            let result = loader::compute(
                source,
                settings,
                self.decode,
                &AtomicBool::new(false),
                &mut |_| {},
            );
            self.finish(ctx, result, new_file);
        } else {
            let repaint = ctx.clone();
            self.job = Some(Job::spawn(source, settings, self.decode, move || {
                repaint.request_repaint();
            }));
        }
    }

    fn finish(
        &mut self,
        ctx: &Context,
        result: Result<Option<Box<Loaded>>, String>,
        new_file: bool,
    ) {
        match result {
            Ok(Some(loaded)) => {
                let zoom_path = if new_file {
                    Vec::new()
                } else {
                    self.zoom_names()
                };
                self.sample_type = Some(loaded.sample_type);
                let mut key = self.job_key.clone();
                key.sample_type = Some(loaded.sample_type);
                self.current_key = key;
                if new_file {
                    self.flame.selected = None;
                    self.error = None;
                }
                self.flame.history.clear();
                self.flame.hovered = None;
                self.flame.zoom = find_path(&loaded, &zoom_path);
                let title = format!("flint — {}", loaded.name);
                if title != self.title {
                    ctx.send_viewport_cmd(ViewportCommand::Title(title.clone()));
                    self.title = title;
                }
                self.current = Some(Arc::from(loaded));
                self.data_generation += 1;
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

    /// Names of the zoom path, to find the same place in a recomputed tree.
    fn zoom_names(&self) -> Vec<String> {
        let Some(cur) = &self.current else {
            return Vec::new();
        };
        if self.flame.zoom as usize >= cur.tree.len() {
            return Vec::new();
        }
        cur.tree
            .path(self.flame.zoom)
            .into_iter()
            .map(|n| flame::node_name(&cur.tree, &cur.frames, n).to_string())
            .collect()
    }

    fn poll(&mut self, ctx: &Context) {
        if let Some(job) = &mut self.job {
            match job.poll() {
                Poll::Running => {}
                Poll::Done(result) => {
                    let new_file = job.new_file;
                    let cancelled = job.is_cancelled();
                    self.job = None;
                    if !cancelled {
                        self.finish(ctx, result, new_file);
                    }
                }
            }
        }
        let mut dialogs = std::mem::take(&mut self.dialogs);
        dialogs.retain(|rx| match rx.try_recv() {
            Ok(Dialog::Open(Some(path), _)) => {
                self.pending.push(Source::Path(path));
                false
            }
            Ok(Dialog::Open(None, elapsed)) => {
                if elapsed < Duration::from_millis(400) {
                    self.message = Some((
                        "no file dialog available (no xdg-desktop-portal?): drop a file on the \
                         window or pass it on the command line"
                            .to_string(),
                        true,
                    ));
                }
                false
            }
            Ok(Dialog::Export(result, elapsed)) => {
                match result {
                    Ok(Some(msg)) => self.message = Some((msg, false)),
                    Ok(None) if elapsed < Duration::from_millis(400) => {
                        self.message = Some((
                            "no save dialog available (no xdg-desktop-portal?); use `flint \
                             fold` or the CLI export instead"
                                .to_string(),
                            true,
                        ));
                    }
                    Ok(None) => {}
                    Err(e) => self.message = Some((e, true)),
                }
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => false,
        });
        self.dialogs.append(&mut dialogs);
        // Queued files, then settings changes.
        if let Some(source) = self.pending.pop() {
            self.pending.clear();
            let key = SettingsKey {
                sample_type: None,
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

    fn handle_input(&mut self, ctx: &Context) {
        let (open, find) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::F)),
            )
        });
        if open {
            self.open_dialog(ctx);
        }
        if find {
            self.focus_search = true;
        }
        if !ctx.egui_wants_keyboard_input() {
            let (escape, back) =
                ctx.input(|i| (i.key_pressed(Key::Escape), i.key_pressed(Key::Backspace)));
            if escape {
                self.reset_zoom();
            }
            if back {
                self.back();
            }
        }
        let dropped = ctx.input(|i| i.raw.dropped_files.first().cloned());
        if let Some(file) = dropped {
            self.pending.push(Source::Path(file.path().to_path_buf()));
        }
    }

    /// Cancels the running job. Cancelling a recompute also puts the settings back to
    /// those of the view shown, so that it is not started again.
    pub fn cancel_job(&mut self) {
        let Some(job) = self.job.take() else {
            return;
        };
        job.cancel();
        if !job.new_file {
            let key = self.current_key.clone();
            self.filters = key.filters.clone();
            self.applied_filters = key.filters;
            self.granularity = key.granularity;
            self.invert = key.invert;
            self.sample_type = key.sample_type;
        }
        self.message = Some(("cancelled".to_string(), false));
    }

    /// Zooms to `node` (remembering the previous zoom for Back).
    pub fn zoom_to(&mut self, node: NodeId) {
        if node != self.flame.zoom {
            self.flame.history.push(self.flame.zoom);
            self.flame.zoom = node;
        }
    }

    /// Back to the whole graph.
    pub fn reset_zoom(&mut self) {
        if self.flame.zoom != CallTree::ROOT {
            self.flame.history.push(self.flame.zoom);
        }
        self.flame.zoom = CallTree::ROOT;
        self.flame.history.clear();
    }

    /// Back one zoom level.
    pub fn back(&mut self) {
        if let Some(prev) = self.flame.history.pop() {
            self.flame.zoom = prev;
        } else if let Some(cur) = &self.current
            && self.flame.zoom != CallTree::ROOT
        {
            self.flame.zoom = cur.tree.parent(self.flame.zoom);
        }
    }

    fn open_dialog(&mut self, ctx: &Context) {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let path = rfd::FileDialog::new()
                .set_title("Open a pprof profile")
                .add_filter("pprof profiles", &["gz", "pb", "pprof", "prof"])
                .add_filter("all files", &["*"])
                .pick_file();
            let _ = tx.send(Dialog::Open(path, started.elapsed()));
            ctx.request_repaint();
        });
        self.dialogs.push(rx);
    }

    fn export_dialog(&mut self, ctx: &Context, kind: ExportKind) {
        let Some(cur) = self.current.clone() else {
            self.message = Some(("nothing to export".to_string(), true));
            return;
        };
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let stem = cur
                .name
                .trim_end_matches(".gz")
                .trim_end_matches(".pb")
                .trim_end_matches(".pprof")
                .to_string();
            let file_name = match kind {
                ExportKind::Pprof => format!("{stem}.view.pb.gz"),
                ExportKind::Folded => format!("{stem}.folded"),
            };
            let path = rfd::FileDialog::new()
                .set_title("Export the current view")
                .set_file_name(file_name)
                .save_file();
            let result = match path {
                Some(path) => export_to(&cur, kind, &path).map(Some),
                None => Ok(None),
            };
            let _ = tx.send(Dialog::Export(result, started.elapsed()));
            ctx.request_repaint();
        });
        self.dialogs.push(rx);
    }

    /// Draws the whole window inside `ui`.
    pub fn show(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        self.handle_input(&ctx);
        self.poll(&ctx);
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
        if self.current.is_some() {
            egui::Panel::right("flint top table")
                .resizable(true)
                .default_size(470.0)
                .min_size(260.0)
                .show(ui, |ui| self.top_panel(ui));
        }
        egui::CentralPanel::default().show(ui, |ui| self.central(ui));

        let hovering_files = ctx.input(|i| !i.raw.hovered_files.is_empty());
        if hovering_files {
            let painter = ctx.layer_painter(egui::LayerId::new(
                egui::Order::Foreground,
                Id::unique("flint drop"),
            ));
            let rect = ctx.content_rect();
            painter.rect_filled(rect, 0.0, Color32::from_black_alpha(140));
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "Drop to open",
                egui::FontId::proportional(28.0),
                Color32::WHITE,
            );
        }
        if self.is_loading() {
            ctx.request_repaint_after(Duration::from_millis(100));
        }
    }

    fn menu(&mut self, ui: &mut Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…  (Ctrl+O)").clicked() {
                    self.open_dialog(ui.ctx());
                }
                ui.separator();
                let enabled = self.current.is_some();
                if ui
                    .add_enabled(enabled, egui::Button::new("Export pprof…"))
                    .clicked()
                {
                    self.export_dialog(ui.ctx(), ExportKind::Pprof);
                }
                if ui
                    .add_enabled(enabled, egui::Button::new("Export folded…"))
                    .clicked()
                {
                    self.export_dialog(ui.ctx(), ExportKind::Folded);
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    ui.ctx().send_viewport_cmd(ViewportCommand::Close);
                }
            });
            ui.menu_button("View", |ui| {
                ui.radio_value(&mut self.flame.flipped, false, "Icicle (root on top)");
                ui.radio_value(&mut self.flame.flipped, true, "Flame (root at bottom)");
                ui.separator();
                ui.radio_value(
                    &mut self.flame.color_mode,
                    ColorMode::Package,
                    "Color by package",
                );
                ui.radio_value(
                    &mut self.flame.color_mode,
                    ColorMode::Binary,
                    "Color by binary",
                );
                ui.separator();
                let mut theme = ui.ctx().options(|o| o.theme_preference);
                let before = theme;
                ui.radio_value(&mut theme, egui::ThemePreference::System, "System theme");
                ui.radio_value(&mut theme, egui::ThemePreference::Light, "Light theme");
                ui.radio_value(&mut theme, egui::ThemePreference::Dark, "Dark theme");
                if theme != before {
                    ui.ctx().set_theme(theme);
                }
                ui.separator();
                if ui.button("Reset zoom  (Esc)").clicked() {
                    self.reset_zoom();
                }
            });
        });
    }

    fn toolbar(&mut self, ui: &mut Ui) {
        ui.add_space(2.0);
        ui.horizontal(|ui| {
            if let Some(cur) = self.current.clone() {
                let names = cur.profile.sample_type_names();
                let shown = self.sample_type.unwrap_or(cur.sample_type);
                egui::ComboBox::from_id_salt("sample type")
                    .selected_text(names.get(shown).cloned().unwrap_or_default())
                    .show_ui(ui, |ui| {
                        for (i, name) in names.iter().enumerate() {
                            if ui.selectable_label(shown == i, name).clicked() {
                                self.sample_type = Some(i);
                            }
                        }
                    })
                    .response
                    .on_hover_text("sample type");
            }
            egui::ComboBox::from_id_salt("granularity")
                .selected_text(self.granularity.label())
                .show_ui(ui, |ui| {
                    for g in Granularity::ALL {
                        ui.selectable_value(&mut self.granularity, g, g.label());
                    }
                })
                .response
                .on_hover_text("granularity");
            ui.checkbox(&mut self.invert, "invert")
                .on_hover_text("bottom-up: leaves at the root");
            ui.separator();
            ui.selectable_value(&mut self.flame.flipped, false, "icicle");
            ui.selectable_value(&mut self.flame.flipped, true, "flame");
            ui.separator();
            ui.checkbox_binary(&mut self.flame.color_mode);
            ui.separator();
            ui.label("search");
            let search = ui.add(
                egui::TextEdit::singleline(&mut self.search.text)
                    .id(Id::unique(SEARCH_ID))
                    .hint_text("function (Ctrl+F)")
                    .desired_width(200.0),
            );
            if self.focus_search {
                search.request_focus();
                self.focus_search = false;
            }
            ui.checkbox(&mut self.search.regex, "regex");
            if let Some(e) = &self.search.error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            } else if self.search.matches.is_some()
                && let Some(cur) = &self.current
            {
                ui.label(format!(
                    "matched {} ({})",
                    units::readable(self.search.matched, cur.unit()),
                    units::percent(
                        self.search.matched,
                        cur.totals.first().copied().unwrap_or(0)
                    )
                ));
            }
        });
        ui.horizontal(|ui| {
            let mut apply = false;
            let mut field = |ui: &mut Ui, label: &str, text: &mut String, hint: &str| {
                ui.label(label);
                let r = ui.add(
                    egui::TextEdit::singleline(text)
                        .hint_text(hint)
                        .desired_width(130.0),
                );
                if r.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                    apply = true;
                }
            };
            field(ui, "focus", &mut self.filters.focus, "regex");
            field(ui, "ignore", &mut self.filters.ignore, "regex");
            field(ui, "hide", &mut self.filters.hide, "regex");
            field(ui, "tag", &mut self.filters.tag, "key=value");
            if ui.button("Apply").clicked() {
                apply = true;
            }
            if ui.button("Clear").clicked() {
                self.filters = FilterFields::default();
                apply = true;
            }
            if apply {
                match self.filters.compile() {
                    Ok(_) => {
                        self.applied_filters = self.filters.clone();
                        self.filter_error = None;
                    }
                    Err(e) => self.filter_error = Some(e),
                }
            }
            if let Some(e) = &self.filter_error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            } else if self.filters != self.applied_filters {
                ui.weak("press Enter or Apply");
            }
        });
        ui.add_space(2.0);
    }

    fn error_banner(&mut self, ui: &mut Ui) {
        let mut dismiss = false;
        if let Some(e) = &self.error {
            ui.horizontal(|ui| {
                ui.colored_label(ui.visuals().error_fg_color, format!("error: {e}"));
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    dismiss = ui.small_button("Dismiss").clicked();
                });
            });
        }
        if dismiss {
            self.error = None;
        }
    }

    fn status_bar(&mut self, ui: &mut Ui) {
        // Right side first (job, timing, message), then the left side in what remains.
        ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
            let mut cancel = false;
            if let Some(job) = &self.job {
                cancel = ui.button("Cancel").clicked();
                ui.label(job.progress_text());
                ui.add(egui::Spinner::new());
            }
            if cancel {
                self.cancel_job();
            }
            if self.current.is_some() {
                ui.weak(format!(
                    "flame {:.1} ms",
                    self.flame.frame_time.as_secs_f64() * 1e3
                ))
                .on_hover_text("time to lay out and draw the flame graph");
            }
            if let Some((msg, is_error)) = &self.message {
                let color = if *is_error {
                    ui.visuals().error_fg_color
                } else {
                    ui.visuals().text_color()
                };
                ui.add(egui::Label::new(RichText::new(msg).color(color)).truncate());
            }
            ui.with_layout(Layout::left_to_right(Align::Center), |ui| {
                let Some(cur) = &self.current else {
                    return;
                };
                ui.strong(&cur.name);
                ui.separator();
                let names = cur.profile.sample_type_names();
                ui.label(format!(
                    "{} total {}",
                    names.get(cur.sample_type).map_or("", String::as_str),
                    units::readable(cur.totals.first().copied().unwrap_or(0), cur.unit())
                ));
                ui.separator();
                ui.label(format!(
                    "{} samples · {} frames",
                    units::thousands(cur.kept_samples as u64),
                    units::thousands(cur.frames.len() as u64)
                ));
                if let Some(sel) = self.flame.selected {
                    ui.separator();
                    let name = cur.frames.frames.get(sel as usize).map_or("?", |f| &f.name);
                    ui.add(egui::Label::new(format!("selected: {name}")).truncate());
                }
                if let Some(h) = &self.flame.hovered {
                    ui.separator();
                    ui.add(egui::Label::new(hovered_text(cur, h)).truncate());
                }
            });
        });
    }

    fn top_panel(&mut self, ui: &mut Ui) {
        let Some(cur) = self.current.clone() else {
            return;
        };
        ui.horizontal(|ui| {
            ui.strong("Top");
            ui.weak(format!(
                "{} of {} functions",
                units::thousands(self.top_table.order.len() as u64),
                units::thousands(cur.top.rows.len() as u64)
            ));
        });
        let clicked =
            self.top_table
                .show(ui, &cur.top, &cur.frames, cur.unit(), self.flame.selected);
        if let Some(frame) = clicked {
            self.flame.selected = if self.flame.selected == Some(frame) {
                None
            } else {
                Some(frame)
            };
        }
    }

    fn central(&mut self, ui: &mut Ui) {
        let Some(cur) = self.current.clone() else {
            ui.centered_and_justified(|ui| {
                if let Some(job) = &self.job {
                    ui.label(job.progress_text());
                } else {
                    ui.label("Open a profile (Ctrl+O) or drop a file here");
                }
            });
            return;
        };
        if self.flame.zoom as usize >= cur.tree.len() {
            self.flame.zoom = CallTree::ROOT;
        }
        self.breadcrumb(ui, &cur);
        let input = FlameInput {
            tree: &cur.tree,
            frames: &cur.frames,
            totals: &cur.totals,
            colors: &self.colors,
            matches: self.search.matches.as_deref(),
            selected: self.flame.selected,
            unit: cur.unit(),
        };
        if cur.totals.first().copied().unwrap_or(0) <= 0 {
            ui.centered_and_justified(|ui| ui.label("no samples match the filters"));
            return;
        }
        let started = Instant::now();
        let out = flame::show(
            ui,
            &input,
            self.flame.zoom,
            self.flame.flipped,
            cur.max_depth,
        );
        self.flame.frame_time = started.elapsed();
        self.flame.hovered = out.hovered;
        self.flame.highlighted = out.highlighted;
        if let Some(clicked) = out.clicked
            && let RectKind::Node(node) = clicked.kind
        {
            self.zoom_to(node);
        }
        self.flame.last = Some((out.canvas, out.params, out.rects));
    }

    fn breadcrumb(&mut self, ui: &mut Ui, cur: &Loaded) {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(
                    self.flame.zoom != CallTree::ROOT,
                    egui::Button::new("Reset"),
                )
                .on_hover_text("show everything (Esc)")
                .clicked()
            {
                self.reset_zoom();
            }
            if ui
                .add_enabled(
                    !self.flame.history.is_empty() || self.flame.zoom != CallTree::ROOT,
                    egui::Button::new("Back"),
                )
                .on_hover_text("previous zoom (Backspace)")
                .clicked()
            {
                self.back();
            }
            ui.separator();
            let path = cur.tree.path(self.flame.zoom);
            let mut target = None;
            // Long paths: the root, "…", and the last few levels.
            const SHOWN: usize = 6;
            let skip = path.len().saturating_sub(SHOWN);
            if ui.link("all").clicked() {
                target = Some(CallTree::ROOT);
            }
            if skip > 0 {
                ui.weak("› …");
            }
            for &node in &path[skip..] {
                ui.weak("›");
                let name = flame::node_name(&cur.tree, &cur.frames, node);
                let short = flame::elide(name, 48).unwrap_or_default();
                if node == self.flame.zoom {
                    ui.strong(short);
                } else if ui.link(short).on_hover_text(name).clicked() {
                    target = Some(node);
                }
            }
            if let Some(t) = target {
                self.zoom_to(t);
            }
            if self.flame.zoom != CallTree::ROOT {
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    let v = cur
                        .totals
                        .get(self.flame.zoom as usize)
                        .copied()
                        .unwrap_or(0);
                    ui.label(format!(
                        "zoom: {} ({})",
                        flame::node_name(&cur.tree, &cur.frames, self.flame.zoom),
                        units::percent(v, cur.totals.first().copied().unwrap_or(0))
                    ));
                });
            }
        });
    }
}

/// "hovered: main.fib — 1.23 s (30.1%)".
pub fn hovered_text(cur: &Loaded, h: &FlameRect) -> String {
    let total = cur.totals.first().copied().unwrap_or(0);
    let name = match h.kind {
        RectKind::Node(n) => flame::node_name(&cur.tree, &cur.frames, n).to_string(),
        RectKind::Hidden { count, .. } => format!("{count} narrow frames"),
    };
    format!(
        "hovered: {name} — {} ({})",
        units::readable(h.value, cur.unit()),
        units::percent(h.value, total)
    )
}

/// Follows frame names from the root; stops where the tree differs.
fn find_path(cur: &Loaded, names: &[String]) -> NodeId {
    let mut node = CallTree::ROOT;
    for name in names {
        let next = cur
            .tree
            .children(node)
            .iter()
            .copied()
            .find(|&c| flame::node_name(&cur.tree, &cur.frames, c) == name);
        match next {
            Some(c) => node = c,
            None => break,
        }
    }
    node
}

/// Writes the current view (always top-down, filters applied) to `path`; the message
/// names the file on success.
pub fn export_to(cur: &Loaded, kind: ExportKind, path: &std::path::Path) -> Result<String, String> {
    let view = View::new(&cur.profile, &cur.settings.options);
    let tree = view.call_tree(&cur.profile);
    let bytes = match kind {
        ExportKind::Pprof => {
            codec::encode_gzip(&export::to_profile(&tree, &view.frames, &cur.profile))
        }
        ExportKind::Folded => fold::folded(&tree, &view.frames, cur.sample_type).into_bytes(),
    };
    std::fs::write(path, bytes).map_err(|e| format!("export failed: {}: {e}", path.display()))?;
    Ok(format!("exported {}", path.display()))
}

impl eframe::App for FlintApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }
}

/// A checkbox for the color mode.
trait CheckboxBinary {
    fn checkbox_binary(&mut self, mode: &mut ColorMode) -> egui::Response;
}

impl CheckboxBinary for Ui {
    fn checkbox_binary(&mut self, mode: &mut ColorMode) -> egui::Response {
        let mut by_binary = *mode == ColorMode::Binary;
        let r = self
            .checkbox(&mut by_binary, "color by binary")
            .on_hover_text("hue from the binary (mapping) instead of the package");
        *mode = if by_binary {
            ColorMode::Binary
        } else {
            ColorMode::Package
        };
        r
    }
}
