//! What a sample's labels say about its process and thread: command, thread name,
//! executable, container (and its pod's names, see [`super::pods`]), and the machine.

use std::collections::HashMap;

use super::pods::{HostPaths, PodDirectory, pod_container};

/// Labels of one process (or of one thread of it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessLabels {
    /// The process's command name (`/proc/PID/comm`).
    pub comm: String,
    /// Path of its executable (`/proc/PID/exe`).
    pub executable: String,
    /// Container id (from the cgroup path of Docker, containerd, CRI-O or Podman), or
    /// else the cgroup path when it is not the root; empty when in neither.
    pub container_id: String,
    /// The cgroup path (cgroup v2), empty when unknown.
    pub cgroup: String,
    /// The Kubernetes namespace of its pod; empty when not in a pod or not found.
    pub namespace: String,
    /// The name of its pod; empty when not in a pod or not found.
    pub pod: String,
    /// The name of its container in the pod; empty when not in a pod or not found.
    pub container: String,
}

/// Reads process and thread labels from `/proc` (and pods' names from `/var/log`),
/// once per interval per process.
#[derive(Debug, Default)]
pub struct ProcessInfo {
    paths: HostPaths,
    pods: PodDirectory,
    processes: HashMap<u32, ProcessLabels>,
    /// Labels read while processes ran ([`ProcessInfo::snapshot`]), for those that exit
    /// before their samples are labelled; kept for one more interval.
    snapshots: HashMap<u32, ProcessLabels>,
    previous: HashMap<u32, ProcessLabels>,
    threads: HashMap<(u32, u32), String>,
    /// The machine's host name, the `node` label.
    pub node: String,
}

impl ProcessInfo {
    /// An empty cache of this machine's processes, with the host name read.
    pub fn new() -> Self {
        Self::with_paths(HostPaths::default())
    }

    /// An empty cache reading the processes and logs of the node at `paths`, with the
    /// host name read from its `sys/kernel/hostname`.
    pub fn with_paths(paths: HostPaths) -> Self {
        let node = std::fs::read_to_string(paths.proc.join("sys/kernel/hostname"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        Self {
            node,
            pods: PodDirectory::new(paths.clone()),
            paths,
            ..Self::default()
        }
    }

    /// Forgets what was read, so the next interval sees renamed threads and exec'd
    /// processes.
    pub fn begin_interval(&mut self) {
        self.processes.clear();
        self.threads.clear();
        self.pods.begin_interval();
        self.previous = std::mem::take(&mut self.snapshots);
    }

    /// Reads and keeps the labels of process `pid` now, while it runs.
    pub fn snapshot(&mut self, pid: u32) {
        let labels = self.read_process(pid);
        if !labels.comm.is_empty() {
            self.snapshots.insert(pid, labels);
        }
    }

    /// The labels of process `pid`: read now, or as snapshotted while it ran (empty
    /// fields when neither).
    pub fn process(&mut self, pid: u32) -> &ProcessLabels {
        if !self.processes.contains_key(&pid) {
            let now = self.read_process(pid);
            let labels = if now.comm.is_empty() {
                self.snapshots
                    .get(&pid)
                    .or_else(|| self.previous.get(&pid))
                    .cloned()
                    .unwrap_or(now)
            } else {
                now
            };
            self.processes.insert(pid, labels);
        }
        &self.processes[&pid]
    }

    /// The name of thread `tid` of process `pid`.
    pub fn thread_name(&mut self, pid: u32, tid: u32) -> &str {
        self.threads.entry((pid, tid)).or_insert_with(|| {
            std::fs::read_to_string(self.paths.proc.join(format!("{pid}/task/{tid}/comm")))
                .map(|s| s.trim_end().to_string())
                .unwrap_or_default()
        })
    }

    /// The labels of process `pid` as its files say now.
    fn read_process(&mut self, pid: u32) -> ProcessLabels {
        let dir = self.paths.proc.join(pid.to_string());
        let comm = std::fs::read_to_string(dir.join("comm"))
            .map(|s| s.trim_end().to_string())
            .unwrap_or_default();
        let executable = std::fs::read_link(dir.join("exe"))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let cgroups = std::fs::read_to_string(dir.join("cgroup")).unwrap_or_default();
        let cgroup = cgroup_path(&cgroups).unwrap_or_default();
        let in_pod = pod_container(&cgroups);
        let names = in_pod
            .as_ref()
            .and_then(|c| self.pods.names(c))
            .unwrap_or_default();
        ProcessLabels {
            comm,
            executable,
            container_id: in_pod
                .map(|c| c.container_id)
                .or_else(|| container_id(&cgroup))
                .unwrap_or_default(),
            cgroup,
            namespace: names.namespace,
            pod: names.pod,
            container: names.container,
        }
    }
}

/// The cgroup v2 path from `/proc/PID/cgroup` (the `0::` line), else the first path.
pub fn cgroup_path(text: &str) -> Option<String> {
    let mut first = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(_), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if id == "0" {
            return Some(path.to_string());
        }
        first.get_or_insert_with(|| path.to_string());
    }
    first
}

/// The container id in a cgroup path: the last 64-hex-digit name in it, with the
/// runtime's prefix and suffix (`docker-….scope`, `cri-containerd-…`, `libpod-…`)
/// removed.
pub fn container_id(cgroup: &str) -> Option<String> {
    cgroup.rsplit('/').find_map(|part| {
        let part = part.strip_suffix(".scope").unwrap_or(part);
        let id = part.rsplit(['-', ':']).next().unwrap_or(part);
        (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::{ProcessInfo, cgroup_path, container_id};

    const ID: &str = "3f1c6b8a9d2e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c";

    #[test]
    fn finds_container_ids_of_the_common_runtimes() {
        for path in [
            format!("/system.slice/docker-{ID}.scope"),
            format!("/kubepods/burstable/pod1234/{ID}"),
            format!("/kubepods.slice/kubepods-pod12.slice/cri-containerd-{ID}.scope"),
            format!("/machine.slice/libpod-{ID}.scope/container"),
        ] {
            assert_eq!(container_id(&path).as_deref(), Some(ID), "{path}");
        }
        assert_eq!(
            container_id("/user.slice/user-0.slice/session-1.scope"),
            None
        );
        assert_eq!(
            cgroup_path("12:cpu:/a\n0::/system.slice/x.service\n").as_deref(),
            Some("/system.slice/x.service")
        );
        assert_eq!(cgroup_path("12:cpu:/a\n").as_deref(), Some("/a"));
    }

    #[test]
    fn reads_this_process_and_thread() {
        let mut info = ProcessInfo::new();
        let pid = std::process::id();
        let me = info.process(pid).clone();
        assert!(!me.comm.is_empty());
        assert!(me.executable.starts_with('/'), "{}", me.executable);
        assert!(!info.thread_name(pid, pid).is_empty());
        assert!(
            info.process(u32::MAX - 1).comm.is_empty(),
            "no such process"
        );
    }
}
