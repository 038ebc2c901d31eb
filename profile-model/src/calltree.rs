//! The call tree: every distinct stack of a filtered view as a prefix tree of frames,
//! with self values for every sample type.

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::profile::Profile;

/// Index of a node in a [`CallTree`]; [`CallTree::ROOT`] is the synthetic root.
pub type NodeId = u32;

/// A prefix tree of stacks, root first. Node ids are assigned parents before children,
/// and children are ordered by frame name (as classic flame graphs are).
#[derive(Debug, Clone, Default)]
pub struct CallTree {
    frame: Vec<FrameId>,
    parent: Vec<NodeId>,
    depth: Vec<u32>,
    /// `self_values[node * types + t]`.
    self_values: Vec<i64>,
    types: usize,
    child_offsets: Vec<u32>,
    child_ids: Vec<NodeId>,
}

/// Builds a tree node by node; children are looked up by (parent, frame).
struct Builder {
    tree: CallTree,
    index: FxHashMap<(NodeId, FrameId), NodeId>,
}

impl Builder {
    fn new(types: usize) -> Self {
        Self {
            tree: CallTree {
                frame: vec![CallTree::NO_FRAME],
                parent: vec![CallTree::ROOT],
                depth: vec![0],
                self_values: vec![0; types],
                types,
                ..CallTree::default()
            },
            index: FxHashMap::default(),
        }
    }

    fn child(&mut self, parent: NodeId, frame: FrameId) -> NodeId {
        let tree = &mut self.tree;
        *self.index.entry((parent, frame)).or_insert_with(|| {
            let id = tree.frame.len() as NodeId;
            tree.frame.push(frame);
            tree.parent.push(parent);
            tree.depth.push(tree.depth[parent as usize] + 1);
            tree.self_values.extend(std::iter::repeat_n(0, tree.types));
            id
        })
    }

    fn add(&mut self, node: NodeId, values: impl Iterator<Item = i64>) {
        let start = node as usize * self.tree.types;
        for (slot, v) in self.tree.self_values[start..].iter_mut().zip(values) {
            *slot += v;
        }
    }

    fn finish(mut self, frames: &FrameTable) -> CallTree {
        drop(self.index);
        let tree = &mut self.tree;
        let n = tree.frame.len();
        let mut counts = vec![0u32; n + 1];
        for &p in &tree.parent[1..] {
            counts[p as usize + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut child_ids = vec![0; n.saturating_sub(1)];
        for (node, &p) in tree.parent.iter().enumerate().skip(1) {
            child_ids[fill[p as usize] as usize] = node as NodeId;
            fill[p as usize] += 1;
        }
        for p in 0..n {
            let range = counts[p] as usize..counts[p + 1] as usize;
            child_ids[range].sort_by(|a, b| {
                let fa = frames.get(tree.frame[*a as usize]);
                let fb = frames.get(tree.frame[*b as usize]);
                fa.name.cmp(&fb.name).then(a.cmp(b))
            });
        }
        tree.child_offsets = counts;
        tree.child_ids = child_ids;
        self.tree
    }
}

impl CallTree {
    /// The synthetic root node, parent of every stack's outermost frame.
    pub const ROOT: NodeId = 0;
    /// The frame id of the root node.
    pub const NO_FRAME: FrameId = FrameId::MAX;

    /// Builds the tree of the samples that `filter` keeps.
    pub fn build(profile: &Profile, frames: &FrameTable, filter: &SampleFilter) -> Self {
        let types = profile.sample_types.len();
        let mut builder = Builder::new(types);
        let mut path: Vec<FrameId> = Vec::new();
        for i in 0..profile.samples.len() {
            if !filter.keeps(profile, i) {
                continue;
            }
            path.clear();
            for &loc in profile.samples.stack(i) {
                path.extend_from_slice(frames.of_location(loc));
            }
            let mut node = Self::ROOT;
            for &f in path.iter().rev() {
                node = builder.child(node, f);
            }
            builder.add(node, profile.samples.values.iter().map(|c| c[i]));
        }
        builder.finish(frames)
    }

    /// The bottom-up (inverted) tree: leaves become roots, callers become children.
    pub fn inverted(&self, frames: &FrameTable) -> Self {
        let mut builder = Builder::new(self.types);
        for node in 1..self.len() as NodeId {
            let values = self.self_values_of(node);
            if values.iter().all(|v| *v == 0) {
                continue;
            }
            let mut target = Self::ROOT;
            let mut cursor = node;
            while cursor != Self::ROOT {
                target = builder.child(target, self.frame(cursor));
                cursor = self.parent(cursor);
            }
            builder.add(target, values.iter().copied());
        }
        builder.finish(frames)
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.frame.len()
    }

    /// Whether the tree holds only the root.
    pub fn is_empty(&self) -> bool {
        self.frame.len() <= 1
    }

    /// Number of sample types (value columns).
    pub fn sample_types(&self) -> usize {
        self.types
    }

    /// The frame of a node ([`CallTree::NO_FRAME`] for the root).
    pub fn frame(&self, node: NodeId) -> FrameId {
        self.frame[node as usize]
    }

    /// The parent of a node (the root is its own parent).
    pub fn parent(&self, node: NodeId) -> NodeId {
        self.parent[node as usize]
    }

    /// Depth of a node: 0 for the root, 1 for outermost frames.
    pub fn depth(&self, node: NodeId) -> u32 {
        self.depth[node as usize]
    }

    /// Children of a node, ordered by frame name.
    pub fn children(&self, node: NodeId) -> &[NodeId] {
        let n = node as usize;
        &self.child_ids[self.child_offsets[n] as usize..self.child_offsets[n + 1] as usize]
    }

    /// Self values of a node, one per sample type.
    pub fn self_values_of(&self, node: NodeId) -> &[i64] {
        let start = node as usize * self.types;
        &self.self_values[start..start + self.types]
    }

    /// Self value of every node for one sample type (zeros for a type the tree lacks).
    pub fn self_column(&self, sample_type: usize) -> Vec<i64> {
        if sample_type >= self.types {
            return vec![0; self.len()];
        }
        (0..self.len())
            .map(|n| self.self_values[n * self.types + sample_type])
            .collect()
    }

    /// Total (self plus descendants) of every node for one sample type.
    pub fn totals(&self, sample_type: usize) -> Vec<i64> {
        let mut totals = self.self_column(sample_type);
        // Children have larger ids than parents: one backward pass accumulates.
        for node in (1..self.len()).rev() {
            let p = self.parent[node] as usize;
            totals[p] += totals[node];
        }
        totals
    }

    /// The path from the root's child down to `node`, outermost first.
    pub fn path(&self, node: NodeId) -> Vec<NodeId> {
        let mut path = Vec::with_capacity(self.depth(node) as usize);
        let mut cursor = node;
        while cursor != Self::ROOT {
            path.push(cursor);
            cursor = self.parent(cursor);
        }
        path.reverse();
        path
    }

    /// Which frames match `pattern` (by display name), as a per-frame mask.
    pub fn frame_matches(frames: &FrameTable, pattern: &Regex) -> Vec<bool> {
        frames
            .frames
            .iter()
            .map(|f| pattern.is_match(&f.name))
            .collect()
    }

    /// Total of the samples with at least one matching frame on their stack, each counted
    /// once however many of its frames match.
    pub fn matched_total(&self, totals: &[i64], frame_matches: &[bool]) -> i64 {
        let mut sum = 0;
        let mut stack: Vec<NodeId> = self.children(Self::ROOT).to_vec();
        while let Some(node) = stack.pop() {
            if frame_matches[self.frame(node) as usize] {
                sum += totals[node as usize];
            } else {
                stack.extend_from_slice(self.children(node));
            }
        }
        sum
    }
}
