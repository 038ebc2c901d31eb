//! What `linux-perf-data` trusts in a file's header, checked against the bytes before
//! it reads them: it allocates what a section's size or a count says before reading,
//! and a size past the end of the file (garbage after the magic) would then abort the
//! process rather than fail. A file cut short keeps its readable records: a copy of
//! its header is handed on without the feature sections that lie past the end and
//! with the data section cut to what is there (`Checked::warnings` says so).

use super::PerfDataError;

/// perf's `perf_file_header`: magic, size, attr_size, then the attrs, data and
/// event_types sections (offset and size each), then the 256-bit feature bitmap.
const HEADER_SIZE: usize = 104;
/// The size field of a pipe-mode header (magic and size only).
pub(super) const PIPE_HEADER_SIZE: u64 = 16;
const ATTRS_AT: usize = 24;
const DATA_AT: usize = 40;
const EVENT_TYPES_AT: usize = 56;
const FEATURES_AT: usize = 72;
/// `HEADER_EVENT_DESC`, the feature whose counts the parser trusts most.
const EVENT_DESC_FEATURE: usize = 12;

/// A file section: where it starts and how long it is.
#[derive(Debug, Clone, Copy)]
struct Section {
    offset: u64,
    size: u64,
}

impl Section {
    fn end(self) -> Option<u64> {
        self.offset.checked_add(self.size)
    }
}

/// The bytes to hand to the parser, and what was left out of them.
#[derive(Debug)]
pub(super) struct Checked {
    /// A copy of the header patched for a file cut short, to read in place of the
    /// file's own first bytes.
    pub header: Option<Vec<u8>>,
    /// What was left out, one line each.
    pub warnings: Vec<String>,
}

/// Reads integers of the file's byte order.
struct Bytes<'a> {
    bytes: &'a [u8],
    big_endian: bool,
}

impl Bytes<'_> {
    fn array_at<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let mut raw: [u8; N] = self.bytes.get(at..at.checked_add(N)?)?.try_into().ok()?;
        if self.big_endian == cfg!(target_endian = "little") {
            raw.reverse();
        }
        Some(raw)
    }

    fn u64_at(&self, at: usize) -> Option<u64> {
        self.array_at(at).map(u64::from_ne_bytes)
    }

    fn u32_at(&self, at: usize) -> Option<u32> {
        self.array_at(at).map(u32::from_ne_bytes)
    }

    fn section_at(&self, at: usize) -> Option<Section> {
        Some(Section {
            offset: self.u64_at(at)?,
            size: self.u64_at(at + 8)?,
        })
    }
}

fn error(message: String) -> PerfDataError {
    PerfDataError(message)
}

/// Checks the header of `bytes` (a file-mode perf.data, magic checked) against their
/// length; see the module documentation.
pub(super) fn check(bytes: &[u8], big_endian: bool) -> Result<Checked, PerfDataError> {
    let len = bytes.len() as u64;
    let b = Bytes { bytes, big_endian };
    let cut = || error(format!("the file ends in its header ({len} bytes)"));
    let header_size = b.u64_at(8).ok_or_else(cut)?;
    if header_size != HEADER_SIZE as u64 {
        return Err(error(format!(
            "a header of {header_size} bytes, where perf writes {HEADER_SIZE} (not a perf.data file, or garbage after its magic)"
        )));
    }
    let attr_size = b.u64_at(16).ok_or_else(cut)?;
    let attrs = b.section_at(ATTRS_AT).ok_or_else(cut)?;
    let data = b.section_at(DATA_AT).ok_or_else(cut)?;
    let event_types = b.section_at(EVENT_TYPES_AT).ok_or_else(cut)?;
    if !(64..=4096).contains(&attr_size) {
        return Err(error(format!(
            "an event attribute size of {attr_size} bytes (not a perf.data file, or garbage after its magic)"
        )));
    }
    for (name, s) in [("attrs", attrs), ("event types", event_types)] {
        if s.end().is_none_or(|end| end > len) {
            return Err(error(format!(
                "its {name} section (offset {}, {} bytes) lies past the end of the file ({len} bytes)",
                s.offset, s.size
            )));
        }
    }
    if data.offset < HEADER_SIZE as u64 || data.offset > len || data.end().is_none() {
        return Err(error(format!(
            "its data section (offset {}, {} bytes) does not lie in the file ({len} bytes)",
            data.offset, data.size
        )));
    }
    let features: Vec<usize> = (0..256)
        .filter(|bit| {
            let byte = FEATURES_AT + bit / 64 * 8;
            b.u64_at(byte)
                .is_some_and(|word| word >> (bit % 64) & 1 == 1)
        })
        .collect();
    let table_at = data.end().unwrap_or(u64::MAX);
    let table_end = table_at.saturating_add(16 * features.len() as u64);
    let sections: Option<Vec<(usize, Section)>> = (table_end <= len)
        .then(|| {
            features
                .iter()
                .enumerate()
                .map(|(i, &f)| {
                    let at = usize::try_from(table_at).ok()? + 16 * i;
                    Some((f, b.section_at(at)?))
                })
                .collect()
        })
        .flatten();
    let whole = sections
        .as_ref()
        .is_some_and(|s| s.iter().all(|(_, s)| s.end().is_some_and(|end| end <= len)));
    if let (true, Some(sections)) = (whole, &sections) {
        if let Some((_, desc)) = sections.iter().find(|(f, _)| *f == EVENT_DESC_FEATURE) {
            check_event_desc(&b, *desc)?;
        }
        return Ok(Checked {
            header: None,
            warnings: Vec::new(),
        });
    }
    // Cut short: the records that are there, without the features.
    let mut header = bytes.get(..HEADER_SIZE).ok_or_else(cut)?.to_vec();
    let kept = whole_records(
        bytes,
        data.offset,
        data.size.min(len - data.offset),
        big_endian,
    );
    let size_bytes = if big_endian {
        kept.to_be_bytes()
    } else {
        kept.to_le_bytes()
    };
    header[DATA_AT + 8..DATA_AT + 16].copy_from_slice(&size_bytes);
    header[FEATURES_AT..HEADER_SIZE].fill(0);
    let mut warnings = vec![format!(
        "the file ends ({len} bytes) before its {} feature sections (cut short?): build ids and event names were skipped",
        features.len()
    )];
    if kept < data.size {
        warnings.push(format!(
            "the file is cut short: {kept} of its data section's {} bytes (its whole records) were read",
            data.size
        ));
    }
    Ok(Checked {
        header: Some(header),
        warnings,
    })
}

/// How many of the `available` bytes of the data section at `offset` hold whole
/// records (each starts with `perf_event_header`: type u32, misc u16, size u16): the
/// parser would drop the last round of records at a record cut in two.
fn whole_records(bytes: &[u8], offset: u64, available: u64, big_endian: bool) -> u64 {
    let size_at = |at: u64| -> Option<u64> {
        let at = usize::try_from(at).ok()?.checked_add(6)?;
        let raw: [u8; 2] = bytes.get(at..at + 2)?.try_into().ok()?;
        Some(u64::from(if big_endian {
            u16::from_be_bytes(raw)
        } else {
            u16::from_le_bytes(raw)
        }))
    };
    let mut kept = 0;
    while let Some(size) = size_at(offset + kept) {
        if size < 8 || kept + size > available {
            break;
        }
        kept += size;
    }
    kept
}

/// `HEADER_EVENT_DESC`: `nr` attributes of `attr_size` bytes, each followed by its id
/// count, its name (length-prefixed) and its ids: the counts must fit the section.
fn check_event_desc(b: &Bytes<'_>, desc: Section) -> Result<(), PerfDataError> {
    let bad = |what: &str| {
        error(format!(
            "its event description section (offset {}, {} bytes) is malformed ({what})",
            desc.offset, desc.size
        ))
    };
    let start = usize::try_from(desc.offset).map_err(|_| bad("offset"))?;
    let end = usize::try_from(desc.offset + desc.size).map_err(|_| bad("size"))?;
    let nr = b.u32_at(start).ok_or_else(|| bad("no count"))? as usize;
    let attr_size = b.u32_at(start + 4).ok_or_else(|| bad("no size"))? as usize;
    if attr_size < 64 {
        return Err(bad("attribute size"));
    }
    let mut at = start + 8;
    for _ in 0..nr {
        at = at.checked_add(attr_size).ok_or_else(|| bad("attribute"))?;
        let ids = b.u32_at(at).ok_or_else(|| bad("id count"))? as usize;
        let name_len = b.u32_at(at + 4).ok_or_else(|| bad("name"))? as usize;
        at = (at + 8)
            .checked_add(name_len)
            .and_then(|a| a.checked_add(ids.checked_mul(8)?))
            .ok_or_else(|| bad("ids"))?;
        if at > end {
            return Err(bad("counts past its end"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file-mode header with these sections and no features.
    fn header(data: (u64, u64)) -> Vec<u8> {
        let mut h = b"PERFILE2".to_vec();
        for v in [HEADER_SIZE as u64, 136, 104, 0, data.0, data.1, 0, 0] {
            h.extend(v.to_le_bytes());
        }
        h.extend([0; 32]);
        h
    }

    #[test]
    fn sections_past_the_end_are_errors_and_a_cut_data_section_a_warning() {
        let e = check(&header((1 << 40, 8)), false).expect_err("past the end");
        assert!(e.to_string().contains("data section"), "{e}");
        let mut file = header((104, 64));
        file.extend([0; 32]);
        // Two whole records of 8 and 16 bytes, then a third cut.
        for (at, size) in [(104, 8u16), (112, 16), (128, 16)] {
            file[at + 6..at + 8].copy_from_slice(&size.to_le_bytes());
        }
        let checked = check(&file, false).expect("cut");
        assert_eq!(checked.warnings.len(), 2, "{:?}", checked.warnings);
        let patched = checked.header.expect("patched");
        assert_eq!(patched[DATA_AT + 8], 24);
        let e = check(&file[..50], false).expect_err("header cut");
        assert!(e.to_string().contains("ends in its header"), "{e}");
    }
}
