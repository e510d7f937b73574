#!/usr/bin/env bash
# Driver failure classes, one after the other on three nodes of pool a, all
# on DRA (the canary is the whole pool), with the simulator playing the
# kubelet's own messages:
#   1. retryable: node a-0's prepares time out (fault prepare-timeout: "...
#      NodePrepareResources: rpc error: code = DeadlineExceeded"): a-0 is
#      named under driverFailures.retryable, driverErrors shows it by class but
#      does not count it, nothing is cordoned, nothing freezes; the fault
#      cleared, the pod runs; then a-0's driver goes away under a pod whose
#      claim is allocated ("DRA driver gpu.example.com is not registered", its
#      slices withdrawn): retryable too, no quarantine, and the pod runs when
#      the driver is back;
#   2. permanent: the driver fails every prepare on a-1 (prepare-fail-rate=1):
#      a-1 is quarantined (cordoned, marked cordoned by drashift, the
#      drashift.io/quarantine annotation, a NodeQuarantined Event, the
#      Quarantined condition, nodes.quarantined 1) and driverErrors breaches:
#      the plan freezes; the pod and its claim stay;
#   3. needs cleanup: after the breach is acknowledged, a-2's driver stops but
#      its slices stay (driver-crash + stale-slices): the scheduler still
#      places a pod there and the kubelet says "DRA driver gpu.example.com is
#      not registered": a-2 is named under needsCleanup, not quarantined, not
#      cordoned, and the plan freezes again;
#   3b. needs cleanup: a person deletes the claim of a-0's running pod: past
#      stuckThreshold, still under resource.kubernetes.io/delete-protection,
#      a-0 is named under needsCleanup, not cordoned;
#   4. drashift deleted or evicted nothing, a-0 and a-2 were never cordoned; with
#      the drivers fixed and the breach acknowledged, lifting a-1's quarantine
#      leaves it cordoned for a person to uncordon, and it is not quarantined
#      again; the simulator saw no double ownership or double allocation.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:3x4
start_operator
kubectl_drashift_on_path
create_namespace team-load
faults=${FLEET_METRICS%/metrics}/faults

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: drivers}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  # A driver away withdraws its slices: capacity drift, judged on its own
  # elsewhere (freeze.sh); here only driverErrors may freeze the plan.
  # stuckThreshold 60 s: how long a deleted claim may stay delete-protected (3b).
  slo: {minSamples: 1, maxCapacityDrift: 100, stuckThreshold: 60s}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 3}
    bakeTime: 1h
EOF_PLAN

fault() { curl -sf -X POST --data "$1" "$faults" >/dev/null || fail "the simulator refused the fault $1"; }
failures() { plan_field drivers "{.status.pools[0].driverFailures.$1}"; }
driver_errors() { plan_field drivers '{range .status.signals[?(@.name=="driverErrors")]}{.value} {.byClass.retryable}/{.byClass.permanent}/{.byClass.needsCleanup} {.verdict}{end}'; }
node_field() { kubectl get node "$1" -o jsonpath="$2"; }
frozen() { [ "$(plan_field drivers '{.status.frozen}')" = true ]; }
# pinned_pod NAME NODE: a pod with a claim for one gpu.example.com device, scheduled onto NODE.
pinned_pod() {
	kubectl -n team-load create -f - >/dev/null <<EOF_POD
apiVersion: v1
kind: Pod
metadata: {name: $1, annotations: {fleetsim/duration: 1h}}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, image: registry.invalid/$1, resources: {claims: [{name: gpu}]}}]
EOF_POD
}
gpu_template team-load one-gpu

all_dra() { [ "$(plan_field drivers '{.status.pools[0].nodes.dra}')" = 3 ]; }
wait_for 300 "the three nodes of pool a on DRA" all_dra

# ---- 1. retryable ----
fault node=a-0:prepare-timeout
pinned_pod slow a-0
retryable() { [ "$(failures retryable)" = '["a-0"]' ]; }
wait_for 90 "a-0 named retryable" retryable
expect_contains "$(driver_errors)" "0 1/0/0" "driverErrors: value and nodes by class"
expect_eq "$(node_field a-0 '{.spec.unschedulable}{.metadata.annotations.drashift\.io/quarantine}')" "" "a-0's cordon and quarantine"
frozen && fail "a retryable failure froze the plan"
log "step 1: a-0 retryable: $(failures messages)"
fault node=a-0:prepare-timeout=false
slow_running() { [ "$(kubectl -n team-load get pod slow -o jsonpath='{.status.phase}')" = Running ]; }
wait_for 90 "the pod on a-0 to run once prepares answer again" slow_running
# A driver that goes away (a restart, a rollout) under a pod whose claim is
# allocated: the kubelet says it is not registered; once its slices are
# withdrawn that is retryable too, and the pod runs when the driver is back.
fault node=a-0:prepare-delay=8s
pinned_pod restart a-0
claim_of() { kubectl -n team-load get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'; }
allocated() { c=$(claim_of restart) && [ -n "$c" ] && [ -n "$(kubectl -n team-load get resourceclaim "$c" -o jsonpath='{.status.allocation}')" ]; }
wait_for 60 "the claim of the pod on a-0 allocated" allocated
fault node=a-0:driver-crash
away() { [ "$(failures retryable)" = '["a-0"]' ] && failures messages | grep -q 'a-0; retryable: the driver is not registered'; }
wait_for 90 "a-0 named retryable while its driver is away" away
expect_eq "$(node_field a-0 '{.spec.unschedulable}{.metadata.annotations.drashift\.io/quarantine}')" "" "a-0's cordon and quarantine while its driver is away"
frozen && fail "a driver away froze the plan"
log "step 1: a-0 retryable while its driver is away: $(failures messages)"
fault node=a-0:clear
restart_running() { [ "$(kubectl -n team-load get pod restart -o jsonpath='{.status.phase}')" = Running ]; }
wait_for 90 "the pod on a-0 to run once its driver is back" restart_running
over() { [ "$(failures retryable)" = '[]' ]; }
wait_for 30 "a-0's failures to be over once its pods run" over
log "step 1: a-0's driver came back: nothing quarantined, nothing frozen"

# ---- 2. permanent: quarantine, and the breach ----
fault node=a-1:prepare-fail-rate=1
pinned_pod broken a-1
quarantined() { [ -n "$(node_field a-1 '{.metadata.annotations.drashift\.io/quarantine}')" ]; }
wait_for 90 "a-1 quarantined" quarantined
expect_eq "$(node_field a-1 '{.spec.unschedulable}/{.metadata.annotations.drashift\.io/cordoned-by-drashift}')" true/true "a-1's cordon"
expect_contains "$(node_field a-1 '{.metadata.annotations.drashift\.io/quarantine}')" "permanent: the driver failed NodePrepareResources" "a-1's quarantine record"
shown() { [ "$(failures quarantined)" = '["a-1"]' ] && [ "$(plan_field drivers '{.status.pools[0].nodes.quarantined}')" = 1 ]; }
wait_for 60 "a-1 shown quarantined in the status" shown
expect_contains "$(failures permanent)" '"a-1"' "driverFailures.permanent"
expect_contains "$(plan_field drivers '{.status.conditions[?(@.type=="Quarantined")].status} {.status.conditions[?(@.type=="Quarantined")].message}')" \
	"True 1 node(s) quarantined by a permanent driver failure, cordoned and left out of their pools' progress: a-1 (pool a)" "the Quarantined condition"
expect_contains "$(kubectl get events -A --field-selector reason=NodeQuarantined -o jsonpath='{.items[*].involvedObject.name}')" a-1 "NodeQuarantined Events"
wait_for 60 "driverErrors to breach and freeze the plan" frozen
expect_eq "$(plan_field drivers '{.status.breach.signal}')" driverErrors "breached signal"
expect_eq "$(kubectl -n team-load get pod broken -o jsonpath='{.spec.nodeName}/{.metadata.deletionTimestamp}')" a-1/ "the pod on a-1, kept"
expect_contains "$(kubectl drashift status drivers | grep ' a-1 ')" "QUARANTINED: drashift leaves it alone, cordoned" "kubectl drashift status"
log "step 2: a-1 quarantined and the plan frozen: $(driver_errors)"

# ---- 3. needs cleanup: stale slices of a driver that stopped ----
kubectl drashift acknowledge drivers >/dev/null
thawed() { ! frozen; }
wait_for 60 "the acknowledgement to lift the freeze" thawed
fault node=a-2:driver-crash:stale-slices
sleep 5 # past the simulator's 2 s slice-removal delay: the slices stay
expect_eq "$(kubectl get resourceslices --field-selector spec.nodeName=a-2,spec.driver=gpu.example.com -o name | wc -l | tr -d ' ')" 1 "a-2's slices after its driver stopped"
pinned_pod stale a-2
cleanup() { [ "$(failures needsCleanup)" = '["a-2"]' ]; }
wait_for 90 "a-2 named needsCleanup" cleanup
expect_contains "$(failures messages)" "a-2; needsCleanup: the driver is not registered but its ResourceSlices for the node remain" "driverFailures.messages"
expect_eq "$(node_field a-2 '{.spec.unschedulable}{.metadata.annotations.drashift\.io/quarantine}')" "" "a-2's cordon and quarantine"
wait_for 60 "the stale slices to freeze the plan again" frozen
expect_eq "$(failures quarantined)" '["a-1"]' "quarantined nodes"
log "step 3: a-2 needs cleanup: $(driver_errors)"

# ---- 3b. needs cleanup: a claim stuck with resource.kubernetes.io/delete-protection ----
# A person deletes the claim of the pod running on a-0: the claim controller
# keeps its finalizer while the pod holds it; past stuckThreshold a-0 needs
# cleanup too, and stays schedulable.
slow_claim=$(claim_of slow)
kubectl -n team-load delete resourceclaim "$slow_claim" --wait=false >/dev/null
expect_contains "$(kubectl -n team-load get resourceclaim "$slow_claim" -o jsonpath='{.metadata.finalizers}')" \
	resource.kubernetes.io/delete-protection "the deleted claim's finalizers"
stuck() { [ "$(failures needsCleanup)" = '["a-0","a-2"]' ]; }
wait_for 150 "a-0 named needsCleanup for its stuck claim" stuck
expect_contains "$(failures messages)" "a-0; needsCleanup: 1 deleted claim(s) still held by resource.kubernetes.io/delete-protection" \
	"driverFailures.messages"
expect_eq "$(node_field a-0 '{.spec.unschedulable}{.metadata.annotations.drashift\.io/quarantine}')" "" "a-0's cordon and quarantine"
log "step 3b: a-0 needs cleanup: $(failures messages)"

# ---- 4. nothing deleted, leave what you found, lift the quarantine, no violations ----
expect_eq "$(kubectl -n team-load get pods -o jsonpath='{range .items[*]}{.metadata.name}:{.metadata.deletionTimestamp} {end}')" \
	"broken: restart: slow: stale: " "pods, none deleted"
expect_eq "$(kubectl -n team-load get resourceclaims -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name} {end}')" "$slow_claim " \
	"claims being deleted: only the one the person deleted"
! grep -q 'msg="evicting"' "$TEST_DIR/operator.log" || fail "drashift evicted a pod"
for n in a-0 a-2; do
	expect_eq "$(node_field $n '{.spec.unschedulable}')" "" "$n's cordon"
done
# A person cleans up (the pod holding the deleted claim goes, and the claim
# with it), fixes both drivers, acknowledges the breach (failures before it
# are judged no more), then lifts the quarantine: drashift leaves a-1 cordoned.
kubectl -n team-load delete pod slow --wait=false >/dev/null
claim_gone() { ! kubectl -n team-load get resourceclaim "$slow_claim" >/dev/null 2>&1; }
wait_for 90 "the deleted claim to go with its pod" claim_gone
fault node=a-1:clear,node=a-2:clear
running() { [ "$(kubectl -n team-load get pods -o jsonpath='{range .items[*]}{.status.phase} {end}')" = "Running Running Running " ]; }
wait_for 120 "every pod running once the drivers answer" running
sleep 2
kubectl drashift acknowledge drivers >/dev/null
wait_for 60 "the second acknowledgement to lift the freeze" thawed
kubectl annotate node a-1 drashift.io/quarantine- >/dev/null
lifted() { [ "$(failures quarantined)" = '[]' ] && [ "$(plan_field drivers '{.status.conditions[?(@.type=="Quarantined")].status}')" = False ]; }
wait_for 60 "the lifted quarantine in the status" lifted
sleep 3
expect_eq "$(node_field a-1 '{.spec.unschedulable}/{.metadata.annotations.drashift\.io/quarantine}')" true/ \
	"a-1 after its quarantine was lifted: not quarantined again, still cordoned (a person uncordons it)"
frozen && fail "the plan froze again after the drivers were fixed"
expect_no_violations
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
