#!/usr/bin/env bash
# The real admission chain enforces a ValidatingAdmissionPolicy on
# ResourceClaims: CREATE of a claim for the denied class is refused with the
# policy's message, while a claim for another class is still admitted.
source "$(dirname "$0")/../lib.sh"
testenv_start

kubectl apply -f - >/dev/null <<'EOF_POLICY'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: deny-frozen-gpu-claims
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["resource.k8s.io"]
      apiVersions: ["*"]
      operations: ["CREATE"]
      resources: ["resourceclaims"]
  validations:
  - expression: >-
      !object.spec.devices.requests.exists(r,
        has(r.exactly) && r.exactly.deviceClassName == 'gpu.example.com')
    messageExpression: >-
      'claims for gpu.example.com are frozen in ' + object.metadata.namespace
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: deny-frozen-gpu-claims
spec:
  policyName: deny-frozen-gpu-claims
  validationActions: [Deny]
EOF_POLICY
create_namespace team-a

claim() {
	cat <<EOF_CLAIM
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  generateName: probe-
  namespace: team-a
spec:
  devices:
    requests:
    - name: dev
      exactly:
        deviceClassName: $1
EOF_CLAIM
}

# Policies reach the admission chain asynchronously: poll until the denial
# shows. A probe admitted before the policy arrived is deleted again, so the
# count below sees only what was admitted once the policy was in force.
denied() {
	if out=$(claim gpu.example.com | kubectl create -f - -o name 2>&1); then
		kubectl -n team-a delete "$out" --wait=false >/dev/null
		return 1
	fi
	printf '%s\n' "$out" >"$TEST_DIR/denial"
}
wait_for 60 "the policy to deny a gpu.example.com claim" denied
msg=$(cat "$TEST_DIR/denial")
expect_contains "$msg" "is forbidden: ValidatingAdmissionPolicy 'deny-frozen-gpu-claims' with binding 'deny-frozen-gpu-claims' denied request: claims for gpu.example.com are frozen in team-a" "denial message"
log "denied: $msg"

out=$(claim nic.example.com | kubectl create -f - 2>&1) || fail "a claim for another class was denied: $out"
expect_contains "$out" "created" "claim for nic.example.com"
count=$(kubectl -n team-a get resourceclaims -o name | wc -l)
expect_eq "$count" 1 "claims in team-a (only the nic one was admitted)"
log "PASS"
