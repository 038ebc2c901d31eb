//! pprof's `drop_frames` and `keep_frames`, applied as pprof applies them when it
//! reads a profile (its `Prune`): a frame whose function fully matches `drop_frames`
//! and not `keep_frames` is cut from each stack together with everything it calls,
//! so that its time goes to its caller. Frames above the first one that is kept
//! (nearer the root) are never cut.

use regex::Regex;

use crate::names::function_name;
use crate::profile::{LocationId, Profile};

/// What a location is to pruning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// No line of it matches.
    Keep,
    /// An inlined line matches: the location stays with only that line's callers,
    /// and what it calls is cut.
    Beneath,
    /// Its outermost line matches: it is cut with what it calls.
    Whole,
}

/// Prunes `profile` by its own `drop_frames` and `keep_frames`. Nothing changes when
/// `drop_frames` is empty or either is not a valid regex (pprof ignores them then).
pub fn prune(profile: &mut Profile) {
    let Some(drop) = full_match(profile.str(profile.drop_frames)) else {
        return;
    };
    let keep = match profile.str(profile.keep_frames) {
        "" => None,
        keep => match full_match(keep) {
            Some(keep) => Some(keep),
            None => return,
        },
    };
    let dropped: Vec<bool> = profile
        .functions
        .iter()
        .map(|f| {
            let name = function_name(profile.str(f.name), profile.str(f.system_name));
            let name = simplify(&name);
            !name.is_empty()
                && drop.is_match(name)
                && !keep.as_ref().is_some_and(|k| k.is_match(name))
        })
        .collect();
    let mut cuts = Vec::with_capacity(profile.locations.len());
    for loc in &mut profile.locations {
        // Lines are innermost first: the outermost match decides.
        let matched = loc.lines.iter().rposition(|l| dropped[l.function as usize]);
        cuts.push(match matched {
            None => Cut::Keep,
            Some(i) if i + 1 == loc.lines.len() => Cut::Whole,
            Some(i) => {
                loc.lines.drain(..=i);
                Cut::Beneath
            }
        });
    }
    if cuts.iter().all(|c| *c == Cut::Keep) {
        return;
    }
    let samples = &mut profile.samples;
    let mut locations: Vec<LocationId> = Vec::with_capacity(samples.stack_locations.len());
    let mut offsets = Vec::with_capacity(samples.stack_offsets.len());
    offsets.push(0);
    for i in 0..samples.len() {
        let stack = samples.stack(i);
        locations.extend_from_slice(&stack[kept_from(stack, &cuts)..]);
        offsets.push(locations.len() as u32);
    }
    samples.stack_locations = locations;
    samples.stack_offsets = offsets;
}

/// Where the kept part of a leaf-first `stack` starts: scanning from the root, the
/// first location to cut after a kept one is cut with its callees (or, cut beneath,
/// only its callees are).
fn kept_from(stack: &[LocationId], cuts: &[Cut]) -> usize {
    let mut found_user = false;
    for (i, loc) in stack.iter().enumerate().rev() {
        match cuts[*loc as usize] {
            Cut::Keep => found_user = true,
            _ if !found_user => {}
            Cut::Whole => return i + 1,
            Cut::Beneath => return i,
        }
    }
    0
}

/// `pattern` as a regex that must match a whole name, `None` when it is empty or not
/// valid.
fn full_match(pattern: &str) -> Option<Regex> {
    if pattern.is_empty() {
        return None;
    }
    Regex::new(&format!("^(?:{pattern})$")).ok()
}

/// pprof's `simplifyFunc`: no leading `.`, and nothing from the first `(` on that does
/// not open `(anonymous namespace)` or belong to `operator()`.
fn simplify(name: &str) -> &str {
    let name = name.strip_prefix('.').unwrap_or(name);
    let mut i = 0;
    while let Some(at) = name[i..].find(['(', 'o']).map(|at| i + at) {
        let rest = &name[at..];
        if let Some(reserved) = ["(anonymous namespace)", "operator()"]
            .into_iter()
            .find(|r| rest.starts_with(r))
        {
            i = at + reserved.len();
        } else if rest.starts_with('(') {
            return &name[..at];
        } else {
            i = at + 1;
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Function, Line, Location, Samples};

    /// A profile of functions `names` (one location each, `inlined` holding several
    /// lines) and samples of `stacks` (root first, function indexes), value 1 each.
    fn profile(names: &[&str], stacks: &[&[u32]], drop: &str, keep: &str) -> Profile {
        let mut strings = vec![String::new(), drop.to_string(), keep.to_string()];
        strings.extend(names.iter().map(|n| (*n).to_string()));
        let functions = (0..names.len() as u32)
            .map(|i| Function {
                name: 3 + i,
                system_name: 3 + i,
                ..Function::default()
            })
            .collect();
        let locations = (0..names.len() as u32)
            .map(|i| Location {
                lines: vec![Line {
                    function: i,
                    ..Line::default()
                }],
                ..Location::default()
            })
            .collect();
        let mut samples = Samples {
            stack_offsets: vec![0],
            values: vec![Vec::new()],
            ..Samples::default()
        };
        for stack in stacks {
            samples.stack_locations.extend(stack.iter().rev());
            samples
                .stack_offsets
                .push(samples.stack_locations.len() as u32);
            samples.values[0].push(1);
            samples.label_set.push(0);
        }
        Profile {
            strings,
            drop_frames: 1,
            keep_frames: u32::from(!keep.is_empty()) * 2,
            functions,
            locations,
            label_sets: vec![Vec::new()],
            samples,
            ..Profile::default()
        }
    }

    fn stacks(p: &Profile) -> Vec<Vec<String>> {
        (0..p.samples.len())
            .map(|i| {
                let stack = p.samples.stack(i).iter().rev();
                stack
                    .map(|l| {
                        let line = p.locations[*l as usize].lines[0];
                        p.str(p.functions[line.function as usize].name).to_string()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_dropped_frame_goes_with_its_callees_but_not_above_the_first_kept_one() {
        let names = ["main", "work", "malloc", "memset", "runtime.start"];
        let mut p = profile(
            &names,
            &[&[0, 1, 2, 3], &[4, 0, 1], &[2, 0, 1], &[0, 1]],
            "malloc|runtime\\..*",
            "",
        );
        prune(&mut p);
        assert_eq!(
            stacks(&p),
            [
                vec!["main", "work"],
                vec!["runtime.start", "main", "work"],
                vec!["malloc", "main", "work"],
                vec!["main", "work"],
            ]
        );
    }

    #[test]
    fn keep_frames_spares_a_match_and_matches_are_whole_names() {
        let names = ["main", "runtime.keepme", "runtime.gc", "xmalloc"];
        let mut p = profile(
            &names,
            &[&[0, 1], &[0, 2], &[0, 3]],
            "runtime\\..*|malloc",
            "runtime\\.keepme",
        );
        prune(&mut p);
        assert_eq!(
            stacks(&p),
            [
                vec!["main", "runtime.keepme"],
                vec!["main"],
                vec!["main", "xmalloc"]
            ]
        );
    }

    #[test]
    fn an_invalid_regex_prunes_nothing() {
        let mut p = profile(&["main", "f"], &[&[0, 1]], "f(", "");
        let before = p.clone();
        prune(&mut p);
        assert_eq!(p, before);
    }

    #[test]
    fn names_are_simplified_before_matching() {
        assert_eq!(simplify(".foo::bar(int)"), "foo::bar");
        assert_eq!(
            simplify("(anonymous namespace)::f(int)"),
            "(anonymous namespace)::f"
        );
        assert_eq!(simplify("A::operator()(int)"), "A::operator()");
        assert_eq!(simplify("main.main"), "main.main");
    }
}
