//! Symbols of one ELF binary: DWARF (functions with inlined frames, files, lines)
//! through `addr2line`, the symbol table when there is no DWARF, and the separate
//! debug file found by build id or `.gnu_debuglink` when the binary is stripped.

use std::fs::File;
use std::path::{Path, PathBuf};

use object::{Object as _, ObjectSegment as _, ReadCache};

/// One source frame: a function and where in it; inlined frames come innermost first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SymFrame {
    /// Demangled function name.
    pub function: String,
    /// Source file, empty when unknown.
    pub file: String,
    /// Line number, 0 when unknown.
    pub line: u32,
}

/// Where the debug files of a stripped binary are looked for.
const DEBUG_ROOT: &str = "/usr/lib/debug";

/// What flint knows of one binary: how file offsets map to its addresses, its build
/// id, and the loaders that name its code.
pub struct ElfSymbols {
    /// (file offset, size in the file, virtual address) of each loadable segment.
    segments: Vec<(u64, u64, u64)>,
    /// The GNU build id in hexadecimal, empty when the binary has none.
    pub build_id: String,
    /// DWARF of the binary or of its separate debug file.
    dwarf: Option<addr2line::Loader>,
    /// The binary itself, for its symbol table (when the DWARF is elsewhere).
    symtab: Option<addr2line::Loader>,
}

impl std::fmt::Debug for ElfSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElfSymbols")
            .field("segments", &self.segments)
            .field("build_id", &self.build_id)
            .field("dwarf", &self.dwarf.is_some())
            .finish_non_exhaustive()
    }
}

/// Why a binary could not be opened for its symbols.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file could not be opened.
    #[error("{}: {source}", path.display())]
    Io {
        /// The binary.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not an object file `object` reads.
    #[error("{}: {source}", path.display())]
    Parse {
        /// The binary.
        path: PathBuf,
        /// What `object` said.
        source: object::Error,
    },
}

impl ElfSymbols {
    /// Opens the binary at `path` (as this process sees it, e.g. through
    /// `/proc/PID/root`); `debug_root` is where separate debug files live (normally
    /// `/usr/lib/debug`).
    pub fn open(path: &Path) -> Result<Self, ElfError> {
        Self::open_with_debug_root(path, Path::new(DEBUG_ROOT))
    }

    /// [`Self::open`] with another directory of debug files.
    pub fn open_with_debug_root(path: &Path, debug_root: &Path) -> Result<Self, ElfError> {
        let file = File::open(path).map_err(|source| ElfError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let cache = ReadCache::new(file);
        let obj = object::File::parse(&cache).map_err(|source| ElfError::Parse {
            path: path.to_path_buf(),
            source,
        })?;
        let segments = obj
            .segments()
            .map(|s| {
                let (offset, size) = s.file_range();
                (offset, size, s.address())
            })
            .collect();
        let build_id = obj.build_id().ok().flatten().map(hex).unwrap_or_default();
        let has_dwarf = obj.section_by_name(".debug_info").is_some();
        let debug_file = if has_dwarf {
            None
        } else {
            let link = obj
                .gnu_debuglink()
                .ok()
                .flatten()
                .map(|(name, _crc)| String::from_utf8_lossy(name).into_owned());
            find_debug_file(path, &build_id, link.as_deref(), debug_root)
        };
        let own = addr2line::Loader::new(path).ok();
        let (dwarf, symtab) = match debug_file.and_then(|d| addr2line::Loader::new(d).ok()) {
            Some(debug) => (Some(debug), own),
            None => (own, None),
        };
        Ok(Self {
            segments,
            build_id,
            dwarf,
            symtab,
        })
    }

    /// The virtual address (as the binary's symbols use) of file offset `offset`.
    pub fn address_of(&self, offset: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|&&(o, size, _)| o <= offset && offset < o + size)
            .map(|&(o, _, vaddr)| vaddr + (offset - o))
    }

    /// The frames of the code at file offset `offset`, innermost first; empty when
    /// nothing names it. `return_address` says the offset is where a call returns
    /// to (every frame but the leaf), so the call itself is looked up.
    pub fn frames(&self, offset: u64, return_address: bool) -> Vec<SymFrame> {
        let Some(addr) = self.address_of(offset) else {
            return Vec::new();
        };
        let probe = if return_address {
            addr.saturating_sub(1)
        } else {
            addr
        };
        let mut out = Vec::new();
        if let Some(dwarf) = &self.dwarf
            && let Ok(mut frames) = dwarf.find_frames(probe)
        {
            while let Ok(Some(frame)) = frames.next() {
                let function = frame
                    .function
                    .as_ref()
                    .and_then(|f| f.demangle().ok())
                    .map(|n| n.into_owned());
                let Some(function) = function.or_else(|| self.symbol(probe)) else {
                    continue;
                };
                let (file, line) = frame.location.map_or((String::new(), 0), |l| {
                    (l.file.unwrap_or("").to_string(), l.line.unwrap_or(0))
                });
                out.push(SymFrame {
                    function,
                    file,
                    line,
                });
            }
        }
        // The outermost frame is the function the address lies in: the symbol table
        // has its full path (`profile_model::top::top`) where DWARF built with line
        // tables only has the bare name (`top`).
        if let Some(outer) = out.last_mut()
            && !outer.function.contains("::")
            && let Some(full) = self.symbol(probe)
            && full.ends_with(&format!("::{}", outer.function))
        {
            outer.function = full;
        }
        if out.is_empty()
            && let Some(function) = self.symbol(probe)
        {
            out.push(SymFrame {
                function,
                file: String::new(),
                line: 0,
            });
        }
        out
    }

    /// The demangled symbol-table name of the function at `addr`.
    fn symbol(&self, addr: u64) -> Option<String> {
        let name = self
            .symtab
            .as_ref()
            .and_then(|l| l.find_symbol(addr))
            .or_else(|| self.dwarf.as_ref().and_then(|l| l.find_symbol(addr)))?;
        Some(addr2line::demangle_auto(name.into(), None).into_owned())
    }
}

/// The separate debug file of a stripped binary: by build id
/// (`DEBUG_ROOT/.build-id/ab/cdef….debug`), else by its `.gnu_debuglink` name next to
/// it, in its `.debug` directory, or under `DEBUG_ROOT` with its directory.
fn find_debug_file(
    binary: &Path,
    build_id: &str,
    link: Option<&str>,
    debug_root: &Path,
) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if build_id.len() > 2 {
        candidates.push(
            debug_root
                .join(".build-id")
                .join(&build_id[..2])
                .join(format!("{}.debug", &build_id[2..])),
        );
    }
    if let (Some(link), Some(dir)) = (link, binary.parent()) {
        candidates.push(dir.join(link));
        candidates.push(dir.join(".debug").join(link));
        let relative = dir.strip_prefix("/").unwrap_or(dir);
        candidates.push(debug_root.join(relative).join(link));
    }
    candidates
        .into_iter()
        .find(|c| c.is_file() && c.as_path() != binary)
}

/// Symbols are opened on a background thread and handed over.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<ElfSymbols>();
};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::ElfSymbols;

    #[inline(never)]
    fn a_function_with_a_known_name(x: u64) -> u64 {
        std::hint::black_box(x.wrapping_mul(31).rotate_left(7))
    }

    #[test]
    fn names_a_function_of_this_test_binary_by_file_offset() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let elf = ElfSymbols::open(&exe).unwrap();
        let maps = super::super::procmaps::ProcMaps::read(std::process::id()).unwrap();
        let addr = a_function_with_a_known_name as *const () as u64;
        assert_eq!(
            a_function_with_a_known_name(1),
            a_function_with_a_known_name(1)
        );
        let entry = maps.find(addr).unwrap();
        let frames = elf.frames(entry.file_offset(addr), false);
        assert!(
            frames
                .iter()
                .any(|f| f.function.ends_with("a_function_with_a_known_name")),
            "{frames:?}"
        );
        assert!(
            frames
                .iter()
                .any(|f| f.file.ends_with("elf.rs") && f.line > 0),
            "DWARF gives the file and line: {frames:?}"
        );
        assert!(elf.frames(u64::MAX / 2, false).is_empty());
    }
}
