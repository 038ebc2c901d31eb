//! Times as people type and read them: RFC 3339 in UTC, relative times such as
//! `now-1h`, and durations such as `7d`.

/// `2026-11-30T12:39:29Z` (with `.123456789` when there are fractions of a second).
pub fn rfc3339(nanos: i64) -> String {
    let secs = nanos.div_euclid(1_000_000_000);
    let frac = nanos.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    if frac == 0 {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    } else {
        let f = format!("{frac:09}");
        format!(
            "{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{}Z",
            f.trim_end_matches('0')
        )
    }
}

/// A time or a duration that could not be parsed; the message quotes it as typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// Not a duration such as `90s` or `1h30m`.
    #[error("invalid duration {0:?} (expected e.g. 90s, 15m, 1h30m, 7d)")]
    Duration(String),
    /// `now` followed by something other than a sign and a duration.
    #[error("invalid time {0:?} (expected e.g. now-1h)")]
    Relative(String),
    /// `now-…` with a duration that could not be parsed.
    #[error("invalid time {text:?}: {source}")]
    Offset {
        /// The time as typed.
        text: String,
        /// Why its duration could not be parsed.
        source: Box<TimeError>,
    },
    /// Nanoseconds past what an `i64` holds.
    #[error("invalid time {0:?} (out of range)")]
    OutOfRange(String),
    /// Neither `now`, nanoseconds nor an RFC 3339 time.
    #[error("invalid time {0:?} (expected now, now-1h, 2026-11-30T12:00:00Z or nanoseconds)")]
    Unknown(String),
}

/// Parses a duration: a number with a unit `ns`, `us`, `ms`, `s`, `m`, `h`, `d` or `w`,
/// or several such (`1h30m`), into nanoseconds.
pub fn parse_duration(text: &str) -> Result<i64, TimeError> {
    let bad = || TimeError::Duration(text.to_string());
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: i64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let per: i64 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "d" => 86_400_000_000_000,
            "w" => 604_800_000_000_000,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total = n
            .checked_mul(per)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
    }
    Ok(total)
}

/// Parses a time as a user types it: `now`, `now-1h` (any [`parse_duration`] after the
/// sign, `+` too), an RFC 3339 time (`2026-11-30T12:00:00Z`, `…+01:00`, fractions
/// allowed), or nanoseconds since the epoch. `now_nanos` is what `now` means.
pub fn parse_time(text: &str, now_nanos: i64) -> Result<i64, TimeError> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("now") {
        if rest.is_empty() {
            return Ok(now_nanos);
        }
        let (sign, d) = match (rest.strip_prefix('-'), rest.strip_prefix('+')) {
            (Some(d), _) => (-1, d),
            (_, Some(d)) => (1, d),
            _ => return Err(TimeError::Relative(text.to_string())),
        };
        let d = parse_duration(d).map_err(|e| TimeError::Offset {
            text: text.to_string(),
            source: Box::new(e),
        })?;
        return Ok(now_nanos.saturating_add(sign * d));
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse()
            .map_err(|_| TimeError::OutOfRange(text.to_string()));
    }
    parse_rfc3339(t).ok_or_else(|| TimeError::Unknown(text.to_string()))
}

/// Parses an RFC 3339 time into nanoseconds since the epoch.
fn parse_rfc3339(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let mut rest = &t[19..];
    let mut frac: i64 = 0;
    if let Some(f) = rest.strip_prefix('.') {
        let n = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
        if n == 0 {
            return None;
        }
        let digits = &f[..n.min(9)];
        frac = digits.parse::<i64>().ok()? * 10_i64.pow(9 - digits.len() as u32);
        rest = &f[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let o = rest.get(1..)?;
            if o.len() != 5 || o.as_bytes()[2] != b':' {
                return None;
            }
            let (oh, om) = (o[..2].parse::<i64>().ok()?, o[3..].parse::<i64>().ok()?);
            sign * (oh * 3600 + om * 60)
        }
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss - offset;
    secs.checked_mul(1_000_000_000)?.checked_add(frac)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of `civil_from_days`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Nanoseconds since the epoch now, by the system clock.
pub fn now_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}

/// (year, month, day) of a day count since 1970-01-01, proleptic Gregorian.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::{parse_duration, parse_time, rfc3339};

    const HOUR: i64 = 3_600_000_000_000;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("90s"), Ok(90_000_000_000));
        assert_eq!(parse_duration("1h30m"), Ok(HOUR * 3 / 2));
        assert_eq!(parse_duration("7d"), Ok(7 * 24 * HOUR));
        assert_eq!(parse_duration("250ms"), Ok(250_000_000));
        for bad in ["", "h", "10", "10x", "-1h", "1h-", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parses_relative_and_absolute_times() {
        let now = 1_796_042_369_000_000_000;
        assert_eq!(parse_time("now", now), Ok(now));
        assert_eq!(parse_time("now-1h", now), Ok(now - HOUR));
        assert_eq!(parse_time("now+15m", now), Ok(now + HOUR / 4));
        assert_eq!(parse_time("2026-11-30T12:39:29Z", 0), Ok(now));
        assert_eq!(parse_time("2026-11-30T13:39:29+01:00", 0), Ok(now));
        assert_eq!(
            parse_time("2026-11-30T12:39:29.25Z", 0),
            Ok(now + 250_000_000)
        );
        assert_eq!(parse_time("1796042369000000000", 0), Ok(now));
        for t in [0, now, 951_782_400_500_000_000, -1_000_000_000] {
            assert_eq!(parse_time(&rfc3339(t), 0), Ok(t), "{}", rfc3339(t));
        }
        for bad in [
            "yesterday",
            "now-",
            "now*2",
            "2026-13-01T00:00:00Z",
            "2026-11-30",
            "",
        ] {
            let e = parse_time(bad, now).unwrap_err();
            assert!(e.to_string().contains("invalid time"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn formats_utc_times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_042_369_000_000_000), "2026-11-30T12:39:29Z");
        assert_eq!(rfc3339(951_782_400_500_000_000), "2000-02-29T00:00:00.5Z");
        assert_eq!(rfc3339(-1_000_000_000), "1969-12-31T23:59:59Z");
    }
}
