#include "driver_failures.h"

#include <stdlib.h>
#include <string.h>

#include "strmap.h"

/* The pod holds a claim allocated from driver. */
static bool driver_failures_pod_uses(const cache_t *cache, const projection_pod_t *pod, const char *driver)
{
	const store_t *claims = cache_store(cache, CACHE_CLAIMS);
	for (size_t i = 0; i < pod->n_claims; i++) {
		const projection_claim_t *c = store_get(claims, pod->meta.namespace, pod->claims[i]);
		for (size_t r = 0; c && c->allocated && r < c->n_results; r++)
			if (c->results[r].driver && strcmp(c->results[r].driver, driver) == 0)
				return true;
	}
	return false;
}


static uint32_t driver_failures_add(uint32_t a, int64_t b)
{
	uint64_t s = (uint64_t)a + (uint64_t)b;
	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

void driver_failures_gather(const cache_t *cache, const char *driver, int64_t since_ms, uint64_t stuck_ms,
			    int64_t now_ms, driver_failure_node_t *evidence, size_t n)
{
	/* The nodes by name, made at the first report that may concern one (most rounds have none). */
	strmap_t nodes = STRMAP_INIT;
	bool indexed = false;

	const store_t *events = cache_store(cache, CACHE_PREPARE_FAILURES);
	size_t it = 0;
	const void *v;
	while (store_next(events, &it, &v)) {
		const projection_event_t *ev = v;
		if (ev->object_kind == NULL || strcmp(ev->object_kind, "Pod") != 0 || ev->last_seen < since_ms / 1000)
			continue;
		const projection_pod_t *pod =
			store_get(cache_store(cache, CACHE_PODS), ev->object_namespace, ev->object_name);
		if (pod == NULL || pod->phase != PROJECTION_POD_PENDING || pod->meta.deleting)
			continue; /* the pod ran, or is gone: that failure is over */
		const char *node = ev->host ? ev->host : pod->node_name;
		if (node == NULL)
			continue;
		if (!indexed) {
			for (size_t i = 0; i < n; i++)
				strmap_put(&nodes, evidence[i].node, &evidence[i]);
			indexed = true;
		}
		driver_failure_node_t *e = strmap_get(&nodes, node);
		if (e == NULL)
			continue;
		switch (driver_failure_read(ev->message, driver)) {
		case DRIVER_REPORT_NOT_REGISTERED:
			e->not_registered = driver_failures_add(e->not_registered, ev->count);
			if (e->not_registered_since_ms == 0 || ev->first_seen * 1000 < e->not_registered_since_ms)
				e->not_registered_since_ms = ev->first_seen * 1000;
			break;
		case DRIVER_REPORT_DEADLINE:
			if (driver_failures_pod_uses(cache, pod, driver))
				e->deadline = driver_failures_add(e->deadline, ev->count);
			break;
		case DRIVER_REPORT_PREPARE_FAILED:
			if (driver_failures_pod_uses(cache, pod, driver))
				e->prepare_failed = driver_failures_add(e->prepare_failed, ev->count);
			break;
		default:
			break;
		}
	}
	strmap_clear(&nodes, NULL);

	for (size_t i = 0; i < n; i++) {
		char *key = cache_node_driver_key(evidence[i].node, driver);
		const strmap_t *claims = cache_index_get(&cache->claims_by_node_driver, key);
		free(key);
		size_t cit = 0;
		const char *name;
		void *cv;
		while (claims && strmap_next(claims, &cit, &name, &cv)) {
			const projection_claim_t *c = cv;
			if (c->meta.deleting && c->delete_protected && c->meta.deleted * 1000 <= now_ms - (int64_t)stuck_ms)
				evidence[i].stuck_claims = driver_failures_add(evidence[i].stuck_claims, 1);
		}
	}
}
