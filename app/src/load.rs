//! Reading profiles from disk for both the CLI and the window.

use std::path::Path;

use profile_model::Profile;
use profile_model::codec::{self, DecodeOptions};
use profile_model::merge::Merger;

/// Reads and decodes one pprof file (gzip-compressed or raw).
/// Errors are one line naming the file and what is wrong with it.
pub fn read_profile(path: &Path, options: DecodeOptions) -> Result<Profile, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    codec::decode_with(&bytes, options).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads several files and merges them, as `go tool pprof` does with several inputs.
pub fn read_merged(paths: &[impl AsRef<Path>], options: DecodeOptions) -> Result<Profile, String> {
    if let [single] = paths {
        return read_profile(single.as_ref(), options);
    }
    let mut merger = Merger::new();
    for path in paths {
        let path = path.as_ref();
        let profile = read_profile(path, options)?;
        merger
            .add(&path.display().to_string(), &profile)
            .map_err(|e| e.to_string())?;
    }
    Ok(merger.finish())
}
