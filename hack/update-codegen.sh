#!/usr/bin/env bash
# Regenerates deepcopy functions, the typed clientset, listers and informers (k8s.io/code-generator),
# the OpenAPI definitions of the live view (kube-openapi), and the CRD manifests (controller-gen).
# The generators are pinned in hack/tools/go.mod and built into bin/ by `make tools`.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bin="${root}/bin"
module="github.com/queue-scheduler/queue-scheduler"
header="${root}/hack/boilerplate.go.txt"
apis=("./apis/scheduling/v1beta1" "./apis/bus/v1alpha1" "./apis/visibility/v1beta1")
# The CRD-backed APIs: typed clients, listers and informers. The live view (served from memory,
# never stored) gets a typed client only.
api_pkgs=("${module}/apis/scheduling/v1beta1" "${module}/apis/bus/v1alpha1")
client_pkgs=("${api_pkgs[@]}" "${module}/apis/visibility/v1beta1")

rm -rf pkg/generated
"${bin}/deepcopy-gen" --go-header-file "${header}" --output-file zz_generated.deepcopy.go "${apis[@]}"

input_args=()
for p in "${client_pkgs[@]}"; do input_args+=(--input "${p}"); done
"${bin}/client-gen" --go-header-file "${header}" --clientset-name versioned --input-base "" \
  --plural-exceptions "Endpoints:Endpoints,WhatIf:WhatIfs" \
  --output-pkg "${module}/pkg/generated/clientset" --output-dir pkg/generated/clientset "${input_args[@]}"
"${bin}/lister-gen" --go-header-file "${header}" \
  --output-pkg "${module}/pkg/generated/listers" --output-dir pkg/generated/listers "${api_pkgs[@]}"
"${bin}/informer-gen" --go-header-file "${header}" \
  --versioned-clientset-package "${module}/pkg/generated/clientset/versioned" \
  --listers-package "${module}/pkg/generated/listers" \
  --output-pkg "${module}/pkg/generated/informers" --output-dir pkg/generated/informers "${api_pkgs[@]}"

"${bin}/openapi-gen" --go-header-file "${header}" --output-pkg "${module}/pkg/generated/openapi" \
  --output-dir pkg/generated/openapi --output-file zz_generated.openapi.go --report-filename /dev/null \
  k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/version \
  k8s.io/apimachinery/pkg/api/resource k8s.io/apimachinery/pkg/util/intstr k8s.io/api/core/v1 \
  "${module}/apis/visibility/v1beta1"

rm -rf manifests/crds
"${bin}/controller-gen" crd:crdVersions=v1 paths=./apis/... output:crd:dir=manifests/crds
go run ./hack/crdquantities manifests/crds
go run ./hack/webhookmanifest manifests/deploy/webhook.yaml manifests/deploy/visibility.yaml
go run ./hack/installmanifest manifests/install.yaml
go run ./hack/kubectlqueuemod
go run ./hack/chartsync

# The PodGroup CRDs of the other gang APIs, from their Go modules, for the tests that install them.
crdtmp="$(mktemp -d)"
trap 'rm -rf "${crdtmp}"' EXIT
"${bin}/controller-gen" crd:crdVersions=v1 paths=sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1 \
  paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 output:crd:dir="${crdtmp}"
rm -f test/gangcrds/*.yaml
cp "${crdtmp}"/*_podgroups.yaml test/gangcrds/
