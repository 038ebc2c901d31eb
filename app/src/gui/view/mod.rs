//! The profile view: one profile loaded and seen through its settings (sample type,
//! granularity, filters, inversion), drawn as a flame graph beside a top table.

pub mod colors;
pub mod filters;
pub mod flame;
pub mod loader;
pub mod panels;
pub mod toolbar;
pub mod top_table;
pub mod zoom;
