#include "store.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xalloc.h"

/* In a listing: "this object could not be decoded, keep what the store has". */
static char store_keep_marker;
#define STORE_KEEP ((void *)&store_keep_marker)

/* ---- helpers ------------------------------------------------------------- */

static const kube_object_meta_t *store_meta(const void *proj)
{
	return (const kube_object_meta_t *)proj; /* every projection starts with its meta */
}

static char *store_key(const char *ns, const char *name)
{
	return ns ? xasprintf("%s/%s", ns, name) : xstrdup(name);
}

/* The key of a raw object, for deletions and undecodable objects; NULL without a name. */
static char *store_key_of_json(const cJSON *obj)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
	if (!cJSON_IsString(name) || name->valuestring[0] == '\0')
		return NULL;
	return store_key(cJSON_IsString(ns) && ns->valuestring[0] ? ns->valuestring : NULL, name->valuestring);
}

/* A packed projection's key follows its struct (store_kind_t.pack). */
static const char *store_packed_key(const store_t *s, const void *proj)
{
	return (const char *)proj + s->kind->size;
}

static void store_free_proj(const store_t *s, void *proj)
{
	if (proj != NULL && proj != STORE_KEEP) {
		if (s->kind->pack == NULL)
			s->kind->release(proj);
		free(proj);
	}
}

static void *store_decode(store_t *s, const cJSON *obj)
{
	char err[256];
	void *proj = xcalloc(1, s->kind->size);
	if (s->kind->decode(obj, proj, err, sizeof(err)) == 0) {
		if (s->kind->pack != NULL) {
			void *packed = s->kind->pack(proj);
			free(proj);
			proj = packed;
		}
	} else {
		free(proj);
		s->decode_errors++;
		char *key = store_key_of_json(obj);
		log_error("cannot decode object; keeping what the cache had", "resource", s->kind->resource,
			  "object", key ? key : "?", "error", err);
		free(key);
		return NULL;
	}
	return proj;
}

/*
 * With packed projections the map borrows each key from its projection:
 * strmap_put() takes the new key pointer with the new value, so the old
 * projection (and its key) can go once on_change has seen both.
 */
static void store_put(store_t *s, void *proj)
{
	void *old;
	if (s->kind->pack != NULL) {
		old = strmap_put(&s->map, store_packed_key(s, proj), proj);
	} else {
		const kube_object_meta_t *m = store_meta(proj);
		char *key = store_key(m->namespace, m->name);
		old = strmap_put(&s->map, key, proj);
		free(key);
	}
	if (s->on_change)
		s->on_change(old, proj, s->data);
	store_free_proj(s, old);
}

static void store_delete_key(store_t *s, const char *key)
{
	void *old = strmap_remove(&s->map, key);
	if (old == NULL)
		return;
	if (s->on_change)
		s->on_change(old, NULL, s->data);
	store_free_proj(s, old);
}

/* ---- public -------------------------------------------------------------- */

void store_init(store_t *s, const store_kind_t *kind, store_change_cb on_change, void *data)
{
	*s = (store_t){ .kind = kind, .map = STRMAP_INIT, .on_change = on_change, .data = data };
	s->map.borrowed = kind->pack != NULL;
}

void store_free(store_t *s)
{
	size_t it = 0;
	void *proj;
	while (strmap_next(&s->map, &it, NULL, &proj))
		store_free_proj(s, proj);
	strmap_clear(&s->map, NULL);
}

store_apply_t store_apply_event(store_t *s, const char *line, size_t len, char **rv)
{
	char err[256];
	kube_object_event_t ev;
	*rv = NULL;
	if (kube_object_decode_event(line, len, &ev, err, sizeof(err)) != 0) {
		s->decode_errors++;
		log_error("cannot decode watch event; listing again", "resource", s->kind->resource, "error", err);
		return STORE_RELIST;
	}
	store_apply_t result = STORE_APPLIED;
	switch (ev.type) {
	case KUBE_OBJECT_EVENT_ADDED:
	case KUBE_OBJECT_EVENT_MODIFIED: {
		void *proj = store_decode(s, ev.object);
		if (proj)
			store_put(s, proj);
		break;
	}
	case KUBE_OBJECT_EVENT_DELETED: {
		char *key = store_key_of_json(ev.object);
		if (key) {
			store_delete_key(s, key);
			free(key);
		} else {
			s->decode_errors++;
			log_error("deletion event without a name; listing again", "resource", s->kind->resource);
			result = STORE_RELIST;
		}
		break;
	}
	case KUBE_OBJECT_EVENT_BOOKMARK:
		break;
	case KUBE_OBJECT_EVENT_ERROR:
		if (ev.error_code == 410)
			log_info("watch resourceVersion expired; listing again", "resource", s->kind->resource,
				 "message", ev.error_message);
		else
			log_warn("watch error; listing again", "resource", s->kind->resource, "message",
				 ev.error_message);
		result = STORE_RELIST;
		break;
	}
	if (result == STORE_APPLIED) {
		if (ev.type != KUBE_OBJECT_EVENT_BOOKMARK)
			s->events++;
		if (ev.resource_version) {
			*rv = ev.resource_version;
			ev.resource_version = NULL;
		}
	}
	kube_object_event_free(&ev);
	return result;
}

void store_listing_add(store_t *s, store_listing_t *l, const cJSON *obj)
{
	void *proj = store_decode(s, obj);
	char *key = NULL;
	if (proj != NULL) {
		const kube_object_meta_t *m = store_meta(proj);
		key = store_key(m->namespace, m->name);
	} else {
		/* Never guess: an undecodable object keeps what the store had for it. */
		key = store_key_of_json(obj);
		proj = STORE_KEEP;
	}
	if (key != NULL)
		store_free_proj(s, strmap_put(&l->items, key, proj));
	else
		store_free_proj(s, proj);
	free(key);
}

void store_listing_discard(store_t *s, store_listing_t *l)
{
	size_t it = 0;
	void *proj;
	while (strmap_next(&l->items, &it, NULL, &proj))
		store_free_proj(s, proj);
	strmap_clear(&l->items, NULL);
}

void store_replace(store_t *s, store_listing_t *l)
{
	size_t it = 0, ngone = 0;
	const char *key;
	void *proj;
	char **gone = xcalloc(strmap_size(&s->map) + 1, sizeof(char *));
	while (strmap_next(&s->map, &it, &key, NULL))
		if (strmap_get(&l->items, key) == NULL)
			gone[ngone++] = xstrdup(key);
	for (size_t i = 0; i < ngone; i++) {
		store_delete_key(s, gone[i]);
		free(gone[i]);
	}
	free(gone);

	it = 0;
	while (strmap_next(&l->items, &it, &key, &proj)) {
		if (proj == STORE_KEEP)
			continue;
		const kube_object_meta_t *old = strmap_get(&s->map, key);
		const char *old_rv = old && old->resource_version ? old->resource_version : NULL;
		const char *new_rv = store_meta(proj)->resource_version;
		if (old_rv && new_rv && strcmp(old_rv, new_rv) == 0)
			store_free_proj(s, proj);
		else
			store_put(s, proj);
	}
	strmap_clear(&l->items, NULL);
}

const void *store_get(const store_t *s, const char *ns, const char *name)
{
	char *key = store_key(ns, name);
	const void *proj = strmap_get(&s->map, key);
	free(key);
	return proj;
}

size_t store_size(const store_t *s)
{
	return strmap_size(&s->map);
}

bool store_next(const store_t *s, size_t *it, const void **proj)
{
	void *v;
	if (!strmap_next(&s->map, it, NULL, &v))
		return false;
	*proj = v;
	return true;
}

size_t store_bytes(const store_t *s)
{
	size_t n = strmap_bytes(&s->map);
	size_t it = 0;
	void *proj;
	while (strmap_next(&s->map, &it, NULL, &proj))
		n += store_object_bytes(s, proj);
	return n;
}

size_t store_object_bytes(const store_t *s, const void *proj)
{
	return s->kind->pack != NULL ? malloc_usable_size((void *)proj) : s->kind->bytes(proj);
}
