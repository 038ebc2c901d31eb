//! Fixtures shared by the window's tests: an empty window, copies of three real Go CPU
//! profiles in a directory of their own, primary clicks (plain and with Shift) and drags.

use std::path::PathBuf;

use egui::{Event, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;

use crate::gui::app::FlintApp;

/// An empty 1400×900 window whose jobs and queries run synchronously.
pub fn window() -> Harness<'static, FlintApp> {
    let mut app = FlintApp::new(profile_model::codec::DecodeOptions::default());
    app.view.sync_jobs = true;
    Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app)
}

/// The three profiles, in time order (cpu-3 does the most hashing, cpu-1 the most sorting).
pub const FILES: [&str; 3] = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"];

/// Path of a file under `tests/fixtures/go/`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

/// A fresh directory holding copies of [`FILES`]; `tag` makes it unique per test.
pub fn fixture_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-gui-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("{}: {e}", dir.display());
    }
    for f in FILES {
        if let Err(e) = std::fs::copy(fixture(f), dir.join(f)) {
            panic!("copying {f}: {e}");
        }
    }
    dir
}

/// Hovers `pos`, presses and releases the primary button there, and lets the window settle.
pub fn click_at(h: &mut Harness<'_, FlintApp>, pos: Pos2) {
    click_button_at(h, pos, PointerButton::Primary);
}

/// [`click_at`] with the secondary button (a context menu opens).
pub fn secondary_click_at(h: &mut Harness<'_, FlintApp>, pos: Pos2) {
    click_button_at(h, pos, PointerButton::Secondary);
}

/// Hovers `pos`, presses and releases `button` there, and lets the window settle.
fn click_button_at(h: &mut Harness<'_, FlintApp>, pos: Pos2, button: PointerButton) {
    h.hover_at(pos);
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button,
            pressed,
            modifiers: Modifiers::default(),
        });
    }
    h.run_steps(3);
}

/// Presses and releases the primary button at `pos` with Shift held, and lets the
/// window settle.
pub fn shift_click_at(h: &mut Harness<'_, FlintApp>, pos: Pos2) {
    let shift = Modifiers::SHIFT;
    h.event(Event::ModifiersChanged(shift));
    h.event(Event::PointerMoved(pos));
    h.run_steps(1);
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: shift,
        });
        h.run_steps(1);
    }
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(4);
}

/// Drags with the primary button from `from` by `by`.
pub fn drag(h: &mut Harness<'_, FlintApp>, from: Pos2, by: egui::Vec2) {
    h.hover_at(from);
    h.event(Event::PointerButton {
        pos: from,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(1);
    for i in 1..=5 {
        h.event(Event::PointerMoved(from + by * (i as f32 / 5.0)));
        h.run_steps(1);
    }
    h.event(Event::PointerButton {
        pos: from + by,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(2);
}
