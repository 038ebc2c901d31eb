//! The context menu of a flame graph frame or a top table row: copy its name, focus on
//! it, ignore it, hide it, show its callers and callees or its source, search for it.

use egui::Ui;
use profile_model::frames::FrameId;

use crate::gui::view::ProfileView;

/// What the context menu of a frame asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameAction {
    /// Keep only the samples through it (the focus filter).
    Focus,
    /// Drop the samples through it (the ignore filter).
    Ignore,
    /// Leave it out of the stacks (the hide filter).
    Hide,
    /// Show its callers and callees.
    Sandwich,
    /// Show its source with values per line.
    Source,
    /// Search for it.
    Search,
}

/// The items of the context menu of the frame named `name` (*Show source* where
/// `source`); *Copy name* is done here.
pub fn menu(ui: &mut Ui, name: &str, source: bool) -> Option<FrameAction> {
    let short = crate::gui::view::flame::elide(name, 40).unwrap_or_default();
    ui.label(egui::RichText::new(short).strong());
    ui.separator();
    if ui.button("Copy name").clicked() {
        ui.ctx().copy_text(name.to_string());
    }
    let items = [
        ("Show callers and callees (s)", FrameAction::Sandwich, true),
        ("Show source (l)", FrameAction::Source, source),
        ("Focus on this", FrameAction::Focus, true),
        ("Ignore (drop its samples)", FrameAction::Ignore, true),
        ("Hide (keep its samples)", FrameAction::Hide, true),
        ("Search for this", FrameAction::Search, true),
    ];
    let mut picked = None;
    for (label, action, shown) in items {
        if shown && ui.button(label).clicked() {
            picked = Some(action);
        }
    }
    picked
}

/// A regex that matches `name` as typed (pprof's filters match parts of names).
fn literal(name: &str) -> String {
    regex::escape(name)
}

/// `field` with `pattern` added as an alternative (or alone when `field` is empty).
fn or_pattern(field: &str, pattern: &str) -> String {
    if field.trim().is_empty() {
        pattern.to_string()
    } else {
        format!("{field}|{pattern}")
    }
}

impl ProfileView {
    /// Does what the context menu of `frame` (of the view shown) asked: filters are
    /// applied at once (recomputing the view), the search is set, the sandwich opened.
    pub fn frame_action(&mut self, frame: FrameId, action: FrameAction) {
        match (action, self.frame_name(frame)) {
            (FrameAction::Sandwich, _) => self.open_sandwich(frame),
            (FrameAction::Source, _) => self.open_source(frame),
            (_, Some(name)) => self.named_action(name, action),
            (_, None) => {}
        }
    }

    /// Does what a context menu asked of the frame named `name` (of the view, or of
    /// compare mode's comparison, which the same filters and search apply to); a
    /// sandwich is the menu's graph's own to open.
    pub fn named_action(&mut self, name: String, action: FrameAction) {
        let pattern = literal(&name);
        match action {
            FrameAction::Focus => self.filters.focus = pattern,
            FrameAction::Ignore => self.filters.ignore = or_pattern(&self.filters.ignore, &pattern),
            FrameAction::Hide => self.filters.hide = or_pattern(&self.filters.hide, &pattern),
            FrameAction::Sandwich | FrameAction::Source => return,
            FrameAction::Search => {
                self.search.text = name;
                self.search.regex = false;
                return;
            }
        }
        self.apply_filters();
    }

    /// The name of `frame` in the view shown.
    pub fn frame_name(&self, frame: FrameId) -> Option<String> {
        let cur = self.current.as_ref()?;
        cur.frames
            .frames
            .get(frame as usize)
            .map(|f| f.name.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_the_name_as_typed_and_add_to_what_is_there() {
        assert_eq!(
            literal("flate.(*compressor).deflate"),
            r"flate\.\(\*compressor\)\.deflate"
        );
        assert_eq!(or_pattern("", "a"), "a");
        assert_eq!(or_pattern("x|y", "a"), "x|y|a");
    }
}
