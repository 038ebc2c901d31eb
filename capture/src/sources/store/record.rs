//! One record of a segment file: a frame (magic, payload length, CRC-32 of the payload)
//! around a payload of an index header and the profile's bytes as written.
//!
//! ```text
//! frame:   "FLR1" | payload_len: u32 LE | crc32(payload): u32 LE
//! payload: header_len: u32 LE | header | raw pprof (gzipped or not, as written)
//! header:  time_nanos i64 | duration_nanos i64
//!          | n_types u32 | n_types × (name, sample_type, sample_unit, period_type, period_unit: str, delta: u8)
//!          | written labels: n u32 | n × (key: str, value: str)
//!          | n_groups u32 | n_groups × (labels as above, n_types × i64)
//!          | default_type u32 | rated u8 | period i64
//! str:     len u32 LE | UTF-8 bytes
//! ```
//!
//! Records written before `default_type` and `rated` were kept end after the groups:
//! they read as their last type and as rated when they have a duration. Records
//! written before `period` was kept end after `rated`: their period reads as 0,
//! unknown.

use std::ops::Range;

use crate::selector::ProfileType;
use crate::source::Labels;

/// The first bytes of every record.
pub const MAGIC: [u8; 4] = *b"FLR1";
/// Bytes of the frame before the payload.
pub const FRAME_BYTES: usize = 12;
/// Largest payload a record may have; a longer length is damage.
pub const MAX_PAYLOAD_BYTES: usize = 1 << 30;

/// What the index needs of a stored profile, kept in its record so that opening the
/// store never decodes a pprof.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Start of the profile.
    pub time_nanos: i64,
    /// Profiled time, 0 when unknown.
    pub duration_nanos: i64,
    /// One profile type per pprof sample type.
    pub types: Vec<ProfileType>,
    /// Index in `types` of the one pprof shows by default.
    pub default_type: usize,
    /// Whether the profile gives a per-second rate ([`crate::index::gives_rate`]).
    pub rated: bool,
    /// The pprof period; 0 when unknown.
    pub period: i64,
    /// The written labels without `__name__`.
    pub labels: Labels,
    /// Series labels (written labels with sample labels over them) and their value sums,
    /// one per profile type.
    pub groups: Vec<(Labels, Vec<i64>)>,
}

/// The frame and payload of a record holding `header` and `body`.
pub fn encode(header: &Header, body: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(256);
    put_i64(&mut h, header.time_nanos);
    put_i64(&mut h, header.duration_nanos);
    put_len(&mut h, header.types.len());
    for t in &header.types {
        for s in [
            &t.name,
            &t.sample_type,
            &t.sample_unit,
            &t.period_type,
            &t.period_unit,
        ] {
            put_str(&mut h, s);
        }
        h.push(u8::from(t.delta));
    }
    put_labels(&mut h, &header.labels);
    put_len(&mut h, header.groups.len());
    for (labels, values) in &header.groups {
        put_labels(&mut h, labels);
        put_len(&mut h, values.len());
        for v in values {
            put_i64(&mut h, *v);
        }
    }
    put_len(&mut h, header.default_type);
    h.push(u8::from(header.rated));
    put_i64(&mut h, header.period);
    let payload_len = 4 + h.len() + body.len();
    let mut out = Vec::with_capacity(FRAME_BYTES + payload_len);
    out.extend_from_slice(&MAGIC);
    put_len(&mut out, payload_len);
    out.extend_from_slice(&[0; 4]);
    put_len(&mut out, h.len());
    out.extend_from_slice(&h);
    out.extend_from_slice(body);
    let crc = crc32fast::hash(&out[FRAME_BYTES..]);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
    out
}

/// The payload range of the intact record starting at `at`, if there is one: magic
/// present, length within the bytes, checksum right.
pub fn frame_at(bytes: &[u8], at: usize) -> Option<Range<usize>> {
    let frame = bytes.get(at..at.checked_add(FRAME_BYTES)?)?;
    if frame[..4] != MAGIC {
        return None;
    }
    let len = u32::from_le_bytes(frame[4..8].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(frame[8..12].try_into().ok()?);
    if len > MAX_PAYLOAD_BYTES {
        return None;
    }
    let start = at + FRAME_BYTES;
    let payload = bytes.get(start..start.checked_add(len)?)?;
    (crc32fast::hash(payload) == crc).then_some(start..start + len)
}

/// Checks a payload read back on its own against the checksum in its frame.
pub fn check_payload(frame: &[u8], payload: &[u8]) -> Result<(), String> {
    let stored = frame
        .get(8..12)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or("short record frame")?;
    if frame.get(..4) != Some(&MAGIC[..]) || crc32fast::hash(payload) != stored {
        return Err("record checksum mismatch".into());
    }
    Ok(())
}

/// Splits a payload into its header and the profile's bytes.
pub fn decode(payload: &[u8]) -> Result<(Header, &[u8]), String> {
    let mut r = Reader { bytes: payload };
    let header_len = r.len()?;
    let header_bytes = r.take(header_len)?;
    let body = r.bytes;
    let mut r = Reader {
        bytes: header_bytes,
    };
    let time_nanos = r.i64()?;
    let duration_nanos = r.i64()?;
    let n_types = r.len()?;
    let mut types = Vec::with_capacity(n_types.min(64));
    for _ in 0..n_types {
        types.push(ProfileType {
            name: r.str()?,
            sample_type: r.str()?,
            sample_unit: r.str()?,
            period_type: r.str()?,
            period_unit: r.str()?,
            delta: r.take(1)?[0] != 0,
        });
    }
    let labels = r.labels()?;
    let n_groups = r.len()?;
    let mut groups = Vec::with_capacity(n_groups.min(4096));
    for _ in 0..n_groups {
        let labels = r.labels()?;
        let n = r.len()?;
        let mut values = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            values.push(r.i64()?);
        }
        groups.push((labels, values));
    }
    let (default_type, rated) = if r.bytes.is_empty() {
        (n_types.saturating_sub(1), duration_nanos > 0)
    } else {
        (r.len()?, r.take(1)?[0] != 0)
    };
    let period = if r.bytes.is_empty() { 0 } else { r.i64()? };
    if !r.bytes.is_empty() {
        return Err("record header has trailing bytes".into());
    }
    Ok((
        Header {
            time_nanos,
            duration_nanos,
            types,
            default_type,
            rated,
            period,
            labels,
            groups,
        },
        body,
    ))
}

fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    // Lengths are bounded by MAX_PAYLOAD_BYTES long before u32 overflows.
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn put_labels(out: &mut Vec<u8>, labels: &Labels) {
    put_len(out, labels.len());
    for (k, v) in labels {
        put_str(out, k);
        put_str(out, v);
    }
}

/// Checked little-endian reads from a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err("record header is cut short".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn len(&mut self) -> Result<usize, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn i64(&mut self) -> Result<i64, String> {
        let b = self.take(8)?;
        let mut a = [0; 8];
        a.copy_from_slice(b);
        Ok(i64::from_le_bytes(a))
    }

    fn str(&mut self) -> Result<String, String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "record string is not UTF-8".into())
    }

    fn labels(&mut self) -> Result<Labels, String> {
        let n = self.len()?;
        let mut labels = Labels::new();
        for _ in 0..n {
            let k = self.str()?;
            labels.insert(k, self.str()?);
        }
        Ok(labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        let mut labels = Labels::new();
        labels.insert("job".into(), "api".into());
        let mut g = labels.clone();
        g.insert("endpoint".into(), "/x".into());
        Header {
            time_nanos: -5,
            duration_nanos: 10_000_000_000,
            types: vec![ProfileType {
                name: "process_cpu".into(),
                sample_type: "cpu".into(),
                sample_unit: "nanoseconds".into(),
                period_type: "cpu".into(),
                period_unit: "nanoseconds".into(),
                delta: true,
            }],
            default_type: 0,
            rated: true,
            period: 10_000_000,
            labels,
            groups: vec![(g, vec![42])],
        }
    }

    #[test]
    fn round_trips_and_detects_every_flipped_byte() {
        let h = header();
        let bytes = encode(&h, b"pprof bytes");
        let payload = frame_at(&bytes, 0).unwrap();
        assert_eq!(payload.end, bytes.len());
        let (back, body) = decode(&bytes[payload]).unwrap();
        assert_eq!(back, h);
        assert_eq!(body, b"pprof bytes");
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert_eq!(frame_at(&bad, 0), None, "flipped byte {i}");
        }
        for cut in 0..bytes.len() {
            assert_eq!(frame_at(&bytes[..cut], 0), None, "cut at {cut}");
        }
    }

    #[test]
    fn records_without_a_default_type_read_as_their_last_type() {
        let mut h = header();
        h.types.push(h.types[0].clone());
        h.types[1].sample_type = "samples".into();
        h.groups[0].1.push(7);
        h.default_type = 0;
        let bytes = encode(&h, b"body");
        let payload = &bytes[frame_at(&bytes, 0).unwrap()];
        // The record as written before a header's last `cut` bytes were kept.
        let header_len = u32::from_le_bytes(payload[..4].try_into().unwrap()) as usize;
        let written_before = |cut: usize| {
            let mut old = ((header_len - cut) as u32).to_le_bytes().to_vec();
            old.extend_from_slice(&payload[4..4 + header_len - cut]);
            old.extend_from_slice(&payload[4 + header_len..]);
            old
        };
        // Before the default type, rated and the period: 13 bytes shorter.
        let before_default = written_before(13);
        let (back, body) = decode(&before_default).unwrap();
        assert_eq!(body, b"body");
        assert_eq!((back.default_type, back.rated, back.period), (1, true, 0));
        // Before the period only.
        let before_period = written_before(8);
        let (back, _) = decode(&before_period).unwrap();
        assert_eq!((back.default_type, back.rated, back.period), (0, true, 0));
        assert_eq!(decode(payload).unwrap().0, h);
    }
}
