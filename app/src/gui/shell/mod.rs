//! The window's shell: menus, keyboard and drops, dialogs, the Connect window, the
//! status bar and the panels' sizes.

pub mod connect;
pub mod dialogs;
pub mod input;
pub mod menu_bar;
pub mod panel_size;
pub mod status_bar;
pub mod temp_dirs;

use std::path::PathBuf;

use egui::{Context, ViewportCommand};

use self::connect::ConnectDialog;
use self::dialogs::Dialogs;
use self::panel_size::PanelSizes;

/// The shell's state: what the window tells (error banner, status message, title),
/// its dialogs, the panels' sizes and the temporary folders it made.
#[derive(Default)]
pub struct Shell {
    /// Last error (shown in a red banner).
    pub error: Option<String>,
    /// Last status message and whether it is an error.
    pub message: Option<(String, bool)>,
    /// The file dialogs under way and the window's own prompt for a path.
    pub dialogs: Dialogs,
    /// The Connect dialog and the recent connections.
    pub connect: ConnectDialog,
    /// Whether the window listing what opening a folder reported is open.
    pub warnings_shown: bool,
    /// The sizes the user gave the resizable panels.
    pub panel_sizes: PanelSizes,
    /// The window's title as last set ([`Shell::set_title`]).
    title: String,
    /// The temporary folders this window made (the demo's, a capture's store).
    made: Vec<PathBuf>,
}

impl Shell {
    /// Shows `error` in the error banner.
    pub fn fail(&mut self, error: impl Into<String>) {
        self.error = Some(error.into());
    }

    /// Tells `message` in the status bar (`is_error`: in the error color).
    pub fn tell(&mut self, message: impl Into<String>, is_error: bool) {
        self.message = Some((message.into(), is_error));
    }

    /// Names `what` (a file, a folder, a server) in the window's title.
    pub fn set_title(&mut self, ctx: &Context, what: &str) {
        let title = format!("flint — {what}");
        if title != self.title {
            ctx.send_viewport_cmd(ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    /// The window's title as last set.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// Notes a temporary folder this window made, to be removed when it closes.
    pub fn made(&mut self, dir: PathBuf) {
        if !self.made.contains(&dir) {
            self.made.push(dir);
        }
    }

    /// Removes the temporary folders this window made.
    pub fn remove_made(&mut self) {
        for dir in self.made.drain(..) {
            temp_dirs::remove(&dir);
        }
    }
}
