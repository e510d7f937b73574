#!/usr/bin/env bash
# drashift as users run it: its image (tools/image) loaded into two real
# nodes' containerd, installed with `kubectl apply -k` of manifests/ plus a
# test overlay that only says where the apiserver is (no kube-proxy here) and
# keeps the pods on the real nodes. Two replicas under the restricted Pod
# Security Standard become Ready with exactly one leader; deleting the
# leader's pod hands the Lease to another Ready replica, and two replicas
# with one leader remain. Then the same again after `kubectl delete -k` and
# `helm install` of the chart (manifests/chart/drashift, tools/helm), the
# test's settings given as values.
source "$(dirname "$0")/../lib.sh"
: "${DRASHIFT_CONTROLLER:?DRASHIFT_CONTROLLER names the built drashift-controller}"
testenv_start --real-nodes 2
NS=drashift-system

install_in_cluster
expect_eq "$(kubectl get namespace $NS -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" \
	restricted "Pod Security level enforced in $NS"
# One line per pod: name, IP, Ready, terminating ("-" when not known).
pods() {
	kubectl -n $NS get pods -l app.kubernetes.io/name=drashift -o json | jq -r '.items[] | [.metadata.name,
		(.status.podIP // "-"), ([(.status.conditions // [])[] | select(.type == "Ready") | .status][0] // "-"),
		(if .metadata.deletionTimestamp then "terminating" else "-" end)] | @tsv'
}
ready_pods() { pods | awk '$3 == "True" && $4 == "-" { print $1 }'; }
two_ready() { [ "$(ready_pods | wc -l)" -eq 2 ]; }
holder() { kubectl -n $NS get lease drashift-controller -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
leaders() { # pods whose /metrics say they lead
	local name ip
	pods | while read -r name ip _; do
		[ "$(curl -sf -m 5 "http://$ip:8080/metrics" | awk '$1 == "drashift_leader" { print $2 }')" = 1 ] && echo "$name"
	done
}
check_one_leader() {
	local leader
	wait_for 120 "both replicas Ready" two_ready
	leader=$(holder)
	ready_pods | grep -qx "$leader" || fail "the Lease holder '$leader' is not one of the Ready pods: $(pods)"
	expect_eq "$(leaders)" "$leader" "the pods that report themselves leader"
	echo "$leader"
}
# check_installed HOW: the Deployment rolls out; two Ready replicas, one
# leader, running the image tools/image built; the Lease passes to another
# replica when the leader's pod is deleted.
check_installed() {
	local how=$1 first standby t0 second pod manifest config
	in_cluster_rolled_out
	first=$(check_one_leader)
	log "$how: pods: $(pods | tr '\n' ';'); leader $first"
	expect_eq "$(kubectl -n $NS get pod "$first" -o jsonpath='{.spec.containers[0].image}')" drashift/controller:0.1.0 "image the pod runs"
	# The image ID the runtime reports is the config digest of the image tools/image built.
	manifest=${IMAGE#* }
	config=$(tar -xOf "$TEST_DIR/image.tar" "blobs/sha256/${manifest#sha256:}" | jq -r .config.digest)
	expect_contains "$(kubectl -n $NS get pod "$first" -o jsonpath='{.status.containerStatuses[0].imageID}')" "$config" "image the node ran"

	# The Lease passes to another live replica: usually the standby, though the
	# ReplicaSet may also replace the standby meanwhile (it did once here, scaling
	# down a surplus pod), so any Ready replica other than the deleted one counts.
	standby=$(ready_pods | grep -vx "$first")
	t0=$SECONDS
	kubectl -n $NS delete pod "$first" --wait=false >/dev/null
	taken_over() { local h; h=$(holder); [ -n "$h" ] && [ "$h" != "$first" ] && ready_pods | grep -qx "$h"; }
	wait_for 90 "another replica to take the Lease from $first" taken_over
	log "$how: the Lease passed from $first to $(holder) (the standby was $standby) in about $((SECONDS - t0)) s"
	second=$(check_one_leader)
	[ "$second" != "$first" ] || fail "the deleted pod $first still leads"
	expect_contains "$(kubectl -n $NS logs "$second")" 'to=Leading why="acquired the lease"' "the new leader's log (kubectl logs through the kubelet)"
	for pod in $(ready_pods); do
		expect_eq "$(kubectl -n $NS get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')" 0 "restarts of $pod"
	done
	log "$how: pods: $(pods | tr '\n' ';')"
}
check_installed "kubectl apply -k"

# The same from the Helm chart, into the Namespace of manifests/ (the chart
# leaves the Namespace, and its Pod Security labels, to the cluster's owner).
kubectl delete -k "$TEST_DIR/overlay" --wait=true --timeout=300s >/dev/null || fail "kubectl delete -k did not finish"
helm=$("$TESTENV" helm)
export HELM_CACHE_HOME="$TEST_DIR/helm/cache" HELM_CONFIG_HOME="$TEST_DIR/helm/config" HELM_DATA_HOME="$TEST_DIR/helm/data"
kubectl apply -f "$DRASHIFT_ROOT/manifests/namespace.yaml" >/dev/null
cat >"$TEST_DIR/values.yaml" <<EOF_VALUES
nodeSelector: {testenv.drashift.io/real-node: "true"}
hostAliases: [{ip: "${APISERVER_PROXY%:*}", hostnames: [kubernetes.default.svc]}]
extraEnv:
- {name: KUBERNETES_SERVICE_HOST, value: kubernetes.default.svc}
- {name: KUBERNETES_SERVICE_PORT, value: "${APISERVER_PROXY#*:}"}
EOF_VALUES
out=$("$helm" install drashift "$DRASHIFT_ROOT/manifests/chart/drashift" -n $NS -f "$TEST_DIR/values.yaml" 2>&1) ||
	fail "helm install failed: $out"
expect_eq "$(kubectl -n $NS get deployment drashift-controller -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')" \
	drashift "the Deployment's release"
check_installed "helm install"
