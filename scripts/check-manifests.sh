#!/usr/bin/env bash
# Validates the Kubernetes manifests in deploy/kubernetes offline against the
# Kubernetes schemas, strictly (an unknown or misspelt field fails), with PyPI's
# kubernetes-validate, which bundles the schemas: no cluster, no network.
#
#   KUBERNETES_VALIDATE=path/to/kubernetes-validate scripts/check-manifests.sh
#
# `.ci/run` installs kubernetes-validate in a virtualenv and calls this. The image
# tags and flags the manifests use are checked by `cargo test` (app/tests/e2e/deploy.rs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
validate=${KUBERNETES_VALIDATE:-kubernetes-validate}
manifests=()
for f in deploy/kubernetes/*.yaml; do
  # Kustomize's own file is no Kubernetes resource.
  [[ $(basename "$f") == kustomization.yaml ]] || manifests+=("$f")
done
"$validate" --strict "${manifests[@]}"
