#!/usr/bin/env bash
# cli_verbs.sh VERB: one kubectl drashift verb against a real control plane,
# run by kubectl as a plugin. Each verb writes the plan's spec with
# server-side apply as field manager kubectl-drashift, prints the fields it
# changed, keeps what other verbs or managers set, and refuses what makes no
# sense with a message and exit code 1.
source "$(dirname "$0")/../lib.sh"
verb=${1:?usage: cli_verbs.sh VERB}
TEST_NAME="cli_$verb"
testenv_start
kubectl apply -f "$DRASHIFT_ROOT/crds/drashift.io_migrationplans.yaml" >/dev/null
crd_established
kubectl_drashift_on_path
apply_fleet_plan

spec() { kubectl get mp fleet -o jsonpath="{.spec.$1}"; }
# drashift VERB ARGS...: run it, keep its output in $out, fail on a non-zero exit.
drashift() {
	out=$(kubectl drashift "$@" 2>&1) || fail "kubectl drashift $*: exit $?: $out"
	log "kubectl drashift $*: $out"
}
# refused WANT_MESSAGE ARGS...: the verb exits 1 and says why.
refused() {
	local want=$1 rc=0
	shift
	out=$(kubectl drashift "$@" 2>&1) || rc=$?
	expect_eq "$rc" 1 "exit code of kubectl drashift $*"
	expect_contains "$out" "$want" "kubectl drashift $*"
}
# The verb's fields belong to kubectl-drashift, written by an Apply.
owned_by_plugin() {
	kubectl get mp fleet --show-managed-fields -o json |
		jq -e --arg f "$1" '.metadata.managedFields[] | select(.manager == "kubectl-drashift" and .operation == "Apply")
			| .fieldsV1["f:spec"] | has($f)' >/dev/null ||
		fail "spec.$1 is not owned by the field manager kubectl-drashift (Apply)"
}

case $verb in
status)
	# A pool of 14 nodes: the canary, the nodes in a step and the failed
	# one are listed; the 11 at rest are counted in one line.
	for i in $(seq 0 13); do create_node "a-$i" drashift.io/pool=a drashift.io/device-plugin=true; done
	since=$(date -u -d '-90 seconds' +%Y-%m-%dT%H:%M:%SZ)
	kubectl annotate node a-3 drashift.io/plan=fleet drashift.io/direction=ToDRA drashift.io/step=draining \
		"drashift.io/step-since=$since" >/dev/null
	kubectl annotate node a-7 drashift.io/plan=fleet drashift.io/direction=ToDRA drashift.io/step=failed \
		"drashift.io/step-since=$since" "drashift.io/failure=draining passed its deadline (1h)" >/dev/null
	kubectl annotate node a-9 drashift.io/plan=fleet drashift.io/step=draining >/dev/null
	kubectl patch mp fleet --subresource=status --type=merge -p \
		'{"status":{"phase":"Canary","pools":[{"name":"a","phase":"Canary","canaryNodes":["a-0"],"message":"canary: 0 of 1 canary node(s) on DRA"}]}}' >/dev/null
	drashift status fleet
	expect_contains "$out" "waiting for: pool a: canary: 0 of 1 canary node(s) on DRA" "status"
	lines() { grep -cE "$1" <<<"$out" || true; }
	expect_eq "$(lines '^│  [├└]─ a-')" 4 "node lines of pool a (the failed, the draining, the unreadable, the canary)"
	expect_eq "$(lines '^│  ├─ a-7 +failed +\[ !!! \] +1m3[0-9]s +draining passed its deadline \(1h\)$')" 1 "the failed node's line"
	expect_eq "$(lines '^│  ├─ a-3 +draining→DRA +\[#\.\.\.\.\] +1m3[0-9]s +waiting for pods using the extended resource to finish$')" 1 \
		"the draining node's line"
	expect_eq "$(lines '^│  ├─ a-9 +unreadable .*its drashift.io annotations cannot be read')" 1 "the node with a broken record"
	expect_eq "$(lines '^│  ├─ a-0 +canary +legacy +\[\.\.\.\.\.\]$')" 1 "the canary's line"
	expect_contains "$out" "│  └─ and 10 more at rest: 0 on DRA, 10 on the device plugin" "status"
	;;
pause)
	drashift pause fleet
	expect_eq "$out" "migrationplan.drashift.io/fleet: spec.paused false -> true" "what pause printed"
	expect_eq "$(spec paused)" true "spec.paused"
	owned_by_plugin f:paused
	drashift pause fleet
	expect_contains "$out" "unchanged" "a second pause"
	# kubectl's flags: --context of the kubeconfig, -n accepted though plans have no namespace.
	ctx=$(kubectl config current-context)
	drashift -n default pause fleet --context "$ctx" --kubeconfig "$KUBECONFIG"
	refused 'context "nope"' pause fleet --context nope
	refused "migrationplan missing not found" pause missing
	;;
resume)
	drashift pause fleet
	drashift rollback fleet a
	drashift resume fleet
	expect_eq "$out" "migrationplan.drashift.io/fleet: spec.paused true -> false" "what resume printed"
	expect_eq "$(spec paused)" false "spec.paused"
	# Server-side apply drops fields a manager stops naming: resume must keep the rollback it did not make.
	expect_eq "$(spec rollback.pools)" '["a"]' "spec.rollback.pools after resume"
	;;
promote)
	drashift promote fleet a
	expect_eq "$out" 'migrationplan.drashift.io/fleet: spec.promote.pools (unset) -> ["a"]' "what promote printed"
	expect_eq "$(spec promote.pools)" '["a"]' "spec.promote.pools"
	owned_by_plugin f:promote
	refused "the plan has no pool c" promote fleet c
	# The CRD refuses a promotion of a pool the plan does not have, whoever writes it.
	if err=$(kubectl patch mp fleet --type=merge -p '{"spec":{"promote":{"pools":["c"]}}}' 2>&1); then
		fail "the API accepted spec.promote.pools naming no pool"
	fi
	expect_contains "$err" "must name pools listed in spec.pools" "the API's refusal"
	;;
rollback)
	drashift promote fleet a
	# A person's own rollback of b, written by kubectl apply (another manager), stays.
	kubectl patch mp fleet --type=merge -p '{"spec":{"rollback":{"pools":["b"]}}}' >/dev/null
	drashift rollback fleet a
	expect_contains "$out" 'spec.rollback.pools ["b"] -> ["b","a"]' "what rollback printed"
	expect_contains "$out" 'spec.promote.pools ["a"] -> (unset)' "what rollback printed"
	expect_eq "$(spec rollback.pools)" '["b","a"]' "spec.rollback.pools"
	rc=0
	out=$(kubectl drashift rollback fleet 2>&1) || rc=$?
	expect_eq "$rc" 2 "exit code of rollback without a pool"
	expect_contains "$out" "Usage: kubectl drashift rollback PLAN POOL" "rollback without a pool"
	;;
acknowledge)
	refused "nothing to acknowledge" acknowledge fleet
	kubectl patch mp fleet --subresource=status --type=merge -p \
		'{"status":{"frozen":true,"breach":{"id":"a-readyLatencyP95-1764441600","pool":"a","signal":"readyLatencyP95","value":"41000ms","threshold":"30000ms","time":"2026-12-01T10:00:00Z"}}}' >/dev/null
	# status shows the freeze, who lifts it and how.
	drashift status fleet
	expect_contains "$out" "├─ freeze: FROZEN" "status of a frozen plan"
	expect_contains "$out" "ago: pool a readyLatencyP95 measured 41000ms, limit 30000ms" "status of a frozen plan"
	expect_contains "$out" "lift: kubectl drashift acknowledge fleet (breach a-readyLatencyP95-1764441600)" \
		"status of a frozen plan"
	expect_contains "$out" "waiting for: a person to acknowledge the breach" "status of a frozen plan"
	drashift acknowledge fleet
	expect_eq "$out" "migrationplan.drashift.io/fleet: spec.acknowledgedBreach (unset) -> \"a-readyLatencyP95-1764441600\"" \
		"what acknowledge printed"
	expect_eq "$(spec acknowledgedBreach)" a-readyLatencyP95-1764441600 "spec.acknowledgedBreach"
	owned_by_plugin f:acknowledgedBreach
	;;
abort)
	drashift promote fleet b
	drashift pause fleet
	drashift abort fleet
	expect_contains "$out" "spec.rollback.all (unset) -> true" "what abort printed"
	expect_contains "$out" 'spec.promote.pools ["b"] -> (unset)' "what abort printed"
	expect_eq "$(spec rollback.all)" true "spec.rollback.all"
	expect_eq "$(spec paused)" true "spec.paused after abort (left as it was)"
	;;
*) fail "no test for the verb $verb" ;;
esac
log "PASS"
