//! A profile over time in one file (a perf.data recording, a V8 .cpuprofile): each
//! sample is labelled with the start of its time slice ([`TIME_LABEL`], nanoseconds
//! after the profile's start), so that a file source can index the file as one
//! profile per slice and plot it as a series, where another file is one point.

/// The numeric sample label holding the start of a sample's time slice, in
/// nanoseconds after the profile's `time_nanos`.
pub const TIME_LABEL: &str = "time_offset";

const MILLIS: u64 = 1_000_000;
const SECOND: u64 = 1_000_000_000;
/// At most this many slices, past two minutes.
const MAX_SLICES: u64 = 120;

/// The width of the slices of a recording of `span_nanos`: 100 ms under 10 s, 1 s
/// under 2 minutes (and when the file does not say its span), else whole seconds
/// making at most 120 slices.
pub fn slice_nanos(span_nanos: Option<u64>) -> u64 {
    let Some(span_nanos) = span_nanos else {
        return SECOND;
    };
    if span_nanos < 10 * SECOND {
        100 * MILLIS
    } else if span_nanos < MAX_SLICES * SECOND {
        SECOND
    } else {
        span_nanos.div_ceil(MAX_SLICES).div_ceil(SECOND) * SECOND
    }
}

/// The start of the slice holding `offset_nanos`, for slices `width` wide.
pub fn slice_start(offset_nanos: u64, width: u64) -> i64 {
    let width = width.max(1);
    i64::try_from(offset_nanos / width * width).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_finer_for_short_recordings_and_never_more_than_120() {
        assert_eq!(slice_nanos(Some(2 * SECOND)), 100 * MILLIS);
        assert_eq!(slice_nanos(Some(60 * SECOND)), SECOND);
        assert_eq!(slice_nanos(None), SECOND);
        assert_eq!(slice_nanos(Some(3600 * SECOND)), 30 * SECOND);
        assert_eq!(slice_start(1_234_567_890, SECOND), 1_000_000_000);
        assert_eq!(slice_start(5, 0), 5);
    }
}
