#!/usr/bin/env bash
# drashift-controller reaches the real API server with the kubeconfig variants
# platform engineers use, and says clearly what is wrong when it cannot.
source "$(dirname "$0")/../lib.sh"
CONTROLLER=${DRASHIFT_CONTROLLER:?DRASHIFT_CONTROLLER names the built drashift-controller}
testenv_start
version=$(kubectl version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -n 1)
[ -n "$version" ] || fail "kubectl reported no server version"

# 1. Token, CA inline (the kubeconfig testenv writes).
out=$("$CONTROLLER" --check --kubeconfig "$KUBECONFIG" 2>"$TEST_DIR/err") || fail "token kubeconfig: $(cat "$TEST_DIR/err")"
expect_contains "$out" "Kubernetes $version (HTTP/2)" "version and protocol printed with a token kubeconfig (HTTP/2 when the server offers it)"

# 2. Client certificate and key as files with relative paths, found through $KUBECONFIG.
pki="$TEST_DIR/cluster/pki"
mkdir -p "$TEST_DIR/cert/certs"
cp "$pki/ca.crt" "$pki/admin.crt" "$pki/admin.key" "$TEST_DIR/cert/certs/"
server=$(kubectl config view -o jsonpath='{.clusters[0].cluster.server}')
cat >"$TEST_DIR/cert/config" <<EOF_KC
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$server", certificate-authority: certs/ca.crt}
users:
- name: u
  user: {client-certificate: certs/admin.crt, client-key: certs/admin.key}
contexts:
- name: cert
  context: {cluster: c, user: u}
current-context: cert
EOF_KC
out=$(cd / && KUBECONFIG="$TEST_DIR/missing.yaml:$TEST_DIR/cert/config" "$CONTROLLER" --check 2>"$TEST_DIR/err") ||
	fail "client-certificate kubeconfig: $(cat "$TEST_DIR/err")"
expect_contains "$out" "Kubernetes $version" "version printed with a client certificate"

# 3. A wrong token: the API's own reason reaches the log, exit status 1.
sed 's/token: .*/token: not-a-valid-token/' "$KUBECONFIG" >"$TEST_DIR/bad-token"
if "$CONTROLLER" --check --kubeconfig "$TEST_DIR/bad-token" >/dev/null 2>"$TEST_DIR/err"; then fail "a wrong token was accepted"; fi
expect_contains "$(cat "$TEST_DIR/err")" 'error=Unauthorized' "log line for a wrong token"

# 4. A CA that did not sign the server's certificate is refused, not trusted.
sed "s|certificate-authority: certs/ca.crt|certificate-authority: certs/admin.crt|" "$TEST_DIR/cert/config" >"$TEST_DIR/cert/wrong-ca"
if "$CONTROLLER" --check --kubeconfig "$TEST_DIR/cert/wrong-ca" >/dev/null 2>"$TEST_DIR/err"; then fail "a server certificate not signed by the CA was trusted"; fi
expect_contains "$(cat "$TEST_DIR/err")" 'msg="cannot reach the API server"' "log line for an untrusted server"

# 5. A context that does not exist: one line naming the file and the context.
if "$CONTROLLER" --check --kubeconfig "$KUBECONFIG" --context nope >/dev/null 2>"$TEST_DIR/err"; then fail "an absent context was accepted"; fi
expect_contains "$(cat "$TEST_DIR/err")" "$KUBECONFIG" "error for an absent context names the file"
expect_contains "$(cat "$TEST_DIR/err")" '\"nope\"' "error for an absent context names the context"
expect_eq "$(wc -l <"$TEST_DIR/err")" 1 "lines logged for an absent context"

# 6. The API server gone: a clear error within the deadline, no hang.
"$TESTENV" stop "$TEST_DIR/cluster" kube-apiserver
start=$SECONDS
if "$CONTROLLER" --check --kubeconfig "$KUBECONFIG" --timeout 5s >/dev/null 2>"$TEST_DIR/err"; then fail "connected to a stopped API server"; fi
expect_contains "$(cat "$TEST_DIR/err")" 'msg="cannot reach the API server"' "log line for a stopped API server"
[ $((SECONDS - start)) -le 10 ] || fail "took $((SECONDS - start)) s to give up on a stopped API server"

# 7. Transport errors are retried with backoff within the deadline: an API
# server that comes back in time is reached.
"$CONTROLLER" --check --kubeconfig "$KUBECONFIG" --timeout 60s --log-level debug >"$TEST_DIR/late.out" 2>"$TEST_DIR/late.err" &
late=$!
sleep 3
"$TESTENV" start "$TEST_DIR/cluster" kube-apiserver
wait "$late" || fail "--check gave up although the API server came back within its deadline: $(tail -3 "$TEST_DIR/late.err")"
expect_contains "$(cat "$TEST_DIR/late.out")" "Kubernetes $version" "version printed after the API server came back"
grep -q 'msg="retrying request"' "$TEST_DIR/late.err" || fail "no retry was logged while the API server was down"
log "PASS"
