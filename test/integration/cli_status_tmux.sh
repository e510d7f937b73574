#!/usr/bin/env bash
# kubectl drashift status PLAN -w, as a person sees it: run by kubectl as a
# plugin (kubectl-drashift on PATH) inside tmux against a migration under way,
# and the captured pane read the way a person reads it: the tree of plan,
# pools and nodes, every line within 120 columns, a node's step with its
# progress bar, the gate's signal lines, and what drashift waits for. Piped,
# -w prints one frame and exits.
source "$(dirname "$0")/../lib.sh"
command -v tmux >/dev/null || fail "tmux is missing (tools/lib/common.sh ensure_debian_packages installs it)"
testenv_start
start_fleet_plan_baking

# Piped: one frame, then exit (no escape sequences).
frame=$(timeout 30 kubectl drashift status fleet -w | cat) || fail "status -w piped did not exit with one frame"
expect_contains "$frame" "pool a" "the piped frame"
case $frame in *$'\033'*) fail "the piped frame holds escape sequences" ;; esac

sock="$TEST_DIR/tmux.sock"
tmux -S "$sock" -f /dev/null new-session -d -x 120 -y 45 -e "PATH=$PATH" -e "KUBECONFIG=$KUBECONFIG" \
	"kubectl drashift status fleet -w"
trap 'rc=$?; set +e; tmux -S "$sock" kill-server 2>/dev/null; (exit $rc); testenv_cleanup' EXIT
pane() { tmux -S "$sock" capture-pane -p -t 0; }
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
history=$(tmux -S "$sock" capture-pane -p -S - -t 0)
expect_eq "$(grep -c '^migrationplan fleet' <<<"$history")" 1 "plan lines in the pane and its scrollback after redraws"
tmux -S "$sock" kill-server
log "PASS"
