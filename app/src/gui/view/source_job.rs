//! The source view's job, on a worker thread: the function's values per line in the
//! view shown (its filters, at line granularity: what `flint list` counts) and what
//! each line calls (inlined callees marked), then its
//! hottest file found on this machine or at debuginfod
//! ([`capture::symbolize::source_file`]) and read as text. Stages are reported for the
//! progress line; a cancelled job's answer is dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use capture::symbolize::source_file::{SourceConfig, find_source_file};
use profile_model::source_listing::{
    FileValues, SourceText, function_files, line_callees, source_text,
};
use profile_model::{Granularity, Profile, View, ViewOptions};

use crate::gui::view::loader::Loaded;

/// A function's source as the panel shows it.
#[derive(Debug)]
pub struct SourceFile {
    /// The function's name.
    pub function: String,
    /// Its hottest file and the values per line there.
    pub values: FileValues,
    /// Its other files' paths (shown as a note).
    pub other_files: Vec<String>,
    /// Where the file was read.
    pub at: String,
    /// Its text.
    pub text: SourceText,
    /// The rows shown: each line of the text, the callees of a line under it.
    pub rows: Vec<Row>,
    /// The view's total, for shares.
    pub total: i64,
    /// The unit of the values.
    pub unit: String,
}

/// Callees listed under a line at most; the rest are counted in one row.
const CALLEES_SHOWN: usize = 6;

/// One row of the source view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// Line `n` (1-based) of the text.
    Line(i64),
    /// A callee of the line above: its name (with pprof's `(inline)` mark) and cum.
    Callee(String, i64),
    /// How many more callees the line above has, and their cum.
    More(usize, i64),
}

/// Why a source is not shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotShown {
    /// In words, e.g. "main.go of main.fib not found".
    pub why: String,
    /// Every place looked, with its answer.
    pub tried: Vec<String>,
}

/// What a job answers.
pub type Answer = Result<SourceFile, NotShown>;

/// One source being found and read on a worker thread.
pub struct SourceJob {
    /// The function asked for.
    pub function: String,
    rx: Receiver<Answer>,
    cancel: Arc<AtomicBool>,
    stage: Arc<Mutex<String>>,
    /// When it started.
    pub started: Instant,
}

impl SourceJob {
    /// Starts finding the source of `function` in `of` (on this thread when `sync`:
    /// tests); `done` is called when it has answered.
    pub fn spawn(
        of: Arc<Loaded>,
        function: String,
        config: Arc<SourceConfig>,
        sync: bool,
        done: impl FnOnce() + Send + 'static,
    ) -> Self {
        let (tx, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let stage = Arc::new(Mutex::new("counting lines".to_string()));
        let job = Self {
            function: function.clone(),
            rx,
            cancel: Arc::clone(&cancel),
            stage: Arc::clone(&stage),
            started: Instant::now(),
        };
        let work = move || {
            let say = |s: String| *stage.lock().unwrap_or_else(|e| e.into_inner()) = s;
            let answer = compute(&of, &function, &config, &cancel, say);
            if !cancel.load(Ordering::Relaxed) {
                let _ = tx.send(answer);
                done();
            }
        };
        if sync {
            work();
        } else if let Err(e) = std::thread::Builder::new()
            .name("flint-source".into())
            .spawn(work)
        {
            // Without a thread the job never answers: say so as its answer.
            let (tx, rx) = mpsc::channel();
            let _ = tx.send(Err(NotShown {
                why: format!("could not start a thread: {e}"),
                tried: Vec::new(),
            }));
            return Self { rx, ..job };
        }
        job
    }

    /// The answer, once there.
    pub fn poll(&self) -> Option<Answer> {
        match self.rx.try_recv() {
            Ok(answer) => Some(answer),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(NotShown {
                why: "the source job stopped without an answer".into(),
                tried: Vec::new(),
            })),
        }
    }

    /// What it is doing, for the progress line.
    pub fn stage(&self) -> String {
        self.stage.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Stops waiting for it (a debuginfod request ends within its timeout).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// The source of `function` in `of`, found under `config`.
pub fn compute(
    of: &Loaded,
    function: &str,
    config: &SourceConfig,
    cancel: &AtomicBool,
    mut say: impl FnMut(String),
) -> Answer {
    let mut filters = of.settings.options.filters.clone();
    if filters.focus.is_none() {
        // Only the samples through the function count here: the others are not read
        // (its values and its callees' are the same).
        filters.focus = regex::Regex::new(&format!("^{}$", regex::escape(function))).ok();
    }
    let options = ViewOptions {
        granularity: Granularity::FunctionLine,
        filters,
    };
    let view = View::new(&of.profile, &options);
    let (tree, top) = view.call_tree_of(&of.profile, of.sample_type, || {
        view.top(&of.profile, of.sample_type)
    });
    let mut files = function_files(&view.frames, &top, function, &config.paths).into_iter();
    let Some(values) = files.next() else {
        return Err(NotShown {
            why: format!("{function}: no source file in the profile (or no samples in this view)"),
            tried: Vec::new(),
        });
    };
    let other_files = files.map(|f| f.path).collect();
    if cancel.load(Ordering::Relaxed) {
        return Err(NotShown {
            why: "cancelled".into(),
            tried: Vec::new(),
        });
    }
    say(format!("looking for {}", values.path));
    let build_id = build_id_of(&of.profile, &values.binary);
    let found =
        find_source_file(config, &values.profile_path, build_id).map_err(|tried| NotShown {
            why: format!("{} of {function} not found", values.path),
            tried,
        })?;
    let text = source_text(&found.bytes).map_err(|e| NotShown {
        why: format!("{}: {e}", found.at),
        tried: Vec::new(),
    })?;
    let totals = tree.totals(0);
    let callees = line_callees(
        &view.frames,
        &tree,
        &totals,
        &top,
        function,
        &values.profile_path,
    );
    let mut rows = Vec::with_capacity(text.lines.len());
    for n in 1..=text.lines.len() as i64 {
        rows.push(Row::Line(n));
        let Some(called) = callees.get(&n) else {
            continue;
        };
        for c in called.iter().take(CALLEES_SHOWN) {
            let f = view.frames.get(c.frame);
            let name = match f.file.rsplit('/').next() {
                Some(base) if !base.is_empty() => format!("{} {base}:{}", f.function, f.line),
                _ => f.function.clone(),
            };
            rows.push(Row::Callee(format!("{name}{}", c.inline.suffix()), c.cum));
        }
        if called.len() > CALLEES_SHOWN {
            let rest = &called[CALLEES_SHOWN..];
            rows.push(Row::More(rest.len(), rest.iter().map(|c| c.cum).sum()));
        }
    }
    Ok(SourceFile {
        function: function.to_string(),
        values,
        other_files,
        at: found.at,
        text,
        rows,
        total: of.top.total,
        unit: of.unit().to_string(),
    })
}

/// The build id of the mapping whose file is `binary`, empty when none says.
fn build_id_of<'p>(profile: &'p Profile, binary: &str) -> &'p str {
    profile
        .mappings
        .iter()
        .find(|m| !binary.is_empty() && profile.str(m.filename) == binary)
        .map_or("", |m| profile.str(m.build_id))
}
