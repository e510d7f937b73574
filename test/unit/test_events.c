/*
 * The Event recorder's promises without an API server: identical events fold
 * into one series for a window, Event creations per object are limited by a
 * token bucket that refills over time, notes stay within the API's limit
 * without breaking a character, created Events carry every field the API
 * requires, and the tables cannot grow without bound.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

#define MINUTE_MS (60u * 1000u)
#define T0 1000000u /* an arbitrary monotonic start */

static const events_object_ref_t node_a = {
	.api_version = "v1", .kind = "Node", .name = "gpu-a", .uid = "0b7c1e52-a",
};
static const events_object_ref_t node_b = {
	.api_version = "v1", .kind = "Node", .name = "gpu-b", .uid = "0b7c1e52-b",
};

/* A table and a bucket for one object, as the recorder holds them. */
typedef struct {
	events_limits_t lim;
	events_table_t table;
	events_buckets_t buckets;
	unsigned evicted;
} aggregator_t;

static void count_eviction(events_series_t *s, void *data)
{
	(void)s;
	((aggregator_t *)data)->evicted++;
}

static void aggregator_init(aggregator_t *a)
{
	memset(a, 0, sizeof(*a));
	a->lim = events_default_limits;
	events_table_init(&a->table, a->lim.max_series, count_eviction, a);
	events_buckets_init(&a->buckets, a->lim.max_objects);
}

static void aggregator_free(aggregator_t *a)
{
	events_table_free(&a->table);
	events_buckets_free(&a->buckets);
}

/* What the recorder does with one occurrence: decide, then act on the table. */
static events_decision_t occur(aggregator_t *a, const events_object_ref_t *ref, const char *reason,
			       const char *note, uint64_t now)
{
	char *key = events_series_key(ref, "Warning", reason, "Migrate", note);
	char *object = events_object_key(ref);
	events_series_t *s = events_table_get(&a->table, key);
	events_bucket_t *b = events_buckets_get(&a->buckets, object, &a->lim, now);
	events_decision_t d = events_aggregate_decide(&a->lim, s, b, now);
	if (d == EVENTS_COUNT)
		s->count++;
	else if (d == EVENTS_CREATE)
		events_table_add(&a->table, key, now);
	free(object);
	free(key);
	return d;
}

static uint64_t series_count(aggregator_t *a, const events_object_ref_t *ref, const char *reason,
			     const char *note)
{
	char *key = events_series_key(ref, "Warning", reason, "Migrate", note);
	events_series_t *s = events_table_get(&a->table, key);
	free(key);
	return s ? s->count : 0;
}

/* ---- the decision table -------------------------------------------------- */

static void test_first_occurrence_creates_and_repeats_count(void **state)
{
	(void)state;
	aggregator_t a;
	aggregator_init(&a);
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "no progress", T0), EVENTS_CREATE);
	for (int i = 1; i < 1000; i++)
		assert_int_equal(occur(&a, &node_a, "PluginStuck", "no progress", T0 + (uint64_t)i), EVENTS_COUNT);
	assert_int_equal(series_count(&a, &node_a, "PluginStuck", "no progress"), 1000);
	assert_int_equal(a.table.len, 1);
	/* Counting costs no API call, so it takes no token: one creation was all. */
	events_bucket_t *b = a.buckets.oldest;
	assert_non_null(b);
	assert_int_equal(b->tokens, a.lim.burst - 1);
	aggregator_free(&a);
}

static void test_repeat_after_the_window_creates_a_new_event(void **state)
{
	(void)state;
	aggregator_t a;
	aggregator_init(&a);
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "n", T0), EVENTS_CREATE);
	/* The window is counted from the first occurrence, not the latest. */
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "n", T0 + 9 * MINUTE_MS), EVENTS_COUNT);
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "n", T0 + 10 * MINUTE_MS - 1), EVENTS_COUNT);
	events_series_t *first = a.table.oldest;
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "n", T0 + 10 * MINUTE_MS), EVENTS_CREATE);
	/* The old series stays until its last count is sent, but no longer takes repeats. */
	assert_int_equal(a.table.len, 2);
	assert_false(first->current);
	assert_int_equal(first->count, 3);
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "n", T0 + 11 * MINUTE_MS), EVENTS_COUNT);
	assert_int_equal(series_count(&a, &node_a, "PluginStuck", "n"), 2);
	assert_int_equal(first->count, 3);
	aggregator_free(&a);
}

static void test_different_note_reason_or_object_create_separately(void **state)
{
	(void)state;
	aggregator_t a;
	aggregator_init(&a);
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "a", T0), EVENTS_CREATE);
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "b", T0), EVENTS_CREATE);
	assert_int_equal(occur(&a, &node_a, "DriverStuck", "a", T0), EVENTS_CREATE);
	assert_int_equal(occur(&a, &node_b, "PluginStuck", "a", T0), EVENTS_CREATE);
	/* Fields that concatenate to the same bytes are still different events. */
	assert_int_equal(occur(&a, &node_a, "Plugin", "Stucka", T0), EVENTS_CREATE);
	assert_int_equal(occur(&a, &node_a, "PluginStuck", "a", T0 + 1), EVENTS_COUNT);
	assert_int_equal(a.table.len, 5);

	char *k1 = events_series_key(&node_a, "Normal", "R", "Migrate", "n");
	char *k2 = events_series_key(&node_a, "Warning", "R", "Migrate", "n");
	char *k3 = events_series_key(&node_a, "Normal", "R", "Rollback", "n");
	assert_string_not_equal(k1, k2);
	assert_string_not_equal(k1, k3);
	free(k1);
	free(k2);
	free(k3);
	/* Same name, different uid (deleted and recreated): a different object. */
	events_object_ref_t again = node_a;
	again.uid = "ffff";
	char *o1 = events_object_key(&node_a), *o2 = events_object_key(&again);
	assert_string_not_equal(o1, o2);
	free(o1);
	free(o2);
	aggregator_free(&a);
}

static void test_bucket_drops_after_burst_and_refills_over_time(void **state)
{
	(void)state;
	aggregator_t a;
	aggregator_init(&a);
	char reason[32];
	for (int i = 0; i < 25; i++) {
		snprintf(reason, sizeof(reason), "Reason%d", i);
		assert_int_equal(occur(&a, &node_a, reason, "n", T0), EVENTS_CREATE);
	}
	assert_int_equal(occur(&a, &node_a, "Reason25", "n", T0), EVENTS_DROP);
	/* Another object has its own bucket. */
	assert_int_equal(occur(&a, &node_b, "Reason25", "n", T0), EVENTS_CREATE);
	/* A repeat of an existing series still counts while its object's bucket is empty. */
	assert_int_equal(occur(&a, &node_a, "Reason3", "n", T0 + 1), EVENTS_COUNT);

	/* One token every 5 minutes, not earlier. */
	assert_int_equal(occur(&a, &node_a, "Reason25", "n", T0 + 5 * MINUTE_MS - 1), EVENTS_DROP);
	assert_int_equal(occur(&a, &node_a, "Reason25", "n", T0 + 5 * MINUTE_MS), EVENTS_CREATE);
	assert_int_equal(occur(&a, &node_a, "Reason26", "n", T0 + 5 * MINUTE_MS + 1), EVENTS_DROP);
	/* Polled in between or not, the next token comes exactly 5 minutes later. */
	assert_int_equal(occur(&a, &node_a, "Reason26", "n", T0 + 10 * MINUTE_MS - 1), EVENTS_DROP);
	assert_int_equal(occur(&a, &node_a, "Reason26", "n", T0 + 10 * MINUTE_MS), EVENTS_CREATE);

	/* Long quiet: full again, but never more than the burst. */
	char *object = events_object_key(&node_a);
	events_bucket_t *b = events_buckets_get(&a.buckets, object, &a.lim, T0 + 1000 * MINUTE_MS);
	events_bucket_refill(b, &a.lim, T0 + 1000 * MINUTE_MS);
	assert_int_equal(b->tokens, 25);
	free(object);
	aggregator_free(&a);
}

static void test_custom_limits(void **state)
{
	(void)state;
	events_limits_t lim = { .window_ms = 100, .burst = 2, .refill_ms = 50 };
	events_bucket_t b = { .tokens = 2, .refilled_ms = 0 };
	events_series_t s = { .first_ms = 0 };
	assert_int_equal(events_aggregate_decide(&lim, &s, &b, 99), EVENTS_COUNT);
	assert_int_equal(events_aggregate_decide(&lim, &s, &b, 100), EVENTS_CREATE);
	assert_int_equal(events_aggregate_decide(&lim, NULL, &b, 100), EVENTS_CREATE);
	assert_int_equal(events_aggregate_decide(&lim, NULL, &b, 100), EVENTS_DROP);
	assert_int_equal(events_aggregate_decide(&lim, NULL, &b, 149), EVENTS_DROP);
	assert_int_equal(events_aggregate_decide(&lim, NULL, &b, 150), EVENTS_CREATE);
}

static void test_drops_are_logged_once_per_object_per_window(void **state)
{
	(void)state;
	events_limits_t lim = events_default_limits;
	events_bucket_t b = { 0 };
	assert_int_equal(events_bucket_note_drop(&b, &lim, T0), 1);
	for (int i = 1; i < 100; i++)
		assert_int_equal(events_bucket_note_drop(&b, &lim, T0 + (uint64_t)i), 0);
	assert_int_equal(events_bucket_note_drop(&b, &lim, T0 + 10 * MINUTE_MS - 1), 0);
	/* The next window's warning says how many went since the last one. */
	assert_int_equal(events_bucket_note_drop(&b, &lim, T0 + 10 * MINUTE_MS), 101);
	assert_int_equal(events_bucket_note_drop(&b, &lim, T0 + 10 * MINUTE_MS + 1), 0);
}

/* ---- notes ---------------------------------------------------------------- */

static char *note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *n = events_note_vformat(fmt, ap);
	va_end(ap);
	return n;
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void test_note_is_formatted_and_cut_on_a_utf8_boundary(void **state)
{
	(void)state;
	char *n = note("node %s: %d pods still use %s", "gpu-1", 3, "nvidia.com/gpu");
	assert_string_equal(n, "node gpu-1: 3 pods still use nvidia.com/gpu");
	free(n);

	char *a1024 = repeat('a', 1024), *a1023 = repeat('a', 1023), *a1022 = repeat('a', 1022),
	     *a1021 = repeat('a', 1021), *a1020 = repeat('a', 1020);
	/* Exactly the limit is kept whole. */
	n = note("%s", a1024);
	assert_int_equal(strlen(n), 1024);
	free(n);
	/* A two-byte character straddling the limit goes entirely. */
	n = note("%s\xc3\xa9tail", a1023);
	assert_int_equal(strlen(n), 1023);
	assert_string_equal(n, a1023);
	free(n);
	/* A three-byte one, cut after one or two of its bytes. */
	n = note("%s\xe2\x82\xac", a1022);
	assert_int_equal(strlen(n), 1022);
	free(n);
	n = note("%s\xe2\x82\xac", a1023);
	assert_int_equal(strlen(n), 1023);
	free(n);
	/* A four-byte one goes when one byte short of room, and is kept when it just fits. */
	n = note("%s\xf0\x9f\x9a\x80", a1021);
	assert_int_equal(strlen(n), 1021);
	free(n);
	n = note("%s\xf0\x9f\x9a\x80", a1020);
	assert_int_equal(strlen(n), 1024);
	assert_memory_equal(n + 1020, "\xf0\x9f\x9a\x80", 4);
	free(n);

	/* Nothing but multibyte characters: 341 of three bytes fit in 1024. */
	char big[3 * 400 + 1] = "";
	for (int i = 0; i < 400; i++)
		memcpy(big + 3 * i, "\xe2\x82\xac", 4);
	n = note("%s", big);
	assert_int_equal(strlen(n), 3 * 341);
	free(n);
	free(a1024);
	free(a1023);
	free(a1022);
	free(a1021);
	free(a1020);
}

static void test_invalid_utf8_becomes_question_marks(void **state)
{
	(void)state;
	/* Lone continuation, overlong, surrogate, beyond U+10FFFF, truncated sequence. */
	char s[] = "a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xf4\x90\x80\x80" "e\xe2\x82";
	size_t len = events_utf8_truncate(s, 1024);
	assert_string_equal(s, "a?b??c???d????e??");
	assert_int_equal(len, strlen("a?b??c???d????e??"));

	char ok[] = "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x9a\x80";
	char copy[sizeof(ok)];
	memcpy(copy, ok, sizeof(ok));
	events_utf8_truncate(copy, 1024);
	assert_string_equal(copy, ok);
	/* Cutting never leaves half a character, whatever the limit. */
	for (size_t max = 0; max < sizeof(ok); max++) {
		memcpy(copy, ok, sizeof(ok));
		size_t n = events_utf8_truncate(copy, max);
		assert_true(n <= max);
		assert_memory_equal(copy, ok, n);
		char again[sizeof(ok)];
		memcpy(again, copy, n + 1);
		assert_int_equal(events_utf8_truncate(again, 1024), n); /* still valid: nothing replaced */
		assert_string_equal(again, copy);
	}
}

/* ---- what goes to the API ------------------------------------------------- */

static const char *json_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static void test_event_body_has_every_required_field(void **state)
{
	(void)state;
	events_object_ref_t plan = {
		.api_version = "drashift.io/v1alpha1", .kind = "MigrationPlan", .name = "fleet", .uid = "u-1",
	};
	char when[EVENTS_MICROTIME_LEN];
	struct timespec ts = { .tv_sec = 1136214245, .tv_nsec = 123456789 };
	events_microtime(&ts, when);
	assert_string_equal(when, "2006-01-02T15:04:05.123456Z");

	char *long_note = repeat('x', 3000);
	events_event_t ev = {
		.namespace = events_event_namespace(&plan),
		.name = "fleet.0123456789abcdef",
		.event_time = when,
		.reporting_controller = "drashift.io/controller",
		.reporting_instance = "drashift-7f9c-abcde",
		.regarding = &plan,
		.type = "Warning",
		.reason = "SLOBreached",
		.action = "Freeze",
		.note = long_note,
	};
	char *body = events_event_body(&ev);
	cJSON *o = cJSON_Parse(body);
	assert_non_null(o);
	assert_string_equal(json_string(o, "apiVersion"), "v1");
	assert_string_equal(json_string(o, "kind"), "Event");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	assert_string_equal(json_string(md, "name"), "fleet.0123456789abcdef");
	/* Cluster-scoped objects' Events live in "default". */
	assert_string_equal(json_string(md, "namespace"), "default");
	assert_string_equal(json_string(o, "eventTime"), "2006-01-02T15:04:05.123456Z");
	/* What `kubectl describe` sorts and counts on. */
	assert_string_equal(json_string(o, "firstTimestamp"), "2006-01-02T15:04:05Z");
	assert_string_equal(json_string(o, "lastTimestamp"), "2006-01-02T15:04:05Z");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(o, "count")->valueint, 1);
	assert_string_equal(json_string(o, "reportingComponent"), "drashift.io/controller");
	assert_string_equal(json_string(o, "reportingInstance"), "drashift-7f9c-abcde");
	assert_string_equal(json_string(o, "type"), "Warning");
	assert_string_equal(json_string(o, "reason"), "SLOBreached");
	assert_string_equal(json_string(o, "action"), "Freeze");
	assert_int_equal(strlen(json_string(o, "message")), EVENTS_NOTE_MAX);
	const cJSON *reg = cJSON_GetObjectItemCaseSensitive(o, "involvedObject");
	assert_string_equal(json_string(reg, "apiVersion"), "drashift.io/v1alpha1");
	assert_string_equal(json_string(reg, "kind"), "MigrationPlan");
	assert_string_equal(json_string(reg, "name"), "fleet");
	assert_string_equal(json_string(reg, "uid"), "u-1");
	/* Cluster-scoped: no namespace in the reference. */
	assert_null(cJSON_GetObjectItemCaseSensitive(reg, "namespace"));
	/* A new Event has no series yet (the API requires count >= 2 in one). */
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "series"));
	cJSON_Delete(o);
	free(body);

	/* A namespaced object's Event lives in its namespace, with quotes and newlines escaped. */
	events_object_ref_t pod = { .api_version = "v1", .kind = "Pod", .namespace = "ml", .name = "train-0" };
	ev.namespace = events_event_namespace(&pod);
	ev.regarding = &pod;
	ev.note = "claim \"gpu\"\nreleased";
	body = events_event_body(&ev);
	o = cJSON_Parse(body);
	assert_non_null(o);
	md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	assert_string_equal(json_string(md, "namespace"), "ml");
	reg = cJSON_GetObjectItemCaseSensitive(o, "involvedObject");
	assert_string_equal(json_string(reg, "namespace"), "ml");
	assert_null(cJSON_GetObjectItemCaseSensitive(reg, "uid"));
	assert_string_equal(json_string(o, "message"), "claim \"gpu\"\nreleased");
	cJSON_Delete(o);
	free(body);
	free(long_note);
}

static void test_series_patch_sets_count_and_last_observed(void **state)
{
	(void)state;
	char *p = events_series_patch(1000, "2006-01-02T15:04:05.250000Z");
	cJSON *o = cJSON_Parse(p);
	assert_non_null(o);
	const cJSON *series = cJSON_GetObjectItemCaseSensitive(o, "series");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(series, "count")->valuedouble, 1000);
	assert_string_equal(json_string(series, "lastObservedTime"), "2006-01-02T15:04:05.250000Z");
	/* The legacy fields `kubectl describe` sorts and counts on move with the series. */
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(o, "count")->valuedouble, 1000);
	assert_string_equal(json_string(o, "lastTimestamp"), "2006-01-02T15:04:05Z");
	assert_int_equal(cJSON_GetArraySize(o), 3); /* series, count and lastTimestamp only */
	cJSON_Delete(o);
	free(p);
	/* The API's count is an int32: saturate, never wrap. */
	p = events_series_patch(UINT64_C(5000000000), "2006-01-02T15:04:05.000000Z");
	o = cJSON_Parse(p);
	series = cJSON_GetObjectItemCaseSensitive(o, "series");
	assert_true(cJSON_GetObjectItemCaseSensitive(series, "count")->valuedouble == 2147483647.0);
	assert_true(cJSON_GetObjectItemCaseSensitive(o, "count")->valuedouble == 2147483647.0);
	cJSON_Delete(o);
	free(p);
}

static bool is_dns_subdomain(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && c != '-' && c != '.')
			return false;
		if (!alnum && (i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.'))
			return false;
	}
	return true;
}

static void test_event_name_is_regarding_name_and_16_hex(void **state)
{
	(void)state;
	char *name = events_event_name("gpu-node-1", UINT64_C(0x00ab));
	assert_string_equal(name, "gpu-node-1.00000000000000ab");
	free(name);
	/* A name too long to take the suffix is cut, never ending in '-' or '.'. */
	char *long_name = repeat('a', 253);
	long_name[235] = '-';
	name = events_event_name(long_name, UINT64_MAX);
	assert_true(is_dns_subdomain(name));
	assert_int_equal(strlen(name), 235 + 17);
	assert_string_equal(name + 235, ".ffffffffffffffff");
	free(name);
	free(long_name);
}

/* ---- bounds --------------------------------------------------------------- */

static void test_table_is_bounded_and_evicts_the_oldest(void **state)
{
	(void)state;
	aggregator_t a;
	aggregator_init(&a);
	a.lim.burst = 100000; /* this test is about the table, not the bucket */
	char reason[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(reason, sizeof(reason), "Reason%d", i);
		assert_int_equal(occur(&a, &node_a, reason, "n", T0 + (uint64_t)i), EVENTS_CREATE);
		assert_true(a.table.len <= 4096);
	}
	assert_int_equal(a.table.len, 4096);
	assert_int_equal(strmap_size(&a.table.by_key), 4096);
	assert_int_equal(a.evicted, 5000 - 4096);
	/* The oldest went; the newest are still counted. */
	assert_int_equal(series_count(&a, &node_a, "Reason0", "n"), 0);
	assert_int_equal(series_count(&a, &node_a, "Reason903", "n"), 0);
	assert_int_equal(series_count(&a, &node_a, "Reason904", "n"), 1);
	assert_int_equal(occur(&a, &node_a, "Reason4999", "n", T0 + 5000), EVENTS_COUNT);
	assert_int_equal(series_count(&a, &node_a, "Reason4999", "n"), 2);
	/* The map and the creation-order list agree on what is left. */
	assert_int_equal(a.table.oldest->first_ms, T0 + 904);
	assert_int_equal(a.table.newest->first_ms, T0 + 4999);
	aggregator_free(&a);
}

static void test_buckets_are_bounded_least_recently_used_first(void **state)
{
	(void)state;
	events_limits_t lim = events_default_limits;
	events_buckets_t b;
	events_buckets_init(&b, 3);
	events_bucket_t *one = events_buckets_get(&b, "one", &lim, 0);
	one->tokens = 0; /* a flooding object */
	events_buckets_get(&b, "two", &lim, 0);
	events_buckets_get(&b, "three", &lim, 0);
	events_buckets_get(&b, "one", &lim, 1); /* used again: now the newest */
	events_buckets_get(&b, "four", &lim, 2);
	assert_int_equal(b.len, 3);
	assert_null(strmap_get(&b.by_key, "two"));
	/* The flooding object kept its empty bucket. */
	assert_int_equal(events_buckets_get(&b, "one", &lim, 3)->tokens, 0);
	events_buckets_free(&b);
}

/* ---- the recorder's contract, without I/O --------------------------------- */

static void on_closed(void *data)
{
	(*(int *)data)++;
}

static void test_recorder_refuses_bad_events_and_closes_cleanly(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	/* No client: every call below must be refused before any I/O. */
	events_recorder_t *rec = events_recorder_new(&loop, NULL, "drashift.io/controller", "pod-0");
	events_recorder_set_flush_interval(rec, 5);
	char *long_reason = repeat('R', 129);
	events_object_ref_t no_name = { .kind = "Node" };
	events_object_ref_t bad_ns = { .kind = "Pod", .namespace = "a/b", .name = "x" };
	assert_int_equal(events_emit(rec, &node_a, "Info", "Reason", "Migrate", "n"), UV_EINVAL);
	assert_int_equal(events_emit(rec, &node_a, "Normal", "", "Migrate", "n"), UV_EINVAL);
	assert_int_equal(events_emit(rec, &node_a, "Normal", long_reason, "Migrate", "n"), UV_EINVAL);
	assert_int_equal(events_emit(rec, &node_a, "Normal", "Reason", NULL, "n"), UV_EINVAL);
	assert_int_equal(events_emit(rec, &no_name, "Normal", "Reason", "Migrate", "n"), UV_EINVAL);
	assert_int_equal(events_emit(rec, &bad_ns, "Normal", "Reason", "Migrate", "n"), UV_EINVAL);
	assert_int_equal(events_emit(rec, NULL, "Normal", "Reason", "Migrate", "n"), UV_EINVAL);
	uv_run(&loop, UV_RUN_NOWAIT); /* the flush timer may fire with nothing to do */
	assert_true(events_recorder_idle(rec));
	assert_int_equal(events_recorder_stats(rec)->emitted, 0);
	assert_int_equal(events_dropped(rec), 0);
	free(long_reason);

	int closed = 0;
	events_recorder_close(rec, on_closed, &closed);
	assert_int_equal(closed, 0); /* from the loop, not from inside close */
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(closed, 1);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_occurrence_creates_and_repeats_count),
		cmocka_unit_test(test_repeat_after_the_window_creates_a_new_event),
		cmocka_unit_test(test_different_note_reason_or_object_create_separately),
		cmocka_unit_test(test_bucket_drops_after_burst_and_refills_over_time),
		cmocka_unit_test(test_custom_limits),
		cmocka_unit_test(test_drops_are_logged_once_per_object_per_window),
		cmocka_unit_test(test_note_is_formatted_and_cut_on_a_utf8_boundary),
		cmocka_unit_test(test_invalid_utf8_becomes_question_marks),
		cmocka_unit_test(test_event_body_has_every_required_field),
		cmocka_unit_test(test_series_patch_sets_count_and_last_observed),
		cmocka_unit_test(test_event_name_is_regarding_name_and_16_hex),
		cmocka_unit_test(test_table_is_bounded_and_evicts_the_oldest),
		cmocka_unit_test(test_buckets_are_bounded_least_recently_used_first),
		cmocka_unit_test(test_recorder_refuses_bad_events_and_closes_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
