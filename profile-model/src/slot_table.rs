//! An open-addressing table of ids whose slots hold what tells their items apart, for
//! the look-ups a merge makes by the thousand per file (locations, strings): found in
//! their slot with one look at memory, and the slots of a run of look-ups read
//! together first ([`SlotTable::touch`]) so that their cache misses overlap.

/// What a slot of a [`SlotTable`] holds: an item's hash and id, and whatever else
/// lets a look-up tell it apart without reading the item.
pub(crate) trait Slot: Copy {
    /// A slot that holds nothing.
    const FREE: Self;
    /// The item's hash.
    fn hash(&self) -> u64;
    /// The item's id; `u32::MAX` in [`Slot::FREE`].
    fn id(&self) -> u32;
}

/// Linear probing over slots, a power of two of them (or none), at most half full.
#[derive(Debug)]
pub(crate) struct SlotTable<S> {
    slots: Vec<S>,
    len: usize,
}

impl<S> Default for SlotTable<S> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            len: 0,
        }
    }
}

impl<S: Slot> SlotTable<S> {
    /// The id of the first item with `hash` whose slot `same` accepts.
    #[inline]
    pub(crate) fn find(&self, hash: u64, mut same: impl FnMut(&S) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = self.home(hash);
        loop {
            let slot = &self.slots[at];
            if slot.id() == u32::MAX {
                return None;
            }
            if slot.hash() == hash && same(slot) {
                return Some(slot.id());
            }
            at = (at + 1) & mask;
        }
    }

    /// The slot where a look-up of `hash` starts (`None` while there are none), for
    /// [`SlotTable::touch`] and the reads a caller adds to it.
    pub(crate) fn first_slot(&self, hash: u64) -> Option<&S> {
        (!self.slots.is_empty()).then(|| &self.slots[self.home(hash)])
    }

    /// Reads the first slot of each of `hashes`, one after another without waiting on
    /// any, so that the look-ups that follow find them near.
    pub(crate) fn touch(&self, hashes: impl Iterator<Item = u64>) {
        let seen = hashes.fold(0u64, |acc, h| {
            acc ^ self.first_slot(h).map_or(0, Slot::hash)
        });
        std::hint::black_box(seen);
    }

    /// Adds `slot` (an item not in the table yet).
    pub(crate) fn insert(&mut self, slot: S) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.place(slot);
        self.len += 1;
    }

    /// The slot where a search for `hash` starts (Fibonacci hashing of the high bits:
    /// the Fx hash's low bits are weak).
    fn home(&self, hash: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// Puts `slot` in the first free slot from its home.
    fn place(&mut self, slot: S) {
        let mask = self.slots.len() - 1;
        let mut at = self.home(slot.hash());
        while self.slots[at].id() != u32::MAX {
            at = (at + 1) & mask;
        }
        self.slots[at] = slot;
    }

    /// Doubles the slots (16 at first), every item placed again.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![S::FREE; size]);
        for slot in old.into_iter().filter(|s| s.id() != u32::MAX) {
            self.place(slot);
        }
    }
}
