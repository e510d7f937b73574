#!/usr/bin/env bash
# The DRA contract drashift relies on, on one Kubernetes version
# (TESTENV_KUBE_VERSION, default the pinned one; tools/test matrix runs it on
# each and prints the table). A short migration with a breach and a rollback,
# and one verdict per feature, each "yes" shown by behaviour and each "no" by
# drashift's own message on that version:
#   DeviceTaint freeze   a plan asking for it is Invalid, saying what to
#                        enable, when the cluster serves no DeviceTaintRules;
#                        otherwise the breach writes the rule at the served version
#   admission freeze     the breach denies new claims for the plan's class
#   extended-resource pods during migration
#                        the plan's class maps example.com/gpu
#                        (extendedResourceName; drashift's condition
#                        ExtendedResourceOnDRA says so, or why not and what to
#                        enable), and a pod asking for it while the pool is
#                        frozen runs (on a device-plugin node)
#   claims kept on rollback
#                        a pod running on the canary keeps its claim through
#                        FreezeAndRollback and runs to completion; nothing evicted
#   eviction path        drain policy Evict: the device-plugin pod on the canary
#                        is evicted through policy/v1 Eviction, refused while
#                        its PodDisruptionBudget holds; the one on the other
#                        node of the pool keeps running
# Writes "feature<TAB>yes|no<TAB>detail" lines to CONTRACT_OUT when set.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools b:2x4
start_operator
create_namespace team-load
faults=${FLEET_METRICS%/metrics}/faults
version=$(kubectl version -o json | jq -r '.serverVersion.gitVersion')
cell() {
	log "contract on $version: $1: $2 ($3)"
	[ -z "${CONTRACT_OUT:-}" ] || printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$CONTRACT_OUT"
}

# ---- before the plan: a device-plugin pod on each node of pool b, a PDB that holds both ----
for i in 1 2; do
	kubectl -n team-load apply -f - >/dev/null <<EOF_PLUGIN_USER
apiVersion: v1
kind: Pod
metadata: {name: plugin-user-$i, labels: {drashift-test/plugin-user: b}, annotations: {fleetsim/duration: 30m}}
spec:
  nodeSelector: {drashift.io/pool: b}
  containers: [{name: main, image: registry.invalid/plugin-user, resources: {limits: {example.com/gpu: 3}}}]
EOF_PLUGIN_USER
done
kubectl -n team-load apply -f - >/dev/null <<'EOF_PDB'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: plugin-users}
spec: {minAvailable: 2, selector: {matchLabels: {drashift-test/plugin-user: b}}}
EOF_PDB
plugin_users_held() {
	[ "$(kubectl -n team-load get pods -l drashift-test/plugin-user=b --field-selector status.phase=Running -o name | wc -l)" = 2 ] &&
		[ "$(kubectl -n team-load get pdb plugin-users -o jsonpath='{.status.currentHealthy}/{.status.disruptionsAllowed}')" = 2/0 ]
}
wait_for 90 "a device-plugin pod running on each node of pool b, held by their PodDisruptionBudget" plugin_users_held

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: contract}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo:
    minSamples: 3
    readyLatencyP95: 3s
    breachPolicy: FreezeAndRollback
    freezeMode: AdmissionAndDeviceTaint
  pools:
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 1}
    bakeTime: 1h
    drain: {policy: Evict}
EOF_PLAN

# ---- DeviceTaint freeze: served, or refused up front with what to enable ----
taint_rules=$(kubectl api-resources --api-group=resource.k8s.io -o name | grep -c '^devicetaintrules' || true)
if [ "$taint_rules" -eq 0 ]; then
	invalid_msg() { plan_field contract '{.status.conditions[?(@.type=="Invalid")].message}'; }
	refused() { invalid_msg | grep -q 'does not serve'; }
	wait_for 60 "drashift to refuse freezeMode AdmissionAndDeviceTaint" refused
	msg=$(invalid_msg)
	expect_contains "$msg" "choose freezeMode Admission" "the Invalid condition"
	expect_contains "$msg" "enable" "the Invalid condition"
	expect_eq "$(plan_field contract '{.status.phase}')" Invalid "the plan's phase"
	cell "DeviceTaint freeze" no "$msg"
	kubectl patch mp contract --type merge -p '{"spec":{"slo":{"freezeMode":"Admission"}}}' >/dev/null
fi

# ---- eviction path: the canary's device-plugin pod, once its PDB allows ----
pdb_refused() { grep 'what=eviction' "$TEST_DIR/operator.log" | grep -q 'disruption budget'; }
wait_for 120 "drashift's eviction on the canary to be refused by the PodDisruptionBudget" pdb_refused
refusal=$(grep 'what=eviction' "$TEST_DIR/operator.log" | grep -o 'error=.*' | head -n 1)
canary=$(plan_field contract '{.status.pools[0].canaryNodes[0]}')
on_node() { kubectl -n team-load get pods -l drashift-test/plugin-user=b --field-selector "spec.nodeName$1" -o jsonpath='{.items[*].metadata.name}'; }
evictee=$(on_node "=$canary") bystander=$(on_node "!=$canary")
[ -n "$evictee" ] && [ -n "$bystander" ] || fail "a device-plugin pod on each node of pool b: canary $canary has '$evictee', the other '$bystander'"
expect_eq "$(kubectl -n team-load get pod "$evictee" -o jsonpath='{.status.phase}')" Running "$evictee while its PodDisruptionBudget holds"
kubectl -n team-load delete pdb plugin-users >/dev/null
evicted() { ! kubectl -n team-load get pod "$evictee" >/dev/null 2>&1; }
wait_for 60 "drashift to evict $evictee from the canary $canary" evicted
grep -q "msg=evicting .*pod=$evictee " "$TEST_DIR/operator.log" || fail "$evictee went, but drashift logged no eviction of it"
evictions=$(grep -c 'msg=evicting' "$TEST_DIR/operator.log")

# ---- a breach on the canary: the freeze ----
b_baking() { plan_field contract '{.status.pools[0].message}' | grep -q baking; }
wait_for 120 "pool b's canary on DRA" b_baking
expect_eq "$(kubectl -n team-load get pod "$bystander" -o jsonpath='{.status.phase}')" Running "$bystander, off the canary"
cell "eviction path" yes "$evictee evicted from $canary through the Eviction API once its PodDisruptionBudget allowed (before: $refusal); $bystander on the other node kept running"
gpu_template team-load load-gpu
keeper_pod team-load b 40s
keeper_claim=$(kubectl -n team-load get pod keeper -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
keeper_uid=$(kubectl -n team-load get resourceclaim "$keeper_claim" -o jsonpath='{.metadata.uid}')

curl -sf -X POST --data 'pool=b:prepare-delay=6s' "$faults" >/dev/null || fail "the simulator refused the fault"
dra_load team-load b 3
frozen() { [ "$(plan_field contract '{.status.frozen}')" = true ]; }
wait_for 150 "the slowed canary to breach readyLatencyP95 and freeze the plan" frozen
denied() { ! out=$(probe_claim team-load) && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
wait_for 60 "claims for gpu.example.com to be denied" denied
expect_contains "$(cat "$TEST_DIR/denial")" "frozen by MigrationPlan contract (pool b)" "denial message"
cell "admission freeze" yes "$(head -c 120 "$TEST_DIR/denial")"
if [ "$taint_rules" -gt 0 ]; then
	rule() { kubectl get devicetaintrules.resource.k8s.io drashift-freeze-contract -o jsonpath="$1"; }
	tainted() { rule '{.metadata.name}' >/dev/null 2>&1; }
	wait_for 30 "the DeviceTaintRule" tainted
	expect_eq "$(rule '{.spec.taint.key}:{.spec.taint.effect}')" "drashift.io/freeze:NoSchedule" "the DeviceTaintRule"
	cell "DeviceTaint freeze" yes "rule written at $(grep -o 'deviceTaintRules=[^ ]*' "$TEST_DIR/operator.log" | head -n 1)"
fi

# ---- a pod asking for the extended resource during the frozen migration ----
job_node=$(extended_resource_job team-load ext-job) || exit 1
ext() { plan_field contract "{.status.conditions[?(@.type==\"ExtendedResourceOnDRA\")].$1}"; }
mapping_known() { [ -n "$(ext status)" ]; }
wait_for 30 "the ExtendedResourceOnDRA condition" mapping_known
if [ "$(ext status)" = True ]; then
	cell "extended-resource pods during migration" yes "$(ext message); while frozen one ran on $job_node"
else
	expect_contains "$(ext message)" "cannot run on DRA nodes" "the ExtendedResourceOnDRA condition"
	cell "extended-resource pods during migration" no "$(ext message)"
fi

# ---- FreezeAndRollback keeps the running pod's claim ----
rolling_back() { [ "$(plan_field contract '{.status.pools[0].phase}')" = RollingBack ]; }
wait_for 30 "pool b to roll back" rolling_back
expect_eq "$(kubectl -n team-load get pod keeper -o jsonpath='{.status.phase}')" Running "the keeper while pool b rolls back"
expect_eq "$(kubectl -n team-load get resourceclaim "$keeper_claim" -o jsonpath='{.metadata.uid}/{.status.allocation.devices.results[0].driver}')" \
	"$keeper_uid/gpu.example.com" "the keeper's claim while pool b rolls back"
b_legacy() { [ "$(plan_field contract '{.status.pools[0].phase}')" = Legacy ]; }
wait_for 180 "pool b back on the device plugin" b_legacy
expect_eq "$(kubectl -n team-load get pod keeper -o jsonpath='{.status.phase}')" Succeeded "the keeper ran to completion (not evicted)"
expect_eq "$(grep -c 'msg=evicting' "$TEST_DIR/operator.log")" "$evictions" "evictions since the canary's drain (a rollback never evicts)"
expect_no_violations
cell "claims kept on rollback" yes "keeper on $canary kept claim $keeper_claim and ran to completion; nothing evicted"
log "PASS"
