//! The flame graph layout, tested without any UI.

use profile_model::calltree::{CallTree, NodeId};
use profile_model::layout::{FlameRect, LayoutParams, RectKind, layout};
use profile_model::{View, ViewOptions};

use super::{fixture, profile};

/// A tree: `main` with children `big` (600) and 400 leaves `t0..t399` of 1 each.
fn wide_tree() -> (CallTree, Vec<i64>, View) {
    let leaves: Vec<String> = (0..400).map(|i| format!("main;t{i}")).collect();
    let mut stacks: Vec<(&str, i64, Option<&str>)> = vec![("main;big", 600, None)];
    stacks.extend(leaves.iter().map(|s| (s.as_str(), 1, None)));
    let profile = profile(&stacks);
    let view = View::new(&profile, &ViewOptions::default());
    let tree = view.call_tree(&profile);
    let totals = tree.totals(0);
    (tree, totals, view)
}

/// The tree of the Go CPU profile and its totals of CPU time.
fn cpu_tree() -> (CallTree, Vec<i64>) {
    let p = fixture("cpu.pb.gz");
    let view = View::new(&p, &ViewOptions::default());
    let tree = view.call_tree(&p);
    let totals = tree.totals(1);
    (tree, totals)
}

fn params(zoom: NodeId, width: f32) -> LayoutParams {
    LayoutParams::whole(zoom, width, 0..100)
}

fn node_rect(rects: &[FlameRect], node: NodeId) -> FlameRect {
    *rects
        .iter()
        .find(|r| r.kind == RectKind::Node(node))
        .expect("node laid out")
}

#[test]
fn widths_are_proportional_and_narrow_children_become_one_sliver() {
    let (tree, totals, view) = wide_tree();
    let rects = layout(&tree, &totals, &params(CallTree::ROOT, 100.0));
    let root = node_rect(&rects, CallTree::ROOT);
    assert_eq!(
        (root.x0, root.x1, root.row, root.value),
        (0.0, 100.0, 0, 1000)
    );
    let main = tree.children(CallTree::ROOT).next().expect("a child");
    let main_rect = node_rect(&rects, main);
    assert_eq!((main_rect.x1, main_rect.hidden), (100.0, 400));
    let big = tree
        .children(main)
        .find(|c| view.frames.get(tree.frame(*c)).name == "big")
        .expect("big");
    let big_rect = node_rect(&rects, big);
    assert!((big_rect.x1 - big_rect.x0 - 60.0).abs() < 1e-3);
    let slivers: Vec<&FlameRect> = rects
        .iter()
        .filter(|r| matches!(r.kind, RectKind::Hidden { .. }))
        .collect();
    assert_eq!(slivers.len(), 1);
    assert_eq!(
        slivers[0].kind,
        RectKind::Hidden {
            parent: main,
            count: 400
        }
    );
    assert_eq!(slivers[0].value, 400);
    assert!(
        (slivers[0].x1 - slivers[0].x0 - 40.0).abs() < 1e-3,
        "the sliver keeps its true width"
    );
    // Nothing is lost: the children's values add up to the parent's.
    let row2: i64 = rects.iter().filter(|r| r.row == 2).map(|r| r.value).sum();
    assert_eq!(row2, 1000);
}

#[test]
fn wide_viewport_draws_every_child() {
    let (tree, totals, _) = wide_tree();
    let rects = layout(&tree, &totals, &params(CallTree::ROOT, 4000.0));
    assert_eq!(rects.iter().filter(|r| r.row == 2).count(), 401);
    assert!(rects.iter().all(|r| r.hidden == 0));
}

#[test]
fn zoomed_node_fills_the_width_under_full_width_ancestors() {
    let (tree, totals) = cpu_tree();
    // Zoom into the deepest node of the largest path.
    let mut zoom = CallTree::ROOT;
    for _ in 0..6 {
        let Some(next) = tree.children(zoom).max_by_key(|c| totals[*c as usize]) else {
            break;
        };
        zoom = next;
    }
    let rects = layout(&tree, &totals, &params(zoom, 1000.0));
    let depth = tree.depth(zoom);
    for row in 0..=depth {
        let in_row: Vec<&FlameRect> = rects.iter().filter(|r| r.row == row).collect();
        assert_eq!(in_row.len(), 1, "row {row} holds one full-width frame");
        assert_eq!((in_row[0].x0, in_row[0].x1), (0.0, 1000.0));
    }
    assert_eq!(node_rect(&rects, zoom).row, depth);
    // Below the zoomed node, everything lies within the viewport and sums to at most it.
    for r in rects.iter().filter(|r| r.row > depth) {
        assert!(r.x0 >= 0.0 && r.x1 <= 1000.0 + 1e-3, "{r:?}");
    }
    let below: i64 = rects
        .iter()
        .filter(|r| r.row == depth + 1)
        .map(|r| r.value)
        .sum();
    assert!(below <= totals[zoom as usize]);
}

#[test]
fn rows_outside_the_viewport_are_culled() {
    let (tree, totals) = cpu_tree();
    let all = layout(&tree, &totals, &params(CallTree::ROOT, 1920.0));
    let some = layout(
        &tree,
        &totals,
        &LayoutParams {
            rows: 3..8,
            ..params(CallTree::ROOT, 1920.0)
        },
    );
    assert!(some.iter().all(|r| (3..8).contains(&r.row)));
    assert_eq!(
        some.len(),
        all.iter().filter(|r| (3..8).contains(&r.row)).count()
    );
    assert!(layout(&tree, &totals, &params(CallTree::ROOT, 0.0)).is_empty());
}

#[test]
fn a_window_shows_part_of_the_zoomed_node_cut_at_the_edges_and_culls_the_rest() {
    let (tree, totals) = cpu_tree();
    let all = layout(&tree, &totals, &params(CallTree::ROOT, 1000.0));
    // The middle fifth, five times as wide.
    let part = layout(
        &tree,
        &totals,
        &LayoutParams {
            window: 0.4..0.6,
            ..params(CallTree::ROOT, 1000.0)
        },
    );
    assert!(
        part.iter()
            .all(|r| r.x0 >= 0.0 && r.x1 <= 1000.0 && r.x0 <= r.x1)
    );
    for r in &part {
        let RectKind::Node(node) = r.kind else {
            continue;
        };
        if let Some(whole) = all.iter().find(|a| a.kind == r.kind) {
            // Where both show it whole, five times as wide, 400 pixels to the left.
            let (x0, x1) = ((whole.x0 - 400.0) * 5.0, (whole.x1 - 400.0) * 5.0);
            if x0 >= 0.0 && x1 <= 1000.0 {
                assert!((r.x0 - x0).abs() < 0.5 && (r.x1 - x1).abs() < 0.5, "{node}");
            }
        }
    }
    // Nodes wholly left or right of the window are not laid out.
    let outside = |a: &FlameRect| a.x1 < 399.0 || a.x0 > 601.0;
    assert!(all.iter().any(|a| a.row > 0 && outside(a)));
    for r in part.iter().filter(|r| r.row > 0) {
        if let Some(a) = all.iter().find(|a| a.kind == r.kind) {
            assert!(!outside(a), "{:?} is outside the window", r.kind);
        }
    }
}

#[test]
fn a_nodes_offset_is_where_the_whole_graph_draws_it() {
    let (tree, totals) = cpu_tree();
    let all = layout(
        &tree,
        &totals,
        &LayoutParams {
            min_width: 0.0,
            ..params(CallTree::ROOT, 1000.0)
        },
    );
    let scale = 1000.0 / totals[0] as f64;
    for r in all.iter().take(200) {
        let RectKind::Node(node) = r.kind else {
            continue;
        };
        let x = profile_model::layout::offset(&tree, &totals, node) as f64 * scale;
        assert!(
            (x - f64::from(r.x0)).abs() < 0.01,
            "{node}: {x} vs {}",
            r.x0
        );
    }
}
