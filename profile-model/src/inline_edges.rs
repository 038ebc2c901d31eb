//! pprof's `(inline)` marks are a property of call edges, not of frames: an edge from
//! caller to callee is inline only when no sample has it as a real call at its
//! rootmost place in the sample, and a frame is marked `(inline)` when all its
//! counted in-edges are inline, `(partial-inline)` when some are.
//!
//! Only an edge that some location holds inside it (the callee inlined into the
//! caller) can be both, and only if its callee is the outermost frame of some location
//! and its caller the innermost of some location: those few edges are kept here, with
//! what the samples said of them. A real call along one is pending until its sample
//! ends, and is dropped if the same edge shows up inlined nearer the root. An inlined
//! visit is known by its location (each location's kept edges are noted), a call by
//! its caller.

use crate::frames::FrameId;

/// What the occurrences of one edge said.
#[derive(Debug, Clone, Copy, Default)]
struct EdgeState {
    /// The sample whose real call along the edge is pending (0: none).
    pending: u32,
    /// Whether some sample has counted the edge.
    counted: bool,
    /// Whether some sample counted it as a real call: then the edge is not inline.
    called: bool,
    /// Whether the state before the first change since [`InlineEdges::keep`] is in
    /// the journal.
    journaled: bool,
}

/// The edges kept (see the module documentation), and how the samples counted
/// reached them.
#[derive(Debug, Default)]
pub(crate) struct InlineEdges {
    /// By callee frame id: its kept in-edges, as (caller, edge); few per callee,
    /// found by a short scan.
    into: Vec<Vec<(FrameId, u32)>>,
    edges: Vec<(FrameId, FrameId)>,
    states: Vec<EdgeState>,
    /// Edges with a pending real call, of the current sample.
    pending: Vec<u32>,
    /// Callees one of whose kept in-edges a sample has had as a real call, not yet
    /// told ([`InlineEdges::next_called`]).
    newly_called: Vec<FrameId>,

    /// States changed since [`InlineEdges::keep`], as they were before.
    journal: Vec<(u32, EdgeState)>,
}

impl InlineEdges {
    /// Keeps edge `caller → callee`: its id, and whether it is new.
    pub fn keep_edge(&mut self, caller: FrameId, callee: FrameId) -> (u32, bool) {
        let at = callee as usize;
        if self.into.len() <= at {
            self.into.resize_with(at + 1, Vec::new);
        }
        if let Some(e) = self.find(caller, callee) {
            return (e, false);
        }
        let e = self.edges.len() as u32;
        self.into[at].push((caller, e));
        self.edges.push((caller, callee));
        self.states.push(EdgeState::default());
        (e, true)
    }

    /// The callers of `callee`'s kept in-edges that no sample has had as a real call
    /// yet: the calls that may still change what is known.
    pub fn uncalled_callers(&self, callee: FrameId) -> impl Iterator<Item = FrameId> + '_ {
        let into = self
            .into
            .get(callee as usize)
            .map_or(&[][..], Vec::as_slice);
        (into.iter())
            .filter(|(_, e)| !self.states[*e as usize].called)
            .map(|(caller, _)| *caller)
    }

    /// The kept edge `caller → callee`, if it is one.
    pub fn find(&self, caller: FrameId, callee: FrameId) -> Option<u32> {
        let into = self.into.get(callee as usize)?;
        into.iter().find(|(c, _)| *c == caller).map(|(_, e)| *e)
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

    /// Notes a real call `caller → callee` in sample `mark`; false when the edge is
    /// not kept (it is then an ordinary call).
    pub fn call(&mut self, caller: FrameId, callee: FrameId, mark: u32) -> bool {
        let Some(e) = self.find(caller, callee) else {
            return false;
        };
        if !self.states[e as usize].called {
            self.change(e, |s| s.pending = mark);
            self.pending.push(e);
        }
        true
    }

    /// Whether some real call of the current sample is pending.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Notes an inlined visit along kept edge `e` in sample `mark`: the edge is
    /// counted, and a real call of it pending in this sample (nearer the leaf) is
    /// dropped.
    #[inline]
    pub fn inlined(&mut self, e: u32, mark: u32) {
        let s = self.states[e as usize];
        if s.pending == mark || !s.counted {
            self.change(e, |s| {
                if s.pending == mark {
                    s.pending = 0;
                }
                s.counted = true;
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
                    s.counted = true;
                });
                self.newly_called.push(self.edges[e as usize].1);
            }
        }
    }

    /// A callee one of whose kept in-edges some sample has had as a real call, not
    /// told before; `None` once all have been.
    pub fn next_called(&mut self) -> Option<FrameId> {
        self.newly_called.pop()
    }

    /// Ends counting: calls `mark(callee, inlined)` for every counted edge, inlined
    /// when no sample had it as a real call.
    pub fn finish(&mut self, mut mark: impl FnMut(FrameId, bool)) {
        self.end_sample();
        self.keep();
        for (e, s) in self.states.iter().enumerate() {
            if s.counted {
                mark(self.edges[e].1, !s.called);
            }
        }
    }

    /// Forgets every edge.
    pub fn clear(&mut self) {
        self.into.clear();
        self.edges.clear();
        self.states.clear();
        self.pending.clear();
        self.newly_called.clear();
        self.journal.clear();
    }

    /// Keeps the occurrences noted so far.
    pub fn keep(&mut self) {
        for (e, _) in self.journal.drain(..) {
            self.states[e as usize].journaled = false;
        }
    }

    /// Takes back the occurrences noted since [`InlineEdges::keep`].
    pub fn forget(&mut self) {
        self.pending.clear();
        self.newly_called.clear();
        while let Some((e, before)) = self.journal.pop() {
            self.states[e as usize] = before;
        }
    }
}
