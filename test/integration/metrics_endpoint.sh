#!/usr/bin/env bash
# /healthz, /readyz and /metrics of a running drashift-controller: ready once
# its caches have listed, metrics that promtool accepts and that count what
# the caches hold and what the client sent.
source "$(dirname "$0")/../lib.sh"
CONTROLLER=${DRASHIFT_CONTROLLER:?DRASHIFT_CONTROLLER names the built drashift-controller}
command -v promtool >/dev/null || fail "promtool is missing (Debian package prometheus; tools/test installs it)"
testenv_start
kubectl create namespace drashift-system >/dev/null
kubectl apply -f "$DRASHIFT_ROOT/crds/drashift.io_migrationplans.yaml" >/dev/null # its plans are cached too
crd_established
for i in 1 2 3; do create_node "gpu-$i"; done

"$CONTROLLER" --kubeconfig "$KUBECONFIG" --identity metrics-probe --http-bind-address 127.0.0.1:0 >"$TEST_DIR/op.log" 2>&1 &
op=$!
wait_for 20 "/healthz to be served" grep -q 'msg="http server listening"' "$TEST_DIR/op.log"
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/op.log")
base=http://127.0.0.1:$port

expect_eq "$(curl -s "$base/healthz")" ok "/healthz"
ready() { curl -sf "$base/readyz" >/dev/null; }
wait_for 30 "/readyz" ready
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "$base/nope")" 404 "status of an unknown path"

curl -sf "$base/metrics" >"$TEST_DIR/metrics"
promtool check metrics <"$TEST_DIR/metrics" || fail "promtool rejects /metrics: $(promtool check metrics <"$TEST_DIR/metrics" 2>&1 | head -5)"
grep -qx 'drashift_cache_objects{resource="nodes"} 3' "$TEST_DIR/metrics" || fail "node cache size on /metrics: $(grep 'cache_objects{resource="nodes"}' "$TEST_DIR/metrics")"
grep -qx 'drashift_cache_synced{resource="pods"} 1' "$TEST_DIR/metrics" || fail "pod cache not reported synced"
grep -q '^drashift_api_requests_total{verb="GET",code="200"} [1-9]' "$TEST_DIR/metrics" || fail "no successful GET counted"
grep -qx 'drashift_leader 1' "$TEST_DIR/metrics" || fail "the only replica does not report itself leader"
for state in in_use free mapped; do
	grep -q "^drashift_malloc_bytes{state=\"$state\"} [0-9]" "$TEST_DIR/metrics" || fail "no drashift_malloc_bytes{state=\"$state\"}"
done
grep -q '^drashift_malloc_bytes{state="in_use"} [1-9]' "$TEST_DIR/metrics" || fail "malloc reports no bytes in use"
grep -qx 'drashift_reconcile_duration_seconds_count 0' "$TEST_DIR/metrics" ||
	fail "reconciles counted with no plan: $(grep '^drashift_reconcile_duration_seconds_count' "$TEST_DIR/metrics")"

# A node added later shows up: the watch feeds the cache.
create_node gpu-4
four_nodes() { curl -sf "$base/metrics" | grep -qx 'drashift_cache_objects{resource="nodes"} 4'; }
wait_for 20 "the fourth node in the cache" four_nodes

kill -TERM $op
wait $op || fail "drashift-controller did not exit 0 on SIGTERM"
log "PASS"
