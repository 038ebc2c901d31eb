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
use crate::top::{Counts, Reached, Top, pprof_key};
use crate::wire;
use crate::wire::tables::{SampleBuf, Tables};

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
}

/// The top table of many profiles, added one at a time.
#[derive(Debug, Default)]
pub struct TopSum {
    index: FxHashMap<String, usize>,
    rows: Vec<NamedRow>,
    total: i64,
    base_total: i64,
    wire: WireState,
}

/// What reading profiles from their bytes keeps from one profile to the next: frames
/// interned as [`FrameTable`] tells them apart, and reused buffers.
#[derive(Debug, Default)]
struct WireState {
    /// Frame key → frame id; `row_of[frame]` is the frame's row.
    by_key: FxHashMap<String, FrameId>,
    row_of: Vec<usize>,
    counts: Counts,
    /// Per profile: the frame of each function (when it has a name), [`NO_FRAME`] else.
    function_frame: Vec<FrameId>,
    /// Per profile: `location_frames[offsets[l]..offsets[l + 1]]` are location l's frames.
    offsets: Vec<usize>,
    location_frames: Vec<FrameId>,
    sample: SampleBuf,
}

const NO_FRAME: FrameId = FrameId::MAX;

impl TopSum {
    /// An empty sum.
    pub fn new() -> Self {
        Self::default()
    }

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

    fn add_to_row(&mut self, row: usize, flat: i64, cum: i64, reached: Reached, sign: i64) {
        let row = &mut self.rows[row];
        row.flat += sign * flat;
        row.cum += sign * cum;
        row.reached = row.reached.or(reached);
    }

    /// Adds the 100% of one profile's percentages ([`Top::total`]) and its base total.
    fn add_totals(&mut self, total: i64, base_total: i64, sign: i64) {
        if sign < 0 {
            self.base_total += total;
        } else {
            self.total += total;
            self.base_total += base_total;
        }
    }

    /// Adds the top table of one profile; `sign` is -1 for the base of a difference
    /// (as pprof's `-diff_base`), else 1.
    pub fn add(&mut self, top: &Top, frames: &FrameTable, sign: i64) {
        for r in &top.rows {
            let row = self.row(&frames.get(r.frame).name);
            self.add_to_row(row, r.flat, r.cum, r.reached, sign);
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
        let tables = Tables::parse(body)?;
        self.location_frames(&tables);
        let mut wire_state = std::mem::take(&mut self.wire);
        let counted = count_samples(&mut wire_state, &tables, body, sample_type);
        let WireState { counts, row_of, .. } = &mut wire_state;
        if let Ok((total, base_total)) = counted {
            for &f in &counts.touched {
                let r = counts.row(f);
                if r.flat != 0 || r.cum != 0 {
                    self.add_to_row(row_of[f as usize], r.flat, r.cum, r.reached, sign);
                }
            }
            self.add_totals(total, base_total, sign);
        }
        counts.clear();
        self.wire = wire_state;
        counted?;
        Ok(PprofSummary {
            sample_types: tables
                .sample_types
                .iter()
                .map(|t| format!("{}/{}", tables.str(t.kind), tables.str(t.unit)))
                .collect(),
            time_nanos: tables.time_nanos,
            duration_nanos: tables.duration_nanos,
        })
    }

    /// Fills `wire.offsets` and `wire.location_frames` with the frames of every
    /// location, innermost first, as [`FrameTable::build`] names them at function
    /// granularity.
    fn location_frames(&mut self, tables: &Tables<'_>) {
        let mut w = std::mem::take(&mut self.wire);
        w.function_frame.clear();
        w.function_frame.resize(tables.functions.len(), NO_FRAME);
        w.offsets.clear();
        w.offsets.push(0);
        w.location_frames.clear();
        for loc in &tables.locations {
            let mapping = loc.mapping.map(|m| &tables.mappings[m as usize]);
            let binary = mapping.map_or("", |m| tables.str(m.filename));
            let unsymbolized = || address_name(mapping, |id| tables.str(id), loc.address);
            let lines = tables.lines_of(loc);
            if lines.is_empty() {
                let name = unsymbolized();
                let frame = self.frame(&mut w, &frame_key(&name, loc.address, binary), &name);
                w.location_frames.push(frame);
            }
            for line in lines {
                let function = line.function as usize;
                let frame = match w.function_frame[function] {
                    NO_FRAME => match tables.str(tables.functions[function].name) {
                        "" => {
                            let name = unsymbolized();
                            self.frame(&mut w, &name, &name)
                        }
                        name => {
                            let frame = self.frame(&mut w, name, name);
                            w.function_frame[function] = frame;
                            frame
                        }
                    },
                    frame => frame,
                };
                w.location_frames.push(frame);
            }
            w.offsets.push(w.location_frames.len());
        }
        self.wire = w;
    }

    /// The frame with `key`, made (with its row, named `name`) when new.
    fn frame(&mut self, w: &mut WireState, key: &str, name: &str) -> FrameId {
        if let Some(f) = w.by_key.get(key) {
            return *f;
        }
        let f = w.row_of.len() as FrameId;
        let row = self.row(name);
        w.row_of.push(row);
        w.by_key.insert(key.to_string(), f);
        w.counts.grow(w.row_of.len());
        f
    }

    /// Adds every row and total of `other` (summed on another thread).
    pub fn absorb(&mut self, other: TopSum) {
        for r in other.rows {
            let row = self.row(&r.name);
            self.add_to_row(row, r.flat, r.cum, r.reached, 1);
        }
        self.total += other.total;
        self.base_total += other.base_total;
    }

    /// The rows in pprof's order (frames whose values cancel out left out), and the
    /// 100% of the percentages: the base's total for a difference, else the total.
    pub fn finish(mut self) -> (Vec<NamedRow>, i64) {
        self.rows.retain(|r| r.flat != 0 || r.cum != 0);
        self.rows.sort_by(|a, b| {
            pprof_key(a.flat, &a.name, a.cum).cmp(&pprof_key(b.flat, &b.name, b.cum))
        });
        let total = if self.base_total > 0 {
            self.base_total
        } else {
            self.total
        };
        (self.rows, total)
    }
}

/// Counts every sample of `body` into `w.counts`; returns the profile's [`Top::total`]
/// and [`Top::base_total`].
fn count_samples(
    w: &mut WireState,
    tables: &Tables<'_>,
    body: &[u8],
    sample_type: usize,
) -> Result<(i64, i64), ProfileError> {
    let WireState {
        counts,
        offsets,
        location_frames,
        sample,
        ..
    } = w;
    let (mut total, mut base_total) = (0i64, 0i64);
    let mut i = 0;
    wire::for_each_sample(body, |bytes| {
        tables.read_sample(i, bytes, sample)?;
        i += 1;
        let Some(&value) = sample.values.get(sample_type) else {
            return Ok(());
        };
        total += value.abs();
        if sample
            .labels
            .iter()
            .any(|l| tables.str(l.key) == BASE_LABEL && tables.str(l.str) == "true")
        {
            base_total += value.abs();
        }
        if value != 0 {
            counts.add(value, &sample.locations, |l| {
                &location_frames[offsets[l as usize]..offsets[l as usize + 1]]
            });
        }
        Ok(())
    })?;
    Ok((if base_total > 0 { base_total } else { total }, base_total))
}
