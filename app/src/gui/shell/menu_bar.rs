//! The menu bar: File (open, connect, export, quit) and View (icicle or flame, colors, theme,
//! reset zoom).

use egui::{Ui, ViewportCommand};

use crate::gui::app::FlintApp;
use crate::gui::shell::dialogs::ExportKind;
use crate::gui::view::colors::ColorMode;

impl FlintApp {
    pub(crate) fn menu(&mut self, ui: &mut Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…  (Ctrl+O)").clicked() {
                    self.open_dialog(ui.ctx());
                }
                let folder = self
                    .timeline
                    .as_ref()
                    .is_some_and(|tl| matches!(tl.origin, crate::gui::time::timeline::Origin::Dir(_)));
                if ui
                    .add_enabled(folder, egui::Button::new("Reload folder  (F5)"))
                    .on_hover_text("index the folder again: profiles written since appear")
                    .on_disabled_hover_text("open a folder of profiles first")
                    .clicked()
                {
                    self.reload_dir(ui.ctx());
                }
                if ui
                    .button("Demo: a fleet's last hour")
                    .on_hover_text(
                        "360 made-up profiles of four services, one every 10 s, ending now: \
                         try the plot, Merge and Compare",
                    )
                    .clicked()
                {
                    self.open_demo(ui.ctx());
                }
                if ui.button("Connect to a server…").clicked() {
                    self.connect_dialog.open = true;
                }
                if self.live.is_some() {
                    if ui.button("Stop capture").clicked() {
                        self.stop_capture();
                    }
                } else if ui
                    .button("Capture local machine")
                    .on_hover_text("all processes, 99 Hz, a profile every 5 s (needs root, or CAP_BPF and CAP_PERFMON)")
                    .clicked()
                {
                    self.start_capture(ui.ctx());
                }
                if !self.connect_dialog.recent.is_empty() {
                    ui.menu_button("Recent connections", |ui| {
                        for url in self.connect_dialog.recent.clone() {
                            if ui
                                .button(&url)
                                .on_hover_text("connect (token from FLINT_TOKEN, if set)")
                                .clicked()
                            {
                                let options = capture::RemoteOptions {
                                    bearer_token: crate::gui::shell::connect::env_token(),
                                    max_decompressed_bytes: self.decode.max_decompressed_bytes,
                                    ..capture::RemoteOptions::default()
                                };
                                self.connect_to(ui.ctx(), &url, options);
                            }
                        }
                    });
                }
                ui.separator();
                let enabled = self.view.current().is_some();
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
                let diff_ready =
                    self.comparing() && self.compare.a.is_some() && self.compare.b.is_some();
                if ui
                    .add_enabled(
                        diff_ready,
                        egui::Button::new("Export diff (B − A) as pprof…"),
                    )
                    .on_disabled_hover_text("turn Compare on and select A and B on the plot")
                    .clicked()
                {
                    self.export_diff_dialog(ui.ctx());
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    ui.ctx().send_viewport_cmd(ViewportCommand::Close);
                }
            });
            ui.menu_button("View", |ui| {
                ui.radio_value(&mut self.view.flame.flipped, false, "Icicle (root on top)");
                ui.radio_value(&mut self.view.flame.flipped, true, "Flame (root at bottom)");
                ui.separator();
                ui.radio_value(
                    &mut self.view.flame.color_mode,
                    ColorMode::Package,
                    "Color by package",
                );
                ui.radio_value(
                    &mut self.view.flame.color_mode,
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
                    self.view.reset_zoom();
                }
            });
        });
    }
}
