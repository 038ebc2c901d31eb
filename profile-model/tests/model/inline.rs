//! pprof's `(inline)` marks come from call edges: an edge inlined in one location and
//! a real call in another is a real call, unless the inlined one is nearer the root in
//! the same sample. Checked on both ways of summing a top table.

use profile_model::codec::decode;
use profile_model::top::InlineMark;
use profile_model::{View, ViewOptions};

use super::profile_with_locations as profile;

/// The mark of function `name` in the top table, summed from the decoded profile and
/// from its bytes (which must agree).
fn mark(bytes: &[u8], name: &str) -> InlineMark {
    let p = decode(bytes).expect("valid");
    let view = View::new(&p, &ViewOptions::default());
    let top = view.top(&p, 0);
    let row = top
        .rows
        .iter()
        .find(|r| view.frames.get(r.frame).name == name);
    let decoded = row.expect("a row").reached.mark();
    let mut sum = profile_model::topsum::TopSum::new();
    sum.add_pprof(bytes, 0, 1).expect("valid");
    let (rows, _) = sum.finish();
    let wire = rows.iter().find(|r| r.name == name).expect("a row");
    assert_eq!(
        wire.reached.mark(),
        decoded,
        "{name}: wire and decoded sums agree"
    );
    decoded
}

/// The mark of `helper` in a profile of `samples` over functions 1 main, 2 work,
/// 3 helper, 4 other and locations 1 [helper, work] (helper inlined into work),
/// 2 [helper], 3 [work], 4 [main], 5 [other].
fn helper_mark(samples: &[&[u64]]) -> InlineMark {
    let b = profile(
        &["main", "work", "helper", "other"],
        &[&[3, 2], &[3], &[2], &[1], &[4]],
        samples,
    );
    mark(&b, "helper")
}

#[test]
fn inlined_only_is_inline() {
    assert_eq!(helper_mark(&[&[1, 4]]), InlineMark::Inline);
}

#[test]
fn inlined_by_one_caller_and_called_by_another_is_partial() {
    assert_eq!(helper_mark(&[&[1, 4], &[2, 5, 4]]), InlineMark::Partial);
}

#[test]
fn inlined_and_called_by_the_same_caller_is_a_call() {
    // work inlines helper at one call site and calls it at another: one edge, a call.
    assert_eq!(helper_mark(&[&[1, 4], &[2, 3, 4]]), InlineMark::None);
}

#[test]
fn the_rootmost_occurrence_of_an_edge_in_a_sample_decides() {
    // main → [work → helper inlined] → work → helper (a call, nearer the leaf): the
    // edge work → helper counts once per sample, inlined.
    assert_eq!(helper_mark(&[&[2, 3, 1, 4]]), InlineMark::Inline);
    // The other way round, the call is nearer the root.
    assert_eq!(helper_mark(&[&[1, 3, 2, 3, 4]]), InlineMark::None);
}

#[test]
fn a_frame_calling_itself_is_no_edge() {
    // helper inlined into work, and helper calling helper: still only inlined.
    assert_eq!(helper_mark(&[&[2, 1, 4]]), InlineMark::Inline);
}
