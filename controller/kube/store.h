/*
 * The store of one kind of object: projections by namespace and name, filled
 * from LIST pages and watch events (kube_object.h) through the decoder of its
 * kind (store_kind_t).
 *
 * This is the decode path every cached object takes, without any I/O: the
 * reflector feeds it from the API server, the cache benchmark from synthetic
 * bytes. Every change is reported to on_change after the store holds the new
 * state and before the old projection is freed, so indexes can follow.
 */
#ifndef DRASHIFT_STORE_H
#define DRASHIFT_STORE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube_object.h"
#include "strmap.h"

/* What the store needs to know about a kind. Every projection starts with its kube_object_meta_t. */
typedef struct {
	const char *resource; /* "pods": logs and metrics */
	const char *path;     /* "/api/v1/pods": where the reflector lists and watches it */
	const char *label_selector; /* URL-escaped selector the kind is always listed with, or NULL */
	const char *field_selector; /* URL-escaped field selector the kind is always listed with, or NULL */
	size_t size;          /* sizeof the projection struct */
	int (*decode)(const cJSON *obj, void *out, char *err, size_t errlen);
	void (*release)(void *proj); /* frees what the projection owns, not the struct */
	size_t (*bytes)(const void *proj);
	/*
	 * NULL, or: move a decoded projection into one heap block (the struct
	 * first, then the strings and arrays it owns) and leave the original
	 * zeroed, with the strings that many objects repeat in the store's pool
	 * shared instead (projection_pack_pod). The store then holds the packed
	 * blocks, frees them with free_packed and counts each block with
	 * malloc_usable_size() and the pool once (strmap_bytes).
	 */
	void *(*pack)(void *proj, strmap_t *shared);
	void (*free_packed)(void *proj, strmap_t *shared); /* unshares, frees the block */
} store_kind_t;

/* old is NULL for an addition, new is NULL for a deletion. */
typedef void (*store_change_cb)(const void *old, const void *new, void *data);

/*
 * The projections are found by their own namespace and name: the index is
 * a table of pointers to them (open addressing, load at most 3/4), with no
 * key strings of its own. A cached object costs its projection and 11 to
 * 21 bytes of table.
 */
typedef struct {
	const store_kind_t *kind;
	void **slots; /* NULL: empty; cap is a power of two, or 0 */
	size_t cap, len;
	strmap_t shared; /* the pool of strings packed projections share (strmap_intern) */
	store_change_cb on_change;
	void *data;
	uint64_t events;        /* watch events applied */
	uint64_t decode_errors; /* objects or events that could not be decoded */
} store_t;

void store_init(store_t *s, const store_kind_t *kind, store_change_cb on_change, void *data);
void store_free(store_t *s);

/* The result of applying one watch line. */
typedef enum {
	STORE_APPLIED,  /* the store follows the event (or kept its state for an undecodable object) */
	STORE_RELIST,   /* the watch cannot go on: 410 Gone, an ERROR event, a broken line */
} store_apply_t;

/*
 * Apply one line of a watch stream. *rv receives a fresh copy of the event's
 * resourceVersion when it carries one (the caller frees it), else NULL.
 */
store_apply_t store_apply_event(store_t *s, const char *line, size_t len, char **rv);

/*
 * A LIST in progress. Items are added page by page; store_replace() then
 * makes the store equal to it: objects missing from the list were deleted
 * while nobody watched, unchanged ones (same resourceVersion) stay silently,
 * and objects that could not be decoded keep what the store had.
 */
typedef struct {
	strmap_t items;
} store_listing_t;

void store_listing_add(store_t *s, store_listing_t *l, const cJSON *obj);
/*
 * One line of a watch that streams the initial state (sendInitialEvents):
 * objects go into l, not the store. *end is set by the bookmark that ends
 * the initial events (the caller then store_replace()s), and *rv receives a
 * copy of that bookmark's resourceVersion, where the watch stands; else NULL.
 */
store_apply_t store_listing_apply_event(store_t *s, store_listing_t *l, const char *line, size_t len, char **rv,
					bool *end);
void store_listing_discard(store_t *s, store_listing_t *l);
void store_replace(store_t *s, store_listing_t *l);

/* Look up by namespace (NULL for cluster-scoped) and name. */
const void *store_get(const store_t *s, const char *ns, const char *name);
size_t store_size(const store_t *s);
bool store_next(const store_t *s, size_t *it, const void **proj);
/* Bytes held: projections, table and pool (malloc_usable_size of each allocation). */
size_t store_bytes(const store_t *s);
/* Bytes one projection the store holds costs (packed or not), without its share of the pool. */
size_t store_object_bytes(const store_t *s, const void *proj);

#endif
