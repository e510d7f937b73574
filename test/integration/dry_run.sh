#!/usr/bin/env bash
# drashift-controller --dry-run logs every action it would take for a plan and
# changes nothing: no node label, annotation or cordon, no plan status.
source "$(dirname "$0")/../lib.sh"
testenv_start
install_drashift
start_fleet --pools a:2x4
kubectl apply -f - >/dev/null <<'EOF_PLAN'
apiVersion: drashift.io/v1alpha1
kind: MigrationPlan
metadata: {name: rehearsal}
spec:
  driver: gpu.example.com
  extendedResource: example.com/gpu
  deviceClassNames: [gpu.example.com]
  pools:
  - name: a
    nodeSelector: {matchLabels: {drashift.io/pool: a}}
    canary: {nodes: 1}
EOF_PLAN
before=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.labels} {.metadata.annotations} {.spec.unschedulable}{"\n"}{end}')
start_operator --dry-run
# The first status it would write waits for preflight's reads; the next, once they pass, has the canary.
chose_canary() { grep -qF 'canaryNodes\":[\"a-0\"]' "$TEST_DIR/operator.log"; }
wait_for 30 "the dry run to report choosing a canary" chose_canary
grep -qF 'type\":\"Preflight\",\"status\":\"True\"' "$TEST_DIR/operator.log" ||
	fail "the dry run did not report preflight passing: $(grep 'dry run' "$TEST_DIR/operator.log" | tail -1)"
sleep 5
after=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.labels} {.metadata.annotations} {.spec.unschedulable}{"\n"}{end}')
expect_eq "$after" "$before" "nodes after a dry run"
expect_eq "$(kubectl get mp rehearsal -o jsonpath='{.status}')" "" "the plan's status after a dry run"
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || fail "the dry run did not exit 0 on SIGTERM"
log "PASS"
