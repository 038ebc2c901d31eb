//! File dialogs (open, export) run on their own threads, and writing the current view
//! to a file.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, TryRecvError};
use std::time::{Duration, Instant};

use egui::Context;
use profile_model::codec;
use profile_model::diff::{self, DiffMode};
use profile_model::{Profile, View, export, fold};

use super::app::FlintApp;
use super::loader::{Loaded, Source};

/// A finished file dialog.
pub(super) enum Dialog {
    Open(Option<PathBuf>, Duration),
    Export(Result<Option<String>, String>, Duration),
}

/// Which export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// gzip-compressed pprof.
    Pprof,
    /// Folded stacks text.
    Folded,
}

/// Writes the current view (always top-down, filters applied) to `path`; the message
/// names the file on success.
pub fn export_to(cur: &Loaded, kind: ExportKind, path: &Path) -> Result<String, String> {
    let view = View::new(&cur.profile, &cur.settings.options);
    let tree = view.call_tree(&cur.profile);
    let bytes = match kind {
        ExportKind::Pprof => {
            codec::encode_gzip(&export::to_profile(&tree, &view.frames, &cur.profile))
        }
        ExportKind::Folded => fold::folded(&tree, &view.frames, cur.sample_type).into_bytes(),
    };
    std::fs::write(path, bytes).map_err(|e| format!("export failed: {}: {e}", path.display()))?;
    Ok(format!("exported {}", path.display()))
}

/// Writes B − A ([`diff::difference`]) of the sample type `type_name` to `path` as gzipped
/// pprof; the message names the file on success.
pub fn export_diff_to(
    a: &Profile,
    b: &Profile,
    type_name: &str,
    mode: DiffMode,
    path: &Path,
) -> Result<String, String> {
    let (at, bt) = super::compare::side_types(a, b, type_name);
    let profile =
        diff::difference(a, at, b, bt, mode).map_err(|e| format!("export failed: {e}"))?;
    std::fs::write(path, codec::encode_gzip(&profile))
        .map_err(|e| format!("export failed: {}: {e}", path.display()))?;
    Ok(format!("exported {}", path.display()))
}

impl FlintApp {
    /// File → Export diff: asks for a file and writes B − A there, off the UI thread.
    pub(super) fn export_diff_dialog(&mut self, ctx: &Context) {
        let (Some(a), Some(b)) = (&self.compare.a, &self.compare.b) else {
            self.message = Some(("select A and B first".to_string(), true));
            return;
        };
        let Some(type_name) = self
            .timeline
            .as_ref()
            .and_then(|tl| tl.types.get(tl.type_index))
            .map(|t| t.sample_type.clone())
        else {
            return;
        };
        let (a, b) = (
            std::sync::Arc::clone(&a.profile),
            std::sync::Arc::clone(&b.profile),
        );
        let mode = self.compare.mode;
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let path = rfd::FileDialog::new()
                .set_title("Export the difference B − A")
                .set_file_name("diff.pb.gz")
                .save_file();
            let result = match path {
                Some(path) => export_diff_to(&a, &b, &type_name, mode, &path).map(Some),
                None => Ok(None),
            };
            let _ = tx.send(Dialog::Export(result, started.elapsed()));
            ctx.request_repaint();
        });
        self.dialogs.push(rx);
    }

    pub(super) fn open_dialog(&mut self, ctx: &Context) {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let path = rfd::FileDialog::new()
                .set_title("Open a pprof profile")
                .add_filter("pprof profiles", &["gz", "pb", "pprof", "prof"])
                .add_filter("all files", &["*"])
                .pick_file();
            let _ = tx.send(Dialog::Open(path, started.elapsed()));
            ctx.request_repaint();
        });
        self.dialogs.push(rx);
    }

    pub(super) fn export_dialog(&mut self, ctx: &Context, kind: ExportKind) {
        let Some(cur) = self.current.clone() else {
            self.message = Some(("nothing to export".to_string(), true));
            return;
        };
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let stem = cur
                .name
                .trim_end_matches(".gz")
                .trim_end_matches(".pb")
                .trim_end_matches(".pprof")
                .to_string();
            let file_name = match kind {
                ExportKind::Pprof => format!("{stem}.view.pb.gz"),
                ExportKind::Folded => format!("{stem}.folded"),
            };
            let path = rfd::FileDialog::new()
                .set_title("Export the current view")
                .set_file_name(file_name)
                .save_file();
            let result = match path {
                Some(path) => export_to(&cur, kind, &path).map(Some),
                None => Ok(None),
            };
            let _ = tx.send(Dialog::Export(result, started.elapsed()));
            ctx.request_repaint();
        });
        self.dialogs.push(rx);
    }

    /// Takes the results of finished dialogs: files to open, export messages.
    pub(super) fn poll_dialogs(&mut self) {
        let mut dialogs = std::mem::take(&mut self.dialogs);
        dialogs.retain(|rx| match rx.try_recv() {
            Ok(Dialog::Open(Some(path), _)) => {
                self.pending.push(Source::Path(path));
                false
            }
            Ok(Dialog::Open(None, elapsed)) => {
                if elapsed < Duration::from_millis(400) {
                    self.message = Some((
                        "no file dialog available (no xdg-desktop-portal?): drop a file on the \
                         window or pass it on the command line"
                            .to_string(),
                        true,
                    ));
                }
                false
            }
            Ok(Dialog::Export(result, elapsed)) => {
                match result {
                    Ok(Some(msg)) => self.message = Some((msg, false)),
                    Ok(None) if elapsed < Duration::from_millis(400) => {
                        self.message = Some((
                            "no save dialog available (no xdg-desktop-portal?); use `flint \
                             fold` or the CLI export instead"
                                .to_string(),
                            true,
                        ));
                    }
                    Ok(None) => {}
                    Err(e) => self.message = Some((e, true)),
                }
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => false,
        });
        self.dialogs.append(&mut dialogs);
    }
}
