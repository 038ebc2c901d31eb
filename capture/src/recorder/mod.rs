//! The local recorder's user-space half: stack counts from the kernel turned into one
//! pprof profile per interval, symbolized and labelled.

pub mod process_info;
pub mod to_profile;

pub use process_info::ProcessInfo;
pub use to_profile::{BuildReport, CapturedStack, Interval, PROFILE_NAME, build_profile};
