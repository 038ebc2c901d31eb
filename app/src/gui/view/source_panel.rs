//! The source view: a function's source file with flat and cum per line and a heat
//! gutter (by each line's share of the file's largest cum), in place of the flame
//! graph, scrolled to its hottest line; under a line, what it calls with the cum of
//! each (inlined callees marked `(inline)`, as pprof marks them). Its values are those of the view shown
//! (filters applied), counted as `flint list` counts them; the file is found and read
//! by a [`SourceJob`]. A file not found says every place looked, above the source
//! shown before, which stays.

use std::sync::{Arc, Weak};

use capture::symbolize::source_file::SourceConfig;
use egui::{Align, Color32, Layout, RichText, Sense, TextStyle, Ui, vec2};
use profile_model::frames::FrameId;
use profile_model::layout::RectKind;
use profile_model::{CallTree, units};

use crate::gui::view::ProfileView;
use crate::gui::view::loader::Loaded;
use crate::gui::view::source_job::{NotShown, Row, SourceFile, SourceJob};

/// The accessible label of the source lines' area.
pub const SOURCE_LINES: &str = "source lines";

/// Lines shown above the hottest when the view scrolls to it.
const LINES_ABOVE_HOTTEST: i64 = 8;

/// The source view's state: the function asked for, the job, what is shown.
#[derive(Default)]
pub struct SourceState {
    /// Where files are looked for (`--source-path`, `--trim-path`, debuginfod).
    pub config: Arc<SourceConfig>,
    /// The function whose source is shown or asked for; `None`: the view is closed.
    pub function: Option<String>,
    /// What the job, or the source shown, was computed from.
    of: Weak<Loaded>,
    /// The job under way.
    pub job: Option<SourceJob>,
    /// The source shown.
    pub shown: Option<Arc<SourceFile>>,
    /// Why the last source asked for is not shown.
    pub not_shown: Option<NotShown>,
    /// The line to scroll to on the next frame.
    scroll_to: Option<i64>,
    /// The source folder and trim prefix being typed in the box of a file not found.
    pub edit: Option<(String, String)>,
}

impl SourceState {
    /// Whether the source view is open.
    pub fn is_open(&self) -> bool {
        self.function.is_some()
    }

    /// Starts a job when the function's source is not of `cur` yet; takes in a
    /// finished job's answer.
    fn refresh(&mut self, ctx: &egui::Context, cur: &Arc<Loaded>, sync: bool) {
        let Some(function) = self.function.clone() else {
            return;
        };
        if !std::ptr::eq(self.of.as_ptr(), Arc::as_ptr(cur)) {
            if let Some(job) = self.job.take() {
                job.cancel();
            }
            self.of = Arc::downgrade(cur);
            let repaint = ctx.clone();
            self.job = Some(SourceJob::spawn(
                Arc::clone(cur),
                function,
                Arc::clone(&self.config),
                sync,
                move || repaint.request_repaint(),
            ));
        }
        let Some(answer) = self.job.as_ref().and_then(SourceJob::poll) else {
            return;
        };
        self.job = None;
        match answer {
            Ok(file) => {
                self.scroll_to = file.values.hottest_line();
                self.shown = Some(Arc::new(file));
                self.not_shown = None;
            }
            Err(not_shown) => self.not_shown = Some(not_shown),
        }
    }

    /// The source folder and trim prefix fields (`--source-path`, `--trim-path`) under
    /// a file not found; whether *Look again* asked for the source with them.
    fn look_again(&mut self, ui: &mut Ui) -> bool {
        let paths = &self.config.paths;
        let (folder, trim) = self
            .edit
            .get_or_insert_with(|| (paths.source_path.clone(), paths.trim_path.clone()));
        let mut again = false;
        ui.horizontal(|ui| {
            ui.label("source folders");
            let a = ui.add(
                egui::TextEdit::singleline(folder)
                    .hint_text("DIR:DIR")
                    .desired_width(260.0),
            );
            ui.label("trim prefix");
            let b = ui.add(
                egui::TextEdit::singleline(trim)
                    .hint_text("/build")
                    .desired_width(160.0),
            );
            let entered =
                (a.lost_focus() || b.lost_focus()) && ui.input(|i| i.key_pressed(egui::Key::Enter));
            again = ui.button("Look again").clicked() || entered;
        });
        if again {
            let mut config = (*self.config).clone();
            config.paths.source_path = folder.trim().to_string();
            config.paths.trim_path = trim.trim().to_string();
            if !config.paths.source_path.is_empty() {
                config.paths.search_path = config.paths.source_path.clone();
            }
            self.config = Arc::new(config);
        }
        again
    }

    /// Stops the job under way (the source shown stays).
    pub fn cancel(&mut self) -> bool {
        let Some(job) = self.job.take() else {
            return false;
        };
        job.cancel();
        self.not_shown = Some(NotShown {
            why: format!("cancelled: the source of {}", job.function),
            tried: Vec::new(),
        });
        true
    }
}

impl ProfileView {
    /// Shows the source of the function of `frame` (of the view shown).
    pub fn open_source(&mut self, frame: FrameId) {
        let Some(function) = self
            .current
            .as_ref()
            .and_then(|cur| cur.frames.frames.get(frame as usize))
            .map(|f| f.function.clone())
        else {
            return;
        };
        if let Some(job) = self.source.job.take() {
            job.cancel();
        }
        self.source.function = Some(function);
        self.source.of = Weak::new();
        self.flame.selected = Some(frame);
    }

    /// Back to the flame graph (or the sandwich it was opened from).
    pub fn close_source(&mut self) {
        if let Some(job) = self.source.job.take() {
            job.cancel();
        }
        self.source.function = None;
        self.source.not_shown = None;
    }

    /// The source of the frame selected, else of the one under the pointer (`l`).
    pub fn source_of_selection(&mut self) {
        let hovered = match self.flame.hovered.or(self.sandwich.hovered).map(|h| h.kind) {
            Some(RectKind::Node(node)) if node != CallTree::ROOT => {
                self.current.as_ref().map(|cur| cur.tree.frame(node))
            }
            _ => None,
        };
        if let Some(frame) = self.flame.selected.or(hovered) {
            self.open_source(frame);
        }
    }

    /// The source view in place of the flame graph.
    pub(crate) fn source_panel(&mut self, ui: &mut Ui, cur: &Arc<Loaded>) {
        self.source.refresh(ui.ctx(), cur, self.sync_jobs);
        let shown = self.source.shown.clone();
        // The function whose source is on screen (the one asked for may be missing).
        let function = match &shown {
            Some(file) => file.function.clone(),
            None => self.source.function.clone().unwrap_or_default(),
        };
        let mut close = false;
        ui.horizontal(|ui| {
            close = ui
                .button("Close")
                .on_hover_text("back to the flame graph (Esc)")
                .clicked();
            ui.separator();
            ui.label("source of");
            ui.add(egui::Label::new(RichText::new(&function).strong()).truncate());
            if let Some(file) = &shown {
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    ui.label(file_values(file));
                });
            }
        });
        if close {
            self.close_source();
            return;
        }
        if let Some(job) = &self.source.job {
            let mut cancel = false;
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("{} of {}…", job.stage(), job.function));
                cancel = ui.button("Cancel").clicked();
            });
            if cancel {
                self.source.cancel();
            }
        }
        if let Some(not_shown) = self.source.not_shown.clone() {
            not_shown_box(ui, &not_shown);
            if self.source.look_again(ui) {
                self.source.of = Weak::new();
            }
        }
        if let Some(file) = shown {
            let scroll_to = self.source.scroll_to.take();
            lines(ui, &file, scroll_to);
        }
    }
}

/// "main.go · read from /src/main.go · flat 910 ms, cum 1.54 s (36.0%)".
fn file_values(file: &SourceFile) -> String {
    let v = |x| units::readable(x, &file.unit);
    format!(
        "{} · read from {} · flat {}, cum {} ({})",
        file.values.path,
        file.at,
        v(file.values.flat),
        v(file.values.cum),
        units::percent(file.values.cum, file.total)
    )
}

/// Why a source is not shown, and every place looked, in a framed box.
fn not_shown_box(ui: &mut Ui, n: &NotShown) {
    let color = ui.visuals().warn_fg_color;
    egui::Frame::group(ui.style())
        .stroke(egui::Stroke::new(1.0, color))
        .show(ui, |ui| {
            ui.label(RichText::new(&n.why).color(color).strong());
            if !n.tried.is_empty() {
                ui.label("Looked in:");
                for place in &n.tried {
                    ui.label(RichText::new(place).monospace());
                }
            }
            if !n.tried.is_empty() {
                ui.weak("--source-path DIR and --trim-path PREFIX say where sources are (as flint list's).");
            }
        });
}

/// The file's lines with line number, flat and cum (`.` for none, as pprof), a heat
/// gutter, the hottest line marked; scrolled to `scroll_to` when set.
fn lines(ui: &mut Ui, file: &SourceFile, scroll_to: Option<i64>) {
    let notes: Vec<String> = [
        file.text
            .lossy
            .then(|| "not UTF-8: bytes shown as ?".to_string()),
        (!file.other_files.is_empty()).then(|| format!("also in {}", file.other_files.join(", "))),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !notes.is_empty() {
        ui.weak(notes.join(" · "));
    }
    let largest_flat = file.values.lines.values().map(|v| v.0).max().unwrap_or(0);
    let largest_cum = file.values.lines.values().map(|v| v.1).max().unwrap_or(0);
    let (flat_scale, cum_scale) = (
        units::Scale::of(largest_flat, &file.unit),
        units::Scale::of(largest_cum, &file.unit),
    );
    let hottest = file.values.hottest_line();
    let row_height = ui.text_style_height(&TextStyle::Monospace);
    let spaced = row_height + ui.spacing().item_spacing.y;
    let mut area = egui::ScrollArea::both()
        .id_salt((SOURCE_LINES, &file.at))
        .auto_shrink([false, false]);
    if let Some(line) = scroll_to {
        let at = file
            .rows
            .iter()
            .position(|r| *r == Row::Line(line))
            .unwrap_or(0);
        let above = (at as i64 - LINES_ABOVE_HOTTEST).max(0);
        area = area.vertical_scroll_offset(above as f32 * spaced);
    }
    let heat = Color32::from_rgb(230, 90, 30);
    let dot = |v: i64, scale: units::Scale, largest| {
        if v == 0 {
            ".".to_string()
        } else {
            scale.format(v, largest)
        }
    };
    area.show_rows(ui, row_height, file.rows.len(), |ui, rows| {
        for i in rows {
            let number = match &file.rows[i] {
                Row::Line(n) => *n,
                Row::Callee(name, cum) => {
                    let cum = dot(*cum, cum_scale, largest_cum);
                    callee_row(ui, row_height, &format!("{cum:>9}  → {name}"));
                    continue;
                }
                Row::More(count, cum) => {
                    let cum = dot(*cum, cum_scale, largest_cum);
                    callee_row(ui, row_height, &format!("{cum:>9}  → {count} more"));
                    continue;
                }
            };
            let (flat, cum) = file.values.lines.get(&number).copied().unwrap_or((0, 0));
            let Some(text) = usize::try_from(number - 1)
                .ok()
                .and_then(|i| file.text.lines.get(i))
            else {
                continue;
            };
            // The window's fonts have no U+FFFD: a byte that is not UTF-8 shows as `?`.
            let text = text.replace('\t', "    ").replace('\u{fffd}', "?");
            let row = format!(
                "{number:>6} {:>9} {:>9}  {text}",
                dot(flat, flat_scale, largest_flat),
                dot(cum, cum_scale, largest_cum)
            );
            ui.horizontal(|ui| {
                let (gutter, _) = ui.allocate_exact_size(vec2(10.0, row_height), Sense::hover());
                if cum > 0 && largest_cum > 0 {
                    let share = cum as f32 / largest_cum as f32;
                    let alpha = (40.0 + 215.0 * share) as u8;
                    ui.painter()
                        .rect_filled(gutter, 1.0, heat.gamma_multiply_u8(alpha));
                }
                let mut rich = RichText::new(row).monospace();
                if Some(number) == hottest {
                    rich = rich.strong().background_color(heat.gamma_multiply(0.2));
                }
                ui.add(egui::Label::new(rich).extend());
            });
        }
    });
}

/// A callee's row under its line: weak, indented under the cum column.
fn callee_row(ui: &mut Ui, row_height: f32, text: &str) {
    ui.horizontal(|ui| {
        ui.allocate_exact_size(vec2(10.0, row_height), Sense::hover());
        let indent = format!("{:>17}", "");
        ui.add(
            egui::Label::new(RichText::new(format!("{indent}{text}")).monospace().weak()).extend(),
        );
    });
}
