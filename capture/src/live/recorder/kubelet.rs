//! The kubelet's `/pods` API, asked for pods' names where the node's logs are not
//! mounted: `GET URL/pods` (the kubelet's port 10250 over HTTPS with a service
//! account's bearer token allowed `nodes/proxy`, or the read-only port 10255) answers a
//! `PodList` whose pods name their namespace, name and UID, and whose container
//! statuses name each container and its id (`containerd://ID`, `cri-o://ID`,
//! `docker://ID`).

use std::time::Duration;

use super::pods::PodNames;

/// How to reach a node's kubelet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kubelet {
    /// Its address, e.g. `https://10.0.0.5:10250`.
    pub url: String,
    /// A bearer token to send (a service account's).
    pub token: Option<String>,
    /// Accept the kubelet's certificate unchecked (kubelets serve self-signed ones).
    pub insecure_tls: bool,
}

/// How long the kubelet may take to answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The most of an answer read (a node runs at most a few hundred pods).
const MAX_ANSWER_BYTES: u64 = 64 << 20;

impl Kubelet {
    /// Every container of the node's pods by container id, or why the kubelet could not
    /// tell.
    pub fn containers(&self) -> Result<Vec<(String, PodNames)>, String> {
        let tls = ureq::tls::TlsConfig::builder()
            .disable_verification(self.insecure_tls)
            .build();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .tls_config(tls)
            .build()
            .new_agent();
        let url = format!("{}/pods", self.url.trim_end_matches('/'));
        let mut request = agent.get(&url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {}", token.trim()));
        }
        let mut answer = request.call().map_err(|e| format!("{url}: {e}"))?;
        let body = answer
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_vec()
            .map_err(|e| format!("{url}: {e}"))?;
        pod_list(&body).map_err(|e| format!("{url}: not a pod list: {e}"))
    }
}

/// The containers a `PodList` names, by container id.
pub fn pod_list(json: &[u8]) -> Result<Vec<(String, PodNames)>, serde_json::Error> {
    let list: serde_json::Value = serde_json::from_slice(json)?;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let mut found = Vec::new();
    for pod in list["items"].as_array().into_iter().flatten() {
        let (namespace, name) = (
            text(&pod["metadata"]["namespace"]),
            text(&pod["metadata"]["name"]),
        );
        let status = &pod["status"];
        let kinds = [
            "containerStatuses",
            "initContainerStatuses",
            "ephemeralContainerStatuses",
        ];
        for container in kinds.iter().filter_map(|k| status[k].as_array()).flatten() {
            let id = text(&container["containerID"]);
            let id = id.rsplit_once("://").map_or(id.as_str(), |(_, id)| id);
            if id.is_empty() || namespace.is_empty() || name.is_empty() {
                continue;
            }
            let names = PodNames {
                namespace: namespace.clone(),
                pod: name.clone(),
                container: text(&container["name"]),
            };
            found.push((id.to_string(), names));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly")]

    use super::pod_list;

    #[test]
    fn a_pod_list_names_each_container_by_its_id() {
        let json = br#"{"kind":"PodList","items":[
          {"metadata":{"name":"web-7d9f","namespace":"shop","uid":"u1"},
           "status":{"containerStatuses":[
             {"name":"nginx","containerID":"containerd://aa11"},
             {"name":"sidecar","containerID":"cri-o://bb22"},
             {"name":"waiting"}],
             "initContainerStatuses":[{"name":"init","containerID":"docker://cc33"}]}},
          {"metadata":{"name":"pending","namespace":"shop"},"status":{}},
          {"metadata":{"namespace":"x"},"status":{"containerStatuses":[{"name":"n","containerID":"containerd://dd44"}]}}
        ]}"#;
        let found = pod_list(json).unwrap();
        let ids: Vec<(&str, &str)> = (found.iter())
            .map(|(id, n)| (id.as_str(), n.container.as_str()))
            .collect();
        assert_eq!(
            ids,
            [("aa11", "nginx"), ("bb22", "sidecar"), ("cc33", "init")]
        );
        assert!(
            found
                .iter()
                .all(|(_, n)| n.namespace == "shop" && n.pod == "web-7d9f")
        );
        assert!(pod_list(b"<html>").is_err());
        assert!(pod_list(b"{}").unwrap().is_empty());
    }
}
