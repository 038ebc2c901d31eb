//! Frames: what one box of a flame graph or one row of a top table stands for, at a
//! chosen granularity (function, function + line, or address).

use std::collections::hash_map::Entry;

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::profile::{Location, LocationId, Mapping, Profile, StrId};

/// Index into [`FrameTable::frames`].
pub type FrameId = u32;

/// How finely stacks are told apart, as pprof's `-granularity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Granularity {
    /// One frame per function name (pprof's default, `functions`).
    #[default]
    Function,
    /// One frame per function and source line (`lines`).
    FunctionLine,
    /// One frame per instruction address (`addresses`).
    Address,
}

impl Granularity {
    /// All granularities, coarsest first.
    pub const ALL: [Granularity; 3] = [Self::Function, Self::FunctionLine, Self::Address];

    /// A short label for menus.
    pub fn label(self) -> &'static str {
        match self {
            Self::Function => "function",
            Self::FunctionLine => "function + line",
            Self::Address => "address",
        }
    }
}

/// One frame: its display name and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frame {
    /// What users read: the function name (with `:line` or `@0xaddr` at finer granularity),
    /// or `binary+0xoffset` for an unsymbolized address.
    pub name: String,
    /// The bare function name (the name for coloring and for matching filters).
    pub function: String,
    /// Source file, empty when unknown.
    pub file: String,
    /// Source line: the function's start line at function granularity.
    pub line: i64,
    /// Path of the binary (mapping), empty when unknown.
    pub binary: String,
    /// Instruction address at address granularity, else 0.
    pub address: u64,
}

/// The frames of a profile at one granularity, and the frames of every location.
#[derive(Debug, Clone, Default)]
pub struct FrameTable {
    /// The distinct frames.
    pub frames: Vec<Frame>,
    /// `location_frames[offsets[l]..offsets[l + 1]]` are the frames of location `l`, leaf first.
    offsets: Vec<u32>,
    location_frames: Vec<FrameId>,
}

impl FrameTable {
    /// Builds the frame table. As pprof's `-hide`, lines whose function name or file
    /// matches `hide` are left out, and so are whole locations whose binary matches.
    pub fn build(profile: &Profile, granularity: Granularity, hide: Option<&Regex>) -> Self {
        let mut table = FrameTable {
            frames: Vec::new(),
            offsets: Vec::with_capacity(profile.locations.len() + 1),
            location_frames: Vec::with_capacity(profile.locations.len()),
        };
        let mut by_key: FxHashMap<String, FrameId> = FxHashMap::default();
        table.offsets.push(0);
        for loc in &profile.locations {
            let binary = loc
                .mapping
                .map_or("", |m| profile.str(profile.mappings[m as usize].filename));
            if hide.is_some_and(|re| re.is_match(binary)) {
                table.offsets.push(table.location_frames.len() as u32);
                continue;
            }
            if loc.lines.is_empty() {
                let name = unsymbolized_name(profile, loc);
                let frame = Frame {
                    function: name.clone(),
                    name,
                    binary: binary.to_string(),
                    address: loc.address,
                    ..Frame::default()
                };
                let id = table.intern(&mut by_key, frame);
                table.location_frames.push(id);
            }
            for (line_index, line) in loc.lines.iter().enumerate() {
                let function = &profile.functions[line.function as usize];
                let fname = function_name(
                    profile.str(function.name),
                    profile.str(function.system_name),
                );
                let file = profile.str(function.filename);
                if hide.is_some_and(|re| re.is_match(fname) || re.is_match(file)) {
                    continue;
                }
                let fname = if fname.is_empty() {
                    unsymbolized_name(profile, loc)
                } else {
                    fname.to_string()
                };
                let file = file.to_string();
                let frame = match granularity {
                    Granularity::Function => Frame {
                        name: fname.clone(),
                        function: fname,
                        file,
                        line: function.start_line,
                        binary: binary.to_string(),
                        address: 0,
                    },
                    Granularity::FunctionLine => Frame {
                        name: line_frame_name(&fname, line.line),
                        function: fname,
                        file,
                        line: line.line,
                        binary: binary.to_string(),
                        address: 0,
                    },
                    Granularity::Address => Frame {
                        name: address_frame_name(&fname, loc.address, line_index > 0),
                        function: fname,
                        file,
                        line: line.line,
                        binary: binary.to_string(),
                        address: loc.address,
                    },
                };
                let id = table.intern(&mut by_key, frame);
                table.location_frames.push(id);
            }
            table.offsets.push(table.location_frames.len() as u32);
        }
        table
    }

    fn intern(&mut self, by_key: &mut FxHashMap<String, FrameId>, frame: Frame) -> FrameId {
        let key = frame_key(&frame.name, frame.address, &frame.binary);
        match by_key.entry(key) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let id = self.frames.len() as FrameId;
                self.frames.push(frame);
                *e.insert(id)
            }
        }
    }

    /// The frames of a location, leaf (innermost inlined) first; empty when all are hidden.
    pub fn of_location(&self, location: LocationId) -> &[FrameId] {
        let l = location as usize;
        &self.location_frames[self.offsets[l] as usize..self.offsets[l + 1] as usize]
    }

    /// The frame with id `id`.
    pub fn get(&self, id: FrameId) -> &Frame {
        &self.frames[id as usize]
    }

    /// Number of distinct frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether the table has no frames.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// A function's name as pprof names it: its name, or where that is empty its system
/// (linker) name.
pub(crate) fn function_name<'s>(name: &'s str, system_name: &'s str) -> &'s str {
    if name.is_empty() { system_name } else { name }
}

/// The name of a frame at line granularity: the function's name and the line.
pub(crate) fn line_frame_name(function: &str, line: i64) -> String {
    format!("{function}:{line}")
}

/// The name of a frame at address granularity: the function's name and the address,
/// marked when the function is inlined there (not the location's outermost line).
pub(crate) fn address_frame_name(function: &str, address: u64, inlined: bool) -> String {
    let mark = if inlined { " (inlined)" } else { "" };
    format!("{function} @{address:#x}{mark}")
}

/// What tells frames apart: the name, and for a frame of one address (an
/// unsymbolized location, or address granularity) also the address and the binary.
pub(crate) fn frame_key(name: &str, address: u64, binary: &str) -> String {
    match address {
        0 => name.to_string(),
        address => format!("{name}\0{address:x}\0{binary}"),
    }
}

fn unsymbolized_name(profile: &Profile, loc: &Location) -> String {
    let mapping = loc.mapping.map(|m| &profile.mappings[m as usize]);
    address_name(mapping, |id| profile.str(id), loc.address)
}

/// `binary+0xoffset` for an address without symbols, or `0xaddress` without a mapping.
pub(crate) fn address_name<'s>(
    mapping: Option<&Mapping>,
    str: impl Fn(StrId) -> &'s str,
    address: u64,
) -> String {
    match mapping {
        Some(m) => {
            let path = str(m.filename);
            let base = path.rsplit('/').next().unwrap_or(path);
            let offset = address
                .wrapping_sub(m.memory_start)
                .wrapping_add(m.file_offset);
            format!("{base}+{offset:#x}")
        }
        None => format!("{address:#x}"),
    }
}

/// The package or module of a function name, for coloring related frames alike:
/// `github.com/acme/svc/handler.(*S).Get` → `github.com/acme/svc/handler`,
/// `std::collections::HashMap::insert` → `std::collections`, `libc.so.6+0x12` → `libc.so.6`.
pub fn package_of(function: &str) -> &str {
    if let Some((binary, _)) = function.split_once("+0x") {
        return binary;
    }
    // Rust / C++: the first two path segments.
    if let Some(first) = function.find("::") {
        let rest = &function[first + 2..];
        return match rest.find("::") {
            Some(second) => &function[..first + 2 + second],
            None => &function[..first],
        };
    }
    // Go: everything up to the first '.' after the last '/'.
    let slash = function.rfind('/').map_or(0, |i| i + 1);
    match function[slash..].find('.') {
        Some(dot) => &function[..slash + dot],
        None => function,
    }
}
