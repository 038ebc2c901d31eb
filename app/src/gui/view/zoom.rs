//! Zooming in the flame graph: zoom, Back, Reset, and finding the same place again in a
//! recomputed tree.

use profile_model::{CallTree, NodeId};

use crate::gui::view::ProfileView;
use crate::gui::view::flame;
use crate::gui::view::loader::Loaded;

impl ProfileView {
    /// Zooms to `node` (remembering the previous zoom for Back).
    pub fn zoom_to(&mut self, node: NodeId) {
        if node != self.flame.zoom {
            self.flame.history.push(self.flame.zoom);
            self.flame.zoom = node;
        }
    }

    /// Back to the whole graph.
    pub fn reset_zoom(&mut self) {
        if self.flame.zoom != CallTree::ROOT {
            self.flame.history.push(self.flame.zoom);
        }
        self.flame.zoom = CallTree::ROOT;
        self.flame.history.clear();
        self.flame.cursor = None;
    }

    /// Back one zoom level.
    pub fn back(&mut self) {
        if let Some(prev) = self.flame.history.pop() {
            self.flame.zoom = prev;
        } else if let Some(cur) = &self.current
            && self.flame.zoom != CallTree::ROOT
        {
            self.flame.zoom = cur.tree.parent(self.flame.zoom);
        }
    }

    /// Names of the zoom path, to find the same place in a recomputed tree.
    pub(crate) fn zoom_names(&self) -> Vec<String> {
        let Some(cur) = &self.current else {
            return Vec::new();
        };
        if self.flame.zoom as usize >= cur.tree.len() {
            return Vec::new();
        }
        cur.tree
            .path(self.flame.zoom)
            .into_iter()
            .map(|n| flame::node_name(&cur.tree, &cur.frames, n).to_string())
            .collect()
    }
}

/// Follows frame names from the root; stops where the tree differs.
pub(crate) fn find_path(cur: &Loaded, names: &[String]) -> NodeId {
    let mut node = CallTree::ROOT;
    for name in names {
        let next = cur
            .tree
            .children(node)
            .find(|&c| flame::node_name(&cur.tree, &cur.frames, c) == name);
        match next {
            Some(c) => node = c,
            None => break,
        }
    }
    node
}
