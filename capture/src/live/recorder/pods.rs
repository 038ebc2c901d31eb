//! The Kubernetes names of a process in a pod: namespace, pod and container.
//!
//! The pod's UID and the container's id come from the process's cgroups
//! (`/proc/PID/cgroup`, any line: cgroup v2, or v1 hierarchies beside a root v2 one):
//! systemd's `kubepods-burstable-pod<UID with _>.slice/cri-containerd-<ID>.scope` or
//! cgroupfs' `/kubepods/burstable/pod<UID>/<ID>`, or the same relative to the reader's
//! cgroup namespace (`/../../pod<UID>/<ID>`). The names come from the node's logs,
//! which the kubelet lays out for every container it runs:
//!
//! 1. `/var/log/containers/POD_NAMESPACE_CONTAINER-ID.log` names all three for the
//!    container id itself, so it is asked first;
//! 2. else `/var/log/pods/NAMESPACE_POD_UID/` names the namespace and pod for the UID,
//!    and the container is the folder in it whose log files link to a path holding the
//!    container id (Docker's), or its only folder.
//!
//! 3. else, when one is given, the kubelet's `/pods` API ([`Kubelet`]), asked at most
//!    once per interval; its errors are printed once each.
//!
//! Names found are kept; `/var/log/containers` is read again at most once per
//! interval, and a container not found is looked for again the next interval, as its
//! logs appear after it starts.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::kubelet::Kubelet;
use super::process_info::container_id;

/// Where a node's `/proc` and `/var/log` are: the machine's own by default, or a copy
/// of their layout under another root (a faked node in tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPaths {
    /// The proc file system, `/proc`.
    pub proc: PathBuf,
    /// The log folder holding the kubelet's `pods/` and `containers/`, `/var/log`.
    pub var_log: PathBuf,
    /// The kubelet to ask for names the logs do not hold; none by default.
    pub kubelet: Option<Kubelet>,
}

impl Default for HostPaths {
    fn default() -> Self {
        Self {
            proc: PathBuf::from("/proc"),
            var_log: PathBuf::from("/var/log"),
            kubelet: None,
        }
    }
}

impl HostPaths {
    /// `ROOT/proc` and `ROOT/var/log`.
    pub fn under(root: &Path) -> Self {
        Self {
            proc: root.join("proc"),
            var_log: root.join("var/log"),
            kubelet: None,
        }
    }
}

/// A container of a pod, as its cgroup names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodContainer {
    /// The pod's UID, with dashes (`8f1c…-…`), or a static pod's hash.
    pub pod_uid: String,
    /// The container's id, 64 hexadecimal digits.
    pub container_id: String,
}

/// The names a cluster's users group by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodNames {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The container's name within the pod; empty when the logs do not tell it.
    pub container: String,
}

/// The pod and container in the text of `/proc/PID/cgroup`, if a line of it lies
/// under `kubepods`.
pub fn pod_container(cgroup_file: &str) -> Option<PodContainer> {
    cgroup_file.lines().find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        let parts: Vec<&str> = path.split('/').collect();
        // Under `kubepods`, or relative to the reader's own cgroup namespace (`/../..`:
        // an agent in a pod sees other pods' cgroups so).
        if !parts
            .iter()
            .any(|p| p.starts_with("kubepods") || *p == "..")
        {
            return None;
        }
        let pod_uid = parts.iter().find_map(|p| pod_uid(p))?;
        let container_id = container_id(path)?;
        Some(PodContainer {
            pod_uid,
            container_id,
        })
    })
}

/// The pod UID in one cgroup path part: `pod<UID>` (cgroupfs) or
/// `kubepods-<class>-pod<UID with _ for ->.slice` (systemd).
fn pod_uid(part: &str) -> Option<String> {
    let part = part.strip_suffix(".slice").unwrap_or(part);
    let uid = match part.strip_prefix("pod") {
        Some(uid) => uid,
        None => part.rsplit_once("-pod")?.1,
    };
    let uid = uid.replace('_', "-");
    let valid = (8..=64).contains(&uid.len())
        && uid.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
        && !uid.starts_with('-');
    valid.then_some(uid)
}

/// Finds pods' names in a node's logs, keeping what it found.
#[derive(Debug, Default)]
pub struct PodDirectory {
    paths: HostPaths,
    /// By container id.
    found: HashMap<String, PodNames>,
    /// Whether `/var/log/containers` was read this interval.
    listed: bool,
    /// Whether the kubelet was asked this interval.
    asked: bool,
    /// The kubelet's errors printed so far.
    said: HashSet<String>,
    /// Containers looked for in vain this interval.
    missed: HashSet<String>,
}

/// Names kept at most; past it they are forgotten and found again as needed.
const MAX_KEPT: usize = 16_384;

impl PodDirectory {
    /// A directory reading the logs under `paths.var_log`.
    pub fn new(paths: HostPaths) -> Self {
        Self {
            paths,
            ..Self::default()
        }
    }

    /// Lets the next miss read the folders again.
    pub fn begin_interval(&mut self) {
        self.listed = false;
        self.asked = false;
        self.missed.clear();
    }

    /// The names of `container`, when the logs tell them.
    pub fn names(&mut self, container: &PodContainer) -> Option<PodNames> {
        if let Some(names) = self.found.get(&container.container_id) {
            return Some(names.clone());
        }
        if self.missed.contains(&container.container_id) {
            return None;
        }
        if self.found.len() >= MAX_KEPT {
            self.found.clear();
        }
        if !self.listed {
            self.listed = true;
            self.list_containers();
        }
        if !self.found.contains_key(&container.container_id)
            && let Some(names) = self.in_pod_folder(container)
        {
            self.found.insert(container.container_id.clone(), names);
        }
        if !self.found.contains_key(&container.container_id) && !self.asked {
            self.asked = true;
            self.ask_kubelet();
        }
        let names = self.found.get(&container.container_id).cloned();
        if names.is_none() {
            self.missed.insert(container.container_id.clone());
        }
        names
    }

    /// Reads `/var/log/containers/POD_NAMESPACE_CONTAINER-ID.log`, every name.
    fn list_containers(&mut self) {
        let Ok(entries) = std::fs::read_dir(self.paths.var_log.join("containers")) else {
            return;
        };
        for entry in entries.flatten() {
            if let Some((id, names)) = entry.file_name().to_str().and_then(container_log_names) {
                self.found.insert(id, names);
            }
        }
    }

    /// Asks the kubelet, if one is given, for every container's names.
    fn ask_kubelet(&mut self) {
        let Some(kubelet) = &self.paths.kubelet else {
            return;
        };
        match kubelet.containers() {
            Ok(found) => self.found.extend(found),
            Err(e) => {
                if self.said.insert(e.clone()) {
                    eprintln!("flint record: warning: the kubelet named no pods: {e}");
                }
            }
        }
    }

    /// Reads `/var/log/pods/NAMESPACE_POD_UID/CONTAINER/`.
    fn in_pod_folder(&self, container: &PodContainer) -> Option<PodNames> {
        let pods = std::fs::read_dir(self.paths.var_log.join("pods")).ok()?;
        let (folder, namespace, pod) = pods.flatten().find_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let mut parts = name.splitn(3, '_');
            let (namespace, pod, uid) = (parts.next()?, parts.next()?, parts.next()?);
            (uid == container.pod_uid && !namespace.is_empty() && !pod.is_empty())
                .then(|| (entry.path(), namespace.to_string(), pod.to_string()))
        })?;
        let containers: Vec<PathBuf> = std::fs::read_dir(&folder)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        let named = containers
            .iter()
            .find(|dir| logs_link_to(dir, &container.container_id))
            .or(match &containers[..] {
                [only] => Some(only),
                _ => None,
            });
        let container = named
            .and_then(|dir| dir.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Some(PodNames {
            namespace,
            pod,
            container,
        })
    }
}

/// Whether a log file in `dir` is a link to a path holding `id` (Docker's
/// `/var/lib/docker/containers/ID/ID-json.log`).
fn logs_link_to(dir: &Path, id: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .any(|target| target.to_string_lossy().contains(id))
}

/// The container id and names in a `/var/log/containers` file name,
/// `POD_NAMESPACE_CONTAINER-ID.log`.
fn container_log_names(file_name: &str) -> Option<(String, PodNames)> {
    let stem = file_name.strip_suffix(".log")?;
    let (names, id) = stem.rsplit_once('-')?;
    if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut parts = names.splitn(3, '_');
    let (pod, namespace, container) = (parts.next()?, parts.next()?, parts.next()?);
    if [pod, namespace, container].iter().any(|s| s.is_empty()) {
        return None;
    }
    Some((
        id.to_string(),
        PodNames {
            namespace: namespace.to_string(),
            pod: pod.to_string(),
            container: container.to_string(),
        },
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly")]

    use super::*;

    const ID: &str = "3f1c6b8a9d2e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c";
    const UID: &str = "8d4f2a10-5b3c-4e7f-9a1b-2c3d4e5f6a7b";

    #[test]
    fn finds_the_pod_and_container_in_systemd_and_cgroupfs_layouts() {
        let systemd = format!(
            "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{ID}.scope\n",
            UID.replace('-', "_")
        );
        let cgroupfs_v1 = format!("12:pids:/kubepods/burstable/pod{UID}/{ID}\n0::/\n");
        let guaranteed = format!(
            "0::/kubepods.slice/kubepods-pod{}.slice/crio-{ID}.scope\n",
            UID.replace('-', "_")
        );
        // As an agent in its own cgroup namespace sees another pod's processes.
        let namespaced = format!("0::/../../pod{UID}/{ID}\n");
        let expected = PodContainer {
            pod_uid: UID.to_string(),
            container_id: ID.to_string(),
        };
        for text in [systemd, cgroupfs_v1, guaranteed, namespaced] {
            assert_eq!(pod_container(&text), Some(expected.clone()), "{text}");
        }
        for not_a_pod in [
            format!("0::/system.slice/docker-{ID}.scope\n"),
            "0::/kubepods/burstable/podnot-hex!/x\n".to_string(),
            format!("0::/kubepods/burstable/pod{UID}\n"),
            format!("0::/user.slice/pod{UID}/{ID}\n"),
            "garbage\n\n::\n".to_string(),
        ] {
            assert_eq!(pod_container(&not_a_pod), None, "{not_a_pod}");
        }
    }

    #[test]
    fn reads_names_from_container_log_file_names() {
        let (id, names) = container_log_names(&format!("web-7d9f_shop_nginx-{ID}.log")).unwrap();
        assert_eq!(id, ID);
        assert_eq!(
            names,
            PodNames {
                namespace: "shop".into(),
                pod: "web-7d9f".into(),
                container: "nginx".into(),
            }
        );
        for bad in [
            "x.log",
            "a_b-123.log",
            &format!("__-{ID}.log"),
            &format!("a_b_c-{ID}"),
        ] {
            assert_eq!(container_log_names(bad), None, "{bad}");
        }
    }
}
