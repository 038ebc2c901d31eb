//! Callers and callees (`go tool pprof -peek`): edges between neighbouring frames,
//! counted once per sample, never from a frame to itself, inlined only where every
//! sample inlines them.

use profile_model::codec::decode;
use profile_model::peek::PeekEntry;
use profile_model::{View, ViewOptions};

use super::profile_with_locations;

/// main (1) calls a (2), which calls b (3) or has it inlined: location 1 is b inlined
/// into a, 2 is a, 3 is main, 4 is b called.
const LOCATIONS: &[&[u64]] = &[&[3, 2], &[2], &[1], &[3]];

/// The peek of `name` in a profile of `samples` over [`LOCATIONS`], and the name of
/// each frame.
fn peek(samples: &[&[u64]], name: &str) -> (Vec<PeekEntry>, Vec<String>) {
    let bytes = profile_with_locations(&["main", "a", "b"], LOCATIONS, samples);
    let p = decode(&bytes).expect("valid");
    let view = View::new(&p, &ViewOptions::default());
    let top = view.top(&p, 0);
    let names: Vec<String> = view.frames.frames.iter().map(|f| f.name.clone()).collect();
    let entries = view.peek(&p, &top, 0, |f| names[f as usize] == name);
    (entries, names)
}

/// An entry's edges as (name, weight, inline).
fn edges(edges: &[profile_model::peek::PeekEdge], names: &[String]) -> Vec<(String, i64, bool)> {
    edges
        .iter()
        .map(|e| (names[e.frame as usize].clone(), e.weight, e.inline))
        .collect()
}

#[test]
fn recursion_counts_an_edge_once_per_sample_and_makes_no_edge_to_itself() {
    // main → a → b inlined; main → a → b called; main → a → a → b called.
    let (entries, names) = peek(&[&[1, 3], &[4, 2, 3], &[4, 2, 2, 3]], "a");
    assert_eq!(entries.len(), 1);
    let a = &entries[0];
    assert_eq!((a.row.flat, a.row.cum), (0, 3));
    assert_eq!(edges(&a.callers, &names), [("main".to_string(), 3, false)]);
    // Inlined in one sample, called in the others: not an inlined edge.
    assert_eq!(edges(&a.callees, &names), [("b".to_string(), 3, false)]);
}

#[test]
fn an_edge_every_sample_inlines_is_inlined() {
    // b inlined into a, under main directly and under a called by main.
    let (entries, names) = peek(&[&[1, 3], &[1, 2, 3]], "b");
    let b = &entries[0];
    assert_eq!((b.row.flat, b.row.cum), (2, 2));
    assert_eq!(edges(&b.callers, &names), [("a".to_string(), 2, true)]);
    assert!(b.callees.is_empty());
}

#[test]
fn edges_are_heaviest_first_then_by_name() {
    // main calls a twice and b once, b directly.
    let (entries, names) = peek(&[&[2, 3], &[2, 3], &[4, 3], &[3]], "main");
    let main = &entries[0];
    assert_eq!((main.row.flat, main.row.cum), (1, 4));
    assert!(main.callers.is_empty());
    assert_eq!(
        edges(&main.callees, &names),
        [("a".to_string(), 2, false), ("b".to_string(), 1, false)]
    );
    let (none, _) = peek(&[&[2, 3]], "nothing");
    assert!(none.is_empty());
}
