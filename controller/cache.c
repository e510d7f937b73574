#include "cache.h"

#include <stdlib.h>

#include "freeze.h"
#include "plan_object.h"
#include "xalloc.h"

static const store_kind_t *const cache_store_kinds[CACHE_KINDS] = {
	[CACHE_NODES] = &store_kind_nodes,
	[CACHE_PODS] = &store_kind_pods,
	[CACHE_CLAIMS] = &store_kind_claims,
	[CACHE_SLICES] = &store_kind_slices,
	[CACHE_DEVICE_CLASSES] = &store_kind_device_classes,
	[CACHE_PLANS] = &store_kind_plans,
	[CACHE_FREEZE_PARAMETERS] = &store_kind_freeze_parameters,
};

const char *cache_kind_name(cache_kind_t kind)
{
	return cache_store_kinds[kind]->resource;
}

const char *cache_pod_node(const projection_pod_t *p)
{
	return p->node_name;
}

const char *cache_claim_node(const projection_claim_t *c)
{
	return c->node_name;
}

const char *cache_slice_node(const projection_slice_t *s)
{
	return s->node_name;
}

static char *cache_object_key(const projection_meta_t *m)
{
	return m->namespace ? xasprintf("%s/%s", m->namespace, m->name) : xstrdup(m->name);
}

static void cache_group_free(void *group)
{
	strmap_clear(group, NULL);
	free(group);
}

void cache_index_update(cache_index_t *idx, const char *old_value, const char *new_value,
			const projection_meta_t *old, const projection_meta_t *new)
{
	if (old != NULL && old_value != NULL) {
		strmap_t *group = strmap_get(&idx->groups, old_value);
		if (group != NULL) {
			char *key = cache_object_key(old);
			strmap_remove(group, key);
			free(key);
			if (strmap_size(group) == 0)
				cache_group_free(strmap_remove(&idx->groups, old_value));
		}
	}
	if (new != NULL && new_value != NULL) {
		strmap_t *group = strmap_get(&idx->groups, new_value);
		if (group == NULL) {
			group = xcalloc(1, sizeof(*group));
			strmap_put(&idx->groups, new_value, group);
		}
		char *key = cache_object_key(new);
		strmap_put(group, key, (void *)new);
		free(key);
	}
}

const strmap_t *cache_index_get(const cache_index_t *idx, const char *value)
{
	return value ? strmap_get(&idx->groups, value) : NULL;
}

void cache_index_free(cache_index_t *idx)
{
	strmap_clear(&idx->groups, cache_group_free);
}

static void cache_on_store_change(const void *old, const void *new, void *data)
{
	cache_listener_t *l = data;
	cache_t *c = l->cache;
	switch (l->kind) {
	case CACHE_PODS:
		cache_index_update(&c->pods_by_node, old ? cache_pod_node(old) : NULL,
				   new ? cache_pod_node(new) : NULL, old, new);
		break;
	case CACHE_CLAIMS:
		cache_index_update(&c->claims_by_node, old ? cache_claim_node(old) : NULL,
				   new ? cache_claim_node(new) : NULL, old, new);
		break;
	case CACHE_SLICES:
		cache_index_update(&c->slices_by_node, old ? cache_slice_node(old) : NULL,
				   new ? cache_slice_node(new) : NULL, old, new);
		break;
	default:
		break;
	}
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
	cache_index_free(&c->claims_by_node);
	cache_index_free(&c->slices_by_node);
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
