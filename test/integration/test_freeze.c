/*
 * freeze_set against the real API server, as the operator runs it: with the
 * ServiceAccount's own token and exactly the RBAC manifests/ ships, next to
 * the policy of manifests/freeze-policy.yaml. The first write creates the
 * parameter; later writes toggle the same object (its uid never changes, it
 * is never deleted); the admission chain reads what drashift wrote (a claim
 * is denied with drashift's message, then admitted again); writing the same
 * state twice changes nothing; drashift's write wins over a hand edit; and
 * drashift's identity cannot lift a freeze by deleting the parameter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freeze.h"
#include "kube_api.h"
#include "testenv.h"
#include "xalloc.h"

#define SA "system:serviceaccount:drashift-system:drashift-controller"

static testenv_t env;
static uv_loop_t loop;
static kube_http_t *http; /* authenticated as the drashift-controller ServiceAccount */

static const char *const gpu_classes[] = { "gpu.example.com" };
static const char *const team_a[] = { "team-a" };

static const char denial_message[] =
	"is forbidden: ValidatingAdmissionPolicy 'drashift-claim-freeze' with binding 'drashift-claim-freeze' "
	"denied request: ResourceClaims for DeviceClass gpu.example.com are frozen by MigrationPlan gpu-migration "
	"(pool a100-east): claim allocation latency p95 measured 2.4s, threshold 2s. Existing claims and running "
	"pods are not affected; a person lifts the freeze (see kubectl describe migrationplan gpu-migration).";

/* freeze_set, run to its answer; returns the HTTP status. */
static long freeze_write(const freeze_state_t *st)
{
	testenv_result_t r = { 0 };
	assert_int_equal(freeze_set(http, st, testenv_on_result, &r), 0);
	assert_true(testenv_result_wait(&loop, &r, 30000));
	if (r.error)
		print_message("freeze_set: %ld %s\n", r.status, r.error);
	long status = r.status;
	testenv_result_free(&r);
	return status;
}

static freeze_state_t breach(const char *plan, bool frozen)
{
	return (freeze_state_t){
		.plan = plan,
		.pool = "a100-east",
		.signal = "claim allocation latency p95",
		.value = "2.4s",
		.threshold = "2s",
		.breach_id = "a100-east-1",
		.device_classes = gpu_classes,
		.n_classes = 1,
		.namespaces = team_a,
		.n_namespaces = 1,
		.frozen = frozen,
	};
}

/* kubectl's output for a jsonpath of the plan's parameter ("" when it does not exist). */
static char *parameter_field(const char *plan, const char *jsonpath)
{
	char *name = freeze_parameter_name(plan), *out;
	testenv_sh_output(&env, &out, "kubectl -n drashift-system get configmap %s -o jsonpath='%s' 2>/dev/null", name,
			  jsonpath);
	free(name);
	return out;
}

/*
 * Create a claim for gpu.example.com in team-a until the outcome is the one
 * wanted (admission reads parameters asynchronously); *out gets kubectl's
 * last output. Returns whether it got there within 60 s.
 */
static bool claim_until(bool want_denied, char **out)
{
	int rc = testenv_sh_output(&env, out,
		"for i in $(seq 120); do\n"
		"  out=$(kubectl create -f - 2>&1 <<'EOF'\n"
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
		"metadata: {generateName: probe-, namespace: team-a}\n"
		"spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
		"EOF\n"
		"  ) && admitted=1 || admitted=0\n"
		"  if [ $admitted = %d ]; then printf '%%s' \"$out\"; exit 0; fi\n"
		"  sleep 0.5\n"
		"done\n"
		"printf '%%s' \"$out\"; exit 1",
		want_denied ? 0 : 1);
	return rc == 0;
}

static int setup(void **state)
{
	(void)state;
	testenv_up(&env, "freeze", NULL);
	const char *root = getenv("DRASHIFT_ROOT");
	/* The manifests as a platform engineer applies them, and a kubeconfig with the ServiceAccount's token. */
	if (testenv_sh(&env,
		"set -e\n"
		"m='%s/manifests'\n"
		"kubectl apply -f $m/namespace.yaml -f $m/serviceaccount.yaml -f $m/rbac.yaml -f $m/freeze-policy.yaml >/dev/null\n"
		"kubectl create namespace team-a >/dev/null\n"
		"token=$(kubectl -n drashift-system create token drashift-controller --duration=1h)\n"
		"server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')\n"
		"cat >'%s/sa.kubeconfig' <<EOF\n"
		"apiVersion: v1\nkind: Config\n"
		"clusters: [{name: c, cluster: {server: \"$server\", certificate-authority: \"%s/cluster/pki/ca.crt\"}}]\n"
		"users: [{name: drashift, user: {token: \"$token\"}}]\n"
		"contexts: [{name: drashift, context: {cluster: c, user: drashift}}]\n"
		"current-context: drashift\n"
		"EOF\n",
		root, env.dir, env.dir) != 0)
		return -1;
	char path[400];
	snprintf(path, sizeof(path), "%s/sa.kubeconfig", env.dir);
	http = testenv_client_open(&loop, path);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	int open = testenv_client_close(&loop, http);
	testenv_down(&env);
	return open;
}

static void test_freeze_then_unfreeze_toggles_one_object(void **state)
{
	(void)state;
	char *out, *uid, *rv, *again;
	out = parameter_field("gpu-migration", "{.metadata.uid}");
	assert_string_equal(out, ""); /* no parameter yet: nothing is frozen */
	free(out);

	/* Freeze: the first write creates the parameter. */
	freeze_state_t st = breach("gpu-migration", true);
	assert_int_equal(freeze_write(&st), 201);
	uid = parameter_field("gpu-migration", "{.metadata.uid}");
	assert_true(strlen(uid) > 0);
	out = parameter_field("gpu-migration",
			      "{.data.frozen}|{.metadata.labels.drashift\\.io/freeze-parameter}|{.data.deviceClasses}|"
			      "{.data.namespaces}|{.metadata.managedFields[0].manager}");
	assert_string_equal(out, "true|true|gpu.example.com|team-a|drashift");
	free(out);

	/* The admission chain reads it: drashift's message, word for word. */
	assert_true(claim_until(true, &out));
	print_message("denied: %s\n", out);
	assert_non_null(strstr(out, "Error from server (Forbidden)"));
	assert_non_null(strstr(out, denial_message));
	free(out);

	/* The same state again changes nothing on the server. */
	rv = parameter_field("gpu-migration", "{.metadata.resourceVersion}");
	assert_int_equal(freeze_write(&st), 200);
	again = parameter_field("gpu-migration", "{.metadata.resourceVersion}");
	assert_string_equal(again, rv);
	free(again);
	free(rv);

	/* Unfreeze: the same object, frozen=false, the breach still described. */
	st.frozen = false;
	assert_int_equal(freeze_write(&st), 200);
	out = parameter_field("gpu-migration", "{.metadata.uid}|{.data.frozen}|{.data.signal}");
	char *want = xasprintf("%s|false|claim allocation latency p95", uid);
	assert_string_equal(out, want);
	free(want);
	free(out);
	assert_true(claim_until(false, &out));
	assert_non_null(strstr(out, "created"));
	free(out);

	/* And frozen again: still the same object. */
	st.frozen = true;
	assert_int_equal(freeze_write(&st), 200);
	out = parameter_field("gpu-migration", "{.metadata.uid}|{.data.frozen}");
	want = xasprintf("%s|true", uid);
	assert_string_equal(out, want);
	free(want);
	free(out);
	assert_true(claim_until(true, &out));
	free(out);
	free(uid);
}

/*
 * Someone sets frozen=false by hand while the plan is still frozen: the next
 * freeze_set (forced apply) takes the field back, so re-asserting the
 * recorded state on every reconcile repairs the parameter.
 */
static void test_drashift_write_wins_over_a_hand_edit(void **state)
{
	(void)state;
	freeze_state_t st = breach("hand-edit", true);
	assert_int_equal(freeze_write(&st), 201);
	assert_int_equal(testenv_sh(&env, "kubectl -n drashift-system patch configmap drashift-freeze-hand-edit "
					  "--type=merge -p '{\"data\":{\"frozen\":\"false\"}}' >/dev/null"), 0);
	char *out = parameter_field("hand-edit", "{.data.frozen}");
	assert_string_equal(out, "false");
	free(out);
	assert_int_equal(freeze_write(&st), 200);
	out = parameter_field("hand-edit", "{.data.frozen}");
	assert_string_equal(out, "true");
	free(out);
}

/*
 * drashift's identity may write ConfigMaps in drashift-system only, and may
 * not delete one: a deleted parameter would lift the freeze.
 */
static void test_drashift_cannot_lift_a_freeze_by_deleting(void **state)
{
	(void)state;
	char *out;
	testenv_sh_output(&env, &out, "kubectl -n drashift-system delete configmap drashift-freeze-gpu-migration --as=" SA " 2>&1");
	assert_non_null(strstr(out, "is forbidden"));
	free(out);
	testenv_sh_output(&env, &out, "kubectl auth can-i create configmaps -n team-a --as=" SA);
	assert_string_equal(out, "no\n");
	free(out);
	out = parameter_field("gpu-migration", "{.data.frozen}");
	assert_string_equal(out, "true");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freeze_then_unfreeze_toggles_one_object),
		cmocka_unit_test(test_drashift_write_wins_over_a_hand_edit),
		cmocka_unit_test(test_drashift_cannot_lift_a_freeze_by_deleting),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
