#!/usr/bin/env bash
# A plan, a pool or a node going away mid-handover leaves every node at rest
# (issue 19), on the real control plane with the simulated fleet:
#   1. the plan carries the finalizer and status.holdsNodes before it touches
#      a node, and its driver cannot change from then on;
#   2. a node deleted mid-handover is forgotten: the pool's counts follow;
#   3. a pool removed from the spec releases its node (walked back from draining);
#   4. deleting the plan walks a-0 back from draining at once (its GPU pod runs
#      on), and finishes b-0 on DRA from driver-on, holding the plan until then;
#   5. deleting a plan mid-rollback finishes the rollback once the DRA pod ends;
#   6. the escape hatch drops the plan at once and leaves a labelled orphan,
#      reported on /metrics and in an Event, released with the commands in docs/operations.md;
#   7. deleting a plan walks a node back from plugin-off at once, and finishes
#      rollbacks held in driver-off (a ResourceSlice) and plugin-on (allocatable 0),
#      holding the plan and saying what it waits for until then;
#   8. deleting the CRD releases a node in draining before its plan goes.
# Every node ends with one owner, uncordoned, without drashift's annotations.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:1x4,b:1x4,c:1x4 --faults node=b-0:missing-devices=1
faults=${FLEET_METRICS%/metrics}/faults
start_operator
create_namespace team
# x-0: a node without device plugin or driver; its handover stops in driver-on.
create_node x-0 drashift.io/pool=x drashift.io/device-plugin=true

# gpu_pod NAME POOL DURATION: a pod holding example.com/gpu on the pool's node.
gpu_pod() {
	kubectl -n team create -f - >/dev/null <<EOF_POD
apiVersion: v1
kind: Pod
metadata: {name: $1, annotations: {fleetsim/duration: $3}}
spec:
  nodeSelector: {drashift.io/pool: $2}
  containers: [{name: main, image: registry.invalid/job, resources: {limits: {example.com/gpu: 1}}}]
EOF_POD
}
pod_phase() { kubectl -n team get pod "$1" -o jsonpath='{.status.phase}'; }
running() { [ "$(pod_phase "$1")" = Running ]; }
gpu_pod holder-a a 1h
gpu_pod holder-c c 1h
wait_for 60 "the GPU pods to run" running holder-a
wait_for 60 "the GPU pods to run" running holder-c

step() { kubectl get node "$1" -o jsonpath='{.metadata.annotations.drashift\.io/step}'; }
at_step() { [ "$(step "$1")" = "$2" ]; }
# at_rest NODE OWNER: one owner, not cordoned, no drashift annotation.
at_rest() {
	local labels
	labels=$(kubectl get node "$1" -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}')
	case $2 in
	legacy) expect_eq "$labels" "true/false/" "labels and cordon of $1" ;;
	dra) expect_eq "$labels" "false/true/" "labels and cordon of $1" ;;
	esac
	expect_eq "$(kubectl get node "$1" -o jsonpath='{.metadata.annotations}' | grep -o '"drashift.io/[^"]*"' || true)" "" \
		"drashift annotations left on $1"
}
gone() { ! kubectl get mp "$1" >/dev/null 2>&1; }

# apply_plan NAME < the plan's spec fields beyond driver, extendedResource and deviceClassNames.
apply_plan() {
	kubectl apply -f - >/dev/null <<EOF_APPLY
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: $1}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
$(cat)
EOF_APPLY
}

apply_plan e2e <<'EOF_PLAN'
  maxConcurrentPools: 4
  pools:
  - {name: a, nodeSelector: {matchLabels: {drashift.io/pool: a}}}
  - {name: b, nodeSelector: {matchLabels: {drashift.io/pool: b}}}
  - {name: c, nodeSelector: {matchLabels: {drashift.io/pool: c}}}
  - {name: x, nodeSelector: {matchLabels: {drashift.io/pool: x}}}
EOF_PLAN

# ---- 1. finalizer and identity before the first node write ----
wait_for 60 "a-0 draining" at_step a-0 draining
wait_for 60 "c-0 draining" at_step c-0 draining
wait_for 60 "b-0 in driver-on (one device missing)" at_step b-0 driver-on
wait_for 60 "x-0 in driver-on (no driver)" at_step x-0 driver-on
expect_eq "$(plan_field e2e '{.metadata.finalizers}')" '["drashift.io/release-nodes"]' "the plan's finalizer"
expect_eq "$(plan_field e2e '{.status.holdsNodes}')" true "status.holdsNodes"
out=$(kubectl patch mp e2e --type=merge -p '{"spec":{"driver":"other.example.com"}}' 2>&1) &&
	fail "the driver of a plan holding nodes changed: $out"
expect_contains "$out" "Roll the plan back" "refused driver change"
log "step 1: finalizer and holdsNodes recorded, the driver is immutable"

# ---- 2. a node deleted mid-handover ----
kubectl delete node x-0 >/dev/null
x_forgotten() {
	[ "$(plan_field e2e '{.status.pools[3].nodes.total}')" = 0 ] &&
		! plan_field e2e '{.status.handovers[*].node}' | grep -qw x-0
}
wait_for 30 "pool x to forget x-0" x_forgotten
log "step 2: x-0 deleted mid-handover and forgotten"

# ---- 3. a pool removed from the spec mid-handover ----
kubectl patch mp e2e --type=json -p '[{"op":"remove","path":"/spec/pools/3"},{"op":"remove","path":"/spec/pools/2"}]' >/dev/null
c_released() { [ -z "$(step c-0)" ] && [ -z "$(kubectl get node c-0 -o jsonpath='{.spec.unschedulable}')" ]; }
wait_for 30 "c-0 released after its pool left the plan" c_released
at_rest c-0 legacy
expect_eq "$(pod_phase holder-c)" Running "the GPU pod on c-0"
kubectl get events -A --field-selector involvedObject.name=c-0 -o jsonpath='{range .items[*]}{.note}{.message}{"\n"}{end}' >"$TEST_DIR/c-events"
grep -q "left the plan's pools" "$TEST_DIR/c-events" || fail "no Event says c-0 left the plan: $(cat "$TEST_DIR/c-events")"
expect_no_violations
log "step 3: c-0 walked back when pool c left the spec"

# ---- 4. delete the plan: a-0 walks back, b-0 finishes on DRA first ----
kubectl delete mp e2e --wait=false >/dev/null
a_released() { [ -z "$(step a-0)" ]; }
wait_for 30 "a-0 released" a_released
at_rest a-0 legacy
expect_eq "$(pod_phase holder-a)" Running "the GPU pod on a-0"
deleting() {
	[ "$(plan_field e2e '{.status.conditions[?(@.type=="Deleting")].status}')" = True ] &&
		plan_field e2e '{.status.conditions[?(@.type=="Deleting")].message}' | grep -q 'waits for 1 node(s)'
}
wait_for 20 "the Deleting condition to name the one node left" deleting
expect_eq "$(plan_field e2e '{.status.handovers[0].node}/{.status.handovers[0].step}')" b-0/driver-on "what deletion waits for"
expect_contains "$(plan_field e2e '{.status.handovers[0].message}')" "waiting for the driver's ResourceSlices" "why b-0 is not released yet"
kubectl describe mp e2e >"$TEST_DIR/describe.txt"
grep -q "Deleting.*deletion waits" "$TEST_DIR/describe.txt" || fail "describe shows no Deleting Event: $(tail -20 "$TEST_DIR/describe.txt")"
curl -sf -X POST --data 'node=b-0:clear' "$faults" >/dev/null || fail "the simulator refused to clear the fault"
wait_for 60 "the plan to go once b-0 is on DRA" gone e2e
at_rest b-0 dra
expect_no_violations
log "step 4: deleting the plan walked a-0 back and finished b-0 on DRA"

# ---- 5. delete a plan mid-rollback: the rollback finishes once the DRA pod ends ----
dra_pod team trainer b 40s
wait_for 60 "the DRA pod to run" running trainer
apply_plan back <<'EOF_PLAN'
  rollback: {all: true}
  pools:
  - {name: b, nodeSelector: {matchLabels: {drashift.io/pool: b}}}
EOF_PLAN
wait_for 60 "b-0 draining its DRA claims" at_step b-0 draining-dra
kubectl delete mp back --wait=false >/dev/null
sleep 3
running trainer || fail "the DRA pod ended before the check: lengthen its duration"
expect_eq "$(kubectl get node b-0 -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}')" true "DRA label of b-0 while its pod holds a claim"
gone back && fail "the plan went before b-0 was released"
wait_for 90 "the plan to go once b-0 is back on the device plugin" gone back
at_rest b-0 legacy
expect_eq "$(pod_phase trainer)" Succeeded "the DRA pod ran to completion"
expect_no_violations
log "step 5: deleting a plan mid-rollback finished the rollback after the pod"

# plan_on_a NAME: a plan of pool a alone, once a-0 is draining (its GPU pod holds it there).
plan_on_a() {
	apply_plan "$1" <<'EOF_PLAN'
  pools:
  - {name: a, nodeSelector: {matchLabels: {drashift.io/pool: a}}}
EOF_PLAN
	wait_for 60 "a-0 draining under plan $1" at_step a-0 draining
}

# ---- 6. the escape hatch, and releasing the orphan by hand ----
plan_on_a forced
kubectl annotate mp forced drashift.io/force-delete=true >/dev/null
kubectl delete mp forced --wait=false >/dev/null
wait_for 30 "the forced plan to go" gone forced
expect_eq "$(step a-0)/$(kubectl get node a-0 -o jsonpath='{.spec.unschedulable}')" draining/true "a-0 as the forced delete left it"
expect_contains "$(kubectl get node a-0 -o jsonpath='{.metadata.annotations.drashift\.io/orphaned-by}')" "forced/" "a-0's orphan record"
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/operator.log" | tail -n 1)
orphans() { curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "drashift_orphaned_nodes" { print $2 }'; }
one_orphan() { [ "$(orphans)" = 1 ]; }
wait_for 20 "drashift_orphaned_nodes 1" one_orphan
orphan_event() { kubectl get events -A --field-selector involvedObject.name=a-0 -o jsonpath='{.items[*].reason}' | grep -q OrphanedNode; }
wait_for 20 "the OrphanedNode Event" orphan_event
# docs/operations.md's release of a node the DRA label does not own: uncordon only a
# cordon drashift recorded as its own, then remove its annotations.
[ "$(kubectl get node a-0 -o jsonpath='{.metadata.annotations.drashift\.io/cordoned-by-drashift}')" = true ] && kubectl uncordon a-0 >/dev/null
kubectl annotate node a-0 drashift.io/plan- drashift.io/direction- drashift.io/step- drashift.io/step-since- \
	drashift.io/cordoned-by-drashift- drashift.io/legacy-devices- drashift.io/dra-devices- drashift.io/failure- drashift.io/orphaned-by- drashift.io/plan-uid- >/dev/null
no_orphan() { [ "$(orphans)" = 0 ]; }
wait_for 20 "drashift_orphaned_nodes 0" no_orphan
at_rest a-0 legacy
log "step 6: the escape hatch left a reported orphan, released by hand"

# ---- 7. delete a plan with nodes held in plugin-off, driver-off and plugin-on ----
# Nodes the simulator does not manage: the test plays their device plugin
# (status.allocatable) and their driver (a ResourceSlice), so each stays in its step.
# gpus NODE N: the device plugin advertises N devices on NODE.
gpus() {
	kubectl patch node "$1" --subresource=status --type=merge \
		-p "{\"status\":{\"capacity\":{\"example.com/gpu\":\"$2\"},\"allocatable\":{\"example.com/gpu\":\"$2\"}}}" >/dev/null
}
create_node p-0 drashift.io/pool=p drashift.io/device-plugin=true drashift.io/dra-driver=false
gpus p-0 4
create_node r-0 drashift.io/pool=r drashift.io/device-plugin=false drashift.io/dra-driver=true
create_node s-0 drashift.io/pool=s drashift.io/device-plugin=false drashift.io/dra-driver=true
kubectl create -f - >/dev/null <<'EOF_SLICE'
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: r-0-gpu}
spec:
  driver: gpu.example.com
  nodeName: r-0
  pool: {name: r-0, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
EOF_SLICE
# p-0 migrates (its allocatable stays 4: held in plugin-off); r-0 and s-0 roll
# back (r-0's slice stays: held in driver-off; s-0 advertises nothing: held in plugin-on).
apply_plan steps <<'EOF_PLAN'
  maxConcurrentPools: 3
  rollback: {pools: [r, s]}
  pools:
  - {name: p, nodeSelector: {matchLabels: {drashift.io/pool: p}}}
  - {name: r, nodeSelector: {matchLabels: {drashift.io/pool: r}}}
  - {name: s, nodeSelector: {matchLabels: {drashift.io/pool: s}}}
EOF_PLAN
wait_for 60 "p-0 in plugin-off (allocatable stays 4)" at_step p-0 plugin-off
wait_for 60 "r-0 in driver-off (its ResourceSlice stays)" at_step r-0 driver-off
wait_for 60 "s-0 in plugin-on (allocatable stays 0)" at_step s-0 plugin-on
kubectl delete mp steps --wait=false >/dev/null
# p-0: the DRA label never went on, so the release walks it back at once.
p_released() { [ -z "$(step p-0)" ]; }
wait_for 30 "p-0 walked back from plugin-off" p_released
at_rest p-0 legacy
kubectl get events -A --field-selector involvedObject.name=p-0 -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' >"$TEST_DIR/p-events"
grep -qx DRADriverOn "$TEST_DIR/p-events" && fail "the DRA label of p-0 went on during its release: $(cat "$TEST_DIR/p-events")"
# r-0 and s-0 finish their rollbacks, each waiting for what the test holds.
handover_msg() { plan_field steps "{.status.handovers[?(@.node==\"$1\")].message}"; }
waits_for() { plan_field steps '{.status.conditions[?(@.type=="Deleting")].message}' | grep -q "waits for $1 node(s)"; }
wait_for 20 "the Deleting condition to name r-0 and s-0" waits_for 2
expect_contains "$(handover_msg r-0)" "waiting for the driver's ResourceSlices for the node to go" "why r-0 is not released yet"
expect_contains "$(handover_msg s-0)" "waiting for the device plugin to advertise the extended resource" "why s-0 is not released yet"
labels() { kubectl get node "$1" -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}'; }
expect_eq "$(step r-0)/$(labels r-0)" driver-off/false/false/true "r-0 while its ResourceSlice is there"
expect_eq "$(step s-0)/$(labels s-0)" plugin-on/true/false/true "s-0 while the plugin advertises nothing"
gone steps && fail "the plan went before r-0 and s-0 were released"
gpus s-0 4
s_released() { [ -z "$(step s-0)" ]; }
wait_for 30 "s-0 released once the plugin advertises" s_released
at_rest s-0 legacy
expect_eq "$(step r-0)/$(labels r-0)" driver-off/false/false/true "r-0 while its ResourceSlice is still there"
wait_for 20 "the Deleting condition to name r-0 alone" waits_for 1
expect_eq "$(plan_field steps '{.status.handovers[*].node}')" r-0 "what deletion waits for"
kubectl delete resourceslice r-0-gpu >/dev/null
wait_for 30 "r-0 to turn the device plugin on once its slice is gone" at_step r-0 plugin-on
gone steps && fail "the plan went before r-0 was released"
gpus r-0 4
wait_for 30 "the plan to go once r-0 is back on the device plugin" gone steps
at_rest r-0 legacy
expect_no_violations
log "step 7: deleting a plan walked p-0 back from plugin-off and finished r-0 (driver-off) and s-0 (plugin-on) on the device plugin"

# ---- 8. deleting the CRD deletes the plans, each releasing its nodes first ----
plan_on_a last
kubectl delete crd migrationplans.drashift.io --wait=false >/dev/null
crd_gone() { ! kubectl get crd migrationplans.drashift.io >/dev/null 2>&1; }
wait_for 60 "the CRD to go once a-0 is released" crd_gone
at_rest a-0 legacy
expect_eq "$(pod_phase holder-a)" Running "the GPU pod on a-0 at the end"
expect_no_violations
log "step 8: deleting the CRD released a-0 before the plan went"
log "PASS"
