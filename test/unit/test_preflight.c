/*
 * Preflight: each check passes on a cluster set up right, and fails (or
 * warns) with a line naming the fix when one thing is wrong; pools that have
 * not started wait unless the plan says Warn, and a recorded pass or a
 * started pool never waits.
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
#include "preflight.h"

/* ---- what the CEL text says ---------------------------------------------------- */

static const struct {
	const char *expr;
	const char *driver; /* NULL: undecided */
} cel_cases[] = {
	{ "device.driver == \"gpu.example.com\"", "gpu.example.com" },
	{ "device.driver=='gpu.example.com'", "gpu.example.com" },
	{ "  (device.driver == \"gpu.example.com\")  ", "gpu.example.com" },
	{ "\"gpu.example.com\" == device.driver", "gpu.example.com" },
	{ "device.driver == \"nic.example.com\"", "nic.example.com" },
	{ "device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].model == \"a100\"",
	  "gpu.example.com" },
	{ "device.attributes[\"gpu.example.com\"].model == \"a&&b\" && device.driver == \"gpu.example.com\"",
	  "gpu.example.com" },
	/* || anywhere changes what a conjunct means: undecided. */
	{ "device.driver == \"gpu.example.com\" && x || device.driver == \"other\"", NULL },
	{ "device.driver == \"a\" || device.driver == \"b\"", NULL },
	{ "device.driver != \"gpu.example.com\"", NULL },
	{ "!(device.driver == \"gpu.example.com\")", NULL },
	{ "device.driver.startsWith(\"gpu\")", NULL },
	{ "device.driver in [\"gpu.example.com\"]", NULL },
	{ "x ? device.driver == \"a\" : true", NULL },
	{ "device.driver == \"gpu\\\\.example.com\"", NULL }, /* an escape */
	{ "device.driver == \"gpu.example.com", NULL },      /* an open literal */
	{ "device.attributes[\"gpu.example.com\"].model == \"a100\"", NULL },
	{ "(device.driver == \"a\") && (true)", "a" },
	{ "", NULL },
};

static void test_cel_driver_from_text(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cel_cases) / sizeof(cel_cases[0]); i++) {
		char *driver = (char *)"unset";
		preflight_cel_t v = preflight_cel_driver(cel_cases[i].expr, &driver);
		if (cel_cases[i].driver == NULL) {
			if (v != PREFLIGHT_CEL_UNDECIDED || driver != NULL)
				fail_msg("case %zu (%s): decided %s", i, cel_cases[i].expr, driver ? driver : "(null)");
		} else {
			if (v != PREFLIGHT_CEL_DRIVER || driver == NULL || strcmp(driver, cel_cases[i].driver) != 0)
				fail_msg("case %zu (%s): got %s", i, cel_cases[i].expr, driver ? driver : "undecided");
		}
		free(driver);
	}
}

/* ---- what a DaemonSet selects ---------------------------------------------------- */

static const struct {
	const char *ds; /* single-quoted JSON */
	preflight_ds_t want;
} ds_cases[] = {
	{ "{'spec':{'template':{'spec':{'nodeSelector':{'drashift.io/device-plugin':'true'}}}}}", PREFLIGHT_DS_SELECTS },
	{ "{'spec':{'template':{'spec':{'nodeSelector':{'drashift.io/device-plugin':'false'}}}}}", PREFLIGHT_DS_MENTIONS },
	{ "{'spec':{'template':{'spec':{'nodeSelector':{'other':'true'}}}}}", PREFLIGHT_DS_NO },
	{ "{'spec':{'template':{'spec':{}}}}", PREFLIGHT_DS_NO },
	{ "{}", PREFLIGHT_DS_NO },
	/* Every required term must demand the value: terms are ORed. */
	{ "{'spec':{'template':{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	  "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'gpu','operator':'Exists'},"
	  "{'key':'drashift.io/device-plugin','operator':'In','values':['true']}]}]}}}}}}}",
	  PREFLIGHT_DS_SELECTS },
	{ "{'spec':{'template':{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	  "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'drashift.io/device-plugin','operator':'In','values':['true']}]},"
	  "{'matchExpressions':[{'key':'gpu','operator':'Exists'}]}]}}}}}}}",
	  PREFLIGHT_DS_MENTIONS },
	{ "{'spec':{'template':{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	  "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'drashift.io/device-plugin','operator':'In','values':['true','false']}]}]}}}}}}}",
	  PREFLIGHT_DS_MENTIONS },
	{ "{'spec':{'template':{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	  "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'drashift.io/device-plugin','operator':'NotIn','values':['false']}]}]}}}}}}}",
	  PREFLIGHT_DS_MENTIONS },
	{ "{'spec':{'template':{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	  "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'drashift.io/device-plugin','operator':'Exists'}]}]}}}}}}}",
	  PREFLIGHT_DS_MENTIONS },
	/* A preferred term alone does not keep the pods off other nodes. */
	{ "{'spec':{'template':{'spec':{'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	  "[{'weight':1,'preference':{'matchExpressions':[{'key':'drashift.io/device-plugin','operator':'In','values':['true']}]}}]}}}}}}",
	  PREFLIGHT_DS_NO },
};

static void test_daemonset_selects_on_label(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ds_cases) / sizeof(ds_cases[0]); i++) {
		cJSON *ds = fixture_quoted_json(ds_cases[i].ds);
		preflight_ds_t got = preflight_daemonset_selects(ds, "drashift.io/device-plugin", "true");
		if (got != ds_cases[i].want)
			fail_msg("case %zu: got %d, want %d", i, got, ds_cases[i].want);
		cJSON_Delete(ds);
	}
}

/* ---- the whole decision ------------------------------------------------------------ */

static char *class_names[] = { "gpu.example.com" };
static plan_pool_t pool_defs[] = { { .name = "a" }, { .name = "b" } };
static char node_names[4][16];
static projection_node_t nodes[4];
static pool_member_t members[4];
static handover_ads_t ads[4];

/* A cluster set up right, read through and through; a scenario changes one thing. */
typedef struct {
	plan_t plan;
	cJSON *classes[1];
	preflight_read_t class_reads[1];
	cJSON *daemonsets;
	preflight_access_t access[PREFLIGHT_MAX_ACCESSES];
	preflight_pool_t pools[2];
	preflight_input_t in;
} world_t;

static void world_init(world_t *w)
{
	memset(w, 0, sizeof(*w));
	w->plan = (plan_t){ .name = "gpu",
			    .driver = "gpu.example.com",
			    .extended_resource = "example.com/gpu",
			    .device_classes = class_names,
			    .n_device_classes = 1,
			    .device_plugin_label = { "drashift.io/device-plugin", "true", "false" },
			    .dra_label = { "drashift.io/dra-driver", "true", "false" },
			    .pools = pool_defs,
			    .n_pools = 1 };
	pool_defs[0].rollback = false;
	w->classes[0] = cJSON_CreateObject();
	cJSON *sel = cJSON_CreateObject();
	cJSON_AddStringToObject(cJSON_AddObjectToObject(sel, "cel"), "expression", "device.driver == \"gpu.example.com\"");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(w->classes[0], "spec"), "selectors"), sel);
	w->class_reads[0] = (preflight_read_t){ .read = true };
	w->daemonsets = fixture_quoted_json(
		"[{'metadata':{'namespace':'gpu-operator','name':'plugin'},"
		"'spec':{'template':{'spec':{'nodeSelector':{'drashift.io/device-plugin':'true'}}}}},"
		"{'metadata':{'namespace':'gpu-operator','name':'dra'},"
		"'spec':{'template':{'spec':{'nodeSelector':{'drashift.io/dra-driver':'true'}}}}}]");
	size_t n_access = preflight_accesses(&w->plan, "drashift-system", w->access);
	for (size_t i = 0; i < n_access; i++)
		w->access[i].allowed = 1;
	for (size_t i = 0; i < 4; i++) {
		snprintf(node_names[i], sizeof(node_names[i]), "a-%zu", i);
		nodes[i] = (projection_node_t){ .meta = { .name = node_names[i] } };
		members[i] = (pool_member_t){ .node = &nodes[i], .state = { .plugin_enabled = true } };
		ads[i] = (handover_ads_t){ .allocatable_known = true, .allocatable = 8, .capacity = 8 };
	}
	w->pools[0] = (preflight_pool_t){ .members = members, .ads = ads, .n_members = 4 };
	w->in = (preflight_input_t){ .plan = &w->plan,
				     .gathered = true,
				     .v1 = { .read = true },
				     .v1_served = true,
				     .taint_rules_version = "resource.k8s.io/v1",
				     .taint_rules = { .read = true },
				     .taint_rules_served = true,
				     .classes = (const cJSON *const *)w->classes,
				     .class_reads = w->class_reads,
				     .daemonsets_read = { .read = true },
				     .daemonsets = w->daemonsets,
				     .access = w->access,
				     .n_access = n_access,
				     .pools = w->pools };
}

static void world_free(world_t *w)
{
	cJSON_Delete(w->classes[0]);
	cJSON_Delete(w->daemonsets);
}

/* What each scenario changes. */
static void no_change(world_t *w) { (void)w; }
static void v1_not_served(world_t *w) { w->in.v1_served = false; }
static void v1_unread(world_t *w) { w->in.v1 = (preflight_read_t){ .error = "connection refused" }; }
static void class_missing(world_t *w) { cJSON_Delete(w->classes[0]); w->classes[0] = NULL; }
static void class_other_driver(world_t *w)
{
	cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
		w->classes[0], "spec"), "selectors"), 0), "cel"), "expression");
	cJSON_SetValuestring(e, "device.driver == \"nic.example.com\"");
}
static void class_undecided(world_t *w)
{
	cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
		w->classes[0], "spec"), "selectors"), 0), "cel"), "expression");
	cJSON_SetValuestring(e, "device.attributes[\"gpu.example.com\"].model == \"a100\"");
}
static void class_no_selector(world_t *w) { cJSON_DeleteItemFromObject(cJSON_GetObjectItem(w->classes[0], "spec"), "selectors"); }
static void no_plugin_ds(world_t *w) { cJSON_DeleteItemFromArray(w->daemonsets, 0); }
static void dra_ds_wrong_value(world_t *w)
{
	cJSON *sel = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
		cJSON_GetArrayItem(w->daemonsets, 1), "spec"), "template"), "spec"), "nodeSelector");
	cJSON_SetValuestring(cJSON_GetObjectItem(sel, "drashift.io/dra-driver"), "yes");
}
static void ds_unread(world_t *w) { w->in.daemonsets_read = (preflight_read_t){ .error = "forbidden" }; }
static void taint_mode_unserved(world_t *w)
{
	w->plan.slo.freeze_mode = PLAN_FREEZE_DEVICE_TAINT;
	w->in.n_access = preflight_accesses(&w->plan, "drashift-system", w->access);
	for (size_t i = 0; i < w->in.n_access; i++)
		w->access[i].allowed = 1;
	w->in.taint_rules_served = false;
}
static void taint_unserved_admission(world_t *w) { w->in.taint_rules_served = false; }
static void taint_mode_served(world_t *w)
{
	taint_mode_unserved(w);
	w->in.taint_rules_served = true; /* Kubernetes 1.37 serves them at v1 only */
}
static void taint_mode_none_discovered(world_t *w)
{
	taint_mode_served(w);
	w->in.taint_rules_version = NULL;
}
static void taint_mode_unread(world_t *w)
{
	taint_mode_served(w);
	w->in.taint_rules = (preflight_read_t){ .error = "timeout" };
}
static void denied(world_t *w) { w->access[2].allowed = 0; }
static void unanswered(world_t *w) { w->access[0] = (preflight_access_t){ .verb = "list", .group = "", .resource = "nodes", .why = "x", .allowed = -1, .error = "timeout" }; }
static void unlabelled(world_t *w) { (void)w; members[1].state.plugin_enabled = false; members[3].state.plugin_enabled = false; }
static void empty_pool(world_t *w) { w->pools[0].n_members = 0; }
static void no_devices(world_t *w) { (void)w; ads[2] = (handover_ads_t){ .allocatable_known = true, .allocatable = 0, .capacity = 8 }; }
static void started_unlabelled(world_t *w) { w->pools[0].started = true; members[0].state.plugin_enabled = false; }
static void rolled_back_unlabelled(world_t *w) { (void)w; pool_defs[0].rollback = true; members[0].state.plugin_enabled = false; }
static void in_handover_unlabelled(world_t *w)
{
	(void)w;
	members[0].state.plugin_enabled = false;
	members[0].state.step = HANDOVER_PLUGIN_OFF;
}
static void preempting(world_t *w) { w->pools[0].preempting_pods = 3; w->pools[0].preempting_example = "team-a/train-0"; }
static void warn_mode_broken(world_t *w) { w->plan.preflight = PLAN_PREFLIGHT_WARN; w->in.v1_served = false; }
static void not_gathered(world_t *w) { w->in.gathered = false; }
static void not_gathered_warn(world_t *w) { w->in.gathered = false; w->plan.preflight = PLAN_PREFLIGHT_WARN; }

static const struct {
	const char *name;
	void (*change)(world_t *);
	const char *reason;
	bool blocks;
	const char *check;     /* a line of this check ... (NULL: none asserted) */
	preflight_verdict_t verdict; /* ... with this verdict ... */
	const char *says;      /* ... saying this */
} cases[] = {
	{ "set up right", no_change, "Passed", false, "daemonSets", PREFLIGHT_PASS, "DaemonSet gpu-operator/plugin" },
	{ "v1 not served", v1_not_served, "Failed", true, "api", PREFLIGHT_FAIL, "--runtime-config" },
	{ "discovery failed", v1_unread, "Failed", true, "api", PREFLIGHT_FAIL, "connection refused" },
	{ "class missing", class_missing, "Failed", true, "deviceClasses", PREFLIGHT_FAIL,
	  "DeviceClass gpu.example.com does not exist: create it with a selector device.driver == \"gpu.example.com\"" },
	{ "class selects another driver", class_other_driver, "Failed", true, "deviceClasses", PREFLIGHT_FAIL,
	  "selects devices of driver nic.example.com, not gpu.example.com" },
	{ "class undecidable", class_undecided, "PassedWithWarnings", false, "deviceClasses", PREFLIGHT_WARN,
	  "cannot be told from their text" },
	{ "class without selector", class_no_selector, "PassedWithWarnings", false, "deviceClasses", PREFLIGHT_WARN,
	  "has no selector" },
	{ "no device plugin DaemonSet", no_plugin_ds, "Failed", true, "daemonSets", PREFLIGHT_FAIL,
	  "no DaemonSet runs only where drashift.io/device-plugin=true" },
	{ "driver DaemonSet on another value", dra_ds_wrong_value, "Failed", true, "daemonSets", PREFLIGHT_FAIL,
	  "DaemonSet gpu-operator/dra selects on drashift.io/dra-driver but also runs where it is not true" },
	{ "DaemonSets unlisted", ds_unread, "Failed", true, "daemonSets", PREFLIGHT_FAIL, "could not list DaemonSets: forbidden" },
	{ "DeviceTaint without rules", taint_mode_unserved, "Failed", true, "deviceTaintRules", PREFLIGHT_FAIL,
	  "DRADeviceTaintRules feature gate" },
	{ "DeviceTaint, rules at v1", taint_mode_served, "Passed", false, "deviceTaintRules", PREFLIGHT_PASS,
	  "resource.k8s.io/v1 DeviceTaintRules are served" },
	{ "DeviceTaint, none at start-up", taint_mode_none_discovered, "Failed", true, "deviceTaintRules", PREFLIGHT_FAIL,
	  "then restart drashift" },
	{ "DeviceTaint, discovery unread", taint_mode_unread, "Failed", true, "deviceTaintRules", PREFLIGHT_FAIL,
	  "could not read the discovery of resource.k8s.io/v1: timeout" },
	{ "Admission needs no rules", taint_unserved_admission, "Passed", false, "deviceTaintRules", PREFLIGHT_PASS,
	  "not needed" },
	{ "access denied", denied, "Failed", true, "access", PREFLIGHT_FAIL,
	  "the ServiceAccount may not patch nodes (needed for flipping ownership labels and cordoning)" },
	{ "access unanswered", unanswered, "Failed", true, "access", PREFLIGHT_FAIL, "could not ask" },
	{ "nodes unlabelled", unlabelled, "Failed", true, "nodes", PREFLIGHT_FAIL,
	  "pool a: 2 of 4 node(s) do not carry drashift.io/device-plugin=true (a-1, a-3)" },
	{ "empty pool", empty_pool, "Failed", true, "nodes", PREFLIGHT_FAIL, "no node matches spec.pools[0].nodeSelector" },
	{ "a node advertises nothing", no_devices, "PassedWithWarnings", false, "nodes", PREFLIGHT_WARN,
	  "pool a: 1 node(s) advertise no example.com/gpu (a-2)" },
	{ "a started pool's nodes", started_unlabelled, "Passed", false, "nodes", PREFLIGHT_PASS, "pool a has started" },
	{ "a rolled back pool's nodes", rolled_back_unlabelled, "Passed", false, "nodes", PREFLIGHT_PASS, "pool a is rolled back" },
	{ "a node in a handover", in_handover_unlabelled, "Passed", false, "nodes", PREFLIGHT_PASS, "all 4 node(s)" },
	{ "preempting pods", preempting, "PassedWithWarnings", false, "preemption", PREFLIGHT_WARN,
	  "3 pod(s) with a preempting priority request example.com/gpu (e.g. team-a/train-0)" },
	{ "Warn mode", warn_mode_broken, "FailedIgnored", false, "api", PREFLIGHT_FAIL, "not served" },
	{ "not read yet", not_gathered, "Checking", true, NULL, PREFLIGHT_PASS, NULL },
	{ "not read yet, Warn", not_gathered_warn, "Checking", false, NULL, PREFLIGHT_PASS, NULL },
};

static void test_decide_table(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		world_t w;
		world_init(&w);
		cases[c].change(&w);
		preflight_result_t r;
		preflight_decide(&w.in, &r);
		if (strcmp(r.reason, cases[c].reason) != 0 || r.blocks != cases[c].blocks)
			fail_msg("%s: reason %s blocks %d; message:\n%s", cases[c].name, r.reason, r.blocks, r.message);
		if (r.passed != (strncmp(cases[c].reason, "Passed", 6) == 0))
			fail_msg("%s: passed %d", cases[c].name, r.passed);
		if (cases[c].check) {
			bool found = false;
			for (size_t i = 0; i < r.n_lines; i++)
				found |= strcmp(r.lines[i].check, cases[c].check) == 0 &&
					 r.lines[i].verdict == cases[c].verdict && strstr(r.lines[i].message, cases[c].says);
			if (!found)
				fail_msg("%s: no %s line with verdict %d saying '%s'; message:\n%s", cases[c].name,
					 cases[c].check, cases[c].verdict, cases[c].says, r.message);
			/* One line per check in the message, each after the summary. */
			if (!strstr(r.message, cases[c].says) || strchr(r.message, '\n') == NULL)
				fail_msg("%s: message lacks the line:\n%s", cases[c].name, r.message);
			if (r.passed && strstr(r.problems, "\nPass ") != NULL)
				fail_msg("%s: the problems list a passing line:\n%s", cases[c].name, r.problems);
		}
		preflight_result_free(&r);
		world_free(&w);
	}
}

/* The Evict policy and the DeviceTaint freeze ask for what they use, and only they do. */
static void test_accesses_follow_the_plan(void **state)
{
	(void)state;
	world_t w;
	world_init(&w);
	preflight_access_t a[PREFLIGHT_MAX_ACCESSES];
	bool evict = false, taint = false, param = false;
	size_t n = preflight_accesses(&w.plan, "drashift-system", a);
	for (size_t i = 0; i < n; i++) {
		evict |= strcmp(a[i].resource, "pods/eviction") == 0;
		taint |= strcmp(a[i].resource, "devicetaintrules") == 0;
		param |= strcmp(a[i].resource, "configmaps") == 0 && strcmp(a[i].namespace, "drashift-system") == 0;
	}
	assert_false(evict);
	assert_false(taint);
	assert_true(param);
	plan_pool_t evicting = { .name = "a", .drain_policy = PLAN_DRAIN_EVICT };
	w.plan.pools = &evicting;
	w.plan.slo.freeze_mode = PLAN_FREEZE_DEVICE_TAINT;
	n = preflight_accesses(&w.plan, "drashift-system", a);
	assert_true(n <= PREFLIGHT_MAX_ACCESSES);
	evict = taint = param = false;
	for (size_t i = 0; i < n; i++) {
		evict |= strcmp(a[i].resource, "pods/eviction") == 0 && strcmp(a[i].verb, "create") == 0;
		taint |= strcmp(a[i].resource, "devicetaintrules") == 0;
		param |= strcmp(a[i].resource, "configmaps") == 0;
	}
	assert_true(evict);
	assert_true(taint);
	assert_false(param);
	world_free(&w);
}

/* Who waits: only a pool that has not started, only while the checks block and no pass is recorded. */
static void test_pool_may_start_table(void **state)
{
	(void)state;
	static const struct {
		bool blocks, recorded, started, want;
	} t[] = {
		{ false, false, false, true }, { true, false, false, false }, { true, true, false, true },
		{ true, false, true, true },   { true, true, true, true },    { false, true, false, true },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		preflight_result_t r = { .blocks = t[i].blocks };
		if (preflight_pool_may_start(&r, t[i].recorded, t[i].started) != t[i].want)
			fail_msg("case %zu", i);
	}
}

/* Many nodes without the label: the line names five and counts the rest, never drops them silently. */
static void test_node_list_is_counted(void **state)
{
	(void)state;
	world_t w;
	world_init(&w);
	static projection_node_t many[40];
	static pool_member_t many_members[40];
	static handover_ads_t many_ads[40];
	static char many_names[40][16];
	for (size_t i = 0; i < 40; i++) {
		snprintf(many_names[i], sizeof(many_names[i]), "n-%02zu", i);
		many[i] = (projection_node_t){ .meta = { .name = many_names[i] } };
		many_members[i] = (pool_member_t){ .node = &many[i] };
		many_ads[i] = (handover_ads_t){ .allocatable_known = true, .allocatable = 8 };
	}
	w.pools[0] = (preflight_pool_t){ .members = many_members, .ads = many_ads, .n_members = 40 };
	preflight_result_t r;
	preflight_decide(&w.in, &r);
	assert_non_null(strstr(r.message, "40 of 40 node(s) do not carry drashift.io/device-plugin=true "
					  "(n-00, n-01, n-02, n-03, n-04 and 35 more)"));
	preflight_result_free(&r);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cel_driver_from_text),
		cmocka_unit_test(test_daemonset_selects_on_label),
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_accesses_follow_the_plan),
		cmocka_unit_test(test_pool_may_start_table),
		cmocka_unit_test(test_node_list_is_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
