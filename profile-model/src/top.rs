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
    /// Per location of the profile being counted: `(start, end)` into `location_edges`,
    /// its kept edges, one per pair of its frames ([`NO_EDGE`] for a pair not kept);
    /// empty for a location with none.
    location_spans: Vec<(u32, u32)>,
    location_edges: Vec<u32>,
    /// Per frame, while noting locations: where it sits in them (see
    /// [`Counts::note_locations`]), and the epoch of the profile noted.
    ends: Vec<u32>,
    epoch: u32,
}

/// The counts of one frame, together so that counting it touches one cache line.
#[derive(Debug, Default, Clone, Copy)]
struct Cell {
    flat: i64,
    cum: i64,
    /// `stamp == mark` when the frame was already counted for the current sample.
    stamp: u32,
    /// How callers reach the frame ([`INLINED`], [`CALLED`]; along kept edges, see
    /// [`InlineEdges`], that is kept there), and whether it has kept in-edges
    /// ([`EDGES`]).
    reached: u8,
    /// With [`EDGES`]: a filter of its kept callers ([`may_keep`]), so that most
    /// visits by other callers are told apart without leaving the counting loop.
    kept_callers: u16,
}

/// In a table of each location's one frame ([`single_frame`]): a location with no
/// frame or with several, whose frames are to be looked up.
pub(crate) const MANY_FRAMES: FrameId = FrameId::MAX;

/// Reached through inlining.
const INLINED: u8 = 1;
/// Reached by a real call.
const CALLED: u8 = 2;
/// Has in-edges that may be inlined or real calls, told apart in [`InlineEdges`].
const EDGES: u8 = 4;
/// With [`EDGES`] and one kept caller: that edge has been a real call, so no visit
/// along it changes it.
const ALL_CALLED: u8 = 16;

/// [`Cell::kept_callers`] of a frame with several kept callers: a 15-bit Bloom
/// filter of them ([`caller_bit`]); with one, its 15-bit [`caller_tag`].
const SEVERAL: u16 = 0x8000;

/// In [`Counts::location_edges`]: a pair of frames that is no kept edge.
const NO_EDGE: u32 = u32::MAX;

/// A short tag of a frame's one kept caller.
fn caller_tag(caller: FrameId) -> u16 {
    (caller ^ (caller >> 15)) as u16 & 0x7fff
}

/// A caller's bit in the filter of a frame with several kept callers.
fn caller_bit(caller: FrameId) -> u16 {
    1 << ((caller.wrapping_mul(0x9E37_79B9) >> 28) % 15)
}

/// Whether `caller` may be one of the kept callers that `filter` holds (never false
/// for one that is).
fn may_keep(filter: u16, caller: FrameId) -> bool {
    if filter & SEVERAL == 0 {
        filter == caller_tag(caller)
    } else {
        filter & caller_bit(caller) != 0
    }
}

/// A location's one frame, or [`MANY_FRAMES`], from its frames.
pub(crate) fn single_frame(frames: &[FrameId]) -> FrameId {
    match frames {
        [one] => *one,
        _ => MANY_FRAMES,
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
/// path a few times per frame over a whole sum, and at every visit of a frame with
/// kept in-edges by a caller with the tag of a kept one.
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
    if cell.reached & EDGES != 0
        && how == CALLED
        && (edges.call(visit.caller, f, visit.mark) || cell.reached & how != 0)
    {
        return;
    }
    cell.reached |= how;
    noted.push((f, how));
}

impl Counts {
    /// Makes room for frame ids below `frames`.
    pub fn grow(&mut self, frames: usize) {
        if self.cells.len() < frames {
            self.cells.resize(frames, Cell::default());
        }
    }

    /// Counts one sample of weight `value` (not 0) whose locations `stack` yields
    /// (leaf first, read as they are counted), each with its one frame or
    /// [`MANY_FRAMES`] (see [`Counts::single_frame`]), whose frames are then
    /// `frames_of(location)` (innermost first).
    #[inline]
    pub fn add<'f>(
        &mut self,
        value: i64,
        stack: &mut impl Iterator<Item = (LocationId, FrameId)>,
        frames_of: impl Fn(LocationId) -> &'f [FrameId],
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
            for f in edges.take_all_called() {
                let c = &mut cells[f as usize];
                if c.reached & ALL_CALLED == 0 && c.kept_callers & SEVERAL == 0 {
                    c.reached |= ALL_CALLED;
                    noted.push((f, ALL_CALLED));
                }
            }
        }
        // A load, and a store only the first time a way of reaching the frame is seen
        // (or, for a frame with kept in-edges, at visits by what may be a kept caller,
        // until they can change nothing).
        let spans = &self.location_spans;
        let kept_edges = &self.location_edges;
        // The kept edges of location `loc`'s pairs of frames (none for most).
        let kept_in = |loc: LocationId| {
            spans
                .get(loc as usize)
                .map_or(&[][..], |&(a, b)| &kept_edges[a as usize..b as usize])
        };
        let mut count = |cells: &mut [Cell], f: FrameId, caller: FrameId, how: u8, edge: u32| {
            let c = &mut cells[f as usize];
            if c.stamp != mark {
                c.stamp = mark;
                c.cum = c.cum.wrapping_add(value);
            }
            if edge != NO_EDGE {
                // Inlined along a kept edge: that edge says how it was reached.
                edges.inlined(edge, mark);
                return;
            }
            // A frame calling itself, no edge in pprof, is told apart out of the loop.
            // A call by what may be a kept caller, unless its one kept edge is already
            // known a real call.
            let kept = how == CALLED
                && c.reached & (EDGES | ALL_CALLED) == EDGES
                && may_keep(c.kept_callers, caller);
            if c.reached & how != how || kept {
                let visit = Visit { caller, how, mark };
                reach_first(c, f, visit, noted, edges);
            }
        };
        // The leaf location (the first with frames) is taken out of the loop: its
        // innermost frame gets the flat value, and the loop needs no flag for it.
        let mut callee = loop {
            let Some((loc, frame)) = stack.next() else {
                return;
            };
            if frame != MANY_FRAMES {
                let leaf = &mut cells[frame as usize];
                leaf.flat = leaf.flat.wrapping_add(value);
                break frame;
            }
            let frames = frames_of(loc);
            if let Some(&last) = frames.last() {
                let leaf = &mut cells[frames[0] as usize];
                leaf.flat = leaf.flat.wrapping_add(value);
                // The frames inlined into the outermost one, each reached by the next.
                let kept = kept_in(loc);
                for (i, pair) in frames.windows(2).enumerate() {
                    let edge = kept.get(i).copied().unwrap_or(NO_EDGE);
                    count(cells, pair[0], pair[1], INLINED, edge);
                }
                break last;
            }
        };
        // `callee`, the last frame of the previous location with frames, is counted
        // once the next location with frames shows how it is reached: called by that
        // location's innermost frame, or by nothing (the outermost frame).
        for (loc, frame) in stack {
            // Most locations have one frame, which comes with the location: the loop
            // then holds few enough values to keep them all in registers.
            if frame != MANY_FRAMES {
                count(cells, callee, frame, CALLED, NO_EDGE);
                callee = frame;
                continue;
            }
            let frames = frames_of(loc);
            let Some(&last) = frames.last() else {
                continue;
            };
            count(cells, callee, frames[0], CALLED, NO_EDGE);
            let kept = kept_in(loc);
            for (i, pair) in frames.windows(2).enumerate() {
                let edge = kept.get(i).copied().unwrap_or(NO_EDGE);
                count(cells, pair[0], pair[1], INLINED, edge);
            }
            callee = last;
        }
        count(cells, callee, callee, 0, NO_EDGE);
    }

    /// Notes the frames of every location, each innermost first, before any sample is
    /// counted. An edge inside a location (callee inlined into caller) may also be a
    /// real call where its callee is the outermost frame of some location and its
    /// caller the innermost of some location: such edges are kept, to be told apart
    /// ([`InlineEdges`]).
    pub fn note_locations<'f>(&mut self, locations: impl Iterator<Item = &'f [FrameId]> + Clone) {
        // Per frame: the profile's epoch times 4, plus bit 0 for an innermost frame and
        // bit 1 for an outermost one (of this profile when the epoch is this one's).
        self.epoch = self.epoch.wrapping_add(1);
        let epoch = self.epoch << 2;
        let ends = &mut self.ends;
        ends.resize(self.cells.len(), 0);
        let mut mark = |f: FrameId, bit: u32| {
            let e = &mut ends[f as usize];
            *e = if *e & !3 == epoch {
                *e | bit
            } else {
                epoch | bit
            };
        };
        for frames in locations.clone() {
            if let (Some(first), Some(last)) = (frames.first(), frames.last()) {
                mark(*first, 1);
                mark(*last, 2);
            }
        }
        self.location_spans.clear();
        self.location_edges.clear();
        for frames in locations {
            let start = self.location_edges.len() as u32;
            let mut any = false;
            for pair in frames.windows(2) {
                let (callee, caller) = (pair[0], pair[1]);
                let either =
                    ends[callee as usize] == epoch | 2 || ends[callee as usize] == epoch | 3;
                let either = either && ends[caller as usize] & !2 == epoch | 1;
                let new = callee != caller && either && self.edges.keep_edge(caller, callee);
                let edge = match callee != caller && either {
                    true => self.edges.find(caller, callee).unwrap_or(NO_EDGE),
                    false => NO_EDGE,
                };
                any |= edge != NO_EDGE;
                self.location_edges.push(edge);
                if new {
                    let c = &mut self.cells[callee as usize];
                    c.kept_callers = if c.reached & EDGES == 0 {
                        caller_tag(caller)
                    } else {
                        (self.edges.kept_callers(callee)).fold(SEVERAL, |f, k| f | caller_bit(k))
                    };
                    c.reached = (c.reached | EDGES) & !ALL_CALLED;
                }
            }
            if !any {
                self.location_edges.truncate(start as usize);
            }
            self.location_spans
                .push((start, self.location_edges.len() as u32));
        }
    }

    /// Ends counting: how frames are reached along their kept edges.
    fn settle_edges(&mut self) {
        let cells = &mut self.cells;
        self.edges.finish(|callee, inlined| {
            cells[callee as usize].reached |= if inlined { INLINED } else { CALLED };
        });
    }

    /// The row of frame `f`.
    pub fn row(&self, f: FrameId) -> TopRow {
        let c = self.cells[f as usize];
        TopRow {
            frame: f,
            flat: c.flat,
            cum: c.cum,
            reached: Reached {
                inlined: c.reached & INLINED != 0,
                called: c.reached & CALLED != 0,
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
                c.reached &= !how;
            }
        }
    }
}

/// The locations of `stack` with their entries in `single` ([`single_frame`]), as
/// [`Counts::add`] takes them.
pub(crate) fn with_single<'a>(
    stack: &'a [LocationId],
    single: &'a [FrameId],
) -> impl Iterator<Item = (LocationId, FrameId)> + 'a {
    (stack.iter()).map(|&l| (l, single.get(l as usize).copied().unwrap_or(MANY_FRAMES)))
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
    counts.note_locations(locations.clone());
    let single: Vec<FrameId> = locations.map(single_frame).collect();
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
        counts.add(
            value,
            &mut with_single(profile.samples.stack(i), &single),
            |l| frames.of_location(l),
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
