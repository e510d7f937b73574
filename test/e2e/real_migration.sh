#!/usr/bin/env bash
# A MigrationPlan migrates a real node (tools/testenv --real-nodes 1: the
# upstream kubelet on containerd 2.x) from a device plugin to a DRA driver
# and back, both plugins real and run as DaemonSets selected by drashift's
# ownership labels (test/lib.sh real_gpu_plugins). drashift runs as users run
# it: its image on that real node, installed with `kubectl apply -k` of
# manifests/ (test/lib.sh install_in_cluster; one replica), read through
# `kubectl logs`. The same plan holds a second pool of two fleetsim nodes
# beside the real one, migrated at the same time:
#   1. a pod holding example.com/gpu runs when the plan starts: the node is
#      cordoned and drained by waiting, the plugin label stays on until the pod
#      has finished (with the device it was given);
#   2. the kubelet drops the allocatable, then the DRA driver registers (its
#      socket in the kubelet's plugins_registry) and publishes a ResourceSlice
#      of 4 devices; the node is uncordoned on DRA;
#   3. a pod with a ResourceClaim runs through NodePrepareResources: the
#      claim's CDI device is in its container (the runtime's OCI spec, and the
#      environment the container reports when it ends), healthy in its status;
#      both pools, the real one and the simulated one, reach DRA;
#   4. a rollback of both pools while that pod runs: the pod keeps running, its
#      claim stays allocated and the driver registered until it finishes; then
#      the driver goes, the kubelet wipes its ResourceSlice, and the device
#      plugin returns; the simulated pool is back on the device plugin too.
# Throughout, a watcher samples the kubelet's own folders: the device plugin's
# socket and the driver's registration socket are never there together. The
# kubelet's device-plugin checkpoint is checked at each end, and fleetsim
# counts no double ownership or allocation on its nodes. The kubelet's own
# delays (plugin gone to allocatable 0, driver gone to its slice wiped) are
# logged with the kubelet's version (docs/dra-facts.md quotes them).
source "$(dirname "$0")/../lib.sh"
source "$DRASHIFT_ROOT/tools/lib/common.sh"
: "${DRASHIFT_CONTROLLER:?DRASHIFT_CONTROLLER names the built drashift-controller}"
testenv_start --real-nodes 1
NODE=real-node-1
KUBELET_DIR=$TEST_DIR/cluster/nodes/$NODE/kubelet
CDI_DIR=$TEST_DIR/cluster/nodes/$NODE/cdi
DP_SOCKET=$KUBELET_DIR/device-plugins/gpuplugin.sock
DRA_SOCKET=$KUBELET_DIR/plugins_registry/gpu.example.com-reg.sock
CHECKPOINT=$KUBELET_DIR/device-plugins/kubelet_internal_checkpoint

install_in_cluster '{op: replace, path: /spec/replicas, value: 1}'
crd_established
in_cluster_rolled_out
real_gpu_plugins
kubectl label node $NODE drashift.io/pool=real drashift.io/device-plugin=true drashift.io/dra-driver=false >/dev/null
# Two simulated nodes, sim-0 and sim-1, on the device plugin; the DaemonSets
# above are the ones preflight finds (fleetsim's own are left out).
start_fleet --pools sim:2x4 --daemonset-namespace=
KUBELET_VERSION=$(kubectl get node $NODE -o jsonpath='{.status.nodeInfo.kubeletVersion}')
gpus() { kubectl get node $NODE -o jsonpath="{.status.$1.example\.com/gpu}"; }
allocatable_is() { [ "$(gpus allocatable)" = "$1" ]; }
wait_for 120 "the kubelet to advertise 4 example.com/gpu" allocatable_is 4

# The kubelet's view, every half second: which plugin sockets it has, and
# any moment it has both.
watch_owners() {
	local dp dra last=
	while :; do
		dp=- dra=-
		[ -S "$DP_SOCKET" ] && dp=device-plugin
		[ -S "$DRA_SOCKET" ] && dra=dra-driver
		if [ "$dp $dra" != "$last" ]; then
			echo "$(date +%T.%N | cut -c1-12) $dp $dra" >>"$TEST_DIR/owners.log"
			last="$dp $dra"
		fi
		[ "$dp" = - ] || [ "$dra" = - ] || echo "$(date +%T) both sockets" >>"$TEST_DIR/both-owners.log"
		sleep 0.5
	done
}
watch_owners &
create_namespace work
operator_log() { kubectl -n drashift-system logs deployment/drashift-controller --tail=-1; }
# seconds_between FROM TO: seconds, to a tenth, between two $EPOCHREALTIMEs.
seconds_between() { awk -v from="$1" -v to="$2" 'BEGIN { printf "%.1f", to - from }'; }

# gpu_job NAME DURATION RESOURCES CLAIMS: a pod on the node running gpujob.
gpu_job() {
	kubectl -n work create -f - >/dev/null <<EOF_POD
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeSelector: {kubernetes.io/hostname: $NODE}
  restartPolicy: Never
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 5
  resourceClaims: $4
  containers:
  - name: main
    image: example.com/gpujob:testenv
    imagePullPolicy: Never
    args: [--duration=$2]
    resources: $3
EOF_POD
}
phase() { kubectl -n work get pod "$1" -o jsonpath='{.status.phase}'; }
phase_is() { [ "$(phase "$1")" = "$2" ]; }
reported() { kubectl -n work get pod "$1" -o jsonpath='{.status.containerStatuses[0].state.terminated.message}'; }
owner_labels() { kubectl get node $NODE -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}'; }
labels_are() { [ "$(owner_labels)" = "$1" ]; }
step() { kubectl get node $NODE -o jsonpath='{.metadata.annotations.drashift\.io/step}'; }
step_is() { [ "$(step)" = "$1" ]; }
# pool_phase_is POOL PHASE
pool_phase() { plan_field mixed "{.status.pools[?(@.name==\"$1\")].phase}"; }
pool_phase_is() { [ "$(pool_phase "$1")" = "$2" ]; }
sim_labels() { kubectl get nodes -l drashift.io/pool=sim -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable} {end}'; }
slices() { kubectl get resourceslices --field-selector "spec.nodeName=$NODE,spec.driver=gpu.example.com" -o json; }
slice_devices() { slices | jq '[.items[].spec.devices | length] | add // 0'; }
slices_gone() { [ "$(slices | jq '.items | length')" -eq 0 ]; }

# ---- 1. a pod holds example.com/gpu when the plan starts ----
gpu_job dp-user 40s '{limits: {example.com/gpu: 1}}' '[]'
wait_for 120 "the pod holding example.com/gpu to run" phase_is dp-user Running
uid=$(kubectl -n work get pod dp-user -o jsonpath='{.metadata.uid}')
jq -e --arg uid "$uid" '[.Data.PodDeviceEntries[] | select(.PodUID == $uid and .ResourceName == "example.com/gpu")] | length == 1' \
	"$CHECKPOINT" >/dev/null || fail "the kubelet's checkpoint does not record the pod's device: $(cat "$CHECKPOINT")"
kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: mixed}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 1}
  maxConcurrentPools: 2
  pools:
  - name: real
    nodeSelector: {matchLabels: {drashift.io/pool: real}}
    canary: {nodes: 1}
    bakeTime: 5s
  - name: sim
    nodeSelector: {matchLabels: {drashift.io/pool: sim}}
    canary: {nodes: 1}
    bakeTime: 5s
EOF_PLAN
wait_for 60 "drashift to cordon the node and drain it by waiting" step_is draining
expect_eq "$(owner_labels)" true/false/true "labels and cordon while the pod runs"
sleep 5
expect_eq "$(step)" draining "the node's step while the pod holding a device runs"
expect_eq "$(phase dp-user)" Running "the device-plugin pod while the node drains (not evicted)"
wait_for 120 "the device-plugin pod to finish" phase_is dp-user Succeeded
expect_contains "$(reported dp-user)" GPU_DEVICES=gpu- "the device the device plugin gave the pod"
log "step 1: drained by waiting; the pod reported $(reported dp-user)"
# The simulated pool's gate judges the claims of a small load on its canary.
sim_baking() { [ -n "$(plan_field mixed '{.status.pools[?(@.name=="sim")].bakeStartTime}')" ]; }
wait_for 60 "the simulated pool's canary to bake" sim_baking
dra_load work sim 2

# ---- 2. the kubelet drops the allocatable; the DRA driver registers and publishes ----
# The kubelet's delay: when the plugin's pod is gone from the API and its
# socket from the kubelet's folder, and when the Node shows allocatable 0,
# each seen first by one polling loop.
plugin_pods() { kubectl -n gpu-system get pods -l app=gpu-device-plugin -o name; }
t_pod= t_socket= t_zero=
plugin_gone_allocatable_0() {
	[ -n "$t_pod" ] || [ -n "$(plugin_pods)" ] || t_pod=$EPOCHREALTIME
	[ -n "$t_socket" ] || [ -S "$DP_SOCKET" ] || t_socket=$EPOCHREALTIME
	[ -n "$t_zero" ] || ! allocatable_is 0 || t_zero=$EPOCHREALTIME
	[ -n "$t_pod" ] && [ -n "$t_socket" ] && [ -n "$t_zero" ]
}
wait_for 120 "the device plugin's pod to go and the kubelet to drop the allocatable" plugin_gone_allocatable_0
capacity_after=$(gpus capacity)
log "measured on kubelet $KUBELET_VERSION: allocatable 0 $(seconds_between "$t_pod" "$t_zero") s after the device plugin's pod" \
	"was gone from the API, $(seconds_between "$t_socket" "$t_zero") s after its socket left device-plugins/; capacity then: $capacity_after"
wait_for 120 "the DRA driver to register with the kubelet" test -S "$DRA_SOCKET"
four_devices() { [ "$(slice_devices)" -eq 4 ]; }
wait_for 60 "the driver's ResourceSlice with 4 devices" four_devices
expect_eq "$(slices | jq -r '.items[0].spec.pool.name')" $NODE "the slice's pool"
wait_for 120 "the node on DRA, uncordoned" labels_are false/true/
[ -S "$DP_SOCKET" ] && fail "the device plugin's socket is still in the kubelet's folder on DRA"
expect_eq "$(gpus allocatable)" 0 "allocatable on DRA"
log "step 2: on DRA; capacity $(gpus capacity) (stale), allocatable 0; kubelet checkpoint: $(jq -c .Data "$CHECKPOINT")"

# ---- 3. a pod with a ResourceClaim, through NodePrepareResources, with its CDI device ----
gpu_template work one-gpu
gpu_job trainer 75s '{claims: [{name: gpu}]}' '[{name: gpu, resourceClaimTemplateName: one-gpu}]'
wait_for 120 "the pod with a claim to run" phase_is trainer Running
claim=$(kubectl -n work get pod trainer -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
claim_uid=$(kubectl -n work get resourceclaim "$claim" -o jsonpath='{.metadata.uid}')
allocation() { kubectl -n work get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].driver}/{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}'; }
device=$(allocation)
device=${device##*/}
expect_eq "$(allocation)" "gpu.example.com/$NODE/$device" "the claim's allocation"
[ -f "$CDI_DIR/gpu.example.com-$claim_uid.json" ] || fail "no CDI spec for the claim in the node's CDI folder: $(ls "$CDI_DIR")"
grep -q "$claim_uid" "$KUBELET_DIR/dra_manager_state" || fail "the kubelet's DRA checkpoint does not hold the prepared claim"
expect_contains "$(kubectl -n gpu-system logs -l app=gpu-dra-driver --tail=-1)" "prepared claim work/$claim" "the driver's log"
container=$(kubectl -n work get pod trainer -o jsonpath='{.status.containerStatuses[0].containerID}')
env=$(ctr --address "$TEST_DIR/cluster/nodes/$NODE/containerd.sock" -n k8s.io containers info "${container#containerd://}" | jq -r '.Spec.process.env[]')
variable=GPU_DEVICE_${device^^}
expect_contains "$env" "${variable//-/_}=$device" "the container's environment (the runtime's OCI spec)"
expect_contains "$env" "DRA_CLAIM_UID=$claim_uid" "the container's environment (the runtime's OCI spec)"
trainer_uid=$(kubectl -n work get pod trainer -o jsonpath='{.metadata.uid}')
jq -e --arg uid "$trainer_uid" '[.Data.PodDeviceEntries[] | select(.PodUID == $uid)] | length == 0' "$CHECKPOINT" >/dev/null ||
	fail "the device manager gave the DRA pod devices: $(jq -c .Data "$CHECKPOINT")"
wait_for 120 "the real pool to pass its gate and reach DRA" pool_phase_is real DRA
wait_for 120 "the simulated pool to reach DRA" pool_phase_is sim DRA
plan_on_dra() { [ "$(plan_field mixed '{.status.phase}')" = DRA ]; }
wait_for 30 "the plan on DRA" plan_on_dra
expect_eq "$(plan_field mixed '{.status.nodesOnDRA}')" 3/3 "nodes on DRA"
expect_eq "$(sim_labels)" "sim-0=false/true/ sim-1=false/true/ " "the simulated nodes' labels and cordon on DRA"
# The driver reports its devices healthy (DRAResourceHealth); the kubelet
# puts that in the container's status under the CDI device's ID.
healthy() { kubectl -n work get pod trainer -o jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus}' |
	jq -e --arg id "gpu.example.com/gpu=$claim_uid-$device" '.[] | select(.name == "claim:gpu") | .resources[] | select(.resourceID == $id and .health == "Healthy")'; }
wait_for 60 "the kubelet to report the claim's device healthy" healthy
log "step 3: claim $claim prepared ($device), CDI device in the container; both pools on DRA"

# ---- 4. rollback while the pod holds its claim ----
kubectl patch mp mixed --type=merge -p '{"spec":{"rollback":{"pools":["real","sim"]}}}' >/dev/null
wait_for 30 "the real pool to roll back" pool_phase_is real RollingBack
sleep 8
expect_eq "$(phase trainer)" Running "the pod with a claim during the rollback"
expect_eq "$(owner_labels)" false/true/true "labels and cordon while the pod holds its claim"
expect_eq "$(allocation)" "gpu.example.com/$NODE/$device" "the running pod's claim allocation"
[ -S "$DRA_SOCKET" ] || fail "the DRA driver unregistered while a pod holds its claim"
wait_for 120 "the pod with a claim to finish" phase_is trainer Succeeded
expect_contains "$(reported trainer)" "DRA_CLAIM_UID=$claim_uid" "the environment the pod reported"
t0=$SECONDS
wait_for 60 "the driver's label off" labels_are false/false/true
wait_for 60 "the DRA driver to unregister from the kubelet" test ! -S "$DRA_SOCKET"
t_unregistered=$EPOCHREALTIME
wait_for 120 "the kubelet to wipe the driver's ResourceSlice" slices_gone
log "measured on kubelet $KUBELET_VERSION: the slice was wiped $(seconds_between "$t_unregistered" "$EPOCHREALTIME") s" \
	"after the driver's socket left plugins_registry/"
[ -f "$CDI_DIR/gpu.example.com-$claim_uid.json" ] && fail "the claim's CDI spec is still there after the pod finished"
wait_for 120 "the device plugin to return" allocatable_is 4
wait_for 60 "the node back on the device plugin, uncordoned" labels_are true/false/
wait_for 60 "the real pool back on the device plugin" pool_phase_is real Legacy
expect_eq "$(step)" "" "drashift's record on the node after the rollback"
jq -e '.Data.RegisteredDevices["example.com/gpu"] | length == 4' "$CHECKPOINT" >/dev/null ||
	fail "the kubelet's checkpoint does not hold the device plugin's 4 devices: $(jq -c .Data "$CHECKPOINT")"
log "step 4: rolled back $((SECONDS - t0)) s after the pod finished; kubelet checkpoint: $(jq -c .Data "$CHECKPOINT")"
wait_for 60 "the simulated pool back on the device plugin" pool_phase_is sim Legacy
expect_eq "$(sim_labels)" "sim-0=true/false/ sim-1=true/false/ " "the simulated nodes' labels and cordon after the rollback"
expect_no_violations

# The migration was the in-cluster replica's work, through and back, on both kinds of node.
expect_eq "$(kubectl -n drashift-system get pods -l app.kubernetes.io/name=drashift -o jsonpath='{range .items[*]}{.spec.nodeName}/{.status.containerStatuses[0].restartCount} {end}')" \
	"$NODE/0 " "the drashift pods (node/restarts)"
steps=$(operator_log | grep 'msg="node step" plan=mixed ')
for n in $NODE sim-0 sim-1; do
	expect_contains "$steps" "node=$n from=verified to=dra " "the in-cluster drashift's log (kubectl logs)"
	expect_contains "$steps" "node=$n from=verified-legacy to=legacy " "the in-cluster drashift's log (kubectl logs)"
done

[ ! -s "$TEST_DIR/both-owners.log" ] || fail "the kubelet had both plugins' sockets: $(head -5 "$TEST_DIR/both-owners.log")"
log "the kubelet's plugin sockets over the test: $(tr '\n' ';' <"$TEST_DIR/owners.log")"
