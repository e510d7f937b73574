#!/usr/bin/env bash
# kubectl drashift status PLAN -w, as a person sees it: run by kubectl as a
# plugin (kubectl-drashift on PATH) inside tmux against a migration under way,
# and the captured pane read the way a person reads it: the tree of plan,
# pools and nodes, every line within 120 columns, a node's step with its
# progress bar, the gate's signal lines, and what drashift waits for. Piped,
# -w prints one frame and exits. Then the verbs, typed at a shell in the same
# tmux as a person types them: what pause, a refused promote and resume print,
# their exit status, and pause and resume showing in the live tree.
source "$(dirname "$0")/../lib.sh"
command -v tmux >/dev/null || fail "tmux is missing (tools/lib/common.sh ensure_debian_packages installs it)"
testenv_start
start_fleet_plan_baking

# Piped: one frame, then exit (no escape sequences).
frame=$(timeout 30 kubectl drashift status fleet -w | cat) || fail "status -w piped did not exit with one frame"
expect_contains "$frame" "pool a" "the piped frame"
case $frame in *$'\033'*) fail "the piped frame holds escape sequences" ;; esac

tmux_start "kubectl drashift status fleet -w"
pane() { tmux_pane 0; }
drawn() { pane | grep -q 'pool b'; }
wait_for 30 "the status tree in the tmux pane" drawn
sleep 5 # two redraws at least
screen=$(pane)
log "the pane:"$'\n'"$screen"
grep -q '^migrationplan fleet .*phase Canary' <<<"$screen" || fail "no plan line with its phase"
grep -q '^├─ pool a .*Canary' <<<"$screen" || fail "no pool a branch of the tree"
grep -q '^└─ pool b' <<<"$screen" || fail "no pool b as the last branch"
grep -qE '^│  [├└]─ a-[0-9]+ +canary +dra +\[#####\]' <<<"$screen" || fail "no canary node of pool a on DRA with a full bar"
grep -qE '^│  [├└]─ a-[0-9]+ +legacy +\[\.\.\.\.\.\]' <<<"$screen" || fail "no legacy node of pool a with an empty bar"
grep -qE '^│  │ +allocationLatencyP95 .* limit .* (Pass|Inconclusive|NotJudged)' <<<"$screen" ||
	fail "no signal line for allocationLatencyP95 under pool a's gate"
grep -qE "^waiting for: pool a: the canary's bake to end, (59m[0-9]+s|1h00m) left; then the SLO gate to pass" <<<"$screen" ||
	fail "no 'waiting for' line counting the bake down"
grep -q '^├─ freeze: none' <<<"$screen" || fail "no freeze line"
# Columns as a terminal counts them (wc -L in a UTF-8 locale; awk here counts bytes).
while IFS= read -r line; do
	[ "$(printf '%s' "$line" | LC_ALL=C.UTF-8 wc -L)" -le 120 ] || fail "a line wider than 120 columns: $line"
done <<<"$screen"
grep -q '^action: none' <<<"$screen" || fail "no action line"
# Redrawn in place: after several redraws (one each 2 s) the pane and its
# scrollback hold one tree, not a scroll of frames.
history=$(tmux_pane 0 -S -)
expect_eq "$(grep -c '^migrationplan fleet' <<<"$history")" 1 "plan lines in the pane and its scrollback after redraws"

# ---- the verbs, typed at the shell ----
tmux_type "kubectl drashift pause fleet"
expect_eq "$status" 0 "exit status of pause"
expect_eq "$screen" "migrationplan.drashift.io/fleet: spec.paused false -> true" "what pause printed"
paused_shown() { pane | grep -q '^migrationplan fleet .*PAUSED$'; }
wait_for 30 "PAUSED on the plan line of status -w" paused_shown
tmux_type "kubectl drashift promote fleet c"
expect_eq "$status" 1 "exit status of a promote of a pool the plan does not have"
expect_eq "$screen" "kubectl drashift promote: the plan has no pool c (see spec.pools)" "what the refused promote printed"
tmux_type "kubectl drashift resume fleet"
expect_eq "$status" 0 "exit status of resume"
expect_eq "$screen" "migrationplan.drashift.io/fleet: spec.paused true -> false" "what resume printed"
resumed_shown() { ! pane | grep -q PAUSED; }
wait_for 30 "PAUSED gone from status -w" resumed_shown
log "PASS"
