//! The menu bar: File (open, connect, export, quit) and View (icicle or flame, colors, group
//! by, theme, reset zoom).

use egui::{Ui, ViewportCommand};

use crate::gui::action::Action;
use crate::gui::app::FlintApp;
use crate::gui::shell::dialogs::ExportKind;
use crate::gui::view::colors::ColorMode;

/// The menu bar of `app`: what was picked, as actions.
pub fn menu(ui: &mut Ui, app: &FlintApp) -> Vec<Action> {
    let mut actions = Vec::new();
    let mut act = |a: Action| actions.push(a);
    egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…  (Ctrl+O)").clicked() {
                    act(Action::OpenDialog);
                }
                let folder = app
                    .timeline
                    .as_ref()
                    .is_some_and(|tl| matches!(tl.origin, crate::gui::time::timeline::Origin::Dir(_)));
                if ui
                    .add_enabled(folder, egui::Button::new("Reload folder  (F5)"))
                    .on_hover_text("index the folder again: profiles written since appear")
                    .on_disabled_hover_text("open a folder of profiles first")
                    .clicked()
                {
                    act(Action::ReloadFolder);
                }
                if ui
                    .button("Demo: a fleet's last hour")
                    .on_hover_text(
                        "360 made-up profiles of four services, one every 10 s, ending now: \
                         try the plot, Merge and Compare",
                    )
                    .clicked()
                {
                    act(Action::OpenDemo);
                }
                if ui.button("Connect to a server…").clicked() {
                    act(Action::ShowConnect);
                }
                if app.live.is_some() {
                    if ui.button("Stop capture").clicked() {
                        act(Action::StopCapture);
                    }
                } else if ui
                    .button("Capture local machine")
                    .on_hover_text("all processes, 99 Hz, a profile every 5 s (needs root, or CAP_BPF and CAP_PERFMON)")
                    .clicked()
                {
                    act(Action::StartCapture);
                }
                if !app.shell.connect.recent.is_empty() {
                    ui.menu_button("Recent connections", |ui| {
                        for url in app.shell.connect.recent.clone() {
                            if ui
                                .button(&url)
                                .on_hover_text("connect (token from FLINT_TOKEN, if set)")
                                .clicked()
                            {
                                let options = capture::RemoteOptions {
                                    bearer_token: crate::gui::shell::connect::env_token(),
                                    max_decompressed_bytes: app.decode.max_decompressed_bytes,
                                    ..crate::version::remote_options()
                                };
                                act(Action::Connect(url, options));
                            }
                        }
                    });
                }
                ui.separator();
                let enabled = app.view.current().is_some();
                if ui
                    .add_enabled(enabled, egui::Button::new("Export pprof…"))
                    .clicked()
                {
                    act(Action::Export(ExportKind::Pprof));
                }
                if ui
                    .add_enabled(enabled, egui::Button::new("Export folded…"))
                    .clicked()
                {
                    act(Action::Export(ExportKind::Folded));
                }
                if ui
                    .add_enabled(enabled, egui::Button::new("Export speedscope…"))
                    .clicked()
                {
                    act(Action::Export(ExportKind::Speedscope));
                }
                let diff_ready =
                    app.comparing() && app.compare.a.is_some() && app.compare.b.is_some();
                if ui
                    .add_enabled(
                        diff_ready,
                        egui::Button::new("Export diff (B − A) as pprof…"),
                    )
                    .on_disabled_hover_text("turn Compare on and select A and B on the plot")
                    .clicked()
                {
                    act(Action::ExportDiff);
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    ui.ctx().send_viewport_cmd(ViewportCommand::Close);
                }
            });
            ui.menu_button("View", |ui| {
                let flipped = app.view.flame.flipped;
                if ui.radio(!flipped, "Icicle (root on top)").clicked() {
                    act(Action::SetFlipped(false));
                }
                if ui.radio(flipped, "Flame (root at bottom)").clicked() {
                    act(Action::SetFlipped(true));
                }
                ui.separator();
                let mode = app.view.flame.color_mode;
                for (m, label) in [
                    (ColorMode::Package, "Color by package"),
                    (ColorMode::Binary, "Color by binary"),
                ] {
                    if ui.radio(mode == m, label).clicked() {
                        act(Action::SetColorMode(m));
                    }
                }
                ui.separator();
                if let Some(keys) = group_by_menu(ui, app) {
                    act(Action::SetGroupBy(keys));
                }
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
                    act(Action::ResetZoom);
                }
            });
        });
    actions
}

/// View → *Group by*: a checkbox per label key of what is shown (A's and B's in compare
/// mode); the keys ticked after a click, in the order ticked (the first outermost).
fn group_by_menu(ui: &mut Ui, app: &FlintApp) -> Option<Vec<String>> {
    let keys = if app.comparing() {
        app.compare.result.as_ref().map(|r| &r.label_keys)
    } else {
        app.view.current().map(|c| &c.label_keys)
    };
    let keys = keys.map_or(&[][..], |k| &k[..]);
    let group_by = &app.view.group_by;
    let title = if group_by.is_empty() {
        "Group by".to_string()
    } else {
        format!("Group by {}", group_by.join(", "))
    };
    let mut picked = None;
    ui.add_enabled_ui(!keys.is_empty(), |ui| {
        ui.menu_button(title, |ui| {
            for key in keys {
                let mut ticked = group_by.contains(key);
                if ui.checkbox(&mut ticked, key).changed() {
                    let mut next = group_by.clone();
                    if ticked {
                        next.push(key.clone());
                    } else {
                        next.retain(|k| k != key);
                    }
                    picked = Some(next);
                }
            }
        })
        .response
        .on_hover_text("sample labels as the flame graph's first levels, one frame per value")
        .on_disabled_hover_text("the samples shown have no labels");
    });
    picked
}
