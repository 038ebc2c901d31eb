//! The filter fields and the search box, as typed, and what they compile to.

use profile_model::Filters;
use profile_model::filter::{self, TagFilter, compile_regex};

/// The filter text fields, as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterFields {
    /// Focus regex.
    pub focus: String,
    /// Ignore regex.
    pub ignore: String,
    /// Hide regex.
    pub hide: String,
    /// Tag filter, `key=value`.
    pub tag: String,
}

impl FilterFields {
    /// Compiles the fields; the error names the field.
    pub fn compile(&self) -> Result<Filters, String> {
        let tag = self.tag.trim();
        Ok(Filters {
            focus: compile_regex("focus", &self.focus)?,
            ignore: compile_regex("ignore", &self.ignore)?,
            hide: compile_regex("hide", &self.hide)?,
            tags: if tag.is_empty() {
                Vec::new()
            } else {
                vec![TagFilter::parse(tag)?]
            },
        })
    }
}

/// The search box and its cached results.
#[derive(Debug, Default)]
pub struct SearchState {
    /// Text typed.
    pub text: String,
    /// Interpret the text as a regex (else a case-insensitive substring).
    pub regex: bool,
    /// Invalid regex message.
    pub error: Option<String>,
    /// Matches per frame id, when searching.
    pub matches: Option<Vec<bool>>,
    /// Total of the samples with a matching frame (each counted once).
    pub matched: i64,
    pub(crate) key: Option<(String, bool, u64)>,
}

impl SearchState {
    /// The regex the search stands for, `None` when the box is empty.
    pub fn pattern(text: &str, regex: bool) -> Result<Option<regex::Regex>, String> {
        if text.is_empty() {
            return Ok(None);
        }
        let pattern = if regex {
            text.to_string()
        } else {
            format!("(?i){}", regex::escape(text))
        };
        regex::Regex::new(&pattern)
            .map(Some)
            .map_err(|e| format!("invalid regex: {}", filter::regex_error(&e)))
    }
}
