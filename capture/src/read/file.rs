//! One profile file: its bytes read under the decompressed-size cap ([`read_into`]),
//! or decoded whole ([`read_profile`]).

use std::io::Read as _;
use std::path::Path;

use profile_model::Profile;
use profile_model::codec::{self, DecodeOptions};

use super::ReadError;

/// Reads the file at `path` into `buf`, replacing its contents; errors name the file.
/// A file larger than `options`' decompressed-size cap is refused before it is read
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
    match buf.len() as u64 {
        n if n > limit => Err(too_large(None)),
        _ => Ok(()),
    }
}

/// Reads and decodes one pprof file; errors name the file.
pub fn read_profile(path: &Path, options: DecodeOptions) -> Result<Profile, ReadError> {
    let mut bytes = Vec::new();
    read_into(path, &mut bytes, options)?;
    codec::decode_with(&bytes, options)
        .map_err(|e| ReadError::profile(path.display().to_string(), e))
}
