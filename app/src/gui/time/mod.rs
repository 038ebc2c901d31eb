//! Time mode: a folder, a server or a capture as series over time, a plot to select
//! profiles on, and the queries that merge a selection.

pub mod answers;
pub mod axis;
pub mod demo;
pub mod lines;
pub mod open;
pub mod pick;
pub mod plot;
pub mod queries;
pub mod selection;
pub mod selector;
pub mod selector_bar;
pub mod timeline;
