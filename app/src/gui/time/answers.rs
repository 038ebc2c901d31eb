//! Time mode's answers: what the background work sends back ([`TimeMsg`]) taken into
//! the timeline, and what of it the rest of the window must act on ([`TimeEvent`]).

use std::time::Instant;

use capture::{Matcher, QueryTime, SourceError};

use crate::gui::compare::Side;
use crate::gui::time::axis::date_hms;
use crate::gui::time::lines::{PlotScale, plot_series};
use crate::gui::time::timeline::LiveMsg;
use crate::gui::time::timeline::{NO_DATA, Origin, Selected, TimeMsg, Timeline};

/// What an answer asks of the window beyond the timeline.
pub enum TimeEvent {
    /// The source was opened: its series are to be asked for when it has types
    /// (`has_types`); `fresh` (not a reload, not a capture): the view of what was open
    /// before goes, and the title names `name`.
    Opened {
        /// Whether it was opened anew.
        fresh: bool,
        /// Whether it has profile types (and so series to ask for).
        has_types: bool,
        /// The source's name.
        name: String,
    },
    /// Opening failed: why.
    OpenFailed(String),
    /// What was asked was cancelled.
    Cancelled,
    /// A selection's profile arrived, for compare mode's side (with its matchers) or
    /// for the view.
    Selected(QueryTime, Option<(Side, Vec<Matcher>)>, Selected),
    /// A's merge failed with no B under way: the next pick is A's again.
    NoA,
    /// The first series are in and nothing is selected: the merge of the range in
    /// view is to be shown, until the user picks a point or a range.
    FirstView,
    /// News from a live capture.
    Live(LiveMsg),
}

impl Timeline {
    /// Takes in an answer; what the window must do about it.
    pub fn handle(&mut self, msg: TimeMsg) -> Vec<TimeEvent> {
        let mut events = Vec::new();
        match msg {
            TimeMsg::Indexed(result) => {
                let cancelled = self.indexing.take().is_some_and(|p| p.is_cancelled());
                match result {
                    Ok(_) if cancelled => events.push(TimeEvent::Cancelled),
                    Ok(opened) => {
                        self.opening_took = Some(self.opening_started.elapsed());
                        self.span = opened.span;
                        self.set_types(
                            opened.types,
                            opened.type_spans,
                            opened.default_type.as_ref(),
                        );
                        self.warnings = opened.warnings;
                        self.profiles = opened.profiles;
                        self.pending_bounds = Some(self.whole_bounds());
                        self.failed = None;
                        if self.unavailable_since.take().is_some() {
                            self.notice = None;
                        }
                        self.source = Some(opened.source);
                        let reloaded = self.kept.take();
                        let fresh = self.origin != Origin::Capture && reloaded.is_none();
                        if let Some(kept) = reloaded {
                            self.restore(kept);
                        }
                        let name = self.origin.name();
                        if self.types.is_empty() {
                            self.notice = Some(match self.origin {
                                // A server keeps more than the time asked for.
                                Origin::Server(_) => format!(
                                    "no profiles from {} to {}: a preset or range… asks \
                                     for another time",
                                    date_hms(self.span.start_nanos),
                                    date_hms(self.span.end_nanos),
                                ),
                                _ => format!("no profiles in {name}"),
                            });
                        }
                        events.push(TimeEvent::Opened {
                            fresh,
                            has_types: !self.types.is_empty(),
                            name,
                        });
                    }
                    Err(e) => {
                        self.failed = Some(e.clone());
                        events.push(TimeEvent::OpenFailed(e));
                    }
                }
            }
            TimeMsg::Unreachable(source, span, message) => {
                if !self.indexing.take().is_some_and(|p| p.is_cancelled()) {
                    // Kept, to be asked again over `span`: the plot says why it is
                    // empty meanwhile.
                    self.source = Some(source);
                    if self.types.is_empty() {
                        self.span = span;
                    }
                    self.unavailable_since = Some(Instant::now());
                    self.notice = Some(format!("{message}; retrying"));
                }
            }
            TimeMsg::Series(generation, names, result) => {
                if generation == self.series_gen {
                    self.take_series(names, result);
                    if self.first_view_due
                        && !self.series.is_empty()
                        && self.selection.is_none()
                        && !self.querying()
                    {
                        self.first_view_due = false;
                        events.push(TimeEvent::FirstView);
                    }
                }
            }
            TimeMsg::Values(name, values) => {
                self.values.insert(name, values);
            }
            TimeMsg::Live(msg) => events.push(TimeEvent::Live(msg)),
            TimeMsg::Selected(id, time, side, result) => {
                let Some(at) = self.queries.iter().position(|q| q.id == id) else {
                    // Replaced by a newer selection of its side, or cancelled.
                    return events;
                };
                self.queries.remove(at);
                let a_failed = result.is_err() && matches!(side, Some((Side::A, _)));
                if a_failed && self.query_of(Some(Side::B)).is_none() {
                    // No A after all (no data there, say).
                    events.push(TimeEvent::NoA);
                }
                match result {
                    Ok(got) => events.push(TimeEvent::Selected(time, side, got)),
                    Err(SourceError::NoData) => self.notice = Some(NO_DATA.to_string()),
                    Err(SourceError::Cancelled) => events.push(TimeEvent::Cancelled),
                    Err(e) => self.notice = Some(e.to_string()),
                }
            }
        }
        events
    }

    /// Takes in the series asked for last: plotted, or on a server found unavailable,
    /// the last answer kept and a retry due.
    fn take_series(
        &mut self,
        names: Vec<String>,
        result: Result<Vec<capture::Series>, SourceError>,
    ) {
        self.loading_series = false;
        self.bar.label_names = names;
        match result {
            Ok(series) => {
                if self.unavailable_since.take().is_some() {
                    self.notice = None;
                }
                self.scale = self
                    .types
                    .get(self.type_index)
                    .map_or(PlotScale::Cores, |t| PlotScale::of(t, &series));
                self.set_series(plot_series(series, self.scale));
            }
            Err(e @ SourceError::Unavailable(_)) => {
                // Keep what is shown; try again in a moment.
                self.unavailable_since = Some(Instant::now());
                self.notice = Some(format!("{e}; showing the last answer, retrying"));
            }
            Err(e) => {
                self.set_series(Vec::new());
                self.notice = Some(e.to_string());
            }
        }
    }
}
