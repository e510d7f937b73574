/*
 * A list+watch cache of one kind of object: keeps a store (store.h) equal to
 * what the API server holds.
 *
 * The reflector gets the whole state with one watch that streams it
 * (watch-list: sendInitialEvents, resourceVersion unset, NotOlderThan, served
 * from the API server's watch cache and consistent with etcd), and the same
 * watch goes on after the bookmark that ends the initial events. A server
 * that refuses that request (the WatchList feature gate off) or ends it
 * cleanly before that bookmark is LISTed page by page from then on, and
 * watched from the list's resourceVersion. Watches carry bookmarks, resume
 * from the last resourceVersion seen when the server ends them, and the state
 * is fetched anew when the server says that resourceVersion is gone (410).
 * Errors back off 0.8 s -> 30 s with jitter. A watch that delivers nothing
 * for idle_timeout_ms (bookmarks arrive about once a minute) is presumed dead
 * and restarted. resourceVersions are opaque strings, never compared.
 *
 * States (one function changes them and logs from -> to):
 *
 *   LISTING --initial events end / last page--> WATCHING --server ends watch--> WATCHING
 *      ^                      |  \--410 / line over cap--> LISTING
 *      |                      \--error / idle--> BACKOFF --> WATCHING
 *      \------------------ error while listing --> BACKOFF --> LISTING
 *   LISTING (streaming) --refused / ended early--> LISTING (pages, from then on)
 */
#ifndef DRASHIFT_REFLECTOR_H
#define DRASHIFT_REFLECTOR_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "kube_http.h"
#include "store.h"

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


typedef struct {
	uint64_t lists;          /* LISTs completed (the first one included) */
	uint64_t relists;        /* LISTs after the first, because a watch could not resume */
	uint64_t watch_restarts; /* watches started after the first */
} reflector_stats_t;

/* Start listing and watching kind; on_change follows every change of the store. */
int reflector_start(uv_loop_t *loop, kube_http_t *http, const store_kind_t *kind,
		    const reflector_options_t *opt, store_change_cb on_change, void *data,
		    reflector_t **out);

/* Stop; on_stopped (may be NULL) runs from the loop once everything is freed. */
void reflector_stop(reflector_t *r, void (*on_stopped)(void *data), void *data);

/* The first LIST has completed: the store is a view of the cluster. */
bool reflector_synced(const reflector_t *r);
reflector_state_t reflector_state(const reflector_t *r);
const char *reflector_state_name(reflector_state_t s);
const reflector_stats_t *reflector_stats(const reflector_t *r);
/* The cache itself: look-ups, iteration, sizes, event and decode-error counts. */
const store_t *reflector_store(const reflector_t *r);

#endif
