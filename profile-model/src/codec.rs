//! Bytes ↔ [`Profile`]: gzip detection with a size cap, protobuf decoding with full
//! validation of every cross reference, and lossless encoding back to pprof.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read as _;

use prost::Message as _;
use rustc_hash::FxHashMap;

use crate::error::ProfileError;
use crate::profile::{
    Function, Label, Line, Location, Mapping, Profile, Samples, StrId, ValueType,
};
use crate::proto;
use crate::wire;

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
///
/// The tables are decoded with prost; the samples, which are most of a profile, are
/// read straight from the wire into the columnar [`Samples`], never as one prost
/// message each.
pub fn decode_with(bytes: &[u8], options: DecodeOptions) -> Result<Profile, ProfileError> {
    let body = protobuf_bytes(bytes, options)?;
    let body = body.as_ref();
    let tables = proto::ProfileTables::decode(body).map_err(protobuf_error)?;
    let mut builder = Builder::new(tables)?;
    // Every location id takes at least one byte: the body's size bounds their number.
    // Capacity that is never written is never touched, so it costs address space only.
    builder.reserve(body.len() / 64, body.len());
    wire::for_each_sample(body, |sample| builder.push_wire(sample))?;
    Ok(builder.finish())
}

/// Decodes the bytes into the raw protobuf message, without validation.
pub fn decode_message(
    bytes: &[u8],
    options: DecodeOptions,
) -> Result<proto::Profile, ProfileError> {
    let body = protobuf_bytes(bytes, options)?;
    proto::Profile::decode(body.as_ref()).map_err(protobuf_error)
}

/// prost's error, naming the pprof message rather than flint's sample-less copy of it.
fn protobuf_error(e: prost::DecodeError) -> ProfileError {
    ProfileError::Protobuf(e.to_string().replace("ProfileTables", "Profile"))
}

/// The protobuf message in `bytes`: inflated when gzip-compressed, else as it is;
/// either way no larger than the cap, and not empty.
fn protobuf_bytes(bytes: &[u8], options: DecodeOptions) -> Result<Cow<'_, [u8]>, ProfileError> {
    if bytes.is_empty() {
        return Err(ProfileError::Empty);
    }
    let body = if is_gzip(bytes) {
        Cow::Owned(gunzip(bytes, options.max_decompressed_bytes)?)
    } else if bytes.len() as u64 > options.max_decompressed_bytes {
        return Err(ProfileError::TooLarge {
            limit_bytes: options.max_decompressed_bytes,
        });
    } else {
        Cow::Borrowed(bytes)
    };
    if body.is_empty() {
        return Err(ProfileError::Protobuf("no protobuf data".into()));
    }
    Ok(body)
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

    /// The index of `id`; `user` names the referrer in the error, built only on failure.
    fn get(&self, id: u64, user: impl Fn() -> String) -> Result<u32, ProfileError> {
        let found = if self.dense {
            (id >= 1 && id <= self.len as u64).then(|| (id - 1) as u32)
        } else {
            self.map.get(&id).copied()
        };
        found.ok_or_else(|| {
            ProfileError::Invalid(format!(
                "{} refers to {} id {id}, which does not exist",
                user(),
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
    let samples = std::mem::take(&mut p.sample);
    let tables = proto::ProfileTables {
        sample_type: p.sample_type,
        mapping: p.mapping,
        location: p.location,
        function: p.function,
        string_table: p.string_table,
        drop_frames: p.drop_frames,
        keep_frames: p.keep_frames,
        time_nanos: p.time_nanos,
        duration_nanos: p.duration_nanos,
        period_type: p.period_type,
        period: p.period,
        comment: p.comment,
        default_sample_type: p.default_sample_type,
        doc_url: p.doc_url,
    };
    let mut builder = Builder::new(tables)?;
    for sample in samples {
        builder.push(
            sample.location_id.iter().copied(),
            &sample.value,
            sample
                .label
                .iter()
                .map(|l| [l.key, l.str, l.num, l.num_unit]),
        )?;
    }
    Ok(builder.finish())
}

/// Validates the tables of a profile, then takes its samples one by one.
struct Builder {
    profile: Profile,
    location_ids: IdIndex,
    strings: Strings,
    label_set_ids: FxHashMap<Vec<Label>, u32>,
    labels: Vec<Label>,
    values: Vec<i64>,
    /// Reused buffers of the wire reader: location ids, values, labels.
    scratch: (Vec<u64>, Vec<u64>, Vec<[i64; 4]>),
}

impl Builder {
    fn new(mut p: proto::ProfileTables) -> Result<Self, ProfileError> {
        if p.string_table.is_empty() {
            p.string_table.push(String::new());
        }
        if !p.string_table[0].is_empty() {
            return Err(ProfileError::Invalid(
                "string table entry 0 is not empty".into(),
            ));
        }
        if u32::try_from(p.string_table.len()).is_err() || u32::try_from(p.location.len()).is_err()
        {
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
                let who = || format!("location {}", l.id);
                let mapping = match l.mapping_id {
                    0 => None,
                    id => Some(mapping_ids.get(id, who)?),
                };
                let lines = l
                    .line
                    .iter()
                    .map(|ln| {
                        Ok(Line {
                            function: function_ids.get(ln.function_id, who)?,
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
        let comments = p
            .comment
            .iter()
            .map(|c| s.get(*c, &|| "a comment".to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let n_types = sample_types.len();
        let profile = Profile {
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
            label_sets: vec![Vec::new()],
            samples: Samples {
                stack_offsets: vec![0],
                values: vec![Vec::new(); n_types],
                ..Samples::default()
            },
        };
        Ok(Self {
            profile,
            location_ids,
            strings: s,
            label_set_ids: FxHashMap::from_iter([(Vec::new(), 0)]),
            labels: Vec::new(),
            values: Vec::new(),
            scratch: Default::default(),
        })
    }

    /// Makes room for about `samples` samples and at most `locations` location ids.
    fn reserve(&mut self, samples: usize, locations: usize) {
        let columns = &mut self.profile.samples;
        columns.stack_offsets.reserve(samples);
        columns.stack_locations.reserve_exact(locations);
        columns.label_set.reserve(samples);
        for column in &mut columns.values {
            column.reserve(samples);
        }
    }

    /// Adds one sample given as its wire encoding.
    fn push_wire(&mut self, sample: &[u8]) -> Result<(), ProfileError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let (locations, values, labels) = &mut scratch;
        let result = wire::read_sample(sample, locations, values, labels).and_then(|()| {
            self.values.clear();
            self.values.extend(values.iter().map(|v| *v as i64));
            let values = std::mem::take(&mut self.values);
            let result = self.push(locations.iter().copied(), &values, labels.iter().copied());
            self.values = values;
            result
        });
        self.scratch = scratch;
        result
    }

    /// Adds one sample: pprof location ids (leaf first), values, labels as
    /// `[key, str, num, num_unit]`.
    fn push(
        &mut self,
        locations: impl Iterator<Item = u64>,
        values: &[i64],
        labels: impl Iterator<Item = [i64; 4]>,
    ) -> Result<(), ProfileError> {
        let samples = &mut self.profile.samples;
        let i = samples.label_set.len();
        let n_types = samples.values.len();
        if values.len() != n_types {
            return Err(ProfileError::Invalid(format!(
                "sample {i} has {} values, but the profile has {n_types} sample types",
                values.len()
            )));
        }
        let ids = &self.location_ids;
        for id in locations {
            let loc = if ids.dense && id >= 1 && id <= ids.len as u64 {
                (id - 1) as u32
            } else {
                ids.get(id, || format!("sample {i}"))?
            };
            samples.stack_locations.push(loc);
        }
        let end = u32::try_from(samples.stack_locations.len())
            .map_err(|_| ProfileError::Invalid("too many stack frames in total".into()))?;
        samples.stack_offsets.push(end);
        for (column, v) in samples.values.iter_mut().zip(values) {
            column.push(*v);
        }
        self.labels.clear();
        for [key, str, num, num_unit] in labels {
            let who = || format!("a label of sample {i}");
            self.labels.push(Label {
                key: self.strings.get(key, &who)?,
                str: self.strings.get(str, &who)?,
                num,
                num_unit: self.strings.get(num_unit, &who)?,
            });
        }
        let set_id = match self.label_set_ids.get(&self.labels) {
            Some(id) => *id,
            None => {
                let id = self.profile.label_sets.len() as u32;
                self.profile.label_sets.push(self.labels.clone());
                self.label_set_ids.insert(self.labels.clone(), id);
                id
            }
        };
        samples.label_set.push(set_id);
        Ok(())
    }

    fn finish(self) -> Profile {
        self.profile
    }
}

/// Converts the model back to the protobuf message; ids become `index + 1`.
pub fn to_proto(profile: &Profile) -> proto::Profile {
    let i64_of = |id: StrId| i64::from(id);
    let samples = &profile.samples;
    proto::Profile {
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
        ..tables_proto(profile)
    }
}

/// The protobuf message of everything but the samples.
fn tables_proto(profile: &Profile) -> proto::Profile {
    let i64_of = |id: StrId| i64::from(id);
    let value_type = |v: &ValueType| proto::ValueType {
        r#type: i64_of(v.kind),
        unit: i64_of(v.unit),
    };
    proto::Profile {
        sample_type: profile.sample_types.iter().map(value_type).collect(),
        sample: Vec::new(),
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

/// Encodes the profile as raw (uncompressed) pprof protobuf bytes: the tables through
/// prost, the samples (most of the bytes) written directly by [`crate::wire`]. The
/// samples come last; protobuf readers take fields in any order.
pub fn encode(profile: &Profile) -> Vec<u8> {
    let mut out = tables_proto(profile).encode_to_vec();
    crate::wire::write_samples(profile, &mut out);
    out
}

/// Encodes the profile as gzip-compressed pprof, as `.pb.gz` files hold it.
pub fn encode_gzip(profile: &Profile) -> Vec<u8> {
    gzip(&encode(profile))
}

/// Compresses bytes with gzip at the fastest level, as Go's runtime/pprof writes its
/// profiles (`gzip.BestSpeed`): a server answering with merged profiles spends far less
/// time compressing for a slightly larger answer.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}
