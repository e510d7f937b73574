#!/usr/bin/env bash
# The Helm chart (manifests/chart/drashift) with a real helm (tools/helm) on a
# real control plane: its versions are the project's; `helm lint` is clean;
# with the default values it renders exactly what `kubectl apply -k
# manifests/` applies, the Namespace aside (helm creates it); each value
# reaches the objects; a wrong namespace or a misspelt value is refused;
# `helm install` creates the objects (CRD Established, Deployment) and
# `helm uninstall` removes them, keeping the CRD as Helm does.
source "$(dirname "$0")/../lib.sh"
testenv_start
NS=drashift-system
CHART="$DRASHIFT_ROOT/manifests/chart/drashift"
helm=$("$TESTENV" helm)
# helm's own state (repositories, cache) stays in the test's folder.
export HELM_CACHE_HOME="$TEST_DIR/helm/cache" HELM_CONFIG_HOME="$TEST_DIR/helm/config" HELM_DATA_HOME="$TEST_DIR/helm/data"
log "$("$helm" version --short)"

version=$(awk -F"'" '/^ *version *:/ { print $2; exit }' "$DRASHIFT_ROOT/meson.build")
chart_field() { awk -v k="$1:" '$1 == k { gsub(/"/, "", $2); print $2; exit }' "$CHART/Chart.yaml"; }
expect_eq "$(chart_field version)" "$version" "the chart's version"
expect_eq "$(chart_field appVersion)" "$version" "the chart's appVersion"

out=$("$helm" lint --strict -n $NS "$CHART" 2>&1) || fail "helm lint failed: $out"
case $out in *WARNING* | *ERROR*) fail "helm lint is not clean: $out" ;; esac
out=$("$helm" lint --strict -n $NS "$CHART" --set serviceMonitor.enabled=true 2>&1) ||
	fail "helm lint with the ServiceMonitor failed: $out"

# Both sides through one formatter (kubectl kustomize: no comments, sorted
# keys, objects in a fixed order), so the diff shows objects, not layout.
normalized() { # FILE: its objects, as kustomize prints them
	local dir
	dir=$(mktemp -d "$TEST_DIR/norm.XXXXXX")
	cp "$1" "$dir/objects.yaml"
	printf 'resources:\n- objects.yaml\n' >"$dir/kustomization.yaml"
	kubectl kustomize "$dir"
}
mkdir "$TEST_DIR/kustomize"
cat >"$TEST_DIR/kustomize/kustomization.yaml" <<EOF
resources:
- $(realpath --relative-to="$TEST_DIR/kustomize" "$DRASHIFT_ROOT/manifests")
patches:
- patch: |-
    \$patch: delete
    apiVersion: v1
    kind: Namespace
    metadata:
      name: $NS
EOF
kubectl kustomize "$TEST_DIR/kustomize" >"$TEST_DIR/kustomize.yaml" || fail "kubectl kustomize manifests/ failed"
"$helm" template drashift "$CHART" -n $NS --include-crds >"$TEST_DIR/chart.yaml" 2>"$TEST_DIR/helm.err" ||
	fail "helm template failed: $(cat "$TEST_DIR/helm.err")"
normalized "$TEST_DIR/chart.yaml" >"$TEST_DIR/chart.normalized.yaml" || fail "kubectl kustomize of the chart's output failed"
diff -u "$TEST_DIR/kustomize.yaml" "$TEST_DIR/chart.normalized.yaml" >&2 ||
	fail "the chart's defaults render other objects than manifests/ (- kustomize, + chart)"
log "helm template equals kubectl kustomize manifests/: $(grep -c '^kind:' "$TEST_DIR/kustomize.yaml") objects"

# A namespace other than drashift-system, or a value the chart does not have, is refused.
out=$("$helm" template drashift "$CHART" -n other 2>&1) && fail "helm template -n other succeeded"
expect_contains "$out" 'installed in the namespace drashift-system, not "other"' "the namespace refusal"
out=$("$helm" template drashift "$CHART" -n $NS --set replica=3 2>&1) && fail "a misspelt value (replica) was accepted"
expect_contains "$out" "replica" "the schema's refusal"

out=$("$helm" template drashift "$CHART" -n $NS --set serviceMonitor.enabled=true \
	--set serviceMonitor.labels.release=prometheus --set serviceMonitor.interval=15s \
	--show-only templates/servicemonitor.yaml) || fail "helm template of the ServiceMonitor failed"
expect_contains "$out" "kind: ServiceMonitor" "the ServiceMonitor"
expect_contains "$out" "release: prometheus" "the ServiceMonitor's labels"
expect_contains "$out" "- port: http-metrics" "the ServiceMonitor's port"
expect_contains "$out" "interval: 15s" "the ServiceMonitor's interval"
out=$("$helm" template drashift "$CHART" -n $NS --show-only templates/servicemonitor.yaml 2>&1) &&
	fail "a ServiceMonitor rendered by default: $out"

# Installed for real, as the README says, with a value of each kind set.
kubectl apply -f "$DRASHIFT_ROOT/manifests/namespace.yaml" >/dev/null
out=$("$helm" install drashift "$CHART" -n $NS --create-namespace \
	--set image.repository=registry.example.com/drashift/controller --set image.tag=9.9.9 \
	--set image.pullPolicy=Always --set 'imagePullSecrets[0].name=regcred' --set replicas=3 \
	--set leaderElection.id=drashift-lease --set resources.limits.memory=512Mi \
	--set nodeSelector.pool=cpu --set 'tolerations[0].key=dedicated' --set 'tolerations[0].operator=Exists' \
	--set 'hostAliases[0].ip=192.0.2.1' --set 'hostAliases[0].hostnames[0]=api.example.com' \
	--set 'extraEnv[0].name=KUBERNETES_SERVICE_HOST' --set 'extraEnv[0].value=api.example.com' 2>&1) ||
	fail "helm install failed: $out"
crd_established
get() { kubectl -n $NS get "$1" -o jsonpath="$2"; }
deploy=deployment/drashift-controller
expect_eq "$(get $deploy '{.spec.replicas}')" 3 "replicas"
expect_eq "$(get $deploy '{.spec.template.spec.containers[0].image}')" registry.example.com/drashift/controller:9.9.9 "image"
expect_eq "$(get $deploy '{.spec.template.spec.containers[0].imagePullPolicy}')" Always "image pull policy"
expect_eq "$(get $deploy '{.spec.template.spec.imagePullSecrets[0].name}')" regcred "image pull secret"
expect_eq "$(get $deploy '{.spec.template.spec.containers[0].args}')" \
	'["--leader-elect=true","--leader-elect-id=drashift-lease","--http-bind-address=:8080"]' "controller arguments"
expect_eq "$(get role/drashift-controller-leader-election '{.rules[0].resourceNames}')" '["drashift-lease"]' \
	"the Lease the leader election Role grants"
expect_eq "$(get $deploy '{.spec.template.spec.containers[0].resources.limits.memory}')" 512Mi "memory limit"
expect_eq "$(get $deploy '{.spec.template.spec.containers[0].resources.requests.cpu}')" 50m "cpu request (default kept)"
expect_eq "$(get $deploy '{.spec.template.spec.nodeSelector}')" '{"pool":"cpu"}' "node selector"
expect_eq "$(get $deploy '{.spec.template.spec.tolerations}')" '[{"key":"dedicated","operator":"Exists"}]' "tolerations"
expect_eq "$(get $deploy '{.spec.template.spec.hostAliases}')" '[{"hostnames":["api.example.com"],"ip":"192.0.2.1"}]' "host aliases"
expect_eq "$(get $deploy '{.spec.template.spec.containers[0].env[2]}')" '{"name":"KUBERNETES_SERVICE_HOST","value":"api.example.com"}' "extra environment"
expect_eq "$(kubectl get namespace $NS -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" \
	restricted "Pod Security level of $NS"

# What the release owns: every object of the chart but the CRD, which helm
# installs once and never deletes (deleting it would delete every plan).
owned=(serviceaccount/drashift-controller service/drashift-controller-metrics $deploy
	role/drashift-controller-freeze rolebinding/drashift-controller-freeze
	role/drashift-controller-leader-election rolebinding/drashift-controller-leader-election)
cluster_owned=(clusterrole/drashift-controller clusterrolebinding/drashift-controller
	validatingadmissionpolicy/drashift-claim-freeze validatingadmissionpolicybinding/drashift-claim-freeze
	validatingadmissionpolicy/drashift-claim-tenancy validatingadmissionpolicybinding/drashift-claim-tenancy)
for o in "${owned[@]}"; do
	expect_eq "$(get "$o" '{.metadata.annotations.meta\.helm\.sh/release-name}')" drashift "release of $o"
done
for o in "${cluster_owned[@]}"; do
	expect_eq "$(kubectl get "$o" -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')" drashift "release of $o"
done
expect_eq "$("$helm" list -n $NS -o json | jq -r '.[] | "\(.name) \(.status) \(.app_version)"')" "drashift deployed $version" "helm list"
log "installed: $(kubectl -n $NS get deploy,role,rolebinding,service,serviceaccount -o name | tr '\n' ' ')"

out=$("$helm" uninstall drashift -n $NS --wait 2>&1) || fail "helm uninstall failed: $out"
for o in "${owned[@]}"; do
	left=$(kubectl -n $NS get "$o" -o name --ignore-not-found)
	expect_eq "$left" "" "$o after helm uninstall"
done
for o in "${cluster_owned[@]}"; do
	expect_eq "$(kubectl get "$o" -o name --ignore-not-found)" "" "$o after helm uninstall"
done
expect_eq "$(kubectl get crd migrationplans.drashift.io -o name)" customresourcedefinition.apiextensions.k8s.io/migrationplans.drashift.io \
	"the CRD after helm uninstall (helm keeps CRDs)"
log "helm uninstall removed the release's objects and kept the CRD"
