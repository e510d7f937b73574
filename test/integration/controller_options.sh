#!/usr/bin/env bash
# drashift-controller's option errors name the option that is wrong, whether
# its value is written "--flag value" or "--flag=value", and exit 2 before
# touching any cluster (no control plane needed).
source "$(dirname "$0")/../lib.sh"
expect_option_error() {
	local want=$1 out rc=0
	shift
	out=$("$DRASHIFT_CONTROLLER" "$@" 2>&1 >/dev/null) || rc=$?
	expect_eq "$rc" 2 "exit status of drashift-controller $*"
	expect_eq "$out" "$want" "error of drashift-controller $*"
}
for flag in leader-elect-lease-duration leader-elect-renew-deadline leader-elect-retry-period; do
	want="drashift-controller: --$flag: 'soon' is not a duration (500ms, 15s, 2m)"
	expect_option_error "$want" --dry-run --$flag soon
	expect_option_error "$want" --dry-run --$flag=soon
	expect_option_error "$want" --log-level=info --$flag=soon
	expect_option_error "$want" --identity=me --leader-elect-id=x --$flag=soon
done
expect_option_error "drashift-controller: --timeout: 'soon' is not a duration (500ms, 15s, 2m)" --check --timeout=soon
log "PASS"
