/*
 * Pool phases and who may move: the canary is recorded before anyone moves,
 * bakes, passes its gate, then the pool expands within maxUnavailable;
 * pause, failure and rollback behave as docs/state-machines.md says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

#define NOW 1764441600000LL
#define MIN 60000LL

static plan_pool_t pool_a = { .name = "a", .canary_nodes = 1, .max_unavailable = 1, .bake_ms = 10 * MIN };
static plan_t plan = { .name = "gpu", .pools = &pool_a, .n_pools = 1 };

static char names[16][32];
static projection_node_t nodes[16];
static pool_member_t members[16];

static size_t setup_members(const char *states)
{
	size_t n = strlen(states);
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "gpu-%02zu", i);
		nodes[i] = (projection_node_t){ .meta = { .name = names[i] } };
		members[i] = (pool_member_t){ .node = &nodes[i] };
		handover_step_t step = HANDOVER_LEGACY;
		switch (states[i]) {
		case 'L': step = HANDOVER_LEGACY; break;
		case 'D': step = HANDOVER_DRA; break;
		case 'h': step = HANDOVER_DRIVER_ON; break; /* in flight towards DRA */
		case 'r': step = HANDOVER_DRAINING_DRA; members[i].state.direction = HANDOVER_TO_LEGACY; break;
		case 'F': step = HANDOVER_FAILED; break;
		case 'Q': step = HANDOVER_DRA; members[i].state.quarantine = "permanent driver failure"; break;
		case 'q': step = HANDOVER_DRIVER_ON; members[i].state.quarantine = "permanent driver failure"; break;
		case 'c': step = HANDOVER_LEGACY; nodes[i].unschedulable = true; break; /* cordoned by someone else */
		case 'C': step = HANDOVER_DRA; nodes[i].unschedulable = true; break;    /* on DRA, someone else's cordon */
		}
		members[i].state.step = step;
	}
	return n;
}

static bool window_closed; /* outside the plan's maintenance windows */
static const char *boundary_pending; /* the tenant boundary is not in place yet */

static void decide(const char *states, pool_record_t rec, bool gate, pool_output_t *out)
{
	size_t n = setup_members(states);
	pool_input_t in = { .plan = &plan, .pool = &pool_a, .record = rec, .members = members, .n_members = n,
			    .may_start = true, .gate_passed = gate,
			    .gate_waiting = gate ? NULL : "allocationLatencyP95 has 3 of 20 samples in the window",
			    .window_closed = window_closed, .window_opens = "2026-12-05T22:00:00Z",
			    .boundary_pending = boundary_pending, .now_ms = NOW };
	pool_decide(&in, out);
}

/* Goals as a string: D (to DRA), L (to legacy), . (stay). */
static void goals(const pool_output_t *out, size_t n, char *buf)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = out->goals[i] == HANDOVER_GOAL_DRA ? 'D' : out->goals[i] == HANDOVER_GOAL_LEGACY ? 'L' : '.';
	buf[n] = '\0';
}

static const char *const canary0[] = { "gpu-00" };

static void test_canary_is_recorded_before_anyone_moves(void **state)
{
	(void)state;
	pool_output_t out;
	char g[17];
	decide("LLLL", (pool_record_t){ 0 }, false, &out);
	assert_int_equal(out.phase, POOL_CANARY);
	assert_true(out.record_changed);
	assert_int_equal(out.record.n_canary, 1);
	assert_string_equal(out.record.canary_nodes[0], "gpu-00");
	assert_int_equal(out.record.start_ms, NOW);
	goals(&out, 4, g);
	assert_string_equal(g, "....");
	pool_output_free(&out);

	/* Recorded: now the canary (and only the canary) moves. */
	pool_a.max_unavailable = 3;
	decide("LLLL", (pool_record_t){ .canary_nodes = canary0, .n_canary = 1, .start_ms = NOW }, false, &out);
	goals(&out, 4, g);
	assert_string_equal(g, "D...");
	assert_false(out.record_changed);
	pool_output_free(&out);
	pool_a.max_unavailable = 1;
}

static void test_canary_prefers_nodes_already_moved(void **state)
{
	(void)state;
	pool_output_t out;
	decide("LLhL", (pool_record_t){ 0 }, false, &out); /* status lost after a node started */
	assert_int_equal(out.record.n_canary, 1);
	assert_string_equal(out.record.canary_nodes[0], "gpu-02");
	pool_output_free(&out);
}

/*
 * A node someone else cordoned takes no claims, so a canary of it could never
 * be judged: it is chosen last. When every canary node is so cordoned, the
 * waiting gate says so and what to do.
 */
static void test_canary_avoids_foreign_cordons(void **state)
{
	(void)state;
	pool_output_t out;
	decide("cLLL", (pool_record_t){ 0 }, false, &out);
	assert_string_equal(out.record.canary_nodes[0], "gpu-01");
	pool_output_free(&out);
	decide("cccL", (pool_record_t){ 0 }, false, &out);
	assert_string_equal(out.record.canary_nodes[0], "gpu-03");
	pool_output_free(&out);
	decide("cccc", (pool_record_t){ 0 }, false, &out); /* all cordoned: still a canary, the first */
	assert_string_equal(out.record.canary_nodes[0], "gpu-00");
	pool_output_free(&out);

	pool_record_t rec = { .canary_nodes = canary0, .n_canary = 1, .start_ms = NOW - 20 * MIN,
			      .bake_start_ms = NOW - 11 * MIN };
	decide("CLLL", rec, false, &out);
	assert_non_null(strstr(out.message, "every canary node is cordoned by someone else (first: gpu-00)"));
	assert_non_null(strstr(out.message, "uncordon one"));
	pool_output_free(&out);
	decide("DcLL", rec, false, &out); /* the canary takes claims: the usual wait */
	assert_null(strstr(out.message, "cordoned"));
	pool_output_free(&out);
}

static void test_bake_then_gate_then_expand(void **state)
{
	(void)state;
	pool_output_t out;
	char g[17];
	pool_record_t rec = { .canary_nodes = canary0, .n_canary = 1, .start_ms = NOW - MIN };
	decide("DLLL", rec, true, &out); /* canary done: the bake start is recorded first */
	assert_int_equal(out.phase, POOL_CANARY);
	assert_true(out.record_changed);
	assert_int_equal(out.record.bake_start_ms, NOW);
	pool_output_free(&out);

	rec.bake_start_ms = NOW - 5 * MIN; /* half-baked */
	decide("DLLL", rec, true, &out);
	assert_int_equal(out.phase, POOL_CANARY);
	assert_int_equal(out.requeue_ms, 5 * MIN);
	goals(&out, 4, g);
	assert_string_equal(g, "....");
	pool_output_free(&out);

	rec.bake_start_ms = NOW - 11 * MIN; /* baked, but the gate is inconclusive */
	decide("DLLL", rec, false, &out);
	assert_int_equal(out.phase, POOL_CANARY);
	assert_non_null(strstr(out.message, "waiting for the SLO gate to pass"));
	assert_non_null(strstr(out.message, "allocationLatencyP95 has 3 of 20 samples")); /* says what it waits for */
	assert_true(out.requeue_ms > 0); /* judged again without a change */
	goals(&out, 4, g);
	assert_string_equal(g, "....");
	pool_output_free(&out);

	pool_a.max_unavailable = 2;
	decide("DLLL", rec, true, &out); /* gate passed: expand two at a time */
	assert_int_equal(out.phase, POOL_EXPANDING);
	goals(&out, 4, g);
	assert_string_equal(g, ".DD.");
	pool_output_free(&out);

	decide("DhLL", rec, false, &out); /* expanding goes on once begun, even if the gate wobbles */
	assert_int_equal(out.phase, POOL_EXPANDING);
	goals(&out, 4, g);
	assert_string_equal(g, ".DD.");
	pool_output_free(&out);
	pool_a.max_unavailable = 1;
}

/*
 * Decide for states with pool a's canary gpu-00 recorded 20 minutes ago and its
 * bake started at bake_start_ms (0: not yet); the phase, the goals and a part
 * of the message must be as given. Returns whether the pool awaits approval.
 */
static bool expect_decision(size_t row, const char *states, int64_t bake_start_ms, bool gate, pool_phase_t phase,
			    const char *want_goals, const char *message)
{
	pool_record_t rec = { .canary_nodes = canary0, .n_canary = 1, .start_ms = NOW - 20 * MIN,
			      .bake_start_ms = bake_start_ms };
	pool_output_t out;
	char g[17];
	decide(states, rec, gate, &out);
	goals(&out, strlen(states), g);
	if (out.phase != phase || strcmp(g, want_goals) != 0 || strstr(out.message, message) == NULL)
		fail_msg("row %zu: phase %s goals %s message \"%s\"", row, pool_phase_name(out.phase), g, out.message);
	bool awaiting = out.awaiting_approval;
	pool_output_free(&out);
	return awaiting;
}

/*
 * spec.promote ends the canary's bake early, but nothing else: the canary
 * must be on DRA with its bake recorded, and the gate must still pass.
 */
static void test_promote_skips_the_rest_of_the_bake(void **state)
{
	(void)state;
	static const struct {
		const char *states;
		int64_t bake_start_ms; /* 0: not recorded yet */
		bool promote, gate;
		pool_phase_t phase;
		const char *goals;
		const char *message; /* a part of it */
	} rows[] = {
		/* half-baked: only a promotion lets it expand */
		{ "DLLL", NOW - 5 * MIN, false, true, POOL_CANARY, "....", "baking" },
		{ "DLLL", NOW - 5 * MIN, true, true, POOL_EXPANDING, ".D..", "expanding" },
		/* promoted but the gate has not passed: it waits for the gate, saying so */
		{ "DLLL", NOW - 5 * MIN, true, false, POOL_CANARY, "....", "promoted (spec.promote), bake skipped" },
		/* promoted before the canary is on DRA: the canary moves first, nothing else */
		{ "LLLL", 0, true, true, POOL_CANARY, "D...", "canary: 0 of 1" },
		/* canary just reached DRA: the bake start is recorded before anything else */
		{ "DLLL", 0, true, true, POOL_CANARY, "....", "baking for" },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		pool_a.promote = rows[r].promote;
		expect_decision(r, rows[r].states, rows[r].bake_start_ms, rows[r].gate, rows[r].phase, rows[r].goals,
				rows[r].message);
	}
	pool_a.promote = false;
}

/*
 * promotion: Manual: after the bake and a passed gate the pool waits for a
 * person (spec.promote), says so, and expands once promoted. Automatic pools
 * and pools still baking or judging are not "awaiting approval".
 */
static void test_manual_promotion_waits_for_a_person(void **state)
{
	(void)state;
	static const struct {
		const char *states;
		int64_t bake_start_ms;
		bool manual, promote, gate;
		pool_phase_t phase;
		const char *goals;
		bool awaiting;
		const char *message;
	} rows[] = {
		{ "DLLL", NOW - 11 * MIN, true, false, true, POOL_CANARY, "....", true,
		  "waiting for approval (promotion: Manual): kubectl drashift promote gpu a" },
		{ "DLLL", NOW - 11 * MIN, true, true, true, POOL_EXPANDING, ".D..", false, "expanding" },
		{ "DLLL", NOW - 11 * MIN, false, false, true, POOL_EXPANDING, ".D..", false, "expanding" },
		/* the bake and the gate come first: nobody is asked to approve what has not passed */
		{ "DLLL", NOW - 5 * MIN, true, false, true, POOL_CANARY, "....", false, "baking" },
		{ "DLLL", NOW - 11 * MIN, true, false, false, POOL_CANARY, "....", false, "waiting for the SLO gate" },
		{ "DLLL", NOW - 11 * MIN, true, true, false, POOL_CANARY, "....", false, "waiting for the SLO gate" },
		/* once expanding, approval is not asked again */
		{ "DDLL", NOW - 11 * MIN, true, true, true, POOL_EXPANDING, "..D.", false, "expanding" },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		pool_a.manual_promotion = rows[r].manual;
		pool_a.promote = rows[r].promote;
		if (expect_decision(r, rows[r].states, rows[r].bake_start_ms, rows[r].gate, rows[r].phase, rows[r].goals,
				    rows[r].message) != rows[r].awaiting)
			fail_msg("row %zu: awaiting approval is not %d", r, rows[r].awaiting);
	}
	pool_a.manual_promotion = false;
	pool_a.promote = false;
}

/*
 * Outside the maintenance windows no handover starts: not the canary, not
 * the expansion. Handovers under way finish, a rollback proceeds, and the
 * message says when the next window opens.
 */
/* A pool whose starts are held: its phase, the nodes' goals and a part of its message, per row. */
typedef struct {
	const char *states;
	int64_t bake_start_ms;
	bool rollback;
	pool_phase_t phase;
	const char *goals;
	const char *message;
} held_row_t;

static void expect_held(const held_row_t *rows, size_t n)
{
	pool_a.max_unavailable = 2;
	for (size_t r = 0; r < n; r++) {
		pool_a.rollback = rows[r].rollback;
		expect_decision(r, rows[r].states, rows[r].bake_start_ms, true, rows[r].phase, rows[r].goals, rows[r].message);
	}
	pool_a.rollback = false;
}

static void test_window_closed_starts_nothing(void **state)
{
	(void)state;
	static const held_row_t rows[] = {
		{ "LLLL", 0, false, POOL_CANARY, "....", "no handover starts until 2026-12-05T22:00:00Z" },
		{ "hLLL", 0, false, POOL_CANARY, "D...", "no handover starts until 2026-12-05T22:00:00Z" },
		{ "DLLL", NOW - 11 * MIN, false, POOL_EXPANDING, "....", "no handover starts until 2026-12-05T22:00:00Z" },
		{ "DhLL", NOW - 11 * MIN, false, POOL_EXPANDING, ".D..", "outside the maintenance windows" },
		/* a rollback always may */
		{ "DDLL", NOW - 11 * MIN, true, POOL_ROLLING_BACK, "L...", "rolling back" },
	};
	window_closed = true;
	expect_held(rows, sizeof(rows) / sizeof(rows[0]));
	/* the window opens: the same pool moves */
	window_closed = false;
	expect_decision(99, "DLLL", NOW - 11 * MIN, true, POOL_EXPANDING, ".DD.", "expanding");
	pool_a.max_unavailable = 1;
}

/*
 * Until the tenant boundary's parameter is written, no node starts toward
 * DRA: not the canary's first, not an expansion; a handover under way
 * finishes, a rollback goes on, and the message says what the pool waits for.
 */
static void test_boundary_pending_starts_nothing(void **state)
{
	(void)state;
	static const held_row_t rows[] = {
		{ "LLLL", 0, false, POOL_CANARY, "....", "no handover starts until the tenant boundary is in place: being written" },
		{ "hLLL", 0, false, POOL_CANARY, "D...", "canary: 0 of 1 canary node(s) on DRA" },
		{ "DLLL", NOW - 11 * MIN, false, POOL_EXPANDING, "....", "until the tenant boundary is in place" },
		{ "DDLL", NOW - 11 * MIN, true, POOL_ROLLING_BACK, "L...", "rolling back" },
	};
	boundary_pending = "being written";
	expect_held(rows, sizeof(rows) / sizeof(rows[0]));
	/* written: the canary's first node starts */
	boundary_pending = NULL;
	expect_decision(99, "LLLL", 0, true, POOL_CANARY, "D...", "canary: 0 of 1");
	pool_a.max_unavailable = 1;
}

static void test_max_unavailable_never_exceeded(void **state)
{
	(void)state;
	const char alphabet[] = "LDhF";
	pool_record_t rec = { .canary_nodes = canary0, .n_canary = 1, .start_ms = 1, .bake_start_ms = NOW - 60 * MIN };
	srand(3);
	for (int round = 0; round < 20000; round++) {
		char states[9];
		size_t n = 1 + (size_t)(rand() % 8);
		for (size_t i = 0; i < n; i++)
			states[i] = alphabet[rand() % 3]; /* no failures: they stop the pool */
		states[n] = '\0';
		pool_a.max_unavailable = 1 + rand() % 3;
		pool_output_t out;
		decide(states, rec, true, &out);
		size_t moving = 0, in_flight = 0;
		for (size_t i = 0; i < n; i++) {
			if (states[i] == 'h')
				in_flight++;
			if (out.goals[i] == HANDOVER_GOAL_DRA)
				moving++;
		}
		size_t bound = in_flight > (size_t)pool_a.max_unavailable ? in_flight : (size_t)pool_a.max_unavailable;
		if (moving > bound)
			fail_msg("%s, maxUnavailable %d: %zu nodes moving", states, pool_a.max_unavailable, moving);
		pool_output_free(&out);
	}
	pool_a.max_unavailable = 1;
}

static void test_done_paused_failed_waiting(void **state)
{
	(void)state;
	pool_output_t out;
	char g[17];
	pool_record_t rec = { .canary_nodes = canary0, .n_canary = 1, .start_ms = 1, .bake_start_ms = 1 };
	decide("DDDD", rec, true, &out);
	assert_int_equal(out.phase, POOL_DRA);
	assert_int_equal(out.record.finish_ms, NOW);
	assert_true(out.record_changed);
	pool_output_free(&out);

	/* Done is done: neither a pause nor a freeze hides it. */
	plan.paused = true;
	decide("DDDD", rec, true, &out);
	assert_int_equal(out.phase, POOL_DRA);
	pool_output_free(&out);
	plan.paused = false;
	size_t n_done = setup_members("DDDD");
	pool_input_t frozen_done = { .plan = &plan, .pool = &pool_a, .record = rec, .members = members,
				     .n_members = n_done, .may_start = true, .frozen = true, .now_ms = NOW };
	pool_decide(&frozen_done, &out);
	assert_int_equal(out.phase, POOL_DRA);
	goals(&out, 4, g);
	assert_string_equal(g, "....");
	pool_output_free(&out);

	plan.paused = true;
	decide("DhLL", rec, true, &out);
	assert_int_equal(out.phase, POOL_PAUSED);
	goals(&out, 4, g);
	assert_string_equal(g, "...."); /* STAY: the node under way finishes its handover by itself */
	pool_output_free(&out);
	plan.paused = false;

	decide("DFLL", rec, true, &out);
	assert_int_equal(out.phase, POOL_FAILED);
	goals(&out, 4, g);
	assert_string_equal(g, "....");
	pool_output_free(&out);

	size_t n = setup_members("LLLL");
	pool_input_t in = { .plan = &plan, .pool = &pool_a, .members = members, .n_members = n, .may_start = false, .now_ms = NOW };
	pool_decide(&in, &out);
	assert_int_equal(out.phase, POOL_LEGACY);
	assert_false(out.record_changed);
	pool_output_free(&out);
}

static void test_rollback_one_node_at_a_time(void **state)
{
	(void)state;
	pool_output_t out;
	char g[17];
	pool_record_t rec = { .canary_nodes = canary0, .n_canary = 1, .start_ms = 1, .bake_start_ms = 1, .finish_ms = 1 };
	pool_a.rollback = true;
	decide("DDDD", rec, true, &out);
	assert_int_equal(out.phase, POOL_ROLLING_BACK);
	goals(&out, 4, g);
	assert_string_equal(g, "L...");
	pool_output_free(&out);

	decide("DrDD", rec, true, &out); /* one under way: it goes on, nobody else starts */
	goals(&out, 4, g);
	assert_string_equal(g, ".L..");
	pool_output_free(&out);

	decide("hDDD", rec, true, &out); /* a node half-way to DRA turns around */
	goals(&out, 4, g);
	assert_string_equal(g, "L...");
	pool_output_free(&out);

	decide("LLLL", rec, true, &out); /* all back: Legacy, and the record is cleared */
	assert_int_equal(out.phase, POOL_LEGACY);
	assert_true(out.record_changed);
	assert_int_equal(out.record.n_canary, 0);
	assert_int_equal(out.record.finish_ms, 0);
	pool_output_free(&out);
	pool_a.rollback = false;
}

/*
 * Quarantined nodes (Q on DRA, q half-way there) are left out of the pool's
 * progress: never moved, not counted against maxUnavailable, not needed for
 * "all on DRA", the canary or a finished rollback.
 */
static void test_quarantined_nodes_are_left_out(void **state)
{
	(void)state;
	pool_output_t out;
	char g[17];
	pool_record_t rec = { .canary_nodes = canary0, .n_canary = 1, .start_ms = 1, .bake_start_ms = 1 };
	decide("DQLL", rec, true, &out); /* expanding: the free slot goes to the next legacy node */
	assert_int_equal(out.phase, POOL_EXPANDING);
	goals(&out, 4, g);
	assert_string_equal(g, "..D.");
	assert_int_equal(out.n_quarantined, 1);
	assert_int_equal(out.n_dra, 1);
	pool_output_free(&out);

	decide("DqLL", rec, true, &out); /* half-way and quarantined: stays, and takes no slot */
	goals(&out, 4, g);
	assert_string_equal(g, "..D.");
	assert_int_equal(out.n_handover, 0);
	pool_output_free(&out);

	decide("DQDD", rec, true, &out);
	assert_int_equal(out.phase, POOL_DRA);
	assert_non_null(strstr(out.message, "1 quarantined"));
	pool_output_free(&out);

	decide("QQQQ", rec, true, &out); /* nobody left to prove anything: not done */
	assert_int_not_equal(out.phase, POOL_DRA);
	goals(&out, 4, g);
	assert_string_equal(g, "....");
	pool_output_free(&out);

	pool_record_t baking = { .canary_nodes = canary0, .n_canary = 1, .start_ms = 1 };
	decide("QLLL", baking, true, &out); /* the canary quarantined: no bake starts on nothing */
	assert_int_equal(out.phase, POOL_CANARY);
	assert_false(out.record_changed);
	goals(&out, 4, g);
	assert_string_equal(g, "....");
	pool_output_free(&out);

	pool_a.rollback = true;
	decide("QDDD", rec, true, &out); /* rolling back: the quarantined node is left as it is */
	goals(&out, 4, g);
	assert_string_equal(g, ".L..");
	pool_output_free(&out);
	decide("QLLL", rec, true, &out);
	assert_int_equal(out.phase, POOL_LEGACY);
	assert_non_null(strstr(out.message, "quarantined"));
	pool_output_free(&out);
	pool_a.rollback = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canary_is_recorded_before_anyone_moves),
		cmocka_unit_test(test_canary_prefers_nodes_already_moved),
		cmocka_unit_test(test_canary_avoids_foreign_cordons),
		cmocka_unit_test(test_bake_then_gate_then_expand),
		cmocka_unit_test(test_promote_skips_the_rest_of_the_bake),
		cmocka_unit_test(test_manual_promotion_waits_for_a_person),
		cmocka_unit_test(test_window_closed_starts_nothing),
		cmocka_unit_test(test_boundary_pending_starts_nothing),
		cmocka_unit_test(test_max_unavailable_never_exceeded),
		cmocka_unit_test(test_done_paused_failed_waiting),
		cmocka_unit_test(test_rollback_one_node_at_a_time),
		cmocka_unit_test(test_quarantined_nodes_are_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
