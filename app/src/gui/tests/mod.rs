//! The window's tests (egui_kittest), by feature.

mod compare;
mod fixtures;
mod live;
mod monkey;
mod open;
mod remote;
mod time;
mod view;
