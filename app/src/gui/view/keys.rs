//! Moving through the flame graph with the keyboard: the arrows move a cursor to the
//! parent (up), the widest child (down) and the siblings (left, right) of the node it
//! is on, up and down swapped where the root is at the bottom (*flame*), so that they
//! go the way they point; Enter zooms to it; Esc resets (see
//! [`crate::gui::shell::input`]). The same moves work in compare mode's A, B and diff
//! graphs ([`crate::gui::compare::CompareState::step_cursor`]) and in a sandwich's
//! callers and callees graphs ([`SandwichState::step_cursor`]), in the graph last
//! under the pointer.

use profile_model::{CallTree, NodeId};

use crate::gui::view::ProfileView;
use crate::gui::view::sandwich::SandwichState;

/// Where an arrow moves the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Up: to the caller.
    Parent,
    /// Down: to the widest callee.
    Child,
    /// Left: to the sibling drawn before.
    Previous,
    /// Right: to the sibling drawn after.
    Next,
}

/// The node a `step` from `node` lands on, among the nodes drawn (total above zero);
/// `node` itself where there is none that way (the root has no parent, a leaf no
/// child, the first sibling none before it).
pub fn step(tree: &CallTree, totals: &[i64], node: NodeId, step: Step) -> NodeId {
    let drawn = |n: &NodeId| totals.get(*n as usize).copied().unwrap_or(0) > 0;
    match step {
        Step::Parent => tree.parent(node),
        Step::Child => tree
            .children(node)
            .filter(drawn)
            .max_by_key(|&c| (totals[c as usize], std::cmp::Reverse(c)))
            .unwrap_or(node),
        Step::Previous | Step::Next if node == CallTree::ROOT => node,
        Step::Previous => tree
            .children(tree.parent(node))
            .filter(drawn)
            .take_while(|&c| c != node)
            .last()
            .unwrap_or(node),
        Step::Next => tree
            .children(tree.parent(node))
            .filter(drawn)
            .skip_while(|&c| c != node)
            .nth(1)
            .unwrap_or(node),
    }
}

impl Step {
    /// The step an arrow means in a graph drawn with its root at the bottom.
    pub fn flipped(self) -> Self {
        match self {
            Step::Parent => Step::Child,
            Step::Child => Step::Parent,
            other => other,
        }
    }
}

impl ProfileView {
    /// Moves the keyboard's cursor one `step` (from the zoomed node when there is
    /// none yet); its frame becomes the one selected, as a top table click makes it.
    pub fn step_cursor(&mut self, to: Step) {
        let Some(cur) = self.current.clone() else {
            return;
        };
        let from = self
            .flame
            .cursor
            .filter(|&n| (n as usize) < cur.tree.len())
            .unwrap_or(self.flame.zoom);
        let to = if self.flame.flipped { to.flipped() } else { to };
        let node = if self.flame.cursor.is_none() {
            from
        } else {
            step(&cur.tree, &cur.totals, from, to)
        };
        self.flame.cursor = Some(node);
        self.flame.selected = (node != CallTree::ROOT).then(|| cur.tree.frame(node));
    }

    /// Enter: zooms to the cursor's node; in a sandwich, shows the sandwich of the
    /// cursor's function (as a click there does).
    pub fn zoom_to_cursor(&mut self) {
        if self.sandwich.is_open() {
            if let Some(frame) = self.sandwich.cursor_frame() {
                self.open_sandwich(frame);
            }
        } else if let Some(node) = self.flame.cursor {
            self.zoom_to(node);
        }
    }
}

impl<T> SandwichState<T> {
    /// Moves the cursor of the graph last under the pointer (the callees' until one
    /// was) one `step`, in the tree and totals (of value `column`) made; the first
    /// step puts it on the function. The callers graph is drawn root at the bottom.
    pub fn step_cursor(&mut self, to: Step, column: usize) {
        let Some(made) = self.made.clone() else {
            return;
        };
        let i = self.key_graph;
        let (tree, totals) = made.graph(i, column);
        if tree.is_empty() {
            return;
        }
        let start = profile_model::sandwich::FRAME_NODE;
        let valid = |n: &NodeId| (*n as usize) < tree.len() && *n != CallTree::ROOT;
        let Some(from) = self.cursor[i].filter(valid) else {
            self.cursor[i] = Some(start);
            return;
        };
        let to = if i == 0 { to.flipped() } else { to };
        let node = step(tree, totals, from, to);
        self.cursor[i] = Some(if node == CallTree::ROOT { from } else { node });
    }

    /// The function of the cursor, in the graph it is in.
    pub fn cursor_frame(&self) -> Option<profile_model::frames::FrameId> {
        let made = self.made.as_ref()?;
        let (tree, _) = made.graph(self.key_graph, 0);
        let node = self.cursor[self.key_graph].filter(|&n| (n as usize) < tree.len())?;
        (node != CallTree::ROOT).then(|| tree.frame(node))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use profile_model::formats::{FoldedUnit, folded};
    use profile_model::{View, ViewOptions};

    use super::*;

    #[test]
    fn arrows_move_to_the_parent_the_widest_drawn_child_and_the_drawn_siblings() {
        let text = "main;a;x 1\nmain;b 5\nmain;c 2\nmain;d 0\n";
        let profile = folded::decode(text, FoldedUnit::Samples).unwrap();
        let view = View::new(&profile, &ViewOptions::default());
        let tree = view.call_tree(&profile);
        let totals = tree.totals(0);
        let name = |n: NodeId| view.frames.get(tree.frame(n)).name.as_str();
        let main = step(&tree, &totals, CallTree::ROOT, Step::Child);
        assert_eq!(name(main), "main");
        let b = step(&tree, &totals, main, Step::Child);
        assert_eq!(name(b), "b", "the widest");
        let a = step(&tree, &totals, b, Step::Previous);
        assert_eq!(name(a), "a");
        assert_eq!(step(&tree, &totals, a, Step::Previous), a, "the first");
        let c = step(&tree, &totals, b, Step::Next);
        assert_eq!(name(c), "c");
        assert_eq!(step(&tree, &totals, c, Step::Next), c, "d is not drawn");
        assert_eq!(step(&tree, &totals, c, Step::Parent), main);
        assert_eq!(
            step(&tree, &totals, CallTree::ROOT, Step::Parent),
            CallTree::ROOT
        );
        assert_eq!(step(&tree, &totals, c, Step::Child), c, "a leaf");
    }
}
