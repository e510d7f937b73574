#!/usr/bin/env bash
# The README's first command works from a clean state: tools/demo starts the
# cluster, the simulated fleet and drashift, applies a plan, follows it until
# the first pool is on DRA and prints `kubectl describe migrationplan`; the
# simulator saw no double ownership or double allocation; the printed hint
# works, and with it `kubectl drashift report demo` gives a page headless
# chromium loads without a console error, with a lane for each pool and node
# (REPORT_SCREENSHOT=path keeps its screenshot: docs/report.png); tools/demo
# down stops every process it started.
source "$(dirname "$0")/../lib.sh"
export DRASHIFT_DEMO_DIR DEMO_POOLS=a:3x4,b:2x4 DEMO_BAKE=3s DEMO_TIMEOUT=300
DRASHIFT_DEMO_DIR=$(mktemp -d "${TMPDIR:-/tmp}/drashift-demo.XXXXXX")
trap '"$DRASHIFT_ROOT/tools/demo" down >/dev/null 2>&1 || true; rm -rf "$DRASHIFT_DEMO_DIR"' EXIT

out=$("$DRASHIFT_ROOT/tools/demo" 2>"$DRASHIFT_DEMO_DIR/demo.err") || fail "tools/demo failed: $(tail -n 20 "$DRASHIFT_DEMO_DIR/demo.err")"
expect_contains "$out" "pool a is on DRA" "demo output"
expect_contains "$out" "Pools On DRA:" "demo output (kubectl describe migrationplan)"
expect_contains "$out" "PoolPhaseChanged" "demo output (Events in describe)"
expect_contains "$out" "└─ pool b" "demo output (kubectl drashift status's tree)"
# The node table of the last frame lines up: every row has a cell starting
# where each header starts, and nodes on DRA show a full progress bar.
table=$(printf '%s\n' "$out" | awk '/^  NODE / { t = "" } /^  NODE /, /^$/ { t = t $0 "\n" } END { printf "%s", t }')
[ -n "$table" ] || fail "no node table in the demo output"
log "the last node table:"$'\n'"$table"
misaligned=$(printf '%s' "$table" | awk 'NR == 1 { n = 0; for (i = 3; i <= length($0); i++)
		if (substr($0, i, 1) != " " && substr($0, i - 1, 1) == " ") col[++n] = i; next }
	NF { for (c = 1; c <= n; c++) if (substr($0, col[c] - 1, 1) != " " || substr($0, col[c], 1) == " ") { print; break } }')
[ -z "$misaligned" ] || fail "node table rows not under their headers: $misaligned"
printf '%s' "$table" | grep -q '\[#####\]' || fail "no node on DRA with a full progress bar in the node table"

hint=$(printf '%s\n' "$out" | sed -n 's/^ *export //p')
[ -n "$hint" ] || fail "demo printed no 'export KUBECONFIG=...' hint"
eval "export $hint"
expect_eq "$(kubectl get mp demo -o jsonpath='{.status.pools[0].phase}')" DRA "pool a's phase, through the printed kubeconfig"
metrics=$(printf '%s\n' "$out" | sed -n 's/^ *curl -s \(http[^ ]*\) .*/\1/p')
curl -sf "$metrics" >"$DRASHIFT_DEMO_DIR/fleet.metrics" || fail "the fleet's metrics at '$metrics' are unreachable"
grep -qx 'fleetsim_double_ownership_total 0' "$DRASHIFT_DEMO_DIR/fleet.metrics" || fail "double ownership seen during the demo"
grep -qx 'fleetsim_double_allocation_total 0' "$DRASHIFT_DEMO_DIR/fleet.metrics" || fail "double allocation seen during the demo"

# The demo's plan as the report the hint offers, in a real browser: a lane for
# each pool and each node of the demo. Its history is written 2 s after a
# transition: the report is taken once pool a's arrival on DRA is in it.
a_on_dra_recorded() {
	kubectl -n drashift-system get configmap drashift-history-demo -o jsonpath='{.data.transitions}' |
		grep -q '"kind":"pool","pool":"a","from":"[A-Za-z]*","to":"DRA"'
}
wait_for 60 "pool a's arrival on DRA in the demo plan's history" a_on_dra_recorded
kubectl drashift report demo -o "$DRASHIFT_DEMO_DIR/report.html" 2>"$DRASHIFT_DEMO_DIR/report.err" ||
	fail "kubectl drashift report demo failed: $(cat "$DRASHIFT_DEMO_DIR/report.err")"
report_in_chromium "$DRASHIFT_DEMO_DIR/report.html" "$DRASHIFT_DEMO_DIR"
report_lanes_are "$DRASHIFT_DEMO_DIR" a b

pids=$(cat "$DRASHIFT_DEMO_DIR"/run/*.pid "$DRASHIFT_DEMO_DIR"/cluster/run/*.pid)
[ "$(printf '%s\n' "$pids" | wc -l)" -eq 6 ] || fail "demo recorded $(printf '%s\n' "$pids" | wc -l) processes, want 6"
"$DRASHIFT_ROOT/tools/demo" down 2>/dev/null
# A stopped process may linger as a zombie until its new parent reaps it; only
# a process in any other state still runs.
for pid in $pids; do
	state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || true)
	if [ -n "$state" ] && [ "$state" != Z ]; then fail "process $pid still runs (state $state) after tools/demo down"; fi
done
log "PASS"
