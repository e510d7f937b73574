/*
 * The work queue's promises to the reconcilers: a key is processed once per
 * burst of changes, never by two handlers at once, not before it is due, and
 * failing keys back off exponentially without ever wrapping around.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workqueue.h"


static workqueue_t *new_queue(void)
{
	return workqueue_new();
}

/* Assert that the next get returns exactly key (not just any key). */
static void expect_get(workqueue_t *q, uint64_t now_ms, const char *key)
{
	const char *got = workqueue_get(q, now_ms);
	assert_non_null(got);
	assert_string_equal(got, key);
}

static void test_add_same_key_three_times_gets_it_once(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "plan/a", 0);
	workqueue_add(q, "plan/a", 0);
	workqueue_add(q, "plan/a", 1);
	assert_int_equal(workqueue_depth(q), 1);
	expect_get(q, 1, "plan/a");
	assert_null(workqueue_get(q, 1));
	workqueue_done(q, "plan/a");
	assert_null(workqueue_get(q, 2));
	assert_int_equal(workqueue_depth(q), 0);
	workqueue_free(q);
}

static void test_ready_keys_come_out_in_fifo_order(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "node/c", 0);
	workqueue_add(q, "node/a", 0);
	workqueue_add(q, "node/b", 0);
	workqueue_add(q, "node/a", 0); /* a duplicate keeps its original place */
	expect_get(q, 0, "node/c");
	expect_get(q, 0, "node/a");
	expect_get(q, 0, "node/b");
	assert_null(workqueue_get(q, 0));
	workqueue_done(q, "node/c");
	workqueue_done(q, "node/a");
	workqueue_done(q, "node/b");
	workqueue_free(q);
}

static void test_key_added_while_processing_is_not_handed_out_twice(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "plan/a", 0);
	expect_get(q, 0, "plan/a");

	workqueue_add(q, "plan/a", 1);
	workqueue_add(q, "plan/a", 2);
	workqueue_add(q, "plan/b", 3);
	expect_get(q, 3, "plan/b"); /* other keys still flow */
	assert_null(workqueue_get(q, 4));
	assert_int_equal(workqueue_processing(q), 2);

	workqueue_done(q, "plan/a");
	expect_get(q, 5, "plan/a"); /* back, exactly once */
	assert_null(workqueue_get(q, 5));
	workqueue_done(q, "plan/a");
	workqueue_done(q, "plan/b");
	assert_null(workqueue_get(q, 6));
	assert_int_equal(workqueue_processing(q), 0);
	assert_int_equal(workqueue_depth(q), 0);
	workqueue_free(q);
}

static void test_add_after_is_not_ready_before_due_and_ready_at_due(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add_after(q, "plan/a", 100, 1000);
	assert_int_equal(workqueue_depth(q), 1);
	assert_null(workqueue_get(q, 1000));
	assert_null(workqueue_get(q, 1099));
	expect_get(q, 1100, "plan/a");
	workqueue_done(q, "plan/a");
	assert_null(workqueue_get(q, 5000));
	workqueue_free(q);
}

static void test_add_after_earliest_due_time_wins(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	/* A later due time does not push the key back ... */
	workqueue_add_after(q, "plan/a", 50, 0);
	workqueue_add_after(q, "plan/a", 100, 0);
	/* ... and an earlier one brings it forward. */
	workqueue_add_after(q, "plan/b", 100, 0);
	workqueue_add_after(q, "plan/b", 30, 0);
	assert_int_equal(workqueue_depth(q), 2);

	assert_null(workqueue_get(q, 29));
	expect_get(q, 30, "plan/b");
	assert_null(workqueue_get(q, 49));
	expect_get(q, 50, "plan/a");
	workqueue_done(q, "plan/a");
	workqueue_done(q, "plan/b");
	/* Neither comes back at the later due times it was also given. */
	assert_null(workqueue_get(q, 100));
	assert_null(workqueue_get(q, 1000));
	assert_int_equal(workqueue_depth(q), 0);
	workqueue_free(q);
}

static void test_add_makes_waiting_key_ready_now(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add_after(q, "plan/a", 1000, 0);
	workqueue_add(q, "plan/a", 10);
	assert_int_equal(workqueue_depth(q), 1);
	assert_int_equal(workqueue_next_due(q, 10), 0);
	expect_get(q, 10, "plan/a");
	workqueue_done(q, "plan/a");
	/* The earlier delay was replaced, not kept as a second copy. */
	assert_null(workqueue_get(q, 1000));
	assert_int_equal(workqueue_next_due(q, 1000), UINT64_MAX);
	workqueue_free(q);
}

static void test_add_after_on_ready_key_keeps_it_ready(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "plan/a", 0);
	workqueue_add_after(q, "plan/a", 500, 0);
	expect_get(q, 0, "plan/a");
	workqueue_done(q, "plan/a");
	assert_null(workqueue_get(q, 500));
	workqueue_free(q);
}

static void test_due_keys_are_promoted_in_due_time_order(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add_after(q, "plan/late", 30, 0);
	workqueue_add_after(q, "plan/early", 10, 0);
	workqueue_add_after(q, "plan/mid", 20, 0);
	workqueue_add_after(q, "plan/tie", 20, 0);
	/* Due at 10 and 20, before this key was added at 25. */
	workqueue_add(q, "plan/ready", 25);
	expect_get(q, 40, "plan/early");
	expect_get(q, 40, "plan/mid");
	expect_get(q, 40, "plan/tie");
	expect_get(q, 40, "plan/ready");
	expect_get(q, 40, "plan/late");
	assert_null(workqueue_get(q, 40));
	workqueue_free(q);
}

static void test_add_after_zero_delay_is_add(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add_after(q, "plan/a", 0, 7);
	assert_int_equal(workqueue_next_due(q, 7), 0);
	expect_get(q, 7, "plan/a");
	workqueue_free(q);
}

static void test_next_due_reports_time_until_work(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	assert_int_equal(workqueue_next_due(q, 0), UINT64_MAX);

	workqueue_add_after(q, "plan/a", 100, 0);
	workqueue_add_after(q, "plan/b", 250, 0);
	assert_int_equal(workqueue_next_due(q, 0), 100);
	assert_int_equal(workqueue_next_due(q, 40), 60);
	assert_int_equal(workqueue_next_due(q, 100), 0);
	assert_int_equal(workqueue_next_due(q, 150), 0); /* overdue is still 0 */

	expect_get(q, 100, "plan/a");
	assert_int_equal(workqueue_next_due(q, 100), 150);
	workqueue_add(q, "plan/c", 120);
	assert_int_equal(workqueue_next_due(q, 120), 0);
	expect_get(q, 120, "plan/c");
	expect_get(q, 250, "plan/b");
	/* Only keys in processing: nothing for a timer to wait for. */
	assert_int_equal(workqueue_next_due(q, 250), UINT64_MAX);
	workqueue_add(q, "plan/a", 260); /* pending until done */
	assert_int_equal(workqueue_next_due(q, 260), UINT64_MAX);
	workqueue_done(q, "plan/a");
	assert_int_equal(workqueue_next_due(q, 260), 0);
	workqueue_free(q);
}

static void test_shutdown_ignores_adds_and_get_returns_null(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "plan/a", 0);
	workqueue_add(q, "plan/b", 0);
	expect_get(q, 0, "plan/a");
	workqueue_shutdown(q);

	assert_null(workqueue_get(q, 0));
	workqueue_add(q, "plan/c", 0);
	workqueue_add_after(q, "plan/d", 10, 0);
	assert_int_equal(workqueue_depth(q), 1); /* plan/b, from before */
	assert_int_equal(workqueue_next_due(q, 0), UINT64_MAX);

	/* In-flight work can still finish. */
	workqueue_done(q, "plan/a");
	assert_int_equal(workqueue_processing(q), 0);
	assert_null(workqueue_get(q, 100));
	workqueue_free(q);
}

static void test_depth_and_processing_counters(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	assert_int_equal(workqueue_depth(q), 0);
	assert_int_equal(workqueue_processing(q), 0);

	workqueue_add(q, "plan/a", 0);
	workqueue_add(q, "plan/b", 0);
	workqueue_add_after(q, "plan/c", 10, 0);
	assert_int_equal(workqueue_depth(q), 3);
	assert_int_equal(workqueue_processing(q), 0);

	expect_get(q, 0, "plan/a");
	assert_int_equal(workqueue_depth(q), 2);
	assert_int_equal(workqueue_processing(q), 1);

	workqueue_add(q, "plan/a", 0); /* pending re-add is not counted yet */
	assert_int_equal(workqueue_depth(q), 2);

	expect_get(q, 10, "plan/b");
	expect_get(q, 10, "plan/c");
	assert_int_equal(workqueue_depth(q), 0);
	assert_int_equal(workqueue_processing(q), 3);

	workqueue_done(q, "plan/a");
	assert_int_equal(workqueue_depth(q), 1);
	assert_int_equal(workqueue_processing(q), 2);
	workqueue_done(q, "plan/b");
	workqueue_done(q, "plan/c");
	workqueue_done(q, "plan/c"); /* twice, or for an unknown key: harmless */
	workqueue_done(q, "plan/zzz");
	assert_int_equal(workqueue_depth(q), 1);
	assert_int_equal(workqueue_processing(q), 0);
	workqueue_free(q);
}

static void test_done_after_delayed_readd_leaves_key_waiting(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "plan/a", 0);
	expect_get(q, 0, "plan/a");
	workqueue_add_after(q, "plan/a", 5, 10);   /* due at 15 */
	workqueue_add_after(q, "plan/a", 100, 10); /* later: ignored */


	workqueue_done(q, "plan/a"); /* at 12, before the retry is due */
	assert_null(workqueue_get(q, 12));
	assert_int_equal(workqueue_depth(q), 1);
	assert_int_equal(workqueue_processing(q), 0);
	assert_int_equal(workqueue_next_due(q, 12), 3);
	assert_null(workqueue_get(q, 14));
	expect_get(q, 15, "plan/a");
	assert_null(workqueue_get(q, 15));
	workqueue_done(q, "plan/a");
	/* The ignored later delay did not leave a second copy behind. */
	assert_null(workqueue_get(q, 110));
	assert_int_equal(workqueue_depth(q), 0);
	workqueue_free(q);
}

static void test_delayed_readd_due_during_processing_is_ready_on_done(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "plan/a", 0);
	expect_get(q, 0, "plan/a");
	workqueue_add_after(q, "plan/a", 10, 0);
	/* Due at 10 but still processing at 50: not handed out twice. */
	assert_null(workqueue_get(q, 50));
	workqueue_done(q, "plan/a");
	assert_int_equal(workqueue_next_due(q, 50), 0);
	expect_get(q, 50, "plan/a");
	workqueue_done(q, "plan/a");
	assert_null(workqueue_get(q, 100));
	workqueue_free(q);
}

static void test_add_while_processing_overrides_pending_delay(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	workqueue_add(q, "plan/a", 0);
	expect_get(q, 0, "plan/a");
	workqueue_add_after(q, "plan/a", 1000, 0);
	workqueue_add(q, "plan/a", 5);
	workqueue_add_after(q, "plan/a", 1000, 6); /* ready beats any delay */
	workqueue_done(q, "plan/a");
	expect_get(q, 7, "plan/a");
	workqueue_done(q, "plan/a");
	assert_null(workqueue_get(q, 2000));
	workqueue_free(q);
}

/*
 * 100k keys through every structure: half ready, half delayed, re-adds of
 * keys still queued (which must find them after many deletions around them),
 * each key handed out exactly once, and the queue empty at the end. A
 * quadratic step anywhere would take minutes here.
 */
#define STRESS_KEYS 100000

static void stress_key(char *buf, size_t len, int i)
{
	snprintf(buf, len, "node/gpu-%d", i);
}

static int stress_index(const char *key)
{
	const char *prefix = "node/gpu-";
	assert_int_equal(strncmp(key, prefix, strlen(prefix)), 0);
	char *end = NULL;
	long v = strtol(key + strlen(prefix), &end, 10);
	assert_true(*end == '\0' && v >= 0 && v < STRESS_KEYS);
	return (int)v;
}

static uint64_t stress_delay(int i)
{
	return 1 + (uint64_t)(((unsigned)i * 7919u) % 1000u);
}

static void test_stress_100k_keys_add_get_done_ends_empty(void **state)
{
	(void)state;
	workqueue_t *q = new_queue();
	char key[64];
	const int half = STRESS_KEYS / 2;
	for (int i = 0; i < STRESS_KEYS; i++) {
		stress_key(key, sizeof(key), i);
		if (i < half)
			workqueue_add(q, key, 0);
		else
			workqueue_add_after(q, key, stress_delay(i), 0);
	}
	/* Duplicates of everything, ready and waiting: no growth. */
	for (int i = 0; i < STRESS_KEYS; i += 3) {
		stress_key(key, sizeof(key), i);
		workqueue_add_after(q, key, 5000, 0);
	}
	assert_int_equal(workqueue_depth(q), STRESS_KEYS);
	assert_int_equal(workqueue_next_due(q, 0), 0);

	bool *seen = calloc(STRESS_KEYS, sizeof(*seen));
	assert_non_null(seen);
	uint64_t prev_due = 0;
	for (int n = 0; n < STRESS_KEYS; n++) {
		const char *got = workqueue_get(q, 1000);
		assert_non_null(got);
		int i = stress_index(got);
		assert_false(seen[i]);
		seen[i] = true;
		if (n < half) {
			assert_int_equal(i, n); /* ready keys in FIFO order */
		} else {
			assert_true(i >= half);
			assert_true(stress_delay(i) >= prev_due); /* then by due time */
			prev_due = stress_delay(i);
		}
		workqueue_done(q, got);
		/* A key not yet handed out is found and not duplicated. */
		int later = n + 1 + (int)((unsigned)n * 31u % 1000u);
		if (later < STRESS_KEYS && !seen[later]) {
			size_t depth = workqueue_depth(q);
			stress_key(key, sizeof(key), later);
			workqueue_add_after(q, key, 1, 1000);
			assert_int_equal(workqueue_depth(q), depth);
		}
	}
	free(seen);
	assert_null(workqueue_get(q, UINT64_MAX));
	assert_int_equal(workqueue_depth(q), 0);
	assert_int_equal(workqueue_processing(q), 0);
	assert_int_equal(workqueue_next_due(q, 1000), UINT64_MAX);

	/* Everything was released: a fresh key goes through as in a new queue. */
	workqueue_add(q, "node/gpu-0", 2000);
	expect_get(q, 2000, "node/gpu-0");
	workqueue_done(q, "node/gpu-0");
	assert_int_equal(workqueue_depth(q), 0);
	workqueue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_same_key_three_times_gets_it_once),
		cmocka_unit_test(test_ready_keys_come_out_in_fifo_order),
		cmocka_unit_test(test_key_added_while_processing_is_not_handed_out_twice),
		cmocka_unit_test(test_add_after_is_not_ready_before_due_and_ready_at_due),
		cmocka_unit_test(test_add_after_earliest_due_time_wins),
		cmocka_unit_test(test_add_makes_waiting_key_ready_now),
		cmocka_unit_test(test_add_after_on_ready_key_keeps_it_ready),
		cmocka_unit_test(test_due_keys_are_promoted_in_due_time_order),
		cmocka_unit_test(test_add_after_zero_delay_is_add),
		cmocka_unit_test(test_next_due_reports_time_until_work),
		cmocka_unit_test(test_shutdown_ignores_adds_and_get_returns_null),
		cmocka_unit_test(test_depth_and_processing_counters),
		cmocka_unit_test(test_done_after_delayed_readd_leaves_key_waiting),
		cmocka_unit_test(test_delayed_readd_due_during_processing_is_ready_on_done),
		cmocka_unit_test(test_add_while_processing_overrides_pending_delay),
		cmocka_unit_test(test_stress_100k_keys_add_get_done_ends_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
