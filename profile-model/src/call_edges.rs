//! pprof's `(inline)` marks are a property of call edges, not of frames. pprof's graph
//! has an edge from caller to callee wherever a sample holds the two next to each
//! other (inside one location: the callee inlined into the caller; across two
//! locations: a real call), counted once per sample, at its rootmost place. An edge is
//! inline when no sample has it as a real call there; a frame is marked `(inline)`
//! when all its in-edges are inline, `(partial-inline)` when some are.
//!
//! Every edge the samples count is kept here with what they said of it, so that the
//! tables of many profiles (summed one at a time, on several threads) mark frames as
//! pprof marks their merge: an edge inlined in one profile and called in another is
//! no inline edge. The few edges that lie inside some location get a state of their
//! own: a real call along one that also lies inside a location of the profile being
//! counted is pending until its sample ends, and is dropped if the same edge shows up
//! inlined nearer the root. Every other real call counts at once, and only its edge is
//! kept, in a compact set ([`KnownCalls`]); an edge met inside a location only later
//! finds there that it was called.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::frames::FrameId;
use crate::top::TopEdge;

/// What the occurrences of an edge inside some location said.
#[derive(Debug, Clone, Copy, Default)]
struct EdgeState {
    /// The sample whose real call along the edge is pending (0: none).
    pending: u32,
    /// The last profile ([`CallEdges::begin_profile`]) in which the edge lies inside
    /// a location.
    inside: u32,
    /// Whether some sample had the callee inlined into the caller.
    inlined: bool,
    /// Whether some sample had the edge as a real call at its rootmost place while it
    /// lay inside a location of the profile: then the edge is not inline.
    called: bool,
    /// Whether the state before the first change since [`CallEdges::keep`] is in the
    /// journal.
    journaled: bool,
}

/// Every edge counted since the last [`CallEdges::clear`], with what the samples said
/// of it (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct CallEdges {
    /// The edges that lay inside a location: `caller << 32 | callee` → id.
    ids: FxHashMap<u64, u32>,
    /// By id: (caller, callee), and what the samples said.
    pairs: Vec<(FrameId, FrameId)>,
    states: Vec<EdgeState>,
    /// The profile being counted, numbered from 1.
    epoch: u32,
    /// Edges with a pending real call, of the current sample.
    pending: Vec<u32>,
    /// States changed since [`CallEdges::keep`], as they were before.
    journal: Vec<(u32, EdgeState)>,
    /// Every edge along which a real call counted.
    called: KnownCalls,
}

/// Edge `caller → callee` in [`CallEdges::ids`].
fn key(caller: FrameId, callee: FrameId) -> u64 {
    u64::from(caller) << 32 | u64::from(callee)
}

impl CallEdges {
    /// Makes room for frame ids below `frames`.
    pub fn grow(&mut self, frames: usize, matrix: bool) {
        self.called.grow(frames, matrix);
    }

    /// Starts the next profile: the edges inside its locations are told next
    /// ([`CallEdges::inside`]).
    pub fn begin_profile(&mut self) {
        self.epoch = self.epoch.checked_add(1).unwrap_or(1);
    }

    /// The id of edge `caller → callee` (not a frame to itself), which lies inside a
    /// location of the profile being counted.
    pub fn inside(&mut self, caller: FrameId, callee: FrameId) -> u32 {
        let next = self.pairs.len() as u32;
        let e = *self.ids.entry(key(caller, callee)).or_insert(next);
        if e == next {
            self.pairs.push((caller, callee));
            self.states.push(EdgeState::default());
        }
        self.states[e as usize].inside = self.epoch;
        e
    }

    /// Whether every frame below the count given to [`CallEdges::grow`] has its
    /// edges in a bit matrix ([`CallEdges::known_in_matrix`]).
    #[inline(always)]
    pub fn has_matrix(&self) -> bool {
        self.called.dim != 0
    }

    /// Whether a real call along edge `caller → callee` counted, both frames in the
    /// matrix ([`CallEdges::has_matrix`]).
    #[inline(always)]
    pub fn known_in_matrix(&self, caller: FrameId, callee: FrameId) -> bool {
        self.called.matrix_contains(caller, callee)
    }

    /// Whether a real call along edge `caller → callee` counted, without a matrix
    /// ([`CallEdges::has_matrix`]): then later calls along it say nothing new.
    #[inline(always)]
    pub fn known_called(&mut self, caller: FrameId, callee: FrameId) -> bool {
        self.called.sets_contain(caller, callee)
    }

    /// Changes the state of edge `e`, journaled.
    fn change(&mut self, e: u32, change: impl FnOnce(&mut EdgeState)) {
        let s = &mut self.states[e as usize];
        if !s.journaled {
            self.journal.push((e, *s));
            s.journaled = true;
        }
        change(s);
    }

    /// Notes a real call `caller → callee` (not a frame to itself, not known called)
    /// in sample `mark`: `None` when the edge never lay inside a location, whose call
    /// the caller counts ([`CallEdges::count_call`]); else whether the call counted,
    /// or is pending.
    pub fn call(&mut self, caller: FrameId, callee: FrameId, mark: u32) -> Option<bool> {
        let e = *self.ids.get(&key(caller, callee))?;
        let s = self.states[e as usize];
        if s.called {
            return Some(true);
        }
        if s.inside == self.epoch {
            // It may yet show up inlined nearer the root of this sample.
            if s.pending != mark {
                self.change(e, |s| s.pending = mark);
                self.pending.push(e);
            }
            return Some(false);
        }
        self.change(e, |s| s.called = true);
        Some(true)
    }

    /// Notes that a real call along edge `caller → callee` counted.
    pub fn count_call(&mut self, caller: FrameId, callee: FrameId) {
        self.called.insert(caller, callee);
    }

    /// Whether some real call of the current sample is pending.
    #[inline(always)]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Notes an inlined visit along edge `e` in sample `mark`: a real call of it
    /// pending in this sample (nearer the leaf) is dropped.
    #[inline]
    pub fn inlined(&mut self, e: u32, mark: u32) {
        let s = self.states[e as usize];
        if s.pending == mark || !s.inlined {
            self.change(e, |s| {
                if s.pending == mark {
                    s.pending = 0;
                }
                s.inlined = true;
            });
        }
    }

    /// Ends the current sample: its pending real calls count.
    pub fn end_sample(&mut self) {
        while let Some(e) = self.pending.pop() {
            if self.states[e as usize].pending != 0 {
                self.change(e, |s| {
                    s.pending = 0;
                    s.called = true;
                });
            }
        }
    }

    /// The edges inside locations that the samples counted, once counting has ended
    /// ([`CallEdges::end_sample`]), in the order first met.
    pub fn counted_inside(&self) -> impl Iterator<Item = TopEdge> + '_ {
        (self.pairs.iter().zip(&self.states)).filter_map(|(&(caller, callee), s)| {
            let called = s.called || self.called.contains(caller, callee);
            (s.inlined || called).then_some(TopEdge {
                caller,
                callee,
                inlined: s.inlined,
                called,
            })
        })
    }

    /// Every edge along which a real call counted (an edge inside a location among
    /// them too, whose [`CallEdges::counted_inside`] says the same and more).
    pub fn counted_called(&self) -> impl Iterator<Item = TopEdge> + '_ {
        (self.called.edges()).map(|(caller, callee)| TopEdge {
            caller,
            callee,
            inlined: false,
            called: true,
        })
    }

    /// Every edge counted: [`CallEdges::counted_inside`], then
    /// [`CallEdges::counted_called`] (an edge may come twice: what the two say together
    /// is what the first says alone).
    pub fn counted(&self) -> impl Iterator<Item = TopEdge> + '_ {
        self.counted_inside().chain(self.counted_called())
    }

    /// Forgets every edge.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.pairs.clear();
        self.states.clear();
        self.pending.clear();
        self.journal.clear();
        self.called.clear();
    }

    /// Keeps the occurrences noted so far.
    pub fn keep(&mut self) {
        for (e, _) in self.journal.drain(..) {
            self.states[e as usize].journaled = false;
        }
        self.called.keep();
    }

    /// Takes back the occurrences noted since [`CallEdges::keep`].
    pub fn forget(&mut self) {
        self.pending.clear();
        while let Some((e, before)) = self.journal.pop() {
            self.states[e as usize] = before;
        }
        self.called.forget();
    }
}

/// A set of call edges, found in a few instructions. While every frame id is below
/// [`MATRIX_FRAMES`] (and the caller asks for it), a bit matrix: one load and no
/// branch to guess, where a sum of many profiles checks most of its calls. Else, per
/// caller, an open-addressing set of its callees in one shared arena of 16-bit slots,
/// small enough to stay in a core's cache (an edge whose ids do not fit goes to a
/// hash set). What was inserted since [`KnownCalls::keep`] can be taken back.
#[derive(Debug)]
struct KnownCalls {
    /// Per caller frame id: where its set starts in `arena`, and its size minus one
    /// (a power of two minus one); a caller without a set points at the one empty
    /// slot `arena` starts with.
    sets: Vec<(u32, u32)>,
    /// Per caller frame id: how many callees its set holds.
    lens: Vec<u32>,
    /// The sets' slots, callee ids ([`NO_FRAME`] when empty); a set that grows
    /// moves to the end.
    arena: Vec<u16>,
    /// Slots of `arena` that sets moved out of: once they are half of it, the sets
    /// are packed again, so that the ones in use share fewer cache lines.
    garbage: usize,
    /// The edges of a caller without a set or of a callee id of 16 bits or more, by
    /// [`key`].
    wide: FxHashSet<u64>,
    /// The edges inserted since [`KnownCalls::keep`].
    added: Vec<(FrameId, FrameId)>,
    /// The edges between frames below `dim` (every edge, when `dim` is not 0): bit
    /// `caller % 64` of word `caller / 64` of row `callee` (see [`ROW_SHIFT`]).
    bits: Vec<u64>,
    /// The frames the matrix holds: 0, or a power of two from 64 to [`MATRIX_FRAMES`].
    dim: u32,
    /// The rows of `bits` below which every edge lies.
    rows: u32,
}

/// The most frames [`KnownCalls::bits`] holds: its 2 MiB stay mostly in a core's
/// second-level cache, as only the rows and words of the ids in use are touched.
const MATRIX_FRAMES: u32 = 4096;

/// log2 of the words of a row of [`KnownCalls::bits`], which holds [`MATRIX_FRAMES`]
/// callers whatever its `dim`: a constant shift finds a word in fewer instructions.
const ROW_SHIFT: u32 = (MATRIX_FRAMES / 64).trailing_zeros();

/// An empty slot of [`KnownCalls::arena`].
const NO_FRAME: u16 = u16::MAX;

impl Default for KnownCalls {
    fn default() -> Self {
        Self {
            sets: Vec::new(),
            lens: Vec::new(),
            arena: vec![NO_FRAME],
            garbage: 0,
            wide: FxHashSet::default(),
            added: Vec::new(),
            bits: Vec::new(),
            dim: 0,
            rows: 0,
        }
    }
}

/// Where `callee` starts its probe in a set of size `mask + 1`.
#[inline(always)]
fn probe_start(callee: FrameId, mask: u32) -> u32 {
    ((u64::from(callee).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32) & mask
}

impl KnownCalls {
    /// Makes room for frame ids below `frames`: every edge moves into the matrix when
    /// `matrix` and they fit in it, else out of it.
    fn grow(&mut self, frames: usize, matrix: bool) {
        if self.sets.len() < frames {
            self.sets.resize(frames, (0, 0));
            self.lens.resize(frames, 0);
            // Edges of callers that had no set move to theirs.
            for k in std::mem::take(&mut self.wide) {
                self.put((k >> 32) as FrameId, k as FrameId);
            }
        }
        let dim = match u32::try_from(frames) {
            Ok(n) if matrix && n <= MATRIX_FRAMES => n.next_power_of_two().max(64),
            _ => 0,
        };
        if dim > self.dim || (dim == 0 && self.dim != 0) {
            let edges: Vec<_> = self.edges().collect();
            let added = std::mem::take(&mut self.added);
            self.clear();
            self.added = added;
            self.bits = vec![0; (dim as usize) << ROW_SHIFT];
            self.dim = dim;
            for (caller, callee) in edges {
                self.put(caller, callee);
            }
        }
    }

    /// Whether edge `caller → callee` lies in the matrix.
    #[inline(always)]
    fn in_matrix(&self, caller: FrameId, callee: FrameId) -> bool {
        (caller | callee) < self.dim
    }

    /// The word of edge `caller → callee` in the matrix, whose bit `caller % 64` it is.
    #[inline(always)]
    fn word(caller: FrameId, callee: FrameId) -> usize {
        (callee as usize) << ROW_SHIFT | (caller / 64) as usize
    }

    /// Whether the matrix holds edge `caller → callee` (which lies in it).
    #[inline(always)]
    fn matrix_contains(&self, caller: FrameId, callee: FrameId) -> bool {
        (self.bits.get(Self::word(caller, callee))).is_some_and(|w| (w >> (caller % 64)) & 1 != 0)
    }

    /// Sets or clears the matrix's bit of edge `caller → callee` (which lies in it).
    fn set_bit(&mut self, caller: FrameId, callee: FrameId, on: bool) {
        let bit = 1 << (caller % 64);
        if let Some(word) = self.bits.get_mut(Self::word(caller, callee)) {
            if on {
                *word |= bit;
                self.rows = self.rows.max(callee + 1);
            } else {
                *word &= !bit;
            }
        }
    }

    /// Whether the set holds edge `caller → callee`.
    #[inline(always)]
    fn contains(&self, caller: FrameId, callee: FrameId) -> bool {
        if self.in_matrix(caller, callee) {
            return self.matrix_contains(caller, callee);
        }
        self.sets_contain(caller, callee)
    }

    /// Where the sets keep edge `caller → callee`: in caller `c`'s set, which starts at
    /// `at` of `arena` and has `mask + 1` slots, as `(c, at, mask)`; `None` for `wide`.
    #[inline(always)]
    fn set_of(&self, caller: FrameId, callee: FrameId) -> Option<(usize, u32, u32)> {
        let c = caller as usize;
        let &(at, mask) = self.sets.get(c)?;
        (callee < u32::from(NO_FRAME)).then_some((c, at, mask))
    }

    /// Whether the sets (not the matrix) hold edge `caller → callee`. It decides as
    /// [`KnownCalls::set_of`] does, spelled out: the counting loop inlines it, and
    /// through `set_of` fleet's loop took 1.8% more instructions.
    #[inline(always)]
    fn sets_contain(&self, caller: FrameId, callee: FrameId) -> bool {
        let Some(&(at, mask)) = self.sets.get(caller as usize) else {
            return self.wide.contains(&key(caller, callee));
        };
        if callee >= u32::from(NO_FRAME) {
            return self.wide.contains(&key(caller, callee));
        }
        let mut i = probe_start(callee, mask);
        loop {
            match self.arena.get((at + i) as usize) {
                Some(&f) if u32::from(f) == callee => return true,
                Some(&f) if f != NO_FRAME => i = (i + 1) & mask,
                _ => return false,
            }
        }
    }

    /// Inserts edge `caller → callee`, which the set does not hold.
    fn insert(&mut self, caller: FrameId, callee: FrameId) {
        self.added.push((caller, callee));
        self.put(caller, callee);
    }

    /// [`KnownCalls::insert`], not noted in `added`.
    fn put(&mut self, caller: FrameId, callee: FrameId) {
        if self.in_matrix(caller, callee) {
            self.set_bit(caller, callee, true);
            return;
        }
        let Some((c, at, mask)) = self.set_of(caller, callee) else {
            self.wide.insert(key(caller, callee));
            return;
        };
        let len = self.lens[c];
        // At most three quarters full, so that every probe ends at an empty slot soon.
        if at == 0 || 4 * (len + 1) > 3 * (mask + 1) {
            let size = if at == 0 { 4 } else { 2 * (mask + 1) };
            let new_at = self.arena.len() as u32;
            self.arena
                .resize(self.arena.len() + size as usize, NO_FRAME);
            self.sets[c] = (new_at, size - 1);
            if at != 0 {
                for i in at..=at + mask {
                    let f = self.arena[i as usize];
                    if f != NO_FRAME {
                        self.place(c, u32::from(f));
                    }
                }
                self.garbage += mask as usize + 1;
            }
        }
        self.place(c, callee);
        self.lens[c] += 1;
        if 2 * self.garbage > self.arena.len() {
            self.pack();
        }
    }

    /// Takes edge `caller → callee` out of the set, where it is.
    fn remove(&mut self, caller: FrameId, callee: FrameId) {
        if self.in_matrix(caller, callee) {
            self.set_bit(caller, callee, false);
            return;
        }
        let Some((c, at, mask)) = self.set_of(caller, callee) else {
            self.wide.remove(&key(caller, callee));
            return;
        };
        let slot = |i: u32| (at + (i & mask)) as usize;
        let mut i = probe_start(callee, mask);
        while self.arena[slot(i)] != callee as u16 {
            if self.arena[slot(i)] == NO_FRAME {
                return;
            }
            i += 1;
        }
        self.arena[slot(i)] = NO_FRAME;
        self.lens[c] -= 1;
        // The callees placed after it in its run of full slots are placed again, so
        // that no probe stops at the hole.
        i += 1;
        while self.arena[slot(i)] != NO_FRAME {
            let f = std::mem::replace(&mut self.arena[slot(i)], NO_FRAME);
            self.place(c, u32::from(f));
            i += 1;
        }
    }

    /// Packs the sets in use together, in caller order (so the sets of the callers
    /// met first, the busiest, sit together).
    fn pack(&mut self) {
        let mut arena = Vec::with_capacity(self.arena.len() - self.garbage);
        arena.push(NO_FRAME);
        for (at, mask) in &mut self.sets {
            if *at != 0 {
                let slots = *at as usize..=(*at + *mask) as usize;
                *at = arena.len() as u32;
                arena.extend_from_slice(&self.arena[slots]);
            }
        }
        self.arena = arena;
        self.garbage = 0;
    }

    /// Puts `callee` (below [`NO_FRAME`]) in the first empty slot of its probe in
    /// caller `c`'s set.
    fn place(&mut self, c: usize, callee: FrameId) {
        let (at, mask) = self.sets[c];
        let mut i = probe_start(callee, mask);
        while self.arena[(at + i) as usize] != NO_FRAME {
            i = (i + 1) & mask;
        }
        self.arena[(at + i) as usize] = callee as u16;
    }

    /// Every edge of the set, as (caller, callee).
    fn edges(&self) -> impl Iterator<Item = (FrameId, FrameId)> + '_ {
        let rows = self
            .bits
            .get(..(self.rows as usize) << ROW_SHIFT)
            .unwrap_or_default();
        let in_bits = (rows.iter().enumerate())
            .filter(|(_, w)| **w != 0)
            .flat_map(move |(i, &w)| {
                let callee = (i >> ROW_SHIFT) as FrameId;
                let base = ((i & ((1 << ROW_SHIFT) - 1)) * 64) as FrameId;
                std::iter::successors(Some(w), |w| Some(w & (w - 1)).filter(|w| *w != 0))
                    .map(move |w| (base + w.trailing_zeros(), callee))
            });
        let in_sets = (self.sets.iter().enumerate())
            .filter(|(_, (at, _))| *at != 0)
            .flat_map(|(c, &(at, mask))| {
                let slots = self.arena.get(at as usize..=(at + mask) as usize);
                (slots.unwrap_or(&[]).iter())
                    .filter(|&&f| f != NO_FRAME)
                    .map(move |&f| (c as FrameId, u32::from(f)))
            });
        let wide = (self.wide.iter()).map(|&k| ((k >> 32) as FrameId, k as FrameId));
        in_bits.chain(in_sets).chain(wide)
    }

    /// Keeps the edges inserted so far.
    fn keep(&mut self) {
        self.added.clear();
    }

    /// Takes back the edges inserted since [`KnownCalls::keep`].
    fn forget(&mut self) {
        while let Some((caller, callee)) = self.added.pop() {
            self.remove(caller, callee);
        }
    }

    /// Forgets every edge.
    fn clear(&mut self) {
        let rows = (self.rows as usize) << ROW_SHIFT;
        self.bits.get_mut(..rows).unwrap_or_default().fill(0);
        self.rows = 0;
        self.sets.fill((0, 0));
        self.lens.fill(0);
        self.arena.truncate(1);
        self.garbage = 0;
        self.wide.clear();
        self.added.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::KnownCalls;

    #[test]
    fn known_calls_hold_what_was_inserted_through_growth_and_packing() {
        let mut known = KnownCalls::default();
        known.grow(50, false);
        // Callers' sets grow in turns, so that sets move and the arena is packed.
        for round in 0..200u32 {
            for caller in 0..50u32 {
                known.insert(caller, round * 7 + caller);
            }
        }
        for caller in 0..50u32 {
            for round in 0..200u32 {
                assert!(known.contains(caller, round * 7 + caller));
                assert!(!known.contains(caller, round * 7 + caller + 1400 + 50));
            }
        }
        // Sets moved out of are never more than half the arena.
        assert!(2 * known.garbage <= known.arena.len());
        // Ids that no 16-bit slot holds, or no set, are held apart.
        known.insert(3, 70_000);
        known.insert(60, 4);
        assert!(known.contains(3, 70_000) && known.contains(60, 4));
        let mut edges: Vec<_> = known.edges().collect();
        edges.sort_unstable();
        assert_eq!(edges.len(), 50 * 200 + 2);
        assert!(edges.binary_search(&(3, 70_000)).is_ok());
        // A caller that gets a set takes its edges there.
        known.grow(61, false);
        assert!(known.wide.len() == 1 && known.contains(60, 4));
        known.clear();
        assert!(!known.contains(0, 0));
    }

    #[test]
    fn known_calls_take_back_what_was_inserted_since_kept() {
        let mut known = KnownCalls::default();
        known.grow(8, false);
        // Callees of one caller, many probing from the same slot.
        let kept: Vec<u32> = (0..40).map(|i| i * 64).collect();
        for &f in &kept {
            known.insert(1, f);
        }
        known.keep();
        let later: Vec<u32> = (0..40).map(|i| i * 64 + 32).collect();
        for &f in &later {
            known.insert(1, f);
        }
        known.insert(2, 70_000);
        known.forget();
        assert!(kept.iter().all(|&f| known.contains(1, f)));
        assert!(!later.iter().any(|&f| known.contains(1, f)));
        assert!(!known.contains(2, 70_000));
        assert_eq!(known.edges().count(), kept.len());
    }

    #[test]
    fn known_calls_move_into_the_matrix_and_out_with_what_was_inserted() {
        let mut known = KnownCalls::default();
        known.grow(100, true);
        assert_eq!(known.dim, 128);
        let kept: Vec<(u32, u32)> = (0..99).map(|i| (i, (i * 37 + 5) % 100)).collect();
        for &(caller, callee) in &kept {
            known.insert(caller, callee);
        }
        known.keep();
        known.insert(7, 70);
        // More frames: a wider matrix, then more than it holds (the sets), which
        // growing again keeps.
        for (frames, dim) in [(3000, 4096), (5000, 0), (5000, 0)] {
            known.grow(frames, true);
            assert_eq!(known.dim, dim);
            assert!(kept.iter().all(|&(c, e)| known.contains(c, e)));
            assert!(known.contains(7, 70) && !known.contains(70, 7));
            assert_eq!(known.edges().count(), kept.len() + 1);
        }
        known.insert(4500, 3);
        known.forget();
        assert!(!known.contains(7, 70) && !known.contains(4500, 3));
        let mut edges: Vec<_> = known.edges().collect();
        edges.sort_unstable();
        assert_eq!(edges, kept);

        let mut matrix = KnownCalls::default();
        matrix.grow(4096, true);
        matrix.insert(4095, 0);
        matrix.insert(0, 4095);
        matrix.insert(63, 64);
        let mut edges: Vec<_> = matrix.edges().collect();
        edges.sort_unstable();
        assert_eq!(edges, [(0, 4095), (63, 64), (4095, 0)]);
        matrix.clear();
        assert_eq!(matrix.edges().count(), 0);
        assert!(!matrix.contains(4095, 0));
    }
}
