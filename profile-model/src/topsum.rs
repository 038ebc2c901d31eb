//! The top table of many profiles, summed one profile at a time: since every sample
//! belongs to one profile, summing their flat and cum per frame name gives exactly the
//! top table of their merge (or, with the base subtracted, of their difference),
//! without ever building the merged profile.
//!
//! A profile is added either as its [`Top`] (any granularity and filters), or straight
//! from its pprof bytes ([`TopSum::add_pprof`]: function granularity, no filters), which
//! reads the tables borrowed from the message and counts each sample as it is read,
//! without building a [`crate::Profile`]: what `flint top DIR` does for a day of files.

use rustc_hash::FxHashMap;

use crate::error::ProfileError;
use crate::frames::{FrameId, FrameTable, address_name, frame_key};
use crate::merge::BASE_LABEL;
use crate::profile::StrId;
use crate::top::{Counts, Reached, Top, pprof_key};
use crate::wire::tables::{RawTables, SampleBuf, Tables};

/// A row of a [`TopSum`]: a frame known by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRow {
    /// The frame's display name.
    pub name: String,
    /// Summed flat value.
    pub flat: i64,
    /// Summed cum value.
    pub cum: i64,
    /// How callers reach the frame, in any of the profiles.
    pub reached: Reached,
}

/// What [`TopSum::add_pprof`] read about a profile besides its samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PprofSummary {
    /// `type/unit` of every sample type.
    pub sample_types: Vec<String>,
    /// The profile's start, 0 when it has none.
    pub time_nanos: i64,
    /// The profile's duration.
    pub duration_nanos: i64,
    /// The profile's comments.
    pub comments: Vec<String>,
}

/// The top table of many profiles, added one at a time.
#[derive(Debug, Default)]
pub struct TopSum {
    rows: Rows,
    total: i64,
    base_total: i64,
    wire: WireState,
}

/// The rows of a [`TopSum`], found by name.
#[derive(Debug, Default)]
struct Rows {
    index: FxHashMap<String, usize>,
    rows: Vec<NamedRow>,
}

impl Rows {
    /// The row named `name`, created empty when there is none yet.
    fn row(&mut self, name: &str) -> usize {
        if let Some(i) = self.index.get(name) {
            return *i;
        }
        self.rows.push(NamedRow {
            name: name.to_string(),
            flat: 0,
            cum: 0,
            reached: Reached::default(),
        });
        self.index.insert(name.to_string(), self.rows.len() - 1);
        self.rows.len() - 1
    }

    /// Adds `sign` times the values to row `row`.
    fn add(&mut self, row: usize, flat: i64, cum: i64, reached: Reached, sign: i64) {
        let row = &mut self.rows[row];
        row.flat = row.flat.wrapping_add(sign.wrapping_mul(flat));
        row.cum = row.cum.wrapping_add(sign.wrapping_mul(cum));
        row.reached = row.reached.or(reached);
    }
}

/// What reading profiles from their bytes keeps from one profile to the next: frames
/// interned as [`FrameTable`] tells them apart, and reused buffers.
///
/// A profile's samples are counted by its own frame numbers (0 up to the number of
/// frames its locations name, in the order first named): the counts of one profile
/// stay small enough to be near the CPU, where those of every frame of a day would not.
#[derive(Debug, Default)]
struct WireState {
    /// Frame key → frame id; `row_of[frame]` is the frame's row.
    by_key: FxHashMap<String, FrameId>,
    row_of: Vec<usize>,
    /// Per frame id: its number in the current profile, [`NO_FRAME`] when it has none.
    local_of: Vec<FrameId>,
    /// Per profile: the frame id of each of its frame numbers.
    frames: Vec<FrameId>,
    /// Counts by the current profile's frame numbers.
    counts: Counts,
    /// Per profile: the frame number of each function with a name, [`NO_FRAME`]
    /// for the others.
    function_frame: Vec<FrameId>,
    /// Per profile: `location_frames[start..end]`, with `(start, end) = spans[l]`, are
    /// location l's frame numbers (32-bit, as [`Tables::parse_with`] bounds them; one
    /// load per location).
    spans: Vec<(u32, u32)>,
    location_frames: Vec<FrameId>,
    sample: SampleBuf,
    raw: RawTables,
}

const NO_FRAME: FrameId = FrameId::MAX;

impl TopSum {
    /// An empty sum.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the 100% of one profile's percentages ([`Top::total`]) and its base total.
    fn add_totals(&mut self, total: i64, base_total: i64, sign: i64) {
        if sign < 0 {
            self.base_total = self.base_total.wrapping_add(total);
        } else {
            self.total = self.total.wrapping_add(total);
            self.base_total = self.base_total.wrapping_add(base_total);
        }
    }

    /// Adds the top table of one profile; `sign` is -1 for the base of a difference
    /// (as pprof's `-diff_base`), else 1.
    pub fn add(&mut self, top: &Top, frames: &FrameTable, sign: i64) {
        for r in &top.rows {
            let row = self.rows.row(&frames.get(r.frame).name);
            self.rows.add(row, r.flat, r.cum, r.reached, sign);
        }
        self.add_totals(top.total, top.base_total, sign);
    }

    /// Adds the top table of column `sample_type` of the uncompressed pprof message
    /// `body`, at function granularity and without filters; exactly what
    /// [`TopSum::add`] adds for the decoded profile's [`Top`], and the same errors as
    /// decoding it. A profile without that column adds nothing (its summary says why).
    pub fn add_pprof(
        &mut self,
        body: &[u8],
        sample_type: usize,
        sign: i64,
    ) -> Result<PprofSummary, ProfileError> {
        let w = &mut self.wire;
        let mut spare = Vec::new();
        let (tables, body) = Tables::parse_lossy(body, &mut w.raw, &mut spare)?;
        w.location_frames(&tables, &mut self.rows);
        let counted = w.count_samples(&tables, body, sample_type);
        if counted.is_ok() {
            for &f in &w.counts.touched {
                let r = w.counts.row(f);
                if r.flat != 0 || r.cum != 0 {
                    let row = w.row_of[w.frames[f as usize] as usize];
                    self.rows.add(row, r.flat, r.cum, r.reached, sign);
                }
            }
        }
        w.counts.clear();
        for &f in &w.frames {
            w.local_of[f as usize] = NO_FRAME;
        }
        w.frames.clear();
        let (total, base_total) = counted?;
        self.add_totals(total, base_total, sign);
        Ok(PprofSummary {
            sample_types: tables
                .sample_types
                .iter()
                .map(|t| format!("{}/{}", tables.str(t.kind), tables.str(t.unit)))
                .collect(),
            time_nanos: tables.time_nanos,
            duration_nanos: tables.duration_nanos,
            comments: tables
                .comments
                .iter()
                .map(|c| tables.str(*c).to_string())
                .collect(),
        })
    }

    /// Adds every row and total of `other` (summed on another thread).
    pub fn absorb(&mut self, other: TopSum) {
        for r in other.rows.rows {
            let row = self.rows.row(&r.name);
            self.rows.add(row, r.flat, r.cum, r.reached, 1);
        }
        self.total = self.total.wrapping_add(other.total);
        self.base_total = self.base_total.wrapping_add(other.base_total);
    }

    /// The rows in pprof's order (frames whose values cancel out left out), and the
    /// 100% of the percentages: the base's total for a difference, else the total.
    pub fn finish(self) -> (Vec<NamedRow>, i64) {
        let mut rows = self.rows.rows;
        rows.retain(|r| r.flat != 0 || r.cum != 0);
        rows.sort_by(|a, b| {
            pprof_key(a.flat, &a.name, a.cum).cmp(&pprof_key(b.flat, &b.name, b.cum))
        });
        let total = if self.base_total > 0 {
            self.base_total
        } else {
            self.total
        };
        (rows, total)
    }
}

impl WireState {
    /// Fills `spans` and `location_frames` with the frames of every location,
    /// innermost first, as [`FrameTable::build`] names them at function granularity;
    /// frames seen for the first time get their row in `rows`.
    fn location_frames(&mut self, tables: &Tables<'_>, rows: &mut Rows) {
        let w = self;
        w.function_frame.clear();
        w.function_frame.resize(tables.functions.len(), NO_FRAME);
        // Every named function first, in a loop of its own: the look-ups by name then
        // do not wait on one another (naming took a third less time than finding them
        // location by location). A function no location names gets a row that stays
        // empty.
        for (f, function) in tables.functions.iter().enumerate() {
            let name = tables.str(function.name);
            if !name.is_empty() {
                w.function_frame[f] = w.frame(rows, name, name);
            }
        }
        w.spans.clear();
        w.location_frames.clear();
        for loc in &tables.locations {
            let start = w.location_frames.len() as u32;
            let mapping = loc.mapping.map(|m| &tables.mappings[m as usize]);
            let binary = mapping.map_or("", |m| tables.str(m.filename));
            let unsymbolized = || address_name(mapping, |id| tables.str(id), loc.address);
            let lines = tables.lines_of(loc);
            if lines.is_empty() {
                let name = unsymbolized();
                let frame = w.frame(rows, &frame_key(&name, loc.address, binary), &name);
                w.location_frames.push(frame);
            }
            for line in lines {
                let function = line.function as usize;
                // A function without a name is known by the location's address.
                let frame = match w.function_frame[function] {
                    NO_FRAME => {
                        let name = unsymbolized();
                        w.frame(rows, &name, &name)
                    }
                    frame => frame,
                };
                w.location_frames.push(frame);
            }
            w.spans.push((start, w.location_frames.len() as u32));
        }
    }

    /// The current profile's number of the frame with `key`, made (with its row in
    /// `rows`, named `name`) when new.
    fn frame(&mut self, rows: &mut Rows, key: &str, name: &str) -> FrameId {
        let f = match self.by_key.get(key) {
            Some(f) => *f,
            None => {
                let f = self.row_of.len() as FrameId;
                self.row_of.push(rows.row(name));
                self.local_of.push(NO_FRAME);
                self.by_key.insert(key.to_string(), f);
                f
            }
        };
        let local = &mut self.local_of[f as usize];
        if *local == NO_FRAME {
            *local = self.frames.len() as FrameId;
            self.frames.push(f);
            self.counts.grow(self.frames.len());
        }
        *local
    }

    /// Counts every sample of `body` into `counts`; returns the profile's
    /// [`Top::total`] and [`Top::base_total`].
    fn count_samples(
        &mut self,
        tables: &Tables<'_>,
        body: &[u8],
        sample_type: usize,
    ) -> Result<(i64, i64), ProfileError> {
        let WireState {
            counts,
            spans,
            location_frames,
            sample,
            ..
        } = self;
        let (mut total, mut base_total) = (0i64, 0i64);
        // The string ids of the base label's key and value (none in most profiles):
        // labels are then told apart by their ids, not by their strings.
        let ids_of = |text: &str| -> Vec<StrId> {
            (0..tables.strings.len() as StrId)
                .filter(|&id| tables.str(id) == text)
                .collect()
        };
        let base_keys = ids_of(BASE_LABEL);
        let trues = if base_keys.is_empty() {
            Vec::new()
        } else {
            ids_of("true")
        };
        let mut i = 0;
        tables.for_each_sample(body, |bytes| {
            tables.read_sample(i, bytes, sample)?;
            i += 1;
            let Some(&value) = sample.values.get(sample_type) else {
                return Ok(());
            };
            total = total.wrapping_add(value.wrapping_abs());
            if !base_keys.is_empty()
                && sample
                    .labels
                    .iter()
                    .any(|l| base_keys.contains(&l.key) && trues.contains(&l.str))
            {
                base_total = base_total.wrapping_add(value.wrapping_abs());
            }
            if value != 0 {
                counts.add(value, &sample.locations, |l| {
                    let (a, b) = spans[l as usize];
                    &location_frames[a as usize..b as usize]
                });
            }
            Ok(())
        })?;
        Ok((if base_total > 0 { base_total } else { total }, base_total))
    }
}
