//! The samples of a merge while it runs: each distinct (stack, label set) is one
//! record in one arena, its values and stack side by side, found through an
//! open-addressing table of tagged offsets.
//!
//! Finding a sample's merged twin is most of a merge of many profiles: with columns
//! (offsets, stacks, label sets and one vector per value), a sample that is already
//! there costs a cache miss in each; here it costs one in the table and one in the
//! record. The records become [`Samples`] columns, in the order they were first
//! added, at the end.

use crate::error::ProfileError;
use crate::profile::{LabelSetId, LocationId, Samples};

/// The Fx hash of `value`: of (stack, label set) for the table, and of a location's
/// parts where merging interns locations.
#[inline]
pub(crate) fn hash_of(value: impl std::hash::Hash) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = rustc_hash::FxHasher::default();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Words of a record before its values: hash (2), label set, stack length.
const HEADER: usize = 4;

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct SampleTable {
    /// Values per sample.
    n_types: usize,
    /// 0 when empty, else the hash's high 32 bits over (record offset + 1).
    slots: Vec<u64>,
    /// Number of records.
    len: usize,
    /// The records, one after another: hash (low, high word), label set, stack length,
    /// each value (low, high word), then the stack's location ids.
    arena: Vec<u32>,
}

/// Samples on their way into a [`SampleTable`]: stacks in merged location ids, one
/// after another, with their hashes, label sets and values (row by row).
#[derive(Debug, Default)]
pub(crate) struct Batch {
    hashes: Vec<u64>,
    labels: Vec<LabelSetId>,
    offsets: Vec<u32>,
    stacks: Vec<LocationId>,
    values: Vec<i64>,
}

impl Batch {
    /// Samples a batch holds before it is worth adding: their slots and records fit in
    /// the caches together.
    pub const FULL: usize = 1024;

    /// Number of samples in the batch.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Adds a sample whose stack the caller pushes with the `push_location` calls
    /// that follow, then [`Batch::end_sample`].
    #[inline]
    pub fn push_location(&mut self, location: LocationId) {
        self.stacks.push(location);
    }

    /// Ends the sample whose stack was just pushed: its label set and values.
    #[inline]
    pub fn end_sample(&mut self, labels: LabelSetId, values: impl Iterator<Item = i64>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let start = *self.offsets.last().unwrap_or(&0) as usize;
        let stack = &self.stacks[start..];
        self.hashes.push(hash_of((stack, labels)));
        self.offsets.push(self.stacks.len() as u32);
        self.labels.push(labels);
        self.values.extend(values);
    }

    /// Empties the batch.
    pub fn clear(&mut self) {
        self.hashes.clear();
        self.labels.clear();
        self.offsets.clear();
        self.stacks.clear();
        self.values.clear();
    }
}

/// A record of the table, read back.
pub(crate) struct Record<'a> {
    pub labels: LabelSetId,
    pub stack: &'a [LocationId],
    values: &'a [u32],
}

impl Record<'_> {
    /// The record's values.
    pub fn values(&self) -> impl Iterator<Item = i64> + '_ {
        self.values
            .chunks_exact(2)
            .map(|w| (u64::from(w[0]) | u64::from(w[1]) << 32) as i64)
    }
}

impl SampleTable {
    /// An empty table of samples with `n_types` values each.
    pub fn new(n_types: usize) -> Self {
        Self {
            n_types,
            ..Self::default()
        }
    }

    /// Adds `values` to the sample with `stack` and `labels` (made with zero values
    /// when new); `hash` is [`hash_of`] the two.
    #[inline]
    fn add(
        &mut self,
        hash: u64,
        stack: &[LocationId],
        labels: LabelSetId,
        values: &[i64],
    ) -> Result<(), ProfileError> {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let tag = hash >> 32 << 32;
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        let offset = loop {
            let slot = self.slots[at];
            if slot == 0 {
                let offset = self.push(hash, stack, labels)?;
                self.slots[at] = tag | (offset as u64 + 1);
                break offset;
            }
            if slot >> 32 << 32 == tag {
                let offset = (slot as u32 - 1) as usize;
                if self.is(offset, stack, labels) {
                    break offset;
                }
            }
            at = (at + 1) & mask;
        };
        let words = &mut self.arena[offset + HEADER..offset + HEADER + 2 * self.n_types];
        for (w, v) in words.chunks_exact_mut(2).zip(values) {
            let sum = ((u64::from(w[0]) | u64::from(w[1]) << 32) as i64).wrapping_add(*v) as u64;
            w[0] = sum as u32;
            w[1] = (sum >> 32) as u32;
        }
        Ok(())
    }

    /// Adds every sample of `batch`, as [`SampleTable::add`] one by one would.
    ///
    /// The table's slots and records lie far apart in memory, and finding a sample
    /// costs a cache miss in each: the batch's slots are read first, then the records
    /// they point to, in loops whose loads do not wait for one another, so that the
    /// misses overlap; the adds then find them in the cache.
    pub fn add_batch(&mut self, batch: &Batch) -> Result<(), ProfileError> {
        let n = batch.labels.len();
        while (self.len + n + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut touched = 0u64;
        for &hash in &batch.hashes {
            touched = touched.wrapping_add(self.slots[hash as usize & mask]);
        }
        for &hash in &batch.hashes {
            let slot = self.slots[hash as usize & mask];
            if slot != 0 {
                let offset = (slot as u32 - 1) as usize;
                touched = touched.wrapping_add(u64::from(self.arena[offset]));
                if let Some(w) = self.arena.get(offset + 16) {
                    touched = touched.wrapping_add(u64::from(*w));
                }
            }
        }
        std::hint::black_box(touched);
        let n_types = self.n_types;
        for i in 0..n {
            let stack = &batch.stacks[batch.offsets[i] as usize..batch.offsets[i + 1] as usize];
            let values = &batch.values[i * n_types..(i + 1) * n_types];
            self.add(batch.hashes[i], stack, batch.labels[i], values)?;
        }
        Ok(())
    }

    /// Whether the record at `offset` has `stack` and `labels`.
    #[inline]
    fn is(&self, offset: usize, stack: &[LocationId], labels: LabelSetId) -> bool {
        let header = &self.arena[offset..offset + HEADER];
        if header[2] != labels || header[3] as usize != stack.len() {
            return false;
        }
        let start = offset + HEADER + 2 * self.n_types;
        self.arena[start..start + stack.len()] == *stack
    }

    /// Appends a record with zero values; its offset.
    fn push(
        &mut self,
        hash: u64,
        stack: &[LocationId],
        labels: LabelSetId,
    ) -> Result<usize, ProfileError> {
        let offset = self.arena.len();
        let size = HEADER + 2 * self.n_types + stack.len();
        if offset + size >= u32::MAX as usize {
            return Err(ProfileError::Invalid(
                "the merged profile has too many stack frames".into(),
            ));
        }
        self.arena.extend_from_slice(&[
            hash as u32,
            (hash >> 32) as u32,
            labels,
            stack.len() as u32,
        ]);
        self.arena.extend(std::iter::repeat_n(0, 2 * self.n_types));
        self.arena.extend_from_slice(stack);
        self.len += 1;
        Ok(offset)
    }

    /// Doubles the table and places every record again.
    #[expect(
        clippy::slow_vector_initialization,
        reason = "the slots are written out on purpose: see below"
    )]
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        // Written out, not allocated zeroed: a zeroed allocation maps its pages to the
        // shared zero page when first read, and then every first write to a page
        // faults again and flushes the other cores' TLBs (4% of a day's merge).
        let mut slots = Vec::with_capacity(size);
        slots.resize(size, 0u64);
        let mask = size - 1;
        for offset in self.offsets() {
            let hash = u64::from(self.arena[offset]) | u64::from(self.arena[offset + 1]) << 32;
            let mut at = hash as usize & mask;
            while slots[at] != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = hash >> 32 << 32 | (offset as u64 + 1);
        }
        self.slots = slots;
    }

    /// The offset of every record, in the order they were made.
    fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        let mut offset = 0;
        std::iter::from_fn(move || {
            (offset < self.arena.len()).then(|| {
                let at = offset;
                offset += HEADER + 2 * self.n_types + self.arena[at + 3] as usize;
                at
            })
        })
    }

    /// Every record, in the order they were made.
    pub fn records(&self) -> impl Iterator<Item = Record<'_>> + '_ {
        self.offsets().map(|offset| {
            let values = offset + HEADER;
            let stack = values + 2 * self.n_types;
            Record {
                labels: self.arena[offset + 2],
                values: &self.arena[values..stack],
                stack: &self.arena[stack..stack + self.arena[offset + 3] as usize],
            }
        })
    }

    /// The samples as columns, in the order they were first added. The stacks are
    /// moved to the front of the arena, which becomes the stack column, so the
    /// samples are never held twice.
    pub fn into_samples(self) -> Samples {
        let SampleTable {
            n_types,
            slots,
            len,
            mut arena,
        } = self;
        drop(slots);
        let mut samples = Samples {
            stack_offsets: Vec::with_capacity(len + 1),
            stack_locations: Vec::new(),
            values: vec![Vec::with_capacity(len); n_types],
            label_set: Vec::with_capacity(len),
        };
        samples.stack_offsets.push(0);
        let (mut read, mut written) = (0, 0);
        while read < arena.len() {
            let depth = arena[read + 3] as usize;
            samples.label_set.push(arena[read + 2]);
            let values = read + HEADER;
            for (column, w) in samples
                .values
                .iter_mut()
                .zip(arena[values..values + 2 * n_types].chunks_exact(2))
            {
                column.push((u64::from(w[0]) | u64::from(w[1]) << 32) as i64);
            }
            let stack = values + 2 * n_types;
            // The record's stack lies after everything written so far.
            arena.copy_within(stack..stack + depth, written);
            written += depth;
            samples.stack_offsets.push(written as u32);
            read = stack + depth;
        }
        arena.truncate(written);
        arena.shrink_to_fit();
        samples.stack_locations = arena;
        samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(t: &mut SampleTable, stack: &[u32], labels: u32, values: &[i64]) {
        let mut batch = Batch::default();
        stack.iter().for_each(|l| batch.push_location(*l));
        batch.end_sample(labels, values.iter().copied());
        t.add_batch(&batch).expect("small table");
    }

    #[test]
    fn same_stack_and_labels_are_summed_in_first_seen_order() {
        let mut t = SampleTable::new(2);
        add(&mut t, &[1, 2, 3], 0, &[1, 10]);
        add(&mut t, &[1, 2], 0, &[2, 20]);
        add(&mut t, &[1, 2, 3], 1, &[3, 30]);
        add(&mut t, &[1, 2, 3], 0, &[-4, 1 << 40]);
        let s = t.into_samples();
        assert_eq!(s.len(), 3);
        assert_eq!(s.stack(0), [1, 2, 3]);
        assert_eq!(s.stack(1), [1, 2]);
        assert_eq!(s.label_set, [0, 0, 1]);
        assert_eq!(s.values, [vec![-3, 2, 3], vec![10 + (1 << 40), 20, 30]]);
    }

    #[test]
    fn equal_hashes_of_different_samples_stay_apart() {
        let mut t = SampleTable::new(1);
        // Every sample under one hash: found by comparing, never by hash alone.
        for i in 0..3000u32 {
            t.add(7, &[i, i + 1], i % 3, &[1]).expect("small table");
        }
        t.add(7, &[5, 6], 5 % 3, &[-1]).expect("small table");
        let s = t.into_samples();
        assert_eq!(s.len(), 3000);
        assert_eq!(s.values[0][5], 0);
        assert_eq!(s.values[0].iter().sum::<i64>(), 2999);
        assert_eq!(s.stack(2999), [2999, 3000]);
    }

    #[test]
    fn growing_keeps_every_record() {
        let mut t = SampleTable::new(1);
        for round in 0..2 {
            let mut batch = Batch::default();
            for i in 0..10_000u32 {
                batch.push_location(i % 97);
                batch.push_location(i);
                batch.end_sample(0, std::iter::once(i64::from(i) + round));
                if batch.len() == Batch::FULL || i % 3001 == 0 {
                    t.add_batch(&batch).expect("small table");
                    batch.clear();
                }
            }
            t.add_batch(&batch).expect("small table");
        }
        let s = t.into_samples();
        assert_eq!(s.len(), 10_000);
        for i in 0..10_000usize {
            assert_eq!(s.stack(i), [i as u32 % 97, i as u32]);
            assert_eq!(s.values[0][i], 2 * i as i64 + 1);
        }
    }
}
