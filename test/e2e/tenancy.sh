#!/usr/bin/env bash
# The tenant boundary end to end: the operator writes each plan's boundary,
# the shipped admission policy enforces it (spec.pools[].canary.namespaces
# first, then spec.tenancy), and it ends when the migration does:
#   1. while pool a is in its canary, only team-canary may create claims for
#      the plan's class; team-a (in spec.tenancy) is refused with a message
#      naming the plan, the pool and how to get access; the canary's load in
#      team-canary feeds the SLO gate;
#   2. once the pool expands, team-a and team-canary may, and team-other is
#      refused with the spec.tenancy message;
#   3. once every pool is on DRA the boundary is open: team-other's claim is
#      admitted, and the parameter says restricted=false (stage Open).
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:6x4
start_operator
for n in team-canary team-a team-other; do create_namespace $n; done

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: tenants}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 3}
  tenancy:
    allowedNamespaces: [team-a]
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1, namespaces: [team-canary]}
    bakeTime: 1h
EOF_PLAN

param() { kubectl -n drashift-system get configmap drashift-tenancy-tenants -o jsonpath="$1"; }
denied() { ! out=$(probe_claim "$1") && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
admitted() { probe_claim "$1" >/dev/null; }

# ---- 1. the canary: only its namespaces ----
wait_for 60 "team-a to be refused while pool a is in its canary" denied team-a
msg=$(cat "$TEST_DIR/denial")
expect_contains "$msg" "ValidatingAdmissionPolicy 'drashift-claim-tenancy' with binding 'drashift-claim-tenancy' denied request: ResourceClaims for DeviceClass gpu.example.com are restricted by MigrationPlan tenants while pool a is in its canary: only namespaces team-canary may create them, and team-a is not one. To get access, ask the plan owner to add team-a to spec.pools[].canary.namespaces, or wait until the canary expands (kubectl describe migrationplan tenants)." \
	"denial in the canary"
log "canary: $msg"
expect_eq "$(param '{.metadata.ownerReferences[0].name}')" tenants "the parameter's owner"
out=$(probe_claim team-canary) || fail "team-canary was refused in its own canary: $out"
canary_baking() { plan_field tenants '{.status.pools[0].message}' | grep -q baking; }
wait_for 90 "pool a's canary to bake" canary_baking
dra_load team-canary a 3
kubectl patch mp tenants --type=merge -p '{"spec":{"promote":{"pools":["a"]}}}' >/dev/null

# ---- 2. expanding: spec.tenancy, and the canary's tenants keep access ----
expanding() { [ "$(plan_field tenants '{.status.pools[0].phase}')" != Canary ]; }
wait_for 120 "pool a to pass its gate and expand" expanding
wait_for 60 "team-a to be admitted once the pool expands" admitted team-a
admitted team-canary || fail "team-canary lost access as the pool expanded"
# Five nodes expand one at a time (maxUnavailable 1): the plan is still migrating.
denied team-other || fail "team-other was admitted while the plan migrates ($(plan_field tenants '{.status.nodesOnDRA}') nodes on DRA)"
expect_contains "$(cat "$TEST_DIR/denial")" "restricted by MigrationPlan tenants while it migrates: only namespaces team-a, team-canary may create them, and team-other is not one. To get access, ask the plan owner to add team-other to spec.tenancy.allowedNamespaces or label it to match spec.tenancy.namespaceSelector; the restriction ends when every pool is on DRA" \
	"denial while migrating"
log "migrating ($(plan_field tenants '{.status.nodesOnDRA}') nodes on DRA): $(cat "$TEST_DIR/denial")"

# ---- 3. done: open ----
on_dra() { [ "$(plan_field tenants '{.status.phase}')" = DRA ]; }
wait_for 180 "the plan to reach DRA" on_dra
wait_for 60 "team-other to be admitted once every pool is on DRA" admitted team-other
expect_eq "$(param '{.data.restricted} {.data.stage}')" "false Open" "the parameter once the migration is over"
expect_no_violations
log "PASS"
