#!/usr/bin/env bash
# kubectl describe migrationplan reads top-down: the real kubectl describe of
# a plan whose canary bakes, then of the same plan paused. kubectl describe
# prints the spec, then the status with its fields in alphabetical order, so
# the status opens with status.activity: the phase, what drashift waits for
# next, and the action to take. Each pool has its one-line gate beside the
# structured signals, and the conditions say what to run.
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
expect_no_violations
log "PASS"
