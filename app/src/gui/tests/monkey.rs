//! Random input never panics the window: clicks (plain, Shift, Ctrl, secondary),
//! drags, the wheel, keys and typed text anywhere on a window in time mode, from a
//! fixed seed. `FLINT_MONKEY_STEPS` and `FLINT_MONKEY_SEED` run it longer or otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use egui::{Event, Key, Modifiers, MouseWheelSource, MouseWheelUnit, PointerButton, Pos2};

use crate::gui::tests::fixtures::{fixture_dir, window};

/// xorshift64: the same events for the same seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_clicks_drags_wheel_and_keys_never_panic_the_window() {
    let steps = env_or("FLINT_MONKEY_STEPS", 200);
    let mut r = Rng(env_or("FLINT_MONKEY_SEED", 7).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let dir = fixture_dir("monkey");
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    let keys = [
        Key::Escape,
        Key::Backspace,
        Key::Enter,
        Key::F5,
        Key::Tab,
        Key::ArrowDown,
        Key::A,
        Key::F,
    ];
    let texts = ["x", "api", "=", "\"", "{", "}", "é"];
    // What the events reached: a selection, and both sides of a comparison.
    let mut reached = [false; 2];
    for step in 0..3 * steps {
        // Then the same in compare mode, and then with the selector as text.
        if step == steps {
            h.state_mut().compare.enabled = true;
        }
        if step == 2 * steps
            && let Some(tl) = h.state_mut().timeline.as_mut()
        {
            tl.bar.text_mode = true;
        }
        let (x, y) = (r.below(1400) as f32, r.below(900) as f32);
        // Half of them in the bars and the plot, where most of time mode's controls are.
        let pos = if r.below(2) == 0 {
            Pos2::new(x, 60.0 + y % 320.0)
        } else {
            Pos2::new(x, y)
        };
        let modifiers = match r.below(6) {
            0 => Modifiers::SHIFT,
            1 => Modifiers::CTRL,
            _ => Modifiers::default(),
        };
        let button = |button, pressed| Event::PointerButton {
            pos,
            button,
            pressed,
            modifiers,
        };
        h.hover_at(pos);
        match r.below(10) {
            0..=3 => {
                h.event_modifiers(button(PointerButton::Primary, true), modifiers);
                h.event_modifiers(button(PointerButton::Primary, false), modifiers);
            }
            // Half a drag: pressed here, released wherever a later one is.
            4 => h.event(button(PointerButton::Primary, r.below(2) == 0)),
            5 => {}
            6 => h.event_modifiers(
                Event::MouseWheel {
                    unit: MouseWheelUnit::Line,
                    delta: egui::vec2(0.0, r.below(7) as f32 - 3.0),
                    modifiers,
                    phase: egui::TouchPhase::Move,
                    source: MouseWheelSource::Wheel,
                },
                modifiers,
            ),
            7 => h.key_press_modifiers(modifiers, keys[r.below(keys.len() as u64) as usize]),
            8 => h.event(Event::Text(
                texts[r.below(texts.len() as u64) as usize].to_string(),
            )),
            _ => {
                h.event(button(PointerButton::Secondary, true));
                h.event(button(PointerButton::Secondary, false));
            }
        }
        h.run_steps(1 + r.below(3) as usize);
        let app = h.state();
        let tl = app.timeline.as_ref();
        reached[0] |= tl.is_some_and(|t| t.selection.is_some());
        reached[1] |= app.compare.a.is_some() && app.compare.b.is_some();
    }
    // Only with the default steps and seed: others may reach less.
    if steps == 200 && std::env::var("FLINT_MONKEY_SEED").is_err() {
        assert_eq!(reached, [true; 2], "a selection, and A and B compared");
    }
    let _ = std::fs::remove_dir_all(dir);
}
