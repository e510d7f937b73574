#!/usr/bin/env bash
# The MigrationPlan CRD on a real API server: the example plans are admitted
# and come back with every default filled in; nonsense is refused at
# admission with a message naming the field; the status subresource takes
# what the controller writes (and nothing else); kubectl get mp shows the
# printer columns.
source "$(dirname "$0")/../lib.sh"
testenv_start

CRD="$DRASHIFT_ROOT/crds/drashift.io_migrationplans.yaml"
EXAMPLES="$DRASHIFT_ROOT/manifests/examples"

kubectl apply -f "$CRD" >/dev/null
crd_established
# Established is set before every API server handler serves the new type.
wait_for 30 "the migrationplans API to be served" kubectl get migrationplans
expect_eq "$(kubectl get crd migrationplans.drashift.io -o jsonpath='{.spec.names.shortNames[0]} {.spec.scope} {.spec.versions[0].name}')" \
	"mp Cluster v1alpha1" "short name, scope and version"

# ---- the examples are admitted, without warnings (no field pruned) ----
for example in gpu-migration nvidia-gpu-operator; do
	out=$(kubectl apply -f "$EXAMPLES/$example.yaml" 2>&1) || fail "example $example was rejected: $out"
	case $out in
	*Warning*) fail "example $example was admitted with a warning: $out" ;;
	esac
	log "admitted $example"
done

# ---- defaults, as the API server stores them ----
mp_field() { kubectl get mp "$1" -o jsonpath="{$2}"; }
kubectl get mp gpu-migration -o json >"$TEST_DIR/gpu-migration.json"
expect_contains "$(cat "$TEST_DIR/gpu-migration.json")" '"maxConcurrentPools": 1' "defaulted plan as JSON"
expect_eq "$(mp_field gpu-migration .spec.ownership.devicePlugin.key)" drashift.io/device-plugin "default device-plugin label key"
expect_eq "$(mp_field gpu-migration .spec.ownership.devicePlugin.enabled)/$(mp_field gpu-migration .spec.ownership.devicePlugin.disabled)" \
	true/false "default device-plugin label values"
expect_eq "$(mp_field gpu-migration .spec.ownership.draDriver.key)" drashift.io/dra-driver "default DRA label key"
expect_eq "$(mp_field gpu-migration .spec.ownership.draDriver.enabled)/$(mp_field gpu-migration .spec.ownership.draDriver.disabled)" \
	true/false "default DRA label values"
expect_eq "$(mp_field gpu-migration .spec.maxConcurrentPools)" 1 "default maxConcurrentPools"
expect_eq "$(mp_field gpu-migration .spec.paused)" false "default paused"
expect_eq "$(mp_field gpu-migration '.spec.pools[0].drain.policy')" Wait "default drain policy"
expect_eq "$(mp_field gpu-migration '.spec.pools[0].drain.evictionDeadline')" 30m "default eviction deadline"
expect_eq "$(mp_field gpu-migration '.spec.pools[1].deadlines.drain')" 1h "default drain deadline"
expect_eq "$(mp_field gpu-migration '.spec.pools[1].deadlines.handover')" 10m "default handover deadline"
expect_eq "$(mp_field gpu-migration .spec.slo.stuckThreshold)" 5m "default stuckThreshold"
expect_eq "$(mp_field gpu-migration .spec.slo.maxDriverErrors)/$(mp_field gpu-migration .spec.slo.maxCapacityDrift)" 0/0 \
	"default maxDriverErrors/maxCapacityDrift"
# What the user wrote is kept.
expect_eq "$(mp_field gpu-migration '.spec.pools[1].canary.percent')" 25 "pool b canary percent"
expect_eq "$(mp_field nvidia-gpu-operator .spec.ownership.devicePlugin.key)" nvidia.com/gpu.deploy.device-plugin "NVIDIA device-plugin label"
expect_eq "$(mp_field nvidia-gpu-operator .spec.slo.breachPolicy)" FreezeAndRollback "NVIDIA breach policy"

# A plan with only the required fields gets every default.
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata:
  name: minimal
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  pools:
  - name: a
    nodeSelector:
      matchLabels:
        drashift.io/pool: a
EOF
expect_eq "$(mp_field minimal '.spec.pools[0].canary.nodes')" 1 "default canary"
expect_eq "$(mp_field minimal '.spec.pools[0].maxUnavailable')" 1 "default maxUnavailable"
expect_eq "$(mp_field minimal '.spec.pools[0].bakeTime')" 10m "default bakeTime"
expect_eq "$(mp_field minimal '.spec.pools[0].deadlines.drain')/$(mp_field minimal '.spec.pools[0].deadlines.handover')" \
	1h/10m "default deadlines"
expect_eq "$(mp_field minimal .spec.slo.window)/$(mp_field minimal .spec.slo.minSamples)" 10m/20 "default SLO window/minSamples"
expect_eq "$(mp_field minimal .spec.slo.maxAllocationFailurePercent)" 5 "default maxAllocationFailurePercent"
expect_eq "$(mp_field minimal .spec.slo.breachPolicy)" Freeze "default breachPolicy"
expect_eq "$(mp_field minimal .spec.ownership.draDriver.key)" drashift.io/dra-driver "default ownership on a minimal plan"

# ---- nonsense is refused at admission, with the field and the reason ----

# reject NAME FIELD MESSAGE < plan spec (the lines under "spec:", indented two spaces)
reject() {
	local name=$1 field=$2 message=$3 spec out
	spec=$(cat)
	if out=$(kubectl apply -f - 2>&1 <<EOF
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata:
  name: $name
spec:
$spec
EOF
	); then
		fail "plan $name was admitted: $out"
	fi
	expect_contains "$out" "$field" "rejection of $name (field)"
	expect_contains "$out" "$message" "rejection of $name (message)"
	! kubectl get mp "$name" >/dev/null 2>&1 || fail "rejected plan $name exists"
	log "rejected $name: $(printf '%s\n' "$out" | grep -m 1 -F -- "$message" | sed 's/^[* ]*//')"
}

COMMON='  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]'

reject no-pools "spec.pools" "must list at least one pool" <<EOF
$COMMON
  pools: []
EOF

reject duplicate-pools "spec.pools" "pool names must be unique" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
EOF

reject same-ownership-key "spec.ownership" "devicePlugin.key and draDriver.key must differ: one label cannot record two owners" <<EOF
$COMMON
  ownership:
    devicePlugin: {key: nvidia.com/gpu.deploy.device-plugin}
    draDriver: {key: nvidia.com/gpu.deploy.device-plugin}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
EOF

reject negative-duration "spec.pools[0].bakeTime" "must not be negative" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    bakeTime: -5m
EOF

reject malformed-duration "spec.pools[0].deadlines.drain" "must be a duration such as 30s, 10m or 1h30m" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    deadlines: {drain: 90 minutes}
EOF

reject zero-deadline "spec.pools[0].deadlines.handover" "must be greater than zero" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    deadlines: {handover: 0s}
EOF

reject unknown-drain-policy "spec.pools[0].drain.policy" 'Unsupported value: "Kill"' <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    drain: {policy: Kill}
EOF

reject unknown-breach-policy "spec.slo.breachPolicy" 'Unsupported value: "Rollback"' <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
  slo: {breachPolicy: Rollback}
EOF

POOL_A='  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}'
prom() { # QUERIES_FLOW [ADDRESS]: spec.slo.prometheus with these queries
	printf '%s\n%s\n  slo:\n    prometheus:\n      address: %s\n      queries: %s\n' "$COMMON" "$POOL_A" "${2:-http://prometheus:9090}" "$1"
}
prom "[{name: p95, query: up, threshold: 1}]" prometheus:9090 |
	reject prom-address "spec.slo.prometheus.address" "must be an http:// or https:// URL without query, fragment or trailing slash"
prom "[{name: p95, query: up, threshold: 1, onError: Pass}]" |
	reject prom-error-pass "spec.slo.prometheus.queries[0].onError" 'supported values: "Inconclusive", "Breach"'
prom "[{name: readyLatencyP95, query: up, threshold: 1}]" |
	reject prom-builtin-name "spec.slo.prometheus.queries[0].name" "is a built-in signal's name"
prom "[{name: p-95, query: up, threshold: 1}]" |
	reject prom-name "spec.slo.prometheus.queries[0].name" "must be a signal name"
prom "[{name: p95, query: up, threshold: 1}, {name: p95, query: up, threshold: 2}]" |
	reject prom-duplicate "spec.slo.prometheus.queries[1]" "Duplicate value"
prom "[{name: p95, query: up}]" | reject prom-threshold "spec.slo.prometheus.queries[0].threshold" "Required value"
prom "[]" | reject prom-no-queries "spec.slo.prometheus.queries" "should have at least 1 items"

reject canary-nodes-and-percent "spec.pools[0].canary" "set exactly one of nodes or percent" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 2, percent: 10}
EOF

reject canary-percent-zero "spec.pools[0].canary.percent" "should be greater than or equal to 1" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {percent: 0}
EOF

reject rollback-missing-pool "spec.rollback.pools" "must name pools listed in spec.pools" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
  rollback: {pools: [a, c]}
EOF

reject zero-replicas "spec.pools[0].capacity.replicasPerDevice" "should be greater than or equal to 1" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    capacity: {replicasPerDevice: 0}
EOF

reject legacy-resource-without-domain "spec.pools[0].capacity.legacyResources[0]" "must be a domain-prefixed resource name such as nvidia.com/mig-1g.10gb" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    capacity: {legacyResources: [mig-1g.10gb]}
EOF

reject legacy-resource-repeats-extended-resource "spec.pools" "capacity.legacyResources must not repeat spec.extendedResource" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    capacity: {legacyResources: [nvidia.com/mig-1g.10gb, example.com/gpu]}
EOF

reject unknown-promotion "spec.pools[0].promotion" 'Unsupported value: "manual"' <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    promotion: manual
EOF

reject window-bad-time "spec.windows[0].start" "must be a time of day HH:MM or HH:MM:SS" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
  windows:
  - {days: [Saturday], start: "25:00", end: "02:00", timeZone: Europe/Berlin}
EOF

reject window-bad-day "spec.windows[0].days[0]" 'Unsupported value: "Sat"' <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
  windows:
  - {days: [Sat], start: "22:00", end: "02:00", timeZone: Europe/Berlin}
EOF

reject window-zone-path "spec.windows[0].timeZone" "must be an IANA time zone name such as Europe/Berlin" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
  windows:
  - {days: [Saturday], start: "22:00", end: "02:00", timeZone: ../../etc/passwd}
EOF

reject window-empty "spec.windows[0]" "end must differ from start" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
  windows:
  - {days: [Saturday], start: "22:00", end: "22:00:00", timeZone: UTC}
EOF

# spec.notifications: URLs are http(s) with a host, events and formats are known, timeouts bounded.
POOL_A='  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}'
reject webhook-scheme "spec.notifications.webhooks[0].url" "should match" <<EOF
$COMMON
$POOL_A
  notifications:
    webhooks:
    - {name: ops, url: "ftp://hooks.example.com/x"}
EOF

reject webhook-event "spec.notifications.webhooks[0].events[0]" 'Unsupported value: "done"' <<EOF
$COMMON
$POOL_A
  notifications:
    webhooks:
    - {name: ops, url: "https://hooks.example.com/x", events: [done]}
EOF

reject webhook-timeout "spec.notifications.webhooks[0].timeout" "must be at most 10m" <<EOF
$COMMON
$POOL_A
  notifications:
    webhooks:
    - {name: ops, url: "https://hooks.example.com/x", timeout: 1h}
EOF

reject webhook-duplicate "spec.notifications.webhooks[1]" "Duplicate value" <<EOF
$COMMON
$POOL_A
  notifications:
    webhooks:
    - {name: ops, url: "https://hooks.example.com/x"}
    - {name: ops, url: "https://hooks.example.com/y"}
EOF

kubectl apply -f - >/dev/null <<EOF
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata:
  name: webhooks
spec:
$COMMON
$POOL_A
  notifications:
    webhooks:
    - {name: ops, url: "http://127.0.0.1:8080/hook"}
EOF
expect_eq "$(mp_field webhooks '.spec.notifications.webhooks[0].format')/$(mp_field webhooks '.spec.notifications.webhooks[0].timeout')" \
	JSON/30s "webhook defaults"

reject empty-selector "spec.pools[0].nodeSelector" "must not be empty (an empty selector would select every node)" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector: {}
EOF

reject in-without-values "spec.pools[0].nodeSelector.matchExpressions[0]" "values must be non-empty for In and NotIn" <<EOF
$COMMON
  pools:
  - name: a
    nodeSelector:
      matchExpressions: [{key: drashift.io/pool, operator: In}]
EOF

reject selector-on-ownership-label "spec.pools" "a pool's nodeSelector must not use an ownership label" <<EOF
$COMMON
  ownership:
    devicePlugin: {key: nvidia.com/gpu.deploy.device-plugin}
  pools:
  - name: a
    nodeSelector:
      matchLabels: {nvidia.com/gpu.deploy.device-plugin: "true"}
EOF

reject bad-extended-resource "spec.extendedResource" "must be a domain-prefixed resource name such as example.com/gpu" <<'EOF'
  driver: gpu.example.com
  extendedResource: gpu
  deviceClassNames: [gpu.example.com]
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
EOF

# An update is held to the same rules.
out=$(kubectl patch mp minimal --type=json -p '[{"op":"replace","path":"/spec/pools/0/bakeTime","value":"-1h"}]' 2>&1) &&
	fail "an update to a negative bakeTime was admitted: $out"
expect_contains "$out" "must not be negative" "rejected update"
expect_eq "$(mp_field minimal '.spec.pools[0].bakeTime')" 10m "bakeTime after the rejected update"

# ---- what a plan is cannot change while it holds nodes ----
# Before drashift records status.holdsNodes, the identity may change.
kubectl patch mp minimal --type=merge -p '{"spec":{"driver":"gpu2.example.com"}}' >/dev/null ||
	fail "a driver change on a plan that holds no node was refused"
kubectl patch mp minimal --type=merge -p '{"spec":{"driver":"gpu.example.com"}}' >/dev/null
kubectl patch mp minimal --subresource=status --type=merge -p '{"status":{"holdsNodes":true}}' >/dev/null
# immutable PATCH FIELD: the change is refused, says what to do instead, and the field keeps its value.
immutable() {
	local patch=$1 field=$2 before out
	before=$(mp_field minimal ".spec.$field")
	out=$(kubectl patch mp minimal --type=merge -p "$patch" 2>&1) && fail "$field changed on a plan that holds nodes: $out"
	expect_contains "$out" "spec.$field" "refused $field change (field)"
	expect_contains "$out" "cannot change while the plan holds nodes" "refused $field change (message)"
	expect_contains "$out" "Roll the plan back" "refused $field change (what to do)"
	expect_eq "$(mp_field minimal ".spec.$field")" "$before" "$field after the refused change"
	log "refused $field change: $(printf '%s\n' "$out" | grep -m 1 -o 'spec.[a-zA-Z]*: Forbidden.*holds nodes')"
}
immutable '{"spec":{"driver":"gpu2.example.com"}}' driver
immutable '{"spec":{"extendedResource":"example.com/gpu2"}}' extendedResource
immutable '{"spec":{"deviceClassNames":["gpu.example.com","gpu2.example.com"]}}' deviceClassNames
immutable '{"spec":{"ownership":{"draDriver":{"key":"example.com/dra"}}}}' ownership
immutable '{"spec":{"ownership":{"devicePlugin":{"enabled":"on"}}}}' ownership
# Everything else still changes, and a write to the main resource cannot clear the marker.
kubectl patch mp minimal --type=merge -p '{"spec":{"paused":true}}' >/dev/null || fail "pausing a plan that holds nodes was refused"
kubectl patch mp minimal --type=merge -p '{"status":{"holdsNodes":false},"spec":{"driver":"gpu2.example.com"}}' >/dev/null 2>&1 &&
	fail "the driver changed by clearing status.holdsNodes through the main resource"
# Once drashift records that the plan holds nothing (rolled back), the identity may change again.
kubectl patch mp minimal --subresource=status --type=merge -p '{"status":{"holdsNodes":false}}' >/dev/null
kubectl patch mp minimal --type=merge -p '{"spec":{"driver":"gpu2.example.com"}}' >/dev/null ||
	fail "a driver change after holdsNodes went false was refused"
# A pool's selector cannot change while nodes of the pool are in handover.
kubectl patch mp minimal --subresource=status --type=merge -p '{"status":{"pools":[{"name":"a","nodes":{"inHandover":1}}]}}' >/dev/null
out=$(kubectl patch mp minimal --type=merge -p '{"spec":{"pools":[{"name":"a","nodeSelector":{"matchLabels":{"drashift.io/pool":"z"}}}]}}' 2>&1) &&
	fail "a pool's selector changed while its nodes are in handover: $out"
expect_contains "$out" "nodeSelector cannot change while nodes of the pool are in handover" "refused selector change"
expect_eq "$(mp_field minimal '.spec.pools[0].nodeSelector.matchLabels.drashift\.io/pool')" a "pool a's selector after the refused change"
kubectl patch mp minimal --subresource=status --type=merge -p '{"status":{"pools":[{"name":"a","nodes":{"inHandover":0}}]}}' >/dev/null
kubectl patch mp minimal --type=merge -p '{"spec":{"pools":[{"name":"a","nodeSelector":{"matchLabels":{"drashift.io/pool":"z"}}}]}}' >/dev/null ||
	fail "a selector change with no node in handover was refused"

# ---- status: what the controller writes, through the subresource only ----
kubectl patch mp gpu-migration --subresource=status --type=merge -p '{"status":{
  "phase":"Canary","observedGeneration":1,"poolsOnDRA":"0/2","nodesOnDRA":"1/8","frozen":false,
  "conditions":[{"type":"Progressing","status":"True","reason":"CanaryBaking","message":"pool a bakes until 12:15",
                 "lastTransitionTime":"2026-05-01T12:00:00Z","observedGeneration":1}],
  "pools":[{"name":"a","phase":"Canary","nodes":{"legacy":3,"inHandover":0,"dra":1,"failed":0,"total":4},
            "currentBatch":[],"canaryNodes":["gpu-a-1"],"startTime":"2026-05-01T11:50:00Z","message":"baking"}],
  "handovers":[{"node":"gpu-a-2","pool":"a","direction":"ToDRA","step":"draining-legacy","since":"2026-05-01T12:01:00Z"}],
  "signals":[{"name":"allocationLatencyP95","pool":"a","value":"1.2s","threshold":"5s","samples":31,"verdict":"Pass"}],
  "breach":{"id":"b-1","pool":"a","signal":"allocationLatencyP95","value":"7s","threshold":"5s","time":"2026-05-01T12:05:00Z"}}}' \
	>/dev/null 2>"$TEST_DIR/status.err" || fail "status update refused: $(cat "$TEST_DIR/status.err")"
[ ! -s "$TEST_DIR/status.err" ] || fail "status update warned (a field was pruned): $(cat "$TEST_DIR/status.err")"
expect_eq "$(mp_field gpu-migration '.status.signals[0].verdict')" Pass "signal verdict stored"
out=$(kubectl patch mp gpu-migration --subresource=status --type=merge -p '{"status":{"phase":"Migrating"}}' 2>&1) &&
	fail "an unknown phase was stored: $out"
expect_contains "$out" 'Unsupported value: "Migrating"' "unknown phase"
out=$(kubectl patch mp gpu-migration --subresource=status --type=merge -p '{"status":{"signals":[{"name":"x","verdict":"Maybe"}]}}' 2>&1) &&
	fail "an unknown verdict was stored: $out"
expect_contains "$out" 'Unsupported value: "Maybe"' "unknown verdict"
# The main resource ignores status: users cannot write it.
kubectl patch mp gpu-migration --type=merge -p '{"status":{"phase":"DRA"}}' >/dev/null 2>&1 || true
expect_eq "$(mp_field gpu-migration .status.phase)" Canary "status after a write to the main resource"

# ---- printer columns ----
# (sed, not head: head exiting early would SIGPIPE kubectl and fail the pipeline)
header=$(kubectl get mp | sed -n 1p)
[[ $header =~ ^NAME\ +PHASE\ +POOLS\ +NODES\ +FROZEN\ +AGE$ ]] || fail "kubectl get mp header: '$header'"
row=$(kubectl get mp gpu-migration --no-headers | awk '{ print $1, $2, $3, $4, $5 }')
expect_eq "$row" "gpu-migration Canary 0/2 1/8 false" "kubectl get mp row"
log "kubectl get mp:"
kubectl get mp >&2
log "PASS"
