#!/usr/bin/env bash
# The freeze as shipped (manifests/freeze-policy.yaml) on the real admission
# chain: with no parameter nothing is frozen; once a plan's parameter says
# frozen=true, CREATE of a claim for a frozen DeviceClass in a covered
# namespace is refused with a message naming the plan, the pool, the signal,
# its value and its threshold, while other classes, other namespaces, and
# everything done to existing claims go on; a pod whose claim comes from a
# template waits (Pending, FailedResourceClaimCreation) and gets its claim
# once the same object is toggled back to frozen=false. Nothing is deleted.
source "$(dirname "$0")/../lib.sh"
testenv_start

NS=drashift-system
PARAM=drashift-freeze-gpu-migration
kubectl apply -f "$DRASHIFT_ROOT/manifests/namespace.yaml" -f "$DRASHIFT_ROOT/manifests/freeze-policy.yaml" >/dev/null
create_namespace team-a
create_namespace team-b
kubectl create namespace freeze-probe >/dev/null

policy_live drashift-claim-freeze drashift.io/freeze-parameter freeze-probe
admitted team-a gpu.example.com
before=${out%% created*}
before=${before#resourceclaim.resource.k8s.io/}
log "no parameter: claim $before for gpu.example.com admitted in team-a (parameterNotFoundAction Allow)"

# ---- the freeze: the parameter as drashift writes it (controller/freeze.c) ----
# parameter FROZEN: server-side apply of the whole object, as drashift does.
parameter() {
	kubectl apply --server-side --field-manager=drashift --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $PARAM
  namespace: $NS
  labels:
    drashift.io/freeze-parameter: "true"
    drashift.io/plan: gpu-migration
data:
  frozen: "$1"
  plan: gpu-migration
  pool: a100-east
  signal: claim allocation latency p95
  value: 2.4s
  threshold: 2s
  breachId: a100-east-1
  deviceClasses: gpu.example.com,gpu-mig.example.com
  namespaces: team-a
EOF
}
parameter true
uid=$(kubectl -n $NS get configmap $PARAM -o jsonpath='{.metadata.uid}')
frozen_at=$SECONDS
wait_for 60 "the freeze to deny a gpu.example.com claim in team-a" until_denied team-a gpu.example.com
log "freeze enforced $((SECONDS - frozen_at))s after the parameter was written"
denial=$(cat "$TEST_DIR/denial")
msg="ResourceClaims for DeviceClass gpu.example.com are frozen by MigrationPlan gpu-migration (pool a100-east): claim allocation latency p95 measured 2.4s, threshold 2s. Existing claims and running pods are not affected; a person lifts the freeze (see kubectl describe migrationplan gpu-migration)."
expect_contains "$denial" "Error from server (Forbidden): " "status of the denial (403 Forbidden)"
expect_contains "$denial" "is forbidden: ValidatingAdmissionPolicy 'drashift-claim-freeze' with binding 'drashift-claim-freeze' denied request: $msg" \
	"denial message"
case $denial in *"$msg") ;; *) fail "denial message has trailing text: $denial" ;; esac
log "denied: $denial"

# The same class as one alternative of a firstAvailable request, and the same
# claim posted as v1beta2 (converted to v1 before the policy reads it).
create_first_available team-a && fail "a firstAvailable claim with a frozen alternative was admitted: $out"
expect_contains "$out" "denied request: ResourceClaims for DeviceClass gpu-mig.example.com are frozen by MigrationPlan gpu-migration" \
	"denial of a firstAvailable alternative"
if grep -qx resource.k8s.io/v1beta2 <<<"$(kubectl api-versions)"; then
	create_claim team-a gpu.example.com v1beta2 && fail "a v1beta2 claim for gpu.example.com was admitted: $out"
	expect_contains "$out" "denied request: $msg" "denial of a v1beta2 claim"
fi

# Other classes, and namespaces the plan does not cover, go on.
admitted team-a nic.example.com
admitted team-b gpu.example.com
log "admitted during the freeze: nic.example.com in team-a, gpu.example.com in team-b"

# Existing claims are untouched and can still be changed (only CREATE is judged).
kubectl -n team-a get resourceclaim "$before" >/dev/null || fail "claim $before created before the freeze is gone"
kubectl -n team-a label resourceclaim "$before" drashift.io/checked=during-freeze >/dev/null ||
	fail "labelling claim $before during the freeze was refused"
expect_eq "$(kubectl -n team-a get resourceclaim "$before" -o jsonpath='{.metadata.labels.drashift\.io/checked}')" \
	during-freeze "label written on $before during the freeze"

# A template claim is created by kube-controller-manager: its pod waits.
trainer_pod team-a
pod_events() { trainer_claim_events team-a; }
has_claim_event() { [ -n "$(pod_events)" ]; }
wait_for 60 "a FailedResourceClaimCreation Event on pod trainer" has_claim_event
event=$(pod_events | sed -n 1p) # sed reads it all: no SIGPIPE under pipefail
expect_contains "$event" "Warning PodResourceClaim gpu: " "FailedResourceClaimCreation Event"
expect_contains "$event" "is forbidden: ValidatingAdmissionPolicy 'drashift-claim-freeze' with binding 'drashift-claim-freeze' denied request: $msg" \
	"FailedResourceClaimCreation Event"
expect_eq "$(kubectl -n team-a get pod trainer -o jsonpath='{.status.phase}/{.status.resourceClaimStatuses}')" "Pending/" \
	"pod trainer during the freeze (Pending, no claim)"
log "pod trainer: Pending, Event: $event"

# ---- lifting: the same object, toggled ----
parameter false
lifted_at=$SECONDS
wait_for 60 "claims for gpu.example.com in team-a to be admitted again" until_admitted team-a gpu.example.com
log "freeze lifted $((SECONDS - lifted_at))s after frozen=false was written"
pod_claim() { kubectl -n team-a get pod trainer -o jsonpath='{.status.resourceClaimStatuses[?(@.name=="gpu")].resourceClaimName}'; }
has_pod_claim() { [ -n "$(pod_claim)" ]; }
wait_for 120 "pod trainer to get its claim after the freeze lifted" has_pod_claim
generated=$(pod_claim)
expect_eq "$(kubectl -n team-a get resourceclaim "$generated" -o jsonpath='{.metadata.ownerReferences[0].name}')" trainer \
	"owner of the generated claim $generated"
log "pod trainer got claim $generated $((SECONDS - lifted_at))s after the lift"

expect_eq "$(kubectl -n $NS get configmap $PARAM -o jsonpath='{.metadata.uid} {.data.frozen}')" "$uid false" \
	"the parameter after the lift (same object, frozen=false)"
kubectl -n team-a get resourceclaim "$before" >/dev/null || fail "claim $before is gone"
log "PASS"
