#!/usr/bin/env bash
# An approval gate end to end, on the real control plane with the simulated
# fleet: a pool with promotion: Manual bakes its canary and passes its SLO
# gate, then waits (status.pools[].awaitingApproval, the AwaitingApproval
# condition, an AwaitingApproval Event) and moves no further node until a
# person approves with kubectl drashift promote; then it expands to DRA.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:3x4
start_operator
kubectl_drashift_on_path
create_namespace team-load

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: gated}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 2}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 2s
    promotion: Manual
EOF_PLAN

baking() { [ -n "$(plan_field gated '{.status.pools[0].bakeStartTime}')" ]; }
wait_for 120 "pool a's canary to reach DRA" baking
dra_load team-load a 2
awaiting() { [ "$(plan_field gated '{.status.pools[0].awaitingApproval}')" = true ]; }
wait_for 120 "pool a to wait for approval" awaiting
expect_eq "$(plan_field gated '{.status.conditions[?(@.type=="AwaitingApproval")].status}')" True "AwaitingApproval condition"
expect_contains "$(plan_field gated '{.status.conditions[?(@.type=="AwaitingApproval")].message}')" \
	"approve with kubectl drashift promote gated a" "AwaitingApproval condition's message"
expect_contains "$(plan_field gated '{.status.pools[0].message}')" "waiting for approval (promotion: Manual)" "pool a's message"
event() { kubectl describe mp gated | grep -q 'AwaitingApproval.*pool a: canary baked'; }
wait_for 20 "the AwaitingApproval Event" event
sleep 10 # an Automatic pool expands at once from here
expect_eq "$(plan_field gated '{.status.nodesOnDRA}')" 1/3 "nodes on DRA while waiting for approval"
expect_eq "$(plan_field gated '{.status.pools[0].phase}')" Canary "pool a's phase while waiting"
log "pool a waits for approval with its canary on DRA"

kubectl drashift promote gated a >/dev/null
expect_eq "$(kubectl get mp gated -o jsonpath='{.metadata.managedFields[?(@.manager=="kubectl-drashift")].manager}')" \
	kubectl-drashift "the approval's field manager"
dra() { [ "$(plan_field gated '{.status.phase}')" = DRA ]; }
wait_for 180 "pool a to expand to DRA once approved" dra
expect_eq "$(plan_field gated '{.status.nodesOnDRA}')" 3/3 "nodes on DRA after approval"
expect_eq "$(plan_field gated '{.status.conditions[?(@.type=="AwaitingApproval")].status}')" False "AwaitingApproval condition after approval"
expect_eq "$(plan_field gated '{.status.pools[0].awaitingApproval}')" "" "awaitingApproval after approval"
expect_no_violations
log "approved: pool a expanded to DRA"
