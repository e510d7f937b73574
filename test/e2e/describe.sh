#!/usr/bin/env bash
# kubectl describe migrationplan reads top-down: the real kubectl describe of
# a plan whose canary bakes, then of the same plan paused. kubectl describe
# prints the spec, then the status with its fields in alphabetical order, so
# the status opens with status.activity: the phase, what drashift waits for
# next, and the action to take. Each pool has its one-line gate beside the
# structured signals, and the conditions say what to run. Its Events come
# oldest first, checked against the Events' lastTimestamp in the API.
source "$(dirname "$0")/../lib.sh"
testenv_start
start_fleet_plan_baking
activity_is() { case $(plan_field fleet '{.status.activity}') in "$1"*) return 0 ;; esac; return 1; }
wait_for 30 "the status to say the canary bakes" activity_is "Canary: pool a's canary is on DRA and bakes until"

# The status block of kubectl describe: from "Status:" to "Events:".
status_block() { kubectl describe mp fleet | sed -n '/^Status:/,/^Events:/p'; }
block=$(status_block)
log "kubectl describe, the status:"$'\n'"$(echo "$block" | head -25)"
first=$(echo "$block" | sed -n 2p)
case $first in
"  Activity:"*"Canary: pool a's canary is on DRA and bakes until "*"Action: none (kubectl drashift promote fleet a ends the bake now)") ;;
*) fail "the status does not open with what happens next and what to do: '$first'" ;;
esac
grep -q 'Message: .*kubectl drashift status fleet' <<<"$block" || fail "the Ready condition does not say where to look"
# Per pool, its gate in one line, before the signals' details.
gates=$(grep -c '^    Gate: ' <<<"$block")
expect_eq "$gates" 2 "pools with a one-line gate"
gate_line=$(grep -n '^    Gate: ' <<<"$block" | head -1 | cut -d: -f1)
signals_line=$(grep -n '^  Signals:' <<<"$block" | cut -d: -f1)
[ "$gate_line" -lt "$signals_line" ] || fail "the gate summary comes after the signals"

kubectl drashift pause fleet >/dev/null
wait_for 30 "the status to say paused" activity_is "Paused:"
block=$(status_block)
first=$(echo "$block" | sed -n 2p)
expect_contains "$first" "Action: kubectl drashift resume fleet" "the first status line of a paused plan"
grep -q 'Message: .*kubectl drashift resume fleet' <<<"$block" ||
	fail "the Paused condition does not say how to go on:"$'\n'"$(echo "$block" | head -40)"

# ---- the Events, oldest first ----
# kubectl describe sorts them on lastTimestamp alone (whole seconds) with a
# sort that is not stable (controller/kube/events.c says where and what
# drashift does about it): row i of its Events table must be an Event of the
# plan whose lastTimestamp is the i-th oldest; within one second any order.
uid=$(plan_field fleet '{.metadata.uid}')
# The plan's Events from the API: "LASTTIMESTAMP<TAB>REASON<TAB>MESSAGE", oldest first.
api_events() {
	kubectl get events -A --field-selector "involvedObject.uid=$uid" -o json |
		jq -r '.items | sort_by(.lastTimestamp)[] | [.lastTimestamp, .reason, (.message | gsub("^\\s+|\\s+$"; ""))] | @tsv'
}
# The Events table of the real kubectl describe: "REASON<TAB>MESSAGE", top to
# bottom, cut where the header's columns start (an Age may hold spaces: "3s (x2 over 9s)").
describe_events() {
	kubectl describe mp fleet | awk '/^Events:/ { on = 1; next }
		on && /^  Type / { r = index($0, "Reason"); a = index($0, "Age"); m = index($0, "Message"); next }
		on && r && /^  ----/ { next }
		on && r && NF { reason = substr($0, r, a - r); sub(/ +$/, "", reason); print reason "\t" substr($0, m) }
		on && r && !NF { exit }'
}
# The API's Events before and after the describe are the same: no Event came in between.
settled_events() {
	api_events >"$TEST_DIR/events.before"
	describe_events >"$TEST_DIR/events.describe"
	api_events >"$TEST_DIR/events.after"
	cmp -s "$TEST_DIR/events.before" "$TEST_DIR/events.after"
}
wait_for 60 "a kubectl describe with no Event written meanwhile" settled_events
log "the plan's Events in kubectl describe:"$'\n'"$(cat "$TEST_DIR/events.describe")"
expect_eq "$(wc -l <"$TEST_DIR/events.describe")" "$(wc -l <"$TEST_DIR/events.after")" "rows of the Events table (the plan's Events: $(cat "$TEST_DIR/events.after"))"
[ "$(cut -f1 "$TEST_DIR/events.after" | sort -u | wc -l)" -ge 3 ] ||
	fail "the plan's Events fall in fewer than 3 seconds; their order would prove little: $(cat "$TEST_DIR/events.after")"
misplaced=$(awk -F '\t' 'NR == FNR { second[NR] = $1; want[$0]++; next }
	{ key = second[FNR] "\t" $0; if (want[key]-- <= 0) print FNR ": " $0 " (the " FNR "th oldest Event is of " second[FNR] ")" }' \
	"$TEST_DIR/events.after" "$TEST_DIR/events.describe")
[ -z "$misplaced" ] || fail "kubectl describe lists Events out of time order:"$'\n'"$misplaced"$'\n'"the plan's Events, oldest first:"$'\n'"$(cat "$TEST_DIR/events.after")"
expect_no_violations
log "PASS"
