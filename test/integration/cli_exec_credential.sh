#!/usr/bin/env bash
# kubectl drashift status with a kubeconfig whose user is an exec credential
# plugin, as EKS, GKE and AKS write them: a shell script prints an
# ExecCredential (client.authentication.k8s.io/v1) holding a ServiceAccount
# token. The plugin runs the script, the API server accepts the token, and the
# ServiceAccount's own RBAC applies (it may read, not write). Then a script
# that returns a client certificate and key instead (status.clientCertificateData
# and clientKeyData), for a user of its own signed by the control plane's CA:
# the API server sees that user, who may read, is refused a write, and may
# write once granted it.
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
# exec_kubeconfig FILE PLUGIN: a kubeconfig whose one user is the exec credential plugin ./PLUGIN.
exec_kubeconfig() {
	cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$server", certificate-authority: "$TEST_DIR/cluster/pki/ca.crt"}}]
users:
- name: viewer
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./$2
      interactiveMode: Never
contexts: [{name: viewer, context: {cluster: c, user: viewer}}]
current-context: viewer
KC
}
exec_kubeconfig "$TEST_DIR/exec.kubeconfig" credential-plugin

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

# ---- a client certificate and key from the plugin ----
# A user of its own, drashift-exec-cert, signed by the control plane's CA
# (the API server's --client-ca-file), and the plugin that returns it.
user=drashift-exec-cert
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$user" \
	-keyout "$TEST_DIR/exec-cert.key" -out "$TEST_DIR/exec-cert.csr" 2>/dev/null
openssl x509 -req -in "$TEST_DIR/exec-cert.csr" -CA "$TEST_DIR/cluster/pki/ca.crt" -CAkey "$TEST_DIR/cluster/pki/ca.key" \
	-set_serial "0x$(openssl rand -hex 8)" -days 1 -extfile <(printf 'extendedKeyUsage=clientAuth\n') \
	-out "$TEST_DIR/exec-cert.crt" 2>/dev/null
kubectl create clusterrolebinding drashift-exec-cert-viewer --clusterrole=drashift-viewer --user="$user" >/dev/null
cat >"$TEST_DIR/cert-plugin" <<'EOF_PLUGIN'
#!/bin/sh
# Counts its runs and prints the certificate and key (PEM) as an ExecCredential.
dir=$(dirname "$0")
echo run >>"$dir/cert-runs"
jq -n --rawfile cert "$dir/exec-cert.crt" --rawfile key "$dir/exec-cert.key" \
	'{apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential",
	  status: {clientCertificateData: $cert, clientKeyData: $key}}'
EOF_PLUGIN
chmod +x "$TEST_DIR/cert-plugin"
exec_kubeconfig "$TEST_DIR/cert.kubeconfig" cert-plugin

out=$(kubectl drashift status fleet --kubeconfig "$TEST_DIR/cert.kubeconfig" 2>&1) ||
	fail "status with the client certificate from the plugin: $out"
expect_contains "$out" "migrationplan fleet" "status through the plugin's client certificate"
expect_contains "$out" "a-0" "status through the plugin's client certificate (the pool's node)"
[ -s "$TEST_DIR/cert-runs" ] || fail "the certificate plugin never ran"
# The API server saw the certificate's user: a write is refused in its name...
rc=0
out=$(kubectl drashift pause fleet --kubeconfig "$TEST_DIR/cert.kubeconfig" 2>&1) || rc=$?
expect_eq "$rc" 1 "exit code of pause as $user, who may only read"
expect_contains "$out" "forbidden" "pause as $user, who may only read"
expect_contains "$out" "User \"$user\"" "pause as $user, who may only read"
expect_eq "$(kubectl get mp fleet -o jsonpath='{.spec.paused}')" false "spec.paused after a refused pause"
# ...and allowed once that user may patch plans (RBAC reaches the authorizer asynchronously: polled).
kubectl create clusterrole drashift-steer --verb=patch --resource=migrationplans.drashift.io >/dev/null
kubectl create clusterrolebinding drashift-exec-cert-steer --clusterrole=drashift-steer --user="$user" >/dev/null
cert_pause() { out=$(kubectl drashift pause fleet --kubeconfig "$TEST_DIR/cert.kubeconfig" 2>&1); }
wait_for 30 "pause as $user once granted patch" cert_pause
expect_eq "$out" "migrationplan.drashift.io/fleet: spec.paused false -> true" "what pause as $user printed"
expect_eq "$(kubectl get mp fleet -o jsonpath='{.spec.paused}')" true "spec.paused after pause as $user"
log "PASS"
