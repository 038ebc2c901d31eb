//! The top table: flat (self) and cum (total) per frame, as `go tool pprof -top`.

use std::cmp::Reverse;

use crate::call_edges::CallEdges;
use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::merge::BASE_LABEL;
use crate::profile::{LocationId, Profile};

/// One row of the top table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopRow {
    /// The frame.
    pub frame: FrameId,
    /// Value of samples whose leaf is this frame (pprof's flat).
    pub flat: i64,
    /// Value of samples with this frame anywhere on the stack, counted once per sample
    /// even under recursion (pprof's cum).
    pub cum: i64,
    /// How callers reach this frame, for pprof's `(inline)` marks.
    pub reached: Reached,
}

/// How callers reach a frame: through inlining, through real calls, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reached {
    /// Some caller inlined it.
    pub inlined: bool,
    /// Some caller called it.
    pub called: bool,
}

impl Reached {
    /// Both ways of reaching, of two sets of samples together.
    pub fn or(self, other: Reached) -> Reached {
        Reached {
            inlined: self.inlined || other.inlined,
            called: self.called || other.called,
        }
    }

    /// How an in-edge counted `inlined` and `called` ([`TopEdge`]) reaches its
    /// callee: an inline edge (inlined, and never a real call at its rootmost place)
    /// through inlining, any other through calls.
    pub fn of_edge(inlined: bool, called: bool) -> Reached {
        Reached {
            inlined: inlined && !called,
            called,
        }
    }

    /// The mark pprof appends to the name.
    pub fn mark(self) -> InlineMark {
        match (self.inlined, self.called) {
            (true, false) => InlineMark::Inline,
            (true, true) => InlineMark::Partial,
            _ => InlineMark::None,
        }
    }
}

/// Whether a frame is reached through inlining, as pprof marks names in `-top`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InlineMark {
    /// Called normally (or the outermost frame).
    #[default]
    None,
    /// Always inlined into its callers: `(inline)`.
    Inline,
    /// Inlined into some callers, called by others: `(partial-inline)`.
    Partial,
}

impl InlineMark {
    /// The suffix pprof appends to the name, with its leading space, or `""`.
    pub fn suffix(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Inline => " (inline)",
            Self::Partial => " (partial-inline)",
        }
    }
}

/// A call edge the samples counted: what a sum of top tables needs to mark frames as
/// pprof marks their merge ([`crate::topsum::TopSum`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopEdge {
    /// The calling frame.
    pub caller: FrameId,
    /// The frame called, or inlined into the caller.
    pub callee: FrameId,
    /// Some sample had the callee inlined into the caller.
    pub inlined: bool,
    /// Some sample had the edge as a real call at its rootmost place: the edge is not
    /// inline.
    pub called: bool,
}

/// The top table of one sample type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Top {
    /// Rows sorted as pprof sorts them: |flat| descending, then name, then |cum| descending.
    pub rows: Vec<TopRow>,
    /// The 100% of the percentages, as pprof computes it: the sum of |value| over all
    /// samples, filtered or not; for a difference (samples labelled
    /// [`crate::merge::BASE_LABEL`]), over the base samples only.
    pub total: i64,
    /// Sum of the column over the samples the filters keep.
    pub kept: i64,
    /// Sum of |value| over the samples of a `-diff_base` profile; 0 when there are none.
    pub base_total: i64,
    /// Every call edge the samples kept counted (one may come twice: what the two say
    /// together is the edge's); `None` when the table was made for one profile alone
    /// ([`top`] without `edges`), whose rows' marks are then final.
    pub edges: Option<Vec<TopEdge>>,
}

/// Flat, cum and how-reached per frame, counted sample by sample: the one loop behind
/// every top table (of one profile, and of many files read from the wire).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Per frame id, everything one visit of the frame reads and writes. A frame not
    /// counted since the last [`Counts::clear`] has a zero cell, so the rows are found
    /// by looking at every cell, and the counting loop keeps no list of frames seen
    /// (whose first-visit branch it mispredicted about once a frame per profile).
    cells: Vec<Cell>,
    mark: u32,
    /// Every call edge counted, with how.
    edges: CallEdges,
    /// How real calls are noted.
    calls: Calls,
    /// Per frame, how callers reach it, worked out from the edges when the rows are
    /// read.
    reached: Vec<Reached>,
}

/// The counts of one frame, together so that counting it touches one cache line.
#[derive(Debug, Clone, Copy)]
struct Cell {
    flat: i64,
    cum: i64,
    /// `stamp == mark` when the frame was already counted for the current sample.
    stamp: u32,
    /// One profile alone: the frame's one caller along an edge inside a location
    /// ([`NO_CALLER`] for none; for a few, [`SEVERAL_CALLERS`] plus where
    /// [`Calls::inliners`] lists them; [`MANY_CALLERS`] for more), as a call along any
    /// other edge only marks the frame called.
    caller: FrameId,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            flat: 0,
            cum: 0,
            stamp: 0,
            caller: NO_CALLER,
        }
    }
}

/// In [`Cell::caller`]: no caller (frame ids stay below 2^31).
const NO_CALLER: FrameId = FrameId::MAX;
/// In [`Cell::caller`], one profile alone: the frame is inlined into more callers
/// than [`Calls::inliners`] lists for one frame.
const MANY_CALLERS: FrameId = FrameId::MAX - 1;
/// In [`Cell::caller`], one profile alone: from here up (below [`MANY_CALLERS`]), the
/// frame is inlined into the few callers listed in [`Calls::inliners`] at the
/// difference.
const SEVERAL_CALLERS: FrameId = 1 << 31;
/// The most callers [`Calls::inliners`] lists for one frame: a call is checked
/// against each.
const LISTED_CALLERS: usize = 8;

/// The frames of each location of the profile being counted, as the counting loop
/// reads them: one entry per location, the location's one frame id, or for a
/// location with none or several, [`SEVERAL_FRAMES`] plus where in `several` its
/// count `n`, its `n` frames (innermost first) and its `n - 1` edges follow (one per
/// pair of frames, [`NO_EDGE`] for a frame inlined into itself). A location with
/// several frames then costs one look-up, in a table small enough to stay in cache.
#[derive(Debug, Default)]
pub(crate) struct LocationFrames {
    entries: Vec<u32>,
    several: Vec<u32>,
}

impl LocationFrames {
    /// Per location id, its entry, to be handed to [`Counts::add`].
    pub fn entries(&self) -> &[u32] {
        &self.entries
    }

    /// The entry of location `loc`: a location not in the profile has no frames.
    pub fn entry(&self, loc: LocationId) -> u32 {
        self.entries.get(loc as usize).copied().unwrap_or(NO_FRAMES)
    }

    /// The frames and edges an entry of [`SEVERAL_FRAMES`] or more points at.
    fn several(&self, entry: u32) -> (&[FrameId], &[u32]) {
        let at = (entry - SEVERAL_FRAMES) as usize;
        let n = self.several.get(at).map_or(0, |&n| n as usize);
        let frames = self.several.get(at + 1..at + 1 + n).unwrap_or(&[]);
        let edges = (self.several).get(at + 1 + n..at + 2 * n).unwrap_or(&[]);
        (frames, edges)
    }
}

/// Entries of [`LocationFrames`] from here up point into its `several`; frame ids
/// below it are a location's one frame.
const SEVERAL_FRAMES: u32 = 1 << 31;

/// The entry of a location without frames: `several` starts with a count of 0.
const NO_FRAMES: u32 = SEVERAL_FRAMES;

/// In [`LocationFrames`]: a frame inlined into itself, which as in pprof is no edge.
const NO_EDGE: u32 = u32::MAX;

/// How the counting loop notes real calls.
#[derive(Debug)]
struct Calls {
    /// Whether every call edge is kept in [`CallEdges`] (to sum profiles); else only
    /// the edges inside a location (one profile alone), a call along any other
    /// marking its callee in `called`.
    complete: bool,
    /// Per frame, when not `complete`: whether a call along an edge not kept reached
    /// it.
    called: Vec<bool>,
    /// When not `complete`: the callers of frames inlined into a few
    /// ([`SEVERAL_CALLERS`]), side by side, the slots not used [`NO_CALLER`]; the
    /// first lists none, and is what [`Calls::inlines`] looks at for other frames.
    inliners: Vec<[FrameId; LISTED_CALLERS]>,
}

impl Default for Calls {
    fn default() -> Self {
        Self {
            complete: true,
            called: Vec::new(),
            inliners: vec![[NO_CALLER; LISTED_CALLERS]],
        }
    }
}

impl Calls {
    /// Whether the edge `caller → callee`, along which sample `mark` made a real call,
    /// is known called, now or before (telling `edges` of the call when it was not).
    #[inline(always)]
    fn known(
        &mut self,
        edges: &mut CallEdges,
        caller: FrameId,
        callee: FrameId,
        mark: u32,
    ) -> bool {
        edges.seen_called(caller, callee) || self.settle(edges, caller, callee, mark)
    }

    /// Whether `caller` inlines a frame whose [`Cell::caller`] is `inlined_by` (one
    /// profile alone): the edge from it lies inside a location.
    #[inline(always)]
    fn inlines(&self, inlined_by: FrameId, caller: FrameId) -> bool {
        // With no branch: a frame inlined into none or one caller looks at the empty
        // list first in `inliners`, so that the few frames inlined into several, mixed
        // with the others as the samples mix them, cost no guess.
        let listed = inlined_by.wrapping_sub(SEVERAL_CALLERS) < MANY_CALLERS - SEVERAL_CALLERS;
        let at = if listed {
            inlined_by - SEVERAL_CALLERS
        } else {
            0
        };
        let in_list = (self.inliners.get(at as usize))
            .is_some_and(|callers| callers.iter().fold(false, |any, &c| any | (c == caller)));
        (inlined_by == caller) | (inlined_by == MANY_CALLERS) | in_list
    }

    /// Marks `callee` called along an edge inside no location (one profile alone).
    #[inline(always)]
    fn mark_called(&mut self, callee: FrameId) {
        if let Some(called) = self.called.get_mut(callee as usize) {
            *called = true;
        }
    }

    /// [`Calls::known`] along an edge not seen called in one look. As pprof, a frame
    /// calling itself is no edge: known, here on the cold path, as recursion is rare.
    #[cold]
    #[inline(never)]
    fn settle(
        &mut self,
        edges: &mut CallEdges,
        caller: FrameId,
        callee: FrameId,
        mark: u32,
    ) -> bool {
        if caller == callee || edges.known_called(caller, callee) {
            return true;
        }
        let called = edges.call(caller, callee, mark).unwrap_or_else(|| {
            if !self.complete {
                self.mark_called(callee);
            }
            true
        });
        if called {
            edges.count_call(caller, callee);
        }
        called
    }
}

/// Notes a real call from `caller` to `callee` in sample `mark`, unless the edge is
/// known called. `COMPLETE` is [`Calls::complete`]; else (one profile alone) a call
/// along an edge inside no location ([`Cell::caller`]) only marks its callee.
#[inline(always)]
fn call<const COMPLETE: bool>(
    cell: &Cell,
    calls: &mut Calls,
    edges: &mut CallEdges,
    caller: FrameId,
    callee: FrameId,
    mark: u32,
) {
    // Almost every call of one profile alone is along an edge inside no location:
    // the callee is marked called, with no branch to guess.
    if !COMPLETE && !calls.inlines(cell.caller, caller) && caller != callee {
        calls.mark_called(callee);
    } else {
        calls.known(edges, caller, callee, mark);
    }
}

impl Counts {
    /// Counts of one profile alone, which keep only the call edges its marks need
    /// ([`Counts::default`] keeps every one, to sum profiles).
    pub fn of_one_profile() -> Self {
        let mut counts = Self::default();
        counts.calls.complete = false;
        counts
    }

    /// Makes room for frame ids below `frames`.
    pub fn grow(&mut self, frames: usize) {
        if self.cells.len() < frames {
            self.cells.resize(frames, Cell::default());
        }
        self.edges.grow(frames);
        if !self.calls.complete && self.calls.called.len() < frames {
            self.calls.called.resize(frames, false);
        }
    }

    /// Whether every call edge is kept ([`Calls::complete`]): [`Counts::add`]'s
    /// `COMPLETE`.
    pub fn keeps_every_edge(&self) -> bool {
        self.calls.complete
    }

    /// Counts one sample of weight `value` (not 0) whose locations' entries in
    /// `frames` ([`LocationFrames::entries`]) `stack` yields, leaf first, read as they
    /// are counted. `COMPLETE` is [`Counts::keeps_every_edge`]: a caller picks its
    /// loop once, not per sample.
    #[inline(always)]
    pub fn add<const COMPLETE: bool>(
        &mut self,
        value: i64,
        stack: &mut impl Iterator<Item = u32>,
        frames: &LocationFrames,
    ) {
        debug_assert_eq!(COMPLETE, self.keeps_every_edge());
        self.mark = match self.mark.checked_add(1) {
            Some(m) => m,
            None => {
                self.cells.iter_mut().for_each(|c| c.stamp = 0);
                self.edges.end_sample();
                1
            }
        };
        let (mark, cells) = (self.mark, &mut self.cells[..]);
        let (edges, calls) = (&mut self.edges, &mut self.calls);
        if edges.has_pending() {
            edges.end_sample();
        }
        // A load, and a store of the cum the first time the frame is met in the
        // sample.
        let count = |cells: &mut [Cell], f: FrameId| {
            let c = &mut cells[f as usize];
            if c.stamp != mark {
                c.stamp = mark;
                c.cum = c.cum.wrapping_add(value);
            }
        };
        // The frames inlined into a location's outermost one, each reached by the
        // next.
        let inlined = |cells: &mut [Cell], edges: &mut CallEdges, several: &[u32], ids: &[u32]| {
            for (pair, &edge) in several.windows(2).zip(ids) {
                count(cells, pair[0]);
                if edge != NO_EDGE {
                    edges.inlined(edge, mark);
                }
            }
        };
        // The leaf location (the first with frames) is taken out of the loop: its
        // innermost frame gets the flat value, and the loop needs no flag for it.
        let mut callee = loop {
            let Some(entry) = stack.next() else {
                return;
            };
            if entry < SEVERAL_FRAMES {
                let leaf = &mut cells[entry as usize];
                leaf.flat = leaf.flat.wrapping_add(value);
                break entry;
            }
            let (several, ids) = frames.several(entry);
            if let (Some(&first), Some(&last)) = (several.first(), several.last()) {
                let leaf = &mut cells[first as usize];
                leaf.flat = leaf.flat.wrapping_add(value);
                inlined(cells, edges, several, ids);
                break last;
            }
        };
        // `callee`, the last frame of the previous location with frames, is counted
        // once the next location with frames shows how it is reached: called by that
        // location's innermost frame, or by nothing (the outermost frame).
        for entry in stack {
            // Most locations have one frame, which is their entry: the loop then holds
            // few enough values to keep them all in registers.
            if entry < SEVERAL_FRAMES {
                count(cells, callee);
                call::<COMPLETE>(&cells[callee as usize], calls, edges, entry, callee, mark);
                callee = entry;
                continue;
            }
            let (several, ids) = frames.several(entry);
            let (Some(&first), Some(&last)) = (several.first(), several.last()) else {
                continue;
            };
            count(cells, callee);
            call::<COMPLETE>(&cells[callee as usize], calls, edges, first, callee, mark);
            inlined(cells, edges, several, ids);
            callee = last;
        }
        count(cells, callee);
    }

    /// Notes the frames of every location (each innermost first) in `into`, before
    /// any sample of the profile is counted; each pair of frames inside a location is
    /// an edge (the callee inlined into the caller).
    pub fn note_locations<'f>(
        &mut self,
        locations: impl Iterator<Item = &'f [FrameId]>,
        into: &mut LocationFrames,
    ) {
        self.edges.begin_profile();
        into.entries.clear();
        // Entry NO_FRAMES: a count of 0.
        into.several.clear();
        into.several.push(0);
        for frames in locations {
            if let [one] = frames
                && *one < SEVERAL_FRAMES
            {
                into.entries.push(*one);
                continue;
            }
            if frames.is_empty() {
                into.entries.push(NO_FRAMES);
                continue;
            }
            into.entries
                .push(SEVERAL_FRAMES + into.several.len() as u32);
            into.several.push(frames.len() as u32);
            into.several.extend_from_slice(frames);
            for pair in frames.windows(2) {
                let (callee, caller) = (pair[0], pair[1]);
                into.several.push(match callee != caller {
                    true => self.edges.inside(caller, callee),
                    false => NO_EDGE,
                });
                if !self.calls.complete
                    && callee != caller
                    && let Some(cell) = self.cells.get_mut(callee as usize)
                {
                    let inliners = &mut self.calls.inliners;
                    cell.caller = match cell.caller {
                        NO_CALLER => caller,
                        MANY_CALLERS => MANY_CALLERS,
                        one if one == caller => caller,
                        several if several >= SEVERAL_CALLERS => {
                            let i = (several - SEVERAL_CALLERS) as usize;
                            let listed = inliners.get_mut(i).map(|listed| {
                                listed.contains(&caller)
                                    || (listed.iter_mut().find(|c| **c == NO_CALLER))
                                        .map(|free| *free = caller)
                                        .is_some()
                            });
                            match listed {
                                Some(true) => several,
                                _ => MANY_CALLERS,
                            }
                        }
                        one => {
                            let mut listed = [NO_CALLER; LISTED_CALLERS];
                            listed[..2].copy_from_slice(&[one, caller]);
                            inliners.push(listed);
                            SEVERAL_CALLERS + (inliners.len() - 1) as FrameId
                        }
                    };
                }
            }
        }
    }

    /// Ends counting: the last sample's edges are noted.
    fn end_counting(&mut self) {
        self.edges.end_sample();
        self.edges.keep();
    }

    /// Ends counting: how each frame is reached, from its in-edges.
    fn settle_edges(&mut self, frames: usize) {
        self.end_counting();
        self.reached.clear();
        self.reached.resize(frames, Reached::default());
        for (r, &called) in self.reached.iter_mut().zip(&self.calls.called) {
            r.called = called;
        }
        // One profile alone: every callee of a call along an edge outside locations
        // is marked in `calls.called` already.
        let called = (self.calls.complete).then(|| self.edges.counted_called());
        for e in self
            .edges
            .counted_inside()
            .chain(called.into_iter().flatten())
        {
            if let Some(r) = self.reached.get_mut(e.callee as usize) {
                *r = r.or(Reached::of_edge(e.inlined, e.called));
            }
        }
    }

    /// The rows of the frames below `frames` with a flat or cum value, by frame id,
    /// once counting has ended ([`counted`]).
    pub fn rows(&mut self, frames: usize) -> impl Iterator<Item = TopRow> + '_ {
        let n = frames.min(self.cells.len());
        self.settle_edges(n);
        let reached = &self.reached;
        counted(&self.cells[..n]).map(|(frame, flat, cum)| TopRow {
            frame,
            flat,
            cum,
            reached: reached[frame as usize],
        })
    }

    /// (frame, flat, cum) of the frames below `frames` with a flat or cum value, once
    /// counting has ended: [`Counts::rows`] without how each frame is reached, for a
    /// sum that works it out from the [`Counts::edges`] of all its profiles.
    pub fn values(&mut self, frames: usize) -> impl Iterator<Item = (FrameId, i64, i64)> + '_ {
        let n = frames.min(self.cells.len());
        self.end_counting();
        counted(&self.cells[..n])
    }

    /// Every call edge counted, once the rows or values were read ([`Counts::rows`],
    /// [`Counts::values`]).
    pub fn edges(&self) -> impl Iterator<Item = TopEdge> + '_ {
        self.edges.counted()
    }

    /// Forgets the counts of the frames below `frames` (every frame counted since the
    /// last clear), and every edge.
    pub fn clear(&mut self, frames: usize) {
        let n = frames.min(self.cells.len());
        self.cells[..n].fill(Cell::default());
        self.calls.called.fill(false);
        self.edges.clear();
    }

    /// Keeps the edges noted so far.
    pub fn keep_edges(&mut self) {
        self.edges.keep();
    }

    /// Takes back the edges noted since [`Counts::keep_edges`] (of samples whose
    /// values were taken back by counting them again negated).
    pub fn forget_new_edges(&mut self) {
        self.edges.forget();
    }
}

/// (frame, flat, cum) of each cell with a flat or cum value. As pprof, a frame whose
/// values cancel out (in a difference) has none.
fn counted(cells: &[Cell]) -> impl Iterator<Item = (FrameId, i64, i64)> + '_ {
    (cells.iter().enumerate())
        .filter(|(_, c)| c.flat != 0 || c.cum != 0)
        .map(|(f, c)| (f as FrameId, c.flat, c.cum))
}

/// Counts into `counts` every sample of `profile` that `filter` keeps, of weight
/// `values[i]`, through `frames`; returns the kept samples' total.
fn count_samples<const COMPLETE: bool>(
    counts: &mut Counts,
    (profile, filter, values, frames): (&Profile, &SampleFilter, &[i64], &LocationFrames),
) -> i64 {
    let mut kept = 0i64;
    for (i, &value) in values.iter().enumerate() {
        if !filter.keeps(profile, i) {
            continue;
        }
        kept = kept.wrapping_add(value);
        if value == 0 {
            // As pprof: a sample that weighs nothing adds no row.
            continue;
        }
        let stack = profile.samples.stack(i).iter();
        counts.add::<COMPLETE>(value, &mut stack.map(|&l| frames.entry(l)), frames);
    }
    kept
}

/// Computes the top table of column `sample_type` over the samples that `filter` keeps;
/// with every call edge counted when `edges` (to be summed with other profiles',
/// [`crate::topsum::TopSum`]).
pub fn top(
    profile: &Profile,
    frames: &FrameTable,
    filter: &SampleFilter,
    sample_type: usize,
    edges: bool,
) -> Top {
    let mut counts = if edges {
        Counts::default()
    } else {
        Counts::of_one_profile()
    };
    counts.grow(frames.len());
    let locations = (0..profile.locations.len()).map(|l| frames.of_location(l as LocationId));
    let mut location_frames = LocationFrames::default();
    counts.note_locations(locations, &mut location_frames);
    let Some(values) = profile.samples.values.get(sample_type) else {
        return Top::default();
    };
    let counting = (profile, filter, values.as_slice(), &location_frames);
    let kept = match counts.keeps_every_edge() {
        true => count_samples::<true>(&mut counts, counting),
        false => count_samples::<false>(&mut counts, counting),
    };
    let (total, base_total) = totals(profile, sample_type);
    let mut rows: Vec<TopRow> = counts.rows(frames.len()).collect();
    sort_pprof(&mut rows, frames);
    Top {
        rows,
        total,
        base_total,
        kept,
        edges: edges.then(|| counts.edges().collect()),
    }
}

/// The 100% of a profile's percentages and its `-diff_base` part, as pprof computes
/// them: the sum of absolute values (equal samples were merged when the profile was
/// decoded, as pprof merges them); the base's part alone where there is one.
pub fn totals(profile: &Profile, sample_type: usize) -> (i64, i64) {
    let Some(values) = profile.samples.values.get(sample_type) else {
        return (0, 0);
    };
    let is_base = base_label_sets(profile);
    let (mut total, mut base_total) = (0i64, 0i64);
    for (v, set) in values.iter().zip(&profile.samples.label_set) {
        total = total.wrapping_add(v.wrapping_abs());
        if is_base[*set as usize] {
            base_total = base_total.wrapping_add(v.wrapping_abs());
        }
    }
    (if base_total > 0 { base_total } else { total }, base_total)
}

/// Which label sets mark the samples of a `-diff_base` profile.
fn base_label_sets(profile: &Profile) -> Vec<bool> {
    profile
        .label_sets
        .iter()
        .map(|set| {
            set.iter()
                .any(|l| profile.str(l.key) == BASE_LABEL && profile.str(l.str) == "true")
        })
        .collect()
}

/// Sorts rows as `go tool pprof -top` does.
pub fn sort_pprof(rows: &mut [TopRow], frames: &FrameTable) {
    let key = |r: &TopRow| {
        let frame = frames.get(r.frame);
        pprof_key(r.flat, &frame.name, r.cum, frames.key(r.frame))
    };
    rows.sort_by(|a, b| key(a).cmp(&key(b)));
}

/// pprof's row order: |flat| descending, then name, then |cum| descending, then the
/// frame's key ([`crate::names::node_key`]).
pub(crate) fn pprof_key<'a>(
    flat: i64,
    name: &'a str,
    cum: i64,
    key: &'a str,
) -> (Reverse<u64>, &'a str, Reverse<u64>, &'a str) {
    (
        Reverse(flat.unsigned_abs()),
        name,
        Reverse(cum.unsigned_abs()),
        key,
    )
}
