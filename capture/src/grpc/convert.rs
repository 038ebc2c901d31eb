//! Conversions between flint's types and Parca's messages, and the one mapping between
//! [`SourceError`] and gRPC [`Status`] that both the server and the client use.

use prost_types::{Duration, Timestamp};
use tonic::{Code, Status};

use crate::grpc::proto::{profilestore, query};
use crate::selector::{ProfileType, is_label_name};
use crate::source::{Labels, SourceError, TimeRange};

/// Parca's message for a query that matched nothing (gRPC NotFound).
pub const NO_DATA_MESSAGE: &str = "No data found for the query, try a different query or time range or no data has been written to be queried yet.";

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// A Timestamp for nanoseconds since the Unix epoch (exact for every `i64`).
pub fn timestamp(nanos: i64) -> Timestamp {
    Timestamp {
        seconds: nanos.div_euclid(NANOS_PER_SECOND),
        // In 0..1e9, so it fits.
        nanos: nanos.rem_euclid(NANOS_PER_SECOND) as i32,
    }
}

/// Nanoseconds since the Unix epoch of a Timestamp, clamped to the `i64` range.
pub fn nanos_of(t: &Timestamp) -> i64 {
    let nanos = i128::from(t.seconds) * i128::from(NANOS_PER_SECOND) + i128::from(t.nanos);
    nanos.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// A Duration of `nanos` nanoseconds.
pub fn duration(nanos: i64) -> Duration {
    Duration {
        seconds: nanos / NANOS_PER_SECOND,
        nanos: (nanos % NANOS_PER_SECOND) as i32,
    }
}

/// Nanoseconds of a Duration, clamped to the `i64` range.
pub fn duration_nanos(d: &Duration) -> i64 {
    let nanos = i128::from(d.seconds) * i128::from(NANOS_PER_SECOND) + i128::from(d.nanos);
    nanos.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// A time range from optional bounds; a missing bound is open.
pub fn range_of(start: Option<&Timestamp>, end: Option<&Timestamp>) -> TimeRange {
    TimeRange {
        start_nanos: start.map_or(i64::MIN, nanos_of),
        end_nanos: end.map_or(i64::MAX, nanos_of),
    }
}

/// The time range of a request's bounds, which must both be there, `end` not before
/// `start`; as Parca, both ends are included (a `start` = `end` range is the profiles
/// of that instant). `what` names the request in the error.
pub fn required_range(
    what: &str,
    start: Option<&Timestamp>,
    end: Option<&Timestamp>,
) -> Result<TimeRange, Status> {
    let (Some(start), Some(end)) = (start, end) else {
        return Err(Status::invalid_argument(format!(
            "{what}: start and end are required"
        )));
    };
    let range = range_of(Some(start), Some(end));
    if range.end_nanos < range.start_nanos {
        return Err(Status::invalid_argument(format!(
            "{what}: end must not be before start"
        )));
    }
    Ok(TimeRange {
        end_nanos: range.end_nanos.saturating_add(1),
        ..range
    })
}

/// The inclusive end a request names for flint's half-open `range` (its last
/// nanosecond), as Parca reads request ends.
pub fn inclusive_end(range: TimeRange) -> Timestamp {
    timestamp(range.end_nanos.saturating_sub(1))
}

/// Parca's message for a profile type.
pub fn profile_type_message(t: &ProfileType) -> query::ProfileType {
    query::ProfileType {
        name: t.name.clone(),
        sample_type: t.sample_type.clone(),
        sample_unit: t.sample_unit.clone(),
        period_type: t.period_type.clone(),
        period_unit: t.period_unit.clone(),
        delta: t.delta,
    }
}

/// A profile type from Parca's message.
pub fn profile_type_of(t: query::ProfileType) -> ProfileType {
    ProfileType {
        name: t.name,
        sample_type: t.sample_type,
        sample_unit: t.sample_unit,
        period_type: t.period_type,
        period_unit: t.period_unit,
        delta: t.delta,
    }
}

/// Parca's label set for labels (sorted by name, as [`Labels`] is).
pub fn label_set(labels: &Labels) -> profilestore::LabelSet {
    profilestore::LabelSet {
        labels: labels
            .iter()
            .map(|(name, value)| profilestore::Label {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
    }
}

/// Why the labels of a written profile are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WrittenLabelsError {
    /// Not a valid Prometheus label name.
    #[error("invalid label name {0:?}")]
    InvalidName(String),
    /// A name given twice.
    #[error("duplicate label name {0:?}")]
    Duplicate(String),
    /// No profile name.
    #[error("missing __name__ label")]
    MissingName,
}

/// Labels from Parca's label set, as a store must accept them: valid Prometheus names,
/// none repeated, `__name__` present.
pub fn labels_of_written(
    set: Option<profilestore::LabelSet>,
) -> Result<Labels, WrittenLabelsError> {
    let mut labels = Labels::new();
    for label in set.map(|s| s.labels).unwrap_or_default() {
        if !is_label_name(&label.name) {
            return Err(WrittenLabelsError::InvalidName(label.name));
        }
        if labels.contains_key(&label.name) {
            return Err(WrittenLabelsError::Duplicate(label.name));
        }
        labels.insert(label.name, label.value);
    }
    if !labels.contains_key("__name__") {
        return Err(WrittenLabelsError::MissingName);
    }
    Ok(labels)
}

/// Labels from a label set that a server sent (later duplicates win).
pub fn labels_of(set: Option<profilestore::LabelSet>) -> Labels {
    set.map(|s| s.labels)
        .unwrap_or_default()
        .into_iter()
        .map(|l| (l.name, l.value))
        .collect()
}

/// The gRPC status a server answers for a source's error.
pub fn status_of(error: SourceError) -> Status {
    match error {
        SourceError::NoData => Status::not_found(NO_DATA_MESSAGE),
        SourceError::InvalidArgument(message) => Status::invalid_argument(message),
        SourceError::Cancelled => Status::cancelled("the query was cancelled"),
        SourceError::Unavailable(message) => Status::unavailable(message),
        SourceError::Failed(message) => Status::internal(message),
        SourceError::ResourceExhausted(message) => Status::resource_exhausted(message),
    }
}

/// What went wrong, for a client that got `status` from `server` (its URL); `cap_bytes`
/// is the client's maximum response size, named when the answer exceeded it.
pub fn source_error_of(status: &Status, server: &str, cap_bytes: usize) -> SourceError {
    let message = status.message();
    match status.code() {
        Code::NotFound => SourceError::NoData,
        Code::InvalidArgument => SourceError::InvalidArgument(message.to_string()),
        Code::Unavailable => SourceError::Unavailable(format!("{server}: {message}")),
        Code::DeadlineExceeded => {
            SourceError::Unavailable(format!("{server} did not answer in time: {message}"))
        }
        Code::Cancelled => SourceError::Cancelled,
        Code::Unauthenticated => SourceError::Failed(format!(
            "{server} refused the request as unauthenticated ({message}): give the right bearer token"
        )),
        Code::PermissionDenied => SourceError::Failed(format!(
            "{server} denied permission ({message}): check the bearer token and headers"
        )),
        Code::OutOfRange | Code::ResourceExhausted if message.contains("too large") => {
            SourceError::Failed(format!(
                "the answer from {server} is larger than the maximum response size of {cap_bytes} bytes ({message}); raise the limit or narrow the query"
            ))
        }
        Code::Unknown if message.contains("transport error") => SourceError::Unavailable(format!(
            "{server}: the connection was lost before the answer came ({message})"
        )),
        Code::ResourceExhausted => {
            SourceError::ResourceExhausted(format!("{server} is short of memory: {message}"))
        }
        Code::Unimplemented => {
            SourceError::Failed(format!("{server} does not support this request: {message}"))
        }
        code => SourceError::Failed(format!("{server}: {code:?}: {message}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_at_the_extremes() {
        for nanos in [i64::MIN, -1, 0, 1, 1_700_000_000_123_456_789, i64::MAX] {
            assert_eq!(nanos_of(&timestamp(nanos)), nanos);
        }
        assert_eq!(timestamp(-1).seconds, -1);
        assert_eq!(timestamp(-1).nanos, 999_999_999);
    }

    #[test]
    fn a_connection_lost_is_unavailable_and_a_budget_refusal_exhausted() {
        let lost = Status::unknown("transport error");
        assert!(matches!(
            source_error_of(&lost, "grpc://h:1", 10),
            SourceError::Unavailable(m) if m.contains("connection was lost")
        ));
        let short = Status::resource_exhausted("the server's memory budget of 256 MiB is in use");
        assert!(matches!(
            source_error_of(&short, "grpc://h:1", 10),
            SourceError::ResourceExhausted(m) if m.contains("short of memory") && m.contains("256 MiB")
        ));
        assert_eq!(
            status_of(SourceError::ResourceExhausted("x".into())).code(),
            Code::ResourceExhausted
        );
    }

    #[test]
    fn durations_round_trip() {
        for nanos in [1, 999_999_999, 10_000_000_000, 15_500_000_000] {
            assert_eq!(duration_nanos(&duration(nanos)), nanos);
        }
    }

    #[test]
    fn written_labels_are_checked() {
        let set = |pairs: &[(&str, &str)]| {
            Some(profilestore::LabelSet {
                labels: pairs
                    .iter()
                    .map(|(n, v)| profilestore::Label {
                        name: n.to_string(),
                        value: v.to_string(),
                    })
                    .collect(),
            })
        };
        assert!(labels_of_written(set(&[("__name__", "cpu"), ("job", "x")])).is_ok());
        assert_eq!(
            labels_of_written(set(&[("job", "x")])),
            Err(WrittenLabelsError::MissingName)
        );
        assert!(
            labels_of_written(set(&[("__name__", "a"), ("job", "x"), ("job", "y")]))
                .is_err_and(|e| e.to_string().contains("duplicate"))
        );
        assert!(
            labels_of_written(set(&[("__name__", "a"), ("bad-name", "x")]))
                .is_err_and(|e| e.to_string().contains("invalid label name"))
        );
    }

    #[test]
    fn every_source_error_survives_the_round_trip() {
        for error in [
            SourceError::NoData,
            SourceError::InvalidArgument("bad selector".into()),
            SourceError::Cancelled,
        ] {
            assert_eq!(source_error_of(&status_of(error.clone()), "s", 1), error);
        }
        assert!(matches!(
            source_error_of(&status_of(SourceError::Unavailable("x".into())), "s", 1),
            SourceError::Unavailable(_)
        ));
    }
}
