//! Time mode: a folder, a server or a capture as series over time, a plot to select
//! profiles on, and the queries that merge a selection.

pub mod axis;
pub mod demo;
pub mod jobs;
pub mod lines;
pub mod plot;
pub mod selector_bar;
pub mod timeline;
