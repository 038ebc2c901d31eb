//! REPORT_TYPE_FLAMEGRAPH_TABLE as Parca's `pkg/query/flamegraph_table.go`
//! (`GenerateFlamegraphTable`, `aggregateByFunctionTable`, `TrimFlamegraph`) builds it.
//!
//! - Tables: `string_table` starts with `""`; `mapping`, `locations` and `function`
//!   are referred to by 1-based indexes (0: none). Entries come in the order first
//!   met, walking the samples in order and each stack from the root: a location's
//!   mapping (its file, then build id strings), then the location, then its lines'
//!   functions in line order (name, file name, system name strings). Ids are left
//!   empty; names live only in the string table (`*_string_index`).
//! - Tree: each location is one node per line, outermost first (one node without
//!   lines), meta holding only `location_index` and `line_index`. A node's children
//!   are told apart by location index and kept sorted by it; every node on a sample's
//!   path adds its value to `cumulative` and its diff to `diff`, and so does the root.
//! - Then from the root down, each node's children are sorted (stably) by function
//!   name (those without lines first, by address) and neighbours with the same
//!   function name are merged: values added, children appended, the first's meta
//!   kept; when the merged nodes' locations have different mappings, the first's
//!   location (shared by every node that names it) loses its mapping index. Parca
//!   sorts with a `<=` comparison, so which of the merged nodes is "first" is up to Go's
//!   sort; here it is the first in location order.
//! - Trim, when `node_trim_threshold` (a percentage) is not 0: a node whose cumulative
//!   is under that fraction (float32) of its parent's is left out with everything
//!   under it, and `trimmed` sums what was left out; table entries that no kept node
//!   uses are blanked (strings empty, locations and functions empty messages), at
//!   their indexes. `untrimmed_total` is the total when trimmed, else 0 (as Parca
//!   leaves it).
//! - `height` is the deepest stack in locations plus one; `total`, the root's
//!   cumulative and the response's total are the sum of values; `unit` the sample
//!   type's. In a diff the values are B's and `diff` the differences.

use std::collections::{HashMap, HashSet};

use profile_model::Profile;
use profile_model::profile::{FunctionId, LocationId, MappingId};

use super::symbols::{Values, function_of, mapping_of, unit};
use crate::grpc::proto::{metastore, query as pq};

/// The FLAMEGRAPH_TABLE report of `profile`, trimmed at `trim` (a fraction, 0: not).
pub(super) fn flamegraph_table(profile: &Profile, values: Values<'_>, trim: f32) -> pq::Flamegraph {
    let mut tables = Tables::new();
    let mut tree = Tree::default();
    let mut height = 0;
    for i in 0..profile.samples.len() {
        let stack = profile.samples.stack(i);
        height = height.max(stack.len());
        tree.add(profile, &mut tables, stack, values.value(i), values.diff(i));
    }
    tree.merge_by_function(&mut tables);
    let root = &tree.nodes[Tree::ROOT];
    let (cumulative, diff) = (root.cumulative, root.diff);
    let mut kept = Kept::default();
    let mut trimmed = 0;
    let children = tree.messages(Tree::ROOT, trim, &tables, &mut kept, &mut trimmed);
    if trim != 0.0 {
        kept.blank_the_rest(&mut tables);
    }
    pq::Flamegraph {
        root: Some(pq::FlamegraphRootNode {
            cumulative,
            diff,
            children,
        }),
        total: cumulative,
        unit: unit(profile),
        height: i32::try_from(height + 1).unwrap_or(i32::MAX),
        string_table: tables.strings,
        locations: tables.locations.entries,
        mapping: tables.mappings.entries,
        function: tables.functions.entries,
        untrimmed_total: if trim != 0.0 { cumulative } else { 0 },
        trimmed,
    }
}

/// The report's tables, and where flint's entries went in them.
#[derive(Debug)]
struct Tables {
    strings: Vec<String>,
    string_index: HashMap<String, u32>,
    mappings: Table<MappingId, metastore::Mapping>,
    locations: Table<LocationId, metastore::Location>,
    functions: Table<FunctionId, metastore::Function>,
}

/// `n` as a table index of the report (indexes are `u32`).
fn index(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// One table of entries referred to by 1-based indexes, each made from a flint entry.
#[derive(Debug)]
struct Table<K, T> {
    entries: Vec<T>,
    index: HashMap<K, u32>,
}

impl<K: std::hash::Hash + Eq, T> Table<K, T> {
    fn new() -> Self {
        Self {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// The index of `key`'s entry, made by `entry` (given `with`) when there is none.
    fn add<W>(&mut self, key: K, with: &mut W, entry: impl FnOnce(&mut W) -> T) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let made = entry(with);
        self.entries.push(made);
        let i = index(self.entries.len());
        self.index.insert(key, i);
        i
    }

    /// The entry at a 1-based index.
    fn at(&self, index: u32) -> Option<&T> {
        self.entries.get((index as usize).checked_sub(1)?)
    }
}

impl Tables {
    fn new() -> Self {
        Self {
            strings: vec![String::new()],
            string_index: HashMap::from([(String::new(), 0)]),
            mappings: Table::new(),
            locations: Table::new(),
            functions: Table::new(),
        }
    }

    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_index.get(s) {
            return i;
        }
        self.strings.push(s.to_string());
        let i = index(self.strings.len() - 1);
        self.string_index.insert(s.to_string(), i);
        i
    }

    fn mapping(&mut self, profile: &Profile, mapping: MappingId) -> u32 {
        let mut table = std::mem::replace(&mut self.mappings, Table::new());
        let i = table.add(mapping, self, |t| {
            let m = (profile.mappings.get(mapping as usize))
                .cloned()
                .unwrap_or_default();
            metastore::Mapping {
                start: m.memory_start,
                limit: m.memory_limit,
                offset: m.file_offset,
                file_string_index: t.string(profile.str(m.filename)),
                build_id_string_index: t.string(profile.str(m.build_id)),
                ..Default::default()
            }
        });
        self.mappings = table;
        i
    }

    fn function(&mut self, profile: &Profile, function: FunctionId) -> u32 {
        let mut table = std::mem::replace(&mut self.functions, Table::new());
        let i = table.add(function, self, |t| {
            let f = (profile.functions.get(function as usize))
                .copied()
                .unwrap_or_default();
            metastore::Function {
                start_line: f.start_line,
                name_string_index: t.string(profile.str(f.name)),
                filename_string_index: t.string(profile.str(f.filename)),
                system_name_string_index: t.string(profile.str(f.system_name)),
                ..Default::default()
            }
        });
        self.functions = table;
        i
    }

    /// The index of `location`, added with its mapping and functions if new.
    fn location(&mut self, profile: &Profile, location: LocationId) -> u32 {
        let mapping = mapping_of(profile, location).map_or(0, |m| self.mapping(profile, m));
        let mut table = std::mem::replace(&mut self.locations, Table::new());
        let i = table.add(location, self, |t| {
            let loc = (profile.locations.get(location as usize))
                .cloned()
                .unwrap_or_default();
            let lines = (loc.lines.iter())
                .map(|line| metastore::Line {
                    line: line.line,
                    function_index: function_of(profile, line.function)
                        .map_or(0, |f| t.function(profile, f)),
                    ..Default::default()
                })
                .collect();
            metastore::Location {
                address: loc.address,
                mapping_index: mapping,
                lines,
                ..Default::default()
            }
        });
        self.locations = table;
        i
    }

    fn location_at(&self, index: u32) -> Option<&metastore::Location> {
        self.locations.at(index)
    }

    fn function_at(&self, index: u32) -> Option<&metastore::Function> {
        self.functions.at(index)
    }

    fn mapping_at(&self, index: u32) -> Option<&metastore::Mapping> {
        self.mappings.at(index)
    }

    /// What a node sorts and merges by: its class (no location, no lines, no
    /// function, function), then the function's name or else the address.
    fn sort_key(&self, node: &Node) -> (u8, &str, u64) {
        let Some(location) = self.location_at(node.location) else {
            return (0, "", 0);
        };
        if location.lines.is_empty() {
            return (1, "", location.address);
        }
        let function = (location.lines.get(node.line as usize))
            .and_then(|l| self.function_at(l.function_index));
        match function {
            None => (2, "", location.address),
            Some(f) => {
                let name = self.strings.get(f.name_string_index as usize);
                (3, name.map_or("", String::as_str), 0)
            }
        }
    }

    /// Whether two nodes stand for the same function (or the same address, both
    /// without a function); nodes of locations without lines never do.
    fn same_function(&self, a: &Node, b: &Node) -> bool {
        let (ka, kb) = (self.sort_key(a), self.sort_key(b));
        ka.0 >= 2 && ka == kb
    }

    /// The kept node `into` absorbs `from`: where their locations' mappings differ,
    /// `into`'s location loses its mapping.
    fn merge_mappings(&mut self, into: u32, from: u32) {
        let from = self.location_at(from).map(|l| l.mapping_index);
        let Some(into) = (into as usize)
            .checked_sub(1)
            .and_then(|i| self.locations.entries.get_mut(i))
        else {
            return;
        };
        if from.is_some_and(|m| m != into.mapping_index) {
            into.mapping_index = 0;
        }
    }
}

/// One node of the tree; its children are indexes into [`Tree::nodes`].
#[derive(Debug, Clone, Default)]
struct Node {
    location: u32,
    line: u32,
    cumulative: i64,
    diff: i64,
    children: Vec<usize>,
}

/// The flame graph's tree, the root at [`Tree::ROOT`].
#[derive(Debug)]
struct Tree {
    nodes: Vec<Node>,
}

impl Default for Tree {
    fn default() -> Self {
        Self {
            nodes: vec![Node::default()],
        }
    }
}

impl Tree {
    const ROOT: usize = 0;

    /// Adds one sample of `stack` (leaf first).
    fn add(
        &mut self,
        profile: &Profile,
        tables: &mut Tables,
        stack: &[LocationId],
        value: i64,
        diff: i64,
    ) {
        let mut current = Self::ROOT;
        for &location in stack.iter().rev() {
            let index = tables.location(profile, location);
            let lines = tables.location_at(index).map_or(0, |l| l.lines.len());
            for line in (0..lines.max(1)).rev() {
                current = self.child(current, index, line as u32);
                let node = &mut self.nodes[current];
                node.cumulative += value;
                node.diff += diff;
            }
        }
        let root = &mut self.nodes[Self::ROOT];
        root.cumulative += value;
        root.diff += diff;
    }

    /// The child of `parent` at location `location`, made with `line` if new.
    fn child(&mut self, parent: usize, location: u32, line: u32) -> usize {
        let children = &self.nodes[parent].children;
        let at = children.partition_point(|&c| self.nodes[c].location < location);
        if let Some(&c) = children
            .get(at)
            .filter(|&&c| self.nodes[c].location == location)
        {
            return c;
        }
        let new = self.nodes.len();
        self.nodes.push(Node {
            location,
            line,
            ..Node::default()
        });
        self.nodes[parent].children.insert(at, new);
        new
    }

    /// Merges children of the same function, from the root down.
    fn merge_by_function(&mut self, tables: &mut Tables) {
        let mut todo = vec![Self::ROOT];
        while let Some(node) = todo.pop() {
            self.merge_children(node, tables);
            todo.extend_from_slice(&self.nodes[node].children);
        }
    }

    fn merge_children(&mut self, parent: usize, tables: &mut Tables) {
        let mut children = std::mem::take(&mut self.nodes[parent].children);
        children.sort_by(|&a, &b| {
            tables
                .sort_key(&self.nodes[a])
                .cmp(&tables.sort_key(&self.nodes[b]))
        });
        let mut kept: Vec<usize> = Vec::with_capacity(children.len());
        for child in children {
            match kept.last() {
                Some(&last) if tables.same_function(&self.nodes[last], &self.nodes[child]) => {
                    let from = std::mem::take(&mut self.nodes[child]);
                    tables.merge_mappings(self.nodes[last].location, from.location);
                    let into = &mut self.nodes[last];
                    into.cumulative += from.cumulative;
                    into.diff += from.diff;
                    into.children.extend(from.children);
                }
                _ => kept.push(child),
            }
        }
        self.nodes[parent].children = kept;
    }

    /// The messages of `parent`'s children, those under `trim` of the parent's
    /// cumulative left out (their cumulative added to `trimmed`).
    fn messages(
        &self,
        parent: usize,
        trim: f32,
        tables: &Tables,
        kept: &mut Kept,
        trimmed: &mut i64,
    ) -> Vec<pq::FlamegraphNode> {
        let threshold = self.nodes[parent].cumulative as f32 * trim;
        let mut out = Vec::new();
        for &child in &self.nodes[parent].children {
            let node = &self.nodes[child];
            if trim != 0.0 && (node.cumulative as f32) < threshold {
                *trimmed += node.cumulative;
                continue;
            }
            kept.note(tables, node.location);
            out.push(pq::FlamegraphNode {
                meta: Some(pq::FlamegraphNodeMeta {
                    location_index: node.location,
                    line_index: node.line,
                    ..Default::default()
                }),
                cumulative: node.cumulative,
                diff: node.diff,
                children: self.messages(child, trim, tables, kept, trimmed),
            });
        }
        out
    }
}

/// The table entries kept nodes use (0-based).
#[derive(Debug, Default)]
struct Kept {
    strings: HashSet<u32>,
    locations: HashSet<usize>,
    functions: HashSet<usize>,
}

impl Kept {
    /// Notes the location at `index` (1-based), its mapping's strings and its
    /// functions with their strings.
    fn note(&mut self, tables: &Tables, index: u32) {
        let Some(location) = tables.location_at(index) else {
            return;
        };
        self.locations.insert(index as usize - 1);
        if let Some(m) = tables.mapping_at(location.mapping_index) {
            self.strings
                .extend([m.file_string_index, m.build_id_string_index]);
        }
        for line in &location.lines {
            if let Some(f) = tables.function_at(line.function_index) {
                self.functions.insert(line.function_index as usize - 1);
                self.strings.extend([
                    f.name_string_index,
                    f.system_name_string_index,
                    f.filename_string_index,
                ]);
            }
        }
    }

    /// Blanks the entries not kept, in each table with fewer kept than it has.
    fn blank_the_rest(&self, tables: &mut Tables) {
        if self.strings.len() < tables.strings.len() {
            for (i, s) in tables.strings.iter_mut().enumerate() {
                if !self.strings.contains(&index(i)) {
                    s.clear();
                }
            }
        }
        blank_unkept(&mut tables.locations.entries, &self.locations);
        blank_unkept(&mut tables.functions.entries, &self.functions);
    }
}

/// Sets the entries of `table` not in `kept` to empty messages, unless all are kept.
fn blank_unkept<T: Default>(table: &mut [T], kept: &HashSet<usize>) {
    if kept.len() < table.len() {
        for (i, entry) in table.iter_mut().enumerate() {
            if !kept.contains(&i) {
                *entry = T::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::reports::testing::profile;

    /// (depth, location index, line index, cumulative) of every node, depth first.
    fn shape(nodes: &[pq::FlamegraphNode], depth: usize, out: &mut Vec<(usize, u32, u32, i64)>) {
        for n in nodes {
            let meta = n.meta.clone().unwrap_or_default();
            out.push((depth, meta.location_index, meta.line_index, n.cumulative));
            shape(&n.children, depth + 1, out);
        }
    }

    fn graph(trim: f32) -> pq::Flamegraph {
        let p = profile(
            &[
                (0x10, &["a"]),
                (0x20, &["a"]),
                (0x30, &["main"]),
                (0x40, &["b"]),
            ],
            &[(&[0, 2], 3), (&[3, 1, 2], 2), (&[3, 0, 2], 1)],
        );
        flamegraph_table(&p, Values::of(&p, false), trim)
    }

    fn nodes(g: &pq::Flamegraph) -> Vec<(usize, u32, u32, i64)> {
        let mut out = Vec::new();
        shape(&g.root.as_ref().expect("root").children, 1, &mut out);
        out
    }

    #[test]
    fn tables_come_in_the_order_met_and_siblings_merge_by_name() {
        let g = graph(0.0);
        assert_eq!(g.string_table, ["", "/bin/x", "main", "a", "b"]);
        let names: Vec<u32> = g.function.iter().map(|f| f.name_string_index).collect();
        assert_eq!(names, [2, 3, 3 + 1]);
        let addresses: Vec<u64> = g.locations.iter().map(|l| l.address).collect();
        assert_eq!(addresses, [0x30, 0x10, 0x20, 0x40]);
        assert_eq!(g.mapping.len(), 1);
        assert_eq!(g.mapping[0].file_string_index, 1);
        // The two locations of `a` are one node (the first's), and so their children.
        assert_eq!(nodes(&g), [(1, 1, 0, 6), (2, 2, 0, 6), (3, 4, 0, 3)]);
        assert_eq!(
            (g.total, g.height, g.trimmed, g.untrimmed_total),
            (6, 4, 0, 0)
        );
    }

    #[test]
    fn trimming_leaves_out_nodes_under_the_fraction_of_their_parent_and_their_entries() {
        let g = graph(0.6);
        assert_eq!(nodes(&g), [(1, 1, 0, 6), (2, 2, 0, 6)]);
        assert_eq!((g.total, g.trimmed, g.untrimmed_total), (6, 3, 6));
        assert_eq!(g.string_table, ["", "/bin/x", "main", "a", ""]);
        assert_eq!(g.locations[3], metastore::Location::default());
        assert_eq!(g.locations[2], metastore::Location::default());
        assert_eq!(g.function[2], metastore::Function::default());
        assert_eq!(g.locations[1].address, 0x10);
    }

    #[test]
    fn an_inlined_location_is_one_node_per_line_outermost_first() {
        let p = profile(&[(0x10, &["inl", "outer"])], &[(&[0], 5)]);
        let g = flamegraph_table(&p, Values::of(&p, false), 0.0);
        assert_eq!(nodes(&g), [(1, 1, 1, 5), (2, 1, 0, 5)]);
        assert_eq!(g.height, 2);
    }
}
