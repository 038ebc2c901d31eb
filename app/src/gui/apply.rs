//! What the window's panels ask for ([`Action`]), and the one place that does it across
//! features ([`FlintApp::apply`]): what opening a path means, what a connection or a
//! capture replaces, where a dialog's result goes.

use std::path::PathBuf;

use capture::{RemoteOptions, ServerUrl};
use egui::Context;

use crate::gui::app::FlintApp;
use crate::gui::shell::dialogs::{self, Dialog, ExportKind};
use crate::gui::view::colors::ColorMode;
use crate::gui::view::loader::Source;

/// Something a panel, a menu, a key or a dialog asks the window to do.
pub enum Action {
    /// File → Open…, Ctrl+O: ask for a profile or a folder of them.
    OpenDialog,
    /// Open what a path names: a folder in time mode, anything else as a profile.
    OpenPath(PathBuf),
    /// File → Demo: a fleet's last hour.
    OpenDemo,
    /// File → Reload folder, F5: index the folder again.
    ReloadFolder,
    /// File → Connect to a server…: show the Connect window.
    ShowConnect,
    /// Connect to the server at the URL (and remember it).
    Connect(String, RemoteOptions),
    /// File → Capture local machine.
    StartCapture,
    /// File → Stop capture.
    StopCapture,
    /// File → Export the current view.
    Export(ExportKind),
    /// File → Export diff (B − A).
    ExportDiff,
    /// Cancel the profile view's job.
    CancelJob,
    /// Cancel the comparison being computed.
    CancelDiff,
    /// Cancel time mode's indexing and selection queries.
    CancelTimeJob,
    /// Dismiss the error banner.
    DismissError,
    /// Show the window listing what opening reported.
    ShowWarnings,
    /// Esc: show the whole flame graph.
    ResetZoom,
    /// Backspace: back one zoom level.
    Back,
    /// Ctrl+F: focus the search field.
    FocusSearch,
    /// View → Icicle or Flame.
    SetFlipped(bool),
    /// View → Color by package or by binary.
    SetColorMode(ColorMode),
    /// A file dialog finished.
    Dialog(Dialog),
}

impl FlintApp {
    /// Does what `action` asks, across features.
    pub fn apply(&mut self, ctx: &Context, action: Action) {
        match action {
            Action::OpenDialog => self.dialogs.ask(ctx, dialogs::open_prompt()),
            Action::OpenPath(path) => self.open_path(ctx, path),
            Action::OpenDemo => self.open_demo(ctx),
            Action::ReloadFolder => self.reload_dir(ctx),
            Action::ShowConnect => self.connect_dialog.open = true,
            Action::Connect(url, options) => self.connect_to(ctx, &url, options),
            Action::StartCapture => self.start_capture(ctx),
            Action::StopCapture => self.stop_capture(),
            Action::Export(kind) => match dialogs::export_prompt(&self.view, kind) {
                Some(prompt) => self.dialogs.ask(ctx, prompt),
                None => self.message = Some(("nothing to export".to_string(), true)),
            },
            Action::ExportDiff => {
                match dialogs::diff_prompt(&self.compare, self.timeline.as_ref()) {
                    Ok(prompt) => self.dialogs.ask(ctx, prompt),
                    Err(e) => self.message = Some((e, true)),
                }
            }
            Action::CancelJob => self.cancel_job(),
            Action::CancelDiff => {
                if self.compare.cancel() {
                    self.message = Some(("cancelled".to_string(), false));
                }
            }
            Action::CancelTimeJob => self.cancel_time_job(),
            Action::DismissError => self.error = None,
            Action::ShowWarnings => self.warnings_shown = true,
            Action::ResetZoom => self.view.reset_zoom(),
            Action::Back => self.view.back(),
            Action::FocusSearch => self.view.focus_search = true,
            Action::SetFlipped(flipped) => self.view.flame.flipped = flipped,
            Action::SetColorMode(mode) => self.view.flame.color_mode = mode,
            Action::Dialog(Dialog::Open(path)) => self.open_path(ctx, path),
            Action::Dialog(Dialog::Done(result)) => match result {
                Ok(Some(msg)) => self.message = Some((msg, false)),
                Ok(None) => {}
                Err(e) => self.message = Some((e, true)),
            },
            Action::Dialog(Dialog::Unavailable(prompt)) => self.dialogs.prompt = Some(prompt),
        }
    }

    /// Does every action of `actions`, in order.
    pub fn apply_all(&mut self, ctx: &Context, actions: Vec<Action>) {
        for action in actions {
            self.apply(ctx, action);
        }
    }

    /// Opens `path` as a dropped file is opened: a directory of profiles in the time
    /// mode, anything else as one profile.
    pub fn open_path(&mut self, ctx: &Context, path: PathBuf) {
        if crate::gui::time::timeline::is_time_dir(&path) {
            self.open_dir(ctx, path);
        } else {
            self.view.open(Source::Path(path));
        }
    }

    /// Connects to the server at `url` in time mode and remembers it.
    pub fn connect_to(&mut self, ctx: &Context, url: &str, options: RemoteOptions) {
        let url = match ServerUrl::parse(url) {
            Ok(u) => u.to_string(),
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        self.connect_dialog.remember(&url);
        self.error = None;
        self.connect(ctx, &url, options);
    }
}
