#!/usr/bin/env bash
# The fleet simulator (tools/cmd/fleetsim) against the real control plane: it
# registers Ready GPU nodes, plays their device plugin and DRA driver after the
# ownership labels, and plays kubelet for the pods the real scheduler binds
# there. Checked here: nodes Ready with the extended resource; a label flip to
# DRA drops allocatable at once (capacity later) and publishes a ResourceSlice;
# the real scheduler places a ResourceClaimTemplate pod on the DRA node and it
# runs; an extended-resource pod runs on the device-plugin node; a driver crash
# (POST /faults) keeps a deleted DRA pod Terminating and a new one in
# ContainerCreating with "DRA driver ... is not registered" until the driver is
# back; a node with both owners and a device handed out twice are counted on
# /metrics; SIGTERM writes the report with the counters.
source "$(dirname "$0")/../lib.sh"
testenv_start

FLEETSIM_PID=
cleanup() {
	local rc=$?
	set +e # under errexit, (exit "$rc") below would end the trap before testenv_cleanup stops the control plane
	if [ -n "$FLEETSIM_PID" ] && kill -0 "$FLEETSIM_PID" 2>/dev/null; then
		kill -TERM "$FLEETSIM_PID" 2>/dev/null || true
		wait "$FLEETSIM_PID" 2>/dev/null || true
	fi
	if [ "$rc" -ne 0 ] && [ -f "$TEST_DIR/fleetsim.log" ]; then
		log "last lines of the fleetsim log:"
		tail -n 30 "$TEST_DIR/fleetsim.log" >&2
	fi
	(exit "$rc")
	testenv_cleanup
}
trap cleanup EXIT

FLEETSIM=$("$TESTENV" fleetsim) || fail "cannot build the fleet simulator"
cp "$FLEETSIM" "$TEST_DIR/fleetsim"

DP=drashift.io/device-plugin
DRA=drashift.io/dra-driver
REPORT=$TEST_DIR/fleetsim-report.json
"$TEST_DIR/fleetsim" --kubeconfig "$KUBECONFIG" --pools p:2x4 \
	--capacity-lag 25s --slice-removal-delay 1s --prepare-delay 300ms --report "$REPORT" \
	>"$TEST_DIR/fleetsim.out" 2>"$TEST_DIR/fleetsim.log" &
FLEETSIM_PID=$!
fleetsim_ready() {
	kill -0 "$FLEETSIM_PID" || fail "fleetsim exited during start"
	grep -q '^ready ' "$TEST_DIR/fleetsim.out"
}
wait_for 60 "fleetsim to start" fleetsim_ready
METRICS=$(sed -n 's/^metrics //p' "$TEST_DIR/fleetsim.out")
[ -n "$METRICS" ] || fail "fleetsim printed no metrics address"
log "fleetsim running (pid $FLEETSIM_PID, $METRICS)"

metric() { curl -sf "$METRICS/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }
metric_positive() { awk -v v="$(metric "$1")" 'BEGIN { exit !(v + 0 > 0) }'; }
post_faults() { curl -sf -X POST --data "$1" "$METRICS/faults" >/dev/null || fail "POST /faults '$1' refused"; }
jp() { kubectl get "$@" 2>/dev/null; }
node_field() { jp node "$1" -o jsonpath="$2"; }
node_field_is() { [ "$(node_field "$1" "$2")" = "$3" ]; }
GPU_ALLOC='{.status.allocatable.example\.com/gpu}'
GPU_CAP='{.status.capacity.example\.com/gpu}'
slice_devices() { jp resourceslices --field-selector "spec.nodeName=$1" -o jsonpath='{.items[*].spec.devices[*].name}' | wc -w; }
slice_devices_are() { [ "$(slice_devices "$1")" -eq "$2" ]; }
pod_field() { jp -n team-a pod "$1" -o jsonpath="$2"; }
pod_running_ready() {
	[ "$(pod_field "$1" '{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}')" = Running/True ]
}
pod_gone() { ! kubectl -n team-a get pod "$1" >/dev/null 2>&1; }

log "nodes: Ready, untainted, a Lease, allocatable example.com/gpu=4 from the device plugin"
for n in p-0 p-1; do
	wait_for 30 "$n Ready" node_field_is "$n" '{.status.conditions[?(@.type=="Ready")].status}' True
	wait_for 30 "$n allocatable example.com/gpu=4" node_field_is "$n" "$GPU_ALLOC" 4
	expect_eq "$(node_field "$n" '{.spec.taints}')" "" "taints of $n"
	expect_eq "$(node_field "$n" "{.metadata.labels.drashift\.io/pool}/{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}")" \
		"p/true/false" "pool and ownership labels of $n"
	expect_eq "$(jp -n kube-node-lease lease "$n" -o jsonpath='{.spec.holderIdentity}')" "$n" "holder of the node Lease of $n"
	expect_eq "$(slice_devices "$n")" 0 "devices in ResourceSlices of $n while the device plugin owns it"
done
expect_eq "$(jp deviceclass gpu.example.com -o jsonpath='{.spec.selectors[0].cel.expression}')" 'device.driver == "gpu.example.com"' \
	"selector of the DeviceClass"

# The lag is longer than the 10 s heartbeat that carries allocatable 0, as on a real
# kubelet (5 minutes against 10 s), so capacity is still there when allocatable drops.
log "p-1 to DRA: device plugin off (allocatable 0 with the next heartbeat, capacity after the lag), then the driver on"
kubectl label node p-1 "$DP=false" --overwrite >/dev/null
wait_for 20 "allocatable of p-1 to drop to 0" node_field_is p-1 "$GPU_ALLOC" 0
expect_eq "$(node_field p-1 "$GPU_CAP")" 4 "capacity of p-1 right after the plugin stopped (capacity lag 25s)"
wait_for 60 "capacity of p-1 to drop to 0 after the lag" node_field_is p-1 "$GPU_CAP" 0
kubectl label node p-1 "$DRA=true" --overwrite >/dev/null
wait_for 30 "a ResourceSlice with 4 devices for p-1" slice_devices_are p-1 4
expect_eq "$(jp resourceslices --field-selector spec.nodeName=p-1 -o jsonpath='{.items[0].spec.driver}/{.items[0].spec.pool.name}/{.items[0].spec.pool.resourceSliceCount}')" \
	"gpu.example.com/p-1/1" "driver/pool/resourceSliceCount of the slice of p-1"
expect_eq "$(node_field p-0 "$GPU_ALLOC")" 4 "allocatable of p-0 (still on the device plugin)"

create_namespace team-a
kubectl -n team-a apply -f - >/dev/null <<'EOF_WORK'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
  containers:
  - name: main
    image: registry.invalid/trainer:1
    resources:
      claims:
      - name: gpu
---
apiVersion: v1
kind: Pod
metadata:
  name: legacy
spec:
  nodeSelector:
    kubernetes.io/hostname: p-0
  containers:
  - name: main
    image: registry.invalid/trainer:1
    resources:
      limits:
        example.com/gpu: 1
EOF_WORK

log "the DRA pod: scheduled onto p-1 by the real scheduler, prepared, Running and Ready"
wait_for 60 "pod trainer Running and Ready" pod_running_ready trainer
expect_eq "$(pod_field trainer '{.spec.nodeName}')" p-1 "node of pod trainer"
claim=$(pod_field trainer '{.status.resourceClaimStatuses[0].resourceClaimName}')
expect_eq "$(jp -n team-a resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].driver}/{.status.allocation.devices.results[0].pool}')" \
	"gpu.example.com/p-1" "allocation of claim $claim"

log "the extended-resource pod: Running on the device-plugin node p-0, not through DRA"
wait_for 60 "pod legacy Running and Ready" pod_running_ready legacy
expect_eq "$(pod_field legacy '{.spec.nodeName}')" p-0 "node of pod legacy"
expect_eq "$(pod_field legacy '{.status.extendedResourceClaimStatus}')" "" "extended-resource claim of pod legacy"
wait_for 10 "one device-plugin pod and one DRA pod counted running" \
	eval 'metric_is "fleetsim_pods_running{path=\"device-plugin\"}" 1 && metric_is "fleetsim_pods_running{path=\"dra\"}" 1'
expect_eq "$(metric fleetsim_double_ownership_total)/$(metric fleetsim_double_allocation_total)" 0/0 \
	"violation counters before any violation"

log "driver crash on p-1 (POST /faults): a deleted DRA pod stays Terminating, a new one waits in ContainerCreating"
post_faults 'node=p-1:prepare-delay=1h'
kubectl -n team-a apply -f - >/dev/null <<'EOF_WAITER'
apiVersion: v1
kind: Pod
metadata:
  name: waiter
spec:
  nodeSelector:
    kubernetes.io/hostname: p-1
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
  containers:
  - name: main
    image: registry.invalid/trainer:1
    resources:
      claims:
      - name: gpu
EOF_WAITER
waiter_preparing() { [ "$(pod_field waiter '{.spec.nodeName}/{.status.containerStatuses[0].state.waiting.reason}')" = p-1/ContainerCreating ]; }
wait_for 60 "pod waiter bound to p-1 and in ContainerCreating" waiter_preparing
post_faults 'node=p-1:driver-crash'
kubectl -n team-a delete pod trainer --wait=false >/dev/null
not_registered_event() {
	jp -n team-a events --field-selector involvedObject.name=waiter,reason=FailedPrepareDynamicResources \
		-o jsonpath='{.items[*].message}' | grep -q 'DRA driver gpu.example.com is not registered'
}
wait_for 30 "Warning FailedPrepareDynamicResources 'not registered' for pod waiter" not_registered_event
wait_for 30 "the slice of p-1 to go with its driver" slice_devices_are p-1 0
wait_for 10 "pod trainer counted stuck terminating" metric_is fleetsim_pods_stuck_terminating 1
sleep 2
expect_eq "$(pod_field trainer '{.metadata.deletionTimestamp}' | grep -c .)" 1 "pod trainer still there, Terminating, while its driver is down"
expect_eq "$(pod_field waiter '{.status.phase}')" Pending "phase of pod waiter while its driver is down"
post_faults 'node=p-1:clear'
wait_for 30 "pod trainer finalized once the driver is back" pod_gone trainer
wait_for 60 "pod waiter Running and Ready once the driver is back" pod_running_ready waiter
wait_for 30 "the slice of p-1 back" slice_devices_are p-1 4

log "both owners on p-0, then four DRA devices on top of the device-plugin pod there"
kubectl label node p-0 "$DRA=true" --overwrite >/dev/null
wait_for 30 "fleetsim_double_ownership_total > 0" metric_positive fleetsim_double_ownership_total
wait_for 30 "a ResourceSlice for p-0 as well" slice_devices_are p-0 4
expect_eq "$(metric fleetsim_double_allocation_total)" 0 "double allocations before a device is handed out twice"
kubectl -n team-a apply -f - >/dev/null <<'EOF_GREEDY'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: four-gpus
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          allocationMode: ExactCount
          count: 4
---
apiVersion: v1
kind: Pod
metadata:
  name: greedy
spec:
  nodeSelector:
    kubernetes.io/hostname: p-0
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: four-gpus
  containers:
  - name: main
    image: registry.invalid/trainer:1
    resources:
      claims:
      - name: gpu
EOF_GREEDY
wait_for 60 "fleetsim_double_allocation_total > 0 (1 device-plugin + 4 DRA devices on a 4-GPU node)" \
	metric_positive fleetsim_double_allocation_total
grep -q 'VIOLATION double-allocation: node p-0' "$TEST_DIR/fleetsim.log" || fail "no double-allocation violation for p-0 in the fleetsim log"

log "SIGTERM: clean exit and the report"
kill -TERM "$FLEETSIM_PID"
rc=0
wait "$FLEETSIM_PID" || rc=$?
FLEETSIM_PID=
expect_eq "$rc" 0 "exit status of fleetsim after SIGTERM"
[ -s "$REPORT" ] || fail "no report at $REPORT"
report_value() { sed -n "s/^ *\"$1\": \([0-9.e+-]*\),\{0,1\}$/\1/p" "$REPORT"; }
for counter in fleetsim_double_ownership_total fleetsim_double_allocation_total fleetsim_prepares_total fleetsim_unprepares_total fleetsim_pods_finalized_total; do
	v=$(report_value "$counter")
	awk -v v="$v" 'BEGIN { exit !(v != "" && v + 0 > 0) }' || fail "report: $counter is '$v', want > 0"
done
expect_eq "$(report_value fleetsim_prepares_failed_total)" 0 "report: failed prepares"
grep -q '"kind": "double-ownership"' "$REPORT" || fail "report lists no double-ownership violation"
grep -q '"kind": "double-allocation"' "$REPORT" || fail "report lists no double-allocation violation"
log "report: ownership $(report_value fleetsim_double_ownership_total), allocation $(report_value fleetsim_double_allocation_total), prepares $(report_value fleetsim_prepares_total)"
log "PASS"
