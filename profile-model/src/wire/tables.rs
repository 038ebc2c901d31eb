//! The tables of a pprof `Profile` message read straight from its bytes: strings
//! borrowed from the message, every cross reference checked and turned into a dense
//! index. The decoder (which copies them into a [`crate::Profile`]) and the streaming
//! top table ([`crate::topsum`]) both start here, so a file is valid for one exactly
//! when it is valid for the other.

use std::collections::HashMap;
use std::ops::Range;

use super::{
    Field, Labels, Malformed, PackedStack, Varints, expect_bytes, expect_mixed, expect_varint,
    expect_wide, next_field, put_bytes, read_sample, repeated,
};
use crate::error::ProfileError;
use rustc_hash::FxHashMap;

use crate::profile::{
    Function, Label, Line, LocationId, Mapping, MappingId, Samples, StrId, ValueType,
};

/// A location of [`Tables`]; its lines are `Tables::lines[lines]`, innermost first.
#[derive(Debug, Clone)]
pub(crate) struct TableLocation {
    pub mapping: Option<MappingId>,
    pub address: u64,
    pub is_folded: bool,
    pub lines: Range<usize>,
}

/// The validated tables of one profile, borrowing its strings from the message bytes.
#[derive(Debug)]
pub(crate) struct Tables<'a> {
    pub strings: Vec<&'a str>,
    pub sample_types: Vec<ValueType>,
    pub period_type: ValueType,
    pub period: i64,
    pub time_nanos: i64,
    pub duration_nanos: i64,
    pub drop_frames: StrId,
    pub keep_frames: StrId,
    pub default_sample_type: StrId,
    pub comments: Vec<StrId>,
    pub doc_url: &'a str,
    pub mappings: Vec<Mapping>,
    pub functions: Vec<Function>,
    pub locations: Vec<TableLocation>,
    pub lines: Vec<Line>,
    location_ids: IdIndex,
    /// The bytes of the message that hold all its sample fields: the run of them all
    /// when nothing else lies between (as every writer lays them out), so that reading
    /// them need not step over the tables again; else the whole message.
    sample_fields: Range<usize>,
}

/// One sample as [`Tables::read_sample_with`] leaves it: dense location indices (leaf
/// first), one value per sample type, and labels with checked string indices. The
/// buffers are reused from sample to sample.
#[derive(Debug, Default)]
pub(crate) struct SampleBuf {
    pub locations: Vec<LocationId>,
    pub values: Vec<i64>,
    /// The labels, unless [`SampleBuf::known`] names their set.
    pub labels: Vec<Label>,
    /// The label set of [`LabelRuns`] whose bytes the sample's labels are (when read
    /// with them): its labels are then not read into `labels`.
    pub known: Option<u32>,
    /// The sample's labels are all in one run of bytes, read into `labels`, which
    /// [`LabelRuns::pending`] holds: the set they make can be remembered by them.
    pub run_read: bool,
}

/// The label sets of one message met so far, found by their encoded bytes: most
/// samples repeat a set seen before, and comparing its bytes spares reading and
/// checking each label and finding the set by its labels.
#[derive(Debug, Default)]
pub(crate) struct LabelRuns {
    /// Encoded labels → label set id.
    ids: FxHashMap<Vec<u8>, u32>,
    /// The runs of 8 to 32 bytes (three or four labels) last found, in front of
    /// `ids`: found by a hash of their ends and compared in place, without hashing
    /// every byte or calling out to compare them.
    recent: Vec<RecentRun>,
    /// The message whose runs `recent` holds: a run of another is stale.
    message: u32,
    /// The encoded labels of the sample just read (see [`SampleBuf::run_read`]).
    pending: Vec<u8>,
}

/// A run of [`LabelRuns::recent`]: its bytes, zero-padded.
#[derive(Debug, Default, Clone, Copy)]
struct RecentRun {
    message: u32,
    len: u32,
    set: u32,
    bytes: [u8; 32],
}

/// Slots of [`LabelRuns::recent`] (a power of two).
const RECENT_RUNS: usize = 256;

/// The first and last 16 bytes of `bytes[..len]`, `len` from 8 to 32 (overlapping
/// when shorter: for 8 to 15 bytes, words 0 and 1 overlap as 2 and 3 do), as words.
#[inline(always)]
fn end_words(bytes: &[u8], len: usize) -> [u64; 4] {
    let word = |at: usize| {
        bytes
            .get(at..)
            .and_then(|b| b.first_chunk::<8>())
            .map_or(0, |w| u64::from_le_bytes(*w))
    };
    let half = len.min(16) - 8;
    [word(0), word(half), word(len - 8 - half), word(len - 8)]
}

/// The slot of `LabelRuns::recent` of a run of 8 to 32 bytes, from its first and last
/// eight bytes and its length, with its [`end_words`] for comparing; `None` for
/// another length.
#[inline(always)]
fn recent_slot(run: &[u8]) -> Option<(usize, [u64; 4])> {
    let len = run.len();
    if !(8..=32).contains(&len) {
        return None;
    }
    let words = end_words(run, len);
    let hash =
        (words[0] ^ words[3].rotate_left(29) ^ len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    Some(((hash >> 56) as usize % RECENT_RUNS, words))
}

impl RecentRun {
    /// Whether this slot holds `run` of message `message` (`words` as
    /// [`recent_slot`] gives them).
    #[inline(always)]
    fn holds(&self, message: u32, run: &[u8], words: [u64; 4]) -> bool {
        let len = run.len();
        let held = end_words(&self.bytes, len);
        // Compared word by word, in registers: an array compare loads them back as
        // wider words, which waits for the stores to drain.
        let differ = (held[0] ^ words[0])
            | (held[1] ^ words[1])
            | (held[2] ^ words[2])
            | (held[3] ^ words[3]);
        self.message == message && self.len as usize == len && differ == 0
    }
}

impl LabelRuns {
    /// Forgets every run (before the samples of another message).
    pub fn clear(&mut self) {
        self.ids.clear();
        self.message = self.message.wrapping_add(1);
        if self.message == 0 || self.recent.is_empty() {
            self.recent = vec![RecentRun::default(); RECENT_RUNS];
            self.message = 1;
        }
    }

    /// Remembers the labels of the sample just read (when [`SampleBuf::run_read`]) as
    /// naming set `set`.
    pub fn remember(&mut self, set: u32) {
        self.ids.insert(self.pending.clone(), set);
    }

    /// The label set of the run of encoded labels `run`, when met before.
    #[inline(always)]
    fn find(&mut self, run: &[u8]) -> Option<u32> {
        let Some((slot, words)) = recent_slot(run) else {
            return self.ids.get(run).copied();
        };
        let message = self.message;
        let recent = self.recent.get_mut(slot)?;
        if recent.holds(message, run, words) {
            return Some(recent.set);
        }
        let set = *self.ids.get(run)?;
        let mut bytes = [0; 32];
        bytes.get_mut(..run.len())?.copy_from_slice(run);
        *recent = RecentRun {
            message,
            len: run.len() as u32,
            set,
            bytes,
        };
        Some(set)
    }
}

/// Every sample of a message, as [`Tables::read_samples`] reads them: the columns
/// (stacks of dense location indices, or empty stacks), and the distinct label sets
/// by the message's string ids (entry 0 the empty set), which the columns' label set
/// ids index. Reused from message to message.
#[derive(Debug, Default)]
pub(crate) struct ReadSamples {
    pub samples: Samples,
    pub label_sets: Vec<Vec<Label>>,
    set_ids: FxHashMap<Vec<Label>, u32>,
    runs: LabelRuns,
    sample: SampleBuf,
}

/// The tables of a message as the wire gave them, before their references are
/// checked: kept by [`Tables::parse_with`]'s callers so that their room is reused.
#[derive(Debug, Default)]
pub(crate) struct RawTables {
    /// Where each string lies in the message, checked once all are known.
    string_spans: Vec<Range<usize>>,
    functions: Vec<RawFunction>,
    locations: Vec<RawLocation>,
    /// The lines of every location, in order.
    lines: Vec<RawLine>,
}

/// A message field as the wire gave it, before its references are checked.
#[derive(Default)]
struct RawMapping {
    id: u64,
    memory_start: u64,
    memory_limit: u64,
    file_offset: u64,
    filename: i64,
    build_id: i64,
    flags: u8,
}

#[derive(Debug, Default)]
struct RawFunction {
    id: u64,
    name: i64,
    system_name: i64,
    filename: i64,
    start_line: i64,
}

#[derive(Debug, Default)]
struct RawLocation {
    id: u64,
    mapping_id: u64,
    address: u64,
    is_folded: bool,
    lines: Range<usize>,
}

/// (function id, line, column) of a location's line, before the id is checked.
type RawLine = (u64, i64, i64);

/// Calls `f` on every field of `message`.
#[inline(always)]
fn fields<'a>(
    message: &'a [u8],
    mut f: impl FnMut(Field<'a>) -> Result<(), Malformed>,
) -> Result<(), Malformed> {
    let mut pos = 0;
    while pos < message.len() {
        f(next_field(message, &mut pos)?)?;
    }
    Ok(())
}

/// The value of a VARINT field.
#[inline(always)]
fn int(field: &Field<'_>) -> Result<u64, Malformed> {
    match field {
        Field::Varint(_, v) => Ok(*v),
        _ => Err(Malformed::WrongWireType),
    }
}

/// The payload of a LEN field.
#[inline(always)]
fn bytes<'a>(field: &Field<'a>) -> Result<&'a [u8], Malformed> {
    match field {
        Field::Bytes(_, b) => Ok(b),
        _ => Err(Malformed::WrongWireType),
    }
}

fn utf8(b: &[u8]) -> Result<&str, Malformed> {
    std::str::from_utf8(b).map_err(|_| Malformed::NotUtf8)
}

/// The strings at `spans` of `body`, each checked to be UTF-8. The table is one run of
/// fields at the end of the message, as every writer lays it out: checking the run
/// at once and slicing it at the strings' bounds costs far less than a check per
/// string; any string the run's check does not vouch for is checked alone.
fn checked_strings<'a>(body: &'a [u8], spans: &[Range<usize>]) -> Result<Vec<&'a str>, Malformed> {
    let run = match (spans.first(), spans.last()) {
        (Some(first), Some(last)) => body
            .get(first.start..last.end)
            .and_then(|b| std::str::from_utf8(b).ok())
            .map(|run| (first.start, run)),
        _ => None,
    };
    let mut strings = Vec::with_capacity(spans.len());
    for span in spans {
        let string = run
            .and_then(|(at, run)| run.get(span.start - at..span.end - at))
            .map_or_else(|| utf8(&body[span.clone()]), Ok)?;
        strings.push(string);
    }
    Ok(strings)
}

/// Calls `f` with `first`, the payload of a LEN field `number` of `body` read up to
/// `*pos`, then with each field `number` that follows it, up to the first other field.
/// Writers put the entries of each table one after another: the next is found by its
/// key's one byte, with no dispatch on the field (on 200 of the 2,000-sample day's
/// files, reading the tables took a sixth fewer instructions).
#[inline(always)]
fn run_of<'a>(
    body: &'a [u8],
    pos: &mut usize,
    number: u8,
    first: &'a [u8],
    mut f: impl FnMut(&'a [u8]) -> Result<(), Malformed>,
) -> Result<(), Malformed> {
    let mut entry = first;
    loop {
        f(entry)?;
        match expect_bytes(body, pos, number)? {
            Some(next) => entry = next,
            None => return Ok(()),
        }
    }
}

/// Reads a ValueType message into `(type, unit)`, field by field over what is there.
fn value_type(message: &[u8], into: &mut (i64, i64)) -> Result<(), Malformed> {
    fields(message, |field| {
        match field.number() {
            1 => into.0 = int(&field)? as i64,
            2 => into.1 = int(&field)? as i64,
            _ => {}
        }
        Ok(())
    })
}

fn mapping(message: &[u8]) -> Result<RawMapping, Malformed> {
    let mut m = RawMapping::default();
    fields(message, |field| {
        match field.number() {
            1 => m.id = int(&field)?,
            2 => m.memory_start = int(&field)?,
            3 => m.memory_limit = int(&field)?,
            4 => m.file_offset = int(&field)?,
            5 => m.filename = int(&field)? as i64,
            6 => m.build_id = int(&field)? as i64,
            n @ 7..=10 => {
                let bit = 1 << (n - 7);
                if int(&field)? != 0 {
                    m.flags |= bit;
                } else {
                    m.flags &= !bit;
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(m)
}

fn function(message: &[u8]) -> Result<RawFunction, Malformed> {
    let mut f = RawFunction::default();
    let mut pos = 0;
    if let Some(v) = expect_varint(message, &mut pos, 1)? {
        f.id = v;
    }
    // String indices and lines: one byte as often as two.
    for (number, field) in (2..).zip([
        &mut f.name,
        &mut f.system_name,
        &mut f.filename,
        &mut f.start_line,
    ]) {
        if let Some(v) = expect_mixed(message, &mut pos, number)? {
            *field = v as i64;
        }
    }
    fields(&message[pos..], |field| {
        match field.number() {
            1 => f.id = int(&field)?,
            2 => f.name = int(&field)? as i64,
            3 => f.system_name = int(&field)? as i64,
            4 => f.filename = int(&field)? as i64,
            5 => f.start_line = int(&field)? as i64,
            _ => {}
        }
        Ok(())
    })?;
    Ok(f)
}

fn location(message: &[u8], lines: &mut Vec<RawLine>) -> Result<RawLocation, Malformed> {
    let mut l = RawLocation {
        lines: lines.len()..lines.len(),
        ..RawLocation::default()
    };
    let mut pos = 0;
    for (number, field) in (1..).zip([&mut l.id, &mut l.mapping_id]) {
        if let Some(v) = expect_varint(message, &mut pos, number)? {
            *field = v;
        }
    }
    if let Some(v) = expect_wide(message, &mut pos, 3)? {
        l.address = v;
    }
    while let Some(line) = expect_bytes(message, &mut pos, 4)? {
        lines.push(read_line(line)?);
    }
    fields(&message[pos..], |field| {
        match field.number() {
            1 => l.id = int(&field)?,
            2 => l.mapping_id = int(&field)?,
            3 => l.address = int(&field)?,
            4 => lines.push(read_line(bytes(&field)?)?),
            5 => l.is_folded = int(&field)? != 0,
            _ => {}
        }
        Ok(())
    })?;
    l.lines.end = lines.len();
    Ok(l)
}

/// Reads a Line message.
#[inline(always)]
fn read_line(message: &[u8]) -> Result<RawLine, Malformed> {
    let mut line: RawLine = (0, 0, 0);
    let mut pos = 0;
    // Function ids and lines: one byte as often as two.
    if let Some(v) = expect_mixed(message, &mut pos, 1)? {
        line.0 = v;
    }
    if let Some(v) = expect_mixed(message, &mut pos, 2)? {
        line.1 = v as i64;
    }
    if let Some(v) = expect_varint(message, &mut pos, 3)? {
        line.2 = v as i64;
    }
    fields(&message[pos..], |f| {
        match f.number() {
            1 => line.0 = int(&f)?,
            2 => line.1 = int(&f)? as i64,
            3 => line.2 = int(&f)? as i64,
            _ => {}
        }
        Ok(())
    })?;
    Ok(line)
}

/// The `Profile` message `body` written into `out` with every string that is not
/// UTF-8 (of the string table, and the doc URL) made UTF-8, each invalid sequence
/// replaced by U+FFFD, as `go tool pprof` shows such strings; every other field is
/// copied as it is.
fn with_lossy_strings(body: &[u8], out: &mut Vec<u8>) -> Result<(), Malformed> {
    out.clear();
    let mut pos = 0;
    while pos < body.len() {
        let start = pos;
        match next_field(body, &mut pos)? {
            Field::Bytes(n @ (6 | 15), text) if std::str::from_utf8(text).is_err() => {
                put_bytes(out, n, String::from_utf8_lossy(text).as_bytes());
            }
            _ => out.extend_from_slice(&body[start..pos]),
        }
    }
    Ok(())
}

impl<'a> Tables<'a> {
    /// [`Tables::parse_with`], but a message whose strings are not all UTF-8 is read
    /// as [`with_lossy_strings`] writes it into `spare` (pprof reads any bytes, and a
    /// label value taken from a request need not be UTF-8): the tables, and the
    /// message they were read from, whose samples the caller then reads.
    pub fn parse_lossy(
        body: &'a [u8],
        raw: &mut RawTables,
        spare: &'a mut Vec<u8>,
    ) -> Result<(Self, &'a [u8]), ProfileError> {
        match Self::parse_with(body, raw) {
            Err(e) if e == ProfileError::from(Malformed::NotUtf8) => {
                with_lossy_strings(body, spare)?;
                let spare: &'a [u8] = spare;
                Self::parse_with(spare, raw).map(|tables| (tables, spare))
            }
            parsed => parsed.map(|tables| (tables, body)),
        }
    }

    /// Reads and checks every table of the `Profile` message `body` (its samples are
    /// read later, one by one, with [`Tables::read_sample_with`]), with the tables as read
    /// kept in `raw`, whose room is reused from one message to the next.
    pub fn parse_with(body: &'a [u8], raw: &mut RawTables) -> Result<Self, ProfileError> {
        let RawTables {
            string_spans,
            functions,
            locations,
            lines,
        } = raw;
        string_spans.clear();
        functions.clear();
        locations.clear();
        lines.clear();
        let mut sample_types = Vec::new();
        let mut period_type = (0i64, 0i64);
        let mut scalars = [0i64; 16];
        let mut comments = Vec::new();
        let mut doc_url_text = None;
        let mut mappings = Vec::new();
        // The bytes from the first sample field to the last, and whether other fields
        // lie between them.
        let mut sample_run: Option<Range<usize>> = None;
        let mut samples_apart = false;
        let mut pos = 0;
        while pos < body.len() {
            let start = pos;
            let field = next_field(body, &mut pos)?;
            match field.number() {
                // A table's entries come one after another, read as a run.
                2 => {
                    run_of(body, &mut pos, 2, bytes(&field)?, |_| Ok(()))?;
                    match &mut sample_run {
                        Some(run) if run.end == start => run.end = pos,
                        Some(_) => samples_apart = true,
                        None => sample_run = Some(start..pos),
                    }
                }
                1 => {
                    let mut t = (0, 0);
                    value_type(bytes(&field)?, &mut t)?;
                    sample_types.push(t);
                }
                3 => mappings.push(mapping(bytes(&field)?)?),
                4 => run_of(body, &mut pos, 4, bytes(&field)?, |b| {
                    locations.push(location(b, lines)?);
                    Ok(())
                })?,
                5 => run_of(body, &mut pos, 5, bytes(&field)?, |b| {
                    functions.push(function(b)?);
                    Ok(())
                })?,
                6 => run_of(body, &mut pos, 6, bytes(&field)?, |b| {
                    let start = b.as_ptr() as usize - body.as_ptr() as usize;
                    string_spans.push(start..start + b.len());
                    Ok(())
                })?,
                n @ (7..=10 | 12 | 14) => scalars[n as usize] = int(&field)? as i64,
                11 => value_type(bytes(&field)?, &mut period_type)?,
                13 => repeated(field, &mut comments)?,
                // pprof's doc_url is a string table index; a string in its place (as
                // flint wrote it before) is taken as it is.
                15 => match bytes(&field) {
                    Ok(b) => doc_url_text = Some(utf8(b)?),
                    Err(_) => scalars[15] = int(&field)? as i64,
                },
                _ => {}
            }
        }
        let mut strings = checked_strings(body, string_spans)?;
        if strings.is_empty() {
            strings.push("");
        }
        if !strings[0].is_empty() {
            return Err(ProfileError::Invalid(
                "string table entry 0 is not empty".into(),
            ));
        }
        // Dense indices are 32-bit, and so are the offsets of every location's frames
        // (at most one per line or per location without lines).
        if u32::try_from(strings.len()).is_err()
            || u32::try_from(locations.len() + lines.len()).is_err()
        {
            return Err(ProfileError::Invalid("tables are too large".into()));
        }
        let s = Strings(strings.len());
        let checked_type = |(kind, unit): (i64, i64), what: &str| -> Result<_, ProfileError> {
            Ok(ValueType {
                kind: s.get(kind, &|| what.to_string())?,
                unit: s.get(unit, &|| what.to_string())?,
            })
        };
        let sample_types = sample_types
            .into_iter()
            .map(|t| checked_type(t, "a sample type"))
            .collect::<Result<Vec<_>, _>>()?;
        let period_type = checked_type(period_type, "the period type")?;

        let mapping_ids = IdIndex::new(mappings.iter().map(|m| m.id), "mapping")?;
        let mappings = mappings
            .iter()
            .map(|m| {
                let who = || format!("mapping {}", m.id);
                Ok(Mapping {
                    memory_start: m.memory_start,
                    memory_limit: m.memory_limit,
                    file_offset: m.file_offset,
                    filename: s.get(m.filename, &who)?,
                    build_id: s.get(m.build_id, &who)?,
                    flags: m.flags,
                })
            })
            .collect::<Result<Vec<_>, ProfileError>>()?;

        let function_ids = IdIndex::new(functions.iter().map(|f| f.id), "function")?;
        let functions = checked_functions(functions, &s)?;
        let location_ids = IdIndex::new(locations.iter().map(|l| l.id), "location")?;
        let (locations, lines) = checked_locations(locations, lines, &mapping_ids, &function_ids)?;
        let comments = comments
            .into_iter()
            .map(|c| s.get(c, &|| "a comment".to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let doc_url = match doc_url_text {
            Some(text) => text,
            None => strings[s.get(scalars[15], &|| "doc_url".into())? as usize],
        };
        Ok(Tables {
            default_sample_type: s.get(scalars[14], &|| "default_sample_type".into())?,
            drop_frames: s.get(scalars[7], &|| "drop_frames".into())?,
            keep_frames: s.get(scalars[8], &|| "keep_frames".into())?,
            time_nanos: scalars[9],
            duration_nanos: scalars[10],
            period: scalars[12],
            strings,
            sample_types,
            period_type,
            comments,
            doc_url,
            mappings,
            functions,
            locations,
            lines,
            location_ids,
            sample_fields: match sample_run {
                Some(run) if !samples_apart => run,
                _ => 0..body.len(),
            },
        })
    }

    /// Whether two mappings are one binary to pprof ([`crate::normalize::mapping_key`]):
    /// pprof then moves locations between them as it reads the profile.
    pub fn has_equal_mappings(&self) -> bool {
        let keys: Vec<_> = (self.mappings.iter())
            .map(|m| crate::normalize::mapping_key(m, |id| self.str(id)))
            .collect();
        // Most profiles have a few mappings: comparing each pair costs less than hashing.
        if keys.len() <= 32 {
            return (1..keys.len()).any(|i| keys[..i].contains(&keys[i]));
        }
        let mut seen = rustc_hash::FxHashSet::default();
        !keys.into_iter().all(|k| seen.insert(k))
    }

    /// The string with index `id` (checked when the tables were read).
    pub fn str(&self, id: StrId) -> &'a str {
        self.strings.get(id as usize).copied().unwrap_or("")
    }

    /// The lines of location `l`, innermost first.
    pub fn lines_of(&self, l: &TableLocation) -> &[Line] {
        &self.lines[l.lines.clone()]
    }

    /// Calls `f` with the encoded body of every sample of `body`, the message these
    /// tables were read from.
    pub fn for_each_sample(
        &self,
        body: &[u8],
        f: impl FnMut(&[u8]) -> Result<(), ProfileError>,
    ) -> Result<(), ProfileError> {
        super::for_each_sample(body.get(self.sample_fields.clone()).unwrap_or(body), f)
    }

    /// Reads sample number `i` from its wire bytes into `buf`, checking its location
    /// ids, its number of values and its label strings. With `runs` (the label runs
    /// met so far in this message, and the sets they name), labels whose bytes are
    /// known are not read again ([`SampleBuf::known`]).
    pub fn read_sample_with(
        &self,
        i: usize,
        sample: &[u8],
        buf: &mut SampleBuf,
        runs: Option<(&mut LabelRuns, &[Vec<Label>])>,
    ) -> Result<(), ProfileError> {
        buf.locations.clear();
        buf.labels.clear();
        buf.known = None;
        buf.run_read = false;
        let ids = &self.location_ids;
        let mut locations = Locations {
            dense_len: if ids.dense { ids.len as u64 } else { 0 },
            ids,
            out: &mut buf.locations,
            unknown: None,
        };
        let mut labels = CheckedLabels {
            strings: Strings(self.strings.len()),
            out: &mut buf.labels,
            bad: None,
            runs,
            known: &mut buf.known,
            run_read: &mut buf.run_read,
        };
        read_sample(sample, &mut locations, &mut buf.values, &mut labels)?;
        let (unknown, bad) = (locations.unknown, labels.bad);
        let n_types = self.sample_types.len();
        if buf.values.len() != n_types {
            return Err(ProfileError::Invalid(format!(
                "sample {i} has {} values, but the profile has {n_types} sample types",
                buf.values.len()
            )));
        }
        if let Some(id) = unknown {
            ids.get(id, || format!("sample {i}"))?;
        }
        if let Some(index) = bad {
            Strings(self.strings.len()).get(index, &|| format!("a label of sample {i}"))?;
        }
        Ok(())
    }
}

impl Tables<'_> {
    /// Reads sample number `i` as [`Tables::read_sample_with`] does, except that when
    /// its location ids come first, in one packed field, and the message's ids are
    /// 1..=n (as writers lay them out), they are left unread in `buf` and their bytes
    /// returned, to be read while counted ([`PackedStack`]). Should they turn out
    /// unreadable, the sample read again with [`Tables::read_sample_with`] gives the
    /// error.
    pub fn read_sample_deferred<'s>(
        &self,
        i: usize,
        sample: &'s [u8],
        buf: &mut SampleBuf,
        mut runs: Option<(&mut LabelRuns, &[Vec<Label>])>,
    ) -> Result<Option<&'s [u8]>, ProfileError> {
        if !self.location_ids.dense {
            self.read_sample_with(i, sample, buf, runs)?;
            return Ok(None);
        }
        if let Some((packed, set)) = self.read_known_layout(sample, buf, runs.as_mut()) {
            buf.locations.clear();
            buf.labels.clear();
            buf.known = set;
            buf.run_read = false;
            return Ok(Some(packed));
        }
        let mut pos = 0;
        if let Ok(Some(packed)) = expect_bytes(sample, &mut pos, 1) {
            let rest = sample.get(pos..).unwrap_or_default();
            let reborrowed = runs.as_mut().map(|(r, sets)| (&mut **r, *sets));
            // The rest holding an error or ids of its own, the whole sample is read,
            // so that errors come as reading it whole orders them.
            if self.read_sample_with(i, rest, buf, reborrowed).is_ok() && buf.locations.is_empty() {
                return Ok(Some(packed));
            }
        }
        self.read_sample_with(i, sample, buf, runs)?;
        Ok(None)
    }

    /// Hands the location ids `packed` that [`Tables::read_sample_deferred`] left
    /// unread in sample `i` (whose bytes are `bytes`) to `read`, each with its entry in
    /// `by_location` (one per location of the message), then reads what `read` left:
    /// every id is checked, and unreadable ones give the error reading the sample
    /// whole gives.
    #[inline(always)]
    pub fn read_deferred_ids<T: Copy>(
        &self,
        (i, bytes, packed): (usize, &[u8], &[u8]),
        by_location: &[T],
        buf: &mut SampleBuf,
        read: impl FnOnce(&mut PackedStack<'_, T>),
    ) -> Result<(), ProfileError> {
        let mut ids = PackedStack::new(packed, by_location);
        read(&mut ids);
        if ids.read_to_end() {
            Ok(())
        } else {
            Err(self.unreadable_stack(i, bytes, buf))
        }
    }

    /// The error of sample `i`, whose bytes are `bytes`, when the location ids
    /// [`Tables::read_sample_deferred`] left unread turned out unreadable: what
    /// reading it whole says.
    #[cold]
    fn unreadable_stack(&self, i: usize, bytes: &[u8], buf: &mut SampleBuf) -> ProfileError {
        match self.read_sample_with(i, bytes, buf, None) {
            Err(e) => e,
            Ok(()) => ProfileError::Invalid(format!("sample {i} has unreadable location ids")),
        }
    }

    /// Reads the sample `sample` when it is laid out as most are: its packed location
    /// ids, then its packed values (one per sample type), then labels whose bytes are
    /// those of a label run read before (and so known to be labels whose strings
    /// exist), or none. Its values go to `buf`; returned are its location ids, unread,
    /// and the label set of its run. `None` when the sample is laid out otherwise,
    /// for [`Tables::read_sample_with`] to read.
    #[inline(always)]
    fn read_known_layout<'s>(
        &self,
        sample: &'s [u8],
        buf: &mut SampleBuf,
        runs: Option<&mut (&mut LabelRuns, &[Vec<Label>])>,
    ) -> Option<(&'s [u8], Option<u32>)> {
        let mut pos = 0;
        let packed = expect_bytes(sample, &mut pos, 1).ok()??;
        let values_len = expect_bytes(sample, &mut pos, 2).ok()??.len();
        let labels_at = pos;
        pos -= values_len;
        buf.values.clear();
        while pos < labels_at {
            buf.values
                .push(super::wide_varint(sample, &mut pos).ok()? as i64);
        }
        if pos != labels_at || buf.values.len() != self.sample_types.len() {
            return None;
        }
        let labels = sample.get(labels_at..)?;
        if labels.is_empty() {
            return Some((packed, None));
        }
        let set = runs?.0.find(labels)?;
        Some((packed, Some(set)))
    }

    /// Reads and checks every sample of the message `body` (whose tables these are)
    /// into `read`, replacing what it held; with `stacks` false, every stack is left
    /// empty (the location ids are still checked).
    pub fn read_samples(
        &self,
        body: &[u8],
        read: &mut ReadSamples,
        stacks: bool,
    ) -> Result<(), ProfileError> {
        let ReadSamples {
            samples,
            label_sets,
            set_ids,
            runs,
            sample,
        } = read;
        runs.clear();
        samples.stack_offsets.clear();
        samples.stack_offsets.push(0);
        samples.stack_locations.clear();
        samples.label_set.clear();
        samples.values.clear();
        samples.values.resize(self.sample_types.len(), Vec::new());
        label_sets.clear();
        label_sets.push(Vec::new());
        set_ids.clear();
        set_ids.insert(Vec::new(), 0);
        if stacks {
            // Every location id takes at least one byte: the body's size bounds their
            // number. Capacity never written is never touched: address space only
            // (and where the system refuses that much, the stacks grow as read).
            let expected = body.len() / 64;
            samples.stack_offsets.reserve(expected);
            let _ = samples.stack_locations.try_reserve_exact(body.len());
            samples.label_set.reserve(expected);
            for column in &mut samples.values {
                column.reserve(expected);
            }
        }
        // A table of one (empty) entry per location, to check deferred ids against.
        let locations = vec![(); self.locations.len()];
        self.for_each_sample(body, |bytes| {
            let i = samples.len();
            let known_runs = Some((&mut *runs, label_sets.as_slice()));
            match self.read_sample_deferred(i, bytes, sample, known_runs)? {
                Some(packed) => {
                    self.read_deferred_ids((i, bytes, packed), &locations, sample, |ids| {
                        if stacks {
                            for (l, ()) in ids {
                                samples.stack_locations.push(l);
                            }
                        }
                    })?;
                }
                None if stacks => samples.stack_locations.extend_from_slice(&sample.locations),
                None => {}
            }
            let end = u32::try_from(samples.stack_locations.len())
                .map_err(|_| ProfileError::Invalid("too many stack frames in total".into()))?;
            samples.stack_offsets.push(end);
            for (column, v) in samples.values.iter_mut().zip(&sample.values) {
                column.push(*v);
            }
            let set = match (sample.known, set_ids.get(sample.labels.as_slice())) {
                (Some(set), _) | (None, Some(&set)) => set,
                (None, None) => {
                    let set = label_sets.len() as u32;
                    label_sets.push(sample.labels.clone());
                    set_ids.insert(sample.labels.clone(), set);
                    set
                }
            };
            if sample.run_read {
                runs.remember(set);
            }
            samples.label_set.push(set);
            Ok(())
        })
    }
}

/// Turns a sample's location ids into dense indices as they are read.
struct Locations<'b> {
    /// The number of locations when their ids are 1..=n (kept here, by value, so
    /// that the loop need not load it again after every store), else 0.
    dense_len: u64,
    ids: &'b IdIndex,
    out: &'b mut Vec<LocationId>,
    /// The first id that names no location, reported after the wire checks.
    unknown: Option<u64>,
}

impl Varints for Locations<'_> {
    #[inline(always)]
    fn push(&mut self, id: u64) {
        // One push for both kinds of id: with two push sites, `flint top` of the
        // 2,000-sample day took 3% longer (hyperfine, same run).
        let loc = if id.wrapping_sub(1) < self.dense_len {
            (id - 1) as LocationId
        } else if let Some(&loc) = self.ids.map.get(&id) {
            loc
        } else {
            self.unknown.get_or_insert(id);
            return;
        };
        self.out.push(loc);
    }
}

/// Checks a sample's label string indices as the labels are read, keeping the labels
/// as [`Label`]s.
struct CheckedLabels<'b> {
    strings: Strings,
    out: &'b mut Vec<Label>,
    /// The first index (of key, str and unit, in that order, label by label) that
    /// names no string, reported after the wire checks.
    bad: Option<i64>,
    /// The label sets of the message met so far (by their bytes) and the sets.
    runs: Option<(&'b mut LabelRuns, &'b [Vec<Label>])>,
    /// See [`SampleBuf::known`].
    known: &'b mut Option<u32>,
    /// See [`SampleBuf::run_read`].
    run_read: &'b mut bool,
}

impl Labels for CheckedLabels<'_> {
    #[inline(always)]
    fn known(&mut self, encoded: &[u8]) -> bool {
        let Some((runs, _)) = &mut self.runs else {
            return false;
        };
        if let Some(set) = runs.find(encoded) {
            *self.known = Some(set);
            return true;
        }
        runs.pending.clear();
        runs.pending.extend_from_slice(encoded);
        *self.run_read = true;
        false
    }

    fn push_apart(&mut self, label: [i64; 4]) {
        // The run no longer names the sample's set alone; a known run's labels are
        // needed after all.
        *self.run_read = false;
        if let Some(set) = self.known.take()
            && let Some((_, sets)) = &self.runs
        {
            self.out
                .extend_from_slice(sets.get(set as usize).map_or(&[], Vec::as_slice));
        }
        self.push(label);
    }

    #[inline(always)]
    fn push(&mut self, [key, str, num, num_unit]: [i64; 4]) {
        let fits = |index: i64| self.strings.holds(index);
        if fits(key) && fits(str) && fits(num_unit) {
            self.out.push(Label {
                key: key as StrId,
                str: str as StrId,
                num,
                num_unit: num_unit as StrId,
            });
        } else if self.bad.is_none() {
            self.bad = [key, str, num_unit].into_iter().find(|i| !fits(*i));
        }
    }
}

/// The functions with their string indices checked. When every index is in the
/// table (as every writer leaves them), one conversion with no check per index.
fn checked_functions(raw: &[RawFunction], s: &Strings) -> Result<Vec<Function>, ProfileError> {
    if raw
        .iter()
        .all(|f| s.holds(f.name) && s.holds(f.system_name) && s.holds(f.filename))
    {
        return Ok(raw
            .iter()
            .map(|f| Function {
                name: f.name as StrId,
                system_name: f.system_name as StrId,
                filename: f.filename as StrId,
                start_line: f.start_line,
            })
            .collect());
    }
    raw.iter()
        .map(|f| {
            let who = || format!("function {}", f.id);
            Ok(Function {
                name: s.get(f.name, &who)?,
                system_name: s.get(f.system_name, &who)?,
                filename: s.get(f.filename, &who)?,
                start_line: f.start_line,
            })
        })
        .collect()
}

/// The locations and their lines with mapping and function ids turned into dense
/// indices. When every referenced id is one of 1..n (as every writer leaves them), one
/// conversion with no look-up per reference.
fn checked_locations(
    raw: &[RawLocation],
    raw_lines: &[RawLine],
    mapping_ids: &IdIndex,
    function_ids: &IdIndex,
) -> Result<(Vec<TableLocation>, Vec<Line>), ProfileError> {
    if raw
        .iter()
        .all(|l| l.mapping_id == 0 || mapping_ids.dense_index(l.mapping_id).is_some())
        && raw_lines
            .iter()
            .all(|&(f, _, _)| function_ids.dense_index(f).is_some())
    {
        // Each location's lines are the next run of `raw_lines`, as read.
        let locations = raw
            .iter()
            .map(|l| TableLocation {
                mapping: l.mapping_id.checked_sub(1).map(|m| m as MappingId),
                address: l.address,
                is_folded: l.is_folded,
                lines: l.lines.clone(),
            })
            .collect();
        let lines = raw_lines
            .iter()
            .map(|&(f, line, column)| Line {
                function: (f - 1) as u32,
                line,
                column,
            })
            .collect();
        return Ok((locations, lines));
    }
    let mut lines = Vec::with_capacity(raw_lines.len());
    // A loop into room made first: collecting the locations as results (with the
    // lines pushed on the side) took 2.4% more of `flint top`'s reading.
    let mut locations = Vec::with_capacity(raw.len());
    for l in raw {
        let who = || format!("location {}", l.id);
        let mapping = match l.mapping_id {
            0 => None,
            id => Some(mapping_ids.get(id, who)?),
        };
        let start = lines.len();
        for &(function, line, column) in &raw_lines[l.lines.clone()] {
            lines.push(Line {
                function: function_ids.get(function, who)?,
                line,
                column,
            });
        }
        locations.push(TableLocation {
            mapping,
            address: l.address,
            is_folded: l.is_folded,
            lines: start..lines.len(),
        });
    }
    Ok((locations, lines))
}

/// Maps pprof's arbitrary ids to dense indices, checking for duplicates and zero.
#[derive(Debug)]
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

    /// The index of `id` when ids are 1..=n: `id - 1`, if it names one.
    #[inline]
    fn dense_index(&self, id: u64) -> Option<u32> {
        (self.dense && id.wrapping_sub(1) < self.len as u64).then(|| (id - 1) as u32)
    }

    /// The index of `id`; `user` names the referrer in the error, built only on failure.
    fn get(&self, id: u64, user: impl Fn() -> String) -> Result<u32, ProfileError> {
        let found = if self.dense {
            self.dense_index(id)
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
#[derive(Debug, Clone, Copy)]
struct Strings(usize);

impl Strings {
    /// Whether `index` names a string of the table.
    #[inline(always)]
    fn holds(self, index: i64) -> bool {
        // A negative index is above every table size as u64.
        (index as u64) < self.0 as u64
    }

    fn get(&self, index: i64, user: &dyn Fn() -> String) -> Result<StrId, ProfileError> {
        if self.holds(index) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{put_bytes, put_varint_field};

    /// A message of `fields`, each `(number, Ok(varint) | Err(payload))`, in that order.
    fn message(fields: &[(u64, Result<u64, &[u8]>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (number, value) in fields {
            match value {
                Ok(v) => put_varint_field(&mut out, *number, *v),
                Err(bytes) => put_bytes(&mut out, *number, bytes),
            }
        }
        out
    }

    fn profile(location: &[u8], function: &[u8], sample: &[u8]) -> Vec<u8> {
        let strings: [&[u8]; 3] = [b"", b"main", b"main.go"];
        let sample_type = message(&[(1, Ok(1)), (2, Ok(2))]);
        let mut fields = vec![
            (1, Err(&sample_type[..])),
            (2, Err(sample)),
            (4, Err(location)),
            (5, Err(function)),
        ];
        fields.extend(strings.map(|s| (6, Err(s))));
        message(&fields)
    }

    #[test]
    fn fields_out_of_order_or_repeated_read_as_in_field_order() {
        let line = message(&[(1, Ok(1)), (2, Ok(42))]);
        let line_backwards = message(&[(2, Ok(42)), (1, Ok(1))]);
        let in_order = profile(
            &message(&[(1, Ok(1)), (3, Ok(0x1000)), (4, Err(&line))]),
            &message(&[(1, Ok(1)), (2, Ok(1)), (4, Ok(2)), (5, Ok(10))]),
            &message(&[(1, Err(&[1])), (2, Err(&[5])), (3, Err(&[8, 1, 16, 2]))]),
        );
        // Backwards, with scalars given twice (the last one counts), the location id
        // unpacked and the label's fields reversed.
        let shuffled = profile(
            &message(&[
                (4, Err(&line_backwards)),
                (3, Ok(0x2000)),
                (1, Ok(7)),
                (3, Ok(0x1000)),
                (1, Ok(1)),
            ]),
            &message(&[(5, Ok(10)), (4, Ok(2)), (2, Ok(1)), (1, Ok(1))]),
            &message(&[(3, Err(&[16, 2, 8, 1])), (2, Err(&[5])), (1, Ok(1))]),
        );
        let read = |bytes: &[u8]| {
            let tables =
                Tables::parse_with(bytes, &mut RawTables::default()).expect("valid tables");
            let mut samples = Vec::new();
            super::super::for_each_sample(bytes, |s| {
                let mut buf = SampleBuf::default();
                tables.read_sample_with(0, s, &mut buf, None)?;
                samples.push((buf.locations, buf.values, buf.labels));
                Ok(())
            })
            .expect("valid samples");
            let location = tables.locations[0].clone();
            (
                (location.address, tables.lines_of(&location).to_vec()),
                tables.functions.clone(),
                samples,
            )
        };
        let expected = read(&in_order);
        assert_eq!(
            expected.0,
            (
                0x1000,
                vec![Line {
                    function: 0,
                    line: 42,
                    column: 0
                }]
            )
        );
        assert_eq!(expected.1[0].filename, 2);
        assert_eq!(read(&shuffled), expected);
    }

    #[test]
    fn tables_read_the_same_in_runs_or_interleaved() {
        let sample_type = message(&[(1, Ok(1)), (2, Ok(2))]);
        let line = |f: u64| message(&[(1, Ok(f)), (2, Ok(f * 10))]);
        let (line1, line2) = (line(1), line(2));
        let location = |id: u64, l: &[u8]| message(&[(1, Ok(id)), (3, Ok(id << 12)), (4, Err(l))]);
        let (loc1, loc2) = (location(1, &line1), location(2, &line2));
        let function = |id: u64| message(&[(1, Ok(id)), (2, Ok(id)), (4, Ok(3))]);
        let (fn1, fn2) = (function(1), function(2));
        let sample = |ids: &[u8]| message(&[(1, Err(ids)), (2, Err(&[5]))]);
        let (s1, s2) = (sample(&[1, 2]), sample(&[2]));
        let strings: [&[u8]; 4] = [b"", b"main", b"work", b"main.go"];
        let grouped = message(&[
            (1, Err(&sample_type)),
            (2, Err(&s1)),
            (2, Err(&s2)),
            (4, Err(&loc1)),
            (4, Err(&loc2)),
            (5, Err(&fn1)),
            (5, Err(&fn2)),
            (6, Err(strings[0])),
            (6, Err(strings[1])),
            (6, Err(strings[2])),
            (6, Err(strings[3])),
        ]);
        // Every run cut by another table's entry or a scalar.
        let interleaved = message(&[
            (6, Err(strings[0])),
            (4, Err(&loc1)),
            (6, Err(strings[1])),
            (2, Err(&s1)),
            (5, Err(&fn1)),
            (9, Ok(7)),
            (2, Err(&s2)),
            (6, Err(strings[2])),
            (1, Err(&sample_type)),
            (5, Err(&fn2)),
            (4, Err(&loc2)),
            (6, Err(strings[3])),
        ]);
        let read = |bytes: &[u8]| {
            let t = Tables::parse_with(bytes, &mut RawTables::default()).expect("valid tables");
            let mut stacks = Vec::new();
            super::super::for_each_sample(bytes, |s| {
                let mut buf = SampleBuf::default();
                t.read_sample_with(0, s, &mut buf, None)?;
                stacks.push(buf.locations);
                Ok(())
            })
            .expect("valid samples");
            let locations: Vec<_> = (t.locations.iter())
                .map(|l| (l.address, t.lines_of(l).to_vec()))
                .collect();
            let strings: Vec<String> = t.strings.iter().map(|s| s.to_string()).collect();
            (strings, t.functions.clone(), locations, stacks)
        };
        let expected = read(&grouped);
        assert_eq!(expected.0, ["", "main", "work", "main.go"]);
        assert_eq!(expected.1.len(), 2);
        assert_eq!(expected.2[1].0, 2 << 12);
        assert_eq!(expected.3, [vec![0, 1], vec![1]]);
        assert_eq!(read(&interleaved), expected);
        // An entry cut short in the middle of a run is refused, as it is alone.
        let mut cut = grouped.clone();
        // The length of `work`, made to run past the end.
        let at = cut.len() - strings[3].len() - 2 - strings[2].len() - 1;
        assert_eq!(cut[at], 4);
        cut[at] = 0x7f;
        assert!(Tables::parse_with(&cut, &mut RawTables::default()).is_err());
    }

    /// The strings of the profiles with labels below: `k` is string 3, `v` and `w`
    /// strings 4 and 5.
    const LABELLED_STRINGS: [&[u8]; 6] = [b"", b"main", b"main.go", b"k", b"v", b"w"];

    /// The label `k` = string `value`.
    fn label_k_is(value: u64) -> Vec<u8> {
        message(&[(1, Ok(3)), (2, Ok(value))])
    }

    #[test]
    fn label_sets_found_by_their_bytes_are_the_sets_read_label_by_label() {
        let (strings, kv, kw) = (LABELLED_STRINGS, label_k_is(4), label_k_is(5));
        let numeric = message(&[(1, Ok(3)), (3, Ok(7))]);
        let sample = |fields: &[(u64, Result<u64, &[u8]>)]| message(fields);
        let (loc, value) = ((1, Err(&[1u8][..])), (2, Err(&[5u8][..])));
        let samples = [
            sample(&[loc, value, (3, Err(&kv))]),
            sample(&[loc, value, (3, Err(&kv)), (3, Err(&kw))]),
            // The same bytes again.
            sample(&[loc, value, (3, Err(&kv)), (3, Err(&kw))]),
            // The run {k=v} is known, and a label lies apart after the values.
            sample(&[(3, Err(&kv)), loc, value, (3, Err(&kw))]),
            sample(&[loc, value, (3, Err(&kv))]),
            // A run read once with a label apart is not remembered for the run alone.
            sample(&[loc, value, (3, Err(&numeric)), (9, Ok(1)), (3, Err(&kw))]),
            sample(&[loc, value, (3, Err(&numeric))]),
            sample(&[loc, value]),
            // As the Go runtime writes them: each value on its own before the
            // locations; then as pprof's library does: values on their own after them.
            sample(&[(2, Ok(5)), loc, (3, Err(&kv))]),
            sample(&[(2, Ok(5)), loc, (3, Err(&kv)), (3, Err(&kw))]),
            sample(&[loc, (2, Ok(6)), (3, Err(&kv)), (3, Err(&kw))]),
        ];
        let sample_type = message(&[(1, Ok(1)), (2, Ok(2))]);
        let line = message(&[(1, Ok(1)), (2, Ok(42))]);
        let location = message(&[(1, Ok(1)), (3, Ok(0x1000)), (4, Err(&line))]);
        let function = message(&[(1, Ok(1)), (2, Ok(1)), (4, Ok(2))]);
        let mut fields = vec![(1, Err(&sample_type[..]))];
        fields.extend(samples.iter().map(|s| (2, Err(&s[..]))));
        fields.extend([(4, Err(&location[..])), (5, Err(&function[..]))]);
        fields.extend(strings.map(|s| (6, Err(s))));
        let body = message(&fields);

        let tables = Tables::parse_with(&body, &mut RawTables::default()).expect("valid tables");
        let mut read = ReadSamples::default();
        tables
            .read_samples(&body, &mut read, true)
            .expect("valid samples");
        // Each sample's set holds the labels it has, read one by one without the runs.
        let mut one_by_one = Vec::new();
        tables
            .for_each_sample(&body, |s| {
                let mut buf = SampleBuf::default();
                tables.read_sample_with(0, s, &mut buf, None)?;
                one_by_one.push(buf.labels);
                Ok(())
            })
            .expect("valid samples");
        let sets = &read.samples.label_set;
        assert_eq!(sets.len(), samples.len());
        for (i, labels) in one_by_one.iter().enumerate() {
            assert_eq!(&read.label_sets[sets[i] as usize], labels, "sample {i}");
        }
        // The same labels make the same set, found by bytes or not.
        assert_eq!(sets[1], sets[2]);
        assert_eq!(sets[1], sets[3]);
        assert_eq!(sets[0], sets[4]);
        assert_ne!(sets[5], sets[6]);
        assert_eq!(sets[7], 0, "no labels: the empty set");
        assert_eq!(read.label_sets.len(), 5, "{:?}", read.label_sets);
        assert_eq!((sets[8], sets[9], sets[10]), (sets[0], sets[1], sets[1]));
        // Their labels lie together after the locations and values: found by their
        // bytes, as those of the first samples.
        for sample in &samples[8..] {
            let mut buf = SampleBuf::default();
            let runs = Some((&mut read.runs, read.label_sets.as_slice()));
            tables
                .read_sample_with(0, sample, &mut buf, runs)
                .expect("valid sample");
            assert!(buf.known.is_some() && buf.labels.is_empty(), "{sample:?}");
        }
    }

    #[test]
    fn label_runs_tell_apart_runs_of_every_length_and_middle() {
        let mut runs = LabelRuns::default();
        runs.clear();
        let mut all: Vec<Vec<u8>> = (1..=40u8).map(|n| (0..n).collect()).collect();
        // The same length and ends as another, with another middle.
        for len in [9u8, 16, 17, 24, 32] {
            let mut run: Vec<u8> = (0..len).collect();
            run[usize::from(len / 2)] ^= 0xff;
            all.push(run);
        }
        for (set, run) in all.iter().enumerate() {
            runs.pending = run.clone();
            runs.remember(set as u32);
        }
        // Twice: found in the map, then among the recent runs.
        for _ in 0..2 {
            for (set, run) in all.iter().enumerate() {
                assert_eq!(runs.find(run), Some(set as u32), "{run:?}");
            }
        }
        assert_eq!(runs.find(&[7; 20]), None);
        runs.clear();
        assert!(all.iter().all(|run| runs.find(run).is_none()));
    }

    #[test]
    fn samples_read_deferred_are_the_samples_read_whole() {
        let (strings, kv, kw) = (LABELLED_STRINGS, label_k_is(4), label_k_is(5));
        let packed = |values: &[u64]| {
            let mut out = Vec::new();
            for v in values {
                crate::wire::put_varint(&mut out, *v);
            }
            out
        };
        let (ids, other_ids) = (packed(&[1, 2]), packed(&[2, 1, 2]));
        let values = packed(&[3, 30_000_000]);
        let negative = packed(&[-4i64 as u64, 5]);
        let sample = |fields: &[(u64, Result<u64, &[u8]>)]| message(fields);
        let samples = [
            sample(&[
                (1, Err(&ids)),
                (2, Err(&values)),
                (3, Err(&kv)),
                (3, Err(&kw)),
            ]),
            // The same labels: the known layout.
            sample(&[
                (1, Err(&other_ids)),
                (2, Err(&values)),
                (3, Err(&kv)),
                (3, Err(&kw)),
            ]),
            // A value of ten bytes, and no labels.
            sample(&[
                (1, Err(&ids)),
                (2, Err(&negative)),
                (3, Err(&kv)),
                (3, Err(&kw)),
            ]),
            sample(&[(1, Err(&ids)), (2, Err(&values))]),
            // A known run with a field after it, and another layout.
            sample(&[
                (1, Err(&ids)),
                (2, Err(&values)),
                (3, Err(&kv)),
                (3, Err(&kw)),
                (9, Ok(1)),
            ]),
            sample(&[(2, Ok(3)), (2, Ok(4)), (1, Err(&ids)), (3, Err(&kv))]),
            // The known layout at the message's end, its last value short of 8 bytes.
            sample(&[(1, Err(&ids)), (2, Err(&packed(&[1, 2])))]),
        ];
        let sample_type = message(&[(1, Ok(1)), (2, Ok(2))]);
        let line = message(&[(1, Ok(1)), (2, Ok(42))]);
        let locations = [1, 2].map(|id| message(&[(1, Ok(id)), (3, Ok(0x1000)), (4, Err(&line))]));
        let function = message(&[(1, Ok(1)), (2, Ok(1)), (4, Ok(2))]);
        let mut fields = vec![(1, Err(&sample_type[..])), (1, Err(&sample_type[..]))];
        fields.extend(samples.iter().map(|s| (2, Err(&s[..]))));
        fields.extend(locations.iter().map(|l| (4, Err(&l[..]))));
        fields.push((5, Err(&function[..])));
        fields.extend(strings.map(|s| (6, Err(s))));
        let body = message(&fields);
        let tables = Tables::parse_with(&body, &mut RawTables::default()).expect("valid tables");

        let (mut runs, mut sets) = (LabelRuns::default(), Vec::<Vec<Label>>::new());
        runs.clear();
        let mut known_layout = Vec::new();
        for (i, sample) in samples.iter().enumerate() {
            let mut whole = SampleBuf::default();
            tables
                .read_sample_with(i, sample, &mut whole, None)
                .expect("valid sample");
            let mut buf = SampleBuf::default();
            let stack = tables
                .read_sample_deferred(i, sample, &mut buf, Some((&mut runs, sets.as_slice())))
                .expect("valid sample");
            if buf.run_read {
                runs.remember(sets.len() as u32);
                sets.push(buf.labels.clone());
            }
            let labels = match buf.known {
                Some(set) => sets[set as usize].clone(),
                None => buf.labels.clone(),
            };
            let read_stack = match stack {
                Some(packed) => {
                    known_layout.push(i);
                    let by_location = vec![(); tables.locations.len()];
                    let mut stack = PackedStack::new(packed, &by_location);
                    let read = stack.by_ref().map(|(l, ())| l).collect();
                    assert!(stack.read_to_end(), "sample {i}");
                    read
                }
                None => buf.locations.clone(),
            };
            assert_eq!(read_stack, whole.locations, "sample {i}");
            assert_eq!(buf.values, whole.values, "sample {i}");
            assert_eq!(labels, whole.labels, "sample {i}");
        }
        // Deferred stacks whenever the ids come first.
        assert_eq!(known_layout, [0, 1, 2, 3, 4, 6]);
        assert_eq!(sets.len(), 2, "{sets:?}");
        // Read at once: the ids, the values (a ten-byte one too), then a known run or
        // no labels.
        let mut runs = Some((&mut runs, sets.as_slice()));
        let at_once: Vec<usize> = (0..samples.len())
            .filter(|&i| {
                let mut buf = SampleBuf::default();
                (tables.read_known_layout(&samples[i], &mut buf, runs.as_mut())).is_some()
            })
            .collect();
        assert_eq!(at_once, [0, 1, 2, 3, 6]);
    }
}
