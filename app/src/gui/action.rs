//! What the window's panels, menus, keys and dialogs ask for: [`Action`], done in one
//! place ([`crate::gui::app::FlintApp::apply`]).

use std::path::PathBuf;

use capture::{Matcher, QueryTime, RemoteOptions};

use crate::gui::compare::Side;
use crate::gui::shell::dialogs::{Dialog, ExportKind};
use crate::gui::time::selector::SumBy;
use crate::gui::view::colors::ColorMode;

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
    /// Stop waiting for names: the view keeps its addresses.
    CancelSymbols,
    /// Cancel the comparison being computed.
    CancelDiff,
    /// Cancel time mode's indexing and selection queries.
    CancelTimeJob,
    /// Dismiss the error banner.
    DismissError,
    /// Show the window listing what opening reported.
    ShowWarnings,
    /// Esc: back from a source or callers and callees to the flame graph, else show
    /// all of it.
    ResetZoom,
    /// An arrow: move the flame graph's cursor.
    StepCursor(crate::gui::view::keys::Step),
    /// Enter: zoom to the flame graph's cursor.
    ZoomToCursor,
    /// `s`: show the callers and callees of the frame selected or under the pointer.
    ShowSandwich,
    /// `l`: show the source of the frame selected or under the pointer.
    ShowSource,
    /// Backspace: back one zoom level.
    Back,
    /// Ctrl+F: focus the search field.
    FocusSearch,
    /// View → Icicle or Flame.
    SetFlipped(bool),
    /// View → Color by package or by binary.
    SetColorMode(ColorMode),
    /// View → Group by: the label keys whose values are the flame graph's first levels.
    SetGroupBy(Vec<String>),
    /// A file dialog finished.
    Dialog(Dialog),
    /// Compare mode on or off.
    SetCompare(bool),
    /// The compare side the next selection sets.
    CompareTarget(Side),
    /// Plot profile type `index` of the timeline's types.
    PlotType(usize),
    /// Ask for the plotted series again (a preset, a typed range, a zoom that settled).
    LoadSeries,
    /// Select the profiles of a time (a click, a drag).
    Select(QueryTime),
    /// Replace the selector's matchers.
    SetMatchers(Vec<Matcher>),
    /// Add matchers to the selector (Shift+click on a line or a legend entry).
    AddMatchers(Vec<Matcher>),
    /// Apply a selector typed as text.
    SelectorText(String),
    /// Sum the series by other labels.
    SumBy(SumBy),
    /// Merge every profile of the visible range.
    MergeVisible,
    /// Ask for the values of a label (the matcher's autocomplete).
    RequestValues(String),
}
