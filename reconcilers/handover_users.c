/*
 * Who uses a node's devices (handover.h): the device plugin's users and the
 * driver's. With KEP-5004 one pod spec can be either: a pod asking for an
 * extended resource is served by the device plugin on a node that advertises
 * it, and through DRA where the node's allocatable of it is 0 and a DeviceClass
 * maps it. There the scheduler makes a claim for the pod in PreBind
 * (annotated resource.kubernetes.io/extended-resource-claim, owned by the pod),
 * writes its allocation and reservation, then names it in the pod's
 * status.extendedResourceClaimStatus, then binds the pod. So the driver's users
 * are read from both sides: the pods on the node and their claims, and the
 * claims allocated on the node with their reservations (a pod not bound yet, or
 * finished and not yet released).
 */
#include "handover.h"

#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "strmap.h"
#include "xalloc.h"

/* Values of the consumer set: whether the consumer holds a claim the scheduler made. */
static char handover_user_plain, handover_user_extended;

/* The claim is allocated and one of its devices comes from driver. */
static bool handover_claim_from_driver(const projection_claim_t *claim, const char *driver)
{
	for (size_t r = 0; claim->allocated && r < claim->n_results; r++)
		if (claim->results[r].driver && strcmp(claim->results[r].driver, driver) == 0)
			return true;
	return false;
}

static bool handover_served_by_dra(const projection_pod_t *pod, const char *resource)
{
	for (size_t i = 0; i < pod->n_dra_resources; i++)
		if (strcmp(pod->dra_resources[i], resource) == 0)
			return true;
	return false;
}

/* Units of the pool's legacy resources the pod takes from the device plugin (not those served through DRA). */
static int64_t handover_plugin_units(const handover_users_t *in, const projection_pod_t *pod)
{
	int64_t units = 0;
	for (size_t i = 0; i < capacity_legacy_count(in->pool); i++) {
		const char *name = capacity_legacy_name(in->plan, in->pool, i);
		int64_t count = 0;
		if (!handover_served_by_dra(pod, name) && projection_quantity_find(pod->requests, pod->n_requests, name, &count))
			units += count;
	}
	return units;
}

/* Add a consumer once; a scheduler-made claim marks it extended whichever side saw it first. */
static void handover_add_user(strmap_t *users, const char *key, bool extended)
{
	if (strmap_get(users, key) != &handover_user_extended)
		strmap_put(users, key, extended ? &handover_user_extended : &handover_user_plain);
}

/* A pod's key in the consumer set: its uid, as claims' reservedFor name it. */
static char *handover_pod_key(const projection_pod_t *pod)
{
	return pod->meta.uid ? xstrdup(pod->meta.uid) : xasprintf("%s/%s", pod->meta.namespace, pod->meta.name);
}

void handover_count_users(const handover_users_t *in, handover_usage_t *use)
{
	memset(use, 0, sizeof(*use));
	strmap_t users = STRMAP_INIT;
	size_t n_ev = 0;
	for (size_t p = 0; p < in->n_pods; p++) {
		const projection_pod_t *pod = in->pods[p];
		if (pod->phase == PROJECTION_POD_SUCCEEDED || pod->phase == PROJECTION_POD_FAILED)
			continue; /* what it still holds, its claims' reservations say */
		if (handover_plugin_units(in, pod) > 0) {
			use->plugin_users++;
			if (!pod->meta.deleting) {
				use->evictable = xrealloc(use->evictable, (n_ev + 2) * sizeof(*use->evictable));
				use->evictable[n_ev++] = pod->meta.namespace;
				use->evictable[n_ev++] = pod->meta.name;
			}
		}
		/*
		 * A pod on the node holding an allocated claim with a device of the
		 * driver uses the node's driver, whatever node the allocation names
		 * (a claim pinned to several nodes is indexed under its first one
		 * only). A claim the pod names but the cache does not hold cannot be
		 * judged: assume it is in use.
		 */
		bool holds = false, extended = false;
		for (size_t c = 0; c < pod->n_claims; c++) {
			const projection_claim_t *claim = in->claim(in->claim_ctx, pod->meta.namespace, pod->claims[c]);
			if (claim == NULL) {
				use->unknown = true;
			} else if (handover_claim_from_driver(claim, in->plan->driver)) {
				holds = true;
				extended |= claim->extended;
			}
		}
		if (holds) {
			char *key = handover_pod_key(pod);
			handover_add_user(&users, key, extended);
			free(key);
		}
	}
	for (size_t c = 0; c < in->n_pinned; c++) {
		const projection_claim_t *claim = in->pinned[c];
		if (!handover_claim_from_driver(claim, in->plan->driver))
			continue;
		for (size_t r = 0; r < claim->n_reserved_for; r++) {
			const projection_consumer_t *who = &claim->reserved_for[r];
			handover_add_user(&users, who->uid ? who->uid : who->name, claim->extended);
		}
	}
	size_t it = 0;
	void *v;
	while (strmap_next(&users, &it, NULL, &v))
		use->extended_users += v == &handover_user_extended;
	use->driver_users = strmap_size(&users);
	use->n_evictable = n_ev / 2;
	strmap_clear(&users, NULL);
}

void handover_usage_free(handover_usage_t *use)
{
	free(use->evictable);
	*use = (handover_usage_t){ 0 };
}
