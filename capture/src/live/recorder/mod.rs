//! The local recorder's user-space half: stack counts from the kernel turned into one
//! pprof profile per interval, symbolized and labelled ([`Recorder`]).

pub mod kubelet;
pub mod pods;
pub mod process_info;
pub mod session;
pub mod to_profile;

pub use capture_ebpf::{Backend, CaptureError, LossStats, PRIVILEGE_HINT, SamplerOptions, Target};
pub use kubelet::Kubelet;
pub use pods::{HostPaths, PodNames};
pub use process_info::ProcessInfo;
pub use session::{IntervalProfile, Recorder, RecorderOptions};
pub use to_profile::{BuildReport, CapturedStack, Interval, PROFILE_NAME, build_profile};
