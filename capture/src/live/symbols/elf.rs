//! Symbols of one ELF binary: DWARF (functions with inlined frames, files, lines)
//! through `addr2line`, the symbol table when there is no DWARF, and the separate
//! debug file found by build id or `.gnu_debuglink` when the binary is stripped.

use std::fs::File;
use std::path::{Path, PathBuf};

use object::{Object as _, ObjectSegment as _, ObjectSymbol as _, ReadCache};

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
pub const DEBUG_ROOT: &str = "/usr/lib/debug";

/// What flint knows of one binary: how file offsets map to its addresses, its build
/// id, and the loaders that name its code.
pub struct ElfSymbols {
    /// (file offset, size in the file, virtual address) of each loadable segment.
    segments: Vec<(u64, u64, u64)>,
    /// (virtual address, size in the file) of the executable loadable segments: a
    /// debug file made by `objcopy --only-keep-debug` has them empty in the file.
    code_segments: Vec<(u64, u64)>,
    /// Whether the file is a fixed-address executable (`ET_EXEC`): its code runs at
    /// its own virtual addresses.
    fixed_address: bool,
    /// The GNU build id in hexadecimal, empty when the binary has none.
    pub build_id: String,
    /// Debug files found for the binary but not used: unreadable, or of another build id.
    pub mismatched_debug_files: Vec<PathBuf>,
    /// The separate debug file whose DWARF is used, when there is one.
    pub debug_file: Option<PathBuf>,
    /// Whether anything names code: DWARF, a debug file, or defined function symbols.
    pub has_names: bool,
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

/// The parts of an object file's headers that symbolization needs.
struct Headers {
    segments: Vec<(u64, u64, u64)>,
    code_segments: Vec<(u64, u64)>,
    fixed_address: bool,
    build_id: String,
    has_dwarf: bool,
    has_symbols: bool,
    debuglink: Option<String>,
}

/// Reads the headers of the object file at `path`.
fn headers(path: &Path) -> Result<Headers, ElfError> {
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
    let code_segments = match &obj {
        object::File::Elf64(elf) => code_segment_addresses(elf.elf_program_headers(), elf.endian()),
        object::File::Elf32(elf) => code_segment_addresses(elf.elf_program_headers(), elf.endian()),
        _ => Vec::new(),
    };
    Ok(Headers {
        segments,
        code_segments,
        fixed_address: obj.kind() == object::ObjectKind::Executable,
        build_id: obj.build_id().ok().flatten().map(hex).unwrap_or_default(),
        has_dwarf: obj.section_by_name(".debug_info").is_some(),
        has_symbols: obj
            .symbols()
            .chain(obj.dynamic_symbols())
            .any(|s| s.is_definition() && s.kind() == object::SymbolKind::Text),
        debuglink: obj
            .gnu_debuglink()
            .ok()
            .flatten()
            .map(|(name, _crc)| String::from_utf8_lossy(name).into_owned()),
    })
}

/// (virtual address, size in the file) of the executable `PT_LOAD` segments.
fn code_segment_addresses<P: object::read::elf::ProgramHeader>(
    headers: &[P],
    endian: P::Endian,
) -> Vec<(u64, u64)> {
    headers
        .iter()
        .filter(|h| {
            h.p_type(endian) == object::elf::PT_LOAD && h.p_flags(endian) & object::elf::PF_X != 0
        })
        .map(|h| (h.p_vaddr(endian).into(), h.p_filesz(endian).into()))
        .collect()
}

impl ElfSymbols {
    /// Opens the binary at `path` (as this process sees it, e.g. through
    /// `/proc/PID/root`); `debug_root` is where separate debug files live (normally
    /// `/usr/lib/debug`).
    pub fn open(path: &Path) -> Result<Self, ElfError> {
        Self::open_with_debug_roots(path, &[PathBuf::from(DEBUG_ROOT)])
    }

    /// [`Self::open`] with other directories of debug files, searched in order. A
    /// debug file whose build id is not the binary's is passed over (and named in
    /// [`Self::mismatched_debug_files`]).
    pub fn open_with_debug_roots(path: &Path, debug_roots: &[PathBuf]) -> Result<Self, ElfError> {
        let own = headers(path)?;
        let mut mismatched_debug_files = Vec::new();
        let debug_file = if own.has_dwarf {
            None
        } else {
            debug_file_candidates(path, &own.build_id, own.debuglink.as_deref(), debug_roots)
                .into_iter()
                .filter(|c| c.is_file() && c.as_path() != path)
                .find(|c| match headers(c) {
                    Ok(h) if h.build_id == own.build_id || own.build_id.is_empty() => true,
                    _ => {
                        mismatched_debug_files.push(c.clone());
                        false
                    }
                })
        };
        let own_loader = addr2line::Loader::new(path).ok();
        let debug = debug_file.and_then(|d| addr2line::Loader::new(&d).ok().map(|l| (d, l)));
        let has_names = own.has_dwarf || own.has_symbols || debug.is_some();
        let (dwarf, symtab, debug_file) = match debug {
            Some((file, debug)) => (Some(debug), own_loader, Some(file)),
            None => (own_loader, None, None),
        };
        Ok(Self {
            debug_file,
            has_names,
            segments: own.segments,
            code_segments: own.code_segments,
            fixed_address: own.fixed_address,
            build_id: own.build_id,
            mismatched_debug_files,
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

    /// The virtual address of runtime address `addr` in a mapping that starts at
    /// `start` with file offset `offset`: through the file offset and the segments;
    /// for a debug file without file offsets, a fixed-address executable's code is at
    /// its own address, and a mapping is taken to be that of its only code segment.
    pub fn address_of_runtime(&self, start: u64, offset: u64, addr: u64) -> Option<u64> {
        let file_offset = addr.checked_sub(start)?.checked_add(offset)?;
        if let Some(vaddr) = self.address_of(file_offset) {
            return Some(vaddr);
        }
        if self.code_segments.iter().any(|&(_, size)| size > 0) {
            return None;
        }
        if self.fixed_address {
            return Some(addr);
        }
        match self.code_segments.as_slice() {
            [(only, _)] => Some((only & !0xfff) + (addr - start)),
            _ => None,
        }
    }

    /// The frames of the code at file offset `offset`, innermost first; empty when
    /// nothing names it. `return_address` says the offset is where a call returns
    /// to (every frame but the leaf), so the call itself is looked up.
    pub fn frames(&self, offset: u64, return_address: bool) -> Vec<SymFrame> {
        self.address_of(offset)
            .map(|addr| self.frames_at(addr, return_address))
            .unwrap_or_default()
    }

    /// The frames of the code at virtual address `addr`, innermost first, as
    /// [`Self::frames`] says.
    pub fn frames_at(&self, addr: u64, return_address: bool) -> Vec<SymFrame> {
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

/// Where the separate debug file of a stripped binary may be, in order: by build id
/// under each root (`ROOT/.build-id/ab/cdef….debug`), else by its `.gnu_debuglink`
/// name next to it, in its `.debug` directory, or under each root with its directory.
fn debug_file_candidates(
    binary: &Path,
    build_id: &str,
    link: Option<&str>,
    debug_roots: &[PathBuf],
) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if build_id.len() > 2 {
        candidates.extend(
            debug_roots
                .iter()
                .map(|root| build_id_path(root, build_id, ".debug")),
        );
    }
    if let (Some(link), Some(dir)) = (link, binary.parent()) {
        candidates.push(dir.join(link));
        candidates.push(dir.join(".debug").join(link));
        let relative = dir.strip_prefix("/").unwrap_or(dir);
        candidates.extend(
            debug_roots
                .iter()
                .map(|root| root.join(relative).join(link)),
        );
    }
    candidates
}

/// The GNU build id of the object file at `path` in hexadecimal, empty when it has none.
pub fn build_id_of(path: &Path) -> Result<String, ElfError> {
    headers(path).map(|h| h.build_id)
}

/// `ROOT/.build-id/ab/cdef…SUFFIX`, where debug files and binaries are kept by build id.
pub fn build_id_path(root: &Path, build_id: &str, suffix: &str) -> PathBuf {
    let (head, rest) = build_id.split_at(build_id.len().min(2));
    root.join(".build-id")
        .join(head)
        .join(format!("{rest}{suffix}"))
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
