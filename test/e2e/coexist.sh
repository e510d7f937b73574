#!/usr/bin/env bash
# Extended-resource coexistence (KEP-5004) during a migration, on the real
# control plane (DRAExtendedResource: beta and on by default from 1.36) with
# the simulated fleet, whose DeviceClass gpu.example.com sets
# extendedResourceName: example.com/gpu:
#   1. one Job spec asking for example.com/gpu (4: a whole node) runs on both
#      kinds of node: through the device plugin on the legacy node, through
#      DRA on the canary, where the real scheduler makes a claim for the pod
#      (annotated resource.kubernetes.io/extended-resource-claim, owned by the
#      pod, allocated from the canary's devices) and names it in
#      pod.status.extendedResourceClaimStatus;
#   2. a rollback of the pool waits on the canary for that pod: the DRA label
#      stays while the scheduler-made claim holds the node's devices, nothing
#      is evicted or deleted; once the pod finished, the node goes back to
#      the device plugin.
# Throughout, the simulator's double-ownership and double-allocation counters stay zero.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:2x4
start_operator
create_namespace team-load

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: coexist}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 1h
EOF_PLAN
baking() { [ -n "$(plan_field coexist '{.status.pools[0].bakeStartTime}')" ]; }
wait_for 180 "the canary on DRA, baking (an hour: the pool stays half migrated)" baking
dra_node=$(kubectl get nodes -l drashift.io/dra-driver=true -o jsonpath='{.items[*].metadata.name}')
legacy_node=$(kubectl get nodes -l drashift.io/device-plugin=true -o jsonpath='{.items[*].metadata.name}')
[ "$(printf '%s\n' $dra_node $legacy_node | sort | tr '\n' ' ')" = "a-0 a-1 " ] ||
	fail "want one node per owner, got DRA '$dra_node', device plugin '$legacy_node'"
expect_eq "$(plan_field coexist '{.status.conditions[?(@.type=="ExtendedResourceOnDRA")].status}')" True \
	"the ExtendedResourceOnDRA condition"
alloc() { kubectl get node "$1" -o jsonpath='{.status.allocatable.example\.com/gpu}'; }
no_units() { [ "$(alloc "$dra_node")" = 0 ] || [ -z "$(alloc "$dra_node")" ]; }
wait_for 30 "allocatable example.com/gpu 0 on $dra_node (what sends the scheduler down the DRA path)" no_units
expect_eq "$(alloc "$legacy_node")" 4 "allocatable example.com/gpu on $legacy_node"

# ---- 1. one Job spec, both kinds of node ----
kubectl -n team-load apply -f - >/dev/null <<'EOF_JOB'
apiVersion: batch/v1
kind: Job
metadata: {name: mixed}
spec:
  parallelism: 2
  completions: 2
  backoffLimit: 0
  template:
    metadata: {annotations: {fleetsim/duration: 50s}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: registry.invalid/job, resources: {limits: {example.com/gpu: 4}}}]
EOF_JOB
job_pods() { kubectl -n team-load get pods -l job-name=mixed -o jsonpath="$1"; }
both_running() { [ "$(job_pods '{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Running)" = 2 ]; }
wait_for 90 "both pods of the Job to run" both_running
pod_on() { job_pods "{range .items[?(@.spec.nodeName==\"$1\")]}{.metadata.name}{end}"; }
dra_pod=$(pod_on "$dra_node") legacy_pod=$(pod_on "$legacy_node")
[ -n "$dra_pod" ] && [ -n "$legacy_pod" ] || fail "want one pod of the Job on each node: $(job_pods '{range .items[*]}{.metadata.name}={.spec.nodeName} {end}')"
pod() { kubectl -n team-load get pod "$1" -o jsonpath="$2"; }
expect_eq "$(pod "$legacy_pod" '{.status.extendedResourceClaimStatus}')" "" "$legacy_pod on $legacy_node: no claim, the device plugin serves it"
claim=$(pod "$dra_pod" '{.status.extendedResourceClaimStatus.resourceClaimName}')
[ -n "$claim" ] || fail "$dra_pod on $dra_node: no status.extendedResourceClaimStatus"
expect_eq "$(pod "$dra_pod" '{.status.extendedResourceClaimStatus.requestMappings[*].resourceName}')" example.com/gpu \
	"the resource $dra_pod got through DRA"
rc() { kubectl -n team-load get resourceclaim "$claim" -o jsonpath="$1"; }
expect_eq "$(rc '{.metadata.annotations.resource\.kubernetes\.io/extended-resource-claim}/{.metadata.ownerReferences[0].name}/{.status.reservedFor[0].name}')" \
	"true/$dra_pod/$dra_pod" "claim $claim: made by the scheduler for $dra_pod, reserved for it"
expect_eq "$(rc '{range .status.allocation.devices.results[*]}{.driver}/{.pool} {end}')" \
	"$(printf "gpu.example.com/$dra_node %.0s" 1 2 3 4)" "claim $claim: four devices of $dra_node"
expect_no_violations
log "step 1: the same Job spec runs on $legacy_node through the device plugin and on $dra_node through DRA ($claim)"

# ---- 2. a rollback waits for the pod of the scheduler-made claim ----
kubectl patch mp coexist --type=merge -p '{"spec":{"rollback":{"pools":["a"]}}}' >/dev/null
# The node is read before the pod: a pod still Running after a DRA label read off had it while the label was off.
seen_waiting=0
while :; do
	labels=$(kubectl get node "$dra_node" -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}/{.metadata.annotations.drashift\.io/step}')
	[ "$(pod "$dra_pod" '{.status.phase}')" = Running ] || break
	[ "${labels%%/*}" = true ] || fail "$dra_node: DRA label '${labels%%/*}' while $dra_pod holds claim $claim there"
	[ "$labels" != true/draining-dra ] || seen_waiting=1
	sleep 1
done
expect_eq "$seen_waiting" 1 "$dra_node seen at draining-dra while $dra_pod ran"
pool_legacy() { [ "$(plan_field coexist '{.status.pools[0].phase}')" = Legacy ]; }
wait_for 120 "pool a back on the device plugin" pool_legacy
expect_eq "$(pod "$dra_pod" '{.status.phase}')" Succeeded "$dra_pod ran to completion (not evicted)"
expect_eq "$(pod "$legacy_pod" '{.status.phase}')" Succeeded "$legacy_pod ran to completion"
for n in a-0 a-1; do
	expect_eq "$(kubectl get node $n -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}/{.metadata.annotations.drashift\.io/step}')" \
		"true/false//" "labels, cordon and record of $n after the rollback"
done
expect_eq "$(fleet_metric fleetsim_pods_stuck_terminating)" 0 "pods whose driver went before their claims were unprepared"
expect_no_violations
log "step 2: the rollback kept $dra_node's driver until $dra_pod finished"
