/*
 * Node handover decisions: every transition as a table row, and the safety
 * invariants of docs/invariants.md checked over every combination of step,
 * labels, cordon, usage, advertisements and goal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "handover.h"
#include "xalloc.h"

#define NOW_MS 1764441600000LL /* 2025-11-29T18:40:00Z */
#define MINUTE 60000LL

static plan_pool_t pool = {
	.name = "a",
	.max_unavailable = 1,
	.drain_deadline_ms = 60 * MINUTE,
	.handover_deadline_ms = 10 * MINUTE,
	.drain_policy = PLAN_DRAIN_WAIT,
	.eviction_deadline_ms = 30 * MINUTE,
};
static plan_t plan = {
	.name = "gpu",
	.driver = "gpu.example.com",
	.extended_resource = "example.com/gpu",
	.device_plugin_label = { "drashift.io/device-plugin", "true", "false" },
	.dra_label = { "drashift.io/dra-driver", "true", "false" },
	.pools = &pool,
	.n_pools = 1,
};

/* A node in a given recorded state. */
typedef struct {
	projection_node_t node;
	projection_label_t labels[8];
	projection_label_t ann[8];
	projection_label_t gfd[6];
	projection_quantity_t allocatable[4];
	char since[32];
} node_t;

static void make_node(node_t *n, handover_step_t step, handover_direction_t dir, int plugin, int dra,
		      bool unschedulable, bool cordoned_by_us, int64_t step_age_ms)
{
	memset(n, 0, sizeof(*n));
	n->node.meta.name = "gpu-1";
	size_t nl = 0;
	if (plugin >= 0)
		n->labels[nl++] = (projection_label_t){ "drashift.io/device-plugin", plugin ? "true" : "false" };
	if (dra >= 0)
		n->labels[nl++] = (projection_label_t){ "drashift.io/dra-driver", dra ? "true" : "false" };
	n->node.labels = n->labels;
	n->node.n_labels = nl;
	n->node.unschedulable = unschedulable;
	/* What the device plugin advertises on a legacy node (ADS_LEGACY says the same). */
	n->allocatable[0] = (projection_quantity_t){ "example.com/gpu", 8 };
	n->node.allocatable = n->allocatable;
	n->node.n_allocatable = 1;
	size_t na = 0;
	if (step != HANDOVER_LEGACY && !(step == HANDOVER_DRA && step_age_ms < 0)) {
		time_t t = (time_t)((NOW_MS - step_age_ms) / 1000);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(n->since, sizeof(n->since), "%Y-%m-%dT%H:%M:%SZ", &tm);
		n->ann[na++] = (projection_label_t){ HANDOVER_ANN_PLAN, "gpu" };
		n->ann[na++] = (projection_label_t){ HANDOVER_ANN_DIRECTION, dir == HANDOVER_TO_DRA ? "ToDRA" : "ToLegacy" };
		n->ann[na++] = (projection_label_t){ HANDOVER_ANN_STEP, (char *)handover_step_name(step) };
		n->ann[na++] = (projection_label_t){ HANDOVER_ANN_SINCE, n->since };
		n->ann[na++] = (projection_label_t){ HANDOVER_ANN_CORDONED, cordoned_by_us ? "true" : "false" };
		n->ann[na++] = (projection_label_t){ HANDOVER_ANN_LEGACY_DEVICES, "8" };
	}
	n->node.annotations = n->ann;
	n->node.n_annotations = na;
}

typedef struct {
	handover_usage_t usage;
	handover_ads_t ads;
	handover_goal_t goal;
} world_t;

/* The next action for the node: handover_decide, or handover_release when the plan lets it go. */
static void decide_as(const node_t *n, const world_t *w, handover_decision_t *d, bool release)
{
	handover_state_t st;
	handover_read(&plan, &n->node, &st);
	handover_input_t in = { .plan = &plan, .pool = &pool, .node = &n->node, .state = &st, .usage = &w->usage,
				.ads = &w->ads, .goal = w->goal, .now_ms = NOW_MS };
	if (release)
		handover_release(&in, d);
	else
		handover_decide(&in, d);
}

/*
 * When handover_reads_usage says the node's step does not read who uses it,
 * decide again without it (usage NULL, as plan_controller.c passes then) and
 * fail unless the decision is the same. Returns whether it did.
 */
static bool same_without_usage(const node_t *n, const world_t *w, const handover_decision_t *d, bool release)
{
	handover_state_t st;
	handover_read(&plan, &n->node, &st);
	if (release || handover_reads_usage(st.step))
		return false;
	handover_input_t in = { .plan = &plan, .pool = &pool, .node = &n->node, .state = &st, .usage = NULL,
				.ads = &w->ads, .goal = w->goal, .now_ms = NOW_MS };
	handover_decision_t blind;
	handover_decide(&in, &blind);
	bool same = blind.act == d->act && blind.to == d->to && blind.requeue_ms == d->requeue_ms &&
		    (blind.patch == NULL) == (d->patch == NULL) && (d->patch == NULL || strcmp(blind.patch, d->patch) == 0);
	if (!same)
		fail_msg("step %s decides otherwise without the node's usage, which handover_reads_usage says it does not read",
			 handover_step_name(st.step));
	handover_decision_free(&blind);
	return true;
}

static void decide(const node_t *n, const world_t *w, handover_decision_t *d)
{
	decide_as(n, w, d, false);
}

/* What a patch does to the ownership labels and the cordon: -1 untouched, 0/1 the new value. */
typedef struct {
	int plugin, dra, unschedulable;
	const char *step;
	bool clears_record;
} effect_t;

static effect_t effect_of(const char *patch)
{
	effect_t e = { -1, -1, -1, NULL, false };
	cJSON *root = cJSON_Parse(patch);
	assert_non_null(root);
	cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	cJSON *labels = cJSON_GetObjectItemCaseSensitive(md, "labels");
	cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
	cJSON *p = cJSON_GetObjectItemCaseSensitive(labels, "drashift.io/device-plugin");
	cJSON *d = cJSON_GetObjectItemCaseSensitive(labels, "drashift.io/dra-driver");
	if (p)
		e.plugin = strcmp(p->valuestring, "true") == 0;
	if (d)
		e.dra = strcmp(d->valuestring, "true") == 0;
	cJSON *u = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "spec"), "unschedulable");
	if (u)
		e.unschedulable = cJSON_IsTrue(u);
	cJSON *step = cJSON_GetObjectItemCaseSensitive(ann, HANDOVER_ANN_STEP);
	if (cJSON_IsString(step))
		e.step = xstrdup(step->valuestring);
	e.clears_record = cJSON_IsNull(step);
	cJSON_Delete(root);
	return e;
}

/* ---- invariants over every combination ------------------------------------ */

/* Every combination through handover_decide (release false) or handover_release. */
static void sweep(bool release)
{
	size_t cases = 0, patches = 0, blind = 0;
	for (int step = 0; step < HANDOVER_STEPS; step++)
	for (int dir = 0; dir < 2; dir++)
	for (int plugin = -1; plugin <= 1; plugin++)
	for (int dra = -1; dra <= 1; dra++)
	for (int unsched = 0; unsched < 2; unsched++)
	for (int ours = 0; ours < 2; ours++)
	for (int plugin_users = 0; plugin_users < 2; plugin_users++)
	for (int driver_users = 0; driver_users < 2; driver_users++)
	for (int unknown = 0; unknown < 2; unknown++)
	for (int alloc = 0; alloc < 2; alloc++)
	for (int slices = 0; slices < 3; slices++)
	for (int goal = 0; goal < 3; goal++)
	for (int age = 0; age < 2; age++) {
		node_t n;
		make_node(&n, (handover_step_t)step, (handover_direction_t)dir, plugin, dra, unsched, ours,
			  age ? 2 * 60 * MINUTE : MINUTE);
		world_t w = {
			.usage = { .plugin_users = (size_t)plugin_users, .driver_users = (size_t)driver_users, .unknown = unknown },
			.ads = { .allocatable_known = true, .allocatable = alloc ? 8 : 0, .capacity = 8,
				 .slices_present = slices > 0, .slices_complete = slices == 2, .slice_devices = slices == 2 ? 8 : 0 },
			.goal = (handover_goal_t)goal,
		};
		handover_decision_t d;
		decide_as(&n, &w, &d, release);
		cases++;
		blind += same_without_usage(&n, &w, &d, release);
		/* 2. Letting a node go never evicts. */
		if (release && d.act == HANDOVER_ACT_EVICT)
			fail_msg("release evicts at step %s", handover_step_name(step));
		if (d.act == HANDOVER_ACT_PATCH) {
			patches++;
			effect_t e = effect_of(d.patch);
			int plugin_after = e.plugin >= 0 ? e.plugin : plugin == 1;
			int dra_after = e.dra >= 0 ? e.dra : dra == 1;
			/* 1. Never two owners. */
			if (plugin_after && dra_after)
				fail_msg("both labels enabled after %s -> %s", handover_step_name(step), e.step);
			/* A patch turns on at most one owner, and only once the other is off. */
			if (e.dra == 1 && plugin == 1)
				fail_msg("DRA label turned on while the plugin label is on (step %s)", handover_step_name(step));
			if (e.plugin == 1 && dra == 1)
				fail_msg("plugin label turned on while the DRA label is on (step %s)", handover_step_name(step));
			/* 3. A driver outlives its users; so does the device plugin. */
			if (e.dra == 0 && (driver_users || unknown))
				fail_msg("DRA label removed while claims on the node are held or unknown (step %s)",
					 handover_step_name(step));
			if (e.plugin == 0 && (plugin_users || unknown))
				fail_msg("plugin label removed while pods use the extended resource or usage is unknown (step %s)",
					 handover_step_name(step));
			/* New owner on only after the old one's advertisement is gone. */
			if (e.dra == 1 && alloc)
				fail_msg("DRA label on while allocatable is still > 0 (step %s)", handover_step_name(step));
			if (e.plugin == 1 && slices > 0 && step != HANDOVER_PLUGIN_OFF)
				fail_msg("plugin label on while the driver's slices are still there (step %s)", handover_step_name(step));
			/* 4. Leave what you found: a node that was unschedulable before drashift stays so. */
			if (e.unschedulable == 0 && unsched && !ours)
				fail_msg("uncordoned a node drashift did not cordon (step %s)", handover_step_name(step));
			free((char *)e.step);
		}
		handover_decision_free(&d);
	}
	print_message("%zu states, %zu led to a patch, %zu decided again without the usage\n", cases, patches, blind);
	assert_true(patches > 1000);
	assert_true(release || blind > cases / 2); /* most steps do not read it */
}

static void test_invariants_hold_in_every_state(void **state)
{
	(void)state;
	sweep(false);
}

static void test_release_keeps_the_invariants_in_every_state(void **state)
{
	(void)state;
	plan_pool_t saved = pool;
	pool.drain_policy = PLAN_DRAIN_EVICT; /* even a plan that said Evict: a release does not */
	sweep(true);
	pool = saved;
}

/* ---- transitions ------------------------------------------------------------ */

typedef struct {
	const char *name;
	handover_step_t step;
	handover_direction_t dir;
	int plugin, dra;
	bool unschedulable, ours;
	int64_t age_ms;
	world_t w;
	handover_act_t act;
	const char *to;        /* expected new step annotation (NULL: none, "-": record cleared) */
	int plugin_after, dra_after, unsched_after; /* -1: untouched */
} row_t;

#define ADS_LEGACY { .allocatable_known = true, .allocatable = 8, .capacity = 8 }
#define ADS_NONE { .allocatable_known = true, .allocatable = 0, .capacity = 8 }
#define ADS_DRA { .allocatable_known = true, .allocatable = 0, .capacity = 0, .slices_present = true, .slices_complete = true, .slice_devices = 8 }

static const row_t rows[] = {
	{ "legacy node starts: cordon and record", HANDOVER_LEGACY, 0, 1, 0, false, false, 0,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "draining", -1, -1, 1 },
	{ "legacy node, pool not migrating: nothing", HANDOVER_LEGACY, 0, 1, 0, false, false, 0,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_STAY }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "already cordoned node: no second cordon", HANDOVER_LEGACY, 0, 1, 0, true, false, 0,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "draining", -1, -1, -1 },
	{ "draining with a gpu pod: wait", HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE,
	  { .usage = { .plugin_users = 1 }, .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "draining, usage unknown: wait", HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE,
	  { .usage = { .unknown = true }, .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "drained: plugin label off", HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "plugin-off", 0, -1, -1 },
	/* A pod placed just before the scheduler saw the cordon may not be in the caches yet. */
	{ "cordoned 1 s ago, nobody seen: wait for the cordon to settle", HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, 1000,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "drain deadline passed: failed", HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, 61 * MINUTE,
	  { .usage = { .plugin_users = 2 }, .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "failed", -1, -1, -1 },
	{ "plugin off, allocatable still 8: wait", HANDOVER_PLUGIN_OFF, HANDOVER_TO_DRA, 0, 0, true, true, MINUTE,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "allocatable 0: DRA label on", HANDOVER_PLUGIN_OFF, HANDOVER_TO_DRA, 0, 0, true, true, MINUTE,
	  { .ads = ADS_NONE, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "driver-on", -1, 1, -1 },
	{ "slices incomplete: wait", HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = { .slices_present = true, .slice_devices = 8 }, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "slices with fewer devices than the plugin had: wait, then fail", HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, true, true, 11 * MINUTE,
	  { .ads = { .slices_present = true, .slices_complete = true, .slice_devices = 6 }, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "failed", -1, -1, -1 },
	{ "slices complete: verified", HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "verified", -1, -1, -1 },
	{ "verified: uncordon our cordon", HANDOVER_VERIFIED, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "dra", -1, -1, 0 },
	{ "verified: a cordon that was not ours stays", HANDOVER_VERIFIED, HANDOVER_TO_DRA, 0, 1, true, false, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "dra", -1, -1, -1 },
	{ "paused mid-way: the step under way still finishes", HANDOVER_PLUGIN_OFF, HANDOVER_TO_DRA, 0, 0, true, true, MINUTE,
	  { .ads = ADS_NONE, .goal = HANDOVER_GOAL_STAY }, HANDOVER_ACT_PATCH, "driver-on", -1, 1, -1 },
	{ "rollback starts on a DRA node", HANDOVER_DRA, HANDOVER_TO_DRA, 0, 1, false, false, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "draining-dra", -1, -1, 1 },
	{ "rollback waits for running DRA pods", HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, MINUTE,
	  { .usage = { .driver_users = 3 }, .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "rollback never evicts, even with policy Evict", HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, MINUTE,
	  { .usage = { .driver_users = 1, .evictable = (const char *[]){ "t", "p" }, .n_evictable = 1 }, .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "claims released: DRA label off", HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "driver-off", -1, 0, -1 },
	/* tools/faults trial 5008: pods bound 0.3 s after the cordon held claims when the DRA label went off. */
	{ "cordoned 1 s ago, no claim seen: wait for the cordon to settle", HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, 1000,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "slices still there: wait", HANDOVER_DRIVER_OFF, HANDOVER_TO_LEGACY, 0, 0, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "slices gone: plugin label on", HANDOVER_DRIVER_OFF, HANDOVER_TO_LEGACY, 0, 0, true, true, MINUTE,
	  { .ads = ADS_NONE, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "plugin-on", 1, -1, -1 },
	{ "plugin advertises: verified", HANDOVER_PLUGIN_ON, HANDOVER_TO_LEGACY, 1, 0, true, true, MINUTE,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "verified-legacy", -1, -1, -1 },
	{ "back to legacy: uncordon, forget the record", HANDOVER_VERIFIED_LEGACY, HANDOVER_TO_LEGACY, 1, 0, true, true, MINUTE,
	  { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "-", -1, -1, 0 },
	{ "both labels enabled by someone else: refuse", HANDOVER_DRA, HANDOVER_TO_DRA, 1, 1, false, false, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_REFUSE, NULL, -1, -1, -1 },
	{ "DRA label removed by someone else mid-way: refuse", HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 0, true, true, MINUTE,
	  { .ads = ADS_NONE, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_REFUSE, NULL, -1, -1, -1 },
	{ "failed node stays failed without a rollback", HANDOVER_FAILED, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "failed node rolls back from its labels", HANDOVER_FAILED, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "draining-dra", -1, -1, -1 },
};

/*
 * Letting a node go (plan deleted, node left its pools): the goal is
 * ignored; towards DRA before the DRA label is on it walks back, after it
 * finishes; a rollback under way finishes; settled nodes only lose the record.
 */
static const row_t release_rows[] = {
	{ "draining with a gpu pod: walk back at once, uncordon, forget", HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE,
	  { .usage = { .plugin_users = 1 }, .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "-", -1, -1, 0 },
	{ "draining, cordoned before drashift: the cordon stays", HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, false, MINUTE,
	  { .ads = ADS_LEGACY }, HANDOVER_ACT_PATCH, "-", -1, -1, -1 },
	{ "plugin-off: plugin label back on", HANDOVER_PLUGIN_OFF, HANDOVER_TO_DRA, 0, 0, true, true, MINUTE,
	  { .ads = ADS_NONE, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "plugin-on", 1, -1, -1 },
	{ "driver-on, slices complete: past the point of no return, finish on DRA", HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "verified", -1, -1, -1 },
	{ "driver-on, slices incomplete: wait", HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = { .slices_present = true, .slice_devices = 8 } }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "verified: finish on DRA, uncordon", HANDOVER_VERIFIED, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "dra", -1, -1, 0 },
	{ "on DRA: only the record goes", HANDOVER_DRA, HANDOVER_TO_DRA, 0, 1, false, false, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY }, HANDOVER_ACT_PATCH, "-", -1, -1, -1 },
	{ "rollback under way, claims held, plan said Evict: wait, never evict", HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, MINUTE,
	  { .usage = { .driver_users = 1, .evictable = (const char *[]){ "t", "p" }, .n_evictable = 1 }, .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA },
	  HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "rollback under way, claims released: DRA label off", HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "driver-off", -1, 0, -1 },
	{ "driver-off, slices gone: plugin label on", HANDOVER_DRIVER_OFF, HANDOVER_TO_LEGACY, 0, 0, true, true, MINUTE,
	  { .ads = ADS_NONE }, HANDOVER_ACT_PATCH, "plugin-on", 1, -1, -1 },
	{ "verified-legacy: uncordon, forget", HANDOVER_VERIFIED_LEGACY, HANDOVER_TO_LEGACY, 1, 0, true, true, MINUTE,
	  { .ads = ADS_LEGACY }, HANDOVER_ACT_PATCH, "-", -1, -1, 0 },
	{ "failed with the DRA label on: roll back from its labels", HANDOVER_FAILED, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE,
	  { .ads = ADS_DRA, .goal = HANDOVER_GOAL_DRA }, HANDOVER_ACT_PATCH, "draining-dra", -1, -1, -1 },
	{ "legacy without a record: nothing", HANDOVER_LEGACY, 0, 1, 0, false, false, 0,
	  { .ads = ADS_LEGACY }, HANDOVER_ACT_NONE, NULL, -1, -1, -1 },
	{ "both labels on: refuse, keep the record", HANDOVER_DRA, HANDOVER_TO_DRA, 1, 1, false, false, MINUTE,
	  { .ads = ADS_DRA }, HANDOVER_ACT_REFUSE, NULL, -1, -1, -1 },
};

static void run_rows(const row_t *table, size_t n_rows, bool release)
{
	for (size_t i = 0; i < n_rows; i++) {
		const row_t *r = &table[i];
		node_t n;
		make_node(&n, r->step, r->dir, r->plugin, r->dra, r->unschedulable, r->ours, r->age_ms);
		handover_decision_t d;
		decide_as(&n, &r->w, &d, release);
		if (d.act != r->act)
			fail_msg("row '%s': act %d, want %d (%s)", r->name, d.act, r->act, d.message ? d.message : "");
		if (d.act == HANDOVER_ACT_PATCH) {
			effect_t e = effect_of(d.patch);
			if (strcmp(r->to, "-") == 0) {
				if (!e.clears_record)
					fail_msg("row '%s': record not cleared: %s", r->name, d.patch);
			} else if (e.step == NULL || strcmp(e.step, r->to) != 0) {
				fail_msg("row '%s': step %s, want %s", r->name, e.step ? e.step : "(none)", r->to);
			}
			if (e.plugin != r->plugin_after || e.dra != r->dra_after || e.unschedulable != r->unsched_after)
				fail_msg("row '%s': labels/cordon %d/%d/%d, want %d/%d/%d: %s", r->name, e.plugin, e.dra,
					 e.unschedulable, r->plugin_after, r->dra_after, r->unsched_after, d.patch);
			free((char *)e.step);
		}
		handover_decision_free(&d);
	}
}

static void test_transitions(void **state)
{
	(void)state;
	run_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
}

static void test_release_transitions(void **state)
{
	(void)state;
	run_rows(release_rows, sizeof(release_rows) / sizeof(release_rows[0]), true);
}

/* A node another plan holds, or one a forced delete left behind, is never taken. */
static void test_release_and_adoption_refused(void **state)
{
	(void)state;
	world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	handover_decision_t d;
	node_t n;
	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
	n.ann[0].value = "other";
	decide_as(&n, &w, &d, true);
	assert_int_equal(d.act, HANDOVER_ACT_REFUSE);
	assert_string_equal(d.reason, "OwnedByAnotherPlan");
	handover_decision_free(&d);

	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
	n.ann[n.node.n_annotations++] = (projection_label_t){ HANDOVER_ANN_ORPHANED_BY, "gpu/uid-1 at 2025-11-29T18:00:00Z: step draining" };
	for (int release = 0; release < 2; release++) {
		decide_as(&n, &w, &d, release);
		assert_int_equal(d.act, HANDOVER_ACT_REFUSE);
		assert_string_equal(d.reason, "OrphanedNode");
		handover_decision_free(&d);
	}
	/* A settled node with a stray orphan record is not adopted either. */
	make_node(&n, HANDOVER_DRA, HANDOVER_TO_DRA, 0, 1, false, false, MINUTE);
	n.ann[n.node.n_annotations++] = (projection_label_t){ HANDOVER_ANN_ORPHANED_BY, "gpu/uid-1 at 2025-11-29T18:00:00Z: step dra" };
	decide_as(&n, &w, &d, true);
	assert_int_equal(d.act, HANDOVER_ACT_REFUSE);
	handover_decision_free(&d);
}

/* Every patch names the node object it was decided for: a node registered again under the name refuses it. */
static void test_patch_names_the_node_object(void **state)
{
	(void)state;
	world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	handover_decision_t d;
	node_t n;
	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
	n.node.meta.uid = "uid-of-this-node";
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	cJSON *patch = cJSON_Parse(d.patch);
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(patch, "metadata"), "uid");
	assert_true(cJSON_IsString(uid));
	assert_string_equal(uid->valuestring, "uid-of-this-node");
	cJSON_Delete(patch);
	handover_decision_free(&d);
}

/* A drain that has yet to settle asks to be decided again when it has: nothing else may change. */
static void test_cordon_settle_requeues(void **state)
{
	(void)state;
	world_t w = { .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY };
	handover_decision_t d;
	node_t n;
	make_node(&n, HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, 1000);
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_NONE);
	assert_true(d.requeue_ms > 0 && d.requeue_ms <= HANDOVER_CORDON_SETTLE_MS);
	handover_decision_free(&d);
}

/*
 * Labels someone else changed are not fought: the refusal names the command
 * that puts back what drashift wrote for the step (trial 3007 of tools/faults:
 * a second writer restored the plugin label drashift had just turned off).
 */
static void test_fight_names_the_fix(void **state)
{
	(void)state;
	static const struct {
		handover_step_t step;
		handover_direction_t dir;
		int plugin, dra;
		const char *fix;
	} rows[] = {
		{ HANDOVER_PLUGIN_OFF, HANDOVER_TO_DRA, 1, 0, "kubectl label node gpu-1 --overwrite drashift.io/device-plugin=false" },
		{ HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 0, "kubectl label node gpu-1 --overwrite drashift.io/dra-driver=true" },
		{ HANDOVER_PLUGIN_ON, HANDOVER_TO_LEGACY, 0, 1,
		  "kubectl label node gpu-1 --overwrite drashift.io/device-plugin=true drashift.io/dra-driver=false" },
		/* Both on (trial 3007 again: the writer turned the plugin back on a node drashift had just
		 * taken to DRA): the step says which one drashift turned off. */
		{ HANDOVER_DRA, HANDOVER_TO_DRA, 1, 1, "kubectl label node gpu-1 --overwrite drashift.io/device-plugin=false" },
	};
	world_t w = { .ads = ADS_NONE, .goal = HANDOVER_GOAL_DRA };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		handover_decision_t d;
		node_t n;
		make_node(&n, rows[i].step, rows[i].dir, rows[i].plugin, rows[i].dra, true, true, MINUTE);
		w.goal = rows[i].dir == HANDOVER_TO_DRA ? HANDOVER_GOAL_DRA : HANDOVER_GOAL_LEGACY;
		decide_as(&n, &w, &d, true);
		assert_int_equal(d.act, HANDOVER_ACT_REFUSE);
		assert_string_equal(d.reason, "OwnershipFight");
		const char *fix = strstr(d.message, "put back: ");
		assert_non_null(fix);
		assert_string_equal(fix + strlen("put back: "), rows[i].fix);
		handover_decision_free(&d);
	}
	/* Both on at a failed node: its step does not say which one is drashift's. */
	{
		handover_decision_t d;
		node_t n;
		make_node(&n, HANDOVER_FAILED, HANDOVER_TO_DRA, 1, 1, true, true, MINUTE);
		decide_as(&n, &w, &d, true);
		assert_int_equal(d.act, HANDOVER_ACT_REFUSE);
		assert_null(strstr(d.message, "kubectl label"));
		handover_decision_free(&d);
	}
}

/*
 * Whose cordon a node carries is read from the cache when a handover starts;
 * the write that records it is conditional on that version of the node, so a
 * person's cordon that raced the cache turns it into a 409, never into a
 * cordon drashift thinks is its own. Later steps write unconditionally.
 */
static void test_the_cordon_record_is_conditional_on_the_node_read(void **state)
{
	(void)state;
	node_t n;
	handover_decision_t d;
	world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	make_node(&n, HANDOVER_LEGACY, 0, 1, 0, false, false, 0);
	n.node.meta.resource_version = "4711";
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	cJSON *root = cJSON_Parse(d.patch);
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "metadata"), "resourceVersion");
	assert_true(cJSON_IsString(rv));
	assert_string_equal(rv->valuestring, "4711");
	cJSON_Delete(root);
	handover_decision_free(&d);

	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
	n.node.meta.resource_version = "4712";
	w.usage = (handover_usage_t){ 0 };
	decide(&n, &w, &d); /* nothing left on the node: the plugin goes */
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	assert_null(strstr(d.patch, "resourceVersion"));
	handover_decision_free(&d);
}

/*
 * The plan's uid is recorded when a handover starts; a node whose records
 * carry another uid was left by an earlier plan of the same name (its
 * finalizer removed by hand) and is neither continued nor released by the
 * new one. Records without a uid (drashift 0.1.0) are adopted by name.
 */
static void test_a_new_plan_of_the_same_name_adopts_nothing(void **state)
{
	(void)state;
	node_t n;
	handover_decision_t d;
	handover_state_t st;
	make_node(&n, HANDOVER_LEGACY, 0, 1, 0, false, false, 0);
	world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	handover_read(&plan, &n.node, &st);
	handover_input_t in = { .plan = &plan, .pool = &pool, .node = &n.node, .state = &st, .usage = &w.usage,
				.ads = &w.ads, .goal = w.goal, .now_ms = NOW_MS, .plan_uid = "uid-2" };
	handover_decide(&in, &d);
	assert_non_null(strstr(d.patch, "\"" HANDOVER_ANN_PLAN_UID "\":\"uid-2\""));
	handover_decision_free(&d);

	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
	n.ann[n.node.n_annotations++] = (projection_label_t){ HANDOVER_ANN_PLAN_UID, "uid-1" };
	handover_read(&plan, &n.node, &st);
	for (int release = 0; release < 2; release++) {
		if (release)
			handover_release(&in, &d);
		else
			handover_decide(&in, &d);
		assert_int_equal(d.act, HANDOVER_ACT_REFUSE);
		assert_string_equal(d.reason, "OrphanedNode");
		assert_non_null(strstr(d.message, "earlier plan named gpu (uid uid-1)"));
		handover_decision_free(&d);
	}
	/* The same uid, or none recorded: the plan's own node, moved on. */
	const char *same[] = { "uid-2", NULL };
	for (size_t i = 0; i < 2; i++) {
		make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
		if (same[i])
			n.ann[n.node.n_annotations++] = (projection_label_t){ HANDOVER_ANN_PLAN_UID, (char *)same[i] };
		handover_read(&plan, &n.node, &st);
		handover_decide(&in, &d);
		assert_int_not_equal(d.act, HANDOVER_ACT_REFUSE);
		handover_decision_free(&d);
	}
}

static void test_start_records_cordon_owner_and_device_count(void **state)
{
	(void)state;
	node_t n;
	make_node(&n, HANDOVER_LEGACY, 0, 1, 0, false, false, 0);
	world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	handover_decision_t d;
	decide(&n, &w, &d);
	assert_non_null(strstr(d.patch, "\"" HANDOVER_ANN_CORDONED "\":\"true\""));
	assert_non_null(strstr(d.patch, "\"" HANDOVER_ANN_LEGACY_DEVICES "\":\"8\""));
	assert_non_null(strstr(d.patch, "\"" HANDOVER_ANN_PLAN "\":\"gpu\""));
	handover_decision_free(&d);

	make_node(&n, HANDOVER_LEGACY, 0, 1, 0, true, false, 0); /* someone else cordoned it */
	decide(&n, &w, &d);
	assert_non_null(strstr(d.patch, "\"" HANDOVER_ANN_CORDONED "\":\"false\""));
	handover_decision_free(&d);
}

/*
 * A node whose device plugin advertises nothing when its handover starts
 * (not registered yet, or crashed) has an unknown count, not 0: nothing is
 * recorded, the Event says so, and the driver's complete slices with any
 * devices verify it. Before, "0" was recorded and 8 devices never matched it.
 */
static void test_a_node_advertising_nothing_has_an_unknown_count(void **state)
{
	(void)state;
	node_t n;
	make_node(&n, HANDOVER_LEGACY, 0, 1, 0, false, false, 0);
	world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	w.ads.allocatable_known = true;
	w.ads.allocatable = 0;
	w.ads.capacity = 0;
	n.allocatable[0].count = 0;
	handover_decision_t d;
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	assert_non_null(strstr(d.patch, "\"" HANDOVER_ANN_LEGACY_DEVICES "\":null"));
	assert_non_null(strstr(d.message, "device count is unknown"));
	handover_decision_free(&d);

	/* At driver-on with no recorded count: complete slices with devices verify it, an empty slice does not. */
	make_node(&n, HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, false, true, MINUTE);
	n.node.n_annotations--; /* no legacy-devices annotation (the last one make_node adds) */
	world_t on = { .goal = HANDOVER_GOAL_DRA };
	on.ads = (handover_ads_t){ .allocatable_known = false, .slices_present = true, .slices_complete = true,
				   .slice_devices = 8 };
	decide(&n, &on, &d);
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	assert_int_equal(d.to, HANDOVER_VERIFIED);
	handover_decision_free(&d);
	on.ads.slice_devices = 0;
	decide(&n, &on, &d);
	assert_int_not_equal(d.to, HANDOVER_VERIFIED);
	handover_decision_free(&d);
}

static void test_evict_policy_evicts_then_waits(void **state)
{
	(void)state;
	plan_pool_t saved = pool;
	pool.drain_policy = PLAN_DRAIN_EVICT;
	node_t n;
	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
	const char *victims[] = { "team-a", "job-1" };
	world_t w = { .usage = { .plugin_users = 1, .evictable = victims, .n_evictable = 1 }, .ads = ADS_LEGACY,
		      .goal = HANDOVER_GOAL_DRA };
	handover_decision_t d;
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_EVICT);
	assert_string_equal(d.evict_ns, "team-a");
	assert_string_equal(d.evict_name, "job-1");
	handover_decision_free(&d);
	/* Past the eviction deadline it stops evicting and waits out the drain deadline. */
	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, 31 * MINUTE);
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_NONE);
	assert_true(d.requeue_ms > 0);
	handover_decision_free(&d);
	pool = saved;
}

/*
 * A failure names what it waited for in full: an extended resource may be 317
 * bytes long (the CRD's maxLength), and the reason used to be cut at 160.
 */
static void test_failure_reason_names_a_long_resource_in_full(void **state)
{
	(void)state;
	char resource[318];
	memset(resource, 'g', 253);
	resource[253] = '/';
	memset(resource + 254, 'r', 63);
	resource[317] = '\0';
	char *saved = plan.extended_resource;
	plan.extended_resource = resource;
	node_t n;
	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, 61 * MINUTE);
	world_t w = { .usage = { .plugin_users = 2 }, .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	handover_decision_t d;
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	cJSON *patch = cJSON_Parse(d.patch);
	const cJSON *failure = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(patch, "metadata"), "annotations"),
		HANDOVER_ANN_FAILURE);
	assert_true(cJSON_IsString(failure));
	char *want = xasprintf("draining: 2 pod(s) still use %s on the node", resource);
	assert_string_equal(failure->valuestring, want);
	free(want);
	cJSON_Delete(patch);
	handover_decision_free(&d);
	plan.extended_resource = saved;
}

/*
 * A rollback waits for the pods whose extended resource the scheduler served
 * through DRA like for any claim; past the drain deadline the failure says
 * which kind of user held the node.
 */
static void test_rollback_names_scheduler_made_claims(void **state)
{
	(void)state;
	node_t n;
	make_node(&n, HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, MINUTE);
	world_t w = { .usage = { .driver_users = 1, .extended_users = 1 }, .ads = ADS_DRA, .goal = HANDOVER_GOAL_LEGACY };
	handover_decision_t d;
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_NONE);
	assert_true(d.requeue_ms > 0);
	handover_decision_free(&d);

	make_node(&n, HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, 0, 1, true, true, 61 * MINUTE);
	w.usage.driver_users = 2;
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	assert_int_equal(d.to, HANDOVER_FAILED);
	assert_non_null(strstr(d.message, "2 pod(s) on the node still hold claims allocated by gpu.example.com, 1 of them "
					  "through the claim the scheduler made for the extended resource they ask for"));
	handover_decision_free(&d);
}

static void test_unreadable_record_is_refused(void **state)
{
	(void)state;
	node_t n;
	make_node(&n, HANDOVER_DRAINING, HANDOVER_TO_DRA, 1, 0, true, true, MINUTE);
	n.ann[2].value = "half-way";
	world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
	handover_decision_t d;
	decide(&n, &w, &d);
	assert_int_equal(d.act, HANDOVER_ACT_REFUSE);
	assert_string_equal(d.reason, "UnreadableRecord");
	handover_decision_free(&d);
}

/*
 * A quarantined node (a permanent driver failure) is not moved by any goal,
 * not even to finish a step under way; released by a deleted plan it keeps
 * its cordon (drashift's records go, the quarantine stays).
 */
static void test_a_quarantined_node_stays_as_it_is(void **state)
{
	(void)state;
	static const handover_step_t steps[] = { HANDOVER_DRIVER_ON, HANDOVER_VERIFIED, HANDOVER_DRA };
	static const handover_goal_t goals[] = { HANDOVER_GOAL_STAY, HANDOVER_GOAL_DRA, HANDOVER_GOAL_LEGACY };
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++)
		for (size_t g = 0; g < sizeof(goals) / sizeof(goals[0]); g++) {
			node_t n;
			make_node(&n, steps[s], HANDOVER_TO_DRA, 0, 1, true, true, MINUTE);
			n.ann[n.node.n_annotations++] = (projection_label_t){ "drashift.io/quarantine", "permanent" };
			world_t w = { .ads = ADS_DRA, .goal = goals[g] };
			handover_decision_t d;
			decide(&n, &w, &d);
			if (d.act != HANDOVER_ACT_NONE)
				fail_msg("step %s goal %d: %s", handover_step_name(steps[s]), goals[g], d.patch ? d.patch : "");
			handover_decision_free(&d);
		}
	node_t n;
	make_node(&n, HANDOVER_DRA, HANDOVER_TO_DRA, 0, 1, true, true, MINUTE);
	n.ann[n.node.n_annotations++] = (projection_label_t){ "drashift.io/quarantine", "permanent" };
	world_t w = { .ads = ADS_DRA, .goal = HANDOVER_GOAL_STAY };
	handover_decision_t d;
	decide_as(&n, &w, &d, true);
	assert_int_equal(d.act, HANDOVER_ACT_PATCH);
	effect_t e = effect_of(d.patch);
	assert_int_equal(e.unschedulable, -1);
	assert_null(strstr(d.patch, "drashift.io/quarantine"));
	free((void *)e.step);
	handover_decision_free(&d);
}

/*
 * Device shapes: what the plugin's units stand for in the driver's physical
 * devices, recorded when the handover starts and checked at driver-on. The
 * labels are GPU Feature Discovery's, named after the plan's resource.
 */
typedef struct {
	const char *what;
	const char *labels[6][2];            /* label key, value */
	projection_quantity_t alloc[3];      /* the plugin's advertisement */
	const char *legacy_resources[2];     /* the pool's capacity.legacyResources */
	int32_t replicas_per_device;         /* the pool's capacity.replicasPerDevice */
	const char *units, *devices;         /* recorded; NULL: refused */
	const char *problem;                 /* in the refusal: the numbers and the fix */
	int64_t verifies, stays;             /* physical devices at driver-on that verify / that do not */
} shape_row_t;

static const shape_row_t shape_rows[] = {
	{ "whole GPUs, no labels", { { NULL } }, { { "example.com/gpu", 8 } }, { NULL }, 0, "8", "8", NULL, 8, 7 },
	{ "time-slicing, 4 replicas",
	  { { "example.com/gpu.replicas", "4" }, { "example.com/gpu.sharing-strategy", "time-slicing" },
	    { "example.com/gpu.count", "8" } },
	  { { "example.com/gpu", 32 } }, { NULL }, 0, "32", "8", NULL, 8, 32 },
	{ "MPS, 2 replicas",
	  { { "example.com/gpu.replicas", "2" }, { "example.com/gpu.sharing-strategy", "mps" } },
	  { { "example.com/gpu", 8 } }, { NULL }, 0, "8", "4", NULL, 4, 8 },
	{ "sharing none, replicas 1", { { "example.com/gpu.replicas", "1" }, { "example.com/gpu.sharing-strategy", "none" } },
	  { { "example.com/gpu", 4 } }, { NULL }, 0, "4", "4", NULL, 4, 1 },
	{ "MIG mixed: profiles on 2 GPUs",
	  { { "example.com/mig.strategy", "mixed" }, { "example.com/gpu.count", "2" }, { "example.com/gpu.replicas", "0" } },
	  { { "example.com/mig-1g.10gb", 7 }, { "example.com/mig-3g.40gb", 2 }, { "example.com/gpu", 0 } },
	  { "example.com/mig-1g.10gb", "example.com/mig-3g.40gb" }, 0, "9", "2", NULL, 2, 9 },
	{ "the plan's replicasPerDevice wins over the labels",
	  { { "example.com/gpu.replicas", "2" }, { "example.com/gpu.sharing-strategy", "time-slicing" } },
	  { { "example.com/gpu", 32 } }, { NULL }, 4, "32", "8", NULL, 8, 16 },
	{ "units not a multiple of the replicas label",
	  { { "example.com/gpu.replicas", "4" }, { "example.com/gpu.sharing-strategy", "time-slicing" } },
	  { { "example.com/gpu", 30 } }, { NULL }, 0, NULL, NULL, "advertises 30 example.com/gpu, not a multiple of the node's example.com/gpu.replicas=4; set spec.pools[].capacity.replicasPerDevice", 0, 0 },
	{ "units not a multiple of the plan's replicasPerDevice", { { NULL } }, { { "example.com/gpu", 30 } }, { NULL }, 4,
	  NULL, NULL, "30 units of example.com/gpu, not a multiple of spec.pools[a].capacity.replicasPerDevice=4", 0, 0 },
	{ "shared without a replicas label", { { "example.com/gpu.sharing-strategy", "time-slicing" } },
	  { { "example.com/gpu", 32 } }, { NULL }, 0, NULL, NULL, "example.com/gpu.replicas label is missing or 1; set spec.pools[].capacity.replicasPerDevice", 0, 0 },
	{ "MIG single strategy",
	  { { "example.com/mig.strategy", "single" }, { "example.com/gpu.product", "A100-SXM4-40GB-MIG-1g.5gb" },
	    { "example.com/gpu.count", "56" } },
	  { { "example.com/gpu", 56 } }, { NULL }, 0, NULL, NULL, "advertises 56 example.com/gpu that are MIG instances", 0, 0 },
	{ "MIG mixed without a count label", { { "example.com/mig.strategy", "mixed" } },
	  { { "example.com/mig-1g.10gb", 7 } }, { "example.com/mig-1g.10gb" }, 0, NULL, NULL,
	  "advertises 7 MIG instances (example.com/mig.strategy), but the node has no readable example.com/gpu.count label", 0, 0 },
	{ "MIG mixed with the plan's mapping (one DRA device per instance)", { { "example.com/mig.strategy", "mixed" } },
	  { { "example.com/mig-1g.10gb", 7 } }, { "example.com/mig-1g.10gb" }, 1, "7", "7", NULL, 7, 1 },
};

static void shape_node(node_t *n, const shape_row_t *row, handover_step_t step)
{
	make_node(n, step, HANDOVER_TO_DRA, step == HANDOVER_LEGACY, step != HANDOVER_LEGACY, false, true, MINUTE);
	size_t nl = n->node.n_labels;
	for (size_t i = 0; i < 6 && row->labels[i][0]; i++)
		n->gfd[i] = (projection_label_t){ (char *)row->labels[i][0], (char *)row->labels[i][1] };
	for (size_t i = 0; i < 6 && row->labels[i][0]; i++)
		n->labels[nl + i] = n->gfd[i];
	n->node.labels = n->labels;
	for (size_t i = 0; i < 6 && row->labels[i][0]; i++)
		n->node.n_labels++;
	size_t na = 0;
	for (size_t i = 0; i < 3 && row->alloc[i].name; i++)
		n->allocatable[na++] = row->alloc[i];
	n->node.n_allocatable = na;
}

static void test_device_shapes_map_units_to_devices(void **state)
{
	(void)state;
	plan_pool_t saved = pool;
	for (size_t r = 0; r < sizeof(shape_rows) / sizeof(shape_rows[0]); r++) {
		const shape_row_t *row = &shape_rows[r];
		pool.legacy_resources = (char **)row->legacy_resources;
		pool.n_legacy_resources = row->legacy_resources[1] ? 2 : row->legacy_resources[0] ? 1 : 0;
		pool.replicas_per_device = row->replicas_per_device;
		node_t n;
		shape_node(&n, row, HANDOVER_LEGACY);
		world_t w = { .ads = ADS_LEGACY, .goal = HANDOVER_GOAL_DRA };
		handover_decision_t d;
		decide(&n, &w, &d);
		if (row->units == NULL) {
			if (d.act != HANDOVER_ACT_REFUSE || strcmp(d.reason, "CapacityNotComparable") != 0 ||
			    strstr(d.message, row->problem) == NULL)
				fail_msg("%s: want a refusal naming \"%s\", got act %d: %s", row->what, row->problem, d.act,
					 d.message ? d.message : "");
			handover_decision_free(&d);
			continue;
		}
		char units[64], devices[64];
		snprintf(units, sizeof(units), "\"%s\":\"%s\"", HANDOVER_ANN_LEGACY_DEVICES, row->units);
		snprintf(devices, sizeof(devices), "\"%s\":\"%s\"", HANDOVER_ANN_DRA_DEVICES, row->devices);
		if (d.act != HANDOVER_ACT_PATCH || !strstr(d.patch, units) || !strstr(d.patch, devices))
			fail_msg("%s: want %s and %s recorded, got %s", row->what, units, devices, d.patch ? d.patch : d.message);
		handover_decision_free(&d);

		/* At driver-on the record is what the begin patch wrote; the driver's physical devices must match it. */
		shape_node(&n, row, HANDOVER_DRIVER_ON);
		n.ann[5].value = (char *)row->units;
		n.ann[n.node.n_annotations++] = (projection_label_t){ HANDOVER_ANN_DRA_DEVICES, (char *)row->devices };
		world_t on = { .goal = HANDOVER_GOAL_DRA,
			       .ads = { .slices_present = true, .slices_complete = true, .slice_devices = row->verifies,
					.slice_listed = row->verifies * 8 } };
		decide(&n, &on, &d);
		if (d.to != HANDOVER_VERIFIED)
			fail_msg("%s: %lld physical devices do not verify", row->what, (long long)row->verifies);
		handover_decision_free(&d);
		on.ads.slice_devices = row->stays;
		decide(&n, &on, &d);
		if (d.to == HANDOVER_VERIFIED)
			fail_msg("%s: %lld physical devices verify", row->what, (long long)row->stays);
		handover_decision_free(&d);
	}
	pool = saved;
}

/* Past the deadline, the failure names both numbers and the fix. */
static void test_a_capacity_mismatch_names_both_numbers(void **state)
{
	(void)state;
	node_t n;
	make_node(&n, HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, false, true, 20 * MINUTE);
	n.ann[5].value = "32";
	n.ann[n.node.n_annotations++] = (projection_label_t){ HANDOVER_ANN_DRA_DEVICES, "8" };
	world_t on = { .goal = HANDOVER_GOAL_DRA,
		       .ads = { .slices_present = true, .slices_complete = true, .slice_devices = 32, .slice_listed = 32 } };
	handover_decision_t d;
	decide(&n, &on, &d);
	assert_int_equal(d.to, HANDOVER_FAILED);
	assert_non_null(strstr(d.message, "the driver advertises 32 physical devices (32 listed), the device plugin's 32 "
					  "units stand for 8; fix the driver, or spec.pools[].capacity"));
	handover_decision_free(&d);

	/* A record from before the mapping (units only) is checked one unit per device, as then. */
	make_node(&n, HANDOVER_DRIVER_ON, HANDOVER_TO_DRA, 0, 1, false, true, MINUTE);
	on.ads.slice_devices = 8;
	decide(&n, &on, &d);
	assert_int_equal(d.to, HANDOVER_VERIFIED);
	handover_decision_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invariants_hold_in_every_state),
		cmocka_unit_test(test_transitions),
		cmocka_unit_test(test_release_keeps_the_invariants_in_every_state),
		cmocka_unit_test(test_release_transitions),
		cmocka_unit_test(test_release_and_adoption_refused),
		cmocka_unit_test(test_fight_names_the_fix),
		cmocka_unit_test(test_cordon_settle_requeues),
		cmocka_unit_test(test_patch_names_the_node_object),
		cmocka_unit_test(test_start_records_cordon_owner_and_device_count),
		cmocka_unit_test(test_a_new_plan_of_the_same_name_adopts_nothing),
		cmocka_unit_test(test_the_cordon_record_is_conditional_on_the_node_read),
		cmocka_unit_test(test_a_node_advertising_nothing_has_an_unknown_count),
		cmocka_unit_test(test_evict_policy_evicts_then_waits),
		cmocka_unit_test(test_failure_reason_names_a_long_resource_in_full),
		cmocka_unit_test(test_rollback_names_scheduler_made_claims),
		cmocka_unit_test(test_unreadable_record_is_refused),
		cmocka_unit_test(test_a_quarantined_node_stays_as_it_is),
		cmocka_unit_test(test_device_shapes_map_units_to_devices),
		cmocka_unit_test(test_a_capacity_mismatch_names_both_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
