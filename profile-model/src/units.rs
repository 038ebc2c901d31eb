//! Turning raw sample values into text: readable (for the window) and exactly as
//! `go tool pprof` prints them (for `flint top`).

use std::fmt::Write as _;

/// The family of a unit name as found in profiles.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    /// Nanoseconds per unit.
    Time(f64),
    /// Bytes per unit.
    Memory(f64),
    /// Anything else: printed as a plain number.
    Other,
}

fn family(unit: &str) -> Family {
    match unit.to_ascii_lowercase().as_str() {
        "ns" | "nanosecond" | "nanoseconds" => Family::Time(1.0),
        "us" | "µs" | "μs" | "microsecond" | "microseconds" => Family::Time(1e3),
        "ms" | "millisecond" | "milliseconds" => Family::Time(1e6),
        "s" | "sec" | "second" | "seconds" => Family::Time(1e9),
        "hour" | "hours" | "hr" | "hrs" => Family::Time(3600e9),
        "b" | "byte" | "bytes" => Family::Memory(1.0),
        "kb" | "kbyte" | "kilobyte" | "kilobytes" => Family::Memory(1024.0),
        "mb" | "mbyte" | "megabyte" | "megabytes" => Family::Memory(1024.0 * 1024.0),
        "gb" | "gbyte" | "gigabyte" | "gigabytes" => Family::Memory(1024.0 * 1024.0 * 1024.0),
        _ => Family::Other,
    }
}

/// How many nanoseconds one `unit` is, when it is a unit of time.
pub fn nanoseconds_per(unit: &str) -> Option<f64> {
    match family(unit) {
        Family::Time(ns) => Some(ns),
        _ => None,
    }
}

/// A value in its unit made readable: `1.23 s`, `12.5 ms`, `3.40 MiB`, `12,345`.
pub fn readable(value: i64, unit: &str) -> String {
    if value == 0 {
        return "0".to_string();
    }
    let scale = Scale::of(value, unit);
    let sign = if value < 0 { "-" } else { "" };
    match scale.suffix {
        "" => format!("{sign}{}", thousands(value.unsigned_abs())),
        "B" => format!("{sign}{} B", value.unsigned_abs()),
        suffix => format!("{sign}{} {suffix}", three_digits(scale.scaled(value).abs())),
    }
}

/// The unit a value, or a column of values, is shown in: `ms`, `s`, `MiB`, or none for
/// counts and units flint does not know.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// How many of the values' own unit one shown unit is.
    per: f64,
    /// The shown unit.
    suffix: &'static str,
}

impl Scale {
    /// The largest unit in which |`value`| (of `unit`) is at least 1: what [`readable`]
    /// shows it in, and what a column whose largest value is `value` is shown in.
    pub fn of(value: i64, unit: &str) -> Self {
        let v = (value as f64).abs();
        match family(unit) {
            Family::Time(factor) => {
                let ns = v * factor;
                let (ns_per, suffix) = [
                    (3600e9, "h"),
                    (60e9, "min"),
                    (1e9, "s"),
                    (1e6, "ms"),
                    (1e3, "µs"),
                ]
                .into_iter()
                .find(|(per, _)| ns >= *per)
                .unwrap_or((1.0, "ns"));
                Self {
                    per: ns_per / factor,
                    suffix,
                }
            }
            Family::Memory(factor) => {
                let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
                let mut per = 1.0;
                let mut i = 0;
                while v * factor / per >= 1024.0 && i + 1 < units.len() {
                    per *= 1024.0;
                    i += 1;
                }
                Self {
                    per: per / factor,
                    suffix: units[i],
                }
            }
            Family::Other => Self {
                per: 1.0,
                suffix: "",
            },
        }
    }

    /// `value` in this scale's unit.
    fn scaled(self, value: i64) -> f64 {
        value as f64 / self.per
    }

    /// `value` in this scale, with as many decimals as `largest` (the column's largest
    /// |value|) needs for three digits, so that a column's numbers line up: `49.2 s`,
    /// `0.4 s`, and `<0.1 s` for a value too small to show but not zero.
    pub fn format(self, value: i64, largest: i64) -> String {
        if value == 0 {
            return "0".to_string();
        }
        if self.suffix.is_empty() {
            let sign = if value < 0 { "-" } else { "" };
            return format!("{sign}{}", thousands(value.unsigned_abs()));
        }
        let top = self.scaled(largest).abs();
        let decimals = if top >= 100.0 {
            0
        } else if top >= 10.0 {
            1
        } else {
            2
        };
        let v = self.scaled(value);
        let text = format!("{v:.decimals$}");
        if text
            .trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            let sign = if v < 0.0 { "-" } else { "" };
            let smallest = format!("{:.decimals$}", 0.1_f64.powi(decimals as i32));
            return format!("<{sign}{smallest} {}", self.suffix);
        }
        format!("{text} {}", self.suffix)
    }
}

/// [`readable`], with the unit named where the number alone does not tell it:
/// `12,345 count`, `3.40 MiB`, `1.23 s`.
pub fn readable_with_unit(value: i64, unit: &str) -> String {
    let text = readable(value, unit);
    match family(unit) {
        Family::Other if !unit.is_empty() => format!("{text} {unit}"),
        _ => text,
    }
}

/// A value per second made readable, as the window's plot and `flint series` give it:
/// time per second as CPU cores (`1.079 cores`), bytes per second scaled
/// (`3.40 MiB/s`), anything else with three decimals (`107.859 count/s`).
pub fn readable_per_second(value: f64, unit: &str) -> String {
    match family(unit) {
        Family::Time(factor) => format!("{:.3} cores", value * factor / 1e9),
        Family::Memory(factor) if (value * factor).abs() >= 1.0 => {
            format!("{}/s", readable((value * factor).round() as i64, "bytes"))
        }
        Family::Memory(factor) => format!("{:.3} B/s", value * factor),
        Family::Other => format!("{value:.3} {unit}/s"),
    }
}

/// Three significant digits: `1.23`, `12.3`, `123`.
fn three_digits(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A percentage for the window: `12.3%`, `0.04%`.
pub fn percent(value: i64, total: i64) -> String {
    if total == 0 {
        return "–".to_string();
    }
    let p = value as f64 * 100.0 / total as f64;
    if p.abs() >= 10.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

const TIME_UNITS: [(&str, f64); 5] = [
    ("ns", 1.0),
    ("us", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("hrs", 3600e9),
];
const MEMORY_UNITS: [(&str, f64); 6] = [
    ("B", 1.0),
    ("kB", 1024.0),
    ("MB", 1048576.0),
    ("GB", 1073741824.0),
    ("TB", 1099511627776.0),
    ("PB", 1125899906842624.0),
];

/// The unit pprof's text reports print every value in (its `-unit=minimum`): the unit
/// of the smallest non-zero value, or of 100× that when the total needs a larger one.
/// `min_value` is the smallest non-zero |flat| (or |cum| when flat is 0) of the rows.
pub fn pprof_output_unit(min_value: i64, total: i64, unit: &str) -> String {
    let min_value = if min_value == 0 { total } else { min_value };
    let min_unit = pprof_auto_unit(min_value, unit);
    let max_unit = pprof_auto_unit(total, unit);
    let chosen = if min_unit != max_unit && min_value.saturating_mul(100) < total {
        pprof_auto_unit(min_value.saturating_mul(100), unit)
    } else {
        min_unit
    };
    chosen.map_or_else(|| unit.to_string(), str::to_string)
}

/// The largest unit in which |value| is at least 1 (`None` for counts and unknown units).
fn pprof_auto_unit(value: i64, unit: &str) -> Option<&'static str> {
    let v = (value as f64).abs();
    let (base, units, default) = match family(unit) {
        Family::Time(f) => (v * f, &TIME_UNITS[..], "s"),
        Family::Memory(f) => (v * f, &MEMORY_UNITS[..], "B"),
        Family::Other => return None,
    };
    Some(
        units
            .iter()
            .rev()
            .find(|(_, factor)| base / factor >= 1.0)
            .map_or(default, |(name, _)| name),
    )
}

/// How pprof's text reports print the values of `unit` in one output unit (see
/// [`pprof_output_unit`]), decided once for a report's many values: two decimals
/// with `.00` trimmed, `0` for zero, no suffix for counts.
#[derive(Debug, Clone)]
pub struct PprofValues {
    /// A value is `v * from / to`, as pprof scales it; `None` leaves it as it is.
    factors: Option<(f64, f64)>,
    suffix: String,
}

impl PprofValues {
    /// Values of `unit` printed in `output_unit`.
    pub fn new(unit: &str, output_unit: &str) -> Self {
        let target =
            (TIME_UNITS.iter().chain(MEMORY_UNITS.iter())).find(|(name, _)| *name == output_unit);
        let (factors, suffix) = match (family(unit), target) {
            (Family::Time(f) | Family::Memory(f), Some((name, factor))) => {
                (Some((f, *factor)), *name)
            }
            _ => match output_unit {
                "count" | "sample" | "samples" | "unit" | "" => (None, ""),
                other => (None, other),
            },
        };
        Self {
            factors,
            suffix: suffix.to_string(),
        }
    }

    /// Appends `value` to `out` as pprof prints it.
    pub fn push(&self, out: &mut String, value: i64) {
        let v = value as f64;
        let scaled = self.factors.map_or(v, |(from, to)| v * from / to);
        let at = out.len();
        push_two_decimals(out, scaled);
        if out[at..].ends_with(".00") {
            out.truncate(out.len() - 3);
        }
        if matches!(&out[at..], "0" | "-0") {
            out.truncate(at);
            out.push('0');
        } else {
            out.push_str(&self.suffix);
        }
    }

    /// `value` as pprof prints it.
    pub fn format(&self, value: i64) -> String {
        let mut out = String::new();
        self.push(&mut out, value);
        out
    }
}

/// A value as pprof prints it in `-top`, converted from `unit` to `output_unit` (see
/// [`PprofValues`]).
pub fn pprof_value(value: i64, unit: &str, output_unit: &str) -> String {
    PprofValues::new(unit, output_unit).format(value)
}

/// A value as pprof prints it in its own unit (its `-unit=minimum` applied to that
/// value alone, as `-list` prints values): `910ms`, `1.54s`, `12kB`; no suffix for
/// counts and unknown units.
pub fn pprof_value_scaled(value: i64, unit: &str) -> String {
    pprof_value(value, unit, pprof_auto_unit(value, unit).unwrap_or(""))
}

/// Appends `n` in decimal, at least `width` digits (zeros in front).
fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut i = digits.len();
    while n > 0 || digits.len() - i < width.max(1) {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend(digits[i..].iter().map(|&d| char::from(d)));
}

/// Appends `v` with two decimals, exactly as `format!("{v:.2}")`, most often without
/// formatting a float ([`rounded_digits`]).
fn push_two_decimals(out: &mut String, v: f64) {
    match rounded_digits(v, 2) {
        Some(n) => {
            if v.is_sign_negative() {
                out.push('-');
            }
            push_digits(out, n / 100, 1);
            out.push('.');
            push_digits(out, n % 100, 2);
        }
        None => {
            let _ = write!(out, "{v:.2}");
        }
    }
}

/// |v| × 10^`decimals` rounded to an integer as formatting `v` with `decimals`
/// decimals rounds it (exactly), in one multiplication: most of a report's numbers.
/// `None` where that product is too near a tie for its rounding error to be ruled
/// out, or too large, which the caller formats the slow way.
fn rounded_digits(v: f64, decimals: i32) -> Option<u64> {
    if !(0..=22).contains(&decimals) {
        return None;
    }
    // 10^0..10^22 are exact in an f64, and so is the product up to one rounding: a
    // relative error of 2^-53.
    let scaled = v.abs() * 10f64.powi(decimals);
    // Also refuses NaN and infinities.
    if !scaled.is_finite() || scaled >= 1e15 {
        return None;
    }
    let whole = scaled.floor();
    let fraction = scaled - whole;
    if (fraction - 0.5).abs() <= scaled * 1e-15 + 1e-9 {
        return None;
    }
    Some(whole as u64 + u64::from(fraction > 0.5))
}

/// A percentage as pprof prints it: `  100%`, `12.34%`, ` 0.5%` (Go's `%5.2g` below 1%).
pub fn pprof_percent(value: i64, total: i64) -> String {
    let mut out = String::new();
    push_pprof_percent(&mut out, value, total);
    out
}

/// Appends [`pprof_percent`] to `out`.
pub fn push_pprof_percent(out: &mut String, value: i64, total: i64) {
    let ratio = if total == 0 {
        0.0
    } else {
        (value as f64 / total as f64).abs() * 100.0
    };
    if (99.95..=100.05).contains(&ratio) {
        out.push_str("  100%");
        return;
    }
    let at = out.len();
    if ratio >= 1.0 {
        push_two_decimals(out, ratio);
    } else if !push_go_g2_fast(out, ratio) {
        out.push_str(&go_g2_formatted(ratio));
    }
    // Right-aligned in 5 characters, as `%5` (the text is ASCII).
    let width = out.len() - at;
    if width < 5 {
        out.insert_str(at, &"     "[width..]);
    }
    out.push('%');
}

/// Appends Go's `%.2g` of a `v` in (0, 1) (two significant digits, trailing zeros
/// dropped, exponent form for exponents below -4) from its two rounded digits,
/// without formatting floats; appends nothing and says `false` where
/// [`go_g2_digits`] cannot decide.
fn push_go_g2_fast(out: &mut String, v: f64) -> bool {
    let Some((digits, exp)) = go_g2_digits(v) else {
        return false;
    };
    let (first, second) = (digits / 10, digits % 10);
    // `first`, then `.second` unless it is 0.
    let push_mantissa = |out: &mut String| {
        push_digits(out, first, 1);
        if second != 0 {
            out.push('.');
            push_digits(out, second, 1);
        }
    };
    if exp < -4 {
        push_mantissa(out);
        out.push_str("e-");
        push_digits(out, u64::from(exp.unsigned_abs()), 2);
    } else if exp >= 0 {
        // Only 1 (from 0.995 and up) is reached below 1.
        push_mantissa(out);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
        push_digits(out, if second == 0 { first } else { digits }, 1);
    }
    true
}

/// The two significant digits of a `v` in (0, 1), rounded (10..=99), and the exponent
/// of the first; `None` where [`rounded_digits`] cannot decide, or for 0.
fn go_g2_digits(v: f64) -> Option<(u64, i32)> {
    if v <= 0.0 || v >= 1.0 || v.is_nan() {
        return None;
    }
    // The exponent of the leading digit, corrected where log10 is off by one.
    let mut exp = v.log10().floor() as i32;
    let mut digits = rounded_digits(v, 1 - exp)?;
    if digits < 10 {
        exp -= 1;
        digits = rounded_digits(v, 1 - exp)?;
    }
    if digits >= 100 {
        // Rounded up to the next power of ten (0.0999 → 0.1), or log10 was low.
        exp += 1;
        digits = rounded_digits(v, 1 - exp)?;
    }
    (10..100).contains(&digits).then_some((digits, exp))
}

/// Go's `%.2g` of `v` ([`push_go_g2_fast`]) by formatting `v` and reading it back.
fn go_g2_formatted(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let exp = v.abs().log10().floor() as i32;
    // Round to two significant digits first: the exponent may change (0.0999 → 0.1).
    let rounded: f64 = format!("{v:.1e}").parse().unwrap_or(v);
    let exp = if rounded.abs() >= 10f64.powi(exp + 1) {
        exp + 1
    } else {
        exp
    };
    if !(-4..2).contains(&exp) {
        let s = format!("{rounded:.1e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", e.abs())
    } else {
        let decimals = (1 - exp).max(0) as usize;
        let s = format!("{rounded:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_column_shares_the_unit_of_its_largest_value() {
        let largest = 63_000_000_000; // 1.05 min
        let scale = Scale::of(largest, "nanoseconds");
        assert_eq!(scale.format(largest, largest), "1.05 min");
        assert_eq!(scale.format(49_200_000_000, largest), "0.82 min");
        assert_eq!(scale.format(-49_200_000_000, largest), "-0.82 min");
        assert_eq!(scale.format(12_000_000, largest), "<0.01 min");
        assert_eq!(scale.format(0, largest), "0");
        let bytes = Scale::of(5 << 30, "bytes");
        assert_eq!(bytes.format(512 << 20, 5 << 30), "0.50 GiB");
        let counts = Scale::of(12_345, "count");
        assert_eq!(counts.format(12_345, 12_345), "12,345");
        assert_eq!(readable(63_000_000_000, "nanoseconds"), "1.05 min");
        assert_eq!(readable(1000, "bytes"), "1000 B");
        assert_eq!(readable(3 << 20, "bytes"), "3.00 MiB");
    }

    use super::*;

    #[test]
    fn pprof_values_use_one_unit_per_report() {
        // 10ms smallest, 4.28s total: pprof prints seconds.
        let unit = pprof_output_unit(10_000_000, 4_280_000_000, "nanoseconds");
        assert_eq!(unit, "s");
        assert_eq!(pprof_value(910_000_000, "nanoseconds", &unit), "0.91s");
        assert_eq!(pprof_value(10_000_000, "nanoseconds", &unit), "0.01s");
        assert_eq!(pprof_value(0, "nanoseconds", &unit), "0");
        assert_eq!(pprof_value(-250_000_000, "nanoseconds", &unit), "-0.25s");
        // Same unit for smallest and total: that unit.
        assert_eq!(
            pprof_output_unit(20_000_000, 90_000_000, "nanoseconds"),
            "ms"
        );
        let kb = pprof_output_unit(512, 574_551_203, "bytes");
        assert_eq!(kb, "kB");
        assert_eq!(pprof_value(123_565_025, "bytes", &kb), "120668.97kB");
        assert_eq!(pprof_value(51_757_056, "bytes", &kb), "50544kB");
        let count = pprof_output_unit(1, 5000, "count");
        assert_eq!(count, "count");
        assert_eq!(pprof_value(123, "count", &count), "123");
    }

    #[test]
    fn pprof_values_of_a_listing_each_take_their_own_unit() {
        assert_eq!(pprof_value_scaled(910_000_000, "nanoseconds"), "910ms");
        assert_eq!(pprof_value_scaled(1_540_000_000, "nanoseconds"), "1.54s");
        assert_eq!(pprof_value_scaled(-10_000_000, "nanoseconds"), "-10ms");
        assert_eq!(pprof_value_scaled(0, "nanoseconds"), "0");
        assert_eq!(pprof_value_scaled(2048, "bytes"), "2kB");
        // Counts and unknown units have no suffix, as pprof's -unit=minimum.
        assert_eq!(pprof_value_scaled(1234, "count"), "1234");
        assert_eq!(pprof_value_scaled(7, "widgets"), "7");
    }

    #[test]
    fn pprof_percentages_follow_go_formatting() {
        assert_eq!(pprof_percent(1, 1), "  100%");
        assert_eq!(pprof_percent(1234, 10000), "12.34%");
        assert_eq!(pprof_percent(5, 1000), "  0.5%");
        assert_eq!(pprof_percent(123, 1_000_000), "0.012%");
        assert_eq!(pprof_percent(0, 10), "    0%");
        assert_eq!(pprof_percent(1, 10_000_000), "1e-05%");
        assert_eq!(pprof_percent(999, 100_000), "    1%");
    }

    /// A deterministic stream of f64s spread over many magnitudes, with exact ties and
    /// values next to them.
    fn test_values() -> impl Iterator<Item = f64> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        (0..400_000).map(move |i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            match i % 4 {
                0 => unit,
                1 => unit * 10f64.powi((state % 40) as i32 - 20),
                // Ties: a multiple of 0.005, and its neighbours.
                2 => (state % 200_000) as f64 * 0.005,
                _ => f64::from_bits(((state % 200_000) as f64 * 0.005).to_bits() + 1),
            }
        })
    }

    #[test]
    fn fast_percentages_equal_formatting_the_float() {
        for v in test_values().map(|v| v * 100.0) {
            if v > 0.0 && v < 1.0 {
                let mut fast = String::new();
                if push_go_g2_fast(&mut fast, v) {
                    assert_eq!(fast, go_g2_formatted(v), "{v:e}");
                }
            } else {
                assert_eq!(two_decimals(v), format!("{v:.2}"), "{v:e}");
            }
        }
    }

    /// `v` as [`push_two_decimals`] appends it.
    fn two_decimals(v: f64) -> String {
        let mut out = String::new();
        push_two_decimals(&mut out, v);
        out
    }

    #[test]
    fn fast_values_equal_formatting_the_float() {
        let mut decided = 0;
        for v in test_values().flat_map(|v| [v * 1e6, -v * 1e3, v]) {
            decided += usize::from(rounded_digits(v, 2).is_some());
            assert_eq!(two_decimals(v), format!("{v:.2}"), "{v:e}");
        }
        // Most are decided fast; only those next to a tie go the slow way.
        assert!(decided > 1_000_000, "{decided} decided fast");
    }

    #[test]
    fn readable_units() {
        assert_eq!(readable(1_230_000_000, "nanoseconds"), "1.23 s");
        assert_eq!(readable(12_500_000, "nanoseconds"), "12.5 ms");
        assert_eq!(readable(3 * 1024 * 1024 + 400 * 1024, "bytes"), "3.39 MiB");
        assert_eq!(readable(12345, "count"), "12,345");
        assert_eq!(readable(512, "bytes"), "512 B");
        assert_eq!(readable(0, "nanoseconds"), "0");
        assert_eq!(readable(-2_000_000, "nanoseconds"), "-2.00 ms");
        assert_eq!(readable_with_unit(12345, "count"), "12,345 count");
        assert_eq!(readable_with_unit(2_683_469, "bytes"), "2.56 MiB");
        assert_eq!(readable_with_unit(7, ""), "7");
    }

    #[test]
    fn readable_rates() {
        assert_eq!(readable_per_second(1.079e9, "nanoseconds"), "1.079 cores");
        assert_eq!(readable_per_second(0.5, "seconds"), "0.500 cores");
        assert_eq!(
            readable_per_second(3.0 * 1024.0 * 1024.0 + 400.0 * 1024.0, "bytes"),
            "3.39 MiB/s"
        );
        assert_eq!(readable_per_second(2.0, "kilobytes"), "2.00 KiB/s");
        assert_eq!(readable_per_second(0.25, "bytes"), "0.250 B/s");
        assert_eq!(readable_per_second(107.8594, "count"), "107.859 count/s");
    }
}
