#!/usr/bin/env bash
# Two drashift-controller processes elect exactly one leader on a Lease. When
# the leader is killed with SIGKILL the other takes over within the lease
# duration; when the leader gets SIGTERM it releases the Lease, exits 0, and
# the other takes over within 2 s.
source "$(dirname "$0")/../lib.sh"
CONTROLLER=${DRASHIFT_CONTROLLER:?DRASHIFT_CONTROLLER names the built drashift-controller}
testenv_start
kubectl create namespace drashift-system >/dev/null
kubectl apply -f "$DRASHIFT_ROOT/crds/drashift.io_migrationplans.yaml" >/dev/null # its plans are cached too
crd_established

LEASE_S=4 RETRY_MS=500
declare -A PID PORT
start() {
	local id=$1
	"$CONTROLLER" --kubeconfig "$KUBECONFIG" --identity "$id" --http-bind-address 127.0.0.1:0 \
		--leader-elect-lease-duration ${LEASE_S}s --leader-elect-renew-deadline 3s \
		--leader-elect-retry-period ${RETRY_MS}ms >"$TEST_DIR/$id.log" 2>&1 &
	PID[$id]=$!
	wait_for 20 "$id to serve /healthz" grep -q 'msg="http server listening"' "$TEST_DIR/$id.log"
	PORT[$id]=$(sed -n 's/.*msg="http server listening".* port=\([0-9]*\).*/\1/p' "$TEST_DIR/$id.log" | tail -n 1)
}
holder() { kubectl -n drashift-system get lease drashift-controller -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
leading() { curl -sf "http://127.0.0.1:${PORT[$1]}/metrics" | grep -qx 'drashift_leader 1'; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

start a
start b
holder_is_set() { [ -n "$(holder)" ]; }
wait_for 30 "a leader" holder_is_set
first=$(holder)
case $first in a) second=b ;; b) second=a ;; *) fail "unexpected holder '$first'" ;; esac
wait_for 10 "$first to report itself leader" leading "$first"
leading "$second" && fail "both $first and $second report themselves leader"
ready() { curl -sf "http://127.0.0.1:${PORT[$1]}/readyz" >/dev/null; }
for id in a b; do wait_for 10 "$id to be ready (a standby must be ready too)" ready "$id"; done
log "leader: $first, standby: $second"

# SIGKILL: no release; the standby waits out the lease.
kill -KILL "${PID[$first]}"
t0=$(now)
second_holds() { [ "$(holder)" = "$second" ]; }
wait_for 30 "$second to take over after SIGKILL" second_holds
took=$(elapsed "$t0")
log "takeover after SIGKILL: ${took} s (lease ${LEASE_S} s)"
awk -v t="$took" -v l="$LEASE_S" -v r="$RETRY_MS" 'BEGIN { exit !(t <= l + r / 1000 + 1) }' ||
	fail "takeover after SIGKILL took ${took} s, more than the lease duration ${LEASE_S} s plus a retry period"
wait_for 10 "$second to report itself leader" leading "$second"

# SIGTERM: the leader releases the Lease and exits 0; the restarted first one takes over at once.
start "$first"
leading "$first" && fail "the restarted $first leads while $second holds the Lease"
kill -TERM "${PID[$second]}"
t0=$(now)
first_holds() { [ "$(holder)" = "$first" ]; }
wait_for 10 "$first to take over after SIGTERM" first_holds
took=$(elapsed "$t0")
log "takeover after SIGTERM: ${took} s"
awk -v t="$took" 'BEGIN { exit !(t <= 2) }' || fail "takeover after SIGTERM took ${took} s, more than 2 s"
wait "${PID[$second]}" && rc=0 || rc=$?
expect_eq "$rc" 0 "exit status of $second after SIGTERM"
grep -q 'msg="leader election" from=Releasing to=Stopped' "$TEST_DIR/$second.log" || fail "$second did not release the Lease"
kill -TERM "${PID[$first]}"
wait "${PID[$first]}" || fail "$first did not exit 0 on SIGTERM"
log "PASS"
