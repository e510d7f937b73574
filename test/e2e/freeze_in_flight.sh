#!/usr/bin/env bash
# A breach does not wait for a status write in flight. An admission webhook
# (tools/cmd/slowhook) holds every status write of the plan for 10 s, as an
# API server under load holds them for a while; the canary bakes, and its
# status, which counts the bake down, is written once a second: a write that
# changes no breach and no pool's phase.
#   1. while such a write is held, the canary's driver publishes a device
#      fewer (capacityDrift): claims for the plan's DeviceClass are denied
#      before that write is answered, since drashift judges the breach and
#      writes the freeze parameter without waiting for it;
#   2. once the webhook is gone, the status records the breach the parameter
#      holds (the same id), and there is one SLOBreach Event for it;
#   3. with the devices back, acknowledging it lifts the freeze.
source "$(dirname "$0")/../lib.sh"
source "$DRASHIFT_ROOT/tools/lib/common.sh"
testenv_start
start_fleet_plan_baking
create_namespace team-a
SLOWHOOK=$(go_tool_binary slowhook)
canary=$(plan_field fleet '{.status.pools[0].canaryNodes[0]}')
claim() { probe_claim team-a; }
out=$(claim) || fail "a claim was denied before any breach: $out"

# ---- 1. a breach while a counts write is held ----
"$SLOWHOOK" --hold 10s >"$TEST_DIR/slowhook.log" 2>&1 &
hook_up() { grep -q '^ca ' "$TEST_DIR/slowhook.log"; }
wait_for 30 "the webhook to listen" hook_up
addr=$(sed -n 's/^listening //p' "$TEST_DIR/slowhook.log")
ca=$(sed -n 's/^ca //p' "$TEST_DIR/slowhook.log")
kubectl apply -f - >/dev/null <<EOF_HOOK
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: test-hold-plan-status}
webhooks:
- name: hold.plan-status.test
  clientConfig: {url: "https://$addr/", caBundle: "$ca"}
  rules:
  - apiGroups: [drashift.io]
    apiVersions: ["*"]
    operations: [UPDATE]
    resources: [migrationplans/status]
  failurePolicy: Ignore
  sideEffects: None
  timeoutSeconds: 20
  admissionReviewVersions: [v1]
EOF_HOOK
count() { grep -c "^$1 MigrationPlan fleet/status" "$TEST_DIR/slowhook.log" || true; }
# A quiet plan is reconciled only when something changes (the bake's own requeue is an hour
# away): a new claim makes drashift decide again, and write its status with the bake counted down.
holding() { claim >/dev/null || true; [ "$(count held)" -gt "$(count released)" ]; }
wait_for 60 "a status write of the plan held by the webhook" holding
released=$(count released)
curl -sf -X POST --data "node=$canary:missing-devices=1" "${FLEET_METRICS%/metrics}/faults" >/dev/null ||
	fail "fleetsim refused the fault"
log "$canary publishes a device fewer; a status write is held (released so far: $released)"
denied() { ! out=$(claim) && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
wait_for 30 "claims for gpu.example.com to be denied" denied
[ "$(count released)" = "$released" ] ||
	fail "claims were denied only after the status write held at the crossing was answered: the freeze waited for it ($(grep -v "^ca " "$TEST_DIR/slowhook.log" | tr "\n" ";"))"
expect_contains "$(cat "$TEST_DIR/denial")" "frozen by MigrationPlan fleet (pool a): capacityDrift" "denial message"
param=$(kubectl -n drashift-system get cm drashift-freeze-fleet -o jsonpath='{.data.breachId}')
log "denied while the write was held; the parameter holds $param"

# ---- 2. the status records the parameter's breach ----
kubectl delete validatingwebhookconfiguration test-hold-plan-status >/dev/null
recorded() { [ "$(plan_field fleet '{.status.breach.id}')" = "$param" ]; }
wait_for 60 "the status to record the parameter's breach $param" recorded
expect_eq "$(plan_field fleet '{.status.phase}')" Frozen "phase"
events=$(kubectl get events --field-selector involvedObject.name=fleet,reason=SLOBreach \
	-o jsonpath='{range .items[*]}{.count}{" "}{.message}{"\n"}{end}')
expect_eq "$(printf '%s\n' "$events" | grep -c .)" 1 "SLOBreach Events ($events)"
expect_contains "$events" "1 pool a: capacityDrift" "the one SLOBreach Event, sent once"
grep -q 'msg="breach recorded in the status: judged while a status write was in flight' "$TEST_DIR/operator.log" ||
	fail "the operator did not log that the status recorded a breach judged ahead of it"

# ---- 3. with the devices back, an acknowledgement lifts it ----
curl -sf -X POST --data "node=$canary:clear" "${FLEET_METRICS%/metrics}/faults" >/dev/null || fail "fleetsim refused to clear the fault"
drift_passes() { plan_field fleet '{range .status.signals[?(@.pool=="a")]}{.name}={.verdict}{" "}{end}' | grep -qw 'capacityDrift=Pass'; }
wait_for 60 "capacityDrift to pass with $canary's devices back" drift_passes
kubectl patch mp fleet --type=merge -p "{\"spec\":{\"acknowledgedBreach\":\"$param\"}}" >/dev/null
admitted() { claim >/dev/null; }
wait_for 60 "claims to be admitted after the acknowledgement" admitted
log "ok"
