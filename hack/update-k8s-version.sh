#!/usr/bin/env bash
# Moves the module to another Kubernetes release in one command:
#   hack/update-k8s-version.sh v1.37.1
# k8s.io/kubernetes is not meant to be imported as a library: its go.mod points every staging module
# (k8s.io/api, k8s.io/client-go, ...) at ./staging. This script rewrites our replace block so that each
# staging module resolves to the matching v0.X.Y tag, then tidies the module.
set -euo pipefail

version="${1:?usage: $0 vX.Y.Z (a k8s.io/kubernetes release)}"
staging_version="v0.${version#v1.}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

gomod_file="$(go mod download -json "k8s.io/kubernetes@${version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[ -n "$gomod_file" ] || { echo "cannot download k8s.io/kubernetes@${version}" >&2; exit 1; }

staging_modules="$(sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod_file")"
[ -n "$staging_modules" ] || { echo "no staging replace block found in ${gomod_file}" >&2; exit 1; }

args=(-require="k8s.io/kubernetes@${version}")
for m in $staging_modules; do
  args+=(-replace="${m}=${m}@${staging_version}")
done
go mod edit "${args[@]}"
go mod tidy
echo "k8s.io/kubernetes ${version}, staging modules ${staging_version}: $(echo "$staging_modules" | wc -l) replaced"
