//! The selector row under the plot's header: the selector as text or as matchers,
//! sum by, and Merge.

use capture::Matcher;
use egui::Ui;

use crate::gui::action::Action;
use crate::gui::compare::Side;
use crate::gui::time::selector::{Op, SUGGESTIONS, SumBy, entered_value, suggestions};
use crate::gui::time::timeline::Timeline;

/// What the selector row asks for.
enum RowAction {
    Remove(usize),
    Add(Matcher),
    Text(String),
    SumBy(SumBy),
    Merge,
}

/// The selector row under the plot's header, editing `tl`'s selector bar; what it asks
/// of the window. In compare mode (`merge_into`: the side being selected) Merge sets
/// that side, as a pick on the plot does (each side has its own selection, as in
/// Parca): its button names it.
pub fn selector_row(ui: &mut Ui, tl: &mut Timeline, merge_into: Option<Side>) -> Vec<Action> {
    {
        let (merge_text, merge_hint) = match merge_into {
            Some(side) => (
                format!("Merge into {}", side.letter()),
                format!(
                    "merge every profile matching {0}'s selector in the visible time range \
                     into {0}, the side being selected (\"select A\" and \"select B\" above \
                     choose it)",
                    side.letter()
                ),
            ),
            None => (
                "Merge".to_string(),
                "merge every profile matching the selector in the visible time range".to_string(),
            ),
        };
        let error_color = ui.visuals().error_fg_color;
        let selector_text = tl.selector().map(|s| s.to_string()).unwrap_or_default();
        let mut action = None;
        ui.horizontal_wrapped(|ui| {
            let bar = &mut tl.bar;
            if ui
                .toggle_value(&mut bar.text_mode, "text")
                .on_hover_text("edit the selector as text (Parca's language)")
                .changed()
                && bar.text_mode
            {
                bar.text = selector_text;
                bar.text_error = None;
            }
            if bar.text_mode {
                let r = ui.add(
                    egui::TextEdit::singleline(&mut bar.text)
                        .id_salt("selector text")
                        .desired_width(520.0)
                        .font(egui::TextStyle::Monospace),
                );
                if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                    action = Some(RowAction::Text(bar.text.clone()));
                }
                if let Some(e) = &bar.text_error {
                    ui.colored_label(error_color, e);
                }
            } else {
                for (i, m) in tl.matchers.iter().enumerate() {
                    egui::Frame::group(ui.style())
                        .inner_margin(egui::Margin::symmetric(4, 0))
                        .show(ui, |ui| {
                            ui.horizontal(|ui| {
                                ui.label(m.to_string());
                                if ui
                                    .small_button("×")
                                    .on_hover_text("remove this matcher")
                                    .clicked()
                                {
                                    action = Some(RowAction::Remove(i));
                                }
                            });
                        });
                }
                egui::ComboBox::from_id_salt("matcher name")
                    .selected_text(if bar.add_name.is_empty() {
                        "label…"
                    } else {
                        bar.add_name.as_str()
                    })
                    .show_ui(ui, |ui| {
                        for l in &bar.label_names {
                            ui.selectable_value(&mut bar.add_name, l.clone(), l);
                        }
                    })
                    .response
                    .on_hover_text("label of a matcher to add");
                egui::ComboBox::from_id_salt("matcher op")
                    .width(40.0)
                    .selected_text(bar.add_op.text())
                    .show_ui(ui, |ui| {
                        for op in Op::ALL {
                            ui.selectable_value(&mut bar.add_op, op, op.text());
                        }
                    });
                let r = ui
                    .add(
                        egui::TextEdit::singleline(&mut bar.add_value)
                            .id_salt("matcher value")
                            .hint_text("value")
                            .desired_width(140.0),
                    )
                    .on_hover_text("Enter adds the matcher: with = or !=, the highlighted value listed (the Down \
                         and Up keys move it); the Add button adds the text as typed");
                let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                let mut add = enter;
                // Autocomplete: the label's values that contain the text typed, listed
                // under the field while it has the focus.
                let listed: Vec<String> = match &bar.values {
                    Some((name, values))
                        if (r.has_focus() || bar.suggesting)
                            && *name == bar.add_name
                            && matches!(bar.add_op, Op::Equal | Op::NotEqual) =>
                    {
                        suggestions(values, &bar.add_value, SUGGESTIONS)
                            .into_iter()
                            .map(str::to_string)
                            .collect()
                    }
                    _ => Vec::new(),
                };
                if r.changed() {
                    bar.highlighted = 0;
                }
                // Kept on a listed value: the list shrinks as more is typed.
                bar.highlighted = bar.highlighted.min(listed.len().saturating_sub(1));
                if r.has_focus() && !listed.is_empty() {
                    let (down, up) = ui.input(|i| {
                        (
                            i.key_pressed(egui::Key::ArrowDown),
                            i.key_pressed(egui::Key::ArrowUp),
                        )
                    });
                    if down {
                        bar.highlighted = (bar.highlighted + 1).min(listed.len() - 1);
                    }
                    if up {
                        bar.highlighted = bar.highlighted.saturating_sub(1);
                    }
                }
                if enter && bar.suggesting {
                    bar.add_value = entered_value(&bar.add_value, &listed, bar.highlighted);
                }
                let clicking = ui.input(|i| i.pointer.any_down() || i.pointer.any_released());
                bar.suggesting =
                    !enter && !listed.is_empty() && (r.has_focus() || bar.suggesting && clicking);
                if r.has_focus() && ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                    bar.suggesting = false;
                }
                let picked = egui::Popup::from_response(&r)
                    .id(egui::Id::unique("matcher value suggestions"))
                    .open(bar.suggesting)
                    .width(r.rect.width().max(180.0))
                    .show(|ui| {
                        let mut picked = None;
                        for (i, v) in listed.iter().enumerate() {
                            if ui.selectable_label(i == bar.highlighted, v).clicked() {
                                picked = Some(v.clone());
                            }
                        }
                        picked
                    })
                    .and_then(|shown| shown.inner);
                if let Some(v) = picked {
                    bar.add_value = v;
                    bar.suggesting = false;
                }
                add |= ui
                    .add_enabled(!bar.add_name.is_empty(), egui::Button::new("Add"))
                    .on_hover_text("add the matcher and plot again")
                    .clicked();
                if add && !bar.add_name.is_empty() {
                    match Matcher::new(&bar.add_name, bar.add_op.to_match_op(), &bar.add_value) {
                        Ok(m) => {
                            bar.add_error = None;
                            // Ready for the next matcher, as Parca's bar is.
                            bar.add_value.clear();
                            action = Some(RowAction::Add(m));
                        }
                        Err(e) => bar.add_error = Some(e.to_string()),
                    }
                }
                if let Some(e) = &bar.add_error {
                    ui.colored_label(error_color, e);
                }
            }
            ui.separator();
            ui.label("sum by");
            let mut sum_by = tl.sum_by.clone();
            // Open until a click outside it, so that several labels can be ticked.
            egui::ComboBox::from_id_salt("sum by")
                .selected_text(sum_by.text(&bar.label_names))
                .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
                .show_ui(ui, |ui| {
                    for s in [SumBy::Auto, SumBy::Total, SumBy::Every] {
                        let text = s.text(&bar.label_names);
                        let hint = match s {
                            SumBy::Every => {
                                "every distinct set of labels apart; a file's path is one of \
                                 its labels, so in a folder each file is a series of its own"
                            }
                            SumBy::Total => "everything summed into one series",
                            _ => "by comm, else container, else one series",
                        };
                        ui.selectable_value(&mut sum_by, s, text)
                            .on_hover_text(hint);
                    }
                    ui.separator();
                    for name in &bar.label_names {
                        let mut ticked = sum_by.sums_by(name);
                        if ui.checkbox(&mut ticked, name).changed() {
                            sum_by = sum_by.toggled(name, &bar.label_names);
                        }
                    }
                })
                .response
                .on_hover_text(
                    "how the plotted series are summed: tick several labels to keep \
                     each combination of their values apart",
                );
            if sum_by != tl.sum_by {
                action = Some(RowAction::SumBy(sum_by));
            }
            ui.separator();
            if ui
                .add_enabled(
                    !tl.querying() && tl.source.is_some(),
                    egui::Button::new(merge_text),
                )
                .on_hover_text(merge_hint)
                .clicked()
            {
                action = Some(RowAction::Merge);
            }
        });
        // Values for the autocomplete of the label picked (asked for in the background).
        let mut ask_values = None;
        if !tl.bar.add_name.is_empty()
            && tl
                .bar
                .values
                .as_ref()
                .is_none_or(|(n, v)| *n != tl.bar.add_name || v.is_empty())
        {
            match tl.label_values(&tl.bar.add_name) {
                Some(values) => tl.bar.values = Some((tl.bar.add_name.clone(), values)),
                None => ask_values = Some(tl.bar.add_name.clone()),
            }
        }
        let mut actions: Vec<Action> = match action {
            Some(RowAction::Remove(i)) => {
                let mut matchers = tl.matchers.clone();
                matchers.remove(i);
                vec![Action::SetMatchers(matchers)]
            }
            Some(RowAction::Add(m)) => vec![Action::AddMatchers(vec![m])],
            Some(RowAction::Text(text)) => vec![Action::SelectorText(text)],
            Some(RowAction::SumBy(s)) => vec![Action::SumBy(s)],
            Some(RowAction::Merge) => vec![Action::MergeVisible],
            None => Vec::new(),
        };
        if let Some(name) = ask_values {
            actions.push(Action::RequestValues(name));
        }
        actions
    }
}
