//! gzip (RFC 1952) in and out. Reading inflates each member in one call to libdeflate,
//! about twice as fast as zlib-rs on profiles (BENCHMARKS.md, "inflate"); when
//! libdeflate refuses a member, zlib-rs inflates it again to say exactly what is wrong
//! (a CRC-32 or size mismatch, an early end, a bad code). Writing uses flate2.
#![allow(unsafe_code, reason = "the calls into libdeflate's C functions")]

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_gzip_decompress_ex, libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE as NO_SPACE,
    libdeflate_result_LIBDEFLATE_SUCCESS as SUCCESS,
};

use crate::error::ProfileError;

/// Whether `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Compresses bytes with gzip at the fastest level, as Go's runtime/pprof writes its
/// profiles (`gzip.BestSpeed`): a server answering with merged profiles spends far less
/// time compressing for a slightly larger answer.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Gzip::new();
    out.write(bytes);
    out.finish()
}

/// A gzip stream written piece by piece, compressed as [`gzip`] compresses.
pub(crate) struct Gzip(flate2::write::GzEncoder<Vec<u8>>);

impl Gzip {
    /// An empty stream.
    pub(crate) fn new() -> Self {
        Self(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ))
    }

    /// Compresses `bytes` onto the stream.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        use std::io::Write as _;
        // Writing into a Vec cannot fail.
        let _ = self.0.write_all(bytes);
    }

    /// The compressed stream.
    pub(crate) fn finish(self) -> Vec<u8> {
        self.0.finish().unwrap_or_default()
    }
}

fn gzip_error(what: &str) -> ProfileError {
    ProfileError::Gzip(what.to_string())
}

/// Decompresses a (possibly multi-member) gzip stream into `out` (cleared first),
/// each member with its CRC-32 and size checked, refusing to produce more than
/// `limit` bytes.
pub(crate) fn gunzip_into(bytes: &[u8], limit: u64, out: &mut Vec<u8>) -> Result<(), ProfileError> {
    out.clear();
    DECOMPRESSOR.with(|decompressor| match decompressor {
        Some(decompressor) => inflate(decompressor, bytes, limit, out),
        None => explain(bytes, limit, out),
    })
}

thread_local! {
    /// This thread's decompressor, kept from one stream to the next: making one per
    /// stream (an allocation, its tables zeroed) cost about 0.6% of the instructions
    /// of inflating one of the 2,000-sample day's profiles.
    static DECOMPRESSOR: Option<Decompressor> = Decompressor::new();
}

/// [`gunzip_into`] with `decompressor`.
fn inflate(
    decompressor: &Decompressor,
    bytes: &[u8],
    limit: u64,
    out: &mut Vec<u8>,
) -> Result<(), ProfileError> {
    let too_large = || ProfileError::TooLarge { limit_bytes: limit };
    let hint = size_hint(bytes);
    let mut rest = bytes;
    while !rest.is_empty() {
        gzip_header_len(rest)?;
        let room = limit.saturating_add(1).saturating_sub(out.len() as u64);
        let mut avail = hint.clamp(1 << 16, 1 << 30).min(room);
        let used = loop {
            match decompressor.member(rest, out, to_usize(avail)) {
                Member::Read(used) => break used,
                Member::NoRoom if avail >= room => return Err(too_large()),
                Member::NoRoom => avail = avail.saturating_mul(4).min(room),
                Member::Refused => return explain(bytes, limit, out),
            }
        };
        if out.len() as u64 > limit {
            return Err(too_large());
        }
        rest = rest.get(used..).unwrap_or_default();
    }
    Ok(())
}

/// The size a gzip stream inflates to, as its last trailer tells it: the last member's
/// size modulo 2^32, exact for the usual single member, else only a first guess.
pub(crate) fn size_hint(bytes: &[u8]) -> u64 {
    bytes
        .len()
        .checked_sub(4)
        .and_then(|at| bytes.get(at..))
        .and_then(|t| <[u8; 4]>::try_from(t).ok())
        .map_or(0, |t| u64::from(u32::from_le_bytes(t)))
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// What libdeflate made of one gzip member.
enum Member {
    /// Appended to the output; the member took this many input bytes.
    Read(usize),
    /// The member inflates to more than the room given.
    NoRoom,
    /// Not a valid gzip member (bad data, CRC-32 or size mismatch, early end).
    Refused,
}

/// A libdeflate decompressor, freed on drop.
struct Decompressor(NonNull<libdeflate_decompressor>);

impl Decompressor {
    /// A new decompressor; `None` if the allocation failed.
    fn new() -> Option<Self> {
        // SAFETY: no preconditions; the result is null or a decompressor we own.
        NonNull::new(unsafe { libdeflate_alloc_decompressor() }).map(Self)
    }

    /// Inflates the gzip member at the start of `input`, appending at most `avail`
    /// bytes to `out`.
    fn member(&self, input: &[u8], out: &mut Vec<u8>, avail: usize) -> Member {
        out.reserve(avail);
        let spare = out.spare_capacity_mut();
        let (mut used, mut written) = (0usize, 0usize);
        // SAFETY: the decompressor is live and used by one thread at a time (`&self`
        // of a `!Sync` value); `input` is readable for `input.len()` bytes; `spare`
        // is writable for at least `avail` bytes (reserved above), and libdeflate
        // writes no more than that; both counts are valid places to write.
        let result = unsafe {
            libdeflate_gzip_decompress_ex(
                self.0.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                spare.as_mut_ptr().cast(),
                avail.min(spare.len()),
                &mut used,
                &mut written,
            )
        };
        match result {
            SUCCESS if written <= spare.len() => {
                // SAFETY: on success libdeflate initialized the first `written`
                // bytes of the spare capacity (checked to lie within it).
                unsafe { out.set_len(out.len() + written) };
                Member::Read(used)
            }
            NO_SPACE => Member::NoRoom,
            _ => Member::Refused,
        }
    }
}

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: allocated by libdeflate_alloc_decompressor, freed once here.
        unsafe { libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

/// The length of the gzip member header at the start of `bytes` (RFC 1952).
fn gzip_header_len(bytes: &[u8]) -> Result<usize, ProfileError> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let truncated = || gzip_error("truncated header");
    let fixed = bytes.get(..10).ok_or_else(truncated)?;
    if !is_gzip(fixed) || fixed[2] != 8 || fixed[3] & 0xe0 != 0 {
        return Err(gzip_error("invalid gzip header"));
    }
    let flags = fixed[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let len = bytes.get(at..at + 2).ok_or_else(truncated)?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let text = bytes.get(at..).ok_or_else(truncated)?;
            at += 1 + text.iter().position(|b| *b == 0).ok_or_else(truncated)?;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    if at > bytes.len() {
        return Err(truncated());
    }
    Ok(at)
}

/// Inflates the whole stream again with zlib-rs, member by member, to name what is
/// wrong with it; if zlib-rs finds nothing wrong, its output stands.
fn explain(bytes: &[u8], limit: u64, out: &mut Vec<u8>) -> Result<(), ProfileError> {
    out.clear();
    let too_large = || ProfileError::TooLarge { limit_bytes: limit };
    let mut rest = bytes;
    while !rest.is_empty() {
        let deflated = &rest[gzip_header_len(rest)?..];
        let start = out.len();
        let mut inflate = flate2::Decompress::new(false);
        loop {
            if out.len() == out.capacity() {
                let room = limit.saturating_add(1).saturating_sub(out.len() as u64);
                if room == 0 {
                    return Err(too_large());
                }
                let grow = room.min((out.len() as u64).max(1 << 16));
                out.reserve(usize::try_from(grow).unwrap_or(1 << 16));
            }
            let (read, written) = (inflate.total_in(), out.len());
            let input = deflated.get(read as usize..).unwrap_or_default();
            let status = inflate
                .decompress_vec(input, out, flate2::FlushDecompress::Finish)
                .map_err(|e| ProfileError::Gzip(e.to_string()))?;
            if out.len() as u64 > limit {
                return Err(too_large());
            }
            if status == flate2::Status::StreamEnd {
                break;
            }
            if inflate.total_in() == read && out.len() == written && out.len() < out.capacity() {
                return Err(gzip_error("unexpected end of file"));
            }
        }
        let used = usize::try_from(inflate.total_in()).unwrap_or(usize::MAX);
        let trailer = deflated
            .get(used..used.saturating_add(8))
            .ok_or_else(|| gzip_error("unexpected end of file"))?;
        let mut crc = flate2::Crc::new();
        crc.update(&out[start..]);
        if crc.sum().to_le_bytes() != trailer[..4] {
            return Err(gzip_error("CRC-32 mismatch"));
        }
        if ((out.len() - start) as u32).to_le_bytes() != trailer[4..] {
            return Err(gzip_error("size mismatch"));
        }
        rest = &deflated[used + 8..];
    }
    Ok(())
}
