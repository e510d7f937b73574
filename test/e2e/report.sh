#!/usr/bin/env bash
# The migration report, as a person gets it: a demo-like migration on the
# simulated fleet (tenant jobs through the device plugin and through DRA), a
# breach that freezes the plan and its acknowledgement through the plugin,
# then `kubectl drashift report demo -o report.html`:
#   1. the operator keeps the plan's history in drashift-system/drashift-history-demo,
#      and a restarted operator goes on with it;
#   2. the page is self-contained (no script, no external URL);
#   3. Debian's chromium, headless, loads it without a console error and its
#      DOM has a lane for each pool and each node, the freeze band, a chart
#      per judged signal and the DRA-against-legacy rows; a screenshot is taken
#      (REPORT_SCREENSHOT=path keeps a copy; docs/report.png is demo.sh's);
#   4. a history a person broke: an unreadable record is left out and said so
#      on the page; an oversized one is cut to its cap by the operator, newest
#      records kept; a wrong format is refused with the field named.
source "$(dirname "$0")/../lib.sh"
PLUGIN=("${DRASHIFT_CONTROLLER:?}" kubectl)
testenv_start
install_drashift
start_fleet --pools a:3x4,b:2x4 --workload team-a,team-b --rate 0.5/s --duration 30m --job-duration 10s --mix 0.5
start_operator

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: demo}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo:
    minSamples: 5
    allocationLatencyP95: 30s
    readyLatencyP95: 30s
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 3s
    maxUnavailable: 2
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 1}
    bakeTime: 1h
EOF_PLAN

a_dra() { [ "$(plan_field demo '{.status.pools[0].phase}')" = DRA ]; }
wait_for 300 "pool a to reach DRA" a_dra

# A threshold no real allocation meets: the plan freezes; then a person puts it back and acknowledges.
kubectl patch mp demo --type merge -p '{"spec":{"slo":{"allocationLatencyP95":"1ms"}}}' >/dev/null
frozen() { [ "$(plan_field demo '{.status.frozen}')" = true ]; }
wait_for 120 "the breach to freeze the plan" frozen
kubectl patch mp demo --type merge -p '{"spec":{"slo":{"allocationLatencyP95":"30s"}}}' >/dev/null
"${PLUGIN[@]}" acknowledge demo >/dev/null || fail "kubectl drashift acknowledge demo failed"
thawed() { [ "$(plan_field demo '{.status.frozen}')" = false ]; }
wait_for 60 "the acknowledgement to lift the freeze" thawed

# ---- 1. the history ----
history() { kubectl -n drashift-system get configmap drashift-history-demo -o "jsonpath={.data.$1}"; }
acknowledged() { history transitions | grep -q '"kind":"acknowledge"'; }
wait_for 60 "the acknowledgement in the plan's history" acknowledged
t=$(history transitions)
for want in '"kind":"pool","pool":"a","from":"[A-Za-z]*","to":"DRA"' '"kind":"freeze","pool":"[ab]","signal":"allocationLatencyP95"' \
	'"kind":"node","pool":"a","node":"a-[0-9]","from":"verified","to":"dra"'; do
	printf '%s\n' "$t" | grep -q "$want" || fail "no record like $want in the history's transitions: $t"
done
placed() { history comparison | jq -e '.pools.a.dra.placed > 0 and .pools.a.legacy.placed > 0' >/dev/null; }
wait_for 60 "jobs of both paths counted in the comparison" placed
[ "$(history samples | wc -l)" -gt 2 ] || fail "fewer than 3 signal samples in the history: $(history samples)"
# A restarted operator reads the history and goes on with it: no node is seen for the first time again.
first_sights() { history transitions | jq -s '[.[] | select(.kind == "node" and (has("from") | not))] | length'; }
before=$(first_sights)
[ "$before" -eq "$(kubectl get nodes -l drashift.io/pool -o name | wc -l)" ] || fail "$before first sights of nodes, want one per node"
samples_before=$(history samples | wc -l)
kill "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "drashift-controller did not exit 0 on SIGTERM"
start_operator
sampled_again() { [ "$(history samples | wc -l)" -gt "$samples_before" ]; }
wait_for 90 "the restarted operator to add to the history" sampled_again
expect_eq "$(first_sights)" "$before" "first sights of nodes after a restart"
kubectl -n drashift-system get configmap drashift-history-demo -o jsonpath='{.metadata.ownerReferences[0].kind}' |
	grep -qx MigrationPlan || fail "the history is not owned by its plan (it would outlive it)"

# ---- 2. the page ----
report="$TEST_DIR/report.html"
"${PLUGIN[@]}" report demo -o "$report" 2>"$TEST_DIR/report.err" || fail "report failed: $(cat "$TEST_DIR/report.err")"

# ---- 3. in a real browser ----
report_in_chromium "$report" "$TEST_DIR"
report_lanes_are "$TEST_DIR" a b
grep -q 'class="freeze"' "$TEST_DIR/dom.html" || fail "no freeze band in the timeline"
for sig in allocationLatencyP95 readyLatencyP95 allocationFailurePercent; do
	grep -q "data-signal=\"$sig\"" "$TEST_DIR/dom.html" || fail "no chart for $sig"
done
for row in a:legacy a:dra b:legacy b:dra; do
	grep -q "data-row=\"$row\"" "$TEST_DIR/dom.html" || fail "no comparison row $row"
done

# ---- 4. a broken history: the operator stops first, so that it does not write it again meanwhile ----
kill "$OPERATOR_PID"
wait "$OPERATOR_PID" || true
kubectl -n drashift-system patch configmap drashift-history-demo --type merge \
	-p "{\"data\":{\"transitions\":$(history transitions | jq -Rs '. + "not a record\n"')}}" >/dev/null
"${PLUGIN[@]}" report demo -o "$TEST_DIR/broken.html" 2>/dev/null || fail "a report with one unreadable record failed"
grep -q '1 records of the history could not be read' "$TEST_DIR/broken.html" || fail "the page does not say a record was left out"
# An oversized history (900 kB of records, over the 384 KiB its transitions may hold): a restarted
# operator reads it, keeps the newest records within the cap and goes on.
awk 'BEGIN { for (i = 1; i <= 12000; i++) printf "{\"t\":%d,\"kind\":\"node\",\"pool\":\"a\",\"node\":\"ghost-%05d\",\"to\":\"legacy\"}\n", 1764441600000 + i, i }' |
	jq -Rs '{data: {transitions: .}}' >"$TEST_DIR/oversized.json"
kubectl -n drashift-system patch configmap drashift-history-demo --type merge --patch-file "$TEST_DIR/oversized.json" >/dev/null
[ "$(history transitions | wc -c)" -gt 800000 ] || fail "the oversized history was not stored"
start_operator
trimmed() { [ "$(history transitions | wc -c)" -le 393216 ]; }
wait_for 120 "the restarted operator to bring the history under its cap" trimmed
t=$(history transitions)
expect_contains "$t" '"node":"ghost-12000"' "the newest records, kept"
case $t in *'"node":"ghost-00001"'*) fail "the oldest record survived the cap" ;; esac
kill "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "drashift-controller did not exit 0 on SIGTERM after reading an oversized history"
"${PLUGIN[@]}" report demo -o "$TEST_DIR/oversized.html" 2>/dev/null || fail "the report of a history at its cap failed"
# A plan drashift has not recorded yet (the operator is stopped): the page says so.
kubectl get mp demo -o json | jq '{apiVersion, kind, metadata: {name: "quiet"}, spec}' | kubectl create -f - >/dev/null
"${PLUGIN[@]}" report quiet -o "$TEST_DIR/quiet.html" 2>/dev/null || fail "the report of a plan without history failed"
grep -q 'drashift has recorded no history for this plan yet' "$TEST_DIR/quiet.html" || fail "the page of a plan without history does not say so"
if out=$("${PLUGIN[@]}" report nosuchplan -o "$TEST_DIR/none.html" 2>&1); then fail "a report of a missing plan succeeded"; fi
expect_contains "$out" "migrationplan nosuchplan not found" "the report of a missing plan"
kubectl -n drashift-system patch configmap drashift-history-demo --type merge -p '{"data":{"format":"v0"}}' >/dev/null
if out=$("${PLUGIN[@]}" report demo -o "$TEST_DIR/refused.html" 2>&1); then fail "a history in an unknown format was read"; fi
expect_contains "$out" 'data.format: "v0", want "drashift.io/history/v1"' "the refusal"
log "PASS"
