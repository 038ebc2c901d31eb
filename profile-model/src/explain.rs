//! Errors told for a person: what the file is, what is wrong in words and what to do,
//! from the file's first bytes and the decoder's error (whose own words stay the
//! detail, one click away in the window).

use std::io::Read as _;

use crate::error::ProfileError;
use crate::gzip::is_gzip;

/// How much of the start (inflated, for a gzip) is looked at.
const PREFIX: usize = 512;

/// One line saying what `bytes`, which could not be read as a profile with `error`,
/// seem to be and what to do, e.g. "an HTML page, not a profile (a login or error page
/// saved in its place?)".
pub fn explain(bytes: &[u8], error: &ProfileError) -> String {
    let gzipped = is_gzip(bytes);
    let head = if gzipped {
        let mut head = Vec::with_capacity(PREFIX);
        let _ = flate2::read::GzDecoder::new(bytes)
            .take(PREFIX as u64)
            .read_to_end(&mut head);
        head
    } else {
        bytes[..bytes.len().min(PREFIX)].to_vec()
    };
    if let Some(kind) = what_it_is(&head) {
        return if gzipped {
            format!("a gzip of {kind}")
        } else {
            kind.to_string()
        };
    }
    match error {
        ProfileError::Empty => "the file is empty (was it still being written?)".into(),
        ProfileError::Gzip(_) => {
            "a gzip file that is corrupt or cut short (download or copy it again?)".into()
        }
        ProfileError::Protobuf(_) if gzipped => {
            "a gzip of something else: not a pprof profile, folded stacks, a .cpuprofile \
             or speedscope JSON"
                .into()
        }
        ProfileError::Protobuf(_) => {
            "not a pprof profile: its protobuf is damaged or cut short, or it is another \
             format (pprof, folded stacks, .cpuprofile and speedscope JSON are read)"
                .into()
        }
        ProfileError::Invalid(_) => {
            "a pprof profile whose parts point at each other wrongly (a bug in what wrote it)"
                .into()
        }
        other => other.to_string(),
    }
}

/// What a file starting with `head` is, when it is recognizably not a profile.
fn what_it_is(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(head);
    let lower = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        return Some("an HTML page, not a profile (a login or error page saved in its place?)");
    }
    if lower.starts_with("<?xml") || lower.starts_with('<') {
        return Some("an XML or HTML document, not a profile");
    }
    if head.starts_with(b"\x7fELF") {
        return Some(
            "an executable or library, not a profile (given beside a profile, it names the \
             profile's addresses)",
        );
    }
    if head.starts_with(b"PK\x03\x04") {
        return Some("a zip archive: unpack it and open the profile inside");
    }
    if head.starts_with(b"PERFILE2") {
        return Some("a perf.data file that could not be read");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;

    fn told(bytes: &[u8]) -> String {
        let error = codec::decode(bytes).expect_err("not a profile");
        explain(bytes, &error)
    }

    #[test]
    fn files_that_are_not_profiles_are_named_for_what_they_are() {
        let html = b"<!DOCTYPE html><html><body>Sign in</body></html>";
        assert!(told(html).starts_with("an HTML page"), "{}", told(html));
        assert!(told(&crate::gzip::gzip(html)).starts_with("a gzip of an HTML page"));
        assert!(told(b"\x7fELF\x02\x01\x01\0\0\0").starts_with("an executable"));
        assert!(told(b"PK\x03\x04\x14\0\0\0").starts_with("a zip archive"));
        assert!(told(b"").starts_with("the file is empty"));
        let garbage = crate::gzip::gzip(&[0x08, 0xff, 0xff, 0xff]);
        assert!(told(&garbage).starts_with("a gzip of something else"));
        let mut cut = crate::gzip::gzip(&[0x0a; 4096]);
        cut.truncate(cut.len() / 2);
        assert!(told(&cut).starts_with("a gzip file that is corrupt or cut short"));
        assert!(told(&[0x08, 0xff, 0xff]).starts_with("not a pprof profile"));
    }
}
