//! Keyboard shortcuts (Ctrl+O, Ctrl+F, F5, Escape, Backspace) and files dropped on the
//! window.

use egui::{Color32, Context, Id, Key, KeyboardShortcut, Modifiers};

use crate::gui::app::FlintApp;
use crate::gui::view::loader::Source;

impl FlintApp {
    /// Handles the shortcuts and dropped files of this frame.
    pub(crate) fn handle_input(&mut self, ctx: &Context) {
        let (open, find, reload) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::F)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::NONE, Key::F5)),
            )
        });
        if open {
            self.open_dialog(ctx);
        }
        if reload {
            self.reload_dir(ctx);
        }
        if find {
            self.view.focus_search = true;
        }
        if !ctx.egui_wants_keyboard_input() {
            let (escape, back) =
                ctx.input(|i| (i.key_pressed(Key::Escape), i.key_pressed(Key::Backspace)));
            if escape {
                self.view.reset_zoom();
            }
            if back {
                self.view.back();
            }
        }
        let dropped = ctx.input(|i| i.raw.dropped_files.first().cloned());
        if let Some(file) = dropped {
            self.open_path(ctx, file.path().to_path_buf());
        }
    }

    /// Opens `path` as a dropped file is opened: a directory of profiles in the time
    /// mode, anything else as one profile.
    pub(crate) fn open_path(&mut self, ctx: &Context, path: std::path::PathBuf) {
        if crate::gui::time::timeline::is_time_dir(&path) {
            self.open_dir(ctx, path);
        } else {
            self.open(Source::Path(path));
        }
    }

    /// Darkens the window while files are dragged over it.
    pub(crate) fn drop_overlay(&self, ctx: &Context) {
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
    }
}
