#!/usr/bin/env bash
# The README's first command works from a clean state: tools/demo starts a
# cluster, drashift-controller connects to it, the printed kubectl hint works,
# and tools/demo down stops every process it started.
source "$(dirname "$0")/../lib.sh"
export DRASHIFT_DEMO_DIR
DRASHIFT_DEMO_DIR=$(mktemp -d "${TMPDIR:-/tmp}/drashift-demo.XXXXXX")
trap '"$DRASHIFT_ROOT/tools/demo" down >/dev/null 2>&1 || true; rm -rf "$DRASHIFT_DEMO_DIR"' EXIT

out=$("$DRASHIFT_ROOT/tools/demo" 2>"$DRASHIFT_DEMO_DIR/demo.err") || fail "tools/demo failed: $(tail -n 20 "$DRASHIFT_DEMO_DIR/demo.err")"
expect_contains "$out" "Kubernetes v1." "demo output (server version through drashift-controller)"
expect_contains "$out" "resourceslices" "demo output (DRA API served)"

hint=$(printf '%s\n' "$out" | sed -n 's/^ *export //p')
[ -n "$hint" ] || fail "demo printed no 'export KUBECONFIG=...' hint"
eval "export $hint"
kubectl get --raw /readyz >/dev/null || fail "kubectl from the printed hint cannot reach the cluster"

pids=$(cat "$DRASHIFT_DEMO_DIR"/cluster/run/*.pid)
[ "$(printf '%s\n' "$pids" | wc -l)" -eq 4 ] || fail "demo recorded $(printf '%s\n' "$pids" | wc -l) processes, want 4"
"$DRASHIFT_ROOT/tools/demo" down 2>/dev/null
# A stopped process may linger as a zombie until its new parent reaps it; only
# a process in any other state still runs.
for pid in $pids; do
	state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || true)
	if [ -n "$state" ] && [ "$state" != Z ]; then fail "process $pid still runs (state $state) after tools/demo down"; fi
done
log "PASS"
