#!/usr/bin/env bash
# The SLO gate on a latency signal, FreezeAndRollback, and every binding kept:
#   1. pool a's canary bakes, passes its gate on a small load and the pool
#      expands to DRA; status shows the measured signals;
#   2. the simulator slows prepares on pool b's canary to 6 s: once
#      readyLatencyP95 crosses its 3 s threshold the plan freezes both ways
#      (freezeMode AdmissionAndDeviceTaint): a claim for the class is denied
#      with the plan, pool, signal, value and threshold, and a DeviceTaintRule
#      taints the driver's devices NoSchedule; a pod already running on the
#      canary keeps running with its claim allocated, and a job that asks for
#      example.com/gpu after the freeze runs on a legacy node (without the
#      taint the scheduler would keep picking a DRA node for it, through the
#      class's extendedResourceName, and keep failing to create its claim);
#   3. FreezeAndRollback: pool b returns to Legacy once its DRA pods are done,
#      the running pod ran to completion on its claim, drashift evicted nothing,
#      and the simulator saw no double ownership or double allocation;
#   4. kubectl describe opens the status with the freeze and the command that
#      lifts it; kubectl drashift status shows it; a person runs it
#      (kubectl drashift acknowledge), which deletes the DeviceTaintRule and
#      admits claims.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:2x4,b:3x4
start_operator
create_namespace team-load
faults=${FLEET_METRICS%/metrics}/faults

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: slo}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo:
    minSamples: 3
    readyLatencyP95: 3s
    breachPolicy: FreezeAndRollback
    freezeMode: AdmissionAndDeviceTaint
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 3s
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 1}
    bakeTime: 1h
EOF_PLAN

claim() { probe_claim team-load; }
signals() { plan_field slo '{range .status.signals[*]}{.pool} {.name} {.value} {.threshold} {.verdict} {.samples}{"\n"}{end}'; }

# ---- 1. a healthy canary passes its gate and the pool expands ----
a_baking() { plan_field slo '{.status.pools[0].message}' | grep -q bak; }
wait_for 60 "pool a's canary on DRA" a_baking
dra_load team-load a 3
a_dra() { [ "$(plan_field slo '{.status.pools[0].phase}')" = DRA ]; }
wait_for 120 "pool a to pass its gate and reach DRA" a_dra
s=$(signals)
printf '%s\n' "$s" | grep -q '^a readyLatencyP95 [0-9]*ms 3000ms Pass [3-9]' || fail "pool a's readyLatencyP95 is not a Pass on 3+ samples: $s"
expect_contains "$s" "a driverErrors 0 0 Pass" "pool a's signals"
log "step 1: pool a passed its gate and is on DRA: $(printf '%s\n' "$s" | grep '^a readyLatencyP95')"

# ---- 2. slowed prepares on pool b's canary: breach -> freeze ----
b_baking() { plan_field slo '{.status.pools[1].message}' | grep -q baking; }
wait_for 90 "pool b's canary on DRA" b_baking
canary=$(plan_field slo '{.status.pools[1].canaryNodes[0]}')
keeper_pod team-load b 45s
keeper_claim=$(kubectl -n team-load get pod keeper -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
keeper_uid=$(kubectl -n team-load get resourceclaim "$keeper_claim" -o jsonpath='{.metadata.uid}')
expect_eq "$(kubectl -n team-load get pod keeper -o jsonpath='{.spec.nodeName}')" "$canary" "the keeper's node"

curl -sf -X POST --data 'pool=b:prepare-delay=6s' "$faults" >/dev/null || fail "the simulator refused the fault"
dra_load team-load b 3
frozen() { [ "$(plan_field slo '{.status.phase}')" = Frozen ] || [ "$(plan_field slo '{.status.frozen}')" = true ]; }
wait_for 120 "the slowed canary to breach readyLatencyP95 and freeze the plan" frozen
expect_eq "$(plan_field slo '{.status.breach.pool}')" b "breached pool"
expect_eq "$(plan_field slo '{.status.breach.signal}')" readyLatencyP95 "breached signal"
value=$(plan_field slo '{.status.breach.value}')
[ "${value%ms}" -gt 3000 ] || fail "breach value $value is not above the 3000ms threshold"
denied() { ! out=$(claim) && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
wait_for 60 "claims for gpu.example.com to be denied" denied
expect_contains "$(cat "$TEST_DIR/denial")" "frozen by MigrationPlan slo (pool b): readyLatencyP95 measured $value, threshold 3000ms" "denial message"
log "step 2: frozen: $(cat "$TEST_DIR/denial")"
rule() { kubectl get devicetaintrules.resource.k8s.io drashift-freeze-slo -o jsonpath="$1"; }
tainted() { rule '{.metadata.name}' >/dev/null 2>&1; }
wait_for 30 "the DeviceTaintRule" tainted
expect_eq "$(rule '{.spec.deviceSelector.driver} {.spec.taint.key}={.spec.taint.value}:{.spec.taint.effect}')" \
	"gpu.example.com drashift.io/freeze=readyLatencyP95:NoSchedule" "the DeviceTaintRule"
expect_eq "$(rule '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" MigrationPlan/slo "the rule's owner"
# The signals on /metrics too, in a form promtool accepts.
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/operator.log" | tail -n 1)
curl -sf "http://127.0.0.1:$port/metrics" >"$TEST_DIR/metrics" || fail "no /metrics on port '$port'"
metrics=$(cat "$TEST_DIR/metrics")
expect_contains "$metrics" 'drashift_slo_signal_verdict{plan="slo",pool="b",signal="readyLatencyP95",verdict="Breach"} 1' "/metrics"
expect_contains "$metrics" 'drashift_slo_signal_threshold{plan="slo",pool="b",signal="readyLatencyP95"} 3000' "/metrics"
expect_contains "$metrics" 'drashift_plan_frozen{plan="slo"} 1' "/metrics"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TEST_DIR/metrics" || fail "promtool rejects /metrics: $(promtool check metrics <"$TEST_DIR/metrics" 2>&1 | head -5)"
fi

expect_eq "$(kubectl -n team-load get pod keeper -o jsonpath='{.status.phase}')" Running "the keeper after the freeze"
expect_eq "$(kubectl -n team-load get resourceclaim "$keeper_claim" -o jsonpath='{.metadata.uid}/{.status.allocation.devices.results[0].driver}')" \
	"$keeper_uid/gpu.example.com" "the keeper's claim after the freeze"

# New work that asks for the extended resource: only a legacy node can take it.
job_node=$(extended_resource_job team-load legacy-job) || exit 1
expect_eq "$(kubectl get node "$job_node" -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}')" true "device-plugin label of $job_node, where the job ran"
log "step 2: the job asking for example.com/gpu ran on legacy node $job_node"

# ---- 3. FreezeAndRollback: back to Legacy after the DRA pods finish ----
if [ "$(kubectl -n team-load get pod keeper -o jsonpath='{.status.phase}')" = Running ]; then
	expect_eq "$(plan_field slo '{.status.pools[1].phase}')" RollingBack "pool b's phase while its DRA pods run"
	expect_eq "$(kubectl get node "$canary" -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}')" true "DRA label of $canary while the keeper holds its claim"
else
	fail "the keeper finished before the rollback could be watched holding its node (the job took too long?)"
fi
b_legacy() { [ "$(plan_field slo '{.status.pools[1].phase}')" = Legacy ]; }
wait_for 180 "pool b back on the device plugin" b_legacy
expect_eq "$(kubectl -n team-load get pod keeper -o jsonpath='{.status.phase}')" Succeeded "the keeper ran to completion (not evicted)"
expect_eq "$(kubectl get node "$canary" -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}')" \
	"true/false/" "labels and cordon of $canary after the rollback"
expect_eq "$(plan_field slo '{.status.pools[0].phase}/{.status.pools[0].nodes.dra}')" DRA/2 "pool a, done before the breach, while the plan is frozen"
expect_eq "$(plan_field slo '{.status.phase}')" Frozen "the plan stays frozen until a person acknowledges"
! grep -q 'msg=evicting' "$TEST_DIR/operator.log" || fail "drashift evicted a pod: $(grep 'msg=evicting' "$TEST_DIR/operator.log")"
failed_pods=$(kubectl -n team-load get pods -o jsonpath='{range .items[?(@.status.phase=="Failed")]}{.metadata.name} {end}')
expect_eq "$failed_pods" "" "failed pods"
expect_no_violations
kubectl describe mp slo >"$TEST_DIR/describe.txt"
for reason in SLOBreach PoolPhaseChanged; do
	grep -q "$reason" "$TEST_DIR/describe.txt" || fail "no $reason Event in kubectl describe"
done
log "step 3: pool b rolled back; nothing evicted, no violations"

# ---- 4. a person acknowledges: the taint goes, claims are admitted ----
breach=$(plan_field slo '{.status.breach.id}')
first=$(sed -n '/^Status:/{n;p;q}' "$TEST_DIR/describe.txt")
expect_contains "$first" "Activity:  Frozen: pool b's readyLatencyP95 measured" "the first status line of kubectl describe"
expect_contains "$first" "(breach $breach)" "the first status line of kubectl describe"
expect_contains "$first" "Action: find the cause, then kubectl drashift acknowledge slo" "the first status line of kubectl describe"
kubectl_drashift_on_path
tree=$(kubectl drashift status slo)
expect_contains "$tree" "├─ freeze: FROZEN" "kubectl drashift status of the frozen plan"
expect_contains "$tree" "lift: kubectl drashift acknowledge slo (breach $breach)" "kubectl drashift status of the frozen plan"
ack=$(kubectl drashift acknowledge slo)
expect_eq "$ack" "migrationplan.drashift.io/slo: spec.acknowledgedBreach (unset) -> \"$breach\"" "what acknowledge printed"
untainted() { ! tainted; }
wait_for 30 "the DeviceTaintRule to be deleted" untainted
admitted() { claim >/dev/null; }
wait_for 60 "claims to be admitted after the acknowledgement" admitted
expect_eq "$(plan_field slo '{.status.frozen}')" false "status.frozen after the acknowledgement"
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
