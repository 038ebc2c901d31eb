//! How the plot writes time and values: the axes' grid steps and labels, times as
//! text ("12:01:00–12:05:00"), and the typed time range of *range…*.

use capture::{QueryTime, TimeRange};

/// "HH:MM:SS" (UTC) of a time in nanoseconds.
pub fn hms(nanos: i64) -> String {
    let text = capture::time::rfc3339(nanos);
    text.get(11..19).unwrap_or(&text).to_string()
}

/// A year of 365.25 days, in seconds: its multiples fall within days of a New Year's
/// midnight (UTC), on either side.
const YEAR: f64 = 31_557_600.0;

/// The month of the time axis: 30 days, in seconds.
const MONTH: f64 = 2_592_000.0;

/// Round steps of clock and calendar time, in seconds: the time axis's grid lines
/// fall on multiples of them (UTC), up to centuries (profiles' times reach from 1677
/// to 2262).
const TIME_STEPS: [f64; 31] = [
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    10800.0,
    21600.0,
    43200.0,
    86400.0,
    172_800.0,
    604_800.0,
    MONTH,
    YEAR / 4.0,
    YEAR,
    2.0 * YEAR,
    5.0 * YEAR,
    10.0 * YEAR,
    20.0 * YEAR,
    50.0 * YEAR,
    100.0 * YEAR,
    200.0 * YEAR,
    500.0 * YEAR,
];

/// The three grid steps of the time axis when its thinnest lines may be `base`
/// seconds apart: the smallest round time step at least that, and two larger ones,
/// each the next but one round step that is a multiple of the one before (so that
/// labelled lines never crowd one another: weeks and years do not divide each other),
/// or the one before again where none is.
pub fn time_grid_steps(base: f64) -> [f64; 3] {
    let last = TIME_STEPS.len() - 1;
    let first = TIME_STEPS.iter().position(|&s| s >= base).unwrap_or(last);
    let next = |i: usize| {
        let divides = |s: &f64| (s / TIME_STEPS[i]).fract() == 0.0;
        TIME_STEPS
            .iter()
            .skip(i + 2)
            .position(divides)
            .map_or(i, |k| i + 2 + k)
    };
    let second = next(first);
    let third = next(second);
    [TIME_STEPS[first], TIME_STEPS[second], TIME_STEPS[third]]
}

/// The three grid steps of the value axis when its thinnest lines may be `base` apart:
/// the smallest step of 1, 2 or 5 times a power of ten at least `base`, and two larger
/// ones, each a multiple of the one before (1, 5, 10; 2, 10, 20; 5, 10, 50), so that
/// the lines labelled never crowd one another (steps of 0.2 and 0.5 both labelled put
/// 0.4, 0.5 and 0.6 side by side). egui_plot's own grid steps by powers of ten, which
/// between 0 and 1 can leave only the 0 labelled.
pub fn value_grid_steps(base: f64) -> [f64; 3] {
    const MANTISSAS: [f64; 3] = [1.0, 2.0, 5.0];
    let base = if base.is_finite() && base > 0.0 {
        base
    } else {
        1.0
    };
    let power = base.log10().floor() as i32;
    let step = |k: i32| MANTISSAS[k.rem_euclid(3) as usize] * 10f64.powi(power + k.div_euclid(3));
    let first = (0..4)
        .find(|&k| step(k) >= base * (1.0 - 1e-9))
        .unwrap_or(3);
    let s = step(first);
    // 5 × 1 and 5 × 2 are 5 and 10; 2 × 5 is 10.
    let next = if first.rem_euclid(3) == 2 { 2.0 } else { 5.0 };
    [s, next * s, 10.0 * s]
}

/// The label of a value axis line at `value` of a grid step of `step`: as many
/// decimals as the step needs ("0.5", "0.05", "2"), in thousands, millions or billions
/// for steps of 10,000 or more ("30k", "1.5M").
pub fn value_label(value: f64, step: f64) -> String {
    // A snapshot's bytes read at a glance: "1.5M" rather than "1500000".
    let (scale, suffix) = match step * 10.0 {
        s if !(step >= 1e4 && s.is_finite()) => (1.0, ""),
        s if s >= 1e9 => (1e9, "G"),
        s if s >= 1e6 => (1e6, "M"),
        _ => (1e3, "k"),
    };
    let step = step / scale;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10() - 1e-9).ceil().max(0.0) as usize
    } else {
        0
    };
    let value = value / scale;
    // No "-0.0" for a line at zero reached from below.
    let value = if value.abs() < step * 1e-6 {
        0.0
    } else {
        value
    };
    if value == 0.0 {
        format!("{value:.decimals$}")
    } else {
        format!("{value:.decimals$}{suffix}")
    }
}

/// The label of a time axis line at `secs` (seconds since the epoch) of a grid step
/// of `step` seconds: "12:39:20" below a minute, "12:40" below a day, the date
/// ("11-30") at midnight and for steps of a day or more, with its year ("2026-11-30")
/// for steps of a month or more, the year alone ("2026") for steps of a year or more
/// (UTC).
pub fn time_label(secs: f64, step: f64) -> String {
    let nanos = (secs * 1e9).round() as i64;
    if step >= YEAR {
        // A year's line lies a little before or after New Year: named after the
        // nearest one.
        let half_year = (YEAR / 2.0 * 1e9) as i64;
        let text = capture::time::rfc3339(nanos.saturating_add(half_year));
        return text.get(..4).unwrap_or(&text).to_string();
    }
    let text = capture::time::rfc3339(nanos);
    let at_midnight = nanos.rem_euclid(86_400_000_000_000) == 0;
    let part = if step >= MONTH {
        text.get(..10)
    } else if step >= 86400.0 || at_midnight {
        text.get(5..10)
    } else if step >= 60.0 {
        text.get(11..16)
    } else {
        text.get(11..19)
    };
    part.unwrap_or(&text).to_string()
}

/// "2026-11-30" (UTC) of a time in nanoseconds.
fn date(nanos: i64) -> String {
    let text = capture::time::rfc3339(nanos);
    text.get(..10).unwrap_or(&text).to_string()
}

/// "2026-11-30 12:39:29" (UTC) of a time in nanoseconds.
pub fn date_hms(nanos: i64) -> String {
    format!("{} {}", date(nanos), hms(nanos))
}

/// "12:01:00–12:05:00" for a range within a day (UTC), "12:01:00" for a point; a
/// range over midnight names both dates ("2026-11-29 22:13:20–2026-11-30 22:13:20"),
/// or a day's merge would read as a second.
pub fn describe_time(time: QueryTime, step_nanos: i64) -> String {
    // A range's ends to the nearest second: the visible range merged reaches a
    // microsecond past the view on each side (`Timeline::visible_range`), and a view
    // from 07:50:00 would read 07:49:59.
    let time = match time {
        QueryTime::Merge(r) => QueryTime::Merge(TimeRange {
            start_nanos: nearest_second(r.start_nanos),
            end_nanos: nearest_second(r.end_nanos),
        }),
        single => single,
    };
    match time {
        QueryTime::Single(t) => hms(t),
        QueryTime::Merge(r) if r.end_nanos.saturating_sub(r.start_nanos) <= step_nanos => {
            hms(r.start_nanos)
        }
        QueryTime::Merge(r) if date(r.start_nanos) == date(r.end_nanos) => {
            format!("{}–{}", hms(r.start_nanos), hms(r.end_nanos))
        }
        QueryTime::Merge(r) => format!("{}–{}", date_hms(r.start_nanos), date_hms(r.end_nanos)),
    }
}

/// `nanos` rounded to the nearest whole second.
fn nearest_second(nanos: i64) -> i64 {
    const SEC: i64 = 1_000_000_000;
    nanos
        .saturating_add(SEC / 2)
        .div_euclid(SEC)
        .saturating_mul(SEC)
}

/// The fields of *range…*: a time range typed as `flint top --from/--to` take it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RangeFields {
    /// Start: RFC 3339, `now-1h`, or nanoseconds since the epoch.
    pub from: String,
    /// End, as the start.
    pub to: String,
    /// Why the last range typed was refused.
    pub error: Option<String>,
}

impl RangeFields {
    /// The fields filled with the view from `start` to `end` (seconds since the epoch),
    /// to the second.
    pub fn of_view(start: f64, end: f64) -> Self {
        let text = |secs: f64| capture::time::rfc3339((secs * 1e9) as i64);
        Self {
            from: text(start.floor()),
            to: text(end.ceil()),
            error: None,
        }
    }

    /// The range typed, in nanoseconds; `now_nanos` is what `now` means. An unreadable
    /// time names its field; an empty or backwards range is refused.
    pub fn parse(&self, now_nanos: i64) -> Result<TimeRange, String> {
        let time = |name: &str, text: &str| {
            capture::time::parse_time(text.trim(), now_nanos).map_err(|e| format!("{name}: {e}"))
        };
        let (start_nanos, end_nanos) = (time("from", &self.from)?, time("to", &self.to)?);
        if end_nanos <= start_nanos {
            return Err(format!(
                "to ({}) must be after from ({})",
                capture::time::rfc3339(end_nanos),
                capture::time::rfc3339(start_nanos)
            ));
        }
        Ok(TimeRange {
            start_nanos,
            end_nanos,
        })
    }
}
