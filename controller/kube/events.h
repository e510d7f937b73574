/*
 * Kubernetes Events about the objects drashift acts on, aggregated on the
 * client so that a flapping condition cannot flood the API.
 *
 * Each Event carries the events.k8s.io/v1 fields (eventTime, series,
 * reportingController, action) and the core/v1 ones `kubectl describe` reads
 * (firstTimestamp, lastTimestamp, count): describe sorts on lastTimestamp,
 * which an events.k8s.io/v1 write may not set, so Events are written through
 * the core/v1 API (/api/v1/.../events), as client-go's tools/record does.
 *
 * Identical events (same regarding object, type, reason, action and note)
 * within a window (10 minutes) of the first one become a single Event whose
 * `series {count, lastObservedTime}` (and count, lastTimestamp) grow: the first occurrence POSTs the
 * Event, repeats only bump a local counter (no API call), and a flush timer
 * (every 10 s) sends one JSON merge patch of `series` for each Event whose
 * count changed. The first occurrence after the window starts a new Event.
 *
 * API writes that create Events are limited per regarding object by a token
 * bucket (burst 25, one token back every 5 minutes), like client-go's spam
 * filter: an event that would need a CREATE beyond it is dropped, counted,
 * and logged once per object per window. Repeats folded into a series never
 * draw tokens: counting costs nothing, and series patches are bounded by the
 * flush interval (one per Event per flush at most).
 *
 * Memory is bounded: at most 4096 series and 4096 per-object buckets are kept;
 * beyond that the oldest series (and the least recently used bucket) are
 * forgotten.
 *
 * Failures never reach the caller: a failed write is logged once
 * (level=warn, with the API's message) and counted. A series patch answered
 * 404 (the Event expired or was deleted) forgets the series, so the next
 * occurrence creates a new Event.
 *
 * The decisions (create, count or drop; bucket refills; table bounds) are
 * pure functions of their inputs and a caller-supplied monotonic clock,
 * exposed below for the unit tests; the recorder only adds the I/O.
 */
#ifndef DRASHIFT_EVENTS_H
#define DRASHIFT_EVENTS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "kube_http.h"
#include "rfc3339.h"
#include "strmap.h"

/* The API's limit on an Event's note, in bytes. */
#define EVENTS_NOTE_MAX 1024
/* The API's limits on reason, action and reportingInstance. */
#define EVENTS_FIELD_MAX 128
/* MicroTime "2006-01-02T15:04:05.000000Z" and its NUL. */
#define EVENTS_MICROTIME_LEN RFC3339_LEN

/* The object an Event is about. */
typedef struct {
	const char *api_version; /* "v1", "drashift.io/v1alpha1" */
	const char *kind;        /* "Node", "MigrationPlan" */
	const char *namespace;   /* NULL (or "") for cluster-scoped objects */
	const char *name;
	const char *uid;         /* may be NULL, but aggregation is per uid when given */
} events_object_ref_t;

typedef struct {
	uint64_t window_ms;    /* repeats this long after the first occurrence join its series; 600000 */
	unsigned burst;        /* Event creations per object at once; 25 */
	uint64_t refill_ms;    /* one creation token comes back this often; 300000 */
	size_t max_series;     /* series remembered; 4096 */
	size_t max_objects;    /* per-object buckets remembered; 4096 */
} events_limits_t;

extern const events_limits_t events_default_limits;

typedef struct {
	uint64_t emitted; /* events_emit() calls accepted */
	uint64_t created; /* Events the API created */
	uint64_t counted; /* repeats folded into a series */
	uint64_t patched; /* series updates the API accepted */
	uint64_t dropped; /* refused by the per-object token bucket */
	uint64_t failed;  /* POSTs and PATCHes that failed */
	uint64_t evicted; /* series forgotten because the table was full */
} events_stats_t;

typedef struct events_recorder events_recorder_t;

/*
 * A recorder writing through http on loop. reporting_controller is the
 * Event's reportingController ("drashift.io/controller"), reporting_instance
 * its reportingInstance (the pod name; cut to 128 bytes). Both are copied.
 * Never returns NULL.
 */
events_recorder_t *events_recorder_new(uv_loop_t *loop, kube_http_t *http, const char *reporting_controller,
				       const char *reporting_instance);

/* Send series updates every ms milliseconds instead of every 10 s (tests). */
void events_recorder_set_flush_interval(events_recorder_t *rec, uint64_t ms);

/*
 * Record an event about regarding. type is "Normal" or "Warning"; reason is
 * CamelCase and action says what drashift did ("Migrate"), each at most 128
 * bytes; the note is printf-formatted and cut to 1024 bytes on a UTF-8
 * boundary (invalid bytes become '?'). Never blocks: the write happens later
 * on the loop.
 *
 * Returns 0 when the event will be recorded (a new Event or a series count),
 * UV_EAGAIN when the per-object token bucket dropped it, UV_EINVAL for a
 * missing or over-long argument or a recorder that is closing.
 */
int events_emit(events_recorder_t *rec, const events_object_ref_t *regarding, const char *type,
		const char *reason, const char *action, const char *note_fmt, ...)
	__attribute__((format(printf, 6, 7)));
int events_vemit(events_recorder_t *rec, const events_object_ref_t *regarding, const char *type,
		 const char *reason, const char *action, const char *note_fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

/* Events dropped by the token bucket so far. */
uint64_t events_dropped(const events_recorder_t *rec);
const events_stats_t *events_recorder_stats(const events_recorder_t *rec);
/* No write in flight and no series update waiting for the flush timer. */
bool events_recorder_idle(const events_recorder_t *rec);

/*
 * Send the series updates still pending, wait for every write in flight, then
 * free the recorder (from a close callback) and call done (may be NULL). The
 * loop must keep running until then, and the HTTP client must stay open:
 * close it from done. Events emitted meanwhile are refused.
 */
void events_recorder_close(events_recorder_t *rec, void (*done)(void *data), void *data);

/* ---- exposed for the unit tests: the decisions without I/O ---------------- */

typedef enum {
	EVENTS_CREATE, /* POST a new Event (a token was taken) */
	EVENTS_COUNT,  /* add one to the current series: no API call now */
	EVENTS_DROP,   /* the object's bucket is empty */
} events_decision_t;

/* A creation token bucket of one regarding object. */
typedef struct events_bucket {
	char *key;
	unsigned tokens;
	uint64_t refilled_ms; /* tokens are counted up to this time */
	uint64_t warned_ms;   /* last drop logged */
	bool warned;          /* warned_ms is set */
	uint64_t drops;       /* dropped since the last warning */
	struct events_bucket *older, *newer; /* least recently used first */
} events_bucket_t;

/* One aggregated Event: what the API holds and what it has not been told yet. */
typedef struct events_series {
	char *key;              /* events_series_key() */
	uint64_t first_ms;      /* first occurrence: the window starts here */
	uint64_t count;         /* occurrences so far */
	uint64_t sent_count;    /* count the API holds (1 once created) */
	char last_observed[EVENTS_MICROTIME_LEN]; /* wall time of the latest occurrence */
	char *event_namespace;
	char *event_name;
	bool created;           /* the API acknowledged the Event */
	bool current;           /* the table's series for key; false once a newer one took the key */
	bool stuck;             /* a patch was refused (not 404): count locally, send nothing more */
	bool failing;           /* a failure was logged and nothing has succeeded since */
	void *call;             /* the recorder's write in flight, or NULL */
	struct events_series *older, *newer; /* in order of creation */
} events_series_t;

/*
 * Create, count or drop an occurrence at now_ms. series is the current
 * series for the occurrence's key (NULL if none); bucket the regarding
 * object's. Changes nothing but *bucket (refill, take a token).
 */
events_decision_t events_aggregate_decide(const events_limits_t *lim, const events_series_t *series,
					  events_bucket_t *bucket, uint64_t now_ms);
/* Refill bucket for the time passed up to now_ms. */
void events_bucket_refill(events_bucket_t *bucket, const events_limits_t *lim, uint64_t now_ms);
/*
 * Count a drop. Returns 0, or, for the object's first drop in a window (the
 * one to log), the number of drops since the previous logged one, this included.
 */
uint64_t events_bucket_note_drop(events_bucket_t *bucket, const events_limits_t *lim, uint64_t now_ms);

/* The aggregation table: current series by key, every series in creation order, bounded. */
typedef struct {
	strmap_t by_key;
	events_series_t *oldest, *newest;
	size_t len, max;
	/* Called with a series the table is about to free to stay under max. */
	void (*on_evict)(events_series_t *s, void *data);
	void *evict_data;
} events_table_t;

void events_table_init(events_table_t *t, size_t max, void (*on_evict)(events_series_t *s, void *data),
		       void *data);
events_series_t *events_table_get(const events_table_t *t, const char *key);
/*
 * A new current series for key, first occurrence at now_ms with count 1. A
 * previous series of the key stays in the table (not current) until removed.
 * When the table is full the oldest series is evicted first.
 */
events_series_t *events_table_add(events_table_t *t, const char *key, uint64_t now_ms);
void events_table_remove(events_table_t *t, events_series_t *s);
void events_table_free(events_table_t *t);

/* Per-object buckets, least recently used forgotten beyond max. */
typedef struct {
	strmap_t by_key;
	events_bucket_t *oldest, *newest;
	size_t len, max;
} events_buckets_t;

void events_buckets_init(events_buckets_t *b, size_t max);
/* The bucket for key, made full at now_ms if new; marks it most recently used. */
events_bucket_t *events_buckets_get(events_buckets_t *b, const char *key, const events_limits_t *lim,
				    uint64_t now_ms);
void events_buckets_remove(events_buckets_t *b, events_bucket_t *bucket);
void events_buckets_free(events_buckets_t *b);

/* Keys: every field length-prefixed, so no choice of bytes makes two keys collide. */
char *events_object_key(const events_object_ref_t *regarding);
char *events_series_key(const events_object_ref_t *regarding, const char *type, const char *reason,
			const char *action, const char *note);

/*
 * Make s valid UTF-8 of at most max bytes, in place: bytes that do not start
 * a well-formed sequence become '?', and the cut never splits a character.
 * Returns the new length.
 */
size_t events_utf8_truncate(char *s, size_t max);
/* The note for a format: formatted, made valid UTF-8 and cut to EVENTS_NOTE_MAX bytes. Free it. */
char *events_note_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* "2006-01-02T15:04:05.000000Z" for a wall-clock time. */
void events_microtime(const struct timespec *wall, char out[EVENTS_MICROTIME_LEN]);
/* The Event's namespace: regarding's, or "default" for cluster-scoped objects (as upstream). */
const char *events_event_namespace(const events_object_ref_t *regarding);
/* The Event's name: the regarding name (made a valid DNS subdomain prefix) '.' suffix as 16 hex digits. */
char *events_event_name(const char *regarding_name, uint64_t suffix);

/* Everything a new Event carries. */
typedef struct {
	const char *namespace; /* the Event's own */
	const char *name;
	const char *event_time; /* MicroTime */
	const char *reporting_controller;
	const char *reporting_instance;
	const events_object_ref_t *regarding;
	const char *type, *reason, *action, *note;
} events_event_t;

/* The JSON body that creates ev (a core/v1 Event with the events.k8s.io/v1 fields). Free it. */
char *events_event_body(const events_event_t *ev);
/* The JSON merge patch that brings an Event's series, count and lastTimestamp to count. Free it. */
char *events_series_patch(uint64_t count, const char *last_observed);

#endif
