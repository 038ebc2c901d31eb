//! One profile file: its bytes read under the decompressed-size cap ([`read_into`]),
//! a perf.data file's made pprof ([`perf_data_as_pprof`]), or decoded whole
//! ([`read_profile`]).

use std::io::Read as _;
use std::path::Path;
use std::time::SystemTime;

use profile_model::Profile;
use profile_model::codec::{self, DecodeOptions};

use super::ReadError;
use crate::perfdata::{self, PerfDataOptions};

/// Reads the file at `path` into `buf`, replacing its contents; errors name the file.
/// A perf.data file's bytes are replaced by their pprof ([`perf_data_as_pprof`]). A file larger than `options`' decompressed-size cap is refused before it is read
/// (no profile that large, compressed or not, fits under the cap), so that a huge
/// file is never held in memory whole.
pub fn read_into(path: &Path, buf: &mut Vec<u8>, options: DecodeOptions) -> Result<(), ReadError> {
    let limit = options.max_decompressed_bytes;
    let too_large = |size| ReadError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit,
    };
    buf.clear();
    let failed = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(|e| {
        // "ftp://host" or "http://host:7070": meant as a server, in a scheme flint
        // does not speak.
        match path.to_str().and_then(|p| p.split_once("://")) {
            Some((scheme, _)) if e.kind() == std::io::ErrorKind::NotFound => {
                ReadError::UnknownScheme {
                    path: path.to_path_buf(),
                    scheme: scheme.to_string(),
                }
            }
            _ => failed(e),
        }
    })?;
    let metadata = file.metadata().map_err(failed)?;
    let size = metadata.len();
    if size > limit {
        return Err(too_large(Some(size)));
    }
    if metadata.is_file() {
        // Read at the size the system gives (the fewest calls).
        let mut file = file;
        file.read_to_end(buf).map_err(failed)?;
    } else {
        // A device or a pipe has no size: it is cut at the cap.
        file.take(limit.saturating_add(1))
            .read_to_end(buf)
            .map_err(failed)?;
    }
    if buf.len() as u64 > limit {
        return Err(too_large(None));
    }
    let modified = metadata.modified().ok();
    perf_data_as_pprof(path, buf, modified)
}

/// Replaces the bytes of a perf.data file in `buf` by their pprof
/// ([`crate::perfdata`], symbols from this machine), its recording taken to end at
/// `modified` (the file's modification time); other bytes are left as they are.
pub fn perf_data_as_pprof(
    path: &Path,
    buf: &mut Vec<u8>,
    modified: Option<SystemTime>,
) -> Result<(), ReadError> {
    if !perfdata::is_perf_data(buf) {
        return Ok(());
    }
    let options = PerfDataOptions {
        recorded_end_nanos: modified
            .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_nanos()).ok()),
        ..PerfDataOptions::default()
    };
    *buf = perfdata::to_pprof(buf, &options).map_err(|source| ReadError::PerfData {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(())
}

/// Reads and decodes one pprof file; errors name the file.
pub fn read_profile(path: &Path, options: DecodeOptions) -> Result<Profile, ReadError> {
    let mut bytes = Vec::new();
    read_into(path, &mut bytes, options)?;
    codec::decode_with(&bytes, options)
        .map_err(|e| ReadError::profile(path.display().to_string(), e))
}
