//! Bytes ↔ [`Profile`]: gzip detection with a size cap, protobuf decoding with full
//! validation of every cross reference, and lossless encoding back to pprof.

use std::collections::HashMap;
use std::io::Read as _;

use prost::Message as _;

use crate::error::ProfileError;
use crate::profile::{
    Function, Label, Line, Location, Mapping, Profile, Samples, StrId, ValueType,
};
use crate::proto;

/// Default cap on the decompressed size of one profile: 2 GiB.
pub const DEFAULT_MAX_DECOMPRESSED_BYTES: u64 = 2 << 30;

/// Options of [`decode_with`].
#[derive(Debug, Clone, Copy)]
pub struct DecodeOptions {
    /// Inputs whose decompressed size would exceed this are refused.
    pub max_decompressed_bytes: u64,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            max_decompressed_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
        }
    }
}

/// Decodes a pprof profile, gzip-compressed or raw, with the default options.
pub fn decode(bytes: &[u8]) -> Result<Profile, ProfileError> {
    decode_with(bytes, DecodeOptions::default())
}

/// Decodes a pprof profile, gzip-compressed or raw.
pub fn decode_with(bytes: &[u8], options: DecodeOptions) -> Result<Profile, ProfileError> {
    let message = decode_message(bytes, options)?;
    from_proto(message)
}

/// Decodes the bytes into the raw protobuf message, without validation.
pub fn decode_message(
    bytes: &[u8],
    options: DecodeOptions,
) -> Result<proto::Profile, ProfileError> {
    if bytes.is_empty() {
        return Err(ProfileError::Empty);
    }
    let raw;
    let body = if is_gzip(bytes) {
        raw = gunzip(bytes, options.max_decompressed_bytes)?;
        raw.as_slice()
    } else {
        if bytes.len() as u64 > options.max_decompressed_bytes {
            return Err(ProfileError::TooLarge {
                limit_bytes: options.max_decompressed_bytes,
            });
        }
        bytes
    };
    if body.is_empty() {
        return Err(ProfileError::Protobuf("no protobuf data".into()));
    }
    proto::Profile::decode(body).map_err(|e| ProfileError::Protobuf(e.to_string()))
}

/// Whether `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Decompresses a (possibly multi-member) gzip stream, refusing to produce more
/// than `limit` bytes.
fn gunzip(bytes: &[u8], limit: u64) -> Result<Vec<u8>, ProfileError> {
    // The trailer holds the size modulo 2^32: only a hint for the first allocation.
    let hint = bytes
        .len()
        .checked_sub(4)
        .and_then(|at| bytes.get(at..))
        .and_then(|t| <[u8; 4]>::try_from(t).ok())
        .map_or(0, |t| u64::from(u32::from_le_bytes(t)));
    let capacity = usize::try_from(hint.min(limit).min(1 << 30)).unwrap_or(0);
    let mut out = Vec::with_capacity(capacity);
    let decoder = flate2::read::MultiGzDecoder::new(bytes);
    decoder
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| ProfileError::Gzip(e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(ProfileError::TooLarge { limit_bytes: limit });
    }
    Ok(out)
}

/// Maps pprof's arbitrary ids to dense indices, checking for duplicates and zero.
struct IdIndex {
    /// True when ids are exactly 1..=n in order, the common case: no hashing needed.
    dense: bool,
    map: HashMap<u64, u32>,
    len: usize,
    what: &'static str,
}

impl IdIndex {
    fn new(
        ids: impl ExactSizeIterator<Item = u64> + Clone,
        what: &'static str,
    ) -> Result<Self, ProfileError> {
        let len = ids.len();
        let dense = ids.clone().enumerate().all(|(i, id)| id == i as u64 + 1);
        let mut map = HashMap::new();
        if !dense {
            map.reserve(len);
            for (i, id) in ids.enumerate() {
                if id == 0 {
                    return Err(ProfileError::Invalid(format!("{what} has id 0")));
                }
                if map.insert(id, i as u32).is_some() {
                    return Err(ProfileError::Invalid(format!("duplicate {what} id {id}")));
                }
            }
        }
        Ok(Self {
            dense,
            map,
            len,
            what,
        })
    }

    fn get(&self, id: u64, user: &str) -> Result<u32, ProfileError> {
        let found = if self.dense {
            (id >= 1 && id <= self.len as u64).then(|| (id - 1) as u32)
        } else {
            self.map.get(&id).copied()
        };
        found.ok_or_else(|| {
            ProfileError::Invalid(format!(
                "{user} refers to {} id {id}, which does not exist",
                self.what
            ))
        })
    }
}

/// Checks a string index against the table size.
struct Strings(usize);

impl Strings {
    fn get(&self, index: i64, user: &dyn Fn() -> String) -> Result<StrId, ProfileError> {
        if index >= 0 && (index as u64) < self.0 as u64 {
            Ok(index as StrId)
        } else {
            Err(ProfileError::Invalid(format!(
                "{} has string index {index}, but the string table has {} entries",
                user(),
                self.0
            )))
        }
    }
}

/// Builds the validated model from a decoded protobuf message.
pub fn from_proto(mut p: proto::Profile) -> Result<Profile, ProfileError> {
    if p.string_table.is_empty() {
        p.string_table.push(String::new());
    }
    if !p.string_table[0].is_empty() {
        return Err(ProfileError::Invalid(
            "string table entry 0 is not empty".into(),
        ));
    }
    if u32::try_from(p.string_table.len()).is_err() || u32::try_from(p.location.len()).is_err() {
        return Err(ProfileError::Invalid("tables are too large".into()));
    }
    let s = Strings(p.string_table.len());
    let value_type = |v: &proto::ValueType, what: &str| -> Result<ValueType, ProfileError> {
        Ok(ValueType {
            kind: s.get(v.r#type, &|| what.to_string())?,
            unit: s.get(v.unit, &|| what.to_string())?,
        })
    };
    let sample_types = p
        .sample_type
        .iter()
        .map(|v| value_type(v, "a sample type"))
        .collect::<Result<Vec<_>, _>>()?;
    let period_type = match &p.period_type {
        Some(v) => value_type(v, "the period type")?,
        None => ValueType::default(),
    };

    let mapping_ids = IdIndex::new(p.mapping.iter().map(|m| m.id), "mapping")?;
    let mappings = p
        .mapping
        .iter()
        .map(|m| {
            let who = || format!("mapping {}", m.id);
            Ok(Mapping {
                memory_start: m.memory_start,
                memory_limit: m.memory_limit,
                file_offset: m.file_offset,
                filename: s.get(m.filename, &who)?,
                build_id: s.get(m.build_id, &who)?,
                flags: u8::from(m.has_functions)
                    | u8::from(m.has_filenames) << 1
                    | u8::from(m.has_line_numbers) << 2
                    | u8::from(m.has_inline_frames) << 3,
            })
        })
        .collect::<Result<Vec<_>, ProfileError>>()?;

    let function_ids = IdIndex::new(p.function.iter().map(|f| f.id), "function")?;
    let functions = p
        .function
        .iter()
        .map(|f| {
            let who = || format!("function {}", f.id);
            Ok(Function {
                name: s.get(f.name, &who)?,
                system_name: s.get(f.system_name, &who)?,
                filename: s.get(f.filename, &who)?,
                start_line: f.start_line,
            })
        })
        .collect::<Result<Vec<_>, ProfileError>>()?;

    let location_ids = IdIndex::new(p.location.iter().map(|l| l.id), "location")?;
    let locations = p
        .location
        .iter()
        .map(|l| {
            let who = format!("location {}", l.id);
            let mapping = match l.mapping_id {
                0 => None,
                id => Some(mapping_ids.get(id, &who)?),
            };
            let lines = l
                .line
                .iter()
                .map(|ln| {
                    Ok(Line {
                        function: function_ids.get(ln.function_id, &who)?,
                        line: ln.line,
                        column: ln.column,
                    })
                })
                .collect::<Result<Vec<_>, ProfileError>>()?;
            Ok(Location {
                mapping,
                address: l.address,
                lines,
                is_folded: l.is_folded,
            })
        })
        .collect::<Result<Vec<_>, ProfileError>>()?;

    let n_types = sample_types.len();
    let n_samples = p.sample.len();
    let total_frames: usize = p.sample.iter().map(|x| x.location_id.len()).sum();
    if u32::try_from(total_frames).is_err() {
        return Err(ProfileError::Invalid(
            "too many stack frames in total".into(),
        ));
    }
    let mut samples = Samples {
        stack_offsets: Vec::with_capacity(n_samples + 1),
        stack_locations: Vec::with_capacity(total_frames),
        values: vec![Vec::with_capacity(n_samples); n_types],
        label_set: Vec::with_capacity(n_samples),
    };
    samples.stack_offsets.push(0);
    let mut label_sets: Vec<Vec<Label>> = vec![Vec::new()];
    let mut label_set_ids: HashMap<Vec<Label>, u32> = HashMap::new();
    label_set_ids.insert(Vec::new(), 0);
    for (i, sample) in std::mem::take(&mut p.sample).into_iter().enumerate() {
        if sample.value.len() != n_types {
            return Err(ProfileError::Invalid(format!(
                "sample {i} has {} values, but the profile has {n_types} sample types",
                sample.value.len()
            )));
        }
        for id in &sample.location_id {
            let loc = location_ids.get(*id, &format!("sample {i}"))?;
            samples.stack_locations.push(loc);
        }
        samples
            .stack_offsets
            .push(samples.stack_locations.len() as u32);
        for (column, v) in samples.values.iter_mut().zip(&sample.value) {
            column.push(*v);
        }
        let set_id = if sample.label.is_empty() {
            0
        } else {
            let labels = sample
                .label
                .iter()
                .map(|l| {
                    let who = || format!("a label of sample {i}");
                    Ok(Label {
                        key: s.get(l.key, &who)?,
                        str: s.get(l.str, &who)?,
                        num: l.num,
                        num_unit: s.get(l.num_unit, &who)?,
                    })
                })
                .collect::<Result<Vec<_>, ProfileError>>()?;
            match label_set_ids.get(&labels) {
                Some(id) => *id,
                None => {
                    let id = label_sets.len() as u32;
                    label_sets.push(labels.clone());
                    label_set_ids.insert(labels, id);
                    id
                }
            }
        };
        samples.label_set.push(set_id);
    }

    let comments = p
        .comment
        .iter()
        .map(|c| s.get(*c, &|| "a comment".to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Profile {
        default_sample_type: s.get(p.default_sample_type, &|| "default_sample_type".into())?,
        drop_frames: s.get(p.drop_frames, &|| "drop_frames".into())?,
        keep_frames: s.get(p.keep_frames, &|| "keep_frames".into())?,
        strings: p.string_table,
        sample_types,
        period_type,
        period: p.period,
        time_nanos: p.time_nanos,
        duration_nanos: p.duration_nanos,
        comments,
        doc_url: p.doc_url,
        mappings,
        functions,
        locations,
        label_sets,
        samples,
    })
}

/// Converts the model back to the protobuf message; ids become `index + 1`.
pub fn to_proto(profile: &Profile) -> proto::Profile {
    let i64_of = |id: StrId| i64::from(id);
    let value_type = |v: &ValueType| proto::ValueType {
        r#type: i64_of(v.kind),
        unit: i64_of(v.unit),
    };
    let samples = &profile.samples;
    proto::Profile {
        sample_type: profile.sample_types.iter().map(value_type).collect(),
        sample: (0..samples.len())
            .map(|i| proto::Sample {
                location_id: samples.stack(i).iter().map(|l| u64::from(*l) + 1).collect(),
                value: samples.values.iter().map(|c| c[i]).collect(),
                label: profile.label_sets[samples.label_set[i] as usize]
                    .iter()
                    .map(|l| proto::Label {
                        key: i64_of(l.key),
                        str: i64_of(l.str),
                        num: l.num,
                        num_unit: i64_of(l.num_unit),
                    })
                    .collect(),
            })
            .collect(),
        mapping: profile
            .mappings
            .iter()
            .enumerate()
            .map(|(i, m)| proto::Mapping {
                id: i as u64 + 1,
                memory_start: m.memory_start,
                memory_limit: m.memory_limit,
                file_offset: m.file_offset,
                filename: i64_of(m.filename),
                build_id: i64_of(m.build_id),
                has_functions: m.flags & 1 != 0,
                has_filenames: m.flags & 2 != 0,
                has_line_numbers: m.flags & 4 != 0,
                has_inline_frames: m.flags & 8 != 0,
            })
            .collect(),
        location: profile
            .locations
            .iter()
            .enumerate()
            .map(|(i, l)| proto::Location {
                id: i as u64 + 1,
                mapping_id: l.mapping.map_or(0, |m| u64::from(m) + 1),
                address: l.address,
                line: l
                    .lines
                    .iter()
                    .map(|ln| proto::Line {
                        function_id: u64::from(ln.function) + 1,
                        line: ln.line,
                        column: ln.column,
                    })
                    .collect(),
                is_folded: l.is_folded,
            })
            .collect(),
        function: profile
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| proto::Function {
                id: i as u64 + 1,
                name: i64_of(f.name),
                system_name: i64_of(f.system_name),
                filename: i64_of(f.filename),
                start_line: f.start_line,
            })
            .collect(),
        string_table: profile.strings.clone(),
        drop_frames: i64_of(profile.drop_frames),
        keep_frames: i64_of(profile.keep_frames),
        time_nanos: profile.time_nanos,
        duration_nanos: profile.duration_nanos,
        period_type: Some(value_type(&profile.period_type)),
        period: profile.period,
        comment: profile.comments.iter().map(|c| i64_of(*c)).collect(),
        default_sample_type: i64_of(profile.default_sample_type),
        doc_url: profile.doc_url.clone(),
    }
}

/// Encodes the profile as raw (uncompressed) pprof protobuf bytes.
pub fn encode(profile: &Profile) -> Vec<u8> {
    to_proto(profile).encode_to_vec()
}

/// Encodes the profile as gzip-compressed pprof, as `.pb.gz` files hold it.
pub fn encode_gzip(profile: &Profile) -> Vec<u8> {
    gzip(&encode(profile))
}

/// Compresses bytes with gzip at the default level.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}
