//! The window's shell: menus, keyboard and drops, dialogs, the Connect window, the
//! status bar and the panels' sizes.

pub mod allocator;
pub mod connect;
pub mod dialogs;
pub mod input;
pub mod menu_bar;
pub mod panel_size;
pub mod status_bar;
pub mod temp_dirs;
