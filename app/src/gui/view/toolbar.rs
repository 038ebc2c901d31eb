//! The toolbar (sample type, granularity, invert, icicle or flame, colors, search) and
//! the filter row under it.

use egui::{Id, Key, Ui};
use profile_model::{Granularity, units};

use crate::gui::view::ProfileView;
use crate::gui::view::colors::ColorMode;
use crate::gui::view::filters::FilterFields;

const SEARCH_ID: &str = "flint search";

impl ProfileView {
    /// The toolbar and the filter row under it. In compare mode (`compared` is
    /// `Some`), the search tells what it matched in A and B (`None` inside: nothing
    /// to tell yet) instead of in the view hidden; nothing of the view is told while
    /// it is `hidden` (a folder or a server being opened replaces it).
    pub fn toolbar(&mut self, ui: &mut Ui, compared: Option<Option<String>>, hidden: bool) {
        let shown = self.current.clone().filter(|_| !hidden);
        ui.add_space(2.0);
        // Both rows wrap: a narrow window moves the rest of a row to a line of its own
        // rather than cutting off search, Apply and Clear.
        ui.horizontal_wrapped(|ui| {
            if let Some(cur) = shown.clone() {
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
            } else if let Some(compared) = compared {
                // What compare mode shows: A and B (the view it hides is not searched).
                if let Some(text) = compared {
                    ui.label(text)
                        .on_hover_text("the share of A and of B with a matching frame");
                }
            } else if self.search.matches.is_some()
                && let Some(cur) = &shown
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
        ui.horizontal_wrapped(|ui| {
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
                self.apply_filters();
            }
            if let Some(e) = &self.filter_error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            } else if self.filters_edited() {
                ui.weak("press Enter or Apply");
            }
        });
        ui.add_space(2.0);
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
