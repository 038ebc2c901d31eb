//! The one interface every source of profiles implements: files, a remote server,
//! flint's store, the live recorder.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use profile_model::Profile;

use crate::memory::Lease;
use crate::selector::{ProfileType, Selector};

/// A time range in nanoseconds since the Unix epoch, start inclusive, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// First instant in the range.
    pub start_nanos: i64,
    /// First instant after the range.
    pub end_nanos: i64,
}

impl TimeRange {
    /// Every time there is.
    pub const ALL: TimeRange = TimeRange {
        start_nanos: i64::MIN,
        end_nanos: i64::MAX,
    };

    /// Whether `t` lies in the range.
    pub fn contains(&self, t: i64) -> bool {
        self.start_nanos <= t && t < self.end_nanos
    }
}

/// A series' labels, sorted by name.
pub type Labels = BTreeMap<String, String>;

/// One point of a series: the profiles of one step summed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Start of the step; for a type that is no delta (bytes in use), the time of the
    /// first profile in the step, which alone is shown, as Parca shows levels.
    pub time_nanos: i64,
    /// Sum of the sample type's values, in its unit.
    pub value: i64,
    /// `value` per second of profiled time: CPU nanoseconds per second, samples per
    /// second, over the step's profiles that give a rate. `None` for a type that is no
    /// delta (bytes in use), and for a step of no profile that gives one: none with a
    /// duration, or one of at least a sampling period ([`crate::index::gives_rate`]).
    pub value_per_second: Option<f64>,
    /// Profiled time summed over the step.
    pub duration_nanos: i64,
    /// How many profiles the point stands for: those summed into a step; for a type
    /// that is no delta, 1 plus those of the step it stands in for (Parca's count).
    pub count: u32,
}

/// Values over time of the profiles that share a set of labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The labels (only the `sum_by` ones when summing by labels).
    pub labels: Labels,
    /// Points in time order.
    pub points: Vec<Point>,
}

/// Which profile a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryTime {
    /// The profile(s) taken at exactly this time, merged across series.
    Single(i64),
    /// Every profile in the range, merged.
    Merge(TimeRange),
}

/// Progress of a long query, and the way to cancel it; shared with whoever shows it.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    skipped: Arc<std::sync::Mutex<Vec<String>>>,
    /// The memory the query may hold, when it runs within a budget.
    lease: Option<Arc<Lease>>,
}

impl Progress {
    /// (done, total) units of work so far.
    pub fn get(&self) -> (usize, usize) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    /// Asks the query to stop; it returns [`SourceError::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether cancelling was asked for.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Sets the amount of work.
    pub fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
    }

    /// Counts one unit of work done.
    pub fn step(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a unit of work left out, and why (`path: error`): a file gone or broken
    /// since it was indexed, whose neighbours are merged without it.
    pub fn skip(&self, why: String) {
        if let Ok(mut skipped) = self.skipped.lock() {
            skipped.push(why);
        }
    }

    /// What was left out so far ([`Progress::skip`]), in the order noted.
    pub fn skipped(&self) -> Vec<String> {
        self.skipped.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The same progress, for a query that runs within `lease`'s memory.
    pub fn within(mut self, lease: Arc<Lease>) -> Self {
        self.lease = Some(lease);
        self
    }

    /// Where a long query checks its memory: it may go on while what its threads hold
    /// fits its lease, which grows when it can ([`Lease::checkpoint`]);
    /// [`SourceError::ResourceExhausted`] when it cannot. Always `Ok` outside a budget.
    pub fn checkpoint(&self) -> Result<(), SourceError> {
        match &self.lease {
            Some(lease) => lease
                .checkpoint()
                .map_err(|r| SourceError::ResourceExhausted(r.0)),
            None => Ok(()),
        }
    }
}

/// Why a source could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// Nothing matches the selector in the range.
    #[error("no data for this selection and range")]
    NoData,
    /// The selector or the request is malformed.
    #[error("{0}")]
    InvalidArgument(String),
    /// The query was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The server could not be reached or stopped answering; worth retrying later.
    #[error("server unavailable: {0}")]
    Unavailable(String),
    /// Reading or decoding failed.
    #[error("{0}")]
    Failed(String),
    /// The answer would take more memory than the server's budget gives it now.
    #[error("{0}")]
    ResourceExhausted(String),
}

/// A future returned by a [`ProfileSource`].
pub type SourceFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, SourceError>> + Send + 'a>>;

/// Where profiles come from; every method answers as Parca's query API does.
pub trait ProfileSource: Send + Sync {
    /// The profile types with data in the range.
    fn profile_types(&self, range: TimeRange) -> SourceFuture<'_, Vec<ProfileType>>;

    /// The profile type the profiles in the range show by default, as pprof shows
    /// one profile (its `default_sample_type`, else its last type): the most common
    /// among them. The default knows none (a Parca server does not tell it).
    fn default_type(&self, range: TimeRange) -> SourceFuture<'_, Option<ProfileType>> {
        let _ = range;
        Box::pin(async { Ok(None) })
    }

    /// Label names of the selected series in the range.
    fn labels(&self, selector: Selector, range: TimeRange) -> SourceFuture<'_, Vec<String>>;

    /// Values of label `name` among the selected series in the range.
    fn values(
        &self,
        name: String,
        selector: Selector,
        range: TimeRange,
    ) -> SourceFuture<'_, Vec<String>>;

    /// The selected series over the range, per step of `step_nanos`, summed by the
    /// `sum_by` labels: `None` keeps every distinct label set apart, `Some(vec![])`
    /// sums everything into one series.
    fn query_range(
        &self,
        selector: Selector,
        range: TimeRange,
        step_nanos: i64,
        sum_by: Option<Vec<String>>,
    ) -> SourceFuture<'_, Vec<Series>>;

    /// One profile: a single instant or a merged range of the selected series.
    fn query(
        &self,
        selector: Selector,
        time: QueryTime,
        progress: Progress,
    ) -> SourceFuture<'_, Profile>;

    /// Each profile of the selected series in `range`, apart and in time order (those of
    /// one time merged), for answers over time such as a flame chart. A source that
    /// answers only merges refuses (INVALID_ARGUMENT).
    fn query_each(
        &self,
        selector: Selector,
        range: TimeRange,
        progress: Progress,
    ) -> SourceFuture<'_, Vec<Profile>> {
        let _ = (selector, range, progress);
        Box::pin(async {
            Err(SourceError::InvalidArgument(
                "this source answers merges, not each profile apart".into(),
            ))
        })
    }

    /// What a [`ProfileSource::query`] of `time` would hold, estimated before it runs
    /// from the selected profiles' encoded sizes (a merge of many profiles holds less
    /// than their sum, one profile decoded more); `None` where the source cannot tell.
    fn estimate_bytes(&self, selector: &Selector, time: QueryTime) -> Option<u64> {
        let _ = (selector, time);
        None
    }
}

/// The type to show of `types` (a source's types) when none is asked for, by one rule
/// for the CLI and the window: the source's `default` ([`ProfileSource::default_type`])
/// when it is among them, as pprof shows a profile; else CPU time (a server's CPU
/// profiles, which tells no default), else the first type.
pub fn shown_type<'a>(
    types: &'a [ProfileType],
    default: Option<&ProfileType>,
) -> Option<&'a ProfileType> {
    default
        .and_then(|d| types.iter().find(|t| *t == d))
        .or_else(|| types.iter().find(|t| t.sample_type == "cpu"))
        .or_else(|| types.iter().find(|t| t.period_type == "cpu"))
        .or_else(|| types.first())
}

/// Where written profiles go: flint's store, behind `flint serve`'s WriteRaw.
pub trait ProfileSink: Send + Sync {
    /// Stores one pprof (gzipped or not) under `labels`, which must include
    /// `__name__` (the profile name); returns once the profile is durable.
    fn write_raw(&self, labels: Labels, raw_profile: Vec<u8>) -> SourceFuture<'_, ()>;

    /// Stores every profile of one request, or none of them when one is refused (a
    /// WriteRaw is all or nothing, as Parca's is); a sink that decodes them inflates
    /// each to at most `max_inflated_bytes`. The default writes them one after
    /// another, for sinks that cannot do better.
    fn write_raw_all(
        &self,
        profiles: Vec<(Labels, Vec<u8>)>,
        max_inflated_bytes: u64,
    ) -> SourceFuture<'_, ()> {
        let _ = max_inflated_bytes;
        Box::pin(async move {
            for (labels, raw_profile) in profiles {
                self.write_raw(labels, raw_profile).await?;
            }
            Ok(())
        })
    }
}
