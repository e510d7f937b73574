#!/usr/bin/env bash
# tools/testenv up --real-nodes 1 runs a real kubelet on containerd and runc:
# the node registers Ready with the pinned kubelet and containerd versions, a pod with its own
# network namespace and a hostNetwork pod run on it from the locally built
# pause image, the first reaches the apiserver through the proxy address,
# and `down` leaves no process, address or bridge behind.
source "$(dirname "$0")/../lib.sh"
testenv_start --real-nodes 1
NODE=real-node-1
run=$TEST_DIR/cluster/run

expect_eq "$(kubectl get node $NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" True "node Ready"
expect_eq "$(kubectl get node $NODE -o jsonpath='{.status.nodeInfo.kubeletVersion}')" \
	"$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$DRASHIFT_ROOT/tools/go.mod")" "kubelet version"
expect_eq "$(kubectl get node $NODE -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')" \
	"containerd://$(awk '$1 == "github.com/containerd/containerd/v2" { sub(/^v/, "", $2); print $2; exit }' "$DRASHIFT_ROOT/tools/containerd/go.mod")" \
	"runtime (the containerd built from tools/containerd, which has CDI)"
node_ip=$(cat "$run/$NODE.ip")
expect_eq "$(kubectl get node $NODE -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')" "$node_ip" "node address"

# The kubelet's device-plugin socket is the node's own, not the host's.
[ -S "$TEST_DIR/cluster/nodes/$NODE/kubelet/device-plugins/kubelet.sock" ] || fail "no device-plugin socket in the node's own folder"

create_namespace real
kubectl -n real create -f - >/dev/null <<EOF_PODS
apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  nodeName: $NODE
  hostNetwork: true
  automountServiceAccountToken: false
  containers: [{name: pause, image: registry.k8s.io/pause:testenv, imagePullPolicy: Never}]
---
apiVersion: v1
kind: Pod
metadata: {name: bridged}
spec:
  nodeSelector: {kubernetes.io/hostname: $NODE}
  containers: [{name: pause, image: registry.k8s.io/pause:testenv, imagePullPolicy: Never}]
EOF_PODS
running() { [ "$(kubectl -n real get pod "$1" -o jsonpath='{.status.phase}')" = Running ]; }
wait_for 120 "the hostNetwork pod Running" running host
wait_for 120 "the bridged pod Running" running bridged
expect_eq "$(kubectl -n real get pod host -o jsonpath='{.status.podIP}')" "$node_ip" "hostNetwork pod's IP"
pod_ip=$(kubectl -n real get pod bridged -o jsonpath='{.status.podIP}')
[ -n "$pod_ip" ] && [ "$pod_ip" != "$node_ip" ] || fail "the bridged pod has no IP of its own: '$pod_ip'"
# From the bridged pod's network namespace, with the ServiceAccount token and
# CA the kubelet projected into it, the apiserver answers through the proxy.
ctr_node() { ctr --address "$TEST_DIR/cluster/nodes/$NODE/containerd.sock" -n k8s.io "$@"; }
sandbox_pid() {
	local id
	for id in $(ctr_node tasks ls -q); do
		if [ "$(ctr_node containers info "$id" | jq -r '.Labels["io.kubernetes.pod.name"] + "/" + .Labels["io.cri-containerd.kind"]')" = "$1/sandbox" ]; then
			ctr_node tasks ls | awk -v id="$id" '$1 == id { print $2 }'
			return
		fi
	done
}
pid=$(sandbox_pid bridged)
[ -n "$pid" ] || fail "no sandbox task for the bridged pod"
uid=$(kubectl -n real get pod bridged -o jsonpath='{.metadata.uid}')
# The kubelet mounted the volume in the node's mount namespace, where its
# root dir is /var/lib/kubelet.
in_node() { nsenter --mount="/proc/$(cat "$run/$NODE-mounts.pid")/ns/mnt" "$@"; }
token_dir=$(in_node find "/var/lib/kubelet/pods/$uid/volumes" -maxdepth 2 -type d -name 'kube-api-access-*' | head -n 1)
in_node test -s "$token_dir/token" && in_node test -s "$token_dir/ca.crt" ||
	fail "no projected ServiceAccount token and CA in '$token_dir'"
proxy=$(cat "$run/apiserver-proxy.address")
status=$(in_node nsenter --net="/proc/$pid/ns/net" curl -s -m 10 -o /dev/null -w '%{http_code}' --cacert "$token_dir/ca.crt" \
	-H "Authorization: Bearer $(in_node cat "$token_dir/token")" --resolve "kubernetes.default.svc:${proxy#*:}:${proxy%:*}" \
	"https://kubernetes.default.svc:${proxy#*:}/api/v1/namespaces/real/pods" || true)
expect_eq "$status" 403 "the pod's own token from its network namespace through the apiserver proxy (authenticated, not allowed to list pods)"
log "node $NODE Ready at $node_ip; pods Running (hostNetwork at $node_ip, bridged at $pod_ip); apiserver proxy $proxy"

# Deleting a pod stops its containers on the node.
tasks() { ctr_node tasks ls -q | wc -l; }
before=$(tasks)
kubectl -n real delete pod host --wait=true --timeout=60s >/dev/null
gone() { [ "$(tasks)" -lt "$before" ]; }
wait_for 60 "the deleted pod's containers to stop" gone

"$TESTENV" down "$TEST_DIR/cluster"
for f in "$run"/*.pid; do [ -e "$f" ] && fail "$(basename "$f" .pid) still recorded running after down"; done
leftover=$(pgrep -f -- "$TEST_DIR/cluster" || true)
[ -z "$leftover" ] || fail "processes left after down: $(ps -o pid=,args= -p "${leftover//$'\n'/,}")"
ip -o addr show dev lo | grep -qF " $node_ip/" && fail "node address $node_ip left on lo"
ip link show "$(cat "$run/$NODE.bridge")" >/dev/null 2>&1 && fail "bridge $(cat "$run/$NODE.bridge") left behind"
log "down left no process, address or bridge"
