//! `Columns`: a perf.data file's events as pprof sample types.
//!
//! Every sample counts 1 in `samples/count`, and its period in its event's column:
//! `cpu/nanoseconds` for `cpu-clock` and `task-clock` (whose periods are nanoseconds),
//! else the event's name counted (`cycles/count`). The event's column is the one
//! `perf report` shows by default (its "Overhead" is the share of the summed periods,
//! so that `-F` recordings, whose periods vary, and `-c` ones weigh right), so it is the
//! last column, the one pprof and flint show unless told otherwise.

use linux_perf_data::AttributeDescription;
use linux_perf_data::linux_perf_event_reader::{
    PerfEventType, SamplingPolicy, SoftwareCounterType,
};

/// Nanoseconds in a second.
const NANOS_PER_SECOND: u64 = 1_000_000_000;

/// The sample types of a file and which column each event's periods go to.
#[derive(Debug)]
pub(super) struct Columns {
    /// (type, unit) of each column, `samples/count` first.
    pub types: Vec<(String, String)>,
    /// Per event (attribute index): its column and its fixed period (`-c`), if any;
    /// `None` for events that sample nothing.
    events: Vec<Option<(usize, Option<u64>)>>,
    /// The period of the last column's event, as pprof's `period`.
    pub period: i64,
}

impl Columns {
    /// The columns of these events.
    pub fn new(attributes: &[AttributeDescription]) -> Self {
        let mut types = vec![("samples".to_string(), "count".to_string())];
        let mut events = Vec::new();
        let mut period = 0;
        for a in attributes {
            let attr = a.attributes();
            // perf's tracking event (`-a` adds one): it samples nothing.
            if matches!(
                attr.type_,
                PerfEventType::Software(SoftwareCounterType::Dummy)
            ) || matches!(attr.sampling_policy, SamplingPolicy::NoSampling)
            {
                events.push(None);
                continue;
            }
            let is_clock = matches!(
                attr.type_,
                PerfEventType::Software(
                    SoftwareCounterType::CpuClock | SoftwareCounterType::TaskClock
                )
            );
            let t = if is_clock {
                ("cpu".to_string(), "nanoseconds".to_string())
            } else {
                let name = a
                    .name()
                    .map_or_else(|| format!("{:?}", attr.type_), base_name);
                (name, "count".to_string())
            };
            let column = types.iter().position(|c| *c == t).unwrap_or_else(|| {
                types.push(t);
                types.len() - 1
            });
            let (fixed, this_period) = match attr.sampling_policy {
                SamplingPolicy::Period(p) => (Some(p.get()), p.get()),
                SamplingPolicy::Frequency(f) if is_clock && f > 0 => (None, NANOS_PER_SECOND / f),
                _ => (None, 0),
            };
            if column == types.len() - 1 {
                period = i64::try_from(this_period).unwrap_or(i64::MAX);
            }
            events.push(Some((column, fixed)));
        }
        Self {
            types,
            events,
            period,
        }
    }

    /// A sample's values: 1 sample, and its period (as recorded, else the event's
    /// fixed one, else 1) in its event's column.
    pub fn values(&self, attr_index: usize, period: Option<u64>) -> Vec<i64> {
        let mut values = vec![0; self.types.len()];
        if let Some(first) = values.first_mut() {
            *first = 1;
        }
        if let Some(&Some((column, fixed))) = self.events.get(attr_index) {
            let weight = period.or(fixed).unwrap_or(1);
            if let Some(v) = values.get_mut(column) {
                *v = i64::try_from(weight).unwrap_or(i64::MAX);
            }
        }
        values
    }
}

/// `cycles` for `cycles:ppp`: the name without perf's modifiers.
fn base_name(name: &str) -> String {
    name.split(':').next().unwrap_or(name).to_string()
}

#[cfg(test)]
mod tests {
    use super::base_name;

    #[test]
    fn modifiers_are_cut_from_event_names() {
        assert_eq!(base_name("cycles:ppp"), "cycles");
        assert_eq!(base_name("cpu-clock"), "cpu-clock");
    }
}
