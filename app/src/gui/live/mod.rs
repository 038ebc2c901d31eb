//! Capture local machine: the recorder runs on its own thread, writes one profile per
//! interval into a store in a temporary directory, and time mode shows that store,
//! growing live — the plot gains a point per interval and, until the user selects
//! something, the flame graph follows the latest interval.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capture::recorder::{Recorder, RecorderOptions, SamplerOptions};
use capture::{Labels, ProfileSource, QueryTime, Store, StoreOptions, TimeRange};
use egui::Context;

use crate::gui::app::FlintApp;
use crate::gui::time::jobs::instant_answer;
use crate::gui::time::timeline::{Opened, Origin, TimeMsg};

/// Length of one interval of a capture in the window.
pub const INTERVAL: Duration = Duration::from_secs(5);
/// How much of a capture the store keeps.
const RETENTION: Duration = Duration::from_secs(6 * 3600);

/// A capture running in the background.
pub struct LiveCapture {
    /// Set to stop the recorder (it finishes the interval under way).
    pub stop: Arc<AtomicBool>,
    /// The recorder's last status line (samples, its own CPU use, losses).
    pub status: Arc<Mutex<String>>,
    /// Where the store is.
    pub dir: PathBuf,
    /// What time mode showed before the capture started, brought back if the capture
    /// fails before its first interval (e.g. without the privilege to sample).
    previous: Option<crate::gui::time::timeline::Timeline>,
}

impl Drop for LiveCapture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A message from the capture thread.
pub enum LiveMsg {
    /// An interval was stored: its time range.
    Interval(TimeRange),
    /// The recorder could not start or failed.
    Failed(String),
}

impl FlintApp {
    /// Starts capturing the local machine (all processes, 99 Hz, 5-second intervals).
    /// Without the privilege, the error says what is missing and how to grant it.
    pub fn start_capture(&mut self, ctx: &Context) {
        self.stop_capture();
        // Set aside, not cancelled: shown again if the capture cannot start.
        let previous = self.timeline.take();
        crate::gui::shell::temp_dirs::remove_stale(crate::gui::shell::temp_dirs::CAPTURE);
        let dir = crate::gui::shell::temp_dirs::own_dir(crate::gui::shell::temp_dirs::CAPTURE);
        let _ = std::fs::remove_dir_all(&dir);
        self.made(dir.clone());
        let store = match Store::open(
            &dir,
            StoreOptions {
                retention_nanos: Some(RETENTION.as_nanos() as i64),
                ..StoreOptions::default()
            },
        ) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                self.error = Some(format!("cannot capture: {e}"));
                self.timeline = previous;
                return;
            }
        };
        let options = RecorderOptions {
            sampler: SamplerOptions::interactive(),
            interval: INTERVAL,
            duration: None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let status = Arc::new(Mutex::new("capture starting…".to_string()));
        let now = capture::time::now_nanos();
        // Nothing to index: the store is empty and grows as intervals arrive.
        self.start_timeline(Origin::Capture);
        if let Some(tl) = &mut self.timeline {
            tl.indexing = None;
            tl.live = true;
        }
        let source: Arc<dyn ProfileSource> = store.clone();
        let Some(tl) = &self.timeline else {
            return;
        };
        let tx = tl.tx.clone();
        let _ = tx.send(TimeMsg::Indexed(Ok(Opened {
            source,
            span: TimeRange {
                start_nanos: now,
                end_nanos: now + INTERVAL.as_nanos() as i64,
            },
            types: Vec::new(),
            type_spans: Vec::new(),
            warnings: Vec::new(),
            profiles: Some(0),
        })));
        let (thread_status, thread_stop, ctx) = (status.clone(), stop.clone(), ctx.clone());
        std::thread::Builder::new()
            .name("flint-capture".into())
            .spawn(move || {
                let labels = Labels::from([(
                    "__name__".to_string(),
                    capture::recorder::PROFILE_NAME.to_string(),
                )]);
                // Opened here: the recorder's symbol caches stay on this thread.
                let mut recorder = match Recorder::open(options) {
                    Ok(r) => r,
                    Err(e) => {
                        let why = e.privilege_summary().unwrap_or_else(|| e.to_string());
                        let msg = format!("cannot capture the local machine: {why}");
                        let _ = tx.send(TimeMsg::Live(LiveMsg::Failed(msg)));
                        ctx.request_repaint();
                        return;
                    }
                };
                recorder.use_stop_flag(thread_stop);
                if let Ok(mut s) = thread_status.lock() {
                    *s = format!(
                        "capturing all processes at 99 Hz with {:?}; first profile in {} s",
                        recorder.backend(),
                        INTERVAL.as_secs()
                    );
                }
                while !recorder.is_finished() {
                    let msg = match recorder.next_interval() {
                        Ok(interval) => {
                            if let Ok(mut s) = thread_status.lock() {
                                *s = interval.status_line();
                            }
                            let bytes = profile_model::codec::encode_gzip(&interval.profile);
                            let range = TimeRange {
                                start_nanos: interval.profile.time_nanos,
                                end_nanos: interval.profile.time_nanos
                                    + interval.profile.duration_nanos,
                            };
                            match store.write(labels.clone(), &bytes) {
                                Ok(()) => LiveMsg::Interval(range),
                                Err(e) => LiveMsg::Failed(format!("storing the capture: {e}")),
                            }
                        }
                        Err(e) => LiveMsg::Failed(format!("capture stopped: {e}")),
                    };
                    let failed = matches!(msg, LiveMsg::Failed(_));
                    if tx.send(TimeMsg::Live(msg)).is_err() || failed {
                        break;
                    }
                    ctx.request_repaint();
                }
            })
            .map_err(|e| self.error = Some(format!("cannot start the capture thread: {e}")))
            .ok();
        self.live = Some(LiveCapture {
            stop,
            status,
            dir,
            previous,
        });
    }

    /// The capture failed (the message is shown): it stops, and if it never stored an
    /// interval, the view from before it started comes back.
    pub(crate) fn capture_failed(&mut self, message: String) {
        self.error = Some(message);
        let Some(mut live) = self.live.take() else {
            return;
        };
        let nothing_captured = self
            .timeline
            .as_ref()
            .is_some_and(|tl| tl.origin == Origin::Capture && tl.profiles.unwrap_or(0) == 0);
        if nothing_captured {
            self.timeline = live.previous.take();
        }
    }

    /// Stops the capture (the interval under way is finished and stored).
    pub fn stop_capture(&mut self) {
        if let Some(live) = self.live.take() {
            live.stop.store(true, Ordering::Relaxed);
        }
    }

    /// A new interval was stored: the plot grows to now, and the flame graph follows
    /// the latest interval unless the user selected something else.
    pub(crate) fn live_interval(&mut self, ctx: &Context, range: TimeRange) {
        let Some(tl) = &mut self.timeline else {
            return;
        };
        if let Some(previous) = self.live.as_mut().and_then(|l| l.previous.take()) {
            // The capture works: what was shown before is gone for good.
            previous.cancel_jobs();
        }
        let follow = tl.selection.is_none_or(|s| Some(s) == tl.live_selection);
        if tl.types.is_empty()
            && let Some(source) = tl.source.clone()
        {
            // The first interval tells the profile types (the store's index answers at
            // once).
            // A capture's span grows with it: no type's own.
            tl.set_types(
                instant_answer(source.profile_types(TimeRange::ALL)),
                Vec::new(),
            );
            tl.bar.text = tl.selector().map(|s| s.to_string()).unwrap_or_default();
        }
        tl.span.end_nanos = tl.span.end_nanos.max(range.end_nanos);
        tl.profiles = Some(tl.profiles.unwrap_or(0) + 1);
        tl.pending_bounds = Some(tl.whole_bounds());
        self.load_series(ctx);
        if follow && !self.comparing() {
            if let Some(tl) = &mut self.timeline {
                tl.live_selection = Some(QueryTime::Merge(range));
            }
            self.select_time(ctx, QueryTime::Merge(range));
        }
    }
}
