//! Capture local machine: the recorder runs on its own thread, writes one profile per
//! interval into a store in a temporary directory, and time mode shows that store,
//! growing live — the plot gains a point per interval and, until the user selects
//! something, the flame graph follows the latest interval.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capture::recorder::{Recorder, RecorderOptions, SamplerOptions};
use capture::{Labels, Store, StoreOptions, TimeRange};
use egui::Context;

use crate::gui::time::timeline::{LiveMsg, Opened, TimeMsg, Timeline};

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
    previous: Option<Timeline>,
}

impl Drop for LiveCapture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The store a capture in the window writes into, in `dir`: six hours kept.
pub fn open_store(dir: &Path) -> Result<Arc<Store>, String> {
    Store::open(
        dir,
        StoreOptions {
            retention_nanos: Some(RETENTION.as_nanos() as i64),
            ..StoreOptions::default()
        },
    )
    .map(Arc::new)
    .map_err(|e| format!("cannot capture: {e}"))
}

/// What time mode opens for a capture starting now over `store`: nothing to index
/// (the store is empty and grows as intervals arrive).
pub fn opened(store: Arc<Store>) -> Opened {
    let now = capture::time::now_nanos();
    Opened {
        source: store,
        span: TimeRange {
            start_nanos: now,
            end_nanos: now + INTERVAL.as_nanos() as i64,
        },
        types: Vec::new(),
        default_type: None,
        type_spans: Vec::new(),
        warnings: Vec::new(),
        profiles: Some(0),
    }
}

impl LiveCapture {
    /// Starts capturing the local machine (all processes, 99 Hz, 5-second intervals)
    /// on a thread of its own, writing into `store` (in `dir`) and telling `tx` of
    /// each interval; `previous` is what time mode showed before. Without the
    /// privilege, the message sent says what is missing and how to grant it.
    pub fn start(
        ctx: &Context,
        tx: Sender<TimeMsg>,
        store: Arc<Store>,
        dir: PathBuf,
        previous: Option<Timeline>,
    ) -> Result<Self, String> {
        let options = RecorderOptions {
            sampler: SamplerOptions::interactive(),
            interval: INTERVAL,
            ..RecorderOptions::default()
        };
        let stop = Arc::new(AtomicBool::new(false));
        let status = Arc::new(Mutex::new("capture starting…".to_string()));
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
            .map_err(|e| format!("cannot start the capture thread: {e}"))?;
        Ok(Self {
            stop,
            status,
            dir,
            previous,
        })
    }

    /// What time mode showed before the capture started, while the capture has stored
    /// nothing (taken: it comes back if the capture fails).
    pub fn take_previous(&mut self) -> Option<Timeline> {
        self.previous.take()
    }
}
