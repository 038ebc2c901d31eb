//! Bytes ↔ [`Profile`]: gzip detection with a size cap, protobuf decoding with full
//! validation of every cross reference, and lossless encoding back to pprof.

use prost::Message as _;

use crate::error::ProfileError;
use crate::formats::FoldedUnit;
use crate::gzip::gunzip_into;
pub use crate::gzip::{gzip, is_gzip};
use crate::profile::{Label, Location, Mapping, Profile, Samples, StrId, ValueType};
use crate::proto;
use crate::wire::tables::{RawTables, ReadSamples, Tables};

/// Default cap on the decompressed size of one profile: 2 GiB.
pub const DEFAULT_MAX_DECOMPRESSED_BYTES: u64 = 2 << 30;

/// Options of [`decode_with`].
#[derive(Debug, Clone, Copy)]
pub struct DecodeOptions {
    /// Inputs whose decompressed size would exceed this are refused.
    pub max_decompressed_bytes: u64,
    /// What the counts of folded stacks measure.
    pub folded_unit: FoldedUnit,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            max_decompressed_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
            folded_unit: FoldedUnit::default(),
        }
    }
}

/// Decodes a pprof profile, gzip-compressed or raw, with the default options.
pub fn decode(bytes: &[u8]) -> Result<Profile, ProfileError> {
    decode_with(bytes, DecodeOptions::default())
}

/// Decodes a pprof profile, gzip-compressed or raw.
///
/// The tables and the samples are read straight from the wire (`wire.rs`), the
/// samples into the columnar [`Samples`], never as one prost message each.
pub fn decode_with(bytes: &[u8], options: DecodeOptions) -> Result<Profile, ProfileError> {
    let mut buf = Vec::new();
    from_body(message_bytes(bytes, options, &mut buf)?)
}

/// Decodes the bytes into the raw protobuf message, without validation.
pub fn decode_message(
    bytes: &[u8],
    options: DecodeOptions,
) -> Result<proto::Profile, ProfileError> {
    let mut buf = Vec::new();
    proto::Profile::decode(message_bytes(bytes, options, &mut buf)?).map_err(protobuf_error)
}

fn protobuf_error(e: prost::DecodeError) -> ProfileError {
    ProfileError::Protobuf(e.to_string())
}

/// The protobuf message in `bytes`: inflated into `buf` when gzip-compressed (reusing
/// its allocation), else `bytes` as they are; either way no larger than the cap, and
/// not empty. Bytes in another profiler's format (folded stacks, a `.cpuprofile`,
/// speedscope JSON: [`crate::formats::detect`]) are read and encoded as pprof into
/// `buf`, so that every reader of pprof reads them; pprof is only looked at.
pub fn message_bytes<'b>(
    bytes: &'b [u8],
    options: DecodeOptions,
    buf: &'b mut Vec<u8>,
) -> Result<&'b [u8], ProfileError> {
    if bytes.is_empty() {
        return Err(ProfileError::Empty);
    }
    let inflated = is_gzip(bytes);
    if inflated {
        gunzip_into(bytes, options.max_decompressed_bytes, buf)?;
    } else if bytes.len() as u64 > options.max_decompressed_bytes {
        return Err(ProfileError::TooLarge {
            limit_bytes: options.max_decompressed_bytes,
        });
    }
    let body: &[u8] = if inflated { buf } else { bytes };
    if body.is_empty() {
        return Err(ProfileError::Protobuf("no protobuf data".into()));
    }
    match crate::formats::to_pprof(body, options.folded_unit) {
        None if inflated => Ok(buf),
        None => Ok(bytes),
        Some(converted) => {
            *buf = converted?;
            Ok(buf)
        }
    }
}

/// The size `bytes` (gzipped or plain pprof) come to before they are decoded, as far
/// as can be told without inflating: a gzip trailer's size field (exact for one
/// member under 4 GiB, which is what pprof writers make), else their own length.
pub fn inflated_size_hint(bytes: &[u8]) -> u64 {
    if is_gzip(bytes) {
        crate::gzip::size_hint(bytes)
    } else {
        bytes.len() as u64
    }
}

/// Builds the validated model from a decoded protobuf message.
pub fn from_proto(p: proto::Profile) -> Result<Profile, ProfileError> {
    from_body(&p.encode_to_vec())
}

/// The profile in an uncompressed `Profile` message: its tables checked and copied,
/// then its samples read one by one, straight from the wire into the columns.
pub(crate) fn from_body(body: &[u8]) -> Result<Profile, ProfileError> {
    let mut spare = Vec::new();
    let (tables, body) = Tables::parse_lossy(body, &mut RawTables::default(), &mut spare)?;
    let n_types = tables.sample_types.len();
    let mut profile = Profile {
        strings: tables.strings.iter().map(|s| (*s).to_string()).collect(),
        sample_types: tables.sample_types.clone(),
        default_sample_type: tables.default_sample_type,
        period_type: tables.period_type,
        period: tables.period,
        time_nanos: tables.time_nanos,
        duration_nanos: tables.duration_nanos,
        drop_frames: tables.drop_frames,
        keep_frames: tables.keep_frames,
        comments: tables.comments.clone(),
        doc_url: tables.doc_url.to_string(),
        mappings: tables.mappings.clone(),
        functions: tables.functions.clone(),
        locations: tables
            .locations
            .iter()
            .map(|l| Location {
                mapping: l.mapping,
                address: l.address,
                lines: tables.lines_of(l).to_vec(),
                is_folded: l.is_folded,
            })
            .collect(),
        label_sets: vec![Vec::new()],
        samples: Samples {
            stack_offsets: vec![0],
            values: vec![Vec::new(); n_types],
            ..Samples::default()
        },
    };
    let mut read = ReadSamples::default();
    tables.read_samples(body, &mut read, true)?;
    profile.samples = read.samples;
    profile.label_sets = read.label_sets;
    crate::normalize::as_pprof_reads(&mut profile);
    Ok(profile)
}

/// The profile without its stacks: the header, mappings, label sets and the values of
/// every sample (each with an empty stack), no functions or locations, and only the
/// strings those use; every part of the input checked exactly as [`decode_with`]
/// checks it, so the same inputs are refused with the same errors. What indexing a
/// profile needs (its types, time and the sums per label set), for a fraction of the
/// cost of decoding it.
pub fn decode_without_stacks(
    bytes: &[u8],
    options: DecodeOptions,
) -> Result<Profile, ProfileError> {
    decode_for_index(bytes, options, false, |_, _| ()).map(|(p, ())| p)
}

/// [`decode_without_stacks`] with a look at the message's tables and samples as read:
/// `keep(tables, samples)` is called once they are (the samples' stacks read only
/// with `read_stacks`), and what it returns comes back with the profile. For a
/// caller that keeps what the profile's own model leaves out (the stack index).
pub(crate) fn decode_for_index<T>(
    bytes: &[u8],
    options: DecodeOptions,
    read_stacks: bool,
    keep: impl FnOnce(&Tables<'_>, &ReadSamples) -> T,
) -> Result<(Profile, T), ProfileError> {
    let mut buf = Vec::new();
    let body = message_bytes(bytes, options, &mut buf)?;
    let mut spare = Vec::new();
    let (tables, body) = Tables::parse_lossy(body, &mut RawTables::default(), &mut spare)?;
    let mut kept = KeptStrings {
        new_id: vec![StrId::MAX; tables.strings.len()],
        strings: Vec::new(),
    };
    let mut s = |id: StrId| kept.get(&tables, id);
    s(0);
    let value_type = |t: &ValueType, s: &mut dyn FnMut(StrId) -> StrId| ValueType {
        kind: s(t.kind),
        unit: s(t.unit),
    };
    let mut profile = Profile {
        sample_types: tables
            .sample_types
            .iter()
            .map(|t| value_type(t, &mut s))
            .collect(),
        default_sample_type: s(tables.default_sample_type),
        period_type: value_type(&tables.period_type, &mut s),
        period: tables.period,
        time_nanos: tables.time_nanos,
        duration_nanos: tables.duration_nanos,
        drop_frames: s(tables.drop_frames),
        keep_frames: s(tables.keep_frames),
        comments: tables.comments.iter().map(|c| s(*c)).collect(),
        doc_url: tables.doc_url.to_string(),
        mappings: tables
            .mappings
            .iter()
            .map(|m| Mapping {
                filename: s(m.filename),
                build_id: s(m.build_id),
                ..m.clone()
            })
            .collect(),
        label_sets: vec![Vec::new()],
        samples: Samples {
            stack_offsets: vec![0],
            values: vec![Vec::new(); tables.sample_types.len()],
            ..Samples::default()
        },
        ..Profile::default()
    };
    let mut read = ReadSamples::default();
    tables.read_samples(body, &mut read, read_stacks)?;
    let seen = keep(&tables, &read);
    profile.samples = read.samples;
    profile.label_sets = read
        .label_sets
        .iter()
        .map(|set| {
            set.iter()
                .map(|l| Label {
                    key: s(l.key),
                    str: s(l.str),
                    num: l.num,
                    num_unit: s(l.num_unit),
                })
                .collect()
        })
        .collect();
    profile.strings = kept.strings;
    Ok((profile, seen))
}

/// The strings of a message that a profile without stacks keeps, numbered in the
/// order first used.
struct KeptStrings {
    /// The message's string id → the kept id, `StrId::MAX` when not kept (yet).
    new_id: Vec<StrId>,
    strings: Vec<String>,
}

impl KeptStrings {
    /// The kept id of the message's string `id` (checked when the tables were read).
    fn get(&mut self, tables: &Tables<'_>, id: StrId) -> StrId {
        let new = &mut self.new_id[id as usize];
        if *new == StrId::MAX {
            *new = self.strings.len() as StrId;
            self.strings.push(tables.str(id).to_string());
        }
        *new
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
    // pprof's doc_url is a string table index: the URL joins the table if it is not
    // there (a merge keeps only the strings its tables reach).
    let mut string_table = profile.strings.clone();
    let doc_url = match profile.doc_url.as_str() {
        "" => 0,
        url => match string_table.iter().position(|s| s == url) {
            Some(i) => i,
            None => {
                string_table.push(url.to_string());
                string_table.len() - 1
            }
        },
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
        string_table,
        drop_frames: i64_of(profile.drop_frames),
        keep_frames: i64_of(profile.keep_frames),
        time_nanos: profile.time_nanos,
        duration_nanos: profile.duration_nanos,
        period_type: Some(value_type(&profile.period_type)),
        period: profile.period,
        comment: profile.comments.iter().map(|c| i64_of(*c)).collect(),
        default_sample_type: i64_of(profile.default_sample_type),
        doc_url: i64::try_from(doc_url).unwrap_or(0),
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

/// Encodes the profile as gzip-compressed pprof, as `.pb.gz` files hold it. The
/// samples are compressed as they are encoded: the uncompressed message is never
/// held whole.
pub fn encode_gzip(profile: &Profile) -> Vec<u8> {
    let mut out = crate::gzip::Gzip::new();
    let mut encoded = tables_proto(profile).encode_to_vec();
    crate::wire::write_samples_flushing(profile, &mut encoded, |chunk| {
        out.write(chunk);
        chunk.clear();
    });
    out.write(&encoded);
    out.finish()
}
