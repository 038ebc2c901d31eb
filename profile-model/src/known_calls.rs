//! The set of call edges along which a real call counted ([`KnownCalls`]), which the
//! counting loop asks about at every call of every sample of a sum.
//!
//! Per callee, its callers sit in a run of buckets of four 16-bit lanes, one `u64`
//! each. Every caller is looked for first in its home bucket, whose four lanes are
//! compared with it at once: one load from a table of a few bytes per edge, for any
//! number of frames (a bit matrix of every pair of frames took 2 MiB a thread, and
//! past 4,096 frames a second structure and a second counting loop). A set of more
//! than one bucket is kept at most half full, so that nearly every caller is in its
//! home bucket; the few that are not are found by a second look, on the counting
//! loop's cold path. A bitmap of every frame for the callees with the most callers
//! (a few cache lines where their buckets take one per caller or two) was measured and
//! dropped: on the 2,000-sample day it took a seventh of the look's first-level misses
//! away, but choosing between bitmap and buckets with no branch added 15 instructions
//! a look, and the whole run was 3% slower.

use rustc_hash::FxHashSet;

use crate::frames::FrameId;

/// Callers per bucket: the 16-bit lanes of a `u64`.
const LANES: u32 = 4;

/// A bucket whose every lane is 1: a caller times it fills every lane with the caller.
const ONES: u64 = 0x0001_0001_0001_0001;

/// The top bit of every lane.
const TOPS: u64 = 0x8000_8000_8000_8000;

/// An empty lane; no caller of a bucket is this id or above (those go to `wide`).
const NO_CALLER: FrameId = 0xFFFF;

/// A bucket of empty lanes.
const EMPTY: u64 = u64::MAX;

/// A set of call edges, `caller → callee`, from which what was inserted since
/// [`KnownCalls::keep`] can be taken back.
#[derive(Debug)]
pub(crate) struct KnownCalls {
    /// Per callee frame id: where its buckets start in `buckets`, and their count
    /// minus one (a power of two minus one); a callee without callers points at the
    /// empty bucket `buckets` starts with.
    heads: Vec<(u32, u32)>,
    /// Per callee frame id: how many callers its buckets hold.
    lens: Vec<u32>,
    /// The buckets of every callee's callers, side by side; a callee whose set grows
    /// moves it to the end.
    buckets: Vec<u64>,
    /// Buckets that sets moved out of: once they are half of `buckets`, the sets are
    /// packed again, so that the ones in use share fewer cache lines.
    garbage: usize,
    /// The edges whose caller no lane holds or whose callee has no head yet, as
    /// `caller << 32 | callee`.
    wide: FxHashSet<u64>,
    /// The edges inserted since [`KnownCalls::keep`].
    added: Vec<(FrameId, FrameId)>,
}

impl Default for KnownCalls {
    fn default() -> Self {
        Self {
            heads: Vec::new(),
            lens: Vec::new(),
            buckets: vec![EMPTY],
            garbage: 0,
            wide: FxHashSet::default(),
            added: Vec::new(),
        }
    }
}

/// Edge `caller → callee` as one number, to be found in a hash set or map.
pub(crate) fn key(caller: FrameId, callee: FrameId) -> u64 {
    u64::from(caller) << 32 | u64::from(callee)
}

/// The home bucket of `caller` in a set of `mask + 1` buckets: its low bits, which
/// spread the callers of a callee well enough (frame ids are numbered as first met),
/// with no multiply (on 200 of the 2,000-sample day's files, callgrind counted a fifth
/// fewer last-level misses than with a multiplicative hash).
#[inline(always)]
fn home(caller: FrameId, mask: u32) -> u32 {
    caller & mask
}

/// Whether a lane of `bucket` is `id` (below 2^16): the lanes equal to it are zero
/// after the xor, and only a zero lane borrows into its top bit when 1 is taken
/// from every lane (a borrow can make a lane above a zero one look zero too, which
/// does not change whether some lane is).
#[inline(always)]
fn has_lane(bucket: u64, id: FrameId) -> bool {
    let x = bucket ^ u64::from(id).wrapping_mul(ONES);
    x.wrapping_sub(ONES) & !x & TOPS != 0
}

/// The callers a bucket holds.
fn lanes(bucket: u64) -> impl Iterator<Item = FrameId> {
    (0..LANES)
        .map(move |k| (bucket >> (16 * k)) as FrameId & NO_CALLER)
        .filter(|&f| f != NO_CALLER)
}

/// How many buckets a set of `len` callers takes: one for up to a bucket's lanes,
/// else at most half of its lanes full.
fn buckets_for(len: u32) -> u32 {
    match len {
        0..=LANES => 1,
        _ => len.div_ceil(2).next_power_of_two(),
    }
}

impl KnownCalls {
    /// Makes room for frame ids below `frames`.
    pub fn grow(&mut self, frames: usize) {
        if self.heads.len() < frames {
            self.heads.resize(frames, (0, 0));
            self.lens.resize(frames, 0);
            // Edges of callees that had no head move to their buckets.
            for k in std::mem::take(&mut self.wide) {
                self.put((k >> 32) as FrameId, k as FrameId);
            }
        }
    }

    /// Whether `caller`'s home bucket in `callee`'s set holds the edge: the one look
    /// that answers for nearly every edge held. `false` when it is not held, or held
    /// elsewhere ([`KnownCalls::contains`]).
    #[inline(always)]
    pub fn at_home(&self, caller: FrameId, callee: FrameId) -> bool {
        let Some(&(at, mask)) = self.heads.get(callee as usize) else {
            return false;
        };
        caller < NO_CALLER
            && (self.buckets.get((at + home(caller, mask)) as usize))
                .is_some_and(|&bucket| has_lane(bucket, caller))
    }

    /// Whether the set holds edge `caller → callee`.
    pub fn contains(&self, caller: FrameId, callee: FrameId) -> bool {
        let Some((_, at, mask)) = self.set_of(caller, callee) else {
            return self.wide.contains(&key(caller, callee));
        };
        // Buckets from home on, up to the first with an empty lane: a caller is put
        // in the first with room, and buckets only empty when their set is rebuilt.
        let mut i = home(caller, mask);
        for _ in 0..=mask {
            let Some(&bucket) = self.buckets.get((at + i) as usize) else {
                return false;
            };
            if has_lane(bucket, caller) {
                return true;
            }
            if has_lane(bucket, NO_CALLER) {
                return false;
            }
            i = (i + 1) & mask;
        }
        false
    }

    /// Where the buckets keep edge `caller → callee`: in callee `c`'s set, which starts
    /// at `at` of `buckets` and has `mask + 1` of them, as `(c, at, mask)`; `None` for
    /// `wide`.
    fn set_of(&self, caller: FrameId, callee: FrameId) -> Option<(usize, u32, u32)> {
        let c = callee as usize;
        let &(at, mask) = self.heads.get(c)?;
        (caller < NO_CALLER).then_some((c, at, mask))
    }

    /// Inserts edge `caller → callee`, which the set does not hold.
    pub fn insert(&mut self, caller: FrameId, callee: FrameId) {
        self.added.push((caller, callee));
        self.put(caller, callee);
    }

    /// [`KnownCalls::insert`], not noted in `added`.
    fn put(&mut self, caller: FrameId, callee: FrameId) {
        let Some((c, at, mask)) = self.set_of(caller, callee) else {
            self.wide.insert(key(caller, callee));
            return;
        };
        let len = self.lens[c] + 1;
        let size = buckets_for(len);
        if at == 0 || size > mask + 1 {
            self.move_set(c, size);
        }
        self.place(c, caller);
        self.lens[c] = len;
        if 2 * self.garbage > self.buckets.len() {
            self.pack();
        }
    }

    /// Moves callee `c`'s set to `size` new buckets at the end of `buckets`.
    fn move_set(&mut self, c: usize, size: u32) {
        let (at, mask) = self.heads[c];
        self.heads[c] = (self.buckets.len() as u32, size - 1);
        self.buckets
            .resize(self.buckets.len() + size as usize, EMPTY);
        if at != 0 {
            for i in at..=at + mask {
                for caller in lanes(self.buckets[i as usize]) {
                    self.place(c, caller);
                }
            }
            self.garbage += mask as usize + 1;
        }
    }

    /// Puts `caller` (below [`NO_CALLER`]) in the first bucket with an empty lane from
    /// its home on, in callee `c`'s set, which has room.
    fn place(&mut self, c: usize, caller: FrameId) {
        let (at, mask) = self.heads[c];
        let mut i = home(caller, mask);
        loop {
            let bucket = &mut self.buckets[(at + i) as usize];
            if let Some(k) =
                (0..LANES).find(|k| (*bucket >> (16 * k)) as FrameId & NO_CALLER == NO_CALLER)
            {
                *bucket &= !(u64::from(NO_CALLER) << (16 * k));
                *bucket |= u64::from(caller) << (16 * k);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Takes edge `caller → callee` out of the set, where it is.
    fn remove(&mut self, caller: FrameId, callee: FrameId) {
        let Some((c, at, mask)) = self.set_of(caller, callee) else {
            self.wide.remove(&key(caller, callee));
            return;
        };
        let set = at as usize..=(at + mask) as usize;
        let callers: Vec<FrameId> = (self.buckets[set.clone()].iter())
            .flat_map(|&bucket| lanes(bucket))
            .filter(|&f| f != caller)
            .collect();
        if callers.len() as u32 == self.lens[c] {
            return;
        }
        // The others are placed again: one past a full bucket is found only while
        // that bucket stays full.
        self.buckets[set].fill(EMPTY);
        for &f in &callers {
            self.place(c, f);
        }
        self.lens[c] = callers.len() as u32;
    }

    /// Packs the sets in use together, in callee order.
    fn pack(&mut self) {
        let mut buckets = Vec::with_capacity(self.buckets.len() - self.garbage);
        buckets.push(EMPTY);
        for (at, mask) in &mut self.heads {
            if *at != 0 {
                let set = *at as usize..=(*at + *mask) as usize;
                *at = buckets.len() as u32;
                buckets.extend_from_slice(&self.buckets[set]);
            }
        }
        self.buckets = buckets;
        self.garbage = 0;
    }

    /// Every edge of the set, as (caller, callee).
    pub fn edges(&self) -> impl Iterator<Item = (FrameId, FrameId)> + '_ {
        let in_buckets = (self.heads.iter().enumerate())
            .filter(|(_, (at, _))| *at != 0)
            .flat_map(|(c, &(at, mask))| {
                let set = self.buckets.get(at as usize..=(at + mask) as usize);
                (set.unwrap_or(&[]).iter())
                    .flat_map(|&bucket| lanes(bucket))
                    .map(move |caller| (caller, c as FrameId))
            });
        let wide = (self.wide.iter()).map(|&k| ((k >> 32) as FrameId, k as FrameId));
        in_buckets.chain(wide)
    }

    /// Keeps the edges inserted so far.
    pub fn keep(&mut self) {
        self.added.clear();
    }

    /// Takes back the edges inserted since [`KnownCalls::keep`].
    pub fn forget(&mut self) {
        while let Some((caller, callee)) = self.added.pop() {
            self.remove(caller, callee);
        }
    }

    /// Forgets every edge.
    pub fn clear(&mut self) {
        self.heads.fill((0, 0));
        self.lens.fill(0);
        self.buckets.truncate(1);
        self.garbage = 0;
        self.wide.clear();
        self.added.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::{EMPTY, KnownCalls, has_lane};

    #[test]
    fn a_bucket_holds_exactly_its_lanes() {
        let bucket = 0xFFFF_0000_8000_0001;
        for id in [1, 0x8000, 0, 0xFFFF] {
            assert!(has_lane(bucket, id), "{id:#x}");
        }
        for id in [2, 0x7FFF, 0x8001, 0xFFFE, 0x0100] {
            assert!(!has_lane(bucket, id), "{id:#x}");
        }
        assert!(!has_lane(EMPTY, 0) && has_lane(EMPTY, 0xFFFF));
    }

    #[test]
    fn known_calls_hold_what_was_inserted_through_growth_and_packing() {
        let mut known = KnownCalls::default();
        known.grow(1450);
        // Callees' sets grow in turns, so that sets move and the buckets are packed.
        for round in 0..200u32 {
            for callee in 0..50u32 {
                known.insert(round * 7 + callee, callee);
            }
        }
        for callee in 0..50u32 {
            for round in 0..200u32 {
                assert!(known.contains(round * 7 + callee, callee));
                assert!(!known.contains(round * 7 + callee + 1400 + 50, callee));
            }
        }
        // Most callers are found in their home bucket.
        let at_home = (0..50u32)
            .flat_map(|callee| (0..200u32).map(move |round| (round * 7 + callee, callee)))
            .filter(|&(caller, callee)| known.at_home(caller, callee))
            .count();
        assert!(at_home * 10 >= 50 * 200 * 9, "{at_home} at home");
        // Sets moved out of are never more than half the buckets.
        assert!(2 * known.garbage <= known.buckets.len());
        // Ids that no lane holds, or callees without a head, are held apart.
        known.insert(70_000, 3);
        known.insert(4, 1460);
        assert!(known.contains(70_000, 3) && known.contains(4, 1460));
        assert!(!known.at_home(70_000, 3) && !known.contains(70_000, 4));
        let mut edges: Vec<_> = known.edges().collect();
        edges.sort_unstable();
        assert_eq!(edges.len(), 50 * 200 + 2);
        assert!(edges.binary_search(&(70_000, 3)).is_ok());
        // A callee that gets a head takes its edges there.
        known.grow(1461);
        assert!(known.wide.len() == 1 && known.at_home(4, 1460));
        known.clear();
        assert!(!known.contains(0, 0) && known.edges().count() == 0);
    }

    #[test]
    fn known_calls_take_back_what_was_inserted_since_kept() {
        let mut known = KnownCalls::default();
        known.grow(8);
        // Callers of one callee, many sharing a home bucket.
        let kept: Vec<u32> = (0..40).map(|i| i * 64).collect();
        for &f in &kept {
            known.insert(f, 1);
        }
        known.keep();
        let later: Vec<u32> = (0..40).map(|i| i * 64 + 32).collect();
        for &f in &later {
            known.insert(f, 1);
        }
        known.insert(70_000, 2);
        known.forget();
        assert!(kept.iter().all(|&f| known.contains(f, 1)));
        assert!(!later.iter().any(|&f| known.contains(f, 1)));
        assert!(!known.contains(70_000, 2));
        assert_eq!(known.edges().count(), kept.len());
    }
}
