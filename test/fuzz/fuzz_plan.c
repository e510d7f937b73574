/*
 * libFuzzer target for plan_decode.
 *
 * The input is parsed with cJSON and decoded as a MigrationPlan. A decode
 * must either succeed, giving a plan that keeps the promises of plan.h (every
 * default applied, exactly one canary size set, no empty selector, labels of
 * different keys), or fail with one line naming a field and a zeroed plan;
 * anything else aborts, and the sanitizers catch the rest. A decoded plan is
 * also run through plan_selector_matches with its own selector's labels and
 * plan_canary_size at the edges. Seed it with test/unit/fixtures/plans
 * (copied: libFuzzer writes into the first corpus directory).
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *   meson compile -C build-fuzz test/fuzz/fuzz_plan
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#define PLAN_PROBE_MAX 64

static void check_failed(const plan_t *p, const char *err)
{
	const unsigned char *b = (const unsigned char *)p;
	if (err[0] == '\0' || strchr(err, '\n') != NULL || strchr(err, ':') == NULL)
		abort();
	for (size_t i = 0; i < sizeof(*p); i++) {
		if (b[i] != 0)
			abort();
	}
}

static void check_pool(const plan_pool_t *pool)
{
	const plan_selector_t *sel = &pool->node_selector;
	if (pool->name == NULL || sel->n_reqs == 0 || pool->max_unavailable < 1)
		abort();
	if ((pool->canary_nodes > 0) == (pool->canary_percent > 0) || pool->canary_percent > 100)
		abort();
	if (pool->drain_deadline_ms == 0 || pool->handover_deadline_ms == 0 || pool->eviction_deadline_ms == 0)
		abort();

	/*
	 * A node carrying, for each In requirement, its first value. When the
	 * selector has only In and DoesNotExist requirements on distinct keys,
	 * that node must match it.
	 */
	projection_label_t labels[PLAN_PROBE_MAX];
	size_t n = 0;
	bool satisfiable = sel->n_reqs <= PLAN_PROBE_MAX;
	for (size_t i = 0; i < sel->n_reqs; i++) {
		const plan_requirement_t *r = &sel->reqs[i];
		bool wants_values = r->op == PLAN_SELECTOR_IN || r->op == PLAN_SELECTOR_NOT_IN;
		if (r->key == NULL || wants_values != (r->n_values > 0))
			abort();
		for (size_t j = 0; j < i; j++) {
			if (strcmp(sel->reqs[j].key, r->key) == 0)
				satisfiable = false;
		}
		if (r->op == PLAN_SELECTOR_IN && n < PLAN_PROBE_MAX) {
			labels[n].key = r->key;
			labels[n].value = r->values[0];
			n++;
		} else if (r->op != PLAN_SELECTOR_DOES_NOT_EXIST) {
			satisfiable = false;
		}
	}
	projection_node_t probe = {.labels = labels, .n_labels = n}, bare = {0};
	if (plan_selector_matches(sel, &probe) != satisfiable && satisfiable)
		abort();
	(void)plan_selector_matches(sel, &bare);

	size_t sizes[] = {0, 1, 2, 99, 100, 101, SIZE_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t c = plan_canary_size(pool, sizes[i]);
		if (c > sizes[i] || (sizes[i] > 0 && c == 0))
			abort();
	}
}

static void check_decoded(const plan_t *p)
{
	if (p->name == NULL || p->driver == NULL || p->extended_resource == NULL || p->n_device_classes == 0 ||
	    p->n_pools == 0 || p->max_concurrent_pools < 1)
		abort();
	if (p->device_plugin_label.key == NULL || p->dra_label.key == NULL ||
	    strcmp(p->device_plugin_label.key, p->dra_label.key) == 0)
		abort();
	if (strcmp(p->device_plugin_label.enabled, p->device_plugin_label.disabled) == 0 ||
	    strcmp(p->dra_label.enabled, p->dra_label.disabled) == 0)
		abort();
	if (p->slo.window_ms == 0 || p->slo.min_samples == 0 || p->slo.max_allocation_failure_percent > 100)
		abort();
	for (size_t i = 0; i < p->n_pools; i++) {
		check_pool(&p->pools[i]);
		for (size_t j = 0; j < i; j++) {
			if (strcmp(p->pools[i].name, p->pools[j].name) == 0)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	char err[256];
	plan_t p;

	memset(&p, 0x5a, sizeof(p));
	err[0] = '\0';
	if (plan_decode(obj, &p, err, sizeof(err)) == 0) {
		check_decoded(&p);
		plan_free(&p);
	} else {
		check_failed(&p, err);
	}
	/* A short error buffer truncates, never overflows. */
	memset(&p, 0x5a, sizeof(p));
	if (plan_decode(obj, &p, err, 8) == 0)
		plan_free(&p);
	else if (strlen(err) > 7)
		abort();
	cJSON_Delete(obj);
	return 0;
}
