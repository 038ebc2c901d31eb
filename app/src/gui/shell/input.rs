//! Keyboard shortcuts (Ctrl+O, Ctrl+F, F5, Escape, Backspace, `s`, `l`, arrows, Enter) and files dropped on the
//! window.

use egui::{Color32, Context, Id, Key, KeyboardShortcut, Modifiers};

use crate::gui::action::Action;
use crate::gui::view::keys::Step;

/// The shortcuts pressed and the files dropped in this frame, as actions.
pub fn actions(ctx: &Context) -> Vec<Action> {
    let mut actions = Vec::new();
    let (open, find, reload) = ctx.input_mut(|i| {
        (
            i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
            i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::F)),
            i.consume_shortcut(&KeyboardShortcut::new(Modifiers::NONE, Key::F5)),
        )
    });
    if open {
        actions.push(Action::OpenDialog);
    }
    if reload {
        actions.push(Action::ReloadFolder);
    }
    if find {
        actions.push(Action::FocusSearch);
    }
    if !ctx.egui_wants_keyboard_input() {
        let (escape, back, sandwich, source) = ctx.input(|i| {
            (
                i.key_pressed(Key::Escape),
                i.key_pressed(Key::Backspace),
                i.modifiers.is_none() && i.key_pressed(Key::S),
                i.modifiers.is_none() && i.key_pressed(Key::L),
            )
        });
        if escape {
            actions.push(Action::ResetZoom);
        }
        if sandwich {
            actions.push(Action::ShowSandwich);
        }
        if source {
            actions.push(Action::ShowSource);
        }
        let steps = [
            (Key::ArrowUp, Step::Parent),
            (Key::ArrowDown, Step::Child),
            (Key::ArrowLeft, Step::Previous),
            (Key::ArrowRight, Step::Next),
        ];
        for (key, step) in steps {
            if ctx.input(|i| i.modifiers.is_none() && i.key_pressed(key)) {
                actions.push(Action::StepCursor(step));
            }
        }
        if ctx.input(|i| i.modifiers.is_none() && i.key_pressed(Key::Enter)) {
            actions.push(Action::ZoomToCursor);
        }
        if back {
            actions.push(Action::Back);
        }
    }
    if let Some(file) = ctx.input(|i| i.raw.dropped_files.first().cloned()) {
        actions.push(Action::OpenPath(file.path().to_path_buf()));
    }
    actions
}

/// Darkens the window while files are dragged over it.
pub fn drop_overlay(ctx: &Context) {
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
