#!/usr/bin/env bash
# The Go tools' own unit tests (tools/cmd/fleetsim, tools/cmd/freezebench, ...):
# `go test` of every package under tools/cmd except the control plane binary
# kcp, whose Kubernetes packages take minutes to vet and are upstream's to test.
set -euo pipefail
source "$(dirname "$0")/../tools/lib/common.sh"
ensure_go
cd "$DRASHIFT_ROOT/tools"
packages=$(go list ./cmd/... | grep -v '/cmd/kcp$')
[ -n "$packages" ] || die "go list ./cmd/... found no packages"
# shellcheck disable=SC2086 # one package path per word
exec go test $packages
