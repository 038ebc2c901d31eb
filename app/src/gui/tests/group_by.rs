//! Group by labels: View → *Group by* makes label values the flame graph's first
//! levels, in the view and in compare mode (A, B and the diff).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::CallTree;

use crate::gui::app::FlintApp;
use crate::gui::tests::compare::compared;
use crate::gui::tests::view::harness;
use crate::gui::view::flame;

/// The names of the root's children in `tree`, sorted.
fn root_names(tree: &CallTree, frames: &profile_model::FrameTable) -> Vec<String> {
    let mut names: Vec<String> = tree
        .children(CallTree::ROOT)
        .map(|n| flame::node_name(tree, frames, n).to_string())
        .collect();
    names.sort();
    names
}

/// Opens View → *Group by* and ticks `key`.
fn tick(h: &mut Harness<'static, FlintApp>, key: &str) {
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label_contains("Group by").hover();
    h.run_steps(2);
    h.get_by_label(key).click();
    h.run_steps(4);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
}

#[test]
fn ticking_a_label_makes_its_values_the_roots_children() {
    let mut h = harness();
    tick(&mut h, "endpoint");
    let app = h.state();
    let cur = app.view.current().unwrap();
    assert_eq!(cur.settings.group_by, ["endpoint"]);
    let roots = root_names(&cur.tree, &cur.frames);
    assert!(
        roots.iter().any(|r| r == "endpoint=/api/hash"),
        "roots: {roots:?}"
    );
    // The runtime's GC samples have no endpoint: their stacks stay as they were.
    assert!(
        roots.iter().any(|r| r == "runtime.gcBgMarkWorker"),
        "{roots:?}"
    );
    assert!(!roots.iter().any(|r| r == "main.main"), "{roots:?}");
    // The menu's title says what is grouped by.
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Group by endpoint");
}

#[test]
fn compare_mode_groups_a_b_and_the_diff() {
    let (mut h, dir) = compared("group_by");
    tick(&mut h, "endpoint");
    let app = h.state();
    let res = app.compare.result.as_ref().expect("compared again");
    let roots = root_names(&res.tree, &res.frames);
    assert!(roots.iter().any(|r| r == "endpoint=/api/hash"), "{roots:?}");
    // A's and B's graphs are drawn from the diff's tree with each side's totals.
    let hash = res
        .tree
        .children(CallTree::ROOT)
        .find(|&n| flame::node_name(&res.tree, &res.frames, n) == "endpoint=/api/hash")
        .unwrap();
    assert!(res.totals_a[hash as usize] > 0 && res.totals_b[hash as usize] > 0);
    let _ = std::fs::remove_dir_all(dir);
}
