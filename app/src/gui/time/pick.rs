//! What a pointer on the plot points at: the range a drag selects, the bucket a click
//! selects, and the one rule that picks a line and its point for both the tooltip and
//! the click.

use capture::TimeRange;

use crate::gui::time::lines::{DrawnLine, PlotSeries};

/// The range a drag from `x0` to `x1` (seconds since the epoch, either order) selects.
pub fn drag_to_range(x0: f64, x1: f64) -> TimeRange {
    let (a, b) = if x0 <= x1 { (x0, x1) } else { (x1, x0) };
    let start = (a * 1e9).round() as i64;
    let end = (b * 1e9).round() as i64;
    TimeRange {
        start_nanos: start,
        end_nanos: end.max(start + 1),
    }
}

/// The bucket a click at `x` seconds selects: that of the point of `series` drawn
/// nearest to it, when one lies within `max_px` pixels (`px_per_second` along x), so
/// that a click beside a point (drawn at its bucket's start) shows that point's
/// profiles; else the bucket holding `x`.
pub fn snap_click(
    series: &[&PlotSeries],
    x: f64,
    px_per_second: f64,
    max_px: f64,
    step_nanos: i64,
) -> TimeRange {
    // Each series' points on either side of `x`, the nearest of all of them.
    let nearest = series
        .iter()
        .flat_map(|s| {
            let after = s.points.partition_point(|p| p[0] < x);
            let before = after.checked_sub(1).and_then(|i| s.points.get(i));
            [before, s.points.get(after)]
        })
        .flatten()
        .map(|p| p[0])
        .min_by(|a, b| (a - x).abs().total_cmp(&(b - x).abs()));
    match nearest {
        Some(p) if (p - x).abs() * px_per_second <= max_px => click_to_range(p, step_nanos),
        _ => click_to_range(x, step_nanos),
    }
}

/// What the pointer points at on the plot: the one rule of both its tooltip and its
/// click ([`pick_point`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotPick {
    /// The series whose drawn line is under the pointer (its index among those shown)
    /// and that line's drawn point picked; `None` off every line.
    pub on_line: Option<(usize, egui_plot::PlotPoint)>,
    /// The bucket a click selects.
    pub bucket: TimeRange,
}

/// What a pointer at `pos` points at on a plot drawn with `transform`, for its tooltip
/// and its click alike. On a line (the one of the `visible` series of `lines`, as
/// drawn, nearest the pointer, within `line_px` pixels): that series, its drawn point
/// nearest the pointer (the nearer end of the piece of line under it) and that point's
/// bucket ([`snap_click`] on the series' own points, which finds the point itself
/// where the line is drawn point for point). Off every line: no series, and the bucket
/// [`snap_click`] finds among every visible series' points within `snap_px` pixels.
pub fn pick_point(
    lines: &[DrawnLine],
    series: &[PlotSeries],
    visible: &[bool],
    transform: &egui_plot::PlotTransform,
    pos: egui::Pos2,
    [line_px, snap_px]: [f64; 2],
    step_nanos: i64,
) -> PlotPick {
    let screen = |p: &egui_plot::PlotPoint| transform.position_from_point(p);
    let mut best: Option<(f32, usize, egui_plot::PlotPoint)> = None;
    let shown = lines.iter().zip(visible).enumerate();
    for (i, (line, _)) in shown.filter(|(_, (_, on))| **on) {
        for segment in line.segments() {
            // A lone point is a piece of line of its own.
            let pieces = segment.windows(2).map(|w| (w[0], w[1]));
            let lone = (segment.len() == 1).then(|| (segment[0], segment[0]));
            for (a, b) in pieces.chain(lone) {
                let (sa, sb) = (screen(&a), screen(&b));
                let d = distance_to_segment(pos, sa, sb);
                let nearer = if pos.distance(sa) <= pos.distance(sb) {
                    a
                } else {
                    b
                };
                if best.is_none_or(|(bd, _, _)| d < bd) {
                    best = Some((d, i, nearer));
                }
            }
        }
    }
    let px_per_second = transform.dpos_dvalue()[0].abs();
    match best.filter(|&(d, _, _)| f64::from(d) <= line_px) {
        Some((_, i, point)) => {
            let of: Vec<&PlotSeries> = series.get(i).into_iter().collect();
            PlotPick {
                on_line: Some((i, point)),
                bucket: snap_click(&of, point.x, px_per_second, snap_px, step_nanos),
            }
        }
        None => {
            let x = transform.value_from_position(pos).x;
            let of: Vec<&PlotSeries> = series
                .iter()
                .zip(visible)
                .filter_map(|(s, on)| on.then_some(s))
                .collect();
            PlotPick {
                on_line: None,
                bucket: snap_click(&of, x, px_per_second, snap_px, step_nanos),
            }
        }
    }
}

/// The distance from `p` to the segment from `a` to `b` (screen points).
fn distance_to_segment(p: egui::Pos2, a: egui::Pos2, b: egui::Pos2) -> f32 {
    let ab = b - a;
    let len_sq = ab.length_sq();
    let t = if len_sq > 0.0 {
        ((p - a).dot(ab) / len_sq).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + ab * t)
}

/// The step (bucket) holding `x` seconds.
pub fn click_to_range(x: f64, step_nanos: i64) -> TimeRange {
    let t = (x * 1e9).round() as i64;
    let start = t.saturating_sub(t.rem_euclid(step_nanos.max(1)));
    TimeRange {
        start_nanos: start,
        end_nanos: start.saturating_add(step_nanos.max(1)),
    }
}
