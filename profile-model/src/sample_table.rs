//! The samples of a merge while it runs: each distinct (stack, label set) is one
//! record in an arena, its values and stack side by side, found through an
//! open-addressing table of tagged offsets.
//!
//! Finding a sample's merged twin is most of a merge of many profiles: with columns
//! (offsets, stacks, label sets and one vector per value), a sample that is already
//! there costs a cache miss in each; here it costs one in the table and one in the
//! record. The records become [`Samples`] columns, in the order they were first
//! added, at the end.
//!
//! The arena is a list of chunks of at most [`CHUNK_WORDS`] words, a record never
//! straddling two: reading the records to the end (making the columns, or absorbing
//! a table merged on another thread) frees each chunk once it is read, so that a
//! table and what is made of it are never both held whole (a day of 2,000-sample
//! files: 200 MB less at the end of its merge).

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

/// `log2` of [`CHUNK_WORDS`].
const CHUNK_SHIFT: u32 = 20;

/// Most words in a chunk of the arena (4 MiB).
pub(crate) const CHUNK_WORDS: usize = 1 << CHUNK_SHIFT;

/// Most chunks: every record's offset, plus one, fits in 32 bits.
const MAX_CHUNKS: usize = (1 << (32 - CHUNK_SHIFT)) - 1;

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct SampleTable {
    /// Values per sample.
    n_types: usize,
    /// 0 when empty, else the hash's high 32 bits over (record offset + 1).
    slots: Vec<u64>,
    /// Number of records.
    len: usize,
    /// Location ids in all records' stacks.
    stack_words: usize,
    /// The records, one after another in chunks: hash (low, high word), label set,
    /// stack length, each value (low, high word), then the stack's location ids. A
    /// record's offset is its chunk's number times [`CHUNK_WORDS`] plus its place in
    /// the chunk.
    chunks: Vec<Vec<u32>>,
}

/// The most frames a stack of a sample with `n_types` values can have in a table.
pub(crate) fn max_stack(n_types: usize) -> usize {
    CHUNK_WORDS.saturating_sub(HEADER + 2 * n_types)
}

/// The error of a stack of `frames` frames, deeper than [`max_stack`].
pub(crate) fn too_deep(frames: usize) -> ProfileError {
    ProfileError::Invalid(format!("a stack of {frames} frames is too deep to merge"))
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

    /// The words of the chunk holding the record at `offset`, from that record on.
    #[inline]
    fn record_words(&self, offset: usize) -> &[u32] {
        &self.chunks[offset >> CHUNK_SHIFT][offset & (CHUNK_WORDS - 1)..]
    }

    /// [`SampleTable::record_words`], to write.
    #[inline]
    fn record_words_mut(&mut self, offset: usize) -> &mut [u32] {
        &mut self.chunks[offset >> CHUNK_SHIFT][offset & (CHUNK_WORDS - 1)..]
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
        let n_types = self.n_types;
        let words = &mut self.record_words_mut(offset)[HEADER..HEADER + 2 * n_types];
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
                let record = self.record_words((slot as u32 - 1) as usize);
                touched = touched.wrapping_add(u64::from(record[0]));
                if let Some(w) = record.get(16) {
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
        let record = self.record_words(offset);
        if record[2] != labels || record[3] as usize != stack.len() {
            return false;
        }
        let start = HEADER + 2 * self.n_types;
        record[start..start + stack.len()] == *stack
    }

    /// Appends a record with zero values; its offset.
    fn push(
        &mut self,
        hash: u64,
        stack: &[LocationId],
        labels: LabelSetId,
    ) -> Result<usize, ProfileError> {
        let size = HEADER + 2 * self.n_types + stack.len();
        if size > CHUNK_WORDS {
            return Err(too_deep(stack.len()));
        }
        if self
            .chunks
            .last()
            .is_none_or(|chunk| chunk.len() + size > CHUNK_WORDS)
        {
            if self.chunks.len() == MAX_CHUNKS {
                return Err(ProfileError::MergeTooLarge(
                    "the merged profile has too many stack frames".into(),
                ));
            }
            // The first chunk grows as a vector does (a small merge stays small); the
            // next ones are as large as a chunk gets from the start.
            let room = if self.chunks.is_empty() {
                0
            } else {
                CHUNK_WORDS
            };
            self.chunks.push(Vec::with_capacity(room));
        }
        let number = self.chunks.len() - 1;
        let chunk = &mut self.chunks[number];
        let offset = number << CHUNK_SHIFT | chunk.len();
        chunk.extend_from_slice(&[hash as u32, (hash >> 32) as u32, labels, stack.len() as u32]);
        chunk.extend(std::iter::repeat_n(0, 2 * self.n_types));
        chunk.extend_from_slice(stack);
        self.len += 1;
        self.stack_words += stack.len();
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
        for (number, chunk) in self.chunks.iter().enumerate() {
            for at in record_starts(chunk, self.n_types) {
                let hash = u64::from(chunk[at]) | u64::from(chunk[at + 1]) << 32;
                let mut slot = hash as usize & mask;
                while slots[slot] != 0 {
                    slot = (slot + 1) & mask;
                }
                let offset = number << CHUNK_SHIFT | at;
                slots[slot] = hash >> 32 << 32 | (offset as u64 + 1);
            }
        }
        self.slots = slots;
    }

    /// Every record, in the order they were made, each chunk freed once its records
    /// are read: `each` is called with every record until it returns an error.
    pub fn drain<E>(self, mut each: impl FnMut(Record<'_>) -> Result<(), E>) -> Result<(), E> {
        let SampleTable {
            n_types,
            chunks,
            slots,
            ..
        } = self;
        // The slots are not needed to read the records: freed before the columns or
        // the other table grow.
        drop(slots);
        for chunk in chunks {
            for at in record_starts(&chunk, n_types) {
                each(record_at(&chunk, at, n_types))?;
            }
        }
        Ok(())
    }

    /// The samples as columns, in the order they were first added; each chunk of
    /// records is freed once it is read, so the samples are never held twice.
    pub fn into_samples(self) -> Samples {
        let mut samples = Samples {
            stack_offsets: Vec::with_capacity(self.len + 1),
            stack_locations: Vec::with_capacity(self.stack_words),
            values: vec![Vec::with_capacity(self.len); self.n_types],
            label_set: Vec::with_capacity(self.len),
        };
        samples.stack_offsets.push(0);
        let Ok(()) = self.drain(|r| -> Result<(), std::convert::Infallible> {
            samples.label_set.push(r.labels);
            for (column, v) in samples.values.iter_mut().zip(r.values()) {
                column.push(v);
            }
            samples.stack_locations.extend_from_slice(r.stack);
            samples
                .stack_offsets
                .push(samples.stack_locations.len() as u32);
            Ok(())
        });
        samples
    }
}

/// Where each record of `chunk` starts, in order.
fn record_starts(chunk: &[u32], n_types: usize) -> impl Iterator<Item = usize> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < chunk.len()).then(|| {
            let start = at;
            at += HEADER + 2 * n_types + chunk[start + 3] as usize;
            start
        })
    })
}

/// The record of `chunk` starting at `at`.
fn record_at(chunk: &[u32], at: usize, n_types: usize) -> Record<'_> {
    let values = at + HEADER;
    let stack = values + 2 * n_types;
    Record {
        labels: chunk[at + 2],
        values: &chunk[values..stack],
        stack: &chunk[stack..stack + chunk[at + 3] as usize],
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
    fn records_across_chunks_are_found_summed_and_drained_in_order() {
        let mut t = SampleTable::new(2);
        // 1,000-frame stacks: about a thousand records a chunk, five chunks.
        let stack = |i: u32| -> Vec<u32> { (0..1000).map(|d| i * 7 + d).collect() };
        for round in 0..2 {
            for i in 0..5000u32 {
                let mut batch = Batch::default();
                stack(i).iter().for_each(|l| batch.push_location(*l));
                batch.end_sample(i % 5, [1, i64::from(i) << 33].into_iter());
                t.add_batch(&batch).expect("fits");
            }
            assert_eq!(t.len, 5000, "round {round}: found again, not added");
        }
        assert!(t.chunks.len() >= 5, "{} chunks", t.chunks.len());
        assert!(t.chunks.iter().all(|c| c.len() <= CHUNK_WORDS));
        let mut seen = 0u32;
        t.drain(|r| -> Result<(), ()> {
            assert_eq!(r.stack, stack(seen));
            assert_eq!(r.labels, seen % 5);
            assert_eq!(r.values().collect::<Vec<_>>(), [2, i64::from(seen) << 34]);
            seen += 1;
            Ok(())
        })
        .expect("every record");
        assert_eq!(seen, 5000);
    }

    #[test]
    fn the_columns_of_a_table_of_many_chunks_are_its_records() {
        let mut t = SampleTable::new(1);
        for i in 0..3000u32 {
            let depth = 1 + (i as usize * 997) % 2000;
            let stack: Vec<u32> = (0..depth as u32).map(|d| d ^ i).collect();
            t.add(hash_of((&stack[..], 0u32)), &stack, 0, &[i64::from(i)])
                .expect("fits");
        }
        assert!(t.chunks.len() > 1);
        let s = t.into_samples();
        assert_eq!(s.len(), 3000);
        for i in 0..3000u32 {
            let depth = 1 + (i as usize * 997) % 2000;
            assert_eq!(s.stack(i as usize).len(), depth);
            assert_eq!(s.stack(i as usize)[depth - 1], (depth as u32 - 1) ^ i);
            assert_eq!(s.values[0][i as usize], i64::from(i));
        }
    }

    #[test]
    fn a_stack_too_deep_for_a_chunk_is_an_error() {
        let mut t = SampleTable::new(1);
        let deep: Vec<u32> = vec![3; CHUNK_WORDS];
        let mut batch = Batch::default();
        deep.iter().for_each(|l| batch.push_location(*l));
        batch.end_sample(0, std::iter::once(1));
        let e = t.add_batch(&batch).expect_err("too deep");
        assert!(e.to_string().contains("too deep"), "{e}");
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
