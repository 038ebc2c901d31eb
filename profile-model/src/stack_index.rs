//! The samples of many profiles kept when they are indexed, so that a merge of any of
//! them is a sum: each profile's tables are interned into shared ones, each of its
//! stacks into one set of distinct stacks, and the profile keeps only, per label set,
//! the ids of its samples' stacks and their values. A merge then adds those values per
//! (stack, label set) and writes the merged profile's samples once, without reading,
//! inflating or looking up any profile again.
//!
//! What a merge gives is what [`crate::merge::Merger`] gives for the same profiles (the
//! same samples, tables, header and label sets), only in another order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap;

use crate::codec::{self, DecodeOptions};
use crate::error::ProfileError;
use crate::merge::{Interned, LabelValue, Merger, widen_span};
use crate::profile::{
    Function, Label, LabelSetId, Line, Location, LocationId, Mapping, Profile, Samples, StrId,
    ValueType,
};
use crate::sample_table::hash_of;
use crate::wire::tables::{ReadSamples, Tables};

/// [`codec::decode_without_stacks`], and the profile's samples kept in `stacks`
/// ([`StackIndexBuilder::add`]; `None` when its budget is spent). The profile
/// returned then has its stacks.
pub fn decode_keeping_stacks(
    bytes: &[u8],
    options: DecodeOptions,
    stacks: &StackIndexBuilder,
) -> Result<(Profile, Option<ProfileStacks>), ProfileError> {
    codec::decode_for_index(bytes, options, true, |tables, read| {
        stacks.add_read(tables, read)
    })
}

/// `log2` of the number of shards of the stack set, each behind its own lock, so
/// that the threads that index files rarely wait on one another.
const SHARD_BITS: u32 = 4;
const SHARDS: usize = 1 << SHARD_BITS;

/// Distinct stacks, each kept once as the LEB128 bytes of its location ids (leaf
/// first): a day of files names a few thousand locations, so most ids take two bytes.
#[derive(Debug, Default)]
struct StackShard {
    /// Each stack: its index (4 bytes), its length in bytes (LEB128), its bytes.
    bytes: Vec<u8>,
    /// Where each stack starts in `bytes`.
    starts: Vec<u32>,
    /// Open addressing: 0 is empty, else `tag << 40 | (start + 1)`, the tag being
    /// the high 24 bits of the stack's hash.
    slots: Vec<u64>,
}

/// Stacks looked up together: their slots, then their stacks, are read one after
/// another before any is compared, so that their cache misses overlap.
const TOUCHED_TOGETHER: usize = 16;

/// The hash's bits that choose a shard and a slot (Fibonacci hashing: the Fx
/// hash's low bits are weak).
fn mixed(hash: u64) -> u64 {
    hash.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn shard_of(hash: u64) -> usize {
    (mixed(hash) >> (64 - SHARD_BITS)) as usize
}

impl StackShard {
    /// The index and bytes of the stack that starts at `start`.
    fn entry(&self, start: usize) -> (u32, &[u8]) {
        let index = self
            .bytes
            .get(start..start + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let mut at = start + 4;
        let len = read_leb128(&self.bytes, &mut at) as usize;
        (index, self.bytes.get(at..at + len).unwrap_or_default())
    }

    fn stack(&self, i: usize) -> &[u8] {
        self.entry(self.starts[i] as usize).1
    }

    fn home(&self, hash: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        ((mixed(hash) << SHARD_BITS) >> (64 - bits)) as usize
    }

    /// The index of each of `stacks` (their hashes and where they lie in `bytes`),
    /// those not here added.
    fn intern_all(
        &mut self,
        bytes: &[u8],
        stacks: &[(u64, u32, u32)],
        ids: &mut Vec<u32>,
    ) -> Option<()> {
        for run in stacks.chunks(TOUCHED_TOGETHER) {
            if self.slots.len() < 2 * (self.starts.len() + run.len()) {
                self.grow();
            }
            let slots: u64 = run
                .iter()
                .map(|(h, ..)| self.slots[self.home(*h)])
                .fold(0, |a, s| a ^ s);
            std::hint::black_box(slots);
            let firsts: u64 = run
                .iter()
                .map(|(h, ..)| {
                    let slot = self.slots[self.home(*h)];
                    let start = (slot & START_MASK) as usize;
                    if slot >> 40 == *h >> 40 && start > 0 {
                        u64::from(self.bytes.get(start - 1).copied().unwrap_or(0))
                    } else {
                        0
                    }
                })
                .fold(0, |a, b| a ^ b);
            std::hint::black_box(firsts);
            for &(hash, start, end) in run {
                ids.push(self.intern(hash, bytes.get(start as usize..end as usize)?)?);
            }
        }
        Some(())
    }

    /// The index of `stack` (whose hash is `hash`), added when new; room for it made.
    fn intern(&mut self, hash: u64, stack: &[u8]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let tag = hash >> 40;
        let mut at = self.home(hash);
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                break;
            }
            if slot >> 40 == tag {
                let (index, bytes) = self.entry((slot & START_MASK) as usize - 1);
                if bytes == stack {
                    return Some(index);
                }
            }
            at = (at + 1) & mask;
        }
        let index = u32::try_from(self.starts.len()).ok()?;
        let start = self.bytes.len();
        if start as u64 + 1 > START_MASK {
            return None;
        }
        self.bytes.extend_from_slice(&index.to_le_bytes());
        leb128(&mut self.bytes, stack.len() as u64);
        self.bytes.extend_from_slice(stack);
        self.starts.push(u32::try_from(start).ok()?);
        self.slots[at] = tag << 40 | (start as u64 + 1);
        Some(index)
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        self.slots = vec![0u64; size];
        let mask = size - 1;
        for i in 0..self.starts.len() {
            let start = self.starts[i] as usize;
            let hash = hash_of(self.entry(start).1);
            let mut at = self.home(hash);
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = (hash >> 40) << 40 | (start as u64 + 1);
        }
    }

    fn held(&self) -> usize {
        self.bytes.capacity() + self.starts.capacity() * 4 + self.slots.capacity() * 8
    }
}

/// The bits of a slot that hold a stack's start (plus one).
const START_MASK: u64 = (1 << 40) - 1;

/// What a merge needs of one profile's header (strings are the shared tables' ids).
#[derive(Debug, Clone)]
struct Header {
    sample_types: Vec<ValueType>,
    period_type: ValueType,
    period: i64,
    time_nanos: i64,
    duration_nanos: i64,
    default_sample_type: StrId,
    doc_url: String,
}

/// A profile's header as given, its strings the profile's own ids.
struct HeaderParts<'a> {
    sample_types: &'a [ValueType],
    period_type: ValueType,
    period: i64,
    time_nanos: i64,
    duration_nanos: i64,
    default_sample_type: StrId,
    doc_url: &'a str,
}

/// One indexed profile's samples: per label set, its stacks' ids and their values.
pub struct ProfileStacks {
    header: Header,
    /// (label set, number of samples, where the first starts in `samples`) of each
    /// run of samples with one label set.
    runs: Box<[(LabelSetId, u32, u32)]>,
    /// Each sample in runs, LEB128: its stack's id, then its values zigzagged: the
    /// first type's alone when every other type's is it times the factor in
    /// `factors`, else every type's (three or four bytes a sample in all, mostly).
    samples: Box<[u8]>,
    factors: Option<Box<[i64]>>,
}

impl std::fmt::Debug for ProfileStacks {
    /// Its size, not its bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileStacks")
            .field("label_sets", &self.runs.len())
            .field("bytes", &self.samples.len())
            .finish()
    }
}

impl std::fmt::Debug for StackIndex {
    /// Its size, not its stacks.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StackIndex")
            .field("stacks", &self.stacks())
            .field("locations", &self.tables.locations.len())
            .finish()
    }
}

impl ProfileStacks {
    fn held(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.runs.len() * 12
            + self.samples.len()
            + self.factors.as_ref().map_or(0, |f| f.len() * 8)
    }
}

/// Collects profiles' samples from several threads at once ([`StackIndexBuilder::add`]);
/// [`StackIndexBuilder::finish`] makes the [`StackIndex`] merges are answered from.
#[derive(Debug)]
pub struct StackIndexBuilder {
    tables: Mutex<Merger>,
    shards: Vec<Mutex<StackShard>>,
    held: AtomicUsize,
    budget: usize,
    /// Buffers of profiles kept before, free for the next ones.
    scratch: Mutex<Vec<Scratch>>,
}

/// A profile's samples as they are kept, in buffers reused from profile to profile.
#[derive(Debug, Default)]
struct Scratch {
    /// Per location of the profile: its merged id's LEB128 bytes, their number in
    /// the top byte ([`leb128_code`]).
    codes: Vec<u64>,
    bytes: Vec<u8>,
    /// Per sample (in runs): its stack's hash and its bytes' end in `bytes`.
    hashes: Vec<u64>,
    ends: Vec<u32>,
    /// Per shard: (hash, start, end in `bytes`) of the samples whose stack falls in it.
    by_shard: Vec<Vec<(u64, u32, u32)>>,
    /// Per shard: the ids of those stacks, in the same order.
    found: Vec<Vec<u32>>,
    /// Per sample: its shard and its place among that shard's samples.
    which: Vec<(u32, u32)>,
}

impl StackIndexBuilder {
    /// A builder that keeps at most about `budget` bytes of samples: profiles added
    /// once that much is held are not kept ([`StackIndexBuilder::add`] says so).
    pub fn new(budget: usize) -> Self {
        Self {
            tables: Mutex::new(Merger::new()),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            held: AtomicUsize::new(0),
            budget,
            scratch: Mutex::default(),
        }
    }

    /// Keeps the samples of `p`: `None` when the budget is spent (or `p` cannot be
    /// kept), and then a merge of `p` must read it again.
    pub fn add(&self, p: &Profile) -> Option<ProfileStacks> {
        if self.spent() {
            return None;
        }
        let interned = self.tables().intern_tables(p);
        let header = HeaderParts {
            sample_types: &p.sample_types,
            period_type: p.period_type,
            period: p.period,
            time_nanos: p.time_nanos,
            duration_nanos: p.duration_nanos,
            default_sample_type: p.default_sample_type,
            doc_url: &p.doc_url,
        };
        self.keep(&interned, &header, &p.samples, p.label_sets.len())
    }

    /// [`StackIndexBuilder::add`] of a message's tables and its samples as read.
    pub(crate) fn add_read(
        &self,
        tables: &Tables<'_>,
        read: &ReadSamples,
    ) -> Option<ProfileStacks> {
        if self.spent() {
            return None;
        }
        let interned = self.tables().intern_read(tables, read);
        let header = HeaderParts {
            sample_types: &tables.sample_types,
            period_type: tables.period_type,
            period: tables.period,
            time_nanos: tables.time_nanos,
            duration_nanos: tables.duration_nanos,
            default_sample_type: tables.default_sample_type,
            doc_url: tables.doc_url,
        };
        self.keep(&interned, &header, &read.samples, read.label_sets.len())
    }

    fn spent(&self) -> bool {
        self.held.load(Ordering::Relaxed) > self.budget
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, Merger> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The samples of a profile whose tables are `interned`.
    fn keep(
        &self,
        interned: &Interned,
        h: &HeaderParts<'_>,
        samples: &Samples,
        label_sets: usize,
    ) -> Option<ProfileStacks> {
        let s = |id: StrId| interned.strings.get(id as usize).copied().unwrap_or(0);
        let value_type = |t: &ValueType| ValueType {
            kind: s(t.kind),
            unit: s(t.unit),
        };
        let header = Header {
            sample_types: h.sample_types.iter().map(value_type).collect(),
            period_type: value_type(&h.period_type),
            period: h.period,
            time_nanos: h.time_nanos,
            duration_nanos: h.duration_nanos,
            default_sample_type: s(h.default_sample_type),
            doc_url: h.doc_url.to_string(),
        };
        let order = by_label_set(samples, label_sets);
        let mut scratch = self.scratch();
        scratch
            .codes
            .extend(interned.locations.iter().map(|&id| leb128_code(id)));
        let Scratch {
            codes,
            bytes,
            hashes,
            ends,
            ..
        } = &mut scratch;
        for &i in &order {
            let start = bytes.len();
            for &l in samples.stack(i as usize) {
                let code = *codes.get(l as usize)?;
                let end = bytes.len() + (code >> 56) as usize;
                bytes.extend_from_slice(&code.to_le_bytes());
                bytes.truncate(end);
            }
            hashes.push(hash_of(&bytes[start..]));
            ends.push(u32::try_from(bytes.len()).ok()?);
        }
        let stacks = self.intern_stacks(&mut scratch);
        self.scratch_done(scratch);
        let stacks = stacks?;
        let factors = factors_of(samples);
        let columns = if factors.is_some() {
            &samples.values[..1]
        } else {
            &samples.values[..]
        };
        let mut bytes = Vec::with_capacity(order.len() * (columns.len() + 3));
        let mut runs: Vec<(LabelSetId, u32, u32)> = Vec::new();
        for (&i, &stack) in order.iter().zip(&stacks) {
            let set = interned.label_sets[samples.label_set[i as usize] as usize];
            match runs.last_mut() {
                Some((last, count, _)) if *last == set => *count += 1,
                _ => runs.push((set, 1, u32::try_from(bytes.len()).ok()?)),
            }
            leb128(&mut bytes, u64::from(stack));
            for column in columns {
                leb128(&mut bytes, zigzag(column[i as usize]));
            }
        }
        let kept = ProfileStacks {
            header,
            runs: runs.into(),
            samples: bytes.into(),
            factors,
        };
        self.held.fetch_add(kept.held(), Ordering::Relaxed);
        Some(kept)
    }

    /// A cleared [`Scratch`] (a shard list for each shard), reused when one is free.
    fn scratch(&self) -> Scratch {
        let mut scratch = self
            .scratch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        scratch.codes.clear();
        scratch.bytes.clear();
        scratch.hashes.clear();
        scratch.ends.clear();
        scratch.by_shard.resize_with(SHARDS, Vec::new);
        scratch.by_shard.iter_mut().for_each(Vec::clear);
        scratch.found.resize_with(SHARDS, Vec::new);
        scratch.found.iter_mut().for_each(Vec::clear);
        scratch.which.clear();
        scratch
    }

    fn scratch_done(&self, scratch: Scratch) {
        self.scratch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(scratch);
    }

    /// The id of each stack of `scratch` in the shared set, each shard locked once.
    fn intern_stacks(&self, scratch: &mut Scratch) -> Option<Vec<u32>> {
        let Scratch {
            bytes,
            hashes,
            ends,
            by_shard,
            found,
            which,
            ..
        } = scratch;
        let mut start = 0;
        for (&hash, &end) in hashes.iter().zip(ends.iter()) {
            let shard = shard_of(hash);
            which.push((shard as u32, by_shard[shard].len() as u32));
            by_shard[shard].push((hash, start, end));
            start = end;
        }
        let mut grown = 0usize;
        for (shard, stacks) in by_shard.iter().enumerate() {
            if stacks.is_empty() {
                continue;
            }
            let mut set = self.shards[shard]
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let before = set.held();
            set.intern_all(bytes, stacks, &mut found[shard])?;
            grown += set.held().saturating_sub(before);
        }
        self.held.fetch_add(grown, Ordering::Relaxed);
        which
            .iter()
            .map(|&(shard, k)| {
                let i = found[shard as usize][k as usize];
                (i < 1 << (32 - SHARD_BITS)).then_some(i << SHARD_BITS | shard)
            })
            .collect()
    }

    /// The index the kept profiles are merged from.
    pub fn finish(self) -> StackIndex {
        let tables = self
            .tables
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut shards: Vec<StackShard> = self
            .shards
            .into_iter()
            .map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect();
        for s in &mut shards {
            s.slots = Vec::new();
        }
        let mut first = Vec::with_capacity(SHARDS + 1);
        first.push(0usize);
        for s in &shards {
            first.push(first.last().copied().unwrap_or(0) + s.starts.len());
        }
        StackIndex {
            tables: tables.tables().clone(),
            shards,
            first,
        }
    }
}

/// The samples of `samples` ordered by label set (then as they come).
fn by_label_set(samples: &Samples, sets: usize) -> Vec<u32> {
    let mut start = vec![0u32; sets + 1];
    for &set in &samples.label_set {
        start[set as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut order = vec![0u32; samples.len()];
    for (i, &set) in samples.label_set.iter().enumerate() {
        let at = &mut start[set as usize];
        order[*at as usize] = i as u32;
        *at += 1;
    }
    order
}

/// Per sample type after the first, the factor every sample's value of it is of its
/// first value, when there is one for each (a CPU profile's nanoseconds are its
/// samples times the period).
fn factors_of(samples: &Samples) -> Option<Box<[i64]>> {
    let (first, rest) = samples.values.split_first()?;
    rest.iter()
        .map(|column| {
            let k = first
                .iter()
                .zip(column)
                .find(|(a, _)| **a != 0)
                .map_or(Some(0), |(a, b)| (b % a == 0).then(|| b / a))?;
            first
                .iter()
                .zip(column)
                .all(|(a, b)| a.checked_mul(k) == Some(*b))
                .then_some(k)
        })
        .collect()
}

fn leb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The LEB128 bytes of `id` in the low bytes of a word, their number in its top byte.
fn leb128_code(id: u32) -> u64 {
    let mut rest = u64::from(id);
    let mut code = 0u64;
    let mut n = 0;
    loop {
        let more = rest >= 0x80;
        code |= (rest & 0x7f | if more { 0x80 } else { 0 }) << (8 * n);
        rest >>= 7;
        n += 1;
        if !more {
            return code | n << 56;
        }
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Reads one LEB128 number at `*at` (bytes this module wrote).
fn read_leb128(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

/// The kept samples of indexed profiles: see the module documentation.
#[derive(Default)]
pub struct StackIndex {
    tables: Profile,
    shards: Vec<StackShard>,
    /// `first[s]`: the dense number of shard `s`'s first stack.
    first: Vec<usize>,
}

/// Whether a merge adds the samples of profile `i` (of [`MergeInput::profiles`]) with
/// these labels.
pub type KeepOf<'k> = dyn FnMut(usize, &[(&str, LabelValue<'_>)]) -> bool + 'k;

/// Which samples of which kept profiles a merge adds.
pub struct MergeInput<'a> {
    /// The profiles, in time order.
    pub profiles: &'a [&'a ProfileStacks],
    /// Whether the samples of profile `i` (of `profiles`) with these labels are added:
    /// asked once per label set of each profile.
    pub keep: &'a mut KeepOf<'a>,
    /// Asked as the merge goes: true stops it.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Told each profile added.
    pub step: &'a (dyn Fn() + Sync),
}

/// A merge stopped by its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// The runs of one label set a merge adds: (profile, run).
type SetRuns = (LabelSetId, Vec<(u32, u32)>);

/// The merged samples of some of a merge's label sets, written by one thread.
struct Part {
    /// The samples, their stacks' locations apart: the offsets count them across
    /// `locations`' chunks, each freed once copied into the merged profile, so that
    /// the parts and the profile are never all held at once.
    samples: Samples,
    locations: Vec<Vec<LocationId>>,
    /// Which of the shared tables' locations the samples reach.
    reached: Vec<bool>,
}

/// The value columns of a merge: `types` in all, the first `summed` of them summed,
/// each one after those its first sum times its factor in `factors`.
#[derive(Clone, Copy)]
struct Columns<'f> {
    types: usize,
    summed: usize,
    factors: &'f [i64],
}

/// Locations in one chunk of a [`Part`] (4 MiB).
const CHUNK: usize = 1 << 20;

impl StackIndex {
    /// Number of distinct stacks kept.
    pub fn stacks(&self) -> usize {
        self.first.last().copied().unwrap_or(0)
    }

    /// The dense number of stack `id` (as [`ProfileStacks`] holds it).
    fn dense(&self, id: u32) -> usize {
        self.first[(id as usize) & (SHARDS - 1)] + (id >> SHARD_BITS) as usize
    }

    fn stack_bytes(&self, id: u32) -> &[u8] {
        self.shards[(id as usize) & (SHARDS - 1)].stack((id >> SHARD_BITS) as usize)
    }

    /// The labels of label set `set` as a merge's selection sees them.
    fn labels_of(&self, set: LabelSetId) -> Vec<(&str, LabelValue<'_>)> {
        let t = &self.tables;
        t.label_sets[set as usize]
            .iter()
            .map(|l| {
                let value = if l.str != 0 {
                    LabelValue::Str(t.str(l.str))
                } else {
                    LabelValue::Num(l.num)
                };
                (t.str(l.key), value)
            })
            .collect()
    }

    /// Merges what `input` selects: `Ok(None)` when the profiles' sample types differ
    /// (a merge that reads them names the two that do), else the merged profile.
    ///
    /// The samples of each label set are added up by stack in an array of all the
    /// stacks' sums (no look-up), and the label sets are shared out between two
    /// threads, each writing its merged samples; the shared tables' entries those
    /// reach become the merged profile's.
    pub fn merge(&self, input: MergeInput<'_>) -> Result<Option<Profile>, Cancelled> {
        let MergeInput {
            profiles,
            keep,
            cancelled,
            step,
        } = input;
        let Some(first) = profiles.first() else {
            return Ok(Some(Profile::default()));
        };
        if profiles
            .iter()
            .any(|p| p.header.sample_types != first.header.sample_types)
        {
            return Ok(None);
        }
        let n_types = first.header.sample_types.len();
        let mut sets: Vec<SetRuns> = Vec::new();
        let mut set_at: FxHashMap<LabelSetId, usize> = FxHashMap::default();
        let mut samples_of: Vec<usize> = Vec::new();
        for (pi, p) in profiles.iter().enumerate() {
            for (run, &(set, count, _)) in p.runs.iter().enumerate() {
                if keep(pi, &self.labels_of(set)) {
                    let k = *set_at.entry(set).or_insert_with(|| {
                        sets.push((set, Vec::new()));
                        samples_of.push(0);
                        sets.len() - 1
                    });
                    sets[k].1.push((pi as u32, run as u32));
                    samples_of[k] += count as usize;
                }
            }
        }
        // Two shares of about as many samples each, in label set order.
        let total: usize = samples_of.iter().sum();
        let mut cut = 0;
        let mut so_far = 0;
        while cut < sets.len() && so_far * 2 < total {
            so_far += samples_of[cut];
            cut += 1;
        }
        let (a, b) = sets.split_at(cut);
        let done = AtomicUsize::new(0);
        let told = Mutex::new(0usize);
        let tell = || {
            let done = done.fetch_add(1, Ordering::Relaxed) + 1;
            let due = profiles.len() * done / sets.len().max(1);
            let mut told = told.lock().unwrap_or_else(PoisonError::into_inner);
            while *told < due {
                step();
                *told += 1;
            }
        };
        // Where every profile's other types are its first times the same factors, only
        // the first is summed: the others are its sum times them (exactly, in the
        // wrapping sums' arithmetic), and the sums take half the memory.
        let shared = first
            .factors
            .as_deref()
            .filter(|f| profiles.iter().all(|p| p.factors.as_deref() == Some(*f)));
        let columns = Columns {
            types: n_types,
            summed: if shared.is_some() { 1 } else { n_types },
            factors: shared.unwrap_or_default(),
        };
        let share = |sets: &[SetRuns]| self.sum(profiles, sets, &columns, cancelled, &tell);
        let (a, b) = std::thread::scope(|scope| {
            let b = scope.spawn(|| share(b));
            let a = share(a);
            (a, b.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        });
        let mut out = Output::new(self, n_types);
        out.samples(a?, b?);
        Ok(Some(out.finish(profiles)))
    }

    /// The merged samples of label sets `sets`, each set's samples summed by stack.
    fn sum(
        &self,
        profiles: &[&ProfileStacks],
        sets: &[SetRuns],
        columns: &Columns<'_>,
        cancelled: &(dyn Fn() -> bool + Sync),
        tell: &(dyn Fn() + Sync),
    ) -> Result<Part, Cancelled> {
        let Columns {
            types: n_types,
            summed,
            factors,
        } = *columns;
        let mut part = Part {
            samples: Samples {
                stack_offsets: vec![0],
                values: vec![Vec::new(); n_types],
                ..Samples::default()
            },
            locations: Vec::new(),
            reached: vec![false; self.tables.locations.len()],
        };
        if sets.is_empty() {
            return Ok(part);
        }
        let mut acc = vec![0i64; self.stacks() * summed];
        // One bit per stack: whether the label set being summed has it yet.
        let mut seen = vec![0u64; self.stacks().div_ceil(64)];
        let mut touched: Vec<u32> = Vec::new();
        let mut values = vec![0i64; summed];
        let mut chunk: Vec<LocationId> = Vec::with_capacity(CHUNK);
        let mut held = 0u32;
        for (set, runs) in sets {
            if cancelled() {
                return Err(Cancelled);
            }
            touched.clear();
            for &(pi, run) in runs {
                let p = profiles[pi as usize];
                let (_, count, start) = p.runs[run as usize];
                let mut at = start as usize;
                for _ in 0..count {
                    let id = read_leb128(&p.samples, &mut at) as u32;
                    at = read_values(p, at, &mut values);
                    let d = self.dense(id);
                    let sum = &mut acc[d * summed..(d + 1) * summed];
                    let (word, bit) = (d / 64, 1u64 << (d % 64));
                    if seen[word] & bit == 0 {
                        seen[word] |= bit;
                        touched.push(id);
                        sum.fill(0);
                    }
                    for (a, v) in sum.iter_mut().zip(&values) {
                        *a = a.wrapping_add(*v);
                    }
                }
            }
            // In the order the sums and the stacks lie in memory, which the
            // processor then reads ahead.
            touched.sort_unstable_by_key(|&id| self.dense(id));
            let samples = &mut part.samples;
            for &id in &touched {
                let d = self.dense(id);
                seen[d / 64] = 0;
                let bytes = self.stack_bytes(id);
                let mut at = 0;
                while at < bytes.len() {
                    let l = read_leb128(bytes, &mut at) as usize;
                    if let Some(r) = part.reached.get_mut(l) {
                        *r = true;
                    }
                    if chunk.len() == CHUNK {
                        part.locations
                            .push(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)));
                    }
                    chunk.push(l as LocationId);
                    held += 1;
                }
                samples.stack_offsets.push(held);
                let sum = &acc[d * summed..(d + 1) * summed];
                for (column, v) in samples.values.iter_mut().zip(sum) {
                    column.push(*v);
                }
                for (column, k) in samples.values[summed..].iter_mut().zip(factors) {
                    column.push(sum[0].wrapping_mul(*k));
                }
                samples.label_set.push(*set);
            }
            tell();
        }
        part.locations.push(chunk);
        Ok(part)
    }
}

/// Reads one sample's values at `at` into `values`; where the next sample's start.
fn read_values(p: &ProfileStacks, mut at: usize, values: &mut [i64]) -> usize {
    match &p.factors {
        Some(factors) => {
            let first = unzigzag(read_leb128(&p.samples, &mut at));
            if let Some((v0, rest)) = values.split_first_mut() {
                *v0 = first;
                for (v, k) in rest.iter_mut().zip(factors.iter()) {
                    *v = first.wrapping_mul(*k);
                }
            }
        }
        None => {
            for v in values.iter_mut() {
                *v = unzigzag(read_leb128(&p.samples, &mut at));
            }
        }
    }
    at
}

/// The merged profile being made: the shared tables' entries its samples reach,
/// renumbered.
struct Output<'i> {
    index: &'i StackIndex,
    profile: Profile,
    strings: Vec<StrId>,
    functions: Vec<u32>,
    mappings: Vec<u32>,
    label_sets: FxHashMap<LabelSetId, LabelSetId>,
}

const NEW: u32 = u32::MAX;

impl<'i> Output<'i> {
    fn new(index: &'i StackIndex, n_types: usize) -> Self {
        let t = &index.tables;
        let mut profile = Profile {
            label_sets: vec![Vec::new()],
            ..Profile::default()
        };
        profile.samples.stack_offsets.push(0);
        profile.samples.values = vec![Vec::new(); n_types];
        let mut label_sets = FxHashMap::default();
        label_sets.insert(0, 0);
        let mut out = Output {
            index,
            profile,
            strings: vec![NEW; t.strings.len()],
            functions: vec![NEW; t.functions.len()],
            mappings: vec![NEW; t.mappings.len()],
            label_sets,
        };
        out.string(0);
        out
    }

    /// Takes the samples of two parts, in order, with the locations they reach.
    fn samples(&mut self, a: Part, b: Part) {
        let reached: Vec<bool> = a
            .reached
            .iter()
            .zip(&b.reached)
            .map(|(x, y)| *x || *y)
            .collect();
        let mut samples = a.samples;
        let shift = samples.stack_offsets.last().copied().unwrap_or(0);
        samples
            .stack_offsets
            .extend(b.samples.stack_offsets.iter().skip(1).map(|o| o + shift));
        let total = samples.stack_offsets.last().copied().unwrap_or(0) as usize;
        let mut locations = Vec::with_capacity(total);
        for chunk in a.locations.into_iter().chain(b.locations) {
            locations.extend_from_slice(&chunk);
        }
        samples.stack_locations = locations;
        for (column, more) in samples.values.iter_mut().zip(&b.samples.values) {
            column.extend_from_slice(more);
        }
        samples.label_set.extend_from_slice(&b.samples.label_set);
        drop(b.samples);
        let mut set_of: FxHashMap<LabelSetId, LabelSetId> = FxHashMap::default();
        for set in &mut samples.label_set {
            *set = *set_of.entry(*set).or_insert_with(|| self.label_set(*set));
        }
        let mut location_of = vec![NEW; reached.len()];
        for (l, _) in reached.iter().enumerate().filter(|(_, r)| **r) {
            location_of[l] = self.location(l as LocationId);
        }
        if location_of.iter().enumerate().any(|(l, &m)| m != l as u32) {
            for l in &mut samples.stack_locations {
                *l = location_of[*l as usize];
            }
        }
        self.profile.samples = samples;
    }

    fn string(&mut self, id: StrId) -> StrId {
        let s = &mut self.strings[id as usize];
        if *s == NEW {
            *s = self.profile.strings.len() as StrId;
            self.profile
                .strings
                .push(self.index.tables.str(id).to_string());
        }
        *s
    }

    fn value_type(&mut self, t: &ValueType) -> ValueType {
        ValueType {
            kind: self.string(t.kind),
            unit: self.string(t.unit),
        }
    }

    fn label_set(&mut self, set: LabelSetId) -> LabelSetId {
        if let Some(&id) = self.label_sets.get(&set) {
            return id;
        }
        let labels: Vec<Label> = self.index.tables.label_sets[set as usize]
            .iter()
            .map(|l| Label {
                key: self.string(l.key),
                str: self.string(l.str),
                num: l.num,
                num_unit: self.string(l.num_unit),
            })
            .collect();
        let id = self.profile.label_sets.len() as LabelSetId;
        self.profile.label_sets.push(labels);
        self.label_sets.insert(set, id);
        id
    }

    fn mapping(&mut self, m: u32) -> u32 {
        if self.mappings[m as usize] == NEW {
            let mapping = &self.index.tables.mappings[m as usize];
            let mapping = Mapping {
                filename: self.string(mapping.filename),
                build_id: self.string(mapping.build_id),
                ..mapping.clone()
            };
            self.mappings[m as usize] = self.profile.mappings.len() as u32;
            self.profile.mappings.push(mapping);
        }
        self.mappings[m as usize]
    }

    fn function(&mut self, f: u32) -> u32 {
        if self.functions[f as usize] == NEW {
            let function = &self.index.tables.functions[f as usize];
            let function = Function {
                name: self.string(function.name),
                system_name: self.string(function.system_name),
                filename: self.string(function.filename),
                start_line: function.start_line,
            };
            self.functions[f as usize] = self.profile.functions.len() as u32;
            self.profile.functions.push(function);
        }
        self.functions[f as usize]
    }

    /// Adds location `l` of the shared tables: its id in the merged profile.
    fn location(&mut self, l: LocationId) -> LocationId {
        let index = self.index;
        let location = &index.tables.locations[l as usize];
        let location = Location {
            mapping: location.mapping.map(|m| self.mapping(m)),
            address: location.address,
            lines: location
                .lines
                .iter()
                .map(|line| Line {
                    function: self.function(line.function),
                    ..*line
                })
                .collect(),
            is_folded: location.is_folded,
        };
        self.profile.locations.push(location);
        self.profile.locations.len() as LocationId - 1
    }

    /// The merged profile, its header as [`Merger`] makes it of `profiles`'.
    fn finish(mut self, profiles: &[&ProfileStacks]) -> Profile {
        let Some(first) = profiles.first() else {
            return self.profile;
        };
        let h = &first.header;
        let sample_types: Vec<ValueType> =
            h.sample_types.iter().map(|t| self.value_type(t)).collect();
        let period_type = self.value_type(&h.period_type);
        let default_sample_type = self.string(h.default_sample_type);
        let p = &mut self.profile;
        p.sample_types = sample_types;
        p.period_type = period_type;
        p.default_sample_type = default_sample_type;
        p.doc_url = h.doc_url.clone();
        p.period = h.period;
        for (k, q) in profiles.iter().enumerate() {
            let q = &q.header;
            p.period = p.period.max(q.period);
            widen_span(p, k == 0, q.time_nanos, q.duration_nanos);
        }
        self.profile
    }
}

#[cfg(test)]
mod tests {
    use super::{leb128, leb128_code};

    #[test]
    fn a_location_code_holds_its_id_leb128_bytes_and_their_number() {
        for id in [
            0,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            u32::MAX,
        ] {
            let mut bytes = Vec::new();
            leb128(&mut bytes, u64::from(id));
            let code = leb128_code(id).to_le_bytes();
            assert_eq!(usize::from(code[7]), bytes.len(), "id {id}");
            assert_eq!(&code[..bytes.len()], &bytes[..], "id {id}");
            assert!(code[bytes.len()..7].iter().all(|&b| b == 0), "id {id}");
        }
    }
}
