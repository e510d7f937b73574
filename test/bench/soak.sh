#!/usr/bin/env bash
# Memory over time (tools/bench soak; CI runs 3 minutes of it as the e2e test
# `soak`): a migration loop with churn, and drashift-controller's memory and
# caches sampled as it runs.
#
#   soak.sh [--minutes N] [--interval SECONDS]
#
# The real control plane, fleetsim with pools a and b (2 nodes of 4 GPUs
# each), a job every second in two tenant namespaces (half with a
# ResourceClaimTemplate, half asking for the extended resource, 6 s each, so
# about 6 of the 16 GPUs are busy and the pods that wait while nodes are
# cordoned drain afterwards; finished pods deleted every 10 s, as a Job's
# ttlSecondsAfterFinished would, so the objects present stay about the same;
# with 15 s jobs the 15 GPUs they need left a backlog that grew by about 20
# pods a minute), and drashift-controller with its shipped RBAC. A plan migrates both pools
# to DRA, rolls them both back, migrates them again, and so on for N minutes
# (default 60). Every --interval seconds (default 60) a row: the controller's
# RSS (and its anonymous part, and what malloc holds in use and free), the
# objects and bytes each of its caches holds (/metrics), the objects
# the API server holds, and the migrations and rollbacks completed so far.
#
# When the minutes are up, job submission has stopped: once the last jobs
# are gone, every cache must hold exactly the objects the API server has (a
# cache that grows beyond the objects present is a leak), and the loop must
# have completed at least one migration (a loop that stalls measures
# nothing). Either failing exits non-zero. The RSS figures are printed, with
# their slope over the run, never judged: the machine is shared.
TEST_NAME=${TEST_NAME:-soak}
source "$(dirname "$0")/../lib.sh"

minutes=60 interval=60
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=${2:?--minutes wants a number}; shift 2 ;;
	--interval) interval=${2:?--interval wants seconds}; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) fail "unknown argument '$1' (try --help)" ;;
	esac
done
[[ $minutes =~ ^[1-9][0-9]*$ ]] || fail "--minutes wants a positive number, not '$minutes'"
[[ $interval =~ ^[1-9][0-9]*$ ]] || fail "--interval wants a positive number of seconds, not '$interval'"

testenv_start
install_drashift
create_namespace soak-a
create_namespace soak-b
start_fleet --pools a:2x4,b:2x4 --workload soak-a,soak-b --rate 1/s --mix 0.5 --job-duration 6s \
	--duration "${minutes}m"
start_operator

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: soak}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  # The soak measures memory, not the gate: a gate that judges a few samples
  # and tolerates what churn on a shared machine produces.
  slo: {minSamples: 2, maxAllocationFailurePercent: 100, maxDriverErrors: 1000, stuckThreshold: 1h}
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 5s
  - name: b
    nodeSelector: {matchLabels: {drashift.io/pool: b}}
    canary: {nodes: 1}
    bakeTime: 5s
EOF_PLAN

port() { # the metrics port, once the operator has logged it (fails before)
	local p
	p=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/operator.log" | tail -n 1)
	[ -n "$p" ] && echo "$p"
}
wait_for 60 "the operator's metrics endpoint" port
metrics_url="http://127.0.0.1:$(port)/metrics"
synced() { [ "$(curl -sf "$metrics_url" | awk '$1 ~ /^drashift_cache_synced/ && $2 != 1 { n++ } END { print n + 0 }')" = 0 ]; }
wait_for 60 "the operator's caches to sync" synced

# The caches and the API resources they mirror, in the order of the table.
kinds=(nodes pods resourceclaims resourceslices deviceclasses migrationplans)
cache_field() { # cache_field METRIC RESOURCE: the value of METRIC{resource="RESOURCE"}
	awk -v m="$1" -v r="resource=\"$2\"" 'index($1, m "{") == 1 && index($1, r) { print $2; found = 1 } END { if (!found) print "-" }' \
		"$TEST_DIR/metrics.now"
}
api_count() { kubectl get "$1" -A --no-headers 2>/dev/null | wc -l; }
rss_kib() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$OPERATOR_PID/status"; } # rss_kib VmRSS|RssAnon
malloc_kib() { # malloc_kib STATE: drashift_malloc_bytes{state="STATE"} in KiB
	awk -v s="state=\"$1\"" 'index($1, "drashift_malloc_bytes{") == 1 && index($1, s) { printf "%d\n", $2 / 1024; found = 1 }
		END { if (!found) print "-" }' "$TEST_DIR/metrics.now"
}

# The migration loop runs in the background and logs each end state it reaches.
cycles_log=$TEST_DIR/cycles
: >"$cycles_log"
loop() {
	phases() { plan_field soak '{range .status.pools[*]}{.phase}{" "}{end}'; }
	while :; do
		until [ "$(plan_field soak '{.status.phase}')" = DRA ]; do sleep 1; done
		echo migrated >>"$cycles_log"
		kubectl patch mp soak --type=merge -p '{"spec":{"rollback":{"pools":["a","b"]}}}' >/dev/null
		until [ "$(phases)" = "Legacy Legacy " ]; do sleep 1; done
		echo "rolled back" >>"$cycles_log"
		kubectl patch mp soak --type=merge -p '{"spec":{"rollback":{"pools":[]}}}' >/dev/null
	done
}
loop &
LOOP_PID=$!
sweep() { # finished pods go, as ttlSecondsAfterFinished would have them go; their claims follow
	while :; do
		kubectl delete pods -A --field-selector=status.phase==Succeeded --wait=false >/dev/null 2>&1 || true
		sleep 10
	done
}
sweep &

# The plan's history (controller/plan_history.h) grows with every transition
# and sample until its caps: drashift holds what this ConfigMap holds.
history_kb() {
	kubectl -n drashift-system get configmap drashift-history-soak -o json 2>/dev/null |
		jq '[.data // {} | .[] | length] | add // 0 | . / 1024 | floor' 2>/dev/null || echo "?"
}

sample() { # sample ELAPSED: one row of the table
	curl -sf "$metrics_url" >"$TEST_DIR/metrics.now" || fail "GET $metrics_url failed"
	local row k
	row=$(printf '%6s %9s %7s %7s %7s' "$1" "$(rss_kib VmRSS)" "$(rss_kib RssAnon)" "$(malloc_kib in_use)" "$(malloc_kib free)")
	for k in "${kinds[@]}"; do
		row+=$(printf ' %9s' "$(cache_field drashift_cache_objects "$k")/$(api_count "$k")")
	done
	row+=$(printf ' %10s %7s %4s %4s' "$(awk '$1 ~ /^drashift_cache_bytes\{/ { s += $2 } END { print s + 0 }' "$TEST_DIR/metrics.now")" \
		"$(history_kb)" "$(grep -c '^migrated' "$cycles_log")" "$(grep -c '^rolled back' "$cycles_log")")
	echo "$row"
}

echo "# drashift-controller over ${minutes} min of migrations and rollbacks with jobs arriving (1/s)"
echo "# cache/API: objects in drashift's cache / objects the API server lists now (churn makes them differ briefly)"
echo "# anon: the part of RSS that is not the binary's and libraries' pages (RssAnon, KiB): the heap, mapped blocks, stacks"
echo "# inUse, free: KiB malloc has given out and holds unused (drashift_malloc_bytes)"
echo "# histKiB: the plan's history as stored (drashift-system/drashift-history-soak), its transitions and samples capped at 384 and 256 KiB"
printf '%6s %9s %7s %7s %7s' "s" "RSS KiB" "anon" "inUse" "free"
for k in "${kinds[@]}"; do printf ' %9s' "${k:0:9}"; done
printf ' %10s %7s %4s %4s\n' "cacheBytes" "histKiB" "mig" "back"
start=$SECONDS
sample 0 | tee "$TEST_DIR/samples"
end=$((start + minutes * 60))
while [ $SECONDS -lt $end ]; do
	next=$((SECONDS + interval))
	[ $next -le $end ] || next=$end
	while [ $SECONDS -lt $next ]; do
		kill -0 "$OPERATOR_PID" 2>/dev/null || fail "drashift-controller exited (see $TEST_DIR/operator.log)"
		kill -0 "$LOOP_PID" 2>/dev/null || fail "the migration loop stopped"
		sleep 1
	done
	sample $((SECONDS - start)) | tee -a "$TEST_DIR/samples"
done
kill "$LOOP_PID" 2>/dev/null || true

# The slopes of RSS, its anonymous part and the bytes in use over the run (least squares over
# the samples), KiB per minute.
slope() { # slope NAME COLUMN
	awk -v name="$1" -v c="$2" 'NR > 0 { x[NR] = $1 / 60; y[NR] = $c; n = NR }
	END {
		if (n < 2) { print name ": one sample only"; exit }
		for (i = 1; i <= n; i++) { sx += x[i]; sy += y[i] }
		mx = sx / n; my = sy / n
		for (i = 1; i <= n; i++) { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) ^ 2 }
		printf "%s: first %d KiB, last %d KiB, slope %+.1f KiB/min over %d samples\n", name, y[1], y[n], sxx ? sxy / sxx : 0, n
	}' "$TEST_DIR/samples"
}
slope rss 2
slope anon 3
slope "in use" 4

migrations=$(grep -c '^migrated' "$cycles_log" || true)
[ "$migrations" -ge 1 ] || fail "no migration completed in ${minutes} min (see $TEST_DIR/operator.log)"

# Jobs stopped arriving when the minutes were up; once the last ones are
# gone the caches must match the API server exactly.
matched() {
	curl -sf "$metrics_url" >"$TEST_DIR/metrics.now" || return 1
	local k
	for k in "${kinds[@]}"; do
		[ "$(cache_field drashift_cache_objects "$k")" = "$(api_count "$k")" ] || return 1
	done
}
deadline=$((SECONDS + 120))
until matched; do
	[ $SECONDS -lt $deadline ] && { sleep 1; continue; }
	for k in "${kinds[@]}"; do
		log "$k: cache $(cache_field drashift_cache_objects "$k"), API $(api_count "$k")"
	done
	fail "a cache holds other than the objects present, 2 min after the churn stopped"
done
echo "caches: each holds exactly the objects the API server lists (${kinds[*]})"
expect_no_violations
