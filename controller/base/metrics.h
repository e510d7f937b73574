/*
 * A small Prometheus registry: counters, gauges and histograms, rendered in
 * the text exposition format 0.0.4 for /metrics.
 *
 * Single-threaded like the rest of the controller: no locks, no atomics.
 *
 * Every metric is a family with a name, help text and a fixed list of label
 * names. A child (one time series, or one histogram) exists per tuple of
 * label values and is created on first use, so the update calls take the
 * label values after the value, ended by NULL:
 *
 *     metrics_counter_t *reqs = metrics_counter_new(r, "drashift_kube_requests_total",
 *             "Requests sent to the API server.", "verb", "code", NULL);
 *     metrics_counter_inc(reqs, "GET", "200", NULL);
 *
 * A family without labels has one child, created at registration, so it is
 * rendered (as 0) before its first update; update it with no label values:
 * metrics_counter_inc(c, NULL). A labelled family is rendered only once it
 * has a child. Updates find the child through a small hash table per family:
 * one hash of the label values and usually one comparison.
 *
 * Programming errors abort with a message naming the metric: an invalid or
 * duplicate name, a wrong number of label values, a negative counter
 * increment, unsorted histogram buckets. They show up the first time the code
 * path runs, in tests, never as half-recorded data.
 *
 * Families are owned by the registry and freed with it; the pointers that
 * the *_new() functions return stay valid until metrics_registry_free().
 */
#ifndef DRASHIFT_METRICS_H
#define DRASHIFT_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Content-Type of metrics_render()'s output. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Most label names a family can have. */
#define METRICS_MAX_LABELS 16

/*
 * metrics_render() gives up (returns NULL) rather than build an exposition
 * larger than this: a label with runaway cardinality must not take the
 * process's memory with it.
 */
#define METRICS_RENDER_MAX ((size_t)64 << 20)

typedef struct metrics_registry metrics_registry_t;
typedef struct metrics_counter metrics_counter_t;
typedef struct metrics_gauge metrics_gauge_t;
typedef struct metrics_histogram metrics_histogram_t;

/* A callback gauge's value, computed when the registry is rendered. */
typedef double (*metrics_gauge_fn)(void *data);

/*
 * Latency buckets in seconds, 5 ms to 60 s:
 * 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60.
 */
#define METRICS_DEFAULT_BUCKETS_COUNT 13
extern const double metrics_default_buckets[METRICS_DEFAULT_BUCKETS_COUNT];

metrics_registry_t *metrics_registry_new(void);
/* Frees the registry with every family and child in it. NULL is ignored. */
void metrics_registry_free(metrics_registry_t *r);

/*
 * Registration. name must match [a-zA-Z_:][a-zA-Z0-9_:]* and be unique in the
 * registry, including the _bucket, _sum and _count series of histograms.
 * help must not be empty. Label names follow, ended by NULL; each must match
 * [a-zA-Z_][a-zA-Z0-9_]* (Prometheus label names have no colon), must not
 * start with "__" and must not repeat. Histograms cannot use the label "le".
 * Strings are copied.
 */
metrics_counter_t *metrics_counter_new(metrics_registry_t *r, const char *name, const char *help, ...)
	__attribute__((sentinel));
metrics_gauge_t *metrics_gauge_new(metrics_registry_t *r, const char *name, const char *help, ...)
	__attribute__((sentinel));
/*
 * buckets are the finite upper bounds, strictly increasing; the +Inf bucket
 * is always added (a trailing +Inf in buckets is accepted and ignored).
 * buckets NULL means metrics_default_buckets.
 */
metrics_histogram_t *metrics_histogram_new(metrics_registry_t *r, const char *name, const char *help,
	const double *buckets, size_t nbuckets, ...) __attribute__((sentinel));

/*
 * Updates. Label values follow the value, one per label name in the order of
 * registration, ended by NULL. Any string is a valid label value.
 */
/* value must be >= 0 (counters only go up); NaN or negative aborts. */
void metrics_counter_add(metrics_counter_t *c, double value, ...) __attribute__((sentinel));
void metrics_counter_inc(metrics_counter_t *c, ...) __attribute__((sentinel));
void metrics_gauge_set(metrics_gauge_t *g, double value, ...) __attribute__((sentinel));
void metrics_gauge_add(metrics_gauge_t *g, double value, ...) __attribute__((sentinel));
/*
 * Make the child's value come from fn(data) at render time (cache sizes,
 * queue depth) instead of from set/add, which it then ignores. fn NULL turns
 * the child back into a plain gauge holding its last set value. fn must not
 * change the registry. Remove the child (metrics_gauge_remove) before data
 * goes away.
 */
void metrics_gauge_set_fn(metrics_gauge_t *g, metrics_gauge_fn fn, void *data, ...)
	__attribute__((sentinel));
/* Counts value in the first bucket whose bound is >= value (NaN: only +Inf). */
void metrics_histogram_observe(metrics_histogram_t *h, double value, ...) __attribute__((sentinel));

/*
 * Drop the child for these label values (a node that went away), so it is no
 * longer rendered. Returns 0, or -1 when there was no such child. The child
 * of a family without labels cannot be removed (aborts).
 */
int metrics_counter_remove(metrics_counter_t *c, ...) __attribute__((sentinel));
int metrics_gauge_remove(metrics_gauge_t *g, ...) __attribute__((sentinel));

/*
 * Reads, for tests of the code that updates metrics. A child that does not
 * exist reads as 0 and is not created. metrics_gauge_value calls fn for a
 * callback gauge.
 */
double metrics_counter_value(const metrics_counter_t *c, ...) __attribute__((sentinel));
double metrics_gauge_value(const metrics_gauge_t *g, ...) __attribute__((sentinel));
uint64_t metrics_histogram_count(const metrics_histogram_t *h, ...) __attribute__((sentinel));
double metrics_histogram_sum(const metrics_histogram_t *h, ...) __attribute__((sentinel));

/*
 * The text exposition format 0.0.4: families sorted by name, each with
 * # HELP and # TYPE lines, children sorted by label values (compared in label
 * order, bytewise), label values escaped (\\, \", \n), numbers printed so
 * that they parse back to the same double (integers without exponent up to
 * 1e21, +Inf, -Inf, NaN). Returns a NUL-terminated buffer from xmalloc that
 * the caller frees, its length (without the NUL) in *len; NULL, with a log
 * line, if it would exceed METRICS_RENDER_MAX.
 */
char *metrics_render(metrics_registry_t *r, size_t *len);

/*
 * Writes value as metrics_render() does into out (at least 32 bytes) and
 * returns the length. Exposed for tests.
 */
size_t metrics_format_value(double value, char *out, size_t outlen);

#endif
