//! Which format bytes are in, by their content: pprof's protobuf is binary from its
//! first bytes, the other formats are text.

/// A format flint reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// pprof's protobuf message (inflated).
    Pprof,
    /// Folded stacks, `root;…;leaf COUNT` per line.
    Folded,
    /// JSON: a V8 `.cpuprofile` or a speedscope file.
    Json,
}

/// How much of the start is looked at.
const PREFIX: usize = 512;

/// The format of `bytes` (inflated). Text is told from pprof by its first 512 bytes:
/// every pprof message has a control byte there (a field's tag or length below
/// 0x20, e.g. the `0x08` of a sample type's first field), and text (UTF-8, tabs and
/// line ends aside) has none. Text starting with `{` (after a byte-order mark and
/// white space) is JSON, which protobuf never starts with (`{` is a group tag, which
/// pprof has none of); other text is folded stacks; white space alone is left to
/// pprof's reader to refuse.
pub fn detect(bytes: &[u8]) -> Format {
    let prefix = &bytes[..bytes.len().min(PREFIX)];
    let control = |b: &u8| matches!(b, 0..=8 | 0x0b | 0x0c | 0x0e..=0x1f | 0x7f);
    if bytes.is_empty() || prefix.iter().any(control) {
        return Format::Pprof;
    }
    let text = prefix.strip_prefix("\u{feff}".as_bytes()).unwrap_or(prefix);
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Format::Json,
        Some(_) => Format::Folded,
        // White space alone (a pprof message cut after its first tag, `\n`, too).
        None => Format::Pprof,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pprof_json_and_folded_are_told_apart_by_content() {
        let folded = super::super::folded::decode("a;b 1\n", super::super::FoldedUnit::Samples);
        let pprof = crate::codec::encode(&folded.expect("folded"));
        assert_eq!(detect(&pprof), Format::Pprof);
        assert_eq!(detect(b""), Format::Pprof);
        assert_eq!(
            detect(b"\n"),
            Format::Pprof,
            "a pprof message cut after its first tag"
        );
        assert_eq!(detect(b"\xef\xbb\xbf \n{\"nodes\": []}"), Format::Json);
        assert_eq!(detect(b"main;work 12\n"), Format::Folded);
        assert_eq!(detect(b"\n\r\nmain;work 12\r\n"), Format::Folded);
    }
}
