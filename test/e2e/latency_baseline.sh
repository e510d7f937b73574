#!/usr/bin/env bash
# Allocation latency is judged from when the pool could have served a claim,
# not from the claim's creation (issue: a plan froze on
# allocationLatencyP95 61579ms > 60000ms 9 s after its canary reached DRA,
# for claims created a minute before any DRA node existed):
#   1. jobs with claims for the plan's class are submitted before the plan
#      exists; they wait Pending, since no node serves the class yet;
#   2. the plan (allocationLatencyP95: 15s) moves the canary to DRA more than
#      15 s after the claims were created; they are allocated there;
#   3. the gate passes and the pool expands: allocationLatencyP95's value is
#      under the threshold, and its rawValue (counted from creation), shown
#      beside it, is over it; nothing froze.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:2x4
start_operator
create_namespace team-early

# ---- 1. jobs before any DRA node ----
dra_load team-early a 6 2s
pending() { [ "$(kubectl -n team-early get resourceclaims -o name | wc -l)" -eq 6 ]; }
wait_for 60 "the six jobs' claims" pending
sleep 20 # longer than the threshold below, before the canary even starts
expect_eq "$(kubectl -n team-early get pods --field-selector=status.phase=Pending -o name | wc -l)" 6 \
	"jobs pending while no node serves the class"

# ---- 2. the plan moves the canary; the claims are allocated there ----
kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: early}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 3, allocationLatencyP95: 15s}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 5s
EOF_PLAN

# ---- 3. judged from the canary, not from creation ----
signal() { plan_field early '{.status.signals[?(@.name=="allocationLatencyP95")].'"$1"'}'; }
expanded() { [ "$(plan_field early '{.status.pools[0].phase}')" = Expanding ] || [ "$(plan_field early '{.status.pools[0].phase}')" = DRA ]; }
not_frozen() { [ "$(plan_field early '{.status.frozen}')" != true ] || fail "the plan froze: $(plan_field early '{.status.breach}')"; }
deadline=$((SECONDS + 180))
until expanded; do
	not_frozen
	[ $SECONDS -lt $deadline ] || fail "pool a did not expand: $(plan_field early '{.status.pools[0].message}')"
	sleep 1
done
value=$(signal value) raw=$(signal rawValue)
log "allocationLatencyP95 $value (raw $raw), verdict $(signal verdict) on $(signal samples) samples"
expect_eq "$(signal verdict)" Pass "allocationLatencyP95 verdict"
[ "${value%ms}" -lt 15000 ] || fail "allocationLatencyP95 $value is not under 15000ms"
[ "${raw%ms}" -gt 15000 ] || fail "rawValue $raw does not show the wait from creation (over 15000ms)"
expect_eq "$(plan_field early '{.status.frozen}')" false "status.frozen"
expect_no_violations
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
