#include "events.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rfc3339.h"
#include "xalloc.h"

#define EVENTS_DEFAULT_FLUSH_MS 10000u
/* A DNS subdomain is at most 253 bytes; the name's suffix is '.' and 16 hex digits. */
#define EVENTS_NAME_PREFIX_MAX (253 - 17)

const events_limits_t events_default_limits = {
	.window_ms = 10 * 60 * 1000,
	.burst = 25,
	.refill_ms = 5 * 60 * 1000,
	.max_series = 4096,
	.max_objects = 4096,
};

/* ---- token buckets ------------------------------------------------------- */

/*
 * Whole tokens only: refilled_ms advances by the time the added tokens stand
 * for, so the remainder is kept and a bucket polled often refills exactly as
 * fast as one polled rarely. A full bucket accrues nothing.
 */
void events_bucket_refill(events_bucket_t *b, const events_limits_t *lim, uint64_t now_ms)
{
	if (b->tokens >= lim->burst || now_ms <= b->refilled_ms) {
		if (b->tokens >= lim->burst)
			b->refilled_ms = now_ms;
		return;
	}
	uint64_t refill = lim->refill_ms ? lim->refill_ms : 1;
	uint64_t n = (now_ms - b->refilled_ms) / refill;
	if (n >= lim->burst - b->tokens) {
		b->tokens = lim->burst;
		b->refilled_ms = now_ms;
	} else {
		b->tokens += (unsigned)n;
		b->refilled_ms += n * refill;
	}
}

events_decision_t events_aggregate_decide(const events_limits_t *lim, const events_series_t *series,
					  events_bucket_t *bucket, uint64_t now_ms)
{
	if (series != NULL && now_ms - series->first_ms < lim->window_ms)
		return EVENTS_COUNT;
	events_bucket_refill(bucket, lim, now_ms);
	if (bucket->tokens == 0)
		return EVENTS_DROP;
	bucket->tokens--;
	return EVENTS_CREATE;
}

uint64_t events_bucket_note_drop(events_bucket_t *b, const events_limits_t *lim, uint64_t now_ms)
{
	b->drops++;
	if (b->warned && now_ms - b->warned_ms < lim->window_ms)
		return 0;
	uint64_t drops = b->drops;
	b->warned = true;
	b->warned_ms = now_ms;
	b->drops = 0;
	return drops;
}

/* ---- per-object buckets, least recently used first ------------------------ */

void events_buckets_init(events_buckets_t *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max ? max : 1;
}

static void events_buckets_unlink(events_buckets_t *b, events_bucket_t *k)
{
	if (k->older)
		k->older->newer = k->newer;
	else
		b->oldest = k->newer;
	if (k->newer)
		k->newer->older = k->older;
	else
		b->newest = k->older;
	k->older = k->newer = NULL;
}

static void events_buckets_append(events_buckets_t *b, events_bucket_t *k)
{
	k->older = b->newest;
	k->newer = NULL;
	if (b->newest)
		b->newest->newer = k;
	else
		b->oldest = k;
	b->newest = k;
}

void events_buckets_remove(events_buckets_t *b, events_bucket_t *k)
{
	events_buckets_unlink(b, k);
	strmap_remove(&b->by_key, k->key);
	b->len--;
	free(k->key);
	free(k);
}

events_bucket_t *events_buckets_get(events_buckets_t *b, const char *key, const events_limits_t *lim,
				    uint64_t now_ms)
{
	events_bucket_t *k = strmap_get(&b->by_key, key);
	if (k != NULL) {
		events_buckets_unlink(b, k);
		events_buckets_append(b, k);
		return k;
	}
	while (b->len >= b->max && b->oldest)
		events_buckets_remove(b, b->oldest);
	k = xcalloc(1, sizeof(*k));
	k->key = xstrdup(key);
	k->tokens = lim->burst;
	k->refilled_ms = now_ms;
	strmap_put(&b->by_key, key, k);
	events_buckets_append(b, k);
	b->len++;
	return k;
}

void events_buckets_free(events_buckets_t *b)
{
	while (b->oldest)
		events_buckets_remove(b, b->oldest);
	strmap_clear(&b->by_key, NULL);
}

/* ---- the aggregation table ------------------------------------------------ */

void events_table_init(events_table_t *t, size_t max, void (*on_evict)(events_series_t *s, void *data),
		       void *data)
{
	memset(t, 0, sizeof(*t));
	t->max = max ? max : 1;
	t->on_evict = on_evict;
	t->evict_data = data;
}

events_series_t *events_table_get(const events_table_t *t, const char *key)
{
	return strmap_get(&t->by_key, key);
}

void events_table_remove(events_table_t *t, events_series_t *s)
{
	if (s->current)
		strmap_remove(&t->by_key, s->key);
	if (s->older)
		s->older->newer = s->newer;
	else
		t->oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		t->newest = s->older;
	t->len--;
	free(s->key);
	free(s->event_namespace);
	free(s->event_name);
	free(s);
}

events_series_t *events_table_add(events_table_t *t, const char *key, uint64_t now_ms)
{
	while (t->len >= t->max && t->oldest) {
		events_series_t *old = t->oldest;
		if (t->on_evict)
			t->on_evict(old, t->evict_data);
		events_table_remove(t, old);
	}
	events_series_t *s = xcalloc(1, sizeof(*s));
	s->key = xstrdup(key);
	s->first_ms = now_ms;
	s->count = 1;
	s->current = true;
	events_series_t *previous = strmap_put(&t->by_key, key, s);
	if (previous)
		previous->current = false; /* its window is over; it stays until its last update is sent */
	s->older = t->newest;
	if (t->newest)
		t->newest->newer = s;
	else
		t->oldest = s;
	t->newest = s;
	t->len++;
	return s;
}

void events_table_free(events_table_t *t)
{
	while (t->oldest)
		events_table_remove(t, t->oldest);
	strmap_clear(&t->by_key, NULL);
}

/* ---- keys and values ------------------------------------------------------ */

static const char *events_str(const char *s)
{
	return s ? s : "";
}

char *events_object_key(const events_object_ref_t *r)
{
	const char *kind = events_str(r->kind), *ns = events_str(r->namespace), *name = events_str(r->name),
		   *uid = events_str(r->uid);
	return xasprintf("%zu:%s%zu:%s%zu:%s%zu:%s", strlen(kind), kind, strlen(ns), ns, strlen(name), name,
			 strlen(uid), uid);
}

char *events_series_key(const events_object_ref_t *regarding, const char *type, const char *reason,
			const char *action, const char *note)
{
	char *object = events_object_key(regarding);
	type = events_str(type);
	reason = events_str(reason);
	action = events_str(action);
	note = events_str(note);
	char *key = xasprintf("%s%zu:%s%zu:%s%zu:%s%zu:%s", object, strlen(type), type, strlen(reason), reason,
			      strlen(action), action, strlen(note), note);
	free(object);
	return key;
}

/* Length of the well-formed UTF-8 sequence at s (Unicode table 3-7), 0 if there is none. */
static size_t events_utf8_sequence(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	unsigned char lo = 0x80, hi = 0xBF;
	size_t n;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F; /* nothing above U+10FFFF */
	} else {
		return 0;
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0; /* also stops at the NUL: never reads past the string */
	return n;
}

/*
 * The API server decodes invalid UTF-8 as U+FFFD (three bytes), which could
 * push a note cut to 1024 bytes over the limit: invalid bytes become '?'.
 */
size_t events_utf8_truncate(char *s, size_t max)
{
	size_t i = 0;
	while (s[i] != '\0') {
		size_t n = events_utf8_sequence((const unsigned char *)s + i);
		if (n == 0) {
			s[i] = '?';
			n = 1;
		}
		if (i + n > max)
			break;
		i += n;
	}
	s[i] = '\0';
	return i;
}

char *events_note_vformat(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return xstrdup("");
	char *note = xmalloc((size_t)n + 1);
	vsnprintf(note, (size_t)n + 1, fmt, ap);
	events_utf8_truncate(note, EVENTS_NOTE_MAX);
	return note;
}

void events_microtime(const struct timespec *wall, char out[EVENTS_MICROTIME_LEN])
{
	int64_t us = (int64_t)wall->tv_sec * 1000000 + wall->tv_nsec / 1000;
	if (rfc3339_format(us, 6, out, EVENTS_MICROTIME_LEN) != 0)
		snprintf(out, EVENTS_MICROTIME_LEN, "1970-01-01T00:00:00.000000Z");
}

static void events_now_microtime(char out[EVENTS_MICROTIME_LEN])
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	events_microtime(&now, out);
}

/* Cluster-scoped objects' Events go to "default", as upstream does. */
const char *events_event_namespace(const events_object_ref_t *regarding)
{
	return regarding->namespace && regarding->namespace[0] ? regarding->namespace : "default";
}

static int events_is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * Regarding names are valid object names already; this only keeps the Event's
 * name a DNS subdomain when one is too long to take the suffix or has odd bytes.
 */
char *events_event_name(const char *regarding_name, uint64_t suffix)
{
	size_t len = strlen(regarding_name);
	char *prefix = xmalloc(len + 1);
	size_t n = 0;
	for (size_t i = 0; i < len && n < EVENTS_NAME_PREFIX_MAX; i++) {
		char c = regarding_name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!events_is_alnum(c) && c != '-' && c != '.')
			c = '-';
		if (n == 0 && !events_is_alnum(c))
			continue;
		prefix[n++] = c;
	}
	while (n > 0 && !events_is_alnum(prefix[n - 1]))
		n--;
	prefix[n] = '\0';
	char *name = xasprintf("%s.%016" PRIx64, n ? prefix : "event", suffix);
	free(prefix);
	return name;
}

static char *events_print(cJSON *obj)
{
	char *printed = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	if (printed == NULL) {
		log_error("out of memory printing an event");
		abort();
	}
	char *copy = xstrdup(printed);
	cJSON_free(printed);
	return copy;
}

/* A Time (whole seconds) from a MicroTime: "2006-01-02T15:04:05.000000Z" -> "2006-01-02T15:04:05Z". */
static void events_seconds(const char *micro, char out[EVENTS_MICROTIME_LEN])
{
	snprintf(out, EVENTS_MICROTIME_LEN, "%.19sZ", micro);
}

/*
 * A core/v1 Event carrying both the events.k8s.io/v1 fields (eventTime,
 * reportingComponent, action) and the legacy ones (firstTimestamp,
 * lastTimestamp, count). `kubectl describe` sorts Events on lastTimestamp,
 * and the events.k8s.io/v1 API refuses a create that sets its
 * deprecatedLastTimestamp ("needs to be unset"), so the write goes through
 * core/v1 as client-go's tools/record does.
 */
char *events_event_body(const events_event_t *ev)
{
	const events_object_ref_t *r = ev->regarding;
	char *note = xstrdup(events_str(ev->note));
	events_utf8_truncate(note, EVENTS_NOTE_MAX);
	char seconds[EVENTS_MICROTIME_LEN];
	events_seconds(ev->event_time, seconds);

	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddStringToObject(o, "kind", "Event");
	cJSON *md = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(md, "name", ev->name);
	cJSON_AddStringToObject(md, "namespace", ev->namespace);
	cJSON_AddStringToObject(o, "eventTime", ev->event_time);
	cJSON_AddStringToObject(o, "firstTimestamp", seconds);
	cJSON_AddStringToObject(o, "lastTimestamp", seconds);
	cJSON_AddNumberToObject(o, "count", 1);
	cJSON_AddStringToObject(o, "reportingComponent", ev->reporting_controller);
	cJSON_AddStringToObject(o, "reportingInstance", ev->reporting_instance);
	cJSON *reg = cJSON_AddObjectToObject(o, "involvedObject");
	if (r->api_version && r->api_version[0])
		cJSON_AddStringToObject(reg, "apiVersion", r->api_version);
	cJSON_AddStringToObject(reg, "kind", events_str(r->kind));
	if (r->namespace && r->namespace[0])
		cJSON_AddStringToObject(reg, "namespace", r->namespace);
	cJSON_AddStringToObject(reg, "name", events_str(r->name));
	if (r->uid && r->uid[0])
		cJSON_AddStringToObject(reg, "uid", r->uid);
	cJSON_AddStringToObject(o, "type", ev->type);
	cJSON_AddStringToObject(o, "reason", ev->reason);
	cJSON_AddStringToObject(o, "action", ev->action);
	cJSON_AddStringToObject(o, "message", note);
	free(note);
	return events_print(o);
}

char *events_series_patch(uint64_t count, const char *last_observed)
{
	/* series.count and count are int32s in the API. */
	if (count > INT32_MAX)
		count = INT32_MAX;
	char seconds[EVENTS_MICROTIME_LEN];
	events_seconds(last_observed, seconds);
	return xasprintf("{\"count\":%" PRIu64 ",\"lastTimestamp\":\"%s\",\"series\":{\"count\":%" PRIu64
			 ",\"lastObservedTime\":\"%s\"}}",
			 count, seconds, count, last_observed);
}

/* ---- the recorder --------------------------------------------------------- */

struct events_recorder {
	uv_loop_t *loop;
	kube_http_t *http;
	char *controller;
	char *instance;
	events_limits_t limits;
	events_table_t table;
	events_buckets_t buckets;
	uv_timer_t flush_timer;
	uint64_t flush_ms;
	unsigned in_flight;
	bool closing;
	bool closed; /* the timer's close is under way */
	void (*done)(void *data);
	void *done_data;
	events_stats_t stats;
	uint64_t last_name_suffix; /* see events_name_suffix */
};

/* One write in flight. */
typedef struct {
	events_recorder_t *rec;
	events_series_t *series; /* NULL once the table let go of it */
	bool create;
	uint64_t count;          /* the count this write tells the API */
	char *event_namespace;   /* for logs, whatever happens to the series */
	char *event_name;
} events_call_t;

static void events_flush(events_recorder_t *rec);

static void events_on_evict(events_series_t *s, void *data)
{
	events_recorder_t *rec = data;
	rec->stats.evicted++;
	if (s->call)
		((events_call_t *)s->call)->series = NULL;
	if (s->count > s->sent_count && !s->stuck)
		log_debug("event series forgotten with updates unsent; the table is full", "namespace",
			  s->event_namespace, "event", s->event_name);
}

static void events_on_flush_timer(uv_timer_t *t)
{
	events_flush(t->data);
}

events_recorder_t *events_recorder_new(uv_loop_t *loop, kube_http_t *http, const char *reporting_controller,
				       const char *reporting_instance)
{
	events_recorder_t *rec = xcalloc(1, sizeof(*rec));
	rec->loop = loop;
	rec->http = http;
	rec->controller = xstrdup(reporting_controller);
	rec->instance = xstrdup(reporting_instance);
	events_utf8_truncate(rec->instance, EVENTS_FIELD_MAX);
	rec->limits = events_default_limits;
	events_table_init(&rec->table, rec->limits.max_series, events_on_evict, rec);
	events_buckets_init(&rec->buckets, rec->limits.max_objects);
	rec->flush_ms = EVENTS_DEFAULT_FLUSH_MS;
	uv_timer_init(loop, &rec->flush_timer);
	rec->flush_timer.data = rec;
	uv_timer_start(&rec->flush_timer, events_on_flush_timer, rec->flush_ms, rec->flush_ms);
	return rec;
}

void events_recorder_set_flush_interval(events_recorder_t *rec, uint64_t ms)
{
	rec->flush_ms = ms ? ms : EVENTS_DEFAULT_FLUSH_MS;
	if (!rec->closing)
		uv_timer_start(&rec->flush_timer, events_on_flush_timer, rec->flush_ms, rec->flush_ms);
}

uint64_t events_dropped(const events_recorder_t *rec)
{
	return rec->stats.dropped;
}

const events_stats_t *events_recorder_stats(const events_recorder_t *rec)
{
	return &rec->stats;
}

static bool events_series_unsent(const events_series_t *s)
{
	return s->created && !s->stuck && s->count > s->sent_count;
}

bool events_recorder_idle(const events_recorder_t *rec)
{
	if (rec->in_flight > 0)
		return false;
	for (const events_series_t *s = rec->table.oldest; s; s = s->newer)
		if (events_series_unsent(s))
			return false;
	return true;
}

static void events_on_closed(uv_handle_t *handle)
{
	events_recorder_t *rec = handle->data;
	void (*done)(void *) = rec->done;
	void *data = rec->done_data;
	events_table_free(&rec->table);
	events_buckets_free(&rec->buckets);
	free(rec->controller);
	free(rec->instance);
	free(rec);
	if (done)
		done(data);
}

static void events_maybe_finish(events_recorder_t *rec)
{
	if (!rec->closing || rec->closed || rec->in_flight > 0)
		return;
	rec->closed = true;
	uv_close((uv_handle_t *)&rec->flush_timer, events_on_closed);
}

/*
 * What a failure means for the series: a refused create forgets it (the next
 * occurrence tries again, if the bucket allows); a patch answered 404 means
 * the Event is gone (TTL, deleted), so the series is forgotten too and the
 * next occurrence creates a new Event; any other 4xx will not get better, so
 * the series keeps counting locally but sends nothing more; transport errors
 * and 5xx are retried at the next flush. Each is logged once per series.
 */
static void events_write_failed(events_recorder_t *rec, events_call_t *c, long status, const char *error)
{
	rec->stats.failed++;
	events_series_t *s = c->series;
	char code[24];
	snprintf(code, sizeof(code), "%ld", status);
	if (!c->create && status == 404) {
		log_info("event is gone; the next occurrence creates a new one", "namespace", c->event_namespace,
			 "event", c->event_name);
	} else if (s == NULL || !s->failing) {
		log_warn(c->create ? "cannot create event" : "cannot update event series", "namespace",
			 c->event_namespace, "event", c->event_name, "status", code, "error", error);
	}
	if (s == NULL)
		return;
	if (c->create || status == 404) {
		events_table_remove(&rec->table, s);
		c->series = NULL;
	} else if (status >= 400 && status < 500 && status != 429) {
		s->stuck = true;
	} else {
		s->failing = true;
	}
}

static void events_on_written(const kube_http_response_t *resp, void *data)
{
	events_call_t *c = data;
	events_recorder_t *rec = c->rec;
	rec->in_flight--;
	events_series_t *s = c->series;
	if (s)
		s->call = NULL;
	/* A create retried after a lost answer finds its own Event. */
	bool ok = resp->error == NULL ||
		  (c->create && resp->status == 409 && resp->reason && strcmp(resp->reason, "AlreadyExists") == 0);
	if (ok) {
		if (c->create)
			rec->stats.created++;
		else
			rec->stats.patched++;
		if (s) {
			s->created = true;
			s->failing = false;
			if (c->count > s->sent_count)
				s->sent_count = c->count;
		}
	} else {
		events_write_failed(rec, c, resp->status, resp->error);
	}
	free(c->event_namespace);
	free(c->event_name);
	free(c);
	if (rec->closing && !rec->closed)
		events_flush(rec); /* counts that arrived while the create was in flight */
	events_maybe_finish(rec);
}

/* Start a write; a write that cannot start is handled as a failed one. */
static void events_send(events_recorder_t *rec, events_series_t *s, bool create, const char *method,
			const char *path, const char *content_type, const char *body)
{
	events_call_t *c = xcalloc(1, sizeof(*c));
	c->rec = rec;
	c->series = s;
	c->create = create;
	c->count = s->count;
	c->event_namespace = xstrdup(s->event_namespace);
	c->event_name = xstrdup(s->event_name);
	kube_http_req_t req = {
		.method = method,
		.path = path,
		.content_type = content_type,
		.body = body,
		.body_len = strlen(body),
		.retry = 1,
	};
	if (kube_http_request(rec->http, &req, events_on_written, c, NULL) != 0) {
		events_write_failed(rec, c, 0, "cannot start the request");
		free(c->event_namespace);
		free(c->event_name);
		free(c);
		return;
	}
	s->call = c;
	rec->in_flight++;
}

static void events_patch_series(events_recorder_t *rec, events_series_t *s)
{
	char *path = xasprintf("/api/v1/namespaces/%s/events/%s", s->event_namespace, s->event_name);
	char *body = events_series_patch(s->count, s->last_observed);
	events_send(rec, s, false, "PATCH", path, "application/merge-patch+json", body);
	free(body);
	free(path);
}

/*
 * One patch per series whose count changed, then forget series whose window
 * is over and that have nothing left to send, and buckets that are full again
 * (a forgotten bucket comes back full, so they hold no information).
 */
static void events_flush(events_recorder_t *rec)
{
	uint64_t now = uv_now(rec->loop);
	events_series_t *next;
	for (events_series_t *s = rec->table.oldest; s; s = next) {
		next = s->newer;
		if (s->call)
			continue;
		if (events_series_unsent(s)) {
			/* While closing, a series that failed once gets no second try. */
			if (!rec->closing || !s->failing)
				events_patch_series(rec, s);
			continue;
		}
		if (!rec->closing && (!s->current || now - s->first_ms >= rec->limits.window_ms))
			events_table_remove(&rec->table, s);
	}
	if (rec->closing)
		return;
	events_bucket_t *bnext;
	for (events_bucket_t *b = rec->buckets.oldest; b; b = bnext) {
		bnext = b->newer;
		events_bucket_refill(b, &rec->limits, now);
		if (b->tokens >= rec->limits.burst && (!b->warned || now - b->warned_ms >= rec->limits.window_ms))
			events_buckets_remove(&rec->buckets, b);
	}
}

static bool events_valid_name(const char *s, size_t max)
{
	if (s == NULL || s[0] == '\0' || strlen(s) > max)
		return false;
	for (; *s; s++)
		if (!events_is_alnum(*s) && *s != '-' && *s != '.')
			return false;
	return true;
}

/*
 * The suffix upstream's recorders give an Event's name: the wall clock in
 * nanoseconds, in hex (16 digits, so names sort as numbers). Strictly
 * increasing per recorder, so two Events never share a name.
 *
 * It also orders what `kubectl describe` cannot. Its DescribeEvents
 * (k8s.io/kubectl/pkg/describe/describe.go) calls
 * sort.Sort(event.SortableEvents(items)), whose Less
 * (k8s.io/kubectl/pkg/util/event/sorted_event_list.go, read in kubectl
 * v0.37.2) compares lastTimestamp alone: whole seconds, no eventTime or
 * series fallback (that is `kubectl events`, pkg/cmd/events). sort.Sort is
 * pdqsort and not stable, so Events of the same second have no order of
 * their own there; they keep the order the API listed them in only where
 * the sort leaves it: 12 Events or fewer (insertion sort, which is stable),
 * or a list already in order (pdqsort returns a sorted run untouched). The
 * API lists an object's Events by name, which here is their creation time,
 * so the list is already in order and the Events of one second come in the
 * order they happened, unless an Event counted again (its lastTimestamp
 * moved later; its name did not) unsorts a list of more than 12: then two
 * Events of the same second may swap. Only the seconds are drashift's to
 * set; eventTime keeps the microseconds for `kubectl events` and -o json.
 */
static uint64_t events_name_suffix(events_recorder_t *rec)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t ns = (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
	if (ns <= rec->last_name_suffix)
		ns = rec->last_name_suffix + 1;
	rec->last_name_suffix = ns;
	return ns;
}

static void events_create(events_recorder_t *rec, const char *key, const events_object_ref_t *regarding,
			  const char *type, const char *reason, const char *action, const char *note,
			  const char *observed, uint64_t now)
{
	events_series_t *s = events_table_add(&rec->table, key, now);
	memcpy(s->last_observed, observed, EVENTS_MICROTIME_LEN);
	s->event_namespace = xstrdup(events_event_namespace(regarding));
	s->event_name = events_event_name(regarding->name, events_name_suffix(rec));
	events_event_t ev = {
		.namespace = s->event_namespace,
		.name = s->event_name,
		.event_time = observed,
		.reporting_controller = rec->controller,
		.reporting_instance = rec->instance,
		.regarding = regarding,
		.type = type,
		.reason = reason,
		.action = action,
		.note = note,
	};
	char *body = events_event_body(&ev);
	char *path = xasprintf("/api/v1/namespaces/%s/events", s->event_namespace);
	events_send(rec, s, true, "POST", path, "application/json", body);
	free(path);
	free(body);
}

int events_vemit(events_recorder_t *rec, const events_object_ref_t *regarding, const char *type,
		 const char *reason, const char *action, const char *note_fmt, va_list ap)
{
	if (rec->closing || regarding == NULL || regarding->kind == NULL || regarding->kind[0] == '\0' ||
	    regarding->name == NULL || regarding->name[0] == '\0' || type == NULL ||
	    (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0) || reason == NULL ||
	    reason[0] == '\0' || strlen(reason) > EVENTS_FIELD_MAX || action == NULL || action[0] == '\0' ||
	    strlen(action) > EVENTS_FIELD_MAX || note_fmt == NULL)
		return UV_EINVAL;
	/* The namespace goes into the path: it must be a plain name. */
	if (regarding->namespace && regarding->namespace[0] && !events_valid_name(regarding->namespace, 63))
		return UV_EINVAL;

	char *note = events_note_vformat(note_fmt, ap);
	uint64_t now = uv_now(rec->loop);
	char observed[EVENTS_MICROTIME_LEN];
	events_now_microtime(observed);
	char *key = events_series_key(regarding, type, reason, action, note);
	char *object = events_object_key(regarding);
	events_series_t *s = events_table_get(&rec->table, key);
	events_bucket_t *b = events_buckets_get(&rec->buckets, object, &rec->limits, now);
	rec->stats.emitted++;
	int rc = 0;
	switch (events_aggregate_decide(&rec->limits, s, b, now)) {
	case EVENTS_COUNT:
		s->count++;
		memcpy(s->last_observed, observed, EVENTS_MICROTIME_LEN);
		rec->stats.counted++;
		break;
	case EVENTS_DROP: {
		rec->stats.dropped++;
		uint64_t drops = events_bucket_note_drop(b, &rec->limits, now);
		if (drops > 0) {
			char n[24];
			snprintf(n, sizeof(n), "%" PRIu64, drops);
			if (regarding->namespace && regarding->namespace[0])
				log_warn("too many events about one object; dropping them for a while", "kind",
					 regarding->kind, "namespace", regarding->namespace, "name", regarding->name,
					 "reason", reason, "dropped", n);
			else
				log_warn("too many events about one object; dropping them for a while", "kind",
					 regarding->kind, "name", regarding->name, "reason", reason, "dropped", n);
		}
		rc = UV_EAGAIN;
		break;
	}
	case EVENTS_CREATE:
		events_create(rec, key, regarding, type, reason, action, note, observed, now);
		break;
	}
	free(object);
	free(key);
	free(note);
	return rc;
}

int events_emit(events_recorder_t *rec, const events_object_ref_t *regarding, const char *type,
		const char *reason, const char *action, const char *note_fmt, ...)
{
	va_list ap;
	va_start(ap, note_fmt);
	int rc = events_vemit(rec, regarding, type, reason, action, note_fmt, ap);
	va_end(ap);
	return rc;
}

void events_recorder_close(events_recorder_t *rec, void (*done)(void *data), void *data)
{
	if (rec->closing)
		return;
	rec->closing = true;
	rec->done = done;
	rec->done_data = data;
	uv_timer_stop(&rec->flush_timer);
	events_flush(rec);
	events_maybe_finish(rec);
}
