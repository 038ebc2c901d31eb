//! The top table: function, self, self %, total, total %; sortable by clicking a header,
//! filtered by the search, virtualized (only visible rows are built) so that tens of
//! thousands of rows stay cheap. Cells are painted directly; each row is one clickable
//! region labelled for accessibility with its name as pprof's `-top` shows it (with
//! an `(inline)` or `(partial-inline)` mark). The value columns are
//! resized by dragging their headers' left edges (the function column takes the
//! rest); their widths last for the session.

use std::borrow::Cow;

use egui::{Align2, Color32, FontId, Rect, Role, ScrollArea, Sense, Ui, WidgetInfo, pos2, vec2};
use profile_model::frames::{FrameId, FrameTable};
use profile_model::top::{Top, TopRow};
use profile_model::units;

use crate::gui::view::frame_menu::{self, FrameAction};

/// Height of one row.
const ROW_HEIGHT: f32 = 18.0;
/// Widths of the value and percent columns, until resized.
const VALUE_WIDTH: f32 = 72.0;
const PERCENT_WIDTH: f32 = 54.0;
/// The narrowest and widest a value or percent column is resized to.
const COLUMN_WIDTHS: std::ops::RangeInclusive<f32> = 36.0..=320.0;
/// The narrowest the function column is left.
const NAME_MIN_WIDTH: f32 = 80.0;
/// The accessible label of a column's resize handle: "resize self", …
pub const RESIZE_PREFIX: &str = "resize ";

/// A sortable column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    /// Function name.
    Name,
    /// Self (flat) value.
    Flat,
    /// Total (cum) value.
    Cum,
}

/// What was done to a row of the top table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopClick {
    /// The row of this frame was clicked.
    Row(FrameId),
    /// Its context menu asked this.
    Menu(FrameId, FrameAction),
}

/// Sort state and the cached row order.
#[derive(Debug)]
pub struct TopTableState {
    /// Column sorted by.
    pub sort: SortColumn,
    /// Descending order.
    pub descending: bool,
    /// Indices into `Top::rows`, filtered and sorted.
    pub order: Vec<usize>,
    /// The largest |flat| and |cum| of the rows: each column's unit is theirs.
    largest: (i64, i64),
    key: Option<(u64, SortColumn, bool)>,
    /// Widths of the self, self %, total and total % columns.
    pub widths: [f32; 4],
}

impl Default for TopTableState {
    fn default() -> Self {
        Self {
            sort: SortColumn::Flat,
            descending: true,
            order: Vec::new(),
            largest: (0, 0),
            key: None,
            widths: [VALUE_WIDTH, PERCENT_WIDTH, VALUE_WIDTH, PERCENT_WIDTH],
        }
    }
}

/// The rows of `top` kept by `matches` (per frame), sorted by `sort`.
pub fn row_order(
    top: &Top,
    frames: &FrameTable,
    matches: Option<&[bool]>,
    sort: SortColumn,
    descending: bool,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..top.rows.len())
        .filter(|&i| {
            matches.is_none_or(|m| m.get(top.rows[i].frame as usize).copied().unwrap_or(false))
        })
        .collect();
    let name = |r: &TopRow| {
        frames
            .frames
            .get(r.frame as usize)
            .map_or("", |f| f.name.as_str())
    };
    order.sort_by(|&a, &b| {
        let (ra, rb) = (&top.rows[a], &top.rows[b]);
        let ord = match sort {
            SortColumn::Name => name(ra).cmp(name(rb)),
            SortColumn::Flat => ra.flat.cmp(&rb.flat).then_with(|| ra.cum.cmp(&rb.cum)),
            SortColumn::Cum => ra.cum.cmp(&rb.cum).then_with(|| ra.flat.cmp(&rb.flat)),
        };
        let ord = if descending { ord.reverse() } else { ord };
        ord.then_with(|| name(ra).cmp(name(rb)))
    });
    order
}

impl TopTableState {
    /// Recomputes the order when the data (`generation`) or the sort changed.
    pub fn refresh(
        &mut self,
        generation: u64,
        top: &Top,
        frames: &FrameTable,
        matches: Option<&[bool]>,
    ) {
        let key = (generation, self.sort, self.descending);
        if self.key != Some(key) {
            self.order = row_order(top, frames, matches, self.sort, self.descending);
            let largest = |value: fn(&profile_model::top::TopRow) -> i64| {
                top.rows.iter().map(|r| value(r).abs()).max().unwrap_or(0)
            };
            self.largest = (largest(|r| r.flat), largest(|r| r.cum));
            self.key = Some(key);
        }
    }

    fn header(&mut self, ui: &mut Ui, rect: Rect, title: &str, column: SortColumn, right: bool) {
        // The arrow goes on the value column, not on its percent twin.
        let sorted = (self.sort == column && !title.ends_with('%')).then_some(self.descending);
        let response = sort_header(ui, rect, "top header", title, right, sorted);
        if response.clicked() {
            if self.sort == column {
                self.descending = !self.descending;
            } else {
                self.sort = column;
                self.descending = column != SortColumn::Name;
            }
            self.key = None;
        }
    }

    /// The drag handle on the left edge of value column `i`'s header (`rect`): a drag
    /// to the left widens it, the value columns together keeping to `room`.
    fn resize_handle(&mut self, ui: &mut Ui, rect: Rect, i: usize, title: &str, room: f32) {
        let handle = Rect::from_x_y_ranges(rect.left() - 3.0..=rect.left() + 3.0, rect.y_range());
        let id = ui.scope_id().with(("top resize", i));
        let response = ui
            .interact(handle, id, Sense::drag())
            .on_hover_cursor(egui::CursorIcon::ResizeHorizontal);
        let label = format!("{RESIZE_PREFIX}{title}");
        response.widget_info(|| WidgetInfo::labeled(Role::Button, true, &label));
        let stroke = if response.hovered() || response.dragged() {
            ui.visuals().widgets.active.fg_stroke
        } else {
            ui.visuals().widgets.noninteractive.bg_stroke
        };
        ui.painter().vline(rect.left(), rect.y_range(), stroke);
        if response.dragged() {
            let others: f32 = self.widths.iter().sum::<f32>() - self.widths[i];
            let widest = (room - others).max(*COLUMN_WIDTHS.start());
            let w = self.widths[i] - response.drag_delta().x;
            self.widths[i] = w.clamp(*COLUMN_WIDTHS.start(), COLUMN_WIDTHS.end().min(widest));
        }
    }

    /// Shows the table; returns the frame of a clicked row.
    pub fn show(
        &mut self,
        ui: &mut Ui,
        top: &Top,
        frames: &FrameTable,
        unit: &str,
        selected: Option<FrameId>,
    ) -> Option<TopClick> {
        let full = ui.available_width();
        // One unit per column, that of its largest value.
        let (largest_flat, largest_cum) = self.largest;
        let flat_scale = units::Scale::of(largest_flat, unit);
        let cum_scale = units::Scale::of(largest_cum, unit);
        let widths = self.widths;
        let name_width = (full - widths.iter().sum::<f32>()).max(NAME_MIN_WIDTH);
        let columns = |left: f32| {
            let mut x = left;
            let mut out = [(0.0, 0.0); 5];
            let [a, b, c, d] = widths;
            for (i, w) in [name_width, a, b, c, d].into_iter().enumerate() {
                out[i] = (x, x + w);
                x += w;
            }
            out
        };
        // Header.
        let (header_rect, _) = ui.allocate_exact_size(vec2(full, ROW_HEIGHT + 2.0), Sense::hover());
        let cols = columns(header_rect.left());
        let cell = |i: usize, r: Rect| {
            let (x0, x1): (f32, f32) = cols[i];
            Rect::from_min_max(pos2(x0, r.top()), pos2(x1, r.bottom()))
        };
        self.header(
            ui,
            cell(0, header_rect),
            "function",
            SortColumn::Name,
            false,
        );
        self.header(ui, cell(1, header_rect), "self", SortColumn::Flat, true);
        self.header(ui, cell(2, header_rect), "self %", SortColumn::Flat, true);
        self.header(ui, cell(3, header_rect), "total", SortColumn::Cum, true);
        self.header(ui, cell(4, header_rect), "total %", SortColumn::Cum, true);
        let titles = ["self", "self %", "total", "total %"];
        for (i, title) in titles.into_iter().enumerate() {
            self.resize_handle(
                ui,
                cell(i + 1, header_rect),
                i,
                title,
                full - NAME_MIN_WIDTH,
            );
        }
        ui.painter().hline(
            header_rect.x_range(),
            header_rect.bottom(),
            ui.visuals().widgets.noninteractive.bg_stroke,
        );
        let mut clicked = None;
        let spacing = ui.spacing().item_spacing.y;
        ui.spacing_mut().item_spacing.y = 0.0;
        ScrollArea::vertical()
            .id_salt("top table")
            .auto_shrink([false, false])
            .show_rows(ui, ROW_HEIGHT, self.order.len(), |ui, range| {
                let font = FontId::proportional(12.5);
                let text_color = ui.visuals().text_color();
                let strong = ui.visuals().strong_text_color();
                let stripe = ui.visuals().faint_bg_color;
                let selection = ui.visuals().selection.bg_fill;
                for i in range {
                    let Some(row) = self.order.get(i).and_then(|&r| top.rows.get(r)) else {
                        continue;
                    };
                    let name = frames
                        .frames
                        .get(row.frame as usize)
                        .map_or("?", |f| f.name.as_str());
                    // As pprof's -top: `(inline)` or `(partial-inline)` after the name.
                    let mark = row.reached.mark().suffix();
                    let shown = match mark {
                        "" => Cow::Borrowed(name),
                        mark => Cow::Owned(format!("{name}{mark}")),
                    };
                    let (rect, response) =
                        ui.allocate_exact_size(vec2(full, ROW_HEIGHT), Sense::click());
                    response.widget_info(|| WidgetInfo::labeled(Role::Row, true, &*shown));
                    let is_selected = selected == Some(row.frame);
                    let painter = ui.painter();
                    if is_selected {
                        painter.rect_filled(rect, 0.0, selection);
                    } else if response.hovered() {
                        painter.rect_filled(rect, 0.0, ui.visuals().widgets.hovered.weak_bg_fill);
                    } else if i % 2 == 1 {
                        painter.rect_filled(rect, 0.0, stripe);
                    }
                    let color = if is_selected { strong } else { text_color };
                    let cols = columns(rect.left());
                    let cell = |c: usize| {
                        let (x0, x1): (f32, f32) = cols[c];
                        Rect::from_min_max(pos2(x0, rect.top()), pos2(x1, rect.bottom()))
                    };
                    let right = |c: usize, text: String| {
                        let r = cell(c);
                        painter.with_clip_rect(r).text(
                            pos2(r.right() - 4.0, r.center().y),
                            Align2::RIGHT_CENTER,
                            text,
                            font.clone(),
                            color,
                        );
                    };
                    let name_cell = cell(0);
                    paint_name(
                        painter,
                        name_cell.shrink2(vec2(2.0, 0.0)),
                        pos2(name_cell.left() + 4.0, name_cell.center().y),
                        (name, mark),
                        &font,
                        color,
                    );
                    right(1, flat_scale.format(row.flat, largest_flat));
                    right(2, units::percent(row.flat, top.total));
                    right(3, cum_scale.format(row.cum, largest_cum));
                    right(4, units::percent(row.cum, top.total));
                    // The full name where the row's is shortened (a C++ name's
                    // parameters and template arguments).
                    let full = frames
                        .frames
                        .get(row.frame as usize)
                        .map_or("", |f| f.full_name.as_str());
                    let hover = if full.is_empty() {
                        shown.to_string()
                    } else {
                        format!("{shown}\n{full}")
                    };
                    let response = response.on_hover_text_at_pointer(hover);
                    if response.clicked() {
                        clicked = Some(TopClick::Row(row.frame));
                    }
                    response.context_menu(|ui| {
                        if let Some(action) = frame_menu::menu(ui, name, true) {
                            clicked = Some(TopClick::Menu(row.frame, action));
                        }
                    });
                }
            });
        ui.spacing_mut().item_spacing.y = spacing;
        clicked
    }
}

/// A clickable column header painted in `rect`: the title (right-aligned for value
/// columns) and, when `sorted` is `Some(descending)`, a small triangle (the default fonts
/// have no arrow glyphs). The header is a button named `title` for accessibility.
pub(crate) fn sort_header(
    ui: &mut Ui,
    rect: Rect,
    salt: &str,
    title: &str,
    right: bool,
    sorted: Option<bool>,
) -> egui::Response {
    let response = ui.interact(rect, ui.scope_id().with((salt, title)), Sense::click());
    response.widget_info(|| WidgetInfo::labeled(Role::Button, true, title));
    let color = if response.hovered() {
        ui.visuals().strong_text_color()
    } else {
        ui.visuals().text_color()
    };
    let (anchor, x) = if right {
        (Align2::RIGHT_CENTER, rect.right() - 4.0)
    } else {
        (Align2::LEFT_CENTER, rect.left() + 4.0)
    };
    let painter = ui.painter().with_clip_rect(rect);
    let text_rect = painter.text(
        pos2(x, rect.center().y),
        anchor,
        title,
        FontId::proportional(12.5),
        color,
    );
    if let Some(descending) = sorted {
        let c = if right {
            pos2(text_rect.left() - 7.0, rect.center().y)
        } else {
            pos2(text_rect.right() + 7.0, rect.center().y)
        };
        let (a, b) = if descending { (3.5, 3.0) } else { (3.5, -3.0) };
        painter.add(egui::Shape::convex_polygon(
            vec![
                pos2(c.x - a, c.y - b),
                pos2(c.x + a, c.y - b),
                pos2(c.x, c.y + b),
            ],
            color,
            egui::Stroke::NONE,
        ));
    }
    response
}

/// Paints a function's `name` and then `suffix` (its inline mark, or `""`) left-aligned
/// at `pos` in `cell`, the name shortened by [`fit_name`] so that both fit the cell's
/// width, and the suffix kept whole.
pub(crate) fn paint_name(
    painter: &egui::Painter,
    cell: Rect,
    pos: egui::Pos2,
    (name, suffix): (&str, &str),
    font: &FontId,
    color: Color32,
) {
    let layout = |text: String| painter.layout_no_wrap(text, font.clone(), color);
    let width = |text: &str| layout(text.to_string()).size().x;
    let room = cell.right()
        - pos.x
        - 2.0
        - if suffix.is_empty() {
            0.0
        } else {
            width(suffix)
        };
    let mut text = fit_name(name, room, width);
    text.push_str(suffix);
    let galley = layout(text);
    let rect = Align2::LEFT_CENTER.anchor_size(pos, galley.size());
    painter.with_clip_rect(cell).galley(rect.min, galley, color);
}

/// `name` shortened to fit `room` points, as the flame graph shortens its labels
/// ([`crate::gui::view::flame::elide`]: first without the package path, then without a C++
/// or Rust argument list, then the middle elided), so that
/// long names sharing a prefix (`github.com/acme/api-server/…`) stay told apart.
/// `width` measures a text; glyphs differ in width, so the characters that fit are
/// guessed from the width measured, and guessed again (fewer) while still too wide.
fn fit_name(name: &str, room: f32, width: impl Fn(&str) -> f32) -> String {
    let mut text = name.to_string();
    let mut chars = name.chars().count();
    let mut w = width(&text);
    while w > room && chars > 3 {
        let fit = (chars as f32 * room / w).floor() as usize;
        chars = fit.min(chars - 1).max(3);
        let Some(short) = crate::gui::view::flame::elide(name, chars) else {
            break;
        };
        w = width(&short);
        text = short;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::fit_name;

    /// A width of 7 points a character, 14 for "W".
    fn width(text: &str) -> f32 {
        text.chars()
            .map(|c| if c == 'W' { 14.0 } else { 7.0 })
            .sum()
    }

    #[test]
    fn a_name_that_fits_is_kept_whole() {
        assert_eq!(fit_name("main.main", 70.0, width), "main.main");
    }

    #[test]
    fn a_long_name_loses_its_package_path_first() {
        let name = "github.com/acme/api-server/handler.(*Server).ServeHTTP";
        assert_eq!(fit_name(name, 200.0, width), "handler.(*Server).ServeHTTP");
    }

    #[test]
    fn names_that_share_a_signature_keep_their_own_names() {
        let names = [
            "acme::auth::BufferImpl::serveToken(Envoy::Buffer::Instance&)",
            "acme::blob::EncoderImpl::resolveRow(Envoy::Buffer::Instance&)",
        ];
        let texts = names.map(|name| fit_name(name, 280.0, width));
        assert_eq!(texts[0], "acme::auth::BufferImpl::serveToken(…)");
        assert_eq!(texts[1], "acme::blob::EncoderImpl::resolveRow(…)");
    }

    #[test]
    fn a_name_still_too_wide_loses_its_middle_until_it_fits() {
        let name = "acme::auth::WWWWWWWWWWImpl::serveToken";
        let text = fit_name(name, 140.0, width);
        assert!(width(&text) <= 140.0, "{text}");
        assert!(
            text.starts_with("acme::") && text.contains('…') && text.ends_with("Token"),
            "{text}"
        );
    }
}
