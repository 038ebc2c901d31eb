//! The comparison job of compare mode: A and B combined and diffed on a worker
//! thread, started and installed as the selections and settings change.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Instant;

use egui::Context;
use profile_model::diff::{self, DiffMode, DiffRow};
use profile_model::frames::FrameTable;
use profile_model::group_by::{group_by_labels, label_keys};
use profile_model::{CallTree, Profile, View, noise, units};

use crate::gui::compare::{CompareState, Side, side_types};
use crate::gui::time::timeline::Timeline;
use crate::gui::view::SettingsKey;
use crate::gui::view::flame::DiffValues;
use crate::gui::view::loader::Settings;

/// Everything the diff flame graph and table show.
#[derive(Debug)]
pub struct DiffLoaded {
    /// Frames of the combined profile at the chosen granularity.
    pub frames: FrameTable,
    /// Call tree of the combined profile.
    pub tree: CallTree,
    /// Totals of every node in A.
    pub totals_a: Vec<i64>,
    /// Totals of every node in B.
    pub totals_b: Vec<i64>,
    /// Table of differences, sorted by |delta| in the default mode (the table orders
    /// them for the mode shown).
    pub rows: Vec<DiffRow>,
    /// Unit of both sides.
    pub unit: String,
    /// How many samples A and B hold.
    pub samples: [i64; 2],
    /// The largest z-score of a node's share between A and B (see
    /// [`profile_model::noise::largest_z`]).
    pub largest_z: f64,
    /// The label keys of A's and B's samples, sorted (what they can be grouped by).
    pub label_keys: Vec<String>,
}

impl DiffLoaded {
    /// The totals of every node in `side`: its own flame graph's widths.
    pub fn totals(&self, side: Side) -> &[i64] {
        match side {
            Side::A => &self.totals_a,
            Side::B => &self.totals_b,
        }
    }

    /// The total of `side`.
    pub fn total(&self, side: Side) -> i64 {
        self.totals(side).first().copied().unwrap_or(0)
    }

    /// What the legend warns of: a side with too few samples to compare, or
    /// differences all within sampling noise.
    pub fn noise_warning(&self) -> Option<String> {
        let few: Vec<String> = [Side::A, Side::B]
            .into_iter()
            .zip(self.samples)
            .filter(|(_, n)| *n < MIN_SAMPLES)
            .map(|(side, n)| format!("{} holds {n} sample{}", side.letter(), plural(n)))
            .collect();
        if !few.is_empty() {
            return Some(format!(
                "{}: too few to compare (pick a longer range)",
                few.join(", ")
            ));
        }
        (self.largest_z < NOISE_Z).then(|| {
            format!(
                "every difference is within sampling noise (largest z {:.1} with {} and {} samples)",
                self.largest_z,
                units::thousands(self.samples[0].unsigned_abs()),
                units::thousands(self.samples[1].unsigned_abs())
            )
        })
    }

    /// A's total.
    pub fn total_a(&self) -> i64 {
        self.total(Side::A)
    }

    /// B's total.
    pub fn total_b(&self) -> i64 {
        self.total(Side::B)
    }

    /// The values of both sides for drawing, in `mode`.
    pub fn values(&self, mode: DiffMode) -> DiffValues<'_> {
        DiffValues {
            a: &self.totals_a,
            b: &self.totals_b,
            total_a: self.total_a(),
            total_b: self.total_b(),
            mode,
        }
    }
}

/// The stages of a comparison job, for the progress line.
pub const DIFF_STAGES: [&str; 4] = ["combining", "building frames", "diffing", "aggregating"];

/// Fewer samples than this on a side: the legend says the side is too small to compare.
const MIN_SAMPLES: i64 = 100;

/// A largest z-score under this: the legend says the differences are noise.
const NOISE_Z: f64 = 3.0;

/// `s` after a count other than one.
fn plural(n: i64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Combines A and B and builds the diff tree, totals and table; `Ok(None)` when
/// cancelled. A's and B's own flame graphs are drawn from the same tree with each
/// side's totals (a node a side has nothing in is left out of its graph), so that no
/// tree of their own is built or held beside it.
pub fn compute_diff(
    a: &Profile,
    b: &Profile,
    type_name: &str,
    settings: &Settings,
    cancel: &AtomicBool,
    stage: &dyn Fn(usize),
) -> Result<Option<Box<DiffLoaded>>, String> {
    let (at, bt) = side_types(a, b, type_name);
    let samples = [noise::sample_count(a), noise::sample_count(b)];
    let cancelled = || cancel.load(Ordering::Relaxed);
    stage(0);
    let mut combined = diff::combine(a, at, b, bt).map_err(|e| format!("compare: {e}"))?;
    let label_keys = label_keys(&combined);
    if !settings.group_by.is_empty() {
        combined = group_by_labels(&combined, &settings.group_by);
    }
    if cancelled() {
        return Ok(None);
    }
    stage(1);
    let view = View::new(&combined, &settings.options);
    if cancelled() {
        return Ok(None);
    }
    stage(2);
    let rows = diff::diff_rows(&view, &combined, DiffMode::default());
    let unit = combined
        .sample_types
        .get(diff::B)
        .map_or_else(String::new, |t| combined.str(t.unit).to_string());
    if cancelled() {
        return Ok(None);
    }
    stage(3);
    // The combined profile (both sides' stacks again) is let go once its stacks are
    // read, before the tree is assembled: the comparison's peak memory.
    let mut tree = CallTree::build_consuming(combined, &view.frames, &view.filter);
    if settings.invert {
        tree = tree.inverted(&view.frames);
    }
    let totals_a = tree.totals(diff::A);
    let totals_b = tree.totals(diff::B);
    if cancelled() {
        return Ok(None);
    }
    let largest_z = noise::largest_z(&totals_a, &totals_b, samples);
    Ok(Some(Box::new(DiffLoaded {
        frames: view.frames,
        tree,
        totals_a,
        totals_b,
        rows,
        unit,
        samples,
        largest_z,
        label_keys,
    })))
}

/// What a comparison is computed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffKey {
    a: u64,
    b: u64,
    type_name: String,
    settings: SettingsKey,
}

type DiffResult = Result<Option<Box<DiffLoaded>>, String>;

/// A comparison running on a worker thread.
pub struct DiffJob {
    pub(crate) key: DiffKey,
    started: Instant,
    stage: Arc<AtomicUsize>,
    pub(crate) cancel: Arc<AtomicBool>,
    rx: Receiver<DiffResult>,
}

impl DiffJob {
    /// "Comparing A and B… (aggregating, 3/4, 0.4 s)".
    pub fn progress_text(&self) -> String {
        let stage = self.stage.load(Ordering::Relaxed);
        format!(
            "Comparing A and B… ({}, {}/{}, {:.1} s)",
            DIFF_STAGES.get(stage).copied().unwrap_or(""),
            stage + 1,
            DIFF_STAGES.len(),
            self.started.elapsed().as_secs_f32()
        )
    }
}

/// What starting a comparison asks of the window.
#[derive(Debug)]
pub enum CompareEvent {
    /// A comparison started: the normal view, hidden while comparing, is not to be
    /// held whole beside it (a large one is set aside until compare mode is left).
    Started,
    /// The view's filters do not compile: why.
    FilterError(String),
}

/// What a comparison of A and B is computed for, when both are picked: their
/// generations, the type plotted (`tl`'s) and the view's `settings`.
pub fn diff_key(c: &CompareState, tl: Option<&Timeline>, settings: SettingsKey) -> Option<DiffKey> {
    let tl = tl?;
    c.a.as_ref()?;
    c.b.as_ref()?;
    Some(DiffKey {
        a: c.a_generation,
        b: c.b_generation,
        type_name: tl.types.get(tl.type_index)?.sample_type.clone(),
        settings: SettingsKey {
            sample_type: None,
            ..settings
        },
    })
}

impl CompareState {
    /// Installs a finished comparison and starts one for `key` (see [`diff_key`]) when
    /// the selections or the settings changed; `sync`: on this thread (tests).
    pub fn poll(
        &mut self,
        ctx: &Context,
        key: Option<DiffKey>,
        sync: bool,
    ) -> Option<CompareEvent> {
        self.sync_jobs = sync;
        if let Some(job) = &self.job {
            match job.rx.try_recv() {
                Err(TryRecvError::Empty) => {}
                result => {
                    let result =
                        result.unwrap_or_else(|_| Err("compare: the worker stopped".to_string()));
                    if let Some(job) = self.job.take()
                        && !job.cancel.load(Ordering::Relaxed)
                    {
                        self.install_diff(job.key, result);
                    }
                }
            }
        }
        if !self.enabled {
            return None;
        }
        let key = key?;
        let running = self.job.as_ref().is_some_and(|j| j.key == key);
        if running || self.result_key.as_ref() == Some(&key) {
            return None;
        }
        let settings = match key.settings.settings() {
            Ok(s) => s,
            Err(e) => return Some(CompareEvent::FilterError(e)),
        };
        let (Some(a), Some(b)) = (&self.a, &self.b) else {
            return None;
        };
        let (a, b) = (Arc::clone(&a.profile), Arc::clone(&b.profile));
        if let Some(old) = self.job.take() {
            old.cancel.store(true, Ordering::Relaxed);
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let stage = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        let type_name = key.type_name.clone();
        let job = DiffJob {
            key,
            started: Instant::now(),
            stage: Arc::clone(&stage),
            cancel: Arc::clone(&cancel),
            rx,
        };
        let work = move || {
            let set = |s: usize| stage.store(s, Ordering::Relaxed);
            compute_diff(&a, &b, &type_name, &settings, &cancel, &set)
        };
        if sync {
            let result = work();
            self.install_diff(job.key, result);
        } else {
            let ctx = ctx.clone();
            std::thread::spawn(move || {
                let _ = tx.send(work());
                ctx.request_repaint();
            });
            self.job = Some(job);
        }
        Some(CompareEvent::Started)
    }

    fn install_diff(&mut self, key: DiffKey, result: DiffResult) {
        match result {
            Ok(Some(res)) => {
                self.result = Some(Arc::from(res));
                self.result_key = Some(key);
                self.result_generation += 1;
                self.error = None;
                self.hovered = None;
                self.side_hovered = None;
                self.zooms = Default::default();
            }
            Ok(None) => {}
            Err(e) => {
                // Do not retry the same comparison forever.
                self.result_key = Some(key);
                self.error = Some(e);
            }
        }
    }
}
