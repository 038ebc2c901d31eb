//! The window's tests (egui_kittest), by feature.

mod compare;
mod fixtures;
mod flame_keys;
mod flight;
mod formats;
mod group_by;
mod live;
mod monkey;
mod open;
mod regression_plot;
mod regression_view;
mod remote;
mod sandwich;
mod source;
mod symbols;
mod time;
mod view;
