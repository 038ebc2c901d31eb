//! The deployment in `deploy/` names this version of flint and only flags flint has.
//! (`scripts/check-manifests.sh`, run by `.ci/run`, validates the manifests against
//! the Kubernetes schemas.)

use std::path::{Path, PathBuf};

use super::flint;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `version` of `[workspace.package]` in the workspace's Cargo.toml.
fn workspace_version() -> String {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let section = manifest
        .split("\n[")
        .find(|s| s.starts_with("workspace.package]"))
        .unwrap();
    section
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .map(|v| v.trim().trim_matches('"').to_string())
        .unwrap()
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.extend(files(&path));
        } else {
            all.push(path);
        }
    }
    all.sort();
    all
}

#[test]
fn every_image_in_deploy_is_tagged_with_the_workspace_version() {
    let version = workspace_version();
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    let image = regex::Regex::new(r"\bflint:(\d+\.\d+\.\d+\S*)").unwrap();
    let mut images = 0;
    for path in files(&root().join("deploy")) {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}: {line}", path.display(), n + 1);
            if let Some(named) = line.trim().strip_prefix("image:") {
                let tag = named.trim().rsplit_once(':').map(|(_, t)| t);
                assert_eq!(tag, Some(version.as_str()), "{at}");
                images += 1;
            }
            for tag in image.captures_iter(line) {
                assert_eq!(&tag[1], version, "{at}");
            }
        }
    }
    assert!(images >= 2, "the server's and the agent's images: {images}");
}

#[test]
fn the_kustomization_lists_every_manifest() {
    let dir = root().join("deploy/kubernetes");
    let kustomization = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    let listed: Vec<&str> = kustomization
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .collect();
    let manifests: Vec<String> = files(&dir)
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".yaml") && n != "kustomization.yaml")
        .collect();
    assert!(!manifests.is_empty());
    for m in &manifests {
        assert!(
            listed.contains(&m.as_str()),
            "{m} is not in kustomization.yaml"
        );
    }
}

/// The `args:` lists of a manifest's containers, comments left out.
fn container_args(yaml: &str) -> Vec<Vec<String>> {
    let mut lists = Vec::new();
    let mut lines = yaml.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() != "args:" {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let mut args = Vec::new();
        while let Some(next) = lines.peek() {
            let trimmed = next.trim_start();
            if trimmed.starts_with('#') {
                lines.next();
                continue;
            }
            let Some(arg) = trimmed.strip_prefix("- ") else {
                break;
            };
            if next.len() - trimmed.len() < indent {
                break;
            }
            args.push(arg.trim().trim_matches('"').to_string());
            lines.next();
        }
        lists.push(args);
    }
    lists
}

#[test]
fn the_manifests_use_only_flags_flint_has() {
    let dir = root().join("deploy/kubernetes");
    let mut checked = Vec::new();
    for name in ["agent.yaml", "server.yaml"] {
        let yaml = std::fs::read_to_string(dir.join(name)).unwrap();
        for mut args in container_args(&yaml) {
            // With every flag known, the parser stops at the one added here.
            args.push("--no-such-flag".to_string());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = flint(&args);
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                said.starts_with("error: unexpected argument '--no-such-flag'"),
                "{name}: {args:?}: {said}"
            );
            checked.push(args[0].to_string());
        }
    }
    checked.sort();
    assert_eq!(checked, ["record", "serve"]);
}
