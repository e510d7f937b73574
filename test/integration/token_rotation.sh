#!/usr/bin/env bash
# A rotated service-account token is picked up without a restart: the
# operator reads its kubeconfig's tokenFile again whenever the file changes
# (as kubelet rotates projected tokens in a pod). A bad token shows as 401s
# on /metrics; a fresh valid one lets requests succeed again.
source "$(dirname "$0")/../lib.sh"
CONTROLLER=${DRASHIFT_CONTROLLER:?DRASHIFT_CONTROLLER names the built drashift-controller}
testenv_start
install_drashift
server=$(kubectl config view -o jsonpath='{.clusters[0].cluster.server}')
kubectl -n drashift-system create token drashift-controller --duration=1h >"$TEST_DIR/token"
cat >"$TEST_DIR/rotating.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$server", certificate-authority: "$TEST_DIR/cluster/pki/ca.crt"}}]
users: [{name: u, user: {tokenFile: token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
"$CONTROLLER" --kubeconfig "$TEST_DIR/rotating.kubeconfig" --http-bind-address 127.0.0.1:0 \
	--leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms >"$TEST_DIR/op.log" 2>&1 &
op=$!
wait_for 20 "/metrics to be served" grep -q 'msg="http server listening"' "$TEST_DIR/op.log"
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/op.log")
count() { curl -sf "http://127.0.0.1:$port/metrics" | awk -v v="$1" -v c="$2" '$1 == "drashift_api_requests_total{verb=\"" v "\",code=\"" c "\"}" { print $2 }'; }
leading() { curl -sf "http://127.0.0.1:$port/metrics" | grep -qx 'drashift_leader 1'; }
wait_for 30 "the operator to lead with the first token" leading

echo "not-a-token" >"$TEST_DIR/token.new" && mv "$TEST_DIR/token.new" "$TEST_DIR/token"
unauthorized() { [ -n "$(count PUT 401)$(count GET 401)" ]; }
wait_for 20 "requests with the bad token to be refused (401)" unauthorized
refused=$(count PUT 401)

kubectl -n drashift-system create token drashift-controller --duration=1h >"$TEST_DIR/token.new"
mv "$TEST_DIR/token.new" "$TEST_DIR/token"
ok_before=$(count PUT 200)
renewed() { [ "$(count PUT 200)" -gt "${ok_before:-0}" ]; }
# Within a few retry periods (500 ms): a request that landed on a watch's connection waited 2 s
# there and cut the watch, eight in a row (18 s; controller/kube/kube_http.c).
wait_for 8 "renewals to succeed with the rotated token" renewed
wait_for 20 "the operator to lead again" leading
kill -TERM $op
wait $op || fail "drashift-controller did not exit 0 on SIGTERM"
log "refused with the bad token: ${refused:-0} PUT(s) and $(count GET 401) GET(s); renewals succeed with the new one"
log "PASS"
