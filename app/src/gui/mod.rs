//! The desktop window: a flame graph (icicle by default) with a top table, search,
//! filters and export, over profiles loaded and recomputed on background threads.

pub mod action;
pub mod app;
pub mod apply;
pub mod compare;
pub mod live;
pub mod shell;
pub mod symbols;
pub mod time;
pub mod view;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use profile_model::codec::DecodeOptions;

use self::app::FlintApp;
use self::shell::connect;
use self::view::loader::{Job, Settings, Source};
use crate::allocator;

/// The profile shown when the window is opened without a file.
pub const DEMO_NAME: &str = "demo-cpu.pb.gz";
/// Bytes of the bundled demo profile (a real Go CPU profile).
pub const DEMO_BYTES: &[u8] = include_bytes!("../../../assets/demo-cpu.pb.gz");

/// Environment variable for benchmarks: when set, the window closes as soon as the
/// first flame graph is painted, after printing the time since launch on stderr.
pub const EXIT_AFTER_FIRST_FRAME: &str = "FLINT_EXIT_AFTER_FIRST_FRAME";

/// Why the window could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    /// A folder or a server was named beside other inputs.
    #[error("{}: a folder or a server is opened alone; several profile files are merged", .0.display())]
    OpenedAlone(PathBuf),
    /// The window system refused the window (no display, no GL).
    #[error("cannot open a window: {0}")]
    Window(String),
}

/// Opens the window on `initial` (or the bundled demo), naming addresses from
/// `symbols` where it names any source and finding source files under `source_files`,
/// and runs until it is closed.
pub fn run(
    initial: Vec<PathBuf>,
    decode: DecodeOptions,
    symbols: capture::symbolize::SymbolSources,
    source_files: capture::symbolize::source_file::SourceConfig,
) -> Result<(), WindowError> {
    let launched = std::time::Instant::now();
    let kind = |p: &PathBuf| capture::PathKind::of(p);
    if let [_, _, ..] = initial.as_slice()
        && let Some(alone) = initial.iter().find(|p| kind(p) != capture::PathKind::File)
    {
        return Err(WindowError::OpenedAlone(alone.clone()));
    }
    allocator::map_large_blocks();
    let server = match initial.as_slice() {
        [one] if kind(one) == capture::PathKind::Server => Some(one.to_string_lossy().into_owned()),
        _ => None,
    };
    let dir = match initial.as_slice() {
        [one] if self::time::timeline::opens_in_time_mode(one) => Some(one.clone()),
        _ => None,
    };
    let source = match <[PathBuf; 1]>::try_from(initial) {
        Ok([path]) => Source::Path(path),
        Err(paths) if paths.is_empty() => Source::Bytes {
            name: DEMO_NAME.to_string(),
            bytes: Arc::from(DEMO_BYTES),
        },
        Err(paths) => Source::Paths(paths),
    };
    let title = format!(
        "flint — {}",
        server.clone().unwrap_or_else(|| source.name())
    );
    // Start loading now, while the window and its GL context are being created; the
    // job asks for a repaint once the window's context exists.
    let context: Arc<OnceLock<egui::Context>> = Arc::new(OnceLock::new());
    let early_job = (dir.is_none() && server.is_none()).then(|| {
        let context = Arc::clone(&context);
        Job::spawn(source, Settings::default(), decode, move || {
            if let Some(ctx) = context.get() {
                ctx.request_repaint();
            }
        })
    });
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title(title)
            .with_app_id("flint")
            .with_inner_size([1440.0, 900.0])
            .with_min_inner_size([640.0, 400.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "flint",
        options,
        Box::new(move |cc| {
            let _ = context.set(cc.egui_ctx.clone());
            let mut app = FlintApp::new(decode);
            app.symbols = self::symbols::Symbols::new(symbols);
            app.view.source.config = Arc::new(source_files);
            if let Some(stored) = cc.storage.and_then(|s| s.get_string(connect::RECENT_KEY)) {
                app.shell.connect.load_recent(&stored);
            }
            if std::env::var_os(EXIT_AFTER_FIRST_FRAME).is_some() {
                app.view.report_first_frame = Some(launched);
            }
            match (dir, early_job) {
                _ if server.is_some() => {
                    let options = capture::RemoteOptions {
                        bearer_token: connect::env_token(),
                        max_decompressed_bytes: decode.max_decompressed_bytes,
                        ..crate::version::remote_options()
                    };
                    let url = server.clone().unwrap_or_default();
                    app.connect_to(&cc.egui_ctx, &url, options);
                }
                (Some(dir), _) => app.open_dir(&cc.egui_ctx, dir),
                (None, Some(job)) => app.view.adopt_job(job),
                (None, None) => {}
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| WindowError::Window(e.to_string()))
}
