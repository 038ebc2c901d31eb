//! The error banner and the status bar (file, totals, selection, hovered frame, job
//! progress, timings, messages).

use egui::{Align, Context, Layout, RichText, Ui};
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{CallTree, FrameTable, units};

use crate::gui::action::Action;
use crate::gui::app::FlintApp;
use crate::gui::time::timeline::{Timeline, profiles_text};
use crate::gui::view::flame;
use crate::gui::view::loader::Loaded;

/// The status bar's link from the bundled profile to the demo of time mode.
pub const DEMO_LINK: &str = "see profiles over time: a fleet's last hour";

/// The status bar's width from which it shows how long the last job, merge and
/// flame graph took.
const TIMINGS_WIDTH: f32 = 900.0;

/// The error banner: its first line in the strong text color (readable on the
/// banner's tint in both themes) after a red `!` badge, the rest (the decoder's own
/// words) under *details*, and its Dismiss button.
pub fn error_banner(ui: &mut Ui, error: &str) -> Option<Action> {
    let (said, detail) = error.split_once('\n').unwrap_or((error, ""));
    // The button first: a long message wraps in the rest of the row instead of
    // pushing the button (and its own end) out of the window.
    let mut dismiss = false;
    ui.horizontal(|ui| {
        dismiss = ui.small_button("Dismiss").clicked();
        let badge = RichText::new(" ! ")
            .strong()
            .color(egui::Color32::WHITE)
            .background_color(ui.visuals().error_fg_color);
        ui.label(badge);
        let text = RichText::new(said).color(ui.visuals().strong_text_color());
        ui.add(egui::Label::new(text).wrap());
    });
    if !detail.is_empty() {
        egui::CollapsingHeader::new("details")
            .id_salt(("flint error details", error))
            .show(ui, |ui| {
                ui.add(egui::Label::new(RichText::new(detail).monospace()).wrap());
            });
    }
    dismiss.then_some(Action::DismissError)
}

/// The status bar of `app`: on the right what runs (with Cancel), timings and the
/// last message; on the left what is shown, selected and hovered.
pub fn status_bar(ui: &mut Ui, app: &FlintApp) -> Vec<Action> {
    let mut actions = Vec::new();
    // The timings only where the bar has room for them beside what it says of the
    // view: in a narrow window, the view's totals matter more.
    let timings = ui.available_width() >= TIMINGS_WIDTH;
    // Right side first (job, timing, message), then the left side in what remains.
    ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
        let mut cancel = false;
        if let Some(job) = &app.view.job() {
            cancel = ui.button("Cancel").clicked();
            ui.label(job.progress_text());
            // A spinner drawn from the clock: the window repaints at 2 Hz while a
            // job runs (`PROGRESS_REPAINT`, not every frame, as egui's Spinner
            // would), which leaves the CPU to the job where rendering is done in
            // software.
            let turn = job.started.elapsed().as_secs_f32() * 1.5;
            let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
            let center = rect.center();
            let points: Vec<egui::Pos2> = (0..=8)
                .map(|i| {
                    let a = std::f32::consts::TAU * (turn + i as f32 / 12.0);
                    center + 6.0 * egui::vec2(a.cos(), a.sin())
                })
                .collect();
            ui.painter().add(egui::Shape::line(
                points,
                egui::Stroke::new(2.0, ui.visuals().strong_text_color()),
            ));
        }
        if cancel {
            actions.push(Action::CancelJob);
        }
        if let Some(job) = app.symbols.job() {
            if ui.button("Cancel").clicked() {
                actions.push(Action::CancelSymbols);
            }
            ui.label(format!(
                "naming addresses… {:.0} s",
                job.started.elapsed().as_secs_f32()
            ));
        } else if let Some(unnamed) = app.symbols.unnamed_text() {
            let summary = app.symbols.report.as_ref().map(|r| r.summary());
            ui.add(egui::Label::new(RichText::new(&unnamed).weak()).truncate())
                .on_hover_text(summary.unwrap_or(unnamed));
        }
        let mut cancel_diff = false;
        if let Some(job) = &app.compare.job {
            cancel_diff = ui.button("Cancel").clicked();
            ui.label(job.progress_text());
        }
        if cancel_diff {
            actions.push(Action::CancelDiff);
        }
        if app.view.current().is_some() && timings {
            ui.weak(format!(
                "flame {:.1} ms",
                app.view.flame.frame_time.as_secs_f64() * 1e3
            ))
            .on_hover_text("time to lay out and draw the flame graph");
        }
        if let Some(tl) = &app.timeline {
            actions.extend(timeline_status(ui, tl));
        }
        if let Some(live) = &app.live {
            let text = live.status.lock().map(|s| s.clone()).unwrap_or_default();
            // The first parts (rate, backend, samples, its own CPU) fit; the losses
            // and warnings are in the tooltip.
            let short: Vec<&str> = text.split(", ").take(4).collect();
            ui.label(format!("capturing: {}", short.join(", ")))
                .on_hover_text(format!("the recorder: {text}"));
        }
        if let Some((took, new_file)) = app.view.last_job.filter(|_| timings) {
            let verb = if new_file { "opened" } else { "updated" };
            ui.weak(format!("{verb} in {}", took_text(took)))
                .on_hover_text("from the start of the job until its result was installed");
        }
        if let Some(tl) = app.timeline.as_ref().filter(|_| timings) {
            merge_status(ui, tl, app.comparing());
        }
        if let Some((msg, is_error)) = &app.shell.message {
            let color = if *is_error {
                ui.visuals().error_fg_color
            } else {
                ui.visuals().text_color()
            };
            // At most half of what is left, so that what the bar says of the view
            // stays readable beside a long message (whole on hover).
            let room = egui::vec2(ui.available_width() * 0.5, ui.available_height());
            ui.allocate_ui_with_layout(room, Layout::right_to_left(Align::Center), |ui| {
                ui.add(egui::Label::new(RichText::new(msg).color(color)).truncate())
                    .on_hover_text(msg);
            });
        }
        ui.with_layout(Layout::left_to_right(Align::Center), |ui| {
            // Shortened to the room the right side leaves (whole on hover), so that
            // in a narrow window the two sides never run into each other.
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            ui.set_clip_rect(ui.max_rect().intersect(ui.clip_rect()));
            if app.comparing() {
                ui.strong("compare");
                ui.separator();
                ui.add(egui::Label::new(app.compare.sides_text(app.timeline.as_ref())).truncate());
                if let Some(text) = app.compare.hover_text() {
                    ui.separator();
                    ui.add(egui::Label::new(text).truncate());
                }
                return;
            }
            let Some(cur) = app.view.current().filter(|_| !app.opening()) else {
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
            doc_link(ui, &cur.profile.doc_url);
            // The bundled profile is one moment: the way to the plot over time.
            let demo = app.timeline.is_none()
                && cur.path.is_none()
                && cur.name == crate::gui::DEMO_NAME
                && app.view.flame.hovered.is_none();
            if demo {
                ui.separator();
                if ui
                    .link(DEMO_LINK)
                    .on_hover_text("also in the File menu: Demo: a fleet's last hour")
                    .clicked()
                {
                    actions.push(Action::OpenDemo);
                }
            }
            if let Some(sel) = app.view.flame.selected {
                ui.separator();
                let name = cur.frames.frames.get(sel as usize).map_or("?", |f| &f.name);
                ui.add(egui::Label::new(format!("selected: {name}")).truncate());
            }
            if let Some(h) = &app.view.flame.hovered {
                ui.separator();
                ui.add(egui::Label::new(hovered_text(cur, h)).truncate());
            }
        });
    });
    actions
}

/// The profile type's documentation (pprof's `doc_url`), as a link where it is a web
/// address; any other text is shown, not followed.
fn doc_link(ui: &mut egui::Ui, url: &str) {
    if url.is_empty() {
        return;
    }
    ui.separator();
    if url.starts_with("https://") || url.starts_with("http://") {
        ui.hyperlink_to("about this profile", url)
            .on_hover_text(url);
    } else {
        ui.label(format!("docs: {url}"));
    }
}

/// "hovered: main.fib — 1.23 s (30.1%)".
pub(crate) fn hovered_text(cur: &Loaded, h: &FlameRect) -> String {
    let total = cur.totals.first().copied().unwrap_or(0);
    hovered_line(&cur.tree, &cur.frames, total, cur.unit(), h)
}

/// "hovered: main.fib — 1.23 s (30.1%)" for rectangle `h` of a flame graph of `tree`
/// whose root is worth `total` (in `unit`).
pub(crate) fn hovered_line(
    tree: &CallTree,
    frames: &FrameTable,
    total: i64,
    unit: &str,
    h: &FlameRect,
) -> String {
    let name = match h.kind {
        RectKind::Node(n) => flame::node_name(tree, frames, n).to_string(),
        RectKind::Hidden { count, .. } => format!("{count} narrow frames"),
    };
    format!(
        "hovered: {name} — {} ({})",
        units::readable(h.value, unit),
        units::percent(h.value, total)
    )
}

/// Time mode's part of the status bar: progress and Cancel, and what opening warned
/// of (a click lists it all).
fn timeline_status(ui: &mut Ui, tl: &Timeline) -> Vec<Action> {
    let mut actions = Vec::new();
    if let Some(text) = tl.progress_text() {
        if ui.button("Cancel").clicked() {
            actions.push(Action::CancelTimeJob);
        }
        ui.label(text);
    }
    if let Some(first) = tl.warnings.first() {
        let n = tl.warnings.len();
        let more = if n > 1 {
            format!(" (and {} more)", n - 1)
        } else {
            String::new()
        };
        let text = egui::RichText::new(format!("{first}{more}")).color(ui.visuals().warn_fg_color);
        if ui
            .add(egui::Label::new(text).sense(egui::Sense::click()))
            .on_hover_text(warnings_tooltip(&tl.warnings))
            .clicked()
        {
            actions.push(Action::ShowWarnings);
        }
    }
    actions
}

/// The window listing everything opening reported (a click on the status bar's
/// warning opens it), scrolled, with a button that copies the list; `shown` is
/// whether it is open.
pub fn warnings_window(ctx: &Context, tl: &Timeline, shown: &mut bool) {
    if !*shown || tl.warnings.is_empty() {
        return;
    }
    let mut open = true;
    egui::Window::new(format!("Warnings from opening ({})", tl.warnings.len()))
        .open(&mut open)
        .default_size([720.0, 420.0])
        .show(ctx, |ui| {
            if ui.button("Copy the list").clicked() {
                ui.ctx().copy_text(tl.warnings.join("\n"));
            }
            let row = ui.text_style_height(&egui::TextStyle::Body);
            egui::ScrollArea::both()
                .auto_shrink([false, false])
                .show_rows(ui, row, tl.warnings.len(), |ui, rows| {
                    for line in &tl.warnings[rows] {
                        ui.add(egui::Label::new(line).extend());
                    }
                });
        });
    *shown = open;
}

/// How long the selection shown took to read and merge (outside compare mode), else
/// how long indexing took, in the status bar (left of the time its view took).
fn merge_status(ui: &mut Ui, tl: &Timeline, comparing: bool) {
    let shown = tl.selection.is_some() && !tl.querying() && !comparing;
    if let (Some(took), true) = (tl.selection_took, shown) {
        ui.weak(format!(
            "merged {} in {}",
            profiles_text(tl.selection_profiles),
            took_text(took)
        ))
        .on_hover_text("reading and merging the selection's profiles, before its view was built");
    } else if let (Some(took), Some(n)) = (tl.opening_took, tl.profiles) {
        ui.weak(format!(
            "indexed {} in {}",
            profiles_text(n),
            took_text(took)
        ))
        .on_hover_text("reading every profile of the folder for the plot and its merges");
    }
}

/// The status bar warning's tooltip: the first [`TOOLTIP_WARNINGS`] lines of what
/// opening reported, and how many more the window lists (a tooltip taller than the
/// window would be cut off).
pub fn warnings_tooltip(warnings: &[String]) -> String {
    let mut text = warnings
        .iter()
        .take(TOOLTIP_WARNINGS)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n");
    if warnings.len() > TOOLTIP_WARNINGS {
        text.push_str(&format!(
            "\n… and {} more: click to see them all",
            warnings.len() - TOOLTIP_WARNINGS
        ));
    } else {
        text.push_str("\nclick to see the list");
    }
    text
}

/// How many warnings the status bar's tooltip lists.
const TOOLTIP_WARNINGS: usize = 20;

/// How long a job took, in the status bar: `1.26 s`, `3.21 ms`.
pub(crate) fn took_text(took: std::time::Duration) -> String {
    let nanos = i64::try_from(took.as_nanos()).unwrap_or(i64::MAX);
    units::readable(nanos, "nanoseconds")
}
