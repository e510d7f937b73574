#include "reflector.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "watch_framer.h"
#include "xalloc.h"

struct reflector {
	uv_loop_t *loop;
	kube_http_t *http;
	const store_kind_t *kind;
	reflector_options_t opt;

	reflector_state_t state;
	store_t store;
	store_listing_t listing; /* pages of a LIST in progress */
	char *rv;           /* where the next watch starts */
	char *continue_token;
	bool synced;
	bool streaming;     /* a watch is streaming the initial state into listing */
	bool paged;         /* the server does not stream the initial state: LIST in pages */
	bool relist;        /* the watch said its resourceVersion is gone */
	bool idle_expired;
	bool watched;       /* a watch was started before: the next one is a restart */
	bool bookmarked;    /* a watch of this kind delivered a bookmark after its initial state */
	bool stopping;
	uint64_t backoff_ms;
	kube_http_call_t *call;
	watch_framer_t framer;
	uv_timer_t backoff_timer;
	uv_timer_t idle_timer;
	int open_handles;
	void (*on_stopped)(void *data);
	void *stopped_data;
	reflector_stats_t stats;
};

static void reflector_list(reflector_t *r);
static void reflector_list_page(reflector_t *r);
static void reflector_watch(reflector_t *r, bool stream);

/* ---- state --------------------------------------------------------------- */

const char *reflector_state_name(reflector_state_t s)
{
	static const char *const names[] = { "Listing", "Watching", "Backoff", "Stopped" };
	return names[s];
}

static void reflector_set_state(reflector_t *r, reflector_state_t to, const char *why)
{
	if (r->state == to)
		return;
	log_debug("reflector state", "resource", r->kind->resource, "from", reflector_state_name(r->state),
		  "to", reflector_state_name(to), "why", why);
	r->state = to;
}

static void reflector_handle_closed(uv_handle_t *handle)
{
	reflector_t *r = handle->data;
	if (--r->open_handles > 0)
		return;
	void (*cb)(void *) = r->on_stopped;
	void *data = r->stopped_data;
	free(r);
	if (cb)
		cb(data);
}

/* Free everything once no request is in flight; the timers close last. */
static void reflector_finish_stop(reflector_t *r)
{
	reflector_set_state(r, REFLECTOR_STOPPED, "stopped");
	store_free(&r->store);
	store_listing_discard(&r->store, &r->listing);
	watch_framer_free(&r->framer);
	free(r->rv);
	free(r->continue_token);
	r->open_handles = 2;
	uv_close((uv_handle_t *)&r->backoff_timer, reflector_handle_closed);
	uv_close((uv_handle_t *)&r->idle_timer, reflector_handle_closed);
}

static void reflector_on_backoff(uv_timer_t *t)
{
	reflector_t *r = t->data;
	if (r->rv != NULL && !r->relist) {
		reflector_watch(r, false);
	} else {
		reflector_set_state(r, REFLECTOR_LISTING, "backoff over");
		reflector_list(r);
	}
}

/* Full jitter between half the step and the step; the step doubles up to the cap. */
static void reflector_backoff(reflector_t *r, const char *why)
{
	if (r->stopping) {
		reflector_finish_stop(r);
		return;
	}
	r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : r->opt.backoff_min_ms;
	if (r->backoff_ms > r->opt.backoff_max_ms)
		r->backoff_ms = r->opt.backoff_max_ms;
	uint64_t delay = r->backoff_ms / 2 + (uint64_t)random() % (r->backoff_ms / 2 + 1);
	reflector_set_state(r, REFLECTOR_BACKOFF, why);
	uv_timer_start(&r->backoff_timer, reflector_on_backoff, delay, 0);
}

/* ---- LIST ---------------------------------------------------------------- */

static char *reflector_path(const reflector_t *r, const char *extra)
{
	char *path = xasprintf("%s?%s", r->kind->path, extra);
	const char *selector = r->opt.label_selector ? r->opt.label_selector : r->kind->label_selector;
	if (selector) {
		char *p = xasprintf("%s&labelSelector=%s", path, selector);
		free(path);
		path = p;
	}
	const char *fields = r->opt.field_selector ? r->opt.field_selector : r->kind->field_selector;
	if (fields) {
		char *p = xasprintf("%s&fieldSelector=%s", path, fields);
		free(path);
		path = p;
	}
	return path;
}

/* The listing is complete (r->rv is where it stands): the store becomes it. */
static void reflector_listed(reflector_t *r, const char *how)
{
	store_replace(&r->store, &r->listing);
	if (r->stats.lists++ > 0)
		r->stats.relists++;
	r->synced = true;
	r->relist = false;
	r->backoff_ms = 0;
	char count[24];
	snprintf(count, sizeof(count), "%zu", store_size(&r->store));
	log_info("cache synced", "resource", r->kind->resource, "objects", count, "listed", how);
}

static void reflector_on_list_page(const kube_http_response_t *resp, void *data)
{
	reflector_t *r = data;
	r->call = NULL;
	if (r->stopping) {
		reflector_finish_stop(r);
		return;
	}
	if (resp->error != NULL) {
		if (resp->status == 410) {
			/* The continue token expired between pages: start over. */
			log_warn("list continuation expired; listing again", "resource", r->kind->resource);
			free(r->continue_token);
			r->continue_token = NULL;
			store_listing_discard(&r->store, &r->listing);
		}
		log_warn("list failed", "resource", r->kind->resource, "error", resp->error);
		reflector_backoff(r, "list failed");
		return;
	}
	char err[256];
	kube_object_list_t page;
	if (kube_object_decode_list(resp->body, resp->body_len, &page, err, sizeof(err)) != 0) {
		r->store.decode_errors++;
		log_error("cannot decode list page", "resource", r->kind->resource, "error", err);
		reflector_backoff(r, "bad list page");
		return;
	}
	const cJSON *item;
	cJSON_ArrayForEach(item, page.items)
	{
		store_listing_add(&r->store, &r->listing, item);
	}
	free(r->continue_token);
	r->continue_token = page.continue_token && page.continue_token[0] ? xstrdup(page.continue_token) : NULL;
	if (r->continue_token == NULL) {
		free(r->rv);
		r->rv = page.resource_version ? xstrdup(page.resource_version) : NULL;
	}
	kube_object_list_free(&page);

	if (r->continue_token != NULL) {
		reflector_list_page(r);
		return;
	}
	reflector_listed(r, "pages");
	reflector_watch(r, false);
}

static void reflector_list_page(reflector_t *r)
{
	char extra[64];
	snprintf(extra, sizeof(extra), "limit=%u", r->opt.page_size);
	char *path = reflector_path(r, extra);
	if (r->continue_token) {
		char *escaped = curl_easy_escape(NULL, r->continue_token, 0);
		char *p = xasprintf("%s&continue=%s", path, escaped);
		curl_free(escaped);
		free(path);
		path = p;
	}
	kube_http_req_t req = { .method = "GET", .path = path, .timeout_ms = 60000, .retry = 1 };
	int rc = kube_http_request(r->http, &req, reflector_on_list_page, r, &r->call);
	free(path);
	if (rc != 0) {
		r->call = NULL;
		reflector_backoff(r, "cannot start list");
	}
}

/* The whole state anew: streamed by a watch unless the server cannot, else in pages. */
static void reflector_list(reflector_t *r)
{
	if (r->paged)
		reflector_list_page(r);
	else
		reflector_watch(r, true);
}

/* ---- WATCH --------------------------------------------------------------- */

static int reflector_on_event(const char *line, size_t len, void *data)
{
	reflector_t *r = data;
	char *rv;
	bool end = false;
	uint64_t events = r->store.events;
	store_apply_t applied = r->streaming ? store_listing_apply_event(&r->store, &r->listing, line, len, &rv, &end)
					     : store_apply_event(&r->store, line, len, &rv);
	if (applied == STORE_RELIST) {
		r->relist = true;
		return 1;
	}
	if (!r->streaming && rv && r->store.events == events)
		r->bookmarked = true; /* a resourceVersion without an event: a bookmark */
	if (rv) {
		free(r->rv);
		r->rv = rv;
	}
	if (end) {
		/* The initial state is complete; the same stream goes on as the watch. */
		r->streaming = false;
		reflector_listed(r, "watch-list");
		reflector_set_state(r, REFLECTOR_WATCHING, "initial events end");
	}
	return 0;
}

static int reflector_on_watch_data(const char *bytes, size_t len, void *data)
{
	reflector_t *r = data;
	uv_timer_again(&r->idle_timer);
	int rc = watch_framer_feed(&r->framer, bytes, len, reflector_on_event, r);
	if (rc < 0) {
		r->store.decode_errors++;
		log_error("watch event larger than the cap; listing again", "resource", r->kind->resource);
		r->relist = true;
	}
	if (rc == 0 && r->backoff_ms != 0)
		r->backoff_ms = 0; /* data flows: the connection is healthy again */
	return rc != 0;
}

static void reflector_on_idle(uv_timer_t *t)
{
	reflector_t *r = t->data;
	if (r->call == NULL)
		return;
	/*
	 * A kind the API server serves without its watch cache (events, by
	 * default) gets no bookmarks: silence is normal there, not a fault.
	 */
	if (r->bookmarked)
		log_warn("watch silent past the idle timeout; reconnecting", "resource", r->kind->resource);
	else
		log_info("watch silent past the idle timeout, and the server sends no bookmarks for this kind; "
			 "reconnecting",
			 "resource", r->kind->resource);
	r->idle_expired = true;
	kube_http_cancel(r->call);
}

/*
 * A watch that streamed the initial state ended before the bookmark that ends
 * it. A server that refuses the request (422 with the WatchList feature gate
 * off, as on 1.33; 400; 403 when only list is allowed) or ends the stream
 * cleanly (one that ignores sendInitialEvents) will not stream: LIST in pages
 * from now on. Anything else (a cut connection, a restart, 401, 429, 5xx, an
 * undecodable event) is answered by one paged LIST; a LIST that fails backs off.
 */
static void reflector_stream_ended(reflector_t *r, const kube_http_response_t *resp)
{
	r->streaming = false;
	store_listing_discard(&r->store, &r->listing);
	bool refused = resp->status == 400 || resp->status == 403 || resp->status == 422;
	/* An event the reflector could not take ends the stream with an error ("stream ended by the receiver"). */
	if (refused || resp->error == NULL) {
		char status[24];
		snprintf(status, sizeof(status), "%ld", resp->status);
		log_info("the API server does not stream the initial state (WatchList); listing in pages", "resource",
			 r->kind->resource, "status", status, "error", resp->error ? resp->error : "stream ended");
		r->paged = true;
		reflector_set_state(r, REFLECTOR_LISTING, "no watch-list");
		reflector_list_page(r);
		return;
	}
	/*
	 * As client-go does, a stream that failed otherwise (a CRD's watch cache
	 * still initializing answers "storage is (re)initializing") is followed
	 * at once by one LIST in pages; the next relist streams again.
	 */
	if (!r->idle_expired && resp->error != NULL)
		log_warn("watch-list failed; listing in pages this once", "resource", r->kind->resource, "error",
			 resp->error);
	r->idle_expired = false;
	r->relist = true;
	reflector_set_state(r, REFLECTOR_LISTING, "watch-list failed");
	reflector_list_page(r);
}

static void reflector_on_watch_done(const kube_http_response_t *resp, void *data)
{
	reflector_t *r = data;
	r->call = NULL;
	uv_timer_stop(&r->idle_timer);
	watch_framer_reset(&r->framer);
	if (r->stopping) {
		reflector_finish_stop(r);
		return;
	}
	if (r->streaming) {
		reflector_stream_ended(r, resp);
		return;
	}
	if (r->relist || resp->status == 410) {
		r->relist = true;
		reflector_set_state(r, REFLECTOR_LISTING, "resourceVersion gone");
		reflector_list(r);
		return;
	}
	if (resp->error == NULL) {
		/* The server ended the watch at timeoutSeconds: resume where it stopped. */
		reflector_watch(r, false);
		return;
	}
	if (!r->idle_expired)
		log_warn("watch failed", "resource", r->kind->resource, "error", resp->error);
	r->idle_expired = false;
	reflector_backoff(r, "watch failed");
}

/*
 * Watch from r->rv, or (stream) watch-list: the server first sends the whole
 * state as ADDED events, consistent with etcd (resourceVersion unset,
 * NotOlderThan), then the bookmark that ends them, and the watch goes on.
 */
static void reflector_watch(reflector_t *r, bool stream)
{
	unsigned timeout = r->opt.watch_timeout_s ? r->opt.watch_timeout_s : 300 + (unsigned)(random() % 300);
	char *extra;
	if (stream) {
		extra = xasprintf("watch=1&allowWatchBookmarks=true&timeoutSeconds=%u&sendInitialEvents=true"
				  "&resourceVersionMatch=NotOlderThan",
				  timeout);
	} else {
		/* resourceVersion is opaque and of any length: the watch resumes from exactly it. */
		char *escaped = curl_easy_escape(NULL, r->rv ? r->rv : "", 0);
		extra = xasprintf("watch=1&allowWatchBookmarks=true&timeoutSeconds=%u&resourceVersion=%s", timeout,
				  escaped);
		curl_free(escaped);
	}
	char *path = reflector_path(r, extra);
	free(extra);
	kube_http_req_t req = {
		.method = "GET",
		.path = path,
		.timeout_ms = -1,
		.on_data = reflector_on_watch_data,
	};
	if (stream) {
		r->streaming = true;
	} else {
		if (r->watched)
			r->stats.watch_restarts++;
		reflector_set_state(r, REFLECTOR_WATCHING, "watch");
	}
	r->watched = true;
	int rc = kube_http_request(r->http, &req, reflector_on_watch_done, r, &r->call);
	free(path);
	if (rc != 0) {
		r->call = NULL;
		r->streaming = false;
		reflector_backoff(r, stream ? "cannot start watch-list" : "cannot start watch");
		return;
	}
	r->idle_expired = false;
	uv_timer_start(&r->idle_timer, reflector_on_idle, r->opt.idle_timeout_ms, r->opt.idle_timeout_ms);
}

/* ---- public -------------------------------------------------------------- */

int reflector_start(uv_loop_t *loop, kube_http_t *http, const store_kind_t *kind,
		    const reflector_options_t *opt, store_change_cb on_change, void *data,
		    reflector_t **out)
{
	reflector_t *r = xcalloc(1, sizeof(*r));
	r->loop = loop;
	r->http = http;
	r->kind = kind;
	if (opt)
		r->opt = *opt;
	if (r->opt.page_size == 0)
		r->opt.page_size = 500;
	if (r->opt.idle_timeout_ms == 0)
		r->opt.idle_timeout_ms = 150000;
	if (r->opt.backoff_min_ms == 0)
		r->opt.backoff_min_ms = 800;
	if (r->opt.backoff_max_ms == 0)
		r->opt.backoff_max_ms = 30000;
	if (r->opt.max_line == 0)
		r->opt.max_line = 16u * 1024u * 1024u;
	store_init(&r->store, kind, on_change, data);
	r->state = REFLECTOR_LISTING;
	watch_framer_init(&r->framer, r->opt.max_line);
	uv_timer_init(loop, &r->backoff_timer);
	uv_timer_init(loop, &r->idle_timer);
	r->backoff_timer.data = r;
	r->idle_timer.data = r;
	reflector_list(r);
	*out = r;
	return 0;
}

void reflector_stop(reflector_t *r, void (*on_stopped)(void *data), void *data)
{
	if (r->stopping)
		return;
	r->stopping = true;
	r->on_stopped = on_stopped;
	r->stopped_data = data;
	uv_timer_stop(&r->backoff_timer);
	uv_timer_stop(&r->idle_timer);
	if (r->call)
		kube_http_cancel(r->call); /* its callback finishes the stop */
	else
		reflector_finish_stop(r);
}

bool reflector_synced(const reflector_t *r)
{
	return r->synced;
}

reflector_state_t reflector_state(const reflector_t *r)
{
	return r->state;
}

const reflector_stats_t *reflector_stats(const reflector_t *r)
{
	return &r->stats;
}

const store_t *reflector_store(const reflector_t *r)
{
	return &r->store;
}
