//! The top table: flat (self) and cum (total) per frame, as `go tool pprof -top`.

use std::cmp::Reverse;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::inline_edges::InlineEdges;
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
    /// The ways of reaching frames noted since [`Counts::keep_reach`], as (frame, bit):
    /// a few per frame over a whole sum, which [`Counts::forget_new_reach`] takes back.
    new_reach: Vec<(FrameId, u8)>,
    /// The in-edges of the frames marked [`EDGES`], told apart.
    edges: InlineEdges,
    /// Per frame, while noting locations: where it sits in them (see
    /// [`Counts::note_locations`]), and the epoch of the profile noted.
    ends: Vec<u32>,
    epoch: u32,
}

/// The counts of one frame, together so that counting it touches one cache line
/// (24 bytes, as few as flat, cum and the stamp take).
#[derive(Debug, Clone, Copy)]
struct Cell {
    flat: i64,
    cum: i64,
    /// `stamp == mark` when the frame was already counted for the current sample.
    stamp: u32,
    /// Bits 0-15: the callers whose real calls of the frame leave the counting loop,
    /// a Bloom filter of [`caller_bit`]s ([`watch_of`]): every caller until a real
    /// call has reached the frame, then the callers of its kept in-edges (see
    /// [`InlineEdges`]) not yet known real calls, then none. One test per visit,
    /// without branches on which frames have kept in-edges (a coin toss for the
    /// branch predictor). Bits 24-31: how callers reach the frame ([`INLINED`],
    /// [`CALLED`]; along kept edges that is kept there, and noted here once a kept
    /// edge is a real call), and whether it has kept in-edges ([`EDGES`]).
    info: u32,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            flat: 0,
            cum: 0,
            stamp: 0,
            info: watch_of(0, std::iter::empty()),
        }
    }
}

impl Cell {
    /// How callers reach the frame (see [`Cell::info`]).
    fn reached(&self) -> u8 {
        (self.info >> 24) as u8
    }

    /// Sets how callers reach the frame; [`Cell::rewatch`] follows where that may
    /// change the watched callers.
    fn set_reached(&mut self, reached: u8) {
        self.info = (self.info & 0x00ff_ffff) | u32::from(reached) << 24;
    }

    /// Whether a real call by `caller` leaves the counting loop.
    #[inline(always)]
    fn watches(&self, caller: FrameId) -> bool {
        self.info & caller_bit(caller) != 0
    }

    /// Sets the watched callers after a change of how frame `f` is reached, whose
    /// kept in-edges `edges` holds.
    fn rewatch(&mut self, f: FrameId, edges: &InlineEdges) {
        let watch = watch_of(self.reached(), edges.uncalled_callers(f));
        self.info = (self.info & !0xffff) | watch;
    }
}

/// The frames of each location of the profile being counted, as the counting loop
/// reads them: one entry per location, the location's one frame id, or for a
/// location with none or several, [`SEVERAL_FRAMES`] plus where in `several` its
/// count `n`, its `n` frames (innermost first) and its `n - 1` kept edges follow (one
/// per pair of frames, [`NO_EDGE`] for a pair not kept). A location with several
/// frames then costs one look-up, in a table small enough to stay in cache.
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

    /// The frames and kept edges an entry of [`SEVERAL_FRAMES`] or more points at.
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

/// Reached through inlining.
const INLINED: u8 = 1;
/// Reached by a real call.
const CALLED: u8 = 2;
/// Has in-edges that may be inlined or real calls, told apart in [`InlineEdges`].
const EDGES: u8 = 4;
/// In [`LocationFrames`]: a pair of frames that is no kept edge.
const NO_EDGE: u32 = u32::MAX;

/// A caller's bit in [`Cell::info`]'s filter (one of 16, by a multiplicative hash).
#[inline(always)]
fn caller_bit(caller: FrameId) -> u32 {
    1 << (caller.wrapping_mul(0x9E37_79B9) >> 28)
}

/// The watched callers ([`Cell::info`], bits 0-15) of a frame reached as `reached`
/// says: every caller while no real call has reached it, else the callers of its kept
/// in-edges not yet known real calls (`uncalled`).
fn watch_of(reached: u8, uncalled: impl Iterator<Item = FrameId>) -> u32 {
    if reached & CALLED == 0 {
        0xffff
    } else {
        uncalled.fold(0, |watch, k| watch | caller_bit(k))
    }
}

/// Where a frame was reached in a sample: by `caller` in a way `how` (0: by nothing,
/// the root; or by itself, which as in pprof is no edge), in sample `mark`.
#[derive(Clone, Copy)]
struct Visit {
    caller: FrameId,
    how: u8,
    mark: u32,
}

/// Notes way `how` of reaching frame `f`, new for it, in `cell` and in `noted`; for a
/// visit along a kept edge, notes it there. Out of the counting loop, which takes this
/// path a few times per frame over a whole sum, and at visits of a frame with kept
/// in-edges by a caller it watches ([`Cell::watches`]).
#[cold]
#[inline(never)]
fn reach_first(
    cell: &mut Cell,
    f: FrameId,
    visit: Visit,
    noted: &mut Vec<(FrameId, u8)>,
    edges: &mut InlineEdges,
) {
    let how = visit.how;
    // As pprof: a frame calling itself is no edge.
    if how == 0 || visit.caller == f {
        return;
    }
    let reached = cell.reached();
    if reached & EDGES != 0
        && how == CALLED
        && (edges.call(visit.caller, f, visit.mark) || reached & how != 0)
    {
        return;
    }
    cell.set_reached(reached | how);
    noted.push((f, how));
    if how == CALLED {
        cell.rewatch(f, edges);
    }
}

impl Counts {
    /// Makes room for frame ids below `frames`.
    pub fn grow(&mut self, frames: usize) {
        if self.cells.len() < frames {
            self.cells.resize(frames, Cell::default());
        }
    }

    /// Counts one sample of weight `value` (not 0) whose locations' entries in
    /// `frames` ([`LocationFrames::entries`]) `stack` yields, leaf first, read as they
    /// are counted.
    #[inline]
    pub fn add(
        &mut self,
        value: i64,
        stack: &mut impl Iterator<Item = u32>,
        frames: &LocationFrames,
    ) {
        self.mark = match self.mark.checked_add(1) {
            Some(m) => m,
            None => {
                self.cells.iter_mut().for_each(|c| c.stamp = 0);
                self.edges.end_sample();
                1
            }
        };
        let (mark, cells, noted) = (self.mark, &mut self.cells[..], &mut self.new_reach);
        let edges = &mut self.edges;
        if edges.has_pending() {
            edges.end_sample();
            // A kept edge that is a real call makes its callee called, as it will be
            // once counting ends: calls by other callers then change nothing.
            while let Some(f) = edges.next_called() {
                let c = &mut cells[f as usize];
                if c.reached() & CALLED == 0 {
                    c.set_reached(c.reached() | CALLED);
                    noted.push((f, CALLED));
                }
                c.rewatch(f, edges);
            }
        }
        // A load, and a store only the first time a way of reaching the frame is seen
        // (or, for a frame with kept in-edges, at visits by what may be a kept caller,
        // until they can change nothing). `how` is a constant where this is called.
        let mut count = |cells: &mut [Cell], f: FrameId, caller: FrameId, how: u8, edge: u32| {
            let c = &mut cells[f as usize];
            if c.stamp != mark {
                c.stamp = mark;
                c.cum = c.cum.wrapping_add(value);
            }
            let first = match how {
                INLINED if edge != NO_EDGE => {
                    // Inlined along a kept edge: that edge says how it was reached.
                    edges.inlined(edge, mark);
                    return;
                }
                INLINED => c.reached() & INLINED == 0,
                CALLED => c.watches(caller),
                // The outermost frame: reached by nothing.
                _ => false,
            };
            if first {
                let visit = Visit { caller, how, mark };
                reach_first(c, f, visit, noted, edges);
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
            let (several, kept) = frames.several(entry);
            if let (Some(&first), Some(&last)) = (several.first(), several.last()) {
                let leaf = &mut cells[first as usize];
                leaf.flat = leaf.flat.wrapping_add(value);
                // The frames inlined into the outermost one, each reached by the next.
                for (pair, &edge) in several.windows(2).zip(kept) {
                    count(cells, pair[0], pair[1], INLINED, edge);
                }
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
                count(cells, callee, entry, CALLED, NO_EDGE);
                callee = entry;
                continue;
            }
            let (several, kept) = frames.several(entry);
            let (Some(&first), Some(&last)) = (several.first(), several.last()) else {
                continue;
            };
            count(cells, callee, first, CALLED, NO_EDGE);
            for (pair, &edge) in several.windows(2).zip(kept) {
                count(cells, pair[0], pair[1], INLINED, edge);
            }
            callee = last;
        }
        count(cells, callee, callee, 0, NO_EDGE);
    }

    /// Notes the frames of every location (each innermost first) in `into`, before
    /// any sample is counted. An edge inside a location (callee inlined into caller)
    /// may also be a real call where its callee is the outermost frame of some
    /// location and its caller the innermost of some location: such edges are kept,
    /// to be told apart ([`InlineEdges`]).
    pub fn note_locations<'f>(
        &mut self,
        locations: impl Iterator<Item = &'f [FrameId]> + Clone,
        into: &mut LocationFrames,
    ) {
        // Per frame: the profile's epoch times 4, plus bit 0 for an innermost frame and
        // bit 1 for an outermost one (of this profile when the epoch is this one's).
        self.epoch = self.epoch.wrapping_add(1);
        let epoch = self.epoch << 2;
        let ends = &mut self.ends;
        ends.resize(self.cells.len(), 0);
        // Without branches: which frames a profile met before is a coin toss.
        let mut mark = |f: FrameId, bit: u32| {
            let e = &mut ends[f as usize];
            let same = u32::from(*e & !3 == epoch);
            *e = (*e & same.wrapping_neg()) | epoch | bit;
        };
        for frames in locations.clone() {
            if let (Some(first), Some(last)) = (frames.first(), frames.last()) {
                mark(*first, 1);
                mark(*last, 2);
            }
        }
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
                let either =
                    ends[callee as usize] == epoch | 2 || ends[callee as usize] == epoch | 3;
                let either = either && ends[caller as usize] & !2 == epoch | 1;
                let (edge, new) = match callee != caller && either {
                    true => self.edges.keep_edge(caller, callee),
                    false => (NO_EDGE, false),
                };
                into.several.push(edge);
                if new {
                    let c = &mut self.cells[callee as usize];
                    c.set_reached(c.reached() | EDGES);
                    c.rewatch(callee, &self.edges);
                }
            }
        }
    }

    /// Ends counting: how frames are reached along their kept edges.
    fn settle_edges(&mut self) {
        let cells = &mut self.cells;
        self.edges.finish(|callee, inlined| {
            let c = &mut cells[callee as usize];
            c.set_reached(c.reached() | if inlined { INLINED } else { CALLED });
        });
        // No rewatch: bits only added leave each filter wider than it need be, which
        // costs only slow-path visits, and the rows are read and cleared next.
    }

    /// The row of frame `f`.
    pub fn row(&self, f: FrameId) -> TopRow {
        let c = self.cells[f as usize];
        TopRow {
            frame: f,
            flat: c.flat,
            cum: c.cum,
            reached: Reached {
                inlined: c.reached() & INLINED != 0,
                called: c.reached() & CALLED != 0,
            },
        }
    }

    /// The rows of the frames below `frames` with a flat or cum value, by frame id,
    /// once counting has ended. As pprof, a frame whose values cancel out (in a
    /// difference) has no row.
    pub fn rows(&mut self, frames: usize) -> impl Iterator<Item = TopRow> + '_ {
        self.settle_edges();
        (0..frames.min(self.cells.len()) as FrameId)
            .map(|f| self.row(f))
            .filter(|r| r.flat != 0 || r.cum != 0)
    }

    /// Forgets the counts of the frames below `frames` (every frame counted since the
    /// last clear).
    pub fn clear(&mut self, frames: usize) {
        let n = frames.min(self.cells.len());
        self.cells[..n].fill(Cell::default());
        self.new_reach.clear();
        self.edges.clear();
    }

    /// Keeps the ways of reaching frames noted so far.
    pub fn keep_reach(&mut self) {
        self.new_reach.clear();
        self.edges.keep();
    }

    /// Takes back the ways of reaching frames noted since [`Counts::keep_reach`] (of
    /// samples whose values were taken back by counting them again negated).
    pub fn forget_new_reach(&mut self) {
        self.edges.forget();
        for (f, how) in self.new_reach.drain(..) {
            if let Some(c) = self.cells.get_mut(f as usize) {
                c.set_reached(c.reached() & !how);
                c.rewatch(f, &self.edges);
            }
        }
    }
}

/// Computes the top table of column `sample_type` over the samples that `filter` keeps.
pub fn top(
    profile: &Profile,
    frames: &FrameTable,
    filter: &SampleFilter,
    sample_type: usize,
) -> Top {
    let mut counts = Counts::default();
    counts.grow(frames.len());
    let locations = (0..profile.locations.len()).map(|l| frames.of_location(l as LocationId));
    let mut location_frames = LocationFrames::default();
    counts.note_locations(locations, &mut location_frames);
    let mut kept = 0i64;
    let Some(values) = profile.samples.values.get(sample_type) else {
        return Top::default();
    };
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
        counts.add(
            value,
            &mut stack.map(|&l| location_frames.entry(l)),
            &location_frames,
        );
    }
    let (total, base_total) = totals(profile, sample_type);
    let mut rows: Vec<TopRow> = counts.rows(frames.len()).collect();
    sort_pprof(&mut rows, frames);
    Top {
        rows,
        total,
        base_total,
        kept,
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
