//! The one error type of the crate.

use std::io;

/// How to grant what sampling needs, appended to permission errors.
pub const PRIVILEGE_HINT: &str = "run as root, or grant CAP_BPF and CAP_PERFMON \
     (`setcap cap_bpf,cap_perfmon+ep <binary>`; kernels before 5.8 need CAP_SYS_ADMIN), \
     or, for the perf fallback only, lower kernel.perf_event_paranoid \
     (`sysctl kernel.perf_event_paranoid=-1`)";

/// Why sampling could not start or a drain failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The process lacks the privilege for a call (`EPERM` or `EACCES`).
    #[error("{call} was refused ({source}): missing privilege to sample CPUs; {hint}", hint = PRIVILEGE_HINT)]
    Permission {
        /// The call that was refused, such as `bpf(BPF_PROG_LOAD)` or `perf_event_open`.
        call: &'static str,
        /// The errno.
        source: io::Error,
    },
    /// A system call failed for another reason.
    #[error("{call} failed: {source}")]
    Syscall {
        /// The call, such as `bpf(BPF_MAP_CREATE)`.
        call: &'static str,
        /// The errno.
        source: io::Error,
    },
    /// The kernel's verifier rejected the BPF program.
    #[error("the BPF verifier rejected the sampling program ({source}); verifier log:\n{log}")]
    Verifier {
        /// The errno of `BPF_PROG_LOAD`.
        source: io::Error,
        /// The verifier's log.
        log: String,
    },
    /// A file under `/proc` or `/sys` could not be read or parsed.
    #[error("cannot read {path}: {reason}")]
    System {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The kernel returned data that does not have the expected shape.
    #[error("unexpected data from the kernel: {0}")]
    Kernel(String),
    /// The options are not usable.
    #[error("invalid sampler options: {0}")]
    InvalidOptions(String),
    /// Live capture is not available on this platform.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Neither backend could be opened ([`crate::Backend::Auto`]).
    #[error("no sampling backend could be opened; BPF: {bpf}; perf: {perf}")]
    NoBackend {
        /// Why the BPF backend failed.
        bpf: Box<CaptureError>,
        /// Why the perf backend failed.
        perf: Box<CaptureError>,
    },
}

impl CaptureError {
    /// Wraps an errno from `call`, sorting privilege errors apart.
    #[cfg_attr(
        not(target_os = "linux"),
        allow(dead_code, reason = "the system calls are Linux-only")
    )]
    pub(crate) fn from_errno(call: &'static str, source: io::Error) -> CaptureError {
        match source.raw_os_error() {
            Some(code) if code == 1 || code == 13 => CaptureError::Permission { call, source },
            _ => CaptureError::Syscall { call, source },
        }
    }

    /// For missing privilege, one line naming every refused call and how to grant what
    /// sampling needs (the hint once, however many backends were refused); `None` for
    /// other errors.
    pub fn privilege_summary(&self) -> Option<String> {
        if !self.is_permission() {
            return None;
        }
        let refused = |e: &CaptureError| match e {
            CaptureError::Permission { call, source } => Some(format!("{call} ({source})")),
            _ => None,
        };
        let calls: Vec<String> = match self {
            CaptureError::NoBackend { bpf, perf } => {
                [bpf, perf].into_iter().filter_map(|e| refused(e)).collect()
            }
            other => refused(other).into_iter().collect(),
        };
        Some(format!(
            "missing privilege to sample CPUs: {} refused; {PRIVILEGE_HINT}",
            calls.join(" and ")
        ))
    }

    /// Whether the error comes from missing privilege (in either backend, for `NoBackend`).
    pub fn is_permission(&self) -> bool {
        match self {
            CaptureError::Permission { .. } => true,
            CaptureError::NoBackend { bpf, perf } => bpf.is_permission() || perf.is_permission(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(call: &'static str, errno: i32) -> CaptureError {
        CaptureError::from_errno(call, io::Error::from_raw_os_error(errno))
    }

    #[test]
    fn both_backends_refused_name_both_calls_and_the_hint_once() {
        let e = CaptureError::NoBackend {
            bpf: Box::new(refused("bpf(BPF_MAP_CREATE)", 1)),
            perf: Box::new(refused("perf_event_open", 13)),
        };
        let line = e.privilege_summary().unwrap();
        assert!(
            line.starts_with(
                "missing privilege to sample CPUs: bpf(BPF_MAP_CREATE) (Operation not permitted \
                 (os error 1)) and perf_event_open (Permission denied (os error 13)) refused; "
            ),
            "{line}"
        );
        assert_eq!(line.matches(PRIVILEGE_HINT).count(), 1, "{line}");
    }

    #[test]
    fn other_errors_have_no_privilege_summary() {
        let e = CaptureError::NoBackend {
            bpf: Box::new(refused("bpf(BPF_PROG_LOAD)", 22)),
            perf: Box::new(refused("perf_event_open", 2)),
        };
        assert!(e.privilege_summary().is_none());
        // One backend refused for privilege is enough to say how to grant it.
        let e = CaptureError::NoBackend {
            bpf: Box::new(refused("bpf(BPF_PROG_LOAD)", 22)),
            perf: Box::new(refused("perf_event_open", 13)),
        };
        let line = e.privilege_summary().unwrap();
        assert!(
            line.starts_with("missing privilege to sample CPUs: perf_event_open ("),
            "{line}"
        );
    }
}
