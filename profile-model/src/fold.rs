//! Folded stacks (`root;…;leaf N`), the text format of flamegraph.pl and inferno.

use crate::calltree::{CallTree, NodeId};
use crate::frames::FrameTable;

/// One line per distinct stack with a non-zero self value in column `sample_type`,
/// root first, frames separated by `;`, in call tree order.
pub fn folded(tree: &CallTree, frames: &FrameTable, sample_type: usize) -> String {
    let mut out = String::new();
    for_each_folded_line(tree, frames, sample_type, |line| out.push_str(line));
    out
}

/// Writes the lines of [`folded`] to `out` as they are made: the folded text of a
/// day's merge is larger than the merged profile it is made of. The first failure to
/// write ends the writing and is returned.
pub fn write_folded(
    tree: &CallTree,
    frames: &FrameTable,
    sample_type: usize,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let mut written = Ok(());
    for_each_folded_line(tree, frames, sample_type, |line| {
        if written.is_ok() {
            written = out.write_all(line.as_bytes());
        }
    });
    written
}

/// The lines of [`folded`], each with its `\n`, handed to `line` one at a time.
fn for_each_folded_line(
    tree: &CallTree,
    frames: &FrameTable,
    sample_type: usize,
    mut line: impl FnMut(&str),
) {
    let mut text = String::new();
    let mut names: Vec<&str> = Vec::new();
    // The subtree ends of the nodes on `names`: a node is below those whose subtree
    // it lies in.
    let mut ends: Vec<NodeId> = Vec::new();
    // Node ids are in depth-first order with siblings by name: the order of the lines.
    for node in 1..tree.len() as NodeId {
        while ends.last().is_some_and(|&end| end <= node) {
            ends.pop();
            names.pop();
        }
        ends.push(tree.subtree_end(node));
        names.push(frames.get(tree.frame(node)).name.as_str());
        let value = tree
            .self_values_of(node)
            .get(sample_type)
            .copied()
            .unwrap_or(0);
        if value != 0 {
            text.clear();
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    text.push(';');
                }
                // `;` separates frames and the last space separates the count.
                text.extend(name.chars().map(|c| if c == ';' { ':' } else { c }));
            }
            text.push(' ');
            text.push_str(&value.to_string());
            text.push('\n');
            line(&text);
        }
    }
}
