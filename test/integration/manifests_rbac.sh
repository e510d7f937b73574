#!/usr/bin/env bash
# manifests/ on a real control plane: `kubectl apply -k manifests/` creates
# everything, the Deployment's pod meets the restricted Pod Security Standard
# the namespace enforces, and the ServiceAccount holds exactly the grants of
# docs/dra-facts.md ("Permissions"): it reads the DRA objects, writes only what drashift owns, and
# can neither read secrets (but the one Secret of Prometheus signals, by
# name) nor write claims or slices. The grants are checked
# with `kubectl auth can-i --as`, then exercised with the ServiceAccount's own
# token; with DRASHIFT_CONTROLLER set, the operator itself runs on that token
# and becomes ready without a single refused request.
source "$(dirname "$0")/../lib.sh"
testenv_start

NS=drashift-system
SA_NAME=drashift-controller
SA=system:serviceaccount:$NS:$SA_NAME

# ---- apply -k ----
out=$(kubectl apply -k "$DRASHIFT_ROOT/manifests" 2>&1) || fail "kubectl apply -k manifests/ failed: $out"
case $out in
*"would violate PodSecurity"*) fail "the Deployment's pod template violates the namespace's Pod Security level: $out" ;;
*Warning*) fail "kubectl apply -k manifests/ warned: $out" ;;
esac
log "applied manifests/: $(printf '%s\n' "$out" | wc -l) objects"
crd_established

expect_eq "$(kubectl get namespace $NS -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" \
	restricted "Pod Security level enforced in $NS"
kubectl -n $NS get serviceaccount $SA_NAME >/dev/null || fail "ServiceAccount $SA_NAME missing"

# ---- the Deployment (it never runs here: no kubelet, no deployment controller) ----
dep() { kubectl -n $NS get deployment drashift-controller -o jsonpath="{$1}"; }
ctr=.spec.template.spec.containers[0]
expect_eq "$(dep .spec.replicas)" 2 "replicas"
expect_eq "$(dep .spec.template.spec.serviceAccountName)" $SA_NAME "serviceAccountName"
expect_eq "$(dep "$ctr.image")" drashift/controller:0.1.0 "image"
expect_eq "$(dep "$ctr.args")" '["--leader-elect=true","--leader-elect-id=drashift-controller","--http-bind-address=:8080"]' "args"
expect_eq "$(dep "$ctr.env[?(@.name==\"POD_NAME\")].valueFrom.fieldRef.fieldPath")" metadata.name "POD_NAME"
expect_eq "$(dep "$ctr.env[?(@.name==\"POD_NAMESPACE\")].valueFrom.fieldRef.fieldPath")" metadata.namespace "POD_NAMESPACE"
expect_eq "$(dep .spec.template.spec.securityContext.runAsNonRoot)" true "pod runAsNonRoot"
expect_eq "$(dep .spec.template.spec.securityContext.seccompProfile.type)" RuntimeDefault "pod seccompProfile"
expect_eq "$(dep "$ctr.securityContext.runAsNonRoot")" true "runAsNonRoot"
expect_eq "$(dep "$ctr.securityContext.runAsUser")" 65532 "runAsUser"
expect_eq "$(dep "$ctr.securityContext.readOnlyRootFilesystem")" true "readOnlyRootFilesystem"
expect_eq "$(dep "$ctr.securityContext.allowPrivilegeEscalation")" false "allowPrivilegeEscalation"
expect_eq "$(dep "$ctr.securityContext.capabilities.drop")" '["ALL"]' "capabilities dropped"
expect_eq "$(dep "$ctr.securityContext.seccompProfile.type")" RuntimeDefault "seccompProfile"
expect_eq "$(dep "$ctr.livenessProbe.httpGet.path") $(dep "$ctr.livenessProbe.httpGet.port")" "/healthz http" "liveness probe"
expect_eq "$(dep "$ctr.readinessProbe.httpGet.path") $(dep "$ctr.readinessProbe.httpGet.port")" "/readyz http" "readiness probe"
expect_eq "$(dep "$ctr.ports[0].containerPort")" 8080 "container port"
[ -n "$(dep "$ctr.resources.requests.memory")" ] && [ -n "$(dep "$ctr.resources.limits.memory")" ] ||
	fail "memory requests and limits are not both set"
expect_eq "$(kubectl -n $NS get service drashift-controller-metrics -o jsonpath='{.spec.ports[0].port} {.spec.ports[0].targetPort}')" \
	"8080 http" "metrics Service port"
expect_eq "$(kubectl -n $NS get service drashift-controller-metrics -o jsonpath='{.spec.selector}')" "$(dep .spec.selector.matchLabels)" \
	"metrics Service selects the Deployment's pods"

# The pod the Deployment would create passes Pod Security admission in its
# namespace (a server-side dry run goes through the real admission chain)...
pod_json() { printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"%s"},"spec":%s}' "$1" $NS "$2"; }
out=$(pod_json pss-probe "$(dep .spec.template.spec)" | kubectl create --dry-run=server -f - 2>&1) ||
	fail "the Deployment's pod is refused in $NS: $out"
case $out in *Warning*) fail "the Deployment's pod drew a warning: $out" ;; esac
# ... and the namespace does enforce: the same pod without its securityContext is refused.
out=$(pod_json root-probe '{"serviceAccountName":"drashift-controller","containers":[{"name":"c","image":"drashift/controller:0.1.0"}]}' |
	kubectl create --dry-run=server -f - 2>&1) && fail "a pod without securityContext was admitted in $NS: $out"
expect_contains "$out" 'violates PodSecurity "restricted:latest"' "refusal of a pod without securityContext"
log "the Deployment's pod passes restricted Pod Security admission"

# ---- what the ServiceAccount may do, by SubjectAccessReview ----
# can WANT VERB RESOURCE [FLAGS...]: kubectl auth can-i as the ServiceAccount.
checks=0
can() {
	local want=$1 got
	shift
	got=$(kubectl auth can-i "$@" --as="$SA" 2>/dev/null) || true
	expect_eq "$got" "$want" "can-i $*"
	checks=$((checks + 1))
}

# Nothing on secrets, anywhere, but get on the one Prometheus signals read (spec.slo.prometheus.secretName).
for verb in get list watch create update patch delete; do
	can no "$verb" secrets --all-namespaces
	can no "$verb" secrets -n $NS
done
can no get secrets/drashift-controller-token -n $NS
can yes get secrets/drashift-prometheus -n $NS
for verb in update patch delete; do
	can no "$verb" secrets/drashift-prometheus -n $NS
done
can no get secrets/drashift-prometheus -n default
# No writes to claims or slices; no pod deletion.
for verb in create update patch delete deletecollection; do
	can no "$verb" resourceclaims.resource.k8s.io --all-namespaces
	can no "$verb" resourceclaims.resource.k8s.io -n default
	can no "$verb" resourceslices.resource.k8s.io
	can no "$verb" deviceclasses.resource.k8s.io
	can no "$verb" resourceclaimtemplates.resource.k8s.io -n default
done
can no update resourceclaims.resource.k8s.io --subresource=status -n default
can no patch resourceclaims.resource.k8s.io --subresource=status -n default
can no delete pods --all-namespaces
can no delete pods -n default
can no create pods -n default
can no update pods -n default
can no delete nodes
can no update nodes
can no create nodes
can no create migrationplans.drashift.io
can no delete migrationplans.drashift.io
# Reads it needs.
for verb in get list watch; do
	can yes "$verb" pods --all-namespaces
	can yes "$verb" nodes
	can yes "$verb" resourceclaims.resource.k8s.io --all-namespaces
	can yes "$verb" resourceclaimtemplates.resource.k8s.io --all-namespaces
	can yes "$verb" resourceslices.resource.k8s.io
	can yes "$verb" deviceclasses.resource.k8s.io
	can yes "$verb" migrationplans.drashift.io
done
# DaemonSets: preflight lists them, and nothing else.
can yes list daemonsets.apps --all-namespaces
for verb in get watch create update patch delete; do
	can no "$verb" daemonsets.apps --all-namespaces
done
# Writes it owns.
can yes patch nodes
can yes create pods --subresource=eviction -n default
can yes update migrationplans.drashift.io --subresource=status
can yes patch migrationplans.drashift.io --subresource=status
can yes update migrationplans.drashift.io
can yes create events -n default
can yes patch events -n $NS
# Its Lease, in its namespace only.
can yes get leases.coordination.k8s.io/drashift-controller -n $NS
can yes update leases.coordination.k8s.io/drashift-controller -n $NS
can yes create leases.coordination.k8s.io -n $NS
can no update leases.coordination.k8s.io/drashift-controller -n default
can no update leases.coordination.k8s.io -n default
can no create leases.coordination.k8s.io -n default
can no update leases.coordination.k8s.io/kube-scheduler -n $NS
can no delete leases.coordination.k8s.io/drashift-controller -n $NS
# The freeze by device taint: its DeviceTaintRules, nothing else of DRA.
for verb in get create patch delete; do
	can yes "$verb" devicetaintrules.resource.k8s.io
done
can no list devicetaintrules.resource.k8s.io
# The freeze and tenancy parameters and the plans' histories: ConfigMaps of drashift-system (RBAC
# cannot grant by label), never delete, nothing in other namespaces.
for verb in get list watch create update patch; do
	can yes "$verb" configmaps -n $NS
done
can no delete configmaps/drashift-freeze-gpu-migration -n $NS
can no delete configmaps/drashift-history-gpu-migration -n $NS
can no delete configmaps/drashift-tenancy-gpu-migration -n $NS
can no deletecollection configmaps -n $NS
can no create configmaps -n default
can no update configmaps -n default
can no get configmaps/drashift-freeze-gpu-migration -n default
log "$checks SubjectAccessReviews as $SA answered as expected"

# ---- the same, with the ServiceAccount's own token ----
token=$(kubectl create token $SA_NAME -n $NS --duration=1h)
server=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
SA_KUBECONFIG=$TEST_DIR/sa.kubeconfig
cat >"$SA_KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: $SA_NAME
  user:
    token: $token
contexts:
- name: testenv
  context:
    cluster: testenv
    user: $SA_NAME
    namespace: $NS
current-context: testenv
EOF
chmod 600 "$SA_KUBECONFIG"
as_sa() { kubectl --kubeconfig "$SA_KUBECONFIG" "$@"; }
# refused VERB... : the request fails with 403 Forbidden for this ServiceAccount.
refused() {
	local out
	out=$(as_sa "$@" 2>&1) && fail "as $SA, 'kubectl $*' succeeded: $out"
	expect_contains "$out" "is forbidden: User \"$SA\"" "refusal of 'kubectl $*'"
}

expect_eq "$(as_sa auth whoami -o jsonpath='{.status.userInfo.username}')" "$SA" "identity of the token"
kubectl create secret generic probe -n $NS --from-literal=k=v >/dev/null
refused get secrets -A
refused get secret probe -n $NS
create_node gpu-1 drashift.io/pool=a
out=$(as_sa get nodes -o name 2>&1) || fail "as $SA, kubectl get nodes failed: $out"
expect_eq "$out" node/gpu-1 "nodes seen by the ServiceAccount"
for what in "pods -A" "resourceclaims -A" "resourceclaimtemplates -A" resourceslices deviceclasses; do
	# shellcheck disable=SC2086 # "pods -A" is two words on purpose
	out=$(as_sa get $what -o name 2>&1) || fail "as $SA, kubectl get $what failed: $out"
done
as_sa label node gpu-1 drashift.io/dra-driver=true >/dev/null || fail "as $SA, labelling a node failed"
expect_eq "$(kubectl get node gpu-1 -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}')" true "label written by the ServiceAccount"
refused delete node gpu-1
refused create -f - <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: probe
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
EOF
kubectl apply -f "$DRASHIFT_ROOT/manifests/examples/gpu-migration.yaml" >/dev/null
as_sa patch mp gpu-migration --subresource=status --type=merge -p '{"status":{"phase":"Legacy","poolsOnDRA":"0/2"}}' >/dev/null ||
	fail "as $SA, writing the plan's status failed"
expect_eq "$(kubectl get mp gpu-migration -o jsonpath='{.status.phase}')" Legacy "status written by the ServiceAccount"
refused delete mp gpu-migration
as_sa create configmap drashift-freeze-gpu-migration -n $NS --from-literal=frozen=false >/dev/null || fail "as $SA, creating the freeze parameter failed"
as_sa patch configmap drashift-freeze-gpu-migration -n $NS --type=merge -p '{"data":{"frozen":"true"}}' >/dev/null ||
	fail "as $SA, toggling the freeze parameter failed"
refused delete configmap drashift-freeze-gpu-migration -n $NS
refused create configmap drashift-freeze-gpu-migration -n default
log "the ServiceAccount's token reads what it needs, writes what drashift owns, and is refused the rest"

# ---- the operator itself on that token ----
if [ -n "${DRASHIFT_CONTROLLER:-}" ]; then
	"$DRASHIFT_CONTROLLER" --kubeconfig "$SA_KUBECONFIG" --identity rbac-probe --http-bind-address 127.0.0.1:0 \
		>"$TEST_DIR/op.log" 2>&1 &
	op=$!
	wait_for 20 "the operator's http server" grep -q 'msg="http server listening"' "$TEST_DIR/op.log"
	port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/op.log")
	ready() { curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; }
	wait_for 60 "the operator to become ready on the ServiceAccount's token" ready
	holder() { [ "$(kubectl -n $NS get lease drashift-controller -o jsonpath='{.spec.holderIdentity}')" = rbac-probe ]; }
	wait_for 30 "the operator to hold its Lease" holder
	if grep -Eiq 'forbidden|status=403|code=403' "$TEST_DIR/op.log"; then
		fail "the operator was refused a request: $(grep -Ei 'forbidden|status=403|code=403' "$TEST_DIR/op.log" | head -n 3)"
	fi
	kill -TERM $op
	wait $op || fail "drashift-controller did not exit 0 on SIGTERM (log: $TEST_DIR/op.log)"
	log "drashift-controller ran on the ServiceAccount's token: ready, leading, nothing refused"
else
	log "DRASHIFT_CONTROLLER not set: the operator itself was not run on the token"
fi
log "PASS"
