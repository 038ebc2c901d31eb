//! REPORT_TYPE_CALLGRAPH as Parca's `pkg/query/callgraph.go` (`GenerateCallgraph`,
//! `pruneGraph`) builds it.
//!
//! - Each location stands for one node per line (a location without lines for one
//!   node), outermost line first. Nodes are merged by function name (by location where
//!   there is no function); a node keeps the id and meta of the first line that made
//!   it: `<location id>_<line>`, or the location id for a location without lines.
//! - Walking each stack from the leaf up, every node met adds the sample's value to
//!   its cumulative (once per occurrence), and the nodes of the leaf location add it
//!   to their flat. Between each node and the next one met, an edge from the latter
//!   (source) to the former (target) adds the value too. Within an inlined location
//!   that walk goes outermost first, so there Parca's edges point from the inlined
//!   function to the one it was inlined into; reproduced as is.
//! - Pruning: nodes sorted by cumulative, descending (the nodes' order in the answer);
//!   a node under 0.5% of the total (`NodeCutOffFraction`, a float32) with exactly one
//!   incoming edge and at least one outgoing edge is removed. Its outgoing edges to
//!   nodes that stay are replaced by collapsed edges from the nearest caller that
//!   stays, each with the sum of the cumulatives of the incoming edges walked up to
//!   it; the edges walked and the outgoing edges are removed. Where that walk up
//!   would go round a cycle of removed nodes (Parca then loops forever), those nodes
//!   stay.
//! - Edge ids are random UUIDs in Parca; here they are numbers, unique in the answer.
//! - No diff is reported (the message has no field for it): in a diff the values are
//!   B's. The deprecated `cumulative` and the response's total are the sum of values.

use std::collections::{HashMap, HashSet};

use profile_model::Profile;
use profile_model::profile::LocationId;

use super::symbols::{
    Values, function_message, function_name, function_of, id, location_message, mapping_message,
    mapping_of,
};
use crate::grpc::proto::{metastore, query as pq};

/// The fraction of the total under which a node may be pruned, as Parca's float32.
const NODE_CUT_OFF_FRACTION: f32 = 0.005;

/// The CALLGRAPH report of `profile`.
pub(super) fn callgraph(profile: &Profile, values: Values<'_>) -> pq::Callgraph {
    let mut graph = Graph::default();
    for i in 0..profile.samples.len() {
        graph.add_sample(profile, profile.samples.stack(i), values.value(i));
    }
    graph.cumulative = values.total();
    graph.pruned()
}

/// What nodes are merged by.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Key<'p> {
    Function(&'p str),
    Location(LocationId),
}

/// The graph before pruning.
#[derive(Debug, Default)]
struct Graph<'p> {
    nodes: Vec<pq::CallgraphNode>,
    by_key: HashMap<Key<'p>, usize>,
    edges: Vec<pq::CallgraphEdge>,
    /// Edge index by (source node, target node).
    by_ends: HashMap<(usize, usize), usize>,
    cumulative: i64,
}

impl<'p> Graph<'p> {
    fn add_sample(&mut self, profile: &'p Profile, stack: &[LocationId], value: i64) {
        let mut previous: Option<usize> = None;
        for (depth, &location) in stack.iter().enumerate() {
            for (key, node) in location_nodes(profile, location) {
                let current = self.node(key, node);
                let node = &mut self.nodes[current];
                node.cumulative += value;
                if depth == 0 {
                    node.flat += value;
                }
                if let Some(target) = previous {
                    self.add_edge(current, target, value);
                }
                previous = Some(current);
            }
        }
    }

    /// The index of the node of `key`, made from `node` if new.
    fn node(&mut self, key: Key<'p>, node: pq::CallgraphNode) -> usize {
        *self.by_key.entry(key).or_insert_with(|| {
            self.nodes.push(node);
            self.nodes.len() - 1
        })
    }

    fn add_edge(&mut self, source: usize, target: usize, value: i64) {
        let index = *self.by_ends.entry((source, target)).or_insert_with(|| {
            self.edges.push(pq::CallgraphEdge {
                id: (self.edges.len() + 1).to_string(),
                source: self.nodes[source].id.clone(),
                target: self.nodes[target].id.clone(),
                ..Default::default()
            });
            self.edges.len() - 1
        });
        self.edges[index].cumulative += value;
    }

    /// The graph pruned as Parca prunes it (see the module documentation).
    fn pruned(self) -> pq::Callgraph {
        let mut nodes = self.nodes;
        nodes.sort_by_key(|n| std::cmp::Reverse(n.cumulative));
        let removed = removable(&nodes, &self.edges, self.cumulative);
        let (dropped, collapsed) = collapse(&nodes, &self.edges, &removed);
        let mut edges: Vec<pq::CallgraphEdge> = (self.edges.into_iter().enumerate())
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, e)| e)
            .collect();
        edges.extend(collapsed);
        nodes.retain(|n| !removed.contains(&n.id));
        pq::Callgraph {
            nodes,
            edges,
            cumulative: self.cumulative,
        }
    }
}

/// For the `removed` nodes, in the order of `nodes`: the indexes of the edges to drop,
/// and the collapsed edges that replace them.
fn collapse(
    nodes: &[pq::CallgraphNode],
    edges: &[pq::CallgraphEdge],
    removed: &HashSet<String>,
) -> (HashSet<usize>, Vec<pq::CallgraphEdge>) {
    let incoming = edges_by(edges, |e| &e.target);
    let outgoing = edges_by(edges, |e| &e.source);
    let mut dropped: HashSet<usize> = HashSet::new();
    let mut collapsed = Vec::new();
    for node in nodes.iter().filter(|n| removed.contains(&n.id)) {
        let (parent, cumulative, walked) = kept_caller(&node.id, edges, &incoming, removed);
        let out = outgoing
            .get(node.id.as_str())
            .map_or(&[][..], Vec::as_slice);
        for &edge in out {
            let target = &edges[edge].target;
            if !removed.contains(target) {
                collapsed.push(pq::CallgraphEdge {
                    id: (edges.len() + collapsed.len() + 1).to_string(),
                    source: parent.to_string(),
                    target: target.clone(),
                    cumulative,
                    is_collapsed: true,
                });
            }
        }
        dropped.extend(out.iter().chain(&walked));
    }
    (dropped, collapsed)
}

/// The nodes of one location, outermost line first, with what they merge by.
fn location_nodes(profile: &Profile, location: LocationId) -> Vec<(Key<'_>, pq::CallgraphNode)> {
    let meta = || pq::CallgraphNodeMeta {
        location: Some(location_message(profile, location)),
        mapping: mapping_of(profile, location).map(|m| mapping_message(profile, m)),
        ..Default::default()
    };
    let lines = profile
        .locations
        .get(location as usize)
        .map_or(&[][..], |l| l.lines.as_slice());
    if lines.is_empty() {
        let node = pq::CallgraphNode {
            id: id(location),
            meta: Some(meta()),
            ..Default::default()
        };
        return vec![(Key::Location(location), node)];
    }
    lines
        .iter()
        .rev()
        .map(|line| {
            let function = function_of(profile, line.function);
            let key = function.map_or(Key::Location(location), |f| {
                Key::Function(function_name(profile, f))
            });
            let node = pq::CallgraphNode {
                id: format!("{}_{}", id(location), line.line),
                meta: Some(pq::CallgraphNodeMeta {
                    function: function.map(|f| function_message(profile, f)),
                    line: Some(metastore::Line {
                        function_id: function.map(id).unwrap_or_default(),
                        line: line.line,
                        ..Default::default()
                    }),
                    ..meta()
                }),
                ..Default::default()
            };
            (key, node)
        })
        .collect()
}

/// Edge indexes by the node id `end` gives of each edge.
fn edges_by<'e>(
    edges: &'e [pq::CallgraphEdge],
    end: impl Fn(&'e pq::CallgraphEdge) -> &'e String,
) -> HashMap<&'e str, Vec<usize>> {
    let mut by: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, edge) in edges.iter().enumerate() {
        by.entry(end(edge).as_str()).or_default().push(i);
    }
    by
}

/// The ids of the nodes to remove: under the cut-off, with one incoming and some
/// outgoing edge, and not on a cycle of such nodes.
fn removable(
    nodes: &[pq::CallgraphNode],
    edges: &[pq::CallgraphEdge],
    cumulative: i64,
) -> HashSet<String> {
    let cut_off = cumulative as f64 * f64::from(NODE_CUT_OFF_FRACTION);
    let incoming = edges_by(edges, |e| &e.target);
    let outgoing = edges_by(edges, |e| &e.source);
    let mut removed: HashSet<&str> = nodes
        .iter()
        .filter(|n| (n.cumulative as f64) < cut_off)
        .map(|n| n.id.as_str())
        .filter(|id| incoming.get(id).is_some_and(|e| e.len() == 1) && outgoing.contains_key(id))
        .collect();
    let caller_of: HashMap<&str, &str> = edges
        .iter()
        .filter(|e| removed.contains(e.target.as_str()))
        .map(|e| (e.target.as_str(), e.source.as_str()))
        .collect();
    for id in cycles(&removed, &caller_of) {
        removed.remove(id);
    }
    removed.into_iter().map(str::to_string).collect()
}

/// The nodes on the cycles that walking up from `removed` nodes to their one caller
/// runs into.
fn cycles<'n>(removed: &HashSet<&'n str>, caller_of: &HashMap<&'n str, &'n str>) -> Vec<&'n str> {
    let mut done: HashSet<&str> = HashSet::new();
    let mut found = Vec::new();
    for &start in removed {
        let mut path: Vec<&str> = Vec::new();
        let mut at = start;
        while removed.contains(at) && !done.contains(at) {
            if let Some(i) = path.iter().position(|p| *p == at) {
                found.extend_from_slice(&path[i..]);
                break;
            }
            path.push(at);
            at = caller_of.get(at).copied().unwrap_or_default();
        }
        done.extend(path);
    }
    found
}

/// The nearest caller of `node` that stays, the sum of the cumulatives of the
/// incoming edges walked up to it, and those edges.
fn kept_caller<'e>(
    node: &'e str,
    edges: &'e [pq::CallgraphEdge],
    incoming: &HashMap<&str, Vec<usize>>,
    removed: &HashSet<String>,
) -> (&'e str, i64, Vec<usize>) {
    let (mut at, mut cumulative, mut walked) = (node, 0, Vec::new());
    while let Some(&edge) = incoming.get(at).and_then(|e| e.first()) {
        walked.push(edge);
        cumulative += edges[edge].cumulative;
        at = &edges[edge].source;
        if !removed.contains(at) {
            break;
        }
    }
    (at, cumulative, walked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::reports::testing::profile;

    fn node(id: &str, cumulative: i64) -> pq::CallgraphNode {
        pq::CallgraphNode {
            id: id.to_string(),
            cumulative,
            ..Default::default()
        }
    }

    fn edge(id: &str, source: &str, target: &str) -> pq::CallgraphEdge {
        pq::CallgraphEdge {
            id: id.to_string(),
            source: source.to_string(),
            target: target.to_string(),
            cumulative: 1,
            is_collapsed: false,
        }
    }

    fn ends(graph: &pq::Callgraph) -> Vec<(String, String, i64, bool)> {
        (graph.edges.iter())
            .map(|e| {
                (
                    e.source.clone(),
                    e.target.clone(),
                    e.cumulative,
                    e.is_collapsed,
                )
            })
            .collect()
    }

    /// Parca's `TestPruneCallgraph`: C and D (one caller each) go, B -> E collapses
    /// them; I has two callers and stays.
    #[test]
    fn small_nodes_with_one_caller_collapse_into_an_edge() {
        let cums = [
            ("A", 100),
            ("B", 200),
            ("C", 1),
            ("D", 1),
            ("E", 100),
            ("F", 100),
            ("G", 300),
            ("H", 100),
            ("I", 1),
            ("J", 100),
        ];
        let pairs = [
            ("A", "B"),
            ("B", "C"),
            ("C", "D"),
            ("D", "E"),
            ("B", "F"),
            ("F", "H"),
            ("F", "G"),
            ("H", "I"),
            ("E", "I"),
            ("I", "J"),
        ];
        let graph = Graph {
            nodes: cums.iter().map(|(id, c)| node(id, *c)).collect(),
            edges: (pairs.iter().enumerate())
                .map(|(i, (s, t))| edge(&(i + 1).to_string(), s, t))
                .collect(),
            cumulative: 1000,
            ..Graph::default()
        };
        let pruned = graph.pruned();
        let ids: Vec<&str> = pruned.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["G", "B", "A", "E", "F", "H", "J", "I"]);
        let mut want: Vec<(String, String, i64, bool)> = [
            ("A", "B"),
            ("B", "F"),
            ("F", "H"),
            ("F", "G"),
            ("H", "I"),
            ("E", "I"),
            ("I", "J"),
        ]
        .iter()
        .map(|(s, t)| (s.to_string(), t.to_string(), 1, false))
        .collect();
        want.push(("B".into(), "E".into(), 2, true));
        assert_eq!(ends(&pruned), want);
    }

    #[test]
    fn a_cycle_of_small_nodes_stays_where_parca_would_loop() {
        let graph = Graph {
            nodes: vec![node("X", 1), node("Y", 1), node("Z", 1)],
            edges: vec![
                edge("1", "X", "Y"),
                edge("2", "Y", "X"),
                edge("3", "Y", "Z"),
            ],
            cumulative: 1000,
            ..Graph::default()
        };
        let pruned = graph.pruned();
        assert_eq!(pruned.nodes.len(), 3);
        assert_eq!(pruned.edges.len(), 3);
    }

    /// Each line of an inlined location is a node, walked outermost first, so the edge
    /// inside it points from the inlined function to its caller, as in Parca.
    #[test]
    fn inlined_lines_are_nodes_merged_by_name_with_parcas_edges() {
        let p = profile(
            &[
                (0x10, &["inl", "outer"]),
                (0x20, &["main"]),
                (0x30, &["outer"]),
            ],
            &[(&[0, 1], 4), (&[2, 1], 6)],
        );
        let graph = callgraph(&p, Values::of(&p, false));
        let nodes: Vec<(&str, &str, i64, i64)> = (graph.nodes.iter())
            .map(|n| {
                let name = n.meta.as_ref().and_then(|m| m.function.as_ref());
                (
                    n.id.as_str(),
                    name.map_or("", |f| f.name.as_str()),
                    n.flat,
                    n.cumulative,
                )
            })
            .collect();
        assert_eq!(
            nodes,
            [
                ("1_11", "outer", 10, 10),
                ("2_10", "main", 0, 10),
                ("1_10", "inl", 4, 4)
            ]
        );
        let want = [
            ("1_10", "1_11", 4, false),
            ("2_10", "1_10", 4, false),
            ("2_10", "1_11", 6, false),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(s, t, c, k)| (s.to_string(), t.to_string(), *c, *k))
            .collect();
        assert_eq!(ends(&graph), want);
        assert_eq!(graph.cumulative, 10);
    }
}
