//! The merged locations of a merge, found by their parts with one look at memory.
//!
//! Merging a day of files interns every location of every file (thousands per file).
//! Found through a hash map of ids, each look-up read three places far apart: the
//! hash's slot, the merged location, and its lines; on a machine whose caches other
//! work shares, all three were misses, and interning locations took an eighth of a
//! merge's CPU. Here each slot holds the location's hash and its parts, its first line
//! included, so that a location of at most one line (nearly every one) is matched in
//! its slot alone; only the further lines of an inlined location are read from the
//! merged location.

use crate::profile::{Line, LocationId};
use crate::slot_table::{Slot, SlotTable};

/// A location's parts, as the merge has them before it is built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    /// The merged mapping's id, if any.
    pub mapping: Option<u32>,
    /// The instruction address.
    pub address: u64,
    /// pprof's `is_folded` flag.
    pub is_folded: bool,
    /// Its lines, with merged function ids.
    pub lines: &'a [Line],
}

/// The merged locations' ids by their parts.
#[derive(Debug, Default)]
pub(crate) struct LocationIndex(SlotTable<LocationSlot>);

/// One slot: a location's hash and parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LocationSlot {
    hash: u64,
    address: u64,
    /// The first line's number and column (0 without lines).
    line: i64,
    column: i64,
    /// The merged location's id; `u32::MAX` for a free slot.
    id: u32,
    /// The mapping's id (0 for none).
    mapping: u32,
    /// The first line's function (0 without lines).
    function: u32,
    /// The number of lines (at most `u32::MAX >> 2`) times four, plus two when it has
    /// a mapping, plus `is_folded`.
    shape: u32,
}

impl Slot for LocationSlot {
    const FREE: Self = LocationSlot {
        hash: 0,
        address: 0,
        line: 0,
        column: 0,
        id: u32::MAX,
        mapping: 0,
        function: 0,
        shape: 0,
    };

    fn hash(&self) -> u64 {
        self.hash
    }

    fn id(&self) -> u32 {
        self.id
    }
}

impl LocationSlot {
    /// The slot of location `id` with these parts.
    fn of(hash: u64, parts: Parts<'_>, id: u32) -> Self {
        let first = parts.lines.first().copied().unwrap_or_default();
        // A count too large to hold is capped: such a location's lines are compared
        // whole anyway.
        let lines = u32::try_from(parts.lines.len())
            .unwrap_or(u32::MAX)
            .min(u32::MAX >> 2);
        Self {
            hash,
            address: parts.address,
            line: first.line,
            column: first.column,
            id,
            mapping: parts.mapping.unwrap_or(0),
            function: first.function,
            shape: lines << 2
                | u32::from(parts.mapping.is_some()) << 1
                | u32::from(parts.is_folded),
        }
    }
}

impl LocationIndex {
    /// The id of the location among `locations` (those this index holds) with
    /// `parts`, whose hash is `hash`.
    #[inline]
    pub(crate) fn find(
        &self,
        hash: u64,
        parts: Parts<'_>,
        locations: &[crate::profile::Location],
    ) -> Option<LocationId> {
        // The parts the slot compares; beyond the first line, the merged location's.
        let key = LocationSlot::of(hash, parts, 0);
        self.0.find(hash, |slot| {
            LocationSlot { id: 0, ..*slot } == key
                && (parts.lines.len() < 2
                    || locations
                        .get(slot.id as usize)
                        .is_some_and(|l| l.lines == parts.lines))
        })
    }

    /// Reads the first slot of each of `hashes` (see [`SlotTable::touch`]).
    pub(crate) fn touch(&self, hashes: impl Iterator<Item = u64>) {
        self.0.touch(hashes);
    }

    /// Records the location with `parts`, whose hash is `hash`, as merged location
    /// `id`.
    pub(crate) fn insert(&mut self, hash: u64, parts: Parts<'_>, id: LocationId) {
        self.0.insert(LocationSlot::of(hash, parts, id));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::profile::Location;

    fn parts(l: &Location) -> Parts<'_> {
        Parts {
            mapping: l.mapping,
            address: l.address,
            is_folded: l.is_folded,
            lines: &l.lines,
        }
    }

    fn location(mapping: Option<u32>, address: u64, lines: &[(u32, i64)]) -> Location {
        Location {
            mapping,
            address,
            lines: lines
                .iter()
                .map(|&(function, line)| Line {
                    function,
                    line,
                    column: 0,
                })
                .collect(),
            is_folded: false,
        }
    }

    /// Interns `all` in order: each one's id, as the merge does.
    fn intern(all: &[Location], hash: impl Fn(Parts<'_>) -> u64) -> Vec<LocationId> {
        let mut index = LocationIndex::default();
        let mut merged: Vec<Location> = Vec::new();
        all.iter()
            .map(|l| {
                let h = hash(parts(l));
                index.find(h, parts(l), &merged).unwrap_or_else(|| {
                    let id = merged.len() as LocationId;
                    merged.push(l.clone());
                    index.insert(h, parts(l), id);
                    id
                })
            })
            .collect()
    }

    fn hash_parts(p: Parts<'_>) -> u64 {
        crate::sample_table::hash_of((p.mapping, p.address, p.is_folded, p.lines))
    }

    #[test]
    fn equal_locations_get_one_id_and_any_difference_another() {
        let base = location(Some(1), 0x10, &[(3, 7)]);
        let mut folded = base.clone();
        folded.is_folded = true;
        let mut column = base.clone();
        column.lines[0].column = 2;
        let all = vec![
            base.clone(),
            location(Some(1), 0x10, &[(3, 8)]),
            location(Some(2), 0x10, &[(3, 7)]),
            location(None, 0x10, &[(3, 7)]),
            location(Some(1), 0x11, &[(3, 7)]),
            location(Some(1), 0x10, &[(4, 7)]),
            location(Some(1), 0x10, &[]),
            location(Some(1), 0x10, &[(3, 7), (5, 1)]),
            location(Some(1), 0x10, &[(3, 7), (5, 2)]),
            folded,
            column,
            base.clone(),
            location(Some(1), 0x10, &[(3, 7), (5, 2)]),
        ];
        let hashed = intern(&all, hash_parts);
        assert_eq!(hashed, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 8]);
        // With every hash the same, the parts alone tell them apart (inlined lines
        // beyond the first read from the merged location).
        assert_eq!(intern(&all, |_| 42), hashed);
    }

    #[test]
    fn ids_survive_the_table_growing() {
        let all: Vec<Location> = (0..5_000u64)
            .map(|a| location(Some((a % 3) as u32), a, &[((a % 7) as u32, a as i64)]))
            .collect();
        let twice: Vec<Location> = all.iter().chain(&all).cloned().collect();
        let ids = intern(&twice, hash_parts);
        let expected: Vec<LocationId> = (0..5_000).chain(0..5_000).collect();
        assert_eq!(ids, expected);
    }
}
