//! The plot panel of time mode: the series over time, presets, the selection and
//! A/B marks, and the clicks and drags that select; plus the series as drawn.

use capture::{ProfileType, QueryTime, TimeRange};
use egui::{Color32, PointerButton, Ui};
use egui_plot::{Line, Plot, PlotPoints, Points, Span, Text, VLine};

use crate::gui::action::Action;
use crate::gui::compare::CompareState;
use crate::gui::compare::Side;
use crate::gui::time::axis::describe_time;
use crate::gui::time::axis::{
    RangeFields, date_hms, time_grid_steps, time_label, value_grid_steps, value_label,
};
use crate::gui::time::lines::{MAX_SERIES, PlotScale, PlotSeries, series_color};
use crate::gui::time::pick::{PlotPick, drag_to_range};
use crate::gui::time::selector::series_matchers;
use crate::gui::time::selector_bar::selector_row;
use crate::gui::time::timeline::{Origin, Timeline, profiles_text};
use crate::gui::view::loader::Loaded;

/// How far (in pixels) from a point a click still selects that point's bucket.
const CLICK_SNAP_PX: f64 = 8.0;

/// How far (in pixels) from a line a click is still a click on that line.
const LINE_PICK_PX: f64 = 12.0;

/// The plot's id, under which egui_plot keeps its memory (bounds).
const PLOT_ID: &str = "flint timeline plot";

/// What the plot items (line and markers) of the `k`th segment of the `i`th series
/// are identified by.
fn series_key(i: usize, k: usize) -> (&'static str, usize, usize) {
    ("flint series", i, k)
}

/// Width of the legend beside the plot (points), at most a third of the panel.
const LEGEND_WIDTH: f32 = 260.0;

/// Height of one legend entry (points).
const LEGEND_ROW: f32 = 20.0;

/// How to use the plot, under it (shortened where the window is narrow; whole on hover).
const PLOT_HINT: &str = "click a point or drag a range to select; Shift+click a line or a legend \
    entry to filter by its labels; scroll to pan and Ctrl+scroll to zoom the time ('all' shows \
    everything)";

/// What a click on a legend entry asks for.
enum LegendClick {
    /// Switch the series' line on or off.
    Toggle(usize),
    /// Filter by the series' labels (Shift+click).
    Filter(usize),
}

/// *range…* and its fields: the view moved to a time range typed as `flint top
/// --from/--to` take it (true: a server's series must be loaded again).
fn typed_range(ui: &mut Ui, tl: &mut Timeline) -> bool {
    let button = ui.button("range…").on_hover_text(
        "show a time range typed in: RFC 3339 times (2026-11-30T14:00:00Z), now-1h, or \
         nanoseconds since the epoch",
    );
    let popup_id = egui::Popup::default_response_id(&button);
    if button.clicked() && !egui::Popup::is_id_open(ui.ctx(), popup_id) {
        let (start, end) = tl
            .last_view
            .map_or_else(|| tl.whole_bounds(), |(a, b, _)| (a, b));
        tl.range = RangeFields::of_view(start, end);
    }
    let error_color = ui.visuals().error_fg_color;
    let mut apply = false;
    egui::Popup::from_toggle_button_response(&button)
        .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
        .show(|ui| {
            ui.set_min_width(330.0);
            let mut enter = false;
            for (name, text) in [("from", &mut tl.range.from), ("to", &mut tl.range.to)] {
                ui.horizontal(|ui| {
                    ui.add_sized([36.0, 20.0], egui::Label::new(name));
                    let field =
                        ui.add(egui::TextEdit::singleline(text).min_size(egui::vec2(280.0, 0.0)));
                    enter |= field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                });
            }
            apply = ui.button("Show").clicked() || enter;
            if let Some(e) = &tl.range.error {
                ui.colored_label(error_color, e);
            }
        });
    if !apply {
        return false;
    }
    match tl.range.parse(capture::time::now_nanos()) {
        Ok(range) => {
            tl.range.error = None;
            egui::Popup::close_id(ui.ctx(), popup_id);
            tl.show_range(range.start_nanos, range.end_nanos)
        }
        Err(e) => {
            tl.range.error = Some(e);
            false
        }
    }
}

/// The legend beside the plot, `height` points tall (scrolled when the series do not
/// fit): one checkbox per series, in its color (`colors`, as its line's), that switches its line on or off;
/// Shift+click filters by its labels instead. The entry under the pointer, and what a
/// click asks for.
fn legend(
    ui: &mut Ui,
    series: &[PlotSeries],
    colors: &[Color32],
    hidden: &std::collections::BTreeSet<String>,
    height: f32,
) -> (Option<usize>, Option<LegendClick>) {
    let shift = ui.input(|i| i.modifiers.shift);
    let (mut hovered, mut click) = (None, None);
    ui.vertical(|ui| {
        ui.set_width(ui.available_width());
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        egui::ScrollArea::vertical()
            .id_salt("plot legend")
            .max_height(height)
            .auto_shrink([false, true])
            .show_rows(ui, LEGEND_ROW, series.len(), |ui, rows| {
                for i in rows {
                    let Some(s) = series.get(i) else { continue };
                    let mut on = !hidden.contains(&s.name);
                    let color = colors.get(i).copied().unwrap_or_else(|| series_color(i));
                    let text = egui::RichText::new(&s.name).color(color);
                    let r = ui
                        .checkbox(&mut on, text)
                        .on_hover_text(format!("{}\nShift+click: filter by its labels", s.name));
                    if r.hovered() {
                        hovered = Some(i);
                    }
                    if r.clicked() {
                        click = Some(if shift {
                            LegendClick::Filter(i)
                        } else {
                            LegendClick::Toggle(i)
                        });
                    }
                }
            });
    });
    (hovered, click)
}

/// A series drawn with this many points or fewer also gets a marker on each: a lone
/// point draws no line, and a few points are easier to aim at.
const MARKED_POINTS: usize = 64;

/// The plot's tooltip for what the pointer points at ([`PlotPick`]): on a line, its
/// series' name, the time of the point a click selects and the point's value (in
/// `scale`, of values in `unit`); off the lines, the time a click selects, or during a
/// drag the time `dragging` under the pointer (seconds).
pub fn pick_text(
    pick: &PlotPick,
    series: &[PlotSeries],
    scale: PlotScale,
    unit: &str,
    dragging: Option<f64>,
) -> String {
    let time = date_hms(pick.bucket.start_nanos);
    match (dragging, pick.on_line) {
        (Some(x), _) => date_hms((x * 1e9) as i64),
        (None, Some((i, point))) => {
            let name = series.get(i).map_or("", |s| s.name.as_str());
            format!("{name}\n{time}\n{}", scale.hover_text(point.y, unit))
        }
        (None, None) => time,
    }
}

/// The line under the plot: "selection: 12:01:00–12:05:00, 25 profiles, total 3 s"
/// of the selection of `tl` whose view `cur` is shown.
pub fn selection_text(tl: &Timeline, cur: Option<&std::sync::Arc<Loaded>>) -> Option<String> {
    let time = tl.selection?;
    let cur = cur?;
    let series = match crate::gui::compare::matchers_text(&tl.selection_series) {
        text if text.is_empty() => text,
        text => format!(" {text}"),
    };
    Some(format!(
        "selection: {}{series}, {}, total {}",
        describe_time(time, tl.step_nanos),
        profiles_text(tl.selection_profiles),
        profile_model::units::readable(cur.totals.first().copied().unwrap_or(0), cur.unit())
    ))
}

/// The plot panel of `tl`: type, presets, Compare and its sides (of `compare`), the
/// selector row, the plot and the selection line (`selection_text`); what it asks of
/// the window.
pub fn panel(
    ui: &mut Ui,
    tl: &mut Timeline,
    compare: &CompareState,
    selection_text: Option<String>,
) -> Vec<Action> {
    let mut actions = Vec::new();
    {
        let ctx = ui.ctx().clone();
        let mut reload = None;
        let mut reload_range = false;
        // Wrapped: a narrow window moves the rest of the row to a second line rather
        // than cutting off Compare's sides and "show all".
        ui.horizontal_wrapped(|ui| {
            ui.strong(tl.origin.name());
            if let Some(n) = tl.profiles {
                ui.weak(crate::gui::time::timeline::profiles_text(n));
            }
            let mut index = tl.type_index;
            let shown = tl
                .types
                .get(tl.type_index)
                .map_or_else(String::new, ProfileType::friendly);
            egui::ComboBox::from_id_salt("profile type")
                .selected_text(shown)
                .show_ui(ui, |ui| {
                    for (i, t) in tl.types.iter().enumerate() {
                        ui.selectable_value(&mut index, i, t.friendly())
                            .on_hover_text(t.to_string());
                    }
                })
                .response
                .on_hover_text("profile type plotted and selected");
            reload = (index != tl.type_index).then_some(index);
            ui.separator();
            let end = tl.span.end_nanos as f64 / 1e9;
            let start = tl.span.start_nanos as f64 / 1e9;
            for (label, secs) in [
                ("15 min", 900.0),
                ("1 h", 3600.0),
                ("1 day", 86_400.0),
                ("all", f64::INFINITY),
            ] {
                let server = matches!(tl.origin, Origin::Server(_));
                let hint = if server {
                    "up to now (all: the last week)"
                } else {
                    "relative to the end of the data"
                };
                if ui.button(label).on_hover_text(hint).clicked() {
                    if server {
                        // The server holds more than was asked for: ask for this range.
                        let now = capture::time::now_nanos();
                        let nanos = if secs.is_finite() {
                            secs
                        } else {
                            7.0 * 86_400.0
                        } * 1e9;
                        reload_range = tl.show_range(now.saturating_sub(nanos as i64), now);
                    } else if end - secs <= start {
                        tl.pending_bounds = Some(tl.whole_bounds());
                    } else {
                        tl.pending_bounds = Some((end - secs, end));
                    }
                }
            }
            reload_range |= typed_range(ui, tl);
            ui.separator();
            // Compare and its sides stay on one line when the row wraps.
            ui.horizontal(|ui| {
                let mut enabled = compare.enabled;
                let toggled = ui
                    .toggle_value(&mut enabled, "Compare")
                    .on_hover_text(
                        "compare two selections: A (before) and B (after), each with its own \
                         selector",
                    )
                    .changed();
                if toggled {
                    actions.push(Action::SetCompare(enabled));
                }
                if compare.enabled {
                    let mut target = compare.target;
                    ui.radio_value(&mut target, Side::A, "select A");
                    ui.radio_value(&mut target, Side::B, "select B");
                    if target != compare.target {
                        actions.push(Action::CompareTarget(target));
                    }
                }
            });
            ui.separator();
            ui.checkbox(&mut tl.show_all, "show all")
                .on_hover_text(format!(
                    "draw every series, not only the {MAX_SERIES} largest"
                ));
            if tl.loading_series {
                ui.weak("loading series…");
            }
            if let Some(n) = &tl.notice {
                ui.colored_label(ui.visuals().warn_fg_color, n);
            }
        });
        // No early return after asking for new series: the panel must be drawn whole
        // every frame, or it would store a smaller size and shrink.
        if let Some(index) = reload {
            actions.push(Action::PlotType(index));
        } else if reload_range {
            actions.push(Action::LoadSeries);
        }
        // The selector row edits (and the plot shows) the selector of the side selected.
        let merge_into = compare.enabled.then_some(compare.target);
        actions.extend(selector_row(ui, tl, merge_into));
        let unit = tl.y_unit();
        let scale = tl.scale;
        let sample_unit = tl
            .types
            .get(tl.type_index)
            .map(|t| t.range_unit().1.to_string())
            .unwrap_or_default();
        let (vx0, vx1, width) = tl.last_view.unwrap_or((
            tl.span.start_nanos as f64 / 1e9,
            tl.span.end_nanos as f64 / 1e9,
            800.0,
        ));
        let shown = if tl.show_all {
            tl.series.len()
        } else {
            tl.series.len().min(MAX_SERIES)
        };
        let names: Vec<String> = tl.series[..shown].iter().map(|s| s.name.clone()).collect();
        // One color for a series' line, markers and legend entry.
        let colors: Vec<Color32> = (0..shown).map(|i| tl.color_of(i)).collect();
        let pending = tl.pending_bounds.take();
        // What is being merged is shown as selected already.
        let merging = |side| tl.query_of(side).map(|q| q.time);
        let selection = merging(None).or(tl.selection);
        let step = tl.step_nanos;
        let drag = tl.drag_start.zip(tl.drag_now);
        let sides: Vec<(&str, QueryTime, Color32)> = if compare.enabled {
            [
                (
                    Side::A,
                    &compare.a,
                    Color32::from_rgba_unmultiplied(255, 140, 0, 60),
                ),
                (
                    Side::B,
                    &compare.b,
                    Color32::from_rgba_unmultiplied(170, 60, 255, 60),
                ),
            ]
            .into_iter()
            .filter_map(|(side, p, c)| {
                // The selection that becomes A once shown is drawn as A already.
                let carried = selection.filter(|_| compare.waits_to_carry(side));
                let time = merging(Some(side))
                    .or(p.as_ref().map(|p| p.time))
                    .or(carried)?;
                Some((side.letter(), time, c))
            })
            .collect()
        } else {
            Vec::new()
        };
        let selection = if compare.enabled { None } else { selection };
        // The plot takes what the footer line leaves, so that the panel's content fills
        // it exactly: a smaller content would be stored as the panel's new size and the
        // panel would shrink a little with every frame.
        let footer = ui.spacing().interact_size.y + ui.spacing().item_spacing.y * 2.0;
        let height = (ui.available_height() - footer).max(60.0);
        tl.plot_height = height;
        let visible: Vec<bool> = tl.series[..shown]
            .iter()
            .map(|s| !tl.hidden.contains(&s.name))
            .collect();
        let highlighted = tl.legend_hovered;
        let shift = ui.input(|i| i.modifiers.shift);
        let legend_width = if shown > 0 {
            LEGEND_WIDTH.min(ui.available_width() / 3.0)
        } else {
            0.0
        };
        let plot_width =
            (ui.available_width() - legend_width - ui.spacing().item_spacing.x).max(100.0);
        // The wheel moves along time: over the plot, its turn pans sideways (Ctrl+wheel
        // zooms time; values always fit what is drawn).
        if let Some(t) = &tl.last_transform
            && ui.rect_contains_pointer(*t.frame())
        {
            ui.input_mut(|i| {
                let d = i.smooth_scroll_delta;
                i.smooth_scroll_delta = egui::vec2(d.x + d.y, 0.0);
            });
        }
        // With nothing to plot the plot says why, without axes: an empty plot's axes
        // would show made-up times and values.
        let empty_text = tl.empty_plot_text();
        let no_series = empty_text.is_some();
        let weak = ui.visuals().weak_text_color();
        let row = ui.horizontal_top(|ui| {
            // Borrowed, not copied: the lines stay in the cache while the plot draws them.
            let lines = tl.drawn_lines(shown, vx0, vx1, width);
            let resp = Plot::new(PLOT_ID)
                .id(egui::Id::unique(PLOT_ID))
                .height(height)
                .width(plot_width)
                .pan_pointer_button(PointerButton::Middle)
                .allow_boxed_zoom(false)
                .allow_zoom([true, false])
                .allow_scroll([true, false])
                // Not on a double-click: its first click would select a point and
                // replace the view shown (a merged day) before the reset; *all* resets.
                .allow_double_click_reset(false)
                .y_axis_label(unit)
                .show_axes(!no_series)
                .show_grid(!no_series)
                .include_y(0.0)
                .x_grid_spacer(egui_plot::uniform_grid_spacer(|input| {
                    time_grid_steps(input.base_step_size)
                }))
                .x_axis_formatter(|mark, _| time_label(mark.value, mark.step_size))
                .y_grid_spacer(egui_plot::uniform_grid_spacer(|input| {
                    value_grid_steps(input.base_step_size)
                }))
                .y_axis_formatter(|mark, _| value_label(mark.value, mark.step_size))
                .show(ui, |plot_ui| {
                    if let Some(text) = empty_text {
                        let centre = plot_ui.plot_bounds().center();
                        plot_ui.text(
                            Text::new("", centre, egui::RichText::new(text).size(14.0)).color(weak),
                        );
                    }
                    if let Some((a, b)) = pending {
                        plot_ui.set_plot_bounds_x(a..=b);
                        plot_ui.set_auto_bounds([false, true]);
                    } else if !plot_ui.auto_bounds().y {
                        // Panned: the values fit again.
                        let x = plot_ui.auto_bounds().x;
                        plot_ui.set_auto_bounds([x, true]);
                    }
                    // Selections and their spans, unnamed: only series are hovered by name;
                    // under the series.
                    let sel_color = Color32::from_rgba_unmultiplied(90, 140, 255, 50);
                    match selection {
                        Some(QueryTime::Single(t)) => {
                            plot_ui.add(VLine::new("", t as f64 / 1e9).color(sel_color));
                        }
                        Some(QueryTime::Merge(r))
                            if r.end_nanos.saturating_sub(r.start_nanos) <= step =>
                        {
                            plot_ui.add(
                                VLine::new("", r.start_nanos as f64 / 1e9)
                                    .color(Color32::from_rgb(90, 140, 255)),
                            );
                        }
                        Some(QueryTime::Merge(r)) => {
                            plot_ui.add(
                                Span::new(
                                    "",
                                    r.start_nanos as f64 / 1e9..=r.end_nanos as f64 / 1e9,
                                )
                                .fill(sel_color),
                            );
                        }
                        None => {}
                    }
                    for (name, time, color) in sides {
                        let range = match time {
                            QueryTime::Single(t) => TimeRange {
                                start_nanos: t,
                                end_nanos: t,
                            },
                            QueryTime::Merge(r) => r,
                        };
                        let (x0, x1) =
                            (range.start_nanos as f64 / 1e9, range.end_nanos as f64 / 1e9);
                        if range.end_nanos.saturating_sub(range.start_nanos) <= step {
                            plot_ui.add(VLine::new(name, x0).color(color.to_opaque()).width(2.0));
                        } else {
                            plot_ui.add(
                                Span::new(name, x0..=x1)
                                    .fill(color)
                                    .border_color(color.to_opaque()),
                            );
                        }
                    }
                    if let Some((a, b)) = drag {
                        plot_ui.add(
                            Span::new("dragging", a.min(b)..=a.max(b))
                                .fill(Color32::from_rgba_unmultiplied(255, 200, 60, 50)),
                        );
                    }
                    // The series last, over the spans, so that their colors are the
                    // legend's.
                    for (i, (name, line)) in names.into_iter().zip(lines).enumerate() {
                        if !visible[i] {
                            continue;
                        }
                        let color = colors[i];
                        let marked = line.points.len() <= MARKED_POINTS;
                        for (k, points) in line.segments().enumerate() {
                            // A lone point between gaps draws no line: it gets a marker.
                            if marked || points.len() == 1 {
                                plot_ui.points(
                                    Points::new(name.clone(), PlotPoints::Borrowed(points))
                                        .id(series_key(i, k))
                                        .color(color)
                                        .radius(3.0)
                                        .allow_hover(false),
                                );
                            }
                            plot_ui.line(
                                Line::new(name.clone(), PlotPoints::Borrowed(points))
                                    .id(series_key(i, k))
                                    .color(color)
                                    .width(1.5)
                                    .highlight(highlighted == Some(i))
                                    // Hovered as the click picks ([`Timeline::pick`]).
                                    .allow_hover(false),
                            );
                        }
                    }
                });
            let (hovered, click) = legend(ui, &tl.series[..shown], &colors, &tl.hidden, height);
            (resp, hovered, click)
        });
        let (resp, legend_hovered, legend_click) = row.inner;
        tl.legend_hovered = legend_hovered;
        tl.last_transform = Some(resp.transform);
        let bounds = resp.transform.bounds();
        tl.last_view = Some((
            bounds.min()[0],
            bounds.max()[0],
            resp.transform.frame().width(),
        ));
        // A zoom or a pan that has settled: the series again, at the view's resolution.
        let refine = !tl.loading_series
            && tl.view_moved(
                (bounds.min()[0], bounds.max()[0]),
                std::time::Instant::now(),
            );
        if tl.view_settling() {
            ctx.request_repaint_after(crate::gui::time::timeline::VIEW_SETTLE);
        }
        let r = &resp.response;
        let x_at = |pos: egui::Pos2| resp.transform.value_from_position(pos).x;
        let mut chosen = None;
        let mut add = Vec::new();
        match legend_click {
            Some(LegendClick::Filter(i)) => {
                add = series_matchers(&tl.series[i].labels, &tl.matchers);
            }
            Some(LegendClick::Toggle(i)) => {
                let name = tl.series[i].name.clone();
                if !tl.hidden.remove(&name) {
                    tl.hidden.insert(name);
                }
            }
            None => {}
        }
        // What the pointer points at, one rule for the tooltip and the click (hidden
        // lines are not there to be pointed at).
        let view = (vx0, vx1, width);
        let px = [LINE_PICK_PX, CLICK_SNAP_PX];
        let hovered = (r.hover_pos()).filter(|_| !no_series).map(|pos| {
            (
                pos,
                tl.pick(shown, view, &visible, &resp.transform, pos, px),
            )
        });
        if let Some((pos, pick)) = hovered {
            let dragging = tl.drag_start.is_some();
            let text = pick_text(
                &pick,
                &tl.series,
                scale,
                &sample_unit,
                dragging.then_some(x_at(pos)),
            );
            if let Some((i, point)) = pick.on_line {
                let painter = ui.painter().with_clip_rect(*resp.transform.frame());
                let centre = resp.transform.position_from_point(&point);
                painter.circle_filled(centre, 3.5, ui.visuals().strong_text_color());
                painter.circle_filled(centre, 2.0, tl.color_of(i));
            }
            egui::Tooltip::always_open(ctx.clone(), r.layer_id, r.id, egui::PopupAnchor::Pointer)
                .gap(12.0)
                .show(|ui| ui.label(text));
        }
        let clicked = match r.interact_pointer_pos() {
            Some(pos) if r.clicked_by(PointerButton::Primary) => {
                Some(tl.pick(shown, view, &visible, &resp.transform, pos, px))
            }
            _ => None,
        };
        let clicked_line = clicked.and_then(|p| p.on_line).map(|(i, _)| i);
        if shift && r.clicked_by(PointerButton::Primary) {
            if let Some(i) = clicked_line {
                add = series_matchers(&tl.series[i].labels, &tl.matchers);
            }
        } else if r.drag_started_by(PointerButton::Primary)
            // Where the button went down: by the time the drag is seen the pointer may
            // be far from it (a quick flick, or a long frame while work runs).
            && let Some(pos) = (r.ctx.input(|i| i.pointer.press_origin()))
                .or_else(|| r.interact_pointer_pos())
        {
            tl.drag_start = Some(x_at(pos));
            tl.drag_now = tl.drag_start;
        }
        if tl.drag_start.is_some()
            && let Some(pos) = r.interact_pointer_pos()
        {
            tl.drag_now = Some(x_at(pos));
        }
        if r.drag_stopped_by(PointerButton::Primary) {
            if let (Some(a), Some(b)) = (tl.drag_start.take(), tl.drag_now.take()) {
                tl.selection_series.clear();
                chosen = Some(QueryTime::Merge(drag_to_range(a, b)));
            }
        } else if !shift
            && r.clicked_by(PointerButton::Primary)
            && let Some(pick) = clicked
        {
            // A click on a line shows its series' profile at the point the tooltip
            // names; elsewhere, every series' at the point nearest the click.
            tl.selection_series = clicked_line
                .map(|i| series_matchers(&tl.series[i].labels, &tl.matchers))
                .unwrap_or_default();
            chosen = Some(QueryTime::Merge(pick.bucket));
        }
        let indexing = tl.indexing.as_ref().and(tl.progress_text());
        ui.horizontal(|ui| {
            if let Some(text) = selection_text {
                ui.strong(text);
                ui.separator();
            }
            if let Some(text) = indexing {
                // Nothing to click yet.
                ui.weak(format!("{text}…"));
                return;
            }
            ui.add(egui::Label::new(egui::RichText::new(PLOT_HINT).weak()).truncate());
        });
        // Fill the panel (see above): its stored size is the size of what it holds.
        ui.expand_to_include_rect(ui.max_rect());
        if !add.is_empty() {
            actions.push(Action::AddMatchers(add));
        }
        if let Some(time) = chosen {
            actions.push(Action::Select(time));
        }
        if refine {
            actions.push(Action::LoadSeries);
        }
    }
    actions
}
