#!/usr/bin/env bash
# A real device plugin (tools/cmd/gpuplugin, speaking the kubelet's
# deviceplugin/v1beta1 API) on a real node, as a DaemonSet selected by
# drashift's device-plugin ownership label: with the label on, the kubelet
# advertises example.com/gpu and a pod gets a device (the kubelet's
# checkpoint records it); with the label off the plugin goes, the kubelet
# drops the allocatable to 0 and the running pod keeps its device; with the
# label on again the devices return.
source "$(dirname "$0")/../lib.sh"
source "$DRASHIFT_ROOT/tools/lib/common.sh"
testenv_start --real-nodes 1
NODE=real-node-1
NODE_DIR=$TEST_DIR/cluster/nodes/$NODE

real_gpu_plugins
gpus() { kubectl get node $NODE -o jsonpath="{.status.$1.example\.com/gpu}"; }
allocatable_is() { [ "$(gpus allocatable)" = "$1" ]; }
plugin_pods() { kubectl -n gpu-system get pods -l app=gpu-device-plugin -o name | wc -l; }

kubectl label node $NODE drashift.io/device-plugin=true >/dev/null
wait_for 120 "the kubelet to advertise 4 example.com/gpu" allocatable_is 4
log "device-plugin label on: capacity $(gpus capacity), allocatable $(gpus allocatable)"

create_namespace work
kubectl -n work create -f - >/dev/null <<EOF_POD
apiVersion: v1
kind: Pod
metadata: {name: gpu-user}
spec:
  nodeSelector: {kubernetes.io/hostname: $NODE}
  automountServiceAccountToken: false
  containers:
  - name: main
    image: registry.k8s.io/pause:testenv
    imagePullPolicy: Never
    resources: {limits: {example.com/gpu: 1}}
EOF_POD
running() { [ "$(kubectl -n work get pod gpu-user -o jsonpath='{.status.phase}')" = Running ]; }
wait_for 120 "the pod holding example.com/gpu to run" running
uid=$(kubectl -n work get pod gpu-user -o jsonpath='{.metadata.uid}')
checkpoint=$NODE_DIR/kubelet/device-plugins/kubelet_internal_checkpoint
jq -e --arg uid "$uid" '[.Data.PodDeviceEntries[] | select(.PodUID == $uid and .ResourceName == "example.com/gpu")] | length == 1' \
	"$checkpoint" >/dev/null || fail "the kubelet's checkpoint does not record the pod's device: $(cat "$checkpoint")"

kubectl label node $NODE drashift.io/device-plugin=false --overwrite >/dev/null
no_plugin() { [ "$(plugin_pods)" -eq 0 ]; }
wait_for 60 "the DaemonSet to remove the plugin" no_plugin
wait_for 120 "the kubelet to drop the allocatable" allocatable_is 0
log "device-plugin label off: capacity $(gpus capacity), allocatable $(gpus allocatable)"
running || fail "the pod holding a device stopped when the plugin went"
jq -e --arg uid "$uid" '[.Data.PodDeviceEntries[] | select(.PodUID == $uid)] | length == 1' "$checkpoint" >/dev/null ||
	fail "the kubelet's checkpoint lost the running pod's device when the plugin went"

kubectl label node $NODE drashift.io/device-plugin=true --overwrite >/dev/null
wait_for 120 "the devices to return" allocatable_is 4
log "device-plugin label on again: capacity $(gpus capacity), allocatable $(gpus allocatable)"
