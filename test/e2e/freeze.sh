#!/usr/bin/env bash
# An SLO breach freezes new claims, the freeze lives in the API server, and
# only a person lifts it:
#   1. a canary node whose driver advertises fewer devices than the device
#      plugin had fails its handover (a failed step is an SLO signal): the plan
#      records the breach and shows Frozen, and `kubectl create` of a claim for
#      the plan's DeviceClass is denied with the plan, pool, signal, value and threshold;
#   2. the freeze holds while drashift is stopped, and after it restarts;
#   3. a rollback still runs while frozen; acknowledging the breach then lifts
#      the freeze and claims are admitted again;
#   4. the canary is tried again and fails again while the API server refuses
#      every status write that records a new breach (a policy of the test's):
#      claims are denied anyway, since the freeze parameter is written with the
#      breach before the status is, and once the status is accepted again it
#      records the parameter's breach, without the last one's acknowledgement;
#   5. deleting the plan lifts its freeze: the parameter it owned is deleted by
#      the garbage collector and claims are admitted (no orphaned freeze).
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:2x4 --faults node=a-0:missing-devices=2
start_operator
create_namespace team-a

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: guarded}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 1h
    deadlines: {handover: 5s}
EOF_PLAN

claim() { probe_claim team-a; }
out=$(claim) || fail "a claim was denied before any breach: $out"

# ---- 1. breach -> freeze ----
frozen() { [ "$(plan_field guarded '{.status.phase}')" = Frozen ]; }
wait_for 90 "the plan to freeze after the canary's failed step" frozen
expect_eq "$(plan_field guarded '{.status.frozen}')" true "status.frozen"
expect_eq "$(plan_field guarded '{.status.breach.signal}')" failedSteps "breached signal"
breach=$(plan_field guarded '{.status.breach.id}')
expect_contains "$(plan_field guarded '{.status.conditions[?(@.type=="Frozen")].message}')" "$breach" "Frozen condition names the breach to acknowledge"
denied() { ! out=$(claim) && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
wait_for 60 "claims for gpu.example.com to be denied" denied
msg=$(cat "$TEST_DIR/denial")
expect_contains "$msg" "ValidatingAdmissionPolicy 'drashift-claim-freeze' with binding 'drashift-claim-freeze' denied request" "denial"
expect_contains "$msg" "frozen by MigrationPlan guarded (pool a): failedSteps measured 1, threshold 0" "denial message"
log "frozen: $msg"
kubectl describe mp guarded | grep -q 'SLOBreach' || fail "no SLOBreach Event in kubectl describe"

# ---- 2. the freeze holds without drashift, and after it restarts ----
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
out=$(claim) && fail "a claim was admitted while drashift was stopped: $out"
start_operator
sleep 5
out=$(claim) && fail "a claim was admitted after drashift restarted: $out"
expect_eq "$(plan_field guarded '{.status.phase}')" Frozen "phase after a restart"

# ---- 3. roll back the failed canary, then acknowledge: the freeze lifts ----
kubectl patch mp guarded --type=merge -p '{"spec":{"rollback":{"all":true}}}' >/dev/null
back() { [ "$(plan_field guarded '{.status.pools[0].nodes.failed}')" = 0 ] && [ "$(plan_field guarded '{.status.pools[0].nodes.dra}')" = 0 ]; }
wait_for 90 "the failed canary to roll back" back
out=$(claim) && fail "a claim was admitted before the breach was acknowledged: $out"
kubectl patch mp guarded --type=merge -p "{\"spec\":{\"acknowledgedBreach\":\"$breach\"}}" >/dev/null
admitted() { claim >/dev/null; }
wait_for 60 "claims to be admitted after the acknowledgement" admitted
expect_eq "$(plan_field guarded '{.status.frozen}')" false "status.frozen after the acknowledgement"
expect_eq "$(plan_field guarded '{.status.breach.acknowledged}')" true "the breach kept in status, acknowledged"

# ---- 4. a second breach after the acknowledgement, its status write refused ----
refuse_writes test-refuse-breach drashift.io migrationplans/status "[UPDATE]" \
	"!has(object.status.breach) || object.status.breach.id == '$breach'" "the test refuses a status that records a new breach"
refused() { ! kubectl patch mp guarded --subresource status --type merge -p '{"status":{"breach":{"id":"probe"}}}' --dry-run=server >/dev/null 2>&1; }
wait_for 60 "the test's policy to refuse a status with a new breach" refused
kubectl patch mp guarded --type=merge -p '{"spec":{"rollback":{"all":false}}}' >/dev/null
param() { kubectl -n drashift-system get configmap drashift-freeze-guarded -o jsonpath="$1"; }
param_frozen() { [ "$(param '{.data.frozen}')" = true ] && [ "$(param '{.data.breachId}')" != "$breach" ]; }
wait_for 90 "the freeze parameter to record a second breach when the canary fails again" param_frozen
second=$(param '{.data.breachId}')
wait_for 30 "claims to be denied again, before the status records the breach" denied
expect_eq "$(plan_field guarded '{.status.breach.id}')" "$breach" "status.breach while its write is refused"
expect_contains "$(cat "$TEST_DIR/operator.log")" "the test refuses a status that records a new breach" "the refused status write in the log"
kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy test-refuse-breach >/dev/null
adopted() { [ "$(plan_field guarded '{.status.breach.id}')" = "$second" ]; }
wait_for 90 "the status to record the parameter's breach once its write is accepted" adopted
expect_contains "$(cat "$TEST_DIR/operator.log")" "breach recorded from the freeze parameter" "the adoption in the log"
expect_eq "$(plan_field guarded '{.status.breach.acknowledged}{.status.breach.acknowledgedTime}')" "" "the new breach's acknowledgement"
expect_eq "$(plan_field guarded '{.status.frozen}')" true "status.frozen after the second breach"
expect_eq "$(plan_field guarded '{.status.phase}')" Frozen "phase after the second breach"
out=$(claim) && fail "a claim was admitted after the second breach: $out"

# ---- 5. a person deletes the frozen plan ----
expect_eq "$(kubectl -n drashift-system get configmap drashift-freeze-guarded -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" \
	MigrationPlan/guarded "the freeze parameter's owner"
kubectl delete mp guarded >/dev/null
parameter_gone() { ! kubectl -n drashift-system get configmap drashift-freeze-guarded >/dev/null 2>&1; }
wait_for 60 "the deleted plan's freeze parameter to be garbage-collected" parameter_gone
wait_for 60 "claims to be admitted once the plan is gone" admitted
expect_no_violations
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
