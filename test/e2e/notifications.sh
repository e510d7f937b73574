#!/usr/bin/env bash
# Notifications end to end, on the real control plane with the simulated
# fleet and three webhook receivers on loopback (test/webhook_receiver.py):
#   ops   JSON, every event: gets awaitingApproval (pool a), poolDone (pool a),
#         then breach and freeze (pool b), each once, in that order, with the
#         body the README documents;
#   chat  Slack format, only awaitingApproval and poolDone; it answers its
#         first POST 500: drashift retries, the next POST is delivered, and
#         the 500 shows on /metrics;
#   gone  nothing listens on its port: every notification fails after its
#         timeout, counted on /metrics, while the migration goes on;
#   oncall only failure, of a second plan over pool c, whose canary c-0 has a
#         driver that publishes one device fewer than the plugin had: the
#         handover fails after its 5 s deadline (the plan freezes too: a
#         failed step is a breach), and oncall gets failure once.
# The URLs carry a token: it never appears in drashift's log.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:2x4,b:2x4,c:1x4 --faults node=c-0:missing-devices=1
start_operator
kubectl_drashift_on_path
create_namespace team-load
faults=${FLEET_METRICS%/metrics}/faults

# receiver NAME [FAIL_FIRST]: start a receiver; its port in $TEST_DIR/NAME.port, its record in $TEST_DIR/NAME.rec.
receiver() {
	python3 "$DRASHIFT_ROOT/test/webhook_receiver.py" --record "$TEST_DIR/$1.rec" --port-file "$TEST_DIR/$1.port" \
		--fail-first "${2:-0}" &
	listening() { [ -s "$TEST_DIR/$1.port" ]; }
	wait_for 20 "the $1 receiver" listening "$1"
	touch "$TEST_DIR/$1.rec"
}
receiver ops
receiver chat 1
receiver oncall
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TOKEN=T000-B000-s3cr3t-token

kubectl apply -f - >/dev/null <<EOF_PLAN
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: notified}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {minSamples: 2, readyLatencyP95: 3s}
  notifications:
    webhooks:
    - {name: ops, url: "http://127.0.0.1:$(cat "$TEST_DIR/ops.port")/services/$TOKEN"}
    - {name: chat, url: "http://127.0.0.1:$(cat "$TEST_DIR/chat.port")/chat", format: Slack, events: [awaitingApproval, poolDone]}
    - {name: gone, url: "http://127.0.0.1:$dead/services/$TOKEN", timeout: 3s}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 2s
    promotion: Manual
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 1}
    bakeTime: 1h
EOF_PLAN

# received NAME: "STATUS EVENT POOL" per POST the receiver answered.
received() { jq -r '"\(.event) \(.pool // "-")"' < <(cut -d' ' -f3- "$TEST_DIR/$1.rec") | paste -d' ' <(cut -d' ' -f1 "$TEST_DIR/$1.rec") -; }
# body NAME EVENT: the last body of EVENT that NAME answered 200.
body() { grep "^200 " "$TEST_DIR/$1.rec" | cut -d' ' -f3- | jq -c "select(.event == \"$2\")" | tail -n 1; }
got() { received "$1" | grep -q "^200 $2\$"; }
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/operator.log" | tail -n 1)
metric() { curl -sf "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

# ---- 1. waiting for approval ----
baking() { [ -n "$(plan_field notified '{.status.pools[0].bakeStartTime}')" ]; }
wait_for 120 "pool a's canary to reach DRA" baking
dra_load team-load a 2
wait_for 120 "ops to hear that pool a waits for approval" got ops "awaitingApproval a"
b=$(body ops awaitingApproval)
expect_eq "$(jq -r '[.kind, .apiVersion, .plan, .pool, .phase] | join(" ")' <<<"$b")" \
	"MigrationPlanNotification drashift.io/v1alpha1 notified a Canary" "the awaitingApproval body"
expect_eq "$(jq -r .action <<<"$b")" "kubectl drashift promote notified a" "the awaitingApproval action"
expect_eq "$(jq -r 'has("text")' <<<"$b")" false "a JSON webhook's body has no Slack text"
expect_eq "$(grep -c ' application/json ' "$TEST_DIR/ops.rec")" "$(wc -l <"$TEST_DIR/ops.rec")" "Content-Type of every POST"
expect_eq "$(jq -r .id <<<"$b")" "notified/awaitingApproval/a/$(jq -r .id <<<"$b" | cut -d/ -f4)" "the id"
# chat answered 500 first: drashift retried and the same notification got through.
wait_for 60 "chat to get awaitingApproval after its 500" got chat "awaitingApproval a"
expect_eq "$(received chat | head -n 2 | tr '\n' ,)" "500 awaitingApproval a,200 awaitingApproval a," "what chat answered"
expect_eq "$(body chat awaitingApproval | jq -r .text)" \
	"drashift: plan notified: pool a waits for approval (canary baked, SLO gate passed). Action: kubectl drashift promote notified a" \
	"chat's Slack text"
expect_eq "$(metric 'drashift_notification_attempts_total{plan="notified",webhook="chat",code="500"}')" 1 "chat's 500 on /metrics"
expect_eq "$(metric 'drashift_notifications_total{plan="notified",webhook="chat",event="awaitingApproval",result="delivered"}')" 1 \
	"chat's delivery on /metrics"
log "step 1: awaitingApproval delivered to ops, and to chat after one 500"

# ---- 2. approved: pool done, while the gone webhook fails ----
kubectl drashift promote notified a >/dev/null
wait_for 120 "ops to hear that pool a is done" got ops "poolDone a"
expect_eq "$(plan_field notified '{.status.pools[0].phase}')" DRA "pool a's phase"
b=$(body ops poolDone)
expect_eq "$(jq -r '[.pool, .phase] | join(" ")' <<<"$b")" "a DRA" "the poolDone body"
case $(jq -r .previousPhase <<<"$b") in Canary | Expanding) ;; *) fail "the poolDone body's previousPhase: $b" ;; esac
wait_for 60 "chat to hear that pool a is done" got chat "poolDone a"
failed() { [ "$(metric 'drashift_notifications_total{plan="notified",webhook="gone",event="poolDone",result="failed"}')" = 1 ]; }
wait_for 60 "the gone webhook's failures on /metrics" failed
expect_eq "$(metric 'drashift_notifications_total{plan="notified",webhook="gone",event="awaitingApproval",result="failed"}')" 1 \
	"the gone webhook's first failure on /metrics"
[ "$(metric 'drashift_notification_attempts_total{plan="notified",webhook="gone",code="error"}')" -ge 4 ] ||
	fail "the gone webhook was not retried: $(curl -sf "http://127.0.0.1:$port/metrics" | grep notification_attempts)"
log "step 2: pool a reached DRA with a dead webhook; its failures counted"

# ---- 3. a breach freezes the plan ----
b_baking() { plan_field notified '{.status.pools[1].message}' | grep -q baking; }
wait_for 120 "pool b's canary on DRA" b_baking
curl -sf -X POST --data 'pool=b:prepare-delay=6s' "$faults" >/dev/null || fail "the simulator refused the fault"
dra_load team-load b 3
wait_for 180 "ops to hear of the breach" got ops "breach b"
wait_for 30 "ops to hear of the freeze" got ops "freeze b"
breach=$(plan_field notified '{.status.breach.id}')
b=$(body ops breach)
expect_eq "$(jq -r '[.breach.id, .breach.pool, .breach.signal, .breach.threshold] | join(" ")' <<<"$b")" \
	"$breach b readyLatencyP95 3000ms" "the breach body"
expect_eq "$(jq -r .breach.value <<<"$b")" "$(plan_field notified '{.status.breach.value}')" "the breach's value"
expect_eq "$(body ops freeze | jq -r .breach.id)" "$breach" "the freeze body's breach"
expect_eq "$(body ops freeze | jq -r .action)" \
	"find the cause, then kubectl drashift acknowledge notified, or kubectl drashift rollback notified b" "the freeze action"

log "step 3: breach and freeze delivered with breach $breach"

# ---- 4. a node fails its handover: failure ----
kubectl apply -f - >/dev/null <<EOF_PLAN
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: failing}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  notifications:
    webhooks:
    - {name: oncall, url: "http://127.0.0.1:$(cat "$TEST_DIR/oncall.port")/oncall", events: [failure]}
  pools:
  - name: c
    nodeSelector: {matchLabels: {drashift.io/pool: c}}
    canary: {nodes: 1}
    bakeTime: 1h
    deadlines: {handover: 5s}
EOF_PLAN
wait_for 90 "oncall to hear that pool c failed" got oncall "failure c"
# Which wait ran out first (allocatable to drop to 0, or the driver's devices) depends on the
# machine's pace; either is a failed handover.
expect_eq "$(kubectl get node c-0 -o jsonpath='{.metadata.annotations.drashift\.io/step}')" failed "c-0's step"
[ -n "$(kubectl get node c-0 -o jsonpath='{.metadata.annotations.drashift\.io/failure}')" ] || fail "c-0 has no failure record"
b=$(body oncall failure)
expect_eq "$(jq -r '[.plan, .pool, .phase, .previousPhase] | join(" ")' <<<"$b")" "failing c Frozen Canary" "the failure body"
expect_contains "$(jq -r .message <<<"$b")" "1 node(s) failed their handover; the pool is Frozen: " "the failure's message"
expect_eq "$(jq -r .action <<<"$b")" \
	"read the failed nodes' drashift.io/failure annotation and Events, fix the cause, or kubectl drashift rollback failing c" \
	"the failure's action"
log "step 4: failure delivered for pool c"

# ---- 5. each change once, in order; chat only what it asked for; no token in the log ----
sleep 5 # anything sent twice would arrive now
expect_eq "$(received ops | tr '\n' ,)" "200 awaitingApproval a,200 poolDone a,200 breach b,200 freeze b," "what ops received"
expect_eq "$(received chat | tr '\n' ,)" "500 awaitingApproval a,200 awaitingApproval a,200 poolDone a," "what chat received"
expect_eq "$(received oncall | tr '\n' ,)" "200 failure c," "what oncall received"
! grep -q s3cr3t "$TEST_DIR/operator.log" || fail "the webhook URL's token is in drashift's log: $(grep -m 1 s3cr3t "$TEST_DIR/operator.log")"
grep -q 'msg="notification not delivered".*webhook=gone.*host=127.0.0.1:'"$dead" "$TEST_DIR/operator.log" ||
	fail "no log line for the gone webhook's failure"
expect_no_violations
log "step 5: every change notified once; failures counted; no token logged"
