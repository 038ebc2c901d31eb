//! A file over time (a perf.data recording, a V8 .cpuprofile): its samples labelled
//! with their time slice ([`TIME_LABEL`], see [`profile_model::time_slices`]) are
//! indexed by the file source as one profile per slice ([`slices`], [`slice_of`]).

use profile_model::Profile;
use profile_model::profile::{Label, Samples};

pub use profile_model::time_slices::{TIME_LABEL, slice_nanos};

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
