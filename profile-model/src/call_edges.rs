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

use rustc_hash::FxHashMap;

use crate::frames::FrameId;
use crate::known_calls::{KnownCalls, key};
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

impl CallEdges {
    /// Makes room for frame ids below `frames`.
    pub fn grow(&mut self, frames: usize) {
        self.called.grow(frames);
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

    /// Whether a real call along edge `caller → callee` counted, found in one look
    /// that answers for nearly every such edge: `false` when none did, or when one
    /// look does not tell ([`CallEdges::known_called`]).
    #[inline(always)]
    pub fn seen_called(&self, caller: FrameId, callee: FrameId) -> bool {
        self.called.at_home(caller, callee)
    }

    /// Whether a real call along edge `caller → callee` counted: then later calls
    /// along it say nothing new.
    pub fn known_called(&self, caller: FrameId, callee: FrameId) -> bool {
        self.called.contains(caller, callee)
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
