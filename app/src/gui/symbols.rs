//! Names for the profile the window shows, where the user gave a source (a binary
//! beside the profile, `--symbols DIR`, `--perf-map`, debuginfod): each profile the
//! view installs is symbolized on a worker thread, and the view is recomputed with the
//! names when they arrive. Until then, and if it is cancelled, the addresses are shown.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Instant;

use capture::symbolize::{Report, SymbolSources, symbolize};
use profile_model::Profile;

/// The window's symbolization: its sources, the run under way and what the last said.
#[derive(Default)]
pub struct Symbols {
    /// Where names are looked for; `None`: the window shows profiles as they came.
    sources: Option<Arc<SymbolSources>>,
    /// The run under way.
    job: Option<SymbolJob>,
    /// The profiles handled so far (the last one given and the one made of it), not
    /// symbolized again when the view is recomputed from them.
    handled: Vec<std::sync::Weak<Profile>>,
    /// What the last run that finished said.
    pub report: Option<Report>,
}

/// One profile being symbolized on a worker thread.
pub struct SymbolJob {
    /// The profile given.
    input: Arc<Profile>,
    /// The named copy and the report, once done.
    rx: Receiver<(Profile, Report)>,
    /// When it started, for the spinner.
    pub started: Instant,
}

impl Symbols {
    /// Symbolization from `sources` (nothing when it names none).
    pub fn new(sources: SymbolSources) -> Self {
        Self {
            sources: sources.is_configured().then(|| Arc::new(sources)),
            ..Self::default()
        }
    }

    /// The run under way.
    pub fn job(&self) -> Option<&SymbolJob> {
        self.job.as_ref()
    }

    /// Starts naming `profile`, unless there is nothing to name it from or it was
    /// handled already. With `sync`, runs on this thread (tests).
    pub fn start(&mut self, profile: &Arc<Profile>, sync: bool) {
        let Some(sources) = self.sources.clone() else {
            return;
        };
        let seen = self
            .handled
            .iter()
            .any(|h| std::ptr::eq(h.as_ptr(), Arc::as_ptr(profile)));
        if seen {
            return;
        }
        self.handled = vec![Arc::downgrade(profile)];
        let (tx, rx) = mpsc::channel();
        let input = Arc::clone(profile);
        let mut copy = (**profile).clone();
        let work = move || {
            let report = symbolize(&mut copy, &sources);
            let _ = tx.send((copy, report));
        };
        if sync {
            work();
        } else if std::thread::Builder::new()
            .name("flint-symbols".into())
            .spawn(work)
            .is_err()
        {
            return;
        }
        self.job = Some(SymbolJob {
            input,
            rx,
            started: Instant::now(),
        });
    }

    /// Stops waiting for the run under way: the view keeps its addresses (the worker
    /// ends on its own, within debuginfod's timeout).
    pub fn cancel(&mut self) -> bool {
        self.job.take().is_some()
    }

    /// The named profile, once the run is done, if it named anything and `shown` is
    /// still the profile it was given.
    pub fn poll(&mut self, shown: Option<&Arc<Profile>>) -> Option<Arc<Profile>> {
        let job = self.job.as_ref()?;
        let (named, report) = match job.rx.try_recv() {
            Ok(done) => done,
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => {
                self.job = None;
                return None;
            }
        };
        let input = Arc::clone(&job.input);
        self.job = None;
        let useful = report.named_total() > 0;
        self.report = Some(report);
        if !useful || !shown.is_some_and(|s| Arc::ptr_eq(s, &input)) {
            return None;
        }
        let named = Arc::new(named);
        self.handled.push(Arc::downgrade(&named));
        Some(named)
    }

    /// The status bar's line about names still missing, e.g. "412 addresses unnamed:
    /// libpq.so.5 (412): no symbols on this machine or at debuginfod".
    pub fn unnamed_text(&self) -> Option<String> {
        let report = self.report.as_ref()?;
        let left: usize = report.no_symbols.values().sum();
        if left == 0 {
            return None;
        }
        let binaries: Vec<String> = report
            .no_symbols
            .iter()
            .map(|(b, n)| format!("{b} ({n})"))
            .collect();
        let asked = if self
            .sources
            .as_ref()
            .is_some_and(|s| s.debuginfod.is_some())
        {
            "no symbols on this machine or at debuginfod"
        } else {
            "no symbols on this machine"
        };
        let plural = if left == 1 { "" } else { "es" };
        Some(format!(
            "{left} address{plural} unnamed: {}: {asked}",
            binaries.join(", ")
        ))
    }
}
