//! A small protobuf wire reader and writer for the one message that dominates a
//! profile: its samples. Reading and writing them here, with reused buffers, avoids one
//! prost message with three vectors per sample (most of the time and memory of
//! decoding or encoding a large profile).

use crate::error::ProfileError;

const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;
const FIXED32: u64 = 5;

fn malformed(what: &str) -> ProfileError {
    ProfileError::Protobuf(format!("malformed sample: {what}"))
}

/// Reads a base-128 varint at `*pos`.
fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, ProfileError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = buf.get(*pos) else {
            return Err(malformed("truncated varint"));
        };
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(malformed("varint longer than 10 bytes"))
}

/// The next field of a message: (field number, wire type, payload for LEN fields,
/// value for VARINT fields).
enum Field<'a> {
    Varint(u64, u64),
    Bytes(u64, &'a [u8]),
    Other,
}

fn next_field<'a>(buf: &'a [u8], pos: &mut usize) -> Result<Field<'a>, ProfileError> {
    let key = varint(buf, pos)?;
    let (number, wire_type) = (key >> 3, key & 7);
    match wire_type {
        VARINT => Ok(Field::Varint(number, varint(buf, pos)?)),
        LEN => {
            let len = usize::try_from(varint(buf, pos)?).map_err(|_| malformed("length"))?;
            let end = pos
                .checked_add(len)
                .filter(|e| *e <= buf.len())
                .ok_or_else(|| malformed("length past the end"))?;
            let bytes = &buf[*pos..end];
            *pos = end;
            Ok(Field::Bytes(number, bytes))
        }
        FIXED64 | FIXED32 => {
            let width = if wire_type == FIXED64 { 8 } else { 4 };
            *pos = pos
                .checked_add(width)
                .filter(|e| *e <= buf.len())
                .ok_or_else(|| malformed("fixed field past the end"))?;
            Ok(Field::Other)
        }
        _ => Err(malformed("unsupported wire type")),
    }
}

/// Calls `f` with the encoded body of every `sample` (field 2) of a Profile message.
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

/// Appends the varints of a repeated field, packed or not.
fn repeated(field: Field<'_>, out: &mut Vec<u64>) -> Result<(), ProfileError> {
    match field {
        Field::Varint(_, v) => out.push(v),
        Field::Bytes(_, packed) => {
            let mut pos = 0;
            while pos < packed.len() {
                out.push(varint(packed, &mut pos)?);
            }
        }
        Field::Other => {}
    }
    Ok(())
}

/// Reads one Sample message into the buffers (cleared first): location ids, values,
/// and labels as `[key, str, num, num_unit]`.
pub(crate) fn read_sample(
    sample: &[u8],
    locations: &mut Vec<u64>,
    values: &mut Vec<u64>,
    labels: &mut Vec<[i64; 4]>,
) -> Result<(), ProfileError> {
    locations.clear();
    values.clear();
    labels.clear();
    let mut pos = 0;
    while pos < sample.len() {
        let field = next_field(sample, &mut pos)?;
        match field {
            Field::Varint(1, _) | Field::Bytes(1, _) => repeated(field, locations)?,
            Field::Varint(2, _) | Field::Bytes(2, _) => repeated(field, values)?,
            Field::Bytes(3, label) => {
                let mut parts = [0i64; 4];
                let mut at = 0;
                while at < label.len() {
                    if let Field::Varint(n @ 1..=4, v) = next_field(label, &mut at)? {
                        parts[n as usize - 1] = v as i64;
                    }
                }
                labels.push(parts);
            }
            _ => {}
        }
    }
    Ok(())
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
fn put_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
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
            assert_eq!(l, [3, 300, 70_000]);
            assert_eq!(
                v.iter().map(|x| *x as i64).collect::<Vec<_>>(),
                [-5, 1 << 40]
            );
            assert_eq!(lb, [[1, 2, -7, 3]]);
            seen += 1;
            Ok(())
        })
        .expect("valid bytes");
        assert_eq!(seen, 2);
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
                read_sample(s, &mut Vec::new(), &mut Vec::new(), &mut Vec::new())
            });
            assert!(result.is_err(), "cut at {cut}");
        }
    }
}
