//! The merged strings of a merge, found by their text: a slot holds a string's hash,
//! length and id, and only a look-up whose hash and length match reads the merged
//! string to compare it. Every file of a day brings its whole string table (thousands
//! of function and file names); their look-ups in a hash map of owned strings were a
//! tenth of a merge's CPU, mostly cache misses, with every string held twice.

use crate::profile::StrId;
use crate::sample_table::hash_of;
use crate::slot_table::{Slot, SlotTable};

/// The merged strings' ids by their text (the strings themselves are the merged
/// profile's).
#[derive(Debug, Default)]
pub(crate) struct StringIndex(SlotTable<StringSlot>);

#[derive(Debug, Clone, Copy)]
struct StringSlot {
    hash: u64,
    /// The string's id; `u32::MAX` for a free slot.
    id: u32,
    /// Its length in bytes (saturated).
    len: u32,
}

impl Slot for StringSlot {
    const FREE: Self = StringSlot {
        hash: 0,
        id: u32::MAX,
        len: 0,
    };

    fn hash(&self) -> u64 {
        self.hash
    }

    fn id(&self) -> u32 {
        self.id
    }
}

/// A length as a slot keeps it.
fn saturated(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

impl StringIndex {
    /// The hash a look-up of `text` is made with.
    pub(crate) fn hash(text: &str) -> u64 {
        hash_of(text)
    }

    /// The id of `text` (whose hash is `hash`) among `strings`, those this index holds.
    #[inline]
    pub(crate) fn find(&self, hash: u64, text: &str, strings: &[String]) -> Option<StrId> {
        let len = saturated(text.len());
        self.0.find(hash, |slot| {
            slot.len == len && strings.get(slot.id as usize).is_some_and(|s| s == text)
        })
    }

    /// Records `text`, whose hash is `hash`, as string `id`.
    pub(crate) fn insert(&mut self, hash: u64, text: &str, id: StrId) {
        self.0.insert(StringSlot {
            hash,
            id,
            len: saturated(text.len()),
        });
    }

    /// Reads the first slot of each of `hashes`, then the start of the string each
    /// one holds, every read of a stage without waiting on another, so that the
    /// look-ups that follow find them near.
    pub(crate) fn touch(&self, hashes: &[u64], strings: &[String]) {
        self.0.touch(hashes.iter().copied());
        let seen = hashes.iter().fold(0u8, |acc, &h| {
            let first = self
                .0
                .first_slot(h)
                .and_then(|slot| strings.get(slot.id as usize))
                .and_then(|s| s.as_bytes().first());
            acc ^ first.copied().unwrap_or(0)
        });
        std::hint::black_box(seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interns `all` in order, as the merge does: each one's id.
    fn intern(all: &[&str], hash: impl Fn(&str) -> u64) -> Vec<StrId> {
        let mut index = StringIndex::default();
        let mut merged: Vec<String> = Vec::new();
        all.iter()
            .map(|&s| {
                let h = hash(s);
                index.find(h, s, &merged).unwrap_or_else(|| {
                    let id = merged.len() as StrId;
                    merged.push(s.to_string());
                    index.insert(h, s, id);
                    id
                })
            })
            .collect()
    }

    #[test]
    fn equal_strings_get_one_id_and_others_another() {
        let all = ["", "main", "main.go", "mai", "main", "", "Main", "main.go"];
        let ids = intern(&all, StringIndex::hash);
        assert_eq!(ids, vec![0, 1, 2, 3, 1, 0, 4, 2]);
        // With every hash the same, the lengths and texts alone tell them apart.
        assert_eq!(intern(&all, |_| 7), ids);
    }

    #[test]
    fn ids_survive_the_table_growing() {
        let names: Vec<String> = (0..5_000).map(|i| format!("fn_{i}")).collect();
        let all: Vec<&str> = names.iter().chain(&names).map(String::as_str).collect();
        let expected: Vec<StrId> = (0..5_000).chain(0..5_000).collect();
        assert_eq!(intern(&all, StringIndex::hash), expected);
    }
}
