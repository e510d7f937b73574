#include "cache.h"

#include <stdlib.h>
#include <string.h>

#include "freeze.h"
#include "kinds.h"
#include "plan_object.h"
#include "xalloc.h"

static const store_kind_t *const cache_store_kinds[CACHE_KINDS] = {
	[CACHE_NODES] = &kinds_nodes,
	[CACHE_PODS] = &kinds_pods,
	[CACHE_CLAIMS] = &kinds_claims,
	[CACHE_SLICES] = &kinds_slices,
	[CACHE_DEVICE_CLASSES] = &kinds_device_classes,
	[CACHE_PLANS] = &store_kind_plans,
	[CACHE_FREEZE_PARAMETERS] = &store_kind_freeze_parameters,
	[CACHE_PREPARE_FAILURES] = &kinds_prepare_failures,
};

const char *cache_kind_name(cache_kind_t kind)
{
	return cache_store_kinds[kind]->resource;
}

const char *cache_pod_node(const projection_pod_t *p)
{
	return p->node_name;
}

char *cache_node_driver_key(const char *node, const char *driver)
{
	return xjoin(node, '\x1f', driver);
}

/*
 * The groups of a claim pinned to a node: one node+driver key per distinct
 * driver of its results. Returns how many; *keys is freed with cache_keys_free.
 */
static size_t cache_claim_keys(const void *obj, char ***keys)
{
	const projection_claim_t *c = obj;
	*keys = NULL;
	if (c->node_name == NULL || c->n_results == 0)
		return 0;
	/* Several devices of one driver are one group; a set keeps that linear however many results come. */
	strmap_t seen = STRMAP_INIT;
	size_t n = 0;
	*keys = xcalloc(c->n_results, sizeof(char *));
	for (size_t r = 0; r < c->n_results; r++)
		if (strmap_put(&seen, c->results[r].driver, &seen) == NULL)
			(*keys)[n++] = cache_node_driver_key(c->node_name, c->results[r].driver);
	strmap_clear(&seen, NULL);
	return n;
}

/* The group of a node-local slice. */
static size_t cache_slice_keys(const void *obj, char ***keys)
{
	const projection_slice_t *s = obj;
	*keys = NULL;
	if (s->node_name == NULL || s->driver == NULL)
		return 0;
	*keys = xcalloc(1, sizeof(char *));
	(*keys)[0] = cache_node_driver_key(s->node_name, s->driver);
	return 1;
}

static void cache_keys_free(char **keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

static char *cache_object_key(const kube_object_meta_t *m)
{
	return m->namespace ? xasprintf("%s/%s", m->namespace, m->name) : xstrdup(m->name);
}

static void cache_group_free(void *group)
{
	strmap_clear(group, NULL);
	free(group);
}

/*
 * Leave the groups the object is no longer in, then join (or, for a group it
 * stays in, point at the new projection) the groups of new_values. A group
 * kept is never emptied on the way, so it is not freed and made again. The
 * sets come from untrusted objects: the diff goes through a map, never a
 * nested loop.
 */
static void cache_index_update_set(cache_index_t *idx, const char *const *old_values, size_t n_old,
				   const char *const *new_values, size_t n_new, const kube_object_meta_t *old,
				   const kube_object_meta_t *new)
{
	char *old_key = old ? cache_object_key(old) : NULL;
	char *new_key = new ? cache_object_key(new) : NULL;
	strmap_t kept = STRMAP_INIT;
	if (old_key && new_key && strcmp(old_key, new_key) == 0)
		for (size_t i = 0; i < n_new; i++)
			strmap_put(&kept, new_values[i], &kept);
	for (size_t i = 0; old_key && i < n_old; i++) {
		strmap_t *group = strmap_get(&idx->groups, old_values[i]);
		if (group == NULL || strmap_get(&kept, old_values[i]) != NULL)
			continue;
		strmap_remove(group, old_key);
		if (strmap_size(group) == 0)
			cache_group_free(strmap_remove(&idx->groups, old_values[i]));
	}
	for (size_t i = 0; new_key && i < n_new; i++) {
		strmap_t *group = strmap_get(&idx->groups, new_values[i]);
		if (group == NULL) {
			group = xcalloc(1, sizeof(*group));
			strmap_put(&idx->groups, new_values[i], group);
		}
		strmap_put(group, new_key, (void *)new);
	}
	strmap_clear(&kept, NULL);
	free(old_key);
	free(new_key);
}

void cache_index_update(cache_index_t *idx, const char *old_value, const char *new_value,
			const kube_object_meta_t *old, const kube_object_meta_t *new)
{
	cache_index_update_set(idx, &old_value, old_value != NULL, &new_value, new_value != NULL, old, new);
}

/* Follow a change of a claim or slice in a node+driver index. */
static void cache_index_follow_keys(cache_index_t *idx, size_t (*keys_of)(const void *obj, char ***keys),
				    const void *old, const void *new)
{
	char **old_keys = NULL, **new_keys = NULL;
	size_t n_old = old ? keys_of(old, &old_keys) : 0;
	size_t n_new = new ? keys_of(new, &new_keys) : 0;
	cache_index_update_set(idx, (const char *const *)old_keys, n_old, (const char *const *)new_keys, n_new, old,
			       new);
	cache_keys_free(old_keys, n_old);
	cache_keys_free(new_keys, n_new);
}

const strmap_t *cache_index_get(const cache_index_t *idx, const char *value)
{
	return value ? strmap_get(&idx->groups, value) : NULL;
}

void cache_index_free(cache_index_t *idx)
{
	strmap_clear(&idx->groups, cache_group_free);
}

void cache_follow(cache_t *c, cache_kind_t kind, const void *old, const void *new)
{
	switch (kind) {
	case CACHE_PODS:
		cache_index_update(&c->pods_by_node, old ? cache_pod_node(old) : NULL,
				   new ? cache_pod_node(new) : NULL, old, new);
		break;
	case CACHE_CLAIMS:
		cache_index_follow_keys(&c->claims_by_node_driver, cache_claim_keys, old, new);
		break;
	case CACHE_SLICES:
		cache_index_follow_keys(&c->slices_by_node_driver, cache_slice_keys, old, new);
		break;
	default:
		break;
	}
}

static void cache_on_store_change(const void *old, const void *new, void *data)
{
	cache_listener_t *l = data;
	cache_t *c = l->cache;
	if (c->stopping)
		return; /* the indexes are gone: a change the stop still delivers must not refill them */
	cache_follow(c, l->kind, old, new);
	if (c->on_change)
		c->on_change(l->kind, old, new, c->data);
}

int cache_start(cache_t *c, uv_loop_t *loop, kube_http_t *http, const reflector_options_t *opt,
		void (*on_change)(cache_kind_t kind, const void *old, const void *new, void *data),
		void *data)
{
	*c = (cache_t){ .on_change = on_change, .data = data };
	for (int k = 0; k < CACHE_KINDS; k++) {
		c->listeners[k] = (cache_listener_t){ .cache = c, .kind = (cache_kind_t)k };
		if (reflector_start(loop, http, cache_store_kinds[k], opt, cache_on_store_change,
				    &c->listeners[k], &c->reflectors[k]) != 0)
			return -1;
	}
	return 0;
}

typedef struct {
	cache_t *cache;
	void (*on_stopped)(void *data);
	void *data;
} cache_stop_t;

static void cache_reflector_stopped(void *data)
{
	cache_stop_t *s = data;
	if (--s->cache->stopping > 0)
		return;
	if (s->on_stopped)
		s->on_stopped(s->data);
	free(s);
}

void cache_stop(cache_t *c, void (*on_stopped)(void *data), void *data)
{
	cache_stop_t *s = xcalloc(1, sizeof(*s));
	*s = (cache_stop_t){ .cache = c, .on_stopped = on_stopped, .data = data };
	/* Indexes point into the stores: drop them before the stores free anything. */
	c->on_change = NULL;
	cache_index_free(&c->pods_by_node);
	cache_index_free(&c->claims_by_node_driver);
	cache_index_free(&c->slices_by_node_driver);
	c->stopping = CACHE_KINDS;
	for (int k = 0; k < CACHE_KINDS; k++)
		reflector_stop(c->reflectors[k], cache_reflector_stopped, s);
}

bool cache_synced(const cache_t *c)
{
	for (int k = 0; k < CACHE_KINDS; k++)
		if (c->reflectors[k] == NULL || !reflector_synced(c->reflectors[k]))
			return false;
	return true;
}

const store_t *cache_store(const cache_t *c, cache_kind_t kind)
{
	return reflector_store(c->reflectors[kind]);
}

const reflector_t *cache_reflector(const cache_t *c, cache_kind_t kind)
{
	return c->reflectors[kind];
}
