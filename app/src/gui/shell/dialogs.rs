//! File dialogs (open, export) run on their own threads, and writing the current view
//! to a file.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use egui::Context;
use profile_model::codec;
use profile_model::diff::{self, DiffMode};
use profile_model::formats::speedscope;
use profile_model::{Profile, View, export, fold};

use crate::gui::action::Action;
use crate::gui::compare::CompareState;
use crate::gui::time::timeline::Timeline;
use crate::gui::view::ProfileView;
use crate::gui::view::loader::Loaded;

/// Writes an export to the path given; its message names the file.
type Writer = Arc<dyn Fn(&Path) -> Result<String, String> + Send + Sync>;

/// A native dialog that returns sooner than this was never shown (rfd returns `None`
/// at once where there is no xdg-desktop-portal and no zenity).
const NO_DIALOG: Duration = Duration::from_millis(400);

/// What a path is asked for.
pub enum Purpose {
    /// A profile, or a directory of profiles, to open.
    Open,
    /// An export, written there by the writer.
    Save(Writer),
}

/// A finished file dialog.
pub enum Dialog {
    /// A path to open was picked.
    Open(PathBuf),
    /// An export was written (its message) or failed; `Ok(None)`: cancelled.
    Done(Result<Option<String>, String>),
    /// No native dialog could be shown: the window asks for the path itself.
    Unavailable(PathPrompt),
}

/// A request for a path: shown as the system's file dialog where there is one, else
/// in the window ([`Dialogs::prompt_window`]) as a field to type the path in.
pub struct PathPrompt {
    title: &'static str,
    purpose: Purpose,
    /// The path as typed; at first the folder flint runs in and, for an export, the
    /// file name the system's dialog offers.
    pub path: String,
    /// Why the last path given was refused.
    pub error: Option<String>,
}

impl PathPrompt {
    /// A request titled `title`; the path starts as `file_name` in the current folder.
    pub(crate) fn new(title: &'static str, purpose: Purpose, file_name: &str) -> Self {
        let folder = std::env::current_dir().unwrap_or_default();
        Self {
            title,
            purpose,
            path: folder.join(file_name).display().to_string(),
            error: None,
        }
    }

    /// Shows the system's dialog (blocking: on a thread of its own).
    fn native(&self) -> Option<PathBuf> {
        let dialog = rfd::FileDialog::new().set_title(self.title);
        match self.purpose {
            Purpose::Open => dialog
                .add_filter(
                    "profiles",
                    &[
                        "gz",
                        "pb",
                        "pprof",
                        "prof",
                        "folded",
                        "txt",
                        "cpuprofile",
                        "json",
                    ],
                )
                .add_filter("all files", &["*"])
                .pick_file(),
            Purpose::Save(_) => {
                let name = Path::new(&self.path).file_name().unwrap_or_default();
                dialog.set_file_name(name.to_string_lossy()).save_file()
            }
        }
    }

    /// What the path picked leads to: the file to open, or the export written there.
    fn finish(&self, path: &Path) -> Dialog {
        match &self.purpose {
            Purpose::Open => Dialog::Open(path.to_path_buf()),
            Purpose::Save(write) => Dialog::Done(write(path).map(Some)),
        }
    }
}

/// The path a user typed: a leading `~` stands for the home folder, as in a shell.
pub fn typed_path(text: &str, home: Option<&Path>) -> PathBuf {
    let text = text.trim();
    match (text.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(text),
    }
}

/// Which export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// gzip-compressed pprof.
    Pprof,
    /// Folded stacks text.
    Folded,
    /// speedscope's JSON, one sampled profile.
    Speedscope,
}

/// Writes the current view (always top-down, filters applied) to `path`; the message
/// names the file on success.
pub fn export_to(cur: &Loaded, kind: ExportKind, path: &Path) -> Result<String, String> {
    let view = View::new(&cur.profile, &cur.settings.options);
    let tree = view.call_tree(&cur.profile);
    let written = match kind {
        ExportKind::Pprof => std::fs::write(
            path,
            codec::encode_gzip(&export::to_profile(&tree, &view.frames, &cur.profile)),
        ),
        // Written line by line: the folded text of a merged day is larger than the
        // view it is made of.
        ExportKind::Folded => std::fs::File::create(path).and_then(|file| {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            fold::write_folded(&tree, &view.frames, cur.sample_type, &mut out)?;
            out.flush()
        }),
        ExportKind::Speedscope => std::fs::write(
            path,
            speedscope::encode(&cur.profile, &tree, &view.frames, cur.sample_type),
        ),
    };
    written.map_err(|e| format!("export failed: {}: {e}", path.display()))?;
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
    let (at, bt) = crate::gui::compare::side_types(a, b, type_name);
    let profile =
        diff::difference(a, at, b, bt, mode).map_err(|e| format!("export failed: {e}"))?;
    std::fs::write(path, codec::encode_gzip(&profile))
        .map_err(|e| format!("export failed: {}: {e}", path.display()))?;
    Ok(format!("exported {}", path.display()))
}

/// The file dialogs under way and the window's own prompt for a path.
#[derive(Default)]
pub struct Dialogs {
    /// The results of the dialogs running on their own threads.
    running: Vec<Receiver<Dialog>>,
    /// The window's prompt for a path, where no system file dialog can be shown.
    pub prompt: Option<PathPrompt>,
}

/// File → Open: asks for a profile or a folder of them.
pub fn open_prompt() -> PathPrompt {
    PathPrompt::new(
        "Open a profile (pprof, folded, .cpuprofile, speedscope) or a folder of them",
        Purpose::Open,
        "",
    )
}

/// The request for where to export the view shown as `kind` (`None` when nothing is
/// shown).
pub fn export_prompt(view: &ProfileView, kind: ExportKind) -> Option<PathPrompt> {
    let cur = view.current().cloned()?;
    let stem = portable_stem(
        cur.name
            .trim_end_matches(".gz")
            .trim_end_matches(".pb")
            .trim_end_matches(".pprof"),
    );
    let file_name = match kind {
        ExportKind::Pprof => format!("{stem}.view.pb.gz"),
        ExportKind::Folded => format!("{stem}.folded"),
        ExportKind::Speedscope => format!("{stem}.speedscope.json"),
    };
    let write: Writer = Arc::new(move |path| export_to(&cur, kind, path));
    Some(PathPrompt::new(
        "Export the current view",
        Purpose::Save(write),
        &file_name,
    ))
}

/// File → Export diff: the request for where to write B − A of the type plotted; an
/// error says what is missing.
pub fn diff_prompt(compare: &CompareState, tl: Option<&Timeline>) -> Result<PathPrompt, String> {
    let (Some(a), Some(b)) = (&compare.a, &compare.b) else {
        return Err("select A and B first".to_string());
    };
    let type_name = tl
        .and_then(|tl| tl.types.get(tl.type_index))
        .map(|t| t.sample_type.clone())
        .ok_or_else(|| "nothing is plotted".to_string())?;
    let (a, b) = (Arc::clone(&a.profile), Arc::clone(&b.profile));
    let mode = compare.mode;
    let write: Writer = Arc::new(move |path| export_diff_to(&a, &b, &type_name, mode, path));
    Ok(PathPrompt::new(
        "Export the difference B − A",
        Purpose::Save(write),
        "diff.pb.gz",
    ))
}

impl Dialogs {
    /// Shows the system's dialog for `prompt` on a thread of its own, and then opens
    /// or writes what was picked there too; where no dialog can be shown, the window
    /// asks for the path itself.
    pub fn ask(&mut self, ctx: &Context, prompt: PathPrompt) {
        self.thread(ctx, move || {
            let started = Instant::now();
            match prompt.native() {
                Some(path) => prompt.finish(&path),
                None if started.elapsed() < NO_DIALOG => Dialog::Unavailable(prompt),
                None => Dialog::Done(Ok(None)),
            }
        });
    }

    /// Runs `work` on a thread of its own; what it ends in is picked up with the
    /// other dialogs' results, the window woken for it.
    fn thread(&mut self, ctx: &Context, work: impl FnOnce() -> Dialog + Send + 'static) {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(work());
            ctx.request_repaint();
        });
        self.running.push(rx);
    }

    /// The results of the dialogs that finished: files to open, export messages, and
    /// the window's prompt where no system dialog could be shown.
    pub fn poll(&mut self) -> Vec<Action> {
        let mut done = Vec::new();
        self.running.retain(|rx| match rx.try_recv() {
            Ok(dialog) => {
                done.push(Action::Dialog(dialog));
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => false,
        });
        done
    }

    /// The window's own prompt for a path, shown where no system dialog is available:
    /// a field with the path, Enter or the button to go on, Escape or Cancel to leave.
    /// An export is written on a thread of its own (it builds its call tree).
    pub fn prompt_window(&mut self, ctx: &Context) -> Option<Action> {
        let prompt = self.prompt.as_mut()?;
        let verb = match prompt.purpose {
            Purpose::Open => "Open",
            Purpose::Save(_) => "Save",
        };
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let path = typed_path(&prompt.path, home.as_deref());
        let mut go = false;
        let mut cancel = false;
        let response = egui::Modal::new(egui::Id::unique("path prompt")).show(ctx, |ui| {
            ui.set_width(520.0);
            ui.heading(prompt.title);
            ui.label("No file dialog is available here (no xdg-desktop-portal): type the path.");
            let edit = ui.add(
                egui::TextEdit::singleline(&mut prompt.path)
                    .desired_width(f32::INFINITY)
                    .id_salt("path prompt field"),
            );
            if !edit.has_focus() && !edit.lost_focus() {
                edit.request_focus();
            }
            go |= edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if let Some(error) = &prompt.error {
                ui.colored_label(ui.visuals().error_fg_color, error);
            } else if matches!(prompt.purpose, Purpose::Save(_)) && path.is_file() {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    "this file exists: Save replaces it",
                );
            }
            ui.horizontal(|ui| {
                go |= ui.button(verb).clicked();
                cancel |= ui.button("Cancel").clicked();
            });
        });
        cancel |= response.should_close();
        if go {
            let refused = match prompt.purpose {
                _ if prompt.path.trim().is_empty() => Some("type a path".to_string()),
                Purpose::Open if !path.exists() => {
                    Some(format!("no such file or directory: {}", path.display()))
                }
                Purpose::Save(_) if path.is_dir() => {
                    Some(format!("a folder: {}; add a file name", path.display()))
                }
                _ => None,
            };
            if refused.is_some() {
                prompt.error = refused;
                return None;
            }
            let prompt = self.prompt.take()?;
            match prompt.purpose {
                Purpose::Open => return Some(Action::OpenPath(path)),
                Purpose::Save(_) => self.thread(ctx, move || prompt.finish(&path)),
            }
        } else if cancel {
            self.prompt = None;
        } else if prompt.error.is_some() && response.response.changed() {
            prompt.error = None;
        }
        None
    }
}

/// `name` (what the window shows: a file's name, or a folder's with the range merged,
/// "day 12:39:09–12:39:18") as a file name a shell takes unquoted and every system
/// accepts: times' colons become dashes, spaces and other marks underscores.
fn portable_stem(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            ':' => '-',
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+') => c,
            _ => '_',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{portable_stem, typed_path};

    #[test]
    fn a_leading_tilde_is_the_home_folder() {
        let home = Some(Path::new("/home/ada"));
        assert_eq!(
            typed_path("~/p/cpu.pb.gz", home),
            PathBuf::from("/home/ada/p/cpu.pb.gz")
        );
        assert_eq!(typed_path(" ~ ", home), PathBuf::from("/home/ada/"));
        assert_eq!(typed_path("~bob/x", home), PathBuf::from("~bob/x"));
        assert_eq!(typed_path("/tmp/~/x", home), PathBuf::from("/tmp/~/x"));
        assert_eq!(typed_path("~/x", None), PathBuf::from("~/x"));
    }

    #[test]
    fn export_names_take_no_quoting() {
        assert_eq!(
            portable_stem("day2000 12:39:09–12:39:18"),
            "day2000_12-39-09_12-39-18"
        );
        assert_eq!(portable_stem("cpu-1"), "cpu-1");
        assert_eq!(portable_stem("a/b\\c \"d\"*?"), "a_b_c__d___");
    }
}
