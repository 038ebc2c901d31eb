//! The selector's state and rules: how the series are summed, the selector row's
//! fields, label-value suggestions, and the matchers of a series.

use capture::Matcher;
use capture::selector::MatchOp;

/// How the plotted series are summed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SumBy {
    /// By `comm`, else `container`, else one total (the default).
    #[default]
    Auto,
    /// Everything summed into one series.
    Total,
    /// Every distinct label set apart.
    Every,
    /// By these labels together (one series per combination of their values, as
    /// Parca's "sum by" of several labels); never empty.
    Labels(Vec<String>),
}

impl SumBy {
    /// The text shown in the drop-down, given the label names there are: what
    /// [`SumBy::Auto`] sums by among them is named.
    pub fn text(&self, names: &[String]) -> String {
        match self {
            Self::Auto => match self.resolve(names).as_deref() {
                Some([label]) => format!("auto: {label}"),
                _ => "auto: one series".to_string(),
            },
            Self::Total => "none (one series)".to_string(),
            Self::Every => "every label set".to_string(),
            Self::Labels(labels) => labels.join(", "),
        }
    }

    /// This with `label` added to the labels summed by, or taken out of them, keeping
    /// them in the order of `names` (the label names there are); taking out the last
    /// one sums everything into one series.
    pub fn toggled(&self, label: &str, names: &[String]) -> SumBy {
        let mut labels = match self {
            Self::Labels(labels) => labels.clone(),
            _ => Vec::new(),
        };
        match labels.iter().position(|l| l == label) {
            Some(i) => {
                labels.remove(i);
            }
            None => labels.push(label.to_string()),
        }
        labels.sort_by_key(|l| names.iter().position(|n| n == l));
        if labels.is_empty() {
            Self::Total
        } else {
            Self::Labels(labels)
        }
    }

    /// Whether `label` is one of the labels summed by.
    pub fn sums_by(&self, label: &str) -> bool {
        matches!(self, Self::Labels(labels) if labels.iter().any(|l| l == label))
    }

    /// The `sum_by` argument of `query_range`, given the label names there are.
    pub fn resolve(&self, labels: &[String]) -> Option<Vec<String>> {
        match self {
            Self::Auto => Some(
                ["comm", "container"]
                    .into_iter()
                    .find(|l| labels.iter().any(|x| x == l))
                    .map_or_else(Vec::new, |l| vec![l.to_string()]),
            ),
            Self::Total => Some(Vec::new()),
            Self::Every => None,
            Self::Labels(labels) => Some(labels.clone()),
        }
    }
}

/// State of the selector row.
#[derive(Debug, Default)]
pub struct SelectorBar {
    /// Label names of the plotted type (for the drop-downs).
    pub label_names: Vec<String>,
    /// Label name of the matcher being added.
    pub add_name: String,
    /// Its operator.
    pub add_op: Op,
    /// Its value or pattern.
    pub add_value: String,
    /// Values of `add_name` (the label they are for, the values).
    pub values: Option<(String, Vec<String>)>,
    /// Why the matcher being added is invalid.
    pub add_error: Option<String>,
    /// Advanced mode: the selector as text.
    pub text_mode: bool,
    /// The text edited in advanced mode.
    pub text: String,
    /// Why the text last applied is not a valid selector.
    pub text_error: Option<String>,
    /// The value suggestions under the value field are shown (kept while a click on
    /// one is under way, the field having lost its focus on the press).
    pub suggesting: bool,
    /// The suggestion Enter takes (moved with Down and Up; the first after each key
    /// typed).
    pub highlighted: usize,
}

/// How many values the suggestions under the value field list at most.
pub const SUGGESTIONS: usize = 12;

/// The values of `values` that contain `typed` (ignoring case), in their order, at
/// most `limit`; none when `typed` is one of them exactly.
pub fn suggestions<'v>(values: &'v [String], typed: &str, limit: usize) -> Vec<&'v str> {
    if values.iter().any(|v| v == typed) {
        return Vec::new();
    }
    let typed = typed.to_lowercase();
    values
        .iter()
        .filter(|v| v.to_lowercase().contains(&typed))
        .take(limit)
        .map(String::as_str)
        .collect()
}

/// The value Enter adds: the highlighted suggestion when some are listed (a value
/// typed in part, as `env` for `envoy`, matches nothing with `=`; past the end, the
/// last), else what is typed (which the Add button always adds).
pub fn entered_value(typed: &str, listed: &[String], highlighted: usize) -> String {
    match listed.get(highlighted).or(listed.last()) {
        Some(v) => v.clone(),
        None => typed.to_string(),
    }
}

/// A matcher operator that can be stored in UI state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    /// `=`
    #[default]
    Equal,
    /// `!=`
    NotEqual,
    /// `=~`
    Regex,
    /// `!~`
    NotRegex,
}

impl Op {
    /// Every operator, in menu order.
    pub const ALL: [Op; 4] = [Op::Equal, Op::NotEqual, Op::Regex, Op::NotRegex];

    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            Op::Equal => "=",
            Op::NotEqual => "!=",
            Op::Regex => "=~",
            Op::NotRegex => "!~",
        }
    }

    /// The selector's operator.
    pub fn to_match_op(self) -> MatchOp {
        match self {
            Op::Equal => MatchOp::Equal,
            Op::NotEqual => MatchOp::NotEqual,
            Op::Regex => MatchOp::Regex,
            Op::NotRegex => MatchOp::NotRegex,
        }
    }
}

/// `=` matchers for a series' labels (those not already there).
pub fn series_matchers(labels: &[(String, String)], existing: &[Matcher]) -> Vec<Matcher> {
    labels
        .iter()
        .filter_map(|(k, v)| Matcher::new(k, MatchOp::Equal, v).ok())
        .filter(|m| !existing.contains(m))
        .collect()
}
