/*
 * What the plan's history records and drops, as tables: transitions and
 * their times, freezes and acknowledgements, when signals are sampled, the
 * byte caps (ring and thinning), idle and fragmented devices, how a pod's
 * changes count in the DRA-against-legacy comparison, and reading the
 * history back: what a person or a bug may have left in the ConfigMap is
 * dropped and counted, never fatal, never read past the caps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "xalloc.h"

#define NOW 1764441600000LL

static void test_change(void **state)
{
	(void)state;
	static const struct {
		const char *was;
		int64_t was_since;
		const char *is;
		int64_t since;
		bool record;
		int64_t at, held;
	} rows[] = {
		{ "draining", NOW - 9000, "draining", NOW - 9000, false, 0, -1 },	 /* unchanged */
		{ NULL, 0, "legacy", 0, true, NOW, -1 },				 /* first sight: recorded now */
		{ "draining", NOW - 9000, "plugin-off", NOW - 2000, true, NOW - 2000, 7000 }, /* the node's own time */
		{ "draining", NOW - 9000, "plugin-off", NOW + 5000, true, NOW, 9000 },	 /* a future time is not believed */
		{ "draining", NOW - 9000, "plugin-off", NOW - 20000, true, NOW, 9000 }, /* nor one before the last record */
		{ "Legacy", NOW - 1000, "Canary", 0, true, NOW, 1000 },			 /* a pool has no time of its own */
		{ "Canary", 0, "Expanding", 0, true, NOW, -1 },				 /* the previous start unknown */
		{ "dra", NOW - 1000, NULL, 0, false, 0, -1 },				 /* nothing now: nothing to record */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		history_subject_t s = { rows[i].was, rows[i].was_since, rows[i].is, rows[i].since };
		history_change_t c;
		history_change(&s, NOW, &c);
		if (c.record != rows[i].record || (c.record && (c.at_ms != rows[i].at || c.held_ms != rows[i].held)))
			fail_msg("row %zu: record %d at %lld held %lld", i, c.record, (long long)(c.at_ms - NOW),
				 (long long)c.held_ms);
	}
}

static void test_breach(void **state)
{
	(void)state;
	static const struct {
		const char *id;
		bool acked;
		const char *frozen, *acked_id;
		bool want_freeze, want_ack;
	} rows[] = {
		{ NULL, false, NULL, NULL, false, false },	   /* no breach */
		{ "a-x-1", false, NULL, NULL, true, false },	   /* a new breach: the freeze */
		{ "a-x-1", false, "a-x-1", NULL, false, false },   /* recorded already */
		{ "a-x-1", true, "a-x-1", NULL, false, true },	   /* a person acknowledged it */
		{ "a-x-1", true, "a-x-1", "a-x-1", false, false }, /* recorded already */
		{ "a-x-1", true, NULL, NULL, true, true },	   /* both happened while nobody recorded */
		{ "b-y-2", false, "a-x-1", "a-x-1", true, false }, /* the next breach */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		history_breach_input_t in = { rows[i].id, rows[i].acked, rows[i].frozen, rows[i].acked_id };
		history_breach_output_t out;
		history_breach(&in, &out);
		if (out.record_freeze != rows[i].want_freeze || out.record_acknowledge != rows[i].want_ack)
			fail_msg("row %zu: freeze %d acknowledge %d", i, out.record_freeze, out.record_acknowledge);
	}
}

static void test_sample_due(void **state)
{
	(void)state;
	static const struct {
		int64_t last;
		bool changed, at_rest, want;
	} rows[] = {
		{ 0, false, false, true },			     /* never sampled */
		{ NOW - HISTORY_SAMPLE_MS + 1, false, false, false },
		{ NOW - HISTORY_SAMPLE_MS, false, false, true },
		{ NOW - 1, true, false, true },			     /* a verdict changed */
		{ NOW + 60000, false, false, true },		     /* the clock went back */
		{ NOW - HISTORY_SAMPLE_MS, false, true, false },     /* at rest: seldom */
		{ NOW - HISTORY_SAMPLE_REST_MS, false, true, true },
		{ NOW - 1, true, true, true },			     /* ... but a verdict change still counts */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (history_sample_due(rows[i].last, NOW, rows[i].changed, rows[i].at_rest) != rows[i].want)
			fail_msg("row %zu: want %d", i, rows[i].want);
}

static void test_ring_drop(void **state)
{
	(void)state;
	size_t sizes[] = { 10, 20, 30, 40 };
	assert_int_equal(history_ring_drop(sizes, 4, 100), 0);
	assert_int_equal(history_ring_drop(sizes, 4, 99), 1);
	assert_int_equal(history_ring_drop(sizes, 4, 70), 2);
	assert_int_equal(history_ring_drop(sizes, 4, 5), 3); /* the newest stays */
	assert_int_equal(history_ring_drop(sizes, 0, 5), 0);
}

static void test_thin(void **state)
{
	(void)state;
	static const struct {
		size_t n, cap;
		const char *want; /* 'k' kept, '.' dropped, oldest first */
	} rows[] = {
		{ 8, 80, "kkkkkkkk" }, /* fits */
		{ 8, 79, "k.k.kkkk" }, /* one pass: every second of the older half */
		{ 8, 60, "k.k.kkkk" },
		{ 8, 50, "k...kkkk" },
		{ 8, 20, "......kk" },
		{ 8, 1, ".......k" }, /* the newest stays */
		{ 3, 25, ".kk" },
		{ 1, 5, "k" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t sizes[8];
		bool keep[8];
		for (size_t j = 0; j < rows[i].n; j++)
			sizes[j] = 10;
		size_t kept = history_thin(sizes, rows[i].n, rows[i].cap, keep);
		char got[9] = { 0 };
		size_t count = 0;
		for (size_t j = 0; j < rows[i].n; j++) {
			got[j] = keep[j] ? 'k' : '.';
			count += keep[j];
		}
		if (strcmp(got, rows[i].want) != 0 || kept != count)
			fail_msg("row %zu: kept %s (%zu), want %s", i, got, kept, rows[i].want);
	}
}

static void test_node_devices(void **state)
{
	(void)state;
	static const struct {
		int64_t advertised, used, idle, fragmented;
	} rows[] = {
		{ 8, 0, 8, 0 }, /* a whole node free */
		{ 8, 3, 0, 5 }, /* free devices on a busy node */
		{ 8, 8, 0, 0 },
		{ 8, 9, 0, 0 }, /* more in use than advertised (a stale count): nothing free */
		{ 0, 0, 0, 0 }, /* nothing advertised (the other owner's node) */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int64_t idle = 1, fragmented = 1;
		history_node_devices(rows[i].advertised, rows[i].used, &idle, &fragmented);
		if (idle - 1 != rows[i].idle || fragmented - 1 != rows[i].fragmented)
			fail_msg("row %zu: idle %lld fragmented %lld", i, (long long)idle - 1, (long long)fragmented - 1);
	}
}

static void test_pod_outcome(void **state)
{
	(void)state;
	const history_pod_view_t none = { 0 }, pending = { .present = true },
				 unschedulable = { .present = true, .unschedulable = true },
				 bound = { .present = true, .on_node = true },
				 ready = { .present = true, .on_node = true, .ready = true },
				 done = { .present = true, .on_node = true, .succeeded = true },
				 failed = { .present = true, .on_node = true, .gone = true },
				 gone_unbound = { .present = true, .gone = true };
	static const char *names[] = { "nothing", "retried", "settled", "placed", "failed", "unplaced" };
	const struct {
		const history_pod_view_t *old, *new;
		bool settled, retried;
		history_pod_outcome_t want;
	} rows[] = {
		{ &none, &pending, false, false, HISTORY_POD_NOTHING },
		{ &pending, &unschedulable, false, false, HISTORY_POD_RETRIED },
		{ &unschedulable, &unschedulable, false, true, HISTORY_POD_NOTHING }, /* remembered once */
		{ &pending, &bound, false, true, HISTORY_POD_NOTHING },
		{ &bound, &ready, false, true, HISTORY_POD_PLACED },
		{ &bound, &done, false, false, HISTORY_POD_PLACED },   /* finished before it was seen Ready */
		{ &none, &ready, false, false, HISTORY_POD_SETTLED },  /* running when first seen: no sample */
		{ &none, &done, false, false, HISTORY_POD_SETTLED },
		{ &ready, &ready, true, false, HISTORY_POD_NOTHING },  /* counted once */
		{ &ready, &none, true, false, HISTORY_POD_NOTHING },   /* a counted pod deleted */
		{ &bound, &failed, false, false, HISTORY_POD_FAILED }, /* never Ready on its node */
		{ &bound, &none, false, false, HISTORY_POD_FAILED },   /* deleted before Ready */
		{ &unschedulable, &gone_unbound, false, true, HISTORY_POD_UNPLACED },
		{ &unschedulable, &none, false, true, HISTORY_POD_UNPLACED },
		{ &pending, &none, false, false, HISTORY_POD_NOTHING }, /* never tried to place: no verdict */
		{ &failed, &none, true, false, HISTORY_POD_NOTHING },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		history_pod_outcome_t got = history_pod_outcome(rows[i].old, rows[i].new, rows[i].settled, rows[i].retried);
		if (got != rows[i].want)
			fail_msg("row %zu: %s, want %s", i, names[got], names[rows[i].want]);
	}
}

#define LINE "{\"t\":1764441600000,\"kind\":\"pool\",\"pool\":\"a\",\"to\":\"Canary\"}"

static cJSON *configmap(const char *format, const char *transitions, const char *comparison)
{
	cJSON *cm = cJSON_CreateObject();
	cJSON *data = cJSON_AddObjectToObject(cm, "data");
	if (format)
		cJSON_AddStringToObject(data, "format", format);
	if (transitions)
		cJSON_AddStringToObject(data, "transitions", transitions);
	if (comparison)
		cJSON_AddStringToObject(data, "comparison", comparison);
	return cm;
}

static void test_decode(void **state)
{
	(void)state;
	char *long_line = xmalloc(HISTORY_LINE_MAX + 64);
	snprintf(long_line, HISTORY_LINE_MAX + 64, "{\"t\":1,\"pad\":\"%0*d\"}", HISTORY_LINE_MAX, 0);
	char *big_comparison = xmalloc(HISTORY_COMPARISON_MAX + 64);
	snprintf(big_comparison, HISTORY_COMPARISON_MAX + 64, "{\"pools\":{},\"x\":%0*d}", HISTORY_COMPARISON_MAX, 1);
	const struct {
		const char *format, *transitions, *comparison;
		int rc;
		size_t transitions_read, dropped;
		bool comparison_read;
	} rows[] = {
		{ HISTORY_FORMAT, LINE "\n" LINE "\n", "{\"pools\":{\"a\":{\"dra\":{\"placed\":3}}}}", 0, 2, 0, true },
		{ HISTORY_FORMAT, "", NULL, 0, 0, 0, false },			  /* empty: a new history */
		{ "drashift.io/history/v9", LINE, NULL, -1, 0, 0, false },		  /* an unknown format: not ours to read */
		{ NULL, LINE, NULL, -1, 0, 0, false },					  /* no format */
		{ HISTORY_FORMAT, LINE "\nnot json\n" LINE, NULL, 0, 2, 1, false }, /* a broken record is dropped */
		{ HISTORY_FORMAT, "{\"kind\":\"pool\"}\n[1]\n{\"t\":-5}", NULL, 0, 0, 3, false }, /* no usable time */
		{ HISTORY_FORMAT, long_line, NULL, 0, 0, 1, false },		  /* longer than a record may be */
		{ HISTORY_FORMAT, NULL, "{\"pools\":{\"a\":\"many\"}}", 0, 0, 1, false }, /* counters are numbers */
		{ HISTORY_FORMAT, NULL, "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":1}}}}}}", 0, 0, 1, false }, /* too deep */
		{ HISTORY_FORMAT, NULL, "{\"placed\":-1}", 0, 0, 1, false },
		{ HISTORY_FORMAT, NULL, big_comparison, 0, 0, 1, false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *cm = configmap(rows[i].format, rows[i].transitions, rows[i].comparison);
		history_data_t d;
		char err[256] = "";
		int rc = history_decode(cm, &d, err, sizeof(err));
		if (rc != rows[i].rc || d.n_transitions != rows[i].transitions_read || d.dropped != rows[i].dropped ||
		    (d.comparison != NULL) != rows[i].comparison_read)
			fail_msg("row %zu: rc %d (%s) transitions %zu dropped %zu comparison %d", i, rc, err, d.n_transitions,
				 d.dropped, d.comparison != NULL);
		if (rc != 0 && strstr(err, "data.format") == NULL)
			fail_msg("row %zu: error %s does not name data.format", i, err);
		if (d.dropped > 0 && d.problem[0] == '\0')
			fail_msg("row %zu: nothing says what was dropped", i);
		history_data_free(&d);
		cJSON_Delete(cm);
	}
	history_data_t d;
	char err[256];
	assert_int_equal(history_decode(NULL, &d, err, sizeof(err)), -1); /* not an object at all */
	assert_non_null(strstr(err, "data"));
	free(long_line);
	free(big_comparison);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_change),	    cmocka_unit_test(test_breach),
		cmocka_unit_test(test_sample_due),  cmocka_unit_test(test_ring_drop),
		cmocka_unit_test(test_thin),	    cmocka_unit_test(test_node_devices),
		cmocka_unit_test(test_pod_outcome), cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
