/*
 * libFuzzer target for a node's handover record: the labels and drashift.io/
 * annotations drashift reads back from a Node (its status of the handover,
 * which a person or another controller may edit).
 *
 * The input is decoded as a Node, read with handover_read under a fixed plan
 * (one pool, drain policy Wait) and decided for every goal and for a release.
 * Whatever the record says, a decision must never leave both ownership labels
 * enabled, never evict (the pool does not say Evict), and never patch a node
 * whose record is unreadable; anything else aborts, and the sanitizers catch
 * the rest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handover.h"
#include "plan.h"

static const char PLAN_JSON[] =
	"{\"metadata\":{\"name\":\"fuzz\",\"uid\":\"u-1\"},\"spec\":{\"deviceClassNames\":[\"gpu.example.com\"],"
	"\"driver\":\"gpu.example.com\",\"extendedResource\":\"example.com/gpu\",\"pools\":[{\"name\":\"a\","
	"\"nodeSelector\":{\"matchLabels\":{\"drashift.io/pool\":\"a\"}}}]}}";

/* The label's value once the patch is applied: the patch's value (null removes), else the node's. */
static const char *label_after(const projection_node_t *node, const cJSON *patch_labels, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(patch_labels, key);
	if (v != NULL)
		return cJSON_IsString(v) ? v->valuestring : NULL;
	for (size_t i = 0; i < node->n_labels; i++) {
		if (strcmp(node->labels[i].key, key) == 0)
			return node->labels[i].value;
	}
	return NULL;
}

static void check_decision(const plan_t *plan, const projection_node_t *node, const handover_state_t *st,
			   const handover_decision_t *d)
{
	if (d->act == HANDOVER_ACT_EVICT)
		abort();
	if (d->act != HANDOVER_ACT_PATCH)
		return;
	if (st->bad_record || d->patch == NULL)
		abort();
	cJSON *patch = cJSON_Parse(d->patch);
	if (patch == NULL)
		abort();
	const cJSON *labels =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(patch, "metadata"), "labels");
	const char *plugin = label_after(node, labels, plan->device_plugin_label.key);
	const char *dra = label_after(node, labels, plan->dra_label.key);
	bool two_owners = plugin && strcmp(plugin, plan->device_plugin_label.enabled) == 0 && dra &&
			  strcmp(dra, plan->dra_label.enabled) == 0;
	cJSON_Delete(patch);
	if (two_owners)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static plan_t plan;
	static bool have_plan;
	char err[256];
	if (!have_plan) {
		cJSON *p = cJSON_Parse(PLAN_JSON);
		if (p == NULL || plan_decode(p, &plan, err, sizeof(err)) != 0)
			abort();
		cJSON_Delete(p);
		have_plan = true;
	}

	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	projection_node_t node;
	if (obj == NULL || projection_decode_node(obj, &node, err, sizeof(err)) != 0) {
		cJSON_Delete(obj);
		return 0;
	}
	cJSON_Delete(obj);

	handover_state_t st;
	handover_read(&plan, &node, &st);
	if (!st.bad_record && handover_step_parse(handover_step_name(st.step)) != (int)st.step)
		abort();

	handover_usage_t usage = {0};
	handover_ads_t ads = {.allocatable_known = true, .slices_present = true, .slices_complete = true,
			      .slice_devices = 8, .capacity = 8};
	const handover_goal_t goals[] = {HANDOVER_GOAL_STAY, HANDOVER_GOAL_DRA, HANDOVER_GOAL_LEGACY};
	/* Clocks from the epoch to the year 2500: a record may be from the future or the past. */
	const int64_t nows[] = {0, 1700000000000, 16725225600000};
	for (size_t g = 0; g < sizeof(goals) / sizeof(goals[0]); g++) {
		for (size_t t = 0; t < sizeof(nows) / sizeof(nows[0]); t++) {
			handover_input_t in = {.plan = &plan, .pool = &plan.pools[0], .node = &node, .state = &st,
					       .usage = &usage, .ads = &ads, .goal = goals[g], .now_ms = nows[t],
					       .plan_uid = plan.uid};
			handover_decision_t d;
			handover_decide(&in, &d);
			check_decision(&plan, &node, &st, &d);
			handover_decision_free(&d);
			if (g == 0) {
				handover_release(&in, &d);
				check_decision(&plan, &node, &st, &d);
				handover_decision_free(&d);
			}
		}
	}
	projection_free_node(&node);
	return 0;
}
