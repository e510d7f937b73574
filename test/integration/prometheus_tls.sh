#!/usr/bin/env bash
# Prometheus signals' credentials with the RBAC drashift ships, against a real
# Prometheus serving HTTPS with a certificate from a CA of this test:
#   - secretName drashift-prometheus (the one Secret drashift may read) with
#     that CA in ca.crt: the query is answered, a Pass;
#   - no Secret: the certificate cannot be verified, an error counted and
#     shown, never a pass; insecureSkipVerify: true answers;
#   - a Secret drashift may not read: the API's refusal is the query's error;
#   - the Secret's token, through a bearer-token proxy in front of Prometheus
#     (test/prometheus_auth_proxy.py, as kube-rbac-proxy in a cluster): the
#     right token is answered, a Pass; no token and a wrong one are HTTP 401,
#     counted and shown, never a pass; the Secret fixed, the query passes again
#     without a restart (the Secret is read each round). No token appears in
#     drashift's log or in the plans' status.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_operator

# ---- a CA and a certificate for 127.0.0.1 ----
pki=$TEST_DIR/prometheus-pki
mkdir -p "$pki"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=prometheus-test-ca \
	-keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$pki/tls.key" -out "$pki/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$pki/san.ext"
openssl x509 -req -in "$pki/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 1 \
	-extfile "$pki/san.ext" -out "$pki/tls.crt" 2>/dev/null
cat >"$TEST_DIR/web.yml" <<EOF_WEB
tls_server_config: {cert_file: $pki/tls.crt, key_file: $pki/tls.key}
EOF_WEB
printf 'global: {scrape_interval: 15s}\n' >"$TEST_DIR/prometheus.yml"
PROM_CURL_ARGS="--cacert $pki/ca.crt"
start_prometheus "$TEST_DIR/prometheus.yml" --web.config.file="$TEST_DIR/web.yml"
log "Prometheus on $PROM_URL with a certificate of the test's CA"

# ---- the bearer-token proxy in front of it, and the tokens (in files: never on a command line) ----
printf 'right-%s\n' "$(openssl rand -hex 16)" >"$TEST_DIR/token" # a file's trailing newline is dropped
printf 'wrong-%s\n' "$(openssl rand -hex 16)" >"$TEST_DIR/wrong-token"
python3 "$DRASHIFT_ROOT/test/prometheus_auth_proxy.py" --upstream "$PROM_URL" --upstream-ca "$pki/ca.crt" \
	--cert "$pki/tls.crt" --key "$pki/tls.key" --token-file "$TEST_DIR/token" \
	--record "$TEST_DIR/proxy.rec" --port-file "$TEST_DIR/proxy.port" &
proxy_listening() { [ -s "$TEST_DIR/proxy.port" ]; }
wait_for 20 "the bearer-token proxy" proxy_listening
PROXY_URL=https://127.0.0.1:$(cat "$TEST_DIR/proxy.port")
# The proxy itself: it answers a POST with the token (-H @file keeps it off the command line), 401 without.
printf 'Authorization: Bearer %s\n' "$(cat "$TEST_DIR/token")" >"$TEST_DIR/auth-header"
expect_contains "$(curl -s --cacert "$pki/ca.crt" -H @"$TEST_DIR/auth-header" "$PROXY_URL/api/v1/query" \
	--data-urlencode 'query=vector(1)')" '"status":"success"' "the proxy's answer with the token"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$pki/ca.crt" "$PROXY_URL/api/v1/query?query=vector(1)")" \
	401 "the proxy's answer without a token"
log "bearer-token proxy on $PROXY_URL"

# secret_token FILE: (re)write drashift-prometheus with the CA and FILE's token.
secret_token() {
	kubectl -n drashift-system create secret generic drashift-prometheus --from-file=ca.crt="$pki/ca.crt" \
		--from-file=token="$1" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
}
secret_token "$TEST_DIR/token"
kubectl -n drashift-system create secret generic other-secret --from-file=ca.crt="$pki/ca.crt" >/dev/null

plan() { # NAME PROMETHEUS_FIELDS [ADDRESS]
	kubectl apply -f - >/dev/null <<EOF_PLAN
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: $1}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  preflight: Warn
  slo:
    prometheus:
      address: ${3:-$PROM_URL}
      interval: 1s
      $2
      queries: [{name: one, query: vector(1), threshold: 2}]
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
EOF_PLAN
}
signal() { kubectl get mp "$1" -o jsonpath='{.status.signals[?(@.name=="one")].verdict}|{.status.signals[?(@.name=="one")].value}|{.status.signals[?(@.name=="one")].errors}|{.status.signals[?(@.name=="one")].message}'; }
verdict_is() { [ "$(signal "$1" | cut -d'|' -f1)" = "$2" ]; }
errors_counted() { [ "$(signal "$1" | cut -d'|' -f3)" -ge 2 ] 2>/dev/null; }

plan with-ca "secretName: drashift-prometheus"
plan no-ca "insecureSkipVerify: false"
plan skip-verify "insecureSkipVerify: true"
plan forbidden-secret "secretName: other-secret"
plan bearer "secretName: drashift-prometheus" "$PROXY_URL"
plan no-token "insecureSkipVerify: true" "$PROXY_URL"

wait_for 60 "the query through the Secret's CA to pass" verdict_is with-ca Pass
expect_eq "$(signal with-ca)" "Pass|1|0|" "the query through the Secret's CA"
wait_for 60 "the query without the CA to fail twice" errors_counted no-ca
s=$(signal no-ca)
expect_eq "${s%%|*}" Inconclusive "the query without the CA"
expect_contains "$s" "no answer: SSL certificate problem" "the query without the CA"
wait_for 60 "the query with insecureSkipVerify to pass" verdict_is skip-verify Pass
wait_for 60 "the query through a forbidden Secret to fail twice" errors_counted forbidden-secret
s=$(signal forbidden-secret)
expect_eq "${s%%|*}" Inconclusive "the query through a Secret drashift may not read"
expect_contains "$s" "Secret drashift-system/other-secret: secrets \"other-secret\" is forbidden" \
	"the query through a Secret drashift may not read"
log "with-ca: $(signal with-ca); no-ca: $(signal no-ca | cut -c1-120); forbidden: $(signal forbidden-secret | cut -c1-160)"

# ---- the bearer token, checked by the proxy ----
wait_for 60 "the query through the proxy with the Secret's token to pass" verdict_is bearer Pass
expect_eq "$(signal bearer)" "Pass|1|0|" "the query through the proxy with the Secret's token"
wait_for 60 "the query through the proxy without a token to fail twice" errors_counted no-token
s=$(signal no-token)
expect_eq "${s%%|*}" Inconclusive "the query through the proxy without a token"
expect_contains "$s" 'HTTP 401, error "unauthorized": no bearer token' "the query through the proxy without a token"

secret_token "$TEST_DIR/wrong-token"
wait_for 60 "the query with the wrong token to fail twice" errors_counted bearer
s=$(signal bearer)
expect_eq "${s%%|*}" Inconclusive "the query through the proxy with a wrong token"
expect_contains "$s" 'HTTP 401, error "unauthorized": the bearer token is not the one' \
	"the query through the proxy with a wrong token"
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/operator.log" | tail -n 1)
errors=$(curl -sf "http://127.0.0.1:$port/metrics" |
	awk '$1 == "drashift_prometheus_query_errors_total{plan=\"bearer\",query=\"one\"}" { print $2 }')
[ "${errors:-0}" -ge 2 ] || fail "drashift_prometheus_query_errors_total for the wrong token is '$errors', not 2 or more"
log "wrong token: $(signal bearer | cut -c1-160); errors on /metrics: $errors"

secret_token "$TEST_DIR/token"
wait_for 60 "the query with the fixed Secret to pass again" verdict_is bearer Pass
expect_eq "$(signal bearer | cut -d'|' -f1,2)" "Pass|1" "the query after the Secret was fixed"
kill -0 "$OPERATOR_PID" || fail "the operator is no longer running"
expect_eq "$(grep -c 'msg="http server listening"' "$TEST_DIR/operator.log")" 1 "operator starts in the log"
expect_contains "$(sort -u "$TEST_DIR/proxy.rec")" "200 GET /api/v1/query" "the proxy's record"
plans=$(kubectl get mp -o json)
for t in "$TEST_DIR/token" "$TEST_DIR/wrong-token"; do
	grep -qF "$(cat "$t")" "$TEST_DIR/operator.log" && fail "a token ($(basename "$t")) is in drashift's log"
	grep -qF "$(cat "$t")" <<<"$plans" && fail "a token ($(basename "$t")) is in a plan"
done
log "fixed Secret: $(signal bearer); proxy answered: $(sort "$TEST_DIR/proxy.rec" | uniq -c | tr -s ' \n' ' ')"
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
