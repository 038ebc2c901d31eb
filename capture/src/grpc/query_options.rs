//! The options of a Query that shape the profile before any report is made: `filter`,
//! `sandwich_by_function`, `invert_call_stack` and `group_by`, as Parca's
//! `pkg/query/columnquery.go` (`Query`, `FilterProfileData`, `filterRecord`,
//! `ConvertDeprecatedFilters`), `pkg/parcacol/querier.go` (`resolveStacks`,
//! `selectMerge`) and `pkg/query/pprof.go` (`PprofWriter`) apply them:
//!
//! - A text condition (equal, contains, starts with, and their negations) compares
//!   with ASCII case folded; an empty text is contained in any. A number condition is
//!   equal or not equal.
//! - A stack filter keeps whole samples; several all have to hold. Within its
//!   criteria a function name condition alone decides; otherwise every set condition
//!   has to hold. Over the lines of the stack, function name, system name, file name
//!   and line number hold when one line matches, or for a negated condition when no
//!   line breaks it; binary (the mapping file's base name) and address hold when one
//!   location matches. A sample with no location is kept.
//! - A frame filter keeps the lines of a location that meet every frame filter's
//!   every condition (line conditions pass for a location without lines, binary for
//!   one without mapping); a location with no line left is cut from the stack, and a
//!   sample with no location left is not in the answer.
//! - The deprecated `function_name_stack_filter` is a stack filter on the function
//!   name, contains (or not, with `exclude`); `binary_frame_filter` is one frame
//!   filter per binary, contains. `filter_query` and `runtime_filter` are ignored.
//! - `sandwich_by_function` (when not empty) is one more stack filter, function name
//!   contains it. A merge also first cuts every stack at the function, matched
//!   exactly on a location's first line: from the leaf to the first match, or with
//!   `invert_call_stack` from the last match to the root; a stack without it is left
//!   out of the answer (and is not counted as filtered).
//! - `invert_call_stack` reverses every stack, root first.
//! - `group_by` fields must be `function_file_name`, `function_name`,
//!   `location_address`, `mapping_file`, `timestamp`, or start with `labels.`; any
//!   other is refused with INVALID_ARGUMENT "invalid group by field: …". In a pprof
//!   report a merge's samples then carry the (string) labels named `labels.<name>`
//!   only; the other fields change nothing there.
//! - `filtered` is the value of the samples the stack filters removed (of B's for a
//!   diff), 0 without filters; frame filters change no sample's value.

use std::collections::HashSet;

use profile_model::Profile;
use profile_model::profile::{Line, Location, LocationId};
use tonic::Status;

use crate::grpc::proto::query::query_request::Mode;
use crate::grpc::proto::query::{
    self as pq, FilterCriteria, NumberCondition, StringCondition, filter, frame_filter,
    number_condition, stack_filter, string_condition,
};

/// The `group_by` fields Parca accepts besides `labels.<name>`.
const GROUP_BY_FIELDS: [&str; 5] = [
    "function_file_name",
    "function_name",
    "location_address",
    "mapping_file",
    "timestamp",
];

/// The prefix of a `group_by` field that names a label.
const LABELS_PREFIX: &str = "labels.";

/// What a Query asks to be done to its profile before the report; see the module
/// documentation for the rules.
#[derive(Debug, Clone, Default)]
pub struct QueryOptions {
    /// The criteria every kept sample's stack meets.
    stack_filters: Vec<FilterCriteria>,
    /// The criteria every kept line (or location without lines) meets.
    frame_filters: Vec<FilterCriteria>,
    /// The function a merge's stacks are cut at.
    cut_at: Option<String>,
    /// Whether stacks are answered root first.
    invert: bool,
    /// The label keys a merge's samples keep, when `group_by` names labels.
    label_keys: Option<HashSet<String>>,
}

/// A profile shaped by [`QueryOptions::apply`], and the value its stack filters removed.
#[derive(Debug, Clone)]
pub struct Shaped {
    /// The profile to report.
    pub profile: Profile,
    /// The value of the samples the stack filters removed (Parca's `filtered`).
    pub filtered: i64,
}

impl QueryOptions {
    /// Reads the options of `request`, refusing an invalid `group_by` field as Parca
    /// does (INVALID_ARGUMENT).
    pub fn of_request(request: &pq::QueryRequest) -> Result<Self, Status> {
        let merge = request.mode == Mode::Merge as i32;
        let group_by = request.group_by.as_ref().map_or(&[][..], |g| &g.fields);
        let label_keys = label_keys(group_by)?;
        let sandwich = request.sandwich_by_function.as_deref().unwrap_or_default();
        let mut options = Self::default();
        for f in request.filter.iter().filter_map(|f| f.filter.as_ref()) {
            options.add(f);
        }
        if !sandwich.is_empty() {
            options.stack_filters.push(FilterCriteria {
                function_name: Some(text(string_condition::Condition::Contains(
                    sandwich.to_string(),
                ))),
                ..FilterCriteria::default()
            });
            options.cut_at = merge.then(|| sandwich.to_string());
        }
        options.invert = request.invert_call_stack.unwrap_or(false);
        options.label_keys = label_keys.filter(|_| merge);
        Ok(options)
    }

    /// Adds one filter, the deprecated forms turned into criteria as Parca turns them.
    #[allow(deprecated, reason = "Parca still honours the deprecated filters")]
    fn add(&mut self, f: &filter::Filter) {
        use string_condition::Condition;
        match f {
            filter::Filter::StackFilter(s) => match &s.filter {
                Some(stack_filter::Filter::Criteria(c)) => self.stack_filters.push(c.clone()),
                Some(stack_filter::Filter::FunctionNameStackFilter(n)) => {
                    let name = n.function_to_filter.clone();
                    let condition = match n.exclude {
                        true => Condition::NotContains(name),
                        false => Condition::Contains(name),
                    };
                    self.stack_filters.push(FilterCriteria {
                        function_name: Some(text(condition)),
                        ..FilterCriteria::default()
                    });
                }
                None => {}
            },
            filter::Filter::FrameFilter(f) => match &f.filter {
                Some(frame_filter::Filter::Criteria(c)) => self.frame_filters.push(c.clone()),
                Some(frame_filter::Filter::BinaryFrameFilter(b)) => {
                    self.frame_filters
                        .extend(b.include_binaries.iter().map(|binary| FilterCriteria {
                            binary: Some(text(Condition::Contains(binary.clone()))),
                            ..FilterCriteria::default()
                        }));
                }
                None => {}
            },
        }
    }

    /// Whether the options leave every profile as it is.
    fn is_identity(&self) -> bool {
        self.stack_filters.is_empty()
            && self.frame_filters.is_empty()
            && self.cut_at.is_none()
            && !self.invert
            && self.label_keys.is_none()
    }

    /// `profile` (one sample type) shaped by the options: cut at the sandwich
    /// function, stack and frame filtered, inverted, its labels kept to `group_by`'s.
    pub fn apply(&self, mut profile: Profile) -> Shaped {
        if self.is_identity() {
            return Shaped {
                profile,
                filtered: 0,
            };
        }
        if let Some(function) = &self.cut_at {
            cut_at(&mut profile, function, self.invert);
        }
        let kept = self.stacks_kept(&profile);
        let filtered = removed_value(&profile, &kept);
        let frame_filters = self.prepare(&profile, true);
        let frames = frames_kept(&mut profile.locations, &frame_filters);
        let invert = self.invert;
        profile.samples.restack(|i, stack, out| {
            let start = out.len();
            out.extend(stack.iter().filter(|&&l| frames[l as usize]));
            if invert {
                out[start..].reverse();
            }
            kept[i] && out.len() > start
        });
        if let Some(keys) = &self.label_keys {
            let named: HashSet<u32> = (profile.strings.iter().enumerate())
                .filter(|(_, s)| keys.contains(*s))
                .map(|(i, _)| i as u32)
                .collect();
            profile.keep_labels(|l| l.str != 0 && named.contains(&l.key));
        }
        Shaped { profile, filtered }
    }

    /// The value of `profile`'s samples the stack filters remove: Parca's `filtered`
    /// for B, the compared side of a diff.
    pub fn removed_value(&self, profile: &Profile) -> i64 {
        removed_value(profile, &self.stacks_kept(profile))
    }

    /// Whether each sample of `profile` meets every stack filter.
    fn stacks_kept(&self, profile: &Profile) -> Vec<bool> {
        let filters = self.prepare(profile, false);
        (0..profile.samples.len())
            .map(|i| {
                let stack = profile.samples.stack(i);
                stack.is_empty() || filters.iter().all(|f| f.stack_matches(profile, stack))
            })
            .collect()
    }

    /// The stack (`frames` false) or frame filters, prepared for `profile`.
    fn prepare<'o>(&'o self, profile: &Profile, frames: bool) -> Vec<Prepared<'o>> {
        let filters = match frames {
            true => &self.frame_filters,
            false => &self.stack_filters,
        };
        filters.iter().map(|c| Prepared::new(c, profile)).collect()
    }
}

/// The label keys a `group_by` names, `None` when it names none; an unknown field
/// is refused.
fn label_keys(fields: &[String]) -> Result<Option<HashSet<String>>, Status> {
    let mut keys = HashSet::new();
    for field in fields {
        if let Some(key) = field.strip_prefix(LABELS_PREFIX) {
            keys.insert(key.to_string());
        } else if !GROUP_BY_FIELDS.contains(&field.as_str()) {
            return Err(Status::invalid_argument(format!(
                "invalid group by field: {field}"
            )));
        }
    }
    Ok((!keys.is_empty()).then_some(keys))
}

/// A string condition.
fn text(condition: string_condition::Condition) -> StringCondition {
    StringCondition {
        condition: Some(condition),
    }
}

/// The summed first value of the samples not `kept`.
fn removed_value(profile: &Profile, kept: &[bool]) -> i64 {
    let values = profile
        .samples
        .values
        .first()
        .map_or(&[][..], Vec::as_slice);
    values
        .iter()
        .zip(kept)
        .filter(|(_, kept)| !**kept)
        .fold(0, |sum, (v, _)| sum.wrapping_add(*v))
}

/// Cuts every stack at `function` (exactly the name of a location's first line):
/// leaf first up to its first match, or (`callers`) from its last match to the root;
/// a sample without it is dropped.
fn cut_at(profile: &mut Profile, function: &str, callers: bool) {
    let is_function: Vec<bool> = (profile.locations.iter())
        .map(|l| {
            l.lines.first().is_some_and(|line| {
                let f = profile.functions.get(line.function as usize);
                f.is_some_and(|f| profile.str(f.name) == function)
            })
        })
        .collect();
    let matches = |l: &LocationId| is_function[*l as usize];
    profile.samples.restack(|_, stack, out| {
        let kept = match callers {
            true => stack.iter().rposition(matches).map(|i| &stack[i..]),
            false => stack.iter().position(matches).map(|i| &stack[..=i]),
        };
        out.extend_from_slice(kept.unwrap_or_default());
        kept.is_some()
    });
}

/// Keeps in each location the lines that pass every frame filter, and says which
/// locations stay: those with a line left, or without lines that pass.
fn frames_kept(locations: &mut [Location], filters: &[Prepared<'_>]) -> Vec<bool> {
    if filters.is_empty() {
        return vec![true; locations.len()];
    }
    locations
        .iter_mut()
        .map(|location| {
            if location.lines.is_empty() {
                return filters.iter().all(|f| f.frame_passes(location, None));
            }
            let passed: Vec<Line> = (location.lines.iter().copied())
                .filter(|line| filters.iter().all(|f| f.frame_passes(location, Some(line))))
                .collect();
            if passed.is_empty() {
                return false;
            }
            location.lines = passed;
            true
        })
        .collect()
}

/// One filter's criteria with its text conditions decided once per function and per
/// mapping of a profile.
struct Prepared<'c> {
    /// The criteria.
    criteria: &'c FilterCriteria,
    /// Whether each function's name meets `function_name`, when set.
    function_name: Option<Vec<bool>>,
    /// Whether each function's system name meets `system_name`, when set.
    system_name: Option<Vec<bool>>,
    /// Whether each function's file name meets `filename`, when set.
    filename: Option<Vec<bool>>,
    /// Whether each mapping's file base name meets `binary`, when set.
    binary: Option<Vec<bool>>,
}

impl<'c> Prepared<'c> {
    fn new(criteria: &'c FilterCriteria, profile: &Profile) -> Self {
        let functions = |condition: &Option<StringCondition>, field: fn(&_) -> u32| {
            condition.as_ref().map(|c| {
                (profile.functions.iter())
                    .map(|f| text_holds(c, profile.str(field(f))))
                    .collect()
            })
        };
        let binary = criteria.binary.as_ref().map(|c| {
            (profile.mappings.iter())
                .map(|m| text_holds(c, base_name(profile.str(m.filename))))
                .collect()
        });
        Self {
            criteria,
            function_name: functions(&criteria.function_name, |f| f.name),
            system_name: functions(&criteria.system_name, |f| f.system_name),
            filename: functions(&criteria.filename, |f| f.filename),
            binary,
        }
    }

    /// Whether a stack (not empty) meets the criteria as a stack filter.
    fn stack_matches(&self, profile: &Profile, stack: &[LocationId]) -> bool {
        let locations = || {
            stack
                .iter()
                .filter_map(|&l| profile.locations.get(l as usize))
        };
        let lines = || locations().flat_map(|l| l.lines.iter());
        let over_functions = |decided: &Option<Vec<bool>>, c: &Option<StringCondition>| {
            decided.as_ref().zip(c.as_ref()).is_none_or(|(decided, c)| {
                over_lines(negated(c), lines(), |l| flag(decided, l.function))
            })
        };
        if self.function_name.is_some() {
            return over_functions(&self.function_name, &self.criteria.function_name);
        }
        let c = self.criteria;
        self.binary
            .as_ref()
            .is_none_or(|decided| locations().any(|l| l.mapping.is_some_and(|m| flag(decided, m))))
            && over_functions(&self.system_name, &c.system_name)
            && over_functions(&self.filename, &c.filename)
            && (c.address.as_ref()).is_none_or(|a| locations().any(|l| number_holds(a, l.address)))
            && (c.line_number.as_ref()).is_none_or(|n| {
                over_lines(number_negated(n), lines(), |l| {
                    number_holds(n, l.line as u64)
                })
            })
    }

    /// Whether a location's `line` (or the location, when it has no lines) meets the
    /// criteria as a frame filter.
    fn frame_passes(&self, location: &Location, line: Option<&Line>) -> bool {
        let of_line = |decided: &Option<Vec<bool>>| match (decided, line) {
            (Some(decided), Some(line)) => flag(decided, line.function),
            _ => true,
        };
        let c = self.criteria;
        of_line(&self.function_name)
            && of_line(&self.system_name)
            && of_line(&self.filename)
            && match (&self.binary, location.mapping) {
                (Some(decided), Some(m)) => flag(decided, m),
                _ => true,
            }
            && (c.address.as_ref()).is_none_or(|a| number_holds(a, location.address))
            && match (&c.line_number, line) {
                (Some(n), Some(line)) => number_holds(n, line.line as u64),
                _ => true,
            }
    }
}

/// Entry `i` of decided flags; false for an index out of range.
fn flag(decided: &[bool], i: u32) -> bool {
    decided.get(i as usize).copied().unwrap_or(false)
}

/// Whether a condition over a stack's lines holds: one line meets it, or for a
/// `negated` one, no line breaks it.
fn over_lines<'l>(
    negated: bool,
    mut lines: impl Iterator<Item = &'l Line>,
    holds: impl Fn(&Line) -> bool,
) -> bool {
    match negated {
        true => lines.all(holds),
        false => lines.any(holds),
    }
}

/// The part of a path after its last `/`.
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether a string condition is one of the negated ones.
fn negated(condition: &StringCondition) -> bool {
    use string_condition::Condition::{NotContains, NotEqual, NotStartsWith};
    matches!(
        condition.condition,
        Some(NotEqual(_) | NotContains(_) | NotStartsWith(_))
    )
}

/// Whether a number condition is the negated one.
fn number_negated(condition: &NumberCondition) -> bool {
    matches!(
        condition.condition,
        Some(number_condition::Condition::NotEqual(_))
    )
}

/// Whether `value` meets a string condition, ASCII case folded; no condition is met
/// by any value.
fn text_holds(condition: &StringCondition, value: &str) -> bool {
    use string_condition::Condition;
    let (value, lower) = (value.as_bytes(), |t: &String| t.to_ascii_lowercase());
    match &condition.condition {
        Some(Condition::Equal(t)) => value.eq_ignore_ascii_case(t.as_bytes()),
        Some(Condition::NotEqual(t)) => !value.eq_ignore_ascii_case(t.as_bytes()),
        Some(Condition::Contains(t)) => contains_folded(value, lower(t).as_bytes()),
        Some(Condition::NotContains(t)) => !contains_folded(value, lower(t).as_bytes()),
        Some(Condition::StartsWith(t)) => starts_folded(value, t.as_bytes()),
        Some(Condition::NotStartsWith(t)) => !starts_folded(value, t.as_bytes()),
        None => true,
    }
}

/// Whether `value` contains `lower` (ASCII lower case), ASCII case folded.
fn contains_folded(value: &[u8], lower: &[u8]) -> bool {
    lower.is_empty()
        || value
            .windows(lower.len())
            .any(|w| w.eq_ignore_ascii_case(lower))
}

/// Whether `value` starts with `prefix`, ASCII case folded.
fn starts_folded(value: &[u8], prefix: &[u8]) -> bool {
    value
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// Whether `value` meets a number condition; no condition is met by any value.
fn number_holds(condition: &NumberCondition, value: u64) -> bool {
    match condition.condition {
        Some(number_condition::Condition::Equal(n)) => value == n,
        Some(number_condition::Condition::NotEqual(n)) => value != n,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use profile_model::profile::{Function, Label, Mapping, Samples};
    use string_condition::Condition;

    use super::*;

    /// Functions main.main (1), app.Hash (2), crypto/sha256.block (3); location 2 is
    /// sha256.block inlined in app.Hash, in libc.so. Samples [2 1 0] = 10 at
    /// endpoint=/a, [1 0] = 20 at /b, [0] = 40 at /a.
    fn profile() -> Profile {
        let strings = [
            "",
            "main.main",
            "app.Hash",
            "crypto/sha256.block",
            "/usr/bin/app",
            "/lib/libc.so",
            "endpoint",
            "/a",
            "/b",
        ];
        let function = |name| Function {
            name,
            ..Function::default()
        };
        let mapping = |filename| Mapping {
            filename,
            ..Mapping::default()
        };
        let line = |function| Line {
            function,
            line: 7,
            column: 0,
        };
        let location = |mapping, address, lines| Location {
            mapping: Some(mapping),
            address,
            lines,
            is_folded: false,
        };
        let endpoint = |str| Label {
            key: 6,
            str,
            ..Label::default()
        };
        Profile {
            strings: strings.iter().map(|s| s.to_string()).collect(),
            functions: vec![function(1), function(2), function(3)],
            mappings: vec![mapping(4), mapping(5)],
            locations: vec![
                location(0, 0x10, vec![line(0)]),
                location(0, 0x20, vec![line(1)]),
                location(1, 0x30, vec![line(2), line(1)]),
            ],
            label_sets: vec![vec![], vec![endpoint(7)], vec![endpoint(8)]],
            samples: Samples {
                stack_offsets: vec![0, 3, 5, 6],
                stack_locations: vec![2, 1, 0, 1, 0, 0],
                values: vec![vec![10, 20, 40]],
                label_set: vec![1, 2, 1],
            },
            ..Profile::default()
        }
    }

    fn text_criteria(
        field: fn(&mut FilterCriteria) -> &mut Option<StringCondition>,
        c: Condition,
    ) -> FilterCriteria {
        let mut criteria = FilterCriteria::default();
        *field(&mut criteria) = Some(text(c));
        criteria
    }

    fn function_name(c: Condition) -> FilterCriteria {
        text_criteria(|f| &mut f.function_name, c)
    }

    fn stack(criteria: FilterCriteria) -> pq::Filter {
        pq::Filter {
            filter: Some(filter::Filter::StackFilter(pq::StackFilter {
                filter: Some(stack_filter::Filter::Criteria(criteria)),
            })),
        }
    }

    fn frame(criteria: FilterCriteria) -> pq::Filter {
        pq::Filter {
            filter: Some(filter::Filter::FrameFilter(pq::FrameFilter {
                filter: Some(frame_filter::Filter::Criteria(criteria)),
            })),
        }
    }

    fn request(mode: Mode, filter: Vec<pq::Filter>) -> pq::QueryRequest {
        pq::QueryRequest {
            mode: mode as i32,
            filter,
            ..pq::QueryRequest::default()
        }
    }

    /// Each sample as (its lines' function names, leaf first; its value).
    fn samples(p: &Profile) -> Vec<(Vec<&str>, i64)> {
        (0..p.samples.len())
            .map(|i| {
                let names = (p.samples.stack(i).iter())
                    .flat_map(|&l| &p.locations[l as usize].lines)
                    .map(|l| p.str(p.functions[l.function as usize].name))
                    .collect();
                (names, p.samples.values[0][i])
            })
            .collect()
    }

    fn shaped(request: &pq::QueryRequest) -> Shaped {
        QueryOptions::of_request(request).unwrap().apply(profile())
    }

    const SHA: &str = "crypto/sha256.block";

    #[test]
    fn text_conditions_fold_ascii_case() {
        let holds = |c, v| text_holds(&text(c), v);
        assert!(holds(Condition::Contains("SHA256".into()), SHA));
        assert!(holds(Condition::Contains(String::new()), SHA));
        assert!(!holds(Condition::NotContains("Sha256".into()), SHA));
        assert!(holds(Condition::Equal("Main.Main".into()), "main.main"));
        assert!(!holds(Condition::Equal("main".into()), "main.main"));
        assert!(holds(Condition::StartsWith("CRYPTO/".into()), SHA));
        assert!(!holds(Condition::StartsWith("sha256".into()), SHA));
        assert!(holds(Condition::NotEqual("main".into()), "main.main"));
        assert!(holds(Condition::Contains("é".into()), "café"));
        assert!(!holds(Condition::Contains("É".into()), "café"));
    }

    #[test]
    fn a_stack_filter_keeps_whole_stacks_and_counts_what_it_removes() {
        let got = shaped(&request(
            Mode::Merge,
            vec![stack(function_name(Condition::Contains("SHA256".into())))],
        ));
        assert_eq!(
            samples(&got.profile),
            vec![(vec![SHA, "app.Hash", "app.Hash", "main.main"], 10)]
        );
        assert_eq!(got.filtered, 60);
    }

    #[test]
    fn a_negated_stack_filter_needs_every_line_to_pass() {
        let got = shaped(&request(
            Mode::SingleUnspecified,
            vec![stack(function_name(Condition::NotContains(
                "sha256".into(),
            )))],
        ));
        assert_eq!(got.profile.samples.values, vec![vec![20, 40]]);
        assert_eq!(got.filtered, 10);
    }

    #[test]
    fn stack_filters_all_hold_and_a_function_name_alone_decides_its_criteria() {
        let mut criteria = function_name(Condition::Contains("app".into()));
        criteria.binary = Some(text(Condition::Equal("nothing".into())));
        let main = stack(function_name(Condition::Equal("MAIN.MAIN".into())));
        let got = shaped(&request(Mode::Merge, vec![stack(criteria), main]));
        assert_eq!(got.profile.samples.values, vec![vec![10, 20]]);
        assert_eq!(got.filtered, 40);
        let libc = text_criteria(|f| &mut f.binary, Condition::Equal("LIBC.SO".into()));
        let got = shaped(&request(Mode::Merge, vec![stack(libc)]));
        assert_eq!(got.profile.samples.values, vec![vec![10]]);
    }

    #[test]
    fn a_frame_filter_keeps_lines_and_drops_stacks_left_empty_without_counting_them() {
        let got = shaped(&request(
            Mode::Merge,
            vec![frame(function_name(Condition::StartsWith("app.".into())))],
        ));
        assert_eq!(
            samples(&got.profile),
            vec![(vec!["app.Hash", "app.Hash"], 10), (vec!["app.Hash"], 20)]
        );
        assert_eq!(got.filtered, 0);
    }

    #[test]
    fn frame_filters_all_hold_on_each_line() {
        let mut on_line = function_name(Condition::NotEqual("main.main".into()));
        on_line.line_number = Some(NumberCondition {
            condition: Some(number_condition::Condition::Equal(7)),
        });
        let address = FilterCriteria {
            address: Some(NumberCondition {
                condition: Some(number_condition::Condition::NotEqual(0x20)),
            }),
            ..FilterCriteria::default()
        };
        let got = shaped(&request(Mode::Merge, vec![frame(on_line), frame(address)]));
        assert_eq!(samples(&got.profile), vec![(vec![SHA, "app.Hash"], 10)]);
    }

    #[test]
    #[allow(deprecated, reason = "the deprecated filters are honoured")]
    fn deprecated_filters_are_contains_filters() {
        let exclude = pq::Filter {
            filter: Some(filter::Filter::StackFilter(pq::StackFilter {
                filter: Some(stack_filter::Filter::FunctionNameStackFilter(
                    pq::FunctionNameStackFilter {
                        function_to_filter: "HASH".into(),
                        exclude: true,
                    },
                )),
            })),
        };
        let got = shaped(&request(Mode::Merge, vec![exclude]));
        assert_eq!(
            (got.profile.samples.values, got.filtered),
            (vec![vec![40]], 30)
        );
        let binaries = pq::Filter {
            filter: Some(filter::Filter::FrameFilter(pq::FrameFilter {
                filter: Some(frame_filter::Filter::BinaryFrameFilter(
                    pq::BinaryFrameFilter {
                        include_binaries: vec!["libc".into()],
                    },
                )),
            })),
        };
        let got = shaped(&request(Mode::Merge, vec![binaries]));
        assert_eq!(samples(&got.profile), vec![(vec![SHA, "app.Hash"], 10)]);
    }

    #[test]
    fn a_merge_sandwich_cuts_at_the_function_and_drops_stacks_without_it() {
        let mut r = request(Mode::Merge, Vec::new());
        r.sandwich_by_function = Some("app.Hash".into());
        let got = shaped(&r);
        assert_eq!(
            samples(&got.profile),
            vec![
                (vec![SHA, "app.Hash", "app.Hash"], 10),
                (vec!["app.Hash"], 20)
            ]
        );
        assert_eq!(got.filtered, 0);
        r.invert_call_stack = Some(true);
        let got = shaped(&r);
        assert_eq!(
            samples(&got.profile),
            vec![
                (vec!["main.main", "app.Hash"], 10),
                (vec!["main.main", "app.Hash"], 20)
            ]
        );
        // Matched exactly: a name only contained is no cut, and the stack goes.
        r.sandwich_by_function = Some("app.hash".into());
        assert!(shaped(&r).profile.samples.is_empty());
    }

    #[test]
    fn a_single_sandwich_is_a_contains_stack_filter() {
        let mut r = request(Mode::SingleUnspecified, Vec::new());
        r.sandwich_by_function = Some("APP.hash".into());
        let got = shaped(&r);
        assert_eq!(got.profile.samples.values, vec![vec![10, 20]]);
        assert_eq!(got.profile.samples.stack(0), &[2, 1, 0]);
        assert_eq!(got.filtered, 40);
    }

    #[test]
    fn invert_call_stack_puts_the_root_first() {
        let mut r = request(Mode::Diff, Vec::new());
        r.invert_call_stack = Some(true);
        let got = shaped(&r);
        assert_eq!(got.profile.samples.stack(0), &[0, 1, 2]);
        assert_eq!(got.profile.samples.stack(2), &[0]);
    }

    #[test]
    fn group_by_refuses_unknown_fields_and_keeps_a_merges_named_labels() {
        let with = |mode, fields: &[&str]| pq::QueryRequest {
            group_by: Some(pq::GroupBy {
                fields: fields.iter().map(|f| f.to_string()).collect(),
            }),
            ..request(mode, Vec::new())
        };
        let refused = QueryOptions::of_request(&with(Mode::Merge, &["function_name", "job"]));
        let status = refused.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert_eq!(status.message(), "invalid group by field: job");
        let got = shaped(&with(Mode::Merge, &["labels.pod", "mapping_file"]));
        assert_eq!(got.profile.label_sets, vec![Vec::<Label>::new()]);
        assert_eq!(got.profile.samples.label_set, vec![0, 0, 0]);
        let got = shaped(&with(Mode::Merge, &["labels.endpoint"]));
        assert_eq!(got.profile, profile());
        let got = shaped(&with(Mode::SingleUnspecified, &["labels.pod"]));
        assert_eq!(got.profile, profile());
    }
}
