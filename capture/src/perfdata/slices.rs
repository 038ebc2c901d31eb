//! A perf.data file over time: each sample is labelled with the start of its time
//! slice ([`TIME_LABEL`], nanoseconds after the profile's start), so that the file
//! source can index a recording as one profile per slice ([`slices`], [`slice_of`])
//! and plot it as a series, where another file is one point.

use profile_model::Profile;
use profile_model::profile::{Label, Samples};

/// The numeric sample label holding the start of a sample's time slice, in
/// nanoseconds after the profile's `time_nanos`.
pub const TIME_LABEL: &str = "perf_time_offset";

const MILLIS: u64 = 1_000_000;
const SECOND: u64 = 1_000_000_000;
/// At most this many slices, past two minutes.
const MAX_SLICES: u64 = 120;

/// The width of the slices of a recording of `span_nanos`: 100 ms under 10 s, 1 s
/// under 2 minutes (and when the file does not say its span), else whole seconds
/// making at most 120 slices.
pub(super) fn slice_nanos(span_nanos: Option<u64>) -> u64 {
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

/// One time slice of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slice {
    /// Its [`TIME_LABEL`] value.
    pub offset_nanos: i64,
    /// Its start, nanoseconds since the Unix epoch.
    pub time_nanos: i64,
    /// Its length.
    pub duration_nanos: i64,
}

/// The value of [`TIME_LABEL`] in label set `set` of `profile`.
fn offset_in(profile: &Profile, set: u32) -> Option<i64> {
    let labels = profile.label_sets.get(set as usize)?;
    labels
        .iter()
        .find(|l| l.str == 0 && profile.str(l.key) == TIME_LABEL)
        .map(|l| l.num)
}

/// The time slices of `profile`, in time order, when its samples carry
/// [`TIME_LABEL`] (a perf.data file's); each lasts until the next one's start, the
/// last until the profile's end.
pub fn slices(profile: &Profile) -> Option<Vec<Slice>> {
    let mut offsets: Vec<i64> = profile
        .samples
        .label_set
        .iter()
        .filter_map(|&set| offset_in(profile, set))
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    if offsets.is_empty() {
        return None;
    }
    let width = offsets
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or(profile.duration_nanos)
        .max(1);
    let end = profile.duration_nanos.max(1);
    Some(
        offsets
            .iter()
            .map(|&offset| Slice {
                offset_nanos: offset,
                time_nanos: profile.time_nanos.saturating_add(offset),
                duration_nanos: width.min(end.saturating_sub(offset)).max(1),
            })
            .collect(),
    )
}

/// The samples of `slice` in `profile`, the slice's time and length its own, without
/// [`TIME_LABEL`].
pub fn slice_of(profile: &Profile, slice: &Slice) -> Profile {
    let mut samples = Samples::with_columns(profile.samples.values.len());
    for i in 0..profile.samples.len() {
        let set = profile.samples.label_set[i];
        if offset_in(profile, set) != Some(slice.offset_nanos) {
            continue;
        }
        samples
            .stack_locations
            .extend_from_slice(profile.samples.stack(i));
        samples
            .stack_offsets
            .push(samples.stack_locations.len() as u32);
        for (column, values) in samples.values.iter_mut().zip(&profile.samples.values) {
            column.push(values[i]);
        }
        samples.label_set.push(set);
    }
    let label_sets: Vec<Vec<Label>> = profile
        .label_sets
        .iter()
        .map(|set| {
            set.iter()
                .filter(|l| !(l.str == 0 && profile.str(l.key) == TIME_LABEL))
                .copied()
                .collect()
        })
        .collect();
    Profile {
        strings: profile.strings.clone(),
        sample_types: profile.sample_types.clone(),
        default_sample_type: profile.default_sample_type,
        period_type: profile.period_type,
        period: profile.period,
        time_nanos: slice.time_nanos,
        duration_nanos: slice.duration_nanos,
        drop_frames: profile.drop_frames,
        keep_frames: profile.keep_frames,
        comments: profile.comments.clone(),
        doc_url: profile.doc_url.clone(),
        mappings: profile.mappings.clone(),
        functions: profile.functions.clone(),
        locations: profile.locations.clone(),
        label_sets,
        samples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_100_ms_then_seconds_then_at_most_120() {
        assert_eq!(slice_nanos(Some(400 * MILLIS)), 100 * MILLIS);
        assert_eq!(slice_nanos(Some(60 * SECOND)), SECOND);
        assert_eq!(slice_nanos(Some(3600 * SECOND)), 30 * SECOND);
        assert_eq!(slice_nanos(None), SECOND);
    }
}
