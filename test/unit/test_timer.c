/*
 * Deadlines that events bring forward and never push back (timer.h), driven
 * the way the plan controller drives its work queue: every event queues a key
 * and asks for a reconcile within a batching delay, while a steady stream of
 * events arrives closer together than that delay, as on a busy cluster.
 *
 * Time is the libuv loop's: timers fire in due order within one pass, so the
 * counts asserted below hold however loaded the machine is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <uv.h>

#include "timer.h"
#include "workqueue.h"

#define BATCH_MS 50
#define EVENT_GAP_MS 10
#define EVENTS 100

typedef struct {
	uv_loop_t loop;
	uv_timer_t due;    /* the reconcile timer, as pc->timer */
	uv_timer_t events; /* the stream of unrelated events */
	workqueue_t *queue;
	int events_seen;
	int runs;
	int events_before_first_run; /* -1: no run yet */
	uint64_t wait_ms; /* the delay asked for when nothing else is queued */
} stream_t;

static void on_due(uv_timer_t *t);

/* What plan_controller_schedule() does: a reconcile when the queue's next key is due, at least BATCH_MS away. */
static void schedule(stream_t *s)
{
	uint64_t due = workqueue_next_due(s->queue, uv_now(&s->loop));
	if (due == UINT64_MAX)
		return;
	timer_arm_within(&s->due, on_due, due < BATCH_MS ? BATCH_MS : due);
}

static void on_due(uv_timer_t *t)
{
	stream_t *s = t->data;
	const char *key;
	while ((key = workqueue_get(s->queue, uv_now(&s->loop))) != NULL) {
		if (s->runs++ == 0)
			s->events_before_first_run = s->events_seen;
		workqueue_done(s->queue, key);
	}
	schedule(s);
}

static void on_event(uv_timer_t *t)
{
	stream_t *s = t->data;
	if (++s->events_seen == EVENTS)
		uv_timer_stop(t);
	/* A node heartbeat or a pod update: it concerns the plan, so it is queued again. */
	workqueue_add(s->queue, "plan", uv_now(&s->loop));
	schedule(s);
}

static void stream_run(stream_t *s, uint64_t first_delay_ms)
{
	assert_int_equal(uv_loop_init(&s->loop), 0);
	s->queue = workqueue_new();
	s->events_before_first_run = -1;
	uv_timer_init(&s->loop, &s->due);
	uv_timer_init(&s->loop, &s->events);
	s->due.data = s->events.data = s;
	if (first_delay_ms) {
		/* A key already waiting, due later than the batching delay. */
		workqueue_add_after(s->queue, "plan", first_delay_ms, uv_now(&s->loop));
		schedule(s);
	}
	uv_timer_start(&s->events, on_event, EVENT_GAP_MS, EVENT_GAP_MS);
	assert_int_equal(uv_run(&s->loop, UV_RUN_DEFAULT), 0);
	uv_close((uv_handle_t *)&s->due, NULL);
	uv_close((uv_handle_t *)&s->events, NULL);
	uv_run(&s->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&s->loop), 0);
	workqueue_free(s->queue);
}

/*
 * Events every 10 ms, each asking for a reconcile within 50 ms: the first one
 * runs within 50 ms of the first event (at most 6 events later), not after the
 * stream ends, and the stream keeps getting reconciled all along.
 */
static void test_events_closer_than_the_batch_delay_do_not_starve_a_due_reconcile(void **state)
{
	(void)state;
	stream_t s = { 0 };
	stream_run(&s, 0);
	assert_int_equal(s.events_seen, EVENTS);
	assert_in_range(s.events_before_first_run, 1, BATCH_MS / EVENT_GAP_MS + 1);
	/* About one reconcile per batching delay while the stream lasts, and one after it. */
	assert_true(s.runs >= EVENTS * EVENT_GAP_MS / BATCH_MS / 2);
}

static void on_one(uv_timer_t *t)
{
	(void)t;
}

static void on_other(uv_timer_t *t)
{
	(void)t;
}

/* A reconcile already due sooner than an event asks for is not moved later by it. */
static void test_an_event_never_pushes_a_deadline_back(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_timer_t t;
	assert_int_equal(uv_loop_init(&loop), 0);
	uv_timer_init(&loop, &t);
	timer_arm_within(&t, on_one, 20);
	timer_arm_within(&t, on_one, 5000);
	assert_true(uv_timer_get_due_in(&t) <= 20);
	/* An earlier deadline brings it forward. */
	timer_arm_within(&t, on_one, 3);
	assert_true(uv_timer_get_due_in(&t) <= 3);
	/* A timer set for another callback is replaced, whatever its deadline. */
	timer_arm_within(&t, on_other, 5000);
	assert_true(uv_timer_get_due_in(&t) > 3);
	assert_ptr_equal(t.timer_cb, on_other);
	uv_timer_stop(&t);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/*
 * A key waiting 300 ms (a requeued handover step, a bake ending) is brought
 * forward by the first event, which queues it now: nothing waits 300 ms.
 */
static void test_an_event_brings_a_later_deadline_forward(void **state)
{
	(void)state;
	stream_t s = { 0 };
	stream_run(&s, 300);
	assert_in_range(s.events_before_first_run, 1, BATCH_MS / EVENT_GAP_MS + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_closer_than_the_batch_delay_do_not_starve_a_due_reconcile),
		cmocka_unit_test(test_an_event_never_pushes_a_deadline_back),
		cmocka_unit_test(test_an_event_brings_a_later_deadline_forward),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
