//! A function's source file for the window's source view: on this machine as pprof
//! finds it, or at the path the profile names
//! ([`profile_model::source_listing::locate_source`]), else from debuginfod by its
//! binary's build id ([`debuginfod::fetch_source`]). Every place tried is kept, so that
//! a file not found says where it was looked for.

use std::io::{self, Read as _};
use std::path::Path;

use profile_model::source_listing::{Located, SourcePaths, locate_source};

use super::debuginfod::{self, DebuginfodOptions, MAX_SOURCE_BYTES};

/// Where source files are looked for.
#[derive(Debug, Clone, Default)]
pub struct SourceConfig {
    /// `--source-path` and `--trim-path`, as `flint list` takes them.
    pub paths: SourcePaths,
    /// debuginfod servers, asked by build id for what is not on this machine.
    pub debuginfod: Option<DebuginfodOptions>,
}

/// The source file a profile names `profile_path`, of the binary with `build_id`
/// (empty when unknown). `Err`: every path tried with why it failed, then each
/// debuginfod URL asked with its answer.
pub fn find_source_file(
    config: &SourceConfig,
    profile_path: &str,
    build_id: &str,
) -> Result<Located, Vec<String>> {
    let mut tried = match locate_source(profile_path, &config.paths, read_capped) {
        Ok(found) => return Ok(found),
        Err(tried) => tried,
    };
    let Some(options) = &config.debuginfod else {
        tried.push("debuginfod: not asked (no --debuginfod URL nor DEBUGINFOD_URLS)".into());
        return Err(tried);
    };
    match debuginfod::fetch_source(options, build_id, profile_path) {
        Ok(file) => match read_capped(&file.to_string_lossy()) {
            Ok(bytes) => {
                return Ok(Located {
                    at: file.display().to_string(),
                    bytes,
                });
            }
            Err(e) => tried.push(format!("{}: {e}", file.display())),
        },
        Err(said) => tried.extend(said),
    }
    Err(tried)
}

/// The bytes of the file at `path`, refused when larger than a source view shows
/// ([`MAX_SOURCE_BYTES`]) or when it is a folder.
pub fn read_capped(path: &str) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(Path::new(path))?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::from(io::ErrorKind::IsADirectory));
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(io::Error::other(format!(
            "too large for a source file ({} MiB; at most {} MiB are shown)",
            meta.len() >> 20,
            MAX_SOURCE_BYTES >> 20
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn huge_files_and_folders_are_refused_small_ones_read() {
        let dir = std::env::temp_dir().join(format!("flint-read-capped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let huge = dir.join("huge.c");
        let file = std::fs::File::create(&huge).unwrap();
        file.set_len(MAX_SOURCE_BYTES + 1).unwrap();
        let small = dir.join("small.c");
        std::fs::write(&small, b"int main;\n").unwrap();
        let text = |p: &Path| p.to_str().unwrap().to_string();
        let err = read_capped(&text(&huge)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("too large for a source file (16 MiB"),
            "{err}"
        );
        let folder = read_capped(&text(&dir)).unwrap_err();
        assert_eq!(folder.kind(), io::ErrorKind::IsADirectory);
        assert_eq!(read_capped(&text(&small)).unwrap(), b"int main;\n");
        let config = SourceConfig::default();
        let tried = find_source_file(&config, &text(&huge), "").unwrap_err();
        assert!(tried[0].contains("too large"), "{tried:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
