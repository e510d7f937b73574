#!/usr/bin/env bash
# A two-pool MigrationPlan end to end, on the real control plane with the
# simulated fleet, the operator running with its shipped RBAC:
#   1. pool a canaries, bakes (paused and resumed meanwhile), passes its SLO
#      gate on the claims of a small load, expands; then pool b; the plan reaches DRA;
#   2. rollback of pool b while a pod with an allocated claim runs there: the
#      node keeps its driver until the pod finishes, nothing is evicted or deleted;
#   3. pool b migrates again while the operator is killed with SIGKILL after
#      every node step and restarted: it reaches the same end state;
#   4. a second plan that claims pool a's nodes is refused for those nodes;
#   5. a plan whose canary is larger than its pool is marked Invalid and touches nothing.
# Throughout, the simulator's double-ownership and double-allocation counters stay zero.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:3x4,b:2x4
start_operator
create_namespace team-load

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: e2e}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 3}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 8s
    maxUnavailable: 1
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 1}
    bakeTime: 2s
EOF_PLAN

# ---- 1. canary, pause during the bake, resume, expand, next pool ----
canary_baking() { plan_field e2e '{.status.pools[0].message}' | grep -q baking; }
wait_for 60 "pool a's canary to bake" canary_baking
dra_load team-load a 3
kubectl patch mp e2e --type=merge -p '{"spec":{"paused":true}}' >/dev/null
paused() { [ "$(plan_field e2e '{.status.phase}')" = Paused ]; }
wait_for 20 "the plan to show Paused" paused
on_dra_paused=$(plan_field e2e '{.status.nodesOnDRA}')
sleep 10 # longer than the bake: a running plan would have expanded by now
expect_eq "$(plan_field e2e '{.status.nodesOnDRA}')" "$on_dra_paused" "nodes on DRA while paused"
expect_eq "$(plan_field e2e '{.status.conditions[?(@.type=="Paused")].status}')" True "Paused condition"
kubectl patch mp e2e --type=merge -p '{"spec":{"paused":false}}' >/dev/null
expanding() { [ "$(plan_field e2e '{.status.pools[0].phase}')" = Expanding ]; }
wait_for 60 "pool a to pass its gate and expand" expanding
signals=$(plan_field e2e '{range .status.signals[*]}{.pool} {.name} {.verdict} {.samples}{"\n"}{end}')
expect_contains "$signals" "a driverErrors Pass 3" "pool a's signals"
expect_contains "$signals" "a allocationFailurePercent Pass 3" "pool a's signals"
b_gate() { plan_field e2e '{.status.pools[1].message}' | grep -q 'waiting for the SLO gate'; }
wait_for 120 "pool b's canary to wait for its gate" b_gate
expect_contains "$(plan_field e2e '{.status.pools[1].message}')" "has 0 of 3 samples" "pool b's message while its gate waits"
dra_load team-load b 3
plan_dra() { [ "$(plan_field e2e '{.status.phase}')" = DRA ]; }
wait_for 120 "the plan to reach DRA" plan_dra
expect_eq "$(plan_field e2e '{.status.nodesOnDRA}')" 5/5 "nodes on DRA"
expect_eq "$(plan_field e2e '{.status.poolsOnDRA}')" 2/2 "pools on DRA"
for n in a-0 a-1 a-2 b-0 b-1; do
	expect_eq "$(kubectl get node $n -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}')" \
		"false/true/" "labels and cordon of $n on DRA"
done
expect_no_violations
kubectl describe mp e2e >"$TEST_DIR/describe.txt"
grep -q 'PoolPhaseChanged.*pool a: Paused -> Expanding' "$TEST_DIR/describe.txt" || fail "describe shows no phase-change Event: $(tail -20 "$TEST_DIR/describe.txt")"
log "step 1: both pools on DRA, pause held the bake"

# ---- 2. rollback of pool b while a DRA pod runs there ----
create_namespace team-b
dra_pod team-b trainer b 25s
running() { [ "$(kubectl -n team-b get pod trainer -o jsonpath='{.status.phase}')" = Running ]; }
wait_for 60 "the DRA pod to run" running
busy=$(kubectl -n team-b get pod trainer -o jsonpath='{.spec.nodeName}')
claim=$(kubectl -n team-b get pod trainer -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
kubectl patch mp e2e --type=merge -p '{"spec":{"rollback":{"pools":["b"]}}}' >/dev/null
rolling() { [ "$(plan_field e2e '{.status.pools[1].phase}')" = RollingBack ]; }
wait_for 20 "pool b to roll back" rolling
sleep 6
expect_eq "$(kubectl get node "$busy" -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}')" true "DRA label of $busy while its pod holds a claim"
expect_eq "$(kubectl -n team-b get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].driver}')" gpu.example.com "the running pod's claim allocation"
pool_b_legacy() { [ "$(plan_field e2e '{.status.pools[1].phase}')" = Legacy ]; }
wait_for 120 "pool b back on the device plugin" pool_b_legacy
expect_eq "$(kubectl -n team-b get pod trainer -o jsonpath='{.status.phase}')" Succeeded "the pod ran to completion (not evicted)"
expect_eq "$(plan_field e2e '{.status.pools[0].phase}')" DRA "pool a untouched by b's rollback"
for n in b-0 b-1; do
	expect_eq "$(kubectl get node $n -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}')" \
		"true/false/" "labels and cordon of $n after rollback"
	expect_eq "$(kubectl get node $n -o jsonpath='{.metadata.annotations.drashift\.io/step}')" "" "drashift's record on $n after rollback"
done
expect_no_violations
log "step 2: pool b rolled back after its DRA pod finished"

# ---- 3. migrate pool b again, killing the operator after every node step ----
kubectl patch mp e2e --type=merge -p '{"spec":{"rollback":{"pools":[]}}}' >/dev/null
kills=0
steps_seen() { grep -c 'msg="node step"' "$TEST_DIR/operator.log" || true; }
while [ "$(plan_field e2e '{.status.phase}')" != DRA ]; do
	before=$(steps_seen)
	# A restart forgets the SLO samples (memory only): the gate waits for new claims.
	next_step() {
		[ "$(steps_seen)" -gt "$before" ] || [ "$(plan_field e2e '{.status.phase}')" = DRA ] && return 0
		if [ "${fed:-}" != "$kills" ] && b_gate; then
			dra_load team-load b 3
			fed=$kills
		fi
		return 1
	}
	wait_for 60 "a node step" next_step
	kill -KILL "$OPERATOR_PID"
	wait "$OPERATOR_PID" 2>/dev/null || true
	kills=$((kills + 1))
	[ "$kills" -le 40 ] || fail "the plan did not converge after $kills restarts"
	for n in b-0 b-1; do
		both=$(kubectl get node $n -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}{.metadata.labels.drashift\.io/dra-driver}')
		[ "$both" != truetrue ] || fail "$n has both owners after a crash"
	done
	start_operator
done
expect_eq "$(plan_field e2e '{.status.nodesOnDRA}')" 5/5 "nodes on DRA after $kills crashes"
expect_no_violations
log "step 3: pool b back on DRA across $kills SIGKILLs"

# ---- 4. a plan that claims the same nodes is refused for them ----
kubectl apply -f - >/dev/null <<'EOF_OVERLAP'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: overlap}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  rollback: {all: true}
  pools:
  - name: same-nodes
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
EOF_OVERLAP
degraded() { plan_field overlap '{.status.conditions[?(@.type=="Degraded")].message}' | grep -q 'plan e2e'; }
wait_for 30 "the overlapping plan to report the conflict" degraded
sleep 3
for n in a-0 a-1 a-2; do
	expect_eq "$(kubectl get node $n -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}')" true "$n left alone by the overlapping plan"
done
expect_no_violations
log "step 4: the overlapping plan left pool a alone"

# ---- 5. what admission cannot know: a canary larger than its pool marks the plan Invalid ----
kubectl delete mp overlap e2e >/dev/null
kubectl apply -f - >/dev/null <<'EOF_BIG'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: too-big}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  rollback: {all: true}
  pools:
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 5}
EOF_BIG
invalid() { [ "$(plan_field too-big '{.status.phase}')" = Invalid ]; }
wait_for 30 "the plan with a canary larger than its pool to be Invalid" invalid
expect_contains "$(plan_field too-big '{.status.conditions[?(@.type=="Invalid")].message}')" "spec.pools[0].canary.nodes: 5 is more than the 2 node(s)" "Invalid condition message"
sleep 3
for n in b-0 b-1; do
	expect_eq "$(kubectl get node $n -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}')" true "$n untouched by the invalid plan"
done
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
