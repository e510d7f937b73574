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

/* The namespace (NULL when cluster-scoped or empty) and name of a raw object; false without a name. */
static bool store_name_of_json(const cJSON *obj, const char **ns_out, const char **name_out)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
	if (!cJSON_IsString(name) || name->valuestring[0] == '\0')
		return false;
	*ns_out = cJSON_IsString(ns) && ns->valuestring[0] ? ns->valuestring : NULL;
	*name_out = name->valuestring;
	return true;
}

/* The key of a raw object, for undecodable objects in a listing; NULL without a name. */
static char *store_key_of_json(const cJSON *obj)
{
	const char *ns, *name;
	return store_name_of_json(obj, &ns, &name) ? store_key(ns, name) : NULL;
}

/* ---- the index: projections by namespace and name ------------------------ */

/*
 * Open addressing with linear probing over pointers to the projections
 * themselves: a projection's namespace and name are its key, so the index
 * keeps no key of its own, and a slot is 8 bytes. The hash is that of
 * "namespace/name" (FNV-1a), computed from the two strings; the load stays at
 * most 3/4, and deletion shifts back (no tombstones), as in strmap.
 */
static uint64_t store_hash_str(uint64_t h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		h ^= *p;
		h *= 0x100000001b3u;
	}
	return h;
}

static size_t store_home(const store_t *s, const char *ns, const char *name)
{
	uint64_t h = 0xcbf29ce484222325u;
	if (ns != NULL) {
		h = store_hash_str(h, ns);
		h = store_hash_str(h, "/");
	}
	return (size_t)store_hash_str(h, name) & (s->cap - 1);
}

static size_t store_home_of(const store_t *s, const void *proj)
{
	return store_home(s, store_meta(proj)->namespace, store_meta(proj)->name);
}

static bool store_is(const void *proj, const char *ns, const char *name)
{
	const kube_object_meta_t *m = store_meta(proj);
	if (strcmp(m->name, name) != 0)
		return false;
	return ns == NULL ? m->namespace == NULL : m->namespace != NULL && strcmp(m->namespace, ns) == 0;
}

/* The slot holding (ns, name), or the empty slot where it would go. cap must be > 0. */
static size_t store_find(const store_t *s, const char *ns, const char *name)
{
	size_t mask = s->cap - 1;
	size_t i = store_home(s, ns, name);
	while (s->slots[i] != NULL && !store_is(s->slots[i], ns, name))
		i = (i + 1) & mask;
	return i;
}

static void store_grow(store_t *s)
{
	size_t old_cap = s->cap;
	void **old = s->slots;
	s->cap = old_cap ? old_cap * 2 : 16;
	s->slots = xcalloc(s->cap, sizeof(*s->slots));
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i] == NULL)
			continue;
		size_t j = store_home_of(s, old[i]);
		while (s->slots[j] != NULL)
			j = (j + 1) & (s->cap - 1);
		s->slots[j] = old[i];
	}
	free(old);
}

/* Insert or replace proj under its own namespace and name; returns the projection it replaced. */
static void *store_index_put(store_t *s, void *proj)
{
	if ((s->len + 1) * 4 > s->cap * 3)
		store_grow(s);
	const kube_object_meta_t *m = store_meta(proj);
	size_t i = store_find(s, m->namespace, m->name);
	void *old = s->slots[i];
	s->slots[i] = proj;
	if (old == NULL)
		s->len++;
	return old;
}

/* Take (ns, name) out of the index; returns its projection, or NULL. */
static void *store_index_remove(store_t *s, const char *ns, const char *name)
{
	if (s->len == 0)
		return NULL;
	size_t mask = s->cap - 1;
	size_t i = store_find(s, ns, name);
	void *proj = s->slots[i];
	if (proj == NULL)
		return NULL;
	s->slots[i] = NULL;
	s->len--;
	size_t hole = i;
	for (size_t j = (i + 1) & mask; s->slots[j] != NULL; j = (j + 1) & mask) {
		size_t home = store_home_of(s, s->slots[j]);
		/* j may move into the hole when home is not cyclically in (hole, j]. */
		bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
		if (!stays) {
			s->slots[hole] = s->slots[j];
			s->slots[j] = NULL;
			hole = j;
		}
	}
	return proj;
}

static void *store_index_get(const store_t *s, const char *ns, const char *name)
{
	return s->len > 0 ? s->slots[store_find(s, ns, name)] : NULL;
}

/* ---- projections --------------------------------------------------------- */

static void store_free_proj(store_t *s, void *proj)
{
	if (proj == NULL || proj == STORE_KEEP)
		return;
	if (s->kind->pack != NULL) {
		s->kind->free_packed(proj, &s->shared);
	} else {
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
			void *packed = s->kind->pack(proj, &s->shared);
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

static void store_put(store_t *s, void *proj)
{
	void *old = store_index_put(s, proj);
	if (s->on_change)
		s->on_change(old, proj, s->data);
	store_free_proj(s, old);
}

/* ns and name may point into the projection deleted: they are read before it goes. */
static void store_delete(store_t *s, const char *ns, const char *name)
{
	void *old = store_index_remove(s, ns, name);
	if (old == NULL)
		return;
	if (s->on_change)
		s->on_change(old, NULL, s->data);
	store_free_proj(s, old);
}

/* ---- public -------------------------------------------------------------- */

void store_init(store_t *s, const store_kind_t *kind, store_change_cb on_change, void *data)
{
	*s = (store_t){ .kind = kind, .shared = STRMAP_INIT, .on_change = on_change, .data = data };
}

void store_free(store_t *s)
{
	for (size_t i = 0; i < s->cap; i++)
		store_free_proj(s, s->slots[i]);
	free(s->slots);
	s->slots = NULL;
	s->cap = s->len = 0;
	strmap_clear(&s->shared, NULL); /* empty by now: every projection gave its references back */
}

/*
 * One watch line, into the store, or into the listing l of a watch that
 * streams the initial state (then *end tells that the initial state is
 * complete, and only that bookmark's resourceVersion is returned).
 */
static store_apply_t store_apply(store_t *s, store_listing_t *l, const char *line, size_t len, char **rv,
				 bool *end)
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
		if (l != NULL) {
			store_listing_add(s, l, ev.object);
			break;
		}
		void *proj = store_decode(s, ev.object);
		if (proj)
			store_put(s, proj);
		break;
	}
	case KUBE_OBJECT_EVENT_DELETED: {
		const char *ns, *name;
		if (!store_name_of_json(ev.object, &ns, &name)) {
			s->decode_errors++;
			log_error("deletion event without a name; listing again", "resource", s->kind->resource);
			result = STORE_RELIST;
		} else if (l != NULL) {
			char *key = store_key(ns, name);
			store_free_proj(s, strmap_remove(&l->items, key));
			free(key);
		} else {
			store_delete(s, ns, name);
		}
		break;
	}
	case KUBE_OBJECT_EVENT_BOOKMARK:
		if (l != NULL)
			*end = ev.initial_events_end;
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
		if (ev.type != KUBE_OBJECT_EVENT_BOOKMARK && l == NULL)
			s->events++; /* the initial state is listed, not events */
		if (ev.resource_version && (l == NULL || *end)) {
			*rv = ev.resource_version;
			ev.resource_version = NULL;
		}
	}
	kube_object_event_free(&ev);
	return result;
}

store_apply_t store_apply_event(store_t *s, const char *line, size_t len, char **rv)
{
	return store_apply(s, NULL, line, len, rv, NULL);
}

store_apply_t store_listing_apply_event(store_t *s, store_listing_t *l, const char *line, size_t len, char **rv,
					bool *end)
{
	*end = false;
	return store_apply(s, l, line, len, rv, end);
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
	/* What the list no longer holds was deleted while nobody watched. */
	size_t ngone = 0;
	void **gone = xcalloc(s->len + 1, sizeof(*gone));
	for (size_t i = 0; i < s->cap; i++) {
		if (s->slots[i] == NULL)
			continue;
		const kube_object_meta_t *m = store_meta(s->slots[i]);
		char *key = store_key(m->namespace, m->name);
		if (strmap_get(&l->items, key) == NULL)
			gone[ngone++] = s->slots[i];
		free(key);
	}
	for (size_t i = 0; i < ngone; i++)
		store_delete(s, store_meta(gone[i])->namespace, store_meta(gone[i])->name);
	free(gone);

	size_t it = 0;
	void *proj;
	while (strmap_next(&l->items, &it, NULL, &proj)) {
		if (proj == STORE_KEEP)
			continue;
		const kube_object_meta_t *m = store_meta(proj);
		const kube_object_meta_t *old = store_index_get(s, m->namespace, m->name);
		const char *old_rv = old && old->resource_version ? old->resource_version : NULL;
		const char *new_rv = m->resource_version;
		if (old_rv && new_rv && strcmp(old_rv, new_rv) == 0)
			store_free_proj(s, proj);
		else
			store_put(s, proj);
	}
	strmap_clear(&l->items, NULL);
}

const void *store_get(const store_t *s, const char *ns, const char *name)
{
	return store_index_get(s, ns, name);
}

size_t store_size(const store_t *s)
{
	return s->len;
}

bool store_next(const store_t *s, size_t *it, const void **proj)
{
	while (*it < s->cap) {
		void *p = s->slots[(*it)++];
		if (p != NULL) {
			*proj = p;
			return true;
		}
	}
	return false;
}

size_t store_bytes(const store_t *s)
{
	size_t n = (s->slots ? malloc_usable_size(s->slots) : 0) + strmap_bytes(&s->shared);
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i] != NULL)
			n += store_object_bytes(s, s->slots[i]);
	return n;
}

size_t store_object_bytes(const store_t *s, const void *proj)
{
	return s->kind->pack != NULL ? malloc_usable_size((void *)proj) : s->kind->bytes(proj);
}
