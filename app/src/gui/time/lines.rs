//! Series as drawn: in display units, their gaps found, and reduced to at most one
//! point per pixel column of the plot (pure functions, benchmarked).

use capture::{ProfileType, Series};
use egui::Color32;
use egui_plot::PlotPoint;
use profile_model::units;

/// Series drawn unless "show all" is ticked.
pub const MAX_SERIES: usize = 20;

/// One series ready to draw: its name, total and points (seconds, value per second).
#[derive(Debug, Clone)]
pub struct PlotSeries {
    /// "comm=foo", or "total".
    pub name: String,
    /// Its labels (those summed by).
    pub labels: Vec<(String, String)>,
    /// Sum of its values (for ordering).
    pub total: i64,
    /// (time in seconds since the epoch, value per second in display units).
    pub points: Vec<[f64; 2]>,
    /// Where its line breaks: the index of each point that follows a gap in the data
    /// ([`crate::gui::time::lines::gap_starts`]).
    pub breaks: Vec<usize>,
    /// The points averaged in runs of [`crate::gui::time::lines::COARSE`]
    /// ([`crate::gui::time::lines::coarse_points`]): reduced instead of `points` when a view holds
    /// many points per pixel column.
    pub coarse: Vec<[f64; 2]>,
    /// Where the line of `coarse` breaks: the index of each run that follows a gap.
    pub coarse_breaks: Vec<usize>,
}

impl PlotSeries {
    /// A series of `points` (sorted by time), its gaps found.
    pub fn new(
        name: String,
        labels: Vec<(String, String)>,
        total: i64,
        points: Vec<[f64; 2]>,
    ) -> Self {
        let breaks = crate::gui::time::lines::gap_starts(&points);
        let (coarse, coarse_breaks) = crate::gui::time::lines::coarse_points(&points, &breaks);
        Self {
            breaks,
            coarse,
            coarse_breaks,
            name,
            labels,
            total,
            points,
        }
    }
}

/// Points reduced to at most one per pixel column of a plot `width` pixels wide showing
/// `x0..x1` (the mean of each column; the nearest point outside on each side is kept so
/// that lines reach the edges).
pub fn bucket_points(points: &[[f64; 2]], x0: f64, x1: f64, width: f32) -> Vec<PlotPoint> {
    let columns = width.max(1.0) as usize;
    let point = |p: &[f64; 2]| PlotPoint::new(p[0], p[1]);
    if points.len() <= columns || x1 <= x0 {
        return points.iter().map(point).collect();
    }
    let first = points.partition_point(|p| p[0] < x0);
    let last = points.partition_point(|p| p[0] <= x1);
    let mut out = Vec::with_capacity(columns + 2);
    if first > 0 {
        out.push(point(&points[first - 1]));
    }
    let step = (x1 - x0) / columns as f64;
    let mut rest = &points[first..last];
    let mut column = 0;
    while let Some(next) = rest.first() {
        // The next point's column, then every point before the following column: one
        // comparison per point, and two additions.
        let c = (((next[0] - x0) / step) as usize).clamp(column, columns - 1);
        let end = if c + 1 == columns {
            rest.len()
        } else {
            let boundary = x0 + (c + 1) as f64 * step;
            rest.iter()
                .position(|p| p[0] >= boundary)
                .unwrap_or(rest.len())
                .max(1)
        };
        let (bucket, tail) = rest.split_at(end);
        out.push(point(&mean(bucket)));
        rest = tail;
        column = c + 1;
    }
    if last < points.len() {
        out.push(point(&points[last]));
    }
    out
}

/// The mean of `points` (at least one).
fn mean(points: &[[f64; 2]]) -> [f64; 2] {
    let n = points.len() as f64;
    let (sx, sy) = (points.iter()).fold((0.0, 0.0), |(sx, sy), p| (sx + p[0], sy + p[1]));
    [sx / n, sy / n]
}

/// A line is broken where the time from one point to the next is more than this many
/// times the series' median step: no profiles were there, and a line across would show
/// values never measured (a process stopped for an hour, a folder of two days).
const GAP_STEPS: f64 = 3.0;

/// Where the line of `points` (sorted by time) breaks: the index of each point that
/// follows a gap of more than [`GAP_STEPS`] times the median step between points.
/// None for fewer than three points, whose steps tell no usual one.
pub fn gap_starts(points: &[[f64; 2]]) -> Vec<usize> {
    if points.len() < 3 {
        return Vec::new();
    }
    let step = |w: &[[f64; 2]]| w[1][0] - w[0][0];
    let mut steps: Vec<f64> = points.windows(2).map(step).collect();
    let middle = steps.len() / 2;
    let (_, median, _) = steps.select_nth_unstable_by(middle, f64::total_cmp);
    let limit = *median * GAP_STEPS;
    if limit <= 0.0 {
        return Vec::new();
    }
    (points.windows(2).enumerate())
        .filter(|(_, w)| step(w) > limit)
        .map(|(i, _)| i + 1)
        .collect()
}

/// A series as drawn: its points, reduced to the plot's pixel columns, and where its
/// line breaks.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnLine {
    /// The points, in time order.
    pub points: Vec<PlotPoint>,
    /// The index in `points` of each segment's first point but the first segment's.
    pub breaks: Vec<usize>,
}

impl DrawnLine {
    /// The line's segments, each drawn on its own.
    pub fn segments(&self) -> impl Iterator<Item = &[PlotPoint]> {
        segments(&self.points, &self.breaks)
    }
}

/// `items` cut before each of `breaks` (sorted indices into it).
fn segments<'a, T>(items: &'a [T], breaks: &'a [usize]) -> impl Iterator<Item = &'a [T]> {
    let ends = breaks.iter().copied().chain([items.len()]);
    let starts = std::iter::once(0).chain(breaks.iter().copied());
    starts.zip(ends).map(|(a, b)| &items[a..b])
}

/// Points of a series that its coarse copy averages into one ([`coarse_points`]).
pub const COARSE: usize = 4;

/// `points` averaged in runs of [`COARSE`] consecutive points, each segment between
/// `breaks` on its own (a run never spans a gap), with the breaks of the result: what a
/// view with many points per pixel column reduces instead of every point.
pub fn coarse_points(points: &[[f64; 2]], breaks: &[usize]) -> (Vec<[f64; 2]>, Vec<usize>) {
    map_segments(points, breaks, |segment| {
        segment.chunks(COARSE).map(mean).collect()
    })
}

/// Each segment of `items` (cut before each of `breaks`) made into items of its own by
/// `each`, one after another, and the breaks between the made segments (an empty one
/// makes none).
fn map_segments<T, U>(
    items: &[T],
    breaks: &[usize],
    mut each: impl FnMut(&[T]) -> Vec<U>,
) -> (Vec<U>, Vec<usize>) {
    let mut out = Vec::new();
    let mut out_breaks = Vec::new();
    for segment in segments(items, breaks) {
        let made = each(segment);
        if !out.is_empty() && !made.is_empty() {
            out_breaks.push(out.len());
        }
        out.extend(made);
    }
    (out, out_breaks)
}

/// The points of `series` as drawn on a plot `width` points wide showing `x0..x1`: one
/// point per pixel column for up to [`MAX_SERIES`] series, one per two columns beyond
/// (*show all*), where more lines would only cost time without showing more; each
/// segment between gaps reduced on its own, so that no column joins two. A series with
/// at least twice [`COARSE`] points in view per column is reduced from its coarse copy:
/// a quarter of the memory read (100 series of a day's 8,640 points are 13.8 MB, and
/// reading them all pushed the drawing's own memory out of the caches), and each
/// column still the mean of several runs.
pub fn drawn_points(series: &[PlotSeries], x0: f64, x1: f64, width: f32) -> Vec<DrawnLine> {
    let columns = if series.len() > MAX_SERIES {
        width / 2.0
    } else {
        width
    };
    series
        .iter()
        .map(|s| {
            let in_view =
                s.points.partition_point(|p| p[0] <= x1) - s.points.partition_point(|p| p[0] < x0);
            let (points, breaks) = if in_view as f32 >= 2.0 * COARSE as f32 * columns {
                (&s.coarse, &s.coarse_breaks)
            } else {
                (&s.points, &s.breaks)
            };
            let (points, breaks) =
                map_segments(points, breaks, |raw| bucket_points(raw, x0, x1, columns));
            DrawnLine { points, breaks }
        })
        .collect()
}

/// What the plot's values are, by profile type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotScale {
    /// CPU nanoseconds per second of profiled time: CPU cores.
    Cores,
    /// A delta type's value per second of profiled time (samples/s, bytes/s).
    PerSecond,
    /// A snapshot's value as it is (bytes in use): per second means nothing for it.
    Value,
}

impl PlotScale {
    /// The scale for `series` of profiles of type `t`: a rate only for a delta type
    /// whose source gives rates ([`capture::Point::value_per_second`]); else values as
    /// they are (a Go heap profile's allocations have no duration: they count from the
    /// program's start; a lone profile of 1 ns of 10 ms samples measured no time).
    pub fn of(t: &ProfileType, series: &[Series]) -> Self {
        // No points (nothing matches): the type's own scale, for the axis' unit.
        let mut points = series.iter().flat_map(|s| &s.points).peekable();
        let timed = points.peek().is_none() || points.any(|p| p.value_per_second.is_some());
        match (t.delta, t.range_unit().1) {
            (true, _) if !timed => Self::Value,
            (false, _) => Self::Value,
            (true, "nanoseconds") => Self::Cores,
            (true, _) => Self::PerSecond,
        }
    }

    /// The y axis' unit for values in `unit`: "CPU cores", "<unit>/s" or "<unit>".
    pub fn unit(self, unit: &str) -> String {
        match self {
            Self::Cores => "CPU cores".to_string(),
            Self::PerSecond => format!("{unit}/s"),
            Self::Value => unit.to_string(),
        }
    }

    /// A value drawn in this scale, as the hover tells it, for values in `unit`:
    /// `0.875 CPU cores`, `107.859 count/s`, `2.56 MiB`.
    pub fn hover_text(self, y: f64, unit: &str) -> String {
        match self {
            Self::Cores => format!("{y:.3} CPU cores"),
            Self::PerSecond => units::readable_per_second(y, unit),
            Self::Value => units::readable_with_unit(y.round() as i64, unit),
        }
    }

    /// The value drawn for point `p`; none for a point without a rate on a rate's
    /// scale. Such a point (a profile shorter than its sampling period among timed
    /// ones) is left out, not drawn as its value: the axis is per second, and Parca's
    /// plot, which draws rates for delta types, has no rate to draw for it either; its
    /// profile is still merged by a selection over its time.
    pub fn y(self, p: &capture::Point) -> Option<f64> {
        match self {
            Self::Cores => p.value_per_second.map(|r| r * 1e-9),
            Self::PerSecond => p.value_per_second,
            Self::Value => Some(p.value as f64),
        }
    }
}

/// Series as drawn: named, in display units (`scale`), largest first.
pub fn plot_series(series: Vec<Series>, scale: PlotScale) -> Vec<PlotSeries> {
    let mut out: Vec<PlotSeries> = series
        .into_iter()
        .map(|s| {
            let name = if s.labels.is_empty() {
                "total".to_string()
            } else {
                s.labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            PlotSeries::new(
                name,
                s.labels.into_iter().collect(),
                s.points.iter().fold(0, |sum, p| sum.wrapping_add(p.value)),
                s.points
                    .iter()
                    .filter_map(|p| Some([p.time_nanos as f64 / 1e9, scale.y(p)?]))
                    .collect(),
            )
        })
        .collect();
    out.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
    out
}

/// The `i`th color of the series' palette: egui_plot's own sequence (hues a golden
/// ratio apart), given explicitly so that a series' line and markers share it; each
/// series keeps its place in it ([`crate::gui::time::timeline::Timeline::color_of`]).
pub fn series_color(i: usize) -> Color32 {
    let hue = i as f32 * (std::f32::consts::GOLDEN_RATIO - 1.0);
    egui::ecolor::Hsva::new(hue, 0.85, 0.5, 1.0).into()
}
