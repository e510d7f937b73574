/*
 * MigrationPlan decoding: the example plans decode to exactly what the
 * reconcilers will read, the decoder's defaults are the CRD's, every rule the
 * CRD enforces is refused here too with the field named, selectors follow
 * metav1.LabelSelector (except that an empty one matches nothing) and canary
 * sizes round up within the pool. Every failure leaves the plan zeroed and,
 * under ASan, nothing leaked.
 *
 * Fixtures in plans/: gpu-migration.json and nvidia-gpu-operator.json are
 * manifests/examples as the API server returns them (defaults applied,
 * managedFields and a status included); minimal.json is a plan with only the
 * required fields as a user writes it, minimal-defaulted.json the same plan
 * read back from the API server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "plan.h"
#include "xalloc.h"

#define MIN_MS(m) ((uint64_t)(m) * 60 * 1000)
#define HOUR_MS(h) ((uint64_t)(h) * 60 * 60 * 1000)

/* ---- helpers ---- */

/*
 * Set the member at path ("spec.pools[0].canary", "spec.pools[1]") to the
 * single-quoted JSON value, or delete it when value is NULL. Missing objects
 * on the way are created; an index equal to an array's size appends.
 */
static void mutate(cJSON *root, const char *path, const char *value)
{
	cJSON *cur = root;
	const char *p = path;
	for (;;) {
		char name[64];
		size_t n = strcspn(p, ".[");
		assert_true(n > 0 && n < sizeof(name));
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		long idx = -1;
		if (*p == '[') {
			char *end;
			idx = strtol(p + 1, &end, 10);
			assert_true(*end == ']' && idx >= 0);
			p = end + 1;
		}
		bool last = *p == '\0';
		if (!last) {
			assert_true(*p == '.');
			p++;
		}
		cJSON *child = cJSON_GetObjectItemCaseSensitive(cur, name);
		if (idx < 0) {
			if (last) {
				cJSON_DeleteItemFromObjectCaseSensitive(cur, name);
				if (value != NULL)
					cJSON_AddItemToObject(cur, name, fixture_quoted_json(value));
				return;
			}
			if (child == NULL)
				child = cJSON_AddObjectToObject(cur, name);
			cur = child;
			continue;
		}
		assert_true(cJSON_IsArray(child));
		if (last) {
			int size = cJSON_GetArraySize(child);
			if (value == NULL)
				cJSON_DeleteItemFromArray(child, (int)idx);
			else if (idx == size)
				cJSON_AddItemToArray(child, fixture_quoted_json(value));
			else
				assert_true(cJSON_ReplaceItemInArray(child, (int)idx, fixture_quoted_json(value)));
			return;
		}
		cur = cJSON_GetArrayItem(child, (int)idx);
		assert_non_null(cur);
	}
}

/* Decode obj expecting success; fails the test with the decoder's error otherwise. */
static void decode_ok(const cJSON *obj, plan_t *p)
{
	char err[256] = "";
	if (plan_decode(obj, p, err, sizeof(err)) != 0)
		fail_msg("plan_decode failed: %s", err);
	assert_string_equal(err, "");
}

/* Decode obj expecting exactly the error want, with *out zeroed. */
static void decode_fails(const cJSON *obj, const char *want)
{
	plan_t p;
	char err[512];
	memset(&p, 0xa5, sizeof(p));
	memset(err, 'x', sizeof(err));
	err[sizeof(err) - 1] = '\0';
	int rc = plan_decode(obj, &p, err, sizeof(err));
	if (rc == 0) {
		plan_free(&p);
		fail_msg("decoded, but expected: %s", want);
	}
	assert_int_equal(rc, -1);
	if (strcmp(err, want) != 0)
		fail_msg("wrong error\n   got: %s\n  want: %s", err, want);
	assert_null(strchr(err, '\n'));
	fixture_assert_zeroed(&p, sizeof(p));
}

static void assert_req(const plan_requirement_t *r, const char *key, plan_selector_op_t op, size_t n_values, ...)
{
	va_list ap;
	assert_string_equal(r->key, key);
	assert_int_equal(r->op, op);
	assert_int_equal(r->n_values, n_values);
	va_start(ap, n_values);
	for (size_t i = 0; i < n_values; i++)
		assert_string_equal(r->values[i], va_arg(ap, const char *));
	va_end(ap);
}

/* ---- the example plans ---- */

static void test_decode_gpu_migration_example(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/gpu-migration.json");
	plan_t p;
	decode_ok(obj, &p);

	assert_string_equal(p.name, "gpu-migration");
	assert_non_null(p.uid);
	assert_true(strlen(p.uid) > 0);
	assert_int_equal(p.generation, 1);
	assert_string_equal(p.driver, "gpu.example.com");
	assert_string_equal(p.extended_resource, "example.com/gpu");
	assert_int_equal(p.n_device_classes, 1);
	assert_string_equal(p.device_classes[0], "gpu.example.com");
	assert_string_equal(p.device_plugin_label.key, "drashift.io/device-plugin");
	assert_string_equal(p.device_plugin_label.enabled, "true");
	assert_string_equal(p.device_plugin_label.disabled, "false");
	assert_string_equal(p.dra_label.key, "drashift.io/dra-driver");
	assert_int_equal(p.max_concurrent_pools, 1);
	assert_false(p.paused);
	assert_false(p.rollback_all);
	assert_null(p.acknowledged_breach);

	assert_int_equal(p.n_pools, 2);
	const plan_pool_t *a = &p.pools[0], *b = &p.pools[1];
	assert_string_equal(a->name, "a");
	assert_int_equal(a->node_selector.n_reqs, 1);
	assert_req(&a->node_selector.reqs[0], "drashift.io/pool", PLAN_SELECTOR_IN, 1, "a");
	assert_int_equal(a->canary_nodes, 1);
	assert_int_equal(a->canary_percent, 0);
	assert_int_equal(a->n_canary_namespaces, 1);
	assert_string_equal(a->canary_namespaces[0], "ml-canary");
	assert_int_equal(a->max_unavailable, 2);
	assert_int_equal(a->bake_ms, MIN_MS(15));
	assert_int_equal(a->drain_deadline_ms, HOUR_MS(2));
	assert_int_equal(a->handover_deadline_ms, MIN_MS(10));
	assert_int_equal(a->drain_policy, PLAN_DRAIN_WAIT);
	assert_int_equal(a->eviction_deadline_ms, MIN_MS(30));
	assert_false(a->rollback);

	assert_string_equal(b->name, "b");
	assert_int_equal(b->node_selector.n_reqs, 2);
	assert_req(&b->node_selector.reqs[0], "drashift.io/pool", PLAN_SELECTOR_IN, 1, "b");
	assert_req(&b->node_selector.reqs[1], "node.kubernetes.io/exclude-from-migration",
		   PLAN_SELECTOR_DOES_NOT_EXIST, 0);
	assert_int_equal(b->canary_nodes, 0);
	assert_int_equal(b->canary_percent, 25);
	assert_int_equal(b->n_canary_namespaces, 0);
	assert_int_equal(b->max_unavailable, 1);
	assert_int_equal(b->bake_ms, MIN_MS(30));
	assert_int_equal(b->drain_deadline_ms, HOUR_MS(1));
	assert_int_equal(b->drain_policy, PLAN_DRAIN_EVICT);
	assert_int_equal(b->eviction_deadline_ms, MIN_MS(45));

	assert_int_equal(p.slo.window_ms, MIN_MS(15));
	assert_int_equal(p.slo.min_samples, 20);
	assert_int_equal(p.slo.allocation_latency_p95_ms, 5000);
	assert_int_equal(p.slo.ready_latency_p95_ms, MIN_MS(2));
	assert_int_equal(p.slo.max_allocation_failure_percent, 5);
	assert_int_equal(p.slo.max_driver_errors, 0);
	assert_int_equal(p.slo.max_capacity_drift, 0);
	assert_int_equal(p.slo.stuck_threshold_ms, MIN_MS(5));
	assert_int_equal(p.slo.breach_policy, PLAN_BREACH_FREEZE);
	assert_int_equal(p.slo.freeze_mode, PLAN_FREEZE_ADMISSION);
	assert_true(plan_freeze_by_admission(p.slo.freeze_mode));
	assert_false(plan_freeze_by_device_taint(p.slo.freeze_mode));

	plan_free(&p);
	fixture_assert_zeroed(&p, sizeof(p));
	cJSON_Delete(obj);
}

static void test_decode_nvidia_gpu_operator_example(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/nvidia-gpu-operator.json");
	plan_t p;
	decode_ok(obj, &p);

	assert_string_equal(p.name, "nvidia-gpu-operator");
	assert_string_equal(p.driver, "gpu.nvidia.com");
	assert_string_equal(p.extended_resource, "nvidia.com/gpu");
	assert_int_equal(p.n_device_classes, 2);
	assert_string_equal(p.device_classes[0], "gpu.nvidia.com");
	assert_string_equal(p.device_classes[1], "mig.nvidia.com");
	assert_string_equal(p.device_plugin_label.key, "nvidia.com/gpu.deploy.device-plugin");
	assert_string_equal(p.device_plugin_label.enabled, "true");
	assert_string_equal(p.device_plugin_label.disabled, "false");
	assert_string_equal(p.dra_label.key, "nvidia.com/dra-kubelet-plugin");

	assert_int_equal(p.n_pools, 2);
	const plan_pool_t *train = &p.pools[0], *infer = &p.pools[1];
	assert_string_equal(train->name, "a100-training");
	assert_int_equal(train->node_selector.n_reqs, 2);
	assert_req(&train->node_selector.reqs[0], "nvidia.com/gpu.product", PLAN_SELECTOR_IN, 1,
		   "NVIDIA-A100-SXM4-80GB");
	assert_req(&train->node_selector.reqs[1], "node-role.example.com/training", PLAN_SELECTOR_EXISTS, 0);
	assert_int_equal(train->canary_nodes, 2);
	assert_string_equal(train->canary_namespaces[0], "ml-platform-canary");
	assert_int_equal(train->bake_ms, HOUR_MS(1));
	assert_int_equal(train->drain_deadline_ms, HOUR_MS(6));
	assert_int_equal(train->handover_deadline_ms, MIN_MS(15));
	assert_int_equal(train->drain_policy, PLAN_DRAIN_WAIT);

	assert_string_equal(infer->name, "h100-inference");
	assert_req(&infer->node_selector.reqs[1], "node-role.example.com/inference", PLAN_SELECTOR_IN, 2, "online",
		   "batch");
	assert_int_equal(infer->canary_percent, 10);
	assert_int_equal(infer->bake_ms, HOUR_MS(2));
	assert_int_equal(infer->drain_policy, PLAN_DRAIN_EVICT);
	assert_int_equal(infer->eviction_deadline_ms, MIN_MS(20));

	assert_int_equal(p.slo.window_ms, MIN_MS(30));
	assert_int_equal(p.slo.min_samples, 50);
	assert_int_equal(p.slo.allocation_latency_p95_ms, 10000);
	assert_int_equal(p.slo.ready_latency_p95_ms, MIN_MS(3));
	assert_int_equal(p.slo.max_allocation_failure_percent, 2);
	assert_int_equal(p.slo.stuck_threshold_ms, MIN_MS(10));
	assert_int_equal(p.slo.breach_policy, PLAN_BREACH_FREEZE_AND_ROLLBACK);
	assert_int_equal(p.slo.freeze_mode, PLAN_FREEZE_ADMISSION_AND_DEVICE_TAINT);
	assert_true(plan_freeze_by_admission(p.slo.freeze_mode));
	assert_true(plan_freeze_by_device_taint(p.slo.freeze_mode));

	plan_free(&p);
	cJSON_Delete(obj);
}

/* ---- defaults ---- */

static void assert_same_label(const plan_label_t *x, const plan_label_t *y)
{
	assert_string_equal(x->key, y->key);
	assert_string_equal(x->enabled, y->enabled);
	assert_string_equal(x->disabled, y->disabled);
}

/* The decoder's defaults are the CRD's: a plan as written and as the API server defaulted it decode alike. */
static void test_defaults_match_the_crd(void **state)
{
	(void)state;
	cJSON *written = fixture_json("plans/minimal.json"), *stored = fixture_json("plans/minimal-defaulted.json");
	plan_t w, s;
	decode_ok(written, &w);
	decode_ok(stored, &s);

	/* The defaults themselves. */
	assert_string_equal(w.device_plugin_label.key, "drashift.io/device-plugin");
	assert_string_equal(w.device_plugin_label.enabled, "true");
	assert_string_equal(w.device_plugin_label.disabled, "false");
	assert_string_equal(w.dra_label.key, "drashift.io/dra-driver");
	assert_string_equal(w.dra_label.enabled, "true");
	assert_string_equal(w.dra_label.disabled, "false");
	assert_int_equal(w.max_concurrent_pools, 1);
	assert_false(w.paused);
	const plan_pool_t *a = &w.pools[0];
	assert_int_equal(a->canary_nodes, 1);
	assert_int_equal(a->canary_percent, 0);
	assert_int_equal(a->n_canary_namespaces, 0);
	assert_int_equal(a->max_unavailable, 1);
	assert_int_equal(a->bake_ms, MIN_MS(10));
	assert_int_equal(a->drain_deadline_ms, HOUR_MS(1));
	assert_int_equal(a->handover_deadline_ms, MIN_MS(10));
	assert_int_equal(a->drain_policy, PLAN_DRAIN_WAIT);
	assert_int_equal(a->eviction_deadline_ms, MIN_MS(30));
	assert_int_equal(w.slo.window_ms, MIN_MS(10));
	assert_int_equal(w.slo.min_samples, 20);
	assert_int_equal(w.slo.allocation_latency_p95_ms, 0);
	assert_int_equal(w.slo.ready_latency_p95_ms, 0);
	assert_int_equal(w.slo.max_allocation_failure_percent, 5);
	assert_int_equal(w.slo.max_driver_errors, 0);
	assert_int_equal(w.slo.max_capacity_drift, 0);
	assert_int_equal(w.slo.stuck_threshold_ms, MIN_MS(5));
	assert_int_equal(w.slo.breach_policy, PLAN_BREACH_FREEZE);

	/* ... equal to what the API server filled in. */
	assert_same_label(&w.device_plugin_label, &s.device_plugin_label);
	assert_same_label(&w.dra_label, &s.dra_label);
	assert_int_equal(w.max_concurrent_pools, s.max_concurrent_pools);
	assert_int_equal(w.paused, s.paused);
	assert_int_equal(w.n_pools, s.n_pools);
	const plan_pool_t *b = &s.pools[0];
	assert_int_equal(a->canary_nodes, b->canary_nodes);
	assert_int_equal(a->canary_percent, b->canary_percent);
	assert_int_equal(a->max_unavailable, b->max_unavailable);
	assert_int_equal(a->bake_ms, b->bake_ms);
	assert_int_equal(a->drain_deadline_ms, b->drain_deadline_ms);
	assert_int_equal(a->handover_deadline_ms, b->handover_deadline_ms);
	assert_int_equal(a->drain_policy, b->drain_policy);
	assert_int_equal(a->eviction_deadline_ms, b->eviction_deadline_ms);
	assert_memory_equal(&w.slo, &s.slo, sizeof(w.slo));

	plan_free(&w);
	plan_free(&s);
	cJSON_Delete(written);
	cJSON_Delete(stored);
}

static void test_rollback_pause_and_acknowledgement(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/gpu-migration.json");
	mutate(obj, "spec.rollback", "{'all':false,'pools':['b']}");
	mutate(obj, "spec.paused", "true");
	mutate(obj, "spec.acknowledgedBreach", "'a-allocationLatencyP95-1714564800'");
	plan_t p;
	decode_ok(obj, &p);
	assert_false(p.rollback_all);
	assert_false(p.pools[0].rollback);
	assert_true(p.pools[1].rollback);
	assert_true(p.paused);
	assert_string_equal(p.acknowledged_breach, "a-allocationLatencyP95-1714564800");
	plan_free(&p);

	mutate(obj, "spec.promote", "{'pools':['a']}");
	decode_ok(obj, &p);
	assert_true(p.pools[0].promote);
	assert_false(p.pools[1].promote);
	plan_free(&p);

	mutate(obj, "spec.rollback", "{'all':true}");
	mutate(obj, "spec.promote", "{'pools':[]}");
	mutate(obj, "spec.acknowledgedBreach", "''");
	decode_ok(obj, &p);
	assert_true(p.rollback_all);
	assert_false(p.pools[0].rollback);
	assert_false(p.pools[1].rollback);
	assert_false(p.pools[0].promote);
	assert_null(p.acknowledged_breach);
	plan_free(&p);
	cJSON_Delete(obj);
}

static void test_pool_capacity(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/gpu-migration.json");
	mutate(obj, "spec.pools[1].capacity",
	       "{'replicasPerDevice':4,'legacyResources':['example.com/mig-1g.10gb','example.com/mig-3g.40gb']}");
	plan_t p;
	decode_ok(obj, &p);
	assert_int_equal(p.pools[0].replicas_per_device, 0);
	assert_int_equal(p.pools[0].n_legacy_resources, 0);
	assert_int_equal(p.pools[1].replicas_per_device, 4);
	assert_int_equal(p.pools[1].n_legacy_resources, 2);
	assert_string_equal(p.pools[1].legacy_resources[1], "example.com/mig-3g.40gb");
	plan_free(&p);
	cJSON_Delete(obj);
}

/* JSON null means "not set", as in the API: defaults apply. */
/* spec.windows and promotion: Manual decode to what the reconcilers read; the zone is loaded by the controller. */
static void test_windows_and_manual_promotion(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/minimal.json");
	mutate(obj, "spec.pools[0].promotion", "'Manual'");
	mutate(obj, "spec.windows",
	       "[{'days':['Saturday','Sunday'],'start':'22:00','end':'02:30:15','timeZone':'Europe/Berlin'},"
	       "{'days':['Wednesday'],'start':'09:00','end':'17:00','timeZone':'America/New_York'}]");
	plan_t p;
	decode_ok(obj, &p);
	assert_true(p.pools[0].manual_promotion);
	assert_int_equal(p.n_windows, 2);
	assert_int_equal(p.windows[0].days, (1 << 0) | (1 << 6));
	assert_int_equal(p.windows[0].start_s, 22 * 3600);
	assert_int_equal(p.windows[0].end_s, 2 * 3600 + 30 * 60 + 15);
	assert_string_equal(p.windows[0].time_zone, "Europe/Berlin");
	assert_int_equal(p.windows[1].days, 1 << 3);
	assert_string_equal(p.windows[1].time_zone, "America/New_York");
	plan_free(&p);
	mutate(obj, "spec.pools[0].promotion", NULL);
	mutate(obj, "spec.windows", NULL);
	decode_ok(obj, &p);
	assert_false(p.pools[0].manual_promotion);
	assert_int_equal(p.n_windows, 0);
	plan_free(&p);
	cJSON_Delete(obj);
}

#define PROM_Q "{'name':'prepareP95','query':'histogram_quantile(0.95, sum by (le) (rate(x_bucket[$window])))','threshold':0.5}"

static void test_prometheus_queries(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/minimal.json");
	mutate(obj, "spec.slo", "{'window':'15m','prometheus':{'address':'https://prometheus.monitoring:9090',"
			       "'secretName':'drashift-prometheus','insecureSkipVerify':true,'interval':'15s','timeout':'5s',"
			       "'queries':[" PROM_Q ",{'name':'claimsInUse','query':'sum(dra_resource_claims_in_use)',"
			       "'threshold':4,'breachWhen':'Below','window':'2m','onNoData':'Breach','onError':'Breach'}]}}");
	plan_t p;
	decode_ok(obj, &p);
	const plan_prometheus_t *prom = &p.slo.prometheus;
	assert_string_equal(prom->address, "https://prometheus.monitoring:9090");
	assert_string_equal(prom->secret_name, "drashift-prometheus");
	assert_true(prom->insecure_skip_verify);
	assert_int_equal(prom->interval_ms, 15000);
	assert_int_equal(prom->timeout_ms, 5000);
	assert_int_equal(prom->n_queries, 2);
	assert_string_equal(prom->queries[0].name, "prepareP95");
	assert_true(prom->queries[0].threshold == 0.5);
	assert_int_equal(prom->queries[0].breach_when, PLAN_PROM_BREACH_ABOVE);
	assert_int_equal(prom->queries[0].window_ms, MIN_MS(15)); /* spec.slo.window */
	assert_int_equal(prom->queries[0].on_no_data, PLAN_PROM_INCONCLUSIVE);
	assert_int_equal(prom->queries[0].on_error, PLAN_PROM_INCONCLUSIVE);
	assert_int_equal(prom->queries[1].breach_when, PLAN_PROM_BREACH_BELOW);
	assert_int_equal(prom->queries[1].window_ms, MIN_MS(2));
	assert_int_equal(prom->queries[1].on_no_data, PLAN_PROM_BREACH);
	assert_int_equal(prom->queries[1].on_error, PLAN_PROM_BREACH);
	plan_free(&p);

	mutate(obj, "spec.slo", "{'prometheus':{'address':'http://127.0.0.1:9090','queries':[" PROM_Q "]}}");
	decode_ok(obj, &p);
	assert_null(p.slo.prometheus.secret_name);
	assert_false(p.slo.prometheus.insecure_skip_verify);
	assert_int_equal(p.slo.prometheus.interval_ms, 30000);
	assert_int_equal(p.slo.prometheus.timeout_ms, 10000);
	plan_free(&p);

	mutate(obj, "spec.slo", NULL);
	decode_ok(obj, &p);
	assert_null(p.slo.prometheus.address);
	assert_int_equal(p.slo.prometheus.n_queries, 0);
	plan_free(&p);
	cJSON_Delete(obj);
}

static void test_null_members_take_defaults(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/minimal.json");
	mutate(obj, "spec.pools[0].canary", "null");
	mutate(obj, "spec.pools[0].bakeTime", "null");
	mutate(obj, "spec.slo", "null");
	mutate(obj, "spec.ownership", "{'devicePlugin':null,'draDriver':{'key':null,'enabled':'on','disabled':'off'}}");
	plan_t p;
	decode_ok(obj, &p);
	assert_int_equal(p.pools[0].canary_nodes, 1);
	assert_int_equal(p.pools[0].bake_ms, MIN_MS(10));
	assert_int_equal(p.slo.min_samples, 20);
	assert_string_equal(p.device_plugin_label.key, "drashift.io/device-plugin");
	assert_string_equal(p.dra_label.key, "drashift.io/dra-driver");
	assert_string_equal(p.dra_label.enabled, "on");
	assert_string_equal(p.dra_label.disabled, "off");
	plan_free(&p);
	cJSON_Delete(obj);
}

/* ---- validation: each rule of the CRD, and the ones CEL cannot state cheaply ---- */

typedef struct {
	const char *path;  /* member of minimal.json to change */
	const char *value; /* single-quoted JSON; NULL deletes */
	const char *want;  /* the exact error */
} plan_case_t;

#define POOL_A "{'name':'a','nodeSelector':{'matchLabels':{'drashift.io/pool':'a'}}}"

static const plan_case_t validation_cases[] = {
	/* pools */
	{"spec.pools", NULL, "spec.pools: missing"},
	{"spec.pools", "[]", "spec.pools: must list at least one pool"},
	{"spec.pools", "[" POOL_A "," POOL_A "]", "spec.pools[1].name: pool names must be unique (\"a\" is also spec.pools[0])"},
	{"spec.pools[0].name", "'Pool_A'",
	 "spec.pools[0].name: must be a DNS label (lowercase alphanumerics and '-', at most 63 characters)"},
	{"spec.pools[0].name", NULL, "spec.pools[0].name: missing"},
	{"spec.pools[0].maxUnavailable", "0", "spec.pools[0].maxUnavailable: must be at least 1"},
	/* capacity */
	{"spec.pools[0].capacity", "{'replicasPerDevice':0}", "spec.pools[0].capacity.replicasPerDevice: must be at least 1"},
	{"spec.pools[0].capacity", "{'legacyResources':['mig-1g.10gb']}",
	 "spec.pools[0].capacity.legacyResources[0]: must be a domain-prefixed resource name such as nvidia.com/mig-1g.10gb (\"mig-1g.10gb\")"},
	{"spec.pools[0].capacity", "{'legacyResources':['example.com/gpu']}",
	 "spec.pools[0].capacity.legacyResources[0]: must not repeat spec.extendedResource: its units would count twice"},
	{"spec.pools[0].capacity", "{'replicas':4}", "spec.pools[0].capacity.replicas: unknown field (this drashift does not know it)"},
	/* ownership */
	{"spec.ownership", "{'devicePlugin':{'key':'example.com/owner'},'draDriver':{'key':'example.com/owner'}}",
	 "spec.ownership: devicePlugin.key and draDriver.key must differ: one label cannot record two owners"},
	{"spec.ownership", "{'draDriver':{'key':'drashift.io/device-plugin'}}",
	 "spec.ownership: devicePlugin.key and draDriver.key must differ: one label cannot record two owners"},
	{"spec.ownership", "{'draDriver':{'enabled':'yes','disabled':'yes'}}",
	 "spec.ownership.draDriver: enabled and disabled must differ"},
	{"spec.ownership", "{'devicePlugin':{'key':'nvidia.com/'}}",
	 "spec.ownership.devicePlugin.key: must be a label key such as example.com/name"},
	{"spec.ownership", "{'devicePlugin':{'key':'-bad.example.com/x'}}",
	 "spec.ownership.devicePlugin.key: must be a label key such as example.com/name"},
	{"spec.ownership", "{'devicePlugin':{'key':'a/b/c'}}",
	 "spec.ownership.devicePlugin.key: must be a label key such as example.com/name"},
	{"spec.ownership",
	 "{'devicePlugin':{'key':'example.com/n234567890123456789012345678901234567890123456789012345678901234'}}",
	 "spec.ownership.devicePlugin.key: must be a label key such as example.com/name"},
	{"spec.ownership", "{'devicePlugin':{'enabled':'on duty'}}",
	 "spec.ownership.devicePlugin.enabled: must be a label value"},
	/* durations */
	{"spec.pools[0].bakeTime", "'-5m'", "spec.pools[0].bakeTime: must not be negative"},
	{"spec.pools[0].bakeTime", "'5 minutes'",
	 "spec.pools[0].bakeTime: must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
	{"spec.pools[0].deadlines", "{'drain':'0s'}", "spec.pools[0].deadlines.drain: must be greater than zero"},
	{"spec.pools[0].deadlines", "{'handover':'1.5h'}",
	 "spec.pools[0].deadlines.handover: must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
	{"spec.pools[0].drain", "{'evictionDeadline':'0h0m'}",
	 "spec.pools[0].drain.evictionDeadline: must be greater than zero"},
	{"spec.slo", "{'window':'0ms'}", "spec.slo.window: must be greater than zero"},
	{"spec.slo", "{'stuckThreshold':'-1s'}", "spec.slo.stuckThreshold: must not be negative"},
	{"spec.slo", "{'readyLatencyP95':'99999999999999999999h'}", "spec.slo.readyLatencyP95: out of range (at most 2562047h)"},
	/* enums */
	{"spec.pools[0].drain", "{'policy':'Kill'}",
	 "spec.pools[0].drain.policy: unsupported value \"Kill\": supported values: Wait, Evict"},
	{"spec.pools[0].drain", "{'policy':'wait'}",
	 "spec.pools[0].drain.policy: unsupported value \"wait\": supported values: Wait, Evict"},
	{"spec.slo", "{'breachPolicy':'Rollback'}",
	 "spec.slo.breachPolicy: unsupported value \"Rollback\": supported values: Freeze, FreezeAndRollback"},
	/* canary */
	{"spec.pools[0].canary", "{'nodes':1,'percent':5}", "spec.pools[0].canary: set exactly one of nodes or percent"},
	{"spec.pools[0].canary", "{'namespaces':['ml']}", "spec.pools[0].canary: set exactly one of nodes or percent"},
	{"spec.pools[0].canary", "{'percent':0}", "spec.pools[0].canary.percent: must be 1..100"},
	{"spec.pools[0].canary", "{'percent':101}", "spec.pools[0].canary.percent: must be 1..100"},
	{"spec.pools[0].canary", "{'nodes':0}", "spec.pools[0].canary.nodes: must be at least 1"},
	{"spec.pools[0].canary", "{'nodes':-3}", "spec.pools[0].canary.nodes: must be at least 1"},
	{"spec.pools[0].canary", "{'nodes':1,'namespaces':['Team_A']}",
	 "spec.pools[0].canary.namespaces[0]: must be a namespace name (\"Team_A\")"},
	{"spec.pools[0].canary", "{'nodes':1,'namespaces':['a','b','a']}",
	 "spec.pools[0].canary.namespaces[2]: duplicate value \"a\""},
	/* rollback */
	{"spec.rollback", "{'pools':['a','c']}",
	 "spec.rollback.pools[1]: must name pools listed in spec.pools (\"c\" is not one)"},
	/* promote */
	{"spec.promote", "{'pools':['c']}",
	 "spec.promote.pools[0]: must name pools listed in spec.pools (\"c\" is not one)"},
	{"spec.promote", "{'all':true}", "spec.promote.all: unknown field (this drashift does not know it)"},
	/* promotion */
	{"spec.pools[0].promotion", "'manual'",
	 "spec.pools[0].promotion: unsupported value \"manual\": supported values: Automatic, Manual"},
	/* maintenance windows */
	{"spec.windows", "[{'start':'22:00','end':'02:00','timeZone':'UTC'}]", "spec.windows[0].days: must list at least one day"},
	{"spec.windows", "[{'days':['Mon'],'start':'22:00','end':'02:00','timeZone':'UTC'}]",
	 "spec.windows[0].days[0]: must be a day of the week (Monday .. Sunday) (\"Mon\")"},
	{"spec.windows", "[{'days':['Monday','Monday'],'start':'22:00','end':'02:00','timeZone':'UTC'}]",
	 "spec.windows[0].days[1]: duplicate value \"Monday\""},
	{"spec.windows", "[{'days':['Monday'],'start':'24:00','end':'02:00','timeZone':'UTC'}]",
	 "spec.windows[0].start: must be a time of day HH:MM or HH:MM:SS from 00:00 to 23:59:59 (\"24:00\")"},
	{"spec.windows", "[{'days':['Monday'],'start':'9:00','end':'17:00','timeZone':'UTC'}]",
	 "spec.windows[0].start: must be a time of day HH:MM or HH:MM:SS from 00:00 to 23:59:59 (\"9:00\")"},
	{"spec.windows", "[{'days':['Monday'],'start':'09:00','end':'17:60','timeZone':'UTC'}]",
	 "spec.windows[0].end: must be a time of day HH:MM or HH:MM:SS from 00:00 to 23:59:59 (\"17:60\")"},
	{"spec.windows", "[{'days':['Monday'],'start':'09:00','end':'09:00:00','timeZone':'UTC'}]",
	 "spec.windows[0].end: must differ from start"},
	{"spec.windows", "[{'days':['Monday'],'start':'09:00','end':'17:00'}]", "spec.windows[0].timeZone: missing"},
	{"spec.windows", "[{'days':['Monday'],'start':'09:00','end':'17:00','timeZone':'../../etc/passwd'}]",
	 "spec.windows[0].timeZone: must be an IANA time zone name such as Europe/Berlin (\"../../etc/passwd\")"},
	{"spec.windows", "[{'days':['Monday'],'start':'09:00','end':'17:00','timeZone':'/etc/localtime'}]",
	 "spec.windows[0].timeZone: must be an IANA time zone name such as Europe/Berlin (\"/etc/localtime\")"},
	{"spec.windows", "[{'days':['Monday'],'start':'09:00','end':'17:00','timeZone':'UTC','zone':'UTC'}]",
	 "spec.windows[0].zone: unknown field (this drashift does not know it)"},
	/* selectors */
	{"spec.pools[0].nodeSelector", NULL, "spec.pools[0].nodeSelector: missing"},
	{"spec.pools[0].nodeSelector", "{}",
	 "spec.pools[0].nodeSelector: must not be empty (an empty selector would select every node)"},
	{"spec.pools[0].nodeSelector", "{'matchLabels':{},'matchExpressions':[]}",
	 "spec.pools[0].nodeSelector: must not be empty (an empty selector would select every node)"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'key':'pool','operator':'In'}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0]: values must be non-empty for In and NotIn, and empty for "
	 "Exists and DoesNotExist"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'key':'pool','operator':'NotIn','values':[]}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0]: values must be non-empty for In and NotIn, and empty for "
	 "Exists and DoesNotExist"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'key':'pool','operator':'Exists','values':['a']}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0]: values must be non-empty for In and NotIn, and empty for "
	 "Exists and DoesNotExist"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'key':'gpus','operator':'Gt','values':['1']}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0].operator: unsupported value \"Gt\": supported values: In, "
	 "NotIn, Exists, DoesNotExist"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'key':'pool'}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0].operator: missing"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'operator':'Exists'}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0].key: missing"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'key':'pool','operator':'In','values':['a b']}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0].values[0]: must be a label value (\"a b\")"},
	{"spec.pools[0].nodeSelector", "{'matchLabels':{'-x':'a'}}",
	 "spec.pools[0].nodeSelector.matchLabels[\"-x\"]: must be a label key such as example.com/name"},
	{"spec.pools[0].nodeSelector", "{'matchLabels':{'pool':'a/b'}}",
	 "spec.pools[0].nodeSelector.matchLabels[\"pool\"]: must be a label value"},
	{"spec.pools[0].nodeSelector", "{'matchLabels':{'drashift.io/device-plugin':'true'}}",
	 "spec.pools[0].nodeSelector: must not use the ownership label \"drashift.io/device-plugin\": nodes would leave "
	 "the pool as drashift flips it"},
	{"spec.pools[0].nodeSelector",
	 "{'matchLabels':{'pool':'a'},'matchExpressions':[{'key':'drashift.io/dra-driver','operator':'DoesNotExist'}]}",
	 "spec.pools[0].nodeSelector: must not use the ownership label \"drashift.io/dra-driver\": nodes would leave "
	 "the pool as drashift flips it"},
	/* plan-wide */
	{"spec.driver", NULL, "spec.driver: missing"},
	{"spec.driver", "'GPU.example.com'",
	 "spec.driver: must be a DRA driver name (a DNS subdomain of at most 63 characters)"},
	{"spec.driver", "'a234567890123456789012345678901234567890.example.example.example.com'",
	 "spec.driver: must be a DRA driver name (a DNS subdomain of at most 63 characters)"},
	{"spec.extendedResource", "'gpu'",
	 "spec.extendedResource: must be a domain-prefixed resource name such as example.com/gpu"},
	{"spec.deviceClassNames", NULL, "spec.deviceClassNames: missing"},
	{"spec.deviceClassNames", "[]", "spec.deviceClassNames: must list at least one DeviceClass"},
	{"spec.deviceClassNames", "['gpu.example.com','GPU']",
	 "spec.deviceClassNames[1]: must be a DeviceClass name (a DNS subdomain) (\"GPU\")"},
	{"spec.maxConcurrentPools", "0", "spec.maxConcurrentPools: must be at least 1"},
	{"spec.slo", "{'maxAllocationFailurePercent':101}", "spec.slo.maxAllocationFailurePercent: must be 0..100"},
	{"spec.slo", "{'minSamples':0}", "spec.slo.minSamples: must be at least 1"},
	{"spec.slo", "{'maxDriverErrors':-1}", "spec.slo.maxDriverErrors: must be at least 0"},
	/* fields this drashift does not know: never act on a plan it does not fully understand */
	{"spec.pools[0].freezeBy", "'DeviceTaint'",
	 "spec.pools[0].freezeBy: unknown field (this drashift does not know it)"},
	{"spec.slo.promQL", "'up'", "spec.slo.promQL: unknown field (this drashift does not know it)"},
	/* prometheus */
	{"spec.slo.prometheus", "{'queries':[" PROM_Q "]}", "spec.slo.prometheus.address: missing"},
	{"spec.slo.prometheus", "{'address':'prometheus:9090','queries':[" PROM_Q "]}",
	 "spec.slo.prometheus.address: must be an http:// or https:// URL without query, fragment or trailing slash"},
	{"spec.slo.prometheus", "{'address':'http://p:9090/','queries':[" PROM_Q "]}",
	 "spec.slo.prometheus.address: must be an http:// or https:// URL without query, fragment or trailing slash"},
	{"spec.slo.prometheus", "{'address':'http://p:9090?x=1','queries':[" PROM_Q "]}",
	 "spec.slo.prometheus.address: must be an http:// or https:// URL without query, fragment or trailing slash"},
	{"spec.slo.prometheus", "{'address':'http://p:9090'}", "spec.slo.prometheus.queries: must list at least one query"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[]}",
	 "spec.slo.prometheus.queries: must list at least one query"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','secretName':'Bad_Name','queries':[" PROM_Q "]}",
	 "spec.slo.prometheus.secretName: must be a Secret name (a DNS subdomain)"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','interval':'0s','queries':[" PROM_Q "]}",
	 "spec.slo.prometheus.interval: must be greater than zero"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[" PROM_Q "," PROM_Q "]}",
	 "spec.slo.prometheus.queries[1].name: query names must be unique (\"prepareP95\" is also queries[0])"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'allocationLatencyP95','query':'up','threshold':1}]}",
	 "spec.slo.prometheus.queries[0].name: \"allocationLatencyP95\" is a built-in signal's name"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'p95-prepare','query':'up','threshold':1}]}",
	 "spec.slo.prometheus.queries[0].name: must be a signal name: a letter, then letters, digits or '_', at most 63 (\"p95-prepare\")"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'up','query':'','threshold':1}]}",
	 "spec.slo.prometheus.queries[0].query: empty"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'up','query':'up'}]}",
	 "spec.slo.prometheus.queries[0].threshold: missing"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'up','query':'up','threshold':'1'}]}",
	 "spec.slo.prometheus.queries[0].threshold: not a number"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'up','query':'up','threshold':1,'onError':'Pass'}]}",
	 "spec.slo.prometheus.queries[0].onError: unsupported value \"Pass\": supported values: Inconclusive, Breach"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'up','query':'up','threshold':1,'breachWhen':'Over'}]}",
	 "spec.slo.prometheus.queries[0].breachWhen: unsupported value \"Over\": supported values: Above, Below"},
	{"spec.slo.prometheus", "{'address':'http://p:9090','queries':[{'name':'up','query':'up','threshold':1,'step':'1m'}]}",
	 "spec.slo.prometheus.queries[0].step: unknown field (this drashift does not know it)"},
	{"spec.pools[0].nodeSelector.matchFields", "[]",
	 "spec.pools[0].nodeSelector.matchFields: unknown field (this drashift does not know it)"},
	{"spec.a b", "1", "spec[\"a b\"]: unknown field (this drashift does not know it)"},
	/* identity */
	{"apiVersion", "'drashift.io/v1'", "apiVersion: \"drashift.io/v1\" is not drashift.io/v1alpha1"},
	{"kind", "'Node'", "kind: \"Node\" is not MigrationPlan"},
	{"metadata.name", NULL, "metadata.name: missing"},
	{"metadata.name", "''", "metadata.name: empty"},
	{"spec", NULL, "spec: missing"},
};

static void test_validation_errors_name_the_field(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(validation_cases) / sizeof(validation_cases[0]); i++) {
		const plan_case_t *c = &validation_cases[i];
		cJSON *obj = fixture_json("plans/minimal.json");
		mutate(obj, c->path, c->value);
		decode_fails(obj, c->want);
		cJSON_Delete(obj);
	}
}

/* Wrong JSON types anywhere are refused with the field named, never read as something else. */
static const plan_case_t type_cases[] = {
	{"spec", "'plan'", "spec: not an object"},
	{"metadata", "[]", "metadata: not an object"},
	{"metadata.generation", "-1", "metadata.generation: not a non-negative integer"},
	{"metadata.generation", "'1'", "metadata.generation: not a number"},
	{"spec.driver", "1", "spec.driver: not a string"},
	{"spec.deviceClassNames", "'gpu.example.com'", "spec.deviceClassNames: not an array"},
	{"spec.deviceClassNames", "[1]", "spec.deviceClassNames[0]: not a string"},
	{"spec.pools", "{'a':{}}", "spec.pools: not an array"},
	{"spec.pools[0]", "'a'", "spec.pools[0]: not an object"},
	{"spec.pools[0].nodeSelector", "['a']", "spec.pools[0].nodeSelector: not an object"},
	{"spec.pools[0].nodeSelector", "{'matchLabels':{'pool':1}}",
	 "spec.pools[0].nodeSelector.matchLabels[\"pool\"]: not a string"},
	{"spec.pools[0].nodeSelector", "{'matchLabels':['pool']}", "spec.pools[0].nodeSelector.matchLabels: not an object"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':{'key':'x'}}",
	 "spec.pools[0].nodeSelector.matchExpressions: not an array"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[7]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0]: not an object"},
	{"spec.pools[0].nodeSelector", "{'matchExpressions':[{'key':'x','operator':'In','values':'a'}]}",
	 "spec.pools[0].nodeSelector.matchExpressions[0].values: not an array"},
	{"spec.pools[0].canary", "{'nodes':'1'}", "spec.pools[0].canary.nodes: not a number"},
	{"spec.pools[0].canary", "{'nodes':1.5}", "spec.pools[0].canary.nodes: not an integer"},
	{"spec.pools[0].canary", "{'nodes':1e10}", "spec.pools[0].canary.nodes: out of range (at most 2147483647)"},
	{"spec.pools[0].canary", "{'nodes':1e300}", "spec.pools[0].canary.nodes: out of range"},
	{"spec.pools[0].canary", "1", "spec.pools[0].canary: not an object"},
	{"spec.pools[0].bakeTime", "600", "spec.pools[0].bakeTime: not a string"},
	{"spec.pools[0].maxUnavailable", "true", "spec.pools[0].maxUnavailable: not a number"},
	{"spec.paused", "'yes'", "spec.paused: not a boolean"},
	{"spec.rollback", "{'all':1}", "spec.rollback.all: not a boolean"},
	{"spec.rollback", "{'pools':'a'}", "spec.rollback.pools: not an array"},
	{"spec.ownership", "'nvidia'", "spec.ownership: not an object"},
	{"spec.ownership", "{'devicePlugin':{'key':7}}", "spec.ownership.devicePlugin.key: not a string"},
	{"spec.slo", "{'breachPolicy':1}", "spec.slo.breachPolicy: not a string"},
	{"spec.slo", "{'freezeMode':'Taint'}",
	 "spec.slo.freezeMode: unsupported value \"Taint\": supported values: Admission, DeviceTaint, AdmissionAndDeviceTaint"},
	{"spec.acknowledgedBreach", "{}", "spec.acknowledgedBreach: not a string"},
};

static void test_malformed_types(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(type_cases) / sizeof(type_cases[0]); i++) {
		const plan_case_t *c = &type_cases[i];
		cJSON *obj = fixture_json("plans/minimal.json");
		mutate(obj, c->path, c->value);
		decode_fails(obj, c->want);
		cJSON_Delete(obj);
	}
	cJSON *arr = fixture_quoted_json("[{'spec':{}}]");
	decode_fails(arr, "(top level): not a JSON object");
	cJSON_Delete(arr);
	decode_fails(NULL, "(top level): not a JSON object");
}

/* Lists beyond the CRD's maxItems are refused rather than read in part. */
static void test_limits(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/minimal.json");
	cJSON *pools = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "pools");
	for (int i = 1; i < 33; i++) {
		char pool[160];
		snprintf(pool, sizeof(pool), "{'name':'p%d','nodeSelector':{'matchLabels':{'drashift.io/pool':'p%d'}}}", i, i);
		cJSON_AddItemToArray(pools, fixture_quoted_json(pool));
	}
	decode_fails(obj, "spec.pools: more than 32 items");
	cJSON_DeleteItemFromArray(pools, 32);
	plan_t p;
	decode_ok(obj, &p);
	assert_int_equal(p.n_pools, 32);
	assert_string_equal(p.pools[31].name, "p31");
	plan_free(&p);
	cJSON_Delete(obj);

	obj = fixture_json("plans/minimal.json");
	mutate(obj, "spec.pools[0].nodeSelector", "{'matchLabels':{'a':'1','b':'1','c':'1','d':'1','e':'1','f':'1','g':'1',"
						 "'h':'1','i':'1','j':'1','k':'1','l':'1','m':'1','n':'1','o':'1','p':'1','q':'1'}}");
	decode_fails(obj, "spec.pools[0].nodeSelector.matchLabels: more than 16 labels");
	cJSON_Delete(obj);
}

/* cJSON keeps a repeated key and lookups see the first: a repeat is refused, not half-read. */
static void test_duplicate_members(void **state)
{
	(void)state;
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"driver\":\"gpu.example.com\","
				 "\"extendedResource\":\"example.com/gpu\",\"deviceClassNames\":[\"gpu.example.com\"],"
				 "\"pools\":[{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\","
				 "\"pool\":\"b\"}}}],\"paused\":false,\"paused\":true}}");
	assert_non_null(obj);
	decode_fails(obj, "spec.paused: duplicate field");
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "paused");
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "paused");
	decode_fails(obj, "spec.pools[0].nodeSelector.matchLabels[\"pool\"]: duplicate key");
	cJSON_Delete(obj);
}

/* Whatever the document holds, an error is one line and fits the buffer it is given. */
static void test_errors_stay_one_line(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("plans/minimal.json");
	mutate(obj, "spec.pools[0].nodeSelector", "{'matchLabels':{'bad\\nkey\\u0001':'a'}}");
	decode_fails(obj, "spec.pools[0].nodeSelector.matchLabels[\"bad\\x0akey\\x01\"]: must be a label key such as "
			  "example.com/name");

	plan_t p;
	char small[16];
	memset(small, 'x', sizeof(small));
	assert_int_equal(plan_decode(obj, &p, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, "spec.pools[0].n", sizeof(small) - 1);
	assert_int_equal(plan_decode(obj, &p, NULL, 0), -1);
	fixture_assert_zeroed(&p, sizeof(p));
	cJSON_Delete(obj);

	/* A long hostile value is cut in the message. */
	obj = fixture_json("plans/minimal.json");
	char big[400] = "'";
	memset(big + 1, 'Z', 300);
	memcpy(big + 301, "'", 2);
	mutate(obj, "spec.pools[0].canary", "{'nodes':1,'namespaces':[]}");
	cJSON *ns = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
							 cJSON_GetObjectItemCaseSensitive(obj, "spec"), "pools"),
						 0),
						 "canary"),
		"namespaces");
	cJSON *v = fixture_quoted_json(big);
	cJSON_AddItemToArray(ns, v);
	char err[512];
	assert_int_equal(plan_decode(obj, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "spec.pools[0].canary.namespaces[0]: must be a namespace name (\"ZZZZ"));
	assert_non_null(strstr(err, "ZZZ...\")"));
	assert_true(strlen(err) < 200);
	cJSON_Delete(obj);
}

/* ---- durations ---- */

static void test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		uint64_t ms;
		const char *want_err; /* NULL: decodes to ms */
	} cases[] = {
		{"0s", 0, NULL},
		{"0ms", 0, NULL},
		{"500ms", 500, NULL},
		{"30s", 30000, NULL},
		{"10m", 600000, NULL},
		{"1h", 3600000, NULL},
		{"1h30m", 5400000, NULL},
		{"1m1ms", 60001, NULL},
		{"1ms1m", 60001, NULL},
		{"90s", 90000, NULL},
		{"001m", 60000, NULL},
		{"2562047h47m16s854ms", UINT64_C(9223372036854), NULL},
		{"2562047h47m16s855ms", 0, "out of range (at most 2562047h)"},
		{"2562048h", 0, "out of range (at most 2562047h)"},
		{"18446744073709551616ms", 0, "out of range (at most 2562047h)"},
		{"-5m", 0, "must not be negative"},
		{"-0s", 0, "must not be negative"},
		{"+5m", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"10", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"m", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"5M", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"1d", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"1.5h", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"1h-5m", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"5 m", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"1us", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"1mss", 0, "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"},
		{"0000000000000000000000000000001s", 1000, NULL}, /* 32 characters, the CRD's maxLength */
		{"00000000000000000000000000000001s", 0, "longer than 32 characters"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char value[96], want[256];
		cJSON *obj = fixture_json("plans/minimal.json");
		snprintf(value, sizeof(value), "'%s'", cases[i].text);
		mutate(obj, "spec.pools[0].bakeTime", value);
		if (cases[i].want_err == NULL) {
			plan_t p;
			decode_ok(obj, &p);
			assert_int_equal(p.pools[0].bake_ms, cases[i].ms);
			plan_free(&p);
		} else {
			snprintf(want, sizeof(want), "spec.pools[0].bakeTime: %s", cases[i].want_err);
			decode_fails(obj, want);
		}
		cJSON_Delete(obj);
	}
}

/* ---- selectors ---- */

/* Decode a plan whose only pool has this nodeSelector (single-quoted JSON). */
static void selector_plan(const char *selector, plan_t *p, cJSON **obj)
{
	*obj = fixture_json("plans/minimal.json");
	mutate(*obj, "spec.pools[0].nodeSelector", selector);
	decode_ok(*obj, p);
}

typedef struct {
	const char *selector;
	const char *labels; /* "k=v,k2=v2"; "" no labels; "k=" an empty value */
	bool want;
} selector_case_t;

static const selector_case_t selector_cases[] = {
	/* matchLabels */
	{"{'matchLabels':{'drashift.io/pool':'a'}}", "drashift.io/pool=a", true},
	{"{'matchLabels':{'drashift.io/pool':'a'}}", "drashift.io/pool=a,kubernetes.io/hostname=n1", true},
	{"{'matchLabels':{'drashift.io/pool':'a'}}", "drashift.io/pool=b", false},
	{"{'matchLabels':{'drashift.io/pool':'a'}}", "", false},
	{"{'matchLabels':{'drashift.io/pool':'a'}}", "drashift.io/Pool=a", false},
	{"{'matchLabels':{'pool':'a','zone':'z1'}}", "pool=a,zone=z1", true},
	{"{'matchLabels':{'pool':'a','zone':'z1'}}", "pool=a,zone=z2", false},
	{"{'matchLabels':{'pool':'a','zone':'z1'}}", "pool=a", false},
	{"{'matchLabels':{'pool':''}}", "pool=", true},
	{"{'matchLabels':{'pool':''}}", "", false},
	/* In */
	{"{'matchExpressions':[{'key':'pool','operator':'In','values':['a','b']}]}", "pool=a", true},
	{"{'matchExpressions':[{'key':'pool','operator':'In','values':['a','b']}]}", "pool=b", true},
	{"{'matchExpressions':[{'key':'pool','operator':'In','values':['a','b']}]}", "pool=c", false},
	{"{'matchExpressions':[{'key':'pool','operator':'In','values':['a','b']}]}", "", false},
	/* NotIn: an absent label is not in the set */
	{"{'matchExpressions':[{'key':'pool','operator':'NotIn','values':['a']}]}", "pool=b", true},
	{"{'matchExpressions':[{'key':'pool','operator':'NotIn','values':['a']}]}", "", true},
	{"{'matchExpressions':[{'key':'pool','operator':'NotIn','values':['a']}]}", "pool=a", false},
	/* Exists, DoesNotExist */
	{"{'matchExpressions':[{'key':'gpu','operator':'Exists'}]}", "gpu=", true},
	{"{'matchExpressions':[{'key':'gpu','operator':'Exists'}]}", "gpu=a100", true},
	{"{'matchExpressions':[{'key':'gpu','operator':'Exists'}]}", "gpux=a100", false},
	{"{'matchExpressions':[{'key':'gpu','operator':'DoesNotExist'}]}", "", true},
	{"{'matchExpressions':[{'key':'gpu','operator':'DoesNotExist'}]}", "gpu=", false},
	/* Everything ANDed */
	{"{'matchLabels':{'pool':'b'},'matchExpressions':[{'key':'exclude','operator':'DoesNotExist'},"
	 "{'key':'tier','operator':'In','values':['online','batch']}]}",
	 "pool=b,tier=batch", true},
	{"{'matchLabels':{'pool':'b'},'matchExpressions':[{'key':'exclude','operator':'DoesNotExist'},"
	 "{'key':'tier','operator':'In','values':['online','batch']}]}",
	 "pool=b,tier=batch,exclude=yes", false},
	{"{'matchLabels':{'pool':'b'},'matchExpressions':[{'key':'exclude','operator':'DoesNotExist'},"
	 "{'key':'tier','operator':'In','values':['online','batch']}]}",
	 "pool=a,tier=online", false},
};

/* Split "k=v,k2=v2" into labels (borrowing from buf). */
static size_t split_labels(char *buf, projection_label_t *labels, size_t max)
{
	size_t n = 0;
	char *p = buf;
	while (*p != '\0' && n < max) {
		char *comma = strchr(p, ',');
		if (comma != NULL)
			*comma = '\0';
		char *eq = strchr(p, '=');
		assert_non_null(eq);
		*eq = '\0';
		labels[n].key = p;
		labels[n].value = eq + 1;
		n++;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return n;
}

static void test_selector_matching(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(selector_cases) / sizeof(selector_cases[0]); i++) {
		const selector_case_t *c = &selector_cases[i];
		plan_t p;
		cJSON *obj;
		char buf[256];
		projection_label_t labels[8];
		selector_plan(c->selector, &p, &obj);
		snprintf(buf, sizeof(buf), "%s", c->labels);
		size_t n = split_labels(buf, labels, 8);
		projection_node_t node = {.labels = labels, .n_labels = n};
		bool got = plan_selector_matches(&p.pools[0].node_selector, &node);
		if (got != c->want)
			fail_msg("case %zu: selector %s on labels {%s}: got %d, want %d", i, c->selector, c->labels, got,
				 c->want);
		plan_free(&p);
		cJSON_Delete(obj);
	}
}

/* An empty selector matches nothing, never every node (unlike metav1.LabelSelector). */
static void test_empty_selector_matches_nothing(void **state)
{
	(void)state;
	plan_selector_t empty = {0};
	projection_label_t labels[] = {{.key = "drashift.io/pool", .value = "a"}};
	projection_node_t node = {.labels = labels, .n_labels = 1}, bare = {0};
	assert_false(plan_selector_matches(&empty, &node));
	assert_false(plan_selector_matches(&empty, &bare));
	assert_false(plan_selector_matches(NULL, &node));
}

/* ---- selectors on nodes with many labels ---- */

/*
 * A GPU node running Node Feature Discovery and GPU Feature Discovery carries
 * hundreds of labels, and the API server returns them sorted by key. The
 * selector must see each of them: a DoesNotExist that misses the label passes
 * and takes a node the plan excludes.
 */
#define LABEL_FIRST "a.example.com/pool"  /* sorts before every NFD label */
#define LABEL_LAST "zz.example.com/pool" /* sorts after every one */

static void label_set(projection_label_t *l, char *key, char *value)
{
	l->key = key;
	l->value = value;
}

/*
 * A node of n labels in the API server's order: NFD-style fillers, with key
 * (value "a") in the first or the last place when given.
 */
static projection_node_t many_labels_node(size_t n, const char *key, bool first)
{
	projection_node_t node = {.labels = xcalloc(n + 1, sizeof(projection_label_t)), .n_labels = n};
	for (size_t i = 0; i < n; i++)
		label_set(&node.labels[i], xasprintf("feature.node.kubernetes.io/cpu-cpuid.F%04zu", i), xstrdup("true"));
	if (key != NULL && n > 0) {
		projection_label_t *l = &node.labels[first ? 0 : n - 1];
		free(l->key);
		free(l->value);
		label_set(l, xstrdup(key), xstrdup("a"));
	}
	return node;
}

static void free_labels(projection_node_t *node)
{
	for (size_t i = 0; i < node->n_labels; i++) {
		free(node->labels[i].key);
		free(node->labels[i].value);
	}
	free(node->labels);
}

static void test_selector_sees_every_label(void **state)
{
	(void)state;
	static const size_t counts[] = {0, 1, 127, 128, 129, 500};
	static const struct {
		const char *op;
		const char *values; /* ",'values':[...]" or "" */
		bool when_carried, when_absent;
	} ops[] = {
		{"In", ",'values':['a']", true, false},
		{"In", ",'values':['b']", false, false},
		{"NotIn", ",'values':['a']", false, true},
		{"NotIn", ",'values':['b']", true, true},
		{"Exists", "", true, false},
		{"DoesNotExist", "", false, true},
	};
	static const char *const keys[] = {LABEL_FIRST, LABEL_LAST};
	size_t checked = 0;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		for (size_t k = 0; k < 2; k++) {
			for (int carried = 0; carried <= 1; carried++) {
				if (carried && counts[c] == 0)
					continue; /* a node of no labels carries none */
				projection_node_t node = many_labels_node(counts[c], carried ? keys[k] : NULL, k == 0);
				for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
					char sel[256];
					snprintf(sel, sizeof(sel), "{'matchExpressions':[{'key':'%s','operator':'%s'%s}]}", keys[k],
						 ops[o].op, ops[o].values);
					plan_t p;
					cJSON *obj;
					selector_plan(sel, &p, &obj);
					bool want = carried ? ops[o].when_carried : ops[o].when_absent;
					bool got = plan_selector_matches(&p.pools[0].node_selector, &node);
					if (got != want)
						fail_msg("%zu labels, %s %s (%s): got %d, want %d", counts[c], keys[k], ops[o].op,
							 carried ? "carried" : "absent", got, want);
					plan_free(&p);
					cJSON_Delete(obj);
					checked++;
				}
				free_labels(&node);
			}
		}
	}
	assert_int_equal(checked, 6 * (2 * 11)); /* 11 nodes per key: 6 counts absent, 5 carried */
}

/*
 * manifests/examples/gpu-migration.yaml's pattern on an NFD node: the pool's
 * label sorts first, the exclusion label after every feature label.
 */
static void test_exclusion_on_a_node_with_many_labels(void **state)
{
	(void)state;
	plan_t p;
	cJSON *obj;
	selector_plan("{'matchLabels':{'" LABEL_FIRST "':'a'},"
		      "'matchExpressions':[{'key':'node.kubernetes.io/exclude-from-migration','operator':'DoesNotExist'}]}",
		      &p, &obj);
	projection_node_t node = many_labels_node(200, LABEL_FIRST, true);
	assert_true(plan_selector_matches(&p.pools[0].node_selector, &node));
	projection_label_t *l = &node.labels[node.n_labels - 1];
	free(l->key);
	free(l->value);
	label_set(l, xstrdup("node.kubernetes.io/exclude-from-migration"), xstrdup("true"));
	assert_false(plan_selector_matches(&p.pools[0].node_selector, &node));
	free_labels(&node);
	plan_free(&p);
	cJSON_Delete(obj);
}

/* splitmix64: a fixed seed gives the same cases on every run. */
static uint64_t prng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const projection_label_t *)a)->key, ((const projection_label_t *)b)->key);
}

/*
 * Property: adding labels the selector does not name, any number of them,
 * with keys that sort anywhere, never changes whether it matches. Selectors
 * of 1 to 4 requirements on keys spread over the alphabet; nodes carry some
 * of those keys with values a, b or c, then 0 to 600 unrelated labels, and
 * the whole set is sorted by key as the API server returns it.
 */
static void test_unrelated_labels_never_change_a_match(void **state)
{
	(void)state;
	static const char *const keys[] = {"0.example.com/k", "a.example.com/pool", "gpu.example.com/tier",
					   "node.kubernetes.io/exclude-from-migration", "zz.example.com/pool"};
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist"};
	static const char *const vals[] = {"a", "b", "c"};
	static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	const size_t n_keys = sizeof(keys) / sizeof(keys[0]);
	uint64_t seed = 18;
	size_t matched = 0, big = 0;
	for (int round = 0; round < 400; round++) {
		/* The selector: distinct keys, each with an operator and for In/NotIn one or two values. */
		char sel[1024];
		size_t len = (size_t)snprintf(sel, sizeof(sel), "{'matchExpressions':[");
		size_t n_reqs = 1 + prng_next(&seed) % 4, start = prng_next(&seed) % n_keys;
		for (size_t r = 0; r < n_reqs; r++) {
			const char *op = ops[prng_next(&seed) % 4];
			bool with_values = strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0;
			len += (size_t)snprintf(sel + len, sizeof(sel) - len, "%s{'key':'%s','operator':'%s'", r ? "," : "",
						keys[(start + r) % n_keys], op);
			if (with_values)
				len += (size_t)snprintf(sel + len, sizeof(sel) - len, ",'values':['%s','%s']",
							vals[prng_next(&seed) % 3], vals[prng_next(&seed) % 3]);
			len += (size_t)snprintf(sel + len, sizeof(sel) - len, "}");
		}
		snprintf(sel + len, sizeof(sel) - len, "]}");
		assert_true(len + 2 < sizeof(sel));
		plan_t p;
		cJSON *obj;
		selector_plan(sel, &p, &obj);

		/* The node's own labels: each key carried or not. */
		size_t n_extra = prng_next(&seed) % 601;
		projection_node_t node = {.labels = xcalloc(n_keys + n_extra + 1, sizeof(projection_label_t))};
		for (size_t k = 0; k < n_keys; k++)
			if (prng_next(&seed) % 2)
				label_set(&node.labels[node.n_labels++], xstrdup(keys[k]), xstrdup(vals[prng_next(&seed) % 3]));
		qsort(node.labels, node.n_labels, sizeof(projection_label_t), label_cmp);
		bool before = plan_selector_matches(&p.pools[0].node_selector, &node);

		/* Unrelated labels: a random first character, so they sort before, between and after those keys. */
		for (size_t e = 0; e < n_extra; e++) {
			char first = alphabet[prng_next(&seed) % (sizeof(alphabet) - 1)];
			label_set(&node.labels[node.n_labels++],
				  xasprintf("%c%llx.unrelated.example.com/f%zu", first,
					    (unsigned long long)(prng_next(&seed) % 0xffff), e),
				  xstrdup(vals[prng_next(&seed) % 3]));
		}
		qsort(node.labels, node.n_labels, sizeof(projection_label_t), label_cmp);
		bool after = plan_selector_matches(&p.pools[0].node_selector, &node);
		if (after != before)
			fail_msg("round %d: selector %s matched %d with the node's own labels, %d with %zu unrelated ones added",
				 round, sel, before, after, n_extra);
		matched += before;
		big += node.n_labels > 128;
		free_labels(&node);
		plan_free(&p);
		cJSON_Delete(obj);
	}
	/* The cases cover both answers and nodes past any small fixed bound. */
	assert_true(matched > 40 && matched < 360);
	assert_true(big > 200);
}

/* ---- canary sizes ---- */

static void test_canary_size(void **state)
{
	(void)state;
	static const struct {
		int32_t nodes, percent;
		size_t pool, want;
	} cases[] = {
		{1, 0, 10, 1},
		{3, 0, 10, 3},
		{5, 0, 3, 3},     /* larger than the pool: the whole pool (the reconciler marks it Invalid) */
		{1, 0, 0, 0},     /* an empty pool has no canary */
		{0, 25, 8, 2},
		{0, 25, 9, 3},    /* 2.25 rounds up */
		{0, 10, 5, 1},    /* 0.5 rounds up */
		{0, 1, 10, 1},    /* 0.1: at least one node */
		{0, 1, 1000, 10},
		{0, 1, 1001, 11},
		{0, 33, 3, 1},    /* 0.99 */
		{0, 34, 3, 2},    /* 1.02 */
		{0, 100, 7, 7},
		{0, 50, 0, 0},
		{0, 100, SIZE_MAX, SIZE_MAX},
		{0, 50, SIZE_MAX, SIZE_MAX / 2 + 1}, /* no overflow in percent * n */
		{0, 0, 4, 1},                        /* neither set (never decoded so): one node */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		plan_pool_t pool = {.canary_nodes = cases[i].nodes, .canary_percent = cases[i].percent};
		size_t got = plan_canary_size(&pool, cases[i].pool);
		if (got != cases[i].want)
			fail_msg("case %zu: nodes=%d percent=%d of %zu: got %zu, want %zu", i, (int)cases[i].nodes,
				 (int)cases[i].percent, cases[i].pool, got, cases[i].want);
	}

	/* And from decoded plans. */
	plan_t p;
	cJSON *obj = fixture_json("plans/gpu-migration.json");
	decode_ok(obj, &p);
	assert_int_equal(plan_canary_size(&p.pools[0], 4), 1);
	assert_int_equal(plan_canary_size(&p.pools[1], 4), 1);
	assert_int_equal(plan_canary_size(&p.pools[1], 10), 3);
	plan_free(&p);
	cJSON_Delete(obj);
}

static void test_free_zeroed_plan(void **state)
{
	(void)state;
	plan_t p = {0};
	plan_free(&p);
	plan_free(NULL);
	fixture_assert_zeroed(&p, sizeof(p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_gpu_migration_example),
		cmocka_unit_test(test_decode_nvidia_gpu_operator_example),
		cmocka_unit_test(test_defaults_match_the_crd),
		cmocka_unit_test(test_rollback_pause_and_acknowledgement),
		cmocka_unit_test(test_pool_capacity),
		cmocka_unit_test(test_null_members_take_defaults),
		cmocka_unit_test(test_windows_and_manual_promotion),
		cmocka_unit_test(test_prometheus_queries),
		cmocka_unit_test(test_validation_errors_name_the_field),
		cmocka_unit_test(test_malformed_types),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_duplicate_members),
		cmocka_unit_test(test_errors_stay_one_line),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_selector_matching),
		cmocka_unit_test(test_empty_selector_matches_nothing),
		cmocka_unit_test(test_selector_sees_every_label),
		cmocka_unit_test(test_exclusion_on_a_node_with_many_labels),
		cmocka_unit_test(test_unrelated_labels_never_change_a_match),
		cmocka_unit_test(test_canary_size),
		cmocka_unit_test(test_free_zeroed_plan),
	};
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
