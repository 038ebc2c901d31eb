//! Frames: what one box of a flame graph or one row of a top table stands for, at a
//! chosen granularity (function, function + line, or address).

use std::borrow::Cow;
use std::collections::hash_map::Entry;

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::names::{NodeParts, clean_path, full_function_name, function_name, node_key, node_name};
use crate::profile::{LocationId, Profile};

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
    /// What users read, as pprof prints the node: the function's name, with
    /// `file:line` at line granularity and the address first at address granularity;
    /// `[binary]` where only the binary is known, `<unknown>` where nothing is.
    pub name: String,
    /// The bare function name (the name for coloring and for matching filters).
    pub function: String,
    /// The function's full name where [`Frame::function`] shortens it (a demangled
    /// C++ name's parameters and template arguments), else empty.
    pub full_name: String,
    /// Source file, empty when unknown.
    pub file: String,
    /// Source line: the function's start line at function granularity.
    pub line: i64,
    /// The function's first line, 0 when unknown.
    pub start_line: i64,
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
    /// What tells each frame apart from the others (see [`LineParts::frame`]).
    keys: Vec<String>,
    /// `location_frames[offsets[l]..offsets[l + 1]]` are the frames of location `l`, leaf first.
    offsets: Vec<u32>,
    location_frames: Vec<FrameId>,
}

/// What one line of a location (or a location without lines) is, before it is
/// named at a granularity.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LineParts<'a> {
    /// The function's name as pprof shows it, empty when it has none.
    pub function: &'a str,
    /// The function's source file, as stored.
    pub file: &'a str,
    /// The line's number.
    pub line: i64,
    /// The function's first line.
    pub start_line: i64,
    /// The location's binary path.
    pub binary: &'a str,
    /// The location's address.
    pub address: u64,
}

impl LineParts<'_> {
    /// The frame this line is at `granularity`, and the key that tells it apart from
    /// others ([`node_key`]: what the granularity keeps, and for a frame without a
    /// function name also its binary and start line).
    pub(crate) fn frame(&self, granularity: Granularity) -> (String, Frame) {
        let fine = granularity != Granularity::Function;
        let file = if fine {
            clean_path(self.file)
        } else {
            "".into()
        };
        let parts = NodeParts {
            address: if granularity == Granularity::Address {
                self.address
            } else {
                0
            },
            name: self.function,
            file: &file,
            line: if fine { self.line } else { 0 },
            binary: self.binary,
        };
        let name = node_name(&parts);
        let start_line = if self.function.is_empty() {
            self.start_line
        } else {
            0
        };
        let key = node_key(&name, &parts, start_line);
        let frame = Frame {
            function: if self.function.is_empty() {
                name.clone()
            } else {
                self.function.to_string()
            },
            name,
            full_name: String::new(),
            file: self.file.to_string(),
            line: if fine { self.line } else { self.start_line },
            start_line: self.start_line,
            binary: self.binary.to_string(),
            address: parts.address,
        };
        (key, frame)
    }
}

impl FrameTable {
    /// Builds the frame table. As pprof's `-hide`, lines whose function name or file
    /// matches `hide` are left out, and so are whole locations whose binary matches.
    pub fn build(profile: &Profile, granularity: Granularity, hide: Option<&Regex>) -> Self {
        let mut table = FrameTable {
            frames: Vec::new(),
            keys: Vec::new(),
            offsets: Vec::with_capacity(profile.locations.len() + 1),
            location_frames: Vec::with_capacity(profile.locations.len()),
        };
        let mut by_key: FxHashMap<String, FrameId> = FxHashMap::default();
        // Each function named once (and whether `hide` removes it); at function
        // granularity a named function's frame is found once too.
        let names: Vec<(Cow<'_, str>, bool)> = (profile.functions.iter())
            .map(|f| {
                let name = function_name(profile.str(f.name), profile.str(f.system_name));
                let file = profile.str(f.filename);
                let hidden = hide.is_some_and(|re| re.is_match(&name) || re.is_match(file));
                (name, hidden)
            })
            .collect();
        let mut function_frames: Vec<Option<FrameId>> = vec![None; names.len()];
        table.offsets.push(0);
        for loc in &profile.locations {
            let binary = loc
                .mapping
                .map_or("", |m| profile.str(profile.mappings[m as usize].filename));
            if hide.is_some_and(|re| re.is_match(binary)) {
                table.offsets.push(table.location_frames.len() as u32);
                continue;
            }
            let at = LineParts {
                binary,
                address: loc.address,
                ..LineParts::default()
            };
            if loc.lines.is_empty() {
                let (key, frame) = at.frame(granularity);
                let id = table.intern(&mut by_key, key, frame);
                table.location_frames.push(id);
            }
            for line in &loc.lines {
                let f = line.function as usize;
                let (fname, hidden) = &names[f];
                if *hidden {
                    continue;
                }
                let named = granularity == Granularity::Function && !fname.is_empty();
                if let (true, Some(id)) = (named, function_frames[f]) {
                    table.location_frames.push(id);
                    continue;
                }
                let function = &profile.functions[f];
                let parts = LineParts {
                    function: fname,
                    file: profile.str(function.filename),
                    line: line.line,
                    start_line: function.start_line,
                    ..at
                };
                let (key, mut frame) = parts.frame(granularity);
                let full = full_function_name(
                    profile.str(function.name),
                    profile.str(function.system_name),
                );
                if full != *fname {
                    frame.full_name = full.into_owned();
                }
                let id = table.intern(&mut by_key, key, frame);
                if named {
                    function_frames[f] = Some(id);
                }
                table.location_frames.push(id);
            }
            table.offsets.push(table.location_frames.len() as u32);
        }
        table
    }

    fn intern(
        &mut self,
        by_key: &mut FxHashMap<String, FrameId>,
        key: String,
        frame: Frame,
    ) -> FrameId {
        match by_key.entry(key) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let id = self.frames.len() as FrameId;
                self.frames.push(frame);
                self.keys.push(e.key().clone());
                *e.insert(id)
            }
        }
    }

    /// What tells frame `id` apart from the others: frames of one name may differ
    /// (pprof's nodes of functions without a name, by binary and start line).
    pub fn key(&self, id: FrameId) -> &str {
        &self.keys[id as usize]
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

/// The package or module of a function name, for coloring related frames alike:
/// `github.com/acme/svc/handler.(*S).Get` → `github.com/acme/svc/handler`,
/// `std::collections::HashMap::insert` → `std::collections`, `[libc.so.6]` → `libc.so.6`.
pub fn package_of(function: &str) -> &str {
    if let Some(binary) = function.strip_prefix('[').and_then(|f| f.strip_suffix(']')) {
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
