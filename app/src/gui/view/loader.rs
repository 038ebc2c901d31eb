//! Background jobs: reading + decoding a profile and building everything the window
//! shows from it (frames, call tree and top table side by side, totals), on a worker
//! thread with stages reported for the progress line and a cancel flag checked between
//! stages.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Instant;

use profile_model::codec::{self, DecodeOptions};
use profile_model::group_by::{group_by_labels, label_keys};
use profile_model::top::Top;
use profile_model::{CallTree, FrameTable, Profile, View, ViewOptions};

use crate::gui::view::flame::FlameInput;

/// Where the profile of a job comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file on disk.
    Path(PathBuf),
    /// Several files on disk, merged as `go tool pprof` merges them.
    Paths(Vec<PathBuf>),
    /// Bytes already in memory (the bundled demo, a file dropped in a browser-like way).
    Bytes {
        /// File name to show.
        name: String,
        /// The pprof bytes.
        bytes: Arc<[u8]>,
    },
    /// The already decoded current profile (recomputing after a settings change).
    Profile {
        /// File name to show.
        name: String,
        /// Path it was read from, if any.
        path: Option<PathBuf>,
        /// The profile.
        profile: Arc<Profile>,
    },
}

impl Source {
    /// The file name to show for this source.
    pub fn name(&self) -> String {
        match self {
            Self::Path(p) => file_name(p),
            Self::Paths(paths) => match paths.as_slice() {
                [first, rest @ ..] => format!("{} + {} more", file_name(first), rest.len()),
                [] => String::new(),
            },
            Self::Bytes { name, .. } | Self::Profile { name, .. } => name.clone(),
        }
    }

    /// Whether this job opens a new file (rather than recomputing the current one).
    pub fn is_new_file(&self) -> bool {
        !matches!(self, Self::Profile { .. })
    }
}

/// The last part of `path`, as a window names what it shows.
fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// How the profile is looked at: the settings a job computes for.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Filters and granularity.
    pub options: ViewOptions,
    /// Bottom-up call tree.
    pub invert: bool,
    /// Sample type index; `None` picks the profile's default.
    pub sample_type: Option<usize>,
    /// Label keys whose values are the first levels of the flame graph, outermost first.
    pub group_by: Vec<String>,
}

/// Everything the window shows of one profile under one [`Settings`]; immutable once built
/// (shared with export threads through an `Arc`).
#[derive(Debug)]
pub struct Loaded {
    /// File name.
    pub name: String,
    /// Path, when read from disk.
    pub path: Option<PathBuf>,
    /// The decoded profile.
    pub profile: Arc<Profile>,
    /// The settings this was computed for (`sample_type` resolved).
    pub settings: Settings,
    /// The sample type shown.
    pub sample_type: usize,
    /// Frames at the chosen granularity.
    pub frames: FrameTable,
    /// The call tree (inverted when `settings.invert`), with one column: the values of
    /// `sample_type`.
    pub tree: CallTree,
    /// Totals of every node for `sample_type`.
    pub totals: Vec<i64>,
    /// The top table for `sample_type`.
    pub top: Top,
    /// Number of samples kept by the filters.
    pub kept_samples: usize,
    /// The label keys of the profile's samples, sorted (what it can be grouped by).
    pub label_keys: Vec<String>,
}

impl Loaded {
    /// What the flame graph draws of this view: no colors, no search, no selection
    /// (set them with struct update syntax).
    pub fn flame_input(&self) -> FlameInput<'_> {
        FlameInput {
            tree: &self.tree,
            frames: &self.frames,
            totals: &self.totals,
            colors: &[],
            matches: None,
            selected: None,
            unit: self.unit(),
        }
    }

    /// Unit of the shown sample type.
    pub fn unit(&self) -> &str {
        self.profile
            .sample_types
            .get(self.sample_type)
            .map_or("", |t| self.profile.str(t.unit))
    }
}

/// The stages of a job, in order, for the progress line.
pub const STAGES: [&str; 5] = [
    "reading",
    "decoding",
    "building frames",
    "aggregating",
    "computing totals",
];

/// Runs the whole pipeline on the current thread. `stage` is called as each stage
/// starts; returns `Ok(None)` when `cancel` was set between stages.
pub fn compute(
    source: Source,
    settings: Settings,
    decode: DecodeOptions,
    cancel: &AtomicBool,
    stage: &mut dyn FnMut(usize),
) -> Result<Option<Box<Loaded>>, String> {
    let cancelled = || cancel.load(Ordering::Relaxed);
    let name = source.name();
    stage(0);
    let (profile, path) = match source {
        Source::Path(path) => {
            let mut bytes = Vec::new();
            capture::index::read_into(&path, &mut bytes, decode)?;
            if cancelled() {
                return Ok(None);
            }
            stage(1);
            let profile = codec::decode_with(&bytes, decode)
                .map_err(|e| told(&path.display().to_string(), &bytes, &e))?;
            (Arc::new(profile), Some(path))
        }
        Source::Paths(paths) => {
            stage(1);
            let merged = crate::load::read_merged(&paths, decode)?;
            (Arc::new(merged.profile), None)
        }
        Source::Bytes { bytes, .. } => {
            stage(1);
            let profile =
                codec::decode_with(&bytes, decode).map_err(|e| told(&name, &bytes, &e))?;
            (Arc::new(profile), None)
        }
        Source::Profile { profile, path, .. } => (profile, path),
    };
    if profile.sample_types.is_empty() {
        return Err(format!("{name}: the profile has no sample types"));
    }
    if cancelled() {
        return Ok(None);
    }
    stage(2);
    let sample_type = settings
        .sample_type
        .filter(|&t| t < profile.sample_types.len())
        .unwrap_or_else(|| profile.default_sample_index());
    // Grouped, the view is of a copy with label levels added; `profile` is kept as it
    // was, so that a recompute starts from it.
    let grouped =
        (!settings.group_by.is_empty()).then(|| group_by_labels(&profile, &settings.group_by));
    let seen = grouped.as_ref().unwrap_or(&profile);
    let view = View::new(seen, &settings.options);
    if cancelled() {
        return Ok(None);
    }
    stage(3);
    // The call tree and the top table only read the profile and the view: the top
    // table is made while the tree's last step keeps one core busy.
    let (mut tree, (top, kept_samples)) = view.call_tree_of(seen, sample_type, || {
        let top = view.top(seen, sample_type);
        let kept_samples = (0..seen.samples.len())
            .filter(|&i| view.filter.keeps(seen, i))
            .count();
        (top, kept_samples)
    });
    drop(grouped);
    if settings.invert && !cancelled() {
        tree = tree.inverted(&view.frames);
    }
    if cancelled() {
        return Ok(None);
    }
    stage(4);
    let totals = tree.totals(0);
    let label_keys = label_keys(&profile);
    if cancelled() {
        return Ok(None);
    }
    Ok(Some(Box::new(Loaded {
        name,
        path,
        profile,
        settings: Settings {
            sample_type: Some(sample_type),
            ..settings
        },
        sample_type,
        frames: view.frames,
        tree,
        totals,
        top,
        kept_samples,
        label_keys,
    })))
}

/// The window's error for `bytes` of `name` that could not be read: what they are in
/// words on the first line, the decoder's own words after it (the banner's details).
fn told(name: &str, bytes: &[u8], error: &profile_model::ProfileError) -> String {
    let said = profile_model::explain::explain(bytes, error);
    format!("{name}: {said}\n{error}")
}

/// A message from a worker.
enum Message {
    Stage(usize),
    Done(Result<Option<Box<Loaded>>, String>),
}

/// A job running on a worker thread.
pub struct Job {
    /// What it is doing, e.g. "Loading cpu.pb.gz".
    pub label: String,
    /// Whether it opens a new file.
    pub new_file: bool,
    /// The stage running now (index into [`STAGES`]).
    pub stage: usize,
    /// When it started.
    pub started: Instant,
    cancel: Arc<AtomicBool>,
    rx: Receiver<Message>,
}

/// What polling a job found.
pub enum Poll {
    /// Still running.
    Running,
    /// Finished: the result (`None` when it was cancelled).
    Done(Result<Option<Box<Loaded>>, String>),
}

impl Job {
    /// Starts a job on a new thread; `repaint` is called whenever something changes.
    pub fn spawn(
        source: Source,
        settings: Settings,
        decode: DecodeOptions,
        repaint: impl Fn() + Send + 'static,
    ) -> Self {
        let started = Instant::now();
        let new_file = source.is_new_file();
        let label = if new_file {
            format!("Loading {}…", source.name())
        } else {
            "Recomputing…".to_string()
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let flag = Arc::clone(&cancel);
        std::thread::spawn(move || {
            let progress_tx = tx.clone();
            let mut stage = |s: usize| {
                // The receiver may be gone (window closed): nothing to report to then.
                let _ = progress_tx.send(Message::Stage(s));
                repaint();
            };
            let result = compute(source, settings, decode, &flag, &mut stage);
            let _ = tx.send(Message::Done(result));
            repaint();
        });
        Self {
            label,
            new_file,
            stage: 0,
            started,
            cancel,
            rx,
        }
    }

    /// Asks the worker to stop at the next stage boundary; its result will be discarded.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether [`Job::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Drains the worker's messages.
    pub fn poll(&mut self) -> Poll {
        loop {
            match self.rx.try_recv() {
                Ok(Message::Stage(s)) => self.stage = s,
                Ok(Message::Done(result)) => return Poll::Done(result),
                Err(TryRecvError::Empty) => return Poll::Running,
                Err(TryRecvError::Disconnected) => {
                    return Poll::Done(Err(format!("{}: the worker stopped", self.label)));
                }
            }
        }
    }

    /// "Loading cpu.pb.gz… (decoding, 2/5, 0.4 s)".
    pub fn progress_text(&self) -> String {
        let stage = STAGES.get(self.stage).copied().unwrap_or("");
        format!(
            "{} ({stage}, {}/{}, {:.1} s)",
            self.label,
            self.stage + 1,
            STAGES.len(),
            self.started.elapsed().as_secs_f32()
        )
    }
}
