//! The call tree: every distinct stack of a filtered view as a prefix tree of frames,
//! with self values for every sample type.

use regex::Regex;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::profile::Profile;

/// Index of a node in a [`CallTree`]; [`CallTree::ROOT`] is the synthetic root.
pub type NodeId = u32;

/// A prefix tree of stacks, root first. Node ids are assigned in depth-first order
/// (parents before children, a subtree is a range of ids), and children are ordered by
/// frame name (as classic flame graphs are).
#[derive(Debug, Clone, Default)]
pub struct CallTree {
    frame: Vec<FrameId>,
    parent: Vec<NodeId>,
    /// Depth of the deepest node (a node's own depth is found through its parents:
    /// a column of depths was 4 bytes a node, 26 MB of a merged day's tree).
    max_depth: u32,
    /// `self_values[node * types + t]`.
    self_values: Vec<i64>,
    types: usize,
    /// One past the last node of each node's subtree: ids are in depth-first order, so
    /// a subtree is the id range `node..end[node]`.
    end: Vec<NodeId>,
    /// Bottom-up ([`CallTree::inverted`]): leaf functions at the root.
    inverted: bool,
}

/// The children of a node, in name order: see [`CallTree::children`].
#[derive(Debug, Clone)]
pub struct Children<'a> {
    end: &'a [NodeId],
    next: NodeId,
    last: NodeId,
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.last {
            return None;
        }
        let child = self.next;
        self.next = self.end[child as usize];
        Some(child)
    }
}

/// Stacks to build a tree from: sequences of frame name ranks, outermost first, each
/// with one value per sample type.
struct Sequences<R> {
    /// Where each sequence starts in `ranks` (32 bits, as [`SortKey`] keeps them).
    offsets: Vec<u32>,
    ranks: Vec<R>,
    values: Vec<i64>,
    types: usize,
}

/// A frame's name rank as [`Sequences`] keep it: `u16` when every frame's rank fits,
/// which halves the memory of the sequences of almost every profile, else `u32`.
trait Rank: Copy + Ord + Send + Sync {
    /// The rank `r` (which fits: see [`CallTree::build`]).
    fn of(r: usize) -> Self;
    /// The rank as an index.
    fn index(self) -> usize;
}

impl Rank for u16 {
    fn of(r: usize) -> Self {
        r as u16
    }
    fn index(self) -> usize {
        usize::from(self)
    }
}

impl Rank for u32 {
    fn of(r: usize) -> Self {
        r as u32
    }
    fn index(self) -> usize {
        self as usize
    }
}

impl<R: Rank> Sequences<R> {
    fn new(types: usize) -> Self {
        Self {
            offsets: vec![0],
            ranks: Vec::new(),
            values: Vec::new(),
            types,
        }
    }

    /// Ends the sequence whose ranks were pushed since the last call.
    fn close(&mut self, values: impl Iterator<Item = i64>) {
        self.offsets.push(self.ranks.len() as u32);
        let start = self.values.len();
        self.values.extend(values.take(self.types));
        self.values.resize(start + self.types, 0);
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    fn get(&self, k: usize) -> &[R] {
        &self.ranks[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// The values of sequence `k`.
    fn values_of(&self, k: usize) -> &[i64] {
        &self.values[k * self.types..(k + 1) * self.types]
    }

    /// Indices of the sequences in lexicographic order.
    fn sorted_order(&self) -> Vec<u32> {
        let mut keys: Vec<SortKey> = (0..self.len())
            .map(|k| SortKey {
                start: self.offsets[k],
                len: self.offsets[k + 1] - self.offsets[k],
                index: k as u32,
            })
            .collect();
        multikey_sort(&mut keys, &self.ranks);
        keys.into_iter().map(|k| k.index).collect()
    }

    /// The sequences in lexicographic order, copied so that they lie in that order:
    /// the tree is then built reading memory front to back, where reading them in
    /// place through the order missed the cache at almost every sequence (two thirds
    /// of building the tree).
    fn sorted(&self) -> Self {
        let order = self.sorted_order();
        let mut sorted = Sequences::new(self.types);
        sorted.offsets.reserve(order.len());
        sorted.ranks.reserve(self.ranks.len());
        sorted.values.reserve(self.values.len());
        for &k in &order {
            sorted.ranks.extend_from_slice(self.get(k as usize));
            sorted.offsets.push(sorted.ranks.len() as u32);
            sorted.values.extend_from_slice(self.values_of(k as usize));
        }
        sorted
    }
}

/// The sequences of items `0..count`, made by `fill(range)` and sorted: large inputs in
/// two halves, each made and sorted on a thread of its own.
fn sorted_parts<R: Rank>(
    count: usize,
    fill: impl Fn(std::ops::Range<usize>) -> Sequences<R> + Sync,
) -> Vec<Sequences<R>> {
    in_halves(count, |range| fill(range).sorted())
}

/// `make(range)` of items `0..count`: large inputs in two halves, each made on a
/// thread of its own.
fn in_halves<T: Send>(count: usize, make: impl Fn(std::ops::Range<usize>) -> T + Sync) -> Vec<T> {
    if count < 50_000 {
        return vec![make(0..count)];
    }
    let half = count / 2;
    std::thread::scope(|scope| {
        let left = scope.spawn(|| make(0..half));
        let right = make(half..count);
        let left = left
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        vec![left, right]
    })
}

/// Each part sorted ([`Sequences::sorted`]) on a thread of its own, and let go once
/// its sorted copy is made.
fn sort_each<R: Rank>(parts: Vec<Sequences<R>>) -> Vec<Sequences<R>> {
    std::thread::scope(|scope| {
        let sorting: Vec<_> = parts
            .into_iter()
            .map(|part| scope.spawn(move || part.sorted()))
            .collect();
        sorting
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// The kept samples' stacks of `profile` as sequences of frame-name ranks in parts
/// (see [`sorted_parts`]), sorted when `sort`, with the frame of each rank and the
/// number of value columns (every sample type, or only `one`).
fn sequences<R: Rank>(
    profile: &Profile,
    frames: &FrameTable,
    filter: &SampleFilter,
    one: Option<usize>,
    sort: bool,
) -> (Vec<Sequences<R>>, Vec<FrameId>, usize) {
    let (rank, by_rank) = name_ranks::<R>(frames);
    let columns = match one {
        Some(t) => profile.samples.values.get(t..=t).unwrap_or_default(),
        None => &profile.samples.values[..],
    };
    let types = one.map_or(profile.sample_types.len(), |_| 1);
    let fill = |samples: std::ops::Range<usize>| {
        let mut sequences = Sequences::new(types);
        for i in samples {
            if !filter.keeps(profile, i) {
                continue;
            }
            for &loc in profile.samples.stack(i).iter().rev() {
                let outermost_first = frames.of_location(loc).iter().rev();
                sequences
                    .ranks
                    .extend(outermost_first.map(|f| rank[*f as usize]));
            }
            sequences.close(columns.iter().map(|c| c[i]));
        }
        sequences
    };
    let parts = if sort {
        sorted_parts(profile.samples.len(), fill)
    } else {
        in_halves(profile.samples.len(), fill)
    };
    (parts, by_rank, types)
}

/// The tree of sorted parts' sequences, taken in lexicographic order across the parts.
/// Sorting puts stacks with a common prefix next to each other, so one pass creates
/// each node exactly once, in depth-first order, with siblings in name order, and with
/// no hash look-ups.
fn tree_of<R: Rank>(parts: &[Sequences<R>], by_rank: &[FrameId], types: usize) -> CallTree {
    let mut tree = CallTree {
        frame: vec![CallTree::NO_FRAME],
        parent: vec![CallTree::ROOT],
        max_depth: 0,
        self_values: vec![0; types],
        types,
        end: vec![0],
        inverted: false,
    };
    // Every rank of every sequence makes at most one node. Room for all is address
    // space only (what is never written is never touched), and no node is copied as
    // the tree grows; where the system refuses that much address space, the columns
    // grow as they are written instead.
    let most = 1 + parts.iter().map(|p| p.ranks.len()).sum::<usize>();
    let _ = tree.frame.try_reserve_exact(most);
    let _ = tree.parent.try_reserve_exact(most);
    let _ = tree.end.try_reserve_exact(most);
    let _ = tree
        .self_values
        .try_reserve_exact(most.saturating_mul(types));
    let mut path: Vec<NodeId> = Vec::new();
    let mut previous: &[R] = &[];
    let mut cursors = vec![0usize; parts.len()];
    loop {
        // The part whose next sequence comes first (the earlier part on a tie).
        let mut next: Option<(usize, &[R])> = None;
        for (p, sequences) in parts.iter().enumerate() {
            if cursors[p] < sequences.len() {
                let candidate = sequences.get(cursors[p]);
                if next.is_none_or(|(_, best)| candidate < best) {
                    next = Some((p, candidate));
                }
            }
        }
        let Some((p, sequence)) = next else { break };
        let k = cursors[p];
        cursors[p] += 1;
        let common = previous
            .iter()
            .zip(sequence)
            .take_while(|(a, b)| a == b)
            .count();
        let next_id = tree.frame.len() as NodeId;
        for closed in path.drain(common..) {
            tree.end[closed as usize] = next_id;
        }
        for &rank in &sequence[common..] {
            let id = tree.frame.len() as NodeId;
            tree.frame.push(by_rank[rank.index()]);
            tree.parent
                .push(path.last().copied().unwrap_or(CallTree::ROOT));
            tree.self_values.extend(std::iter::repeat_n(0, types));
            tree.end.push(0);
            path.push(id);
        }
        tree.max_depth = tree.max_depth.max(path.len() as u32);
        let node = path.last().copied().unwrap_or(CallTree::ROOT) as usize;
        let values = parts[p].values_of(k);
        for (slot, v) in tree.self_values[node * types..].iter_mut().zip(values) {
            *slot = slot.wrapping_add(*v);
        }
        previous = sequence;
    }
    let n = tree.frame.len() as NodeId;
    for open in path.into_iter().chain([CallTree::ROOT]) {
        tree.end[open as usize] = n;
    }
    tree.frame.shrink_to_fit();
    tree.parent.shrink_to_fit();
    tree.end.shrink_to_fit();
    tree.self_values.shrink_to_fit();
    tree
}

/// A sequence to sort: `ranks[start..start + len]` of [`Sequences`], and its index.
#[derive(Debug, Clone, Copy)]
struct SortKey {
    start: u32,
    len: u32,
    index: u32,
}

impl SortKey {
    /// The rank at `depth`, -1 past the end (a sequence sorts before its extensions).
    #[inline]
    fn at<R: Rank>(&self, ranks: &[R], depth: usize) -> i64 {
        if depth < self.len as usize {
            ranks[self.start as usize + depth].index() as i64
        } else {
            -1
        }
    }

    fn tail<'r, R>(&self, ranks: &'r [R], depth: usize) -> &'r [R] {
        let (start, end) = (self.start as usize, (self.start + self.len) as usize);
        &ranks[(start + depth).min(end)..end]
    }
}

/// Sorts `keys` in lexicographic order of their sequences: multikey quicksort
/// (Bentley and Sedgewick), which looks at one rank of each sequence per pass instead
/// of comparing whole common prefixes again and again, as a comparison sort does with
/// stacks that share long prefixes. The parts still to sort are kept on a heap-allocated
/// list, so no input, however it is ordered, can overflow the thread's stack.
fn multikey_sort<R: Rank>(keys: &mut [SortKey], ranks: &[R]) {
    // (start, end, depth): keys[start..end] agree on their first `depth` ranks.
    let mut parts = vec![(0, keys.len(), 0)];
    while let Some((start, end, depth)) = parts.pop() {
        let part = &mut keys[start..end];
        if part.len() <= 16 {
            part.sort_unstable_by(|a, b| a.tail(ranks, depth).cmp(b.tail(ranks, depth)));
            continue;
        }
        let pivot = {
            let (a, b, c) = (
                part[0].at(ranks, depth),
                part[part.len() / 2].at(ranks, depth),
                part[part.len() - 1].at(ranks, depth),
            );
            a.max(b).min(a.min(b).max(c))
        };
        // Dijkstra's three-way partition: [< pivot | = pivot | > pivot].
        let (mut lt, mut i, mut gt) = (0, 0, part.len());
        while i < gt {
            let rank = part[i].at(ranks, depth);
            if rank < pivot {
                part.swap(lt, i);
                lt += 1;
                i += 1;
            } else if rank > pivot {
                gt -= 1;
                part.swap(i, gt);
            } else {
                i += 1;
            }
        }
        parts.push((start, start + lt, depth));
        parts.push((start + gt, end, depth));
        // Sequences that all ended at this depth are equal: nothing left to order.
        if pivot >= 0 {
            parts.push((start + lt, start + gt, depth + 1));
        }
    }
}

/// Ranks of frames by name (ties by id), and the frame of every rank.
fn name_ranks<R: Rank>(frames: &FrameTable) -> (Vec<R>, Vec<FrameId>) {
    let mut by_rank: Vec<FrameId> = (0..frames.len() as FrameId).collect();
    by_rank.sort_unstable_by(|a, b| frames.get(*a).name.cmp(&frames.get(*b).name).then(a.cmp(b)));
    let mut rank = vec![R::of(0); frames.len()];
    for (r, f) in by_rank.iter().enumerate() {
        rank[*f as usize] = R::of(r);
    }
    (rank, by_rank)
}

impl CallTree {
    /// The synthetic root node, parent of every stack's outermost frame.
    pub const ROOT: NodeId = 0;
    /// The frame id of the root node.
    pub const NO_FRAME: FrameId = FrameId::MAX;

    /// Builds the tree of the samples that `filter` keeps, with a value for every
    /// sample type.
    pub fn build(profile: &Profile, frames: &FrameTable, filter: &SampleFilter) -> Self {
        Self::build_columns(profile, frames, filter, None, || ()).0
    }

    /// [`CallTree::build`] with the values of one sample type only (the tree's one
    /// column, 0): what a view of that type shows, at half the memory of two columns.
    /// `beside` runs on a thread of its own while the tree is assembled from the
    /// sorted stacks, the build's one step on one core (a third of building a merged
    /// day's tree): other work over the same profile, such as its top table, is then
    /// done in time that would be idle; what it returns comes with the tree.
    pub fn build_one<T: Send>(
        profile: &Profile,
        frames: &FrameTable,
        filter: &SampleFilter,
        sample_type: usize,
        beside: impl FnOnce() -> T + Send,
    ) -> (Self, T) {
        Self::build_columns(profile, frames, filter, Some(sample_type), beside)
    }

    /// The tree with every column, or only `one`, and what `beside` returns.
    fn build_columns<T: Send>(
        profile: &Profile,
        frames: &FrameTable,
        filter: &SampleFilter,
        one: Option<usize>,
        beside: impl FnOnce() -> T + Send,
    ) -> (Self, T) {
        if frames.len() <= usize::from(u16::MAX) {
            Self::build_ranked::<u16, T>(profile, frames, filter, one, beside)
        } else {
            Self::build_ranked::<u32, T>(profile, frames, filter, one, beside)
        }
    }

    /// [`CallTree::build`] of a profile needed no longer: it is let go once its stacks
    /// are read, before they are sorted and the tree is assembled, so that the profile
    /// is never held beside the sorted copies or the tree (a comparison's combined
    /// profile, say).
    pub fn build_consuming(profile: Profile, frames: &FrameTable, filter: &SampleFilter) -> Self {
        fn ranked<R: Rank>(
            profile: Profile,
            frames: &FrameTable,
            filter: &SampleFilter,
        ) -> CallTree {
            let (parts, by_rank, types) = sequences::<R>(&profile, frames, filter, None, false);
            drop(profile);
            tree_of(&sort_each(parts), &by_rank, types)
        }
        if frames.len() <= usize::from(u16::MAX) {
            ranked::<u16>(profile, frames, filter)
        } else {
            ranked::<u32>(profile, frames, filter)
        }
    }

    /// [`CallTree::build_columns`] with ranks of type `R`.
    fn build_ranked<R: Rank, T: Send>(
        profile: &Profile,
        frames: &FrameTable,
        filter: &SampleFilter,
        one: Option<usize>,
        beside: impl FnOnce() -> T + Send,
    ) -> (Self, T) {
        let (parts, by_rank, types) = sequences::<R>(profile, frames, filter, one, true);
        std::thread::scope(|scope| {
            let beside = scope.spawn(beside);
            let tree = tree_of(&parts, &by_rank, types);
            let beside = beside
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (tree, beside)
        })
    }

    /// The bottom-up (inverted) tree: leaves become roots, callers become children.
    pub fn inverted(&self, frames: &FrameTable) -> Self {
        if frames.len() <= usize::from(u16::MAX) {
            self.inverted_ranked::<u16>(frames)
        } else {
            self.inverted_ranked::<u32>(frames)
        }
    }

    /// [`CallTree::inverted`] with ranks of type `R`.
    fn inverted_ranked<R: Rank>(&self, frames: &FrameTable) -> Self {
        let (rank, by_rank) = name_ranks::<R>(frames);
        let parts = sorted_parts(self.len(), |nodes| {
            let mut sequences = Sequences::new(self.types);
            for node in nodes.filter(|n| *n > 0) {
                let node = node as NodeId;
                let values = self.self_values_of(node);
                if values.iter().all(|v| *v == 0) {
                    continue;
                }
                let mut cursor = node;
                while cursor != Self::ROOT {
                    sequences.ranks.push(rank[self.frame(cursor) as usize]);
                    cursor = self.parent(cursor);
                }
                sequences.close(values.iter().copied());
            }
            sequences
        });
        let mut tree = tree_of(&parts, &by_rank, self.types);
        // Inverting a bottom-up tree turns it top-down again.
        tree.inverted = !self.inverted;
        tree
    }

    /// The top-down tree of this tree's stacks rewritten: `rewrite(stack, out)` gets
    /// the stack of a node's self values (outermost frame first, whether this tree is
    /// top-down or bottom-up) and pushes the new stack, outermost first, onto `out`;
    /// it returns whether those values stay. A sandwich's callers and callees are
    /// made this way ([`crate::sandwich`]).
    pub fn restacked(
        &self,
        frames: &FrameTable,
        rewrite: impl Fn(&[FrameId], &mut Vec<FrameId>) -> bool + Sync,
    ) -> Self {
        if frames.len() <= usize::from(u16::MAX) {
            self.restacked_ranked::<u16>(frames, &rewrite)
        } else {
            self.restacked_ranked::<u32>(frames, &rewrite)
        }
    }

    /// [`CallTree::restacked`] with ranks of type `R`.
    fn restacked_ranked<R: Rank>(
        &self,
        frames: &FrameTable,
        rewrite: &(impl Fn(&[FrameId], &mut Vec<FrameId>) -> bool + Sync),
    ) -> Self {
        let (rank, by_rank) = name_ranks::<R>(frames);
        let parts = sorted_parts(self.len(), |nodes| {
            let mut sequences = Sequences::new(self.types);
            let (mut stack, mut out) = (Vec::new(), Vec::new());
            for node in nodes.filter(|n| *n > 0) {
                let node = node as NodeId;
                let values = self.self_values_of(node);
                if values.iter().all(|v| *v == 0) {
                    continue;
                }
                stack.clear();
                let mut cursor = node;
                while cursor != Self::ROOT {
                    stack.push(self.frame(cursor));
                    cursor = self.parent(cursor);
                }
                // Walked up from the node: leaf first top-down, outermost first bottom-up.
                if !self.inverted {
                    stack.reverse();
                }
                out.clear();
                if !rewrite(&stack, &mut out) {
                    continue;
                }
                sequences
                    .ranks
                    .extend(out.iter().map(|f| rank[*f as usize]));
                sequences.close(values.iter().copied());
            }
            sequences
        });
        tree_of(&parts, &by_rank, self.types)
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

    /// Depth of a node: 0 for the root, 1 for outermost frames. Found by walking up to
    /// the root (as many steps as the depth): walks that visit many nodes carry the
    /// depth along instead.
    pub fn depth(&self, node: NodeId) -> u32 {
        let mut depth = 0;
        let mut cursor = node;
        while cursor != Self::ROOT {
            depth += 1;
            cursor = self.parent(cursor);
        }
        depth
    }

    /// Depth of the deepest node (0 for a tree of only the root).
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// Children of a node, ordered by frame name.
    pub fn children(&self, node: NodeId) -> Children<'_> {
        Children {
            end: &self.end,
            next: node + 1,
            last: self.end[node as usize],
        }
    }

    /// One past the last node of `node`'s subtree (ids are in depth-first order).
    pub fn subtree_end(&self, node: NodeId) -> NodeId {
        self.end[node as usize]
    }

    /// Whether the tree is bottom-up ([`CallTree::inverted`]): its roots are the leaf
    /// functions, and a node's self value is stored at the outermost caller of its
    /// stacks rather than at their leaf.
    pub fn is_inverted(&self) -> bool {
        self.inverted
    }

    /// The self value of `node` in `totals` ([`CallTree::totals`] of one sample type):
    /// the value of the samples whose leaf it is. That is its total less its children's
    /// top-down; bottom-up, where the leaf of every sample is a root's frame, a root's
    /// whole total (the function's own, pprof's flat) and nothing below the roots.
    pub fn self_value(&self, node: NodeId, totals: &[i64]) -> i64 {
        let total = |n: NodeId| totals.get(n as usize).copied().unwrap_or(0);
        match (self.inverted, node) {
            (true, Self::ROOT) | (false, _) => self
                .children(node)
                .fold(total(node), |rest, c| rest.wrapping_sub(total(c))),
            (true, _) if self.parent(node) == Self::ROOT => total(node),
            (true, _) => 0,
        }
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
            totals[p] = totals[p].wrapping_add(totals[node]);
        }
        totals
    }

    /// The path from the root's child down to `node`, outermost first.
    pub fn path(&self, node: NodeId) -> Vec<NodeId> {
        let mut path = Vec::new();
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
        let mut sum = 0i64;
        let mut node = 1;
        while (node as usize) < self.len() {
            if frame_matches[self.frame(node) as usize] {
                sum = sum.wrapping_add(totals[node as usize]);
                // Everything below is already counted.
                node = self.subtree_end(node);
            } else {
                node += 1;
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sequences with long shared prefixes, repeats, prefixes of one another and
    /// empty ones, from a fixed seed.
    fn sequences<R: Rank>(n: usize) -> Sequences<R> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let mut s = Sequences::new(1);
        for _ in 0..n {
            let len = next(40) as usize;
            for d in 0..len {
                // Few choices near the root, more further down, as in real stacks.
                s.ranks.push(R::of(next(2 + d as u64 / 4) as usize));
            }
            s.close(std::iter::once(1));
        }
        s
    }

    fn assert_sorted<R: Rank + std::fmt::Debug>() {
        for n in [0, 1, 15, 17, 1_000, 60_000] {
            let s = sequences::<R>(n);
            let order = s.sorted_order();
            assert_eq!(order.len(), n);
            let mut seen = vec![false; n];
            for &k in &order {
                assert!(!std::mem::replace(&mut seen[k as usize], true), "{k} twice");
            }
            for pair in order.windows(2) {
                let (a, b) = (s.get(pair[0] as usize), s.get(pair[1] as usize));
                assert!(a <= b, "{a:?} before {b:?} ({n} sequences)");
            }
        }
    }

    #[test]
    fn sorted_order_is_lexicographic_at_every_size_and_rank_width() {
        assert_sorted::<u16>();
        assert_sorted::<u32>();
    }

    #[test]
    fn the_tree_of_two_sorted_halves_is_the_tree_of_all() {
        let all = sequences::<u16>(60_000);
        let fill = |range: std::ops::Range<usize>| {
            let mut part = Sequences::new(1);
            for k in range {
                part.ranks.extend_from_slice(all.get(k));
                part.close(all.values_of(k).iter().copied());
            }
            part
        };
        let halves = sorted_parts(all.len(), fill);
        assert_eq!(halves.len(), 2, "large inputs are sorted in halves");
        let whole = fill(0..all.len()).sorted();
        let by_rank: Vec<FrameId> = (0..16).collect();
        let (two, one) = (
            tree_of(&halves, &by_rank, 1),
            tree_of(&[whole], &by_rank, 1),
        );
        assert!(two.len() > 60_000, "{} nodes", two.len());
        assert_eq!(two.frame, one.frame);
        assert_eq!(two.parent, one.parent);
        assert_eq!(two.max_depth, one.max_depth);
        let depths: Vec<u32> = (0..one.len() as NodeId).map(|n| one.depth(n)).collect();
        assert_eq!(depths.iter().max().copied(), Some(one.max_depth));
        for (node, &depth) in depths.iter().enumerate().skip(1) {
            let parent = one.parent(node as NodeId);
            assert_eq!(depth, depths[parent as usize] + 1, "node {node}");
            assert_eq!(one.path(node as NodeId).len(), depth as usize);
        }
        assert_eq!(two.end, one.end);
        assert_eq!(two.self_values, one.self_values);
        assert_eq!(two.self_values.iter().sum::<i64>(), 60_000);
    }

    #[test]
    fn many_equal_deep_sequences_sort() {
        let mut s = Sequences::<u16>::new(1);
        for _ in 0..100_000 {
            s.ranks.extend(0..500);
            s.close(std::iter::once(1));
        }
        let order = s.sorted_order();
        assert_eq!(order.len(), 100_000);
    }
}
