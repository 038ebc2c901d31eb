//! Folded stacks (`root;…;leaf N`), the text format of flamegraph.pl and inferno.

use crate::calltree::{CallTree, NodeId};
use crate::frames::FrameTable;

/// One line per distinct stack with a non-zero self value in column `sample_type`,
/// root first, frames separated by `;`, in call tree order.
pub fn folded(tree: &CallTree, frames: &FrameTable, sample_type: usize) -> String {
    let mut out = String::new();
    let mut names: Vec<&str> = Vec::new();
    // Node ids are in depth-first order with siblings by name: the order of the lines.
    for node in 1..tree.len() as NodeId {
        let depth = tree.depth(node) as usize;
        names.truncate(depth - 1);
        names.push(frames.get(tree.frame(node)).name.as_str());
        let value = tree
            .self_values_of(node)
            .get(sample_type)
            .copied()
            .unwrap_or(0);
        if value != 0 {
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    out.push(';');
                }
                // `;` separates frames and the last space separates the count.
                out.extend(name.chars().map(|c| if c == ';' { ':' } else { c }));
            }
            out.push(' ');
            out.push_str(&value.to_string());
            out.push('\n');
        }
    }
    out
}
