//! Byte strings interned in one arena: each distinct key is stored once, numbered in
//! the order first seen.
//!
//! What tells frames apart across the thousands of profiles of a merge is looked up
//! once per function per profile; a map of `String`s spends most of that lookup
//! following pointers to scattered heap blocks. Here the table holds only numbers,
//! and every key lies in one growing buffer, with its hash kept for growing the table.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Distinct byte strings, numbered 0, 1, 2, … in the order first interned.
#[derive(Debug, Default, Clone)]
pub(crate) struct Interner {
    table: HashTable<u32>,
    /// Every key, one after the other.
    bytes: Vec<u8>,
    /// Per key: where it ends in `bytes` (it starts where the previous one ends).
    ends: Vec<usize>,
    /// Per key: its hash.
    hashes: Vec<u64>,
}

impl Interner {
    /// The number of `key`, and whether it was new (then numbered [`Interner::len`]
    /// before the call).
    pub(crate) fn intern(&mut self, key: &[u8]) -> (u32, bool) {
        let hash = FxBuildHasher.hash_one(key);
        let Self {
            table,
            bytes,
            ends,
            hashes,
        } = self;
        let key_of = |n: u32| {
            let n = n as usize;
            let start = n.checked_sub(1).map_or(0, |p| ends[p]);
            &bytes[start..ends[n]]
        };
        if let Some(&n) = table.find(hash, |&n| key_of(n) == key) {
            return (n, false);
        }
        let n = ends.len() as u32;
        table.insert_unique(hash, n, |&n| hashes[n as usize]);
        bytes.extend_from_slice(key);
        ends.push(bytes.len());
        hashes.push(hash);
        (n, true)
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;

    #[test]
    fn equal_keys_get_one_number_and_different_keys_the_next() {
        let mut i = Interner::default();
        assert_eq!(i.intern(b"main.main"), (0, true));
        assert_eq!(i.intern(b"runtime.mallocgc"), (1, true));
        assert_eq!(i.intern(b"main.main"), (0, false));
        assert_eq!(i.intern(b""), (2, true));
        assert_eq!(i.intern(b""), (2, false));
        // A prefix of a key is a different key.
        assert_eq!(i.intern(b"main."), (3, true));
    }

    #[test]
    fn keys_stay_found_as_the_table_grows() {
        let mut i = Interner::default();
        for n in 0..10_000u32 {
            assert_eq!(i.intern(format!("f{n}").as_bytes()), (n, true));
        }
        for n in (0..10_000u32).rev() {
            assert_eq!(i.intern(format!("f{n}").as_bytes()), (n, false));
        }
    }
}
