# Real nodes for tools/testenv (`up DIR --real-nodes N`): each is a kubelet
# (tools/cmd/kcp) on containerd 2.x (containerd_binary: built from the Go
# module) and Debian's runc, registered with the control plane in DIR. Sourced by tools/testenv; uses its DIR, say/die,
# free_port, launch, stop_component and kubectl in DIR/bin.
#
# What this machine needs, found the hard way:
# - The kubelet refuses a loopback node IP, and two nodes on one host need
#   two addresses (hostNetwork pods take the node's IP): each node gets its
#   own /32 from 198.18.0.0/15 (RFC 2544, never routed) on lo, removed by
#   `down`.
# - cgroup v1 here: the kubelet runs with failCgroupV1: false.
# - This kernel refuses a negative oom_score_adj, so containerd runs with
#   restrict_oom_score_adj (else every sandbox fails in runc with "can't get
#   final child's PID from pipe: EOF") and the kubelet with oomScoreAdj 0.
# - No kube-proxy, so the kubernetes Service IP does not route. Pods get
#   their own network namespace on the node's bridge (CNI bridge +
#   host-local), and reach the apiserver through socat listening on one more
#   /32 on lo (DIR/run/apiserver-proxy.address, IP:PORT): a pod sets
#   KUBERNETES_SERVICE_HOST=kubernetes.default.svc (a name the apiserver's
#   certificate holds), KUBERNETES_SERVICE_PORT=PORT and a hostAlias of that
#   name to IP. hostNetwork pods may use 127.0.0.1:PORT instead.
# - Two kubelets on one host: cgroupsPerQOS is off (no shared /kubepods),
#   and every directory (root dir, pod logs, CNI state, runc state) is the
#   node's own under DIR/nodes/NAME. The kubelet's device manager ignores
#   --root-dir (its socket is always /var/lib/kubelet/device-plugins/
#   kubelet.sock, and it empties that folder when it starts), so each node's
#   containerd and kubelet run in a mount namespace of their own (held by
#   NAME-mounts) where DIR/nodes/NAME/kubelet is bind-mounted on
#   /var/lib/kubelet, the kubelet's root dir. Plugin DaemonSets (device
#   plugins, DRA drivers) mount the usual hostPaths. Mounts the kubelet makes
#   (pod volumes) live in that namespace: read them with
#   `nsenter --mount=/proc/$(cat DIR/run/NAME-mounts.pid)/ns/mnt`. So do the
#   pods' network namespace files (/var/run/netns, a tmpfs there): none is
#   left on the host when a node stops without tearing its pods down.
# - Debian's containerd is 1.6, which has no CDI support (enable_cdi came
#   with 1.7; 2.x has it always on), hence containerd 2.x built here, with its
#   own runc shim (runtime_path) and ctr (DIR/bin/ctr). It reads CDI specs
#   from /var/run/cdi, which in the node's mount namespace is
#   DIR/nodes/NAME/cdi, so a DRA driver's DaemonSet mounts the usual hostPath.
# Images come from OCI archives imported with `ctr -n k8s.io images import`;
# the sandbox image is tools/cmd/pause, built here. Nothing is pulled.

REALNODE_PAUSE_IMAGE=registry.k8s.io/pause:testenv

realnode_names() { cat "$DIR/run/real-nodes" 2>/dev/null || true; }

realnode_ctr() {
	local name=$1; shift
	"$DIR/bin/ctr" --address "$DIR/nodes/$name/containerd.sock" --namespace k8s.io "$@"
}

realnode_pause_archive() { go_tool_image pause "$REALNODE_PAUSE_IMAGE" 65535:65535; }

# An address on lo for the node, not yet used on this host.
realnode_pick_ip() {
	local ip
	while :; do
		ip=198.$((18 + RANDOM % 2)).$((RANDOM % 256)).$((1 + RANDOM % 254))
		ip -o addr show | grep -qF " $ip/" || { printf '%s\n' "$ip"; return; }
	done
}

configure_realnode() {
	local name=$1 node=$DIR/nodes/$1 ip kubelet_port healthz_port
	mkdir -p "$node"/{containerd,kubelet,pod-logs,cni/net.d,cni/state,runc,pki,cdi} /var/lib/kubelet /var/run/netns /var/run/cdi
	ln -sfn "$(command -v unshare)" "$DIR/bin/$name-mounts"
	save_args "$name-mounts" --mount --propagation private bash -c \
		'mount --bind "$1" /var/lib/kubelet && mount --bind "$2" /var/run/cdi &&
			mount -t tmpfs -o mode=0755 netns /var/run/netns && exec -a "$3" sleep infinity' \
		bash "$node/kubelet" "$node/cdi" "$node/mount-namespace"
	launch "$name-mounts"
	local pid i
	pid=$(cat "$DIR/run/$name-mounts.pid")
	for i in $(seq 100); do # until the bind mount is made (the holder then sleeps)
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "^$node/mount-namespace" && break
		kill -0 "$pid" 2>/dev/null || die "the mount namespace of $name did not start; log: $DIR/logs/$name-mounts.log"
		sleep 0.1
	done
	local ns=/proc/$pid/ns/mnt
	echo "$(command -v nsenter)" >"$DIR/run/$name-containerd.exe"
	echo "$(command -v nsenter)" >"$DIR/run/$name-kubelet.exe"
	ip=$(realnode_pick_ip)
	echo "$ip" >"$DIR/run/$name.ip"
	ip addr add "$ip/32" dev lo || die "cannot add the node address $ip to lo (needs CAP_NET_ADMIN)"

	# containerd 2.x: configuration version 3, where the CRI plugin is split
	# into its images and runtime parts; CDI is always on (enable_cdi is gone).
	cat >"$node/containerd/config.toml" <<TOML
version = 3
root = "$node/containerd/root"
state = "$node/containerd/state"
[grpc]
  address = "$node/containerd.sock"
[ttrpc]
  address = "$node/containerd.sock.ttrpc"
[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "$REALNODE_PAUSE_IMAGE"
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  disable_apparmor = true
  cdi_spec_dirs = ["/var/run/cdi"]
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "$DIR/bin/containerd-shim-runc-v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$node/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$node/cni/net.d"
TOML
	# Pods with their own network namespace get one on the node's bridge;
	# the bridge is created only when such a pod starts.
	local index=${name##*-} bridge subnet
	bridge=tenv$index-$(printf '%s' "$DIR" | sha256sum | cut -c1-6)
	echo "$bridge" >"$DIR/run/$name.bridge"
	while :; do
		subnet=10.$((200 + index)).$((RANDOM % 256))
		ip route | grep -q "^$subnet\\." || break
	done
	cat >"$node/cni/net.d/10-bridge.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "testenv-$index",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "dataDir": "$node/cni/state", "ranges": [[{"subnet": "$subnet.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "loopback"}
  ]
}
CNI
	save_args "$name-containerd" --mount="$ns" -- "$DIR/bin/containerd" --config "$node/containerd/config.toml" --log-level warn

	# The kubelet's client certificate: user system:node:NAME in system:nodes.
	(
		cd "$node/pki"
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-subj "/O=system:nodes/CN=system:node:$name" -keyout kubelet.key -out kubelet.csr 2>/dev/null
		openssl x509 -req -in kubelet.csr -CA "$DIR/pki/ca.crt" -CAkey "$DIR/pki/ca.key" -CAcreateserial \
			-CAserial "$node/pki/ca.srl" -days 3650 -extfile <(printf 'extendedKeyUsage=clientAuth\n') \
			-out kubelet.crt 2>/dev/null
		rm -f kubelet.csr ca.srl
		chmod 600 kubelet.key
	)
	cat >"$node/kubelet.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster: {server: "https://127.0.0.1:$(cat "$DIR/run/apiserver.port")", certificate-authority: "$DIR/pki/ca.crt"}
users:
- name: $name
  user: {client-certificate: "$node/pki/kubelet.crt", client-key: "$node/pki/kubelet.key"}
contexts:
- name: testenv
  context: {cluster: testenv, user: $name}
current-context: testenv
KUBECONFIG
	kubelet_port=$(free_port) healthz_port=$(free_port)
	echo "$healthz_port" >"$DIR/run/$name-kubelet.healthz-port"
	cat >"$node/kubelet.yaml" <<KUBELET
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
oomScoreAdj: 0
address: $ip
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
containerRuntimeEndpoint: unix://$node/containerd.sock
podLogsDir: $node/pod-logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$DIR/pki/ca.crt"}
authorization: {mode: AlwaysAllow}
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
nodeStatusReportFrequency: 10s
syncFrequency: 10s
fileCheckFrequency: 10s
KUBELET
	save_args "$name-kubelet" --mount="$ns" -- "$DIR/bin/kubelet" \
		--config="$node/kubelet.yaml" --kubeconfig="$node/kubelet.kubeconfig" \
		--root-dir=/var/lib/kubelet --hostname-override="$name" --node-ip="$ip" \
		--node-labels=testenv.drashift.io/real-node=true --v=2
}

realnode_ready() {
	[ "$("$DIR/bin/kubectl" --kubeconfig "$DIR/kubeconfig" get node "$1" \
		-o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# Start node NAME: containerd, its images, the kubelet; wait until the Node is
# Ready. No node-lifecycle controller runs (simulated nodes send no
# heartbeats), so the not-ready taint the API put on the new Node is lifted
# here, as that controller would.
start_realnode() {
	local name=$1 deadline
	launch "$name-containerd"
	wait_healthy "$name-containerd" || die "containerd of $name did not start; log: $DIR/logs/$name-containerd.log"
	realnode_ctr "$name" images import "$(realnode_pause_archive)" >/dev/null ||
		die "cannot import the pause image into $name"
	launch "$name-kubelet"
	wait_healthy "$name-kubelet" || { tail -n 20 "$DIR/logs/$name-kubelet.log" >&2; die "the kubelet of $name did not start; log: $DIR/logs/$name-kubelet.log"; }
	deadline=$((SECONDS + ${TESTENV_START_TIMEOUT:-120}))
	until realnode_ready "$name"; do
		[ $SECONDS -lt $deadline ] || { tail -n 20 "$DIR/logs/$name-kubelet.log" >&2; die "node $name not Ready; log: $DIR/logs/$name-kubelet.log"; }
		sleep 0.5
	done
	"$DIR/bin/kubectl" --kubeconfig "$DIR/kubeconfig" taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}

# The apiserver for pods on the bridge: socat from IP:PORT on lo to the
# apiserver's 127.0.0.1:PORT (TLS passes through untouched).
configure_apiserver_proxy() {
	local ip port
	ip=$(realnode_pick_ip) port=$(cat "$DIR/run/apiserver.port")
	ip addr add "$ip/32" dev lo || die "cannot add the address $ip to lo (needs CAP_NET_ADMIN)"
	echo "$ip" >"$DIR/run/apiserver-proxy.ip"
	echo "$ip:$port" >"$DIR/run/apiserver-proxy.address"
	ln -sfn "$(command -v socat)" "$DIR/bin/apiserver-proxy"
	save_args apiserver-proxy "TCP-LISTEN:$port,bind=$ip,fork,reuseaddr" "TCP:127.0.0.1:$port"
}

realnode_up() {
	local n=$1 i name
	[ "$n" -ge 1 ] && [ "$n" -le 2 ] || die "--real-nodes takes 1 or 2"
	[ "$(id -u)" -eq 0 ] || die "real nodes need root (kubelet, containerd, node addresses)"
	ensure_debian_packages
	configure_apiserver_proxy
	launch apiserver-proxy
	local command
	for command in containerd containerd-shim-runc-v2; do ln -sfn "$(containerd_binary $command)" "$DIR/bin/$command"; done
	# ctr, without the warning that cgroup v1 is deprecated on every call.
	printf '#!/bin/sh\nCONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=true exec %q "$@"\n' "$(containerd_binary ctr)" >"$DIR/bin/ctr"
	chmod +x "$DIR/bin/ctr"
	ln -sfn "$(readlink "$DIR/bin/kubectl")" "$DIR/bin/kubelet"
	: >"$DIR/run/real-nodes"
	for i in $(seq "$n"); do
		name=real-node-$i
		echo "$name" >>"$DIR/run/real-nodes"
		configure_realnode "$name"
		start_realnode "$name"
		say "node $name Ready at $(cat "$DIR/run/$name.ip") (kubelet log: $DIR/logs/$name-kubelet.log)"
	done
}

# Stop node NAME and leave nothing behind on the host: its pods (the kubelet
# stops their sandboxes, which removes their network namespaces; containerd's
# shims would outlive containerd), its mount namespace, bridge and address.
realnode_down() {
	local name=$1 node=$DIR/nodes/$1 id deadline
	local kubectl=("$DIR/bin/kubectl" --kubeconfig "$DIR/kubeconfig" --request-timeout=5s)
	if "${kubectl[@]}" delete pods --all-namespaces --field-selector "spec.nodeName=$name" \
		--force --grace-period=0 --wait=false >/dev/null 2>&1; then
		deadline=$((SECONDS + 30))
		while [ -n "$(realnode_ctr "$name" tasks ls -q 2>/dev/null)" ] && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
	fi
	stop_component "$name-kubelet"
	if [ -S "$node/containerd.sock" ] && [ -f "$DIR/run/$name-containerd.pid" ]; then
		for id in $(realnode_ctr "$name" tasks ls -q 2>/dev/null); do
			realnode_ctr "$name" tasks kill --signal SIGKILL "$id" >/dev/null 2>&1 || true
		done
		for id in $(realnode_ctr "$name" tasks ls -q 2>/dev/null); do
			realnode_ctr "$name" tasks delete --force "$id" >/dev/null 2>&1 || true
		done
	fi
	stop_component "$name-containerd"
	stop_component "$name-mounts"
	if [ -f "$DIR/run/$name.bridge" ]; then
		ip link del "$(cat "$DIR/run/$name.bridge")" 2>/dev/null || true
	fi
	realnode_del_ip "$name"
}

realnode_del_ip() {
	if [ -f "$DIR/run/$1.ip" ]; then
		ip addr del "$(cat "$DIR/run/$1.ip")/32" dev lo 2>/dev/null || true
		rm -f "$DIR/run/$1.ip"
	fi
}

# Stop every real node, then the apiserver proxy.
realnode_down_all() {
	local name
	for name in $(realnode_names); do realnode_down "$name"; done
	stop_component apiserver-proxy
	realnode_del_ip apiserver-proxy
}

# Import an image archive into every real node's containerd.
realnode_load() {
	local archive=$1 name
	[ -f "$archive" ] || die "$archive: no such file"
	[ -n "$(realnode_names)" ] || die "$DIR has no real nodes (up DIR --real-nodes N)"
	for name in $(realnode_names); do
		realnode_ctr "$name" images import "$archive" >/dev/null || die "cannot import $archive into $name"
	done
}
