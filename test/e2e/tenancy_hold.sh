#!/usr/bin/env bash
# A tenant boundary the API refuses to store holds the canary: drashift
# starts no handover until the plan's tenancy parameter is written, and says
# why in the TenantBoundary condition and the pool's message.
#   1. a ValidatingAdmissionPolicy of the test's own refuses the parameter
#      (drashift-system/drashift-tenancy-held): the pool records its canary
#      and moves no node; TenantBoundary is False (WriteFailed) with the
#      API's words;
#   2. the refusal goes: drashift writes the parameter again (it retries), the
#      condition turns True, the canary's node moves to DRA, and a namespace
#      outside the canary is refused a claim.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:3x4
start_operator
for n in team-canary team-other; do create_namespace $n; done

refuse_writes test-refuse-tenancy "" configmaps "[CREATE, UPDATE]" "object.metadata.name != 'drashift-tenancy-held'" \
	"the test refuses the tenancy parameter"
refused() { ! kubectl -n drashift-system create configmap drashift-tenancy-held --dry-run=server >/dev/null 2>&1; }
wait_for 60 "the test's policy to refuse the parameter" refused

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: held}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1, namespaces: [team-canary]}
    bakeTime: 1h
EOF_PLAN

cond() { plan_field held "{.status.conditions[?(@.type==\"TenantBoundary\")].$1}"; }
write_failed() { [ "$(cond reason)" = WriteFailed ]; }

# ---- 1. refused: the canary is recorded, no node moves ----
wait_for 60 "TenantBoundary to say the write failed" write_failed
expect_eq "$(cond status)" False "TenantBoundary while the parameter is refused"
expect_contains "$(cond message)" "NOT ENFORCED: the parameter drashift-system/drashift-tenancy-held could not be written" "TenantBoundary's message"
expect_contains "$(cond message)" "the test refuses the tenancy parameter" "TenantBoundary's message names the API's reason"
expect_eq "$(plan_field held '{.status.pools[0].phase}')" Canary "pool a's phase"
canary=$(plan_field held '{.status.pools[0].canaryNodes[0]}')
[ -n "$canary" ] || fail "no canary recorded"
sleep 10 # the canary's node would have started its handover by now
expect_eq "$(plan_field held '{.status.pools[0].nodes.legacy}/{.status.pools[0].nodes.inHandover}')" 3/0 "nodes while the boundary is refused"
expect_eq "$(kubectl get node "$canary" -o jsonpath='{.metadata.labels.drashift\.io/device-plugin}/{.metadata.labels.drashift\.io/dra-driver}')" \
	true/false "the canary's labels while the boundary is refused"
expect_contains "$(plan_field held '{.status.pools[0].message}')" \
	"no handover starts until the tenant boundary is in place: the tenant boundary's parameter could not be written" \
	"pool a's message"
log "step 1: boundary refused, canary $canary held: $(cond message)"

# ---- 2. the refusal goes: written, then the canary moves ----
kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy test-refuse-tenancy >/dev/null
written() { [ "$(cond reason)" = Written ]; }
wait_for 60 "TenantBoundary to turn True once the parameter is written" written
expect_eq "$(cond status)" True "TenantBoundary once written"
baking() { [ -n "$(plan_field held '{.status.pools[0].bakeStartTime}')" ]; }
wait_for 120 "the canary to reach DRA" baking
denied() { ! out=$(probe_claim team-other) && printf '%s\n' "$out" >"$TEST_DIR/denial"; }
wait_for 60 "team-other to be refused while pool a is in its canary" denied
expect_contains "$(cat "$TEST_DIR/denial")" "only namespaces team-canary may create them" "the denial"
expect_no_violations
log "step 2: boundary written, canary on DRA, team-other refused"
