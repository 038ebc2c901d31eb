//! Parca's selector language: a profile type and PromQL-style label matchers,
//! `process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{comm="api", pid!="1"}`.

use std::fmt;

use regex::Regex;

/// A selector, profile type or matcher that cannot be read: what is wrong with it, in
/// one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(String);

impl From<String> for SelectorError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

/// The message, for callers that carry errors as text.
impl From<SelectorError> for String {
    fn from(e: SelectorError) -> Self {
        e.0
    }
}

/// A profile type: what Parca calls `name:sample_type:sample_unit:period_type:period_unit[:delta]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ProfileType {
    /// The profile's name, e.g. `process_cpu`, `memory`.
    pub name: String,
    /// The sample type, e.g. `cpu`, `alloc_space`.
    pub sample_type: String,
    /// Its unit, e.g. `nanoseconds`, `bytes`.
    pub sample_unit: String,
    /// What one period measures, e.g. `cpu`, `space`.
    pub period_type: String,
    /// Its unit.
    pub period_unit: String,
    /// Whether values are deltas over the profile's duration (CPU, allocations) rather
    /// than a snapshot (live heap).
    pub delta: bool,
}

impl ProfileType {
    /// Parses `name:sample_type:sample_unit:period_type:period_unit[:delta]`.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let parts: Vec<&str> = text.trim().split(':').collect();
        let delta = match parts.len() {
            5 => false,
            6 if parts[5] == "delta" => true,
            6 => {
                return Err(
                    format!("profile type {text:?}: the sixth part can only be \"delta\"").into(),
                );
            }
            _ => {
                return Err(format!(
                    "profile type {text:?} is not name:sample_type:sample_unit:period_type:period_unit[:delta]"
                ).into());
            }
        };
        if let Some(empty) = parts.iter().position(|p| p.is_empty()) {
            return Err(format!("profile type {text:?}: part {} is empty", empty + 1).into());
        }
        Ok(Self {
            name: parts[0].to_string(),
            sample_type: parts[1].to_string(),
            sample_unit: parts[2].to_string(),
            period_type: parts[3].to_string(),
            period_unit: parts[4].to_string(),
            delta,
        })
    }

    /// Whether QueryRange gives this type's values times the profile's period, in the
    /// period's type and unit: a delta of `samples`/`count` (Parca's rule: one CPU
    /// sample stands for one period of CPU time).
    pub fn ranged_by_period(&self) -> bool {
        self.delta && self.sample_type == "samples" && self.sample_unit == "count"
    }

    /// The type and unit of this type's QueryRange values (see
    /// [`ProfileType::ranged_by_period`]).
    pub fn range_unit(&self) -> (&str, &str) {
        match self.ranged_by_period() {
            true => (&self.period_type, &self.period_unit),
            false => (&self.sample_type, &self.sample_unit),
        }
    }

    /// A friendly name for menus, e.g. "CPU time (process_cpu)".
    pub fn friendly(&self) -> String {
        let what = match (self.sample_type.as_str(), self.sample_unit.as_str()) {
            ("cpu", "nanoseconds") => "CPU time".to_string(),
            ("samples", "count") => "CPU samples".to_string(),
            ("alloc_space", _) => "Allocated bytes".to_string(),
            ("alloc_objects", _) => "Allocated objects".to_string(),
            ("inuse_space", _) => "In-use bytes".to_string(),
            ("inuse_objects", _) => "In-use objects".to_string(),
            (kind, unit) => format!("{kind} ({unit})"),
        };
        format!("{what} · {}", self.name)
    }
}

impl fmt::Display for ProfileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}:{}:{}{}",
            self.name,
            self.sample_type,
            self.sample_unit,
            self.period_type,
            self.period_unit,
            if self.delta { ":delta" } else { "" }
        )
    }
}

/// How a matcher compares a label's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchOp {
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `=~` (regex, anchored at both ends as in PromQL)
    Regex,
    /// `!~`
    NotRegex,
}

impl MatchOp {
    fn text(self) -> &'static str {
        match self {
            Self::Equal => "=",
            Self::NotEqual => "!=",
            Self::Regex => "=~",
            Self::NotRegex => "!~",
        }
    }
}

/// One label matcher, e.g. `comm="api"`.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// Label name.
    pub name: String,
    /// Comparison.
    pub op: MatchOp,
    /// Value or pattern as written.
    pub value: String,
    regex: Option<Regex>,
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        (&self.name, self.op, &self.value) == (&other.name, other.op, &other.value)
    }
}

impl Matcher {
    /// A matcher; regexes are anchored as PromQL anchors them.
    pub fn new(name: &str, op: MatchOp, value: &str) -> Result<Self, SelectorError> {
        if !is_label_name(name) {
            return Err(format!("{name:?} is not a valid label name").into());
        }
        let regex = match op {
            MatchOp::Regex | MatchOp::NotRegex => {
                Some(Regex::new(&format!("^(?:{value})$")).map_err(|e| {
                    format!(
                        "invalid regex in {name}{}\"{value}\": {}",
                        op.text(),
                        profile_model::filter::regex_error(&e)
                    )
                })?)
            }
            _ => None,
        };
        Ok(Self {
            name: name.to_string(),
            op,
            value: value.to_string(),
            regex,
        })
    }

    /// Whether a label value (`None`: the label is absent, treated as empty) matches.
    pub fn matches(&self, value: Option<&str>) -> bool {
        let v = value.unwrap_or("");
        match (self.op, &self.regex) {
            (MatchOp::Equal, _) => v == self.value,
            (MatchOp::NotEqual, _) => v != self.value,
            (MatchOp::Regex, Some(re)) => re.is_match(v),
            (MatchOp::NotRegex, Some(re)) => !re.is_match(v),
            _ => false,
        }
    }
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{:?}", self.name, self.op.text(), self.value)
    }
}

/// Whether `name` is a Prometheus label name (`[a-zA-Z_][a-zA-Z0-9_]*`).
pub fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A profile type and the label matchers every series must satisfy.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// Which profiles.
    pub profile_type: ProfileType,
    /// Which series of them.
    pub matchers: Vec<Matcher>,
}

impl Selector {
    /// Parses `type{matchers}`; the braces may be left out or empty.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let text = text.trim();
        let (type_text, rest) = match text.find('{') {
            Some(i) => (&text[..i], &text[i..]),
            None => (text, ""),
        };
        if type_text.contains('}') {
            return Err(format!(
                "selector {text:?}: a \"}}\" without its \"{{\" (matchers are written {{name=\"value\"}})"
            ).into());
        }
        let profile_type = ProfileType::parse(type_text)?;
        let matchers = match rest.strip_prefix('{') {
            None => Vec::new(),
            Some(inside) => {
                let (matchers, after) = parse_matchers(inside)?;
                if !after.trim().is_empty() {
                    return Err(format!(
                        "selector {text:?}: unexpected {:?} after the closing \"}}\"",
                        after.trim()
                    )
                    .into());
                }
                matchers
            }
        };
        Ok(Self {
            profile_type,
            matchers,
        })
    }

    /// Whether a series with these labels is selected.
    pub fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.matchers.iter().all(|m| m.matches(label(&m.name)))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.profile_type)?;
        if !self.matchers.is_empty() {
            let ms: Vec<String> = self.matchers.iter().map(ToString::to_string).collect();
            write!(f, "{{{}}}", ms.join(", "))?;
        }
        Ok(())
    }
}

/// Parses `a="x", b!~"y.*"}` (values in double quotes, `\"` and `\\` escapes) up to
/// the closing brace, and returns the matchers and the text after that brace.
fn parse_matchers(text: &str) -> Result<(Vec<Matcher>, &str), String> {
    const UNCLOSED: &str = "the matchers' \"{\" is never closed: a \"}\" is missing at the end";
    let mut matchers = Vec::new();
    let mut rest = text.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((matchers, after));
        }
        if rest.is_empty() {
            return Err(UNCLOSED.to_string());
        }
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .ok_or_else(|| format!("matcher {rest:?} has no operator"))?;
        let name = &rest[..name_end];
        let after = rest[name_end..].trim_start();
        let (op, after) = [
            ("=~", MatchOp::Regex),
            ("!~", MatchOp::NotRegex),
            ("!=", MatchOp::NotEqual),
            ("=", MatchOp::Equal),
        ]
        .iter()
        .find_map(|(t, op)| after.strip_prefix(t).map(|a| (*op, a)))
        .ok_or_else(|| format!("matcher {rest:?}: expected =, !=, =~ or !~ after {name:?}"))?;
        let after = after.trim_start();
        let body = after
            .strip_prefix('"')
            .ok_or_else(|| format!("matcher {rest:?}: the value must be in double quotes"))?;
        let mut value = String::new();
        let mut chars = body.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, e)) => value.push(e),
                    None => break,
                },
                '"' => {
                    end = Some(i + 1);
                    break;
                }
                c => value.push(c),
            }
        }
        let end = end.ok_or_else(|| {
            format!("matcher {rest:?}: unterminated string (a closing '\"' is missing)")
        })?;
        matchers.push(Matcher::new(name, op, &value)?);
        rest = body[end..].trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if rest.is_empty() {
            return Err(UNCLOSED.to_string());
        } else if !rest.starts_with('}') {
            return Err(format!(
                "unexpected {rest:?} after a matcher (expected ',' or '}}')"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_parca_selectors() {
        let s = Selector::parse(r#"process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{comm="api", pid!="1", container=~"par.*", path!~"/tmp/.*"}"#)
            .expect("valid");
        assert_eq!(s.profile_type.name, "process_cpu");
        assert!(s.profile_type.delta);
        assert_eq!(s.matchers.len(), 4);
        assert_eq!(s.matchers[2].op, MatchOp::Regex);
        let again = Selector::parse(&s.to_string()).expect("round trip");
        assert_eq!(again, s);
        let plain = Selector::parse("memory:inuse_space:bytes:space:bytes").expect("no matchers");
        assert!(!plain.profile_type.delta && plain.matchers.is_empty());
        assert!(Selector::parse("memory:inuse_space:bytes:space:bytes{}").is_ok());
    }

    #[test]
    fn matchers_follow_promql() {
        let s =
            Selector::parse(r#"a:b:c:d:e{comm=~"par.*", pid!="1", x="q\"uote"}"#).expect("valid");
        let labels = |comm: &'static str, pid: &'static str| {
            move |name: &str| match name {
                "comm" => Some(comm),
                "pid" => Some(pid),
                "x" => Some("q\"uote"),
                _ => None,
            }
        };
        assert!(s.matches(labels("parca", "2")));
        assert!(!s.matches(labels("xparca", "2")), "regexes are anchored");
        assert!(!s.matches(labels("parca", "1")));
        let braces = Selector::parse(r#"a:b:c:d:e{ path="/a}b" , x="{",}"#).expect("valid");
        let values: Vec<&str> = braces.matchers.iter().map(|m| m.value.as_str()).collect();
        assert_eq!(values, ["/a}b", "{"], "braces inside quotes are text");
        let absent = Selector::parse(r#"a:b:c:d:e{missing=""}"#).expect("valid");
        assert!(
            absent.matches(|_| None),
            "an absent label matches the empty string"
        );
    }

    #[test]
    fn bad_selectors_say_what_is_wrong() {
        for (text, needle) in [
            ("cpu", "is not name:sample_type"),
            ("a:b:c:d:e:f", "only be \"delta\""),
            ("a::c:d:e", "part 2 is empty"),
            (r#"a:b:c:d:e{comm="x""#, "a \"}\" is missing"),
            (r#"a:b:c:d:e{comm="x","#, "a \"}\" is missing"),
            (r#"a:b:c:d:e{"#, "a \"}\" is missing"),
            (
                r#"a:b:c:d:e{comm="x"} x"#,
                "unexpected \"x\" after the closing",
            ),
            (r#"a:b:c:d:e{comm="x"}}"#, "after the closing"),
            (r#"a:b:c:d:e{comm="x}"#, "unterminated"),
            (r#"a:b:c:d:e}"#, "without its"),
            (r#"a:b:c:d:e{comm=~"api.*", pid!=""#, "unterminated"),
            (r#"a:b:c:d:e{comm x"}"#, "expected =, !=, =~ or !~"),
            (r#"a:b:c:d:e{comm=x}"#, "double quotes"),
            (r#"a:b:c:d:e{comm=~"("}"#, "invalid regex"),
            (r#"a:b:c:d:e{9x="1"}"#, "not a valid label name"),
            (r#"a:b:c:d:e{a="1" b="2"}"#, "expected ','"),
        ] {
            let err = Selector::parse(text).expect_err(text).to_string();
            assert!(err.contains(needle), "{text}: {err}");
            assert_eq!(err.lines().count(), 1, "one line: {err}");
        }
    }
}
