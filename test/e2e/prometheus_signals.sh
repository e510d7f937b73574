#!/usr/bin/env bash
# Prometheus signals against a real Prometheus (Debian's prometheus), started
# here on loopback and scraping the simulator's dra_operations_duration_seconds:
#   1. before any prepare the p95 query has no data: Inconclusive, not a pass;
#      a query with broken PromQL is an error, counted and shown with the
#      server's message, and holds the gate Inconclusive, never a Pass;
#   2. fast prepares on pool a's canary: the p95 of NodePrepareResources over
#      5 minutes is a Pass, in status and on /metrics;
#   3. the simulator slows prepares to 6 s: the p95 crosses its 2 s threshold,
#      the plan freezes exactly as on a built-in breach (status.breach names
#      the query, claims for the class are denied with its value and threshold),
#      and the error count of the broken query has kept growing.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:2x4
start_operator
create_namespace team-load
faults=${FLEET_METRICS%/metrics}/faults
fleet_target=${FLEET_METRICS#http://}
fleet_target=${fleet_target%/metrics}

# ---- Prometheus on a free loopback port, scraping the simulator every second ----
cat >"$TEST_DIR/prometheus.yml" <<EOF_PROM
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: fleetsim
  static_configs: [{targets: ['$fleet_target']}]
EOF_PROM
promtool check config "$TEST_DIR/prometheus.yml" >/dev/null || fail "promtool rejects the test's configuration"
start_prometheus "$TEST_DIR/prometheus.yml"
scraped() { prom_query up | grep -q '"value":\[[0-9.]*,"1"\]'; }
wait_for 60 "Prometheus to scrape the simulator" scraped
log "Prometheus on $PROM_URL scrapes $fleet_target"

kubectl apply -f - >/dev/null <<EOF_PLAN
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: prom}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo:
    minSamples: 3
    prometheus:
      address: $PROM_URL
      interval: 2s
      timeout: 5s
      queries:
      - name: prepareP95
        query: histogram_quantile(0.95, sum by (le) (rate(dra_operations_duration_seconds_bucket{operation_name="NodePrepareResources"}[\$window])))
        window: 5m
        threshold: 2
      - name: badQuery
        query: sum(rate(dra_operations_duration_seconds_count[\$window])
        threshold: 1
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 1h
EOF_PLAN

signal() { # NAME FIELDS: pool a's signal NAME, as jsonpath fields
	kubectl get mp prom -o jsonpath="{range .status.signals[?(@.name==\"$1\")]}$2{end}"
}

# ---- 1. no data yet; a broken query is an error, never a pass ----
a_baking() { plan_field prom '{.status.pools[0].message}' | grep -q bak; }
wait_for 90 "pool a's canary on DRA" a_baking
bad_counted() { [ "$(signal badQuery '{.errors}')" -ge 1 ] 2>/dev/null; }
wait_for 60 "the broken query's errors in status" bad_counted
expect_eq "$(signal badQuery '{.verdict} {.source}')" "Inconclusive Prometheus" "the broken query"
expect_contains "$(signal badQuery '{.message}')" 'error "bad_data"' "the broken query's message"
expect_contains "$(signal badQuery '{.message}')" "parse error" "the broken query's message"
expect_eq "$(signal prepareP95 '{.verdict} {.message}')" "Inconclusive no data" "the p95 before any prepare"
gate=$(plan_field prom '{.status.pools[0].gate}')
expect_contains "$gate" "Inconclusive (not a pass):" "pool a's gate"
expect_contains "$gate" "badQuery: HTTP 400, error \"bad_data\"" "pool a's gate"
log "step 1: $gate"

# ---- 2. fast prepares: a Pass ----
# A histogram's series appears with its first observation, so rate() counts
# from the second scrape on: one pod first (as the kubelet's first prepare),
# then the load whose prepares the p95 judges.
dra_load team-load a 1
series_scraped() { prom_query 'dra_operations_duration_seconds_count{operation_name="NodePrepareResources"}' | grep -q '"value"'; }
wait_for 90 "Prometheus to scrape the first prepare" series_scraped
sleep 2
dra_load team-load a 3
p95_passes() { [ "$(signal prepareP95 '{.verdict}')" = Pass ]; }
wait_for 90 "the p95 of fast prepares to pass" p95_passes
value=$(signal prepareP95 '{.value}')
awk -v v="$value" 'BEGIN { exit !(v > 0 && v <= 2) }' || fail "prepareP95 passed with value '$value', not in (0, 2]"
expect_eq "$(signal prepareP95 '{.threshold} {.samples} {.errors}')" "2 1 0" "prepareP95's threshold, samples, errors"
expect_contains "$(plan_field prom '{.status.pools[0].gate}')" "Inconclusive (not a pass): badQuery" \
	"pool a's gate while the broken query fails"
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/operator.log" | tail -n 1)
metrics() { curl -sf "http://127.0.0.1:$port/metrics"; }
expect_contains "$(metrics)" 'drashift_slo_signal_verdict{plan="prom",pool="a",signal="prepareP95",verdict="Pass"} 1' "/metrics"
log "step 2: prepareP95 $value passes (threshold 2)"

# ---- 3. slowed prepares: breach -> freeze ----
errors_before=$(signal badQuery '{.errors}')
curl -sf -X POST --data 'pool=a:prepare-delay=6s' "$faults" >/dev/null || fail "the simulator refused the fault"
dra_load team-load a 3
frozen() { [ "$(plan_field prom '{.status.frozen}')" = true ]; }
wait_for 120 "the slowed prepares to breach prepareP95 and freeze the plan" frozen
expect_eq "$(plan_field prom '{.status.breach.pool} {.status.breach.signal} {.status.breach.threshold}')" "a prepareP95 2" \
	"the breach"
value=$(plan_field prom '{.status.breach.value}')
awk -v v="$value" 'BEGIN { exit !(v > 2) }' || fail "breach value '$value' is not above the threshold 2"
expect_eq "$(plan_field prom '{.status.phase}')" Frozen "the plan's phase"
denied() { ! out=$(probe_claim team-load) && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
wait_for 60 "claims for gpu.example.com to be denied" denied
expect_contains "$(cat "$TEST_DIR/denial")" "frozen by MigrationPlan prom (pool a): prepareP95 measured $value, threshold 2" \
	"denial message"
m=$(metrics)
expect_contains "$m" 'drashift_slo_signal_verdict{plan="prom",pool="a",signal="prepareP95",verdict="Breach"} 1' "/metrics"
expect_contains "$m" 'drashift_plan_frozen{plan="prom"} 1' "/metrics"
errors=$(printf '%s\n' "$m" | awk '$1 == "drashift_prometheus_query_errors_total{plan=\"prom\",query=\"badQuery\"}" { print $2 }')
[ "${errors:-0}" -gt "$errors_before" ] || fail "drashift_prometheus_query_errors_total for badQuery is '$errors', not above $errors_before"
printf '%s\n' "$m" | grep -q '^drashift_prometheus_query_errors_total{plan="prom",query="prepareP95"}' &&
	fail "prepareP95 counted errors: $(printf '%s\n' "$m" | grep prometheus_query_errors)"
printf '%s\n' "$m" | promtool check metrics || fail "promtool rejects /metrics"
expect_no_violations
log "step 3: frozen on prepareP95 $value > 2; badQuery errors: $errors"
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
