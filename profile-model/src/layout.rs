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
    /// The part of the zoomed node shown across the width, as shares of it (`0.0..1.0`:
    /// all of it); rectangles are cut at the edges, and subtrees outside are culled.
    pub window: Range<f64>,
}

impl LayoutParams {
    /// The whole of the zoomed node shown, across `width` pixels, rows `rows`.
    pub fn whole(zoom: NodeId, width: f32, rows: Range<u32>) -> Self {
        Self {
            zoom,
            width,
            min_width: 1.0,
            rows,
            window: 0.0..1.0,
        }
    }
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

/// Where `node` starts in the whole graph, as a value: the totals of the siblings
/// drawn before it and before each of its ancestors (children narrower than a pixel
/// are drawn after their siblings, so at a scale that hides some this is a little off).
pub fn offset(tree: &CallTree, totals: &[i64], node: NodeId) -> i64 {
    let total = |n: NodeId| totals.get(n as usize).copied().unwrap_or(0).max(0);
    let mut sum = 0i64;
    let mut cursor = node;
    while cursor != CallTree::ROOT {
        let parent = tree.parent(cursor);
        sum += tree
            .children(parent)
            .take_while(|&c| c != cursor)
            .map(total)
            .sum::<i64>();
        cursor = parent;
    }
    sum
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
    let shown = (params.window.end - params.window.start).clamp(1e-12, 1.0);
    let scale = f64::from(params.width) / (zoom_total as f64 * shown);
    let min_width = f64::from(params.min_width);
    let width = f64::from(params.width);
    // Cut at the edges: what is left of 0 or right of the width is not drawn.
    let cut = |x: f64, w: f64| (x.max(0.0) as f32, (x + w).min(width) as f32);
    let left = -params.window.start * zoom_total as f64 * scale;
    // (node, its row, left edge, index of its rectangle if emitted)
    let mut stack: Vec<(NodeId, u32, f64, Option<usize>)> = Vec::new();
    let zoom_rect = params.rows.contains(&zoom_row).then(|| {
        rects.push(full(params.zoom, zoom_row));
        rects.len() - 1
    });
    stack.push((params.zoom, zoom_row, left, zoom_rect));
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
            if x + w <= 0.0 || x >= width {
                // Outside the window, and so is its subtree.
                x += w;
                continue;
            }
            let index = emit.then(|| {
                let (x0, x1) = cut(x, w);
                rects.push(FlameRect {
                    kind: RectKind::Node(child),
                    row: child_row,
                    x0,
                    x1,
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
            let w = (hidden as f64 * scale).max(1.0);
            if emit && x + w > 0.0 && x < width {
                let (x0, x1) = cut(x, w);
                rects.push(FlameRect {
                    kind: RectKind::Hidden {
                        parent: node,
                        count: hidden_count,
                    },
                    row: child_row,
                    x0,
                    x1,
                    value: hidden,
                    hidden: 0,
                });
            }
        }
    }
    rects
}
