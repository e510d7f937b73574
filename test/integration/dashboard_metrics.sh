#!/usr/bin/env bash
# The Grafana dashboard (manifests/grafana-dashboard.json) queries only what
# drashift exports: every PromQL expression is valid (promtool checks it as a
# recording rule), and every drashift_* metric it names is a family on the
# /metrics of a running drashift-controller that has migrated a pool on the
# simulated fleet (so the per-plan, per-pool and histogram families exist).
source "$(dirname "$0")/../lib.sh"
command -v promtool >/dev/null || fail "promtool is missing (Debian package prometheus; tools/test installs it)"
DASHBOARD="$DRASHIFT_ROOT/manifests/grafana-dashboard.json"
jq -e '.panels | length > 0' "$DASHBOARD" >/dev/null || fail "$DASHBOARD is not a dashboard with panels"

testenv_start
install_drashift
start_fleet --pools a:2x4,b:1x4
start_operator
apply_fleet_plan
wait_for 20 "the metrics endpoint" grep -q 'msg="http server listening"' "$TEST_DIR/operator.log"
port=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/operator.log" | head -n 1)
# A step duration is observed once the canary has left a step the history saw it enter.
stepped() { curl -sf "http://127.0.0.1:$port/metrics" | grep -q '^drashift_node_step_duration_seconds_count{'; }
wait_for 120 "a handover step duration on /metrics" stepped
curl -sf "http://127.0.0.1:$port/metrics" >"$TEST_DIR/metrics"

# Every expression, with Grafana's variables replaced, is valid PromQL.
jq -r '.. | objects | select(has("expr")) | .expr' "$DASHBOARD" >"$TEST_DIR/exprs"
[ -s "$TEST_DIR/exprs" ] || fail "the dashboard has no queries"
{
	echo 'groups:'
	echo '- name: dashboard'
	echo '  rules:'
	i=0
	while IFS= read -r expr; do
		i=$((i + 1))
		expr=${expr//\$__rate_interval/5m}
		expr=${expr//\$plan/.*}
		expr=${expr//\$pool/.*}
		expr=${expr//\$signal/.*}
		printf '  - record: dashboard:query_%d\n    expr: %s\n' "$i" "$(jq -Rn --arg e "$expr" '$e')"
	done <"$TEST_DIR/exprs"
} >"$TEST_DIR/rules.yaml"
out=$(promtool check rules "$TEST_DIR/rules.yaml" 2>&1) || fail "promtool rejects a dashboard query: $out"

# Every drashift_* name is an exported family (histogram series by their family).
families=$(awk '$1 == "#" && $2 == "TYPE" { print $3 " " $4 }' "$TEST_DIR/metrics")
checked=0
for name in $(grep -oE 'drashift_[a-zA-Z0-9_]+' "$TEST_DIR/exprs" | sort -u); do
	family=$name type=
	case $name in *_bucket | *_sum | *_count) family=${name%_*} ;; esac
	type=$(printf '%s\n' "$families" | awk -v f="$family" '$1 == f { print $2 }')
	if [ "$family" != "$name" ] && [ "$type" != histogram ] && [ "$type" != summary ]; then
		family=$name
		type=$(printf '%s\n' "$families" | awk -v f="$family" '$1 == f { print $2 }')
	fi
	[ -n "$type" ] || fail "the dashboard queries $name, which drashift does not export (its /metrics: $(printf '%s\n' "$families" | awk '{ print $1 }' | tr '\n' ' '))"
	checked=$((checked + 1))
done
[ $checked -ge 10 ] || fail "only $checked metric names found in the dashboard's queries"
# The families the issue asks the dashboard to show are among them.
for want in drashift_pool_phase drashift_pool_nodes drashift_slo_signal_value drashift_slo_signal_threshold \
	drashift_plan_frozen drashift_node_step_duration_seconds_bucket drashift_api_requests_total; do
	grep -q "$want" "$TEST_DIR/exprs" || fail "the dashboard does not query $want"
done
grep -qx 'drashift_pool_phase{plan="fleet",pool="a",phase="Canary"} 1' "$TEST_DIR/metrics" ||
	fail "pool a is not reported in Canary: $(grep '^drashift_pool_phase{' "$TEST_DIR/metrics")"
log "PASS: $(wc -l <"$TEST_DIR/exprs") queries, $checked metric names, all exported"
