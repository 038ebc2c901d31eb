//! The timeline's rules for its selector and selection: what opening, a matcher change,
//! a typed selector, a type switch, a pick or a cancel does to time mode's state. The
//! window calls these instead of setting the timeline's fields itself.

use std::sync::mpsc::Sender;
use std::time::Duration;

use capture::{Matcher, ProfileType, Progress, QueryTime, Selector, TimeRange};

use crate::gui::time::queries::instant_answer;
use crate::gui::time::selector::SumBy;
use crate::gui::time::timeline::{Opened, Origin, TimeMsg, Timeline, clamp_to};

impl Timeline {
    /// A timeline for `origin` being opened, and the progress of opening it.
    pub fn opening(origin: Origin) -> (Self, Progress) {
        let mut tl = Self::new(origin);
        let progress = Progress::default();
        tl.indexing = Some(progress.clone());
        (tl, progress)
    }

    /// A timeline of a live capture: nothing to index, `opened` (an empty store that
    /// grows) is taken in as the answer of opening.
    pub fn capture(opened: Opened) -> Self {
        let mut tl = Self::new(Origin::Capture);
        tl.live = true;
        let _ = tl.tx.send(TimeMsg::Indexed(Ok(opened)));
        tl
    }

    /// Where time mode's background work sends its answers.
    pub fn sender(&self) -> Sender<TimeMsg> {
        self.tx.clone()
    }

    /// The answers that came since the last call.
    pub fn take_messages(&self) -> Vec<TimeMsg> {
        self.rx.try_iter().collect()
    }

    /// Whether indexing or a selection's merge runs (the window then repaints to show
    /// its progress).
    pub fn busy(&self) -> bool {
        self.indexing.is_some() || self.querying()
    }

    /// For a server found unavailable: whether to ask it again now (`Some(true)`), or
    /// later (`Some(false)`: the window is to wake up then); `None` when it answers.
    pub fn retry_due(&self, after: Duration) -> Option<bool> {
        let since = self.unavailable_since?;
        Some(since.elapsed() >= after && !self.loading_series && self.indexing.is_none())
    }

    /// The folder shown and what a reload keeps of this time mode, unless it is being
    /// indexed (or is not a folder).
    pub fn reloadable(&self) -> Option<(std::path::PathBuf, Kept)> {
        match (&self.origin, &self.indexing) {
            (Origin::Dir(dir), None) => Some((dir.clone(), self.kept())),
            _ => None,
        }
    }

    /// Keeps `kept` (of the time mode this reload replaces) until the index is in.
    pub fn keep(&mut self, kept: Kept) {
        self.kept = Some(kept);
    }

    /// Takes `matchers` as the selector's, for the plot and the selector row.
    pub fn set_matchers(&mut self, matchers: Vec<Matcher>) {
        self.matchers = matchers;
        self.notice = None;
        if let Some(sel) = self.selector() {
            self.bar.text = sel.to_string();
        }
    }

    /// Shows compare mode's side's `matchers` (another side was chosen): the selector
    /// row's text is theirs, with no error of a text typed for the other side; whether
    /// they differ from those shown (the series are then asked for again).
    pub fn show_side_matchers(&mut self, matchers: Vec<Matcher>) -> bool {
        if matchers == self.matchers {
            return false;
        }
        self.set_matchers(matchers);
        self.bar.text_error = None;
        true
    }

    /// The selector's matchers with `add` (those not there yet).
    pub fn with_matchers(&self, add: Vec<Matcher>) -> Vec<Matcher> {
        let mut matchers = self.matchers.clone();
        for m in add {
            if !matchers.contains(&m) {
                matchers.push(m);
            }
        }
        matchers
    }

    /// A selector typed as text: the index of its profile type and its matchers; an
    /// invalid one (or of a type not here) is refused, the selector row saying why.
    pub fn parse_selector(&mut self, text: &str) -> Option<(usize, Vec<Matcher>)> {
        let parsed = Selector::parse(text).map_err(String::from).and_then(|sel| {
            self.types
                .iter()
                .position(|t| *t == sel.profile_type)
                .map(|i| (i, sel.matchers))
                .ok_or_else(|| format!("no profiles of type {} here", sel.profile_type))
        });
        match parsed {
            Ok(found) => {
                self.bar.text_error = None;
                Some(found)
            }
            Err(e) => {
                self.bar.text_error = Some(e);
                None
            }
        }
    }

    /// Plots profile type `index`: its series are asked for again, and what was
    /// selected (or is being merged) is forgotten.
    pub fn plot_type(&mut self, index: usize) {
        self.type_index = index;
        self.type_changed();
        self.bar.text = self.selector().map(|s| s.to_string()).unwrap_or_default();
    }

    /// Sums the series by `sum_by`.
    pub fn set_sum_by(&mut self, sum_by: SumBy) {
        self.sum_by = sum_by;
    }

    /// What *Merge* selects: every profile of the visible range (cut to the data), of
    /// every series.
    pub fn visible_merge(&mut self) -> QueryTime {
        self.selection_series.clear();
        QueryTime::Merge(clamp_to(self.visible_range(), self.span))
    }

    /// Whether a selection can be asked for (the source is open and has a type).
    pub fn can_select(&self) -> bool {
        self.source.is_some() && self.selector().is_some()
    }

    /// The selection's profile is shown: its time, how many profiles it merged and how
    /// long that took; the name its view gets.
    pub fn show_selection(&mut self, time: QueryTime, profiles: usize, took: Duration) -> String {
        self.selection = Some(time);
        self.selection_profiles = profiles;
        self.selection_took = Some(took);
        self.selection_name(time)
    }

    /// The series of the selection shown, as matchers (given back when compare mode,
    /// whose picks set their own, is left).
    pub fn set_selection_series(&mut self, series: Vec<Matcher>) {
        self.selection_series = series;
    }

    /// Cancels indexing and every selection under way; whether a selection was.
    pub fn cancel_all(&mut self) -> bool {
        self.cancel_jobs();
        let querying = self.querying();
        self.queries.clear();
        querying
    }

    /// A capture's latest interval is followed: `time` is selected on the user's
    /// behalf (a selection of the user's stops the following).
    pub fn follow(&mut self, time: QueryTime) {
        self.live_selection = Some(time);
    }

    /// A new interval of a capture was stored over `range`: the plot grows to it (the
    /// first one tells the profile types); whether the flame graph follows it (the user
    /// selected nothing else).
    pub fn grow(&mut self, range: TimeRange) -> bool {
        let follow = self
            .selection
            .is_none_or(|s| Some(s) == self.live_selection);
        if self.types.is_empty()
            && let Some(source) = self.source.clone()
        {
            // The first interval tells the profile types (the store's index answers at
            // once).
            // A capture's span grows with it: no type's own.
            self.set_types(
                instant_answer(source.profile_types(TimeRange::ALL)),
                Vec::new(),
                instant_answer(source.default_type(TimeRange::ALL)).as_ref(),
            );
            self.bar.text = self.selector().map(|s| s.to_string()).unwrap_or_default();
        }
        self.span.end_nanos = self.span.end_nanos.max(range.end_nanos);
        self.profiles = Some(self.profiles.unwrap_or(0) + 1);
        self.pending_bounds = Some(self.whole_bounds());
        follow
    }

    /// What a reload keeps of this time mode ([`Kept`]).
    pub fn kept(&self) -> Kept {
        let whole = self.whole_bounds();
        let view = self
            .last_view
            .map(|(a, b, _)| (a, b))
            .filter(|&(a, b)| a > whole.0 + 1e-6 || b < whole.1 - 1e-6);
        Kept {
            matchers: self.matchers.clone(),
            sum_by: self.sum_by.clone(),
            profile_type: self.types.get(self.type_index).cloned(),
            hidden: self.hidden.clone(),
            show_all: self.show_all,
            view,
            selection: self.selection,
            selection_series: self.selection_series.clone(),
            selection_profiles: self.selection_profiles,
            selection_took: self.selection_took,
        }
    }

    /// Takes back what a reload kept (once the new index, its span and types, is in):
    /// the type plotted by name where it is still there, and the view unless it showed
    /// everything.
    pub fn restore(&mut self, kept: Kept) {
        if let Some(i) = kept
            .profile_type
            .and_then(|t| self.types.iter().position(|x| *x == t))
        {
            self.type_index = i;
        }
        self.fit_span_to_type();
        self.pending_bounds = Some(kept.view.unwrap_or_else(|| self.whole_bounds()));
        self.matchers = kept.matchers;
        self.sum_by = kept.sum_by;
        self.hidden = kept.hidden;
        self.show_all = kept.show_all;
        self.selection = kept.selection;
        self.selection_series = kept.selection_series;
        self.selection_profiles = kept.selection_profiles;
        self.selection_took = kept.selection_took;
        self.bar.text = self.selector().map(|s| s.to_string()).unwrap_or_default();
    }
}

/// What a reload of a folder keeps of the time mode it replaces
/// ([`crate::gui::app::FlintApp::reload_dir`]): the selector, how series are summed, the
/// type plotted, the legend, the view and the selection shown.
#[derive(Debug, Clone)]
pub struct Kept {
    matchers: Vec<Matcher>,
    sum_by: SumBy,
    profile_type: Option<ProfileType>,
    hidden: std::collections::BTreeSet<String>,
    show_all: bool,
    /// The view's bounds; `None` when it showed everything (the whole new span then).
    view: Option<(f64, f64)>,
    selection: Option<QueryTime>,
    selection_series: Vec<Matcher>,
    selection_profiles: usize,
    selection_took: Option<std::time::Duration>,
}
