//! speedscope's JSON file format (<https://www.speedscope.app/file-format-schema.json>):
//! read into a profile, every profile of the file as the samples of a `thread` label
//! with its name; and a view written as one sampled speedscope profile.

use serde::{Deserialize, Serialize};
use serde_json::Number;

use super::FormatError;
use super::builder::{Builder, FrameName};
use crate::calltree::{CallTree, NodeId};
use crate::frames::{FrameId, FrameTable};
use crate::profile::{LocationId, Profile};

const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// A speedscope file.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct File {
    #[serde(rename = "$schema", default)]
    schema: String,
    shared: Shared,
    profiles: Vec<SsProfile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exporter: Option<String>,
}

#[derive(Debug, Deserialize, Serialize)]
struct Shared {
    frames: Vec<SsFrame>,
}

#[derive(Debug, Deserialize, Serialize)]
struct SsFrame {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    line: Option<Number>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum SsProfile {
    Sampled {
        #[serde(default)]
        name: String,
        unit: String,
        #[serde(rename = "startValue", default = "zero")]
        start_value: Number,
        #[serde(rename = "endValue", default = "zero")]
        end_value: Number,
        samples: Vec<Vec<usize>>,
        weights: Vec<Number>,
    },
    Evented {
        #[serde(default)]
        name: String,
        unit: String,
        #[serde(rename = "startValue", default = "zero")]
        start_value: Number,
        #[serde(rename = "endValue", default = "zero")]
        end_value: Number,
        events: Vec<Event>,
    },
}

#[derive(Debug, Deserialize, Serialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    at: Number,
    frame: usize,
}

impl SsProfile {
    fn name(&self) -> &str {
        match self {
            Self::Sampled { name, .. } | Self::Evented { name, .. } => name,
        }
    }

    fn unit(&self) -> &str {
        match self {
            Self::Sampled { unit, .. } | Self::Evented { unit, .. } => unit,
        }
    }

    fn span(&self) -> f64 {
        match self {
            Self::Sampled {
                start_value,
                end_value,
                ..
            }
            | Self::Evented {
                start_value,
                end_value,
                ..
            } => f64_of(end_value) - f64_of(start_value),
        }
    }

    /// Every number that becomes a sample value (weights; event times).
    fn values(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            Self::Sampled { weights, .. } => Box::new(weights.iter().map(f64_of)),
            Self::Evented { events, .. } => Box::new(events.iter().map(|e| f64_of(&e.at))),
        }
    }
}

/// A missing start or end value.
fn zero() -> Number {
    Number::from(0)
}

/// A JSON number as a float.
fn f64_of(n: &Number) -> f64 {
    n.as_f64().unwrap_or_default()
}

/// Nanoseconds in one `unit`, for the time units speedscope knows.
fn nanos_per(unit: &str) -> Option<f64> {
    match unit {
        "nanoseconds" => Some(1.0),
        "microseconds" => Some(1e3),
        "milliseconds" => Some(1e6),
        "seconds" => Some(1e9),
        _ => None,
    }
}

/// Reads a parsed speedscope file. All its profiles must have one unit; whole-number
/// values are kept in it, and a time unit with fractions becomes nanoseconds. A frame
/// index out of range, a close event that does not close the innermost open frame,
/// time going backwards, or frames left open are errors naming the profile.
pub(crate) fn decode(file: File, input_len: usize) -> Result<Profile, FormatError> {
    let bad = |message: String| FormatError::Speedscope(message);
    let Some(first) = file.profiles.first() else {
        return Err(bad("no profiles".into()));
    };
    let unit = first.unit().to_string();
    if let Some(other) = file.profiles.iter().find(|p| p.unit() != unit) {
        return Err(bad(format!(
            "profiles in different units ({unit}, {}): flint reads one unit per file",
            other.unit()
        )));
    }
    let whole = file
        .profiles
        .iter()
        .flat_map(SsProfile::values)
        .all(|v| v.fract() == 0.0);
    let (scale, sample_type) = match (nanos_per(&unit), whole) {
        (Some(_), true) => (1.0, ("wall", unit.as_str())),
        (Some(n), false) => (n, ("wall", "nanoseconds")),
        (None, _) if unit == "bytes" => (1.0, ("space", "bytes")),
        (None, _) => (1.0, ("samples", "count")),
    };
    let mut b = Builder::new(&[sample_type], 0, input_len);
    let locations: Vec<LocationId> = file
        .shared
        .frames
        .iter()
        .map(|f| {
            b.location(FrameName {
                name: &f.name,
                file: f.file.as_deref().unwrap_or(""),
                line: f.line.as_ref().map_or(0, |l| f64_of(l) as i64),
            })
        })
        .collect();
    let value = |v: f64| (v * scale).round() as i64;
    let mut stack: Vec<LocationId> = Vec::new();
    let mut leaf_first: Vec<LocationId> = Vec::new();
    for (n, p) in file.profiles.iter().enumerate() {
        let who = match p.name() {
            "" => format!("profile {n}"),
            name => format!("profile {n} ({name})"),
        };
        let frame = |i: usize| {
            locations.get(i).copied().ok_or_else(|| {
                bad(format!(
                    "{who} names frame {i}, but shared.frames has {}",
                    locations.len()
                ))
            })
        };
        let labels = b.label_set(&[("thread", p.name())][..usize::from(!p.name().is_empty())]);
        match p {
            SsProfile::Sampled {
                samples, weights, ..
            } => {
                if samples.len() != weights.len() {
                    return Err(bad(format!(
                        "{who} has {} samples but {} weights",
                        samples.len(),
                        weights.len()
                    )));
                }
                for (s, w) in samples.iter().zip(weights) {
                    stack.clear();
                    for i in s.iter().rev() {
                        stack.push(frame(*i)?);
                    }
                    b.push(&stack, &[value(f64_of(w))], labels)?;
                }
            }
            SsProfile::Evented { events, .. } => {
                // Open frames, root first, and when the current stack began.
                stack.clear();
                let mut since = events.first().map_or(0.0, |e| f64_of(&e.at));
                for (e_n, e) in events.iter().enumerate() {
                    let at = f64_of(&e.at);
                    if at < since {
                        return Err(bad(format!(
                            "{who}: event {e_n} is at {at}, before the event before it ({since})"
                        )));
                    }
                    if !stack.is_empty() && at > since {
                        leaf_first.clear();
                        leaf_first.extend(stack.iter().rev());
                        b.push(&leaf_first, &[value(at) - value(since)], labels)?;
                    }
                    since = at;
                    let location = frame(e.frame)?;
                    match e.kind.as_str() {
                        "O" => stack.push(location),
                        "C" if stack.last() == Some(&location) => {
                            stack.pop();
                        }
                        "C" => {
                            return Err(bad(format!(
                                "{who}: event {e_n} closes frame {}, which is not the innermost open frame",
                                e.frame
                            )));
                        }
                        other => {
                            return Err(bad(format!(
                                "{who}: event {e_n} is of type `{other}` (not O or C)"
                            )));
                        }
                    }
                }
                if !stack.is_empty() {
                    return Err(bad(format!(
                        "{who} ends with {} frames still open",
                        stack.len()
                    )));
                }
            }
        }
    }
    let longest = file
        .profiles
        .iter()
        .map(SsProfile::span)
        .fold(0.0, f64::max);
    b.set_time(
        0,
        nanos_per(&unit).map_or(0, |n| (longest * n).round() as i64),
    );
    Ok(b.finish())
}

/// speedscope's unit for a pprof unit: its time units and bytes, else `none`.
fn unit_of(pprof_unit: &str) -> &'static str {
    match pprof_unit {
        "nanoseconds" => "nanoseconds",
        "microseconds" => "microseconds",
        "milliseconds" => "milliseconds",
        "seconds" => "seconds",
        "bytes" => "bytes",
        _ => "none",
    }
}

/// The view `tree` of `profile` shows as a speedscope file of one sampled profile,
/// named for the sample type: one sample per stack with a non-zero self value in
/// column `sample_type`, in its unit (speedscope's `none` for a count), frames with
/// their file and line where known.
pub fn encode(
    profile: &Profile,
    tree: &CallTree,
    frames: &FrameTable,
    sample_type: usize,
) -> Vec<u8> {
    let (name, unit) = profile
        .sample_types
        .get(sample_type)
        .map_or(("", ""), |t| (profile.str(t.kind), profile.str(t.unit)));
    let mut index: Vec<Option<usize>> = vec![None; frames.len()];
    let mut shared = Vec::new();
    let mut samples = Vec::new();
    let mut weights = Vec::new();
    for node in 1..tree.len() as NodeId {
        let value = tree
            .self_values_of(node)
            .get(sample_type)
            .copied()
            .unwrap_or(0);
        if value == 0 {
            continue;
        }
        let mut stack = Vec::new();
        let mut at = node;
        while at != CallTree::ROOT {
            let frame: FrameId = tree.frame(at);
            let i = *index[frame as usize].get_or_insert_with(|| {
                let f = frames.get(frame);
                shared.push(SsFrame {
                    name: f.name.clone(),
                    file: (!f.file.is_empty()).then(|| f.file.clone()),
                    line: (f.line != 0).then(|| Number::from(f.line)),
                });
                shared.len() - 1
            });
            stack.push(i);
            at = tree.parent(at);
        }
        stack.reverse();
        samples.push(stack);
        weights.push(value);
    }
    let total = weights.iter().fold(0i64, |sum, w| sum.saturating_add(*w));
    let file = File {
        schema: SCHEMA.into(),
        shared: Shared { frames: shared },
        profiles: vec![SsProfile::Sampled {
            name: name.to_string(),
            unit: unit_of(unit).into(),
            start_value: Number::from(0),
            end_value: Number::from(total),
            samples,
            weights: weights.into_iter().map(Number::from).collect(),
        }],
        name: Some(name.to_string()),
        exporter: Some(concat!("flint@", env!("CARGO_PKG_VERSION")).into()),
    };
    serde_json::to_vec(&file).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<Profile, FormatError> {
        decode(serde_json::from_str(json).expect("JSON"), json.len())
    }

    /// A file of one evented profile `p` in `unit`, frames A and B, with `events`
    /// (`(type, at, frame)`).
    fn evented(unit: &str, events: &[(&str, f64, usize)]) -> String {
        let events: Vec<String> = events
            .iter()
            .map(|(t, at, f)| format!(r#"{{"type": "{t}", "at": {at}, "frame": {f}}}"#))
            .collect();
        format!(
            r#"{{"shared": {{"frames": [{{"name": "A"}}, {{"name": "B"}}]}}, "profiles": [
                {{"type": "evented", "name": "p", "unit": "{unit}", "startValue": 0,
                  "endValue": 10, "events": [{}]}}]}}"#,
            events.join(",")
        )
    }

    #[test]
    fn evented_time_goes_to_the_open_stack_and_fractions_become_nanoseconds() {
        let p = read(&evented(
            "milliseconds",
            &[("O", 0.0, 0), ("O", 1.5, 1), ("C", 2.0, 1), ("C", 4.0, 0)],
        ))
        .expect("a profile");
        assert_eq!(p.sample_type_names(), ["wall/nanoseconds"]);
        assert_eq!(p.samples.values[0], [1_500_000, 500_000, 2_000_000]);
        assert_eq!(p.duration_nanos, 10_000_000);
        let labels: Vec<(&str, String)> = p.sample_labels(0).collect();
        assert_eq!(labels, [("thread", "p".to_string())]);
    }

    #[test]
    fn events_out_of_order_or_left_open_are_errors() {
        let out_of_order = [("O", 0.0, 0), ("O", 1.0, 1), ("C", 2.0, 0)];
        let e = read(&evented("none", &out_of_order)).expect_err("out of order");
        assert_eq!(
            e.to_string(),
            "speedscope file: profile 0 (p): event 2 closes frame 0, which is not the innermost open frame"
        );
        let e = read(&evented("none", &[("O", 0.0, 0), ("O", 1.0, 1)])).expect_err("open");
        assert_eq!(
            e.to_string(),
            "speedscope file: profile 0 (p) ends with 2 frames still open"
        );
        let e = read(&evented("none", &[("O", 2.0, 0), ("C", 1.0, 0)])).expect_err("backwards");
        assert!(e.to_string().contains("event 1 is at 1, before"), "{e}");
    }
}
