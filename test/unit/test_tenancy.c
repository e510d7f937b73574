/*
 * The tenant boundary (reconcilers/tenancy.h): which namespaces may create
 * claims for a plan's DeviceClasses, as the pools move. One plan of two
 * pools; pool a's canary lists team-canary and team-ml, pool b's lists
 * team-b and team-ml; spec.tenancy allows team-x by name and namespaces
 * labelled tier=gpu. Each row is what the pools' runs show, the stage expected, and
 * which namespaces are admitted. spec.tenancy decodes strictly (unknown
 * members, empty selectors and bad names are refused with the field named).
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
#include "tenancy.h"

#define PLAN_HEAD                                                                                                  \
	"{'apiVersion':'drashift.io/v1alpha1','kind':'MigrationPlan','metadata':{'name':'gpu'},'spec':{"              \
	"'driver':'gpu.example.com','extendedResource':'example.com/gpu','deviceClassNames':['gpu.example.com'],"   \
	"'pools':[{'name':'a','nodeSelector':{'matchLabels':{'pool':'a'}},"                                          \
	"'canary':{'nodes':2,'namespaces':['team-canary','team-ml']}},"                                               \
	"{'name':'b','nodeSelector':{'matchLabels':{'pool':'b'}},'canary':{'nodes':1,'namespaces':['team-b','team-ml']}}]"

static void decode(const char *json, plan_t *plan)
{
	cJSON *obj = fixture_quoted_json(json);
	char err[256];
	int rc = plan_decode(obj, plan, err, sizeof(err));
	cJSON_Delete(obj);
	if (rc != 0)
		fail_msg("decode: %s", err);
}

/* spec.tenancy's namespace, then every pool's canary namespaces, once each. */
#define MIGRATING_NS "team-x,team-canary,team-ml,team-b"

static const projection_label_t gpu_tier[] = { { .key = "tier", .value = "gpu" } };

typedef struct {
	const char *what;
	tenancy_pool_t a, b;
	tenancy_stage_t stage;
	const char *namespaces; /* joined by ',' */
	const char *pools;
	/* Admitted? team-canary, team-b, team-x, a namespace labelled tier=gpu, one with no labels. */
	bool canary, team_b, team_x, labelled, other;
} row_t;

static const row_t rows[] = {
	{ "nothing started: spec.tenancy", { POOL_LEGACY, 0, 0 }, { POOL_LEGACY, 0, 0 }, TENANCY_MIGRATING, MIGRATING_NS, "",
	  true, true, true, true, false },
	{ "pool a in Canary before any node moved", { POOL_CANARY, 0, 0 }, { POOL_LEGACY, 0, 0 }, TENANCY_CANARY,
	  "team-canary,team-ml", "a", true, false, false, false, false },
	{ "pool a's canary moving", { POOL_CANARY, 2, 1 }, { POOL_LEGACY, 0, 0 }, TENANCY_CANARY, "team-canary,team-ml", "a",
	  true, false, false, false, false },
	{ "a paused canary stays restricted", { POOL_PAUSED, 2, 2 }, { POOL_LEGACY, 0, 0 }, TENANCY_CANARY,
	  "team-canary,team-ml", "a", true, false, false, false, false },
	{ "a frozen canary stays restricted", { POOL_FROZEN, 2, 2 }, { POOL_LEGACY, 0, 0 }, TENANCY_CANARY,
	  "team-canary,team-ml", "a", true, false, false, false, false },
	{ "a canary rolling back stays restricted", { POOL_ROLLING_BACK, 2, 1 }, { POOL_LEGACY, 0, 0 }, TENANCY_CANARY,
	  "team-canary,team-ml", "a", true, false, false, false, false },
	{ "two canaries: the union, once each", { POOL_CANARY, 2, 2 }, { POOL_CANARY, 1, 1 }, TENANCY_CANARY,
	  "team-canary,team-ml,team-b", "a,b", true, true, false, false, false },
	{ "pool a expanding: spec.tenancy", { POOL_EXPANDING, 2, 3 }, { POOL_LEGACY, 0, 0 }, TENANCY_MIGRATING, MIGRATING_NS, "",
	  true, true, true, true, false },
	{ "more nodes moved than the canary (paused while expanding)", { POOL_PAUSED, 2, 3 }, { POOL_LEGACY, 0, 0 },
	  TENANCY_MIGRATING, MIGRATING_NS, "", true, true, true, true, false },
	{ "a on DRA, b's canary cannot take the classes back", { POOL_DRA, 2, 4 }, { POOL_CANARY, 1, 1 },
	  TENANCY_MIGRATING, MIGRATING_NS, "", true, true, true, true, false },
	{ "every pool on DRA: open", { POOL_DRA, 2, 4 }, { POOL_DRA, 1, 3 }, TENANCY_OPEN, "", "", true, true, true, true,
	  true },
	{ "rolled back to legacy: spec.tenancy", { POOL_LEGACY, 2, 0 }, { POOL_LEGACY, 0, 0 }, TENANCY_MIGRATING, MIGRATING_NS,
	  "", true, true, true, true, false },
};

static char *joined(const char **items, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(items[i]) + 1;
	char *out = calloc(len, 1);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			strcat(out, ",");
		strcat(out, items[i]);
	}
	return out;
}

static void check_rows(const plan_t *plan)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const row_t *r = &rows[i];
		tenancy_pool_t pools[] = { r->a, r->b };
		tenancy_t t;
		tenancy_decide(plan, pools, &t);
		char *ns = joined(t.namespaces, t.n_namespaces), *names = joined(t.pools, t.n_pools);
		if (t.stage != r->stage || strcmp(ns, r->namespaces) != 0 || strcmp(names, r->pools) != 0)
			fail_msg("%s: stage %s namespaces '%s' pools '%s', want %s '%s' '%s'", r->what,
				 tenancy_stage_name(t.stage), ns, names, tenancy_stage_name(r->stage), r->namespaces,
				 r->pools);
		free(ns);
		free(names);
		bool got[] = { tenancy_admits(&t, "team-canary", NULL, 0), tenancy_admits(&t, "team-b", NULL, 0),
			       tenancy_admits(&t, "team-x", NULL, 0), tenancy_admits(&t, "labelled", gpu_tier, 1),
			       tenancy_admits(&t, "other", NULL, 0) };
		bool want[] = { r->canary, r->team_b, r->team_x, r->labelled, r->other };
		for (size_t k = 0; k < 5; k++)
			if (got[k] != want[k])
				fail_msg("%s: namespace %zu admitted %d, want %d", r->what, k, got[k], want[k]);
		tenancy_free(&t);
	}
}

static void test_stages(void **state)
{
	(void)state;
	plan_t plan;
	decode(PLAN_HEAD ",'tenancy':{'allowedNamespaces':['team-x'],'namespaceSelector':{'matchLabels':{'tier':'gpu'}}}}}",
	       &plan);
	check_rows(&plan);
	char *text = tenancy_selector_text(&plan.tenancy_selector);
	assert_string_equal(text, "tier In gpu");
	free(text);
	plan_free(&plan);
}

/* Without spec.tenancy, only the canary restricts; an empty canary list allows all. */
static void test_without_tenancy(void **state)
{
	(void)state;
	plan_t plan;
	decode(PLAN_HEAD "}}", &plan);
	tenancy_pool_t legacy[] = { { POOL_LEGACY, 0, 0 }, { POOL_LEGACY, 0, 0 } };
	tenancy_pool_t canary[] = { { POOL_CANARY, 2, 1 }, { POOL_LEGACY, 0, 0 } };
	tenancy_pool_t expanding[] = { { POOL_EXPANDING, 2, 3 }, { POOL_LEGACY, 0, 0 } };
	tenancy_t t;
	tenancy_decide(&plan, legacy, &t);
	assert_int_equal(t.stage, TENANCY_OPEN);
	assert_true(tenancy_admits(&t, "anyone", NULL, 0));
	tenancy_free(&t);
	tenancy_decide(&plan, canary, &t);
	assert_int_equal(t.stage, TENANCY_CANARY);
	assert_false(tenancy_admits(&t, "anyone", NULL, 0));
	assert_true(tenancy_admits(&t, "team-ml", NULL, 0));
	tenancy_free(&t);
	tenancy_decide(&plan, expanding, &t);
	assert_int_equal(t.stage, TENANCY_OPEN);
	tenancy_free(&t);
	plan_free(&plan);

	/* A pool in its canary that lists no namespaces restricts nothing. */
	decode("{'metadata':{'name':'p'},'spec':{'driver':'d.example.com','extendedResource':'example.com/gpu',"
	       "'deviceClassNames':['c'],'pools':[{'name':'a','nodeSelector':{'matchLabels':{'pool':'a'}}}]}}",
	       &plan);
	tenancy_decide(&plan, canary, &t);
	assert_int_equal(t.stage, TENANCY_OPEN);
	tenancy_free(&t);
	plan_free(&plan);
}

/* A plan that can restrict starts no handover until its parameter is written; one that cannot never waits. */
static void test_handovers_wait_for_the_boundary(void **state)
{
	(void)state;
	plan_t plan;
	decode(PLAN_HEAD "}}", &plan); /* canary namespaces, no spec.tenancy */
	assert_true(tenancy_restricts(&plan));
	assert_null(tenancy_hold(&plan, TENANCY_PARAM_WRITTEN));
	assert_string_equal(tenancy_hold(&plan, TENANCY_PARAM_UNWRITTEN), "the tenant boundary's parameter is being written");
	assert_string_equal(tenancy_hold(&plan, TENANCY_PARAM_WRITING), "the tenant boundary's parameter is being written");
	assert_string_equal(tenancy_hold(&plan, TENANCY_PARAM_FAILED),
			    "the tenant boundary's parameter could not be written (the TenantBoundary condition says why)");
	plan_free(&plan);
	decode("{'metadata':{'name':'p'},'spec':{'driver':'d.example.com','extendedResource':'example.com/gpu',"
	       "'deviceClassNames':['c'],'pools':[{'name':'a','nodeSelector':{'matchLabels':{'pool':'a'}}}],"
	       "'tenancy':{'namespaceSelector':{'matchLabels':{'tier':'gpu'}}}}}",
	       &plan);
	assert_true(tenancy_restricts(&plan));
	assert_non_null(tenancy_hold(&plan, TENANCY_PARAM_FAILED));
	plan_free(&plan);
	decode("{'metadata':{'name':'p'},'spec':{'driver':'d.example.com','extendedResource':'example.com/gpu',"
	       "'deviceClassNames':['c'],'pools':[{'name':'a','nodeSelector':{'matchLabels':{'pool':'a'}}}]}}",
	       &plan);
	assert_false(tenancy_restricts(&plan));
	for (int p = TENANCY_PARAM_UNWRITTEN; p <= TENANCY_PARAM_FAILED; p++)
		assert_null(tenancy_hold(&plan, (tenancy_param_t)p));
	plan_free(&plan);
}

static void test_selector_text(void **state)
{
	(void)state;
	plan_t plan;
	decode(PLAN_HEAD ",'tenancy':{'namespaceSelector':{'matchLabels':{'tier':'gpu'},'matchExpressions':["
			 "{'key':'example.com/team','operator':'In','values':['ml','vision']},"
			 "{'key':'frozen','operator':'DoesNotExist'},{'key':'env','operator':'NotIn','values':['dev']},"
			 "{'key':'gpu','operator':'Exists'}]}}}}",
	       &plan);
	char *text = tenancy_selector_text(&plan.tenancy_selector);
	assert_string_equal(text, "tier In gpu;example.com/team In ml,vision;frozen DoesNotExist;env NotIn dev;gpu Exists");
	free(text);
	text = tenancy_selector_text(NULL);
	assert_string_equal(text, "");
	free(text);
	plan_free(&plan);
}

static void test_decode_errors(void **state)
{
	(void)state;
	static const struct {
		const char *tenancy, *err;
	} cases[] = {
		{ "{'namespaces':['a']}", "spec.tenancy.namespaces: unknown field" },
		{ "{'namespaceSelector':{}}",
		  "spec.tenancy.namespaceSelector: must not be empty (an empty selector would select every namespace)" },
		{ "{'allowedNamespaces':['Team_A']}", "spec.tenancy.allowedNamespaces[0]: must be a namespace name" },
		{ "{'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'In'}]}}",
		  "spec.tenancy.namespaceSelector.matchExpressions[0]: values must be non-empty for In and NotIn" },
		{ "[]", "spec.tenancy: not an object" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[1024];
		snprintf(json, sizeof(json), PLAN_HEAD ",'tenancy':%s}}", cases[i].tenancy);
		cJSON *obj = fixture_quoted_json(json);
		plan_t plan;
		char err[256];
		assert_int_equal(plan_decode(obj, &plan, err, sizeof(err)), -1);
		cJSON_Delete(obj);
		if (strstr(err, cases[i].err) == NULL)
			fail_msg("tenancy %s: error '%s', want '%s'", cases[i].tenancy, err, cases[i].err);
		fixture_assert_zeroed(&plan, sizeof(plan));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stages),
		cmocka_unit_test(test_without_tenancy),
		cmocka_unit_test(test_handovers_wait_for_the_boundary),
		cmocka_unit_test(test_selector_text),
		cmocka_unit_test(test_decode_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
