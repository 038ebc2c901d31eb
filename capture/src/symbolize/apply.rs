//! Writing names into a decoded profile: strings and functions interned into its own
//! tables, lines set on a location, its mapping marked as symbolized.

use std::collections::HashMap;

use profile_model::Profile;
use profile_model::profile::{Function, FunctionId, Line, LocationId, StrId};

use crate::symbols::elf::SymFrame;

/// pprof's mapping flags: has functions, filenames, line numbers, inline frames.
const HAS_FUNCTIONS: u8 = 1;
const HAS_LINES: u8 = 0b1110;

/// Interns names into one profile's string and function tables.
pub(super) struct Writer {
    strings: HashMap<String, StrId>,
    functions: HashMap<(StrId, StrId), FunctionId>,
}

impl Writer {
    /// A writer for `profile`, knowing its strings and functions.
    pub(super) fn new(profile: &Profile) -> Self {
        let strings = profile
            .strings
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as StrId))
            .collect();
        let functions = profile
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| ((f.name, f.filename), i as FunctionId))
            .collect();
        Self { strings, functions }
    }

    fn string(&mut self, profile: &mut Profile, s: &str) -> StrId {
        if let Some(&id) = self.strings.get(s) {
            return id;
        }
        profile.strings.push(s.to_string());
        let id = (profile.strings.len() - 1) as StrId;
        self.strings.insert(s.to_string(), id);
        id
    }

    fn function(&mut self, profile: &mut Profile, name: &str, file: &str) -> FunctionId {
        let key = (self.string(profile, name), self.string(profile, file));
        *self.functions.entry(key).or_insert_with(|| {
            profile.functions.push(Function {
                name: key.0,
                system_name: key.0,
                filename: key.1,
                start_line: 0,
            });
            (profile.functions.len() - 1) as FunctionId
        })
    }

    /// Replaces the lines of location `id` with `frames` (innermost first) and marks
    /// its mapping as having what they tell.
    pub(super) fn set_frames(
        &mut self,
        profile: &mut Profile,
        id: LocationId,
        frames: &[SymFrame],
    ) {
        let lines: Vec<Line> = frames
            .iter()
            .map(|f| Line {
                function: self.function(profile, &f.function, &f.file),
                line: i64::from(f.line),
                column: 0,
            })
            .collect();
        let flags = if frames.iter().any(|f| f.line > 0) {
            HAS_FUNCTIONS | HAS_LINES
        } else {
            HAS_FUNCTIONS
        };
        let Some(location) = profile.locations.get_mut(id as usize) else {
            return;
        };
        location.lines = lines;
        if let Some(m) = location
            .mapping
            .and_then(|m| profile.mappings.get_mut(m as usize))
        {
            m.flags |= flags;
        }
    }
}

/// Whether location `id` still needs names: it has no lines, or only the
/// `binary+0xOFFSET` placeholders a recorder writes for addresses it could not name.
pub(super) fn needs_names(profile: &Profile, id: usize) -> bool {
    profile.locations.get(id).is_some_and(|l| {
        l.lines.iter().all(|line| {
            profile
                .functions
                .get(line.function as usize)
                .is_some_and(|f| is_placeholder(profile.str(f.name)))
        })
    })
}

/// `libc.so.6+0x1a2b`: the name of an address no symbol named.
fn is_placeholder(name: &str) -> bool {
    name.rsplit_once("+0x").is_some_and(|(binary, offset)| {
        !binary.is_empty() && !offset.is_empty() && offset.chars().all(|c| c.is_ascii_hexdigit())
    })
}

#[cfg(test)]
mod tests {
    use super::is_placeholder;

    #[test]
    fn placeholders_are_binary_plus_hex_offset() {
        assert!(is_placeholder("libc.so.6+0x1a2b"));
        assert!(is_placeholder("[unknown]+0x7f00"));
        assert!(!is_placeholder("main.fib"));
        assert!(!is_placeholder("+0x10"));
        assert!(!is_placeholder("operator+0xzz"));
    }
}
