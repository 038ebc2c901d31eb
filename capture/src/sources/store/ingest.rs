//! Checking and indexing a written profile, as Parca's WriteRaw does, before it is
//! stored: pure functions of the written labels and bytes.

use profile_model::codec::{self, DecodeOptions};

use super::record::{self, Header};
use crate::files::profile_types_named;
use crate::index::{SampleLabels, groups_of, profile_gives_rate};
use crate::selector::is_label_name;
use crate::source::{Labels, SourceError};

/// A checked profile, ready to append: its record and its index header.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The record's bytes, frame included.
    pub record: Vec<u8>,
    /// What the index keeps of it.
    pub header: Header,
}

/// Checks `labels` and `raw` (gzipped or plain pprof) and builds the record. The profile
/// is placed at its `time_nanos`, or at `now_nanos` when that is 0. Each sample type is
/// a profile type named `__name__:type:unit:period_type:period_unit`, with `:delta` iff
/// the pprof has a duration (Parca's rule at ingest). It is inflated to at most
/// `decode.max_decompressed_bytes`.
pub fn prepare(
    mut labels: Labels,
    raw: &[u8],
    now_nanos: i64,
    decode: DecodeOptions,
) -> Result<Prepared, SourceError> {
    let name = labels
        .remove("__name__")
        .ok_or_else(|| SourceError::InvalidArgument("missing __name__ label".into()))?;
    if let Some(bad) = labels.keys().find(|k| !is_label_name(k)) {
        return Err(SourceError::InvalidArgument(format!(
            "invalid label name {bad:?}"
        )));
    }
    // Checked as decoding checks it; the index needs no stacks.
    let profile = codec::decode_without_stacks(raw, decode)
        .map_err(|e| SourceError::InvalidArgument(format!("cannot decode the profile: {e}")))?;
    if profile.sample_types.is_empty() {
        return Err(SourceError::InvalidArgument(
            "the profile has no sample types".into(),
        ));
    }
    let types = profile_types_named(&profile, &name);
    let groups = groups_of(&profile, &labels, SampleLabels::StringsOnly);
    let header = Header {
        time_nanos: if profile.time_nanos != 0 {
            profile.time_nanos
        } else {
            now_nanos
        },
        duration_nanos: profile.duration_nanos,
        types,
        default_type: profile.default_sample_index(),
        rated: profile_gives_rate(&profile),
        period: profile.period,
        labels,
        groups,
    };
    Ok(Prepared {
        record: record::encode(&header, raw),
        header,
    })
}
