//! pprof's sample filters: focus, ignore, hide and tag (label) filters.

use regex::Regex;

use crate::names::function_name;
use crate::profile::{LabelSetId, Line, LocationId, MappingId, Profile};

/// A filter on sample labels, `key=value`: the sample must have label `key` with a value
/// matched by the regex `value` (string labels) or equal to it (numeric labels), as
/// pprof's `-tagfocus`.
#[derive(Debug, Clone)]
pub struct TagFilter {
    /// Label key.
    pub key: String,
    /// Value pattern as typed.
    pub value: String,
    regex: Regex,
}

impl TagFilter {
    /// Parses `key=value`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let Some((key, value)) = spec.split_once('=') else {
            return Err(format!("tag filter {spec:?} is not of the form KEY=VALUE"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("tag filter {spec:?} has an empty key"));
        }
        let regex = Regex::new(value)
            .map_err(|e| format!("tag filter {spec:?}: invalid regex: {}", regex_error(&e)))?;
        Ok(Self {
            key: key.to_string(),
            value: value.to_string(),
            regex,
        })
    }

    /// Whether the filter keeps a label of its key with string value `value`.
    pub fn keeps_str(&self, value: &str) -> bool {
        self.regex.is_match(value)
    }

    /// Whether the filter keeps a label of its key with numeric value `value`.
    pub fn keeps_num(&self, value: i64) -> bool {
        self.value.trim().parse::<i64>() == Ok(value)
    }
}

/// The filters of a view, as pprof's `-focus`, `-ignore`, `-hide` and `-tagfocus`.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Keep only samples with a frame whose function, file or binary matches.
    pub focus: Option<Regex>,
    /// Drop samples with a frame whose function, file or binary matches.
    pub ignore: Option<Regex>,
    /// Remove frames whose function name matches from stacks.
    pub hide: Option<Regex>,
    /// Keep only samples whose labels match all of these.
    pub tags: Vec<TagFilter>,
}

/// Compiles a user-typed regex, naming the option in the error.
pub fn compile_regex(option: &str, pattern: &str) -> Result<Option<Regex>, String> {
    if pattern.is_empty() {
        return Ok(None);
    }
    Regex::new(pattern)
        .map(Some)
        .map_err(|e| format!("invalid {option} regex {pattern:?}: {}", regex_error(&e)))
}

/// The regex crate's error on one line: its last line says what is wrong.
pub fn regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    let last = text.lines().last().unwrap_or(&text);
    last.trim().trim_start_matches("error: ").to_string()
}

impl Filters {
    /// Whether no filter is set.
    pub fn is_empty(&self) -> bool {
        self.focus.is_none() && self.ignore.is_none() && self.hide.is_none() && self.tags.is_empty()
    }

    /// Precomputes which locations and label sets pass, so that checking a sample is
    /// a few array look-ups.
    pub fn prepare(&self, profile: &Profile) -> SampleFilter {
        let location_matches = |re: &Regex| -> Vec<bool> {
            let functions: Vec<bool> = profile
                .functions
                .iter()
                .map(|f| {
                    let name = function_name(profile.str(f.name), profile.str(f.system_name));
                    re.is_match(&name) || re.is_match(profile.str(f.filename))
                })
                .collect();
            let mappings: Vec<bool> = profile
                .mappings
                .iter()
                .map(|m| re.is_match(profile.str(m.filename)))
                .collect();
            let locations = profile.locations.iter();
            locations_matching(
                &functions,
                &mappings,
                locations.map(|l| (l.lines.as_slice(), l.mapping)),
            )
        };
        let label_set_kept = if self.tags.is_empty() {
            Vec::new()
        } else {
            profile
                .label_sets
                .iter()
                .map(|set| {
                    self.tags.iter().all(|tag| {
                        set.iter().any(|l| {
                            profile.str(l.key) == tag.key
                                && if l.str != 0 {
                                    tag.keeps_str(profile.str(l.str))
                                } else {
                                    tag.keeps_num(l.num)
                                }
                        })
                    })
                })
                .collect()
        };
        SampleFilter {
            focus: self.focus.as_ref().map(location_matches),
            ignore: self.ignore.as_ref().map(location_matches),
            label_set_kept,
        }
    }
}

/// [`Filters`] prepared for one profile; see [`Filters::prepare`].
#[derive(Debug, Clone, Default)]
pub struct SampleFilter {
    focus: Option<Vec<bool>>,
    ignore: Option<Vec<bool>>,
    label_set_kept: Vec<bool>,
}

impl SampleFilter {
    /// Whether sample `i` of `profile` passes the focus, ignore and tag filters.
    pub fn keeps(&self, profile: &Profile, i: usize) -> bool {
        if !self.label_set_kept.is_empty() {
            let set: LabelSetId = profile.samples.label_set[i];
            if !self.label_set_kept[set as usize] {
                return false;
            }
        }
        if self.focus.is_none() && self.ignore.is_none() {
            return true;
        }
        let stack = profile.samples.stack(i);
        stack_passes(stack, self.ignore.as_deref(), self.focus.as_deref())
    }
}

/// Which `locations` (their lines and mapping) a regex matches, from which functions
/// and mappings it matches: a location matches through any of its lines' functions or
/// through its mapping, as pprof's focus and ignore match frames.
pub(crate) fn locations_matching<'l>(
    functions: &[bool],
    mappings: &[bool],
    locations: impl Iterator<Item = (&'l [Line], Option<MappingId>)>,
) -> Vec<bool> {
    locations
        .map(|(lines, mapping)| {
            lines.iter().any(|line| functions[line.function as usize])
                || mapping.is_some_and(|m| mappings[m as usize])
        })
        .collect()
}

/// Whether a stack passes the ignore and focus filters, given which locations each
/// matches: none the ignore matches, and one at least the focus matches.
pub(crate) fn stack_passes(
    stack: &[LocationId],
    ignored: Option<&[bool]>,
    focused: Option<&[bool]>,
) -> bool {
    if ignored.is_some_and(|ignored| stack.iter().any(|&l| ignored[l as usize])) {
        return false;
    }
    focused.is_none_or(|focused| stack.iter().any(|&l| focused[l as usize]))
}
