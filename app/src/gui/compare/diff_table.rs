//! The diff table of compare mode (instead of the top table): one row per function
//! with its values in A and B and the change, sortable by column.

use egui::{
    Align2, FontId, Rect, Role, ScrollArea, Sense, Stroke, StrokeKind, Ui, WidgetInfo, pos2, vec2,
};
use profile_model::diff::{self, Change, DiffMode, DiffRow};
use profile_model::frames::{FrameId, FrameTable};
use profile_model::units;

use crate::gui::compare::CompareState;
use crate::gui::compare::diff_color;
use crate::gui::view::flame;
use crate::gui::view::frame_menu::{self, FrameAction};

/// A sortable column of the diff table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffSort {
    /// Function name.
    Name,
    /// Value in A.
    A,
    /// Value in B.
    B,
    /// |delta| (the default).
    Delta,
    /// Signed delta (in % of the total it is measured against).
    DeltaPercent,
}

/// Which rows of the diff table are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffShow {
    /// Every function (the default).
    #[default]
    All,
    /// The functions only B has ([`Change::New`]).
    New,
    /// The functions only A has ([`Change::Vanished`]).
    Vanished,
}

impl DiffShow {
    /// Whether a row with `a` in A and `b` in B is listed.
    pub fn keeps(self, a: i64, b: i64) -> bool {
        match self {
            DiffShow::All => true,
            DiffShow::New => diff::is_new(a, b),
            DiffShow::Vanished => diff::is_vanished(a, b),
        }
    }
}

/// The order of the rows of `rows` that `show` keeps, sorted by `sort`, their deltas
/// taken in `mode` with the totals `(total_a, total_b)`.
pub fn diff_order(
    rows: &[DiffRow],
    frames: &FrameTable,
    (sort, descending, show): (DiffSort, bool, DiffShow),
    (total_a, total_b): (i64, i64),
    mode: DiffMode,
) -> Vec<usize> {
    let name = |r: &DiffRow| {
        frames
            .frames
            .get(r.frame as usize)
            .map_or("", |f| f.name.as_str())
    };
    let delta = |r: &DiffRow| r.delta(total_a, total_b, mode).value;
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|&i| show.keeps(rows[i].a, rows[i].b))
        .collect();
    order.sort_by(|&x, &y| {
        let (rx, ry) = (&rows[x], &rows[y]);
        let ord = match sort {
            DiffSort::Name => name(rx).cmp(name(ry)),
            DiffSort::A => rx.a.cmp(&ry.a),
            DiffSort::B => rx.b.cmp(&ry.b),
            DiffSort::Delta => delta(rx).unsigned_abs().cmp(&delta(ry).unsigned_abs()),
            DiffSort::DeltaPercent => delta(rx).cmp(&delta(ry)),
        };
        let ord = if descending { ord.reverse() } else { ord };
        ord.then_with(|| name(rx).cmp(name(ry)))
    });
    order
}

impl CompareState {
    /// The diff table (instead of the top table in compare mode).
    pub fn diff_panel(&mut self, ui: &mut Ui) -> Option<(String, FrameAction)> {
        // Keep the panel's width: a resizable panel shrinks to its content.
        ui.set_min_width(ui.available_width());
        let Some(res) = self.result.clone() else {
            ui.strong("Differences");
            ui.weak("select A and B on the plot");
            return None;
        };
        let (sort, descending) = self.sort_column();
        let (total_a, total_b, mode) = (res.total_a(), res.total_b(), self.mode);
        let show = self.show;
        // Rows of functions the search matches, as the top table lists them.
        let searched = |frame: FrameId| {
            (self.matches.as_ref()).is_none_or(|m| m.get(frame as usize).copied().unwrap_or(false))
        };
        let key = (self.result_generation, sort, descending, mode, show);
        if self.order_key != Some(key) {
            let mut order = diff_order(
                &res.rows,
                &res.frames,
                (sort, descending, show),
                (total_a, total_b),
                mode,
            );
            order.retain(|&i| res.rows.get(i).is_some_and(|r| searched(r.frame)));
            self.order = order;
            self.order_key = Some(key);
        }
        ui.horizontal(|ui| {
            ui.strong("Differences");
            ui.weak(format!(
                "{} functions, B − A",
                units::thousands(res.rows.len() as u64)
            ));
        });
        ui.horizontal(|ui| {
            for (choice, name) in [
                (DiffShow::All, "all"),
                (DiffShow::New, "new in B"),
                (DiffShow::Vanished, "only in A"),
            ] {
                let count = (res.rows.iter())
                    .filter(|r| choice.keeps(r.a, r.b) && searched(r.frame))
                    .count();
                let text = format!("{name} ({})", units::thousands(count as u64));
                if ui.selectable_label(self.show == choice, text).clicked() {
                    self.show = choice;
                }
            }
        });
        let full = ui.available_width();
        const VALUE: f32 = 70.0;
        const PERCENT: f32 = 62.0;
        let name_width = (full - 3.0 * VALUE - PERCENT).max(80.0);
        let widths = [name_width, VALUE, VALUE, VALUE, PERCENT];
        let cells = |r: Rect| {
            let mut x = r.left();
            widths.map(|w| {
                let c = Rect::from_min_max(pos2(x, r.top()), pos2(x + w, r.bottom()));
                x += w;
                c
            })
        };
        let (header, _) = ui.allocate_exact_size(vec2(full, 20.0), Sense::hover());
        let titles = [
            ("function", DiffSort::Name),
            ("A", DiffSort::A),
            ("B", DiffSort::B),
            ("delta", DiffSort::Delta),
            ("delta %", DiffSort::DeltaPercent),
        ];
        for (i, (cell, (title, column))) in cells(header).into_iter().zip(titles).enumerate() {
            let sorted = (sort == column).then_some(descending);
            let response = crate::gui::view::top_table::sort_header(
                ui,
                cell,
                "diff header",
                title,
                i > 0,
                sorted,
            );
            let response = response.on_hover_text(match (column, mode) {
                (DiffSort::Delta, DiffMode::Relative) => {
                    "sort by |B − A|, A scaled to B's total (relative mode)"
                }
                (DiffSort::Delta, DiffMode::Absolute) => "sort by |B − A|",
                (DiffSort::DeltaPercent, DiffMode::Relative) => {
                    "sort by B − A in % of B's total, A scaled to it: the change of the \
                     function's share (relative mode)"
                }
                (DiffSort::DeltaPercent, DiffMode::Absolute) => "sort by B − A, in % of A's total",
                _ => "sort by this column",
            });
            if response.clicked() {
                if sort == column {
                    self.descending = !descending;
                } else {
                    self.descending = column != DiffSort::Name;
                }
                self.sort = Some(column);
            }
        }
        let mut clicked = None;
        let mut asked = None;
        let spacing = ui.spacing().item_spacing.y;
        ui.spacing_mut().item_spacing.y = 0.0;
        ScrollArea::vertical()
            .id_salt("diff table")
            .auto_shrink([false, false])
            .show_rows(ui, 18.0, self.order.len(), |ui, range| {
                let font = FontId::proportional(12.5);
                let dark = ui.visuals().dark_mode;
                for i in range {
                    let Some(row) = self.order.get(i).and_then(|&r| res.rows.get(r)) else {
                        continue;
                    };
                    let name = res
                        .frames
                        .frames
                        .get(row.frame as usize)
                        .map_or("?", |f| f.name.as_str());
                    let (rect, response) = ui.allocate_exact_size(vec2(full, 18.0), Sense::click());
                    response.widget_info(|| WidgetInfo::labeled(Role::Row, true, name));
                    let painter = ui.painter();
                    if self.selected == Some(row.frame) {
                        painter.rect_filled(rect, 0.0, ui.visuals().selection.bg_fill);
                    } else if response.hovered() {
                        painter.rect_filled(rect, 0.0, ui.visuals().widgets.hovered.weak_bg_fill);
                    } else if i % 2 == 1 {
                        painter.rect_filled(rect, 0.0, ui.visuals().faint_bg_color);
                    }
                    let change = diff::classify(row.a, row.b, total_a, total_b, mode);
                    let c = cells(rect);
                    // A swatch of the row's class, then the name.
                    let swatch = Rect::from_center_size(
                        pos2(c[0].left() + 7.0, c[0].center().y),
                        vec2(8.0, 8.0),
                    );
                    painter.rect_filled(swatch, 1.0, diff_color(change, dark));
                    if matches!(change, Change::New | Change::Vanished) {
                        // Outlined, as new and vanished frames are in the flame graph.
                        painter.rect_stroke(
                            swatch.expand(1.0),
                            1.0,
                            Stroke::new(1.5, ui.visuals().strong_text_color()),
                            StrokeKind::Outside,
                        );
                    }
                    let text = ui.visuals().text_color();
                    crate::gui::view::top_table::paint_name(
                        painter,
                        c[0].shrink2(vec2(2.0, 0.0)),
                        pos2(c[0].left() + 15.0, c[0].center().y),
                        (name, ""),
                        &font,
                        text,
                    );
                    let delta = row.delta(total_a, total_b, mode);
                    let values = [
                        units::readable(row.a, &res.unit),
                        units::readable(row.b, &res.unit),
                        flame::signed(delta.value, &res.unit),
                        format!("{:+.2}%", delta.percent),
                    ];
                    for (cell, value) in c[1..].iter().zip(values) {
                        painter.with_clip_rect(*cell).text(
                            pos2(cell.right() - 4.0, cell.center().y),
                            Align2::RIGHT_CENTER,
                            value,
                            font.clone(),
                            text,
                        );
                    }
                    let response = response.on_hover_text_at_pointer(format!(
                        "{name}\n{}",
                        flame::change_name(change)
                    ));
                    if response.clicked() {
                        clicked = Some(row.frame);
                    }
                    response.context_menu(|ui| {
                        if let Some(action) = frame_menu::menu(ui, name, false) {
                            asked = Some((row.frame, action));
                        }
                    });
                }
            });
        ui.spacing_mut().item_spacing.y = spacing;
        if let Some(frame) = clicked {
            self.selected = if self.selected == Some(frame) {
                None
            } else {
                Some(frame)
            };
        }
        match asked? {
            (frame, FrameAction::Sandwich) => {
                self.open_sandwich(frame);
                None
            }
            (frame, action) => Some((res.frames.get(frame).name.clone(), action)),
        }
    }
}
