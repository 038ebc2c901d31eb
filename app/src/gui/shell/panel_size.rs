//! The sizes the user gave the window's resizable panels, kept apart from egui's own
//! memory of them: egui keeps a panel at the size it last had, so a window made small
//! (which squeezes every panel to fit) and then large again would leave the plot and
//! the tables squeezed. Here a panel's size is the user's choice until the room
//! around it changes, and it gets that size back once the room allows.

use egui::containers::panel::PanelState;
use egui::{Id, IdSalt, Panel, Ui};

/// What one panel's size was chosen to be, and the room it had when last shown.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct PanelSize {
    /// The size the user chose: the panel's size the last time it changed while the
    /// room around it stayed the same (a drag of its edge).
    chosen: Option<f32>,
    /// The room the panel had when last shown.
    last_room: Option<f32>,
}

/// Sizes differing by less than this are the same (egui rounds sizes to pixels).
const SAME: f32 = 0.5;

impl PanelSize {
    /// The size to give the panel before it is shown, when egui's memory of it
    /// (`stored`) is smaller than what the user chose and `room` now allows more: the
    /// chosen size, as far as it fits.
    pub fn restore(&self, stored: Option<f32>, room: f32) -> Option<f32> {
        let (chosen, stored) = (self.chosen?, stored?);
        let wanted = chosen.min(room);
        (stored + SAME < wanted).then_some(wanted)
    }

    /// Notes that the panel was shown at `size` with `room` around it. A size that
    /// changed while the room stayed the same is the user's choice; one that changed
    /// with the room (the window resized, a banner shown) is not, and neither is a
    /// panel that fills its room: that is where a small window squeezes it to.
    pub fn shown(&mut self, size: f32, room: f32) {
        let same_room = self.last_room.is_some_and(|r| (r - room).abs() < SAME);
        let squeezed = size + SAME >= room;
        if !squeezed && (self.chosen.is_none() || same_room) {
            self.chosen = Some(size);
        }
        self.last_room = Some(room);
    }

    /// Shows `panel` (made with `id_salt`) in `ui` with its size kept as chosen
    /// ([`PanelSize::restore`], [`PanelSize::shown`]); `vertical` for a top or bottom
    /// panel, whose size is its height. `most` tells the most the panel may take of
    /// the room it has (the rest is left to the panels beside it): a panel held there
    /// is squeezed, not sized so by the user.
    pub fn show<R>(
        &mut self,
        ui: &mut Ui,
        id_salt: &str,
        vertical: bool,
        panel: Panel,
        most: impl FnOnce(f32) -> f32,
        add_contents: impl FnOnce(&mut Ui) -> R,
    ) -> R {
        let along = |v: egui::Vec2| if vertical { v.y } else { v.x };
        let id: Id = ui.scope_id().with_salt(IdSalt::new(id_salt));
        let available = ui.available_rect_before_wrap();
        let most = most(along(available.size()));
        let panel = panel.max_size(most);
        let room = along(available.size()).min(most);
        let stored = PanelState::load(ui.ctx(), id).map(|s| along(s.size()));
        if let Some(size) = self.restore(stored, room) {
            // Only the size of the rect is read back (the panel places itself).
            let mut outer_rect = available;
            if vertical {
                outer_rect.set_height(size);
            } else {
                outer_rect.set_width(size);
            }
            ui.ctx()
                .data_mut(|d| d.insert_persisted(id, PanelState { outer_rect }));
        }
        let shown = panel.show(ui, add_contents);
        self.shown(along(shown.response.rect.size()), room);
        shown.inner
    }
}

/// The sizes the user gave the window's resizable panels, each restored once the
/// window has room again after it was made small ([`PanelSize`]).
#[derive(Debug, Default)]
pub struct PanelSizes {
    /// The plot's.
    pub plot: PanelSize,
    /// The top table's.
    pub top_table: PanelSize,
    /// The diff table's.
    pub diff_table: PanelSize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panel_squeezed_by_a_small_window_gets_the_chosen_size_back() {
        let mut p = PanelSize::default();
        p.shown(300.0, 800.0);
        p.shown(300.0, 800.0);
        // The window shrinks: the panel is squeezed to the room, not chosen so.
        p.shown(100.0, 100.0);
        assert_eq!(p.restore(Some(100.0), 100.0), None, "no more room yet");
        assert_eq!(
            p.restore(Some(100.0), 200.0),
            Some(200.0),
            "as far as it fits"
        );
        assert_eq!(p.restore(Some(100.0), 900.0), Some(300.0));
        assert_eq!(p.restore(Some(300.0), 900.0), None, "already as chosen");
    }

    #[test]
    fn a_size_changed_while_the_room_stays_is_the_users_choice() {
        let mut p = PanelSize::default();
        p.shown(300.0, 800.0);
        p.shown(150.0, 800.0);
        assert_eq!(p.restore(Some(150.0), 800.0), None);
        p.shown(100.0, 100.0);
        assert_eq!(p.restore(Some(100.0), 800.0), Some(150.0));
    }

    #[test]
    fn frames_of_a_squeezed_panel_are_not_a_choice() {
        let mut p = PanelSize::default();
        p.shown(300.0, 800.0);
        // A small window is painted many times at the same size.
        for _ in 0..3 {
            p.shown(80.0, 80.0);
        }
        assert_eq!(p.restore(Some(80.0), 800.0), Some(300.0));
        // A panel first shown squeezed has nothing chosen: egui's size stands.
        let mut p = PanelSize::default();
        p.shown(80.0, 80.0);
        assert_eq!(p.restore(Some(80.0), 800.0), None);
    }

    #[test]
    fn nothing_is_restored_before_the_panel_was_shown() {
        let p = PanelSize::default();
        assert_eq!(p.restore(Some(10.0), 800.0), None);
        let mut p = PanelSize::default();
        p.shown(200.0, 800.0);
        assert_eq!(
            p.restore(None, 800.0),
            None,
            "egui keeps nothing: its default"
        );
    }
}
