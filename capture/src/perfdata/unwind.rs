//! User stacks of `perf record --call-graph dwarf` unwound with framehop (samply's
//! unwinder): each sample carries its user registers and a copy of the top of its
//! stack; framehop walks them with the `.eh_frame` (or `.debug_frame`) of each binary
//! the process has mapped, read from the mapping's own path when its build id is the
//! file's (or the file names none). x86_64 only.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder as _};
use object::{Object as _, ObjectSection as _, ObjectSegment as _};

use super::builder::MappedFile;

/// Frames unwound at most per sample: a stack that never ends is cut there.
const MAX_FRAMES: usize = 1024;

/// The unwinding sections of one binary, shared by every process that maps it.
#[derive(Debug)]
struct Binary {
    /// (file offset, size, address) of each loadable segment.
    segments: Vec<(u64, u64, u64)>,
    sections: ExplicitModuleSectionInfo<Arc<[u8]>>,
}

/// A register set and the stack bytes copied at its stack pointer.
#[derive(Debug, Clone, Copy)]
pub(super) struct UserState<'s> {
    /// Instruction pointer.
    pub ip: u64,
    /// Stack pointer.
    pub sp: u64,
    /// Frame pointer.
    pub bp: u64,
    /// The stack from `sp` up.
    pub stack: &'s [u8],
}

/// One process's unwinder and how many of its code mappings it has been given.
struct Process {
    unwinder: UnwinderX86_64<Arc<[u8]>>,
    seen: usize,
}

/// Unwinds user stacks, one framehop unwinder per process.
pub(super) struct DwarfUnwinder {
    cache: CacheX86_64,
    processes: HashMap<i32, Process>,
    binaries: HashMap<(String, String), Option<Arc<Binary>>>,
    /// Binaries whose unwinding information could not be read, with why.
    pub unreadable: BTreeSet<String>,
}

impl DwarfUnwinder {
    /// An unwinder with no process yet.
    pub fn new() -> Self {
        Self {
            cache: CacheX86_64::new(),
            processes: HashMap::new(),
            binaries: HashMap::new(),
            unreadable: BTreeSet::new(),
        }
    }

    /// Forgets process `pid`'s mappings (it ran a new program, or was forked).
    pub fn forget(&mut self, pid: i32) {
        self.processes.remove(&pid);
    }

    /// Appends the frames of `state` in process `pid`, whose executable mappings so
    /// far are `maps` (new ones are added to its unwinder), leaf first, to `out`.
    pub fn unwind(
        &mut self,
        pid: i32,
        maps: &[MappedFile],
        state: UserState<'_>,
        out: &mut Vec<u64>,
    ) {
        let Process { unwinder, seen } = self.processes.entry(pid).or_insert_with(|| Process {
            unwinder: UnwinderX86_64::new(),
            seen: 0,
        });
        for map in maps.get(*seen..).unwrap_or_default() {
            let key = (map.path.clone(), map.build_id.clone());
            let binary = self
                .binaries
                .entry(key)
                .or_insert_with(|| match read_binary(map) {
                    Ok(b) => Some(Arc::new(b)),
                    Err(e) => {
                        if map.path.starts_with('/') {
                            self.unreadable.insert(format!("{}: {e}", map.path));
                        }
                        None
                    }
                });
            if let Some(module) = binary.as_ref().and_then(|b| module(map, b)) {
                unwinder.add_module(module);
            }
        }
        *seen = maps.len();
        let mut read_stack = |address: u64| -> Result<u64, ()> {
            let at = usize::try_from(address.checked_sub(state.sp).ok_or(())?).map_err(|_| ())?;
            let bytes = state
                .stack
                .get(at..at.checked_add(8).ok_or(())?)
                .ok_or(())?;
            Ok(u64::from_le_bytes(bytes.try_into().map_err(|_| ())?))
        };
        let regs = UnwindRegsX86_64::new(state.ip, state.sp, state.bp);
        let mut frames = unwinder.iter_frames(state.ip, regs, &mut self.cache, &mut read_stack);
        while let Ok(Some(frame)) = frames.next() {
            if out.len() >= MAX_FRAMES {
                break;
            }
            out.push(frame.address());
        }
    }
}

/// The module of `binary` mapped at `map`: its addresses biased by where the mapping
/// put the segment holding the mapping's file offset.
fn module(map: &MappedFile, binary: &Binary) -> Option<Module<Arc<[u8]>>> {
    let &(offset, _, address) = binary.segments.iter().find(|(offset, size, _)| {
        *offset <= map.offset && map.offset < offset.saturating_add(*size)
    })?;
    let svma = address.checked_add(map.offset - offset)?;
    let bias = map.start.wrapping_sub(svma);
    Some(Module::new(
        map.path.clone(),
        map.start..map.limit,
        bias,
        binary_sections(binary),
    ))
}

fn binary_sections(binary: &Binary) -> ExplicitModuleSectionInfo<Arc<[u8]>> {
    let s = &binary.sections;
    ExplicitModuleSectionInfo {
        base_svma: 0,
        text_svma: s.text_svma.clone(),
        text: s.text.clone(),
        got_svma: s.got_svma.clone(),
        eh_frame_svma: s.eh_frame_svma.clone(),
        eh_frame: s.eh_frame.clone(),
        eh_frame_hdr_svma: s.eh_frame_hdr_svma.clone(),
        eh_frame_hdr: s.eh_frame_hdr.clone(),
        debug_frame: s.debug_frame.clone(),
        ..ExplicitModuleSectionInfo::default()
    }
}

/// Reads the unwinding sections of the binary at `map`'s path, when its build id is
/// the mapping's (or the mapping names none).
fn read_binary(map: &MappedFile) -> Result<Binary, String> {
    if !map.path.starts_with('/') {
        return Err("not a file".into());
    }
    let data = std::fs::read(&map.path).map_err(|e| e.to_string())?;
    let obj = object::File::parse(&*data).map_err(|e| e.to_string())?;
    if !map.build_id.is_empty() {
        let id = obj.build_id().ok().flatten().map(super::kernel::hex);
        if id.as_deref() != Some(map.build_id.as_str()) {
            return Err(format!(
                "not the recorded binary (build id {})",
                map.build_id
            ));
        }
    }
    let section = |name: &str| {
        let s = obj.section_by_name(name)?;
        let range = s.address()..s.address().saturating_add(s.size());
        let bytes: Arc<[u8]> = s.uncompressed_data().ok()?.into_owned().into();
        Some((range, bytes))
    };
    let (text_svma, text) = section(".text").unzip();
    let (eh_frame_svma, eh_frame) = section(".eh_frame").unzip();
    let (eh_frame_hdr_svma, eh_frame_hdr) = section(".eh_frame_hdr").unzip();
    let got_svma = section(".got").map(|(r, _)| r);
    let debug_frame = section(".debug_frame").map(|(_, b)| b);
    if eh_frame.is_none() && debug_frame.is_none() {
        return Err("no .eh_frame nor .debug_frame".into());
    }
    Ok(Binary {
        segments: obj
            .segments()
            .map(|s| {
                let (offset, size) = s.file_range();
                (offset, size, s.address())
            })
            .collect(),
        sections: ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma,
            text,
            got_svma,
            eh_frame_svma,
            eh_frame,
            eh_frame_hdr_svma,
            eh_frame_hdr,
            debug_frame,
            ..ExplicitModuleSectionInfo::default()
        },
    })
}
