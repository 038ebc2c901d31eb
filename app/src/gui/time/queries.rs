//! Time mode's queries: the runtime they run on, the series, label values and
//! profile types asked of the source, and a selection's merge. Answers come back to
//! the timeline as [`TimeMsg`]s, which [`Timeline::handle`] takes in.

use std::future::Future;
use std::sync::Arc;

use capture::{ProfileSource, Progress, QueryTime, SourceError, TimeRange};
use egui::Context;

use crate::gui::compare::Side;
use crate::gui::time::timeline::{Opened, Origin, Query, Selected, TimeMsg, Timeline};

/// The answer of a query a local index (files, a store) gives at once, without the
/// network or the query runtime; empty on error.
pub(crate) fn instant_answer<T: Default>(fut: impl Future<Output = Result<T, SourceError>>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .ok()
        .and_then(|rt| rt.block_on(fut).ok())
        .unwrap_or_default()
}

/// The tokio runtime the window runs time mode's queries on (one worker thread),
/// started with the first query.
#[derive(Default)]
pub struct QueryRuntime {
    runtime: Option<tokio::runtime::Runtime>,
    /// Run each query to its end on the UI thread (tests).
    pub sync: bool,
}

impl QueryRuntime {
    /// Runs `fut` (blocking when [`QueryRuntime::sync`]) and sends its message over
    /// `tx`, waking the window; an error says the runtime could not be started.
    pub fn run(
        &mut self,
        ctx: &Context,
        tx: std::sync::mpsc::Sender<TimeMsg>,
        fut: impl Future<Output = TimeMsg> + Send + 'static,
    ) -> Result<(), String> {
        if self.runtime.is_none() {
            self.runtime = Some(capture::runtime(capture::RuntimeUse::Query)?);
        }
        let Some(rt) = &self.runtime else {
            return Ok(());
        };
        if self.sync {
            let _ = tx.send(rt.block_on(fut));
        } else {
            let ctx = ctx.clone();
            rt.spawn(async move {
                let msg = fut.await;
                let _ = tx.send(msg);
                ctx.request_repaint();
            });
        }
        Ok(())
    }
}

impl Timeline {
    /// Asks a server for its profile types over each of `spans` in turn, until one has
    /// some (or the last is asked); the answer comes as [`TimeMsg::Indexed`], over that
    /// span.
    pub fn ask_types(
        &self,
        rt: &mut QueryRuntime,
        ctx: &Context,
        source: Arc<dyn ProfileSource>,
        spans: Vec<TimeRange>,
        progress: Progress,
    ) -> Result<(), String> {
        let widest = spans.last().copied().unwrap_or(self.span);
        rt.run(ctx, self.tx.clone(), async move {
            let mut result = Err(String::new());
            // The next span only when this one had no profiles: an error is the answer.
            for span in spans {
                result = match source.profile_types(span).await {
                    Ok(types) => Ok((span, types)),
                    Err(e @ SourceError::Unavailable(_)) => {
                        return TimeMsg::Unreachable(source, widest, e.to_string());
                    }
                    Err(e) => Err(e.to_string()),
                };
                let empty = matches!(&result, Ok((_, t)) if t.is_empty());
                if !empty || progress.is_cancelled() {
                    break;
                }
            }
            // A Parca server tells none; a source that cannot is no error.
            let default_type = match &result {
                Ok((span, _)) => source.default_type(*span).await.ok().flatten(),
                Err(_) => None,
            };
            TimeMsg::Indexed(result.map(|(span, types)| Opened {
                source,
                span,
                types,
                default_type,
                type_spans: Vec::new(),
                warnings: Vec::new(),
                profiles: None,
            }))
        })
    }

    /// Queries the series of the plotted type and matchers (a server with no types in
    /// the time asked before: its types in this time first).
    pub fn load_series(&mut self, rt: &mut QueryRuntime, ctx: &Context) -> Result<(), String> {
        if self.types.is_empty()
            && matches!(self.origin, Origin::Server(_))
            && let Some(source) = self.source.clone()
        {
            let progress = Progress::default();
            self.indexing = Some(progress.clone());
            let span = self.span;
            return self.ask_types(rt, ctx, source, vec![span], progress);
        }
        let (Some(source), Some(selector)) = (self.source.clone(), self.selector()) else {
            return Ok(());
        };
        let Some(all_series) = self.type_selector() else {
            return Ok(());
        };
        let sum_by = self.sum_by.clone();
        self.series_gen += 1;
        let generation = self.series_gen;
        let span = self.span;
        let (range, step) = self.series_request();
        self.step_nanos = step;
        self.series_covered = range;
        self.loading_series = true;
        // The notice is about the last answer, unless the server is being retried (the
        // notice then stays until it answers).
        if self.unavailable_since.is_none() {
            self.notice = None;
        }
        rt.run(ctx, self.tx.clone(), async move {
            let names = source.labels(all_series, span).await.unwrap_or_default();
            let sum_by = sum_by.resolve(&names);
            let result = source.query_range(selector, range, step, sum_by).await;
            TimeMsg::Series(generation, names, result)
        })
    }

    /// Asks for the values of label `name` (for the autocomplete) unless known or
    /// asked for already.
    pub fn request_values(
        &mut self,
        rt: &mut QueryRuntime,
        ctx: &Context,
        name: &str,
    ) -> Result<(), String> {
        let (Some(source), Some(selector)) = (self.source.clone(), self.type_selector()) else {
            return Ok(());
        };
        if self.values.contains_key(name) {
            return Ok(());
        }
        self.values.insert(name.to_string(), Vec::new());
        let (name, span) = (name.to_string(), self.span);
        rt.run(ctx, self.tx.clone(), async move {
            let values = source
                .values(name.clone(), selector, span)
                .await
                .unwrap_or_default();
            TimeMsg::Values(name, values)
        })
    }

    /// Starts merging the profiles of `time` with the selection's matchers, for
    /// compare mode's side `target` (`None`: the one selection outside it). A new
    /// selection replaces the one under way for the same side only: picking B while A
    /// still merges keeps A. The answer comes as [`TimeMsg::Selected`].
    pub fn start_selection(
        &mut self,
        rt: &mut QueryRuntime,
        ctx: &Context,
        time: QueryTime,
        target: Option<Side>,
    ) -> Result<(), String> {
        let (Some(source), Some(mut selector)) = (self.source.clone(), self.selector()) else {
            return Ok(());
        };
        selector.matchers = self.selection_matchers();
        let side = target.map(|s| (s, selector.matchers.clone()));
        self.forget_queries(|q| q.side == target || q.side.is_none() || target.is_none());
        self.first_view_due = false;
        let progress = Progress::default();
        let id = self.next_query;
        self.next_query += 1;
        self.queries.push(Query {
            id,
            side: target,
            time,
            progress: progress.clone(),
        });
        self.notice = None;
        rt.run(ctx, self.tx.clone(), async move {
            let started = std::time::Instant::now();
            let range = match time {
                QueryTime::Single(t) => TimeRange {
                    start_nanos: t,
                    end_nanos: t.saturating_add(1),
                },
                QueryTime::Merge(r) => r,
            };
            // One point per distinct profile time: the number of profiles merged, asked
            // at the same time as the merge (on a server, two requests in flight).
            let watch = progress.clone();
            let (profile, count) = tokio::join!(
                source.query(selector.clone(), time, progress),
                source.query_range(selector, range, 1, Some(Vec::new()))
            );
            let count: usize = count.map_or(0, |s| s.iter().map(|s| s.points.len()).sum());
            let skipped = watch.skipped();
            let result = profile.map(|p| Selected {
                profile: Box::new(p),
                count: count.saturating_sub(skipped.len()),
                took: started.elapsed(),
                skipped,
            });
            TimeMsg::Selected(id, time, side, result)
        })
    }
}
