//! A function's sandwich, as speedscope shows it: from everywhere the function is
//! called, its callers (a tree rooted at the function, each caller below the frame it
//! calls) and its callees (a tree rooted at the function, as the call tree goes on
//! from it), with its self and total. A sample is counted once, at the function's
//! outermost call in its stack, so that recursion adds nothing twice.

use crate::calltree::{CallTree, NodeId};
use crate::frames::{FrameId, FrameTable};

/// The callers and callees of one frame.
#[derive(Debug, Clone)]
pub struct Sandwich {
    /// The frame they are of.
    pub frame: FrameId,
    /// The frame under the root, its callers as its children, theirs below them.
    pub callers: CallTree,
    /// The frame under the root, what it calls below it.
    pub callees: CallTree,
}

/// The node standing for the frame itself in both trees of a [`Sandwich`] (the
/// root's only child: trees number their nodes depth first).
pub const FRAME_NODE: NodeId = 1;

/// The sandwich of `frame` over the stacks of `tree` (top-down or bottom-up: the same
/// sandwich), with the tree's value columns.
pub fn sandwich(tree: &CallTree, frames: &FrameTable, frame: FrameId) -> Sandwich {
    let outermost = |stack: &[FrameId]| stack.iter().position(|&f| f == frame);
    let callers = tree.restacked(frames, |stack, out| {
        let Some(at) = outermost(stack) else {
            return false;
        };
        out.extend(stack[..=at].iter().rev());
        true
    });
    let callees = tree.restacked(frames, |stack, out| {
        let Some(at) = outermost(stack) else {
            return false;
        };
        out.extend(&stack[at..]);
        true
    });
    Sandwich {
        frame,
        callers,
        callees,
    }
}

impl Sandwich {
    /// The value of the samples whose stacks hold the frame, in value column
    /// `sample_type` (pprof's cum).
    pub fn total(&self, sample_type: usize) -> i64 {
        self.callees
            .totals(sample_type)
            .first()
            .copied()
            .unwrap_or(0)
    }

    /// The value of the samples whose leaf is the frame, in value column
    /// `sample_type` (pprof's flat): each callees stack ends at its sample's leaf.
    pub fn self_value(&self, sample_type: usize) -> i64 {
        let values = self.callees.self_column(sample_type);
        (1..self.callees.len())
            .filter(|&n| self.callees.frame(n as NodeId) == self.frame)
            .map(|n| values[n])
            .fold(0, i64::wrapping_add)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::View;
    use crate::formats::FoldedUnit;
    use crate::formats::folded;
    use crate::view::ViewOptions;

    /// `b` called from `main` directly and through `a`, recursing once, calling `c`.
    const STACKS: &str = "main;a;b 5\nmain;b;c 3\nmain;a;b;b;c 2\nmain;d 7\nmain;b 1\n";

    /// The tree of `STACKS` (bottom-up when `invert`), its frames, and `b`'s frame.
    fn tree(invert: bool) -> (CallTree, FrameTable, FrameId) {
        let profile = folded::decode(STACKS, FoldedUnit::Samples).unwrap();
        let view = View::new(&profile, &ViewOptions::default());
        let mut tree = view.call_tree(&profile);
        if invert {
            tree = tree.inverted(&view.frames);
        }
        let b = view
            .frames
            .frames
            .iter()
            .position(|f| f.name == "b")
            .unwrap();
        (tree, view.frames, b as FrameId)
    }

    /// Every root-to-leaf path of `tree` with its total, as "x;y=N".
    fn paths(tree: &CallTree, frames: &FrameTable) -> Vec<String> {
        let totals = tree.totals(0);
        let mut out = Vec::new();
        for n in 1..tree.len() as NodeId {
            let names: Vec<&str> = tree
                .path(n)
                .iter()
                .map(|&p| frames.get(tree.frame(p)).name.as_str())
                .collect();
            out.push(format!("{}={}", names.join(";"), totals[n as usize]));
        }
        out
    }

    #[test]
    fn callers_and_callees_count_each_sample_once_at_the_outermost_call() {
        let (tree, frames, b) = tree(false);
        let s = sandwich(&tree, &frames, b);
        assert_eq!(
            paths(&s.callers, &frames),
            ["b=11", "b;a=7", "b;a;main=7", "b;main=4"]
        );
        assert_eq!(
            paths(&s.callees, &frames),
            ["b=11", "b;b=2", "b;b;c=2", "b;c=3"]
        );
        assert_eq!(s.total(0), 11);
        // main;a;b and main;b end in b; the recursive call's samples end in c.
        assert_eq!(s.self_value(0), 6);
    }

    #[test]
    fn a_bottom_up_tree_gives_the_same_sandwich() {
        let (top_down, frames, b) = tree(false);
        let (bottom_up, _, _) = tree(true);
        let (x, y) = (
            sandwich(&top_down, &frames, b),
            sandwich(&bottom_up, &frames, b),
        );
        assert_eq!(paths(&x.callers, &frames), paths(&y.callers, &frames));
        assert_eq!(paths(&x.callees, &frames), paths(&y.callees, &frames));
        assert_eq!((y.total(0), y.self_value(0)), (11, 6));
    }

    #[test]
    fn a_frame_in_no_stack_has_an_empty_sandwich() {
        let (tree, frames, _) = tree(false);
        let s = sandwich(&tree, &frames, FrameId::MAX - 1);
        assert!(s.callers.is_empty() && s.callees.is_empty());
        assert_eq!((s.total(0), s.self_value(0)), (0, 0));
    }
}
