#!/usr/bin/env bash
# The control plane is real: a driver publishes a ResourceSlice for a node, a
# pod asks for a device through a ResourceClaimTemplate, the real
# controller-manager creates the claim, the real scheduler allocates a device
# from that node's slice and binds the pod there.
source "$(dirname "$0")/../lib.sh"
testenv_start

DRIVER=gpu.example.com
kubectl apply -f - >/dev/null <<EOF_CLASS
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "$DRIVER"
EOF_CLASS

# Two nodes; only gpu-node-1 has devices, so only it can take the pod.
create_node plain-node-1
create_node gpu-node-1
kubectl apply -f - >/dev/null <<EOF_SLICE
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: gpu-node-1-$DRIVER
spec:
  driver: $DRIVER
  nodeName: gpu-node-1
  pool:
    name: gpu-node-1
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
    attributes:
      model: {string: "A100"}
      index: {int: 0}
    capacity:
      memory: {value: 40Gi}
  - name: gpu-1
    attributes:
      model: {string: "A100"}
      index: {int: 1}
    capacity:
      memory: {value: 40Gi}
EOF_SLICE

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
EOF_WORK

log "waiting for the controller-manager to create the claim"
claim_name() { kubectl -n team-a get pod trainer -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'; }
claim_created() { [ -n "$(claim_name)" ]; }
wait_for 60 "claim created from the template" claim_created
claim=$(claim_name)
owner=$(kubectl -n team-a get resourceclaim "$claim" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')
expect_eq "$owner" "Pod/trainer" "owner of claim $claim"

log "waiting for the scheduler to allocate $claim and bind the pod"
pod_bound() { [ -n "$(kubectl -n team-a get pod trainer -o jsonpath='{.spec.nodeName}')" ]; }
wait_for 60 "pod bound to a node" pod_bound
expect_eq "$(kubectl -n team-a get pod trainer -o jsonpath='{.spec.nodeName}')" gpu-node-1 "node the pod was bound to"

alloc=$(kubectl -n team-a get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].driver}/{.status.allocation.devices.results[0].pool}')
expect_eq "$alloc" "$DRIVER/gpu-node-1" "driver/pool of the allocated device"
device=$(kubectl -n team-a get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].device}')
case $device in gpu-0 | gpu-1) ;; *) fail "allocated device '$device' is not one of the slice's devices" ;; esac
pinned=$(kubectl -n team-a get resourceclaim "$claim" -o jsonpath='{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]}')
expect_eq "$pinned" gpu-node-1 "node the allocation is pinned to"
reserved=$(kubectl -n team-a get resourceclaim "$claim" -o jsonpath='{.status.reservedFor[0].resource}/{.status.reservedFor[0].name}')
expect_eq "$reserved" pods/trainer "consumer reserved on the claim"
log "claim $claim: $device from $alloc, pod bound to gpu-node-1"
log "PASS"
