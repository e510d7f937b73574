#!/usr/bin/env bash
# kubectl drashift status with a kubeconfig whose user is an exec credential
# plugin, as EKS, GKE and AKS write them: a shell script prints an
# ExecCredential (client.authentication.k8s.io/v1) holding a ServiceAccount
# token. The plugin runs the script, the API server accepts the token, and the
# ServiceAccount's own RBAC applies (it may read, not write).
source "$(dirname "$0")/../lib.sh"
testenv_start
kubectl apply -f "$DRASHIFT_ROOT/crds/drashift.io_migrationplans.yaml" >/dev/null
crd_established
kubectl_drashift_on_path
apply_fleet_plan
create_node a-0 drashift.io/pool=a

# A reader: get plans, list nodes; nothing else.
kubectl create serviceaccount -n default viewer >/dev/null
kubectl create clusterrole drashift-viewer --verb=get,list --resource=migrationplans.drashift.io,nodes >/dev/null
kubectl create clusterrolebinding drashift-viewer --clusterrole=drashift-viewer --serviceaccount=default:viewer >/dev/null
kubectl -n default create token viewer --duration=1h >"$TEST_DIR/token"

cat >"$TEST_DIR/credential-plugin" <<'EOF_PLUGIN'
#!/bin/sh
# Counts its runs and prints the token as an ExecCredential.
dir=$(dirname "$0")
echo run >>"$dir/runs"
exp=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}\n' \
	"$(cat "$dir/token")" "$exp"
EOF_PLUGIN
chmod +x "$TEST_DIR/credential-plugin"
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
cat >"$TEST_DIR/exec.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$server", certificate-authority: "$TEST_DIR/cluster/pki/ca.crt"}}]
users:
- name: viewer
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./credential-plugin
      interactiveMode: Never
contexts: [{name: viewer, context: {cluster: c, user: viewer}}]
current-context: viewer
KC

out=$(kubectl drashift status fleet --kubeconfig "$TEST_DIR/exec.kubeconfig" 2>&1) ||
	fail "status with the exec credential kubeconfig: $out"
log "status:"$'\n'"$out"
expect_contains "$out" "migrationplan fleet" "status through the exec credential"
expect_contains "$out" "a-0" "status through the exec credential (the pool's node)"
[ -s "$TEST_DIR/runs" ] || fail "the credential plugin never ran"
# The same through $KUBECONFIG, as kubectl users have it.
KUBECONFIG="$TEST_DIR/exec.kubeconfig" kubectl drashift status fleet >/dev/null || fail "status with \$KUBECONFIG"
# The identity is the ServiceAccount's: it may not write.
rc=0
out=$(kubectl drashift pause fleet --kubeconfig "$TEST_DIR/exec.kubeconfig" 2>&1) || rc=$?
expect_eq "$rc" 1 "exit code of pause as the read-only ServiceAccount"
expect_contains "$out" "forbidden" "pause as the read-only ServiceAccount"
expect_contains "$out" "system:serviceaccount:default:viewer" "pause as the read-only ServiceAccount"
log "PASS"
