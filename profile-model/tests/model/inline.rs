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

/// The mark of `name` in the sum of `profiles`, summed every way flint sums them:
/// in the order given and reversed, on one sum and on one sum per profile absorbed
/// into the first (as threads do), from the bytes and from the decoded tops. All must
/// agree: the edges, not the order, decide.
fn sum_mark(profiles: &[Vec<u8>], name: &str) -> InlineMark {
    let mark_of = |sum: profile_model::topsum::TopSum| {
        let (rows, _) = sum.finish();
        rows.iter()
            .find(|r| r.name == name)
            .expect("a row")
            .reached
            .mark()
    };
    let mut marks = Vec::new();
    for reversed in [false, true] {
        let mut order: Vec<&Vec<u8>> = profiles.iter().collect();
        if reversed {
            order.reverse();
        }
        let mut one = profile_model::topsum::TopSum::new();
        let mut parts = Vec::new();
        let mut decoded = profile_model::topsum::TopSum::new();
        for bytes in &order {
            one.add_pprof(bytes, 0, 1).expect("valid");
            let mut part = profile_model::topsum::TopSum::new();
            part.add_pprof(bytes, 0, 1).expect("valid");
            parts.push(part);
            let p = decode(bytes).expect("valid");
            let view = View::new(&p, &ViewOptions::default());
            decoded.add(&view.top_to_sum(&p, 0), &view.frames, 1);
        }
        let mut absorbed = parts.remove(0);
        for part in parts {
            absorbed.absorb(part);
        }
        marks.extend([mark_of(one), mark_of(absorbed), mark_of(decoded)]);
    }
    assert!(
        marks.iter().all(|m| *m == marks[0]),
        "{name}: every way of summing gives one mark, not {marks:?}"
    );
    marks[0]
}

/// Functions 1 main, 2 work, 3 helper, 4 other, as in [`helper_mark`]: profiles of
/// one program, each of `samples` over locations 1 [helper, work], 2 [helper],
/// 3 [work], 4 [main], 5 [other].
fn program(samples: &[&[u64]]) -> Vec<u8> {
    profile(
        &["main", "work", "helper", "other"],
        &[&[3, 2], &[3], &[2], &[1], &[4]],
        samples,
    )
}

#[test]
fn an_edge_inlined_in_one_profile_and_called_in_another_is_a_call_in_their_sum() {
    // One profile only inlines work → helper (helper is never called there); the
    // other only calls it.
    let inlined = program(&[&[1, 4]]);
    let called = program(&[&[2, 3, 4]]);
    assert_eq!(
        sum_mark(std::slice::from_ref(&inlined), "helper"),
        InlineMark::Inline
    );
    assert_eq!(
        sum_mark(&[inlined.clone(), called], "helper"),
        InlineMark::None
    );
    // Called by another caller instead: the inlined edge stays inline.
    let other = program(&[&[2, 5, 4]]);
    assert_eq!(sum_mark(&[inlined, other], "helper"), InlineMark::Partial);
}

#[test]
fn the_rootmost_occurrence_decides_per_sample_across_profiles() {
    // work → helper is inlined nearer the root than its call in the first profile's
    // sample, so that sample counts it inline; the second profile only inlines it.
    let first = program(&[&[2, 3, 1, 4]]);
    let second = program(&[&[1, 4]]);
    assert_eq!(
        sum_mark(&[first.clone(), second], "helper"),
        InlineMark::Inline
    );
    // A third profile calls it: a call.
    let third = program(&[&[2, 3, 4]]);
    assert_eq!(sum_mark(&[first, third], "helper"), InlineMark::None);
}

#[test]
fn a_lone_profiles_marks_survive_being_absorbed() {
    // A table made for one profile alone carries no edges: its rows' marks are kept
    // as they are, through another sum's absorbing it.
    let bytes = program(&[&[1, 4]]);
    let p = decode(&bytes).expect("valid");
    let view = View::new(&p, &ViewOptions::default());
    let mut part = profile_model::topsum::TopSum::new();
    part.add(&view.top(&p, 0), &view.frames, 1);
    let mut sum = profile_model::topsum::TopSum::new();
    sum.absorb(part);
    let (rows, _) = sum.finish();
    let helper = rows.iter().find(|r| r.name == "helper").expect("a row");
    assert_eq!(helper.reached.mark(), InlineMark::Inline);
}
