/*
 * A list+watch cache of one kind of object, holding projections.
 *
 * The reflector LISTs the kind page by page, then WATCHes from the list's
 * resourceVersion with bookmarks, resuming from the last resourceVersion it
 * saw when the server ends the watch, and LISTing again when the server says
 * that resourceVersion is gone (410). Errors back off 0.8 s -> 30 s with
 * jitter. A watch that delivers nothing for idle_timeout_ms (bookmarks arrive
 * about once a minute) is presumed dead and restarted. resourceVersions are
 * opaque strings, never compared.
 *
 * Every change to the store is reported to on_change, after the store holds
 * the new state and before the old projection is freed, so indexes can follow.
 *
 * States (one function changes them and logs from -> to):
 *
 *   LISTING --last page--> WATCHING --server ends watch--> WATCHING
 *      ^                      |  \--410 / line over cap--> LISTING
 *      |                      \--error / idle--> BACKOFF --> WATCHING
 *      \------------------ error while listing --> BACKOFF --> LISTING
 */
#ifndef DRASHIFT_REFLECTOR_H
#define DRASHIFT_REFLECTOR_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "kube_http.h"
#include "projection.h"

/* What the reflector needs to know about a kind. Every projection starts with its projection_meta_t. */
typedef struct {
	const char *resource; /* "pods": logs and metrics */
	const char *path;     /* "/api/v1/pods" */
	size_t size;          /* sizeof the projection struct */
	int (*decode)(const cJSON *obj, void *out, char *err, size_t errlen);
	void (*release)(void *proj); /* frees what the projection owns, not the struct */
	size_t (*bytes)(const void *proj);
} reflector_kind_t;

extern const reflector_kind_t reflector_kind_nodes;
extern const reflector_kind_t reflector_kind_pods;
extern const reflector_kind_t reflector_kind_claims;
extern const reflector_kind_t reflector_kind_slices;
extern const reflector_kind_t reflector_kind_device_classes;

typedef enum {
	REFLECTOR_LISTING,
	REFLECTOR_WATCHING,
	REFLECTOR_BACKOFF,
	REFLECTOR_STOPPED,
} reflector_state_t;

typedef struct {
	const char *label_selector; /* optional, already URL-safe */
	const char *field_selector; /* optional, already URL-safe */
	unsigned page_size;         /* LIST limit; default 500 */
	uint64_t idle_timeout_ms;   /* default 150000 */
	uint64_t backoff_min_ms;    /* default 800 */
	uint64_t backoff_max_ms;    /* default 30000 */
	unsigned watch_timeout_s;   /* server-side timeoutSeconds; default 300..600 at random */
	size_t max_line;            /* cap on one watch event; default 16 MiB */
} reflector_options_t;

typedef struct reflector reflector_t;

/* old is NULL for an addition, new is NULL for a deletion. */
typedef void (*reflector_change_cb)(reflector_t *r, const void *old, const void *new, void *data);

typedef struct {
	uint64_t lists;          /* LISTs completed (the first one included) */
	uint64_t relists;        /* LISTs after the first, because a watch could not resume */
	uint64_t watch_restarts; /* watches started after the first */
	uint64_t events;         /* watch events applied */
	uint64_t decode_errors;  /* objects or events that could not be decoded */
} reflector_stats_t;

int reflector_start(uv_loop_t *loop, kube_http_t *http, const reflector_kind_t *kind,
		    const reflector_options_t *opt, reflector_change_cb on_change, void *data,
		    reflector_t **out);

/* Stop; on_stopped (may be NULL) runs from the loop once everything is freed. */
void reflector_stop(reflector_t *r, void (*on_stopped)(void *data), void *data);

/* The first LIST has completed: the store is a view of the cluster. */
bool reflector_synced(const reflector_t *r);
reflector_state_t reflector_state(const reflector_t *r);
const char *reflector_state_name(reflector_state_t s);
const reflector_kind_t *reflector_kind(const reflector_t *r);
const reflector_stats_t *reflector_stats(const reflector_t *r);

/* Look up by namespace (NULL for cluster-scoped) and name. */
const void *reflector_get(const reflector_t *r, const char *ns, const char *name);
size_t reflector_size(const reflector_t *r);
/* Iterate like strmap_next; the store must not change meanwhile. */
bool reflector_next(const reflector_t *r, size_t *it, const void **proj);
/* Bytes held by the store: projections, keys and table. */
size_t reflector_bytes(const reflector_t *r);

#endif
