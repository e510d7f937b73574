#!/usr/bin/env bash
# Selectors on GPU nodes as Node Feature Discovery and GPU Feature Discovery
# label them (220 labels each), on the real control plane with the simulated
# fleet. The API server returns labels sorted by key, so the two labels the
# plan selects on sort after the first 128:
#   - pool a selects drashift.io/pool=a with
#     node.kubernetes.io/exclude-from-migration DoesNotExist (the pattern of
#     manifests/examples/gpu-migration.yaml): a-0 and a-1 move to DRA, a-2
#     carries the exclusion label and is left exactly as it was;
#   - pool z selects zz.example.com/pool=z, a label that sorts last: its nodes
#     are found and move to DRA.
# Canaries are the whole pool and the bake is 0 s, so no SLO load is needed.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:3x2,b:2x2 --feature-labels 220
kubectl label node a-2 node.kubernetes.io/exclude-from-migration=true >/dev/null
kubectl label node b-0 b-1 zz.example.com/pool=z >/dev/null

# The scenario is real only if both selected-on labels sort past the 128th.
label_keys() { kubectl get node "$1" -o go-template='{{range $k, $v := .metadata.labels}}{{$k}}{{"\n"}}{{end}}'; }
position() { label_keys "$1" | grep -nx "$2" | cut -d: -f1; }
[ "$(label_keys a-2 | wc -l)" -ge 200 ] || fail "a-2 carries only $(label_keys a-2 | wc -l) labels"
[ "$(position a-2 node.kubernetes.io/exclude-from-migration)" -gt 128 ] || fail "the exclusion label sorts among the first 128"
[ "$(position b-0 zz.example.com/pool)" -gt 128 ] || fail "zz.example.com/pool sorts among the first 128"
node_state() {
	kubectl get node "$1" -o go-template='{{range $k, $v := .metadata.labels}}{{$k}}={{$v}}{{"\n"}}{{end}}unschedulable={{.spec.unschedulable}}{{"\n"}}{{range $k, $v := .metadata.annotations}}{{$k}}{{"\n"}}{{end}}'
}
excluded_before=$(node_state a-2)
excluded_unchanged() {
	local now
	now=$(node_state a-2)
	[ "$now" = "$excluded_before" ] ||
		fail "the excluded node a-2 was changed: $(diff <(echo "$excluded_before") <(echo "$now") | grep '^[<>]' | tr '\n' ' ')"
}

start_operator
kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: labels}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  maxConcurrentPools: 2
  pools:
  - name: a
    nodeSelector:
      matchLabels: {drashift.io/pool: a}
      matchExpressions: [{key: node.kubernetes.io/exclude-from-migration, operator: DoesNotExist}]
    canary: {percent: 100}
    bakeTime: 0s
    maxUnavailable: 2
  - name: z
    nodeSelector: {matchLabels: {zz.example.com/pool: z}}
    canary: {percent: 100}
    bakeTime: 0s
    maxUnavailable: 2
EOF_PLAN

pool_a_dra() { [ "$(plan_field labels '{.status.pools[0].phase}')" = DRA ]; }
wait_for 120 "pool a to reach DRA" pool_a_dra
excluded_unchanged
expect_eq "$(plan_field labels '{.status.pools[0].nodes.total}')" 2 "nodes pool a selects"
plan_dra() { [ "$(plan_field labels '{.status.phase}')" = DRA ]; }
wait_for 120 "the plan to reach DRA (pool z finds its nodes)" plan_dra
expect_eq "$(plan_field labels '{.status.pools[1].nodes.total}')" 2 "nodes pool z selects"
expect_eq "$(plan_field labels '{.status.nodesOnDRA}')" 4/4 "nodes on DRA"
for n in a-0 a-1 b-0 b-1; do
	expect_eq "$(kubectl get node $n -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}/{.spec.unschedulable}')" \
		"false/true/" "labels and cordon of $n on DRA"
done
excluded_unchanged
expect_eq "$(kubectl get node a-2 -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}')" \
	"true/false" "a-2's owner"
expect_no_violations
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
