//! Flame graph layout as a pure function: (tree, totals, zoom, viewport) → rectangles.
//!
//! Row 0 is the root ("all"); a node's row is its depth. The zoomed node and its
//! ancestors span the full width; descendants are scaled so the zoomed node fills it.
//! Children narrower than `min_width` are not laid out one by one: their sum is drawn
//! as one sliver after their visible siblings, and their parent's rectangle records the
//! value hidden there, so nothing disappears silently.

use std::ops::Range;

use crate::calltree::{CallTree, NodeId};

/// What to lay out.
#[derive(Debug, Clone)]
pub struct LayoutParams {
    /// The node that fills the width.
    pub zoom: NodeId,
    /// Width of the viewport in pixels.
    pub width: f32,
    /// Children narrower than this (pixels) are merged into a sliver.
    pub min_width: f32,
    /// Rows to lay out (others are culled).
    pub rows: Range<u32>,
}

/// What a rectangle stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RectKind {
    /// One node of the tree.
    Node(NodeId),
    /// Children of `parent` too narrow to draw, together.
    Hidden {
        /// Their parent.
        parent: NodeId,
        /// How many children it stands for.
        count: u32,
    },
}

/// One rectangle of the flame graph, in pixels from the left edge and in rows from the root.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlameRect {
    /// What it stands for.
    pub kind: RectKind,
    /// Row (depth) of the rectangle.
    pub row: u32,
    /// Left edge in pixels.
    pub x0: f32,
    /// Right edge in pixels.
    pub x1: f32,
    /// The value it stands for (a node's total, or the hidden children's sum).
    pub value: i64,
    /// For a node: the value of its children narrower than `min_width`.
    pub hidden: i64,
}

/// Lays out the flame graph; `totals` are [`CallTree::totals`] of the shown sample type.
pub fn layout(tree: &CallTree, totals: &[i64], params: &LayoutParams) -> Vec<FlameRect> {
    let mut rects = Vec::new();
    let zoom_total = totals.get(params.zoom as usize).copied().unwrap_or(0);
    if zoom_total <= 0 || params.width <= 0.0 {
        return rects;
    }
    let full = |node: NodeId, row: u32| FlameRect {
        kind: RectKind::Node(node),
        row,
        x0: 0.0,
        x1: params.width,
        value: totals[node as usize],
        hidden: 0,
    };
    // Ancestors of the zoomed node, full width.
    let zoom_row = tree.depth(params.zoom);
    let mut cursor = params.zoom;
    let mut row = zoom_row;
    while cursor != CallTree::ROOT {
        cursor = tree.parent(cursor);
        row -= 1;
        if params.rows.contains(&row) {
            rects.push(full(cursor, row));
        }
    }
    rects.reverse();
    let scale = f64::from(params.width) / zoom_total as f64;
    let min_width = f64::from(params.min_width);
    // (node, its row, left edge, index of its rectangle if emitted)
    let mut stack: Vec<(NodeId, u32, f64, Option<usize>)> = Vec::new();
    let zoom_rect = params.rows.contains(&zoom_row).then(|| {
        rects.push(full(params.zoom, zoom_row));
        rects.len() - 1
    });
    stack.push((params.zoom, zoom_row, 0.0, zoom_rect));
    while let Some((node, row, x0, rect_index)) = stack.pop() {
        let child_row = row + 1;
        if child_row >= params.rows.end {
            continue;
        }
        let emit = child_row >= params.rows.start;
        let mut x = x0;
        let mut hidden = 0i64;
        let mut hidden_count = 0u32;
        for child in tree.children(node) {
            let value = totals[child as usize];
            if value <= 0 {
                continue;
            }
            let w = value as f64 * scale;
            if w < min_width {
                hidden += value;
                hidden_count += 1;
                continue;
            }
            let index = emit.then(|| {
                rects.push(FlameRect {
                    kind: RectKind::Node(child),
                    row: child_row,
                    x0: x as f32,
                    x1: (x + w) as f32,
                    value,
                    hidden: 0,
                });
                rects.len() - 1
            });
            stack.push((child, child_row, x, index));
            x += w;
        }
        if hidden > 0 {
            if let Some(i) = rect_index {
                rects[i].hidden = hidden;
            }
            if emit {
                let w = (hidden as f64 * scale).max(1.0);
                rects.push(FlameRect {
                    kind: RectKind::Hidden {
                        parent: node,
                        count: hidden_count,
                    },
                    row: child_row,
                    x0: x as f32,
                    x1: (x + w) as f32,
                    value: hidden,
                    hidden: 0,
                });
            }
        }
    }
    rects
}
