/*
 * The operator's view of the cluster: one reflector per kind, and the
 * indexes decisions look things up by.
 *
 *   pods by node          what still runs on a node (invariant 3)
 *   claims by node+driver allocations pinned to a node (status.allocation.nodeSelector)
 *                         that one driver must keep serving
 *   slices by node+driver what one driver publishes for a node
 *
 * A node+driver group is named by cache_node_driver_key(). Decisions always
 * ask about one driver on one node, so the groups hold exactly what they
 * read and no lookup filters by driver. A claim with results from several
 * drivers sits in each of their groups.
 *
 * Indexes follow the stores through their change callbacks, so they are
 * exact at every moment the loop is idle. Entries point at projections the
 * stores own; they are valid until the next change of that store.
 */
#ifndef DRASHIFT_CACHE_H
#define DRASHIFT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "kube_http.h"
#include "projection.h"
#include "reflector.h"
#include "store.h"
#include "strmap.h"

typedef enum {
	CACHE_NODES,
	CACHE_PODS,
	CACHE_CLAIMS,
	CACHE_SLICES,
	CACHE_DEVICE_CLASSES,
	CACHE_PLANS,
	CACHE_FREEZE_PARAMETERS,
	CACHE_PREPARE_FAILURES, /* the kubelet's FailedPrepareDynamicResources Events */
	CACHE_KINDS,
} cache_kind_t;

/* Objects grouped by a string (a node name), each group a map of key -> projection. */
typedef struct {
	strmap_t groups; /* value -> strmap_t* of "ns/name" -> projection */
} cache_index_t;

typedef struct cache cache_t;

/* Tells a store's change callback which cache and kind it belongs to. */
typedef struct {
	cache_t *cache;
	cache_kind_t kind;
} cache_listener_t;

struct cache {
	reflector_t *reflectors[CACHE_KINDS];
	cache_listener_t listeners[CACHE_KINDS];
	cache_index_t pods_by_node;
	cache_index_t claims_by_node_driver;
	cache_index_t slices_by_node_driver;
	void (*on_change)(cache_kind_t kind, const void *old, const void *new, void *data);
	void *data;
	int stopping;
};

/*
 * Start every reflector. on_change (may be NULL) hears every change after
 * the indexes follow it: the controller turns changes into work-queue keys.
 */
int cache_start(cache_t *c, uv_loop_t *loop, kube_http_t *http, const reflector_options_t *opt,
		void (*on_change)(cache_kind_t kind, const void *old, const void *new, void *data),
		void *data);
void cache_stop(cache_t *c, void (*on_stopped)(void *data), void *data);
bool cache_synced(const cache_t *c);
const store_t *cache_store(const cache_t *c, cache_kind_t kind);
const reflector_t *cache_reflector(const cache_t *c, cache_kind_t kind);
const char *cache_kind_name(cache_kind_t kind);

/*
 * The group of an index (NULL when empty). Iterate it with strmap_next; the
 * values are projections.
 */
const strmap_t *cache_index_get(const cache_index_t *idx, const char *value);

/*
 * Follow a change in an index where an object is in at most one group
 * (value NULL: in none). Exposed so the unit tests can drive it without I/O.
 */
void cache_index_update(cache_index_t *idx, const char *old_value, const char *new_value,
			const kube_object_meta_t *old, const kube_object_meta_t *new);
void cache_index_free(cache_index_t *idx);

/*
 * Make c's indexes follow one change of a kind: what every store's change
 * callback does before on_change. Exposed so the unit tests can drive the
 * indexes from stores of their own, without I/O.
 */
void cache_follow(cache_t *c, cache_kind_t kind, const void *old, const void *new);

/*
 * The group of one driver on one node: "<node>\x1f<driver>" (owned by the
 * caller). Node names and driver names are DNS subdomains, which the API
 * server validates, so the ASCII unit separator 0x1f never occurs in either
 * and two different pairs never share a key.
 */
char *cache_node_driver_key(const char *node, const char *driver);

/* The node a pod is bound to (its pods_by_node group); NULL when none. */
const char *cache_pod_node(const projection_pod_t *p);

#endif
