#!/usr/bin/env bash
# Maintenance windows end to end, on the real control plane with the
# simulated fleet: a plan created with a window that opens 40 s later and
# lasts 30 s (UTC, today's weekday):
#   - before the window no handover starts, and status.window (and kubectl
#     drashift status) says when it opens;
#   - inside it handovers start (the canary, then the expansion);
#   - every handover begun inside it finishes, also one still draining a
#     device-plugin job when it closes, and none starts after it closes
#     (status.window then names the next opening, a week on);
#   - outside the window a rollback proceeds to the device plugin.
# Start times are read from the operator's "node step" log lines that leave
# legacy: what drashift did, not what it says.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:10x4
start_operator
kubectl_drashift_on_path
create_namespace team-load
# A device-plugin job on a-1, the first node after the canary, running past
# the window's end: a-1's handover, begun inside the window, waits for it to
# finish (drain policy Wait) and so is still under way when the window closes.
kubectl -n team-load create -f - >/dev/null <<'EOF_POD'
apiVersion: v1
kind: Pod
metadata: {name: holder, annotations: {fleetsim/duration: 80s}}
spec:
  nodeName: a-1
  containers: [{name: main, image: registry.invalid/job, resources: {limits: {example.com/gpu: 1}}}]
EOF_POD
holder_running() { [ "$(kubectl -n team-load get pod holder -o jsonpath='{.status.phase}')" = Running ]; }
wait_for 60 "the device-plugin job on a-1 to run" holder_running

open_at=$(($(date +%s) + 40))
close_at=$((open_at + 30))
day=$(date -u -d "@$open_at" +%A)
start=$(date -u -d "@$open_at" +%H:%M:%S)
end=$(date -u -d "@$close_at" +%H:%M:%S)
log "window: $day $start to $end UTC"
kubectl apply -f - >/dev/null <<EOF_PLAN
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: win}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 2}
  windows:
  - {days: [$day], start: "$start", end: "$end", timeZone: UTC}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 0s
    maxUnavailable: 1
EOF_PLAN

# ---- before the window ----
closed() { [ "$(plan_field win '{.status.window.open}')" = false ]; }
wait_for 30 "status.window to show the window closed" closed
expect_eq "$(plan_field win '{.status.window.nextOpenTime}')" "$(date -u -d "@$open_at" +%Y-%m-%dT%H:%M:%SZ)" \
	"status.window.nextOpenTime"
waits() { plan_field win '{.status.pools[0].message}' | grep -q 'outside the maintenance windows'; }
wait_for 30 "pool a to say it waits for the window" waits
expect_contains "$(plan_field win '{.status.pools[0].message}')" \
	"no handover starts until $(date -u -d "@$open_at" +%Y-%m-%dT%H:%M:%SZ)" "pool a's message before the window"
expect_contains "$(kubectl drashift status win)" \
	"window: closed, no handover starts; next opens $(date -u -d "@$open_at" +%Y-%m-%dT%H:%M:%SZ)" "kubectl drashift status"
sleep $((open_at - $(date +%s) - 3))
expect_eq "$(plan_field win '{.status.nodesOnDRA}')" 0/10 "nodes on DRA just before the window"
# shellcheck disable=SC2016
starts() { awk '/msg="node step"/ && /plan=win/ && /from=legacy/ { sub(/^time=/, "", $1); print $1 }' "$TEST_DIR/operator.log"; }
expect_eq "$(starts)" "" "handovers started before the window"

# ---- inside the window ----
opened() { [ "$(plan_field win '{.status.window.open}')" = true ]; }
wait_for 20 "the window to open" opened
expect_eq "$(plan_field win '{.status.window.closeTime}')" "$(date -u -d "@$close_at" +%Y-%m-%dT%H:%M:%SZ)" \
	"status.window.closeTime"
expect_contains "$(kubectl drashift status win)" "window: open until $(date -u -d "@$close_at" +%Y-%m-%dT%H:%M:%SZ)" \
	"kubectl drashift status inside the window"
canary_dra() { [ "$(plan_field win '{.status.pools[0].nodes.dra}')" -ge 1 ]; }
wait_for 30 "the canary to reach DRA inside the window" canary_dra
dra_load team-load a 2

# ---- after the window ----
past_close() { [ "$(date +%s)" -gt "$close_at" ] && closed; }
wait_for 40 "the window to close" past_close
expect_eq "$(kubectl get node a-1 -o jsonpath='{.metadata.annotations.drashift\.io/step}')" draining \
	"a-1's step as the window closes (its job still runs)"
settled() { [ "$(plan_field win '{.status.pools[0].nodes.inHandover}')" = 0 ]; }
wait_for 120 "handovers begun in the window to finish" settled
sleep 8 # a pool that ignored the window would start its next node now
started=$(starts)
log "handovers started at: $(echo $started)"
[ -n "$started" ] || fail "no handover started inside the window"
for t in $started; do
	s=$(date -u -d "$t" +%s)
	[ "$s" -ge "$open_at" ] && [ "$s" -lt "$close_at" ] ||
		fail "a handover started at $t, outside the window $(date -u -d "@$open_at" +%T)-$(date -u -d "@$close_at" +%T)"
done
n_started=$(echo "$started" | wc -l)
expect_eq "$(kubectl -n team-load get pod holder -o jsonpath='{.status.phase}')" Succeeded "a-1's job ran to its end"
expect_eq "$(kubectl get node a-1 -o jsonpath='{.metadata.labels.drashift\.io/dra-driver}')" true \
	"a-1, begun inside the window, finished after it"
expect_eq "$(plan_field win '{.status.pools[0].nodes.dra}')" "$n_started" "nodes on DRA: every handover begun finished"
[ "$n_started" -lt 10 ] || fail "all 10 nodes moved in a 30 s window with maxUnavailable 1: the test proves nothing about the close"
expect_eq "$(plan_field win '{.status.window.nextOpenTime}')" \
	"$(date -u -d "@$((open_at + 7 * 86400))" +%Y-%m-%dT%H:%M:%SZ)" "next opening, a week on"
expect_contains "$(plan_field win '{.status.pools[0].message}')" "outside the maintenance windows" "pool a's message after the window"
expect_no_violations
log "window: $n_started handover(s) started inside it and finished; none after"

# ---- a rollback outside the window ----
kubectl patch mp win --type=merge -p '{"spec":{"rollback":{"pools":["a"]}}}' >/dev/null
legacy() { [ "$(plan_field win '{.status.pools[0].phase}')" = Legacy ]; }
wait_for 180 "pool a to roll back outside the window" legacy
expect_eq "$(plan_field win '{.status.nodesOnDRA}')" 0/10 "nodes on DRA after the rollback"
expect_no_violations
log "rollback outside the window: pool a back on the device plugin"
