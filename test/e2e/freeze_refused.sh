#!/usr/bin/env bash
# A freeze the API server refuses to enforce is reported, retried at a
# bounded pace, and enforced once the cause is fixed:
#   1. drashift's DeviceTaintRule write is forbidden (its ClusterRole lost the
#      devicetaintrules rule): the plan still records the breach and shows
#      Frozen, its condition says NOT ENFORCED YET with the API's answer, and
#      the write is tried again every few seconds, not at every change;
#      (the plan says preflight: Warn, whose access line names the same grant);
#   2. the RBAC is restored: the rule is applied and the condition no longer
#      says NOT ENFORCED.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
without_taint_rbac=$(kubectl get clusterrole drashift-controller -o json |
	sed 's/"devicetaintrules"/"devicetaintrules-removed-by-test"/')
printf '%s\n' "$without_taint_rbac" | kubectl replace -f - >/dev/null
start_fleet --pools a:2x4 --faults node=a-0:missing-devices=2
start_operator

kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: refused}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  slo: {freezeMode: DeviceTaint}
  # Preflight would hold the pool on the missing grant; this test is about a
  # freeze refused at run time, so the plan only warns.
  preflight: Warn
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
    bakeTime: 1h
    deadlines: {handover: 5s}
EOF_PLAN

frozen_msg() { plan_field refused '{.status.conditions[?(@.type=="Frozen")].message}'; }
not_enforced() { frozen_msg | grep -q 'NOT ENFORCED YET'; }
wait_for 90 "the Frozen condition to report the refused DeviceTaintRule" not_enforced
expect_contains "$(frozen_msg)" "forbidden" "Frozen condition"
expect_eq "$(plan_field refused '{.status.frozen}')" true "status.frozen"
attempts() { grep -c 'what="DeviceTaintRule (freeze)"' "$TEST_DIR/operator.log" || true; }
before=$(attempts)
sleep 20
tried=$(($(attempts) - before))
[ "$tried" -ge 1 ] && [ "$tried" -le 5 ] || fail "$tried refused DeviceTaintRule writes in 20 s; want 1 to 5 (retried, at a bounded pace)"
log "step 1: refused, reported, $tried retries in 20 s: $(frozen_msg)"

kubectl apply -f "$DRASHIFT_ROOT/manifests/rbac.yaml" >/dev/null
enforced() {
	kubectl get devicetaintrules.resource.k8s.io drashift-freeze-refused >/dev/null 2>&1 && ! not_enforced
}
wait_for 60 "the DeviceTaintRule once the RBAC is back" enforced
expect_contains "$(frozen_msg)" "the driver's devices are tainted NoSchedule" "Frozen condition"
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the operator did not exit 0 on SIGTERM"
log "PASS"
