//! The top table: flat (self) and cum (total) per frame, as `go tool pprof -top`.

use std::cmp::Reverse;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::merge::BASE_LABEL;
use rustc_hash::FxHashMap;

use crate::profile::{LabelSetId, LocationId, Profile};

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
}

/// The counts of one frame, together so that counting it touches one cache line.
#[derive(Debug, Default, Clone, Copy)]
struct Cell {
    flat: i64,
    cum: i64,
    /// `stamp == mark` when the frame was already counted for the current sample.
    stamp: u32,
    /// Bit 0: reached by an inlined call; bit 1: reached by a real call.
    reached: u8,
}

/// In a table of each location's one frame ([`single_frame`]): a location with no
/// frame or with several, whose frames are to be looked up.
pub(crate) const MANY_FRAMES: FrameId = FrameId::MAX;

/// A location's one frame, or [`MANY_FRAMES`], from its frames.
pub(crate) fn single_frame(frames: &[FrameId]) -> FrameId {
    match frames {
        [one] => *one,
        _ => MANY_FRAMES,
    }
}

const INLINED: u8 = 1;
const CALLED: u8 = 2;

/// Notes way `how` of reaching frame `f`, new for it, in `cell` and in `noted`: out of
/// the counting loop, which takes this path a few times per frame over a whole sum.
#[cold]
#[inline(never)]
fn reach_first(cell: &mut Cell, f: FrameId, how: u8, noted: &mut Vec<(FrameId, u8)>) {
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
    /// [`MANY_FRAMES`] for a location with none or several (see [`single_frame`]),
    /// whose frames are then `frames_of(location)` (innermost first).
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
                1
            }
        };
        let (mark, cells, noted) = (self.mark, &mut self.cells[..], &mut self.new_reach);
        // A load, and a store only the first time a way of reaching the frame is seen.
        let mut count = |cells: &mut [Cell], f: FrameId, how: u8| {
            let c = &mut cells[f as usize];
            if c.stamp != mark {
                c.stamp = mark;
                c.cum = c.cum.wrapping_add(value);
            }
            if c.reached & how != how {
                reach_first(c, f, how, noted);
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
            if let Some((&last, inlined)) = frames.split_last() {
                let leaf = &mut cells[frames[0] as usize];
                leaf.flat = leaf.flat.wrapping_add(value);
                for &f in inlined {
                    count(cells, f, INLINED);
                }
                break last;
            }
        };
        // `callee`, the last frame of the previous location with frames, is counted
        // once the next location with frames shows how it is reached: called by that
        // location's frames, or by nothing (the outermost frame).
        for (loc, frame) in stack {
            // Most locations have one frame, which comes with the location: the loop
            // then holds few enough values to keep them all in registers.
            if frame != MANY_FRAMES {
                count(cells, callee, CALLED);
                callee = frame;
                continue;
            }
            let Some((&last, inlined)) = frames_of(loc).split_last() else {
                continue;
            };
            count(cells, callee, CALLED);
            for &f in inlined {
                count(cells, f, INLINED);
            }
            callee = last;
        }
        count(cells, callee, 0);
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

    /// The rows of the frames below `frames` with a flat or cum value, by frame id.
    /// As pprof, a frame whose values cancel out (in a difference) has no row.
    pub fn rows(&self, frames: usize) -> impl Iterator<Item = TopRow> + '_ {
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
    }

    /// Keeps the ways of reaching frames noted so far.
    pub fn keep_reach(&mut self) {
        self.new_reach.clear();
    }

    /// Takes back the ways of reaching frames noted since [`Counts::keep_reach`] (of
    /// samples whose values were taken back by counting them again negated).
    pub fn forget_new_reach(&mut self) {
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
    let single: Vec<FrameId> = (0..profile.locations.len())
        .map(|l| single_frame(frames.of_location(l as LocationId)))
        .collect();
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
/// them: the sum of absolute values of samples that have the same stack and labels
/// merged first (so that +7 and -7 of one stack weigh nothing); the base's part alone
/// where there is one.
pub fn totals(profile: &Profile, sample_type: usize) -> (i64, i64) {
    let Some(values) = profile.samples.values.get(sample_type) else {
        return (0, 0);
    };
    let is_base = base_label_sets(profile);
    let label_set = &profile.samples.label_set;
    let sums = |values: &mut dyn Iterator<Item = (usize, i64)>| {
        let (mut total, mut base_total) = (0i64, 0i64);
        for (i, v) in values {
            total = total.wrapping_add(v.wrapping_abs());
            if is_base[label_set[i] as usize] {
                base_total = base_total.wrapping_add(v.wrapping_abs());
            }
        }
        (total, base_total)
    };
    let (total, base_total) = if values.iter().all(|v| *v >= 0) {
        sums(&mut values.iter().copied().enumerate())
    } else {
        let mut merged: FxHashMap<(&[LocationId], LabelSetId), (usize, i64)> = FxHashMap::default();
        for (i, v) in values.iter().enumerate() {
            let entry = merged
                .entry((profile.samples.stack(i), label_set[i]))
                .or_insert((i, 0));
            entry.1 = entry.1.wrapping_add(*v);
        }
        sums(&mut merged.into_values())
    };
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
    rows.sort_by(|a, b| {
        pprof_key(a.flat, &frames.get(a.frame).name, a.cum).cmp(&pprof_key(
            b.flat,
            &frames.get(b.frame).name,
            b.cum,
        ))
    });
}

/// pprof's row order: |flat| descending, then name, then |cum| descending.
pub(crate) fn pprof_key(flat: i64, name: &str, cum: i64) -> (Reverse<u64>, &str, Reverse<u64>) {
    (
        Reverse(flat.unsigned_abs()),
        name,
        Reverse(cum.unsigned_abs()),
    )
}
