//! Segment files: append-only files of records, named by a sequence number, and the
//! scan that finds their intact records after a crash.

use std::ops::Range;

use super::record::{self, MAGIC};

/// The file name of segment `id`.
pub fn file_name(id: u64) -> String {
    format!("{id:016}.seg")
}

/// The segment id a file name stands for, if it is a segment's name.
pub fn parse_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".seg")?;
    if digits.len() != 16 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What a scan found in a segment's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scan {
    /// Each intact record: (offset of its frame, range of its payload).
    pub records: Vec<(usize, Range<usize>)>,
    /// Damaged stretches between intact records, skipped.
    pub damaged: Vec<Range<usize>>,
    /// End of the last intact record: what follows is a torn or garbled tail.
    pub end: usize,
}

/// Finds the intact records of a segment. A stretch that does not hold a record is
/// skipped up to the next intact record; after the last intact record it is the tail.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut found = Scan::default();
    let mut at = 0;
    while at < bytes.len() {
        match record::frame_at(bytes, at) {
            Some(payload) => {
                if at > found.end {
                    found.damaged.push(found.end..at);
                }
                found.records.push((at, payload.clone()));
                at = payload.end;
                found.end = at;
            }
            None => at = next_magic(bytes, at + 1).unwrap_or(bytes.len()),
        }
    }
    found
}

/// The first offset at or after `from` where the record magic starts.
fn next_magic(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(MAGIC.len())
        .position(|w| w == MAGIC)
        .map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::super::record::{Header, encode};
    use super::*;

    fn record(time: i64) -> Vec<u8> {
        let h = Header {
            time_nanos: time,
            duration_nanos: 0,
            types: Vec::new(),
            default_type: 0,
            rated: false,
            period: 0,
            labels: Default::default(),
            groups: Vec::new(),
        };
        // A body holding the magic, so the scan has false starts to reject.
        encode(&h, b"xxFLR1yyFLR1\x05\x00\x00\x00zz")
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(parse_file_name(&file_name(42)), Some(42));
        assert_eq!(parse_file_name("42.seg"), None);
        assert_eq!(parse_file_name("LOCK"), None);
    }

    #[test]
    fn finds_records_skips_damage_and_stops_at_the_tail() {
        let (a, b, c) = (record(1), record(2), record(3));
        let mut bytes = [a.clone(), b.clone(), c.clone()].concat();
        let all = scan(&bytes);
        assert_eq!(all.records.len(), 3);
        assert_eq!(all.end, bytes.len());
        assert!(all.damaged.is_empty());
        // A flipped byte in the middle record: it is skipped, the others stay.
        bytes[a.len() + 20] ^= 1;
        let s = scan(&bytes);
        assert_eq!(s.records.len(), 2);
        assert_eq!(s.damaged, vec![a.len()..a.len() + b.len()]);
        assert_eq!(s.end, bytes.len());
        // Every cut of the last record leaves the first two and ends after them.
        let good = [a.clone(), b.clone(), c.clone()].concat();
        for cut in a.len() + b.len()..good.len() {
            let s = scan(&good[..cut]);
            assert_eq!(s.records.len(), 2, "cut at {cut}");
            assert_eq!(s.end, a.len() + b.len());
            assert!(s.damaged.is_empty());
        }
        // Garbage after the last record is tail.
        let mut garbage = good.clone();
        garbage.extend_from_slice(b"FLR1\xff\xff\x00\x00garbage");
        let s = scan(&garbage);
        assert_eq!((s.records.len(), s.end), (3, good.len()));
    }
}
