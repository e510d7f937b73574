#!/usr/bin/env bash
# Prometheus signals' credentials with the RBAC drashift ships, against a real
# Prometheus serving HTTPS with a certificate from a CA of this test:
#   - secretName drashift-prometheus (the one Secret drashift may read) with
#     that CA in ca.crt: the query is answered, a Pass;
#   - no Secret: the certificate cannot be verified, an error counted and
#     shown, never a pass; insecureSkipVerify: true answers;
#   - a Secret drashift may not read: the API's refusal is the query's error.
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

kubectl -n drashift-system create secret generic drashift-prometheus --from-file=ca.crt="$pki/ca.crt" \
	--from-literal=token=not-checked-by-this-prometheus >/dev/null
kubectl -n drashift-system create secret generic other-secret --from-file=ca.crt="$pki/ca.crt" >/dev/null

plan() { # NAME PROMETHEUS_FIELDS
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
      address: $PROM_URL
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
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
