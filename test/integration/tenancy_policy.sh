#!/usr/bin/env bash
# The tenant boundary as shipped (manifests/tenancy-policy.yaml) on the real
# admission chain, with the parameter as drashift writes it
# (controller/freeze.c, tenancy_parameter_json): with no parameter nothing
# is restricted; in stage Canary only the canary's namespaces may create
# claims for the plan's classes, and another namespace is refused with a
# message naming the plan, the pool and how to get access; in stage
# Migrating the namespaces listed and those whose labels match the selector
# may (labelling a namespace grants access at once); other classes are never
# affected; a pod's claim from a template is judged in the pod's namespace;
# restricted=false (stage Open) ends it. A pod cannot reference a claim of
# another namespace (the API has no field for it and refuses a
# "namespace/name"), and admin access needs both the API server's namespace
# label and the boundary.
source "$(dirname "$0")/../lib.sh"
testenv_start

NS=drashift-system
PARAM=drashift-tenancy-gpu-migration
kubectl apply -f "$DRASHIFT_ROOT/manifests/namespace.yaml" -f "$DRASHIFT_ROOT/manifests/tenancy-policy.yaml" >/dev/null
for n in team-canary team-a team-b ml-lab monitoring; do create_namespace $n; done
kubectl create namespace tenancy-probe >/dev/null
kubectl label namespace ml-lab tier=gpu >/dev/null

denied() { # NS CLASS WANT: refused, with WANT in the message
	create_claim "$1" "$2" && fail "a claim for $2 in $1 was admitted: $out"
	expect_contains "$out" "$3" "denial in $1"
}

policy_live drashift-claim-tenancy drashift.io/tenancy-parameter tenancy-probe
admitted team-b gpu.example.com
log "no parameter: a gpu.example.com claim is admitted in team-b"

# parameter STAGE POOLS NAMESPACES SELECTOR [RESTRICTED]: server-side apply, as drashift does.
parameter() {
	kubectl apply --server-side --field-manager=drashift --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $PARAM
  namespace: $NS
  labels:
    drashift.io/tenancy-parameter: "true"
    drashift.io/plan: gpu-migration
data:
  restricted: "${5:-true}"
  plan: gpu-migration
  stage: $1
  pools: "$2"
  deviceClasses: gpu.example.com,gpu-mig.example.com
  namespaces: "$3"
  namespaceSelector: "$4"
EOF
}

# ---- stage Canary: only the canary's namespaces ----
parameter Canary a100-east team-canary ""
wait_for 60 "the boundary to deny a gpu.example.com claim in team-a" until_denied team-a gpu.example.com
denial=$(cat "$TEST_DIR/denial")
msg="ResourceClaims for DeviceClass gpu.example.com are restricted by MigrationPlan gpu-migration while pool a100-east is in its canary: only namespaces team-canary may create them, and team-a is not one. To get access, ask the plan owner to add team-a to spec.pools[].canary.namespaces, or wait until the canary expands (kubectl describe migrationplan gpu-migration)."
expect_contains "$denial" "Error from server (Forbidden): " "status of the denial (403 Forbidden)"
expect_contains "$denial" "is forbidden: ValidatingAdmissionPolicy 'drashift-claim-tenancy' with binding 'drashift-claim-tenancy' denied request: $msg" \
	"denial message"
log "canary: $denial"
admitted team-canary gpu.example.com
admitted team-a nic.example.com
# A label does not open the canary: the selector is not part of it.
denied ml-lab gpu.example.com "while pool a100-east is in its canary"
# The class as one alternative of a firstAvailable request.
create_first_available team-a && fail "a firstAvailable claim with a restricted alternative was admitted: $out"
expect_contains "$out" "denied request: ResourceClaims for DeviceClass gpu-mig.example.com are restricted by MigrationPlan gpu-migration" \
	"denial of a firstAvailable alternative"

# A pod's claim from a template is created in the pod's namespace and judged there.
trainer_pod team-a
pod_events() { trainer_claim_events team-a; }
has_claim_event() { [ -n "$(pod_events)" ]; }
wait_for 60 "a FailedResourceClaimCreation Event on pod trainer" has_claim_event
event=$(pod_events | sed -n 1p)
expect_contains "$event" "denied request: $msg" "FailedResourceClaimCreation Event"
log "pod trainer in team-a: Pending, Event: $event"

# ---- a pod never uses another namespace's claim ----
# team-canary holds an admitted claim; team-a cannot borrow it. The pod API
# names a claim, never a namespace: a "namespace/name" is refused, and so is a
# namespace field.
shared=$(kubectl -n team-canary get resourceclaims -o jsonpath='{.items[0].metadata.name}')
borrow() { # FIELD: the pod's resourceClaims[0] entry
	kubectl create --validate=strict -f - 2>&1 <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: borrower
  namespace: team-a
spec:
  automountServiceAccountToken: false
  resourceClaims:
  - name: gpu
    $1
  containers:
  - name: c
    image: registry.invalid/c
    resources:
      claims:
      - name: gpu
EOF
}
out=$(borrow "resourceClaimName: team-canary/$shared") && fail "a pod referencing team-canary/$shared was created: $out"
expect_contains "$out" "spec.resourceClaims[0].resourceClaimName: Invalid value: \"team-canary/$shared\"" "refusal of namespace/name"
log "cross-namespace reference refused: $out"
out=$(borrow "resourceClaimName: $shared
    namespace: team-canary") && fail "a pod with a claim namespace was created: $out"
expect_contains "$out" 'unknown field "spec.resourceClaims[0].namespace"' "refusal of a namespace field"
log "no namespace field: $out"
# The same name resolves in the pod's own namespace, where no such claim exists.
out=$(borrow "resourceClaimName: $shared") || fail "pod borrower not created: $out"
expect_eq "$(kubectl -n team-canary get resourceclaim "$shared" -o jsonpath='{.status.reservedFor}')" "" \
	"team-canary's claim after team-a's pod named it (not reserved)"
kubectl -n team-a get resourceclaim "$shared" >/dev/null 2>&1 && fail "team-a has a claim $shared"
log "pod team-a/borrower refers to team-a/$shared, which does not exist; team-canary/$shared is untouched"

# ---- stage Migrating: listed, labelled, and canary namespaces ----
parameter Migrating "" team-b,team-canary "tier In gpu"
wait_for 60 "the boundary to deny a claim in team-canary's neighbour team-a with the Migrating message" \
	until_denied team-a gpu-mig.example.com
expect_contains "$(cat "$TEST_DIR/denial")" "denied request: ResourceClaims for DeviceClass gpu-mig.example.com are restricted by MigrationPlan gpu-migration while it migrates: only namespaces team-b, team-canary and namespaces labelled tier In gpu may create them, and team-a is not one. To get access, ask the plan owner to add team-a to spec.tenancy.allowedNamespaces or label it to match spec.tenancy.namespaceSelector; the restriction ends when every pool is on DRA (kubectl describe migrationplan gpu-migration)." \
	"Migrating denial"
admitted team-b gpu.example.com
admitted team-canary gpu.example.com
admitted ml-lab gpu.example.com
kubectl label namespace team-a tier=gpu >/dev/null
wait_for 30 "a claim in team-a once it is labelled tier=gpu" until_admitted team-a gpu.example.com
kubectl label namespace team-a tier- >/dev/null
wait_for 30 "team-a denied again once its label is gone" until_denied team-a gpu.example.com
log "Migrating: team-b, team-canary and ml-lab (tier=gpu) admitted; team-a only while labelled"

# Every operator of the selector, ANDed.
parameter Migrating "" "" "tier In gpu,cpu;example.com/team Exists;quarantine DoesNotExist;env NotIn dev"
kubectl label namespace team-b tier=cpu example.com/team=vision env=prod >/dev/null
wait_for 30 "team-b admitted by the four requirements" until_admitted team-b gpu.example.com
kubectl label namespace team-b env=dev --overwrite >/dev/null
wait_for 30 "team-b denied with env=dev (NotIn)" until_denied team-b gpu.example.com
kubectl label namespace team-b env- quarantine=yes >/dev/null
wait_for 30 "team-b denied with quarantine (DoesNotExist)" until_denied team-b gpu.example.com
kubectl label namespace team-b quarantine- example.com/team- >/dev/null
wait_for 30 "team-b denied without example.com/team (Exists)" until_denied team-b gpu.example.com
log "selector: In, Exists, DoesNotExist and NotIn each decide"

# ---- admin access: the API server's label and the boundary, both ----
parameter Migrating "" team-b ""
wait_for 30 "monitoring denied (not in the boundary)" until_denied monitoring gpu.example.com
create_claim monitoring gpu.example.com v1 admin && fail "an adminAccess claim in an unlabelled namespace was admitted: $out"
expect_contains "$out" "admin access to devices requires the \`resource.kubernetes.io/admin-access: true\` label on the containing namespace" \
	"the API server's admin-access rule"
log "adminAccess without the namespace label: $out"
kubectl label namespace monitoring resource.kubernetes.io/admin-access=true >/dev/null
create_claim monitoring gpu.example.com v1 admin && fail "an adminAccess claim outside the boundary was admitted: $out"
expect_contains "$out" "ValidatingAdmissionPolicy 'drashift-claim-tenancy' with binding 'drashift-claim-tenancy' denied request" \
	"the boundary for an adminAccess claim"
parameter Migrating "" team-b,monitoring ""
wait_for 30 "an adminAccess claim in labelled, allowed monitoring" until_admitted monitoring gpu.example.com v1 admin
log "adminAccess: needs the namespace label (API server) and the boundary (drashift)"

# ---- stage Open: the migration is over ----
parameter Open "" "" "" false
wait_for 60 "claims in team-a admitted once restricted=false" until_admitted team-a gpu.example.com
has_pod_claim() { [ -n "$(kubectl -n team-a get pod trainer -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')" ]; }
wait_for 120 "pod trainer to get its claim once the boundary is open" has_pod_claim
log "PASS"
