/*
 * Who uses a node's devices (handover_count_users), as a table: pods of the
 * device plugin, pods holding the driver's claims, and the claims the
 * scheduler makes for an extended resource it serves through DRA (KEP-5004),
 * from the pod's side (status.extendedResourceClaimStatus) and from the
 * claim's (allocated on the node, reserved for a pod not bound yet or not
 * released yet). Each consumer counts once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "handover.h"

static char *mig[] = { "example.com/mig-1g.10gb" };
static plan_pool_t pool = { .name = "a", .legacy_resources = mig, .n_legacy_resources = 1 };
static plan_t plan = {
	.name = "gpu",
	.driver = "gpu.example.com",
	.extended_resource = "example.com/gpu",
	.pools = &pool,
	.n_pools = 1,
};

/* ---- the claims: allocated on node a-0 ---- */

static projection_device_result_t gpu_devices[] = { { "container-0-request-0", "gpu.example.com", "a-0", "gpu-0" } };
static projection_device_result_t nic_devices[] = { { "nic", "nic.example.com", "a-0", "nic-0" } };

#define CONSUMER(uid_) ((projection_consumer_t[]){ { "pods", uid_, uid_ } })
#define CLAIM(name_, extended_, results_, consumers_, n_consumers_)                                           \
	{ .meta = { .namespace = "team", .name = name_ }, .extended = extended_, .allocated = true,            \
	  .results = results_, .n_results = 1, .node_name = "a-0", .reserved_for = consumers_,                  \
	  .n_reserved_for = n_consumers_ }

static projection_claim_t claims[] = {
	CLAIM("ext-claim", true, gpu_devices, CONSUMER("u-ext"), 1),
	CLAIM("ext-done-claim", true, gpu_devices, CONSUMER("u-ext-done"), 1),
	CLAIM("tmpl-claim", false, gpu_devices, CONSUMER("u-tmpl"), 1),
	CLAIM("mixed-claim", true, gpu_devices, CONSUMER("u-mixed"), 1),
	CLAIM("nic-claim", false, nic_devices, CONSUMER("u-nic"), 1),
	/* PreBind wrote the allocation and the reservation; the pod is not bound yet. */
	CLAIM("prebind-claim", true, gpu_devices, CONSUMER("u-prebind"), 1),
	/* Its pod finished and the resourceclaim controller released it. */
	CLAIM("released-claim", true, gpu_devices, NULL, 0),
};

static const projection_claim_t *claim_by_name(void *ctx, const char *namespace, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++)
		if (strcmp(claims[i].meta.namespace, namespace) == 0 && strcmp(claims[i].meta.name, name) == 0)
			return &claims[i];
	return NULL;
}

/* ---- the pods bound to a-0 ---- */

static char *gpu_name[] = { "example.com/gpu" };
#define GPU(n) ((projection_quantity_t[]){ { "example.com/gpu", n } })
#define NAMES(...) ((char *[]){ __VA_ARGS__ })
#define POD(name_, uid_, phase_, deleting_, req_, n_req_, claims_, n_claims_, dra_, n_dra_)                       \
	{ .meta = { .namespace = "team", .name = name_, .uid = uid_, .deleting = deleting_ }, .node_name = "a-0",        \
	  .phase = phase_, .requests = req_, .n_requests = n_req_, .claims = claims_, .n_claims = n_claims_,            \
	  .dra_resources = dra_, .n_dra_resources = n_dra_ }

enum { PLUGIN, PLUGIN_DONE, PLUGIN_TERM, EXT, EXT_DONE, TMPL, MIXED, MISSING, NIC, N_PODS };
static projection_pod_t pods[N_PODS] = {
	[PLUGIN] = POD("plugin", "u-plugin", PROJECTION_POD_RUNNING, false, GPU(2), 1, NULL, 0, NULL, 0),
	[PLUGIN_DONE] = POD("plugin-done", "u-plugin-done", PROJECTION_POD_SUCCEEDED, false, GPU(1), 1, NULL, 0, NULL, 0),
	[PLUGIN_TERM] = POD("plugin-term", "u-plugin-term", PROJECTION_POD_RUNNING, true, GPU(1), 1, NULL, 0, NULL, 0),
	/* The same request, served through DRA: the scheduler made ext-claim for it. */
	[EXT] = POD("ext", "u-ext", PROJECTION_POD_RUNNING, false, GPU(4), 1, NAMES("ext-claim"), 1, gpu_name, 1),
	[EXT_DONE] = POD("ext-done", "u-ext-done", PROJECTION_POD_SUCCEEDED, false, GPU(1), 1, NAMES("ext-done-claim"), 1,
			 gpu_name, 1),
	[TMPL] = POD("tmpl", "u-tmpl", PROJECTION_POD_RUNNING, false, NULL, 0, NAMES("tmpl-claim"), 1, NULL, 0),
	/* example.com/gpu through DRA, a MIG profile (a legacy resource of the pool) through the plugin. */
	[MIXED] = POD("mixed", "u-mixed", PROJECTION_POD_RUNNING, false,
		      ((projection_quantity_t[]){ { "example.com/gpu", 1 }, { "example.com/mig-1g.10gb", 1 } }), 2,
		      NAMES("mixed-claim"), 1, gpu_name, 1),
	/* Its status names a claim the cache does not hold (yet). */
	[MISSING] = POD("missing", "u-missing", PROJECTION_POD_PENDING, false, GPU(1), 1, NAMES("gone"), 1, gpu_name, 1),
	[NIC] = POD("nic", "u-nic", PROJECTION_POD_RUNNING, false, NULL, 0, NAMES("nic-claim"), 1, NULL, 0),
};

typedef struct {
	const char *name;
	int pods[4];          /* indices into pods[], -1 ends */
	const char *pinned[4]; /* claims allocated on the node from the driver, NULL ends */
	size_t plugin, driver, extended, evictable;
	bool unknown;
} row_t;

#define END -1
static const row_t rows[] = {
	{ "a device-plugin pod", { PLUGIN, END }, { NULL }, 1, 0, 0, 1, false },
	{ "a finished device-plugin pod uses nothing", { PLUGIN_DONE, END }, { NULL }, 0, 0, 0, 0, false },
	{ "a terminating device-plugin pod still uses the plugin, and is not evicted again", { PLUGIN_TERM, END }, { NULL },
	  1, 0, 0, 0, false },
	{ "the extended resource served through DRA: a driver user, not a plugin user", { EXT, END }, { "ext-claim" }, 0,
	  1, 1, 0, false },
	{ "a pod and its claim count once", { TMPL, END }, { "tmpl-claim" }, 0, 1, 0, 0, false },
	{ "a scheduler-made claim reserved for a pod not bound yet holds the node", { END }, { "prebind-claim" }, 0, 1, 1,
	  0, false },
	{ "a finished pod whose scheduler-made claim is not released yet", { EXT_DONE, END }, { "ext-done-claim" }, 0, 1,
	  1, 0, false },
	{ "a released scheduler-made claim holds nothing", { END }, { "released-claim" }, 0, 0, 0, 0, false },
	{ "one resource through DRA, another through the plugin: both kinds", { MIXED, END }, { "mixed-claim" }, 1, 1, 1,
	  1, false },
	{ "a scheduler-made claim the cache lacks: assumed in use", { MISSING, END }, { NULL }, 0, 0, 0, 0, true },
	{ "another driver's claim does not use this driver", { NIC, END }, { NULL }, 0, 0, 0, 0, false },
	{ "coexistence on one snapshot: each user once, by kind",
	  { PLUGIN, EXT, TMPL, END },
	  { "ext-claim", "tmpl-claim", "prebind-claim" },
	  1, 3, 2, 1, false },
};

static void test_count_users_table(void **state)
{
	(void)state;
	int failures = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const row_t *row = &rows[i];
		const projection_pod_t *on_node[4];
		const projection_claim_t *pinned[4];
		size_t n_pods = 0, n_pinned = 0;
		for (; n_pods < 4 && row->pods[n_pods] != END; n_pods++)
			on_node[n_pods] = &pods[row->pods[n_pods]];
		for (; n_pinned < 4 && row->pinned[n_pinned]; n_pinned++)
			pinned[n_pinned] = claim_by_name(NULL, "team", row->pinned[n_pinned]);
		handover_users_t in = { .plan = &plan, .pool = &pool, .pods = on_node, .n_pods = n_pods, .pinned = pinned,
					.n_pinned = n_pinned, .claim = claim_by_name };
		handover_usage_t use;
		handover_count_users(&in, &use);
		if (use.plugin_users != row->plugin || use.driver_users != row->driver ||
		    use.extended_users != row->extended || use.n_evictable != row->evictable || use.unknown != row->unknown) {
			print_error("row \"%s\": plugin %zu driver %zu extended %zu evictable %zu unknown %d; want %zu %zu %zu "
				    "%zu %d\n",
				    row->name, use.plugin_users, use.driver_users, use.extended_users, use.n_evictable,
				    use.unknown, row->plugin, row->driver, row->extended, row->evictable, row->unknown);
			failures++;
		}
		handover_usage_free(&use);
	}
	assert_int_equal(failures, 0);
}

/* What the Eviction API is given: the plugin's users, never a DRA user of the same resource. */
static void test_evictable_names(void **state)
{
	(void)state;
	const projection_pod_t *on_node[] = { &pods[EXT], &pods[PLUGIN], &pods[PLUGIN_TERM] };
	const projection_claim_t *pinned[] = { &claims[0] };
	handover_users_t in = { .plan = &plan, .pool = &pool, .pods = on_node, .n_pods = 3, .pinned = pinned,
				.n_pinned = 1, .claim = claim_by_name };
	handover_usage_t use;
	handover_count_users(&in, &use);
	assert_int_equal(use.n_evictable, 1);
	assert_string_equal(use.evictable[0], "team");
	assert_string_equal(use.evictable[1], "plugin");
	handover_usage_free(&use);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_users_table),
		cmocka_unit_test(test_evictable_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
