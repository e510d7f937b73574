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

# claim NS CLASS [API_VERSION]: a claim manifest asking for one device of CLASS.
claim() {
	cat <<EOF
apiVersion: resource.k8s.io/${3:-v1}
kind: ResourceClaim
metadata:
  generateName: probe-
  namespace: $1
spec:
  devices:
    requests:
    - name: dev
      exactly:
        deviceClassName: $2
EOF
}
# create_claim NS CLASS [API_VERSION]: kubectl create's output (stdout and stderr) in $out; its status.
create_claim() { out=$(claim "$@" | kubectl create -f - 2>&1); }
admitted() {
	create_claim "$@" || fail "a claim for $2 in $1 was denied: $out"
	expect_contains "$out" "created" "claim for $2 in $1"
}
# Policies, bindings and parameters reach admission asynchronously: poll.
until_denied() { ! create_claim "$@" && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
until_admitted() { create_claim "$@"; }

# ---- no parameter: nothing is frozen ----
# A claim admitted right after the policy is applied proves little: the
# policy might just not be loaded yet. A second binding of the same policy,
# limited to namespace freeze-probe and with parameterNotFoundAction Deny,
# shows when the policy and its (empty) parameter lookup are live; bindings
# are seen in creation order, so drashift's binding, created before it, is
# live too.
kubectl apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: freeze-probe-missing-parameter-denies
spec:
  policyName: drashift-claim-freeze
  validationActions: [Deny]
  paramRef:
    namespace: $NS
    selector:
      matchLabels:
        drashift.io/freeze-parameter: "true"
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: freeze-probe
EOF
wait_for 60 "the policy to be live (probe binding denies without a parameter)" until_denied freeze-probe gpu.example.com
expect_contains "$(cat "$TEST_DIR/denial")" "no params found for policy binding with \`Deny\` parameterNotFoundAction" \
	"probe binding's denial"
admitted team-a gpu.example.com
before=${out%% created*}
before=${before#resourceclaim.resource.k8s.io/}
log "no parameter: claim $before for gpu.example.com admitted in team-a (parameterNotFoundAction Allow)"

# A pod whose claim comes from a template, as most GPU jobs ask.
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu
  namespace: team-a
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
EOF

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
out=$(kubectl create -f - 2>&1 <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  generateName: probe-
  namespace: team-a
spec:
  devices:
    requests:
    - name: dev
      firstAvailable:
      - name: nic
        deviceClassName: nic.example.com
      - name: mig
        deviceClassName: gpu-mig.example.com
EOF
) && fail "a firstAvailable claim with a frozen alternative was admitted: $out"
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
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: team-a
spec:
  automountServiceAccountToken: false
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpu
  containers:
  - name: train
    image: registry.invalid/trainer
    resources:
      claims:
      - name: gpu
EOF
pod_events() {
	kubectl -n team-a get events --field-selector involvedObject.kind=Pod,involvedObject.name=trainer,reason=FailedResourceClaimCreation \
		-o jsonpath='{range .items[*]}{.type} {.message}{"\n"}{end}'
}
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
