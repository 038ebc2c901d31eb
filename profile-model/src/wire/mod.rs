//! A small protobuf wire reader and writer for pprof: the tables of a profile read
//! borrowed from its bytes ([`tables`]), and its samples read and written with reused
//! buffers, never as one prost message with three vectors per sample (most of the time
//! and memory of decoding or encoding a large profile).

pub(crate) mod tables;

use crate::error::ProfileError;

const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;
const FIXED32: u64 = 5;

/// Why bytes are not a protobuf message: small, so that the readers' results fit in
/// registers (a [`ProfileError`] per varint made reading several times slower).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    TruncatedVarint,
    LongVarint,
    LengthPastEnd,
    FixedPastEnd,
    UnsupportedWireType,
    /// A known field with another wire type than its declared one.
    WrongWireType,
    NotUtf8,
}

impl From<Malformed> for ProfileError {
    fn from(m: Malformed) -> Self {
        let what = match m {
            Malformed::TruncatedVarint => "truncated varint",
            Malformed::LongVarint => "varint longer than 10 bytes",
            Malformed::LengthPastEnd => "length past the end",
            Malformed::FixedPastEnd => "fixed field past the end",
            Malformed::UnsupportedWireType => "unsupported wire type",
            Malformed::WrongWireType => "a field has the wrong wire type",
            Malformed::NotUtf8 => "a string is not valid UTF-8",
        };
        ProfileError::Protobuf(format!("malformed message: {what}"))
    }
}

/// Reads a base-128 varint at `*pos`.
#[inline]
fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, Malformed> {
    // Most varints of a profile (ids, string indices, lengths) take one or two bytes.
    match buf.get(*pos..) {
        Some([b0, ..]) if *b0 < 0x80 => {
            *pos += 1;
            Ok(u64::from(*b0))
        }
        Some([b0, b1, ..]) if *b1 < 0x80 => {
            *pos += 2;
            Ok(u64::from(b0 & 0x7f) | u64::from(*b1) << 7)
        }
        _ => {
            let (value, end) = varint_long(buf, *pos)?;
            *pos = end;
            Ok(value)
        }
    }
}

/// [`varint`] for values that take one byte as often as two (ids, string indices):
/// those two lengths are read without a branch on which, a branch that a mix of both
/// makes hard to predict (elsewhere, as for keys and lengths, the branch is cheaper).
#[inline(always)]
fn mixed_varint(buf: &[u8], pos: &mut usize) -> Result<u64, Malformed> {
    match buf.get(*pos..).and_then(|b| b.first_chunk::<2>()) {
        Some(&[b0, b1]) if b0 & b1 < 0x80 => {
            let two = u64::from(b0 >> 7);
            *pos += 1 + two as usize;
            Ok(u64::from(b0 & 0x7f) | (u64::from(b1 & 0x7f) << 7 & two.wrapping_neg()))
        }
        _ => varint(buf, pos),
    }
}

/// The varint at `pos` when it takes at most eight bytes and eight bytes are left from
/// `pos` (not all of them its own), and its length: read at once, its last byte the
/// first without the high bit, its 7-bit groups packed together in three steps.
#[inline(always)]
fn swar_varint(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    let word = u64::from_le_bytes(*buf.get(pos..)?.first_chunk::<8>()?);
    let ends = !word & 0x8080_8080_8080_8080;
    if ends == 0 {
        return None;
    }
    let len = (ends.trailing_zeros() / 8 + 1) as usize;
    let kept = u64::MAX >> (64 - 8 * len);
    let mut x = word & kept & 0x7f7f_7f7f_7f7f_7f7f;
    x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
    Some((x, len))
}

/// [`varint`] of more than one byte, read from `pos`: its value and the position
/// after it. Positions go in and out by value, so that the callers' positions (whose
/// address would otherwise escape to this out-of-line call) stay in registers.
#[inline(never)]
fn varint_long(buf: &[u8], mut pos: usize) -> Result<(u64, usize), Malformed> {
    // Up to 8 bytes at once when as many are left.
    if let Some((value, len)) = swar_varint(buf, pos) {
        return Ok((value, pos + len));
    }
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = buf.get(pos) else {
            return Err(Malformed::TruncatedVarint);
        };
        pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok((value, pos));
        }
    }
    Err(Malformed::LongVarint)
}

/// The next field of a message: its number, with the value of a VARINT field or the
/// payload of a LEN field.
enum Field<'a> {
    Varint(u64, u64),
    Bytes(u64, &'a [u8]),
    /// A fixed-width field (pprof has none).
    Fixed(u64),
}

impl Field<'_> {
    /// The field number.
    fn number(&self) -> u64 {
        match self {
            Field::Varint(n, _) | Field::Bytes(n, _) | Field::Fixed(n) => *n,
        }
    }
}

/// The payload of a LEN field whose key was read, its length at `*pos`.
#[inline(always)]
fn payload<'a>(buf: &'a [u8], pos: &mut usize) -> Result<&'a [u8], Malformed> {
    let len = usize::try_from(varint(buf, pos)?).map_err(|_| Malformed::LengthPastEnd)?;
    let end = pos
        .checked_add(len)
        .filter(|e| *e <= buf.len())
        .ok_or(Malformed::LengthPastEnd)?;
    let bytes = &buf[*pos..end];
    *pos = end;
    Ok(bytes)
}

#[inline(always)]
fn next_field<'a>(buf: &'a [u8], pos: &mut usize) -> Result<Field<'a>, Malformed> {
    let key = varint(buf, pos)?;
    let (number, wire_type) = (key >> 3, key & 7);
    match wire_type {
        VARINT => Ok(Field::Varint(number, varint(buf, pos)?)),
        LEN => Ok(Field::Bytes(number, payload(buf, pos)?)),
        FIXED64 | FIXED32 => {
            let width = if wire_type == FIXED64 { 8 } else { 4 };
            *pos = pos
                .checked_add(width)
                .filter(|e| *e <= buf.len())
                .ok_or(Malformed::FixedPastEnd)?;
            Ok(Field::Fixed(number))
        }
        _ => Err(Malformed::UnsupportedWireType),
    }
}

/// Moves past the next field and returns its value when it is the VARINT field
/// `number` (with a one-byte key); else leaves `*pos` where it is.
///
/// Readers first take, this way, the fields a message's writers put in field order
/// (pprof writers all do), then read whatever is left field by field: the same result
/// as reading every field by field, since fields are still taken in the order they
/// come, with a compare per field instead of a jump table on wire types and numbers.
#[inline(always)]
fn expect_varint(buf: &[u8], pos: &mut usize, number: u8) -> Result<Option<u64>, Malformed> {
    expect_varint_read(buf, pos, number, varint)
}

/// [`expect_varint`] for a value read by [`mixed_varint`].
#[inline(always)]
fn expect_mixed(buf: &[u8], pos: &mut usize, number: u8) -> Result<Option<u64>, Malformed> {
    expect_varint_read(buf, pos, number, mixed_varint)
}

/// [`varint`] for values that most often take more than two bytes (addresses, a
/// sample's values): read eight bytes at once in place, without the out-of-line call.
#[inline(always)]
pub(crate) fn wide_varint(buf: &[u8], pos: &mut usize) -> Result<u64, Malformed> {
    match swar_varint(buf, *pos) {
        Some((value, len)) => {
            *pos += len;
            Ok(value)
        }
        None => varint(buf, pos),
    }
}

/// [`expect_varint`] for a value read by [`wide_varint`].
#[inline(always)]
fn expect_wide(buf: &[u8], pos: &mut usize, number: u8) -> Result<Option<u64>, Malformed> {
    expect_varint_read(buf, pos, number, wide_varint)
}

/// [`expect_varint`] with the value read by `read`.
#[inline(always)]
fn expect_varint_read(
    buf: &[u8],
    pos: &mut usize,
    number: u8,
    read: impl FnOnce(&[u8], &mut usize) -> Result<u64, Malformed>,
) -> Result<Option<u64>, Malformed> {
    if buf.get(*pos) == Some(&(number << 3 | VARINT as u8)) {
        *pos += 1;
        read(buf, pos).map(Some)
    } else {
        Ok(None)
    }
}

/// [`expect_varint`] for the LEN field `number`: its payload.
#[inline(always)]
fn expect_bytes<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    number: u8,
) -> Result<Option<&'a [u8]>, Malformed> {
    if buf.get(*pos) != Some(&(number << 3 | LEN as u8)) {
        return Ok(None);
    }
    // The key is the one byte just compared: only the length is left to read.
    *pos += 1;
    payload(buf, pos).map(Some)
}

/// Calls `f` with the encoded body of every `sample` (field 2) of a Profile message.
/// Always inlined: `f` is each reader's per-sample loop body, which then stays one loop
/// with it (left out of line, the decoding of a 300,000-sample file took 9% more
/// instructions).
#[inline(always)]
pub(crate) fn for_each_sample(
    profile: &[u8],
    mut f: impl FnMut(&[u8]) -> Result<(), ProfileError>,
) -> Result<(), ProfileError> {
    let mut pos = 0;
    while pos < profile.len() {
        if let Field::Bytes(2, sample) = next_field(profile, &mut pos)? {
            f(sample)?;
        }
    }
    Ok(())
}

/// The packed location ids of one sample, read one by one as they are iterated, each
/// as its dense location index (id − 1) with that location's entry in a table of one
/// entry per location: a stack counted as it is read, never stored. Iteration stops
/// early at a malformed varint or an id the table has no entry for, which
/// [`PackedStack::read_to_end`] then reports.
pub(crate) struct PackedStack<'a, T> {
    bytes: &'a [u8],
    /// Where the next id starts; past the end once an id was unreadable (a flag of
    /// its own would be stored at every id).
    pos: usize,
    by_location: &'a [T],
}

impl<'a, T: Copy> PackedStack<'a, T> {
    /// The ids packed in `bytes`, of a message whose location ids are 1..=n, with
    /// `by_location`, the table of its n locations.
    pub fn new(bytes: &'a [u8], by_location: &'a [T]) -> Self {
        Self {
            bytes,
            pos: 0,
            by_location,
        }
    }

    /// Reads the ids not yet read; whether every id of the stack was readable.
    pub fn read_to_end(&mut self) -> bool {
        while self.next().is_some() {}
        self.pos <= self.bytes.len()
    }
}

impl<T: Copy> Iterator for PackedStack<'_, T> {
    type Item = (crate::profile::LocationId, T);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        // The table's bounds check is the ids' check: id 0 wraps past its end.
        let entry = mixed_varint(self.bytes, &mut self.pos).ok().and_then(|id| {
            let index = id.wrapping_sub(1);
            let entry = self.by_location.get(usize::try_from(index).ok()?)?;
            Some((index as crate::profile::LocationId, *entry))
        });
        if entry.is_none() {
            self.pos = usize::MAX;
        }
        entry
    }
}

/// Where the varints of a repeated field go, one by one.
pub(crate) trait Varints {
    /// Takes the next varint.
    fn push(&mut self, v: u64);
}

impl Varints for Vec<u64> {
    #[inline(always)]
    fn push(&mut self, v: u64) {
        Vec::push(self, v);
    }
}

impl Varints for Vec<i64> {
    #[inline(always)]
    fn push(&mut self, v: u64) {
        Vec::push(self, v as i64);
    }
}

/// Hands each varint of a repeated field, packed or not, to `out`.
#[inline(always)]
fn repeated(field: Field<'_>, out: &mut impl Varints) -> Result<(), Malformed> {
    match field {
        Field::Varint(_, v) => out.push(v),
        Field::Bytes(_, packed) => {
            let mut pos = 0;
            while pos < packed.len() {
                out.push(mixed_varint(packed, &mut pos)?);
            }
        }
        Field::Fixed(_) => {}
    }
    Ok(())
}

/// Where the labels of a sample go, one by one, as `[key, str, num, num_unit]`.
pub(crate) trait Labels {
    /// Takes the next label.
    fn push(&mut self, label: [i64; 4]);

    /// Offered the encoded labels of a sample where they lie together (as writers lay
    /// them out), before they are read: true when the sink knows these bytes already,
    /// and they are then not read.
    #[inline(always)]
    fn known(&mut self, _encoded: &[u8]) -> bool {
        false
    }

    /// Takes a label found apart from the others (after other fields).
    fn push_apart(&mut self, label: [i64; 4]) {
        self.push(label);
    }
}

#[cfg(test)]
impl Labels for Vec<[i64; 4]> {
    #[inline(always)]
    fn push(&mut self, label: [i64; 4]) {
        Vec::push(self, label);
    }
}

/// Reads one Sample message: its location ids go to `locations` and its labels to
/// `labels`, one by one, in order; its values into `values`, cleared first.
#[inline]
pub(crate) fn read_sample(
    sample: &[u8],
    locations: &mut impl Varints,
    values: &mut Vec<i64>,
    labels: &mut impl Labels,
) -> Result<(), Malformed> {
    values.clear();
    let mut pos = 0;
    if let Some(packed) = expect_bytes(sample, &mut pos, 1)? {
        repeated(Field::Bytes(1, packed), locations)?;
    }
    if let Some(packed) = expect_bytes(sample, &mut pos, 2)? {
        repeated(Field::Bytes(2, packed), values)?;
    }
    // Other writers put them otherwise: the Go runtime writes each value on its own
    // before the locations, and pprof's library (Parca's downloads) values on their own
    // after them. Whatever the layout, the locations and values met before the labels
    // are read here, so that the labels that follow them still lie together.
    while let Some(&key) = sample.get(pos)
        && matches!(key >> 3, 1 | 2)
    {
        match next_field(sample, &mut pos)? {
            field @ (Field::Varint(1, _) | Field::Bytes(1, _)) => repeated(field, locations)?,
            field @ (Field::Varint(2, _) | Field::Bytes(2, _)) => repeated(field, values)?,
            _ => {}
        }
    }
    // The labels that follow the locations and values are stepped over first, so that
    // a sink that knows their bytes need not read them.
    let run = pos;
    while expect_bytes(sample, &mut pos, 3)?.is_some() {}
    if pos > run && !labels.known(&sample[run..pos]) {
        let mut at = run;
        while let Some(label) = expect_bytes(sample, &mut at, 3)? {
            labels.push(read_label(label)?);
        }
    }
    while pos < sample.len() {
        let field = next_field(sample, &mut pos)?;
        match field {
            Field::Varint(1, _) | Field::Bytes(1, _) => repeated(field, locations)?,
            Field::Varint(2, _) | Field::Bytes(2, _) => repeated(field, values)?,
            Field::Bytes(3, label) => labels.push_apart(read_label(label)?),
            _ => {}
        }
    }
    Ok(())
}

/// Reads a Label message as `[key, str, num, num_unit]`.
///
/// The parts are kept in scalars, not in an array filled part by part: a caller
/// copying such an array out of the stack waits on store forwarding, which failed for
/// its 16-byte loads of 8-byte stores and cost a quarter of reading a sample.
#[inline(always)]
fn read_label(label: &[u8]) -> Result<[i64; 4], Malformed> {
    let mut at = 0;
    let mut take = |n| expect_varint(label, &mut at, n).map(|v| v.map_or(0, |v| v as i64));
    let (mut key, mut str, mut num, mut num_unit) = (take(1)?, take(2)?, take(3)?, take(4)?);
    while at < label.len() {
        match next_field(label, &mut at)? {
            Field::Varint(1, v) => key = v as i64,
            Field::Varint(2, v) => str = v as i64,
            Field::Varint(3, v) => num = v as i64,
            Field::Varint(4, v) => num_unit = v as i64,
            _ => {}
        }
    }
    Ok([key, str, num, num_unit])
}

/// Appends a base-128 varint.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends field `field` as length-delimited `bytes`.
pub(crate) fn put_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    put_varint(out, field << 3 | LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a varint field unless it is zero (proto3 leaves defaults out).
fn put_varint_field(out: &mut Vec<u8>, field: u64, v: u64) {
    if v != 0 {
        put_varint(out, field << 3 | VARINT);
        put_varint(out, v);
    }
}

/// Appends `profile`'s samples as pprof `Profile.sample` fields (field 2), exactly as
/// prost would encode `proto::Sample`s: packed location ids (`id = index + 1`),
/// packed values, and the labels of each sample's label set (encoded once per set).
pub(crate) fn write_samples(profile: &crate::Profile, out: &mut Vec<u8>) {
    write_samples_flushing(profile, out, |_| {});
}

/// [`write_samples`], handing `out` to `flush` (which may empty it) whenever it holds
/// a mebibyte or more, so that a large profile can be compressed as it is encoded.
pub(crate) fn write_samples_flushing(
    profile: &crate::Profile,
    out: &mut Vec<u8>,
    mut flush: impl FnMut(&mut Vec<u8>),
) {
    let labels: Vec<Vec<u8>> = profile
        .label_sets
        .iter()
        .map(|set| {
            let mut encoded = Vec::new();
            let mut one = Vec::new();
            for l in set {
                one.clear();
                put_varint_field(&mut one, 1, u64::from(l.key));
                put_varint_field(&mut one, 2, u64::from(l.str));
                put_varint_field(&mut one, 3, l.num as u64);
                put_varint_field(&mut one, 4, u64::from(l.num_unit));
                put_bytes(&mut encoded, 3, &one);
            }
            encoded
        })
        .collect();
    let samples = &profile.samples;
    let (mut sample, mut packed) = (Vec::new(), Vec::new());
    for i in 0..samples.len() {
        sample.clear();
        packed.clear();
        for &loc in samples.stack(i) {
            put_varint(&mut packed, u64::from(loc) + 1);
        }
        if !packed.is_empty() {
            put_bytes(&mut sample, 1, &packed);
        }
        packed.clear();
        for column in &samples.values {
            put_varint(&mut packed, column[i] as u64);
        }
        if !packed.is_empty() {
            put_bytes(&mut sample, 2, &packed);
        }
        if let Some(encoded) = labels.get(samples.label_set[i] as usize) {
            sample.extend_from_slice(encoded);
        }
        put_bytes(out, 2, &sample);
        if out.len() >= 1 << 20 {
            flush(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;
    use crate::proto;

    #[test]
    fn reads_what_prost_writes() {
        let sample = proto::Sample {
            location_id: vec![3, 300, 70_000],
            value: vec![-5, 1 << 40],
            label: vec![proto::Label {
                key: 1,
                str: 2,
                num: -7,
                num_unit: 3,
            }],
        };
        let profile = proto::Profile {
            sample: vec![sample.clone(), sample],
            ..Default::default()
        };
        let bytes = profile.encode_to_vec();
        let mut seen = 0;
        for_each_sample(&bytes, |s| {
            let (mut l, mut v, mut lb) = (Vec::new(), Vec::new(), Vec::new());
            read_sample(s, &mut l, &mut v, &mut lb)?;
            let l: Vec<u64> = l;
            assert_eq!(l, [3, 300, 70_000]);
            assert_eq!(v, [-5, 1 << 40]);
            assert_eq!(lb, [[1, 2, -7, 3]]);
            seen += 1;
            Ok(())
        })
        .expect("valid bytes");
        assert_eq!(seen, 2);
    }

    #[test]
    fn varints_of_every_length_read_alike_in_and_near_the_end_of_a_buffer() {
        let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
        values.extend([u64::MAX, 0x0123_4567_89ab_cdef, 300, 70_000]);
        for v in values {
            let mut encoded = Vec::new();
            put_varint(&mut encoded, v);
            // Followed by nothing, and by enough bytes for the 8-byte read.
            for tail in [&[][..], &[0x7f; 9][..], &[0xff; 9][..]] {
                let buf = [&encoded[..], tail].concat();
                let mut pos = 0;
                assert_eq!(varint(&buf, &mut pos), Ok(v), "{v:#x} then {tail:?}");
                assert_eq!(pos, encoded.len(), "{v:#x}");
            }
            for cut in 0..encoded.len() {
                assert_eq!(
                    varint(&encoded[..cut], &mut 0),
                    Err(Malformed::TruncatedVarint),
                    "{v:#x} cut at {cut}"
                );
            }
        }
        assert_eq!(varint(&[0x80; 11], &mut 0), Err(Malformed::LongVarint));
    }

    #[test]
    fn packed_varints_of_mixed_lengths_read_as_written() {
        let values: Vec<u64> = (0..2000u64)
            .map(|i| match i % 7 {
                0 => i % 128,
                1 | 2 => 128 + i * 37 % 16_000,
                3 => 16_384 + i * 1_000_003 % 2_000_000,
                4 => u64::MAX - i,
                _ => i * 7919 % 20_000,
            })
            .collect();
        let mut packed = Vec::new();
        for &v in &values {
            put_varint(&mut packed, v);
        }
        let mut read = Vec::<u64>::new();
        repeated(Field::Bytes(1, &packed), &mut read).expect("valid");
        assert_eq!(read, values);
        // A two-byte varint cut after its first byte, at the end or before a long one.
        for bytes in [&[0x05, 0x85][..], &[0x85, 0x85, 0x85]] {
            let mut out = Vec::<u64>::new();
            assert_eq!(
                repeated(Field::Bytes(1, bytes), &mut out),
                Err(Malformed::TruncatedVarint),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn truncated_input_is_an_error() {
        let profile = proto::Profile {
            sample: vec![proto::Sample {
                location_id: vec![1, 2, 3],
                ..Default::default()
            }],
            ..Default::default()
        };
        let bytes = profile.encode_to_vec();
        for cut in 1..bytes.len() {
            let result = for_each_sample(&bytes[..cut], |s| {
                read_sample(s, &mut Vec::<u64>::new(), &mut Vec::new(), &mut Vec::new())
                    .map_err(ProfileError::from)
            });
            assert!(result.is_err(), "cut at {cut}");
        }
    }
}
