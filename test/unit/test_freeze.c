/*
 * The freeze parameter as drashift writes it (controller/freeze.c): the
 * ConfigMap the admission policy in manifests/freeze-policy.yaml reads. What
 * the policy relies on must be there in every state (the selector's label,
 * every data key, comma-separated lists), text from measurements must survive
 * JSON intact, every plan must get exactly one valid object name, and states
 * the policy would misread are refused before anything is sent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freeze.h"

static const char *const gpu_classes[] = { "gpu.example.com", "gpu-mig.example.com" };
static const char *const teams[] = { "team-a", "team-b" };

static freeze_state_t breach_state(void)
{
	return (freeze_state_t){
		.plan = "gpu-migration",
		.pool = "a100-east",
		.signal = "claim allocation latency p95",
		.value = "2.4s",
		.threshold = "2s",
		.breach_id = "a100-east-1",
		.time = "2026-12-05T02:00:00Z",
		.plan_uid = "5b1c-plan-uid",
		.device_classes = gpu_classes,
		.n_classes = 2,
		.namespaces = teams,
		.n_namespaces = 2,
		.frozen = true,
	};
}

/* A string at a dotted path of obj ("metadata.labels" then a key with dots is passed separately). */
static const char *str_at(const cJSON *obj, const char *a, const char *b, const char *c)
{
	const cJSON *cur = cJSON_GetObjectItemCaseSensitive(obj, a);
	if (b)
		cur = cJSON_GetObjectItemCaseSensitive(cur, b);
	if (c)
		cur = cJSON_GetObjectItemCaseSensitive(cur, c);
	return cJSON_IsString(cur) ? cur->valuestring : NULL;
}

static cJSON *parse_parameter(const freeze_state_t *st)
{
	char *json = freeze_parameter_json(st);
	assert_non_null(json);
	cJSON *cm = cJSON_Parse(json);
	free(json);
	assert_non_null(cm);
	return cm;
}

static void test_frozen_parameter_carries_everything_the_policy_reads(void **state)
{
	(void)state;
	freeze_state_t st = breach_state();
	cJSON *cm = parse_parameter(&st);
	assert_string_equal(str_at(cm, "apiVersion", NULL, NULL), "v1");
	assert_string_equal(str_at(cm, "kind", NULL, NULL), "ConfigMap");
	assert_string_equal(str_at(cm, "metadata", "name", NULL), "drashift-freeze-gpu-migration");
	assert_string_equal(str_at(cm, "metadata", "namespace", NULL), "drashift-system");
	assert_string_equal(str_at(cm, "metadata", "labels", "drashift.io/freeze-parameter"), "true");
	assert_string_equal(str_at(cm, "metadata", "labels", "drashift.io/plan"), "gpu-migration");
	/* Owned by the plan: deleting the plan lifts its freeze (the garbage collector deletes this). */
	const cJSON *owner = cJSON_GetArrayItem(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "ownerReferences"), 0);
	assert_string_equal(str_at(owner, "kind", NULL, NULL), "MigrationPlan");
	assert_string_equal(str_at(owner, "name", NULL, NULL), "gpu-migration");
	assert_string_equal(str_at(owner, "uid", NULL, NULL), "5b1c-plan-uid");
	assert_null(cJSON_GetObjectItemCaseSensitive(owner, "blockOwnerDeletion")); /* would need more RBAC */
	assert_string_equal(str_at(cm, "data", "frozen", NULL), "true");
	assert_string_equal(str_at(cm, "data", "plan", NULL), "gpu-migration");
	assert_string_equal(str_at(cm, "data", "pool", NULL), "a100-east");
	assert_string_equal(str_at(cm, "data", "signal", NULL), "claim allocation latency p95");
	assert_string_equal(str_at(cm, "data", "value", NULL), "2.4s");
	assert_string_equal(str_at(cm, "data", "threshold", NULL), "2s");
	assert_string_equal(str_at(cm, "data", "breachId", NULL), "a100-east-1");
	assert_string_equal(str_at(cm, "data", "time", NULL), "2026-12-05T02:00:00Z");
	assert_string_equal(str_at(cm, "data", "deviceClasses", NULL), "gpu.example.com,gpu-mig.example.com");
	assert_string_equal(str_at(cm, "data", "namespaces", NULL), "team-a,team-b");
	/* ConfigMap data holds strings only: nothing else may sneak in. */
	const cJSON *item;
	int n = 0;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(cm, "data")) {
		assert_true(cJSON_IsString(item));
		n++;
	}
	assert_int_equal(n, 10);
	cJSON_Delete(cm);
}

/*
 * Unfreezing writes the same object with frozen=false and keeps the last
 * breach's description (the caller passes it), so it stays visible. Missing
 * fields are written as "", never left out: server-side apply would remove a
 * key drashift stops sending, and the policy's message expects every key.
 */
static void test_unfrozen_parameter_keeps_shape_and_description(void **state)
{
	(void)state;
	freeze_state_t st = breach_state();
	st.frozen = false;
	cJSON *cm = parse_parameter(&st);
	assert_string_equal(str_at(cm, "data", "frozen", NULL), "false");
	assert_string_equal(str_at(cm, "data", "signal", NULL), "claim allocation latency p95");
	assert_string_equal(str_at(cm, "metadata", "name", NULL), "drashift-freeze-gpu-migration");
	assert_string_equal(str_at(cm, "metadata", "labels", "drashift.io/freeze-parameter"), "true");
	cJSON_Delete(cm);

	freeze_state_t bare = { .plan = "p", .frozen = false };
	cm = parse_parameter(&bare);
	const char *keys[] = { "frozen", "plan", "pool", "signal", "value", "threshold", "breachId",
			       "time", "deviceClasses", "namespaces" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_non_null(str_at(cm, "data", keys[i], NULL));
	assert_string_equal(str_at(cm, "data", "frozen", NULL), "false");
	assert_string_equal(str_at(cm, "data", "pool", NULL), "");
	assert_string_equal(str_at(cm, "data", "deviceClasses", NULL), "");
	assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "ownerReferences"));
	cJSON_Delete(cm);
}

/* No namespaces means every namespace: an empty string, which the policy reads as such. */
static void test_empty_namespaces_freeze_everywhere(void **state)
{
	(void)state;
	freeze_state_t st = breach_state();
	st.namespaces = NULL;
	st.n_namespaces = 0;
	cJSON *cm = parse_parameter(&st);
	assert_string_equal(str_at(cm, "data", "namespaces", NULL), "");
	cJSON_Delete(cm);

	static const char *const one[] = { "gpu.example.com" };
	st.device_classes = one;
	st.n_classes = 1;
	cm = parse_parameter(&st);
	assert_string_equal(str_at(cm, "data", "deviceClasses", NULL), "gpu.example.com");
	cJSON_Delete(cm);
}

/* Measured text goes into JSON and comes back byte for byte, whatever it holds. */
static void test_describing_text_is_escaped(void **state)
{
	(void)state;
	freeze_state_t st = breach_state();
	st.signal = "latency \"p95\" \\ of\tclaims\nper pool";
	st.value = "2.4 s \xc2\xb1 0.1 (\xe2\x89\xa5 threshold)";
	st.threshold = "</script>{\"x\":1}";
	char *json = freeze_parameter_json(&st);
	assert_non_null(json);
	assert_null(strchr(json, '\n')); /* one line: the raw newline is escaped */
	assert_non_null(strstr(json, "latency \\\"p95\\\" \\\\ of\\tclaims\\nper pool"));
	cJSON *cm = cJSON_Parse(json);
	free(json);
	assert_non_null(cm);
	assert_string_equal(str_at(cm, "data", "signal", NULL), st.signal);
	assert_string_equal(str_at(cm, "data", "value", NULL), st.value);
	assert_string_equal(str_at(cm, "data", "threshold", NULL), st.threshold);
	cJSON_Delete(cm);
}

/*
 * States the policy would misread are refused: a class containing ',' would
 * be split into other classes, an empty one matches nothing, a freeze with no
 * class denies nothing while the plan would say Frozen. freeze_set refuses
 * them without a request and without calling back.
 */
static void count_call(const kube_http_response_t *resp, void *data)
{
	(void)resp;
	(*(int *)data)++;
}

static void test_states_the_policy_would_misread_are_refused(void **state)
{
	(void)state;
	static const char *const comma[] = { "gpu.example.com,nic.example.com" };
	static const char *const empty[] = { "" };
	static const char *const null_item[] = { NULL };
	freeze_state_t st;

	st = breach_state();
	st.plan = NULL;
	assert_null(freeze_parameter_json(&st));
	st.plan = "";
	assert_null(freeze_parameter_json(&st));
	assert_null(freeze_parameter_json(NULL));

	st = breach_state();
	st.device_classes = comma;
	st.n_classes = 1;
	assert_null(freeze_parameter_json(&st));
	st.device_classes = empty;
	assert_null(freeze_parameter_json(&st));
	st.device_classes = null_item;
	assert_null(freeze_parameter_json(&st));
	st.device_classes = NULL;
	assert_null(freeze_parameter_json(&st));

	st = breach_state();
	st.namespaces = comma;
	st.n_namespaces = 1;
	assert_null(freeze_parameter_json(&st));
	st.namespaces = empty;
	assert_null(freeze_parameter_json(&st));

	st = breach_state();
	st.device_classes = NULL;
	st.n_classes = 0;
	assert_null(freeze_parameter_json(&st)); /* frozen, but nothing to deny */
	st.frozen = false;
	char *json = freeze_parameter_json(&st); /* unfrozen with no class is fine */
	assert_non_null(json);
	free(json);

	int calls = 0;
	st = breach_state();
	st.device_classes = comma;
	st.n_classes = 1;
	assert_int_equal(freeze_set(NULL, &st, count_call, &calls), -EINVAL);
	assert_int_equal(calls, 0);
}

static bool dns_subdomain(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && c != '-' && c != '.')
			return false;
		/* Each dot-separated part starts and ends alphanumeric. */
		bool edge = i == 0 || i == len - 1 || s[i - 1] == '.' || s[i + 1] == '.';
		if (edge && !alnum)
			return false;
	}
	return true;
}

/*
 * Every valid plan name gives one valid object name: the usual
 * "drashift-freeze-<plan>", and for names too long for that a cut plus a hash
 * of the whole name, so two long names sharing a prefix still get two
 * parameters. The plan label is left out when the name is too long for a label
 * value; data.plan (what the denial shows) always has it whole.
 */
static void test_every_plan_name_gives_one_valid_parameter_name(void **state)
{
	(void)state;
	char *name = freeze_parameter_name("gpu-migration");
	assert_string_equal(name, "drashift-freeze-gpu-migration");
	free(name);
	char *path = freeze_parameter_path("gpu-migration");
	assert_string_equal(path, "/api/v1/namespaces/drashift-system/configmaps/drashift-freeze-gpu-migration");
	free(path);
	assert_null(freeze_parameter_name(NULL));
	assert_null(freeze_parameter_name(""));
	assert_null(freeze_parameter_path(""));

	char fits[238], long1[254], long2[254];
	memset(fits, 'f', 237);
	fits[237] = '\0';
	name = freeze_parameter_name(fits);
	assert_int_equal(strlen(name), 253);
	assert_int_equal(strncmp(name, "drashift-freeze-fff", 19), 0);
	free(name);

	/*
	 * Valid 253-character plan names with a '-' or '.' (or "--") at every
	 * position around the cut: the kept part must not end in one, since the
	 * hash follows after a '-'.
	 */
	for (size_t k = 214; k < 224; k++) {
		for (int variant = 0; variant < 3; variant++) {
			char probe[254];
			memset(probe, 'a', 253);
			probe[253] = '\0';
			probe[k] = variant == 1 ? '.' : '-';
			if (variant == 2)
				probe[k + 1] = '-';
			assert_true(dns_subdomain(probe));
			name = freeze_parameter_name(probe);
			assert_true(strlen(name) <= 253);
			assert_true(dns_subdomain(name));
			free(name);
		}
	}
	for (size_t i = 0; i < 253; i++)
		long1[i] = (i % 3 == 1) ? '.' : 'x'; /* "x.xx.xx.x...x" */
	long1[253] = '\0';
	memcpy(long2, long1, sizeof(long2));
	long2[252] = 'z';
	char *n1 = freeze_parameter_name(long1), *n1again = freeze_parameter_name(long1);
	char *n2 = freeze_parameter_name(long2);
	assert_true(dns_subdomain(n1));
	assert_true(dns_subdomain(n2));
	assert_string_equal(n1, n1again);  /* the same plan always finds the same object */
	assert_string_not_equal(n1, n2);   /* and a different plan never does */
	free(n1);
	free(n1again);
	free(n2);

	freeze_state_t st = breach_state();
	st.plan = long1;
	cJSON *cm = parse_parameter(&st);
	assert_null(str_at(cm, "metadata", "labels", "drashift.io/plan"));
	assert_string_equal(str_at(cm, "metadata", "labels", "drashift.io/freeze-parameter"), "true");
	assert_string_equal(str_at(cm, "data", "plan", NULL), long1);
	cJSON_Delete(cm);

	char label_max[64];
	memset(label_max, 'p', 63);
	label_max[63] = '\0';
	st.plan = label_max;
	cm = parse_parameter(&st);
	assert_string_equal(str_at(cm, "metadata", "labels", "drashift.io/plan"), label_max);
	cJSON_Delete(cm);
}

/*
 * The cached parameter: what the controller compares with the recorded
 * breach, and records into the status when the status lacks it (the breach's
 * fields and the owning plan's uid).
 */
static void test_cached_parameter_decodes_and_refuses_bad_types(void **state)
{
	(void)state;
	char err[256];
	freeze_parameter_t p;
	freeze_state_t st = breach_state();
	char *json = freeze_parameter_json(&st);
	cJSON *written = cJSON_Parse(json);
	free(json);
	assert_int_equal(store_kind_freeze_parameters.decode(written, &p, err, sizeof(err)), 0);
	assert_true(p.frozen);
	assert_string_equal(p.plan, "gpu-migration");
	assert_string_equal(p.breach_id, "a100-east-1");
	assert_string_equal(p.pool, "a100-east");
	assert_string_equal(p.signal, "claim allocation latency p95");
	assert_string_equal(p.value, "2.4s");
	assert_string_equal(p.threshold, "2s");
	assert_string_equal(p.time, "2026-12-05T02:00:00Z");
	assert_string_equal(p.owner_uid, "5b1c-plan-uid");
	store_kind_freeze_parameters.release(&p);
	cJSON_Delete(written);

	/* Written before the parameter carried a time, or by hand: absent fields and owners are NULL. */
	cJSON *ok = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"drashift-freeze-gpu\","
				"\"namespace\":\"drashift-system\",\"resourceVersion\":\"7\",\"ownerReferences\":[{\"kind\":"
				"\"Deployment\",\"uid\":\"d\"}]},\"data\":{\"frozen\":\"true\","
				"\"plan\":\"gpu\",\"breachId\":\"a-failedSteps-1\"}}");
	assert_int_equal(store_kind_freeze_parameters.decode(ok, &p, err, sizeof(err)), 0);
	assert_true(p.frozen);
	assert_string_equal(p.plan, "gpu");
	assert_string_equal(p.breach_id, "a-failedSteps-1");
	assert_string_equal(p.meta.namespace, "drashift-system");
	assert_null(p.time);
	assert_null(p.owner_uid);
	store_kind_freeze_parameters.release(&p);
	cJSON_Delete(ok);

	cJSON *bad = cJSON_Parse("{\"metadata\":{\"name\":\"drashift-freeze-gpu\"},\"data\":{\"frozen\":true}}");
	assert_int_equal(store_kind_freeze_parameters.decode(bad, &p, err, sizeof(err)), -1);
	assert_string_equal(err, "data.frozen: not a string");
	cJSON_Delete(bad);
}

/*
 * The DeviceTaintRule: every device of the plan's driver tainted NoSchedule
 * (never NoExecute: running pods keep their devices), owned by the plan so
 * deleting the plan removes it, named like the parameter; a signal that is
 * no label value gives an empty taint value instead of a rule the API refuses.
 */
static void test_taint_rule_taints_the_driver_noschedule(void **state)
{
	(void)state;
	freeze_taint_t t = { .plan = "gpu-migration", .plan_uid = "0f1e-uid", .driver = "gpu.example.com",
			     .signal = "readyLatencyP95", .breach_id = "b-readyLatencyP95-1795988306",
			     .api_version = "resource.k8s.io/v1beta2" };
	char *json = freeze_taint_rule_json(&t);
	assert_non_null(json);
	cJSON *rule = cJSON_Parse(json);
	free(json);
	assert_string_equal(str_at(rule, "apiVersion", NULL, NULL), "resource.k8s.io/v1beta2");
	assert_string_equal(str_at(rule, "kind", NULL, NULL), "DeviceTaintRule");
	assert_string_equal(str_at(rule, "metadata", "name", NULL), "drashift-freeze-gpu-migration");
	assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rule, "metadata"), "namespace"));
	assert_string_equal(str_at(rule, "metadata", "annotations", "drashift.io/breach"), "b-readyLatencyP95-1795988306");
	assert_string_equal(str_at(rule, "metadata", "labels", "drashift.io/plan"), "gpu-migration");
	const cJSON *owner = cJSON_GetArrayItem(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rule, "metadata"), "ownerReferences"), 0);
	assert_string_equal(str_at(owner, "kind", NULL, NULL), "MigrationPlan");
	assert_string_equal(str_at(owner, "uid", NULL, NULL), "0f1e-uid");
	assert_string_equal(str_at(rule, "spec", "deviceSelector", "driver"), "gpu.example.com");
	assert_null(str_at(rule, "spec", "deviceSelector", "pool")); /* the whole driver, not one pool */
	assert_string_equal(str_at(rule, "spec", "taint", "key"), "drashift.io/freeze");
	assert_string_equal(str_at(rule, "spec", "taint", "value"), "readyLatencyP95");
	assert_string_equal(str_at(rule, "spec", "taint", "effect"), "NoSchedule");
	cJSON_Delete(rule);

	char *path = freeze_taint_rule_path("gpu-migration", t.api_version);
	assert_string_equal(path, "/apis/resource.k8s.io/v1beta2/devicetaintrules/drashift-freeze-gpu-migration");
	free(path);

	/* The version discovery chose (1.37: v1) is the rule's apiVersion and its path. */
	t.api_version = "resource.k8s.io/v1";
	json = freeze_taint_rule_json(&t);
	rule = cJSON_Parse(json);
	free(json);
	assert_string_equal(str_at(rule, "apiVersion", NULL, NULL), "resource.k8s.io/v1");
	cJSON_Delete(rule);
	path = freeze_taint_rule_path("gpu-migration", t.api_version);
	assert_string_equal(path, "/apis/resource.k8s.io/v1/devicetaintrules/drashift-freeze-gpu-migration");
	free(path);

	const char *bad_values[] = { "has space", "-dash", "x123456789012345678901234567890123456789012345678901234567890123" /* 64: one too long */ };
	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		t.signal = bad_values[i];
		json = freeze_taint_rule_json(&t);
		rule = cJSON_Parse(json);
		free(json);
		assert_string_equal(str_at(rule, "spec", "taint", "value"), "");
		cJSON_Delete(rule);
	}

	freeze_taint_t missing[] = {
		{ .plan = NULL, .plan_uid = "u", .driver = "d", .api_version = "resource.k8s.io/v1" },
		{ .plan = "p", .plan_uid = NULL, .driver = "d", .api_version = "resource.k8s.io/v1" },
		{ .plan = "p", .plan_uid = "u", .driver = "", .api_version = "resource.k8s.io/v1" },
		{ .plan = "p", .plan_uid = "u", .driver = "d", .api_version = NULL }, /* not served: nothing to write */
	};
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++)
		assert_null(freeze_taint_rule_json(&missing[i]));
	assert_int_equal(freeze_taint_set(NULL, &missing[0], NULL, NULL), -EINVAL);
	assert_int_equal(freeze_taint_clear(NULL, "", "resource.k8s.io/v1", NULL, NULL), -EINVAL);
	assert_int_equal(freeze_taint_clear(NULL, "p", NULL, NULL, NULL), -EINVAL);
	assert_null(freeze_taint_rule_path("p", ""));
}

/*
 * The tenant boundary's parameter carries what manifests/tenancy-policy.yaml
 * reads, in the same shape in every stage (restricted=false once Open), is
 * owned by the plan, and is refused for a plan without classes.
 */
static void test_tenancy_parameter_carries_the_decision(void **state)
{
	(void)state;
	char *classes[] = { "gpu.example.com", "gpu-mig.example.com" };
	char *canary[] = { "team-canary" };
	plan_pool_t pools[] = { { .name = "a100-east", .canary_namespaces = canary, .n_canary_namespaces = 1 } };
	plan_t plan = { .name = "gpu-migration", .device_classes = classes, .n_device_classes = 2, .pools = pools,
			.n_pools = 1 };
	tenancy_pool_t in_canary[] = { { .phase = POOL_CANARY, .n_canary = 1, .n_moved = 1 } };
	tenancy_t t;
	tenancy_decide(&plan, in_canary, &t);
	char *json = tenancy_parameter_json(&plan, "5b1c-plan-uid", &t);
	tenancy_free(&t);
	cJSON *cm = cJSON_Parse(json);
	free(json);
	assert_string_equal(str_at(cm, "metadata", "name", NULL), "drashift-tenancy-gpu-migration");
	assert_string_equal(str_at(cm, "metadata", "namespace", NULL), "drashift-system");
	assert_string_equal(str_at(cm, "metadata", "labels", "drashift.io/tenancy-parameter"), "true");
	const cJSON *owner = cJSON_GetArrayItem(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "ownerReferences"), 0);
	assert_string_equal(str_at(owner, "uid", NULL, NULL), "5b1c-plan-uid");
	static const char *const data[][2] = {
		{ "restricted", "true" },
		{ "plan", "gpu-migration" },
		{ "stage", "Canary" },
		{ "pools", "a100-east" },
		{ "deviceClasses", "gpu.example.com,gpu-mig.example.com" },
		{ "namespaces", "team-canary" },
		{ "namespaceSelector", "" },
	};
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++)
		assert_string_equal(str_at(cm, "data", data[i][0], NULL), data[i][1]);
	cJSON_Delete(cm);

	tenancy_pool_t on_dra[] = { { .phase = POOL_DRA, .n_canary = 1, .n_moved = 3 } };
	tenancy_decide(&plan, on_dra, &t);
	json = tenancy_parameter_json(&plan, "5b1c-plan-uid", &t);
	cm = cJSON_Parse(json);
	free(json);
	assert_string_equal(str_at(cm, "data", "restricted", NULL), "false");
	assert_string_equal(str_at(cm, "data", "stage", NULL), "Open");
	assert_string_equal(str_at(cm, "data", "namespaces", NULL), "");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cm, "data")), 7);
	cJSON_Delete(cm);

	plan.n_device_classes = 0;
	assert_null(tenancy_parameter_json(&plan, NULL, &t));
	tenancy_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached_parameter_decodes_and_refuses_bad_types),
		cmocka_unit_test(test_taint_rule_taints_the_driver_noschedule),
		cmocka_unit_test(test_frozen_parameter_carries_everything_the_policy_reads),
		cmocka_unit_test(test_unfrozen_parameter_keeps_shape_and_description),
		cmocka_unit_test(test_empty_namespaces_freeze_everywhere),
		cmocka_unit_test(test_describing_text_is_escaped),
		cmocka_unit_test(test_states_the_policy_would_misread_are_refused),
		cmocka_unit_test(test_every_plan_name_gives_one_valid_parameter_name),
		cmocka_unit_test(test_tenancy_parameter_carries_the_decision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
