//! V8's `.cpuprofile` (`node --cpu-prof`, Chrome DevTools, `Profiler.stop`) read into
//! a profile, as speedscope and DevTools read it: the node tree's paths as stacks,
//! each sample lasting until the next one (its time in `wall/microseconds`, beside a
//! `samples/count` column), `(root)` and `(idle)` left out, and `(garbage collector)`
//! and `(program)` samples placed on top of the stack sampled before them.

use std::collections::HashMap;

use serde::Deserialize;

use super::FormatError;
use super::builder::{Builder, FrameName};
use crate::profile::{LocationId, Profile};
use crate::time_slices;

/// The parts of a `.cpuprofile` that flint reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CpuProfile {
    nodes: Vec<Node>,
    #[serde(default)]
    start_time: f64,
    #[serde(default)]
    end_time: f64,
    #[serde(default)]
    samples: Vec<i64>,
    #[serde(default)]
    time_deltas: Vec<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Node {
    id: i64,
    call_frame: CallFrame,
    #[serde(default)]
    children: Vec<i64>,
    #[serde(default)]
    parent: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallFrame {
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    line_number: i64,
}

/// What a node stands for in a stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `(root)`, `(idle)` and V8's `native dummy.js`: left out of stacks.
    Left,
    /// `(garbage collector)` and `(program)`: on top of the stack before.
    OnTop,
    /// A JavaScript or native function.
    Frame,
}

/// Reads a parsed `.cpuprofile`. A sample or child naming a node id that is not in
/// `nodes`, or a node that is its own ancestor, is an error.
pub(crate) fn decode(p: CpuProfile, input_len: usize) -> Result<Profile, FormatError> {
    let bad = |message: String| FormatError::CpuProfile(message);
    if p.samples.len() != p.time_deltas.len() {
        return Err(bad(format!(
            "{} samples but {} timeDeltas",
            p.samples.len(),
            p.time_deltas.len()
        )));
    }
    let index: HashMap<i64, usize> = p.nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let node_of = |id: i64, what: &str| {
        index
            .get(&id)
            .copied()
            .ok_or_else(|| bad(format!("{what} names node {id}, which is not in nodes")))
    };
    let mut parent: Vec<Option<usize>> = vec![None; p.nodes.len()];
    for (i, n) in p.nodes.iter().enumerate() {
        if let Some(id) = n.parent {
            parent[i] = Some(node_of(id, &format!("node {}", n.id))?);
        }
        for child in &n.children {
            parent[node_of(*child, &format!("node {}", n.id))?] = Some(i);
        }
    }
    let mut b = Builder::new(
        &[("samples", "count"), ("wall", "microseconds")],
        0,
        input_len,
    );
    let kinds: Vec<Kind> = p.nodes.iter().map(|n| kind(&n.call_frame)).collect();
    let names: Vec<String> = p.nodes.iter().map(|n| name(&n.call_frame)).collect();
    let locations: Vec<LocationId> = p
        .nodes
        .iter()
        .zip(&names)
        .map(|(n, name)| {
            b.location(FrameName {
                name,
                file: &n.call_frame.url,
                line: n.call_frame.line_number.saturating_add(1).max(0),
            })
        })
        .collect();
    // Each run of equal samples starts at the time its first sample was taken (never
    // before the run before it) and lasts until the next run starts; the last one
    // until its last sample was taken.
    let (runs, end) = runs(&p.samples, &p.time_deltas);
    // Each run in the time slice it starts in, so that the file is a series over time.
    let span_nanos = ((p.end_time - p.start_time).max(0.0) * 1e3) as u64;
    let width = time_slices::slice_nanos(Some(span_nanos));
    let mut before: Vec<LocationId> = Vec::new(); // the stack before, leaf first
    let mut stack: Vec<LocationId> = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let node = node_of(run.node, "a sample")?;
        stack.clear();
        if kinds[node] == Kind::OnTop {
            match before.iter().position(|l| *l == locations[node]) {
                Some(at) => stack.extend_from_slice(&before[at..]),
                None => {
                    stack.push(locations[node]);
                    stack.extend_from_slice(&before);
                }
            }
        } else {
            let mut at = Some(node);
            let mut steps = 0;
            while let Some(i) = at {
                steps += 1;
                if steps > p.nodes.len() {
                    return Err(bad(format!("node {} is its own ancestor", p.nodes[i].id)));
                }
                if kinds[i] == Kind::Frame {
                    stack.push(locations[i]);
                }
                at = parent[i];
            }
            b.spend(steps)?;
        }
        let until = runs
            .get(r + 1)
            .map_or(end.max(run.start), |next| next.start);
        let micros = (until - run.start).round() as i64;
        let slice = b.time_slice(time_slices::slice_start((run.start * 1e3) as u64, width));
        b.push(&stack, &[run.samples, micros], slice)?;
        std::mem::swap(&mut before, &mut stack);
    }
    let duration = (p.end_time - p.start_time).max(0.0);
    b.set_time(0, (duration * 1e3).round() as i64);
    let mut profile = b.finish();
    profile.period = match p.samples.len() {
        0 => 0,
        n => (duration / n as f64).round() as i64,
    };
    Ok(profile)
}

/// A run of consecutive samples of one node.
#[derive(Debug)]
struct Run {
    node: i64,
    samples: i64,
    /// When its first sample was taken, in microseconds since the profile's start.
    start: f64,
}

/// The runs of `samples`, as speedscope collapses them (a run's start is its first
/// sample's time, or the start of the run before if that was later), and the time of
/// the last sample.
fn runs(samples: &[i64], time_deltas: &[f64]) -> (Vec<Run>, f64) {
    let mut runs: Vec<Run> = Vec::new();
    let mut elapsed = 0.0;
    for (node, delta) in samples.iter().zip(time_deltas) {
        elapsed += delta;
        match runs.last_mut() {
            Some(run) if run.node == *node => run.samples += 1,
            last => {
                let start = last.map_or(elapsed, |l| elapsed.max(l.start));
                runs.push(Run {
                    node: *node,
                    samples: 1,
                    start,
                });
            }
        }
    }
    (runs, elapsed)
}

fn kind(frame: &CallFrame) -> Kind {
    match frame.function_name.as_str() {
        _ if frame.url == "native dummy.js" => Kind::Left,
        "(root)" | "(idle)" => Kind::Left,
        "(garbage collector)" | "(program)" => Kind::OnTop,
        _ => Kind::Frame,
    }
}

/// The frame's name: the function's, or `(anonymous FILE:LINE)` (1-based) for an
/// anonymous function in a script, as speedscope names it.
fn name(frame: &CallFrame) -> String {
    if !frame.function_name.is_empty() {
        return frame.function_name.clone();
    }
    if frame.url.is_empty() {
        return "(anonymous)".into();
    }
    let file = frame.url.rsplit('/').next().unwrap_or(&frame.url);
    format!("(anonymous {file}:{})", frame.line_number.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<Profile, FormatError> {
        decode(serde_json::from_str(json).expect("JSON"), json.len())
    }

    /// `{"id": ID, "callFrame": {"functionName": NAME}, "children": [CHILDREN]}`.
    fn node(id: usize, name: &str, children: &[usize]) -> String {
        let children: Vec<String> = children.iter().map(ToString::to_string).collect();
        format!(
            r#"{{"id": {id}, "callFrame": {{"functionName": "{name}"}}, "children": [{}]}}"#,
            children.join(",")
        )
    }

    #[test]
    fn samples_last_until_the_next_and_gc_sits_on_the_stack_before() {
        let nodes = [
            node(1, "(root)", &[2, 4, 5]),
            node(2, "main", &[3]),
            node(3, "work", &[]),
            node(4, "(garbage collector)", &[]),
            node(5, "(idle)", &[]),
        ];
        let p = read(&format!(
            r#"{{"nodes": [{}], "startTime": 100, "endTime": 200,
                "samples": [3, 3, 4, 5, 2], "timeDeltas": [10, 10, 5, 20, 30]}}"#,
            nodes.join(",")
        ))
        .expect("a profile");
        let stacks: Vec<(Vec<&str>, i64, i64)> = (0..p.samples.len())
            .map(|i| {
                let names = p.samples.stack(i).iter().rev().map(|l| {
                    let f = p.locations[*l as usize].lines[0].function;
                    p.str(p.functions[f as usize].name)
                });
                (
                    names.collect(),
                    p.samples.values[0][i],
                    p.samples.values[1][i],
                )
            })
            .collect();
        assert_eq!(
            stacks,
            [
                (vec!["main", "work"], 2, 15),
                (vec!["main", "work", "(garbage collector)"], 1, 20),
                (vec![], 1, 30),
                (vec!["main"], 1, 0),
            ]
        );
        assert_eq!(p.duration_nanos, 100_000);
    }

    #[test]
    fn a_cycle_of_nodes_is_an_error() {
        let nodes = [node(1, "a", &[2]), node(2, "b", &[1])];
        let e = read(&format!(
            r#"{{"nodes": [{}], "samples": [2], "timeDeltas": [1]}}"#,
            nodes.join(",")
        ))
        .expect_err("a cycle");
        assert!(e.to_string().contains("is its own ancestor"), "{e}");
    }

    #[test]
    fn stacks_deeper_than_the_file_allows_are_an_error_not_a_hang() {
        // A chain of 20,000 nodes whose leaf and root take turns: every sample's stack
        // is the whole chain, 20,000 frames a sample from a few bytes.
        let n = 20_000;
        let nodes: Vec<String> = (1..=n)
            .map(|i| node(i, "f", &[i + 1][..usize::from(i < n)]))
            .collect();
        let samples: Vec<String> = (0..4000)
            .map(|i| if i % 2 == 0 { n } else { 1 }.to_string())
            .collect();
        let deltas = vec!["1"; samples.len()];
        let e = read(&format!(
            r#"{{"nodes": [{}], "samples": [{}], "timeDeltas": [{}]}}"#,
            nodes.join(","),
            samples.join(","),
            deltas.join(",")
        ))
        .expect_err("too deep");
        assert_eq!(e, FormatError::TooDeep);
    }
}
