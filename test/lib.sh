# Shared by the integration and end-to-end tests (bash). Each test starts its
# own control plane from tools/testenv in a fresh folder and stops it on exit,
# so tests run in parallel and never see each other's objects.
set -euo pipefail

TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
DRASHIFT_ROOT=${DRASHIFT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TESTENV="$DRASHIFT_ROOT/tools/testenv"

log() { printf '[%s] %s\n' "$TEST_NAME" "$*" >&2; }
fail() {
	log "FAIL: $*"
	exit 1
}

# Start a control plane for this test (arguments go to `tools/testenv up`,
# e.g. --real-nodes 1); sets TEST_DIR, KUBECONFIG and puts its kubectl first
# on PATH. Logs of the components are kept when the test fails.
testenv_start() {
	TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/drashift-$TEST_NAME.XXXXXX")
	trap testenv_cleanup EXIT
	log "starting control plane in $TEST_DIR $*"
	KUBECONFIG=$("$TESTENV" up "$TEST_DIR/cluster" "$@")
	export KUBECONFIG PATH="$TEST_DIR/cluster/bin:$PATH"
}

testenv_cleanup() {
	local rc=$? pids
	# Whatever the test started in the background (simulator, operators) goes first.
	pids=$(jobs -p)
	if [ -n "$pids" ]; then
		kill $pids 2>/dev/null || true
		wait $pids 2>/dev/null || true
	fi
	"$TESTENV" down "$TEST_DIR/cluster" || true
	if [ $rc -eq 0 ] && [ -z "${KEEP_TESTENV:-}" ]; then
		rm -rf "$TEST_DIR"
	else
		log "kept $TEST_DIR for inspection (component logs in $TEST_DIR/cluster/logs)"
	fi
	exit $rc
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local timeout=$1 what=$2; shift 2
	local deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || fail "timed out after ${timeout}s waiting for $what"
		sleep 0.5
	done
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
	[ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"
}

# expect_contains HAYSTACK NEEDLE WHAT
expect_contains() {
	case $1 in
	*"$2"*) ;;
	*) fail "$3: '$1' does not contain '$2'" ;;
	esac
}

# A node as the tests need it: Ready, room for pods, optionally labelled. The
# TaintNodesByCondition admission plugin taints every new node
# not-ready; with no kubelet and no node-lifecycle controller, the test lifts
# the taint as the lifecycle controller would for a Ready node.
create_node() {
	local name=$1; shift
	kubectl create -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $name
  labels:
    kubernetes.io/hostname: $name
$(for l in "$@"; do printf '    %s: "%s"\n' "${l%%=*}" "${l#*=}"; done)
NODE
	kubectl patch node "$name" --subresource=status --type=merge -p \
		'{"status":{"capacity":{"cpu":"16","memory":"64Gi","pods":"110"},"allocatable":{"cpu":"16","memory":"64Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"simulated"}]}}' >/dev/null
	kubectl taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null
}

# Namespaces get their default ServiceAccount from the real controller-manager;
# pods cannot be admitted before it exists.
create_namespace() {
	kubectl create namespace "$1" >/dev/null
	wait_for 60 "ServiceAccount default in $1" kubectl -n "$1" get serviceaccount default
}

# ---- the operator and the fleet, for end-to-end tests ----

# The MigrationPlan CRD is Established. kubectl wait fails at once ("accessor
# error") when it reads the CRD before the API server has set any condition:
# asked again until it succeeds.
crd_established() {
	wait_for 60 "the MigrationPlan CRD to be established" \
		kubectl wait --for=condition=Established --timeout=5s crd/migrationplans.drashift.io
}

# Install the CRD and the manifests' namespace, ServiceAccount and RBAC, as a
# platform engineer would (the Deployment itself needs a kubelet).
install_drashift() {
	kubectl apply -f "$DRASHIFT_ROOT/crds/drashift.io_migrationplans.yaml" >/dev/null
	crd_established
	kubectl apply -f "$DRASHIFT_ROOT/manifests/namespace.yaml" -f "$DRASHIFT_ROOT/manifests/serviceaccount.yaml" \
		-f "$DRASHIFT_ROOT/manifests/rbac.yaml" -f "$DRASHIFT_ROOT/manifests/freeze-policy.yaml" \
		-f "$DRASHIFT_ROOT/manifests/tenancy-policy.yaml" >/dev/null
	# A kubeconfig with the ServiceAccount's own token: the operator runs with exactly the RBAC it ships.
	local token server
	token=$(kubectl -n drashift-system create token drashift-controller --duration=2h)
	server=$(kubectl config view -o jsonpath='{.clusters[0].cluster.server}')
	OPERATOR_KUBECONFIG="$TEST_DIR/operator.kubeconfig"
	cat >"$OPERATOR_KUBECONFIG" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$server", certificate-authority: "$TEST_DIR/cluster/pki/ca.crt"}}]
users: [{name: drashift, user: {token: "$token"}}]
contexts: [{name: drashift, context: {cluster: c, user: drashift}}]
current-context: drashift
KC
}

# start_fleet ARGS...: the simulated GPU fleet; sets FLEET_PID and FLEET_METRICS.
start_fleet() {
	local bin
	bin=$("$DRASHIFT_ROOT/tools/testenv" fleetsim)
	# The kubelet's own delays (capacity kept 5 m after a device plugin stops,
	# a driver's slices wiped 30 s after it goes) shortened, so that a test
	# does not wait on them; test/e2e/real_migration.sh has the real ones.
	"$bin" --kubeconfig "$KUBECONFIG" --report "$TEST_DIR/fleet-report.json" --capacity-lag 5s --slice-removal-delay 2s \
		"$@" >"$TEST_DIR/fleet.log" 2>&1 &
	FLEET_PID=$!
	fleet_up() { grep -q '^metrics http' "$TEST_DIR/fleet.log"; }
	wait_for 60 "the fleet simulator" fleet_up
	FLEET_METRICS=$(sed -n 's/^metrics \(http[^ ]*\).*/\1/p' "$TEST_DIR/fleet.log" | head -n 1)/metrics
}

# start_prometheus CONFIG [ARGS...]: Debian's prometheus on a free loopback
# port with CONFIG (and ARGS, e.g. --web.config.file); sets PROM_PID and
# PROM_URL (http://127.0.0.1:PORT; https when ARGS has a web config, whose
# CA curl must then be given in PROM_CURL_ARGS).
start_prometheus() {
	local config=$1 attempt port scheme=http
	shift
	command -v prometheus >/dev/null || fail "prometheus is not installed (apt-get install prometheus)"
	case "$*" in *--web.config.file*) scheme=https ;; esac
	for attempt in $(seq 20); do
		port=$((20000 + RANDOM % 30000))
		prometheus --config.file="$config" --storage.tsdb.path="$TEST_DIR/prometheus-data" \
			--web.listen-address="127.0.0.1:$port" "$@" >"$TEST_DIR/prometheus.log" 2>&1 &
		PROM_PID=$!
		PROM_URL=$scheme://127.0.0.1:$port
		until prom_ready || ! kill -0 $PROM_PID 2>/dev/null; do sleep 0.5; done
		prom_ready && return 0
		wait $PROM_PID 2>/dev/null || true # the port was taken: another one
	done
	fail "Prometheus did not start: $(tail -n 5 "$TEST_DIR/prometheus.log")"
}
prom_ready() { curl -sf ${PROM_CURL_ARGS:-} "$PROM_URL/-/ready" >/dev/null; }
prom_query() { curl -sf ${PROM_CURL_ARGS:-} "$PROM_URL/api/v1/query" --data-urlencode "query=$1"; }

fleet_metric() { curl -sf "$FLEET_METRICS" | awk -v m="$1" '$1 == m { print $2 }'; }

# The simulator's invariant counters must stay zero.
expect_no_violations() {
	expect_eq "$(fleet_metric fleetsim_double_ownership_total)" 0 "nodes seen with both owners"
	expect_eq "$(fleet_metric fleetsim_double_allocation_total)" 0 "devices seen handed to two pods"
}

# start_operator [ARGS...]: drashift-controller with the ServiceAccount's kubeconfig; sets OPERATOR_PID.
# It logs to OPERATOR_LOG (default $TEST_DIR/operator.log).
start_operator() {
	"${DRASHIFT_CONTROLLER:?}" --kubeconfig "$OPERATOR_KUBECONFIG" --http-bind-address 127.0.0.1:0 \
		--leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms \
		"$@" >>"${OPERATOR_LOG:-$TEST_DIR/operator.log}" 2>&1 &
	OPERATOR_PID=$!
}

plan_field() { kubectl get mp "$1" -o jsonpath="$2"; }

# probe_claim NAMESPACE: create a claim for the gpu.example.com class; prints
# the API's answer (a denial when a freeze is on) and fails when refused.
probe_claim() {
	kubectl -n "$1" create -f - 2>&1 <<'EOF_CLAIM'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {generateName: probe-}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
EOF_CLAIM
}

# gpu_template NAMESPACE NAME: a ResourceClaimTemplate for one gpu.example.com device.
gpu_template() {
	kubectl -n "$1" apply -f - >/dev/null <<EOF_TEMPLATE
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $2}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
EOF_TEMPLATE
}

# dra_pod NAMESPACE NAME POOL DURATION: a pod pinned to POOL holding a claim
# for one gpu.example.com device, running DURATION in the simulator.
dra_pod() {
	gpu_template "$1" one-gpu
	kubectl -n "$1" create -f - >/dev/null <<EOF_POD
apiVersion: v1
kind: Pod
metadata: {name: $2, annotations: {fleetsim/duration: $4}}
spec:
  nodeSelector: {drashift.io/pool: $3}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, image: registry.invalid/$2, resources: {claims: [{name: gpu}]}}]
EOF_POD
}

# dra_load NAMESPACE POOL N [DURATION]: N pods pinned to POOL, each with a
# claim from a template for the gpu.example.com class, running DURATION
# (default 2s) in the simulator. The scheduler can only place them on the
# pool's DRA nodes (the canary): they are the samples its SLO gate judges.
dra_load() {
	local ns=$1 pool=$2 n=$3 duration=${4:-2s} i
	gpu_template "$ns" load-gpu
	for i in $(seq "$n"); do
		kubectl -n "$ns" create -f - >/dev/null <<EOF_POD
apiVersion: v1
kind: Pod
metadata: {generateName: load-$pool-, labels: {drashift-test/load: "$pool"}, annotations: {fleetsim/duration: "$duration"}}
spec:
  nodeSelector: {drashift.io/pool: "$pool"}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: load-gpu}]
  containers: [{name: main, image: registry.invalid/load, resources: {claims: [{name: gpu}]}}]
EOF_POD
	done
}

# ---- admission policies (freeze_policy.sh, tenancy_policy.sh) ----

# policy_claim NS CLASS [API_VERSION] [ADMIN]: a claim manifest asking for one
# device of CLASS (with adminAccess when ADMIN is set).
policy_claim() {
	cat <<EOF_CLAIM
apiVersion: resource.k8s.io/${3:-v1}
kind: ResourceClaim
metadata:
  generateName: probe-
  namespace: $1
spec:
  devices:
    requests:
    - name: dev
      exactly:
        deviceClassName: $2
        ${4:+adminAccess: true}
EOF_CLAIM
}
# create_claim NS CLASS [API_VERSION] [ADMIN]: kubectl create's output (stdout and stderr) in $out; its status.
create_claim() { out=$(policy_claim "$@" | kubectl create -f - 2>&1); }
admitted() {
	create_claim "$@" || fail "a claim for $2 in $1 was denied: $out"
	expect_contains "$out" "created" "claim for $2 in $1"
}
# Policies, bindings and parameters reach admission asynchronously: poll.
until_denied() { ! create_claim "$@" && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
until_admitted() { create_claim "$@"; }

# create_first_available NS: a claim whose one request has two alternatives,
# nic.example.com then gpu-mig.example.com; output in $out, its status.
create_first_available() {
	out=$(kubectl create -f - 2>&1 <<EOF_CLAIM
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  generateName: probe-
  namespace: $1
spec:
  devices:
    requests:
    - name: dev
      firstAvailable:
      - name: nic
        deviceClassName: nic.example.com
      - name: mig
        deviceClassName: gpu-mig.example.com
EOF_CLAIM
	)
}

# refuse_writes NAME GROUP RESOURCE OPERATIONS EXPRESSION MESSAGE: a
# ValidatingAdmissionPolicy and its binding, both NAME, that deny OPERATIONS
# (a YAML list, e.g. "[CREATE, UPDATE]") of RESOURCE in API group GROUP ("" for
# core; "migrationplans/status" for a subresource) unless EXPRESSION (CEL)
# holds: how a test makes the API server refuse one of drashift's writes.
# Delete it with: kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy NAME
refuse_writes() {
	kubectl apply -f - >/dev/null <<EOF_POLICY
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: $1}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["$2"]
      apiVersions: ["*"]
      operations: $4
      resources: [$3]
  validations:
  - expression: "$5"
    message: $6
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: $1}
spec:
  policyName: $1
  validationActions: [Deny]
EOF_POLICY
}

# policy_live POLICY PARAMETER_LABEL PROBE_NS: wait until POLICY is live. A
# claim admitted right after a policy is applied proves little: the policy
# might just not be loaded yet. A second binding of the same policy, limited
# to PROBE_NS and with parameterNotFoundAction Deny, shows when the policy
# and its (empty) parameter lookup are live; bindings are seen in creation
# order, so the shipped binding, created before it, is live too.
policy_live() {
	kubectl apply -f - >/dev/null <<EOF_BINDING
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: $3-missing-parameter-denies
spec:
  policyName: $1
  validationActions: [Deny]
  paramRef:
    namespace: drashift-system
    selector:
      matchLabels:
        $2: "true"
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: $3
EOF_BINDING
	wait_for 60 "the policy to be live (probe binding denies without a parameter)" until_denied "$3" gpu.example.com
	expect_contains "$(cat "$TEST_DIR/denial")" \
		"no params found for policy binding with \`Deny\` parameterNotFoundAction" "probe binding's denial"
}

# trainer_pod NS: pod trainer whose claim comes from template gpu (one gpu.example.com device).
trainer_pod() {
	kubectl apply -f - >/dev/null <<EOF_POD
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu
  namespace: $1
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
  namespace: $1
spec:
  automountServiceAccountToken: false
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpu
  containers:
  - name: train
    image: registry.invalid/trainer
    resources:
      claims:
      - name: gpu
EOF_POD
}
# trainer_claim_events NS: the FailedResourceClaimCreation Events of pod trainer, "TYPE MESSAGE" a line.
trainer_claim_events() {
	kubectl -n "$1" get events --field-selector involvedObject.kind=Pod,involvedObject.name=trainer,reason=FailedResourceClaimCreation \
		-o jsonpath='{range .items[*]}{.type} {.message}{"\n"}{end}'
}

# ---- kubectl drashift ----

# kubectl drashift as kubectl finds it: drashift-controller linked as kubectl-drashift, first on PATH.
kubectl_drashift_on_path() {
	mkdir -p "$TEST_DIR/plugins"
	ln -sf "${DRASHIFT_CONTROLLER:?}" "$TEST_DIR/plugins/kubectl-drashift"
	export PATH="$TEST_DIR/plugins:$PATH"
}

# The plan `fleet` the kubectl drashift tests read and steer: pool a (one
# canary node that bakes an hour, so it stays in Canary), then pool b, on the
# simulator's pool labels; minSamples 5.
apply_fleet_plan() {
	kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: fleet}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 5}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 1h
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 1}
EOF_PLAN
}

# A migration under way: drashift and the simulated fleet (pools a: 3 nodes,
# b: 2), kubectl drashift on PATH, and the plan `fleet` with pool a's canary
# on DRA and baking.
start_fleet_plan_baking() {
	install_drashift
	start_fleet --pools a:3x4,b:2x4
	start_operator
	kubectl_drashift_on_path
	apply_fleet_plan
	baking() { [ -n "$(plan_field fleet '{.status.pools[0].bakeStartTime}')" ]; }
	wait_for 180 "pool a's canary to bake" baking
}

# ---- real nodes (tools/testenv up DIR --real-nodes N) ----

# real_gpu_plugins: a GPU vendor's two plugins on the real nodes, from images
# built here, as DaemonSets in gpu-system selected by drashift's ownership
# labels: gpu-device-plugin (tools/cmd/gpuplugin: 4 x example.com/gpu) where
# drashift.io/device-plugin=true, gpu-dra-driver (tools/cmd/draplugin: driver
# gpu.example.com, 4 devices, CDI specs in /var/run/cdi) where
# drashift.io/dra-driver=true, with the RBAC a driver needs to publish its
# ResourceSlices, and the DeviceClass gpu.example.com. Both run only on the
# real nodes: fleetsim's nodes beside them play their own plugins. Also loads
# the workload image example.com/gpujob:testenv (tools/cmd/gpujob). Needs
# tools/lib/common.sh sourced.
real_gpu_plugins() {
	local image
	for image in gpuplugin draplugin gpujob; do
		"$TESTENV" load "$TEST_DIR/cluster" "$(go_tool_image $image example.com/$image:testenv 0:0)"
	done
	create_namespace gpu-system
	kubectl apply -f - >/dev/null <<EOF_PLUGINS
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: gpu-dra-driver, namespace: gpu-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: gpu-dra-driver}
rules:
- {apiGroups: [resource.k8s.io], resources: [resourceslices], verbs: [get, list, watch, create, update, patch, delete]}
- {apiGroups: [resource.k8s.io], resources: [resourceclaims], verbs: [get]}
- {apiGroups: [""], resources: [nodes], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: gpu-dra-driver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: gpu-dra-driver}
subjects: [{kind: ServiceAccount, name: gpu-dra-driver, namespace: gpu-system}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpu-device-plugin, namespace: gpu-system}
spec:
  selector: {matchLabels: {app: gpu-device-plugin}}
  template:
    metadata: {labels: {app: gpu-device-plugin}}
    spec:
      nodeSelector: {drashift.io/device-plugin: "true", testenv.drashift.io/real-node: "true"}
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 5
      containers:
      - name: plugin
        image: example.com/gpuplugin:testenv
        imagePullPolicy: Never
        args: [--resource=example.com/gpu, --devices=4]
        volumeMounts: [{name: device-plugins, mountPath: /var/lib/kubelet/device-plugins}]
      volumes: [{name: device-plugins, hostPath: {path: /var/lib/kubelet/device-plugins, type: Directory}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpu-dra-driver, namespace: gpu-system}
spec:
  selector: {matchLabels: {app: gpu-dra-driver}}
  template:
    metadata: {labels: {app: gpu-dra-driver}}
    spec:
      nodeSelector: {drashift.io/dra-driver: "true", testenv.drashift.io/real-node: "true"}
      serviceAccountName: gpu-dra-driver
      hostNetwork: true # no kube-proxy: the apiserver on the host's loopback
      terminationGracePeriodSeconds: 5
      containers:
      - name: plugin
        image: example.com/draplugin:testenv
        imagePullPolicy: Never
        args: [--driver=gpu.example.com, --devices=4, --cdi-dir=/var/run/cdi]
        env:
        - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}
        - {name: KUBERNETES_SERVICE_PORT, value: "$(cat "$TEST_DIR/cluster/run/apiserver.port")"}
        volumeMounts:
        - {name: plugins-registry, mountPath: /var/lib/kubelet/plugins_registry}
        - {name: plugins, mountPath: /var/lib/kubelet/plugins}
        - {name: cdi, mountPath: /var/run/cdi}
      volumes:
      - {name: plugins-registry, hostPath: {path: /var/lib/kubelet/plugins_registry, type: DirectoryOrCreate}}
      - {name: plugins, hostPath: {path: /var/lib/kubelet/plugins, type: DirectoryOrCreate}}
      - {name: cdi, hostPath: {path: /var/run/cdi, type: DirectoryOrCreate}}
EOF_PLUGINS
}

# install_in_cluster [OP...]: drashift as users run it. Its image (tools/image,
# $TEST_DIR/image.tar) is loaded into the real nodes' containerd, then
# manifests/ is applied with `kubectl apply -k` through a test overlay
# ($TEST_DIR/overlay) that only keeps the pods on the real nodes and says
# where the apiserver is (no kube-proxy here: hostAliases and
# KUBERNETES_SERVICE_* name the control plane's loopback proxy). Each OP is
# one more JSON patch operation on the Deployment, e.g.
# '{op: replace, path: /spec/replicas, value: 1}'. Fails when apply -k fails
# or warns. Sets IMAGE ("REFERENCE DIGEST", as tools/image prints it) and
# APISERVER_PROXY (HOST:PORT).
install_in_cluster() {
	local op out
	IMAGE=$("$DRASHIFT_ROOT/tools/image" "$TEST_DIR/image.tar")
	"$TESTENV" load "$TEST_DIR/cluster" "$TEST_DIR/image.tar"
	log "loaded $IMAGE into the real nodes"
	APISERVER_PROXY=$(cat "$TEST_DIR/cluster/run/apiserver-proxy.address")
	mkdir "$TEST_DIR/overlay"
	{
		cat <<EOF_KUSTOMIZATION
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$TEST_DIR/overlay" "$DRASHIFT_ROOT/manifests")
patches:
- target: {kind: Deployment, name: drashift-controller}
  patch: |-
    - {op: add, path: /spec/template/spec/nodeSelector, value: {testenv.drashift.io/real-node: "true"}}
    - {op: add, path: /spec/template/spec/hostAliases, value: [{ip: "${APISERVER_PROXY%:*}", hostnames: [kubernetes.default.svc]}]}
    - {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_HOST, value: kubernetes.default.svc}}
    - {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_PORT, value: "${APISERVER_PROXY#*:}"}}
EOF_KUSTOMIZATION
		for op in "$@"; do printf '    - %s\n' "$op"; done
	} >"$TEST_DIR/overlay/kustomization.yaml"
	out=$(kubectl apply -k "$TEST_DIR/overlay" 2>&1) || fail "kubectl apply -k failed: $out"
	case $out in *Warning*) fail "kubectl apply -k warned: $out" ;; esac
}

# in_cluster_rolled_out: the Deployment drashift-system/drashift-controller has rolled out.
in_cluster_rolled_out() {
	kubectl -n drashift-system rollout status deployment/drashift-controller --timeout=300s >/dev/null ||
		fail "the Deployment did not roll out: $(kubectl -n drashift-system get pods -o wide 2>&1)"
}

# keeper_pod NAMESPACE POOL DURATION: the pod "keeper", with a claim from the
# template load-gpu (gpu_template), on POOL for DURATION (fleetsim); waits
# until it runs.
keeper_pod() {
	kubectl -n "$1" apply -f - >/dev/null <<EOF_KEEPER
apiVersion: v1
kind: Pod
metadata: {name: keeper, annotations: {fleetsim/duration: $3}}
spec:
  nodeSelector: {drashift.io/pool: $2}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: load-gpu}]
  containers: [{name: main, image: registry.invalid/keeper, resources: {claims: [{name: gpu}]}}]
EOF_KEEPER
	keeper_running() { [ "$(kubectl -n "$1" get pod keeper -o jsonpath='{.status.phase}')" = Running ]; }
	wait_for 90 "a pod with a claim running on pool $2" keeper_running "$1"
}

# extended_resource_job NAMESPACE NAME: a 2 s Job asking for example.com/gpu
# (no claim); waits until it succeeded and prints the node it ran on.
extended_resource_job() {
	kubectl -n "$1" apply -f - >/dev/null <<EOF_JOB
apiVersion: batch/v1
kind: Job
metadata: {name: $2}
spec:
  backoffLimit: 0
  template:
    metadata: {annotations: {fleetsim/duration: 2s}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: registry.invalid/job, resources: {limits: {example.com/gpu: 1}}}]
EOF_JOB
	job_done() { [ "$(kubectl -n "$1" get job "$2" -o jsonpath='{.status.succeeded}')" = 1 ]; }
	wait_for 90 "the job asking for example.com/gpu to run" job_done "$1" "$2"
	kubectl -n "$1" get pods -l job-name="$2" -o jsonpath='{.items[0].spec.nodeName}'
}

# ---- tmux: the terminal a person reads ----

# tmux_start COMMAND: a tmux server on $TEST_DIR/tmux.sock, stopped when the
# test ends, whose window 0 (120 x 45) runs COMMAND, and whose window "shell"
# is an interactive bash with the prompt "[N S]$ " (N counts the commands, S
# is the last one's exit status), for tmux_type. Both have this test's PATH
# and KUBECONFIG.
tmux_start() {
	command -v tmux >/dev/null || fail "tmux is missing (tools/lib/common.sh ensure_debian_packages installs it)"
	TMUX_SOCK="$TEST_DIR/tmux.sock"
	local env=(-e "PATH=$PATH" -e "KUBECONFIG=$KUBECONFIG")
	tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -x 120 -y 45 "${env[@]}" "$1"
	trap 'rc=$?; set +e; tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; (exit $rc); testenv_cleanup' EXIT
	tmux -S "$TMUX_SOCK" new-window -d -n shell "${env[@]}" "env PS1='[\\# \$?]\\$ ' bash --norc --noprofile -i"
	shell_prompted() { tmux_pane shell | grep -qE '^\[1 0\][#$]'; }
	wait_for 30 "the shell's prompt in the tmux window" shell_prompted
}

# tmux_pane WINDOW [ARGS...]: what WINDOW shows now (ARGS go to capture-pane, e.g. -S - for the scrollback too).
tmux_pane() {
	local window=$1
	shift
	tmux -S "$TMUX_SOCK" capture-pane -p "$@" -t "$window"
}

# tmux_type COMMAND: type COMMAND at the tmux shell and press Enter, as a
# person would, and wait for the next prompt; sets screen (the lines the
# command printed, as the window shows them) and status (its exit status, as
# the prompt shows it).
tmux_type() {
	local n pane
	n=$(tmux_pane shell -S - | sed -n 's/^\[\([0-9]*\) [0-9]*\][#$].*/\1/p' | tail -n 1)
	tmux -S "$TMUX_SOCK" send-keys -t shell -l "$1"
	tmux -S "$TMUX_SOCK" send-keys -t shell Enter
	prompted() { tmux_pane shell -S - | grep -qE "^\[$((n + 1)) [0-9]+\][#$]"; }
	wait_for 60 "'$1' to finish in the tmux shell" prompted
	pane=$(tmux_pane shell -S -)
	status=$(sed -n "s/^\[$((n + 1)) \([0-9]*\)\].*/\1/p" <<<"$pane")
	screen=$(awk -v typed="[$n " -v next_prompt="[$((n + 1)) " 'index($0, next_prompt) == 1 { exit }
		on { print } index($0, typed) == 1 { on = 1 }' <<<"$pane")
	log "\$ $1 (exit $status):"$'\n'"$screen"
}

# ---- the migration report in a real browser (report.sh, demo.sh) ----

# chromium_headless DIR ARGS...: Debian's chromium, headless, with a fresh profile under DIR.
chromium_headless() {
	local profile rc=0
	profile=$(mktemp -d "$1/chromium.XXXXXX")
	shift
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
		--enable-logging=stderr --v=0 "$@" || rc=$?
	rm -rf "$profile"
	return $rc
}

# report_in_chromium REPORT DIR: the page kubectl drashift report wrote, as
# a browser sees it. It must be self-contained (no script, no external URL),
# and chromium must load it without a console error. Leaves DIR/dom.html (the
# DOM chromium built), DIR/chromium.log and DIR/report.png (a 1240 px wide
# screenshot; a copy at $REPORT_SCREENSHOT when that is set, for docs/).
report_in_chromium() {
	local report=$1 dir=$2
	command -v chromium >/dev/null || fail "chromium is missing (Debian package chromium; tools/lib/common.sh installs it)"
	grep -Eiq '<script|(src|href)=|url\(|@import' "$report" &&
		fail "the report loads something from outside: $(grep -Eio '<script|(src|href)=[^ >]*|url\([^)]*\)|@import' "$report" | head -3)"
	chromium_headless "$dir" --dump-dom "file://$report" >"$dir/dom.html" 2>"$dir/chromium.log" ||
		fail "chromium failed: $(tail -5 "$dir/chromium.log")"
	grep -E 'CONSOLE|Uncaught|Page load failed' "$dir/chromium.log" &&
		fail "chromium reported errors for the page (above; log in $dir/chromium.log)"
	chromium_headless "$dir" --screenshot="$dir/report.png" --window-size=1240,1400 --hide-scrollbars "file://$report" \
		>/dev/null 2>>"$dir/chromium.log" || fail "chromium took no screenshot: $(tail -5 "$dir/chromium.log")"
	[ "$(head -c 8 "$dir/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
	if [ -n "${REPORT_SCREENSHOT:-}" ]; then cp "$dir/report.png" "$REPORT_SCREENSHOT"; fi
}

# report_lanes_are DIR POOLS...: the timeline in DIR/dom.html (report_in_chromium)
# has a lane for each of POOLS and for each node labelled drashift.io/pool, and no other.
report_lanes_are() {
	local dir=$1 lanes want
	shift
	lanes=$(grep -o "data-lane=\"[^\"]*\"" "$dir/dom.html" | sed 's/data-lane="\(.*\)"/\1/' | sort | tr '\n' ' ')
	want=$(
		{
			printf 'pool:%s\n' "$@"
			kubectl get nodes -l drashift.io/pool -o jsonpath='{range .items[*]}node:{.metadata.name}{"\n"}{end}'
		} | sort | tr '\n' ' '
	)
	expect_eq "$lanes" "$want" "the timeline's lanes in chromium's DOM"
}
